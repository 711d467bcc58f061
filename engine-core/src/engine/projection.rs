//! The engine's parts lent to the view ([`crate::view::Parts`]), and what the view makes of
//! them: the snapshot (with a local source's overlay), the selected session's readiness and the
//! run status.

use crate::concerns::selection;
use crate::snapshot::{Readiness, RunStatusView, Snapshot};
use crate::view::{self, Derived, Parts};

use super::Engine;

impl Engine {
    fn view(&self) -> Parts<'_> {
        Parts {
            inputs: &self.inputs,
            env: &self.backend.platform.env,
            default: &self.backend.platform.default,
            opening: &self.backend.platform.opening,
            selection: &self.selection,
            hydration: &self.backend.platform.hydration,
            runtime: &self.backend.platform.runtime,
            catalog: &self.backend.platform.catalog,
            choice: &self.backend.platform.choice,
            picker: &self.backend.platform.picker,
            works: &self.works,
            delete_error: self.backend.platform.removals.delete_error(),
            wall_now_ms: self.io.wall_ms(self.last_now),
            archived: &self.backend.platform.archived,
            search: &self.backend.platform.search,
        }
    }

    /// The shared states, computed once (SHR-1).
    pub fn snapshot(&self) -> Snapshot {
        self.snapshot_of(Some(self.thread()))
    }

    /// The snapshot with an empty `thread`, for a host that reads the thread by its own
    /// revision through [`Engine::thread`]: no message is copied (the streaming answer is,
    /// in [`Engine::snapshot`]). Every other field is [`Engine::snapshot`]'s.
    ///
    /// ```
    /// # use engine_core::{Config, Engine, Time};
    /// let engine = Engine::new(Config::new("http://127.0.0.1:9").unwrap(), Time::from_micros(0));
    /// let mut full = engine.snapshot();
    /// full.thread.clear();
    /// assert_eq!(engine.snapshot_without_thread(), full);
    /// ```
    pub fn snapshot_without_thread(&self) -> Snapshot {
        self.snapshot_of(None)
    }

    fn snapshot_of(&self, thread: Option<crate::revision::ThreadView<'_>>) -> Snapshot {
        let parts = self.view();
        let uid = selection::selected(self.selection.state()).map(|s| s.0);
        let agent_name = uid.and_then(|u| self.agent_name_of(u));
        let derived = Derived {
            catalog: self.person_catalog(),
            thread,
            agent_name: agent_name.clone(),
            requested_models: self.catalog_demand().is_some(),
            last_used: self.session_model_last_used(),
            agent_icons: self.agent_icons(),
        };
        let snapshot = view::platform_snapshot(&parts, derived);
        let opened_ms = i64::try_from(self.io.wall_ms(self.start)).unwrap_or(i64::MAX);
        let mut snapshot = self.backend.fill(&self.inputs, uid, opened_ms, snapshot);
        let failures = self
            .backend
            .failures(&self.inputs, || view::failures(&parts));
        snapshot.send_readiness = crate::snapshot::ready::of(&snapshot, failures);
        snapshot.composer_state = crate::snapshot::composer::of(&snapshot, agent_name.as_deref());
        snapshot
    }

    /// The selected session's readiness as the snapshot shows it (the send guard reads it,
    /// SND-2).
    pub(super) fn current_readiness(&self) -> Readiness {
        let selected = selection::selected(self.selection.state()).map(|s| s.0);
        if let Some(readiness) = self.backend.local_readiness(&self.inputs, selected) {
            return readiness;
        }
        view::current_readiness(&self.view())
    }

    /// The run-status channel alone (adr-notes 6), as the snapshot shows it.
    pub fn run_status(&self) -> RunStatusView {
        view::run_status(&self.view())
    }
}

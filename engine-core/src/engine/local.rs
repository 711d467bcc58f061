//! The engine with a local Agent source (ADR 099; `docs/local-agents.md`): no platform
//! request at all (`Io::send` refuses them), the local runtime's admission, and what the
//! snapshot shows of it. The local session list, history, sending and new conversations come
//! in the next steps of issue 14.

use super::Engine;
use crate::io::Ctx;
use crate::machines::local_admission::AdmissionEvent;
use crate::snapshot::{Capabilities, Snapshot};
use crate::source::LocalSource;
use crate::time::Time;

impl Engine {
    /// The level rules with a local source: the runtime is checked while the chat is visible
    /// (and again every 5 s while it is unavailable).
    pub(super) fn evaluate_local(&mut self, now: Time) {
        let mut ctx = Ctx {
            now,
            inputs: &self.inputs,
            io: &mut self.io,
        };
        let visible = ctx.inputs.visible;
        self.local_admission
            .handle_with_context(&AdmissionEvent::Evaluate { visible }, &mut ctx);
    }

    /// `refreshActiveSessionRuntimeAccess()` with a local source: check the runtime now.
    pub(super) fn recheck_local(&mut self, now: Time) {
        let mut ctx = Ctx {
            now,
            inputs: &self.inputs,
            io: &mut self.io,
        };
        self.local_admission
            .handle_with_context(&AdmissionEvent::Recheck, &mut ctx);
    }

    /// What the snapshot shows with a local source: the runtime's decision, never a presence
    /// or a wake, and the local capabilities. The composer admits nothing until sending to a
    /// local runtime lands (issue 14, step 3).
    pub(crate) fn local_view(&self, mut snapshot: Snapshot, source: &LocalSource) -> Snapshot {
        let admission = self.local_admission.inner();
        snapshot.active_runtime_interaction = Some(admission.interaction(source.display_name()));
        snapshot.active_runtime_presence = None;
        snapshot.is_assistant_runtime_starting = false;
        snapshot.is_runtime_wake_overdue = false;
        snapshot.composer_admission = false;
        snapshot.capabilities = Capabilities::local(true);
        snapshot
    }
}

//! The platform's parts: the concerns that exist only when the runtime is reached through the
//! platform. They stay alive while a local source is set (the per-person catalog, the
//! default-session memory and the per-scope session lists survive a local detour).

use statig::blocking::InitializedStateMachine;

use super::Lent;
use crate::concerns::Signal;
use crate::concerns::opening::OpenEvent;
use crate::concerns::selection::SelEvent;
use crate::model::Origin;

use crate::concerns::catalog::CatalogStore;
use crate::concerns::default_session::DefaultSessionMachine;
use crate::concerns::environment::Environment;
use crate::concerns::explorer::ExplorerRead;
use crate::concerns::hydration::Hydration;
use crate::concerns::icons::AgentIcons;
use crate::concerns::model_choice::ModelChoiceMachine;
use crate::concerns::opening::Opening;
use crate::concerns::picker::Picker;
use crate::concerns::removal::Removals;
use crate::concerns::runtime_access::RuntimeAccessMachine;

/// The platform-only concerns in one struct.
pub(crate) struct PlatformParts {
    /// The session lists, one per person and Environment.
    pub(crate) env: InitializedStateMachine<Environment>,
    /// The default session.
    pub(crate) default: InitializedStateMachine<DefaultSessionMachine>,
    /// The launch target and the start, open and create actions.
    pub(crate) opening: InitializedStateMachine<Opening>,
    /// The selected session's detail, history and insights.
    pub(crate) hydration: InitializedStateMachine<Hydration>,
    /// Runtime access for the selected session.
    pub(crate) runtime: InitializedStateMachine<RuntimeAccessMachine>,
    /// The model-provider catalog.
    pub(crate) catalog: InitializedStateMachine<CatalogStore>,
    /// A creation waiting for a model.
    pub(crate) choice: InitializedStateMachine<ModelChoiceMachine>,
    /// The composer's provider, model and thinking.
    pub(crate) picker: InitializedStateMachine<Picker>,
    /// The session explorer's archived list.
    pub(crate) archived: InitializedStateMachine<ExplorerRead>,
    /// The session explorer's search.
    pub(crate) search: InitializedStateMachine<ExplorerRead>,
    /// Agent icons (ADR 090).
    pub(crate) icons: InitializedStateMachine<AgentIcons>,
    /// Archives, deletes and unarchives in flight, and the last delete failure.
    pub(crate) removals: Removals,
}

impl PlatformParts {
    /// A requested session id chosen (OI-14): not on the default-session surface (DEF-2,
    /// DEF-18); the latest selecting event wins (SEL-14); REQ-4 to REQ-6 follow what the
    /// session's detail read already said.
    pub(crate) fn choose_requested(&mut self, id: &str, lent: &mut Lent<'_>) {
        // OI-14: on the default-session surface a requested id never wins (DEF-2, DEF-18).
        if lent.ctx.inputs.shows_default_session {
            return;
        }
        // SEL-14: the latest selecting event wins; an open or create still running loses.
        self.opening
            .handle_with_context(&OpenEvent::Cancel, &mut lent.ctx);
        lent.selection.handle(&SelEvent::Choose {
            session_uid: id,
            origin: Origin::Requested,
        });
        // The session may already be loaded (or have failed) under another origin: REQ-4 to
        // REQ-6 follow what its detail read already said.
        let h = self.hydration.inner();
        if h.session_uid.as_deref() == Some(id) {
            if h.detail.value().is_some() {
                lent.selection
                    .handle(&SelEvent::DetailLoaded { session_uid: id });
            } else if let Some(error) = h.detail.error() {
                let session_uid = id.to_owned();
                let error = error.clone();
                lent.ctx
                    .memory
                    .signals
                    .push_back(Signal::DetailFailed { session_uid, error });
            }
        }
    }
}

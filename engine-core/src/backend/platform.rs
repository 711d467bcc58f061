//! The platform's parts: the concerns that exist only when the runtime is reached through the
//! platform. They stay alive while a local source is set (the per-person catalog, the
//! default-session memory and the per-scope session lists survive a local detour).

use statig::blocking::InitializedStateMachine;

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

//! The local Agent's parts (ADR 099; `docs/local-agents.md`): one machine per concern of a
//! runtime reached straight, without the platform: whether it can take a message
//! ([`admission`]), its conversations ([`sessions`]), the one shown ([`selection`]) and its
//! transcript ([`history`]), its model catalog ([`catalog`]) and the model it holds
//! ([`models`]); what the snapshot shows of them ([`view`]) and how the engine's commands,
//! answers and settle rounds reach them ([`wiring`]).

pub(crate) mod admission;
pub(crate) mod catalog;
pub(crate) mod history;
pub(crate) mod models;
pub(crate) mod selection;
pub(crate) mod sessions;
pub(crate) mod view;
pub(crate) mod wiring;

use statig::prelude::*;

use crate::concerns::ctx::Ctx;
use admission::{AdmissionEvent, LocalAdmission};
use catalog::{CatalogEvent, LocalCatalog};
use history::{HistoryEvent, LocalHistory};
use models::{LocalModel, ModelEvent};
use selection::{LocalSelEvent, LocalSelection};
use sessions::{LocalSessions, SessionsEvent};

/// The local engine's machines.
#[derive(Debug)]
pub(crate) struct Local {
    /// Whether the runtime can take a message.
    pub(crate) admission: InitializedStateMachine<LocalAdmission>,
    /// Which conversation is shown.
    pub(crate) selection: InitializedStateMachine<LocalSelection>,
    /// The runtime's conversations.
    pub(crate) sessions: InitializedStateMachine<LocalSessions>,
    /// The shown conversation's transcript.
    pub(crate) history: InitializedStateMachine<LocalHistory>,
    /// The runtime's model catalog.
    pub(crate) catalog: InitializedStateMachine<LocalCatalog>,
    /// The model the runtime holds for the conversation shown, and the picker.
    pub(crate) model: InitializedStateMachine<LocalModel>,
    /// `searchAgentSessions` with a local source: the query and page size, matched against
    /// the conversations listed (`searchSessions` false: no server search).
    pub(crate) search: Option<(String, u32)>,
}

impl Local {
    pub(crate) fn new(ctx: &mut Ctx<'_>) -> Local {
        Local {
            admission: LocalAdmission::default()
                .uninitialized_state_machine()
                .init_with_context(ctx),
            selection: LocalSelection::default()
                .uninitialized_state_machine()
                .init_with_context(ctx),
            sessions: LocalSessions::fresh()
                .uninitialized_state_machine()
                .init_with_context(ctx),
            history: LocalHistory::default()
                .uninitialized_state_machine()
                .init_with_context(ctx),
            catalog: LocalCatalog::fresh()
                .uninitialized_state_machine()
                .init_with_context(ctx),
            model: LocalModel::default()
                .uninitialized_state_machine()
                .init_with_context(ctx),
            search: None,
        }
    }

    /// Every request in flight is dropped (each machine's exit action aborts its own).
    pub(crate) fn close(&mut self, ctx: &mut Ctx<'_>) {
        self.admission
            .handle_with_context(&AdmissionEvent::Reset, ctx);
        self.sessions
            .handle_with_context(&SessionsEvent::Reset, ctx);
        self.selection
            .handle_with_context(&LocalSelEvent::Reset, ctx);
        self.history.handle_with_context(&HistoryEvent::Reset, ctx);
        self.catalog.handle_with_context(&CatalogEvent::Reset, ctx);
        self.model.handle_with_context(&ModelEvent::Reset, ctx);
    }

    /// The Agent's name: the source's (`display_name`), until the runtime names it.
    pub(crate) fn agent_name(&self, display_name: &str) -> String {
        let named = self.admission.inner().agent_name.clone();
        named.unwrap_or_else(|| display_name.to_owned())
    }
}

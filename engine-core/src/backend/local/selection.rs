//! Which local conversation is shown (ADR 099, adr-notes section 5): the requested id, else the
//! one the storage port kept under `ms.command-center-ai.local-session:{baseUrl}`, else the
//! runtime's default conversation `default`. Every change is written back. There is no implicit
//! "newest": a local source shows one conversation from the start.

use statig::prelude::*;

use litemap::LiteMap;

use crate::concerns::ctx::Ctx;
use crate::intent::{Intent, StorageRequest};
use crate::model::Origin;
use crate::source::DEFAULT_CONVERSATION;

/// What the selection keeps besides its state.
#[derive(Debug, Default)]
pub(crate) struct LocalSelection {
    /// The conversation shown.
    pub current: Option<String>,
    /// What chose it: `requested`, `restored` (stored or the default), `created`.
    pub origin: Option<Origin>,
    /// Conversations started here that the runtime has not named yet (issue 14): no
    /// transcript is read for them, and their first turn must bring the runtime's id.
    pub fresh: LiteMap<String, ()>,
    /// What was last written to storage.
    written: Option<String>,
}

pub(crate) enum LocalSelEvent<'a> {
    /// A local source is set: read what storage kept.
    Start,
    /// The storage port's answer.
    Stored {
        key: &'a str,
        session_uid: Option<&'a str>,
    },
    /// `requestedSessionId` names a conversation.
    Requested(&'a str),
    /// `createAgentSession()`: a new conversation under this client id.
    Created(&'a str),
    /// The runtime named the conversation `from` ran in `to`.
    Rekey { from: &'a str, to: &'a str },
    /// The source went.
    Reset,
}

#[state_machine(
    initial = "State::off()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl LocalSelection {
    /// No local source.
    #[state]
    fn off(&mut self, context: &mut Ctx<'_>, event: &LocalSelEvent<'_>) -> Outcome<State> {
        match event {
            LocalSelEvent::Start => {
                *self = LocalSelection::default();
                if let Some(key) = selection_key(context) {
                    let request = StorageRequest::LoadSelection { key };
                    context.io.outbox.push_back(Intent::Storage(request));
                }
                if let Some(id) = context.inputs.requested_session_id.clone() {
                    self.show(context, &id, Origin::Requested);
                }
                Transition(State::waiting())
            }
            _ => Handled,
        }
    }

    /// Waiting for the storage port (a requested conversation shows meanwhile).
    #[state(superstate = "on")]
    fn waiting(&mut self, context: &mut Ctx<'_>, event: &LocalSelEvent<'_>) -> Outcome<State> {
        match event {
            LocalSelEvent::Stored { key, session_uid } => {
                if selection_key(context).as_deref() != Some(*key) {
                    return Handled;
                }
                if self.current.is_none() {
                    let stored = session_uid
                        .map(str::trim)
                        .filter(|id| !id.is_empty())
                        .unwrap_or(DEFAULT_CONVERSATION)
                        .to_owned();
                    self.show(context, &stored, Origin::Restored);
                }
                Transition(State::shown())
            }
            _ => Super,
        }
    }

    /// A conversation is shown.
    #[state(superstate = "on")]
    fn shown(event: &LocalSelEvent<'_>) -> Outcome<State> {
        let _ = event;
        Super
    }

    #[superstate]
    fn on(&mut self, context: &mut Ctx<'_>, event: &LocalSelEvent<'_>) -> Outcome<State> {
        match event {
            LocalSelEvent::Requested(id) => {
                self.show(context, id, Origin::Requested);
                Handled
            }
            LocalSelEvent::Created(id) => {
                self.fresh.insert((*id).to_owned(), ());
                self.show(context, id, Origin::Created);
                Handled
            }
            LocalSelEvent::Rekey { from, to } => {
                self.fresh.remove(*from);
                if self.current.as_deref() == Some(*from) {
                    let origin = self.origin.unwrap_or(Origin::Restored);
                    self.show(context, to, origin);
                }
                Handled
            }
            LocalSelEvent::Reset => {
                *self = LocalSelection::default();
                Transition(State::off())
            }
            LocalSelEvent::Start | LocalSelEvent::Stored { .. } => Handled,
        }
    }
}

impl LocalSelection {
    /// Shows `id` and writes it to storage when it changed.
    fn show(&mut self, context: &mut Ctx<'_>, id: &str, origin: Origin) {
        self.current = Some(id.to_owned());
        self.origin = Some(origin);
        if self.written.as_deref() != Some(id)
            && let Some(key) = selection_key(context)
        {
            self.written = Some(id.to_owned());
            let request = StorageRequest::SaveSelection {
                key,
                session_uid: id.to_owned(),
            };
            context.io.outbox.push_back(Intent::Storage(request));
        }
    }
}

fn selection_key(context: &Ctx<'_>) -> Option<String> {
    context.reach.source().map(|s| s.selection_key())
}

crate::concerns::count_transitions!(LocalSelection);

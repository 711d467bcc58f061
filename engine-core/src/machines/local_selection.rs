//! Which local conversation is shown (ADR 099, adr-notes section 5): the requested id, else the
//! one the storage port kept under `ms.command-center-ai.local-session:{baseUrl}`, else the
//! runtime's default conversation `default`. Every change is written back. There is no implicit
//! "newest": a local source shows one conversation from the start.

use statig::prelude::*;

use crate::intent::{Intent, StorageRequest};
use crate::io::Ctx;
use crate::source::DEFAULT_CONVERSATION;

/// What the selection keeps besides its state.
#[derive(Debug, Default)]
pub(crate) struct LocalSelection {
    /// The conversation shown.
    pub current: Option<String>,
    /// It came from `requestedSessionId`.
    pub requested: bool,
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
                    self.show(context, &id, true);
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
                    self.show(context, &stored, false);
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
                self.show(context, id, true);
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
    fn show(&mut self, context: &mut Ctx<'_>, id: &str, requested: bool) {
        self.current = Some(id.to_owned());
        self.requested = requested;
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
    context.inputs.source.as_ref().map(|s| s.selection_key())
}

crate::revision::count_transitions!(LocalSelection);

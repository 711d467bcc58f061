//! The shown local conversation's transcript (ADR 099; `platform-api.md` section 8): `GET
//! /api/local/v1/chat-sessions/{id}/history` (the P9 shape), read once per selection while the
//! chat is visible and the runtime is ready. A 404 or 405 means the runtime cannot reload a
//! conversation: the thread starts empty, with a notice, and that is not an error.

use std::sync::Arc;

use statig::prelude::*;

use crate::api::local::{LocalRoute, local_failure_text};
use crate::api::parse_history;
use crate::concerns::ctx::Ctx;
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Owner};
use crate::message::Message;

/// `sessionNotice` for a runtime that cannot reload a conversation.
pub(crate) const LIVE_ONLY_NOTICE: &str =
    "Earlier messages are not shown: this local Agent cannot reload a conversation yet.";

/// A history failure without a message of its own.
pub(crate) const HISTORY_FAILED_TEXT: &str = "This conversation did not load.";

/// What the transcript holds besides its state.
#[derive(Debug, Default)]
pub(crate) struct LocalHistory {
    /// The conversation it is for.
    pub session_uid: Option<String>,
    /// Its messages, shared with snapshots.
    pub thread: Vec<Arc<Message>>,
    /// Moves whenever `thread` is replaced ([`crate::Revisions::thread`]).
    pub thread_revision: u64,
    /// The read finished (a transcript, or live-only).
    pub loaded: bool,
    /// The runtime cannot reload it (404/405).
    pub live_only: bool,
    /// The read failed.
    pub error: Option<String>,
}

pub(crate) enum HistoryEvent<'a> {
    /// The level rules: the conversation shown, and whether the runtime can be asked (a
    /// conversation started here, `fresh`, has no transcript to read).
    Evaluate {
        selected: Option<&'a str>,
        may_read: bool,
        fresh: bool,
    },
    /// `refreshSessionDetail()`: a failed read is tried again.
    Retry,
    /// The runtime named the conversation `from` ran in `to`: the thread stays.
    Rekey {
        from: &'a str,
        to: &'a str,
    },
    Answer(&'a Answer),
    /// A new source, or none.
    Reset,
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl LocalHistory {
    #[superstate]
    fn any(&mut self, event: &HistoryEvent<'_>) -> Outcome<State> {
        match event {
            HistoryEvent::Evaluate {
                selected, fresh, ..
            } if self.session_uid.as_deref() != *selected => {
                // The read in flight is for another conversation: dropped (exit action).
                self.select(selected.map(str::to_owned), *fresh);
                Transition(State::idle())
            }
            HistoryEvent::Reset => {
                self.select(None, false);
                Transition(State::idle())
            }
            HistoryEvent::Retry => {
                self.error = None;
                Handled
            }
            HistoryEvent::Rekey { from, to } if self.session_uid.as_deref() == Some(*from) => {
                self.session_uid = Some((*to).to_owned());
                self.loaded = true;
                Handled
            }
            _ => Handled,
        }
    }

    #[state(superstate = "any")]
    fn idle(&mut self, context: &mut Ctx<'_>, event: &HistoryEvent<'_>) -> Outcome<State> {
        let HistoryEvent::Evaluate {
            selected,
            may_read,
            fresh,
        } = event
        else {
            return Super;
        };
        if self.session_uid.as_deref() != *selected {
            self.select(selected.map(str::to_owned), *fresh);
        }
        match selected {
            Some(uid) if *may_read && !self.loaded && self.error.is_none() => {
                let route = LocalRoute::History {
                    session_uid: (*uid).to_owned(),
                };
                let call = ApiCall::Local { route };
                match context.send_local(Owner::LocalHistory, call) {
                    Ok(pending) => Transition(State::reading(pending)),
                    Err(e) => {
                        self.error = Some(e.to_string());
                        Handled
                    }
                }
            }
            _ => Handled,
        }
    }

    #[state(superstate = "any", exit_action = "abort_pending")]
    fn reading(&mut self, pending: &RequestId, event: &HistoryEvent<'_>) -> Outcome<State> {
        match event {
            HistoryEvent::Answer(a) if a.id == *pending => {
                self.read(a);
                Transition(State::idle())
            }
            _ => Super,
        }
    }

    #[action]
    fn abort_pending(pending: &RequestId, context: &mut Ctx<'_>) {
        context.io.abort(*pending);
    }
}

impl LocalHistory {
    /// Another conversation (or none): its transcript starts empty; one started here (`fresh`)
    /// has nothing to reload.
    fn select(&mut self, uid: Option<String>, fresh: bool) {
        self.session_uid = uid;
        self.loaded = fresh;
        self.live_only = false;
        self.error = None;
        if !self.thread.is_empty() {
            self.thread.clear();
        }
        self.thread_revision = self.thread_revision.wrapping_add(1);
    }

    fn read(&mut self, answer: &Answer) {
        let route = LocalRoute::History {
            session_uid: self.session_uid.clone().unwrap_or_default(),
        };
        let (status, body) = match answer.outcome.local(&route) {
            Ok(answered) => answered,
            Err(text) => {
                self.error = Some(text);
                return;
            }
        };
        match status {
            200..=299 => match parse_history(body) {
                Ok(history) => {
                    self.thread = history.messages.into_iter().map(Arc::new).collect();
                    self.thread_revision = self.thread_revision.wrapping_add(1);
                    self.loaded = true;
                }
                Err(e) => {
                    let message = e.to_string();
                    self.error = Some(if message.trim().is_empty() {
                        HISTORY_FAILED_TEXT.to_owned()
                    } else {
                        format!("{}: {message}", route.operation_name())
                    });
                }
            },
            404 | 405 => {
                self.loaded = true;
                self.live_only = true;
            }
            _ => self.error = Some(local_failure_text(&route, Some(status), body)),
        }
    }
}

crate::concerns::count_transitions!(LocalHistory);

//! DEF: the default session, asked for once per person, Environment, Agent and handle
//! (DEF-10, DEF-12), with retry (DEF-13) and cancellation on a change of combination (ENV-4).

use litemap::LiteMap;
use statig::prelude::*;

use super::Signal;
use crate::api::{ApiError, parse_get_or_create_session};
use crate::concerns::ctx::Ctx;
use crate::input::SessionSummary;
use crate::inputs::DefaultKey;
use crate::intent::{ApiCall, GetOrCreateBody, RequestId};
use crate::io::{Answer, Owner};

/// Shared storage: what was asked and what came back, per combination.
#[derive(Debug, Default)]
pub(crate) struct DefaultSessionMachine {
    /// Combinations asked for (the once-per-key guard).
    asked: LiteMap<DefaultKey, ()>,
    /// The session each combination's get-or-create returned.
    opened: LiteMap<DefaultKey, String>,
    /// The failure message of each combination's last get-or-create, and the failed call's
    /// typed error when a call failed (`SendReadiness`'s cause).
    failed: LiteMap<DefaultKey, (String, Option<ApiError>)>,
}

pub(crate) enum DefaultEvent<'a> {
    /// The current combination (whatever the source's status), and whether the surface may ask
    /// for it now (the default-session state with the source ready).
    Evaluate {
        key: Option<&'a DefaultKey>,
        may_request: bool,
        name: &'a str,
    },
    /// `retryDefaultSession()` for this combination.
    Retry(Option<&'a DefaultKey>),
    /// A session was archived or deleted: combinations that opened it are asked again, and a
    /// get-or-create in flight for the combination it was the default of is asked anew (its
    /// answer may name the removed session).
    Forget {
        session_uid: &'a str,
        was_default: bool,
    },
    Answer(&'a Answer),
    /// The model-choice retry created the combination's session (MOD-12).
    Created {
        key: &'a DefaultKey,
        session_uid: &'a str,
    },
    /// A model choice for this combination was dropped unanswered: ask again when it returns.
    Abandoned(&'a DefaultKey),
    /// The combination failed: a second refusal, or a cancelled choice (MOD-14, MOD-16).
    Failed {
        key: &'a DefaultKey,
        message: &'a str,
    },
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl DefaultSessionMachine {
    /// No get-or-create in flight.
    #[state]
    fn idle(&mut self, context: &mut Ctx<'_>, event: &DefaultEvent<'_>) -> Outcome<State> {
        match event {
            DefaultEvent::Created { key, session_uid } => {
                self.failed.remove(*key);
                self.opened
                    .insert((*key).clone(), (*session_uid).to_owned());
                Handled
            }
            DefaultEvent::Failed { key, message } => {
                self.failed
                    .insert((*key).clone(), ((*message).to_owned(), None));
                Handled
            }
            DefaultEvent::Abandoned(key) => {
                self.forget(Some(key));
                Handled
            }
            DefaultEvent::Evaluate {
                key: Some(key),
                may_request: true,
                name,
                ..
            } if !self.asked.contains_key(*key) => {
                self.asked.insert((*key).clone(), ());
                let call = ApiCall::GetOrCreateSession {
                    agent_uid: key.agent_uid.clone(),
                    body: GetOrCreateBody {
                        handle_unique_id: key.handle.clone(),
                        name: Some((*name).to_owned()).filter(|n| !n.is_empty()),
                        llm_provider: None,
                        llm_model: None,
                        llm_thinking: None,
                    },
                };
                match context.send(Owner::DefaultSession, call) {
                    Ok(pending) => Transition(State::opening((*key).clone(), pending)),
                    Err(e) => {
                        let message = unavailable_of(context);
                        self.failed.insert((*key).clone(), (message, Some(e)));
                        Handled
                    }
                }
            }
            DefaultEvent::Retry(key) => {
                self.forget(*key);
                Handled
            }
            DefaultEvent::Forget { session_uid, .. } => {
                self.forget_session(session_uid);
                Handled
            }
            _ => Handled,
        }
    }

    /// A get-or-create for `key` is in flight.
    #[state(exit_action = "abort_open")]
    fn opening(
        &mut self,
        key: &DefaultKey,
        pending: &RequestId,
        context: &mut Ctx<'_>,
        event: &DefaultEvent<'_>,
    ) -> Outcome<State> {
        match event {
            DefaultEvent::Evaluate { key: current, .. } if *current != Some(key) => {
                // ENV-4, DEF-9: the person, Environment, Agent or handle changed; its answer must
                // select nothing. It was never answered, so it may be asked again when the
                // combination comes back. (A status flicker keeps the request: DEF-12.)
                self.asked.remove(key);
                Transition(State::idle())
            }
            DefaultEvent::Retry(current) => {
                self.forget(*current);
                Transition(State::idle())
            }
            DefaultEvent::Abandoned(other) if *other != key => {
                self.forget(Some(other));
                Handled
            }
            DefaultEvent::Forget {
                session_uid,
                was_default,
            } => {
                self.forget_session(session_uid);
                if *was_default {
                    self.asked.remove(key);
                    Transition(State::idle())
                } else {
                    Handled
                }
            }
            DefaultEvent::Answer(a) if a.id == *pending => {
                // MOD-1, MOD-4: the model-required refusal waits for the person's choice; the
                // status stays `opening` meanwhile (OI-23).
                if let Some(missing) = a.outcome.model_required() {
                    let name = match &a.call {
                        ApiCall::GetOrCreateSession { body, .. } => body.name.clone(),
                        _ => None,
                    };
                    // adr-notes 6: `agentLabel` is an Agent's label; the default session gives
                    // none (its `name` is the session's, not the Agent's).
                    context.memory.signals.push_back(Signal::ModelRequired {
                        origin: super::model_choice::Origin::Default {
                            key: key.clone(),
                            name,
                        },
                        agent_uid: key.agent_uid.clone(),
                        agent_label: None,
                        missing,
                    });
                    return Transition(State::idle());
                }
                match a
                    .ok_body()
                    .and_then(parse_get_or_create_session)
                    .and_then(|r| {
                        let env = context
                            .inputs
                            .environment_uid
                            .as_deref()
                            .unwrap_or_default();
                        r.check_created_in(env).map(|()| r)
                    }) {
                    Ok(record) => {
                        self.failed.remove(key);
                        self.opened.insert(key.clone(), record.uid.clone());
                        if !record.is_archived {
                            let summary = SessionSummary::from(&record);
                            context.memory.signals.push_back(Signal::Upsert(summary));
                        }
                    }
                    Err(e) => {
                        let message = e.server_message().map(str::to_owned);
                        self.failed.insert(
                            key.clone(),
                            (message.unwrap_or_else(|| unavailable_of(context)), Some(e)),
                        );
                    }
                }
                Transition(State::idle())
            }
            _ => Handled,
        }
    }

    #[action]
    fn abort_open(pending: &RequestId, context: &mut Ctx<'_>) {
        context.io.abort(*pending);
    }
}

/// FAIL-4: the application's unavailableMessage, else the text of OI-6.
pub(crate) fn unavailable_of(context: &Ctx<'_>) -> String {
    context
        .inputs
        .default_session
        .as_ref()
        .and_then(|d| d.unavailable_message.as_deref())
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .unwrap_or(UNAVAILABLE)
        .to_owned()
}

/// Default `unavailableMessage` (OI-6).
pub(crate) const UNAVAILABLE: &str = "The Agent's session could not be opened. Try again.";

impl DefaultSessionMachine {
    fn forget(&mut self, key: Option<&DefaultKey>) {
        if let Some(key) = key {
            self.asked.remove(key);
            self.failed.remove(key);
        }
    }

    /// The session get-or-create returned for `key`.
    pub(crate) fn opened(&self, key: &DefaultKey) -> Option<&str> {
        self.opened.get(key).map(String::as_str)
    }

    /// Forgets every combination that opened `session_uid` (archived or deleted), so the
    /// default session is asked for again.
    fn forget_session(&mut self, session_uid: &str) {
        let keys: Vec<DefaultKey> = self
            .opened
            .iter()
            .filter(|(_, uid)| uid.as_str() == session_uid)
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            self.opened.remove(&key);
            self.asked.remove(&key);
        }
    }

    /// The failure of `key`'s last get-or-create.
    pub(crate) fn failure(&self, key: &DefaultKey) -> Option<&str> {
        self.failed.get(key).map(|(message, _)| message.as_str())
    }

    /// The typed error of `key`'s last get-or-create, when a call failed.
    pub(crate) fn failure_error(&self, key: &DefaultKey) -> Option<&ApiError> {
        self.failed.get(key).and_then(|(_, e)| e.as_ref())
    }
}

/// The default session of `key` (DEF-1, DEF-7, DEF-8): what get-or-create returned, else a listed
/// session matching both the handle and the Agent uid.
pub(crate) fn default_session_uid<'a>(
    key: Option<&DefaultKey>,
    machine: &'a DefaultSessionMachine,
    list: &'a [SessionSummary],
) -> Option<&'a str> {
    let key = key?;
    machine.opened(key).or_else(|| {
        list.iter()
            .find(|s| {
                s.handle_unique_id.as_deref() == Some(key.handle.as_str())
                    && s.agent_uid.as_deref() == Some(key.agent_uid.as_str())
            })
            .map(|s| s.uid.as_str())
    })
}

super::count_transitions!(DefaultSessionMachine);

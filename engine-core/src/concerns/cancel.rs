//! SND-17, OI-19: the run cancel, `POST {rpc_url}/api/chat/session/cancel`, with the session's
//! cached runtime access or, without one, access resolved first; one repeat after a 401 or 403
//! (SND-23); the whole call is given up after 10 s.

use crate::deadline::{Deadline, TimeoutReason};
use std::time::Duration;

use crate::time::Time;

use statig::prelude::*;

use super::Signal;
use crate::api::RuntimeEndpoint;
use crate::api::chat::{BodyFacts, RuntimeCall, cancel_body};
use crate::concerns::confirm::{Confirm, access_of, confirm};
use crate::concerns::ctx::{Context, Reach, WorkCtx};
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Outcome as Done, Owner};

/// The whole cancel, access resolution included, is given up after this (OI-19).
pub(crate) const CANCEL_LIMIT: Duration = Duration::from_millis(10_000);
/// OI-19: the failure text when the error has no message.
const CANCEL_FAILED: &str = "Session cancellation request failed.";

/// Shared storage.
#[derive(Debug, Default)]
pub(crate) struct Cancel {
    pub session_uid: String,
    facts: BodyFacts,
    /// When the cancel is given up.
    give_up_at: Option<Time>,
}

pub(crate) enum CancelEvent<'a> {
    /// Start a cancel, with the session's cached access when there is one.
    Start {
        cached: Option<&'a RuntimeEndpoint>,
        facts: &'a BodyFacts,
    },
    Answer(&'a Answer),
    Tick,
    /// The person or Environment changed: the cancel is dropped with the rest of the scope.
    Reset,
    /// A local runtime named the conversation: the cancel now belongs to this id (ADR 099).
    Rekey(&'a str),
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl Cancel {
    #[state]
    fn idle(&mut self, context: &mut WorkCtx<'_>, event: &CancelEvent<'_>) -> Outcome<State> {
        match event {
            CancelEvent::Rekey(to) => {
                self.session_uid = (*to).to_owned();
                Handled
            }
            CancelEvent::Start { cached, facts } => {
                self.facts = (*facts).clone();
                self.give_up_at = Some(context.now + CANCEL_LIMIT);
                match cached {
                    _ if matches!(context.reach, Reach::Local(_)) => self.post_local(context),
                    Some(endpoint) => self.post(context, endpoint, false),
                    None => self.resolve(context, false),
                }
            }
            _ => Handled,
        }
    }

    #[superstate]
    fn working(&mut self, context: &mut WorkCtx<'_>, event: &CancelEvent<'_>) -> Outcome<State> {
        match event {
            CancelEvent::Tick if self.give_up_at.is_some_and(|t| context.now >= t) => {
                self.fail(context, CANCEL_FAILED.to_owned())
            }
            CancelEvent::Reset => {
                self.give_up_at = None;
                Transition(State::idle())
            }
            CancelEvent::Rekey(to) => {
                self.session_uid = (*to).to_owned();
                Handled
            }
            _ => Handled,
        }
    }

    #[state(superstate = "working", exit_action = "abort_pending")]
    fn resolving(
        &mut self,
        pending: &RequestId,
        retried: &bool,
        context: &mut WorkCtx<'_>,
        event: &CancelEvent<'_>,
    ) -> Outcome<State> {
        match event {
            CancelEvent::Answer(a) if a.id == *pending => {
                let access = access_of(a, &context.io.base);
                let access = match access {
                    Ok(access) => access,
                    Err(e) => return self.fail(context, e.to_string()),
                };
                let endpoint = match &access.mode {
                    crate::api::AccessMode::Token(e) if access.interaction.can_submit => e.clone(),
                    // A blocked decision fails the cancel.
                    _ => {
                        let text = access.interaction.notice.map(|n| n.message);
                        return self.fail(context, text.unwrap_or_else(|| CANCEL_FAILED.into()));
                    }
                };
                match confirm(context, Owner::Cancel, &self.session_uid, &endpoint) {
                    Confirm::Remembered => self.post(context, &endpoint, *retried),
                    Confirm::Sent { pending, .. } => {
                        Transition(State::confirming(pending, endpoint, *retried))
                    }
                    Confirm::Refused(e) => self.fail(context, e.to_string()),
                }
            }
            _ => Super,
        }
    }

    #[state(superstate = "working", exit_action = "abort_pending")]
    fn confirming(
        &mut self,
        pending: &RequestId,
        endpoint: &RuntimeEndpoint,
        retried: &bool,
        context: &mut WorkCtx<'_>,
        event: &CancelEvent<'_>,
    ) -> Outcome<State> {
        match event {
            CancelEvent::Answer(a) if a.id == *pending => {
                let serving = a.outcome.is_serving();
                if serving {
                    context.memory.confirmations.serving(endpoint, context.now);
                    self.post(context, endpoint, *retried)
                } else {
                    self.fail(context, CANCEL_FAILED.to_owned())
                }
            }
            _ => Super,
        }
    }

    #[state(superstate = "working", exit_action = "abort_pending")]
    fn posting(
        &mut self,
        pending: &RequestId,
        retried: &bool,
        context: &mut WorkCtx<'_>,
        event: &CancelEvent<'_>,
    ) -> Outcome<State> {
        match event {
            CancelEvent::Answer(a) if a.id == *pending => match &a.outcome {
                // A local runtime that does not know the conversation has nothing to stop
                // (a new one the runtime has not named yet).
                Done::Http { status, .. }
                    if (200..300).contains(status)
                        || (*status == 404 && context.reach.cancel_404_is_done()) =>
                {
                    self.give_up_at = None;
                    context.memory.signals.push_back(Signal::CancelAccepted {
                        session_uid: self.session_uid.clone(),
                    });
                    Transition(State::idle())
                }
                // SND-23: access again, then the cancel once more (not for a local runtime).
                Done::Http {
                    status: 401 | 403, ..
                } if !*retried && context.reach.retries_auth() => self.resolve(context, true),
                // RU-19, RU-23: the full text, unlabelled (RU-17).
                Done::Http { status, body } => {
                    let text = a.refused_text(RuntimeCall::Cancel, *status, body);
                    self.fail(context, text)
                }
                Done::Failed(e) => self.fail(context, e.to_string()),
            },
            _ => Super,
        }
    }

    #[action]
    fn abort_pending(pending: &RequestId, context: &mut WorkCtx<'_>) {
        context.io.abort(*pending);
    }
}

impl Cancel {
    pub(crate) fn for_session(session_uid: &str) -> Cancel {
        Cancel {
            session_uid: session_uid.to_owned(),
            ..Cancel::default()
        }
    }

    fn resolve(&mut self, context: &mut WorkCtx<'_>, retried: bool) -> Outcome<State> {
        let call = ApiCall::ResolveRuntimeAccess {
            session_uid: self.session_uid.clone(),
        };
        match context.send(Owner::Cancel, call) {
            Ok(pending) => Transition(State::resolving(pending, retried)),
            Err(e) => self.fail(context, e.to_string()),
        }
    }

    fn post(
        &mut self,
        context: &mut WorkCtx<'_>,
        endpoint: &RuntimeEndpoint,
        retried: bool,
    ) -> Outcome<State> {
        let call = ApiCall::CancelRun {
            session_uid: self.session_uid.clone(),
            rpc_url: endpoint.rpc_url.clone(),
            body: cancel_body(&self.session_uid, &self.facts),
        };
        match context.send_runtime(Owner::Cancel, call, endpoint.token.expose()) {
            Ok(pending) => Transition(State::posting(pending, retried)),
            Err(e) => self.fail(context, e.to_string()),
        }
    }

    /// ADR 099: `POST {base}/api/chat/session/cancel` with `{sessionUid, message}`, no access
    /// and no credential.
    fn post_local(&mut self, context: &mut WorkCtx<'_>) -> Outcome<State> {
        let route = crate::api::local::LocalRoute::Cancel {
            session_uid: self.session_uid.clone(),
        };
        let call = ApiCall::Local { route };
        match context.send_local(Owner::Cancel, call) {
            Ok(pending) => Transition(State::posting(pending, true)),
            Err(e) => self.fail(context, e.to_string()),
        }
    }

    /// OI-19: the run status and `sessionNotice` get the message; no notify.
    fn fail(&mut self, context: &mut WorkCtx<'_>, text: String) -> Outcome<State> {
        self.give_up_at = None;
        let text = if text.trim().is_empty() {
            CANCEL_FAILED.to_owned()
        } else {
            text
        };
        context.memory.signals.push_back(Signal::CancelFailed {
            session_uid: self.session_uid.clone(),
            text,
        });
        Transition(State::idle())
    }

    /// When the cancel is given up, while it runs.
    pub(crate) fn deadline(&self) -> Option<Deadline> {
        let at = self.give_up_at?;
        Some(Deadline::new(at, TimeoutReason::CancelGiveUp))
    }
}

/// Whether a cancel is under way (`isCancellingSession`).
pub(crate) fn is_cancelling(state: &State) -> bool {
    !matches!(state, State::Idle {})
}

super::count_transitions!(Cancel, WorkCtx);

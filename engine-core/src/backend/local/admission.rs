//! Whether a local Agent runtime can take a message (ADR 099, adr-notes section 5): `GET
//! /ready` must say `ok: true`, `GET /health` must not name another mode than `local`, then the
//! `GET /api/chat` probe must answer 2xx. A runtime that does not pass is `unavailable`, never
//! `waking`, and is checked again every 5 s while the chat is visible. There is no
//! confirmation memory and no wake hold: the decision belongs to the runtime, for every
//! conversation.

use crate::deadline::{Deadline, TimeoutReason};
use std::time::Duration;

use statig::prelude::*;

use crate::api::local::{LocalRoute, Readiness, parse_local_agent, read_health, read_ready};
use crate::api::{InteractionState, RuntimeInteraction, RuntimeNotice, Severity};
use crate::concerns::ctx::Ctx;
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Owner};
use crate::time::Time;

/// How often a runtime that is not available is looked for again, in ms (adr-notes section 7).
pub(crate) const RECHECK_MS: u64 = 5_000;

/// [`RECHECK_MS`] as a duration.
pub(crate) const RECHECK: Duration = Duration::from_millis(RECHECK_MS);

/// A decision older than this is checked again on `revalidateStaleRuntimeAccess()` (strictly
/// older, as the reference's local engine has it).
pub(crate) const STALE: Duration = Duration::from_millis(60_000);

/// The notice code of an unavailable local runtime.
pub(crate) const UNAVAILABLE_CODE: &str = "local_agent_unavailable";

/// The three checks, in order, then the Agent's name (read once the runtime passed them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Ready,
    Health,
    ChatCheck,
    Agent,
}

impl Step {
    fn route(self) -> LocalRoute {
        match self {
            Step::Ready => LocalRoute::Ready,
            Step::Health => LocalRoute::Health,
            Step::ChatCheck => LocalRoute::ChatCheck,
            Step::Agent => LocalRoute::Agent,
        }
    }
}

/// What the admission machine keeps besides its state.
#[derive(Debug, Default)]
pub(crate) struct LocalAdmission {
    /// The runtime's message while unavailable (kept on screen while a re-check runs).
    pub message: Option<String>,
    /// Whether the last finished check passed (shown while a re-check runs).
    pub ready: bool,
    /// The last check finished at least once.
    pub checked: bool,
    /// When the next look for an unavailable runtime is due.
    pub next_check: Option<Time>,
    /// When the last check finished.
    checked_at: Option<Time>,
    /// The Agent's name as the runtime gives it (`GET /api/local/v1/agent`).
    pub agent_name: Option<String>,
}

pub(crate) enum AdmissionEvent<'a> {
    /// The level rules: check while `visible` and not yet known, or when a re-check is due.
    Evaluate {
        visible: bool,
    },
    /// `refreshActiveSessionRuntimeAccess()`, a failed turn, or coming back into view: check
    /// now.
    Recheck,
    /// `revalidateStaleRuntimeAccess()` (the composer's focus): check now when the runtime is
    /// unavailable or the last check is more than 60 s old.
    Revalidate,
    Answer(&'a Answer),
    /// A new source, or none: forget everything.
    Reset,
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl LocalAdmission {
    /// Not checked (not visible yet, or between checks).
    #[state]
    fn idle(&mut self, context: &mut Ctx<'_>, event: &AdmissionEvent<'_>) -> Outcome<State> {
        match event {
            AdmissionEvent::Evaluate { visible: true } if self.due(context.now) => {
                self.start(context)
            }
            AdmissionEvent::Recheck => self.start(context),
            AdmissionEvent::Revalidate if self.stale(context.now) => self.start(context),
            AdmissionEvent::Reset => {
                *self = LocalAdmission::default();
                Handled
            }
            _ => Handled,
        }
    }

    /// One of the three checks is in flight.
    #[state(exit_action = "abort_pending")]
    fn checking(
        &mut self,
        step: &Step,
        pending: &RequestId,
        context: &mut Ctx<'_>,
        event: &AdmissionEvent<'_>,
    ) -> Outcome<State> {
        match event {
            AdmissionEvent::Answer(a) if a.id == *pending => self.answered(context, *step, a),
            AdmissionEvent::Recheck => self.start(context),
            // Only the Agent's name is still being read: the checks are done.
            AdmissionEvent::Revalidate if *step == Step::Agent && self.stale(context.now) => {
                self.start(context)
            }
            AdmissionEvent::Reset => {
                *self = LocalAdmission::default();
                Transition(State::idle())
            }
            _ => Handled,
        }
    }

    #[action]
    fn abort_pending(pending: &RequestId, context: &mut Ctx<'_>) {
        context.io.abort(*pending);
    }
}

impl LocalAdmission {
    /// Never checked, or unavailable and the 5 s are over.
    fn due(&self, now: Time) -> bool {
        !self.checked || self.next_check.is_some_and(|at| now >= at)
    }

    /// Unavailable, or last checked more than 60 s ago.
    fn stale(&self, now: Time) -> bool {
        self.checked_at
            .is_some_and(|at| !self.ready || now.saturating_duration_since(at) > STALE)
    }

    fn start(&mut self, context: &mut Ctx<'_>) -> Outcome<State> {
        self.next_check = None;
        self.send(context, Step::Ready)
    }

    fn send(&mut self, context: &mut Ctx<'_>, step: Step) -> Outcome<State> {
        let call = ApiCall::Local {
            route: step.route(),
        };
        match context.send_local(Owner::LocalAdmission, call) {
            Ok(pending) => Transition(State::checking(step, pending)),
            Err(_) if step == Step::Agent => Transition(State::idle()),
            Err(e) => self.unavailable(context, e.to_string()),
        }
    }

    fn answered(&mut self, context: &mut Ctx<'_>, step: Step, answer: &Answer) -> Outcome<State> {
        let route = step.route();
        let (status, body) = match answer.outcome.local(&route) {
            Ok(answered) => answered,
            // The Agent's description is optional: without it the source's name stays.
            Err(_) if step == Step::Agent => return Transition(State::idle()),
            Err(text) => return self.unavailable(context, text),
        };
        match step {
            Step::Ready => match read_ready(status, body) {
                Readiness::Ready => self.send(context, Step::Health),
                Readiness::NotReady(message) => self.unavailable(context, message),
            },
            Step::Health => match read_health(status, body) {
                Some(refusal) => self.unavailable(context, refusal.to_owned()),
                None => self.send(context, Step::ChatCheck),
            },
            Step::ChatCheck if (200..300).contains(&status) => {
                self.ready = true;
                self.checked = true;
                self.checked_at = Some(context.now);
                self.message = None;
                // adr-notes 5: each time the runtime is ready, it names its Agent.
                self.send(context, Step::Agent)
            }
            Step::Agent => {
                if (200..300).contains(&status)
                    && let Some(name) = parse_local_agent(body)
                {
                    self.agent_name = Some(name);
                }
                Transition(State::idle())
            }
            Step::ChatCheck => {
                let base = context
                    .reach
                    .source()
                    .map(|s| s.base_url().to_owned())
                    .unwrap_or_default();
                let message = format!("The local Agent at {base} does not answer its chat route.");
                self.unavailable(context, message)
            }
        }
    }

    fn unavailable(&mut self, context: &mut Ctx<'_>, message: String) -> Outcome<State> {
        self.ready = false;
        self.checked = true;
        self.checked_at = Some(context.now);
        self.message = Some(message);
        self.next_check = Some(context.now + RECHECK);
        Transition(State::idle())
    }

    /// The decision the snapshot shows (`activeRuntimeInteraction`) for the Agent `agent`.
    pub(crate) fn interaction(&self, agent: &str) -> RuntimeInteraction {
        let (state, can_submit, notice, retry_after_ms) = match (&self.message, self.ready) {
            (_, true) => (InteractionState::Ready, true, None, None),
            (Some(message), false) => (
                InteractionState::Unavailable,
                false,
                Some(RuntimeNotice {
                    code: UNAVAILABLE_CODE.to_owned(),
                    severity: Severity::Error,
                    title: format!("{agent} is not running"),
                    message: message.clone(),
                }),
                Some(RECHECK_MS),
            ),
            (None, false) => (InteractionState::Checking, false, None, None),
        };
        RuntimeInteraction {
            state,
            can_submit,
            notice,
            support_reference: None,
            retry_after_ms,
        }
    }

    /// The next look for an unavailable runtime, while one is due.
    pub(crate) fn deadline(&self) -> Option<Deadline> {
        let at = self.next_check?;
        Some(Deadline::new(at, TimeoutReason::LocalRecheck))
    }
}

crate::concerns::count_transitions!(LocalAdmission);

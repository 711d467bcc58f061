//! RTA: runtime access and client-verified readiness (ADR 093) for the session whose chat is on
//! screen: resolve-runtime-access, the Agent confirmation, polling with the backend's interval and
//! the backoff of OI-1, the engine's own waking decision (OI-5), and staleness (OI-7, OI-8).
//!
//! The decision a surface shows changes only when an answer arrives, except when a session comes
//! into view without a young decision: it then drops to a silent `checking` first (RTA-19, RTA-21).

use crate::deadline::{Deadline, TimeoutReason};
use litemap::LiteMap;
use std::time::Duration;

use crate::time::Time;

use statig::prelude::*;

use crate::api::{
    AccessMode, InteractionState, RuntimeEndpoint, RuntimeInteraction, RuntimeNotice,
    RuntimePresence, Severity,
};
use crate::concerns::confirm::{Confirm, access_of, confirm, confirmed};
use crate::concerns::ctx::Ctx;
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Owner};

/// A decision one minute old or older is confirmed again (OI-7, inclusive).
pub(crate) const STALE: Duration = Duration::from_millis(60_000);
/// A serving confirmation is remembered this long per chat URL (OI-9, exclusive).
pub(crate) const MEMORY: Duration = Duration::from_millis(15_000);
/// Confirmation limit when no wake is followed for the chat URL (OI-5).
pub(crate) const FIRST_CONFIRM_LIMIT: Duration = Duration::from_millis(3_000);
/// Confirmation limit while a wake is followed (OI-5).
pub(crate) const WAKING_CONFIRM_LIMIT: Duration = Duration::from_millis(20_000);
/// The wait after a transient answer without an interval (OI-2).
const DEFAULT_POLL_MS: u64 = 2_000;

/// A decision as the engine holds it for one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decision {
    pub interaction: RuntimeInteraction,
    pub presence: Option<RuntimePresence>,
    /// Where a ready decision's requests go; kept by the engine's waking decision (OI-5).
    pub endpoint: Option<RuntimeEndpoint>,
    /// When it was last received or confirmed: its age counts from here (OI-7).
    pub at: Time,
    /// When the next round is due, while the decision is followed (transient, waking, failing).
    pub next_round: Option<Time>,
    /// The wait that led to `next_round`: the "previous delay" of the backoff (OI-1).
    pub delay_ms: u64,
    /// The engine's silent `checking`, not yet replaced by any answer (RTA-19, RTA-20).
    pub unanswered: bool,
}

impl Decision {
    /// Admission: `can_submit` and confirmed by the Agent (RTA-3, RTA-6). A ready decision is
    /// stored only once the Agent confirmed it (or its chat URL was remembered serving), so a
    /// stored decision with `can_submit` and a runtime endpoint is a confirmed one; without an
    /// endpoint (mode `unavailable`) nothing can confirm it.
    pub(crate) fn admits(&self) -> bool {
        self.interaction.can_submit && self.endpoint.is_some()
    }

    /// Transient: locks the composer and sets `isAssistantRuntimeStarting` (RTA-7, SHR-5).
    pub(crate) fn is_starting(&self) -> bool {
        !self.interaction.can_submit && self.interaction.state.is_transient()
    }

    /// A decision from a resolve-runtime-access answer received at `now`; a transient one is
    /// due again after its interval (RTA-9, OI-2). A ready one still needs its confirmation.
    pub(crate) fn from_access(access: crate::api::RuntimeAccess, now: Time) -> Decision {
        let endpoint = match &access.mode {
            AccessMode::Token(e) => Some(e.clone()),
            _ => None,
        };
        let mut decision = Decision {
            interaction: access.interaction,
            presence: Some(access.presence),
            endpoint,
            at: now,
            next_round: None,
            delay_ms: 0,
            unanswered: false,
        };
        if !decision.interaction.can_submit && decision.interaction.state.is_transient() {
            let delay = poll_interval_ms(decision.interaction.retry_after_ms);
            decision.delay_ms = delay;
            decision.next_round = Some(now + Duration::from_millis(delay));
        }
        decision
    }

    fn age(&self, now: Time) -> Duration {
        now.saturating_duration_since(self.at)
    }

    /// The silent `checking` of a session that comes into view (RTA-19, RTA-21).
    fn silent_checking(now: Time) -> Decision {
        Decision {
            interaction: RuntimeInteraction {
                state: InteractionState::Checking,
                can_submit: false,
                notice: None,
                support_reference: None,
                retry_after_ms: None,
            },
            presence: None,
            endpoint: None,
            at: now,
            // Due at once: a check left unanswered (the session went out of view meanwhile)
            // is asked again when it comes back.
            next_round: Some(now),
            delay_ms: 0,
            unanswered: true,
        }
    }
}

/// `{Agent}` of OI-6.
pub(super) fn agent_or_default(name: Option<&str>, capital: bool) -> String {
    match name.map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) => n.to_owned(),
        None if capital => "The agent".to_owned(),
        None => "the agent".to_owned(),
    }
}

/// The notice of a failing first check (RTA-20, OI-6).
fn still_checking(agent: Option<&str>) -> RuntimeNotice {
    RuntimeNotice {
        code: "agent_runtime_client_check_retrying".into(),
        severity: Severity::Warning,
        title: "Still checking".into(),
        message: format!(
            "Could not confirm that {} is ready. Trying again.",
            agent_or_default(agent, false)
        ),
    }
}

/// The wait after a transient answer (OI-2): `retry_after_ms` held between 500 ms and 30 s, 0 at
/// once, two seconds when absent.
fn poll_interval_ms(retry_after_ms: Option<u64>) -> u64 {
    match retry_after_ms {
        None => DEFAULT_POLL_MS,
        Some(0) => 0,
        Some(ms) => ms.clamp(500, 30_000),
    }
}

/// The backoff after a failed request (OI-1).
fn backoff_ms(previous_ms: u64) -> u64 {
    previous_ms.saturating_mul(2).clamp(2_000, 30_000)
}

/// `{rpc_url}/api/chat`: the key of the confirmation memory and the wake clocks.
pub(crate) fn chat_url(endpoint: &RuntimeEndpoint) -> String {
    format!("{}/api/chat", endpoint.rpc_url.trim_end_matches('/'))
}

impl crate::io::Outcome {
    /// An Agent confirmation's verdict (RTA-16, RTA-17): any HTTP answer but 502, 503 and 504
    /// means the Agent serves; those, no answer or a timeout mean it does not.
    pub(crate) fn is_serving(&self) -> bool {
        matches!(self, crate::io::Outcome::Http { status, .. } if !matches!(status, 502..=504))
    }
}

/// What the engine knows of each chat URL, whoever asked (runtime access, a send, a cancel):
/// serving confirmations (OI-9) and wake clocks (OI-5). It belongs to URLs alone, so a change of
/// person or Environment keeps it.
#[derive(Debug, Default)]
pub(crate) struct Confirmations {
    /// Serving confirmations per chat URL (OI-9).
    served: LiteMap<String, Time>,
    /// One wake clock per chat URL (OI-5): the wall-clock ms of its first failed confirmation.
    wakes: LiteMap<String, u64>,
}

impl Confirmations {
    /// A serving answer from this endpoint is remembered (SND-4, RTA-14: age under 15 s).
    pub(crate) fn remembered(&self, endpoint: &RuntimeEndpoint, now: Time) -> bool {
        self.served
            .get(&chat_url(endpoint))
            .is_some_and(|t| now.saturating_duration_since(*t) < MEMORY)
    }

    /// The confirmation limit for this endpoint: longer while its wake is followed (OI-5).
    pub(crate) fn limit(&self, endpoint: &RuntimeEndpoint) -> Duration {
        if self.wakes.contains_key(&chat_url(endpoint)) {
            WAKING_CONFIRM_LIMIT
        } else {
            FIRST_CONFIRM_LIMIT
        }
    }

    /// The Agent served: remember it, and its wake is over.
    pub(crate) fn serving(&mut self, endpoint: &RuntimeEndpoint, now: Time) {
        let url = chat_url(endpoint);
        self.wakes.remove(&url);
        self.served.insert(url, now);
    }

    /// The Agent did not serve: forget the memory and return the wake clock's start (the first
    /// failure's wall-clock ms, `wall` when this is the first).
    pub(crate) fn not_serving(&mut self, endpoint: &RuntimeEndpoint, wall: u64) -> u64 {
        let url = chat_url(endpoint);
        self.served.remove(&url);
        *self.wakes.entry(url).or_insert(wall)
    }

    /// SND-15: a message request to this endpoint got no answer.
    pub(crate) fn forget(&mut self, endpoint: &RuntimeEndpoint) {
        self.served.remove(&chat_url(endpoint));
    }
}

/// Shared storage.
#[derive(Debug, Default)]
pub(crate) struct RuntimeAccessMachine {
    /// The decision of each session of the current person and Environment (ENV-3).
    /// A sorted vector (a `BTreeMap` node holds room for 11 entries: issue 12), boxed: the
    /// vector's spare capacity holds pointers, not decisions.
    decisions: LiteMap<String, Box<Decision>>,
    /// The last focus-triggered check (RTA-23: at most one per minute).
    last_revalidate: Option<Time>,
    /// The Agent name of the session in view, for notices (OI-6).
    agent_name: Option<String>,
}

pub(crate) enum RtaEvent<'a> {
    /// Level facts: the session whose chat is on screen and may be checked (selected, visible,
    /// not a launched session before its first send), and its Agent's name.
    Evaluate {
        active: Option<&'a str>,
        agent_name: Option<&'a str>,
    },
    Answer(&'a Answer),
    /// `refreshActiveSessionRuntimeAccess()` (RTA-27).
    Refresh,
    /// `revalidateStaleRuntimeAccess()` (RTA-23).
    Revalidate,
    /// The page was shown again after being hidden this long (RTA-22).
    PageShown {
        hidden_for: Duration,
    },
    /// The person or Environment changed (ENV-3).
    Reset,
    /// A send or cancel got this decision for a session: it is the session's decision now, and
    /// polling follows it (SND-9).
    Publish {
        session: &'a str,
        decision: &'a Decision,
    },
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl RuntimeAccessMachine {
    /// No session in view: nothing is checked (RTA-2, RTA-25).
    #[state]
    fn idle(&mut self, context: &mut Ctx<'_>, event: &RtaEvent<'_>) -> Outcome<State> {
        match event {
            RtaEvent::Evaluate {
                active: Some(session),
                agent_name,
            } => {
                self.agent_name = agent_name.map(str::to_owned);
                self.come_into_view(context, session)
            }
            RtaEvent::Reset => {
                self.reset();
                Handled
            }
            RtaEvent::Publish { session, decision } => {
                self.decisions
                    .insert((*session).to_owned(), Box::new((*decision).clone()));
                Handled
            }
            _ => Handled,
        }
    }

    /// A resolve-runtime-access is in flight.
    #[state(exit_action = "abort_pending")]
    #[allow(clippy::ptr_arg)] // statig hands state-local fields by reference
    fn resolving(
        &mut self,
        session: &String,
        pending: &RequestId,
        context: &mut Ctx<'_>,
        event: &RtaEvent<'_>,
    ) -> Outcome<State> {
        match event {
            RtaEvent::Answer(a) if a.id == *pending => {
                let access = access_of(a, &context.io.base);
                match access {
                    Ok(access) => self.on_access(context, session, access),
                    Err(_) => self.round_failed(context, session),
                }
            }
            // OI-8: a focus or page-return trigger joins the round in flight.
            RtaEvent::Revalidate | RtaEvent::PageShown { .. } => Handled,
            other => self.common(context, session, other),
        }
    }

    /// The Agent confirmation of a ready decision is in flight (RTA-14).
    #[state(exit_action = "abort_pending")]
    #[allow(clippy::ptr_arg, clippy::borrowed_box)] // statig hands state-local fields by reference
    fn confirming(
        &mut self,
        session: &String,
        pending: &RequestId,
        deadline: &Time,
        candidate: &Box<Decision>,
        context: &mut Ctx<'_>,
        event: &RtaEvent<'_>,
    ) -> Outcome<State> {
        match event {
            RtaEvent::Answer(a) if a.id == *pending => {
                let serving = a.outcome.is_serving();
                self.confirmed(context, session, serving, candidate)
            }
            RtaEvent::Evaluate { active, .. }
                if *active == Some(session.as_str()) && context.now >= *deadline =>
            {
                // OI-5: giving up counts as no answer.
                context.io.abort(*pending);
                self.confirmed(context, session, false, candidate)
            }
            RtaEvent::Revalidate | RtaEvent::PageShown { .. } => Handled,
            other => self.common(context, session, other),
        }
    }

    /// A followed decision (transient, waking, or a failing request) waits for its next round.
    #[state]
    #[allow(clippy::ptr_arg)]
    fn following(
        &mut self,
        session: &String,
        context: &mut Ctx<'_>,
        event: &RtaEvent<'_>,
    ) -> Outcome<State> {
        match event {
            RtaEvent::Evaluate { active, .. } if *active == Some(session.as_str()) => {
                let due = self
                    .decisions
                    .get(session.as_str())
                    .and_then(|d| d.next_round);
                // RTA-10: no poll while the page is hidden; a poll due meanwhile goes when shown.
                match due {
                    Some(due) if due <= context.now && !context.inputs.page_hidden => {
                        self.start_round(context, session)
                    }
                    Some(_) => Handled,
                    None => Transition(State::settled(session.clone())),
                }
            }
            other => self.common(context, session, other),
        }
    }

    /// A ready (confirmed) or terminal decision: no polling (RTA-11).
    #[state]
    #[allow(clippy::ptr_arg)]
    fn settled(
        &mut self,
        session: &String,
        context: &mut Ctx<'_>,
        event: &RtaEvent<'_>,
    ) -> Outcome<State> {
        self.common(context, session, event)
    }

    #[action]
    fn abort_pending(pending: &RequestId, context: &mut Ctx<'_>) {
        context.io.abort(*pending);
    }
}

impl RuntimeAccessMachine {
    /// What every state with a session in view does.
    fn common(
        &mut self,
        context: &mut Ctx<'_>,
        session: &str,
        event: &RtaEvent<'_>,
    ) -> Outcome<State> {
        match event {
            RtaEvent::Evaluate { active, agent_name } => {
                self.agent_name = agent_name.map(str::to_owned);
                match active {
                    Some(a) if *a == session => Handled,
                    Some(other) => self.come_into_view(context, other),
                    None => Transition(State::idle()),
                }
            }
            // RTA-27: at once, whatever the decision; a round in flight is aborted (exit action).
            RtaEvent::Refresh => self.start_round(context, session),
            RtaEvent::Revalidate => {
                let recent = self
                    .last_revalidate
                    .is_some_and(|t| context.now.saturating_duration_since(t) < STALE);
                if self.is_stale(session, context.now) && !recent {
                    self.last_revalidate = Some(context.now);
                    self.start_round(context, session)
                } else {
                    Handled
                }
            }
            RtaEvent::PageShown { hidden_for } => {
                if *hidden_for >= STALE && self.is_stale(session, context.now) {
                    self.start_round(context, session)
                } else {
                    Handled
                }
            }
            RtaEvent::Reset => {
                self.reset();
                Transition(State::idle())
            }
            RtaEvent::Publish {
                session: about,
                decision,
            } => {
                self.decisions
                    .insert((*about).to_owned(), Box::new((*decision).clone()));
                if *about != session {
                    Handled
                } else if decision.next_round.is_some() {
                    Transition(State::following(session.to_owned()))
                } else {
                    Transition(State::settled(session.to_owned()))
                }
            }
            RtaEvent::Answer(_) => Handled,
        }
    }

    fn reset(&mut self) {
        // ENV-3: decisions and cached access go; the confirmation memory and the wake clocks
        // belong to chat URLs and stay (OI-9).
        self.decisions.clear();
        self.last_revalidate = None;
    }

    fn is_stale(&self, session: &str, now: Time) -> bool {
        self.decisions
            .get(session)
            .is_none_or(|d| d.age(now) >= STALE)
    }

    /// OI-7: the chat came into view on `session`.
    fn come_into_view(&mut self, context: &mut Ctx<'_>, session: &str) -> Outcome<State> {
        let now = context.now;
        match self.decisions.get(session) {
            // RTA-19, RTA-24: a young decision is kept, and followed if it was followed.
            Some(d) if d.age(now) < STALE => {
                if d.next_round.is_some() {
                    Transition(State::following(session.to_owned()))
                } else {
                    Transition(State::settled(session.to_owned()))
                }
            }
            // RTA-19, RTA-21: locked and silent until the check answers. The check is due at
            // once (OI-2) and goes out through the poller, so not while the page is hidden
            // (RTA-10, OI-1).
            _ => {
                self.decisions
                    .insert(session.to_owned(), Box::new(Decision::silent_checking(now)));
                Transition(State::following(session.to_owned()))
            }
        }
    }

    fn start_round(&mut self, context: &mut Ctx<'_>, session: &str) -> Outcome<State> {
        let call = ApiCall::ResolveRuntimeAccess {
            session_uid: session.to_owned(),
        };
        match context.send(Owner::RuntimeAccess, call) {
            Ok(pending) => Transition(State::resolving(session.to_owned(), pending)),
            Err(_) => self.round_failed(context, session),
        }
    }

    /// RTA-12, OI-1: keep the decision, back off, keep asking; a failing first check gains the
    /// still-checking notice (RTA-20).
    fn round_failed(&mut self, context: &mut Ctx<'_>, session: &str) -> Outcome<State> {
        let now = context.now;
        let d = self
            .decisions
            .entry(session.to_owned())
            .or_insert_with(|| Box::new(Decision::silent_checking(now)));
        let delay = backoff_ms(d.delay_ms);
        d.delay_ms = delay;
        d.next_round = Some(now + Duration::from_millis(delay));
        // The session's check has never been answered: it gains the notice (RTA-20).
        if d.unanswered {
            d.interaction.notice = Some(still_checking(self.agent_name.as_deref()));
        }
        Transition(State::following(session.to_owned()))
    }

    fn on_access(
        &mut self,
        context: &mut Ctx<'_>,
        session: &str,
        access: crate::api::RuntimeAccess,
    ) -> Outcome<State> {
        let now = context.now;
        let decision = Decision::from_access(access, now);
        let endpoint = match (&decision.endpoint, decision.interaction.can_submit) {
            (Some(endpoint), true) => endpoint.clone(),
            // RTA-15: a transient or terminal decision is shown as it is, never confirmed; with
            // mode "unavailable" nothing can confirm it. RTA-9: a transient one is polled (an
            // interval of 0 asks again at once, in the next settle round).
            _ => {
                let followed = decision.next_round.is_some();
                self.decisions
                    .insert(session.to_owned(), Box::new(decision));
                return if followed {
                    Transition(State::following(session.to_owned()))
                } else {
                    Transition(State::settled(session.to_owned()))
                };
            }
        };
        match confirm(context, Owner::RuntimeAccess, session, &endpoint) {
            // RTA-14, OI-9: a remembered serving answer confirms without a request.
            Confirm::Remembered => {
                self.decisions
                    .insert(session.to_owned(), Box::new(decision));
                Transition(State::settled(session.to_owned()))
            }
            Confirm::Sent { pending, deadline } => Transition(State::confirming(
                session.to_owned(),
                pending,
                deadline,
                Box::new(decision),
            )),
            Confirm::Refused(_) => self.confirmed(context, session, false, &decision),
        }
    }

    /// RTA-16, RTA-17, OI-5: the confirmation is over. The Agent served: the ready decision
    /// takes effect. It did not (no answer, or 502/503/504): the engine's own waking decision,
    /// polled every 3 s on one wake clock per chat URL.
    fn confirmed(
        &mut self,
        context: &mut Ctx<'_>,
        session: &str,
        serving: bool,
        candidate: &Decision,
    ) -> Outcome<State> {
        let decision = confirmed(context, self.agent_name.as_deref(), serving, candidate);
        self.decisions
            .insert(session.to_owned(), Box::new(decision));
        let session = session.to_owned();
        Transition(if serving {
            State::settled(session)
        } else {
            State::following(session)
        })
    }

    /// The decision held for `session`.
    pub(crate) fn decision(&self, session: &str) -> Option<&Decision> {
        self.decisions.get(session).map(|d| &**d)
    }
}

/// The next deadline of the machine's state: a poll (not while the page is hidden, RTA-10) or a
/// confirmation limit.
pub(crate) fn deadline(
    machine: &RuntimeAccessMachine,
    state: &State,
    page_hidden: bool,
) -> Option<Deadline> {
    match state {
        State::Confirming { deadline, .. } => {
            Some(Deadline::new(*deadline, TimeoutReason::RuntimeConfirmLimit))
        }
        State::Following { session } if !page_hidden => machine
            .decision(session)
            .and_then(|d| d.next_round)
            .map(|at| Deadline::new(at, TimeoutReason::RuntimePoll)),
        _ => None,
    }
}

super::count_transitions!(RuntimeAccessMachine);

//! Opening and creating sessions for actions and the launch target (SEL-5 to SEL-10, OI-16):
//! an Agent's latest session through the Agent-filtered list, else a new session through
//! start-new-session. One operation at a time; a newer one replaces an older one (SEL-14).

use statig::prelude::*;

use super::Signal;
use crate::api::{ApiError, SessionRecord, parse_created_session, parse_session_list_in};
use crate::concerns::ctx::Ctx;
use crate::event::{Event, Notice, NoticeVariant};
use crate::http::check_id;
use crate::input::SessionSummary;
use crate::intent::{AgentFilter, ApiCall, RequestId};
use crate::io::{Answer, Owner};

/// Which action (or the launch target) an operation serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenKind {
    /// `launchTarget`: latest, else new; launched.
    Launch,
    /// `startAgentSessionById`: new; launched.
    StartById,
    /// `openLatestOrStartAgentSessionById`: latest, else new; launched.
    OpenLatest,
    /// `startAgentSession(agent)`: new; ordinary.
    StartAgent,
    /// `createAgentSession()`: new for the selected session's Agent; ordinary.
    Create,
}

impl OpenKind {
    fn launched(self) -> bool {
        matches!(
            self,
            OpenKind::Launch | OpenKind::StartById | OpenKind::OpenLatest
        )
    }

    fn looks_up_latest(self) -> bool {
        matches!(self, OpenKind::Launch | OpenKind::OpenLatest)
    }

    /// The notify title and fallback description of a failure (OI-6).
    fn failure_texts(self) -> (&'static str, &'static str) {
        if self.looks_up_latest() {
            (
                "Agent session not opened",
                "Unable to open the code repository agent session.",
            )
        } else {
            (
                "Agent session not created",
                "Unable to create a new agent session.",
            )
        }
    }

    /// The text for an Agent without a usable id (OI-6).
    pub(crate) fn no_identifier_text(self) -> &'static str {
        match self {
            OpenKind::StartAgent | OpenKind::Create => {
                "This agent has no identifier, so a session cannot start."
            }
            OpenKind::StartById => "The selected agent has no valid identifier.",
            OpenKind::Launch | OpenKind::OpenLatest => {
                "The selected code repository agent has no valid identifier."
            }
        }
    }
}

/// One open or create operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OpenOp {
    pub kind: OpenKind,
    /// The Agent uid or numeric id; `None` when the action had no usable Agent.
    pub agent: Option<String>,
    /// The action's label, shown while a model choice waits (`agentLabel`).
    pub label: Option<String>,
}

#[derive(Debug, Default)]
pub(crate) struct Opening;

pub(crate) enum OpenEvent<'a> {
    Start(&'a OpenOp),
    /// The person or Environment changed: drop the operation (INV-10).
    Cancel,
    Answer(&'a Answer),
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl Opening {
    #[superstate]
    fn any(context: &mut Ctx<'_>, event: &OpenEvent<'_>) -> Outcome<State> {
        match event {
            OpenEvent::Start(op) => start(context, op),
            OpenEvent::Cancel => Transition(State::idle()),
            OpenEvent::Answer(_) => Handled,
        }
    }

    #[state(superstate = "any")]
    fn idle(event: &OpenEvent<'_>) -> Outcome<State> {
        let _ = event;
        Super
    }

    /// Looking for the Agent's latest session (OI-11).
    #[state(superstate = "any", exit_action = "abort_pending")]
    fn looking_up(
        op: &OpenOp,
        pending: &RequestId,
        context: &mut Ctx<'_>,
        event: &OpenEvent<'_>,
    ) -> Outcome<State> {
        match event {
            OpenEvent::Answer(a) if a.id == *pending => {
                let env = context.inputs.environment_uid.clone().unwrap_or_default();
                let found = a
                    .ok_body()
                    .and_then(|body| parse_session_list_in(body, &env))
                    .map(|rows| rows.into_iter().next());
                match found {
                    Ok(Some(record)) => {
                        opened(context, op, &record);
                        Transition(State::idle())
                    }
                    Ok(None) => create(context, op),
                    Err(e) => fail(context, op, Some(&e)),
                }
            }
            _ => Super,
        }
    }

    /// Creating a session through start-new-session.
    #[state(superstate = "any", exit_action = "abort_pending")]
    fn creating(
        op: &OpenOp,
        pending: &RequestId,
        context: &mut Ctx<'_>,
        event: &OpenEvent<'_>,
    ) -> Outcome<State> {
        match event {
            OpenEvent::Answer(a) if a.id == *pending => {
                // MOD-1, MOD-4: the model-required refusal waits for the person's choice.
                if let Some(missing) = a.outcome.model_required() {
                    let agent_uid = op.agent.clone().unwrap_or_default();
                    context.memory.signals.push_back(Signal::ModelRequired {
                        origin: super::model_choice::Origin::Open(op.clone()),
                        agent_uid,
                        agent_label: op.label.clone(),
                        missing,
                    });
                    return Transition(State::idle());
                }
                let env = context.inputs.environment_uid.clone().unwrap_or_default();
                let created = a
                    .ok_body()
                    .and_then(parse_created_session)
                    .and_then(|r| r.check_created_in(&env).map(|()| r));
                match created {
                    Ok(record) => {
                        opened(context, op, &record);
                        Transition(State::idle())
                    }
                    Err(e) => fail(context, op, Some(&e)),
                }
            }
            _ => Super,
        }
    }

    #[action]
    fn abort_pending(pending: &RequestId, context: &mut Ctx<'_>) {
        context.io.abort(*pending);
    }
}

fn start(context: &mut Ctx<'_>, op: &OpenOp) -> Outcome<State> {
    let Some(agent) = op.agent.as_deref().filter(|a| check_id("agent", a).is_ok()) else {
        notify_failure(
            context,
            op.kind,
            Some(op.kind.no_identifier_text().to_owned()),
        );
        return Transition(State::idle());
    };
    // Session requests need an Environment (section 1): refused before any request, so no
    // session is created that the engine could not show.
    let Some(environment_uid) = context.inputs.environment_uid.clone() else {
        return fail(context, op, Some(&ApiError::no_environment()));
    };
    if !op.kind.looks_up_latest() {
        return create(context, op);
    }
    let call = ApiCall::ListSessions {
        environment_uid,
        created_by_user_uid: context.inputs.scope().person,
        agent: Some(AgentFilter::for_agent(agent)),
    };
    match context.send(Owner::Opening, call) {
        Ok(pending) => Transition(State::looking_up(op.clone(), pending)),
        Err(e) => fail(context, op, Some(&e)),
    }
}

fn create(context: &mut Ctx<'_>, op: &OpenOp) -> Outcome<State> {
    let agent = op.agent.clone().unwrap_or_default();
    let thread_id = context.io.rng.uuid_v4();
    match context.send(
        Owner::Opening,
        ApiCall::StartNewSession { agent, thread_id },
    ) {
        Ok(pending) => Transition(State::creating(op.clone(), pending)),
        Err(e) => fail(context, op, Some(&e)),
    }
}

pub(crate) fn opened(context: &mut Ctx<'_>, op: &OpenOp, record: &SessionRecord) {
    context.memory.signals.push_back(Signal::Opened {
        session: SessionSummary::from(record),
        launched: op.kind.launched(),
        // OI-13: an archived session is never listed.
        listed: !record.is_archived,
    });
}

/// FAIL-13: a plain creation failure goes to notify and changes no selection.
fn fail(context: &mut Ctx<'_>, op: &OpenOp, error: Option<&ApiError>) -> Outcome<State> {
    notify_failure(context, op.kind, error.map(ToString::to_string));
    Transition(State::idle())
}

pub(crate) fn notify_failure(context: &mut Ctx<'_>, kind: OpenKind, description: Option<String>) {
    let (title, fallback) = kind.failure_texts();
    let description = description
        .filter(|d| !d.trim().is_empty())
        .unwrap_or_else(|| fallback.to_owned());
    context.emit(Event::Notify(Notice {
        title: title.to_owned(),
        description: Some(description),
        variant: NoticeVariant::Error,
    }));
}

/// The operation in flight, if any.
pub(crate) fn in_flight(state: &State) -> Option<&OpenOp> {
    match state {
        State::LookingUp { op, .. } | State::Creating { op, .. } => Some(op),
        State::Idle {} => None,
    }
}

super::count_transitions!(Opening);

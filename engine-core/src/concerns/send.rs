//! SND: one session's turns. A turn resolves runtime access (SND-3), confirms the Agent unless a
//! serving answer is remembered (SND-4, SND-5), is held through a wake (SND-9 to SND-13), then
//! posts the newest user message alone (SND-1, SND-6, SND-7) and streams the answer. A message
//! request is never repeated, except once after a 401 or 403 (SND-14, SND-23).
//!
//! The engine keeps one `Run` machine per session, so a run goes on while another session is on
//! screen.

use crate::deadline::{Deadline, TimeoutReason};
use std::time::Duration;

use crate::time::Time;

use statig::prelude::*;

use super::Signal;
use super::confirm::{Confirm, access_of, confirm, confirmed};
use super::runtime_access::Decision;
use crate::api::chat::{BodyFacts, RuntimeCall, turn_body};
use crate::api::{AccessMode, RuntimeEndpoint};
use crate::concerns::ctx::{Context, Reach, WorkCtx};
use crate::event::Event;
use crate::failure::{FailureCode, FailureSource, RunFailure};
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Outcome as Done, Owner, PieceKind, StreamPiece};
use crate::message::{Message, MessageStatus, Part, Role};
use crate::queue::QueuedMessage;
use crate::revision::Tracked;
use crate::snapshot::RunStatus;
use crate::stream::{AnswerStream, StreamDelta, StreamOutcome};
use crate::timestamp::unix_ms;
use std::sync::Arc;

mod access;
mod follow;
mod turn;

pub(crate) use turn::{QueuedTurn, Restored, RunEnd, Turn, TurnEnded};
use turn::{failed, not_sent, stopped_unsent};

/// A held send reads the session's decision this often (OI-4).
const HOLD_SETTLE: Duration = Duration::from_millis(500);
/// A hold ends this long after the wake's deadline (OI-4).
const HOLD_GRACE_MS: u64 = 30_000;
/// A hold without a wake deadline ends this long after it began (OI-4).
const HOLD_FALLBACK_MS: u64 = 720_000;

/// OI-6: a blocked first answer without a notice.
const BLOCKED_TEXT: &str = "The agent cannot take a new message right now.";
/// OI-6: `can_submit` true with mode `unavailable` and no detail.
const UNAVAILABLE_TEXT: &str =
    "The agent runtime is unavailable while its service is being reconciled.";
/// RU-15: the final text of an `error` frame that gives none.
const RUNTIME_ERROR_TEXT: &str = "The assistant runtime reported an error.";
/// A run stopped before its message left (the engine's choice, docs/interpretations.md).
const STOPPED_UNSENT_TEXT: &str = "Run cancelled. Your message was not sent.";

/// adr-notes 8: the run detail of a new conversation whose runtime named no session.
pub(crate) const NO_SESSION_TEXT: &str = "The agent did not start a session for this conversation.";
/// adr-notes 8: `sessionNotice` then.
pub(crate) const NO_SESSION_NOTICE: &str =
    "This new conversation did not get a session. Send the message again before continuing.";

/// adr-notes 8, run status details.
pub(crate) const WORKING_TEXT: &str = "Working on your request.";
pub(crate) const THINKING_TEXT: &str = "Thinking...";
pub(crate) const WRITING_TEXT: &str = "Writing a response...";
pub(crate) const COMPLETED_TEXT: &str = "Run completed.";
pub(crate) const CANCELLED_TEXT: &str = "Run cancelled.";
pub(crate) const CANCEL_REQUESTED_TEXT: &str = "Run cancellation requested.";
pub(crate) const RESTORED_LIVE_TEXT: &str = "Restored live session.";

/// The message of a decision's notice, when it has one.
fn notice_of(decision: Option<&Decision>) -> Option<String> {
    decision
        .and_then(|d| d.interaction.notice.as_ref())
        .map(|n| n.message.clone())
}

/// RU-16: R2 got no answer; "Source: Sending to the Agent. {the transport's message}".
const NO_RESPONSE_TEXT: &str = "Agent runtime request failed before receiving a response.";

/// Shared storage: one session's turns.
#[derive(Default)]
pub(crate) struct Run {
    pub session_uid: String,
    facts: BodyFacts,
    agent_name: Option<String>,
    /// Messages of this engine's turns since the history was applied, shared with snapshots;
    /// every mutable borrow counts as a change ([`crate::Revisions::thread`]).
    pub local: Tracked<Vec<Arc<Message>>>,
    /// The answer being streamed. Boxed: a run is idle far more often than it streams, and the stream is about 1 KiB
    /// inline (issue 12).
    pub answer: Option<Box<AnswerStream>>,
    /// The last answer, when it ended exactly as its stream left it (its last delta and its
    /// `Ended` status: a clean end, nothing settled or marked after): a host that applied every
    /// delta of it already has it ([`crate::ThreadView::settled`]). Shared with `local`, so a
    /// later change to the message is a new one and no longer this.
    pub settled: Option<Arc<Message>>,
    /// Moves with every delta of the answer, and when a new answer starts
    /// ([`crate::Revisions::streaming`]).
    pub answer_revision: u64,
    /// Moves when a run-status value changes ([`crate::Revisions::run`]).
    pub status_revision: u64,
    pub status: RunStatus,
    pub detail: Option<String>,
    /// Why the last turn failed, while the run status says `error` because of it.
    pub failure: Option<RunFailure>,
    /// `thinkingSummary`: the latest reasoning delta, or the running tool's status line.
    pub thinking_summary: Option<String>,
    /// `hasVisibleAssistantOutput`: the answer shows something (reasoning, text or a tool).
    pub visible_output: bool,
    /// A turn was attempted (RTA-25: a launched session follows every RTA rule from then on).
    pub has_sent: bool,
    /// The runtime named the conversation of the current turn (ADR 099).
    named: bool,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("session_uid", &self.session_uid)
            .field("local_messages", &self.local.len())
            .field("streaming", &self.answer.is_some())
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

pub(crate) enum RunEvent<'a> {
    /// A send that passed the guard (SND-2).
    Start(&'a Turn),
    /// A send refused by the guard, with its failure (SND-2).
    Refuse {
        turn: &'a Turn,
        failure: &'a RunFailure,
    },
    Answer(&'a Answer),
    Piece(&'a StreamPiece),
    /// Time passed; the session's shared decision as it stands (OI-4).
    Tick {
        decision: Option<&'a Decision>,
    },
    /// `cancelActiveSession()`: stop the local run (SND-16).
    Stop {
        decision: Option<&'a Decision>,
    },
    /// The run cancel failed (OI-19).
    CancelFailed(&'a str),
    /// The run cancel was accepted (a 2xx answer, OI-19).
    CancelAccepted,
    /// `cancelActiveSession()` was called (RU-22): idle, "Run cancelled.", whether or not a
    /// turn of this engine ran (a turn that runs ends with the `Stop` that follows).
    Stopping,
    /// What the next body is made of.
    Facts {
        facts: &'a BodyFacts,
        agent_name: Option<&'a str>,
    },
    /// A loaded history replaced the thread (HYD-4): finished local messages go.
    HistoryApplied,
    /// `clearThread()`: the stopped run's messages go and the status is idle, with no detail.
    Clear,
    /// The history says how the session's last run went (adr-notes 8).
    Restored(&'a Restored),
    /// A local runtime named the conversation: the run now belongs to this id (ADR 099).
    Rekey(&'a str),
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl Run {
    #[superstate]
    fn any(&mut self, event: &RunEvent<'_>) -> Outcome<State> {
        match event {
            // Borrowed mutably only when something goes (a borrow counts as a change).
            RunEvent::HistoryApplied
                if self
                    .local
                    .iter()
                    .any(|m| !matches!(m.status, MessageStatus::Running)) =>
            {
                self.local
                    .retain(|m| matches!(m.status, MessageStatus::Running));
                self.settled = None;
            }
            RunEvent::Stopping => self.set_status(RunStatus::Idle, Some(CANCELLED_TEXT)),
            RunEvent::Clear => {
                self.local.clear();
                self.answer = None;
                self.settled = None;
                self.set_status(RunStatus::Idle, None);
                self.thinking_summary = None;
                self.visible_output = false;
                self.touch();
            }
            RunEvent::Restored(restored) => {
                self.set_status(restored.status, restored.detail.as_deref());
                self.thinking_summary = None;
                self.visible_output = restored.visible_output;
                self.touch();
            }
            RunEvent::Rekey(to) => {
                self.session_uid = (*to).to_owned();
                self.touch();
            }
            _ => {}
        }
        Handled
    }

    /// No turn runs. The body facts change only here: a turn keeps those it started with,
    /// whatever the selection does meanwhile.
    #[state(superstate = "any")]
    fn idle(&mut self, context: &mut WorkCtx<'_>, event: &RunEvent<'_>) -> Outcome<State> {
        if let Some(outcome) = self.new_send(context, event) {
            return outcome;
        }
        match event {
            // A late cancel answer shows only while no newer turn runs (OI-19).
            RunEvent::CancelFailed(text) => {
                self.set_status(RunStatus::Error, Some(text));
                Handled
            }
            // A local runtime's stop ends at "Run cancelled." (the reference's local engine).
            RunEvent::CancelAccepted if context.reach.shows_cancel_requested() => {
                self.set_status(RunStatus::Idle, Some(CANCEL_REQUESTED_TEXT));
                Handled
            }
            _ => Super,
        }
    }

    /// SND-15: after a message request got no answer, access is resolved again (and confirmed
    /// again when ready) for the session, whether or not it is in view (RTA-2). Not a turn: a
    /// new send replaces it.
    #[state(superstate = "any", exit_action = "abort_pending")]
    #[allow(clippy::borrowed_box)]
    fn rechecking(
        &mut self,
        pending: &RequestId,
        candidate: &Option<Box<Decision>>,
        context: &mut WorkCtx<'_>,
        event: &RunEvent<'_>,
    ) -> Outcome<State> {
        match event {
            RunEvent::Answer(a) if a.id == *pending => match candidate {
                None => self.recheck_access(context, a),
                Some(candidate) => {
                    let (agent, serving) = (self.agent_name.clone(), a.outcome.is_serving());
                    let decision = confirmed(context, agent.as_deref(), serving, candidate);
                    self.publish(context, &decision);
                    Transition(State::idle())
                }
            },
            // A new send: the idle rules; the round is aborted on exit.
            _ => self.new_send(context, event).unwrap_or(Super),
        }
    }

    /// SND-3: resolve-runtime-access for the turn is in flight.
    #[state(superstate = "any", exit_action = "abort_pending")]
    #[allow(clippy::borrowed_box)] // statig hands state-local fields by reference
    fn resolving(
        &mut self,
        pending: &RequestId,
        turn: &Box<Turn>,
        context: &mut WorkCtx<'_>,
        event: &RunEvent<'_>,
    ) -> Outcome<State> {
        match event {
            RunEvent::Answer(a) if a.id == *pending => self.on_access(context, turn, a),
            RunEvent::Stop { .. } => self.end(context, turn, stopped_unsent(), false),
            _ => Super,
        }
    }

    /// SND-5: the Agent confirmation is in flight.
    #[state(superstate = "any", exit_action = "abort_pending")]
    #[allow(clippy::borrowed_box)]
    fn confirming(
        &mut self,
        pending: &RequestId,
        deadline: &Time,
        candidate: &Box<Decision>,
        turn: &Box<Turn>,
        context: &mut WorkCtx<'_>,
        event: &RunEvent<'_>,
    ) -> Outcome<State> {
        match event {
            RunEvent::Answer(a) if a.id == *pending => {
                let serving = a.outcome.is_serving();
                self.confirmed(context, turn, serving, candidate)
            }
            // OI-5: giving up counts as no answer.
            RunEvent::Tick { .. } if context.now >= *deadline => {
                context.io.abort(*pending);
                self.confirmed(context, turn, false, candidate)
            }
            RunEvent::Stop { .. } => self.end(context, turn, stopped_unsent(), false),
            _ => Super,
        }
    }

    /// SND-9: held through a wake; the session's decision is read every 500 ms (OI-4).
    #[state(superstate = "any")]
    #[allow(clippy::borrowed_box)]
    fn held(
        &mut self,
        next_check: &Time,
        turn: &Box<Turn>,
        context: &mut WorkCtx<'_>,
        event: &RunEvent<'_>,
    ) -> Outcome<State> {
        match event {
            RunEvent::Tick { decision } if context.now >= *next_check => {
                let notice = notice_of(*decision);
                match decision {
                    // SND-10: ready again: the whole send again.
                    Some(d) if d.interaction.can_submit => self.resolve(context, turn),
                    // SND-11, ADR 093 rule 9: settled to a blocked decision: not sent, in the
                    // notice's words, with no second attempt.
                    Some(d) if !d.is_starting() => {
                        let failure = not_sent(notice.as_deref());
                        self.end(context, turn, RunEnd::Blocked { notice, failure }, false)
                    }
                    // SND-13, OI-4: still transient strictly after the deadline.
                    _ if context.io.wall_ms(context.now)
                        > turn.hold_deadline_ms.unwrap_or(u64::MAX) =>
                    {
                        let end = RunEnd::Failed(not_sent(notice.as_deref()));
                        self.end(context, turn, end, false)
                    }
                    _ => Transition(State::held(context.now + HOLD_SETTLE, turn.clone())),
                }
            }
            RunEvent::Stop { decision } => {
                // SND-12.
                let notice = notice_of(*decision);
                let end = RunEnd::Stopped(Some(not_sent(notice.as_deref())));
                self.end(context, turn, end, false)
            }
            _ => Super,
        }
    }

    /// SND-7: the message request is out; its head has not come. No exit action: the request
    /// goes on into `streaming`; a stop aborts it explicitly.
    #[state(superstate = "any")]
    #[allow(clippy::borrowed_box)]
    fn posting(
        &mut self,
        pending: &RequestId,
        endpoint: &RuntimeEndpoint,
        turn: &Box<Turn>,
        context: &mut WorkCtx<'_>,
        event: &RunEvent<'_>,
    ) -> Outcome<State> {
        match event {
            RunEvent::Piece(p) if p.id == *pending && matches!(p.kind, PieceKind::Head) => {
                if context.reach.names_conversation() {
                    let named = context.io.head_of(*pending).and_then(|h| {
                        crate::api::local::runtime_session_uid(h.agent_session_uid.as_deref())
                    });
                    if let Some(uid) = named {
                        self.named_by_runtime(context, uid);
                    }
                }
                let id = turn.answer_id.clone();
                self.answer = Some(Box::new(AnswerStream::new(id, context.io.max_event_bytes)));
                self.settled = None;
                self.answer_revision = self.answer_revision.wrapping_add(1);
                // adr-notes 8: the answer's head has come.
                self.set_status(RunStatus::Queued, Some(THINKING_TEXT));
                self.thinking_summary = None;
                Transition(State::streaming(*pending, turn.clone()))
            }
            RunEvent::Answer(a) if a.id == *pending => match &a.outcome {
                Done::Http {
                    status: 401 | 403, ..
                } if !turn.auth_retried && context.reach.retries_auth() => {
                    // SND-23: access again, then this request once more.
                    let mut again = (**turn).clone();
                    again.auth_retried = true;
                    self.resolve(context, &again)
                }
                Done::Http { status, body } => {
                    // RU-16, RU-19 (a local runtime's refusal reads the same).
                    let text = a.refused_text(RuntimeCall::Chat, *status, body);
                    let end = failed(FailureCode::AgentHttpError, FailureSource::SENDING, &text);
                    self.end(context, turn, end, true)
                }
                Done::Failed(e) => {
                    // SND-14, SND-15: never again; forget the confirmation, check again (a local
                    // runtime is checked again by its admission, after the turn's end).
                    context.memory.confirmations.forget(endpoint);
                    let message = e.to_string();
                    let message = match message.trim() {
                        "" => NO_RESPONSE_TEXT,
                        m => m,
                    };
                    let end = failed(
                        FailureCode::AgentUnreachable,
                        FailureSource::SENDING,
                        message,
                    );
                    let ended = self.end(context, turn, end, true);
                    if !context.reach.rechecks_after_no_answer() {
                        return ended;
                    }
                    self.recheck(context)
                }
            },
            RunEvent::Stop { .. } => {
                context.io.abort(*pending);
                self.end(context, turn, RunEnd::Stopped(None), true)
            }
            _ => Super,
        }
    }

    /// The answer streams (HYD-10, HYD-11 hold while here).
    #[state(superstate = "any", exit_action = "abort_pending")]
    #[allow(clippy::borrowed_box)]
    fn streaming(
        &mut self,
        pending: &RequestId,
        turn: &Box<Turn>,
        context: &mut WorkCtx<'_>,
        event: &RunEvent<'_>,
    ) -> Outcome<State> {
        match event {
            RunEvent::Piece(p) if p.id == *pending => match &p.kind {
                PieceKind::Head => Handled,
                PieceKind::Chunk(bytes) => {
                    let mut deltas = Vec::new();
                    if let Some(answer) = self.answer.as_mut() {
                        answer.feed(bytes, &mut deltas);
                    }
                    self.relay(context, deltas);
                    // The runtime may name a new conversation in any frame: taken at once, so
                    // a stop after it keeps the name.
                    self.named_by_frame(context, turn);
                    Handled
                }
                PieceKind::End => {
                    let mut deltas = Vec::new();
                    if let Some(answer) = self.answer.as_mut() {
                        answer.end(&mut deltas);
                    }
                    self.relay(context, deltas);
                    self.named_by_frame(context, turn);
                    let end = match self.answer.as_deref().map(AnswerStream::outcome) {
                        // adr-notes 2 and 8: a new conversation whose runtime named none.
                        Some(StreamOutcome::Finished { .. }) if turn.new_chat && !self.named => {
                            context.memory.signals.push_back(Signal::Notice {
                                session_uid: self.session_uid.clone(),
                                text: NO_SESSION_NOTICE.to_owned(),
                            });
                            failed(
                                FailureCode::NewChatWithoutSession,
                                FailureSource::NOT_SENT,
                                NO_SESSION_TEXT,
                            )
                        }
                        Some(StreamOutcome::Finished { .. } | StreamOutcome::Aborted { .. }) => {
                            RunEnd::Clean
                        }
                        Some(StreamOutcome::Failed { error_text }) => self.error_frame(error_text),
                        // RU-6, RU-16: the reference labels its decoder's errors "Request was
                        // never sent" (docs/interpretations.md).
                        Some(_) | None => failed(
                            FailureCode::StreamInterrupted,
                            FailureSource::NOT_SENT,
                            &self.answer_error(),
                        ),
                    };
                    self.end(context, turn, end, true)
                }
                PieceKind::Failed(e) => {
                    let code = match e {
                        crate::api::ApiError::BodyTooLarge { .. } => FailureCode::StreamTooLarge,
                        _ => FailureCode::StreamInterrupted,
                    };
                    let end = failed(code, FailureSource::NOT_SENT, &e.to_string());
                    self.end(context, turn, end, true)
                }
            },
            RunEvent::Stop { .. } => self.end(context, turn, RunEnd::Stopped(None), true),
            _ => Super,
        }
    }

    #[action]
    fn abort_pending(pending: &RequestId, context: &mut WorkCtx<'_>) {
        context.io.abort(*pending);
    }
}

impl Run {
    /// A new send's events, the same while idle and while re-checking after no answer (SND-15):
    /// the body facts, a turn's start or its refusal; `None` for any other event.
    fn new_send(
        &mut self,
        context: &mut WorkCtx<'_>,
        event: &RunEvent<'_>,
    ) -> Option<Outcome<State>> {
        Some(match event {
            RunEvent::Facts { facts, agent_name } => {
                self.facts = (*facts).clone();
                self.agent_name = agent_name.map(str::to_owned);
                Handled
            }
            RunEvent::Start(turn) => {
                self.begin(turn);
                self.resolve(context, turn)
            }
            RunEvent::Refuse { turn, failure } => {
                self.begin(turn);
                self.end(context, turn, RunEnd::Failed((*failure).clone()), false)
            }
            _ => return None,
        })
    }

    /// What the run's turns are made of (the facts of the last turn started).
    pub(crate) fn facts(&self) -> &BodyFacts {
        &self.facts
    }

    /// A run for this session.
    pub(crate) fn for_session(session_uid: &str) -> Run {
        Run {
            session_uid: session_uid.to_owned(),
            ..Run::default()
        }
    }

    /// The runtime named the conversation this turn ran in (ADR 099): another id than the
    /// client's replaces it everywhere, and the conversation is no longer new (the engine
    /// relays the signal).
    fn named_by_runtime(&mut self, context: &mut WorkCtx<'_>, uid: String) {
        self.named = true;
        // Also when the runtime kept the client's id: the conversation is known from now on.
        context.memory.signals.push_back(Signal::Rekey {
            from: self.session_uid.clone(),
            to: uid,
        });
    }

    /// A new conversation's `new_session` frame names the runtime's id (once per turn).
    fn named_by_frame(&mut self, context: &mut WorkCtx<'_>, turn: &Turn) {
        if turn.new_chat
            && !self.named
            && let Some(frame) = self.answer.as_deref().and_then(|a| a.new_session())
            && let Some(uid) = crate::api::local::runtime_session_uid(Some(&frame.session_uid))
        {
            self.named_by_runtime(context, uid);
        }
    }

    /// The turn starts: its message shows at once, not yet sent.
    fn begin(&mut self, turn: &Turn) {
        self.named = false;
        self.local.push(Arc::new(Message {
            id: turn.user_message_id.clone(),
            role: Role::User,
            parts: vec![Part::done_text(turn.text.clone())],
            status: MessageStatus::Running,
            created_at: None,
            provenance: None,
            metadata: None,
        }));
        // adr-notes 8: `queued` until the answer's head arrives.
        let detail = match &turn.queued {
            Some(q) => format!("Sending queued message {} of {}", q.n, q.total),
            None => WORKING_TEXT.to_owned(),
        };
        self.status = RunStatus::Queued;
        self.detail = Some(detail);
        self.failure = None;
        self.thinking_summary = None;
        self.visible_output = false;
        self.touch();
    }

    /// A run-status value changed.
    fn touch(&mut self) {
        self.status_revision = self.status_revision.wrapping_add(1);
    }

    /// The answer shows something.
    fn shows_output(&mut self) {
        if !self.visible_output {
            self.visible_output = true;
            self.touch();
        }
    }

    /// A new thinking summary.
    fn summarize(&mut self, summary: Option<String>) {
        if self.thinking_summary != summary {
            self.thinking_summary = summary;
            self.touch();
        }
    }

    /// A new run status and detail; a failure stays only with an `error` status.
    pub(crate) fn set_status(&mut self, status: RunStatus, detail: Option<&str>) {
        self.touch();
        self.status = status;
        self.detail = detail.map(str::to_owned);
        if status != RunStatus::Error {
            self.failure = None;
        }
    }

    fn mark_user(&mut self, turn: &Turn, status: MessageStatus) {
        if let Some(m) = self
            .local
            .iter_mut()
            .rev()
            .find(|m| m.id == turn.user_message_id)
        {
            Arc::make_mut(m).status = status;
        }
    }

    /// The turn is over: the thread, the run status, and the queue's news (OI-20).
    fn end(
        &mut self,
        context: &mut WorkCtx<'_>,
        turn: &Turn,
        end: RunEnd,
        sent: bool,
    ) -> Outcome<State> {
        if let Some(answer) = self.answer.take() {
            let mut message = (*answer).into_message();
            let as_streamed = match (&end, &message.status) {
                // SND-16: a cut-short answer is never complete, and nothing in it streams on.
                (RunEnd::Stopped(_), _) => {
                    message.cancel();
                    false
                }
                // The answer's error reads as the turn's, labelled (RU-16); nothing in it
                // streams on (RU-6).
                (RunEnd::Failed(f), _) => {
                    message.fail(f.message.clone());
                    false
                }
                (_, MessageStatus::Running) => {
                    message.status = MessageStatus::Complete;
                    false
                }
                _ => true,
            };
            let message = Arc::new(message);
            self.settled = as_streamed.then(|| Arc::clone(&message));
            self.local.push(message);
        }
        if !sent {
            let error = end.failure().map(|f| f.message.clone()).unwrap_or_default();
            self.mark_user(turn, MessageStatus::Failed { error });
        }
        self.thinking_summary = None;
        self.touch();
        match &end {
            RunEnd::Clean => self.set_status(RunStatus::Complete, Some(COMPLETED_TEXT)),
            RunEnd::Stopped(_) => self.set_status(RunStatus::Idle, Some(CANCELLED_TEXT)),
            RunEnd::Failed(f) | RunEnd::Blocked { failure: f, .. } => {
                self.status = RunStatus::Error;
                self.detail = Some(f.message.clone());
                self.failure = Some(f.clone());
            }
        }
        context
            .memory
            .signals
            .push_back(Signal::RunEnded(Box::new(TurnEnded {
                session_uid: self.session_uid.clone(),
                end,
                sent,
                turn: turn.clone(),
            })));
        Transition(State::idle())
    }
}

/// Whether a turn runs (from its send, a held send included, to its end: OI-20).
pub(crate) fn is_active(state: &State) -> bool {
    !matches!(state, State::Idle {} | State::Rechecking { .. })
}

/// Whether a send is held through a wake (RTA-2: it keeps following its start).
pub(crate) fn is_held(state: &State) -> bool {
    matches!(state, State::Held { .. })
}

/// Whether the session's answer streams (HYD-10, HYD-11, `hasActiveChatStream`): from the
/// moment its message request is out, since the platform writes the turn from then on.
pub(crate) fn is_streaming(state: &State) -> bool {
    matches!(state, State::Posting { .. } | State::Streaming { .. })
}

/// The run's next deadline: the confirmation limit or the hold's next read.
pub(crate) fn deadline(state: &State) -> Option<Deadline> {
    match state {
        State::Confirming { deadline, .. } => {
            Some(Deadline::new(*deadline, TimeoutReason::TurnConfirmLimit))
        }
        State::Held { next_check, .. } => {
            Some(Deadline::new(*next_check, TimeoutReason::TurnHoldCheck))
        }
        _ => None,
    }
}

/// The queued row a running turn carries, while it is on its way (ADR 087: `sending`).
pub(crate) fn queued_turn(state: &State) -> Option<&QueuedTurn> {
    let turn = match state {
        State::Resolving { turn, .. }
        | State::Confirming { turn, .. }
        | State::Held { turn, .. }
        | State::Posting { turn, .. }
        | State::Streaming { turn, .. } => turn,
        State::Idle {} | State::Rechecking { .. } => return None,
    };
    turn.queued.as_ref()
}

super::count_transitions!(Run, WorkCtx);

//! The `Engine`: owns the machines and relays signals between them until nothing changes. This
//! file holds the facade (construction, the `handle_*` and `poll_*` calls); the wiring has a
//! file per job: `apply.rs` (host inputs), `commands.rs` (host commands), `route.rs` (finished
//! answers), `relay.rs` (signals between machines), `pipeline.rs` (one round of level rules),
//! `settle.rs` (the fixed-point loop), `projection.rs` (the view's parts and the snapshot),
//! `changes.rs` (revisions); sending, models, icons and the explorer have their own
//! (`sending.rs`, `models.rs`, `icons.rs`, `explorer.rs`). What differs between the platform
//! and a local Agent is the backend's (`backend/`): the engine hands it inputs, commands and
//! answers with a `Lent` (a context, the selection and the works) and never reads the source.

mod apply;
mod changes;
mod commands;
mod explorer;
mod host_config;
mod icons;
mod models;
mod pipeline;
mod projection;
mod relay;
mod route;
mod sending;
mod settle;

use changes::Touch;

use crate::time::Time;

use bytes::Bytes;
use statig::blocking::InitializedStateMachine;
use statig::prelude::*;

use crate::api::ApiError;
use crate::backend::platform::PlatformParts;
use crate::backend::{Backend, Lent};
use crate::concerns::Signal;
use crate::concerns::cancel::CancelEvent;
use crate::concerns::catalog::{CatalogEvent, CatalogStore};
use crate::concerns::ctx::{Ctx, Memory};
use crate::concerns::default_session::{self, DefaultEvent, DefaultSessionMachine};
use crate::concerns::environment::{EnvEvent, Environment};
use crate::concerns::explorer::{ExplorerEvent, ExplorerRead, ReadKind};
use crate::concerns::hydration::{HydEvent, Hydration};
use crate::concerns::icons::AgentIcons;
use crate::concerns::model_choice::{ChoiceEvent, ModelChoiceMachine};
use crate::concerns::opening::{self, OpenEvent, OpenKind, OpenOp, Opening};
use crate::concerns::picker::{Picker, PickerEdit, PickerEvent};
use crate::concerns::removal::Removals;
use crate::concerns::runtime_access::{RtaEvent, RuntimeAccessMachine};
use crate::concerns::selection::{self, Facts, SelEvent, Selection};
use crate::concerns::send::{RunEnd, RunEvent};
use crate::config::Config;
use crate::deadline::{Deadline, TimeoutReason};
use crate::event::Event;
use crate::input::{Command, Input};
use crate::inputs::{Inputs, non_blank};
use crate::intent::{ApiCall, Intent, RequestId};
use crate::io::{Answer, Delivery, Io, Owner};
use crate::work::Works;
use crate::{Origin, ResponseHead, TransportFailure};

/// SND-25: the detail is read this often while another writer works and messages wait.
const WRITER_POLL: std::time::Duration = std::time::Duration::from_millis(10_000);

/// OI-6: nothing is selected to write to.
pub(crate) const NO_SESSION_TEXT: &str = "Choose or start a session before writing.";

/// Bound on settle rounds per input (h11's fixed point); reaching it means a rule oscillates.
const MAX_SETTLE_ROUNDS: usize = 32;

/// A deterministic, sans-IO chat-session engine.
///
/// Drive contract: after any `handle_*` call, drain [`Engine::poll_intent`] and
/// [`Engine::poll_event`] until both return `None`, then read [`Engine::poll_timeout`]; only then
/// wait for I/O or time. [`Engine::snapshot`] is the level truth to render.
///
/// ```
/// use engine_core::{ApiCall, Config, Engine, Input, Intent, Time};
///
/// let now = Time::from_millis(5_000); // the host's monotonic clock, any origin
/// let mut engine = Engine::new(Config::new("https://platform.example.test").unwrap(), now);
/// engine.handle_input(Input::EnvironmentUid(Some("env-1".into())), now);
/// engine.handle_input(Input::IsVisible(true), now);
/// // The latest-sessions list is read for the person and Environment.
/// let mut calls = Vec::new();
/// while let Some(intent) = engine.poll_intent() {
///     if let Intent::Http { call, .. } = intent { calls.push(call); }
/// }
/// assert!(matches!(calls.as_slice(), [ApiCall::ListSessions { .. }]));
/// ```
pub struct Engine {
    start: Time,
    last_now: Time,
    inputs: Inputs,
    io: Io,
    /// Signals between machines, Agent confirmations and root-relative runtime bases.
    memory: Memory,
    /// The one selected session and `sessionNotice`, shown by either backend.
    selection: InitializedStateMachine<Selection>,
    /// The platform's parts, and the local Agent's while a local source is set.
    backend: Backend,
    /// Each session's run, cancel and queue.
    works: Works,
    /// The trace of every input, when recording (opt-in, [`Engine::new_recording`]).
    recorder: Option<crate::trace::TraceRecorder>,
    /// What changed, per part of the snapshot ([`Engine::revisions`]).
    revisions: crate::Revisions,
    /// What the revisions were last moved from.
    seen: changes::Seen,
    /// Changes outside machine states that a level rule may read: relayed signals, Agent ids
    /// a stream reported.
    own_changes: u64,
    /// The change counts at the last fixed point of the settle loop.
    settled: (ChangeCount, u64),
    /// The current input's time reached a deadline of [`Engine::poll_timeout`].
    deadline_reached: bool,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("elapsed_ms", &self.elapsed_ms())
            .field("selection", self.selection.state())
            .field("in_flight_ignored_answers", &self.io.ignored_answers)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Builds an engine at `now`, on the host's monotonic clock (any origin: only differences
    /// between the [`Time`]s it is given matter; traces count from this one).
    pub fn new(config: Config, now: Time) -> Engine {
        let inputs = Inputs::default();
        let mut io = Io::new(&config, now);
        let mut memory = Memory::default();
        let mut ctx = crate::backend::ctx(now, &inputs, &mut io, &mut memory);
        let env = Environment::default()
            .uninitialized_state_machine()
            .init_with_context(&mut ctx);
        let default = DefaultSessionMachine::default()
            .uninitialized_state_machine()
            .init_with_context(&mut ctx);
        let opening = Opening
            .uninitialized_state_machine()
            .init_with_context(&mut ctx);
        let selection = Selection::default().uninitialized_state_machine().init();
        let hydration = Hydration::default()
            .uninitialized_state_machine()
            .init_with_context(&mut ctx);
        let runtime = RuntimeAccessMachine::default()
            .uninitialized_state_machine()
            .init_with_context(&mut ctx);
        let catalog = CatalogStore::default()
            .uninitialized_state_machine()
            .init_with_context(&mut ctx);
        let choice = ModelChoiceMachine::default()
            .uninitialized_state_machine()
            .init_with_context(&mut ctx);
        let picker = Picker::default()
            .uninitialized_state_machine()
            .init_with_context(&mut ctx);
        let archived = ExplorerRead::new(ReadKind::Archived)
            .uninitialized_state_machine()
            .init_with_context(&mut ctx);
        let search = ExplorerRead::new(ReadKind::Search)
            .uninitialized_state_machine()
            .init_with_context(&mut ctx);
        let icons = AgentIcons::default()
            .uninitialized_state_machine()
            .init_with_context(&mut ctx);
        let mut engine = Engine {
            start: now,
            last_now: now,
            inputs,
            io,
            memory,
            selection,
            backend: Backend {
                platform: PlatformParts {
                    env,
                    default,
                    opening,
                    hydration,
                    runtime,
                    catalog,
                    choice,
                    picker,
                    archived,
                    search,
                    icons,
                    removals: Removals::default(),
                },
                local: None,
            },
            works: Works::default(),
            recorder: None,
            revisions: crate::Revisions::default(),
            seen: changes::Seen::default(),
            own_changes: 0,
            settled: Default::default(),
            deadline_reached: false,
        };
        engine.scope_changed(now);
        engine.settle(now);
        engine.note_changes(Touch::Any);
        engine
    }

    /// An engine that records every input it is fed as a trace (`spec-tests/TRACES.md`), with
    /// secrets redacted; read it with [`Engine::trace`]. Replaying the trace gives the same
    /// intents, events and snapshots.
    pub fn new_recording(config: Config, now: Time) -> Engine {
        let recorder = crate::trace::TraceRecorder::new(&config, now);
        let mut engine = Engine::new(config, now);
        engine.recorder = Some(recorder);
        // Intents of the construction (none today) are seen by the recorder like any other.
        engine
    }

    /// The trace recorded so far (JSON Lines), when recording.
    pub fn trace(&self) -> Option<&str> {
        self.recorder
            .as_ref()
            .map(crate::trace::TraceRecorder::text)
    }

    /// The time of an input: recorded first when recording, then read as monotonic.
    fn enter(
        &mut self,
        now: Time,
        record: impl FnOnce(&mut crate::trace::TraceRecorder, Time),
    ) -> Time {
        if let Some(r) = self.recorder.as_mut() {
            record(r, now);
        }
        self.tick(now)
    }

    /// Milliseconds since the engine's start, as of the last input.
    pub fn elapsed_ms(&self) -> u64 {
        u64::try_from(
            self.last_now
                .saturating_duration_since(self.start)
                .as_millis(),
        )
        .unwrap_or(u64::MAX)
    }

    fn tick(&mut self, now: Time) -> Time {
        // A deadline reached by this input's time: a rule may act on it, and a value that
        // follows the clock (`isRuntimeWakeOverdue`) may flip, whatever the input is.
        self.deadline_reached = self.poll_timeout().is_some_and(|deadline| deadline <= now);
        // Time is monotonic: an earlier `now` is read as the last one.
        if now > self.last_now {
            self.last_now = now;
        }
        self.last_now
    }

    /// A host input or command.
    pub fn handle_input(&mut self, input: Input, now: Time) {
        let now = self.enter(now, |r, now| r.input(&input, now));
        self.apply(input, now);
        self.settle(now);
        self.note_changes(Touch::Any);
    }

    /// The head of an answer to request `id`. Unknown ids are ignored.
    pub fn handle_response(&mut self, id: RequestId, head: ResponseHead, now: Time) {
        let now = self.enter(now, |r, now| r.head(id, &head, now));
        let answer = self.io.on_head(id, head);
        self.finished(answer, now);
    }

    /// A piece of the body of request `id`, in any chunking.
    pub fn handle_body_chunk(&mut self, id: RequestId, chunk: Bytes, now: Time) {
        let now = self.enter(now, |r, now| r.chunk(id, &chunk, now));
        let answer = self.io.on_chunk(id, &chunk);
        self.finished(answer, now);
    }

    /// The end of the body of request `id`.
    pub fn handle_body_end(&mut self, id: RequestId, now: Time) {
        let now = self.enter(now, |r, now| r.end(id, now));
        let answer = self.io.on_end(id);
        self.finished(answer, now);
    }

    /// Request `id` failed below HTTP (no answer, or a broken body). A transport's message may
    /// quote the request's headers (an HTTP library refusing a header value does): the
    /// person's platform token is taken out of it before it is kept, shown or recorded.
    pub fn handle_failure(&mut self, id: RequestId, mut failure: TransportFailure, now: Time) {
        if let Some(token) = self.inputs.person.token.as_ref().map(|t| t.expose().trim())
            && !token.is_empty()
            && failure.message.contains(token)
        {
            failure.message = failure.message.replace(token, "[redacted]");
        }
        let now = self.enter(now, |r, now| r.failure(id, &failure, now));
        let answer = self.io.on_failure(id, &failure);
        self.finished(answer, now);
    }

    /// Hands a finished request, or a piece of a streamed answer, to its owner and settles.
    fn finished(&mut self, delivery: Option<Delivery>, now: Time) {
        let touch = match &delivery {
            Some(Delivery::Stream(piece))
                if matches!(piece.kind, crate::io::PieceKind::Chunk(_))
                    && !self.deadline_reached =>
            {
                Touch::Piece
            }
            _ => Touch::Any,
        };
        match delivery {
            Some(Delivery::Finished(answer)) => self.route(&answer, now),
            // Only message requests stream (BodyMode::Streamed).
            Some(Delivery::Stream(piece)) if piece.owner == Owner::Send => {
                let before = self.agent_id_reports();
                let (mut ctx, p) = self.ctx(now);
                p.works.each_run(&mut ctx, &RunEvent::Piece(&piece));
                // adr-notes 6: a frame of the shown session's answer reported the Agent (the
                // same one again included: a new selection forgot it).
                if self.agent_id_reports() != before
                    && let Some(agent_id) = self.streamed_agent_id()
                {
                    self.own_changes = self.own_changes.wrapping_add(1);
                    let (mut ctx, p) = self.ctx(now);
                    let event = HydEvent::AgentIdReported(&agent_id);
                    p.hydration.handle_with_context(&event, &mut ctx);
                }
            }
            Some(Delivery::Stream(_)) => {}
            None => return,
        }
        if touch == Touch::Piece && self.quiet() {
            // Debug builds (every test) check that the settle skipped would change nothing.
            #[cfg(debug_assertions)]
            self.check_quiet(now);
        } else {
            self.settle(now);
        }
        self.note_changes(touch);
    }

    /// The streaming answer of the hydrated session.
    fn streamed_answer(&self) -> Option<&crate::stream::AnswerStream> {
        let uid = self
            .backend
            .platform
            .hydration
            .inner()
            .session_uid
            .as_deref()?;
        self.works.get(uid)?.run.inner().answer.as_deref()
    }

    /// The Agent id that answer reports so far (adr-notes 6).
    fn streamed_agent_id(&self) -> Option<String> {
        self.streamed_answer()?.agent_id().map(str::to_owned)
    }

    /// How many of its frames reported one (no allocation per piece).
    fn agent_id_reports(&self) -> u64 {
        self.streamed_answer()
            .map_or(0, crate::stream::AnswerStream::agent_id_reports)
    }

    /// Time has reached a deadline of [`Engine::poll_timeout`]. Early or repeated calls are harmless.
    pub fn handle_timeout(&mut self, now: Time) {
        let now = self.enter(now, |r, now| r.timeout(now));
        self.settle(now);
        self.note_changes(Touch::Any);
    }

    /// The next piece of work for the shell.
    pub fn poll_intent(&mut self) -> Option<Intent> {
        let intent = self.io.outbox.pop_front();
        match (self.recorder.as_mut(), intent.as_ref()) {
            (Some(r), Some(i)) => r.intent(i),
            (_, None) => crate::io::release_if_empty(&mut self.io.outbox),
            _ => {}
        }
        intent
    }

    /// The next edge-triggered fact for the host.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.io.events.pop_front()
    }

    /// When [`Engine::handle_timeout`] should next be called, on the host's clock (the same
    /// [`Time`] line as every `now`); `None` when no timer runs. The earliest of the timers
    /// [`TimeoutReason`] lists ([`Engine::timeout_reason`] says which). After a drain it always
    /// lies after the last `now`.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.next_deadline().map(|d| d.at)
    }

    /// Why [`Engine::poll_timeout`] asks to be woken (the earliest timer's reason); `None` when
    /// no timer runs. For diagnostics and logs.
    ///
    /// ```
    /// use engine_core::{Config, Engine, Time};
    ///
    /// let engine = Engine::new(Config::new("https://platform.example.test").unwrap(), Time::ZERO);
    /// assert_eq!(engine.timeout_reason(), None);
    /// ```
    pub fn timeout_reason(&self) -> Option<TimeoutReason> {
        self.next_deadline().map(|d| d.reason)
    }

    /// The earliest timer, with its reason.
    fn next_deadline(&self) -> Option<Deadline> {
        let overdue = || {
            self.wake_overdue_at()
                .filter(|t| *t > self.last_now)
                .map(|at| Deadline::new(at, TimeoutReason::WakeOverdue))
        };
        self.backend
            .deadline(&self.inputs, self.works.deadline(), overdue)
    }

    /// Answer parts dropped because their request was not in flight (aborted, finished or never
    /// issued), a repeated head included. For diagnostics.
    pub fn ignored_answers(&self) -> u64 {
        self.io.ignored_answers
    }

    /// A machine context, and the platform's machines with the two shared concerns beside it.
    fn ctx(&mut self, now: Time) -> (Ctx<'_>, Parts<'_>) {
        let (backend, lent) = self.lend(now);
        let PlatformParts {
            env,
            default,
            opening,
            hydration,
            runtime,
            catalog,
            choice,
            picker,
            ..
        } = &mut backend.platform;
        let parts = Parts {
            env,
            default,
            opening,
            selection: lent.selection,
            hydration,
            runtime,
            catalog,
            choice,
            picker,
            works: lent.works,
        };
        (lent.ctx, parts)
    }

    /// The backend, and what the engine lends it beside its parts (`backend::Lent`).
    fn lend(&mut self, now: Time) -> (&mut Backend, Lent<'_>) {
        let Engine {
            inputs,
            io,
            memory,
            selection,
            works,
            backend,
            ..
        } = self;
        let ctx = crate::backend::ctx(now, inputs, io, memory);
        let lent = Lent {
            ctx,
            selection,
            works,
        };
        (backend, lent)
    }

    fn open(&mut self, kind: OpenKind, agent: Option<String>, label: Option<String>, now: Time) {
        let op = OpenOp { kind, agent, label };
        let (mut ctx, p) = self.ctx(now);
        p.opening
            .handle_with_context(&OpenEvent::Start(&op), &mut ctx);
    }
}

pub(super) type ChangeCount = (u64, u64, u64, (u64, u64));

/// The machines, borrowed apart from the context.
struct Parts<'a> {
    env: &'a mut InitializedStateMachine<Environment>,
    default: &'a mut InitializedStateMachine<DefaultSessionMachine>,
    opening: &'a mut InitializedStateMachine<Opening>,
    selection: &'a mut InitializedStateMachine<Selection>,
    hydration: &'a mut InitializedStateMachine<Hydration>,
    runtime: &'a mut InitializedStateMachine<RuntimeAccessMachine>,
    catalog: &'a mut InitializedStateMachine<CatalogStore>,
    choice: &'a mut InitializedStateMachine<ModelChoiceMachine>,
    picker: &'a mut InitializedStateMachine<Picker>,
    works: &'a mut Works,
}

impl Parts<'_> {
    fn is_launched(&self) -> bool {
        launched_now(self.selection)
    }
}

impl Engine {
    /// OI-4: when the selected session's wake is 30 s past its deadline ("taking longer"), as a
    /// `Time` of the engine's clock; a timer, so hosts render the change on time.
    pub(crate) fn wake_overdue_at(&self) -> Option<Time> {
        let uid = self.selected_uid()?;
        let deadline_ms =
            crate::view::wake_overdue_ms(self.backend.platform.runtime.inner().decision(&uid)?)?;
        let now_ms = self.io.wall_ms(self.last_now);
        let wait = deadline_ms.checked_sub(now_ms)?;
        Some(self.last_now + std::time::Duration::from_millis(wait))
    }
}

fn launched_now(selection: &InitializedStateMachine<Selection>) -> bool {
    matches!(
        selection::selected(selection.state()),
        Some((_, Origin::Launched))
    )
}

/// Facts for list-based reselection (REQ-5, archive and delete).
fn list_facts(env: &InitializedStateMachine<Environment>, avoid_implicit: bool) -> Facts<'_> {
    let list = env.inner().current();
    Facts {
        default_state: false,
        default_uid: None,
        implicit_allowed: !avoid_implicit,
        list: list
            .filter(|l| l.from_platform)
            .map(|l| l.sessions.as_slice()),
    }
}

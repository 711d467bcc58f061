//! The `Engine`: owns the machines and relays signals between them until nothing changes.
//! Sending and models have their own files (`sending.rs`, `models.rs`).

mod changes;
mod host_config;
mod icons;
mod local;
mod local_view;
mod models;
mod projection;
mod route;
mod sending;

use changes::Touch;

use crate::time::Time;
use std::collections::BTreeMap;

use bytes::Bytes;
use statig::blocking::InitializedStateMachine;
use statig::prelude::*;

use crate::api::ApiError;
use crate::config::Config;
use crate::event::{Event, Notice, NoticeVariant};
use crate::input::{Command, Input};
use crate::inputs::{Inputs, non_blank};
use crate::intent::{ApiCall, Intent, RequestId};
use crate::io::{Answer, Delivery, Io, Owner};
use crate::machines::Signal;
use crate::machines::cancel::CancelEvent;
use crate::machines::catalog::{self, CatalogEvent, CatalogStore};
use crate::machines::ctx::{Ctx, Memory};
use crate::machines::default_session::{self, DefaultEvent, DefaultSessionMachine};
use crate::machines::environment::{EnvEvent, Environment};
use crate::machines::explorer::{ExplorerEvent, ExplorerRead, ReadKind};
use crate::machines::hydration::{HydEvent, Hydration};
use crate::machines::icons::AgentIcons;
use crate::machines::model_choice::{ChoiceEvent, ModelChoiceMachine};
use crate::machines::opening::{self, OpenEvent, OpenKind, OpenOp, Opening};
use crate::machines::picker::{Picker, PickerEdit, PickerEvent};
use crate::machines::runtime_access::{self, RtaEvent, RuntimeAccessMachine};
use crate::machines::selection::{self, Facts, SelEvent, Selection};
use crate::machines::send::{RunEnd, RunEvent};
use crate::work::Works;
use crate::{Origin, ResponseHead, TransportFailure, check_id};

/// SND-25: the detail is read this often while another writer works and messages wait.
const WRITER_POLL: std::time::Duration = std::time::Duration::from_millis(10_000);

/// OI-6: nothing is selected to write to.
pub(crate) const NO_SESSION_TEXT: &str = "Choose or start a session before writing.";

/// Bound on settle rounds per input (h11's fixed point); reaching it means a rule oscillates.
const MAX_SETTLE_ROUNDS: usize = 32;

/// An archive or delete in flight.
#[derive(Debug, Clone)]
struct Removal {
    session_uid: String,
    archived: bool,
}

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
    env: InitializedStateMachine<Environment>,
    default: InitializedStateMachine<DefaultSessionMachine>,
    opening: InitializedStateMachine<Opening>,
    selection: InitializedStateMachine<Selection>,
    hydration: InitializedStateMachine<Hydration>,
    runtime: InitializedStateMachine<RuntimeAccessMachine>,
    catalog: InitializedStateMachine<CatalogStore>,
    choice: InitializedStateMachine<ModelChoiceMachine>,
    picker: InitializedStateMachine<Picker>,
    /// Since when the page is hidden (RTA-10, RTA-22).
    page_hidden_since: Option<Time>,
    /// The launchKey last opened (SEL-7).
    opened_launch_key: Option<u64>,
    /// The requested id was set while the person or the Environment was still unknown: it carries
    /// into the pair that completes them.
    requested_before_scope: bool,
    removals: BTreeMap<RequestId, Removal>,
    /// Unarchive requests in flight, by session.
    restorations: BTreeMap<RequestId, String>,
    /// A delete failure, shown as `latestSessionsError` (the reference's choice).
    delete_error: Option<String>,
    /// Each session's run, cancel and queue.
    works: Works,
    /// The session selected at the last settle: leaving it holds its waiting queue (OI-20).
    last_selected: Option<String>,
    /// The trace of every input, when recording (opt-in, [`Engine::new_recording`]).
    recorder: Option<crate::trace::TraceRecorder>,
    /// The session explorer's archived list.
    archived: InitializedStateMachine<ExplorerRead>,
    /// The session explorer's search.
    search: InitializedStateMachine<ExplorerRead>,
    /// Agent icons (ADR 090).
    icons: InitializedStateMachine<AgentIcons>,
    /// The local engine's machines (ADR 099), there only while a local source is set.
    local: Option<Box<local::Local>>,
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
        let mut ctx = Ctx {
            now,
            inputs: &inputs,
            io: &mut io,
            memory: &mut memory,
        };
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
            env,
            default,
            opening,
            selection,
            hydration,
            runtime,
            catalog,
            choice,
            picker,
            page_hidden_since: None,
            opened_launch_key: None,
            requested_before_scope: false,
            removals: BTreeMap::new(),
            restorations: BTreeMap::new(),
            delete_error: None,
            works: Works::default(),
            last_selected: None,
            recorder: None,
            archived,
            search,
            icons,
            local: None,
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

    /// Issue 12, point 2: a piece of a streamed body wakes only the run it belongs to. When it
    /// changed no machine's state, relayed nothing and its time reached no deadline (no rule
    /// acts on time, and `isRuntimeWakeOverdue` cannot flip), every level rule
    /// sees what it saw at the last fixed point (the answer's content and the run-status values
    /// are read by no rule), so the settle is skipped.
    fn quiet(&self) -> bool {
        self.memory.signals.is_empty()
            && (self.change_count(), self.own_changes) == self.settled
            && !self.deadline_reached
    }

    /// The settle [`Engine::quiet`] skipped, run anyway: it must change nothing.
    #[cfg(debug_assertions)]
    fn check_quiet(&mut self, now: Time) {
        let before = (
            self.settled,
            self.io.outbox.len(),
            self.io.events.len(),
            self.snapshot(),
        );
        self.settle(now);
        let after = (
            (self.change_count(), self.own_changes),
            self.io.outbox.len(),
            self.io.events.len(),
            self.snapshot(),
        );
        debug_assert!(
            after == before,
            "a quiet piece changed what a level rule reads"
        );
    }

    /// The streaming answer of the hydrated session.
    fn streamed_answer(&self) -> Option<&crate::stream::AnswerStream> {
        let uid = self.hydration.inner().session_uid.as_deref()?;
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
    /// [`Time`] line as every `now`); `None` when no timer runs. The timers are runtime access's:
    /// the next poll (never while the page is hidden) and the confirmation limit. After a drain it
    /// always lies after the last `now`.
    pub fn poll_timeout(&self) -> Option<Time> {
        let page_hidden = self.inputs.page_hidden;
        let runtime =
            runtime_access::deadline(self.runtime.inner(), self.runtime.state(), page_hidden);
        let catalog = catalog::deadline(self.catalog.state());
        let overdue = self.wake_overdue_at().filter(|t| *t > self.last_now);
        if self.inputs.source.is_some() {
            // ADR 099: the local runtime's re-check while the chat is visible, and the works'
            // own clocks (a cancel's give-up).
            let recheck = self.local_deadline();
            return [recheck, self.works.deadline()].into_iter().flatten().min();
        }
        [runtime, catalog, self.works.deadline(), overdue]
            .into_iter()
            .flatten()
            .min()
    }

    /// Answer parts dropped because their request was not in flight (aborted, finished or never
    /// issued), a repeated head included. For diagnostics.
    pub fn ignored_answers(&self) -> u64 {
        self.io.ignored_answers
    }

    fn ctx(&mut self, now: Time) -> (Ctx<'_>, Parts<'_>) {
        let Engine {
            inputs,
            io,
            memory,
            env,
            default,
            opening,
            selection,
            hydration,
            runtime,
            catalog,
            choice,
            picker,
            works,
            ..
        } = self;
        (
            Ctx {
                now,
                inputs,
                io,
                memory,
            },
            Parts {
                env,
                default,
                opening,
                selection,
                hydration,
                runtime,
                catalog,
                choice,
                picker,
                works,
            },
        )
    }

    fn apply(&mut self, input: Input, now: Time) {
        match input {
            Input::Person(person) => {
                let token_changed = person.token != self.inputs.person.token;
                let before = self.inputs.scope();
                self.inputs.person = person;
                if self.inputs.scope() != before {
                    self.scope_changed(now);
                } else if token_changed && self.inputs.person.token.is_none() {
                    // Icons are read only for a signed-in person: without a credential they go.
                    self.reset_icons(now);
                } else if token_changed {
                    // OI-26: a new token reads the detail again.
                    let (mut ctx, p) = self.ctx(now);
                    p.hydration
                        .handle_with_context(&HydEvent::RefreshDetail, &mut ctx);
                }
            }
            Input::EnvironmentUid(env) => {
                let env = non_blank(env.as_deref());
                if env != self.inputs.environment_uid {
                    self.inputs.environment_uid = env;
                    self.scope_changed(now);
                }
            }
            Input::IsVisible(v) => {
                let returned = v && !self.inputs.visible;
                self.inputs.visible = v;
                if returned && self.inputs.source.is_some() {
                    // adr-notes 5: a local runtime is checked again when the chat comes back.
                    self.recheck_local(now);
                } else if returned {
                    // OI-26, OI-7: coming back into view reads the latest-sessions list again
                    // (not for a launched session: the settle loop does not want the read then).
                    let (mut ctx, p) = self.ctx(now);
                    p.env.handle_with_context(&EnvEvent::Reread, &mut ctx);
                }
            }
            Input::PageVisible(visible) => {
                let was_hidden = self.inputs.page_hidden;
                self.inputs.page_hidden = !visible;
                match (was_hidden, visible) {
                    (false, false) => self.page_hidden_since = Some(now),
                    (true, true) => {
                        let since = self.page_hidden_since.take().unwrap_or(now);
                        let hidden_for = now.saturating_duration_since(since);
                        let (mut ctx, p) = self.ctx(now);
                        p.runtime
                            .handle_with_context(&RtaEvent::PageShown { hidden_for }, &mut ctx);
                    }
                    _ => {}
                }
            }
            Input::RequestedSessionId(id) => {
                let id = non_blank(id.as_deref());
                if id != self.inputs.requested_session_id {
                    self.inputs.requested_session_id = id.clone();
                    self.requested_before_scope = id.is_some() && !self.scope_complete();
                    match id {
                        Some(id) if self.inputs.source.is_some() => {
                            self.local_requested(&id, now);
                        }
                        Some(id) => self.choose_requested(&id, now),
                        None => {}
                    }
                }
            }
            Input::DefaultSession(d) => self.inputs.default_session = d,
            Input::ShowsDefaultSession(shows) => {
                let was = self.inputs.shows_default_session;
                self.inputs.shows_default_session = shows;
                if was && !shows {
                    // OI-14: outside the default-session surface a requested id wins.
                    if let Some(id) = self.inputs.requested_session_id.clone() {
                        self.choose_requested(&id, now);
                    }
                }
            }
            Input::LaunchTarget(t) => self.inputs.launch_target = t,
            Input::AvoidImplicitSessionSelection(v) => self.inputs.avoid_implicit = v,
            // A null viewContext is no viewContext (it cannot be told apart in a trace).
            Input::ViewContext(v) => self.inputs.view_context = v.filter(|v| !v.is_null()),
            Input::StoredSessionsLoaded { key, sessions } => {
                let sessions = sessions.unwrap_or_default();
                let (mut ctx, p) = self.ctx(now);
                p.env.handle_with_context(
                    &EnvEvent::StoredLoaded {
                        key: &key,
                        sessions: &sessions,
                    },
                    &mut ctx,
                );
            }
            Input::StoredQueueLoaded { key, rows } => {
                let stored = rows
                    .as_ref()
                    .map(crate::queue::stored_rows)
                    .unwrap_or_default();
                let session = key
                    .strip_prefix("main_sequence_ai.message_queue.")
                    .map(str::to_owned);
                if let Some(session) = session.filter(|s| self.works.stored_queue_answered(s)) {
                    let (mut ctx, p) = self.ctx(now);
                    let work = p.works.entry(&mut ctx, &session);
                    work.queue.restore(stored);
                    // What storage holds is what we hold now, until it changes.
                    let rows = work.queue.rows.iter().cloned().collect();
                    p.works.stored.set(&session, rows);
                }
            }
            Input::Source(source) => {
                let base = |s: &Option<crate::source::LocalSource>| {
                    s.as_ref().map(|s| s.base_url().to_owned())
                };
                if base(&source) != base(&self.inputs.source) {
                    self.inputs.source = source;
                    self.source_changed(now);
                } else {
                    // Only the display name changed: the same runtime, the same scope.
                    self.inputs.source = source;
                }
            }
            Input::StoredSelectionLoaded { key, session_uid } => {
                self.local_stored_selection(&key, session_uid.as_deref(), now);
            }
            Input::Command(c) => self.command(c, now),
        }
    }

    fn choose_requested(&mut self, id: &str, now: Time) {
        // OI-14: on the default-session surface a requested id never wins (DEF-2, DEF-18).
        if self.inputs.shows_default_session {
            return;
        }
        let (mut ctx, p) = self.ctx(now);
        // SEL-14: the latest selecting event wins; an open or create still running loses.
        p.opening.handle_with_context(&OpenEvent::Cancel, &mut ctx);
        p.selection.handle(&SelEvent::Choose {
            session_uid: id,
            origin: Origin::Requested,
        });
        // The session may already be loaded (or have failed) under another origin: REQ-4 to
        // REQ-6 follow what its detail read already said.
        let h = p.hydration.inner();
        if h.session_uid.as_deref() == Some(id) {
            if h.detail.value().is_some() {
                p.selection
                    .handle(&SelEvent::DetailLoaded { session_uid: id });
            } else if let Some(error) = h.detail.error() {
                let session_uid = id.to_owned();
                let error = error.clone();
                self.memory
                    .signals
                    .push_back(Signal::DetailFailed { session_uid, error });
            }
        }
    }

    /// ENV-1 to ENV-4: a new person or Environment.
    fn scope_changed(&mut self, now: Time) {
        // SEL-7: a launch cancelled before it opened is opened again for the new pair.
        if opening::in_flight(self.opening.state()).is_some_and(|op| op.kind == OpenKind::Launch) {
            self.opened_launch_key = None;
        }
        let scope = self.inputs.scope();
        let (mut ctx, p) = self.ctx(now);
        p.env
            .handle_with_context(&EnvEvent::ScopeChanged(scope), &mut ctx);
        p.opening.handle_with_context(&OpenEvent::Cancel, &mut ctx);
        p.selection.handle(&SelEvent::Clear);
        p.hydration.handle_with_context(&HydEvent::Reset, &mut ctx);
        p.runtime.handle_with_context(&RtaEvent::Reset, &mut ctx);
        // Runs and cancels of the old pair stop; waiting messages are held (OI-20: away).
        p.works
            .each_run(&mut ctx, &RunEvent::Stop { decision: None });
        // The stopped turns end in the old pair's work, before it is parked: a queued row on
        // its way goes back to its own queue (nothing written is lost, INV-10).
        let signals = std::mem::take(&mut ctx.memory.signals);
        for signal in signals {
            match signal {
                Signal::RunEnded(ended) => {
                    if let Some(work) = p.works.get_mut(&ended.session_uid) {
                        for event in sending::run_ended(work, *ended, false) {
                            ctx.emit(event);
                        }
                    }
                }
                other => ctx.memory.signals.push_back(other),
            }
        }
        p.works.each_cancel(&mut ctx, &CancelEvent::Reset);
        // What the old pair's queues hold now is stored before they are parked (ADR 087).
        self.persist_queues();
        let (mut ctx, p) = self.ctx(now);
        p.works.switch_scope(ctx.inputs.scope());
        p.choice.handle_with_context(&ChoiceEvent::Reset, &mut ctx);
        p.picker.handle_with_context(&PickerEvent::Reset, &mut ctx);
        for id in std::mem::take(&mut self.removals).into_keys() {
            self.io.abort(id);
        }
        for id in std::mem::take(&mut self.restorations).into_keys() {
            self.io.abort(id);
        }
        self.delete_error = None;
        // Nothing of another person or Environment shows in the explorer (ENV-2, INV-10).
        self.explore(ReadKind::Archived, &ExplorerEvent::Clear, now);
        self.explore(ReadKind::Search, &ExplorerEvent::Clear, now);
        // ENV-2 clears the selection. A session requested before the person and the
        // Environment were both known could not be read for them yet, so it carries into the
        // pair that completes them (OI-14: a requested id wins outside the default surface);
        // otherwise the request was consumed.
        if self.requested_before_scope
            && let Some(id) = self.inputs.requested_session_id.clone()
        {
            self.choose_requested(&id, now);
        }
        self.requested_before_scope &= !self.scope_complete();
        self.reset_icons(now);
    }

    /// Both the person's uid and an Environment are known.
    fn scope_complete(&self) -> bool {
        let scope = self.inputs.scope();
        scope.person.is_some() && scope.environment.is_some()
    }

    fn command(&mut self, command: Command, now: Time) {
        // ADR 099: with a local source some commands mean something else (`local.rs`).
        let Some(command) = self.local_command(command, now) else {
            return;
        };
        match command {
            Command::RetryDefaultSession => {
                let key = self.inputs.default_combination();
                let (mut ctx, p) = self.ctx(now);
                if let Some(k) = key.as_ref() {
                    p.choice
                        .handle_with_context(&ChoiceEvent::DefaultAskedAgain(k), &mut ctx);
                }
                p.default
                    .handle_with_context(&DefaultEvent::Retry(key.as_ref()), &mut ctx);
                p.selection.handle(&SelEvent::Notice(None));
                p.env.handle_with_context(&EnvEvent::Reread, &mut ctx);
            }
            Command::RestoreDefaultSessionSelection => {
                if launched_now(&self.selection) {
                    // DEF-17: leave the launched session; the settle loop selects the default.
                    self.selection.handle(&SelEvent::Clear);
                }
            }
            Command::StartAgentSession { agent } => {
                let id = non_blank(agent.uid.as_deref())
                    .or_else(|| agent.id.filter(|n| *n > 0).map(|n| n.to_string()));
                if let Some(id) = &id {
                    let (mut ctx, p) = self.ctx(now);
                    p.env.handle_with_context(
                        &EnvEvent::NarrowToAgent(crate::intent::AgentFilter::for_agent(id)),
                        &mut ctx,
                    );
                }
                self.open(OpenKind::StartAgent, id, agent.name.clone(), now);
            }
            Command::StartAgentSessionById { agent_id, label } => {
                self.open(OpenKind::StartById, non_blank(Some(&agent_id)), label, now);
            }
            Command::OpenLatestOrStartAgentSessionById { agent_id, label } => {
                self.open(OpenKind::OpenLatest, non_blank(Some(&agent_id)), label, now);
            }
            Command::CreateAgentSession => {
                let agent = self.selected_agent();
                // adr-notes 6: the action names no label; the launch target's label stands in
                // when it is for the same Agent (never the session's or its record's names).
                let label = self
                    .inputs
                    .launch_target
                    .as_ref()
                    .filter(|t| agent.as_deref() == Some(t.agent_id.trim()))
                    .and_then(|t| t.label.clone());
                self.open(OpenKind::Create, agent, label, now);
            }
            Command::ArchiveAgentSession { session_uid } => self.remove(session_uid, true, now),
            Command::DeleteAgentSession { session_uid } => self.remove(session_uid, false, now),
            Command::UnarchiveAgentSession { session_uid } => self.restore(session_uid, now),
            Command::RefreshSessionDetail => {
                let (mut ctx, p) = self.ctx(now);
                p.hydration
                    .handle_with_context(&HydEvent::RefreshDetail, &mut ctx);
            }
            Command::RefreshActiveSessionRuntimeAccess => {
                let (mut ctx, p) = self.ctx(now);
                p.runtime.handle_with_context(&RtaEvent::Refresh, &mut ctx);
            }
            Command::RevalidateStaleRuntimeAccess => {
                let (mut ctx, p) = self.ctx(now);
                p.runtime
                    .handle_with_context(&RtaEvent::Revalidate, &mut ctx);
            }
            Command::SendMessage { text } => self.send_message(&text, now),
            Command::EnqueueMessage { text } => match self.selected_uid() {
                Some(uid) => self.enqueue(&uid, &text, now),
                // Nothing written is lost: with nothing selected the text comes back.
                None if !text.trim().is_empty() => {
                    self.io.events.push_back(Event::MessageNotSent {
                        session_uid: None,
                        text: text.trim().to_owned(),
                        reason: NO_SESSION_TEXT.to_owned(),
                        code: crate::FailureCode::NoSessionSelected,
                    });
                }
                None => {}
            },
            Command::CancelActiveSession => self.cancel_active(now),
            Command::RemoveQueuedMessage { id } => {
                if let Some(work) = self.selected_work() {
                    work.queue.remove(&id);
                }
            }
            Command::EditQueuedMessage { id } => {
                let uid = self.selected_uid();
                let text = self.selected_work().and_then(|w| w.queue.remove(&id));
                if let (Some(session_uid), Some(text)) = (uid, text) {
                    let event = Event::QueuedMessageReturned {
                        session_uid,
                        id,
                        text,
                    };
                    self.io.events.push_back(event);
                }
            }
            Command::ReorderQueuedMessage { id, to_index } => {
                if let Some(work) = self.selected_work() {
                    work.queue.reorder(&id, to_index);
                }
            }
            Command::ClearMessageQueue => {
                if let Some(work) = self.selected_work() {
                    work.queue.clear();
                }
            }
            Command::SendNextQueuedMessage => {
                // SND-22: release the hold; the first row leaves once the thread is idle.
                if let Some(work) = self.selected_work()
                    && !work.queue.rows.is_empty()
                {
                    work.queue.hold = None;
                    work.queue.armed = true;
                }
            }
            Command::SetSelectedReasoningEffortValue { value } => {
                self.edit_picker(&PickerEdit::Thinking(non_blank(value.as_deref())), now);
            }
            Command::SetSelectedProviderValue { value } => {
                self.edit_picker(&PickerEdit::Provider(non_blank(value.as_deref())), now);
            }
            Command::SetSelectedModelValue { value } => {
                self.edit_picker(&PickerEdit::Model(non_blank(value.as_deref())), now);
            }
            Command::ResolveSessionModelSelection { choice } => {
                // OI-21: with no catalog data nothing can be chosen; no creation request.
                if let Some(catalog) = self.person_catalog() {
                    // MOD-19: the one resolver settles a named level (and the ids' letter
                    // case). A choice naming no level keeps none, and `""` stays "none":
                    // the engine invents no level (MOD-11, as the reference sends the choice).
                    let r = crate::api::resolve_selection(
                        &catalog,
                        Some(&choice.provider),
                        Some(&choice.model),
                        choice.thinking.as_deref(),
                    );
                    let thinking = match choice.thinking.as_deref() {
                        Some(level) if !level.trim().is_empty() => r.thinking,
                        _ => choice.thinking.clone(),
                    };
                    let choice = match (r.provider, r.model) {
                        (Some(provider), Some(model)) if !r.model_missing => {
                            crate::api::ModelChoice {
                                provider,
                                model,
                                thinking,
                            }
                        }
                        _ => choice,
                    };
                    let (mut ctx, p) = self.ctx(now);
                    p.choice
                        .handle_with_context(&ChoiceEvent::Resolve(&choice), &mut ctx);
                }
            }
            Command::CancelSessionModelSelection => {
                let (mut ctx, p) = self.ctx(now);
                p.choice.handle_with_context(&ChoiceEvent::Cancel, &mut ctx);
            }
            Command::RequestAvailableModels => {
                let demand = self.catalog_demand();
                let (mut ctx, p) = self.ctx(now);
                let event = CatalogEvent::Request {
                    demand: demand.as_ref(),
                };
                p.catalog.handle_with_context(&event, &mut ctx);
            }
            Command::ClearThread => self.clear_thread(now),
            Command::InvalidateModelProviderCatalog => {
                let demand = self.catalog_demand();
                let (mut ctx, p) = self.ctx(now);
                let event = CatalogEvent::Invalidate {
                    demand: demand.as_ref(),
                };
                p.catalog.handle_with_context(&event, &mut ctx);
            }
            Command::FetchArchivedAgentSessions { agent_uid, limit } => {
                self.fetch_archived(agent_uid.as_deref(), limit, now);
            }
            Command::SearchAgentSessions { query, limit } => self.search(&query, limit, now),
            Command::RefreshLatestSessions => {
                let (mut ctx, p) = self.ctx(now);
                p.env.handle_with_context(&EnvEvent::Reread, &mut ctx);
            }
            Command::ClearArchivedSessions => {
                self.explore(ReadKind::Archived, &ExplorerEvent::Clear, now);
            }
            Command::RequestAgentIcons { agent_uids } => {
                self.request_agent_icons(&agent_uids, now);
            }
        }
    }

    /// One explorer read handles an event.
    fn explore(&mut self, kind: ReadKind, event: &ExplorerEvent<'_>, now: Time) {
        let Engine {
            inputs,
            io,
            memory,
            archived,
            search,
            ..
        } = self;
        let mut ctx = Ctx {
            now,
            inputs,
            io,
            memory,
        };
        let machine = match kind {
            ReadKind::Archived => archived,
            ReadKind::Search => search,
        };
        machine.handle_with_context(event, &mut ctx);
    }

    /// `fetchArchivedAgentSessions`: the Agent named, else the selected session's, else the
    /// default session's; the person's uid and an Environment are required.
    fn fetch_archived(&mut self, agent_uid: Option<&str>, limit: Option<u32>, now: Time) {
        let agent = non_blank(agent_uid)
            .or_else(|| self.selected_agent())
            .or_else(|| self.inputs.default_agent());
        let scope = self.inputs.scope();
        match (scope.environment, scope.person, agent) {
            (Some(environment_uid), Some(created_by_user_uid), Some(agent_uid)) => {
                let call = ApiCall::ListArchivedSessions {
                    environment_uid,
                    agent_uid: agent_uid.clone(),
                    created_by_user_uid,
                    limit: crate::machines::explorer::clamp_limit(limit),
                };
                let event = ExplorerEvent::Read {
                    call: &call,
                    subject: &agent_uid,
                };
                self.explore(ReadKind::Archived, &event, now);
            }
            (environment, _, agent) => {
                let message = match environment {
                    None => ApiError::no_environment().to_string(),
                    Some(_) => {
                        "The archived session list requires agent_uid and created_by_user_uid."
                            .to_owned()
                    }
                };
                let event = ExplorerEvent::Refuse {
                    message: &message,
                    subject: agent.as_deref(),
                };
                self.explore(ReadKind::Archived, &event, now);
            }
        }
    }

    /// `searchAgentSessions`: `q` trimmed; a blank query clears the search without a request.
    fn search(&mut self, query: &str, limit: Option<u32>, now: Time) {
        let Some(query) = non_blank(Some(query)) else {
            self.explore(ReadKind::Search, &ExplorerEvent::Clear, now);
            return;
        };
        let scope = self.inputs.scope();
        match (scope.environment, scope.person) {
            (Some(environment_uid), Some(created_by_user_uid)) => {
                let call = ApiCall::SearchSessions {
                    environment_uid,
                    created_by_user_uid,
                    query: query.clone(),
                    limit: crate::machines::explorer::clamp_limit(limit),
                };
                let event = ExplorerEvent::Read {
                    call: &call,
                    subject: &query,
                };
                self.explore(ReadKind::Search, &event, now);
            }
            (environment, _) => {
                let message = match environment {
                    None => ApiError::no_environment().to_string(),
                    Some(_) => {
                        "Session search requires created_by_user_uid and a query.".to_owned()
                    }
                };
                let event = ExplorerEvent::Refuse {
                    message: &message,
                    subject: Some(&query),
                };
                self.explore(ReadKind::Search, &event, now);
            }
        }
    }

    /// The Agent of the selected session: from its loaded record, else from the list.
    fn selected_agent(&self) -> Option<String> {
        let (uid, _) = selection::selected(self.selection.state())?;
        let from_detail = self
            .hydration
            .inner()
            .detail
            .value()
            .and_then(|r| r.agent_uid.clone());
        from_detail.or_else(|| {
            self.env
                .inner()
                .sessions()
                .iter()
                .find(|s| s.uid == uid)
                .and_then(|s| s.agent_uid.clone())
        })
    }

    fn open(&mut self, kind: OpenKind, agent: Option<String>, label: Option<String>, now: Time) {
        let op = OpenOp { kind, agent, label };
        let (mut ctx, p) = self.ctx(now);
        p.opening
            .handle_with_context(&OpenEvent::Start(&op), &mut ctx);
    }

    fn remove(&mut self, session_uid: String, archived: bool, now: Time) {
        if check_id("session", &session_uid).is_err() {
            self.removal_failed(archived, Some("This session has no identifier.".to_owned()));
            return;
        }
        let call = if archived {
            ApiCall::ArchiveSession {
                session_uid: session_uid.clone(),
            }
        } else {
            ApiCall::DeleteSession {
                session_uid: session_uid.clone(),
            }
        };
        let (mut ctx, _) = self.ctx(now);
        match ctx.send(Owner::Archive, call) {
            Ok(id) => {
                self.removals.insert(
                    id,
                    Removal {
                        session_uid,
                        archived,
                    },
                );
            }
            Err(e) => self.removal_failed(archived, Some(e.to_string())),
        }
    }

    /// `unarchiveAgentSession(uid)`.
    fn restore(&mut self, session_uid: String, now: Time) {
        if let Err(e) = check_id("session", &session_uid) {
            self.restore_failed(Some(e.to_string()));
            return;
        }
        let call = ApiCall::UnarchiveSession {
            session_uid: session_uid.clone(),
        };
        let (mut ctx, _) = self.ctx(now);
        match ctx.send(Owner::Unarchive, call) {
            Ok(id) => {
                self.restorations.insert(id, session_uid);
            }
            Err(e) => self.restore_failed(Some(e.to_string())),
        }
    }

    /// The unarchive answer: the restored record joins the list (OI-13: only an unarchived
    /// record of this Environment).
    fn restored(&mut self, answer: &Answer, now: Time) {
        if self.restorations.remove(&answer.id).is_none() {
            return;
        }
        let env = self.inputs.environment_uid.clone().unwrap_or_default();
        let record = answer
            .outcome
            .ok_body(&answer.call)
            .and_then(crate::api::parse_session_record)
            .and_then(|r| r.check_created_in(&env).map(|()| r));
        match record {
            Ok(record) if !record.is_archived => {
                let summary = crate::input::SessionSummary::from(&record);
                self.memory.signals.push_back(Signal::Upsert(summary));
                // The reference reloads the archived list shown after a change.
                self.explore(ReadKind::Archived, &ExplorerEvent::Reload, now);
            }
            Ok(_) => self.restore_failed(None),
            Err(e) => self.restore_failed(Some(e.to_string())),
        }
    }

    fn restore_failed(&mut self, message: Option<String>) {
        let description = message
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| "Unable to restore this session.".to_owned());
        self.io.events.push_back(Event::Notify(Notice {
            title: "Session not restored".to_owned(),
            description: Some(description),
            variant: NoticeVariant::Error,
        }));
    }

    fn removal_failed(&mut self, archived: bool, message: Option<String>) {
        if archived {
            let description =
                message.unwrap_or_else(|| "Unable to archive this session.".to_owned());
            self.io.events.push_back(Event::Notify(Notice {
                title: "Session not archived".to_owned(),
                description: Some(description),
                variant: NoticeVariant::Error,
            }));
        } else {
            self.delete_error =
                Some(message.unwrap_or_else(|| "Delete session failed.".to_owned()));
        }
    }

    /// Applies the level rules and relays signals until nothing changes.
    fn settle(&mut self, now: Time) {
        for _ in 0..MAX_SETTLE_ROUNDS {
            let before = self.change_count();
            self.evaluate(now);
            let relayed = self.relay_signals(now);
            if !relayed && self.change_count() == before {
                self.persist_queues();
                self.settled = (self.change_count(), self.own_changes);
                return;
            }
        }
        // A rule that keeps changing state is a bug; release builds stop here and stay usable.
        debug_assert!(false, "the settle loop did not reach a fixed point");
    }

    /// Counts every change a level rule may depend on: machine transitions that changed a
    /// state, the picker's values, works added and queues borrowed mutably. Nothing is cloned
    /// or compared to learn that a round changed nothing (issue 12, point 2).
    fn change_count(&self) -> ChangeCount {
        (
            self.io.transitions,
            self.selection.inner().transitions,
            self.picker.inner().values_revision,
            self.works.revision(),
        )
    }

    /// One round of the level rules, in dependency order.
    fn evaluate(&mut self, now: Time) {
        if self.inputs.source.is_some() {
            self.evaluate_local(now);
            return;
        }
        // SEL-5 to SEL-7: once per launchKey, only while visible and an Environment is active.
        let launch = self
            .inputs
            .launch_target
            .clone()
            .filter(|_| self.inputs.visible && self.inputs.environment_uid.is_some());
        if let Some(target) = launch
            && self.opened_launch_key != Some(target.launch_key)
        {
            self.opened_launch_key = Some(target.launch_key);
            let agent = non_blank(Some(&target.agent_id));
            self.open(OpenKind::Launch, agent, target.label.clone(), now);
        }
        let key = self.inputs.default_key();
        let combination = self.inputs.default_combination();
        let (mut ctx, p) = self.ctx(now);
        let launched = p.is_launched();
        let inputs = ctx.inputs;
        // HYD-12, RTA-26: the list is read while visible, and not for a launched session.
        let want_read = inputs.visible && inputs.environment_uid.is_some() && !launched;
        p.env
            .handle_with_context(&EnvEvent::Evaluate { want_read }, &mut ctx);

        let default_state = inputs.shows_default_session && !launched;
        let name = inputs
            .default_session
            .as_ref()
            .map(|d| d.name.as_str())
            .unwrap_or_default();
        p.default.handle_with_context(
            &DefaultEvent::Evaluate {
                key: combination.as_ref(),
                may_request: default_state && key.is_some(),
                name,
            },
            &mut ctx,
        );

        let list = p.env.inner().current();
        let default_uid = default_session::default_session_uid(
            key.as_ref(),
            p.default.inner(),
            p.env.inner().sessions(),
        );
        let facts = Facts {
            default_state,
            default_uid,
            implicit_allowed: !inputs.avoid_implicit,
            list: list
                .filter(|l| l.from_platform)
                .map(|l| l.sessions.as_slice()),
        };
        p.selection.handle(&SelEvent::Evaluate(&facts));
        let selected = selection::selected(p.selection.state()).map(|(uid, _)| uid);
        p.hydration.handle_with_context(
            &HydEvent::Evaluate {
                selected,
                visible: inputs.visible,
                streaming: selected.is_some_and(|uid| p.works.is_streaming(uid)),
            },
            &mut ctx,
        );
        // REQ-3: a selected session whose detail has loaded stays in the list, whatever a later
        // list read (which may not name it) says.
        let loaded = p.hydration.inner().detail.value();
        if let Some(record) = loaded.filter(|r| selected == Some(r.uid.as_str()) && !r.is_archived)
            && !p.env.inner().sessions().iter().any(|s| s.uid == record.uid)
        {
            let summary = crate::input::SessionSummary::from(record);
            p.env
                .handle_with_context(&EnvEvent::Upsert(&summary), &mut ctx);
        }
        // RTA-1, RTA-2, RTA-25: the session in view is checked, unless it is a launched session
        // before its first send.
        // RTA-2: a held send keeps following its start while the chat is hidden.
        let active = selected.filter(|uid| {
            (inputs.visible || p.works.is_held(uid))
                && (!launched_now(p.selection) || p.works.has_sent(uid))
        });
        let agent_name = active.and_then(|uid| {
            let from_detail = p
                .hydration
                .inner()
                .detail
                .value()
                .and_then(|r| r.agent_name.as_deref());
            from_detail.or_else(|| {
                p.env
                    .inner()
                    .sessions()
                    .iter()
                    .find(|s| s.uid == uid)
                    .and_then(|s| s.agent_name.as_deref())
            })
        });
        p.runtime
            .handle_with_context(&RtaEvent::Evaluate { active, agent_name }, &mut ctx);
        self.evaluate_models(now);
        self.evaluate_work(now);
    }

    /// Relays queued signals; true when there were any.
    fn relay_signals(&mut self, now: Time) -> bool {
        let mut any = false;
        let mut local_ended = None;
        let mut rekeys = Vec::new();
        while let Some(signal) = self.memory.signals.pop_front() {
            any = true;
            self.own_changes = self.own_changes.wrapping_add(1);
            let requested = self.inputs.requested_session_id.clone();
            let (mut ctx, p) = self.ctx(now);
            match signal {
                Signal::Upsert(session) => p
                    .env
                    .handle_with_context(&EnvEvent::Upsert(&session), &mut ctx),
                Signal::Opened {
                    session,
                    launched,
                    listed,
                } => {
                    if listed {
                        p.env
                            .handle_with_context(&EnvEvent::Upsert(&session), &mut ctx);
                    }
                    let origin = if launched {
                        Origin::Launched
                    } else {
                        Origin::Created
                    };
                    p.selection.handle(&SelEvent::Choose {
                        session_uid: &session.uid,
                        origin,
                    });
                    if launched {
                        // SEL-15, OI-15: ordered after the selection it follows.
                        ctx.emit(Event::RequestVisible);
                    }
                }
                Signal::DetailLoaded { session_uid } => {
                    p.selection.handle(&SelEvent::DetailLoaded {
                        session_uid: &session_uid,
                    });
                    // A record read while no turn of ours runs tells of other writers again.
                    if !p.works.is_running(&session_uid)
                        && let Some(work) = p.works.get_mut(&session_uid)
                    {
                        work.own_working = false;
                    }
                }
                Signal::DetailFailed { session_uid, error } => {
                    let facts = list_facts(p.env, ctx.inputs.avoid_implicit);
                    p.selection.handle(&SelEvent::DetailFailed {
                        session_uid: &session_uid,
                        error: &error,
                        facts: &facts,
                    });
                    // A session of another Environment never opens here: what was queued for
                    // it here is handed back (nothing written is lost; its own Environment's
                    // queue and stored copy are left alone).
                    if matches!(error, ApiError::WrongEnvironment { .. })
                        && let Some(work) = p.works.get_mut(&session_uid)
                    {
                        for row in work.queue.take_all() {
                            ctx.emit(Event::MessageNotSent {
                                session_uid: Some(session_uid.clone()),
                                text: row.text,
                                reason: error.to_string(),
                                code: crate::FailureCode::SessionInAnotherEnvironment,
                            });
                        }
                    }
                }
                Signal::Notice { session_uid, text } => {
                    let current = selection::selected(p.selection.state()).map(|s| s.0);
                    if current == Some(session_uid.as_str()) {
                        p.selection.handle(&SelEvent::Notice(Some(&text)));
                    }
                }
                Signal::Removed {
                    session_uid,
                    archived,
                } => {
                    let key = ctx.inputs.default_key();
                    let default_uid = default_session::default_session_uid(
                        key.as_ref(),
                        p.default.inner(),
                        p.env.inner().sessions(),
                    );
                    let was_default = default_uid == Some(session_uid.as_str());
                    p.env
                        .handle_with_context(&EnvEvent::Remove(&session_uid), &mut ctx);
                    // An archived or deleted default session is asked for again.
                    let forget = DefaultEvent::Forget {
                        session_uid: &session_uid,
                        was_default,
                    };
                    p.default.handle_with_context(&forget, &mut ctx);
                    let facts = list_facts(p.env, ctx.inputs.avoid_implicit);
                    p.selection.handle(&SelEvent::Removed {
                        session_uid: &session_uid,
                        facts: &facts,
                    });
                    if archived && requested.as_deref() == Some(session_uid.as_str()) {
                        // REQ-7: only the engine's own archive of the requested session.
                        ctx.emit(Event::RequestedSessionRemoved { session_uid });
                    }
                }
                Signal::Publish {
                    session_uid,
                    decision,
                } => {
                    let event = RtaEvent::Publish {
                        session: &session_uid,
                        decision: &decision,
                    };
                    p.runtime.handle_with_context(&event, &mut ctx);
                }
                Signal::ModelRequired {
                    origin,
                    agent_uid,
                    agent_label,
                    missing,
                } => {
                    let event = ChoiceEvent::Required {
                        origin: &origin,
                        agent_uid: &agent_uid,
                        agent_label: agent_label.as_deref(),
                        missing,
                    };
                    p.choice.handle_with_context(&event, &mut ctx);
                }
                Signal::DefaultCreated {
                    key,
                    session,
                    listed,
                } => {
                    let event = DefaultEvent::Created {
                        key: &key,
                        session_uid: &session.uid,
                    };
                    p.default.handle_with_context(&event, &mut ctx);
                    if listed {
                        p.env
                            .handle_with_context(&EnvEvent::Upsert(&session), &mut ctx);
                    }
                }
                Signal::DefaultFailed { key, message } => {
                    let event = DefaultEvent::Failed {
                        key: &key,
                        message: &message,
                    };
                    p.default.handle_with_context(&event, &mut ctx);
                }
                Signal::DefaultAbandoned { key } => {
                    p.default
                        .handle_with_context(&DefaultEvent::Abandoned(&key), &mut ctx);
                }
                Signal::PickerChoice {
                    session_uid,
                    choice,
                } => {
                    let event = PickerEvent::Choice {
                        session_uid: &session_uid,
                        choice: &choice,
                    };
                    p.picker.handle_with_context(&event, &mut ctx);
                }
                Signal::RecordUpdated(record) => {
                    p.hydration
                        .handle_with_context(&HydEvent::RecordUpdated(&record), &mut ctx);
                }
                Signal::HistoryApplied { session_uid } => {
                    let h = p.hydration.inner();
                    let own = p.works.get(&session_uid).is_some_and(|w| w.own_working);
                    let restored = h.history.value().map(|history| {
                        // The record's `working` of our own turn is not another run's.
                        let working = h.detail.value().is_none_or(|r| r.working && !own);
                        sending::restored_status(history, working)
                    });
                    let running = p.works.is_running(&session_uid);
                    let work = p.works.entry(&mut ctx, &session_uid);
                    work.thread_cleared = false;
                    work.run
                        .handle_with_context(&RunEvent::HistoryApplied, &mut ctx.work());
                    // adr-notes 8: a session opened from its history says how its last run
                    // went, unless a turn of ours runs now.
                    if let Some(restored) = restored.filter(|_| !running && work.restorable) {
                        work.run
                            .handle_with_context(&RunEvent::Restored(&restored), &mut ctx.work());
                    }
                }
                Signal::CancelFailed { session_uid, text } => {
                    // ADR 099: after a stop the runtime's list says whether it still works.
                    if ctx.inputs.source.is_some() {
                        local_ended = local_ended.or(Some(false));
                    }
                    if let Some(work) = p.works.get_mut(&session_uid) {
                        work.run
                            .handle_with_context(&RunEvent::CancelFailed(&text), &mut ctx.work());
                    }
                    ctx.memory
                        .signals
                        .push_back(Signal::Notice { session_uid, text });
                }
                Signal::CancelAccepted { session_uid } => {
                    if ctx.inputs.source.is_some() {
                        local_ended = local_ended.or(Some(false));
                    }
                    // OI-19: the cancel route answered 2xx: no notice is left about the run.
                    if let Some(work) = p.works.get_mut(&session_uid) {
                        work.run
                            .handle_with_context(&RunEvent::CancelAccepted, &mut ctx.work());
                    }
                    let current = selection::selected(p.selection.state()).map(|s| s.0);
                    if current == Some(session_uid.as_str()) {
                        p.selection.handle(&SelEvent::Notice(None));
                    }
                }
                Signal::Rekey { from, to } => rekeys.push((from, to)),
                Signal::RunEnded(ended) => {
                    if ctx.inputs.source.is_some() {
                        local_ended = Some(matches!(ended.end, RunEnd::Failed(_)));
                    }
                    let on_screen = selection::selected(p.selection.state())
                        .is_some_and(|(uid, _)| uid == ended.session_uid);
                    let work = p.works.entry(&mut ctx, &ended.session_uid);
                    for event in sending::run_ended(work, *ended, on_screen) {
                        ctx.emit(event);
                    }
                }
            }
        }
        crate::io::release_if_empty(&mut self.memory.signals);
        for (from, to) in rekeys {
            self.local_rekey(&from, &to, now);
        }
        if let Some(failed) = local_ended {
            self.local_turn_ended(failed, now);
        }
        any
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
        let deadline_ms = crate::view::wake_overdue_ms(self.runtime.inner().decision(&uid)?)?;
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

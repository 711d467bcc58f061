//! The `Engine`: owns the machines and relays signals between them until nothing changes.

use std::collections::BTreeMap;
use std::time::Instant;

use bytes::Bytes;
use statig::blocking::InitializedStateMachine;
use statig::prelude::*;

use crate::config::Config;
use crate::event::{Event, Notice, NoticeVariant};
use crate::input::{Command, Input};
use crate::inputs::{Inputs, non_blank};
use crate::intent::{ApiCall, Intent, RequestId, check_id};
use crate::io::{Answer, Ctx, Delivery, Io, Owner};
use crate::machines::Signal;
use crate::machines::cancel::CancelEvent;
use crate::machines::catalog::{self, CatalogEvent, CatalogStore, Demand};
use crate::machines::default_session::{self, DefaultEvent, DefaultSessionMachine};
use crate::machines::environment::{EnvEvent, Environment};
use crate::machines::hydration::{HydEvent, Hydration};
use crate::machines::model_choice::{self, ChoiceEvent, ModelChoiceMachine};
use crate::machines::opening::{self, OpenEvent, OpenKind, OpenOp, Opening};
use crate::machines::picker::{Picker, PickerEdit, PickerEvent};
use crate::machines::runtime_access::{self, RtaEvent, RuntimeAccessMachine};
use crate::machines::selection::{self, Facts, Origin, SelEvent, Selection};
use crate::machines::send::{QueuedTurn, RunEnd, RunEvent, Turn};
use crate::queue::{HoldReason, QueuedMessage, Refusal};
use crate::response::{ResponseHead, TransportFailure};
use crate::snapshot::Snapshot;
use crate::work::Works;

/// SND-25: the detail is read this often while another writer works and messages wait.
const WRITER_POLL: std::time::Duration = std::time::Duration::from_millis(10_000);

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
/// use std::time::Instant;
/// use engine_core::{Config, Engine, Input, Intent, ApiCall};
///
/// let now = Instant::now();
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
    start: Instant,
    last_now: Instant,
    inputs: Inputs,
    io: Io,
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
    page_hidden_since: Option<Instant>,
    /// The launchKey last opened (SEL-7).
    opened_launch_key: Option<u64>,
    /// The requested id was set while the person or the Environment was still unknown: it carries
    /// into the pair that completes them.
    requested_before_scope: bool,
    removals: BTreeMap<RequestId, Removal>,
    /// A delete failure, shown as `latestSessionsError` (the reference's choice).
    delete_error: Option<String>,
    /// Each session's run, cancel and queue.
    works: Works,
    /// The session selected at the last settle: leaving it holds its waiting queue (OI-20).
    last_selected: Option<String>,
    /// The trace of every input, when recording (opt-in, [`Engine::new_recording`]).
    recorder: Option<crate::trace::TraceRecorder>,
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
    /// Builds an engine at `now` (its time origin).
    pub fn new(config: Config, now: Instant) -> Engine {
        let inputs = Inputs::default();
        let mut io = Io::new(&config, now);
        let mut ctx = Ctx {
            now,
            inputs: &inputs,
            io: &mut io,
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
        let mut engine = Engine {
            start: now,
            last_now: now,
            inputs,
            io,
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
            delete_error: None,
            works: Works::default(),
            last_selected: None,
            recorder: None,
        };
        engine.scope_changed(now);
        engine.settle(now);
        engine
    }

    /// An engine that records every input it is fed as a trace (`spec-tests/TRACES.md`), with
    /// secrets redacted; read it with [`Engine::trace`]. Replaying the trace gives the same
    /// intents, events and snapshots.
    pub fn new_recording(config: Config, now: Instant) -> Engine {
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

    /// Milliseconds since the engine's start, as of the last input.
    pub fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.last_now.duration_since(self.start).as_millis()).unwrap_or(u64::MAX)
    }

    fn tick(&mut self, now: Instant) -> Instant {
        // Time is monotonic: an earlier `now` is read as the last one.
        if now > self.last_now {
            self.last_now = now;
        }
        self.last_now
    }

    /// A host input or command.
    pub fn handle_input(&mut self, input: Input, now: Instant) {
        if let Some(r) = self.recorder.as_mut() {
            r.input(&input, now);
        }
        let now = self.tick(now);
        self.apply(input, now);
        self.settle(now);
    }

    /// The head of an answer to request `id`. Unknown ids are ignored.
    pub fn handle_response(&mut self, id: RequestId, head: ResponseHead, now: Instant) {
        if let Some(r) = self.recorder.as_mut() {
            r.head(id, &head, now);
        }
        let now = self.tick(now);
        let answer = self.io.on_head(id, head);
        self.finished(answer, now);
    }

    /// A piece of the body of request `id`, in any chunking.
    pub fn handle_body_chunk(&mut self, id: RequestId, chunk: Bytes, now: Instant) {
        if let Some(r) = self.recorder.as_mut() {
            r.chunk(id, &chunk, now);
        }
        let now = self.tick(now);
        let answer = self.io.on_chunk(id, &chunk);
        self.finished(answer, now);
    }

    /// The end of the body of request `id`.
    pub fn handle_body_end(&mut self, id: RequestId, now: Instant) {
        if let Some(r) = self.recorder.as_mut() {
            r.end(id, now);
        }
        let now = self.tick(now);
        let answer = self.io.on_end(id);
        self.finished(answer, now);
    }

    /// Request `id` failed below HTTP (no answer, or a broken body).
    pub fn handle_failure(&mut self, id: RequestId, failure: TransportFailure, now: Instant) {
        if let Some(r) = self.recorder.as_mut() {
            r.failure(id, &failure, now);
        }
        let now = self.tick(now);
        let answer = self.io.on_failure(id, &failure);
        self.finished(answer, now);
    }

    /// Hands a finished request, or a piece of a streamed answer, to its owner and settles.
    fn finished(&mut self, delivery: Option<Delivery>, now: Instant) {
        match delivery {
            Some(Delivery::Finished(answer)) => self.route(&answer, now),
            // Only message requests stream (BodyMode::Streamed).
            Some(Delivery::Stream(piece)) if piece.owner == Owner::Send => {
                let (mut ctx, p) = self.ctx(now);
                p.works.each_run(&mut ctx, &RunEvent::Piece(&piece));
            }
            Some(Delivery::Stream(_)) => {}
            None => return,
        }
        self.settle(now);
    }

    /// Time has reached a deadline of [`Engine::poll_timeout`]. Early or repeated calls are harmless.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(r) = self.recorder.as_mut() {
            r.timeout(now);
        }
        let now = self.tick(now);
        self.settle(now);
    }

    /// The next piece of work for the shell.
    pub fn poll_intent(&mut self) -> Option<Intent> {
        let intent = self.io.outbox.pop_front();
        if let (Some(r), Some(i)) = (self.recorder.as_mut(), intent.as_ref()) {
            r.intent(i);
        }
        intent
    }

    /// The next edge-triggered fact for the host.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.io.events.pop_front()
    }

    /// When [`Engine::handle_timeout`] should next be called; `None` when no timer runs. The
    /// timers are runtime access's: the next poll (never while the page is hidden) and the
    /// confirmation limit. After a drain it always lies after the last `now`.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let page_hidden = self.inputs.page_hidden;
        let runtime =
            runtime_access::deadline(self.runtime.inner(), self.runtime.state(), page_hidden);
        let catalog = catalog::deadline(self.catalog.state());
        [runtime, catalog, self.works.deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Answer parts dropped because their request was not in flight (aborted, finished or never
    /// issued), a repeated head included. For diagnostics.
    pub fn ignored_answers(&self) -> u64 {
        self.io.ignored_answers
    }

    fn ctx(&mut self, now: Instant) -> (Ctx<'_>, Parts<'_>) {
        let Engine {
            inputs,
            io,
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
            Ctx { now, inputs, io },
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

    fn apply(&mut self, input: Input, now: Instant) {
        match input {
            Input::Person(person) => {
                let token_changed = person.token != self.inputs.person.token;
                let before = self.inputs.scope();
                self.inputs.person = person;
                if self.inputs.scope() != before {
                    self.scope_changed(now);
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
            Input::IsVisible(v) => self.inputs.visible = v,
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
                    if let Some(id) = id {
                        self.choose_requested(&id, now);
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
            Input::ViewContext(v) => self.inputs.view_context = v,
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
                if let Some(session) = session.filter(|s| self.works.queue_loads.contains(s)) {
                    let (mut ctx, p) = self.ctx(now);
                    let work = p.works.entry(&mut ctx, &session);
                    work.queue.restore(stored);
                    // What storage holds is what we hold now, until it changes.
                    let rows = work.queue.rows.iter().cloned().collect();
                    p.works.persisted.insert(session, rows);
                }
            }
            Input::Command(c) => self.command(c, now),
        }
    }

    fn choose_requested(&mut self, id: &str, now: Instant) {
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
                self.io
                    .signals
                    .push_back(Signal::DetailFailed { session_uid, error });
            }
        }
    }

    /// ENV-1 to ENV-4: a new person or Environment.
    fn scope_changed(&mut self, now: Instant) {
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
        p.works.each_cancel(&mut ctx, &CancelEvent::Reset);
        p.works.switch_scope(ctx.inputs.scope());
        p.choice.handle_with_context(&ChoiceEvent::Reset, &mut ctx);
        p.picker.handle_with_context(&PickerEvent::Reset, &mut ctx);
        for id in std::mem::take(&mut self.removals).into_keys() {
            self.io.abort(id);
        }
        self.delete_error = None;
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
    }

    /// Both the person's uid and an Environment are known.
    fn scope_complete(&self) -> bool {
        let scope = self.inputs.scope();
        scope.person.is_some() && scope.environment.is_some()
    }

    fn command(&mut self, command: Command, now: Instant) {
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
                let label = self.selected_uid().and_then(|u| self.agent_name_of(&u));
                self.open(OpenKind::Create, agent, label, now);
            }
            Command::ArchiveAgentSession { session_uid } => self.remove(session_uid, true, now),
            Command::DeleteAgentSession { session_uid } => self.remove(session_uid, false, now),
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
                        reason: "Choose or start a session before writing.".to_owned(),
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
                    // MOD-19: the one resolver settles the level (and the ids' letter case).
                    let r = crate::api::resolve_selection(
                        &catalog,
                        Some(&choice.provider),
                        Some(&choice.model),
                        choice.thinking.as_deref(),
                    );
                    let choice = match (r.provider, r.model) {
                        (Some(provider), Some(model)) if !r.model_missing => {
                            crate::api::ModelChoice {
                                provider,
                                model,
                                thinking: r.thinking,
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
            Command::InvalidateModelProviderCatalog => {
                let demand = self.catalog_demand();
                let (mut ctx, p) = self.ctx(now);
                let event = CatalogEvent::Invalidate {
                    demand: demand.as_ref(),
                };
                p.catalog.handle_with_context(&event, &mut ctx);
            }
        }
    }

    /// The person's catalog, when one is held (OI-10: older data stays in use).
    pub(crate) fn person_catalog(&self) -> Option<std::sync::Arc<crate::api::Catalog>> {
        let person = self.inputs.scope().person?;
        self.catalog.inner().catalog(&person).cloned()
    }

    /// The catalog is wanted (the chat visible, or a model choice pending), with what makes a
    /// new demand (CAT-2, CAT-4, CAT-6, MOD-8).
    pub(crate) fn catalog_demand(&self) -> Option<Demand> {
        let person = self.inputs.scope().person?;
        let choice_pending = model_choice::pending(self.choice.state()).is_some();
        (self.inputs.visible || choice_pending).then(|| Demand {
            person,
            environment: self.inputs.environment_uid.clone(),
            selected: self.selected_uid(),
            choice_pending,
        })
    }

    /// A person's picker change: PATCHed on a ready session (CAT-15), never while a model choice
    /// waits (MOD-9).
    fn edit_picker(&mut self, edit: &PickerEdit, now: Instant) {
        let ready =
            crate::view::current_readiness(self).status == crate::snapshot::ReadinessStatus::Ready;
        let catalog = self.person_catalog();
        let choosing = model_choice::pending(self.choice.state()).is_some();
        let (mut ctx, p) = self.ctx(now);
        let record = p.hydration.inner().detail.value().filter(|_| ready);
        let event = PickerEvent::Edit {
            edit,
            ready_session: record,
            catalog: catalog.as_deref(),
            choosing,
        };
        p.picker.handle_with_context(&event, &mut ctx);
    }

    /// `sessionModelLastUsed`: the listed sessions' models, most recent first, without repeats.
    pub(crate) fn session_model_last_used(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for s in self.env.inner().sessions() {
            if let (Some(p), Some(m)) = (
                non_blank(s.llm_provider.as_deref()),
                non_blank(s.llm_model.as_deref()),
            ) && !out.iter().any(|(op, om)| *op == p && *om == m)
            {
                out.push((p, m));
            }
        }
        out
    }

    fn selected_uid(&self) -> Option<String> {
        selection::selected(self.selection.state()).map(|(uid, _)| uid.to_owned())
    }

    fn selected_work(&mut self) -> Option<&mut crate::work::Work> {
        let uid = self.selected_uid()?;
        self.works.get_mut(&uid)
    }

    /// SND-18, OI-20: the Agent works on the session: a local run, or another writer that its
    /// loaded record reports.
    fn agent_working(&self, session_uid: &str) -> bool {
        self.works.is_running(session_uid) || self.writer_working(session_uid)
    }

    /// The loaded record of this (selected) session reports `working`.
    /// A `working` flag read while this engine's own turn ran, or before a detail read that
    /// followed it, is that turn's, not another writer's (SND-25).
    fn writer_working(&self, session_uid: &str) -> bool {
        let h = self.hydration.inner();
        let own = self.works.get(session_uid).is_some_and(|w| w.own_working);
        !own && h.session_uid.as_deref() == Some(session_uid)
            && h.detail.value().is_some_and(|r| r.working)
    }

    /// The composer's submit.
    fn send_message(&mut self, text: &str, now: Instant) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let Some(uid) = self.selected_uid() else {
            self.io.events.push_back(Event::MessageNotSent {
                session_uid: None,
                text: text.to_owned(),
                reason: "Choose or start a session before writing.".to_owned(),
            });
            return;
        };
        if self.agent_working(&uid) {
            self.enqueue(&uid, text, now);
        } else {
            self.start_turn(&uid, text, None, now);
        }
    }

    /// SND-24: add to the session's queue; a held queue holds the new row too.
    fn enqueue(&mut self, session_uid: &str, text: &str, now: Instant) {
        let row = QueuedMessage {
            id: format!("queued-{}", self.io.rng.uuid_v4()),
            text: text.trim().to_owned(),
            created_at: crate::timestamp::iso_from_unix_ms(self.io.wall_ms(now)),
        };
        let text = row.text.clone();
        let (mut ctx, p) = self.ctx(now);
        let work = p.works.entry(&mut ctx, session_uid);
        if work.queue.push(row) == Err(Refusal::Full) {
            ctx.emit(Event::Notify(Notice {
                title: "The queue is full".to_owned(),
                description: Some("Send or remove a message first.".to_owned()),
                variant: NoticeVariant::Info,
            }));
            // Nothing written is lost: the text comes back to the host.
            ctx.emit(Event::MessageNotSent {
                session_uid: Some(session_uid.to_owned()),
                text,
                reason: "The queue is full. Send or remove a message first.".to_owned(),
            });
        }
    }

    /// A turn for the selected session, through the send guard (SND-2).
    fn start_turn(
        &mut self,
        session_uid: &str,
        text: &str,
        queued: Option<QueuedTurn>,
        now: Instant,
    ) {
        let readiness = crate::view::current_readiness(self);
        let detail_loaded = self.hydration.inner().session_uid.as_deref() == Some(session_uid)
            && self.hydration.inner().detail.value().is_some();
        let guard = if readiness.status != crate::snapshot::ReadinessStatus::Ready {
            Some(readiness.error.unwrap_or_else(|| {
                "The session is still loading. Wait for it to finish before sending.".to_owned()
            }))
        } else if !detail_loaded {
            Some("The session details are not loaded yet. Wait for them before sending.".to_owned())
        } else {
            None
        };
        let turn = Turn {
            text: text.to_owned(),
            user_message_id: format!("user-{}", self.io.rng.uuid_v4()),
            answer_id: format!("answer-{}", self.io.rng.uuid_v4()),
            queued,
            auth_retried: false,
            hold_deadline_ms: None,
        };
        let facts = self.body_facts();
        let agent_name = self.agent_name_of(session_uid);
        let (mut ctx, p) = self.ctx(now);
        let work = p.works.entry(&mut ctx, session_uid);
        if guard.is_none() {
            work.own_working = true;
        }
        let event = RunEvent::Facts {
            facts: &facts,
            agent_name: agent_name.as_deref(),
        };
        work.run.handle_with_context(&event, &mut ctx);
        match &guard {
            Some(text) => work
                .run
                .handle_with_context(&RunEvent::Refuse { turn: &turn, text }, &mut ctx),
            None => work
                .run
                .handle_with_context(&RunEvent::Start(&turn), &mut ctx),
        }
    }

    /// What the selected session's next turn body is made of (OI-18).
    fn body_facts(&self) -> crate::api::chat::BodyFacts {
        let h = self.hydration.inner();
        crate::api::chat::BodyFacts {
            record: h.detail.value().map(|r| r.raw.clone()),
            thread_id: h.history.value().and_then(|hist| hist.thread_id.clone()),
            user_uid: non_blank(self.inputs.person.user_uid.as_deref()),
            context: self.inputs.view_context.clone(),
            reasoning_effort: self.picker.inner().composer_values().thinking.clone(),
        }
    }

    /// The Agent name of a session, for notices (OI-6).
    fn agent_name_of(&self, session_uid: &str) -> Option<String> {
        let h = self.hydration.inner();
        let from_detail = h
            .detail
            .value()
            .filter(|r| r.uid == session_uid)
            .and_then(|r| r.agent_name.clone());
        from_detail.or_else(|| {
            self.env
                .inner()
                .sessions()
                .iter()
                .find(|s| s.uid == session_uid)
                .and_then(|s| s.agent_name.clone())
        })
    }

    /// `cancelActiveSession()` (SND-16, SND-17, OI-19).
    fn cancel_active(&mut self, now: Instant) {
        let uid = self.selected_uid();
        let running = uid.as_deref().is_some_and(|u| self.agent_working(u));
        let Some(uid) = uid.filter(|_| running) else {
            self.io.events.push_back(Event::Notify(Notice {
                title: "Unable to stop session".to_owned(),
                description: Some("There is no running work to stop.".to_owned()),
                variant: NoticeVariant::Error,
            }));
            return;
        };
        // The cancel names the thread of the run it stops (OI-19).
        let facts = self
            .works
            .get(&uid)
            .map(|w| w.run.inner().facts().clone())
            .filter(|f| f.record.is_some())
            .unwrap_or_else(|| self.body_facts());
        let (mut ctx, p) = self.ctx(now);
        let decision = p.runtime.inner().decision(&uid);
        let cached = decision.and_then(|d| d.endpoint.clone());
        let work = p.works.entry(&mut ctx, &uid);
        // SND-16 first: the local run stops in this step; then the cancel request (SND-17).
        work.run
            .handle_with_context(&RunEvent::Stop { decision }, &mut ctx);
        let start = CancelEvent::Start {
            cached: cached.as_ref(),
            facts: &facts,
        };
        work.cancel.handle_with_context(&start, &mut ctx);
    }

    /// ADR 087: each queue change is written to the storage port; an emptied queue's copy is
    /// removed.
    fn persist_queues(&mut self) {
        let mut writes = Vec::new();
        for (uid, work) in self.works.iter() {
            let rows: Vec<_> = work.queue.rows.iter().cloned().collect();
            let stored = self.works.persisted.get(uid);
            if stored.map_or(rows.is_empty(), |s| *s == rows) {
                continue;
            }
            writes.push((uid.clone(), rows));
        }
        for (uid, rows) in writes {
            let key = crate::queue::storage_key(&uid);
            let request = if rows.is_empty() {
                crate::intent::StorageRequest::RemoveQueue { key }
            } else {
                crate::intent::StorageRequest::SaveQueue {
                    key,
                    rows: rows.clone(),
                }
            };
            self.io.outbox.push_back(Intent::Storage(request));
            self.works.persisted.insert(uid, rows);
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

    fn open(&mut self, kind: OpenKind, agent: Option<String>, label: Option<String>, now: Instant) {
        let op = OpenOp { kind, agent, label };
        let (mut ctx, p) = self.ctx(now);
        p.opening
            .handle_with_context(&OpenEvent::Start(&op), &mut ctx);
    }

    fn remove(&mut self, session_uid: String, archived: bool, now: Instant) {
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

    /// Hands a finished request to its owner.
    fn route(&mut self, answer: &Answer, now: Instant) {
        match answer.owner {
            Owner::Archive => {
                let Some(removal) = self.removals.remove(&answer.id) else {
                    return;
                };
                match answer.outcome.ok_body(&answer.call) {
                    Ok(_) => {
                        if !removal.archived {
                            self.delete_error = None;
                        }
                        self.io.signals.push_back(Signal::Removed {
                            session_uid: removal.session_uid,
                            archived: removal.archived,
                        });
                    }
                    Err(e) => self.removal_failed(removal.archived, Some(e.to_string())),
                }
            }
            owner => {
                let (mut ctx, p) = self.ctx(now);
                match owner {
                    Owner::LatestSessions => p
                        .env
                        .handle_with_context(&EnvEvent::Answer(answer), &mut ctx),
                    Owner::DefaultSession => {
                        p.default
                            .handle_with_context(&DefaultEvent::Answer(answer), &mut ctx);
                    }
                    Owner::Opening => p
                        .opening
                        .handle_with_context(&OpenEvent::Answer(answer), &mut ctx),
                    Owner::Hydration => p
                        .hydration
                        .handle_with_context(&HydEvent::Answer(answer), &mut ctx),
                    Owner::RuntimeAccess => {
                        p.runtime
                            .handle_with_context(&RtaEvent::Answer(answer), &mut ctx);
                    }
                    Owner::Send => p.works.each_run(&mut ctx, &RunEvent::Answer(answer)),
                    Owner::Catalog => p
                        .catalog
                        .handle_with_context(&CatalogEvent::Answer(answer), &mut ctx),
                    Owner::ModelChoice => p
                        .choice
                        .handle_with_context(&ChoiceEvent::Answer(answer), &mut ctx),
                    Owner::Picker => p
                        .picker
                        .handle_with_context(&PickerEvent::Answer(answer), &mut ctx),
                    Owner::Cancel => p.works.each_cancel(&mut ctx, &CancelEvent::Answer(answer)),
                    // Finished above, before the context was borrowed.
                    Owner::Archive => {}
                }
            }
        }
    }

    /// Applies the level rules and relays signals until nothing changes.
    fn settle(&mut self, now: Instant) {
        for _ in 0..MAX_SETTLE_ROUNDS {
            let before = self.fingerprint();
            self.evaluate(now);
            let relayed = self.relay_signals(now);
            if !relayed && self.fingerprint() == before {
                self.persist_queues();
                return;
            }
        }
        // A rule that keeps changing state is a bug; release builds stop here and stay usable.
        debug_assert!(false, "the settle loop did not reach a fixed point");
    }

    fn fingerprint(&self) -> Fingerprint {
        (
            self.env.state().clone(),
            self.default.state().clone(),
            self.opening.state().clone(),
            self.selection.state().clone(),
            self.hydration.state().clone(),
            self.runtime.state().clone(),
            self.works.fingerprint(),
            (
                self.catalog.state().clone(),
                self.choice.state().clone(),
                self.picker.state().clone(),
                self.picker.inner().values.clone(),
            ),
        )
    }

    /// One round of the level rules, in dependency order.
    fn evaluate(&mut self, now: Instant) {
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

    /// The catalog store, a waiting model choice and the picker (CAT, MOD).
    fn evaluate_models(&mut self, now: Instant) {
        // A status flicker of the source keeps a pending choice (DEF-12): the combination, not
        // the ready key.
        let key = self.inputs.default_combination();
        let demand = self.catalog_demand();
        let catalog = self.person_catalog();
        let last_used = self.session_model_last_used();
        let person = self.inputs.scope().person;
        let (mut ctx, p) = self.ctx(now);
        p.choice.handle_with_context(
            &ChoiceEvent::Evaluate {
                default_key: key.as_ref(),
            },
            &mut ctx,
        );
        let event = CatalogEvent::Evaluate {
            person: person.as_deref(),
            demand: demand.as_ref(),
        };
        p.catalog.handle_with_context(&event, &mut ctx);
        let selected = selection::selected(p.selection.state()).map(|(uid, _)| uid);
        let record = p
            .hydration
            .inner()
            .detail
            .value()
            .filter(|r| Some(r.uid.as_str()) == selected);
        let choice = model_choice::pending(p.choice.state()).map(|r| (r.id, last_used.as_slice()));
        let event = PickerEvent::Reconcile {
            selected,
            record,
            catalog: catalog.as_deref(),
            choice,
        };
        p.picker.handle_with_context(&event, &mut ctx);
    }

    /// The runs' clocks, the body facts of the selected session, and the queue rules (OI-20).
    fn evaluate_work(&mut self, now: Instant) {
        let selected = self.selected_uid();
        // ADR 087: a session's stored queue is read once, when it first comes on screen.
        if let Some(uid) = selected.as_ref().filter(|_| self.inputs.visible)
            && self.works.queue_loads.insert(uid.clone())
        {
            let key = crate::queue::storage_key(uid);
            let request = crate::intent::StorageRequest::LoadQueue { key };
            self.io.outbox.push_back(Intent::Storage(request));
        }
        let facts = self.body_facts();
        let visible = self.inputs.visible;
        let writer = selected
            .as_deref()
            .is_some_and(|uid| self.writer_working(uid));
        let agent_name = selected.as_deref().and_then(|u| self.agent_name_of(u));
        let (mut ctx, p) = self.ctx(now);
        if let Some(uid) = selected.as_deref()
            && let Some(work) = p.works.get_mut(uid)
        {
            let event = RunEvent::Facts {
                facts: &facts,
                agent_name: agent_name.as_deref(),
            };
            work.run.handle_with_context(&event, &mut ctx);
        }
        for (uid, work) in p.works.iter_mut() {
            let decision = p.runtime.inner().decision(uid);
            work.run
                .handle_with_context(&RunEvent::Tick { decision }, &mut ctx);
            work.cancel
                .handle_with_context(&CancelEvent::Tick, &mut ctx);
            // OI-20: a drain armed for a session no longer on screen is held.
            if work.queue.armed && selected.as_deref() != Some(uid.as_str()) {
                work.queue.hold(HoldReason::Away, None);
            }
        }
        // OI-20: moving to another session while messages wait holds them.
        if self.last_selected != selected {
            if let Some(previous) = self.last_selected.take()
                && let Some(work) = self.works.get_mut(&previous)
                && work.queue.hold.is_none()
            {
                work.queue.hold(HoldReason::Away, None);
            }
            self.last_selected = selected.clone();
        }
        let Some(uid) = selected else {
            self.works.writer_watch = None;
            return;
        };
        let running = self.works.is_running(&uid);
        let waiting = self
            .works
            .get(&uid)
            .is_some_and(|w| !w.queue.rows.is_empty() && w.queue.hold.is_none());
        // SND-25: another writer works while messages wait: read the detail every 10 s; once it
        // reports idle, the queue drains as after a clean finish.
        if waiting && !running && visible && writer {
            match &self.works.writer_watch {
                Some((u, at)) if *u == uid => {
                    if now >= *at {
                        self.works.writer_watch = Some((uid.clone(), now + WRITER_POLL));
                        let (mut ctx, p) = self.ctx(now);
                        p.hydration
                            .handle_with_context(&HydEvent::RefreshDetail, &mut ctx);
                    }
                }
                _ => self.works.writer_watch = Some((uid.clone(), now + WRITER_POLL)),
            }
        } else if let Some((u, _)) = self.works.writer_watch.take()
            && u == uid
            && waiting
            && !running
            && !writer
            && let Some(work) = self.works.get_mut(&uid)
        {
            work.queue.armed = true;
        }
        // SND-19, SND-20, SND-22: the first row leaves once the thread is idle and the session is
        // no longer loading (a history read after a stream keeps it loading a moment); a session
        // in error refuses the row, which then holds the queue (`unavailable`).
        let loading = crate::view::current_readiness(self).status
            == crate::snapshot::ReadinessStatus::Loading;
        if !visible || running || writer || loading {
            return;
        }
        let next = self.works.get_mut(&uid).and_then(|w| {
            if w.queue.armed && w.queue.hold.is_none() {
                w.queue.armed = false;
                w.queue.take_first()
            } else {
                None
            }
        });
        if let Some((row, n, total)) = next {
            let text = row.text.clone();
            let queued = QueuedTurn { row, n, total };
            self.start_turn(&uid, &text, Some(queued), now);
        }
    }

    /// Relays queued signals; true when there were any.
    fn relay_signals(&mut self, now: Instant) -> bool {
        let mut any = false;
        while let Some(signal) = self.io.signals.pop_front() {
            any = true;
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
                } => {
                    let event = ChoiceEvent::Required {
                        origin: &origin,
                        agent_uid: &agent_uid,
                        agent_label: agent_label.as_deref(),
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
                    if let Some(work) = p.works.get_mut(&session_uid) {
                        work.run
                            .handle_with_context(&RunEvent::HistoryApplied, &mut ctx);
                    }
                }
                Signal::CancelFailed { session_uid, text } => {
                    if let Some(work) = p.works.get_mut(&session_uid) {
                        work.run
                            .handle_with_context(&RunEvent::CancelFailed(&text), &mut ctx);
                    }
                    ctx.io
                        .signals
                        .push_back(Signal::Notice { session_uid, text });
                }
                Signal::RunEnded {
                    session_uid,
                    end,
                    sent,
                    turn,
                    text,
                } => {
                    let on_screen = selection::selected(p.selection.state())
                        .is_some_and(|(uid, _)| uid == session_uid);
                    let work = p.works.entry(&mut ctx, &session_uid);
                    let Turn {
                        text: written,
                        queued,
                        auth_retried,
                        ..
                    } = *turn;
                    let queued_row = queued.is_some();
                    if queued_row {
                        work.queue.sending = false;
                    }
                    if !sent {
                        match queued {
                            // Nothing queued is lost: the row goes back to the front, unless its
                            // one repeat after a 401 or 403 is spent (SND-23): then it is handed
                            // back like a typed message, never requested a third time.
                            Some(q) if !auth_retried => work.queue.put_back(q.row),
                            _ => ctx.emit(Event::MessageNotSent {
                                session_uid: Some(session_uid.clone()),
                                text: written,
                                reason: text.clone().unwrap_or_default(),
                            }),
                        }
                    }
                    let q = &mut work.queue;
                    match end {
                        RunEnd::Clean => {
                            if q.rows.is_empty() {
                                q.settle_empty();
                            } else if q.hold.is_none() {
                                q.armed = true;
                            }
                        }
                        RunEnd::Failed(message) if queued_row && !sent => {
                            q.hold(HoldReason::Unavailable, Some(message));
                        }
                        RunEnd::Failed(message) => q.hold(HoldReason::Failed, Some(message)),
                        RunEnd::Stopped if on_screen => q.hold(HoldReason::Stopped, None),
                        RunEnd::Stopped => q.hold(HoldReason::Away, None),
                        RunEnd::Blocked(notice) => q.hold(HoldReason::Blocked, notice),
                    }
                }
            }
        }
        any
    }

    /// The shared states, computed once (SHR-1).
    pub fn snapshot(&self) -> Snapshot {
        crate::view::snapshot(self)
    }
}

type Fingerprint = (
    crate::machines::environment::State,
    crate::machines::default_session::State,
    crate::machines::opening::State,
    crate::machines::selection::State,
    crate::machines::hydration::State,
    crate::machines::runtime_access::State,
    crate::work::WorkPrint,
    (
        crate::machines::catalog::State,
        crate::machines::model_choice::State,
        crate::machines::picker::State,
        crate::machines::picker::PickerValues,
    ),
);

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

/// Read access for the snapshot view.
pub(crate) struct View<'a> {
    pub inputs: &'a Inputs,
    pub env: &'a InitializedStateMachine<Environment>,
    pub default: &'a InitializedStateMachine<DefaultSessionMachine>,
    pub opening: &'a InitializedStateMachine<Opening>,
    pub selection: &'a InitializedStateMachine<Selection>,
    pub hydration: &'a InitializedStateMachine<Hydration>,
    pub runtime: &'a InitializedStateMachine<RuntimeAccessMachine>,
    pub catalog: &'a InitializedStateMachine<CatalogStore>,
    pub choice: &'a InitializedStateMachine<ModelChoiceMachine>,
    pub picker: &'a InitializedStateMachine<Picker>,
    pub works: &'a Works,
    pub delete_error: Option<&'a str>,
}

impl Engine {
    pub(crate) fn view(&self) -> View<'_> {
        View {
            inputs: &self.inputs,
            env: &self.env,
            default: &self.default,
            opening: &self.opening,
            selection: &self.selection,
            hydration: &self.hydration,
            runtime: &self.runtime,
            catalog: &self.catalog,
            choice: &self.choice,
            picker: &self.picker,
            works: &self.works,
            delete_error: self.delete_error.as_deref(),
        }
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

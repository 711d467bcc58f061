//! Deterministic simulation of the whole system (issue 13, point 1), after FoundationDB's
//! simulator and TigerBeetle's VOPR: one seed drives a random host, a stateful model of the
//! platform and its Agents, and injected faults, all on virtual time, against one engine; after
//! every step the invariants are checked. A failing seed reports the step, the invariant and the
//! engine's recorded trace, which `agent-chat replay` reproduces.
//!
//! - **The platform** (`Platform`): two Environments with sessions of two Agents, histories
//!   that grow with every finished turn (and with messages another writer adds), runtime access
//!   whose wake takes time (a session's runtime is waking until a seeded instant after its first
//!   check), the catalog, and model refusals on get-or-create.
//! - **Faults**, each request one in [`Sim::fault_rate`]: latency up to 3 s, a lost answer (the
//!   shell's timeout: no answer after 30 s), 4xx and 5xx, a reset before the head or in the middle
//!   of a body, a duplicated answer, a late answer (after 10 s).
//! - **The host**: visibility, page hidden, switching sessions and Environments, default
//!   sessions (with and without an Agent), sends, stops, queue edits, model changes (the
//!   person's uid and token stay).
//! - **The Agents** answer in the platform runtime's dialect or the AI SDK's ([`Sim::dialect`],
//!   by default by the seed's parity), written by `platform-sim`: reasoning, a tool call, then
//!   "You said: {text}".
//!
//! Invariants after every step: INV-3 (the default session has the default's Agent and
//! handle), INV-4 and INV-5 (the default surface shows the default session or nothing),
//! INV-10 (an answer for what is no longer current changes nothing shown), INV-7 (a message request follows a serving confirmation of its
//! chat URL less than 15 s before), INV-8 (a message whose request failed at the network level
//! is never requested again), INV-9 (the endpoint table), INV-11 (runtime access belongs to its
//! session), no text sent twice (SND-23's one repeat after a 401/403 aside), nothing the person
//! wrote lost (each text was sent, is queued, stored, in the thread, or handed back), timers
//! never in the past, a finished answer streamed the Agent's text (in either dialect), and
//! the snapshot serializes with its queue within `QUEUE_LIMIT`. INV-12
//! (the same seed, the same outputs) is checked by running a seed twice ([`digest`]).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::time::Duration;

use bytes::Bytes;
use engine_core::api::local::LocalRoute;
use engine_core::{
    ApiCall, Command, Config, DefaultSession, Engine, Event, FailureKind, HttpRequest, Input,
    Intent, Person, RequestId, Secret, SourceStatus, StorageRequest, StreamDelta, StreamOutcome,
    Target, Time, TransportFailure,
};
use serde_json::{Value, json};

use crate::fixtures;
use platform_sim::{AnswerStyle, Dialect, answer_body};

mod local;
use local::LocalRuntime;
pub use local::{BASE as LOCAL_BASE, source as local_source};

/// One simulated run's settings.
#[derive(Debug, Clone, Copy)]
pub struct Sim {
    /// The seed: the run is a function of it.
    pub seed: u64,
    /// Steps to run (a step is a host action, a delivery, or time passing).
    pub steps: usize,
    /// One request in this many gets a fault (0: none).
    pub fault_rate: u32,
    /// The host also asks for sessions of the other Environment (one time in four), and keeps
    /// the session it asked for when it switches Environments. Off by default (the default
    /// host names a session of the new Environment, as a URL would). With it this simulator
    /// found that a session shown under the wrong Environment removed, or wrote over, the
    /// queue stored for its uid by its own Environment (issue 13, fixed: the stored copy
    /// belongs to one person and Environment, `docs/interpretations.md`, "Whose stored
    /// queue").
    pub cross_environment: bool,
    /// Every runtime-access answer reports another `runtime_presence` phase (picked from the
    /// request, not from the seed's generator, so the rest of the run is the same). INV-6:
    /// admission and the runtime notice must not change ([`presence_only`]).
    pub vary_presence: bool,
    /// The dialect the Agents answer in (issue 24): the platform runtime's or the AI SDK's,
    /// written by `platform-sim`'s writer. [`Sim::new`] takes [`dialect_of`] the seed.
    pub dialect: Dialect,
    /// The host also switches to a local Agent runtime and back (ADR 099; issue 26): a
    /// runtime that loads before it serves, is live-only one time in three and in managed mode
    /// one in ten, and re-keys new conversations (`sim/local.rs`). Off by default.
    pub local: bool,
}

/// The dialect seed `seed` runs in by default: even seeds the runtime's (RU-1), odd ones the
/// AI SDK's, so any run of consecutive seeds covers both.
pub fn dialect_of(seed: u64) -> Dialect {
    Dialect::ALL[(seed % 2) as usize]
}

impl Sim {
    /// `steps` steps of `seed` with one fault in eight requests, in [`dialect_of`] the seed.
    pub fn new(seed: u64, steps: usize) -> Sim {
        Sim {
            seed,
            steps,
            fault_rate: 8,
            cross_environment: false,
            vary_presence: false,
            dialect: dialect_of(seed),
            local: false,
        }
    }
}

/// What a run did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    /// Steps run.
    pub steps: usize,
    /// Requests the engine sent.
    pub requests: usize,
    /// Message requests (`POST {rpc_url}/api/chat`).
    pub turns: usize,
    /// Turns whose answer ended complete.
    pub answered: usize,
    /// Faults injected.
    pub faults: usize,
    /// Texts the host wrote.
    pub texts: usize,
    /// Queue edits and model changes the host made.
    pub edits: usize,
    /// Answers to requests for a session, Environment or default session no longer current,
    /// checked against INV-10.
    pub stale_answers: usize,
    /// Steps that ended with the default session shown (checked against INV-3 and INV-5).
    pub default_shown: usize,
    /// Message requests to the local runtime ([`Sim::local`]).
    pub local_turns: usize,
    /// Local turns whose answer ended complete.
    pub local_answered: usize,
    /// Local turns the runtime answered under an id of its own (the engine re-keys).
    pub local_rekeyed: usize,
    /// Faults injected into local requests.
    pub local_faults: usize,
    /// A digest of every intent and event in order (INV-12).
    pub digest: u64,
    /// A digest of composer admission and the runtime notice after every step (INV-6).
    pub admission_digest: u64,
}

impl Report {
    /// Adds `other`'s counts to these (the digest is not summed).
    pub fn add(&mut self, other: &Report) {
        self.steps += other.steps;
        self.requests += other.requests;
        self.turns += other.turns;
        self.answered += other.answered;
        self.faults += other.faults;
        self.texts += other.texts;
        self.edits += other.edits;
        self.stale_answers += other.stale_answers;
        self.default_shown += other.default_shown;
        self.local_turns += other.local_turns;
        self.local_answered += other.local_answered;
        self.local_rekeyed += other.local_rekeyed;
        self.local_faults += other.local_faults;
    }
}

/// A broken invariant: where, which, and the trace that reproduces the run.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The seed.
    pub seed: u64,
    /// The step at which it broke (from 1).
    pub step: usize,
    /// Which invariant, and what was seen.
    pub invariant: String,
    /// The engine's trace up to that step (`agent-chat replay` reads it).
    pub trace: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "seed {} broke at step {}: {}",
            self.seed, self.step, self.invariant
        )
    }
}

/// The seeded generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn one_in(&mut self, n: u32) -> bool {
        n > 0 && self.below(u64::from(n)) == 0
    }
}

const ENVS: [&str; 2] = [fixtures::ENV, fixtures::ENV2];
const AGENTS: [&str; 2] = [fixtures::AGENT, fixtures::AGENT2];
/// Sessions by Environment.
const SESSIONS: [[&str; 3]; 2] = [["s-1", "s-2", "s-3"], ["s-4", "s-5", "s-6"]];
/// How long a lost answer takes to fail (the shell's timeout).
const LOST_AFTER: Duration = Duration::from_secs(30);

/// One session of the model.
struct SessionModel {
    agent: &'static str,
    env: &'static str,
    /// `(role, text)` in order.
    history: Vec<(&'static str, String)>,
    /// When its runtime serves (`None`: not checked yet; it starts waking at its first check).
    serving_at: Option<Time>,
    /// The handle a get-or-create bound it to (INV-3).
    handle: Option<String>,
}

/// The platform and its Agents.
struct Platform {
    sessions: BTreeMap<String, SessionModel>,
    /// The chat URLs handed out, by session (INV-11).
    rpc_urls: BTreeMap<String, String>,
    /// When the engine last received a serving confirmation of each chat URL (INV-7).
    served: BTreeMap<String, Time>,
    created: u32,
    /// [`Sim::vary_presence`].
    vary_presence: bool,
    /// [`Sim::dialect`].
    dialect: Dialect,
}

impl Platform {
    fn new() -> Platform {
        let mut sessions = BTreeMap::new();
        for (e, env) in ENVS.iter().enumerate() {
            for (i, uid) in SESSIONS[e].iter().enumerate() {
                sessions.insert(
                    (*uid).to_owned(),
                    SessionModel {
                        agent: AGENTS[i % 2],
                        env,
                        history: vec![("user", format!("Hello {uid}"))],
                        serving_at: None,
                        handle: None,
                    },
                );
            }
        }
        Platform {
            sessions,
            rpc_urls: BTreeMap::new(),
            served: BTreeMap::new(),
            created: 0,
            vary_presence: false,
            dialect: Dialect::Runtime,
        }
    }

    fn record(&self, uid: &str) -> Value {
        match self.sessions.get(uid) {
            Some(s) => {
                let mut record = fixtures::record(uid, s.agent, s.env, 1);
                if let Some(handle) = &s.handle {
                    record["bound_handle"] = json!({"handle_unique_id": handle});
                }
                record
            }
            None => json!({"detail": "Not found."}),
        }
    }

    fn history(&self, uid: &str) -> Value {
        let mut h = fixtures::history(uid);
        if let Some(s) = self.sessions.get(uid) {
            h["messages"] = history_messages(uid, &s.history);
        }
        h
    }

    /// The well-behaved answer to `call` at `now`: status and body.
    fn answer(&mut self, call: &ApiCall, now: Time, rng: &mut Rng) -> (u16, Vec<u8>) {
        let json = |status: u16, v: Value| (status, v.to_string().into_bytes());
        match call {
            ApiCall::ListSessions {
                environment_uid,
                agent,
                ..
            } => {
                let rows: Vec<Value> = self
                    .sessions
                    .iter()
                    .filter(|(_, s)| s.env == environment_uid.as_str())
                    .filter(|(_, s)| match agent {
                        Some(
                            engine_core::AgentFilter::Uid(a) | engine_core::AgentFilter::Id(a),
                        ) => s.agent == a.as_str(),
                        None => true,
                    })
                    .map(|(uid, s)| fixtures::record(uid, s.agent, s.env, 1))
                    .collect();
                json(200, fixtures::page(&rows))
            }
            ApiCall::GetSessionDetail { session_uid, .. }
            | ApiCall::ArchiveSession { session_uid }
            | ApiCall::UnarchiveSession { session_uid } => {
                if self.sessions.contains_key(session_uid) {
                    json(200, self.record(session_uid))
                } else {
                    json(404, json!({"detail": "Not found."}))
                }
            }
            ApiCall::GetSessionHistory { session_uid } => json(200, self.history(session_uid)),
            ApiCall::GetSessionInsights { session_uid } => {
                json(200, fixtures::insights(session_uid))
            }
            ApiCall::StartNewSession { agent, .. } => {
                let uid = self.create(agent, fixtures::ENV);
                json(201, self.record(&uid))
            }
            ApiCall::GetOrCreateSession { agent_uid, body } => {
                if rng.one_in(6) {
                    return json(400, fixtures::model_required());
                }
                let uid = self.create(agent_uid, fixtures::ENV);
                if let Some(s) = self.sessions.get_mut(&uid) {
                    s.handle = Some(body.handle_unique_id.clone());
                }
                json(200, self.record(&uid))
            }
            ApiCall::DeleteSession { session_uid } => {
                self.sessions.remove(session_uid);
                (204, Vec::new())
            }
            ApiCall::ResolveRuntimeAccess { session_uid } => {
                let Some(s) = self.sessions.get_mut(session_uid) else {
                    return json(404, json!({"detail": "Not found."}));
                };
                let serving_at = *s.serving_at.get_or_insert_with(|| {
                    now.checked_add(Duration::from_millis(rng.below(4000)))
                        .unwrap_or(now)
                });
                let mut answer = if now < serving_at {
                    fixtures::runtime_transient("waking", Some(500))
                } else {
                    self.rpc_urls
                        .insert(session_uid.clone(), fixtures::rpc_url(session_uid));
                    fixtures::runtime_ready(session_uid)
                };
                if self.vary_presence {
                    const PHASES: [&str; 5] = [
                        "idle",
                        "failed",
                        "not_deployed",
                        "pulling_image",
                        "starting",
                    ];
                    let phase = PHASES[(now.as_millis() % PHASES.len() as u64) as usize];
                    answer["runtime_presence"] = fixtures::presence(phase);
                }
                json(200, answer)
            }
            ApiCall::ConfirmAgent { .. } => (200, br#"{"status":"ready"}"#.to_vec()),
            ApiCall::SendMessage {
                session_uid, body, ..
            } => {
                let text = body
                    .pointer("/messages/0/content/0/text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                // The simulator's echo: reasoning, a tool call, then "You said: {text}".
                let message_id = format!("m-{}", rng.below(1 << 20));
                let body = answer_body(self.dialect, &AnswerStyle::Echo, &text, &message_id);
                let answer = format!("You said: {text}");
                if let Some(s) = self.sessions.get_mut(session_uid) {
                    s.history.push(("user", text));
                    s.history.push(("assistant", answer));
                }
                (200, body)
            }
            ApiCall::CancelRun { .. } => json(200, json!({"ok": true})),
            ApiCall::ListModelProviders => json(200, fixtures::catalog()),
            ApiCall::UpdateSessionModel { session_uid, .. } => json(200, self.record(session_uid)),
            ApiCall::ListArchivedSessions { .. } | ApiCall::SearchSessions { .. } => {
                json(200, fixtures::page(&[]))
            }
            ApiCall::ListAgentIcons { .. } => json(200, json!([])),
            ApiCall::GetAgentIcon { .. } => json(404, json!({"detail": "Not found."})),
            // The simulated host sets no local source.
            ApiCall::Local { .. } => json(404, json!({"detail": "Not found."})),
        }
    }

    fn create(&mut self, agent: &str, env: &'static str) -> String {
        self.created += 1;
        let uid = format!("s-new-{}", self.created);
        let agent = if agent == fixtures::AGENT2 {
            fixtures::AGENT2
        } else {
            fixtures::AGENT
        };
        self.sessions.insert(
            uid.clone(),
            SessionModel {
                agent,
                env,
                history: Vec::new(),
                serving_at: None,
                handle: None,
            },
        );
        uid
    }
}

/// A history's messages in the P9 shape, ids `{uid}-h{n}`: the platform's and the local
/// runtime's histories alike.
fn history_messages(uid: &str, history: &[(&'static str, String)]) -> Value {
    history
        .iter()
        .enumerate()
        .map(|(i, (role, text))| {
            json!({"id": format!("{uid}-h{i}"), "role": role,
                "content": [{"type": "text", "text": text}]})
        })
        .collect()
}

/// What the simulator delivers to the engine, at a time.
enum Delivery {
    Answer {
        id: RequestId,
        status: u16,
        body: Vec<u8>,
        /// Cut after this many bytes (a reset mid-body), then a broken failure.
        cut: Option<usize>,
        /// The conversation a local runtime names in `X-Agent-Session-Uid`.
        named: Option<String>,
    },
    Failure {
        id: RequestId,
        kind: FailureKind,
    },
}

/// The text of a message request (the platform's or a local runtime's), as the body carries
/// it.
fn sent_text(call: &ApiCall) -> Option<&str> {
    match call {
        ApiCall::SendMessage { body, .. }
        | ApiCall::Local {
            route: LocalRoute::SendMessage { body, .. },
        } => body
            .pointer("/messages/0/content/0/text")
            .and_then(Value::as_str),
        _ => None,
    }
}

/// Deliveries in time order (ties in the order they were scheduled).
#[derive(Default)]
struct Scheduler {
    queue: BinaryHeap<Reverse<(Time, u64)>>,
    deliveries: BTreeMap<u64, Delivery>,
    seq: u64,
}

impl Scheduler {
    fn at(&mut self, at: Time, delivery: Delivery) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq)));
        self.deliveries.insert(self.seq, delivery);
    }

    fn next_time(&self) -> Option<Time> {
        self.queue.peek().map(|Reverse((at, _))| *at)
    }

    fn pop(&mut self) -> Option<(Time, Delivery)> {
        let Reverse((at, key)) = self.queue.pop()?;
        Some((at, self.deliveries.remove(&key)?))
    }
}

/// Everything one run holds.
struct World {
    sim: Sim,
    rng: Rng,
    /// The Environment the host last chose (index into `ENVS`).
    env: usize,
    now: Time,
    engine: Engine,
    platform: Platform,
    report: Report,
    scheduler: Scheduler,
    calls: BTreeMap<RequestId, ApiCall>,
    storage: BTreeMap<String, Value>,
    follow_ups: Vec<Input>,
    /// Texts the host wrote.
    written: BTreeSet<String>,
    /// Message requests per text.
    posts: BTreeMap<String, u32>,
    /// Texts whose message request was refused 401/403 (SND-23 may repeat it once).
    refused: BTreeSet<String>,
    /// Texts whose message request failed at the network level (INV-8).
    network_failed: BTreeSet<String>,
    /// Texts handed back to the person.
    handed_back: BTreeSet<String>,
    /// Texts the person removed from a queue (removed or cleared: not lost).
    removed: BTreeSet<String>,
    /// The host's `defaultSession` and `showsDefaultSession` as last given (INV-3 to INV-5).
    default: Option<DefaultSession>,
    shows_default: bool,
    digest: Digest,
    admission: Digest,
    /// The text streamed so far of each session's running answer.
    streamed: BTreeMap<String, String>,
    /// The local runtime ([`Sim::local`]).
    local: Option<LocalRuntime>,
    /// The host's source is the local runtime now.
    on_local: bool,
    /// The local runtime's chat check answered 2xx since the host last switched to it.
    local_checked: bool,
    /// The engine read the runtime's mode from its last health answer (a whole 2xx body): ADR
    /// 099 refuses a managed runtime only when its health says so; a failed or cut health
    /// answer names no mode.
    local_mode_read: bool,
    /// Conversation ids the engine asked the local runtime about (a new conversation's client
    /// id among them): the sweep shows each.
    local_ids: BTreeSet<String>,
}

/// Runs `sim`; `Err` with the step, the invariant and the trace when one breaks.
pub fn run(sim: Sim) -> Result<Report, Box<Failure>> {
    let config = Config::new(crate::BASE)
        .map(|c| c.with_seed(sim.seed))
        .unwrap_or_else(|_| unreachable!("the test base is valid"));
    let mut world = World {
        sim,
        rng: Rng(sim.seed),
        env: 0,
        now: Time::ZERO,
        engine: Engine::new_recording(config, Time::ZERO),
        platform: Platform {
            vary_presence: sim.vary_presence,
            dialect: sim.dialect,
            ..Platform::new()
        },
        report: Report::default(),
        scheduler: Scheduler::default(),
        calls: BTreeMap::new(),
        storage: BTreeMap::new(),
        follow_ups: Vec::new(),
        written: BTreeSet::new(),
        posts: BTreeMap::new(),
        refused: BTreeSet::new(),
        network_failed: BTreeSet::new(),
        handed_back: BTreeSet::new(),
        removed: BTreeSet::new(),
        default: None,
        shows_default: false,
        digest: Digest::default(),
        admission: Digest::default(),
        streamed: BTreeMap::new(),
        local: None,
        on_local: false,
        local_checked: false,
        local_mode_read: false,
        local_ids: BTreeSet::new(),
    };
    if sim.local {
        world.local = Some(LocalRuntime::new(&mut world.rng, sim.dialect));
    }
    let start = [
        Input::Person(Person::new(fixtures::USER.to_owned(), Secret::new("tok"))),
        Input::EnvironmentUid(Some(fixtures::ENV.to_owned())),
        Input::IsVisible(true),
        Input::PageVisible(true),
        Input::RequestedSessionId(Some("s-1".to_owned())),
    ];
    let fail = |world: &World, step: usize, invariant: String| {
        Box::new(Failure {
            seed: sim.seed,
            step,
            invariant,
            trace: world.engine.trace().unwrap_or_default().to_owned(),
        })
    };
    for input in start {
        world.engine.handle_input(input, world.now);
        world.settle().map_err(|why| fail(&world, 0, why))?;
    }
    for step in 1..=sim.steps {
        world.report.steps = step;
        world.step().map_err(|why| fail(&world, step, why))?;
    }
    // The end: no more host actions; every answer arrives and time runs on until the engine
    // is quiet. Then every text the person wrote has an outcome (`check_kept`).
    let end = sim.steps + 1;
    world.quiesce().map_err(|why| fail(&world, end, why))?;
    let shown = world.sweep().map_err(|why| fail(&world, end, why))?;
    world
        .check_kept(&shown)
        .map_err(|why| fail(&world, end, why))?;
    world.report.digest = world.digest.0;
    world.report.admission_digest = world.admission.0;
    Ok(world.report)
}

impl World {
    /// One step: a host action, a delivery, or time passing; then the engine settles.
    fn step(&mut self) -> Result<(), String> {
        let now = self.now;
        match self.rng.below(10) {
            0..=2 => {
                let input = host_action(self);
                match &input {
                    Input::DefaultSession(d) => self.default.clone_from(d),
                    Input::ShowsDefaultSession(v) => self.shows_default = *v,
                    Input::Source(source) => {
                        self.on_local = source.is_some();
                        self.local_checked = false;
                    }
                    _ => {}
                }
                let switched = match &input {
                    Input::EnvironmentUid(Some(env)) => {
                        let to = usize::from(env == ENVS[1]);
                        std::mem::replace(&mut self.env, to) != to
                    }
                    _ => false,
                };
                self.engine.handle_input(input, now);
                // A host that switches Environments names a session of the new one (its URL
                // changes with it), unless the run lets sessions cross Environments.
                if switched && !self.sim.cross_environment {
                    let uid = SESSIONS[self.env][self.rng.below(3) as usize].to_owned();
                    self.engine
                        .handle_input(Input::RequestedSessionId(Some(uid)), now);
                }
            }
            3..=7 if self.scheduler.next_time().is_some() => {
                if let Some((at, delivery)) = self.scheduler.pop() {
                    self.now = self.now.max(at);
                    self.deliver(delivery)?;
                }
            }
            _ => {
                // Time passes: to the engine's deadline, or a little.
                let to = match self.engine.poll_timeout() {
                    Some(at) if at > now && self.rng.one_in(2) => at,
                    _ => now
                        .checked_add(Duration::from_millis(self.rng.below(2000)))
                        .unwrap_or(now),
                };
                self.now = to;
                self.engine.handle_timeout(to);
                self.settle()?;
                if let Some(at) = self.engine.poll_timeout()
                    && at <= self.now
                {
                    return Err(format!(
                        "a timer in the past: {} ms at {} ms",
                        at.as_millis(),
                        self.now.as_millis()
                    ));
                }
            }
        }
        // Another writer adds to a session's history now and then.
        if self.rng.one_in(50) {
            let uid = SESSIONS[0][self.rng.below(3) as usize];
            if let Some(s) = self.platform.sessions.get_mut(uid) {
                s.history.push((
                    "user",
                    format!("from elsewhere at {}", self.now.as_millis()),
                ));
            }
        }
        self.settle()?;
        self.check_state()
    }

    /// Drains the engine (intents, events, storage answers fed back) until it is quiet; checks
    /// and answers every new request.
    fn settle(&mut self) -> Result<(), String> {
        loop {
            while let Some(intent) = self.engine.poll_intent() {
                self.digest.add(&intent);
                match intent {
                    Intent::Http { id, call, request } => {
                        if !crate::endpoints::allowed(&request) {
                            return Err(format!(
                                "INV-9: outside the endpoint table: {:?} {}{}",
                                request.method, request.base, request.path
                            ));
                        }
                        self.check_request(&call, &request)?;
                        self.calls.insert(id, call);
                        self.on_request(id);
                    }
                    Intent::Abort { .. } => {}
                    Intent::Storage(request) => self.storage(request),
                }
            }
            while let Some(event) = self.engine.poll_event() {
                self.digest.add(&event);
                self.follow_answer(&event)?;
                if let Event::MessageNotSent { text, .. }
                | Event::QueuedMessageReturned { text, .. } = event
                {
                    self.handed_back.insert(text);
                }
            }
            match self.follow_ups.pop() {
                Some(input) => self.engine.handle_input(input, self.now),
                None => return Ok(()),
            }
        }
    }

    /// Issue 24: the text of an answer that finished, as it streamed, ends with the Agent's
    /// ("You said: {text}" for a text the person posted), whichever dialect it came in. (An
    /// answer abandoned without an end, a cut or a stale one, may leave its text before it: the
    /// engine tells a host no answer's start, and the runtime's dialect has no `start` frame.)
    fn follow_answer(&mut self, event: &Event) -> Result<(), String> {
        let (session_uid, delta) = match event {
            Event::Answer { session_uid, delta } => (session_uid, delta),
            Event::RunFailed { session_uid, .. } => {
                self.streamed.remove(session_uid);
                return Ok(());
            }
            _ => return Ok(()),
        };
        match delta {
            StreamDelta::TextDelta { delta, .. } => self
                .streamed
                .entry(session_uid.clone())
                .or_default()
                .push_str(delta),
            StreamDelta::Ended { outcome, .. } => {
                let text = self.streamed.remove(session_uid).unwrap_or_default();
                let posted = text
                    .rsplit_once("You said: ")
                    .is_some_and(|(_, t)| self.posts.contains_key(t));
                if matches!(outcome, StreamOutcome::Finished { .. }) && !posted {
                    return Err(format!(
                        "a finished answer in {session_uid} streamed {text:?} ({}), not the Agent's text",
                        self.sim.dialect.name()
                    ));
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn storage(&mut self, request: StorageRequest) {
        match request {
            StorageRequest::Load { key } => {
                let sessions = self
                    .storage
                    .get(&key)
                    .and_then(|v| serde_json::from_value(v.clone()).ok());
                self.follow_ups
                    .push(Input::StoredSessionsLoaded { key, sessions });
            }
            StorageRequest::LoadQueue { key } => {
                let rows = self.storage.get(&key).cloned();
                self.follow_ups.push(Input::StoredQueueLoaded { key, rows });
            }
            StorageRequest::Save { key, sessions } => {
                let value = serde_json::to_value(sessions).unwrap_or(Value::Null);
                self.storage.insert(key, value);
            }
            StorageRequest::SaveQueue { key, rows } => {
                let value = serde_json::to_value(rows).unwrap_or(Value::Null);
                self.storage.insert(key, value);
            }
            StorageRequest::RemoveQueue { key } => {
                self.storage.remove(&key);
            }
            StorageRequest::LoadSelection { key } => {
                let session_uid = self
                    .storage
                    .get(&key)
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.follow_ups
                    .push(Input::StoredSelectionLoaded { key, session_uid });
            }
            StorageRequest::SaveSelection { key, session_uid } => {
                self.storage.insert(key, Value::String(session_uid));
            }
        }
    }

    /// INV-7, INV-8, INV-11, "no text sent twice" and, with a local source (ADR 099), "only the
    /// source's own requests", checked as a request goes out.
    fn check_request(&mut self, call: &ApiCall, request: &HttpRequest) -> Result<(), String> {
        let local = request.target == Target::Local;
        if local != self.on_local {
            let source = if self.on_local {
                "a local"
            } else {
                "the platform"
            };
            return Err(format!(
                "ADR 099: {:?} {}{} made under {source} source",
                request.method, request.base, request.path
            ));
        }
        if local {
            return self.check_local_request(call);
        }
        match call {
            ApiCall::SendMessage {
                session_uid,
                rpc_url,
                ..
            } => {
                let text = sent_text(call).unwrap_or_default();
                match self.platform.served.get(rpc_url) {
                    Some(at)
                        if self.now.saturating_duration_since(*at) < Duration::from_secs(15) => {}
                    other => {
                        return Err(format!(
                            "INV-7: a message request to {rpc_url} without a serving confirmation less than 15 s before (last {other:?}, now {} ms)",
                            self.now.as_millis()
                        ));
                    }
                }
                if self.network_failed.contains(text) {
                    return Err(format!(
                        "INV-8: {text:?} requested again after a network failure"
                    ));
                }
                let before = self.posts.get(text).copied().unwrap_or(0);
                if before >= 2 || (before == 1 && !self.refused.contains(text)) {
                    return Err(format!(
                        "{text:?} sent a second time (SND-23 allows one repeat, after a 401/403)"
                    ));
                }
                self.check_own_url(session_uid, rpc_url)
            }
            ApiCall::ConfirmAgent {
                session_uid,
                rpc_url,
            }
            | ApiCall::CancelRun {
                session_uid,
                rpc_url,
                ..
            } => self.check_own_url(session_uid, rpc_url),
            _ => Ok(()),
        }
    }

    /// A local request: a turn only once the runtime's chat check answered since the switch
    /// (ADR 099: admission), and never a text twice or after a network failure (INV-8).
    fn check_local_request(&mut self, call: &ApiCall) -> Result<(), String> {
        let ApiCall::Local { route } = call else {
            return Err(format!("a local request for {call:?}"));
        };
        match route {
            LocalRoute::History { session_uid }
            | LocalRoute::SessionModel { session_uid }
            | LocalRoute::SetSessionModel { session_uid, .. }
            | LocalRoute::Cancel { session_uid } => {
                self.local_ids.insert(session_uid.clone());
            }
            LocalRoute::SendMessage { session_uid, .. } => {
                self.local_ids.insert(session_uid.clone());
                // ADR 099: a runtime whose last health answer named managed mode is refused.
                if self.local_mode_read && self.local.as_ref().is_some_and(LocalRuntime::managed) {
                    return Err(format!(
                        "ADR 099: a local turn for {session_uid} to a runtime in managed mode"
                    ));
                }
                if !self.local_checked {
                    return Err(format!(
                        "ADR 099: a local turn for {session_uid} before the runtime's chat check answered"
                    ));
                }
                let text = sent_text(call).unwrap_or_default();
                if self.network_failed.contains(text) {
                    return Err(format!(
                        "INV-8: {text:?} requested again after a network failure"
                    ));
                }
                if self.posts.contains_key(text) {
                    return Err(format!("{text:?} sent a second time to the local runtime"));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// INV-11: a chat URL is only used for the session it was handed out for.
    fn check_own_url(&self, session_uid: &str, rpc_url: &str) -> Result<(), String> {
        match self.platform.rpc_urls.get(session_uid) {
            Some(own) if own == rpc_url => Ok(()),
            own => Err(format!(
                "INV-11: {rpc_url} used for {session_uid}, whose access gave {own:?}"
            )),
        }
    }

    /// The snapshot serializes and its queue is within its limit.
    fn check_state(&mut self) -> Result<(), String> {
        let snapshot = self.engine.snapshot();
        serde_json::to_string(&snapshot)
            .map_err(|e| format!("the snapshot does not serialize: {e}"))?;
        if snapshot.message_queue.len() > engine_core::QUEUE_LIMIT {
            return Err(format!("a queue of {} rows", snapshot.message_queue.len()));
        }
        let notice = snapshot
            .active_runtime_interaction
            .as_ref()
            .map(|i| &i.notice);
        self.admission.add(&(snapshot.composer_admission, notice));
        let current = snapshot.current_session_id.as_deref();
        if self.on_local {
            // ADR 099: under a local source `isDefaultSession` is the runtime's `default`
            // conversation being shown (`docs/local-agents.md`); the platform's default session
            // (INV-3 to INV-5) is not in view.
            if snapshot.is_default_session != (current == Some("default")) {
                return Err(format!(
                    "ADR 099: isDefaultSession {} with {current:?} shown from the local runtime",
                    snapshot.is_default_session
                ));
            }
            return Ok(());
        }
        let default_agent = self.default.as_ref().and_then(|d| d.agent_uid.as_deref());
        // INV-3: shown as the default session only with the default's handle and Agent.
        if snapshot.is_default_session {
            self.report.default_shown += 1;
            let session = current.and_then(|uid| self.platform.sessions.get(uid));
            let matches = session.zip(self.default.as_ref()).is_some_and(|(s, d)| {
                d.agent_uid.as_deref() == Some(s.agent)
                    && s.handle.as_deref() == Some(d.handle_unique_id.as_str())
            });
            if !matches {
                return Err(format!(
                    "INV-3: {current:?} shown as the default session for {:?}",
                    self.default
                ));
            }
        }
        if self.shows_default && current.is_some() && !snapshot.is_direct_launch_session {
            // INV-4: no default Agent, no session (this host launches none).
            if default_agent.is_none() {
                return Err(format!(
                    "INV-4: {current:?} selected on the default surface without a default Agent"
                ));
            }
            // INV-5: on the default surface, the default session or none.
            if !snapshot.is_default_session {
                return Err(format!(
                    "INV-5: {current:?} selected on the default surface, not the default session"
                ));
            }
        }
        Ok(())
    }

    /// Every answer arrives and time runs on (to each deadline, at most 10 virtual minutes)
    /// with no host action, until nothing is scheduled and no timer is due.
    fn quiesce(&mut self) -> Result<(), String> {
        let until = self
            .now
            .checked_add(Duration::from_secs(600))
            .unwrap_or(self.now);
        for _ in 0..10_000 {
            let next = match (self.scheduler.next_time(), self.engine.poll_timeout()) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(at) => at,
                    None => return Ok(()),
                },
            };
            if next > until {
                return Ok(());
            }
            self.now = self.now.max(next);
            if self.scheduler.next_time() == Some(next)
                && let Some((_, delivery)) = self.scheduler.pop()
            {
                self.deliver(delivery)?;
            } else {
                self.engine.handle_timeout(self.now);
            }
            self.settle()?;
            self.check_state()?;
        }
        Ok(())
    }

    /// Opens every session of every Environment in turn, the page visible, each time until
    /// the engine is quiet; returns what the snapshots showed (a turn waiting for its
    /// session's runtime, or queue rows held in memory, show only while their session is on
    /// screen).
    fn sweep(&mut self) -> Result<String, String> {
        let mut shown = String::new();
        if let Some(local) = &self.local {
            // The local runtime's conversations first, and every id the engine asked it about
            // (a new conversation's client id among them), then back to the platform.
            let mut ids: BTreeSet<String> = local.ids().into_iter().collect();
            ids.extend(self.local_ids.iter().cloned());
            let mut inputs = vec![
                Input::IsVisible(true),
                Input::PageVisible(true),
                Input::Source(Some(local::source())),
            ];
            for uid in ids {
                inputs.push(Input::RequestedSessionId(Some(uid)));
                for input in inputs.drain(..) {
                    if let Input::Source(source) = &input {
                        self.on_local = source.is_some();
                        self.local_checked = false;
                    }
                    self.engine.handle_input(input, self.now);
                    self.settle()?;
                }
                self.quiesce()?;
                shown.push_str(&serde_json::to_string(&self.engine.snapshot()).unwrap_or_default());
            }
            self.on_local = false;
            self.engine.handle_input(Input::Source(None), self.now);
            self.settle()?;
        }
        let uids: Vec<(usize, String)> = self
            .platform
            .sessions
            .iter()
            .map(|(uid, s)| (usize::from(s.env == ENVS[1]), uid.clone()))
            .collect();
        let mut inputs = vec![
            Input::IsVisible(true),
            Input::PageVisible(true),
            Input::ShowsDefaultSession(false),
        ];
        self.shows_default = false;
        for (env, uid) in uids {
            self.env = env;
            inputs.push(Input::EnvironmentUid(Some(ENVS[env].to_owned())));
            inputs.push(Input::RequestedSessionId(Some(uid)));
            for input in inputs.drain(..) {
                self.engine.handle_input(input, self.now);
                self.settle()?;
            }
            self.quiesce()?;
            shown.push_str(&serde_json::to_string(&self.engine.snapshot()).unwrap_or_default());
        }
        Ok(shown)
    }

    /// Nothing the person wrote is lost: every text was sent, is queued or shown (`shown`:
    /// the sweep's snapshots), is stored, or was handed back.
    fn check_kept(&self, shown: &str) -> Result<(), String> {
        let json = shown;
        let stored = serde_json::to_string(&self.storage).unwrap_or_default();
        for text in &self.written {
            // As a JSON string, quotes included: "text 1" is not found in "text 12".
            let quoted = Value::from(text.as_str()).to_string();
            let kept = self.posts.contains_key(text)
                || self.handed_back.contains(text)
                || self.removed.contains(text)
                || json.contains(quoted.as_str())
                || stored.contains(quoted.as_str());
            if !kept {
                return Err(format!(
                    "{text:?} was lost: never sent, not queued, stored, shown or handed back"
                ));
            }
        }
        Ok(())
    }

    /// Schedules the answer to a new request, with a fault one time in `fault_rate`.
    fn on_request(&mut self, id: RequestId) {
        self.report.requests += 1;
        let Some(call) = self.calls.get(&id).cloned() else {
            return;
        };
        let text = sent_text(&call).map(str::to_owned);
        if let Some(text) = &text {
            self.report.turns += 1;
            if matches!(call, ApiCall::Local { .. }) {
                self.report.local_turns += 1;
            }
            *self.posts.entry(text.clone()).or_insert(0) += 1;
        }
        let now = self.now;
        let at = |d: Duration| now.checked_add(d).unwrap_or(now);
        let latency = Duration::from_millis(self.rng.below(300));
        let answer = |world: &mut World, cut: Option<usize>| {
            let (status, body, named) = match (&call, world.local.as_mut()) {
                (ApiCall::Local { route }, Some(local)) => local.answer(route, now, &mut world.rng),
                _ => {
                    let (status, body) = world.platform.answer(&call, now, &mut world.rng);
                    (status, body, None)
                }
            };
            let cut = cut.map(|c| c % body.len().max(1));
            Delivery::Answer {
                id,
                status,
                body,
                cut,
                named,
            }
        };
        if !self.rng.one_in(self.sim.fault_rate) {
            let delivery = answer(self, None);
            self.scheduler.at(at(latency), delivery);
            return;
        }
        self.report.faults += 1;
        if matches!(call, ApiCall::Local { .. }) {
            self.report.local_faults += 1;
        }
        match self.rng.below(7) {
            0 => self.scheduler.at(
                at(LOST_AFTER),
                Delivery::Failure {
                    id,
                    kind: FailureKind::NoAnswer,
                },
            ),
            1 => {
                let statuses = [401, 403, 404, 429, 500, 502, 503, 504];
                let status = statuses[self.rng.below(statuses.len() as u64) as usize];
                if matches!(status, 401 | 403)
                    && let Some(text) = &text
                {
                    self.refused.insert(text.clone());
                }
                let body = br#"{"detail": "Simulated."}"#.to_vec();
                self.scheduler.at(
                    at(latency),
                    Delivery::Answer {
                        id,
                        status,
                        body,
                        cut: None,
                        named: None,
                    },
                );
            }
            2 => self.scheduler.at(
                at(latency),
                Delivery::Failure {
                    id,
                    kind: FailureKind::NoAnswer,
                },
            ),
            3 => {
                let cut = self.rng.next() as usize;
                let delivery = answer(self, Some(cut));
                self.scheduler.at(at(latency), delivery);
            }
            4 => {
                // Duplicated: the same answer twice.
                let delivery = answer(self, None);
                if let Delivery::Answer {
                    status,
                    body,
                    named,
                    ..
                } = &delivery
                {
                    let again = Delivery::Answer {
                        id,
                        status: *status,
                        body: body.clone(),
                        cut: None,
                        named: named.clone(),
                    };
                    self.scheduler.at(at(latency * 2), again);
                }
                self.scheduler.at(at(latency), delivery);
            }
            5 => {
                let delivery = answer(self, None);
                self.scheduler.at(at(Duration::from_secs(10)), delivery);
            }
            _ => {
                let delivery = answer(self, None);
                let slow = Duration::from_millis(self.rng.below(3000));
                self.scheduler.at(at(slow), delivery);
            }
        }
    }

    /// Feeds one delivery to the engine.
    fn deliver(&mut self, delivery: Delivery) -> Result<(), String> {
        let now = self.now;
        let id = match &delivery {
            Delivery::Answer { id, .. } | Delivery::Failure { id, .. } => *id,
        };
        // INV-10: an answer for what is no longer current changes nothing of what is shown.
        // (Only when no timer is due: an input at or past a deadline also runs what is due,
        // which may change what is shown for its own reasons.)
        let timer_due = self.engine.poll_timeout().is_some_and(|at| at <= now);
        let before = (!timer_due && self.is_stale(id)).then(|| self.shown_view());
        match delivery {
            Delivery::Answer {
                id,
                status,
                body,
                cut,
                named,
            } => {
                let turn = self.calls.get(&id).and_then(sent_text).map(str::to_owned);
                let content_type = if turn.is_some() && status == 200 {
                    "text/event-stream"
                } else {
                    "application/json"
                };
                if let (
                    Some(named),
                    Some(ApiCall::Local {
                        route: LocalRoute::SendMessage { session_uid, .. },
                    }),
                ) = (&named, self.calls.get(&id))
                    && named != session_uid
                {
                    self.report.local_rekeyed += 1;
                }
                let head =
                    crate::response_head(status, Some(content_type)).with_agent_session_uid(named);
                // ADR 099: the local runtime's chat check answered; a turn may follow.
                if (200..300).contains(&status)
                    && let Some(ApiCall::Local {
                        route: LocalRoute::ChatCheck,
                    }) = self.calls.get(&id)
                {
                    self.local_checked = true;
                }
                if let Some(ApiCall::Local {
                    route: LocalRoute::Health,
                }) = self.calls.get(&id)
                {
                    self.local_mode_read = (200..300).contains(&status) && cut.is_none();
                }
                // RTA-17: any answer but 502, 503 and 504 says the Agent serves (its head is
                // the answer, even when the body then breaks off).
                if !matches!(status, 502..=504)
                    && let Some(ApiCall::ConfirmAgent { rpc_url, .. }) = self.calls.get(&id)
                {
                    self.platform.served.insert(rpc_url.clone(), now);
                }
                self.engine.handle_response(id, head, now);
                let end = cut.unwrap_or(body.len()).min(body.len());
                for piece in body.get(..end).unwrap_or_default().chunks(64) {
                    self.engine
                        .handle_body_chunk(id, Bytes::copy_from_slice(piece), now);
                }
                if cut.is_some() {
                    if let Some(text) = turn {
                        self.network_failed.insert(text);
                    }
                    let failure = TransportFailure::new(
                        FailureKind::Broken,
                        "The answer was interrupted before it finished.".to_owned(),
                    );
                    self.engine.handle_failure(id, failure, now);
                } else {
                    if status == 200 && turn.is_some() {
                        self.report.answered += 1;
                        if matches!(self.calls.get(&id), Some(ApiCall::Local { .. })) {
                            self.report.local_answered += 1;
                        }
                    }
                    self.engine.handle_body_end(id, now);
                }
            }
            Delivery::Failure { id, kind } => {
                if let Some(text) = self.calls.get(&id).and_then(sent_text) {
                    self.network_failed.insert(text.to_owned());
                }
                let failure =
                    TransportFailure::new(kind, "The server closed without answering.".to_owned());
                self.engine.handle_failure(id, failure, now);
            }
        }
        if let Some(before) = before {
            self.report.stale_answers += 1;
            let after = self.shown_view();
            if after != before {
                let call = self.calls.get(&id);
                return Err(format!(
                    "INV-10: an answer to {call:?}, no longer current, changed what is shown: {before} -> {after}"
                ));
            }
        }
        Ok(())
    }

    /// INV-10: the request was made for a session, Environment or default-session combination
    /// that is no longer current.
    fn is_stale(&self, id: RequestId) -> bool {
        let snapshot = self.engine.snapshot();
        let current = snapshot.current_session_id.as_deref();
        let env = ENVS.get(self.env).copied();
        // An answer for the other source (ADR 099: the source is part of the scope).
        let local = matches!(self.calls.get(&id), Some(ApiCall::Local { .. }));
        if local != self.on_local {
            return true;
        }
        match self.calls.get(&id) {
            Some(
                ApiCall::GetSessionDetail { session_uid, .. }
                | ApiCall::GetSessionHistory { session_uid }
                | ApiCall::GetSessionInsights { session_uid }
                | ApiCall::ResolveRuntimeAccess { session_uid }
                | ApiCall::ConfirmAgent { session_uid, .. }
                | ApiCall::SendMessage { session_uid, .. }
                | ApiCall::CancelRun { session_uid, .. },
            ) => current.is_some() && current != Some(session_uid.as_str()),
            // A local conversation is who the runtime takes it for: a client's id and the id
            // the runtime re-keys it to are one conversation (a host may show the runtime's id,
            // from its list, before the turn that names it has answered).
            Some(ApiCall::Local {
                route:
                    LocalRoute::History { session_uid }
                    | LocalRoute::SessionModel { session_uid }
                    | LocalRoute::SetSessionModel { session_uid, .. }
                    | LocalRoute::SendMessage { session_uid, .. }
                    | LocalRoute::Cancel { session_uid },
            }) => current.is_some_and(|c| {
                platform_sim::runtime_uid(c) != platform_sim::runtime_uid(session_uid)
            }),
            Some(ApiCall::ListSessions {
                environment_uid, ..
            }) => env != Some(environment_uid.as_str()),
            Some(ApiCall::GetOrCreateSession { agent_uid, body }) => {
                !self.shows_default
                    || self.default.as_ref().is_none_or(|d| {
                        d.agent_uid.as_deref() != Some(agent_uid.as_str())
                            || d.handle_unique_id != body.handle_unique_id
                    })
            }
            _ => false,
        }
    }

    /// What INV-10 keeps: the selection, readiness, thread and runtime decision.
    fn shown_view(&self) -> Value {
        let s = self.engine.snapshot();
        json!({
            "selected": s.current_session_id,
            "origin": s.selection_origin,
            "readiness": s.active_session_readiness,
            "thread": s.thread,
            "interaction": s.active_runtime_interaction,
            "presence": s.active_runtime_presence,
        })
    }
}

/// A random host action. The sessions it asks for are the current Environment's, but with
/// [`Sim::cross_environment`] one in four is another Environment's.
fn host_action(world: &mut World) -> Input {
    let rng = &mut world.rng;
    let env = if world.sim.cross_environment && rng.one_in(4) {
        1 - world.env
    } else {
        world.env
    };
    let session = SESSIONS[env][rng.below(3) as usize].to_owned();
    let mut text = |report: &mut Report, what: &str| {
        report.texts += 1;
        let t = format!("{what} {}", report.texts);
        world.written.insert(t.clone());
        t
    };
    // ADR 099: switch to the local runtime or back, one action in twelve ([`Sim::local`]).
    if world.sim.local && rng.one_in(12) {
        return Input::Source((!world.on_local).then(local::source));
    }
    // Under the local source, the host asks for the runtime's conversations.
    let session = match &world.local {
        Some(local) if world.on_local => {
            let ids = local.ids();
            ids.get(rng.below(ids.len() as u64) as usize)
                .cloned()
                .unwrap_or(session)
        }
        _ => session,
    };
    let report = &mut world.report;
    match rng.below(26) {
        0 => Input::IsVisible(!rng.one_in(4)),
        1 => Input::PageVisible(!rng.one_in(4)),
        2 => Input::EnvironmentUid(Some(ENVS[rng.below(2) as usize].to_owned())),
        3..=5 => Input::RequestedSessionId(Some(session)),
        6 => Input::DefaultSession(Some(DefaultSession {
            agent_uid: Some(fixtures::AGENT.to_owned()),
            handle_unique_id: "handle-1".to_owned(),
            name: "Default".to_owned(),
            status: SourceStatus::Ready,
            unavailable_message: None,
        })),
        // INV-4: no default Agent (or no default session at all).
        7 => Input::DefaultSession(rng.one_in(2).then(|| DefaultSession {
            agent_uid: None,
            handle_unique_id: "handle-1".to_owned(),
            name: "Default".to_owned(),
            status: SourceStatus::Ready,
            unavailable_message: None,
        })),
        8..=12 => Input::Command(Command::SendMessage {
            text: text(report, "text"),
        }),
        13 | 14 => Input::Command(Command::EnqueueMessage {
            text: text(report, "queued"),
        }),
        15 => Input::Command(Command::CancelActiveSession),
        16 => Input::Command(Command::RefreshSessionDetail),
        17 => Input::Command(Command::RefreshActiveSessionRuntimeAccess),
        18 => Input::Command(Command::CreateAgentSession),
        19..=21 => {
            report.edits += 1;
            queue_edit(world)
        }
        22 | 23 => {
            report.edits += 1;
            model_change(&mut world.rng)
        }
        _ => Input::ShowsDefaultSession(rng.one_in(3)),
    }
}

/// A queue edit on the session on screen: remove, edit (its text handed back), reorder or clear
/// a row, or send the next one. Removed and cleared texts are the person's choice, not lost.
fn queue_edit(world: &mut World) -> Input {
    let rows = world.engine.snapshot().message_queue;
    let row = (!rows.is_empty())
        .then(|| rows.get(world.rng.below(rows.len() as u64) as usize))
        .flatten();
    let id = row.map_or_else(|| "queued-unknown".to_owned(), |r| r.id.clone());
    match world.rng.below(5) {
        0 => {
            if let Some(row) = row {
                world.removed.insert(row.text.clone());
            }
            Input::Command(Command::RemoveQueuedMessage { id })
        }
        1 => Input::Command(Command::EditQueuedMessage { id }),
        2 => Input::Command(Command::ReorderQueuedMessage {
            id,
            to_index: world.rng.below(4) as usize,
        }),
        3 => {
            world.removed.extend(rows.iter().map(|r| r.text.clone()));
            Input::Command(Command::ClearMessageQueue)
        }
        _ => Input::Command(Command::SendNextQueuedMessage),
    }
}

/// A model change: a provider, model or thinking level of the catalog (or one it lacks), the
/// catalog asked for again, or the session's model choice resolved.
fn model_change(rng: &mut Rng) -> Input {
    const PROVIDERS: [&str; 3] = ["acme-cloud", "team-models", "unknown"];
    const MODELS: [&str; 4] = [
        "acme-cloud::acme-large",
        "acme-cloud::acme-small",
        "team-models::tm-1",
        "unknown",
    ];
    const LEVELS: [&str; 4] = ["low", "medium", "high", "off"];
    let pick = |rng: &mut Rng, values: &[&str]| {
        values
            .get(rng.below(values.len() as u64) as usize)
            .map(|v| (*v).to_owned())
    };
    Input::Command(match rng.below(6) {
        0 => Command::SetSelectedProviderValue {
            value: pick(rng, &PROVIDERS),
        },
        1 => Command::SetSelectedModelValue {
            value: pick(rng, &MODELS),
        },
        2 => Command::SetSelectedReasoningEffortValue {
            value: pick(rng, &LEVELS).filter(|_| !rng.one_in(5)),
        },
        3 => Command::RequestAvailableModels,
        4 => Command::CancelSessionModelSelection,
        _ => Command::ResolveSessionModelSelection {
            choice: engine_core::api::ModelChoice {
                provider: "acme-cloud".to_owned(),
                model: pick(rng, &["acme-large", "acme-small"]).unwrap_or_default(),
                thinking: pick(rng, &LEVELS),
            },
        },
    })
}

/// A digest of the outputs in order (FNV-1a over their debug text), for INV-12.
#[derive(Default)]
struct Digest(u64);

impl Digest {
    fn add(&mut self, output: &impl std::fmt::Debug) {
        if self.0 == 0 {
            self.0 = 0xcbf2_9ce4_8422_2325;
        }
        for byte in format!("{output:?}").bytes() {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// INV-6: `sim` run again with every runtime-access answer reporting another
/// `runtime_presence` phase shows the same composer admission and runtime notice after every
/// step (the two digests are equal); the report of the first run.
pub fn presence_only(sim: Sim) -> Result<Report, Box<Failure>> {
    let first = run(Sim {
        vary_presence: false,
        ..sim
    })?;
    let second = run(Sim {
        vary_presence: true,
        ..sim
    })?;
    if first.admission_digest != second.admission_digest {
        return Err(Box::new(Failure {
            seed: sim.seed,
            step: first.steps,
            invariant: "INV-6: admission or the runtime notice changed with runtime_presence alone"
                .to_owned(),
            trace: String::new(),
        }));
    }
    Ok(first)
}

/// INV-12: `sim` run twice gives the same outputs (digests equal); the report of the first.
pub fn digest(sim: Sim) -> Result<Report, Box<Failure>> {
    let first = run(sim)?;
    let second = run(sim)?;
    if first != second {
        let trace = String::new();
        return Err(Box::new(Failure {
            seed: sim.seed,
            step: first.steps,
            invariant: format!("INV-12: two runs differ: {first:?} / {second:?}"),
            trace,
        }));
    }
    Ok(first)
}

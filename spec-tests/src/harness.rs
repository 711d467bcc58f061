//! The test harness: one engine, a virtual clock, a scripted platform and a transcript.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use bytes::Bytes;
use engine_core::{
    ApiCall, Command, Config, DefaultSession, Engine, Event, HttpRequest, Input, Intent,
    LaunchTarget, Notice, Person, RequestId, ResponseHead, Secret, Snapshot, StorageRequest,
    Target, Time, TransportFailure,
};
use serde_json::Value;

use crate::golden::Golden;
use crate::transcript::{call_name, event_line, intent_line, snapshot_diff};

/// The canonical reason phrase of a status (RFC 9110 and the registry's names, as the `http`
/// crate gives them), for the statuses the suite answers with; `None` for others.
pub fn canonical_reason(status: u16) -> Option<&'static str> {
    Some(match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => return None,
    })
}

/// A head as the suite's answers have it: this status and content type, and the status's
/// canonical reason phrase, as the shells give it for an HTTP/1 answer that names none of its
/// own (`ResponseHead::reason`).
pub fn response_head(status: u16, content_type: Option<&str>) -> ResponseHead {
    ResponseHead::new(status, content_type.map(str::to_owned))
        .with_reason(canonical_reason(status).map(str::to_owned))
}

/// One HTTP intent the engine emitted.
#[derive(Debug, Clone)]
pub struct Sent {
    /// Its id.
    pub id: RequestId,
    /// The typed call.
    pub call: ApiCall,
    /// The rendered request.
    pub request: HttpRequest,
    /// Virtual time it was emitted at (ms).
    pub at_ms: u64,
}

/// An answer the scripted platform gives.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A JSON answer.
    Json(u16, Value),
    /// Raw bytes with a content type.
    Raw {
        /// The status.
        status: u16,
        /// `Content-Type`.
        content_type: Option<String>,
        /// The body.
        body: Vec<u8>,
    },
    /// No answer (a transport failure).
    NoAnswer,
}

type Script = Box<dyn FnMut(&ApiCall) -> Option<(u64, Reply)>>;

/// A driven engine with a virtual clock.
pub struct Harness {
    engine: Engine,
    epoch: Time,
    now_ms: u64,
    /// Checked against the test's golden file when dropped (issue 26, oracle (a)).
    transcript: Golden,
    sent: Vec<Sent>,
    open: BTreeSet<RequestId>,
    aborted: Vec<RequestId>,
    events: Vec<Event>,
    storage: Vec<StorageRequest>,
    last: Snapshot,
    revisions: engine_core::Revisions,
    script: Option<Script>,
    deliveries: BTreeMap<(u64, u64), (RequestId, Reply)>,
    seq: u64,
}

/// Where the harness's virtual clock starts on the engine's [`Time`] line: an arbitrary
/// origin, not zero, so every test also checks that only differences of time matter.
pub const ORIGIN: Time = Time::from_micros(5_000_000);

/// The platform base every harness engine uses.
pub const BASE: &str = "https://platform.test";

impl Default for Harness {
    fn default() -> Self {
        Harness::new()
    }
}

impl Harness {
    /// An engine at time 0 with seed 1.
    pub fn new() -> Harness {
        let config = Config::new(BASE).expect("valid base").with_seed(1);
        Harness::with_config(config)
    }

    /// An engine with this configuration.
    pub fn with_config(config: Config) -> Harness {
        Harness::on(Engine::new(config, ORIGIN))
    }

    /// [`Harness::new`] on an engine that records its trace ([`Engine::new_recording`]; read
    /// it with `engine().trace()`).
    pub fn recording() -> Harness {
        let config = Config::new(BASE).expect("valid base").with_seed(1);
        Harness::on(Engine::new_recording(config, ORIGIN))
    }

    /// A harness driving `engine`, built at [`ORIGIN`].
    fn on(engine: Engine) -> Harness {
        let epoch = ORIGIN;
        let last = engine.snapshot();
        let revisions = engine.revisions();
        let mut h = Harness {
            engine,
            epoch,
            now_ms: 0,
            transcript: Golden::default(),
            sent: Vec::new(),
            open: BTreeSet::new(),
            aborted: Vec::new(),
            events: Vec::new(),
            storage: Vec::new(),
            revisions,
            last,
            script: None,
            deliveries: BTreeMap::new(),
            seq: 0,
        };
        h.step("new");
        h
    }

    /// A visible chat in the default-session state for [`crate::fixtures::AGENT`] and
    /// [`crate::fixtures::HANDLE`]; its get-or-create is open.
    pub fn default_state() -> Harness {
        let mut h = Harness::visible_in_env();
        h.default_session(Some(crate::fixtures::AGENT));
        h.shows_default(true);
        h
    }

    /// A visible chat whose list (one session, `uid`) has loaded: `uid` is selected as the
    /// newest session, its detail and history in flight.
    pub fn selected(uid: &str) -> Harness {
        Harness::new().into_selected(uid)
    }

    fn into_selected(self, uid: &str) -> Harness {
        let mut h = self.into_visible();
        h.answer_list(&[crate::fixtures::record(
            uid,
            crate::fixtures::AGENT,
            crate::fixtures::ENV,
            0,
        )]);
        assert_eq!(h.current().as_deref(), Some(uid));
        h
    }

    /// [`Harness::selected`] with detail, history and insights loaded: readiness is ready.
    pub fn ready(uid: &str) -> Harness {
        Harness::new().into_ready(uid)
    }

    fn into_ready(self, uid: &str) -> Harness {
        let mut h = self.into_selected(uid);
        h.hydrate(uid, crate::fixtures::AGENT);
        let id = h.insights_request(uid);
        h.reply(id, 200, crate::fixtures::insights(uid));
        assert_eq!(h.readiness(), engine_core::ReadinessStatus::Ready);
        h
    }

    /// `activeSessionReadiness.status`.
    pub fn readiness(&self) -> engine_core::ReadinessStatus {
        self.engine.snapshot().active_session_readiness.status
    }

    /// A visible chat for [`crate::fixtures::USER`] in [`crate::fixtures::ENV`].
    pub fn visible_in_env() -> Harness {
        Harness::new().into_visible()
    }

    fn into_visible(self) -> Harness {
        let mut h = self;
        h.person(crate::fixtures::USER);
        h.env(Some(crate::fixtures::ENV));
        h.visible(true);
        h
    }

    fn at(&self) -> Time {
        self.epoch + Duration::from_millis(self.now_ms)
    }

    /// The engine, for direct calls.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The engine and its current time, handed over: the harness's own records (transcript,
    /// last snapshot, requests seen) are dropped, so what is left is the engine alone (heap
    /// measurements, benches).
    pub fn into_engine(self) -> (Engine, Time) {
        let now = self.at();
        (self.engine, now)
    }

    /// Current virtual time in ms.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// Installs a scripted platform: for every new request it returns `Some((latency_ms, reply))`
    /// to answer it automatically, or `None` to leave it for the test.
    pub fn script(&mut self, script: impl FnMut(&ApiCall) -> Option<(u64, Reply)> + 'static) {
        self.script = Some(Box::new(script));
    }

    /// Drains intents and events after a mutation and records the step.
    fn step(&mut self, label: &str) {
        let mut lines = vec![format!("+{:>6} {label}", self.now_ms)];
        while let Some(intent) = self.engine.poll_intent() {
            lines.push(format!("    {}", intent_line(&intent)));
            match intent {
                Intent::Http { id, call, request } => {
                    self.open.insert(id);
                    if let Some(script) = self.script.as_mut()
                        && let Some((latency, reply)) = script(&call)
                    {
                        self.seq += 1;
                        self.deliveries
                            .insert((self.now_ms + latency, self.seq), (id, reply));
                    }
                    self.sent.push(Sent {
                        id,
                        call,
                        request,
                        at_ms: self.now_ms,
                    });
                }
                Intent::Abort { id } => {
                    self.open.remove(&id);
                    self.aborted.push(id);
                }
                Intent::Storage(s) => self.storage.push(s),
            }
        }
        while let Some(event) = self.engine.poll_event() {
            lines.push(format!("    {}", event_line(&event)));
            self.events.push(event);
        }
        let now = self.engine.snapshot();
        // Issue 25 point 3: `sendReadiness` is ready exactly when the composer admits.
        assert_eq!(
            now.send_readiness.is_ready(),
            now.composer_admission,
            "sendReadiness {:?} disagrees with composerAdmission",
            now.send_readiness
        );
        // RU-38: `canSend` only when a submit starts a turn now (the composer admits, the Agent
        // does not work); `queues` only while it works; never both.
        let c = &now.composer_state;
        assert!(
            !c.can_send || (now.composer_admission && !now.is_agent_working),
            "composerState {c:?} sends where the engine would not"
        );
        assert!(
            !c.queues || now.is_agent_working,
            "composerState {c:?} queues while the Agent does not work"
        );
        for d in snapshot_diff(&self.last, &now) {
            lines.push(format!("    = {d}"));
        }
        if let Some(t) = self.engine.poll_timeout() {
            assert!(
                t > self.at(),
                "poll_timeout lies at or before now: busy loop"
            );
        }
        let revisions = self.engine.revisions();
        crate::follow::check(
            &self.engine,
            (&self.last, &self.revisions),
            (&now, &revisions),
        );
        self.revisions = revisions;
        self.last = now;
        self.transcript.0.push(lines.join("\n"));
    }

    /// Feeds a host input.
    pub fn input(&mut self, input: Input) -> &mut Self {
        let label = format!(
            "input {}",
            serde_json::to_string(&input).unwrap_or_default()
        );
        self.engine.handle_input(input, self.at());
        self.step(&label);
        self
    }

    /// Calls an action.
    pub fn command(&mut self, command: Command) -> &mut Self {
        self.input(Input::Command(command))
    }

    /// Sets the person (with a token).
    pub fn person(&mut self, uid: &str) -> &mut Self {
        self.input(Input::Person(Person::new(
            uid.to_owned(),
            Secret::new("platform-token-secret"),
        )))
    }

    /// Sets `environmentUid`.
    pub fn env(&mut self, env: Option<&str>) -> &mut Self {
        self.input(Input::EnvironmentUid(env.map(str::to_owned)))
    }

    /// Sets `isVisible`.
    pub fn visible(&mut self, v: bool) -> &mut Self {
        self.input(Input::IsVisible(v))
    }

    /// Sets `requestedSessionId`.
    pub fn requested(&mut self, id: Option<&str>) -> &mut Self {
        self.input(Input::RequestedSessionId(id.map(str::to_owned)))
    }

    /// Sets `defaultSession` for `agent` with the default handle and name, status ready.
    pub fn default_session(&mut self, agent: Option<&str>) -> &mut Self {
        self.input(Input::DefaultSession(Some(DefaultSession {
            agent_uid: agent.map(str::to_owned),
            handle_unique_id: crate::fixtures::HANDLE.to_owned(),
            name: "Ledger chat".to_owned(),
            status: Default::default(),
            unavailable_message: None,
        })))
    }

    /// Sets `showsDefaultSession`.
    pub fn shows_default(&mut self, v: bool) -> &mut Self {
        self.input(Input::ShowsDefaultSession(v))
    }

    /// Sets `launchTarget`.
    pub fn launch(&mut self, agent: &str, key: u64) -> &mut Self {
        self.input(Input::LaunchTarget(Some(LaunchTarget {
            agent_id: agent.to_owned(),
            label: None,
            launch_key: key,
        })))
    }

    /// Sets `avoidImplicitSessionSelection`.
    pub fn avoid_implicit(&mut self, v: bool) -> &mut Self {
        self.input(Input::AvoidImplicitSessionSelection(v))
    }

    /// Moves the clock forward, delivering scripted answers and timeouts in time order.
    pub fn advance(&mut self, ms: u64) -> &mut Self {
        let target = self.now_ms + ms;
        loop {
            let next_delivery = self
                .deliveries
                .keys()
                .next()
                .map(|(at, _)| *at)
                .filter(|at| *at <= target);
            let next_timer = self
                .engine
                .poll_timeout()
                .map(|t| {
                    u64::try_from(t.saturating_duration_since(self.epoch).as_millis())
                        .unwrap_or(u64::MAX)
                })
                .filter(|at| *at <= target);
            match (next_delivery, next_timer) {
                (Some(d), t) if t.is_none_or(|t| d <= t) => {
                    self.now_ms = self.now_ms.max(d);
                    let key = *self.deliveries.keys().next().expect("a delivery");
                    let (id, reply) = self.deliveries.remove(&key).expect("a delivery");
                    self.deliver(id, reply, None);
                }
                (_, Some(t)) => {
                    self.now_ms = self.now_ms.max(t);
                    self.engine.handle_timeout(self.at());
                    self.step("timeout");
                }
                (None, None) => break,
                (Some(_), None) => unreachable!(),
            }
        }
        self.now_ms = target;
        self
    }

    /// Moves the clock `ms` ahead without firing timers or deliveries: a host that wakes late
    /// (the next input carries the later time).
    pub fn jump(&mut self, ms: u64) -> &mut Self {
        self.now_ms += ms;
        self
    }

    /// Delivers every scripted answer and timer, however far ahead.
    pub fn run_until_idle(&mut self) -> &mut Self {
        for _ in 0..10_000 {
            let next = self.deliveries.keys().next().map(|(at, _)| *at);
            match next {
                Some(at) => {
                    let ms = at.saturating_sub(self.now_ms);
                    self.advance(ms);
                }
                None => return self,
            }
        }
        panic!("scripted platform never went idle");
    }

    fn deliver(&mut self, id: RequestId, reply: Reply, chunk: Option<usize>) {
        let at = self.at();
        let label = match &reply {
            Reply::Json(status, v) => format!("<- {id} {status} {}", redacted(v)),
            Reply::Raw { status, body, .. } => {
                format!(
                    "<- {id} {status} {:?}",
                    String::from_utf8_lossy(body)
                        .chars()
                        .take(80)
                        .collect::<String>()
                )
            }
            Reply::NoAnswer => format!("<- {id} no answer"),
        };
        self.open.remove(&id);
        match reply {
            Reply::NoAnswer => self.engine.handle_failure(
                id,
                TransportFailure::no_answer("connection refused"),
                at,
            ),
            Reply::Json(status, v) => {
                self.engine.handle_response(
                    id,
                    response_head(status, Some("application/json")),
                    at,
                );
                self.feed(id, v.to_string().into_bytes(), chunk);
                self.engine.handle_body_end(id, at);
            }
            Reply::Raw {
                status,
                content_type,
                body,
            } => {
                self.engine
                    .handle_response(id, response_head(status, content_type.as_deref()), at);
                self.feed(id, body, chunk);
                self.engine.handle_body_end(id, at);
            }
        }
        self.step(&label);
    }

    fn feed(&mut self, id: RequestId, body: Vec<u8>, chunk: Option<usize>) {
        let at = self.at();
        let size = chunk.unwrap_or(body.len().max(1));
        for piece in body.chunks(size.max(1)) {
            self.engine
                .handle_body_chunk(id, Bytes::copy_from_slice(piece), at);
        }
    }

    /// Answers request `id` with a JSON body.
    pub fn reply(&mut self, id: RequestId, status: u16, body: Value) -> &mut Self {
        self.deliver(id, Reply::Json(status, body), None);
        self
    }

    /// Answers request `id` with raw bytes, fed in chunks of `chunk` bytes (whole when `None`).
    pub fn reply_raw(
        &mut self,
        id: RequestId,
        status: u16,
        content_type: Option<&str>,
        body: &[u8],
        chunk: Option<usize>,
    ) -> &mut Self {
        let reply = Reply::Raw {
            status,
            content_type: content_type.map(str::to_owned),
            body: body.to_vec(),
        };
        self.deliver(id, reply, chunk);
        self
    }

    /// Only the head of an answer arrives for request `id` (its body is still on the way).
    pub fn head(&mut self, id: RequestId, status: u16) -> &mut Self {
        self.engine.handle_response(
            id,
            response_head(status, Some("application/json")),
            self.at(),
        );
        self.step(&format!("<- {id} {status} (head only)"));
        self
    }

    /// Request `id` gets no answer.
    pub fn fail(&mut self, id: RequestId) -> &mut Self {
        self.deliver(id, Reply::NoAnswer, None);
        self
    }

    /// Request `id` gets no answer, the transport saying `message` (blank: it says nothing).
    pub fn fail_with(&mut self, id: RequestId, message: &str) -> &mut Self {
        self.open.remove(&id);
        let failure = TransportFailure::no_answer(message);
        self.engine.handle_failure(id, failure, self.at());
        self.step(&format!("<- {id} no answer ({message:?})"));
        self
    }

    /// Every HTTP intent so far, in order.
    pub fn sent(&self) -> &[Sent] {
        &self.sent
    }

    /// HTTP intents emitted at or after `mark` (a value of [`Harness::mark`]).
    pub fn sent_since(&self, mark: usize) -> &[Sent] {
        self.sent.get(mark..).unwrap_or(&[])
    }

    /// A position in the sent list.
    pub fn mark(&self) -> usize {
        self.sent.len()
    }

    /// How many sent requests match.
    pub fn count(&self, pred: impl Fn(&ApiCall) -> bool) -> usize {
        self.sent.iter().filter(|s| pred(&s.call)).count()
    }

    /// Requests neither answered nor aborted.
    pub fn open_requests(&self) -> Vec<&Sent> {
        self.sent
            .iter()
            .filter(|s| self.open.contains(&s.id))
            .collect()
    }

    /// The newest open request matching `pred`.
    pub fn pending(&self, pred: impl Fn(&ApiCall) -> bool) -> Option<RequestId> {
        self.sent
            .iter()
            .rev()
            .find(|s| self.open.contains(&s.id) && pred(&s.call))
            .map(|s| s.id)
    }

    /// The newest open request matching `pred`; fails the test when there is none.
    pub fn expect_pending(&self, what: &str, pred: impl Fn(&ApiCall) -> bool) -> RequestId {
        match self.pending(pred) {
            Some(id) => id,
            None => panic!(
                "no open {what} request; open: {:?}\n{}",
                self.open_requests()
                    .iter()
                    .map(|s| call_name(&s.call))
                    .collect::<Vec<_>>(),
                self.transcript()
            ),
        }
    }

    /// The sent request with this id.
    pub fn request(&self, id: RequestId) -> &Sent {
        self.sent
            .iter()
            .find(|s| s.id == id)
            .expect("a sent request")
    }

    /// Whether `id` was aborted.
    pub fn was_aborted(&self, id: RequestId) -> bool {
        self.aborted.contains(&id)
    }

    /// The open latest-sessions request (not Agent-filtered).
    pub fn list_request(&self) -> RequestId {
        self.expect_pending("latest-sessions", |c| {
            matches!(c, ApiCall::ListSessions { agent: None, .. })
        })
    }

    /// The open detail request for `uid`.
    pub fn detail_request(&self, uid: &str) -> RequestId {
        self.expect_pending(
            "detail",
            |c| matches!(c, ApiCall::GetSessionDetail { session_uid, .. } if session_uid == uid),
        )
    }

    /// The open history request for `uid`.
    pub fn history_request(&self, uid: &str) -> RequestId {
        self.expect_pending(
            "history",
            |c| matches!(c, ApiCall::GetSessionHistory { session_uid } if session_uid == uid),
        )
    }

    /// The open insights request for `uid`.
    pub fn insights_request(&self, uid: &str) -> RequestId {
        self.expect_pending(
            "insights",
            |c| matches!(c, ApiCall::GetSessionInsights { session_uid } if session_uid == uid),
        )
    }

    /// The open get-or-create request.
    pub fn get_or_create_request(&self) -> RequestId {
        self.expect_pending("get-or-create", |c| {
            matches!(c, ApiCall::GetOrCreateSession { .. })
        })
    }

    /// The open resolve-runtime-access request for `uid`.
    pub fn runtime_request(&self, uid: &str) -> RequestId {
        self.expect_pending(
            "resolve-runtime-access",
            |c| matches!(c, ApiCall::ResolveRuntimeAccess { session_uid } if session_uid == uid),
        )
    }

    /// The open Agent confirmation (GET {rpc_url}/api/chat) for `uid`.
    pub fn confirm_request(&self, uid: &str) -> RequestId {
        self.expect_pending(
            "confirm-agent",
            |c| matches!(c, ApiCall::ConfirmAgent { session_uid, .. } if session_uid == uid),
        )
    }

    /// A visible chat with `uid` selected (requested) and hydrated: detail and history loaded,
    /// its first resolve-runtime-access open.
    pub fn hydrated(uid: &str) -> Harness {
        let mut h = Harness::visible_in_env();
        h.requested(Some(uid));
        h.hydrate(uid, crate::fixtures::AGENT);
        h
    }

    /// Answers the open resolve-runtime-access of `uid` ready, then its confirmation with
    /// `status` (200: the Agent serves).
    pub fn runtime_ready(&mut self, uid: &str, status: u16) -> &mut Self {
        let id = self.runtime_request(uid);
        self.reply(id, 200, crate::fixtures::runtime_ready(uid));
        let id = self.confirm_request(uid);
        self.reply_raw(
            id,
            status,
            Some("application/json"),
            br#"{"status":"ready"}"#,
            None,
        )
    }

    /// [`Harness::ready`] with its runtime access answered ready and confirmed (200): the
    /// composer admits, and the confirmation is remembered for 15 s.
    pub fn talking(uid: &str) -> Harness {
        Harness::new().into_talking(uid)
    }

    /// [`Harness::talking`] from this harness's fresh engine (e.g. [`Harness::recording`]).
    pub fn into_talking(self, uid: &str) -> Harness {
        let mut h = self.into_ready(uid);
        h.runtime_ready(uid, 200);
        assert!(h.snapshot().composer_admission);
        h
    }

    /// The composer's submit.
    pub fn send(&mut self, text: &str) -> &mut Self {
        self.command(Command::SendMessage {
            text: text.to_owned(),
        })
    }

    /// The open message request (`POST {rpc_url}/api/chat`) for `uid`.
    pub fn message_request(&self, uid: &str) -> RequestId {
        self.expect_pending(
            "send-message",
            |c| matches!(c, ApiCall::SendMessage { session_uid, .. } if session_uid == uid),
        )
    }

    /// The open run cancel for `uid`.
    pub fn cancel_request(&self, uid: &str) -> RequestId {
        self.expect_pending(
            "cancel-run",
            |c| matches!(c, ApiCall::CancelRun { session_uid, .. } if session_uid == uid),
        )
    }

    /// The 2xx head of a streamed answer (`text/event-stream`); the body follows in chunks.
    pub fn stream_head(&mut self, id: RequestId) -> &mut Self {
        let head = response_head(200, Some("text/event-stream"));
        self.engine.handle_response(id, head, self.at());
        self.step(&format!("<- {id} 200 text/event-stream"));
        self
    }

    /// This head for request `id` (any status and headers); for a 2xx turn the body follows in
    /// chunks.
    pub fn head_with(&mut self, id: RequestId, head: ResponseHead) -> &mut Self {
        let status = head.status;
        self.engine.handle_response(id, head, self.at());
        self.step(&format!("<- {id} {status} (head)"));
        self
    }

    /// A piece of a streamed body.
    pub fn chunk(&mut self, id: RequestId, bytes: &[u8]) -> &mut Self {
        self.engine
            .handle_body_chunk(id, Bytes::copy_from_slice(bytes), self.at());
        let shown: String = String::from_utf8_lossy(bytes).chars().take(80).collect();
        self.step(&format!("<- {id} chunk {shown:?}"));
        self
    }

    /// The end of a streamed body.
    pub fn end(&mut self, id: RequestId) -> &mut Self {
        self.open.remove(&id);
        self.engine.handle_body_end(id, self.at());
        self.step(&format!("<- {id} end"));
        self
    }

    /// A streamed body that breaks off after its head.
    pub fn broken(&mut self, id: RequestId) -> &mut Self {
        self.open.remove(&id);
        let failure = TransportFailure::broken("connection reset");
        self.engine.handle_failure(id, failure, self.at());
        self.step(&format!("<- {id} broken"));
        self
    }

    /// Answers the open latest-sessions request with these records (a page).
    pub fn answer_list(&mut self, records: &[Value]) -> &mut Self {
        let id = self.list_request();
        self.reply(id, 200, crate::fixtures::page(records))
    }

    /// Answers the open detail request of `uid` with `record`.
    pub fn answer_detail(&mut self, uid: &str, record: Value) -> &mut Self {
        let id = self.detail_request(uid);
        self.reply(id, 200, record)
    }

    /// Answers the open history request of `uid` with the fixture history.
    pub fn answer_history(&mut self, uid: &str) -> &mut Self {
        let id = self.history_request(uid);
        self.reply(id, 200, crate::fixtures::history(uid))
    }

    /// Answers detail and history of `uid` (the record in [`crate::fixtures::ENV`]).
    pub fn hydrate(&mut self, uid: &str, agent: &str) -> &mut Self {
        self.answer_detail(
            uid,
            crate::fixtures::record(uid, agent, crate::fixtures::ENV, 0),
        );
        self.answer_history(uid)
    }

    /// Every event so far.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Every storage request so far.
    pub fn storage(&self) -> &[StorageRequest] {
        &self.storage
    }

    /// The selected session (`currentSessionId`).
    pub fn current(&self) -> Option<String> {
        self.engine.snapshot().current_session_id
    }

    /// The uids of `agentSessions`, in order.
    pub fn list_uids(&self) -> Vec<String> {
        self.engine
            .snapshot()
            .agent_sessions
            .into_iter()
            .map(|s| s.uid)
            .collect()
    }

    /// Every `notify` so far.
    pub fn notices(&self) -> Vec<Notice> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Notify(n) => Some(n.clone()),
                _ => None,
            })
            .collect()
    }

    /// Asserts that nothing went to an Agent runtime and no runtime access was asked for.
    pub fn assert_no_runtime_request(&self) {
        for s in &self.sent {
            assert_eq!(s.request.target, Target::Platform, "{:?}", s.request);
            assert!(
                !s.request.path.contains("resolve-runtime-access"),
                "{:?}",
                s.request
            );
        }
    }

    /// The engine's snapshot now.
    pub fn snapshot(&self) -> Snapshot {
        self.engine.snapshot()
    }

    /// The transcript so far, one block per step.
    pub fn transcript(&self) -> String {
        self.transcript.0.join("\n")
    }
}

/// The answer as the transcript shows it: credentials (`token` fields) redacted, as traces must.
fn redacted(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let shown = if k == "token" && v.is_string() {
                        Value::String("[redacted]".into())
                    } else {
                        redacted(v)
                    };
                    (k.clone(), shown)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redacted).collect()),
        other => other.clone(),
    }
}

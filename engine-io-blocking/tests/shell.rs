#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The blocking shell against a loopback fake platform (axum on a tokio runtime of its own, in
//! the background): requests on the wire, a streamed answer (in both answer dialects, issue 24
//! point 4), abort, timeouts, refusal, shutdown.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use engine_core::{Command, Config, Event, Input, Person, ReadinessStatus, RunStatus, Secret};
use engine_io_blocking::{MemoryStorage, Shell, ShellConfig};
use platform_sim::{Dialect, event};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(5);
const TOKEN: &str = "platform-token-secret";
const RUNTIME_TOKEN: &str = "rt-token-secret";

// ---------------------------------------------------------------------------------------------
// The fake platform
// ---------------------------------------------------------------------------------------------

/// A request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    query: String,
    authorization: Option<String>,
    body: String,
    at: Instant,
}

/// One step of a streamed body.
enum Step {
    Send(Vec<u8>),
    /// Waits until the test opens the gate.
    Gate(Arc<tokio::sync::Notify>),
    /// Sends these bytes every interval, forever.
    Forever(Vec<u8>, Duration),
    /// Sends these bytes as fast as the client takes them, forever, adding their length to the
    /// counter as each is handed to the connection.
    Flood(Vec<u8>, Arc<AtomicUsize>),
}

enum Reply {
    Json(u16, Value),
    After(Duration, Box<Reply>),
    Stream {
        content_type: &'static str,
        steps: Vec<Step>,
        /// Told when the server drops the body (the client went away, or it ended).
        dropped: Option<mpsc::Sender<()>>,
    },
}

type Handler = Box<dyn Fn(&Seen) -> Reply + Send + Sync>;

struct ServerState {
    handler: Handler,
    seen: Mutex<Vec<Seen>>,
    arrived: Condvar,
}

struct Server {
    base: String,
    state: Arc<ServerState>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Server {
    /// Starts a server; `make` builds its handler from the server's base address.
    fn start(make: impl FnOnce(&str) -> Handler) -> Server {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(ServerState {
            handler: make(&base),
            seen: Mutex::new(Vec::new()),
            arrived: Condvar::new(),
        });
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let app = axum::Router::new()
            .fallback(serve)
            .with_state(Arc::clone(&state));
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
        Server {
            base,
            state,
            runtime: Some(runtime),
        }
    }

    fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().unwrap().clone()
    }

    /// Waits until a request matching `pred` has arrived.
    fn wait_request(&self, pred: impl Fn(&Seen) -> bool) -> Seen {
        let deadline = Instant::now() + WAIT;
        let mut seen = self.state.seen.lock().unwrap();
        loop {
            if let Some(s) = seen.iter().find(|s| pred(s)) {
                return s.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "no such request; seen: {seen:#?}");
            seen = self.state.arrived.wait_timeout(seen, left).unwrap().0;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

async fn serve(State(state): State<Arc<ServerState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let seen = Seen {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().unwrap_or("").to_owned(),
        authorization: parts
            .headers
            .get(header::AUTHORIZATION)
            .map(|v| v.to_str().unwrap().to_owned()),
        body: String::from_utf8_lossy(&body).into_owned(),
        at: Instant::now(),
    };
    let mut reply = (state.handler)(&seen);
    state.seen.lock().unwrap().push(seen);
    state.arrived.notify_all();
    while let Reply::After(delay, inner) = reply {
        tokio::time::sleep(delay).await;
        reply = *inner;
    }
    match reply {
        Reply::Json(status, value) => (
            StatusCode::from_u16(status).unwrap(),
            [(header::CONTENT_TYPE, "application/json")],
            value.to_string(),
        )
            .into_response(),
        Reply::Stream {
            content_type,
            steps,
            dropped,
        } => {
            let body = Body::from_stream(futures_util::stream::unfold(
                (VecDeque::from(steps), DropSignal(dropped)),
                next_piece,
            ));
            ([(header::CONTENT_TYPE, content_type)], body).into_response()
        }
        Reply::After(..) => unreachable!(),
    }
}

struct DropSignal(Option<mpsc::Sender<()>>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

type Piece = Result<Vec<u8>, std::io::Error>;

async fn next_piece(
    (mut steps, signal): (VecDeque<Step>, DropSignal),
) -> Option<(Piece, (VecDeque<Step>, DropSignal))> {
    loop {
        match steps.pop_front()? {
            Step::Send(bytes) => return Some((Ok(bytes), (steps, signal))),
            Step::Gate(gate) => gate.notified().await,
            Step::Forever(bytes, every) => {
                tokio::time::sleep(every).await;
                steps.push_front(Step::Forever(bytes.clone(), every));
                return Some((Ok(bytes), (steps, signal)));
            }
            Step::Flood(bytes, counter) => {
                counter.fetch_add(bytes.len(), Ordering::SeqCst);
                steps.push_front(Step::Flood(bytes.clone(), counter));
                return Some((Ok(bytes), (steps, signal)));
            }
        }
    }
}

fn json(status: u16, value: Value) -> Reply {
    Reply::Json(status, value)
}

// ---------------------------------------------------------------------------------------------
// Platform answers (shapes of platform-api.md, invented values)
// ---------------------------------------------------------------------------------------------

fn record(uid: &str, env: &str) -> Value {
    json!({
        "uid": uid, "agent_uid": "agent-1", "agent_name": "Ledger Helper",
        "organization_environment_uid": env, "name": format!("Session {uid}"),
        "status": "completed", "started_at": "2026-10-02T08:00:00Z", "ended_at": null,
        "llm_provider": "acme-cloud", "llm_model": "acme-large", "engine_name": "tau",
        "is_archived": false, "bound_handle": null
    })
}

fn page(records: &[Value]) -> Value {
    json!({"count": records.len(), "next": null, "previous": null, "results": records})
}

fn history(uid: &str) -> Value {
    json!({
        "version": 1,
        "session": {"sessionId": uid, "threadId": uid, "agentName": "Ledger Helper", "status": "completed"},
        "messages": [
            {"id": "m-1", "role": "user", "content": [{"type": "text", "text": "Total for Q3?"}]},
            {"id": "m-2", "role": "assistant", "content": [{"type": "text", "text": "Q3 totals 4120."}]}
        ],
        "inProgressMessage": null
    })
}

fn runtime_ready(uid: &str, rpc_url: &str) -> Value {
    json!({
        "session_uid": uid, "mode": "token", "rpc_url": rpc_url, "token": RUNTIME_TOKEN,
        "is_ready": true,
        "runtime_interaction": {"state": "ready", "can_submit": true, "notice": null, "operation": null, "retry_after_ms": null},
        "runtime_presence": {"phase": "serving", "replicas": {"desired": 1, "actual": 1}, "detail": "Observed.", "observed_at": "2026-10-02T08:20:00Z", "wake": null}
    })
}

/// A transient answer: the Agent is starting; ask again after `retry_after_ms`.
fn runtime_starting(retry_after_ms: u64) -> Value {
    json!({
        "mode": "unavailable", "rpc_url": null, "token": null, "is_ready": false,
        "detail": "Starting.",
        "runtime_interaction": {"state": "starting", "can_submit": false,
            "notice": {"code": "agent_waking", "severity": "info", "title": "Starting Ledger Helper", "message": "Ledger Helper is starting."},
            "operation": null, "retry_after_ms": retry_after_ms},
        "runtime_presence": {"phase": "provisioning", "replicas": {"desired": 1, "actual": 0}, "detail": "Starting.", "observed_at": "2026-10-02T08:20:00Z", "wake": null}
    })
}

fn sse(event: &Value) -> String {
    format!("data: {event}\n\n")
}

/// The id of the answer's text part in `d`.
fn text_id(d: Dialect) -> &'static str {
    match d {
        Dialect::Runtime => "text-0",
        Dialect::AiSdk => "t-1",
    }
}

/// A text delta event in `d` (`textDelta` in the runtime's dialect, RU-1; `delta` in the AI
/// SDK's), written by the simulator's writer.
fn text_delta(d: Dialect, text: &str) -> String {
    let key = match d {
        Dialect::Runtime => "textDelta",
        Dialect::AiSdk => "delta",
    };
    let fields = [
        ("type", "text-delta".into()),
        ("id", text_id(d).into()),
        (key, text.into()),
    ];
    event(d, &fields)
}

/// The end of the answer in `d`: `text-end`, `finish-step`, `finish`, `[DONE]`.
fn closing(d: Dialect) -> String {
    let step_end = [
        ("type", "finish-step".into()),
        ("finishReason", "stop".into()),
    ];
    let finish = [("type", "finish".into()), ("finishReason", "stop".into())];
    event(d, &[("type", "text-end".into()), ("id", text_id(d).into())])
        + &event(d, &step_end)
        + &event(d, &finish)
        + "data: [DONE]\n\n"
}

/// The platform and the Agent of session `s-1` in `env-1`, answering in the runtime's dialect.
fn platform(base: &str, gate: Arc<tokio::sync::Notify>) -> Handler {
    platform_in(base, gate, Dialect::Runtime)
}

/// The platform and the Agent of session `s-1` in `env-1`; the answer to a turn is streamed in
/// two pieces with `gate` between them (the first piece ends in the middle of an event), in
/// dialect `d`.
fn platform_in(base: &str, gate: Arc<tokio::sync::Notify>, d: Dialect) -> Handler {
    let rpc_url = format!("{base}/agents/s-1");
    Box::new(move |seen| {
        let route = (seen.method.as_str(), seen.path.as_str());
        match route {
            ("GET", "/api/v1/agent-sessions/") => json(200, page(&[record("s-1", "env-1")])),
            ("GET", "/api/v1/agent-sessions/s-1/") => json(200, record("s-1", "env-1")),
            ("GET", "/api/v1/agent-sessions/s-1/history/") => json(200, history("s-1")),
            ("GET", "/api/v1/agent-sessions/s-1/insights/") => json(
                200,
                json!({"agent_session_uid": "s-1", "has_insights": true, "harness": "tau"}),
            ),
            ("POST", "/api/v1/agent-sessions/s-1/resolve-runtime-access/") => {
                json(200, runtime_ready("s-1", &rpc_url))
            }
            // A catalog with models: an empty one is read again on a timer, which would
            // publish while the publication tests hold a change back.
            ("GET", "/api/v1/model-providers/") => json(200, platform_sim::default_catalog()),
            ("GET", "/agents/s-1/api/chat") => json(200, json!({"status": "ready"})),
            ("POST", "/agents/s-1/api/chat") => {
                let start = match d {
                    Dialect::AiSdk => event(
                        d,
                        &[("type", "start".into()), ("messageId", "msg-a".into())],
                    ),
                    Dialect::Runtime => String::new(),
                };
                let first = [
                    start,
                    event(d, &[("type", "start-step".into())]),
                    event(
                        d,
                        &[("type", "text-start".into()), ("id", text_id(d).into())],
                    ),
                    text_delta(d, "Q4 totals "),
                ]
                .concat();
                let second = text_delta(d, "5000.");
                let (head, tail) = second.split_at(20);
                let rest = tail.to_owned() + &closing(d);
                Reply::Stream {
                    content_type: "text/event-stream",
                    steps: vec![
                        Step::Send(format!("{first}{head}").into_bytes()),
                        Step::Gate(Arc::clone(&gate)),
                        Step::Send(rest.into_bytes()),
                    ],
                    dropped: None,
                }
            }
            _ => json(404, json!({"detail": "Not found."})),
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn config(base: &str) -> ShellConfig {
    ShellConfig::new(Config::new(base).unwrap().with_seed(1))
}

fn person() -> Input {
    Input::Person(Person::new("user-1", Secret::new(TOKEN)))
}

/// Person, Environment, visible.
fn open(shell: &Shell, env: &str) {
    shell.input(person()).unwrap();
    shell
        .input(Input::EnvironmentUid(Some(env.into())))
        .unwrap();
    shell.input(Input::IsVisible(true)).unwrap();
}

fn thread_text(s: &engine_core::Snapshot) -> String {
    serde_json::to_string(&s.thread).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

/// The first list read goes out with its path, query and the person's credential; the answer
/// selects its session and the rest of hydration follows; storage gets the list.
#[test]
fn first_list_read_on_the_wire() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let server = Server::start(|base| platform(base, gate));
    let storage = MemoryStorage::new();
    let shell = Shell::start(config(&server.base).with_storage(storage.clone()));
    open(&shell, "env-1");

    let s = shell
        .wait_for(
            |s| s.active_session_readiness.status == ReadinessStatus::Ready,
            WAIT,
        )
        .expect("the session becomes ready");
    assert_eq!(s.current_session_id.as_deref(), Some("s-1"));

    let list = server.wait_request(|r| r.path == "/api/v1/agent-sessions/");
    assert_eq!(list.method, "GET");
    assert_eq!(
        list.query,
        "organization_environment_uid=env-1&created_by_user_uid=user-1&is_archived=false&ordering=-started_at&limit=20"
    );
    assert_eq!(list.authorization, Some(format!("Bearer {TOKEN}")));
    let detail = server.wait_request(|r| r.path == "/api/v1/agent-sessions/s-1/");
    assert_eq!(detail.query, "organization_environment_uid=env-1");

    // The storage port got the list (Save), through the driver.
    let stored = storage.keys();
    assert!(
        stored
            .iter()
            .any(|k| k.contains("user-1") && k.contains("env-1")),
        "{stored:?}"
    );
    shell.shutdown();
}

/// list → detail → history → resolve-runtime-access (ready, rpc_url on the same server) →
/// GET /api/chat 200 → send → the SSE answer arrives in pieces and shows in the thread.
/// Issue 24, point 4: a streamed answer shows while it arrives, in both dialects (the runtime's
/// `textDelta`, RU-1, RU-4; the AI SDK's `delta`), an event cut between two pieces.
#[test]
fn streamed_answer_arrives_in_pieces() {
    for dialect in Dialect::ALL {
        streamed_answer_in(dialect);
    }
}

fn streamed_answer_in(dialect: Dialect) {
    let gate = Arc::new(tokio::sync::Notify::new());
    let server = Server::start(|base| platform_in(base, Arc::clone(&gate), dialect));
    let shell = Shell::start(config(&server.base));
    let events = shell.events();
    open(&shell, "env-1");

    shell
        .wait_for(
            |s| s.active_session_readiness.status == ReadinessStatus::Ready && s.composer_admission,
            WAIT,
        )
        .expect("the composer admits");
    let confirm = server.wait_request(|r| r.method == "GET" && r.path == "/agents/s-1/api/chat");
    assert_eq!(
        confirm.authorization,
        Some(format!("Bearer {RUNTIME_TOKEN}"))
    );

    shell
        .command(Command::SendMessage {
            text: "Total for Q4?".into(),
        })
        .unwrap();

    // The first piece shows while the rest is held back by the server.
    let partial = shell
        .wait_for(
            |s| s.has_active_chat_stream && thread_text(s).contains("Q4 totals "),
            WAIT,
        )
        .expect("the first piece shows in the thread");
    assert!(!thread_text(&partial).contains("5000."));
    assert_eq!(partial.run_status, RunStatus::Responding);
    let sent = server.wait_request(|r| r.method == "POST" && r.path == "/agents/s-1/api/chat");
    assert_eq!(sent.authorization, Some(format!("Bearer {RUNTIME_TOKEN}")));
    let body: Value = serde_json::from_str(&sent.body).unwrap();
    assert_eq!(body["messages"][0]["content"][0]["text"], "Total for Q4?");

    gate.notify_one();
    let done = shell
        .wait_for(
            |s| s.run_status == RunStatus::Complete && !s.has_active_chat_stream,
            WAIT,
        )
        .expect("the answer completes");
    assert!(
        thread_text(&done).contains("Q4 totals 5000."),
        "{}",
        thread_text(&done)
    );

    // Deltas came as events, in more than one piece.
    let answers = events
        .try_iter()
        .filter(|e| matches!(e, Event::Answer { session_uid, .. } if session_uid == "s-1"))
        .count();
    assert!(answers >= 2, "{answers} answer events");
    shell.shutdown();
}

/// The engine's timer: a transient runtime answer asks again after its `retry_after_ms`; the
/// driver wakes for that deadline (not before), and the second answer admits the composer.
#[test]
fn engine_timer_drives_the_next_poll() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let resolves = AtomicUsize::new(0);
    let server = Server::start(|base| {
        let inner = platform(base, gate);
        Box::new(move |seen| {
            let resolve = seen.path.ends_with("/resolve-runtime-access/");
            if resolve && resolves.fetch_add(1, Ordering::SeqCst) == 0 {
                return json(200, runtime_starting(500));
            }
            inner(seen)
        })
    });
    let shell = Shell::start(config(&server.base));
    open(&shell, "env-1");
    shell
        .wait_for(|s| s.is_assistant_runtime_starting, WAIT)
        .expect("the Agent is starting");
    shell
        .wait_for(|s| s.composer_admission, WAIT)
        .expect("the second answer admits");
    let times: Vec<Instant> = server
        .seen()
        .iter()
        .filter(|r| r.path.ends_with("/resolve-runtime-access/"))
        .map(|r| r.at)
        .collect();
    assert_eq!(times.len(), 2);
    let gap = times[1] - times[0];
    assert!(gap >= Duration::from_millis(450), "{gap:?}");
    assert!(gap < Duration::from_millis(1500), "{gap:?}");
    shell.shutdown();
}

/// An Environment change aborts the open list read: its worker stops reading and the connection
/// closes (the server sees its body dropped) while the new Environment's list is answered.
#[test]
fn abort_stops_the_open_request() {
    let (dropped_tx, dropped_rx) = mpsc::channel();
    let dropped_tx = Mutex::new(Some(dropped_tx));
    let server = Server::start(move |_| {
        Box::new(move |seen| {
            let env2 = seen.query.contains("organization_environment_uid=env-2");
            match seen.path.as_str() {
                "/api/v1/agent-sessions/" if env2 => json(200, page(&[record("s-2", "env-2")])),
                // env-1's list: a head, then a body that never ends.
                "/api/v1/agent-sessions/" => Reply::Stream {
                    content_type: "application/json",
                    steps: vec![
                        Step::Send(b"{\"results\": [".to_vec()),
                        Step::Forever(b" ".to_vec(), Duration::from_millis(20)),
                    ],
                    dropped: dropped_tx.lock().unwrap().take(),
                },
                _ => Reply::After(Duration::from_secs(30), Box::new(json(404, json!({})))),
            }
        })
    });
    let shell = Shell::start(config(&server.base));
    open(&shell, "env-1");
    server.wait_request(|r| r.query.contains("organization_environment_uid=env-1"));
    // Give the worker time to get the head and start reading the body.
    std::thread::sleep(Duration::from_millis(100));

    shell
        .input(Input::EnvironmentUid(Some("env-2".into())))
        .unwrap();
    dropped_rx
        .recv_timeout(WAIT)
        .expect("the aborted request's connection is closed");
    let s = shell
        .wait_for(|s| s.current_session_id.as_deref() == Some("s-2"), WAIT)
        .expect("env-2's list selects its session");
    assert_eq!(s.environment_uid.as_deref(), Some("env-2"));
    shell.shutdown();
}

/// No head within the request timeout: a transport failure, which the engine shows as the
/// list's error.
#[test]
fn request_timeout_becomes_a_failure() {
    let server = Server::start(|_| {
        Box::new(|_| {
            Reply::After(
                Duration::from_secs(3),
                Box::new(json(200, page(&[record("s-1", "env-1")]))),
            )
        })
    });
    let mut config = config(&server.base);
    config.request_timeout = Duration::from_millis(300);
    let shell = Shell::start(config);
    let started = Instant::now();
    open(&shell, "env-1");
    let s = shell
        .wait_for(|s| s.latest_sessions_error.is_some(), WAIT)
        .expect("the list fails");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(s.current_session_id, None);
    assert!(!s.is_loading_latest_sessions);
    shell.shutdown();
}

/// Nothing listens: no answer, shown as the list's error.
#[test]
fn connection_refused_is_no_answer() {
    let base = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let shell = Shell::start(config(&base));
    open(&shell, "env-1");
    let s = shell
        .wait_for(|s| s.latest_sessions_error.is_some(), WAIT)
        .expect("the list fails");
    assert_eq!(s.current_session_id, None);
    shell.shutdown();
}

/// Shutdown joins the driver at once even with a request hanging, and closes the event
/// receivers.
#[test]
fn shutdown_joins_cleanly() {
    let server = Server::start(|_| {
        Box::new(|_| Reply::After(Duration::from_secs(30), Box::new(json(200, json!({})))))
    });
    let shell = Shell::start(config(&server.base));
    let events = shell.events();
    open(&shell, "env-1");
    server.wait_request(|r| r.path == "/api/v1/agent-sessions/");

    let started = Instant::now();
    shell.shutdown();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        events.recv_timeout(Duration::from_secs(1)),
        Err(mpsc::RecvTimeoutError::Disconnected)
    );
    assert!(server.seen().iter().all(|r| r.method == "GET"));
}

/// `wait_for` with an unmet predicate times out (without spinning); a met one returns at once;
/// dropping a shell stops it. The shell can be shared across threads.
#[test]
fn wait_for_times_out() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Shell>();

    let shell = Shell::start(config("http://127.0.0.1:9"));
    let started = Instant::now();
    assert!(
        shell
            .wait_for(
                |s| s.current_session_id.is_some(),
                Duration::from_millis(200)
            )
            .is_none()
    );
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(shell.wait_for(|_| true, Duration::ZERO).is_some());
    drop(shell);
}

// ---------------------------------------------------------------------------------------------
// Issue 12, point 5: linear, bounded, ended by shutdown, no work for aborted requests
// ---------------------------------------------------------------------------------------------

/// `platform`, with the turn's answer built by `answer`.
fn answering(base: &str, answer: impl Fn() -> Reply + Send + Sync + 'static) -> Handler {
    let rest = platform(base, Arc::new(tokio::sync::Notify::new()));
    Box::new(move |seen| {
        if seen.method == "POST" && seen.path == "/agents/s-1/api/chat" {
            answer()
        } else {
            rest(seen)
        }
    })
}

/// Opens `s-1` and sends a turn once the composer admits.
fn send_turn(shell: &Shell) {
    open(shell, "env-1");
    shell
        .wait_for(
            |s| s.active_session_readiness.status == ReadinessStatus::Ready && s.composer_admission,
            WAIT,
        )
        .expect("the composer admits");
    shell
        .command(Command::SendMessage {
            text: "Total for Q4?".into(),
        })
        .unwrap();
}

/// The answer's opening events, up to its open text part `t-1`.
fn answer_start() -> Vec<u8> {
    [
        sse(&json!({"type": "start", "messageId": "msg-a"})),
        sse(&json!({"type": "start-step"})),
        sse(&json!({"type": "text-start", "id": "t-1"})),
    ]
    .concat()
    .into_bytes()
}

/// An 8 MB answer in 2,048 pieces of 4 KB completes, and the snapshot (which holds the whole
/// thread, so costs as much as the answer so far) is computed a number of times that grows with
/// the logarithm of the answer, not once per piece: the answer costs time linear in its size.
#[test]
fn large_streamed_answer_costs_a_snapshot_per_doubling() {
    const PIECES: usize = 2048;
    let delta = "x".repeat(4096 - 64);
    let server = Server::start(move |base| {
        answering(base, move || {
            let mut steps = vec![Step::Send(answer_start())];
            for i in 0..PIECES {
                let text = format!("{i:06}{delta}");
                let event = sse(&json!({"type": "text-delta", "id": "t-1", "delta": text}));
                steps.push(Step::Send(event.into_bytes()));
            }
            let end = [
                sse(&json!({"type": "text-end", "id": "t-1"})),
                sse(&json!({"type": "finish-step"})),
                sse(&json!({"type": "finish", "finishReason": "stop"})),
                "data: [DONE]\n\n".to_owned(),
            ]
            .concat();
            steps.push(Step::Send(end.into_bytes()));
            Reply::Stream {
                content_type: "text/event-stream",
                steps,
                dropped: None,
            }
        })
    });
    let mut config = config(&server.base);
    // No publication by the clock: the count below depends on the bytes alone.
    config.snapshot_interval = Duration::from_secs(3600);
    let shell = Shell::start(config);
    send_turn(&shell);
    let before = shell.stats().snapshots;
    let started = Instant::now();

    let last = format!("{:06}", PIECES - 1);
    let done = shell
        .wait_for(
            |s| !s.has_active_chat_stream && thread_text(s).contains(&last),
            Duration::from_secs(120),
        )
        .expect("the answer completes");
    assert_eq!(done.run_status, RunStatus::Complete);
    let text = thread_text(&done);
    assert!(text.len() > PIECES * 4000, "{} bytes", text.len());
    let during = shell.stats().snapshots - before;
    // Printed for docs/benchmarks.md, not asserted.
    eprintln!(
        "FIG large: {during} snapshots, {} bytes, {:?}",
        text.len(),
        started.elapsed()
    );
    // log2(8 MB / 4 KB) = 11 doublings, plus the messages that are not pieces (head, end, the
    // turn's own requests); once per piece would be over 2,048.
    assert!(during <= 48, "{during} snapshots for {PIECES} pieces");
    shell.shutdown();
}

/// An answer past a small answer limit fails as too large (`stream_too_large`), and is no
/// longer read: the server, which would send without end, sees its connection closed having
/// handed over about the limit plus what the sockets hold, not an endless body.
#[test]
fn answer_past_its_limit_is_not_read_on() {
    const LIMIT: usize = 256 * 1024;
    let sent = Arc::new(AtomicUsize::new(0));
    let (dropped_tx, dropped_rx) = mpsc::channel();
    let dropped_tx = Mutex::new(Some(dropped_tx));
    let counter = Arc::clone(&sent);
    let server = Server::start(move |base| {
        answering(base, move || {
            let delta = sse(&json!({"type": "text-delta", "id": "t-1", "delta": "y".repeat(4000)}));
            Reply::Stream {
                content_type: "text/event-stream",
                steps: vec![
                    Step::Send(answer_start()),
                    Step::Flood(delta.into_bytes(), Arc::clone(&counter)),
                ],
                dropped: dropped_tx.lock().unwrap().take(),
            }
        })
    });
    let mut config = config(&server.base);
    config.engine.max_answer_bytes = LIMIT;
    let shell = Shell::start(config);
    send_turn(&shell);

    let failed = shell
        .wait_for(
            |s| s.run_failure.is_some() && !s.has_active_chat_stream,
            WAIT,
        )
        .expect("the answer fails");
    assert_eq!(
        failed.run_failure.map(|f| f.code),
        Some(engine_core::FailureCode::StreamTooLarge)
    );
    dropped_rx
        .recv_timeout(WAIT)
        .expect("the answer's connection is closed");
    let at_close = sent.load(Ordering::SeqCst);
    eprintln!("FIG limit: {at_close} bytes sent");
    // Loopback sockets hold a few MB at most; without the limit the flood goes on for ever.
    assert!(at_close < LIMIT + 16 * 1024 * 1024, "{at_close} bytes sent");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        sent.load(Ordering::SeqCst),
        at_close,
        "still read after close"
    );
    shell.shutdown();
}

/// `shutdown()` returns with a streamed answer hanging (its head and a first piece came, then
/// nothing), and its connection is closed: the server's body is dropped, no thread keeps it.
#[test]
fn shutdown_ends_a_hung_stream() {
    let (dropped_tx, dropped_rx) = mpsc::channel();
    let dropped_tx = Mutex::new(Some(dropped_tx));
    let never = Arc::new(tokio::sync::Notify::new());
    let server = Server::start(move |base| {
        answering(base, move || {
            let first = sse(&json!({"type": "text-delta", "id": "t-1", "delta": "Q4 totals "}));
            Reply::Stream {
                content_type: "text/event-stream",
                steps: vec![
                    Step::Send([answer_start(), first.into_bytes()].concat()),
                    Step::Gate(Arc::clone(&never)),
                ],
                dropped: dropped_tx.lock().unwrap().take(),
            }
        })
    });
    let shell = Shell::start(config(&server.base));
    send_turn(&shell);
    shell
        .wait_for(|s| thread_text(s).contains("Q4 totals "), WAIT)
        .expect("the first piece shows");
    assert!(dropped_rx.try_recv().is_err(), "the answer is still open");

    shell.shutdown();
    dropped_rx
        .recv_timeout(WAIT)
        .expect("shutdown closed the hung answer's connection");
}

/// A streamed answer silent past the idle timeout after its head fails as broken
/// (`stream_interrupted`), and its connection is closed.
#[test]
fn silent_stream_fails_after_its_idle_timeout() {
    let (dropped_tx, dropped_rx) = mpsc::channel();
    let dropped_tx = Mutex::new(Some(dropped_tx));
    let never = Arc::new(tokio::sync::Notify::new());
    let server = Server::start(move |base| {
        answering(base, move || Reply::Stream {
            content_type: "text/event-stream",
            steps: vec![Step::Send(answer_start()), Step::Gate(Arc::clone(&never))],
            dropped: dropped_tx.lock().unwrap().take(),
        })
    });
    let mut config = config(&server.base);
    config.stream_idle_timeout = Duration::from_millis(300);
    let shell = Shell::start(config);
    send_turn(&shell);
    let failed = shell
        .wait_for(|s| s.run_failure.is_some(), WAIT)
        .expect("the silent answer fails");
    assert_eq!(
        failed.run_failure.map(|f| (f.code, f.message)),
        Some((
            engine_core::FailureCode::StreamInterrupted,
            // RU-16: an answer cut short has no source of its own.
            "Source: Request was never sent. The answer stalled for 300 ms.".to_owned()
        ))
    );
    dropped_rx
        .recv_timeout(WAIT)
        .expect("the silent answer's connection is closed");
    shell.shutdown();
}

/// A burst of inputs, each replacing the last one's list read: the server sees no more reads
/// than the shell started, and the last Environment's list selects its session. (How many of
/// the replaced reads never start depends on timing, so it is printed as a figure.)
#[test]
fn requests_aborted_before_they_start_are_never_sent() {
    const INPUTS: usize = 200;
    let server = Server::start(|_| {
        Box::new(|seen| {
            let env = seen
                .query
                .split('&')
                .find_map(|kv| kv.strip_prefix("organization_environment_uid="))
                .unwrap_or("")
                .to_owned();
            match seen.path.as_str() {
                "/api/v1/agent-sessions/" => json(200, page(&[record(&format!("s-{env}"), &env)])),
                _ => Reply::After(Duration::from_secs(30), Box::new(json(404, json!({})))),
            }
        })
    });
    let shell = Shell::start(config(&server.base));
    shell.input(person()).unwrap();
    shell.input(Input::IsVisible(true)).unwrap();
    for i in 0..INPUTS {
        shell
            .input(Input::EnvironmentUid(Some(format!("env-{i}"))))
            .unwrap();
    }
    let last = format!("s-env-{}", INPUTS - 1);
    shell
        .wait_for(
            |s| s.current_session_id.as_deref() == Some(last.as_str()),
            WAIT,
        )
        .expect("the last Environment's session is selected");
    let started = shell.stats().exchanges;
    let lists = server
        .seen()
        .iter()
        .filter(|r| r.path == "/api/v1/agent-sessions/")
        .count();
    eprintln!("FIG burst: {lists} lists, {started} started");
    assert!(
        lists as u64 <= started,
        "{lists} list reads, {started} started"
    );
    // How many start depends on how far the driver falls behind the host (8 of 200 here, 204
    // when every request starts at once): printed as a figure, not asserted, so the test stays
    // deterministic. What holds whatever the timing: the server saw nothing that was not
    // started, and the last Environment won.
    shell.shutdown();
}

// ---------------------------------------------------------------------------------------------
// Publication (issue 12, point 1; the rule of engine_io_tokio::publish, shared with the tokio
// shell; sans-io-anchors 5: the snapshot is the level truth, events are never held back)
// ---------------------------------------------------------------------------------------------

/// An interval no test waits for: only the doubling, the terminal facts and shutdown publish.
const NEVER: Duration = Duration::from_secs(3600);

/// A 64 KB first write ending in the delta `mark`, a gate, then `rest`; the answer then stays
/// open (a gate never opened).
fn held_answer(gate: Arc<tokio::sync::Notify>, rest: String) -> impl Fn() -> Reply {
    move || {
        let mut first = answer_start();
        let big = json!({"type": "text-delta", "id": "t-1", "delta": "x".repeat(64 * 1024)});
        first.extend(sse(&big).into_bytes());
        first
            .extend(sse(&json!({"type": "text-delta", "id": "t-1", "delta": "mark"})).into_bytes());
        Reply::Stream {
            content_type: "text/event-stream",
            steps: vec![
                Step::Send(first),
                Step::Gate(Arc::clone(&gate)),
                Step::Send(rest.clone().into_bytes()),
                Step::Gate(Arc::new(tokio::sync::Notify::new())),
            ],
            dropped: None,
        }
    }
}

/// Waits for the answer's text delta ending in `text` on the event channel: the frame `text`,
/// alone or joined to the frames before it in the same piece.
fn wait_delta(events: &mpsc::Receiver<Event>, text: &str) {
    let deadline = Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok(Event::Answer {
                delta: engine_core::StreamDelta::TextDelta { delta, .. },
                ..
            }) if delta.ends_with(text) => return,
            Ok(_) => {}
            Err(e) => panic!("no text delta {text:?}: {e}"),
        }
    }
}

/// A shell on a server whose answer is [`held_answer`] with `rest`: the turn sent, the first
/// write handled (its last event seen) and then published by a host input, so that however the
/// reads cut it nothing of it is held back after. The server lives as long as the first value.
fn held_shell(
    rest: String,
    interval: Duration,
) -> (
    Server,
    Shell,
    mpsc::Receiver<Event>,
    Arc<tokio::sync::Notify>,
) {
    let gate = Arc::new(tokio::sync::Notify::new());
    let answer = held_answer(Arc::clone(&gate), rest);
    let server = Server::start(move |base| answering(base, answer));
    let mut config = config(&server.base);
    config.snapshot_interval = interval;
    let shell = Shell::start(config);
    let events = shell.events();
    send_turn(&shell);
    wait_delta(&events, "mark");
    shell.input(Input::IsVisible(true)).unwrap();
    shell
        .wait_for(|s| thread_text(s).contains("mark"), WAIT)
        .expect("the first write published");
    (server, shell, events, gate)
}

/// The answer's finish arrives in a piece too small for the doubling to publish, and the
/// interval never passes: it is published at once all the same (a terminal fact), while the
/// answer's connection is still open (issue 12, point 1).
#[test]
fn the_finish_of_an_answer_is_not_held_back() {
    let rest = [
        sse(&json!({"type": "text-delta", "id": "t-1", "delta": "END"})),
        sse(&json!({"type": "text-end", "id": "t-1"})),
        sse(&json!({"type": "finish", "finishReason": "stop"})),
    ]
    .concat();
    let (_server, shell, _events, gate) = held_shell(rest, NEVER);
    gate.notify_one();
    let s = shell
        .wait_for(|s| thread_text(s).contains("END"), WAIT)
        .expect("the finish is published");
    assert!(s.has_active_chat_stream, "the body has not ended");
    shell.shutdown();
}

/// A held-back piece is published once the interval has passed, though nothing else arrives
/// (the last state is always published); with an interval that never passes it is held while
/// the answer is open, its event delivered at once all the same (issue 12, point 1).
#[test]
fn a_held_back_piece_is_published_after_the_interval() {
    for interval in [NEVER, Duration::from_millis(100)] {
        let rest = sse(&json!({"type": "text-delta", "id": "t-1", "delta": "tail"}));
        let (_server, shell, events, gate) = held_shell(rest, interval);
        gate.notify_one();
        wait_delta(&events, "tail");
        if interval == NEVER {
            assert!(
                !thread_text(&shell.snapshot()).contains("tail"),
                "held back"
            );
        } else {
            shell
                .wait_for(|s| thread_text(s).contains("tail"), WAIT)
                .expect("published after the interval");
        }
        shell.shutdown();
    }
}

/// What the process's tracing subscriber wrote (the one test that installs it).
#[derive(Clone, Default)]
struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Issue 24, point 5 (never silent): the shell logs each frame type the engine skipped, once
/// per answer, with the session's uid: an unknown type at `debug`, an invalid frame (a known
/// type with a bad field, a payload that is not a frame) at `warn`; the answer's text shows.
#[test]
fn skipped_frames_are_logged() {
    let buffer = LogBuffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    // The only test of this binary that installs one.
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let d = Dialect::Runtime;
    let server = Server::start(move |base| {
        answering(base, move || {
            let body = [
                event(d, &[("type", "start-step".into())]),
                event(d, &[("type", "x-future".into()), ("n", 1.into())]),
                event(d, &[("type", "x-future".into()), ("n", 2.into())]),
                event(d, &[("type", "text-start".into()), ("id", "text-0".into())]),
                event(d, &[("type", "text-delta".into()), ("textDelta", 7.into())]),
                "data: not a frame\n\n".to_owned(),
                text_delta(d, "Shown."),
                closing(d),
            ]
            .concat();
            Reply::Stream {
                content_type: "text/event-stream",
                steps: vec![Step::Send(body.into_bytes())],
                dropped: None,
            }
        })
    });
    let shell = Shell::start(config(&server.base));
    send_turn(&shell);
    shell
        .wait_for(
            |s| {
                thread_text(s).contains("Shown.")
                    && s.run_status == RunStatus::Complete
                    && !s.has_active_chat_stream
            },
            WAIT,
        )
        .expect("the answer completes, its text shown");
    shell.shutdown();
    let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("answer frame"))
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].contains("DEBUG") && lines[0].contains("session_uid=s-1 frame_type=\"x-future\""),
        "{text}"
    );
    assert!(
        lines[1].contains("WARN")
            && lines[1].contains("frame_type=\"text-delta\" why=\"invalid field"),
        "{text}"
    );
    assert!(
        lines[2].contains("WARN") && lines[2].contains("frame_type=\"(not a frame)\""),
        "{text}"
    );
}

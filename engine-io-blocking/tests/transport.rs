#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The blocking shell's transport against a small loopback fake platform: redirects are not
//! followed, and a long but lively streamed answer is not cut.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use engine_core::{Command, Config, Input, Person, ReadinessStatus, RunStatus, Secret};
use engine_io_blocking::{Shell, ShellConfig};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(5);

type Handler = Arc<dyn Fn(&str, &str, &str) -> Response + Send + Sync>;

struct Fake {
    base: String,
    seen: Arc<Mutex<Vec<String>>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for Fake {
    fn drop(&mut self) {
        if let Some(r) = self.runtime.take() {
            r.shutdown_background();
        }
    }
}

/// Serves `make(base)`; logs "METHOD PATH" of every request.
fn fake(make: impl FnOnce(&str) -> Handler) -> Fake {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let handler = make(&base);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let state = (handler, Arc::clone(&seen));
    let app = axum::Router::new()
        .fallback(
            |State((handler, seen)): State<(Handler, Arc<Mutex<Vec<String>>>)>,
             request: Request| async move {
                let method = request.method().to_string();
                let path = request.uri().path().to_owned();
                let query = request.uri().query().unwrap_or("").to_owned();
                seen.lock().unwrap().push(format!("{method} {path}"));
                handler(&method, &path, &query)
            },
        )
        .with_state(state);
    runtime.spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        axum::serve(listener, app).await.unwrap();
    });
    Fake {
        base,
        seen,
        runtime: Some(runtime),
    }
}

fn json_reply(status: u16, value: &Value) -> Response {
    (
        StatusCode::from_u16(status).unwrap(),
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn record() -> Value {
    json!({
        "uid": "s-1", "agent_uid": "agent-1", "agent_name": "Ledger Helper",
        "organization_environment_uid": "env-1", "name": "Session s-1",
        "status": "completed", "started_at": "2026-10-02T08:00:00Z", "ended_at": null,
        "llm_provider": "acme-cloud", "llm_model": "acme-large", "engine_name": "tau",
        "is_archived": false, "bound_handle": null
    })
}

/// The platform of session s-1 in env-1, whose Agent answers a turn with `frames` SSE events
/// paced `pace` apart.
fn platform(base: &str, frames: usize, pace: Duration) -> Handler {
    let rpc_url = format!("{base}/agents/s-1");
    Arc::new(move |method, path, _query| match (method, path) {
        ("GET", "/api/v1/agent-sessions/") => json_reply(
            200,
            &json!({"count": 1, "next": null, "previous": null, "results": [record()]}),
        ),
        ("GET", "/api/v1/agent-sessions/s-1/") => json_reply(200, &record()),
        ("GET", "/api/v1/agent-sessions/s-1/history/") => {
            json_reply(404, &json!({"detail": "Not found."}))
        }
        ("GET", "/api/v1/agent-sessions/s-1/insights/") => {
            json_reply(404, &json!({"detail": "Not found."}))
        }
        ("POST", "/api/v1/agent-sessions/s-1/resolve-runtime-access/") => json_reply(
            200,
            &json!({
                "session_uid": "s-1", "mode": "token", "rpc_url": rpc_url, "token": "rt",
                "is_ready": true,
                "runtime_interaction": {"state": "ready", "can_submit": true, "notice": null, "operation": null, "retry_after_ms": null},
                "runtime_presence": {"phase": "serving", "replicas": {"desired": 1, "actual": 1}, "detail": "Observed.", "observed_at": "2026-10-02T08:20:00Z", "wake": null}
            }),
        ),
        ("GET", "/api/v1/model-providers/") => json_reply(
            200,
            &json!({"schema_version": 1, "catalog_digest": "sha256:0", "providers": []}),
        ),
        ("GET", "/agents/s-1/api/chat") => json_reply(200, &json!({"status": "ready"})),
        ("POST", "/agents/s-1/api/chat") => {
            let mut events = vec![
                json!({"type": "start", "messageId": "msg-a"}),
                json!({"type": "start-step"}),
                json!({"type": "text-start", "id": "t-1"}),
            ];
            for i in 0..frames {
                events.push(json!({"type": "text-delta", "id": "t-1", "delta": format!("w{i} ")}));
            }
            events.push(json!({"type": "text-end", "id": "t-1"}));
            events.push(json!({"type": "finish-step"}));
            events.push(json!({"type": "finish", "finishReason": "stop"}));
            let mut pieces: Vec<String> = events.iter().map(|e| format!("data: {e}\n\n")).collect();
            pieces.push("data: [DONE]\n\n".into());
            let stream = futures_util::stream::unfold(
                (pieces.into_iter(), false),
                move |(mut it, paused)| async move {
                    if paused {
                        tokio::time::sleep(pace).await;
                    }
                    it.next()
                        .map(|p| (Ok::<_, std::io::Error>(p.into_bytes()), (it, true)))
                },
            );
            (
                [(header::CONTENT_TYPE, "text/event-stream")],
                Body::from_stream(stream),
            )
                .into_response()
        }
        _ => json_reply(404, &json!({"detail": "Not found."})),
    })
}

fn open(shell: &Shell) {
    shell
        .input(Input::Person(Person::new(
            "user-1",
            Secret::new("platform-token"),
        )))
        .unwrap();
    shell
        .input(Input::EnvironmentUid(Some("env-1".into())))
        .unwrap();
    shell.input(Input::IsVisible(true)).unwrap();
}

/// `stream_idle_timeout` is documented as a limit on silence ("the wait for the head and between
/// two pieces of the body"), but `RequestBuilder::timeout` in reqwest is a total deadline that
/// also covers the body: a streamed answer that never pauses longer than the limit is cut once
/// its whole duration passes it. (The tokio shell applies it per chunk.)
#[test]
fn a_long_but_lively_stream_is_not_cut() {
    // 20 deltas 100 ms apart (about 2.5 s in all), idle limit 600 ms.
    let server = fake(|base| platform(base, 20, Duration::from_millis(100)));
    let mut config = ShellConfig::new(Config::new(&server.base).unwrap().with_seed(1));
    config.stream_idle_timeout = Duration::from_millis(600);
    let shell = Shell::start(config);
    open(&shell);
    shell
        .wait_for(
            |s| s.active_session_readiness.status == ReadinessStatus::Ready && s.composer_admission,
            WAIT,
        )
        .expect("the composer admits");
    shell
        .command(Command::SendMessage { text: "go".into() })
        .unwrap();
    let done = shell
        .wait_for(
            |s| {
                matches!(s.run_status, RunStatus::Complete | RunStatus::Error)
                    && !s.has_active_chat_stream
                    && !s.is_agent_working
            },
            Duration::from_secs(10),
        )
        .expect("the turn ends");
    assert_eq!(
        done.run_status,
        RunStatus::Complete,
        "{:?}",
        done.run_status_detail
    );
    shell.shutdown();
}

/// The tokio shell does not follow redirects (the engine sees every status as sent, a
/// credential or a POST body never follows a redirect); the blocking client keeps reqwest's
/// default policy and follows up to ten of them.
#[test]
fn redirects_are_not_followed() {
    let server = fake(|_| {
        Arc::new(|_method, path, _query| match path {
            "/api/v1/agent-sessions/" => (
                StatusCode::TEMPORARY_REDIRECT,
                [(header::LOCATION, "/elsewhere/")],
                "",
            )
                .into_response(),
            _ => json_reply(
                200,
                &json!({"count": 0, "next": null, "previous": null, "results": []}),
            ),
        })
    });
    let shell = Shell::start(ShellConfig::new(
        Config::new(&server.base).unwrap().with_seed(1),
    ));
    open(&shell);
    // The list read goes out, then ends one way or the other.
    let deadline = std::time::Instant::now() + WAIT;
    while !server
        .seen
        .lock()
        .unwrap()
        .iter()
        .any(|s| s == "GET /api/v1/agent-sessions/")
    {
        assert!(std::time::Instant::now() < deadline, "no list read");
        std::thread::sleep(Duration::from_millis(10));
    }
    shell
        .wait_for(|s| !s.is_loading_latest_sessions, WAIT)
        .expect("the list read ends");
    let seen = server.seen.lock().unwrap().clone();
    assert!(
        !seen.iter().any(|s| s.contains("/elsewhere/")),
        "the redirect was followed: {seen:?}"
    );
    shell.shutdown();
}

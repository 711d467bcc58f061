//! Both shells end to end on loopback, next to a floor (issue 12, point 5).
//!
//! A minimal platform in the bench (axum on a runtime of its own) serves one session, its
//! history (empty-ish, or `HISTORY` messages), its runtime access, the Agent's confirmation, and
//! a streamed answer of 100,000 text deltas (a seeded token stream, the shape of
//! `engine-core/benches/answer_stream.rs`'s `tokens-100k`), written either in 16 KiB slices or
//! one SSE event per write (as an AI SDK server writes a token stream: the client then reads
//! many small chunks). Per run:
//!
//! - (a) the floor: raw reqwest posting to the same address and reading the same body, each
//!   chunk fed to engine-core's bare `AnswerStream`;
//! - (b) the tokio shell: a session ready, one `SendMessage`, until a published snapshot says the
//!   answer has ended (`run_status` complete, no active stream);
//! - (c) the blocking shell likewise.
//!
//! Only the send → end time counts (the session is opened before the clock starts). Each figure
//! is the least of `RUNS` interleaved runs, with a fresh shell per run. The bench prints the
//! ratios (b)/(a), (c)/(a) for an empty thread and a 400-message thread, and what each shell
//! did (`Stats`): snapshots computed, published, and their share of the shell's time.
//!
//!     cargo bench -p engine-io-blocking --bench end_to_end
//!
//! `END_TO_END_RUNS=n` changes the number of runs (default 5); `END_TO_END_DELTAS=n` the size
//! of the answer (default 100,000); `END_TO_END_INTERVAL_MS=n` both shells' `snapshot_interval`
//! (default: the shells' default); `END_TO_END_ONLY=<floor|tokio|blocking>:<slices|events>`
//! runs only that, with the 400-message history, `RUNS` times (for a profiler).

#![allow(
    missing_docs,
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use engine_core::message::{Message, MessageStatus, Part};
use engine_core::{
    AnswerStream, Command, Config, Input, Person, ReadinessStatus, RunStatus, Secret, Snapshot,
};
use serde_json::{Value, json};

const SESSION: &str = "s-1";
const TOKEN: &str = "platform-token";
const SLICE: usize = 16 * 1024;
const WAIT: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------------------------
// The answer: a seeded token stream

/// mulberry32, as the anchor generator and `answer_stream.rs`.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x6d2b_79f5);
        let mut t = (self.0 ^ (self.0 >> 15)).wrapping_mul(1 | self.0);
        t = (t.wrapping_add((t ^ (t >> 7)).wrapping_mul(61 | t))) ^ t;
        f64::from(t ^ (t >> 14)) / 4_294_967_296.0
    }

    fn int(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() * (hi - lo + 1) as f64) as usize
    }
}

const WORDS: &[&str] = &[
    "the",
    "of",
    "and",
    "stream",
    "parser",
    "message",
    "chunk",
    "buffer",
    "event",
    "token",
    "model",
    "answer",
    "request",
    "state",
    "client",
    "server",
    "value",
    "field",
    "tool",
    "step",
    "café",
    "naïve",
    "→",
    "“quoted”",
    "\"escaped\"",
    "🚀",
    "日本語",
    "line\nbreak",
];

/// The SSE body of one answer of `deltas` text deltas of 3 to 6 characters.
fn answer_body(deltas: usize) -> Bytes {
    let mut rng = Rng(1);
    let mut prose: Vec<char> = Vec::new();
    let mut body = Vec::new();
    let event = |body: &mut Vec<u8>, chunk: Value| {
        body.extend_from_slice(b"data: ");
        serde_json::to_writer(&mut *body, &chunk).unwrap();
        body.extend_from_slice(b"\n\n");
    };
    event(
        &mut body,
        json!({"type": "start", "messageId": "msg-bench"}),
    );
    event(&mut body, json!({"type": "start-step"}));
    event(&mut body, json!({"type": "text-start", "id": "txt-0"}));
    for _ in 0..deltas {
        let chars = rng.int(3, 6);
        while prose.len() < chars {
            let word = WORDS[(rng.next() * WORDS.len() as f64) as usize];
            prose.extend(word.chars());
            prose.push(' ');
        }
        let delta: String = prose.drain(..chars).collect();
        event(
            &mut body,
            json!({"type": "text-delta", "id": "txt-0", "delta": delta}),
        );
    }
    event(&mut body, json!({"type": "text-end", "id": "txt-0"}));
    event(&mut body, json!({"type": "finish-step"}));
    event(&mut body, json!({"type": "finish", "finishReason": "stop"}));
    body.extend_from_slice(b"data: [DONE]\n\n");
    Bytes::from(body)
}

// ---------------------------------------------------------------------------------------------
// The platform

struct Platform {
    base: String,
    /// The answer, in the pieces the server writes.
    answer: Vec<Bytes>,
    history: Value,
}

/// How the server writes the answer.
#[derive(Debug, Clone, Copy)]
enum Writes {
    /// 16 KiB at a time.
    Slices,
    /// One SSE event at a time, as an AI SDK server writes a token stream.
    Events,
}

/// The answer cut into the server's writes (cheap: each is a view of the same bytes).
fn pieces(answer: &Bytes, writes: Writes) -> Vec<Bytes> {
    match writes {
        Writes::Slices => (0..answer.len())
            .step_by(SLICE)
            .map(|at| answer.slice(at..(at + SLICE).min(answer.len())))
            .collect(),
        Writes::Events => {
            let mut out = Vec::new();
            let mut from = 0;
            for end in event_ends(answer) {
                out.push(answer.slice(from..end));
                from = end;
            }
            out
        }
    }
}

/// The offsets just past each `\n\n`.
fn event_ends(bytes: &[u8]) -> Vec<usize> {
    bytes
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w == b"\n\n")
        .map(|(i, _)| i + 2)
        .collect()
}

fn history(messages: usize) -> Value {
    let messages: Vec<Value> = (0..messages)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            let text = format!("Message {i}: the ledger for quarter {} totals {}.", i % 4 + 1, 1000 + i);
            json!({"id": format!("m-{i}"), "role": role, "content": [{"type": "text", "text": text}]})
        })
        .collect();
    json!({
        "version": 1,
        "session": {"sessionId": SESSION, "threadId": SESSION, "agentName": "Bench Agent", "status": "completed"},
        "messages": messages,
        "inProgressMessage": null
    })
}

fn record(env: &str) -> Value {
    json!({
        "uid": SESSION, "agent_uid": "agent-1", "agent_name": "Bench Agent",
        "organization_environment_uid": env, "name": "Bench session",
        "status": "completed", "started_at": "2026-10-02T08:00:00Z", "ended_at": null,
        "llm_provider": "acme-cloud", "llm_model": "acme-large", "engine_name": "tau",
        "is_archived": false, "bound_handle": null
    })
}

fn json_response(body: Value) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn stream(answer: &[Bytes]) -> Response {
    let slices: Vec<Result<Bytes, std::io::Error>> = answer.iter().cloned().map(Ok).collect();
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        Body::from_stream(futures_util::stream::iter(slices)),
    )
        .into_response()
}

async fn handle(State(platform): State<Arc<Platform>>, method: Method, uri: Uri) -> Response {
    let session = format!("/api/v1/agent-sessions/{SESSION}/");
    let path = uri.path();
    match (method, path) {
        (Method::GET, "/api/v1/agent-sessions/") => json_response(
            json!({"count": 1, "next": null, "previous": null, "results": [record("env-1")]}),
        ),
        (Method::GET, p) if p == session => json_response(record("env-1")),
        (Method::GET, p) if p == format!("{session}history/") => {
            json_response(platform.history.clone())
        }
        (Method::GET, p) if p == format!("{session}insights/") => {
            json_response(json!({"agent_session_uid": SESSION, "has_insights": false}))
        }
        (Method::POST, p) if p == format!("{session}resolve-runtime-access/") => {
            json_response(json!({
                "session_uid": SESSION, "mode": "token", "rpc_url": format!("{}/rt", platform.base),
                "token": "rt-token", "is_ready": true,
                "runtime_interaction": {"state": "ready", "can_submit": true, "notice": null, "operation": null, "retry_after_ms": null},
                "runtime_presence": {"phase": "serving", "replicas": {"desired": 1, "actual": 1}, "detail": "Observed.", "observed_at": "2026-10-02T08:20:00Z", "wake": null}
            }))
        }
        (Method::GET, "/rt/api/chat") => json_response(json!({"status": "ready"})),
        (Method::POST, "/rt/api/chat") => stream(&platform.answer),
        _ => (StatusCode::NOT_FOUND, "{}").into_response(),
    }
}

/// Serves on 127.0.0.1:0 from a one-worker runtime of its own; returns the base address.
fn serve(runtime: &tokio::runtime::Runtime, answer: Vec<Bytes>, history: Value) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let platform = Arc::new(Platform {
        base: base.clone(),
        answer,
        history,
    });
    let app = Router::new().fallback(handle).with_state(platform);
    runtime.spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        axum::serve(listener, app).await.unwrap();
    });
    base
}

// ---------------------------------------------------------------------------------------------
// The three runs

/// [`floor`] as a task of the host runtime's worker, beside reqwest's connection task: from
/// `block_on` (the main thread) every body chunk would cross threads (a futex wake-up per
/// chunk: 3.4-6 s instead of ~0.1 s for 100,000 one-event chunks on this machine).
fn run_floor(
    host: &tokio::runtime::Runtime,
    client: &reqwest::Client,
    base: &str,
) -> (Duration, usize, usize) {
    let (client, base) = (client.clone(), base.to_owned());
    host.block_on(host.spawn(async move { floor(&client, &base).await }))
        .unwrap()
}

/// (a) raw reqwest reading the answer, each chunk fed to a bare `AnswerStream`.
async fn floor(client: &reqwest::Client, base: &str) -> (Duration, usize, usize) {
    let start = Instant::now();
    let mut response = client
        .post(format!("{base}/rt/api/chat"))
        .body("{}")
        .send()
        .await
        .unwrap();
    let mut stream = AnswerStream::new("local".to_owned(), 1 << 24);
    let mut deltas = Vec::new();
    let mut chunks = 0;
    while let Some(chunk) = response.chunk().await.unwrap() {
        chunks += 1;
        stream.feed(&chunk, &mut deltas);
        deltas.clear();
    }
    stream.end(&mut deltas);
    let elapsed = start.elapsed();
    assert_eq!(stream.message().parts.len(), 2, "step-start and the text");
    (elapsed, chunks, text_bytes(stream.message()))
}

fn inputs() -> Vec<Input> {
    vec![
        Input::Person(Person::new("user-1", Secret::new(TOKEN))),
        Input::EnvironmentUid(Some("env-1".into())),
        Input::IsVisible(true),
    ]
}

fn ready(s: &Snapshot) -> bool {
    s.active_session_readiness.status == ReadinessStatus::Ready && s.composer_admission
}

/// The answer is the thread's last message, complete, and the run is over.
fn ended(s: &Snapshot) -> bool {
    s.run_status == RunStatus::Complete
        && !s.has_active_chat_stream
        && s.thread
            .last()
            .is_some_and(|m| m.id == "msg-bench" && m.status == MessageStatus::Complete)
}

fn send() -> Command {
    Command::SendMessage { text: "Go".into() }
}

fn config(base: &str) -> Config {
    Config::new(base).unwrap().with_seed(1)
}

/// The bytes of a message's text parts.
fn text_bytes(message: &Message) -> usize {
    message
        .parts
        .iter()
        .map(|p| match p {
            Part::Text(t) => t.text.len(),
            _ => 0,
        })
        .sum()
}

/// What a shell run measured.
struct ShellRun {
    elapsed: Duration,
    stats: engine_io_blocking::Stats,
    thread: usize,
    /// The answer's text bytes, as the last snapshot shows them.
    text: usize,
}

/// (b) the tokio shell.
async fn tokio_shell(base: &str, interval: Option<Duration>) -> ShellRun {
    let mut shell = engine_io_tokio::ShellConfig::new(config(base));
    if let Some(interval) = interval {
        shell.snapshot_interval = interval;
    }
    let (handle, task) = engine_io_tokio::spawn(shell);
    for input in inputs() {
        handle.input(input).unwrap();
    }
    handle.wait_for(ready, WAIT).await.expect("ready");
    let before = handle.stats();
    let start = Instant::now();
    handle.command(send()).unwrap();
    let s = handle
        .wait_for(ended, WAIT)
        .await
        .expect("the answer ended");
    let elapsed = start.elapsed();
    let stats = handle.stats().since(&before);
    handle.shutdown().await;
    task.await.unwrap();
    ShellRun {
        elapsed,
        stats,
        thread: s.thread.len(),
        text: s.thread.last().map_or(0, |m| text_bytes(m)),
    }
}

/// (c) the blocking shell (from a thread outside any runtime).
fn blocking_shell(base: &str, interval: Option<Duration>) -> ShellRun {
    let mut config = engine_io_blocking::ShellConfig::new(config(base));
    if let Some(interval) = interval {
        config.snapshot_interval = interval;
    }
    let shell = engine_io_blocking::Shell::start(config);
    for input in inputs() {
        shell.input(input).unwrap();
    }
    shell.wait_for(ready, WAIT).expect("ready");
    let before = shell.stats();
    let start = Instant::now();
    shell.command(send()).unwrap();
    let s = shell.wait_for(ended, WAIT).expect("the answer ended");
    let elapsed = start.elapsed();
    let stats = shell.stats().since(&before);
    shell.shutdown();
    ShellRun {
        elapsed,
        stats,
        thread: s.thread.len(),
        text: s.thread.last().map_or(0, |m| text_bytes(m)),
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    // `cargo bench` passes `--bench`; a filter that is not ours means another bench's run.
    if std::env::args()
        .skip(1)
        .any(|a| a != "--bench" && !a.starts_with('-'))
    {
        return;
    }
    let runs = env_usize("END_TO_END_RUNS", 5);
    let deltas = env_usize("END_TO_END_DELTAS", 100_000);
    let interval = std::env::var("END_TO_END_INTERVAL_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis);
    let answer = answer_body(deltas);
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let host = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let client = reqwest::Client::new();
    if let Ok(only) = std::env::var("END_TO_END_ONLY") {
        let (what, writes) = only.split_once(':').unwrap_or((only.as_str(), "events"));
        let writes = if writes == "slices" {
            Writes::Slices
        } else {
            Writes::Events
        };
        let base = serve(&server, pieces(&answer, writes), history(400));
        for _ in 0..runs {
            let elapsed = match what {
                "floor" => run_floor(&host, &client, &base).0,
                "tokio" => host.block_on(tokio_shell(&base, interval)).elapsed,
                _ => blocking_shell(&base, interval).elapsed,
            };
            println!("{what} {writes:?}: {:.1} ms", ms(elapsed));
        }
        return;
    }
    println!(
        "end_to_end: {deltas} deltas, {} bytes, least of {runs} interleaved runs, snapshot_interval {}",
        answer.len(),
        interval.map_or("default".to_owned(), |d| format!("{} ms", d.as_millis()))
    );
    for (writes, messages) in [
        (Writes::Slices, 0_usize),
        (Writes::Slices, 400),
        (Writes::Events, 0),
        (Writes::Events, 400),
    ] {
        let base = serve(&server, pieces(&answer, writes), history(messages));
        let mut best = [Duration::MAX; 3];
        let mut chunks = 0;
        let mut notes: [Option<ShellRun>; 2] = [None, None];
        for _ in 0..runs {
            let (a, n, text) = run_floor(&host, &client, &base);
            chunks = n;
            let b = host.block_on(tokio_shell(&base, interval));
            let c = blocking_shell(&base, interval);
            assert_eq!(
                (b.text, c.text),
                (text, text),
                "the whole answer in the last snapshot"
            );
            best[0] = best[0].min(a);
            if b.elapsed < best[1] {
                best[1] = b.elapsed;
                notes[0] = Some(b);
            }
            if c.elapsed < best[2] {
                best[2] = c.elapsed;
                notes[1] = Some(c);
            }
        }
        let [a, b, c] = best;
        println!(
            "{writes:?}, history {messages:>3}: floor {:8.1} ms ({chunks} chunks) | tokio {:8.1} ms = {:5.2}x | blocking {:8.1} ms = {:5.2}x",
            ms(a),
            ms(b),
            b.as_secs_f64() / a.as_secs_f64(),
            ms(c),
            c.as_secs_f64() / a.as_secs_f64(),
        );
        for (name, run) in ["tokio", "blocking"].iter().zip(&notes) {
            if let Some(run) = run {
                let snapshots = run.stats.snapshot_time.as_secs_f64();
                let over = run.elapsed.saturating_sub(a).as_secs_f64();
                println!(
                    "    {name:<8} thread {} messages; snapshots computed {}, published {}, taking {:.1} ms = {:.1}% of the run, {:.0}% of its time over the floor",
                    run.thread,
                    run.stats.snapshots,
                    run.stats.published,
                    ms(run.stats.snapshot_time),
                    100.0 * snapshots / run.elapsed.as_secs_f64(),
                    if over > 0.0 {
                        100.0 * snapshots / over
                    } else {
                        0.0
                    },
                );
            }
        }
    }
    server.shutdown_background();
}

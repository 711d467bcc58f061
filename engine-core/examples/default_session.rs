//! Drives the engine through a default-session scenario against a scripted platform and Agent:
//! the default session opens and loads, its runtime access is confirmed, a message is sent and
//! its answer streams back in pieces. Prints every intent and event, then the thread. This is how
//! a shell uses the engine: feed an input, drain intents and events, answer requests, repeat.
//!
//! Run: `cargo run -p engine-core --example default_session`

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use engine_core::{
    ApiCall, Command, Config, DefaultSession, Engine, Input, Intent, Person, RequestId,
    ResponseHead, Secret, SourceStatus, Time,
};
use serde_json::{Value, json};

/// The Agent's answer to a turn: a ui-message-stream, in three pieces cut mid-event.
const ANSWER: &str = concat!(
    "data: {\"type\":\"start\",\"messageId\":\"msg-7\"}\n\n",
    "data: {\"type\":\"text-start\",\"id\":\"t-7\"}\n\n",
    "data: {\"type\":\"text-delta\",\"id\":\"t-7\",\"delta\":\"Q3 revenue rose \"}\n\n",
    "data: {\"type\":\"text-delta\",\"id\":\"t-7\",\"delta\":\"4% over Q2.\"}\n\n",
    "data: {\"type\":\"text-end\",\"id\":\"t-7\"}\n\n",
    "data: {\"type\":\"finish\"}\n\n",
    "data: [DONE]\n\n",
);

/// The scripted platform and Agent: the status and body pieces of each answer.
fn answer(call: &ApiCall) -> (u16, Vec<Bytes>) {
    if let ApiCall::SendMessage { .. } = call {
        let pieces = [&ANSWER[..70], &ANSWER[70..200], &ANSWER[200..]];
        return (
            200,
            pieces.iter().map(|p| Bytes::from(p.to_string())).collect(),
        );
    }
    let (status, body) = platform(call);
    (status, vec![Bytes::from(body.to_string())])
}

/// The scripted platform: one answer per call kind.
fn platform(call: &ApiCall) -> (u16, Value) {
    let record = |uid: &str| {
        json!({
            "uid": uid, "agent_uid": "agent-1", "agent_name": "Ledger Helper",
            "organization_environment_uid": "env-1", "name": "Ledger chat", "status": "completed",
            "started_at": "2026-10-02T08:15:00Z", "ended_at": null,
            "bound_handle": {"uid": "h-1", "handle_unique_id": "ledger_default", "owner_user_uid": "user-1", "is_locked": false}
        })
    };
    match call {
        ApiCall::ListSessions { .. } => (
            200,
            json!({"count": 0, "next": null, "previous": null, "results": []}),
        ),
        ApiCall::GetOrCreateSession { .. } => (201, record("session-1")),
        ApiCall::GetSessionDetail { session_uid, .. } => (200, record(session_uid)),
        ApiCall::GetSessionHistory { session_uid } => (
            200,
            json!({"session": {"sessionId": session_uid, "threadId": session_uid, "status": "completed"},
                   "messages": [{"id": "m-1", "role": "user", "content": [{"type": "text", "text": "Total for Q3?"}]},
                                {"id": "m-2", "role": "assistant", "content": [{"type": "text", "text": "Q3 totals 4120."}]}]}),
        ),
        ApiCall::GetSessionInsights { session_uid } => (
            200,
            json!({"agent_session_uid": session_uid, "has_insights": false}),
        ),
        ApiCall::ResolveRuntimeAccess { session_uid } => (
            200,
            json!({"session_uid": session_uid, "mode": "token",
                   "rpc_url": "https://agent.example.test/rt/session-1", "token": "runtime-token",
                   "runtime_interaction": {"state": "ready", "can_submit": true, "notice": null,
                                           "operation": null, "retry_after_ms": null},
                   "runtime_presence": {"phase": "serving", "detail": "Serving.", "wake": null}}),
        ),
        ApiCall::ConfirmAgent { .. } => (200, json!({"status": "ready"})),
        _ => (404, json!({"detail": "Not found."})),
    }
}

/// Drains the engine; returns the requests to answer.
fn drain(engine: &mut Engine, t: u64) -> Vec<(RequestId, ApiCall)> {
    let mut out = Vec::new();
    while let Some(intent) = engine.poll_intent() {
        match intent {
            Intent::Http { id, call, request } => {
                println!("+{t}ms {id} {} {}", request.method.as_str(), request.url());
                out.push((id, call));
            }
            Intent::Abort { id } => println!("+{t}ms abort {id}"),
            Intent::Storage(s) => println!(
                "+{t}ms storage {}",
                serde_json::to_string(&s).unwrap_or_default()
            ),
        }
    }
    while let Some(event) = engine.poll_event() {
        println!(
            "+{t}ms event {}",
            serde_json::to_string(&event).unwrap_or_default()
        );
    }
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A virtual clock: plain `Time` values, here from an arbitrary origin. A real host passes its
    // own monotonic reading (or `InstantClock::time(Instant::now())`).
    let start = Time::from_millis(5_000);
    let at = |ms: u64| start + Duration::from_millis(ms);
    let mut engine = Engine::new(Config::new("https://platform.example.test")?, start);
    let inputs = [
        Input::Person(Person::new("user-1", Secret::new("platform-token"))),
        Input::EnvironmentUid(Some("env-1".into())),
        Input::DefaultSession(Some(DefaultSession {
            agent_uid: Some("agent-1".into()),
            handle_unique_id: "ledger_default".into(),
            name: "Ledger chat".into(),
            status: SourceStatus::Ready,
            unavailable_message: None,
        })),
        Input::ShowsDefaultSession(true),
        Input::IsVisible(true),
    ];
    let mut queue = VecDeque::new();
    for input in inputs {
        engine.handle_input(input, at(0));
        queue.extend(drain(&mut engine, 0));
    }
    let mut t = 0;
    answer_all(&mut engine, start, &mut queue, &mut t);
    // The session is ready and its Agent confirmed: send a message.
    let send = Command::SendMessage {
        text: "How did Q3 go?".into(),
    };
    engine.handle_input(Input::Command(send), at(t));
    queue.extend(drain(&mut engine, t));
    answer_all(&mut engine, start, &mut queue, &mut t);
    let snapshot = engine.snapshot();
    println!("{}", serde_json::to_string_pretty(&snapshot.thread)?);
    println!(
        "defaultSessionStatus={:?} runStatus={:?}",
        snapshot.default_session_status, snapshot.run_status
    );
    Ok(())
}

/// The platform answers each request 20 ms after it was sent, in order, piece by piece.
fn answer_all(
    engine: &mut Engine,
    start: Time,
    queue: &mut VecDeque<(RequestId, ApiCall)>,
    t: &mut u64,
) {
    while let Some((id, call)) = queue.pop_front() {
        *t += 20;
        let now = start + Duration::from_millis(*t);
        let (status, pieces) = answer(&call);
        let content_type = match call {
            ApiCall::SendMessage { .. } => "text/event-stream",
            _ => "application/json",
        };
        let head = ResponseHead::new(status, Some(content_type.into()));
        engine.handle_response(id, head, now);
        queue.extend(drain(engine, *t));
        for piece in pieces {
            engine.handle_body_chunk(id, piece, now);
            queue.extend(drain(engine, *t));
        }
        engine.handle_body_end(id, now);
        queue.extend(drain(engine, *t));
    }
}

//! Drives the engine through a default-session scenario against a scripted platform, printing
//! every intent, event and the final snapshot. This is how a shell uses the engine: feed an
//! input, drain intents and events, answer requests, repeat.
//!
//! Run: `cargo run -p engine-core --example default_session`

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;
use engine_core::{
    ApiCall, Config, DefaultSession, Engine, Input, Intent, Person, RequestId, ResponseHead,
    Secret, SourceStatus,
};
use serde_json::{Value, json};

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
    let start = Instant::now();
    let at = |ms: u64| start + Duration::from_millis(ms);
    let mut engine = Engine::new(Config::new("https://platform.example.test")?, start);
    let inputs = [
        Input::Person(Person {
            user_uid: Some("user-1".into()),
            token: Some(Secret::new("platform-token")),
            token_type: None,
        }),
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
    // The platform answers each request 20 ms after it was sent, in order.
    let mut t = 0;
    while let Some((id, call)) = queue.pop_front() {
        t += 20;
        let (status, body) = platform(&call);
        engine.handle_response(id, ResponseHead::json(status), at(t));
        engine.handle_body_chunk(id, Bytes::from(body.to_string()), at(t));
        engine.handle_body_end(id, at(t));
        queue.extend(drain(&mut engine, t));
    }
    println!("{}", serde_json::to_string_pretty(&engine.snapshot())?);
    Ok(())
}

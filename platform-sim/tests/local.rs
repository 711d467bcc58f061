//! The simulated local Agent runtime (ADR 099, `platform-api.md` section 8) over real HTTP on
//! loopback, read with engine-core's own local readers (`engine_core::api::local`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

mod common;
use common::{assemble, text_of};
use engine_core::api::local::{
    MANAGED_MODE_TEXT, Readiness, parse_local_agent, parse_local_sessions, parse_session_model,
    read_health, read_ready, runtime_session_uid,
};
use engine_core::api::parse_history;
use platform_sim::{LocalRuntime, SESSION_HEADER, Sim, SimConfig};
use serde_json::{Value, json};

struct Reply {
    status: u16,
    session: Option<String>,
    body: Vec<u8>,
}

async fn call(sim: &Sim, method: reqwest::Method, path: &str, body: Option<Value>) -> Reply {
    let client = reqwest::Client::new();
    let mut request = client.request(method, format!("{}{path}", sim.url()));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = response.bytes().await.unwrap().to_vec();
    Reply {
        status,
        session,
        body,
    }
}

async fn local_sim(local: LocalRuntime) -> Sim {
    let config = SimConfig {
        local: Some(local),
        answer_delay_ms: 0,
        ..SimConfig::default()
    };
    Sim::start(config).await.unwrap()
}

fn turn_body(id: &str, text: &str) -> Value {
    json!({"messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
        "tools": {}, "runtime_session_uid": id, "threadId": id})
}

async fn get(sim: &Sim, path: &str) -> Reply {
    call(sim, reqwest::Method::GET, path, None).await
}

/// A turn under `id`: its answer's text and the conversation the runtime named.
async fn post_turn(sim: &Sim, id: &str, text: &str) -> (String, Option<String>) {
    let r = call(
        sim,
        reqwest::Method::POST,
        "/api/chat",
        Some(turn_body(id, text)),
    )
    .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    (text_of(&assemble(&r.body)), r.session)
}

/// ADR 099 admission: `/ready` says `ok: true`, `/health` names the local mode, the chat probe
/// answers 2xx; a runtime in another mode is one the engine's reader refuses.
#[tokio::test]
async fn admission_routes() {
    let sim = local_sim(LocalRuntime::default()).await;
    let r = get(&sim, "/ready").await;
    assert_eq!(read_ready(r.status, &r.body), Readiness::Ready);
    let r = get(&sim, "/health").await;
    assert_eq!(read_health(r.status, &r.body), None);
    let r = get(&sim, "/api/chat").await;
    assert_eq!(r.status, 200);
    let r = get(&sim, "/api/local/v1/agent").await;
    assert_eq!(parse_local_agent(&r.body).as_deref(), Some("Local Agent"));
    sim.shutdown().await;

    let managed = LocalRuntime {
        mode: "managed".into(),
        ..LocalRuntime::default()
    };
    let sim = local_sim(managed).await;
    let r = get(&sim, "/health").await;
    assert_eq!(read_health(r.status, &r.body), Some(MANAGED_MODE_TEXT));
    sim.shutdown().await;
}

/// A runtime that is still loading: `/ready` says `ok: false` with its detail for the first
/// checks, and the probe and turns answer 503 until then.
#[tokio::test]
async fn a_runtime_that_becomes_ready() {
    let sim = local_sim(LocalRuntime {
        ready_after: 2,
        ..LocalRuntime::default()
    })
    .await;
    for _ in 0..2 {
        let r = get(&sim, "/ready").await;
        assert_eq!(
            read_ready(r.status, &r.body),
            Readiness::NotReady("The local Agent is loading its model.".into())
        );
        let r = get(&sim, "/api/chat").await;
        assert_eq!(r.status, 503);
    }
    let r = get(&sim, "/ready").await;
    assert_eq!(read_ready(r.status, &r.body), Readiness::Ready);
    let r = get(&sim, "/api/chat").await;
    assert_eq!(r.status, 200);
    sim.shutdown().await;
}

/// A new conversation's first turn goes out under the client's id; the runtime answers under
/// its own id in `X-Agent-Session-Uid`, lists it, serves its history and its model; the next
/// turn under the runtime's id stays in it. `default` is always the same conversation, and so is
/// a client id.
#[tokio::test]
async fn conversations_get_the_runtimes_id() {
    let sim = local_sim(LocalRuntime::default()).await;
    let (text, session) = post_turn(&sim, "client-1", "Hello").await;
    let uid = runtime_session_uid(session.as_deref()).unwrap();
    assert!(uid.starts_with("local-") && uid != "client-1", "{uid}");
    assert_eq!(text, "You said: Hello");
    let (text, session) = post_turn(&sim, &uid, "Again").await;
    assert_eq!(session.as_deref(), Some(uid.as_str()));
    assert_eq!(text, "You said: Again");

    let r = get(&sim, "/api/local/v1/chat-sessions?limit=50").await;
    let rows = parse_local_sessions(&r.body).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].session_uid, uid);
    assert_eq!(rows[0].title.as_deref(), Some("Hello"));
    assert_eq!(rows[0].message_count, 4);

    let path = format!("/api/local/v1/chat-sessions/{uid}/history");
    let r = get(&sim, &path).await;
    let history = parse_history(&r.body).unwrap();
    assert_eq!(history.messages.len(), 4);

    let path = format!("/api/chat/session-model?sessionUid={uid}");
    let r = get(&sim, &path).await;
    let model = parse_session_model(&r.body).unwrap();
    assert_eq!(model.session_uid.as_deref(), Some(uid.as_str()));
    let r = call(
        &sim,
        reqwest::Method::PUT,
        "/api/chat/session-model",
        Some(json!({"sessionUid": uid, "provider": model.provider, "model": model.model, "thinkingLevel": null})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));

    for _ in 0..2 {
        let (_, session) = post_turn(&sim, "default", "Hi").await;
        assert_eq!(session.as_deref(), Some("local-default"));
    }
    // As the reference's stand-in: a client id always maps to the same conversation, and
    // every route takes the client's id for it (a client id read back after a reload).
    let (_, again) = post_turn(&sim, "client-1", "Once more").await;
    assert_eq!(again.as_deref(), Some(uid.as_str()));
    let r = get(&sim, "/api/chat/session-model?sessionUid=client-1").await;
    assert_eq!(
        parse_session_model(&r.body).and_then(|m| m.session_uid),
        Some(uid.clone())
    );
    let r = get(&sim, "/api/local/v1/chat-sessions/client-1/history").await;
    assert_eq!(parse_history(&r.body).unwrap().messages.len(), 6);
    let r = call(
        &sim,
        reqwest::Method::POST,
        "/api/chat/session/cancel",
        Some(json!({"sessionUid": "client-1", "message": "user_requested"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    sim.shutdown().await;
}

/// What a local runtime refuses: a credential, a `session` or `newChat` in the body, a
/// `threadId` that is not the conversation's id; a live-only runtime answers 404 to its list and
/// histories.
#[tokio::test]
async fn refusals_and_a_live_only_runtime() {
    let sim = local_sim(LocalRuntime {
        lists_sessions: false,
        ..LocalRuntime::default()
    })
    .await;
    let client = reqwest::Client::new();
    let r = client
        .get(format!("{}/ready", sim.url()))
        .header("Authorization", "Bearer nope")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    assert!(!sim.log().last().unwrap().authorized);
    for extra in [
        json!({"session": {}}),
        json!({"newChat": true}),
        json!({"threadId": "other"}),
    ] {
        let mut body = turn_body("client-1", "Hello");
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let r = call(&sim, reqwest::Method::POST, "/api/chat", Some(body)).await;
        assert_eq!(r.status, 400, "{extra}");
    }
    let r = get(&sim, "/api/local/v1/chat-sessions?limit=50").await;
    assert_eq!(r.status, 404);
    let r = get(&sim, "/api/local/v1/chat-sessions/local-1/history").await;
    assert_eq!(r.status, 404);
    assert!(
        sim.log()[1..].iter().all(|r| r.authorized),
        "no credential sent"
    );
    sim.shutdown().await;
}

//! RU-50 to RU-53: the simulator refuses as the reference's stand-in does, with its statuses and
//! texts: routing before credentials, the platform's and the runtime's refusals, and a turn it
//! fails. Each test starts its simulator on loopback.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use platform_sim::{AnswerStyle, DEFAULT_PLATFORM_TOKEN, REFUSED_TURN_TEXT, Sim, SimConfig};
use reqwest::Method;
use serde_json::{Value, json};

const AGENT: &str = "agent-demo";
const UNAUTHENTICATED: &str = "Authentication credentials were not provided or are not valid.";

/// One request: status and body (JSON, or the text as a JSON string).
async fn call(method: Method, url: &str, token: Option<&str>, body: Option<Value>) -> (u16, Value) {
    let mut request = reqwest::Client::new().request(method, url);
    if let Some(token) = token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    if let Some(body) = body {
        request = request
            .header("Content-Type", "application/json")
            .body(body.to_string());
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, body)
}

fn detail(text: &str) -> Value {
    json!({ "detail": text })
}

/// The platform, authenticated.
async fn platform(sim: &Sim, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let url = format!("{}{path}", sim.url());
    call(method, &url, Some(DEFAULT_PLATFORM_TOKEN), body).await
}

/// A session of the default Agent by handle (P8) and its runtime access (P11):
/// `(uid, rpc_url, runtime token)`.
async fn session(sim: &Sim, body: Value) -> (String, String, String) {
    let path = format!("/api/v1/agents/{AGENT}/sessions/get-or-create-session/");
    let (status, record) = platform(sim, Method::POST, &path, Some(body)).await;
    assert!(status == 200 || status == 201, "{status} {record}");
    let uid = record["uid"].as_str().unwrap().to_owned();
    let path = format!("/api/v1/agent-sessions/{uid}/resolve-runtime-access/");
    let (status, access) = platform(sim, Method::POST, &path, Some(json!({}))).await;
    assert_eq!(status, 200, "{access}");
    assert_eq!(access["runtime_presence"]["phase"], "serving");
    assert_eq!(
        access["runtime_presence"]["detail"],
        "The Agent is running."
    );
    let rpc = access["rpc_url"].as_str().unwrap().to_owned();
    let token = access["token"].as_str().unwrap().to_owned();
    (uid, rpc, token)
}

/// The R2 body for `uid` with this text (the session record as `session`).
fn turn_body(uid: &str, session_uid: &str, text: &str) -> Value {
    json!({
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
        "tools": {},
        "runConfig": {},
        "user_uid": "user-demo",
        "threadId": uid,
        "runtime_session_uid": uid,
        "session": {"uid": session_uid},
    })
}

/// RU-50: anything outside the platform API and the Agents' runtimes is 404 naming the
/// address; a path without a route 404, a route taking other methods 405, and only then the
/// credential: any missing or refused one is 401 with one text. The runtime takes its own token
/// only (the person's is refused).
#[tokio::test]
async fn ru_50_routing_then_credentials() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let base = sim.url();
    let (status, body) = call(Method::GET, &format!("{base}/elsewhere/?x=1"), None, None).await;
    assert_eq!(status, 404);
    assert_eq!(
        body,
        detail(&format!(
            "The stand-in answers the platform API and the Agent's runtime only, not {base}/elsewhere/?x=1."
        ))
    );
    let (status, body) = call(Method::GET, &format!("{base}/api/v1/unknown/"), None, None).await;
    assert_eq!(
        (status, body),
        (
            404,
            detail("The stand-in has no route for GET /api/v1/unknown/.")
        )
    );
    let url = format!("{base}/api/v1/model-providers/");
    let (status, body) = call(Method::DELETE, &url, None, None).await;
    assert_eq!(
        (status, body),
        (405, detail("Method \"DELETE\" not allowed."))
    );
    assert_eq!(
        call(Method::GET, &url, None, None).await,
        (401, detail(UNAUTHENTICATED))
    );
    assert_eq!(
        call(Method::GET, &url, Some("not-the-token"), None).await,
        (401, detail(UNAUTHENTICATED))
    );
    assert_eq!(
        call(Method::GET, &url, Some(DEFAULT_PLATFORM_TOKEN), None)
            .await
            .0,
        200
    );

    let (_, rpc, token) = session(&sim, json!({"handle_unique_id": "refusals"})).await;
    let chat = format!("{rpc}/api/chat");
    let (status, body) = call(Method::GET, &format!("{rpc}/api/nothing"), None, None).await;
    let path = format!("{}/api/nothing", rpc.trim_start_matches(&base));
    assert_eq!(
        (status, body),
        (
            404,
            detail(&format!("The stand-in has no route for GET {path}."))
        )
    );
    assert_eq!(
        call(Method::DELETE, &chat, Some(&token), None).await,
        (405, detail("Method \"DELETE\" not allowed."))
    );
    assert_eq!(
        call(Method::GET, &chat, Some(DEFAULT_PLATFORM_TOKEN), None).await,
        (401, detail(UNAUTHENTICATED)),
        "the person's token is refused by the runtime"
    );
    let ready = call(Method::GET, &chat, Some(&token), None).await;
    assert_eq!(
        ready,
        (
            200,
            json!({"status": "ready", "protocol": "ui-message-stream"})
        )
    );
    let nowhere = format!("{base}/runtime/no-such-agent/api/chat");
    assert_eq!(
        call(Method::GET, &nowhere, None, None).await,
        (
            404,
            detail(&format!(
                "The stand-in answers the platform API and the Agent's runtime only, not {nowhere}."
            ))
        ),
        "no Agent's runtime: outside"
    );
    sim.shutdown().await;
}

/// RU-51: the platform's refusals, with the stand-in's bodies.
#[tokio::test]
async fn ru_51_platform_refusals() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let required = json!({"organization_environment_uid": ["This field is required."]});
    for path in ["/api/v1/agent-sessions/", "/api/v1/command-center/agents/"] {
        assert_eq!(
            platform(&sim, Method::GET, path, None).await,
            (400, required.clone())
        );
    }
    for path in [
        "/api/v1/agent-sessions/nope/history/",
        "/api/v1/agent-sessions/nope/insights/",
    ] {
        assert_eq!(
            platform(&sim, Method::GET, path, None).await,
            (404, detail("Not found."))
        );
    }
    let p8 = format!("/api/v1/agents/{AGENT}/sessions/get-or-create-session/");
    let exactly_one =
        json!({"non_field_errors": ["Send exactly one of session_uid or handle_unique_id."]});
    for body in [
        json!({}),
        json!({"session_uid": "s", "handle_unique_id": "h"}),
    ] {
        assert_eq!(
            platform(&sim, Method::POST, &p8, Some(body)).await,
            (400, exactly_one.clone())
        );
    }
    let by_uid = json!({"session_uid": "unknown"});
    assert_eq!(
        platform(&sim, Method::POST, &p8, Some(by_uid)).await,
        (404, detail("Not found."))
    );
    let (first, record) = platform(
        &sim,
        Method::POST,
        &p8,
        Some(json!({"handle_unique_id": "h"})),
    )
    .await;
    let again = platform(
        &sim,
        Method::POST,
        &p8,
        Some(json!({"handle_unique_id": "h"})),
    )
    .await;
    assert_eq!((first, again.0), (201, 200), "new, then the same");
    let uid = record["uid"].as_str().unwrap();
    let history = format!("/api/v1/agent-sessions/{uid}/history/");
    assert_eq!(
        platform(&sim, Method::GET, &history, None).await,
        (404, detail("This session has no history yet."))
    );
    let p3 = format!("/api/v1/agent-sessions/{uid}/");
    let missing = json!({"llm_provider": ["This field is required."], "llm_model": ["This field is required."]});
    assert_eq!(
        platform(&sim, Method::PATCH, &p3, Some(json!({}))).await,
        (400, missing)
    );
    let outside = json!({"llm_provider": "acme-cloud", "llm_model": "no-such-model"});
    assert_eq!(
        platform(&sim, Method::PATCH, &p3, Some(outside)).await,
        (
            400,
            json!({"llm_model": ["This model is not in the platform's model catalog."]})
        )
    );
    let choice = json!({"llm_provider": "acme-cloud", "llm_model": "acme-small"});
    assert_eq!(
        platform(&sim, Method::PATCH, &p3, Some(choice)).await.0,
        200,
        "no level needed"
    );
    sim.shutdown().await;
}

/// RU-51 (P3 on a working session) and RU-52: the runtime's refusals in the stand-in's order
/// (the session, then the message, then a turn already running), and R3's.
#[tokio::test]
async fn ru_52_runtime_refusals() {
    let sim = Sim::start(SimConfig {
        answer_delay_ms: 200,
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let (uid, rpc, token) = session(&sim, json!({"handle_unique_id": "runtime"})).await;
    let chat = format!("{rpc}/api/chat");
    let turn = |body: Value| call(Method::POST, &chat, Some(&token), Some(body));
    assert_eq!(
        turn(turn_body("unknown", "unknown", "Hello.")).await,
        (
            404,
            detail("The chat request names no session this Agent knows.")
        )
    );
    assert_eq!(
        turn(turn_body(&uid, "another", "")).await,
        (
            400,
            detail("The chat request must carry the session it belongs to.")
        ),
        "the session is checked before the message"
    );
    assert_eq!(
        turn(turn_body(&uid, &uid, " ")).await,
        (400, detail("The chat request carries no message."))
    );
    assert_eq!(
        turn(turn_body("unknown", "unknown", "")).await,
        (
            404,
            detail("The chat request names no session this Agent knows.")
        ),
        "the session before the message"
    );
    // A new chat without a message creates nothing.
    let list = format!(
        "/api/v1/agent-sessions/?organization_environment_uid={}",
        "env-demo"
    );
    let before = platform(&sim, Method::GET, &list, None).await.1;
    let mut new_chat = turn_body("", "", "");
    new_chat["newChat"] = json!(true);
    new_chat
        .as_object_mut()
        .unwrap()
        .remove("runtime_session_uid");
    assert_eq!(
        turn(new_chat).await,
        (400, detail("The chat request carries no message."))
    );
    assert_eq!(platform(&sim, Method::GET, &list, None).await.1, before);
    let cancel = format!("{rpc}/api/chat/session/cancel");
    let stop = |uid: &str| {
        let body = json!({"runtime_session_uid": uid});
        call(Method::POST, &cancel, Some(&token), Some(body))
    };
    assert_eq!(
        stop("unknown").await,
        (
            404,
            detail("The cancel request names no session this Agent knows.")
        )
    );
    assert_eq!(
        stop(&uid).await,
        (200, json!({"runtime_session_uid": uid, "status": "idle"}))
    );

    // A running turn: a second is refused, and so is a model change.
    let running = reqwest::Client::new()
        .post(&chat)
        .header("Authorization", format!("Bearer {token}"))
        .header("Content-Type", "application/json")
        .body(turn_body(&uid, &uid, "Hello.").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(running.status().as_u16(), 200);
    assert_eq!(
        turn(turn_body(&uid, &uid, "Again.")).await,
        (
            409,
            detail("The Agent is already answering in this session.")
        )
    );
    let choice = json!({"llm_provider": "acme-cloud", "llm_model": "acme-small"});
    assert_eq!(
        platform(
            &sim,
            Method::PATCH,
            &format!("/api/v1/agent-sessions/{uid}/"),
            Some(choice)
        )
        .await,
        (
            409,
            json!({
                "detail": "Model selection cannot change while a turn is working or persisting.",
                "error_code": "agent_session_selection_runtime_active"
            })
        )
    );
    assert_eq!(
        stop(&uid).await,
        (
            200,
            json!({"runtime_session_uid": uid, "status": "cancelled"})
        )
    );
    drop(running);
    sim.shutdown().await;
}

/// The frames of an SSE body, `data: ` stripped.
fn sse_frames(body: &Value) -> Vec<String> {
    body.as_str()
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(str::to_owned)
        .collect()
}

/// RU-53: a turn the stand-in fails answers 200 with `start`, an `error` frame and `[DONE]`,
/// and the transcript keeps only the person's message: a provider not signed in ("Sign in to
/// Stand-in Labs before you use Labs Preview."), and a scripted failure with the default text.
#[tokio::test]
async fn ru_53_a_turn_the_stand_in_fails() {
    let mut config = SimConfig::default();
    config.catalog["providers"].as_array_mut().unwrap().push(json!({
        "provider": "stand-in-labs", "display_name": "Stand-in Labs", "auth_methods": ["oauth"],
        "sign_in_available": true, "known": true, "enabled": true, "authenticated": false,
        "credential_status": "missing", "default_model": "labs-preview",
        "models": [{"model": "labs-preview", "display_name": "Labs Preview", "thinking_levels": []}]
    }));
    let sim = Sim::start(config.clone()).await.unwrap();
    let body = json!({"handle_unique_id": "labs", "llm_provider": "stand-in-labs", "llm_model": "labs-preview"});
    let (uid, rpc, token) = session(&sim, body).await;
    let chat = format!("{rpc}/api/chat");
    let (status, answer) = call(
        Method::POST,
        &chat,
        Some(&token),
        Some(turn_body(&uid, &uid, "Hello.")),
    )
    .await;
    assert_eq!(status, 200);
    let frames = sse_frames(&answer);
    assert_eq!(frames.len(), 3, "{frames:?}");
    assert!(frames[0].contains("\"type\":\"start\""), "{frames:?}");
    let error: Value = serde_json::from_str(&frames[1]).unwrap();
    assert_eq!(
        error,
        json!({"type": "error", "errorText": "Sign in to Stand-in Labs before you use Labs Preview."})
    );
    assert_eq!(frames[2], "[DONE]");
    let history = format!("/api/v1/agent-sessions/{uid}/history/");
    let (status, history) = platform(&sim, Method::GET, &history, None).await;
    assert_eq!(status, 200);
    let messages = history["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "only the person's message: {history}");
    assert_eq!(messages[0]["role"], "user");
    sim.shutdown().await;

    // Scripted: the stand-in's default text.
    config.agents[0].answer = AnswerStyle::RefusedTurn(REFUSED_TURN_TEXT.into());
    let sim = Sim::start(config).await.unwrap();
    let (uid, rpc, token) = session(&sim, json!({"handle_unique_id": "scripted"})).await;
    let chat = format!("{rpc}/api/chat");
    let (_, answer) = call(
        Method::POST,
        &chat,
        Some(&token),
        Some(turn_body(&uid, &uid, "Hello.")),
    )
    .await;
    let frames = sse_frames(&answer);
    assert!(
        frames[1].contains("The model provider refused the request."),
        "{frames:?}"
    );
    sim.shutdown().await;
}

//! The simulator over real HTTP on loopback, checked with engine-core's own parsers.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::io::{Read, Write};
use std::time::{Duration, Instant};

mod common;
use common::{assemble, text_of};
use engine_core::StreamOutcome;
use engine_core::api::{
    AccessMode, InteractionState, model_required_fields, parse_catalog,
    parse_get_or_create_session, parse_history, parse_icon_projection, parse_insights,
    parse_runtime_access, parse_session_list, parse_session_list_in, parse_session_record,
};
use engine_core::message::{Part, ToolState};
use futures_util::StreamExt;
use platform_sim::{
    AgentSpec, AnswerStyle, BlockingSim, DEFAULT_PLATFORM_TOKEN, Dialect, Fault, FaultKind,
    RuntimeBehaviour, SIM_TOOL, Sim, SimConfig,
};
use serde_json::{Value, json};

const ENV: &str = "env-demo";
const AGENT: &str = "agent-demo";

/// A minimal client: the platform token on platform calls, a runtime token on runtime calls.
struct Client {
    http: reqwest::Client,
    base: String,
}

struct Answer {
    status: u16,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

impl Client {
    fn new(sim: &Sim) -> Client {
        Client {
            http: reqwest::Client::new(),
            base: sim.url(),
        }
    }

    async fn call(
        &self,
        method: reqwest::Method,
        url: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Answer {
        let mut request = self
            .http
            .request(method, url)
            .header("Accept", "application/json");
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
        let body = response.bytes().await.unwrap().to_vec();
        Answer { status, body }
    }

    async fn get(&self, path: &str) -> Answer {
        let url = format!("{}{path}", self.base);
        self.call(
            reqwest::Method::GET,
            &url,
            Some(DEFAULT_PLATFORM_TOKEN),
            None,
        )
        .await
    }

    async fn post(&self, path: &str, body: Value) -> Answer {
        let url = format!("{}{path}", self.base);
        self.call(
            reqwest::Method::POST,
            &url,
            Some(DEFAULT_PLATFORM_TOKEN),
            Some(body),
        )
        .await
    }

    async fn patch(&self, path: &str, body: Value) -> Answer {
        let url = format!("{}{path}", self.base);
        self.call(
            reqwest::Method::PATCH,
            &url,
            Some(DEFAULT_PLATFORM_TOKEN),
            Some(body),
        )
        .await
    }

    /// P8 by handle for the default Agent.
    async fn default_session(&self, agent: &str) -> Answer {
        self.post(
            &format!("/api/v1/agents/{agent}/sessions/get-or-create-session/"),
            json!({"handle_unique_id": "demo_default", "name": "Demo chat"}),
        )
        .await
    }

    /// P11, parsed: `(rpc_url, token)` of a ready answer.
    async fn access(&self, session: &str) -> (String, String) {
        let answer = self
            .post(
                &format!("/api/v1/agent-sessions/{session}/resolve-runtime-access/"),
                json!({}),
            )
            .await;
        assert_eq!(answer.status, 200);
        let access = parse_runtime_access(&answer.body, &self.base).unwrap();
        match access.mode {
            AccessMode::Token(endpoint) => (endpoint.rpc_url, endpoint.token.expose().to_owned()),
            other => panic!("not ready: {other:?}"),
        }
    }

    /// The R2 body the engine sends (ADR 060), with the P2 record as `session`.
    async fn turn_body(&self, session: &str, text: &str) -> Value {
        let record = self
            .get(&format!(
                "/api/v1/agent-sessions/{session}/?organization_environment_uid={ENV}"
            ))
            .await
            .json();
        json!({
            "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
            "tools": {},
            "runConfig": {"reasoning_effort": "medium"},
            "user_uid": "user-demo",
            "threadId": session,
            "runtime_session_uid": session,
            "session": record,
        })
    }

    /// R2 as a streaming response.
    async fn start_turn(&self, rpc: &str, token: &str, body: &Value) -> reqwest::Response {
        self.http
            .post(format!("{rpc}/api/chat"))
            .header("Authorization", format!("Bearer {token}"))
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap()
    }
}

fn fast() -> SimConfig {
    SimConfig {
        answer_delay_ms: 1,
        ..SimConfig::default()
    }
}

/// Feeds bytes into engine-core's answer stream and ends it.
/// A session uid from a ready default session.
async fn ready_session(client: &Client) -> String {
    let answer = client.default_session(AGENT).await;
    assert!(answer.status == 200 || answer.status == 201);
    parse_get_or_create_session(&answer.body).unwrap().uid
}

#[tokio::test]
async fn default_session_get_or_create_is_idempotent() {
    let sim = Sim::start(fast()).await.unwrap();
    let client = Client::new(&sim);

    let first = client.default_session(AGENT).await;
    assert_eq!(first.status, 201);
    let created = parse_get_or_create_session(&first.body).unwrap();
    created.check_for(ENV).unwrap();
    assert_eq!(created.handle_unique_id.as_deref(), Some("demo_default"));
    assert_eq!(created.name.as_deref(), Some("Demo chat"));
    assert_eq!(created.llm_provider.as_deref(), Some("acme-cloud"));
    assert_eq!(created.llm_model.as_deref(), Some("acme-large"));
    assert_eq!(created.llm_thinking.as_deref(), Some("medium"));
    assert!(!created.working);

    let second = client.default_session(AGENT).await;
    assert_eq!(second.status, 200);
    assert_eq!(
        parse_get_or_create_session(&second.body).unwrap().uid,
        created.uid
    );

    // By uid; both or neither key is a 400.
    let by_uid = client
        .post(
            "/api/v1/agents/agent-demo/sessions/get-or-create-session/",
            json!({"session_uid": created.uid}),
        )
        .await;
    assert_eq!(by_uid.status, 200);
    for body in [
        json!({}),
        json!({"session_uid": created.uid, "handle_unique_id": "demo_default"}),
    ] {
        let refused = client
            .post(
                "/api/v1/agents/agent-demo/sessions/get-or-create-session/",
                body,
            )
            .await;
        assert_eq!(refused.status, 400);
        assert!(refused.json()["non_field_errors"].is_array());
    }

    // Detail and list, scoped to the Environment.
    let detail = client
        .get(&format!(
            "/api/v1/agent-sessions/{}/?organization_environment_uid={ENV}",
            created.uid
        ))
        .await;
    assert_eq!(detail.status, 200);
    parse_session_record(&detail.body)
        .unwrap()
        .check_for(ENV)
        .unwrap();
    let elsewhere = client
        .get(&format!(
            "/api/v1/agent-sessions/{}/?organization_environment_uid=other",
            created.uid
        ))
        .await;
    assert_eq!(elsewhere.status, 404);
    let list = client
        .get(&format!(
            "/api/v1/agent-sessions/?organization_environment_uid={ENV}&created_by_user_uid=user-demo&is_archived=false&ordering=-started_at&limit=20&agent_uid={AGENT}"
        ))
        .await;
    assert_eq!(list.status, 200);
    assert_eq!(list.json()["count"], 1);
    let rows = parse_session_list_in(&list.body, ENV).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].uid, created.uid);
    let other_env = client
        .get("/api/v1/agent-sessions/?organization_environment_uid=other")
        .await;
    assert_eq!(other_env.json()["results"], json!([]));
    let no_env = client.get("/api/v1/agent-sessions/").await;
    assert_eq!(no_env.status, 400);

    // Without the platform token: 401.
    let url = format!("{}/api/v1/model-providers/", sim.url());
    let anonymous = client.call(reqwest::Method::GET, &url, None, None).await;
    assert_eq!(anonymous.status, 401);
    let wrong = client
        .call(reqwest::Method::GET, &url, Some("nope"), None)
        .await;
    assert_eq!(wrong.status, 401);
    sim.shutdown().await;
}

#[tokio::test]
async fn sessions_archive_patch_delete_and_model_required() {
    let mut config = fast();
    let mut picky = AgentSpec::new("agent-picky", "Picky Agent");
    picky.needs_model = true;
    config.agents.push(picky);
    let sim = Sim::start(config).await.unwrap();
    let client = Client::new(&sim);

    // An Agent without a default model refuses P7, and P8 without both model fields.
    let refused = client
        .post(
            "/api/v1/agents/agent-picky/start-new-session/",
            json!({"thread_id": "t-1"}),
        )
        .await;
    assert_eq!(
        model_required_fields(refused.status, &refused.body),
        Some(vec!["llm_provider".to_owned(), "llm_model".to_owned()])
    );
    let half = client
        .post(
            "/api/v1/agents/agent-picky/sessions/get-or-create-session/",
            json!({"handle_unique_id": "h", "llm_provider": "acme-cloud"}),
        )
        .await;
    assert_eq!(
        model_required_fields(half.status, &half.body),
        Some(vec!["llm_model".to_owned()])
    );
    let unknown = client
        .post(
            "/api/v1/agents/agent-picky/sessions/get-or-create-session/",
            json!({"handle_unique_id": "h", "llm_provider": "acme-cloud", "llm_model": "nope"}),
        )
        .await;
    assert_eq!(unknown.status, 400);
    assert_eq!(model_required_fields(unknown.status, &unknown.body), None);
    let chosen = client
        .post(
            "/api/v1/agents/agent-picky/sessions/get-or-create-session/",
            json!({"handle_unique_id": "h", "llm_provider": "team-models", "llm_model": "tm-1", "llm_thinking": "high"}),
        )
        .await;
    assert_eq!(chosen.status, 201);
    let record = parse_get_or_create_session(&chosen.body).unwrap();
    assert_eq!(record.llm_model.as_deref(), Some("tm-1"));
    assert_eq!(record.llm_thinking.as_deref(), Some("high"));

    // P7 on the ready Agent, with the client's thread id.
    let started = client
        .post(
            "/api/v1/agents/agent-demo/start-new-session/",
            json!({"thread_id": "thread-9"}),
        )
        .await;
    assert_eq!(started.status, 201);
    let uid = started.json()["uid"].as_str().unwrap().to_owned();

    // P3: all three keys; a model outside the catalog is a 400.
    let path = format!("/api/v1/agent-sessions/{uid}/");
    let bad = client
        .patch(
            &path,
            json!({"llm_provider": "acme-cloud", "llm_model": "gpt-x", "llm_thinking": ""}),
        )
        .await;
    assert_eq!(bad.status, 400);
    assert!(bad.json()["llm_model"].is_array());
    let good = client
        .patch(
            &path,
            json!({"llm_provider": "acme-cloud", "llm_model": "acme-small", "llm_thinking": ""}),
        )
        .await;
    assert_eq!(good.status, 200);
    let patched = parse_session_record(&good.body).unwrap();
    assert_eq!(patched.llm_model.as_deref(), Some("acme-small"));
    assert_eq!(patched.llm_thinking.as_deref(), Some(""));

    // P5/P6 and the archived list.
    let archived = client
        .post(&format!("/api/v1/agent-sessions/{uid}/archive/"), json!({}))
        .await;
    assert_eq!(archived.status, 200);
    assert_eq!(archived.json()["is_archived"], true);
    assert!(archived.json()["archived_at"].is_string());
    let list = client
        .get(&format!(
            "/api/v1/agent-sessions/?organization_environment_uid={ENV}&agent_uid={AGENT}&created_by_user_uid=user-demo&is_archived=true&ordering=-archived_at"
        ))
        .await;
    assert_eq!(list.json()["count"], 1);
    let restored = client
        .post(
            &format!("/api/v1/agent-sessions/{uid}/unarchive/"),
            json!({}),
        )
        .await;
    assert_eq!(restored.json()["archived_at"], Value::Null);

    // P9/P10 read 404 before anything is written; P4 deletes.
    assert_eq!(
        client
            .get(&format!("/api/v1/agent-sessions/{uid}/history/"))
            .await
            .status,
        404
    );
    assert_eq!(
        client
            .get(&format!("/api/v1/agent-sessions/{uid}/insights/"))
            .await
            .status,
        404
    );
    let url = format!("{}{path}", sim.url());
    let deleted = client
        .call(
            reqwest::Method::DELETE,
            &url,
            Some(DEFAULT_PLATFORM_TOKEN),
            None,
        )
        .await;
    assert_eq!(deleted.status, 204);
    assert_eq!(client.get(&path).await.status, 404);
    sim.shutdown().await;
}

#[tokio::test]
async fn waking_agent_answers_503_then_200_after_n_checks() {
    let mut config = fast();
    config.agents[0].runtime = RuntimeBehaviour::Waking { checks: 2 };
    let sim = Sim::start(config).await.unwrap();
    let client = Client::new(&sim);
    let session = ready_session(&client).await;

    // Idle: the platform reports it ready; the checks wake it.
    let (rpc, token) = client.access(&session).await;
    assert_eq!(rpc, format!("{}/runtime/{AGENT}", sim.url()));
    let check = |token: String| {
        let url = format!("{rpc}/api/chat");
        let client = &client;
        async move {
            client
                .call(reqwest::Method::GET, &url, Some(&token), None)
                .await
                .status
        }
    };
    assert_eq!(check(token.clone()).await, 503);
    assert_eq!(check(token.clone()).await, 503);
    assert_eq!(check(token.clone()).await, 200);
    assert_eq!(check(token.clone()).await, 200);
    assert_eq!(check("wrong".into()).await, 401);

    // A platform-reported wake: after the first check, runtime access answers waking (each read
    // counts as a check) until the Agent is ready.
    assert!(sim.set_runtime(AGENT, RuntimeBehaviour::Waking { checks: 3 }));
    let (_, token) = client.access(&session).await;
    assert_eq!(check(token.clone()).await, 503);
    let path = format!("/api/v1/agent-sessions/{session}/resolve-runtime-access/");
    let waking = client.post(&path, json!({})).await;
    let access = parse_runtime_access(&waking.body, &sim.url()).unwrap();
    assert_eq!(access.interaction.state, InteractionState::Waking);
    assert!(!access.interaction.can_submit);
    assert_eq!(access.interaction.retry_after_ms, Some(1000));
    assert!(access.presence.wake.is_some());
    assert!(access.interaction.state.is_transient());
    let (_, token) = client.access(&session).await;
    assert_eq!(check(token).await, 200);

    // Terminal.
    assert!(sim.set_runtime(
        AGENT,
        RuntimeBehaviour::Terminal {
            message: "Demo Agent could not be updated.".into(),
            support_reference: "upd-1".into(),
        }
    ));
    let blocked = client.post(&path, json!({})).await;
    let access = parse_runtime_access(&blocked.body, &sim.url()).unwrap();
    assert_eq!(access.interaction.state, InteractionState::UpdateFailed);
    assert!(!access.interaction.can_submit);
    assert_eq!(
        access.interaction.notice.unwrap().message,
        "Demo Agent could not be updated."
    );
    assert_eq!(
        access.interaction.support_reference.as_deref(),
        Some("upd-1")
    );
    sim.shutdown().await;
}

/// R2, issue 24 point 4: a turn streams an answer engine-core assembles, in either dialect:
/// the runtime's (RU-1: no `start`, `json.dumps` style) by default, the AI SDK's when asked;
/// reasoning, a tool call with its result, then the text; the history holds the same parts.
#[tokio::test]
async fn a_turn_streams_sse_that_engine_core_assembles() {
    for dialect in Dialect::ALL {
        turn_streams_in(dialect).await;
    }
}

async fn turn_streams_in(dialect: Dialect) {
    let sim = Sim::start(fast().with_dialect(dialect)).await.unwrap();
    let client = Client::new(&sim);
    let session = ready_session(&client).await;
    let (rpc, token) = client.access(&session).await;
    let ready = client
        .call(
            reqwest::Method::GET,
            &format!("{rpc}/api/chat"),
            Some(&token),
            None,
        )
        .await;
    assert_eq!(ready.status, 200);

    let body = client.turn_body(&session, "Hello there").await;
    let response = client.start_turn(&rpc, &token, &body).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    assert_eq!(
        response.headers()["x-vercel-ai-ui-message-stream"]
            .to_str()
            .unwrap(),
        "v1"
    );
    let bytes = response.bytes().await.unwrap();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let first = text.split("\n\n").next().unwrap();
    let opening = match dialect {
        Dialect::Runtime => r#"data: {"type":"start-step"}"#,
        Dialect::AiSdk => r#"data: {"messageId":"#,
    };
    assert!(first.starts_with(opening), "{text}");
    assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
    let stream = assemble(&bytes);
    assert_eq!(text_of(&stream), "You said: Hello there");
    assert!(matches!(stream.outcome(), StreamOutcome::Finished { .. }));
    assert_eq!(stream.stats().invalid_chunks, 0);
    assert_eq!(stream.stats().unknown_chunks, 0);
    let tool = stream
        .message()
        .parts
        .iter()
        .find_map(|p| match p {
            Part::Tool(t) => Some(t),
            _ => None,
        })
        .expect("a tool part");
    assert_eq!(tool.tool_name, SIM_TOOL);
    assert_eq!(tool.state, ToolState::OutputAvailable);
    assert!(matches!(
        stream.message().parts[0],
        Part::Reasoning(_) | Part::StepStart
    ));

    // The history holds both messages, with the thread id; the session is idle again.
    let history = client
        .get(&format!("/api/v1/agent-sessions/{session}/history/"))
        .await;
    assert_eq!(history.status, 200);
    let parsed = parse_history(&history.body).unwrap();
    assert_eq!(parsed.thread_id.as_deref(), Some(session.as_str()));
    assert_eq!(parsed.messages.len(), 2);
    let content = &history.json()["messages"][1]["content"];
    assert_eq!(content[0]["type"], "reasoning", "{content}");
    assert_eq!(content[1]["toolName"], SIM_TOOL, "{content}");
    assert_eq!(
        content[1]["args"],
        json!({"text": "Hello there"}),
        "{content}"
    );
    assert_eq!(content[1]["isError"], false, "{content}");
    assert_eq!(content[2]["text"], "You said: Hello there", "{content}");
    let insights = client
        .get(&format!("/api/v1/agent-sessions/{session}/insights/"))
        .await;
    assert!(parse_insights(&insights.body).unwrap().has_insights);
    let detail = client
        .get(&format!("/api/v1/agent-sessions/{session}/"))
        .await;
    assert!(!parse_session_record(&detail.body).unwrap().working);

    // Refusals before streaming.
    let mut two = body.clone();
    two["messages"] = json!([body["messages"][0], body["messages"][0]]);
    let mut stranger = body.clone();
    stranger["runtime_session_uid"] = json!("sess-9999");
    let mut mismatch = body.clone();
    mismatch["session"]["uid"] = json!("sess-9999");
    let mut modelled = body.clone();
    modelled["model"] = json!("x");
    for (bad, status) in [
        (two, 400),
        (stranger, 404),
        (mismatch, 400),
        (modelled, 400),
    ] {
        let answer = client.start_turn(&rpc, &token, &bad).await;
        assert_eq!(answer.status(), status);
    }
    let anonymous = client.start_turn(&rpc, "nope", &body).await;
    assert_eq!(anonymous.status(), 401);

    sim.shutdown().await;
    if dialect == Dialect::AiSdk {
        return;
    }
    // A scripted answer with reasoning and a tool call lands in the history as content parts.
    let mut config = fast();
    config.agents[0].answer = AnswerStyle::Script(vec![
        json!({"type": "start", "messageId": "m-1"}),
        json!({"type": "reasoning-start", "id": "r"}),
        json!({"type": "reasoning-delta", "id": "r", "delta": "Sum it."}),
        json!({"type": "reasoning-end", "id": "r"}),
        json!({"type": "tool-input-available", "toolCallId": "c-1", "toolName": "sum", "input": {"q": 3}}),
        json!({"type": "tool-output-available", "toolCallId": "c-1", "output": {"total": 4120}}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "Q3 totals 4120."}),
        json!({"type": "text-end", "id": "t"}),
        json!({"type": "finish"}),
    ]);
    let sim = Sim::start(config).await.unwrap();
    let client = Client::new(&sim);
    let session = ready_session(&client).await;
    let (rpc, token) = client.access(&session).await;
    let body = client.turn_body(&session, "Total?").await;
    let bytes = client
        .start_turn(&rpc, &token, &body)
        .await
        .bytes()
        .await
        .unwrap();
    let stream = assemble(&bytes);
    assert_eq!(text_of(&stream), "Q3 totals 4120.");
    assert_eq!(stream.message().id, "m-1");
    let history = client
        .get(&format!("/api/v1/agent-sessions/{session}/history/"))
        .await;
    let parsed = parse_history(&history.body).unwrap();
    // P9: the provenance leads the reasoning, the tool call and the text as a data part.
    assert_eq!(parsed.messages[1].parts.len(), 4);
    assert_eq!(
        parsed.messages[1].parts[0].part_type(),
        "data-main_sequence_ai_provenance"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn cancel_aborts_a_slow_stream() {
    let mut config = SimConfig {
        answer_delay_ms: 80,
        ..SimConfig::default()
    };
    config.agents[0].answer = AnswerStyle::Fixed("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".into());
    let sim = Sim::start(config).await.unwrap();
    let client = Client::new(&sim);
    let session = ready_session(&client).await;
    let (rpc, token) = client.access(&session).await;
    let body = client.turn_body(&session, "Count").await;
    let started = Instant::now();
    let response = client.start_turn(&rpc, &token, &body).await;
    assert_eq!(response.status(), 200);
    let mut stream = response.bytes_stream();
    let mut received = Vec::new();
    while !String::from_utf8_lossy(&received).contains("text-delta") {
        received.extend_from_slice(&stream.next().await.unwrap().unwrap());
    }

    // While it streams: working, and a second turn in the session is a 409.
    let detail = client
        .get(&format!("/api/v1/agent-sessions/{session}/"))
        .await;
    assert!(parse_session_record(&detail.body).unwrap().working);
    let busy = client.start_turn(&rpc, &token, &body).await;
    assert_eq!(busy.status(), 409);
    let patch = client
        .patch(
            &format!("/api/v1/agent-sessions/{session}/"),
            json!({"llm_provider": "acme-cloud", "llm_model": "acme-small", "llm_thinking": ""}),
        )
        .await;
    assert_eq!(patch.status, 409);
    assert_eq!(
        patch.json()["error_code"],
        "agent_session_selection_runtime_active"
    );

    let cancel_url = format!("{rpc}/api/chat/session/cancel");
    let cancel_body = json!({"runtime_session_uid": session, "thread_id": session, "user_uid": "user-demo", "reason": "user_requested", "message": "User pressed stop."});
    let cancelled = client
        .call(
            reqwest::Method::POST,
            &cancel_url,
            Some(&token),
            Some(cancel_body.clone()),
        )
        .await;
    assert_eq!(cancelled.status, 200);
    assert_eq!(
        cancelled.json(),
        json!({"runtime_session_uid": session, "status": "cancelled"})
    );
    while let Some(piece) = stream.next().await {
        received.extend_from_slice(&piece.unwrap());
    }
    assert!(started.elapsed() < Duration::from_millis(1500));
    let text = String::from_utf8(received.clone()).unwrap();
    assert!(text.contains("\"type\":\"abort\""), "{text}");
    assert!(text.ends_with("data: [DONE]\n\n"));
    let assembled = assemble(&received);
    assert!(matches!(assembled.outcome(), StreamOutcome::Aborted { .. }));
    assert!(!text_of(&assembled).contains("twenty"));

    let idle = client
        .call(
            reqwest::Method::POST,
            &cancel_url,
            Some(&token),
            Some(cancel_body),
        )
        .await;
    assert_eq!(idle.json()["status"], "idle");
    let detail = client
        .get(&format!("/api/v1/agent-sessions/{session}/"))
        .await;
    assert!(!parse_session_record(&detail.body).unwrap().working);
    // The partial answer joined the history.
    let history = client
        .get(&format!("/api/v1/agent-sessions/{session}/history/"))
        .await;
    assert_eq!(parse_history(&history.body).unwrap().messages.len(), 2);
    sim.shutdown().await;
}

#[tokio::test]
async fn drop_mid_stream_cuts_the_connection() {
    let sim = Sim::start(fast()).await.unwrap();
    let client = Client::new(&sim);
    let session = ready_session(&client).await;
    let (rpc, token) = client.access(&session).await;
    sim.clear_log();
    sim.fault(Fault::once(
        "POST",
        "/api/chat",
        FaultKind::DropMidStream { after_chunks: 3 },
    ));
    let body = client.turn_body(&session, "Cut me off please").await;
    let response = client.start_turn(&rpc, &token, &body).await;
    assert_eq!(response.status(), 200);
    let mut stream = response.bytes_stream();
    let mut received = Vec::new();
    let mut failed = false;
    while let Some(piece) = stream.next().await {
        match piece {
            Ok(bytes) => received.extend_from_slice(&bytes),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "the body should end with an error");
    let text = String::from_utf8(received.clone()).unwrap();
    assert_eq!(text.matches("data: ").count(), 3, "{text}");
    let assembled = assemble(&received);
    assert_eq!(assembled.outcome(), &StreamOutcome::Interrupted);

    let chats: Vec<_> = sim
        .log()
        .into_iter()
        .filter(|r| r.is("POST", "/api/chat"))
        .collect();
    assert_eq!(chats.len(), 1);
    // The fault is spent: the next turn streams whole.
    let bytes = client
        .start_turn(&rpc, &token, &body)
        .await
        .bytes()
        .await
        .unwrap();
    assert_eq!(text_of(&assemble(&bytes)), "You said: Cut me off please");
    sim.shutdown().await;
}

/// P13/P14: the demo Agent's icon projection parses with engine-core's parser, its bytes come
/// as SVG with `Accept: */*` and the platform token, and an image-only Accept gets 406.
#[tokio::test]
async fn agent_icons_are_served() {
    let sim = Sim::start(fast()).await.unwrap();
    let client = Client::new(&sim);
    let answer = client
        .get(&format!(
            "/api/v1/command-center/agents/?organization_environment_uid={ENV}"
        ))
        .await;
    assert_eq!(answer.status, 200);
    let icons = parse_icon_projection(&answer.body, &sim.url()).unwrap();
    let url = icons[AGENT].url.clone();
    assert_eq!(
        url,
        format!("{}/api/v1/command-center/agents/{AGENT}/icon/", sim.url())
    );
    let other = client
        .get("/api/v1/command-center/agents/?organization_environment_uid=env-other")
        .await;
    assert_eq!(other.json(), json!([]));
    assert_eq!(
        client.get("/api/v1/command-center/agents/").await.status,
        400
    );
    let fetch = |accept: &'static str, token: Option<&'static str>| {
        let mut request = client.http.get(url.clone()).header("Accept", accept);
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        request.send()
    };
    let bytes = fetch("*/*", Some(DEFAULT_PLATFORM_TOKEN)).await.unwrap();
    assert_eq!(bytes.status().as_u16(), 200);
    assert_eq!(bytes.headers()["content-type"], "image/svg+xml");
    assert_eq!(
        bytes.bytes().await.unwrap(),
        platform_sim::AGENT_ICON_SVG.as_bytes()
    );
    let refused = fetch("image/svg+xml, image/png", Some(DEFAULT_PLATFORM_TOKEN));
    assert_eq!(refused.await.unwrap().status().as_u16(), 406);
    assert_eq!(fetch("*/*", None).await.unwrap().status().as_u16(), 401);
    sim.shutdown().await;
}

/// `path_prefix`: served only under the prefix (stripped once), logged as received.
#[tokio::test]
async fn a_path_prefix_is_stripped_once() {
    let sim = Sim::start(SimConfig {
        path_prefix: Some("/proxy".into()),
        ..fast()
    })
    .await
    .unwrap();
    let client = Client::new(&sim);
    assert_eq!(
        client.get("/proxy/api/v1/model-providers/").await.status,
        200
    );
    assert_eq!(client.get("/api/v1/model-providers/").await.status, 404);
    assert_eq!(
        client
            .get("/proxy/proxy/api/v1/model-providers/")
            .await
            .status,
        404
    );
    assert_eq!(
        client.get("/proxyapi/v1/model-providers/").await.status,
        404
    );
    let paths: Vec<String> = sim.log().into_iter().map(|r| r.path).collect();
    assert_eq!(paths[0], "/proxy/api/v1/model-providers/");
    sim.shutdown().await;
}

#[tokio::test]
async fn the_catalog_parses() {
    let sim = Sim::start(fast()).await.unwrap();
    let client = Client::new(&sim);
    let answer = client.get("/api/v1/model-providers/").await;
    assert_eq!(answer.status, 200);
    let catalog = parse_catalog(&answer.body).unwrap();
    assert_eq!(catalog.providers.len(), 2);
    assert_eq!(catalog.model_options().len(), 3);
    sim.shutdown().await;
}

#[tokio::test]
async fn faults_apply_then_expire() {
    let sim = Sim::start(fast()).await.unwrap();
    let client = Client::new(&sim);
    let path = "/api/v1/model-providers/";

    sim.fault(
        Fault::once(
            "GET",
            "model-providers",
            FaultKind::Status(500, json!({"detail": "boom"})),
        )
        .repeat(2),
    );
    assert_eq!(client.get(path).await.status, 500);
    let second = client.get(path).await;
    assert_eq!(
        (second.status, second.json()),
        (500, json!({"detail": "boom"}))
    );
    assert_eq!(client.get(path).await.status, 200);

    // Another method does not match.
    sim.fault(Fault::once(
        "POST",
        "model-providers",
        FaultKind::MalformedJson,
    ));
    assert_eq!(client.get(path).await.status, 200);
    sim.clear_faults();

    sim.fault(Fault::any_method(
        "model-providers",
        FaultKind::MalformedJson,
    ));
    let malformed = client.get(path).await;
    assert_eq!(malformed.status, 200);
    assert!(parse_catalog(&malformed.body).is_err());
    assert!(parse_catalog(&client.get(path).await.body).is_ok());

    sim.fault(Fault::once("GET", "model-providers", FaultKind::Delay(400)));
    let started = Instant::now();
    assert_eq!(client.get(path).await.status, 200);
    assert!(started.elapsed() >= Duration::from_millis(400));
    let started = Instant::now();
    client.get(path).await;
    assert!(started.elapsed() < Duration::from_millis(400));

    sim.fault(Fault::once(
        "GET",
        "model-providers",
        FaultKind::CloseWithoutAnswer,
    ));
    let url = format!("{}{path}", sim.url());
    let closed = client
        .http
        .get(&url)
        .header("Authorization", format!("Bearer {DEFAULT_PLATFORM_TOKEN}"))
        .send()
        .await;
    assert!(closed.is_err(), "{closed:?}");
    assert_eq!(client.get(path).await.status, 200);

    sim.fault(Fault::once(
        "GET",
        "model-providers",
        FaultKind::DropMidStream { after_chunks: 0 },
    ));
    let cut = client
        .http
        .get(&url)
        .header("Authorization", format!("Bearer {DEFAULT_PLATFORM_TOKEN}"))
        .send()
        .await
        .unwrap();
    assert!(cut.bytes().await.is_err());

    // Faulted requests are logged too.
    let catalog_reads = sim
        .log()
        .iter()
        .filter(|r| r.is("GET", "/api/v1/model-providers/"))
        .count();
    assert_eq!(catalog_reads, 11);
    sim.shutdown().await;
}

#[tokio::test]
async fn the_log_never_holds_a_token() {
    let sim = Sim::start(fast()).await.unwrap();
    let client = Client::new(&sim);
    let session = ready_session(&client).await;
    let (rpc, token) = client.access(&session).await;
    let body = client.turn_body(&session, "Hi").await;
    let _ = client
        .start_turn(&rpc, &token, &body)
        .await
        .bytes()
        .await
        .unwrap();
    // A client that leaks tokens into the query and body.
    let leaky = format!(
        "{}/api/v1/model-providers/?token={DEFAULT_PLATFORM_TOKEN}&rt={token}",
        sim.url()
    );
    client
        .call(
            reqwest::Method::GET,
            &leaky,
            None,
            Some(json!({"token": token})),
        )
        .await;

    let log = sim.log();
    assert!(log.len() >= 5);
    let dump = serde_json::to_string(&log).unwrap();
    assert!(!dump.contains(DEFAULT_PLATFORM_TOKEN), "{dump}");
    assert!(!dump.contains(&token), "{dump}");
    assert!(!format!("{log:?}").contains(&token));
    assert!(!format!("{sim:?} {:?}", sim.config()).contains(DEFAULT_PLATFORM_TOKEN));
    assert!(
        log.iter()
            .filter(|r| r.path.contains("/api/v1/"))
            .take(2)
            .all(|r| r.authorized)
    );
    assert!(
        log.iter()
            .any(|r| r.is("POST", "/runtime/agent-demo/api/chat") && r.authorized)
    );
    assert!(!log.last().unwrap().authorized);
    assert!(log.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
    sim.shutdown().await;
}

#[test]
fn blocking_sim_serves_from_its_own_thread() {
    let sim = BlockingSim::start(SimConfig::default()).unwrap();
    let address = sim.url().trim_start_matches("http://").to_owned();
    let mut socket = std::net::TcpStream::connect(&address).unwrap();
    write!(
        socket,
        "GET /api/v1/model-providers/ HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {DEFAULT_PLATFORM_TOKEN}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let body = answer.split("\r\n\r\n").nth(1).unwrap();
    assert!(parse_catalog(body.as_bytes()).is_ok());
    sim.fault(Fault::any_method("", FaultKind::Status(503, Value::Null)));
    assert_eq!(sim.log().len(), 1);
    sim.shutdown();
}

#[tokio::test]
async fn a_new_chat_turn_announces_its_session_and_lists_page() {
    let sim = Sim::start(fast()).await.unwrap();
    let client = Client::new(&sim);
    let session = ready_session(&client).await;
    let (rpc, token) = client.access(&session).await;
    let body = json!({
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Fresh start"}]}],
        "tools": {},
        "runConfig": {},
        "newChat": true,
    });
    let bytes = client
        .start_turn(&rpc, &token, &body)
        .await
        .bytes()
        .await
        .unwrap();
    let stream = assemble(&bytes);
    assert_eq!(text_of(&stream), "You said: Fresh start");
    let announced = stream.new_session().unwrap();
    assert_ne!(announced.session_uid, session);
    assert_eq!(sim.sessions().len(), 2);

    // Pagination: one row per page, newest first, with a next link.
    let page = client
        .get(&format!(
            "/api/v1/agent-sessions/?organization_environment_uid={ENV}&limit=1"
        ))
        .await
        .json();
    assert_eq!(page["count"], 2);
    assert_eq!(
        page["results"][0]["uid"].as_str(),
        Some(announced.session_uid.as_str())
    );
    let next = page["next"].as_str().unwrap();
    let next = next.strip_prefix(&sim.url()).unwrap();
    let second = client.get(next).await.json();
    assert_eq!(second["results"][0]["uid"].as_str(), Some(session.as_str()));
    assert_eq!(second["next"], Value::Null);
    sim.shutdown().await;
}

/// The session explorer's reads (adr-notes section 6) as the engine sends them: one Agent's
/// archived sessions, most recently archived first, and the search by `q` (trimmed, any case)
/// over the shown title, the handle and the Agent's name, active sessions only; `limit` is
/// clamped to 1 to 100.
#[tokio::test]
async fn archived_list_and_search_answer_the_explorer_queries() {
    let sim = Sim::start(fast()).await.unwrap();
    let client = Client::new(&sim);
    let default_uid = ready_session(&client).await;
    let mut plain = Vec::new();
    for thread in ["t-1", "t-2"] {
        let started = client
            .post(
                "/api/v1/agents/agent-demo/start-new-session/",
                json!({ "thread_id": thread }),
            )
            .await;
        assert_eq!(started.status, 201);
        plain.push(started.json()["uid"].as_str().unwrap().to_owned());
    }
    // Archive the second, then the first: the first is the most recently archived.
    for uid in [&plain[1], &plain[0]] {
        let answer = client
            .post(&format!("/api/v1/agent-sessions/{uid}/archive/"), json!({}))
            .await;
        assert_eq!(answer.status, 200);
    }
    let archived = |limit: &str| {
        format!(
            "/api/v1/agent-sessions/?organization_environment_uid={ENV}&agent_uid={AGENT}&created_by_user_uid=user-demo&is_archived=true&ordering=-archived_at&limit={limit}"
        )
    };
    let list = client.get(&archived("20")).await;
    let rows = parse_session_list(&list.body).unwrap();
    let uids: Vec<&str> = rows.iter().map(|r| r.uid.as_str()).collect();
    assert_eq!(uids, [plain[0].as_str(), plain[1].as_str()]);
    assert!(rows.iter().all(|r| r.is_archived));
    assert!(rows[0].raw.value()["archived_at"].is_string());
    for r in &rows {
        r.check_environment(ENV).unwrap();
    }
    let one = client.get(&archived("0")).await.json();
    assert_eq!(one["results"].as_array().unwrap().len(), 1);
    assert_eq!(one["count"], 2);
    let many = client.get(&archived("101")).await.json();
    assert_eq!(many["results"].as_array().unwrap().len(), 2);

    let search = |q: &str| {
        format!(
            "/api/v1/agent-sessions/?organization_environment_uid={ENV}&created_by_user_uid=user-demo&is_archived=false&q={q}&ordering=-started_at&limit=20"
        )
    };
    let found = |answer: Answer| -> Vec<String> {
        parse_session_list_in(&answer.body, ENV)
            .unwrap()
            .into_iter()
            .map(|r| r.uid)
            .collect()
    };
    // The default session's name, in another case and with spaces around it.
    assert_eq!(
        found(client.get(&search("%20%20DEMO%20chat%20")).await),
        [default_uid.as_str()]
    );
    // Its handle.
    assert_eq!(
        found(client.get(&search("demo_default")).await),
        [default_uid.as_str()]
    );
    // An unnamed session's shown title; archived sessions are not searched.
    assert!(found(client.get(&search("agent%20session")).await).is_empty());
    client
        .post(
            &format!("/api/v1/agent-sessions/{}/unarchive/", plain[1]),
            json!({}),
        )
        .await;
    assert_eq!(
        found(client.get(&search("agent%20session")).await),
        [plain[1].as_str()]
    );
    // Another person's search finds nothing of this one.
    let other = client
        .get(&format!(
            "/api/v1/agent-sessions/?organization_environment_uid={ENV}&created_by_user_uid=someone-else&is_archived=false&q=demo&ordering=-started_at&limit=20"
        ))
        .await;
    assert!(found(other).is_empty());
    sim.shutdown().await;
}

/// A simulator that cannot listen says why as the operating system's error, whose kind a host
/// can test (`AddrInUse`): it is the error itself, with no cause behind it.
#[test]
fn a_taken_port_is_the_systems_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let Err(e) = BlockingSim::start_on_port(SimConfig::default(), port) else {
        panic!("a second listener on port {port}");
    };
    assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse, "{e}");
    assert!(std::error::Error::source(&e).is_none(), "{e:?}");
}

/// `--web DIR` (issue 28): the folder's files under /demo/, /demo/config.json with the demo
/// values, a redirect from / and /demo, 404 for a path that leaves the folder or names no file;
/// and none of it reaches the platform's request log.
#[tokio::test]
async fn the_demo_page_is_served_under_demo() {
    let dir = std::env::temp_dir().join(format!("sim-web-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("build")).unwrap();
    std::fs::write(dir.join("index.html"), "<p>demo</p>").unwrap();
    std::fs::write(dir.join("build/app.js"), "export {};").unwrap();
    let sim = Sim::start(SimConfig {
        web: Some(dir.clone()),
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let get = |path: &str| http.get(format!("{}{path}", sim.url())).send();

    let index = get("/demo/").await.unwrap();
    assert_eq!(index.status(), 200);
    assert_eq!(index.headers()["content-type"], "text/html; charset=utf-8");
    assert_eq!(index.text().await.unwrap(), "<p>demo</p>");
    let script = get("/demo/build/app.js").await.unwrap();
    assert_eq!(
        script.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    let config: Value = get("/demo/config.json")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        config,
        json!({"environmentUid": ENV, "personUid": "user-demo", "token": DEFAULT_PLATFORM_TOKEN,
               "dialect": "runtime", "agents": [{"uid": AGENT, "name": "Demo Agent"}]})
    );
    for path in ["/", "/demo"] {
        let moved = get(path).await.unwrap();
        assert_eq!(moved.status(), 302, "{path}");
        assert_eq!(moved.headers()["location"], "/demo/");
    }
    // (A client removes dot segments before sending: the folder's own check is a unit test.)
    for path in ["/demo/../Cargo.toml", "/demo/%2e%2e/x", "/demo/missing.js"] {
        assert_eq!(get(path).await.unwrap().status(), 404, "{path}");
    }
    // The platform still answers beside it, and the page's files are not in its log.
    let platform = get("/api/v1/agent-sessions/").await.unwrap();
    assert_eq!(platform.status(), 401);
    let logged: Vec<String> = sim.log().into_iter().map(|r| r.path).collect();
    assert_eq!(logged, ["/Cargo.toml", "/x", "/api/v1/agent-sessions/"]);
    sim.shutdown().await;
    std::fs::remove_dir_all(dir).unwrap();
}

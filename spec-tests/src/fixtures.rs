//! Platform answers used across the suite (shapes of `platform-api.md`, invented values).

use serde_json::{Value, json};

/// The Environment most tests run in.
pub const ENV: &str = "env-1";
/// A second Environment.
pub const ENV2: &str = "env-2";
/// The person.
pub const USER: &str = "user-1";
/// The default Agent.
pub const AGENT: &str = "agent-1";
/// Another Agent.
pub const AGENT2: &str = "agent-2";
/// The default handle.
pub const HANDLE: &str = "ledger_default";

/// A session record in `env`, for `agent`, started at minute `minute` of a fixed hour.
pub fn record(uid: &str, agent: &str, env: &str, minute: u32) -> Value {
    json!({
        "uid": uid,
        "agent_uid": agent,
        "agent_name": "Ledger Helper",
        "organization_environment_uid": env,
        "name": format!("Session {uid}"),
        "status": "completed",
        "started_at": format!("2026-10-02T08:{minute:02}:00Z"),
        "ended_at": null,
        "llm_provider": "acme-cloud",
        "llm_model": "acme-large",
        "engine_name": "tau",
        "is_archived": false,
        "bound_handle": null
    })
}

/// A record bound to a default-session handle.
pub fn handle_record(uid: &str, agent: &str, env: &str, handle: &str, minute: u32) -> Value {
    let mut r = record(uid, agent, env, minute);
    if let Some(o) = r.as_object_mut() {
        o.insert(
            "bound_handle".into(),
            json!({"uid": format!("h-{uid}"), "handle_unique_id": handle, "owner_user_uid": USER, "is_locked": false}),
        );
    }
    r
}

/// A page of the session list.
pub fn page(records: &[Value]) -> Value {
    json!({"count": records.len(), "next": null, "previous": null, "results": records})
}

/// A history answer with one user and one assistant message.
pub fn history(session: &str) -> Value {
    json!({
        "version": 1,
        "session": {"sessionId": session, "threadId": session, "agentName": "Ledger Helper", "status": "completed"},
        "messages": [
            {"id": "m-1", "role": "user", "content": [{"type": "text", "text": "Total for Q3?"}]},
            {"id": "m-2", "role": "assistant", "content": [{"type": "text", "text": "Q3 totals 4120."}]}
        ],
        "inProgressMessage": null
    })
}

/// [`history`] with the session `running` (a writer runs a turn: RU-20 keeps the record's
/// `working` flag only with such a history).
pub fn running_history(session: &str) -> Value {
    let mut h = history(session);
    h["session"]["status"] = json!("running");
    h
}

/// An insights answer.
pub fn insights(session: &str) -> Value {
    json!({"agent_session_uid": session, "has_insights": true, "harness": "tau"})
}

/// The runtime base the fixtures hand out for `session`.
pub fn rpc_url(session: &str) -> String {
    format!("https://rt.test/agents/{session}")
}

/// The runtime token the fixtures hand out.
pub const RUNTIME_TOKEN: &str = "rt-token-secret";

/// A `runtime_presence` object in `phase`, with one replica observed.
pub fn presence(phase: &str) -> Value {
    json!({"phase": phase, "replicas": {"desired": 1, "actual": 1}, "detail": "Observed.", "observed_at": "2026-10-02T08:20:00Z", "wake": null})
}

/// A ready P11 answer (`can_submit: true`, mode token) for `session`.
pub fn runtime_ready(session: &str) -> Value {
    json!({
        "session_uid": session,
        "mode": "token",
        "rpc_url": rpc_url(session),
        "token": RUNTIME_TOKEN,
        "is_ready": true,
        "runtime_interaction": {"state": "ready", "can_submit": true, "notice": null, "operation": null, "retry_after_ms": null},
        "runtime_presence": presence("serving")
    })
}

/// A P11 answer that admits (`can_submit: true`) with mode `unavailable`: no `rpc_url`, no
/// token, and this `detail` (OI-6; RU-16).
pub fn runtime_unavailable(session: &str, detail: Value) -> Value {
    let mut answer = runtime_ready(session);
    answer["mode"] = json!("unavailable");
    answer["rpc_url"] = Value::Null;
    answer["token"] = Value::Null;
    answer["detail"] = detail;
    answer
}

/// A transient P11 answer in `state` (checking, starting, waking, updating) with this interval.
pub fn runtime_transient(state: &str, retry_after_ms: Option<i64>) -> Value {
    json!({
        "mode": "unavailable",
        "rpc_url": null,
        "token": null,
        "is_ready": false,
        "detail": "Starting.",
        "runtime_interaction": {"state": state, "can_submit": false,
            "notice": {"code": "agent_waking", "severity": "info", "title": "Starting Ledger Helper", "message": "Ledger Helper is starting."},
            "operation": null, "retry_after_ms": retry_after_ms},
        "runtime_presence": presence("provisioning")
    })
}

/// A terminal P11 answer (`update_failed`), with a support reference when given.
pub fn runtime_terminal(support_reference: Option<&str>) -> Value {
    let operation = support_reference.map(|r| {
        json!({"uid": "op-18", "status": "failed", "created_at": "2026-10-02T08:00:00Z", "started_at": null, "finished_at": null, "support_reference": r})
    });
    json!({
        "mode": "unavailable",
        "rpc_url": null,
        "token": null,
        "runtime_interaction": {"state": "update_failed", "can_submit": false,
            "notice": {"code": "agent_update_failed", "severity": "error", "title": "Update failed", "message": "Ledger Helper could not be updated."},
            "operation": operation, "retry_after_ms": null},
        "runtime_presence": presence("failed")
    })
}

/// A ui-message-stream body: one `data:` event per chunk, then `data: [DONE]`.
pub fn sse(chunks: &[Value]) -> Vec<u8> {
    let mut body = String::new();
    for c in chunks {
        body.push_str(&format!("data: {c}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

/// A whole answer with one text part, as an Agent streams it.
pub fn answer(message_id: &str, text: &str) -> Vec<u8> {
    sse(&[
        json!({"type": "start", "messageId": message_id}),
        json!({"type": "start-step"}),
        json!({"type": "text-start", "id": "t-1"}),
        json!({"type": "text-delta", "id": "t-1", "delta": text}),
        json!({"type": "text-end", "id": "t-1"}),
        json!({"type": "finish-step"}),
        json!({"type": "finish", "finishReason": "stop"}),
    ])
}

// ---------------------------------------------------------------------------------------------
// The model catalog (P12) and the model-required refusal (P7, P8)
// ---------------------------------------------------------------------------------------------

/// The `catalog_digest` of the P12 example.
pub const CATALOG_DIGEST: &str =
    "sha256:4f2a9c0b8e7d6a5f4c3b2a1908f7e6d5c4b3a29180f7e6d5c4b3a2918f7e6d5c";

/// The P12 example body of `platform-api.md`, verbatim: acme-cloud (oauth, signed in) with
/// acme-large (low, medium, high) and acme-small (no levels), then team-models with tm-1 (off,
/// high).
pub fn catalog() -> Value {
    json!({
      "schema_version": 1,
      "catalog_digest": CATALOG_DIGEST,
      "providers": [
        {"provider": "acme-cloud", "display_name": "Acme Cloud", "auth_methods": ["oauth"], "sign_in_available": true, "known": true, "enabled": true, "authenticated": true, "credential_status": "active", "default_model": "acme-large",
         "models": [
           {"model": "acme-large", "display_name": "Acme Large", "api": "openai-responses", "input": ["text", "image"], "reasoning": true, "thinking_levels": ["low", "medium", "high"], "context_window": 200000, "max_tokens": 32000},
           {"model": "acme-small", "display_name": "Acme Small", "api": "openai-responses", "input": ["text"], "reasoning": false, "thinking_levels": [], "context_window": 64000, "max_tokens": 8000}
         ]},
        {"provider": "team-models", "display_name": "Team Models", "auth_methods": [], "sign_in_available": false, "known": false, "enabled": true, "authenticated": true, "credential_status": "active", "default_model": "tm-1",
         "models": [{"model": "tm-1", "display_name": "TM 1", "api": "openai-completions", "input": ["text"], "reasoning": true, "thinking_levels": ["off", "high"], "context_window": 128000, "max_tokens": 16000}]}
      ]
    })
}

/// A catalog body (schema_version 1, [`CATALOG_DIGEST`]) listing these providers.
pub fn catalog_of(providers: &[Value]) -> Value {
    json!({"schema_version": 1, "catalog_digest": CATALOG_DIGEST, "providers": providers})
}

/// An enabled, signed-in provider without sign-in methods, listing these models.
pub fn catalog_provider(provider: &str, models: &[Value]) -> Value {
    let default_model = models
        .first()
        .and_then(|m| m.get("model"))
        .cloned()
        .unwrap_or_else(|| json!(""));
    json!({
        "provider": provider, "display_name": format!("Provider {provider}"), "auth_methods": [],
        "sign_in_available": false, "known": true, "enabled": true, "authenticated": true,
        "credential_status": "active", "default_model": default_model, "models": models
    })
}

/// A model offering these thinking levels (`reasoning` true exactly when it has levels).
pub fn catalog_model(model: &str, levels: &[&str]) -> Value {
    json!({
        "model": model, "display_name": format!("Model {model}"), "api": "openai-responses",
        "input": ["text"], "reasoning": !levels.is_empty(), "thinking_levels": levels,
        "context_window": 100000, "max_tokens": 8000
    })
}

/// The model-required refusal body of P7 and P8 (sent with HTTP 400).
pub fn model_required() -> Value {
    json!({"llm_provider": ["This field is required."], "llm_model": ["This field is required."]})
}

/// `record` with its stored model replaced: `llm_provider`, `llm_model` and, when given,
/// `llm_thinking`.
pub fn with_model(mut record: Value, provider: &str, model: &str, thinking: Option<&str>) -> Value {
    if let Some(o) = record.as_object_mut() {
        o.insert("llm_provider".into(), json!(provider));
        o.insert("llm_model".into(), json!(model));
        if let Some(t) = thinking {
            o.insert("llm_thinking".into(), json!(t));
        }
    }
    record
}

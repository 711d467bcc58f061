//! A local Agent runtime (ADR 099; `platform-api.md` section 8), served at the root of the
//! simulator when [`crate::SimConfig::local`] is set: `/ready`, `/health`, `/api/chat` (the
//! probe and a turn), `/api/chat/session/cancel`, `/api/chat/model-providers`,
//! `/api/chat/session-model`, `/api/local/v1/chat-sessions[/{id}/history]` and
//! `/api/local/v1/agent`.
//!
//! Its conversations are sessions of the first Agent whose ids start with `local-`. A turn
//! under an id that does not (a client's new conversation, or the runtime's `default`) starts a
//! conversation of its own (`default` always the same one, `local-default`), and every answer
//! names the conversation in the `X-Agent-Session-Uid` header. A local runtime takes no
//! credential: a request that carries `Authorization` gets 400.

use std::sync::Arc;

use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderName, HeaderValue, Method};
use axum::response::Response;
use serde_json::{Value, json};

use crate::runtime::{self, NEVER_SENT, StartTurn, body_object, stop_turn, text, user_text};
use crate::server::{Req, Shared, cut_in_half, error, json_response, lock};
use crate::state::{NewSession, Session, State};
use crate::types::LocalRuntime;
use crate::wire::{self, iso};

/// The response header that names the conversation a turn ran in.
pub const SESSION_HEADER: &str = "x-agent-session-uid";

/// The id the runtime's default conversation gets.
const DEFAULT_CONVERSATION: &str = "local-default";

/// Whether `path` is one of the local runtime's routes.
pub(crate) fn is_local_route(path: &str) -> bool {
    matches!(path, "/ready" | "/health")
        || path == "/api/chat"
        || path.starts_with("/api/chat/")
        || path.starts_with("/api/local/")
}

/// Handles a local runtime request.
pub(crate) async fn handle(
    shared: &Arc<Shared>,
    local: &LocalRuntime,
    req: &Req,
    path: &str,
    drop_after: Option<usize>,
) -> Response {
    if req.headers.contains_key(AUTHORIZATION) {
        return error(400, "A local Agent runtime takes no credential.");
    }
    let m = &req.method;
    let response = match path {
        "/ready" if m == Method::GET => ready(shared, local),
        "/health" if m == Method::GET => {
            json_response(200, &json!({"ok": true, "mode": local.mode}))
        }
        "/api/chat" if m == Method::GET => {
            if local_ready(shared, local, false) {
                json_response(
                    200,
                    &json!({"status": "ready", "protocol": "ui-message-stream"}),
                )
            } else {
                error(503, "The local Agent is starting.")
            }
        }
        "/api/chat" if m == Method::POST => return turn(shared, local, req, drop_after),
        "/api/chat/session/cancel" if m == Method::POST => cancel(shared, req),
        "/api/chat/model-providers" if m == Method::GET => {
            json_response(200, &shared.config.catalog)
        }
        "/api/chat/session-model" if m == Method::GET => {
            let uid = runtime_uid(req.param("sessionUid").unwrap_or_default());
            let state = lock(&shared.state);
            match state.session(&uid).filter(|s| is_conversation(s)) {
                Some(session) => json_response(200, &session_model(session)),
                None => error(404, "No such conversation."),
            }
        }
        "/api/chat/session-model" if m == Method::PUT => set_session_model(shared, req),
        "/api/local/v1/agent" if m == Method::GET => json_response(
            200,
            &json!({"name": "local-agent", "displayName": local.display_name, "description": "A simulated local Agent."}),
        ),
        "/api/local/v1/chat-sessions" if m == Method::GET => sessions(shared, local, req),
        _ if m == Method::GET && path.starts_with("/api/local/v1/chat-sessions/") => {
            history(shared, local, path)
        }
        _ => error(404, "Not found."),
    };
    match drop_after {
        Some(_) => cut_in_half(response).await,
        None => response,
    }
}

/// `GET /ready`: `ok: true` once the runtime has been checked `ready_after` times.
fn ready(shared: &Shared, local: &LocalRuntime) -> Response {
    if local_ready(shared, local, true) {
        json_response(200, &json!({"ok": true}))
    } else {
        json_response(
            503,
            &json!({"ok": false, "detail": "The local Agent is loading its model."}),
        )
    }
}

/// Whether the runtime is ready; `count` makes this check one of the `ready_after`.
fn local_ready(shared: &Shared, local: &LocalRuntime, count: bool) -> bool {
    let mut state = lock(&shared.state);
    if count {
        state.local_checks = state.local_checks.saturating_add(1);
    }
    local.ready_after == 0 || state.local_checks > local.ready_after
}

fn is_conversation(session: &Session) -> bool {
    session.uid.starts_with("local-")
}

fn session_model(session: &Session) -> Value {
    let thinking = (!session.llm_thinking.is_empty()).then_some(session.llm_thinking.as_str());
    json!({
        "sessionUid": session.uid,
        "model": {"provider": session.llm_provider, "model": session.llm_model, "thinkingLevel": thinking},
    })
}

/// The runtime's id for a conversation a client names `requested`, as the reference's
/// stand-in derives it: an id of its own (`local-…`) is kept, `default` is
/// `local-default`, and any other id maps to `local-` and 16 hex digits of its FNV-1a
/// hash, the same every time (so a client id read back after a reload finds its conversation).
pub fn runtime_uid(requested: &str) -> String {
    let requested = requested.trim();
    if requested.starts_with("local-") {
        requested.to_owned()
    } else if requested == "default" {
        DEFAULT_CONVERSATION.to_owned()
    } else {
        let hash = requested.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        format!("local-{hash:016x}")
    }
}

/// The conversation a turn under `requested` runs in, created when new.
fn conversation(
    shared: &Shared,
    state: &mut State,
    requested: &str,
) -> Result<String, &'static str> {
    let uid = runtime_uid(requested);
    if state.session(&uid).is_some() {
        return Ok(uid);
    }
    let agent_uid = state
        .agents
        .first()
        .map(|a| a.spec.uid.clone())
        .ok_or("The local runtime has no Agent.")?;
    let model = wire::check_choice(&shared.config.catalog, None, None, None)
        .map_err(|_| "The local runtime has no configured model.")?;
    let new = NewSession {
        agent_uid,
        thread_id: Some(uid.clone()),
        handle_unique_id: None,
        name: None,
        parent_session_uid: None,
        model,
    };
    Ok(state.create_session_as(Some(uid), new, &shared.config.person_uid))
}

/// `POST /api/chat`: the R2 body without `session`; the conversation is named by
/// `runtime_session_uid` and the answer's `X-Agent-Session-Uid` header.
fn turn(
    shared: &Arc<Shared>,
    local: &LocalRuntime,
    req: &Req,
    drop_after: Option<usize>,
) -> Response {
    let body = match body_object(req) {
        Ok(body) => body,
        Err(response) => return response,
    };
    if let Some(key) = NEVER_SENT
        .iter()
        .chain(["session", "newChat"].iter())
        .find(|k| body.contains_key(**k))
    {
        return error(400, &format!("Unexpected field: {key}."));
    }
    let user_text = match user_text(&body) {
        Ok(text) => text,
        Err(response) => return response,
    };
    if !local_ready(shared, local, false) {
        return error(503, "The local Agent is starting.");
    }
    let Some(requested) = text(&body, "runtime_session_uid").map(str::to_owned) else {
        return error(400, "runtime_session_uid is required.");
    };
    if text(&body, "threadId") != Some(requested.as_str()) {
        return error(400, "threadId must be the conversation's id.");
    }
    let mut state = lock(&shared.state);
    let uid = match conversation(shared, &mut state, &requested) {
        Ok(uid) => uid,
        Err(message) => return error(500, message),
    };
    let Some((agent_uid, answer)) = state
        .agents
        .first()
        .map(|a| (a.spec.uid.clone(), a.spec.answer.clone()))
    else {
        return error(500, "The local runtime has no Agent.");
    };
    let person = text(&body, "user_uid")
        .unwrap_or(&shared.config.person_uid)
        .to_owned();
    let start = StartTurn {
        session_uid: uid.clone(),
        agent_uid: &agent_uid,
        user_text: &user_text,
        person: &person,
        answer: &answer,
        frames: Vec::new(),
        drop_after,
    };
    let mut response = runtime::stream_turn(shared, state, start);
    if let Ok(value) = HeaderValue::from_str(&uid) {
        response
            .headers_mut()
            .insert(HeaderName::from_static(SESSION_HEADER), value);
    }
    response
}

/// `POST /api/chat/session/cancel` with `{sessionUid, message}`.
fn cancel(shared: &Shared, req: &Req) -> Response {
    let body = match body_object(req) {
        Ok(body) => body,
        Err(response) => return response,
    };
    let Some(uid) = text(&body, "sessionUid").map(runtime_uid) else {
        return error(400, "sessionUid is required.");
    };
    let mut state = lock(&shared.state);
    match state.session_mut(&uid).filter(|s| is_conversation(s)) {
        Some(session) => {
            let status = stop_turn(session);
            json_response(200, &json!({"sessionUid": uid, "status": status}))
        }
        None => error(404, "No such conversation."),
    }
}

/// `PUT /api/chat/session-model` with `{sessionUid, provider, model, thinkingLevel}`, checked
/// against the catalog.
fn set_session_model(shared: &Shared, req: &Req) -> Response {
    let body = match body_object(req) {
        Ok(body) => body,
        Err(response) => return response,
    };
    let Some(uid) = text(&body, "sessionUid").map(runtime_uid) else {
        return error(400, "sessionUid is required.");
    };
    let (provider, model) = (text(&body, "provider"), text(&body, "model"));
    let thinking = text(&body, "thinkingLevel");
    let (pick, thinking) =
        match wire::check_choice(&shared.config.catalog, provider, model, thinking) {
            Ok(choice) => choice,
            Err((_, message)) => return error(400, message),
        };
    let mut state = lock(&shared.state);
    let Some(session) = state.session_mut(&uid).filter(|s| is_conversation(s)) else {
        return error(404, "No such conversation.");
    };
    session.llm_provider = pick.provider;
    session.llm_model = pick.model;
    session.llm_thinking = thinking;
    json_response(200, &session_model(session))
}

/// `GET /api/local/v1/chat-sessions?limit=N`: newest first; 404 for a runtime that cannot list.
fn sessions(shared: &Shared, local: &LocalRuntime, req: &Req) -> Response {
    if !local.lists_sessions {
        return error(404, "Not found.");
    }
    let limit = req
        .param("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(50)
        .clamp(1, 100);
    let state = lock(&shared.state);
    let mut rows: Vec<&Session> = state
        .sessions
        .iter()
        .filter(|s| is_conversation(s))
        .collect();
    rows.sort_by_key(|s| std::cmp::Reverse(s.updated_ms));
    let rows: Vec<Value> = rows
        .into_iter()
        .take(limit)
        .map(|s| {
            let first_user = s
                .messages
                .iter()
                .find(|m| m.get("role").and_then(Value::as_str) == Some("user"));
            let title = first_user
                .and_then(|m| m.pointer("/content/0/text"))
                .and_then(Value::as_str)
                .map(|t| t.chars().take(80).collect::<String>());
            let preview = s
                .messages
                .last()
                .and_then(|m| m.pointer("/content/0/text"))
                .and_then(Value::as_str);
            json!({
                "sessionUid": s.uid,
                "title": title,
                "messageCount": s.messages.len(),
                "latestMessagePreview": preview,
                "createdAt": iso(s.started_ms),
                "updatedAt": iso(s.updated_ms),
                "working": s.working(),
            })
        })
        .collect();
    json_response(200, &json!({"sessions": rows, "nextCursor": null}))
}

/// `GET /api/local/v1/chat-sessions/{id}/history`: the P9 shape (empty for a conversation
/// the runtime does not know yet); 404 for a runtime that cannot list.
fn history(shared: &Shared, local: &LocalRuntime, path: &str) -> Response {
    if !local.lists_sessions {
        return error(404, "Not found.");
    }
    let Some(uid) = path
        .strip_prefix("/api/local/v1/chat-sessions/")
        .and_then(|rest| rest.strip_suffix("/history"))
        .map(|uid| runtime_uid(&crate::server::decode(uid)))
    else {
        return error(404, "Not found.");
    };
    let state = lock(&shared.state);
    let found = state
        .session(&uid)
        .filter(|s| is_conversation(s))
        .and_then(|s| state.history(s));
    let body = found.unwrap_or_else(|| {
        json!({"version": 1, "session": {"sessionId": uid, "threadId": uid, "status": "completed"},
            "messages": [], "inProgressMessage": null})
    });
    json_response(200, &body)
}

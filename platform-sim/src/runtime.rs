//! The Agent runtime routes under `/runtime/{agent_uid}`: R1 readiness, R2 turn, R3 cancel.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderName, HeaderValue, Method};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, watch};

use crate::answer::answer_frames;
use crate::server::{
    FLUSH_PAUSE, Req, Shared, UNAUTHENTICATED, cut_in_half, error, json_response, lock, no_route,
    not_allowed,
};
use crate::state::{NewSession, Turn};
use crate::wire::{self, Frame, abort_frame, iso, now_ms};

/// Keys the engine never sends in a turn body (`platform-api.md` R2).
pub(crate) const NEVER_SENT: [&str; 6] = [
    "model",
    "agentType",
    "sessionMetadata",
    "sessionId",
    "runtime_session_id",
    "userId",
];

/// The content type of a streamed answer.
const EVENT_STREAM: &str = "text/event-stream";

/// RU-52: a turn for a session the Agent does not know (or none named).
const UNKNOWN_SESSION: &str = "The chat request names no session this Agent knows.";
/// RU-52: a turn without the person's text.
pub(crate) const NO_MESSAGE: &str = "The chat request carries no message.";

/// The uid fields of a session record, in the order they are read.
const UID_FIELDS: [&str; 4] = [
    "uid",
    "agent_session_uid",
    "session_uid",
    "runtime_session_uid",
];

/// A runtime request: the Agent, the path below its runtime base, and the whole path.
pub(crate) struct Call<'a> {
    pub agent: &'a str,
    pub rest: &'a str,
    pub path: &'a str,
}

/// Handles a runtime request as the reference's stand-in does (RU-50): the route first (404
/// without one, 405 for another method), then the runtime token (401), then the route.
pub(crate) async fn handle(
    shared: &Arc<Shared>,
    req: &Req,
    call: Call<'_>,
    authorized: bool,
    drop_after: Option<usize>,
) -> Response {
    let Call { agent, rest, path } = call;
    let m = &req.method;
    let agent_uid = match lock(&shared.state).agent(agent) {
        Some(a) => a.spec.uid.clone(),
        None => return no_route(m, path),
    };
    let allowed = match rest {
        "/api/chat" => m == Method::GET || m == Method::POST,
        "/api/chat/session/cancel" => m == Method::POST,
        _ => return no_route(m, path),
    };
    if !allowed {
        return not_allowed(m);
    }
    if !authorized {
        return error(401, UNAUTHENTICATED);
    }
    let response = match rest {
        "/api/chat" if m == Method::GET => readiness(shared, &agent_uid),
        "/api/chat" if m == Method::POST => {
            let response = turn(shared, req, &agent_uid, drop_after);
            // A streamed answer cuts itself; a refusal is cut like any other answer.
            if response.headers().get(CONTENT_TYPE) == Some(&HeaderValue::from_static(EVENT_STREAM))
            {
                return response;
            }
            response
        }
        "/api/chat/session/cancel" if m == Method::POST => cancel(shared, req, &agent_uid),
        _ => not_allowed(m),
    };
    match drop_after {
        Some(_) => cut_in_half(response).await,
        None => response,
    }
}

/// R1: 200 while the runtime serves, else 503 (a check of a waking Agent counts toward its wake).
fn readiness(shared: &Shared, agent_uid: &str) -> Response {
    let mut state = lock(&shared.state);
    let Some(agent) = state.agent_mut(agent_uid) else {
        return error(404, "No such Agent.");
    };
    if agent.readiness_check() {
        json_response(
            200,
            &json!({"status": "ready", "protocol": "ui-message-stream"}),
        )
    } else {
        error(503, "The agent is not serving yet.")
    }
}

pub(crate) fn body_object(req: &Req) -> Result<Map<String, Value>, Response> {
    match req.json()? {
        Some(Value::Object(map)) => Ok(map),
        _ => Err(error(400, "The body must be a JSON object.")),
    }
}

pub(crate) fn text<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

/// The text of the one user message of a turn body.
pub(crate) fn user_text(body: &Map<String, Value>) -> Result<String, Response> {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let [message] = messages else {
        return Err(error(
            400,
            "messages must hold exactly one message: the newest user message.",
        ));
    };
    if message.get("role").and_then(Value::as_str) != Some("user") {
        return Err(error(400, "The message must be a user message."));
    }
    let parts = message
        .get("content")
        .or_else(|| message.get("parts"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let text: Vec<&str> = parts
        .iter()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    let text = text.join("\n");
    if text.trim().is_empty() {
        return Err(error(400, NO_MESSAGE));
    }
    Ok(text)
}

/// R2: validates the ADR 060 body and streams the answer.
fn turn(shared: &Arc<Shared>, req: &Req, agent_uid: &str, drop_after: Option<usize>) -> Response {
    let body = match body_object(req) {
        Ok(body) => body,
        Err(response) => return response,
    };
    if let Some(key) = NEVER_SENT.iter().find(|k| body.contains_key(**k)) {
        return error(400, &format!("Unexpected field: {key}."));
    }
    let mut user_text = user_text(&body);
    let new_chat = body.get("newChat") == Some(&Value::Bool(true));
    if *shared.shutdown.borrow() {
        return error(503, "The agent runtime is shutting down.");
    }

    let mut state = lock(&shared.state);
    let Some(agent) = state.agent(agent_uid).cloned() else {
        return error(404, "No such Agent.");
    };
    if !agent.serving() {
        return error(503, "The agent is not serving yet.");
    }
    let mut frames = Vec::new();
    let session_uid = match text(&body, "runtime_session_uid") {
        None if new_chat => {
            // Nothing is created for a turn without a message.
            user_text = match std::mem::replace(&mut user_text, Ok(String::new())) {
                Ok(text) => Ok(text),
                Err(response) => return response,
            };
            if agent.spec.needs_model {
                return error(
                    400,
                    "The agent has no default model: create the session with a model first.",
                );
            }
            let model = match wire::check_choice(&shared.config.catalog, None, None, None) {
                Ok(model) => model,
                Err((_, message)) => return error(400, message),
            };
            let thread_id = text(&body, "threadId").map(str::to_owned);
            let uid = state.create_session(
                NewSession {
                    agent_uid: agent_uid.to_owned(),
                    thread_id,
                    handle_unique_id: None,
                    name: None,
                    parent_session_uid: None,
                    model,
                },
                &shared.config.person_uid,
            );
            let thread = state
                .session(&uid)
                .map(|s| s.thread_id.clone())
                .unwrap_or_default();
            frames.push(Frame::Chunk(json!({
                "type": "new_session",
                "new_session": {"runtime_session_uid": uid, "agent_id": agent_uid, "thread_id": thread},
            })));
            uid
        }
        None => return error(404, UNKNOWN_SESSION),
        Some(uid) => {
            if state.session(uid).is_none_or(|s| s.agent_uid != agent_uid) {
                return error(404, UNKNOWN_SESSION);
            }
            let named = body
                .get("session")
                .and_then(Value::as_object)
                .and_then(|s| UID_FIELDS.iter().find_map(|k| text(s, k)));
            if named != Some(uid) {
                return error(
                    400,
                    "The chat request must carry the session it belongs to.",
                );
            }
            uid.to_owned()
        }
    };
    // RU-52's order: the session, then the message, then a turn already running.
    let user_text = match user_text {
        Ok(text) => text,
        Err(response) => return response,
    };

    let person = text(&body, "user_uid")
        .unwrap_or(&shared.config.person_uid)
        .to_owned();
    // RU-53: a model the catalog does not offer, or a provider not signed in, fails the turn.
    let refused = state
        .session(&session_uid)
        .and_then(|s| wire::turn_refusal(&shared.config.catalog, &s.llm_provider, &s.llm_model))
        .map(crate::types::AnswerStyle::RefusedTurn);
    let started = StartTurn {
        session_uid,
        agent_uid,
        user_text: &user_text,
        person: &person,
        answer: refused.as_ref().unwrap_or(&agent.spec.answer),
        frames,
        drop_after,
    };
    stream_turn(shared, state, started)
}

/// What [`stream_turn`] starts: the session, the person's text, and the frames to send first.
pub(crate) struct StartTurn<'a> {
    pub session_uid: String,
    pub agent_uid: &'a str,
    pub user_text: &'a str,
    pub person: &'a str,
    pub answer: &'a crate::types::AnswerStyle,
    /// Frames sent before the answer (a `new_session` frame).
    pub frames: Vec<Frame>,
    pub drop_after: Option<usize>,
}

/// Starts a turn in a session and streams its answer (409 while the session already answers).
/// Shared by the Agent runtime (R2) and the local runtime.
pub(crate) fn stream_turn(
    shared: &Arc<Shared>,
    mut state: std::sync::MutexGuard<'_, crate::state::State>,
    start: StartTurn<'_>,
) -> Response {
    let StartTurn {
        session_uid,
        agent_uid,
        user_text,
        person,
        answer,
        mut frames,
        drop_after,
    } = start;
    let turn_id = state.next_seq();
    let message_id = format!("msg-{turn_id:04}-a");
    let now = now_ms();
    let user_message = json!({
        "id": format!("msg-{turn_id:04}-u"),
        "role": "user",
        "createdAt": iso(now),
        "content": [{"type": "text", "text": user_text}],
        "provenance": {"origin": "user", "actorKind": "user", "actorUid": person, "targetAgentUid": agent_uid},
    });
    let Some(session) = state.session_mut(&session_uid) else {
        return error(404, "No such session.");
    };
    if session.working() {
        return error(409, "The Agent is already answering in this session.");
    }
    let (cancel_tx, cancel_rx) = watch::channel(false);
    session.turn = Some(Turn {
        id: turn_id,
        message_id: message_id.clone(),
        user_message,
        builder: wire::AnswerBuilder::default(),
        cancel: cancel_tx,
        started_ms: now,
    });
    session.updated_ms = now;
    drop(state);

    frames.extend(answer_frames(
        shared.config.dialect,
        answer,
        user_text,
        &message_id,
    ));
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(run_turn(
        Arc::clone(shared),
        session_uid,
        turn_id,
        frames,
        cancel_rx,
        tx,
        drop_after,
        Duration::from_millis(shared.config.answer_delay_ms),
    ));
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(EVENT_STREAM));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        HeaderName::from_static("x-vercel-ai-ui-message-stream"),
        HeaderValue::from_static("v1"),
    );
    headers.insert(
        HeaderName::from_static("x-accel-buffering"),
        HeaderValue::from_static("no"),
    );
    response
}

/// Whether the turn was cancelled (or left the session).
fn cancelled(cancel: &watch::Receiver<bool>) -> bool {
    let flagged = *cancel.borrow();
    flagged || cancel.has_changed().is_err()
}

/// Ends turn `turn_id` of the session, if it still runs.
fn end_turn(shared: &Shared, session_uid: &str, turn_id: u64) {
    if let Some(session) = lock(&shared.state).session_mut(session_uid) {
        session.end_turn(Some(turn_id));
    }
}

type Chunked = Result<Bytes, std::io::Error>;

/// Streams the frames of one turn, paced, until done, cancelled, cut or abandoned. The turn
/// ends (its messages join the history) before the last frame goes out.
#[allow(clippy::too_many_arguments)]
async fn run_turn(
    shared: Arc<Shared>,
    session_uid: String,
    turn_id: u64,
    frames: Vec<Frame>,
    mut cancel: watch::Receiver<bool>,
    tx: mpsc::Sender<Chunked>,
    drop_after: Option<usize>,
    delay: Duration,
) {
    let total = frames.len();
    let mut sent = 0usize;
    for frame in frames {
        if sent > 0 && !delay.is_zero() {
            tokio::select! {
                _ = cancel.wait_for(|c| *c) => {}
                () = tokio::time::sleep(delay) => {}
            }
        }
        if cancelled(&cancel) {
            end_turn(&shared, &session_uid, turn_id);
            for frame in [abort_frame(), Frame::done()] {
                if tx.send(Ok(frame.bytes())).await.is_err() {
                    break;
                }
            }
            return;
        }
        if drop_after == Some(sent) {
            end_turn(&shared, &session_uid, turn_id);
            cut(&tx).await;
            return;
        }
        if let Some(chunk) = frame.chunk()
            && let Some(session) = lock(&shared.state).session_mut(&session_uid)
            && let Some(turn) = session.turn.as_mut().filter(|t| t.id == turn_id)
        {
            turn.builder.apply(chunk);
        }
        if sent.saturating_add(1) == total && drop_after.is_none() {
            end_turn(&shared, &session_uid, turn_id);
        }
        if tx.send(Ok(frame.bytes())).await.is_err() {
            // The client went away.
            end_turn(&shared, &session_uid, turn_id);
            return;
        }
        sent = sent.saturating_add(1);
    }
    end_turn(&shared, &session_uid, turn_id);
    if drop_after.is_some() {
        cut(&tx).await;
    }
}

/// Breaks the connection once what was sent had time to go out.
async fn cut(tx: &mpsc::Sender<Chunked>) {
    tokio::time::sleep(FLUSH_PAUSE).await;
    let _ = tx
        .send(Err(std::io::Error::other("dropped mid-stream")))
        .await;
}

/// R3: stops the running answer of a session.
fn cancel(shared: &Shared, req: &Req, agent_uid: &str) -> Response {
    let body = match body_object(req) {
        Ok(body) => body,
        Err(response) => return response,
    };
    let unknown = || error(404, "The cancel request names no session this Agent knows.");
    let Some(uid) = text(&body, "runtime_session_uid") else {
        return unknown();
    };
    let mut state = lock(&shared.state);
    let Some(session) = state.session_mut(uid).filter(|s| s.agent_uid == agent_uid) else {
        return unknown();
    };
    let status = stop_turn(session);
    json_response(200, &json!({"runtime_session_uid": uid, "status": status}))
}

/// Stops a session's running answer: `"cancelled"`, or `"idle"` when none ran.
pub(crate) fn stop_turn(session: &mut crate::state::Session) -> &'static str {
    match &session.turn {
        Some(turn) => {
            turn.cancel.send_replace(true);
            session.end_turn(None);
            "cancelled"
        }
        None => "idle",
    }
}

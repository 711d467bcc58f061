//! The local Agent routes (ADR 099; `platform-api.md` section 8): the requests, rendered
//! without any credential, and the readers of their answers.
//!
//! Every reader takes the raw body and never panics. A failed local request reads
//! "{operation}: {detail}", the detail being the body's message (section 3's reader), else
//! `Status {N}`; no answer at all reads "{operation}: the local Agent did not answer.".

use bytes::Bytes;
use serde::Serialize;
use serde_json::{Map, Value};

use super::error::{error_message, parse_json};
use crate::http::{BodyMode, Header, HttpRequest, InvalidId, Method, Target, check_id, segment};
use crate::source::LocalSource;

/// The sessions asked for in one list read (`limit=50`, the reference's page).
pub const LOCAL_SESSION_PAGE: usize = 50;

/// The most session rows read from one answer; the rest are dropped.
pub const MAX_LOCAL_SESSIONS: usize = 500;

/// The longest string field kept from a local answer, in bytes (longer ones are cut at a
/// character boundary).
const MAX_FIELD_BYTES: usize = 4096;

/// The local runtime's refusal of a runtime in another mode (`GET /health`).
pub const MANAGED_MODE_TEXT: &str =
    "This Agent runs in managed mode. Only a runtime started in local mode can be used directly.";

/// `GET /ready` did not say `ok: true` and gave no detail.
pub const NOT_READY_TEXT: &str = "The local Agent is not ready yet.";

/// A request to the local runtime, in domain terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "route", rename_all = "snake_case")]
#[non_exhaustive]
pub enum LocalRoute {
    /// `GET /ready`.
    Ready,
    /// `GET /health`.
    Health,
    /// `GET /api/chat`: the chat route answers.
    ChatCheck,
    /// `GET /api/local/v1/agent`: the Agent's name and description.
    Agent,
    /// `GET /api/local/v1/chat-sessions?limit=50`.
    Sessions,
    /// `GET /api/local/v1/chat-sessions/{sessionUid}/history`.
    History {
        /// The conversation.
        session_uid: String,
    },
    /// `GET /api/chat/model-providers` (the P12 catalog shape).
    ModelProviders,
    /// `GET /api/chat/session-model?sessionUid=...`.
    SessionModel {
        /// The conversation.
        session_uid: String,
    },
    /// `PUT /api/chat/session-model` with `{sessionUid, provider, model, thinkingLevel}`.
    SetSessionModel {
        /// The conversation.
        session_uid: String,
        /// The provider id.
        provider: String,
        /// The model id.
        model: String,
        /// The thinking level, `null` when none.
        thinking_level: Option<String>,
    },
    /// `POST /api/chat`: one turn, streamed (the R2 body without `session`).
    SendMessage {
        /// The conversation the turn was sent under.
        session_uid: String,
        /// The body.
        body: Value,
    },
    /// `POST /api/chat/session/cancel` with `{"sessionUid", "message": "user_requested"}`.
    Cancel {
        /// The conversation.
        session_uid: String,
    },
}

impl LocalRoute {
    /// The operation's name as it starts a failure's text.
    pub fn operation_name(&self) -> &'static str {
        match self {
            LocalRoute::Ready => "Local Agent readiness",
            LocalRoute::Health => "Local Agent health",
            LocalRoute::ChatCheck => "Local Agent chat check",
            LocalRoute::Agent => "Local Agent description",
            LocalRoute::Sessions => "Local chat sessions",
            LocalRoute::History { .. } => "Local chat session history",
            LocalRoute::ModelProviders => "Local model catalog",
            LocalRoute::SessionModel { .. } => "Local session model",
            LocalRoute::SetSessionModel { .. } => "Changing the session's model",
            LocalRoute::SendMessage { .. } => "Local chat",
            LocalRoute::Cancel { .. } => "Stopping the session",
        }
    }

    /// The session the route is about, when it is about one.
    pub fn session_uid(&self) -> Option<&str> {
        match self {
            LocalRoute::History { session_uid }
            | LocalRoute::SessionModel { session_uid }
            | LocalRoute::SetSessionModel { session_uid, .. }
            | LocalRoute::SendMessage { session_uid, .. }
            | LocalRoute::Cancel { session_uid } => Some(session_uid),
            _ => None,
        }
    }

    /// Renders the route against the source: an absolute loopback base as it is, a path joined
    /// to `platform_base`'s origin (`root_relative`). No `Authorization`, no token: nothing of
    /// the person reaches a local runtime. Fails before any request exists when an id is not
    /// usable.
    pub fn render(
        &self,
        source: &LocalSource,
        platform_base: &str,
    ) -> Result<HttpRequest, InvalidId> {
        let (base, root_relative) = if source.is_path() {
            let origin =
                origin_of(platform_base).ok_or_else(|| InvalidId::refused("local base"))?;
            let path = source.base_url().trim_end_matches('/');
            (format!("{origin}{path}"), true)
        } else {
            (source.base_url().to_owned(), false)
        };
        let seg = |id: &str| check_id("session", id).map(|()| segment(id));
        let mut query = Vec::new();
        let mut body = None;
        let mut body_mode = BodyMode::Buffered;
        let (method, path) = match self {
            LocalRoute::Ready => (Method::Get, "/ready".to_owned()),
            LocalRoute::Health => (Method::Get, "/health".to_owned()),
            LocalRoute::ChatCheck => (Method::Get, "/api/chat".to_owned()),
            LocalRoute::Agent => (Method::Get, "/api/local/v1/agent".to_owned()),
            LocalRoute::Sessions => {
                query.push(("limit".to_owned(), LOCAL_SESSION_PAGE.to_string()));
                (Method::Get, "/api/local/v1/chat-sessions".to_owned())
            }
            LocalRoute::History { session_uid } => (
                Method::Get,
                format!("/api/local/v1/chat-sessions/{}/history", seg(session_uid)?),
            ),
            LocalRoute::ModelProviders => (Method::Get, "/api/chat/model-providers".to_owned()),
            LocalRoute::SessionModel { session_uid } => {
                check_id("session", session_uid)?;
                query.push(("sessionUid".to_owned(), session_uid.clone()));
                (Method::Get, "/api/chat/session-model".to_owned())
            }
            LocalRoute::SetSessionModel {
                session_uid,
                provider,
                model,
                thinking_level,
            } => {
                check_id("session", session_uid)?;
                let mut m = Map::new();
                m.insert("sessionUid".into(), Value::String(session_uid.clone()));
                m.insert("provider".into(), Value::String(provider.clone()));
                m.insert("model".into(), Value::String(model.clone()));
                m.insert(
                    "thinkingLevel".into(),
                    thinking_level.clone().map_or(Value::Null, Value::String),
                );
                body = Some(Value::Object(m));
                (Method::Put, "/api/chat/session-model".to_owned())
            }
            LocalRoute::SendMessage {
                session_uid,
                body: b,
            } => {
                check_id("session", session_uid)?;
                body = Some(b.clone());
                body_mode = BodyMode::Streamed;
                (Method::Post, "/api/chat".to_owned())
            }
            LocalRoute::Cancel { session_uid } => {
                check_id("session", session_uid)?;
                let mut m = Map::new();
                m.insert("sessionUid".into(), Value::String(session_uid.clone()));
                m.insert("message".into(), Value::String("user_requested".into()));
                body = Some(Value::Object(m));
                (Method::Post, "/api/chat/session/cancel".to_owned())
            }
        };
        let mut headers = Vec::new();
        if body.is_some() {
            headers.push(Header::new("Content-Type", "application/json"));
        }
        let accept = match self {
            LocalRoute::SendMessage { .. } => "text/event-stream",
            _ => "application/json",
        };
        headers.push(Header::new("Accept", accept));
        Ok(HttpRequest {
            method,
            target: Target::Local,
            base,
            path,
            query,
            headers,
            body: body.map(|v| Bytes::from(v.to_string())),
            body_mode,
            root_relative,
        })
    }
}

/// `scheme://authority` of an absolute `http`/`https` address.
fn origin_of(base: &str) -> Option<String> {
    let (scheme, rest) = base.trim().split_once("://")?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    (!authority.is_empty()).then(|| format!("{scheme}://{authority}"))
}

/// The text of a failed local request: "{operation}: {detail}" (the body's message, else
/// `Status {N}`), or "{operation}: the local Agent did not answer." when `status` is `None`.
pub fn local_failure_text(route: &LocalRoute, status: Option<u16>, body: &[u8]) -> String {
    let name = route.operation_name();
    match status {
        None => format!("{name}: the local Agent did not answer."),
        Some(status) => {
            let detail = error_message(body).unwrap_or_else(|| format!("Status {status}"));
            format!("{name}: {detail}")
        }
    }
}

/// What `GET /ready` said.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Readiness {
    /// 2xx and `ok: true`.
    Ready,
    /// Anything else, with the body's `detail` or [`NOT_READY_TEXT`].
    NotReady(String),
}

/// Reads `GET /ready`: ready only on a 2xx whose body is an object with `ok: true`.
pub fn read_ready(status: u16, body: &[u8]) -> Readiness {
    let value = parse_json(body);
    let ok = (200..300).contains(&status)
        && value
            .as_ref()
            .and_then(|v| v.get("ok"))
            .and_then(Value::as_bool)
            == Some(true);
    if ok {
        return Readiness::Ready;
    }
    let detail = value
        .as_ref()
        .and_then(|v| v.get("detail"))
        .and_then(text)
        .unwrap_or_else(|| NOT_READY_TEXT.to_owned());
    Readiness::NotReady(detail)
}

/// Reads `GET /health`: `Some(`[`MANAGED_MODE_TEXT`]`)` when a 2xx answer names a `mode` other
/// than `local`; any other answer lets the runtime through.
pub fn read_health(status: u16, body: &[u8]) -> Option<&'static str> {
    if !(200..300).contains(&status) {
        return None;
    }
    let mode = parse_json(body)?.get("mode").and_then(text)?;
    (mode != "local").then_some(MANAGED_MODE_TEXT)
}

/// One conversation of the local session list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LocalSession {
    /// `sessionUid`, trimmed.
    pub session_uid: String,
    /// `title`, when a non-blank string.
    pub title: Option<String>,
    /// `messageCount`, 0 when not a non-negative integer.
    pub message_count: u64,
    /// `latestMessagePreview`.
    pub latest_message_preview: Option<String>,
    /// `createdAt`.
    pub created_at: Option<String>,
    /// `updatedAt`.
    pub updated_at: Option<String>,
    /// `working`: only `true` counts.
    pub working: bool,
}

/// Reads `GET /api/local/v1/chat-sessions`: `{sessions: [...], nextCursor}`. Rows without a
/// usable `sessionUid` are dropped; at most [`MAX_LOCAL_SESSIONS`] are read. Not an object with
/// a `sessions` list: malformed.
pub fn parse_local_sessions(body: &[u8]) -> Result<Vec<LocalSession>, super::ApiError> {
    let rows = match parse_json(body) {
        Some(Value::Object(mut map)) => match map.remove("sessions") {
            Some(Value::Array(rows)) => rows,
            _ => return Err(malformed_sessions()),
        },
        _ => return Err(malformed_sessions()),
    };
    Ok(rows
        .iter()
        .filter_map(|row| {
            let uid = row.get("sessionUid").and_then(text)?;
            check_id("session", &uid).ok()?;
            Some(LocalSession {
                session_uid: uid,
                title: row.get("title").and_then(text),
                message_count: row.get("messageCount").and_then(Value::as_u64).unwrap_or(0),
                latest_message_preview: row.get("latestMessagePreview").and_then(text),
                created_at: row.get("createdAt").and_then(text),
                updated_at: row.get("updatedAt").and_then(text),
                working: row.get("working").and_then(Value::as_bool) == Some(true),
            })
        })
        .take(MAX_LOCAL_SESSIONS)
        .collect())
}

fn malformed_sessions() -> super::ApiError {
    super::ApiError::Malformed {
        message: "The local sessions answer is not an object with a sessions list.".to_owned(),
    }
}

/// Reads `GET /api/local/v1/agent`: the Agent's name (`displayName`, else `name`), when given.
pub fn parse_local_agent(body: &[u8]) -> Option<String> {
    let value = parse_json(body)?;
    value
        .get("displayName")
        .and_then(text)
        .or_else(|| value.get("name").and_then(text))
}

/// The model the runtime holds for a conversation (`GET`/`PUT /api/chat/session-model`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LocalSessionModel {
    /// `sessionUid`.
    pub session_uid: Option<String>,
    /// `model.provider`.
    pub provider: String,
    /// `model.model`.
    pub model: String,
    /// `model.thinkingLevel`, when a non-blank string.
    pub thinking_level: Option<String>,
}

/// Reads a session-model answer: `{sessionUid, model: {provider, model, thinkingLevel}}`;
/// `None` unless both provider and model are non-blank strings.
pub fn parse_session_model(body: &[u8]) -> Option<LocalSessionModel> {
    let value = parse_json(body)?;
    let model = value.get("model")?;
    Some(LocalSessionModel {
        session_uid: value.get("sessionUid").and_then(text),
        provider: model.get("provider").and_then(text)?,
        model: model.get("model").and_then(text)?,
        thinking_level: model.get("thinkingLevel").and_then(text),
    })
}

/// The runtime's id for a conversation, from the `X-Agent-Session-Uid` header's value: trimmed,
/// and usable as an id; `None` otherwise.
pub fn runtime_session_uid(header: Option<&str>) -> Option<String> {
    let uid = header?.trim();
    (check_id("session", uid).is_ok()
        && uid.len() <= MAX_FIELD_BYTES
        && !uid.contains(char::is_control))
    .then(|| uid.to_owned())
}

/// A non-blank string, trimmed and cut to [`MAX_FIELD_BYTES`].
fn text(value: &Value) -> Option<String> {
    let s = value.as_str()?.trim();
    if s.is_empty() {
        return None;
    }
    let mut end = s.len().min(MAX_FIELD_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).map(str::to_owned)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests;

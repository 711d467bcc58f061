//! The session record (`platform-api.md` section 5) and the P1/P7/P8 answers.

use serde::Serialize;
use serde_json::{Map, Value};

use super::ApiError;
use super::error::parse_json;
use crate::Json;

/// A platform AgentSession record, normalized. The raw JSON is kept verbatim in `raw`
/// (ADR 060 sends it back as `session`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionRecord {
    /// The session uid (fallbacks `agent_session_uid`, `session_uid`, `runtime_session_uid`).
    pub uid: String,
    /// The Agent uid (`agent.uid` wins over `agent_uid`).
    pub agent_uid: Option<String>,
    /// The Agent's display name (`agent_name`, else `agent.name`).
    pub agent_name: Option<String>,
    /// The record's Organization Environment.
    pub environment_uid: Option<String>,
    /// `name`.
    pub name: Option<String>,
    /// Title: `name`, `title`, `summary` (first non-empty), else "Agent session {uid}".
    pub title: String,
    /// Platform session status.
    pub status: Option<String>,
    /// `started_at` (ISO-8601).
    pub started_at: Option<String>,
    /// `ended_at` (ISO-8601).
    pub ended_at: Option<String>,
    /// `llm_provider`.
    pub llm_provider: Option<String>,
    /// `llm_model`.
    pub llm_model: Option<String>,
    /// `llm_thinking` (`""` means none).
    pub llm_thinking: Option<String>,
    /// `working`; absent means false.
    pub working: bool,
    /// `is_archived`; absent means false.
    pub is_archived: bool,
    /// The default-session handle: `bound_handle.handle_unique_id`, else the first
    /// `bound_handles[].handle_unique_id`.
    pub handle_unique_id: Option<String>,
    /// `created_by_user_uid`.
    pub created_by_user_uid: Option<String>,
    /// `archived_at`, when the record gives one (archived sessions).
    pub archived_at: Option<String>,
    /// The record as received, kept compact.
    #[serde(skip)]
    pub raw: Json,
}

impl SessionRecord {
    /// The list's "updated at": `ended_at`, else `started_at`.
    pub fn updated_at(&self) -> Option<&str> {
        self.ended_at.as_deref().or(self.started_at.as_deref())
    }

    /// Fails unless the record carries `organization_environment_uid` equal to `environment_uid`.
    pub fn check_environment(&self, environment_uid: &str) -> Result<(), ApiError> {
        match self.environment_uid.as_deref() {
            Some(e) if e == environment_uid => Ok(()),
            other => Err(ApiError::WrongEnvironment {
                expected: environment_uid.to_owned(),
                actual: other.map(str::to_owned),
            }),
        }
    }

    /// Checks a record read for `environment_uid` (list and detail reads, `platform-api.md`
    /// section 1): a uid that can be placed in a path, and that Environment, which must be named.
    pub fn check_for(&self, environment_uid: &str) -> Result<(), ApiError> {
        self.check_uid()?;
        self.check_environment(environment_uid)
    }

    /// Checks a record a creation returned: a usable uid, and no other Environment (a record that
    /// names none is accepted, since creation answers are not reads).
    pub fn check_created_in(&self, environment_uid: &str) -> Result<(), ApiError> {
        self.check_uid()?;
        match self.environment_uid.as_deref() {
            Some(e) if e != environment_uid => self.check_environment(environment_uid),
            _ => Ok(()),
        }
    }

    fn check_uid(&self) -> Result<(), ApiError> {
        crate::http::check_id("session", &self.uid).map_err(|e| ApiError::Malformed {
            message: e.to_string(),
        })
    }

    /// Normalizes one record from JSON. Fails when the value is not an object or has no uid.
    ///
    /// Extraction is tolerant: an optional field of the wrong type, or a blank string, reads
    /// as absent; string fields are trimmed. `raw` keeps `value` verbatim.
    pub fn from_value(value: Value) -> Result<SessionRecord, ApiError> {
        let Value::Object(map) = &value else {
            return Err(malformed(NOT_AN_OBJECT));
        };
        let Some(uid) = record_uid(map) else {
            return Err(malformed(NO_UID));
        };
        let agent = map.get("agent").and_then(Value::as_object);
        let name = text(map, "name");
        let title = name
            .clone()
            .or_else(|| text(map, "title"))
            .or_else(|| text(map, "summary"))
            .unwrap_or_else(|| format!("Agent session {uid}"));
        Ok(SessionRecord {
            agent_uid: agent
                .and_then(|agent| text(agent, "uid"))
                .or_else(|| text(map, "agent_uid")),
            agent_name: text(map, "agent_name")
                .or_else(|| agent.and_then(|agent| text(agent, "name"))),
            environment_uid: text(map, "organization_environment_uid"),
            name,
            title,
            status: text(map, "status"),
            started_at: text(map, "started_at"),
            ended_at: text(map, "ended_at"),
            llm_provider: text(map, "llm_provider"),
            llm_model: text(map, "llm_model"),
            llm_thinking: map
                .get("llm_thinking")
                .and_then(Value::as_str)
                .map(|thinking| thinking.trim().to_owned()),
            working: flag(map, "working"),
            is_archived: flag(map, "is_archived"),
            handle_unique_id: handle_unique_id(map),
            created_by_user_uid: text(map, "created_by_user_uid"),
            archived_at: text(map, "archived_at"),
            uid,
            raw: Json::compact_of(value),
        })
    }
}

/// Message for a record that is not an object.
const NOT_AN_OBJECT: &str = "The session record is not a JSON object.";
/// Message for a record without any uid.
const NO_UID: &str = "The session record has no uid.";
/// Message for a P2 body that is not JSON.
const DETAIL_NOT_JSON: &str = "The session detail answer is not valid JSON.";
/// Message for a P1 body that is not JSON.
const LIST_NOT_JSON: &str = "The session list answer is not valid JSON.";
/// Message for a P7 answer without a uid.
const CREATED_NO_UID: &str = "Session creation succeeded but no AgentSession uid was returned.";
/// Message for a P8 answer without a top-level uid.
const GET_OR_CREATE_NO_UID: &str =
    "Session get-or-create succeeded but no AgentSession uid was returned.";

/// The fields a record's uid is read from, in order. A numeric `id` is never the uid.
const UID_FIELDS: [&str; 4] = [
    "uid",
    "agent_session_uid",
    "session_uid",
    "runtime_session_uid",
];

/// The keys a P7 answer may wrap its record under.
const CREATED_WRAPPERS: [&str; 3] = ["session", "result", "data"];

fn malformed(message: &str) -> ApiError {
    ApiError::Malformed {
        message: message.to_owned(),
    }
}

/// The trimmed string at `key`, unless absent, not a string, or blank.
fn text(map: &Map<String, Value>, key: &str) -> Option<String> {
    let text = map.get(key)?.as_str()?.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The boolean at `key`; absent or not a boolean is false.
fn flag(map: &Map<String, Value>, key: &str) -> bool {
    map.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// The first non-blank string of the uid fields.
fn record_uid(map: &Map<String, Value>) -> Option<String> {
    UID_FIELDS.iter().find_map(|field| text(map, field))
}

/// Whether `value` is an object carrying a uid (any of the uid fields).
fn has_uid(value: &Value) -> bool {
    value.as_object().and_then(record_uid).is_some()
}

/// `bound_handle.handle_unique_id`, else the first `bound_handles[].handle_unique_id`.
fn handle_unique_id(map: &Map<String, Value>) -> Option<String> {
    map.get("bound_handle")
        .and_then(Value::as_object)
        .and_then(|handle| text(handle, "handle_unique_id"))
        .or_else(|| {
            map.get("bound_handles")
                .and_then(Value::as_array)?
                .iter()
                .filter_map(Value::as_object)
                .find_map(|handle| text(handle, "handle_unique_id"))
        })
}

/// P2: one record. Not an object, or no uid, is malformed.
pub fn parse_session_record(body: &[u8]) -> Result<SessionRecord, ApiError> {
    let value = parse_json(body).ok_or_else(|| malformed(DETAIL_NOT_JSON))?;
    SessionRecord::from_value(value)
}

/// P1: a JSON array of records or a page `{count, next, previous, results}`; anything else reads
/// as an empty list. Rows that are not valid records are skipped. A body that is not JSON is
/// malformed.
pub fn parse_session_list(body: &[u8]) -> Result<Vec<SessionRecord>, ApiError> {
    let value = parse_json(body).ok_or_else(|| malformed(LIST_NOT_JSON))?;
    let rows = match value {
        Value::Array(rows) => rows,
        Value::Object(mut page) => match page.remove("results") {
            Some(Value::Array(rows)) => rows,
            _ => Vec::new(),
        },
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => Vec::new(),
    };
    Ok(rows
        .into_iter()
        .filter_map(|row| SessionRecord::from_value(row).ok())
        .collect())
}

/// P1 read for `environment_uid`: a record from another Environment (or naming none) fails the
/// whole read; archived rows and rows whose uid cannot be a path segment are left out (OI-13).
pub fn parse_session_list_in(
    body: &[u8],
    environment_uid: &str,
) -> Result<Vec<SessionRecord>, ApiError> {
    let records = parse_session_list(body)?;
    records
        .iter()
        .try_for_each(|r| r.check_environment(environment_uid))?;
    Ok(records
        .into_iter()
        .filter(|r| !r.is_archived && r.check_uid().is_ok())
        .collect())
}

/// P7: a record, possibly wrapped one level under `session`, `result` or `data`, or a bare
/// `{"uid": ...}`. No uid: "Session creation succeeded but no AgentSession uid was returned."
pub fn parse_created_session(body: &[u8]) -> Result<SessionRecord, ApiError> {
    let value = parse_json(body).ok_or_else(|| malformed(CREATED_NO_UID))?;
    let record = if has_uid(&value) {
        value
    } else {
        let Value::Object(mut map) = value else {
            return Err(malformed(CREATED_NO_UID));
        };
        let Some(wrapper) = CREATED_WRAPPERS
            .iter()
            .find(|key| map.get(**key).is_some_and(has_uid))
        else {
            return Err(malformed(CREATED_NO_UID));
        };
        map.remove(*wrapper)
            .ok_or_else(|| malformed(CREATED_NO_UID))?
    };
    SessionRecord::from_value(record).map_err(|_| malformed(CREATED_NO_UID))
}

/// P8: an unwrapped record with `uid`; anything else is
/// "Session get-or-create succeeded but no AgentSession uid was returned."
///
/// Only the `uid` field itself counts here (the record fallbacks do not), as section P8 asks.
pub fn parse_get_or_create_session(body: &[u8]) -> Result<SessionRecord, ApiError> {
    let value = parse_json(body).ok_or_else(|| malformed(GET_OR_CREATE_NO_UID))?;
    if value.as_object().and_then(|map| text(map, "uid")).is_none() {
        return Err(malformed(GET_OR_CREATE_NO_UID));
    }
    SessionRecord::from_value(value).map_err(|_| malformed(GET_OR_CREATE_NO_UID))
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests;

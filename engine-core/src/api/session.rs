//! The session record (`platform-api.md` section 5) and the P1/P7/P8 answers.

use serde::Serialize;
use serde_json::Value;

use super::ApiError;

/// A platform AgentSession record, normalized. The raw JSON is kept verbatim in `raw`
/// (ADR 060 sends it back as `session`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
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
    /// The record as received.
    #[serde(skip)]
    pub raw: Value,
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

    /// Normalizes one record from JSON. Fails when the value is not an object or has no uid.
    pub fn from_value(value: Value) -> Result<SessionRecord, ApiError> {
        let _ = value;
        Err(ApiError::Malformed { message: String::new() })
    }
}

/// P2: one record. Not an object, or no uid, is malformed.
pub fn parse_session_record(body: &[u8]) -> Result<SessionRecord, ApiError> {
    let _ = body;
    Err(ApiError::Malformed { message: String::new() })
}

/// P1: a JSON array of records or a page `{count, next, previous, results}`; anything else reads
/// as an empty list. Rows that are not valid records are skipped.
pub fn parse_session_list(body: &[u8]) -> Result<Vec<SessionRecord>, ApiError> {
    let _ = body;
    Ok(Vec::new())
}

/// P7: a record, possibly wrapped one level under `session`, `result` or `data`, or a bare
/// `{"uid": ...}`. No uid: "Session creation succeeded but no AgentSession uid was returned."
pub fn parse_created_session(body: &[u8]) -> Result<SessionRecord, ApiError> {
    let _ = body;
    Err(ApiError::Malformed { message: String::new() })
}

/// P8: an unwrapped record with `uid`; anything else is
/// "Session get-or-create succeeded but no AgentSession uid was returned."
pub fn parse_get_or_create_session(body: &[u8]) -> Result<SessionRecord, ApiError> {
    let _ = body;
    Err(ApiError::Malformed { message: String::new() })
}

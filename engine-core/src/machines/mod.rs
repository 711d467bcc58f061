//! One statig machine per concern. Machines never call each other: they talk through
//! [`Signal`]s that the `Engine` relays until nothing changes.

pub(crate) mod default_session;
pub(crate) mod environment;
pub(crate) mod hydration;
pub(crate) mod opening;
pub(crate) mod runtime_access;
pub(crate) mod selection;

use crate::api::ApiError;
use crate::input::SessionSummary;

/// A fact one machine tells the others, relayed by the engine's settle loop.
#[derive(Debug, Clone)]
pub(crate) enum Signal {
    /// Put this session into the current list (a created, opened or loaded session; REQ-3).
    Upsert(SessionSummary),
    /// A session was opened or created for an action or the launch target.
    Opened {
        session: SessionSummary,
        launched: bool,
        listed: bool,
    },
    /// The selected session's detail loaded.
    DetailLoaded { session_uid: String },
    /// The selected session's detail read failed.
    DetailFailed {
        session_uid: String,
        error: ApiError,
    },
    /// Set `sessionNotice` about this session; dropped when it is no longer selected (SHR-7).
    Notice { session_uid: String, text: String },
    /// A session was archived or deleted through the engine.
    Removed { session_uid: String, archived: bool },
}

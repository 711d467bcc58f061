//! Whether a message can be sent now and, when not, what the engine waits for or what stops
//! it (`Snapshot::send_readiness`): one answer for a host that waits to send, computed with the
//! snapshot from the same state. The specification's own fields (`composerAdmission`,
//! `activeSessionReadiness`, `latestSessionsError`, `defaultSessionError`,
//! `activeRuntimeInteraction`) are unchanged; this reads them in one order and names the cause.

use serde::Serialize;

use super::{DefaultSessionStatus, ReadinessStatus, Snapshot};
use crate::api::{ApiError, InteractionState};

/// `sendReadiness`: can the person send a message to the selected session now?
///
/// ```
/// use engine_core::{Config, Engine, SendReadiness, Time};
///
/// let engine = Engine::new(Config::new("https://platform.example.test").unwrap(), Time::ZERO);
/// // Nothing is shown yet: the host has not made the chat visible.
/// let SendReadiness::Blocked(cause) = engine.snapshot().send_readiness else { panic!() };
/// assert_eq!(cause.code.as_str(), "not_visible");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SendReadiness {
    /// A message can be sent now: exactly when `composerAdmission` holds.
    Ready,
    /// Not yet: the engine is getting there by itself.
    Waiting {
        /// What it waits for.
        #[serde(rename = "waitingFor")]
        waiting_for: Waiting,
    },
    /// Not without something changing: a failure, or something the host or the person must do.
    Blocked(NotReady),
}

impl SendReadiness {
    /// Whether a message can be sent now.
    pub fn is_ready(&self) -> bool {
        matches!(self, SendReadiness::Ready)
    }
}

/// What a [`SendReadiness::Waiting`] engine waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Waiting {
    /// The latest-sessions list (P1) that chooses a session.
    Sessions,
    /// The default session's get-or-create (P8), or its selection.
    DefaultSession,
    /// The selected session's detail and history.
    Session,
    /// The runtime-access decision and the Agent's confirmation (P11, R1).
    RuntimeAccess,
    /// The Agent's runtime is starting: the platform woke it and the engine follows the wake.
    RuntimeStart,
}

impl Waiting {
    /// A short text for a status line ("Loading the sessions...").
    pub fn text(self) -> &'static str {
        match self {
            Waiting::Sessions => "Loading the sessions...",
            Waiting::DefaultSession => "Opening the default session...",
            Waiting::Session => "Loading the session...",
            Waiting::RuntimeAccess => "Checking that the Agent is ready...",
            Waiting::RuntimeStart => "The Agent's runtime is starting...",
        }
    }
}

/// Why no message can be sent, as [`SendReadiness::Blocked`] gives it and the shells' waits
/// return it. `Display` is the message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("{message}")]
#[non_exhaustive]
pub struct NotReady {
    /// The cause, as a stable code.
    pub code: NotReadyCode,
    /// The text to show: the engine's own text for the failure where there is one (the
    /// snapshot's `latestSessionsError`, `defaultSessionError`, `activeSessionReadiness.error`,
    /// or the runtime's notice), else a sentence saying what the host should do.
    pub message: String,
    /// The failing read, when a platform read caused it: its operation, HTTP status and the
    /// server's message, or the transport failure (`{"kind": "http", "operation":
    /// "session_list", "status": 401, "server_message": "..."}`).
    pub failure: Option<ApiError>,
    /// The runtime notice's own code (`activeRuntimeInteraction.notice.code`), when the
    /// runtime refused.
    pub notice_code: Option<String>,
}

impl NotReady {
    /// A cause with its code and message alone.
    pub fn new(code: NotReadyCode, message: impl Into<String>) -> NotReady {
        NotReady {
            code,
            message: message.into(),
            failure: None,
            notice_code: None,
        }
    }

    /// The HTTP status of the failing read, when it had one.
    pub fn status(&self) -> Option<u16> {
        self.failure.as_ref().and_then(ApiError::status)
    }
}

/// [`NotReady::code`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NotReadyCode {
    /// The host has not made the chat visible (`Input::IsVisible(true)`).
    NotVisible,
    /// No Environment is active (`Input::EnvironmentUid`).
    NoEnvironment,
    /// The default session is shown but names no Agent (`DefaultSession::agent_uid`).
    NoDefaultAgent,
    /// The default session could not be opened (`defaultSessionError`).
    DefaultSessionFailed,
    /// The latest-sessions list failed while it was needed to choose a session
    /// (`latestSessionsError`).
    SessionsFailed,
    /// No session is selected and none will be by itself: start or choose one (or give a
    /// default session).
    NoSession,
    /// The selected session's detail or history could not be loaded
    /// (`activeSessionReadiness.error`).
    SessionUnavailable,
    /// The session needs a model before it can start (`sessionModelSelectionRequest`).
    ModelRequired,
    /// The Agent's runtime does not take a message (`activeRuntimeInteraction`).
    RuntimeUnavailable,
    /// A shell's wait ended before the engine was ready (the message says what it waited for).
    TimedOut,
    /// The shell stopped.
    Closed,
}

impl NotReadyCode {
    /// The code's text, as it serializes.
    pub fn as_str(self) -> &'static str {
        match self {
            NotReadyCode::NotVisible => "not_visible",
            NotReadyCode::NoEnvironment => "no_environment",
            NotReadyCode::NoDefaultAgent => "no_default_agent",
            NotReadyCode::DefaultSessionFailed => "default_session_failed",
            NotReadyCode::SessionsFailed => "sessions_failed",
            NotReadyCode::NoSession => "no_session",
            NotReadyCode::SessionUnavailable => "session_unavailable",
            NotReadyCode::ModelRequired => "model_required",
            NotReadyCode::RuntimeUnavailable => "runtime_unavailable",
            NotReadyCode::TimedOut => "timed_out",
            NotReadyCode::Closed => "closed",
        }
    }
}

/// The typed failures behind the snapshot's texts, which the snapshot keeps as text only.
#[derive(Default)]
pub(crate) struct Failures<'a> {
    /// The latest-sessions read's (`latestSessionsError`).
    pub sessions: Option<&'a ApiError>,
    /// The default session's get-or-create (`defaultSessionError`).
    pub default_session: Option<&'a ApiError>,
    /// The selected session's detail or history read (`activeSessionReadiness.error`).
    pub session: Option<&'a ApiError>,
    /// A local runtime is in use: no Environment is needed.
    pub local: bool,
}

/// The snapshot's [`SendReadiness`]; the first matching case wins. Ready exactly when the
/// composer admits (a model choice pending for another session does not stop this one).
pub(crate) fn of(s: &Snapshot, failures: Failures<'_>) -> SendReadiness {
    use NotReadyCode as C;
    let blocked = |code, message: String, failure: Option<&ApiError>| {
        SendReadiness::Blocked(NotReady {
            code,
            message,
            failure: failure.cloned(),
            notice_code: None,
        })
    };
    if s.composer_admission {
        return SendReadiness::Ready;
    }
    if !s.is_visible {
        return blocked(
            C::NotVisible,
            "The chat is not visible: give the engine Input::IsVisible(true).".into(),
            None,
        );
    }
    if !failures.local && s.environment_uid.is_none() {
        return blocked(
            C::NoEnvironment,
            "No Environment is active: give the engine Input::EnvironmentUid.".into(),
            None,
        );
    }
    if s.session_model_selection_request.is_some() {
        return blocked(
            C::ModelRequired,
            "A model is needed to start this session: choose one (sessionModelSelectionRequest)."
                .into(),
            None,
        );
    }
    // A local runtime that does not pass its checks is the cause whatever the conversation
    // (the engine looks for it again every 5 s).
    if failures.local
        && let Some(refused) = runtime_refusal(s)
    {
        return SendReadiness::Blocked(refused);
    }
    match s.default_session_status {
        DefaultSessionStatus::Missing => {
            return blocked(
                C::NoDefaultAgent,
                "The default session names no Agent: give DefaultSession::agent_uid.".into(),
                None,
            );
        }
        DefaultSessionStatus::Error => {
            let message = s
                .default_session_error
                .clone()
                .or_else(|| failures.default_session.map(ApiError::to_string))
                .unwrap_or_else(|| "The default session could not be opened.".into());
            return blocked(C::DefaultSessionFailed, message, failures.default_session);
        }
        DefaultSessionStatus::Loading | DefaultSessionStatus::Opening => {
            return SendReadiness::Waiting {
                waiting_for: Waiting::DefaultSession,
            };
        }
        _ => {}
    }
    let readiness = &s.active_session_readiness;
    match readiness.status {
        ReadinessStatus::Ready => {}
        ReadinessStatus::Error | ReadinessStatus::NotFound if readiness.session_id.is_some() => {
            let message = readiness
                .error
                .clone()
                .unwrap_or_else(|| "The session is not available.".into());
            return blocked(C::SessionUnavailable, message, failures.session);
        }
        ReadinessStatus::Error => {
            // FAIL-7: the list that would choose a session failed.
            let message = s
                .latest_sessions_error
                .clone()
                .or_else(|| readiness.error.clone())
                .unwrap_or_default();
            return blocked(C::SessionsFailed, message, failures.sessions);
        }
        ReadinessStatus::Loading if readiness.session_id.is_some() => {
            return SendReadiness::Waiting {
                waiting_for: Waiting::Session,
            };
        }
        ReadinessStatus::Loading => {
            return SendReadiness::Waiting {
                waiting_for: Waiting::Sessions,
            };
        }
        _ if s.is_creating_agent_session || s.is_loading_latest_sessions => {
            return SendReadiness::Waiting {
                waiting_for: Waiting::Sessions,
            };
        }
        // A local runtime always shows a conversation: its own default, or the one kept.
        _ if failures.local => {
            return SendReadiness::Waiting {
                waiting_for: Waiting::Session,
            };
        }
        _ => {
            if let Some(e) = &s.latest_sessions_error {
                return blocked(C::SessionsFailed, e.clone(), failures.sessions);
            }
            return blocked(
                C::NoSession,
                "Choose or start a session before writing.".into(),
                None,
            );
        }
    }
    match &s.active_runtime_interaction {
        Some(_) if s.is_assistant_runtime_starting => {
            let waking = s
                .active_runtime_presence
                .as_ref()
                .is_some_and(|p| p.wake.is_some());
            SendReadiness::Waiting {
                waiting_for: if waking {
                    Waiting::RuntimeStart
                } else {
                    Waiting::RuntimeAccess
                },
            }
        }
        _ => match runtime_refusal(s) {
            Some(refused) => SendReadiness::Blocked(refused),
            None => SendReadiness::Waiting {
                waiting_for: Waiting::RuntimeAccess,
            },
        },
    }
}

/// The runtime's refusal: a decision that does not admit and is not still being checked.
fn runtime_refusal(s: &Snapshot) -> Option<NotReady> {
    let i = s.active_runtime_interaction.as_ref()?;
    if i.can_submit || i.state == InteractionState::Checking {
        return None;
    }
    let message = i
        .notice
        .as_ref()
        .map(|n| n.message.clone())
        .unwrap_or_else(|| "The Agent cannot take a new message right now.".into());
    Some(NotReady {
        code: NotReadyCode::RuntimeUnavailable,
        message,
        failure: None,
        notice_code: i.notice.as_ref().map(|n| n.code.clone()),
    })
}

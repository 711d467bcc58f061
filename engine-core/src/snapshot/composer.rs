//! `composerState` (RU-38, RU-39): what a composer shows and what a submit does, derived from
//! the snapshot's other values once they are final (as `sendReadiness` is).
//!
//! The reference pins seven rows (their conditions, flags and texts); the other statuses, their
//! reasons and the precedence among conditions are this engine's (`docs/interpretations.md`,
//! "The composer state"). The first matching condition wins:
//!
//! | # | Condition | status | canSend | queues | canWrite | reason |
//! | - | --- | --- | --- | --- | --- | --- |
//! | 1 | `sessionModelSelectionRequest` set | `choosing-model` | no | no | no | pinned |
//! | 2 | no session, nothing on its way to one | `no-session` | no | no | no | pinned |
//! | 3 | the session (or the one to show) loads | `loading` | no | no | no | pinned |
//! | 4 | `sendReadiness` blocked by a failure or refusal | `unavailable` | no | no | yes | its message (RU-44: and an error notice's support reference) |
//! | 5 | `isAssistantRuntimeStarting` | `waking` | no | no | no | pinned |
//! | 6 | `isCancellingSession` | `stopping` | as `ready` | as `working` | yes | "Stopping {Agent}..." |
//! | 7 | the Agent works (`isAgentWorking`) | `working` | no | yes | yes | pinned |
//! | 8 | visible, `hasRequestedAvailableModels` false | `loading-models` | no | no | yes | pinned |
//! | 9 | `composerAdmission` | `ready` | yes | no | yes | none |
//! | 10 | anything else (the chat hidden, no default Agent) | `busy` | no | no | yes | what it waits for, else none |

use serde::Serialize;

use super::ready::{NotReadyCode, SendReadiness};
use super::{DefaultSessionStatus, ReadinessStatus, Snapshot};

/// `composerState`: what a composer shows and what a submit does (RU-38).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ComposerState {
    /// Which state the composer is in.
    pub status: ComposerStatus,
    /// A submit sends the draft now (`Command::SendMessage` starts a turn).
    pub can_send: bool,
    /// A submit goes to the queue instead (`Command::SendMessage` or `EnqueueMessage` queues it).
    pub queues: bool,
    /// The draft is editable.
    pub can_write: bool,
    /// What to tell the person, when something keeps the composer from sending.
    pub reason: Option<String>,
    /// RU-44: the runtime's support reference, shown beside an `error` notice only (never
    /// beside an `info` one, such as a wake's); absent from the JSON when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub support_reference: Option<String>,
}

/// [`ComposerState::status`], with the reference's names (RU-38). The reference's
/// `models-unavailable` is not produced: a catalog failure never keeps a message from going
/// (OI-21), so it is no composer state here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ComposerStatus {
    /// A submit sends now.
    Ready,
    /// The Agent works on the session: a submit is queued.
    Working,
    /// The Agent's runtime is starting.
    Waking,
    /// The session loads.
    Loading,
    /// The model catalog has not been asked for yet.
    LoadingModels,
    /// No session is selected or on its way.
    NoSession,
    /// The session, the default session, the list or the runtime failed or refused.
    Unavailable,
    /// A model must be chosen before the session can start.
    ChoosingModel,
    /// A stop's cancel request is under way.
    Stopping,
    /// Not yet, for a reason of the engine's own (access being checked, the chat hidden).
    Busy,
}

/// RU-38's pinned texts.
const NO_SESSION: &str = "Select or start a session to continue.";
const LOADING: &str = "Loading session...";
const LOADING_MODELS: &str = "Loading models...";
const CHOOSING_MODEL: &str = "A model is needed to start this session. Choose one to continue.";

impl ComposerState {
    pub(crate) fn new(
        status: ComposerStatus,
        flags: [bool; 3],
        reason: Option<String>,
    ) -> ComposerState {
        let [can_send, queues, can_write] = flags;
        ComposerState {
            status,
            can_send,
            queues,
            can_write,
            reason,
            support_reference: None,
        }
    }
}

/// The composer state of a final snapshot; `agent` is the selected session's Agent name, when
/// known.
pub(crate) fn of(s: &Snapshot, agent: Option<&str>) -> ComposerState {
    use ComposerStatus as S;
    let name = agent.map(str::trim).filter(|n| !n.is_empty());
    let readiness = &s.active_session_readiness;
    let on_its_way = s.is_loading_latest_sessions
        || s.is_creating_agent_session
        || matches!(
            s.default_session_status,
            DefaultSessionStatus::Loading | DefaultSessionStatus::Opening
        );
    if s.session_model_selection_request.is_some() {
        return ComposerState::new(S::ChoosingModel, [false; 3], Some(CHOOSING_MODEL.into()));
    }
    let unavailable = match &s.send_readiness {
        SendReadiness::Blocked(n) => match n.code {
            NotReadyCode::SessionUnavailable
            | NotReadyCode::SessionsFailed
            | NotReadyCode::DefaultSessionFailed
            | NotReadyCode::RuntimeUnavailable => Some(n.message.clone()),
            _ => None,
        },
        _ => None,
    };
    if readiness.session_id.is_none() && unavailable.is_none() {
        if readiness.status == ReadinessStatus::Loading || on_its_way {
            return ComposerState::new(S::Loading, [false; 3], Some(LOADING.into()));
        }
        return ComposerState::new(S::NoSession, [false; 3], Some(NO_SESSION.into()));
    }
    if readiness.status == ReadinessStatus::Loading {
        return ComposerState::new(S::Loading, [false; 3], Some(LOADING.into()));
    }
    if let Some(message) = unavailable {
        let mut state = ComposerState::new(S::Unavailable, [false, false, true], Some(message));
        state.support_reference = error_support_reference(s);
        return state;
    }
    if s.is_assistant_runtime_starting {
        let reason = format!("{} is waking up", name.unwrap_or("The agent"));
        return ComposerState::new(S::Waking, [false; 3], Some(reason));
    }
    if s.is_cancelling_session {
        let reason = format!("Stopping {}...", name.unwrap_or("the agent"));
        let working = s.is_agent_working;
        let flags = [s.composer_admission && !working, working, true];
        return ComposerState::new(S::Stopping, flags, Some(reason));
    }
    if s.is_agent_working {
        let reason = s.message_queue_texts.composer_placeholder.clone();
        return ComposerState::new(S::Working, [false, true, true], reason);
    }
    // The catalog is asked for whenever the chat shows (`hasRequestedAvailableModels` says
    // "asked for now"): a hidden chat is not waiting for models.
    if s.is_visible && !s.has_requested_available_models {
        let flags = [false, false, true];
        return ComposerState::new(S::LoadingModels, flags, Some(LOADING_MODELS.into()));
    }
    if s.composer_admission {
        return ComposerState::new(S::Ready, [true, false, true], None);
    }
    // What the engine waits for reads to a person; what the host must give (the chat shown, an
    // Environment, a default Agent) is the host's matter: `sendReadiness` says it, not the
    // composer.
    let reason = match &s.send_readiness {
        SendReadiness::Waiting { waiting_for } => Some(waiting_for.text().to_owned()),
        SendReadiness::Blocked(_) | SendReadiness::Ready => None,
    };
    ComposerState::new(S::Busy, [false, false, true], reason)
}

/// RU-44: the decision's support reference when its notice is an error (a runtime refusal).
fn error_support_reference(s: &Snapshot) -> Option<String> {
    let i = s.active_runtime_interaction.as_ref()?;
    let error = i
        .notice
        .as_ref()
        .is_some_and(|n| n.severity == crate::api::Severity::Error);
    i.support_reference
        .clone()
        .filter(|_| error && !i.can_submit)
}

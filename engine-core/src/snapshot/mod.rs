//! The shared states, computed once for every surface (SHR-1), as one plain serde struct with the
//! specification's names.

use std::collections::BTreeMap;

use litemap::LiteMap;

use serde::Serialize;

use crate::api::{EffortOption, ModelOption, ProviderOption};
use crate::failure::RunFailure;
use crate::queue::{Hold, QueueRow, QueueTexts};

use crate::Json;
use crate::api::{RuntimeInteraction, RuntimePresence};
use crate::input::SessionSummary;
use crate::message::Message;
use crate::model::Origin;
use composer::ComposerState;
use ready::SendReadiness;

pub(crate) mod composer;
pub(crate) mod ready;

/// `defaultSessionStatus` (OI-23).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DefaultSessionStatus {
    /// The surface does not show the default session (or a launched session is selected).
    Idle,
    /// The application's source for the Agent loads, or no Environment is active.
    Loading,
    /// No default Agent: a configuration prerequisite, not a failure.
    Missing,
    /// The session behind the handle is being opened.
    Opening,
    /// The default session is selected.
    Ready,
    /// The source failed, or get-or-create failed (`defaultSessionError`).
    Error,
}

/// `runStatus` of the selected session (adr-notes section 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunStatus {
    /// No run, or a stopped one.
    #[default]
    Idle,
    /// Messages wait in the queue while nothing runs.
    Queued,
    /// A turn is on its way: access, a hold, or reasoning.
    Thinking,
    /// The answer's text streams.
    Responding,
    /// The last run finished cleanly.
    Complete,
    /// The last run failed.
    Error,
}

/// `activeSessionReadiness.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReadinessStatus {
    /// The chat is not visible, or nothing is selected on purpose.
    Idle,
    /// Detail or history still loading (or the list that would choose a session).
    Loading,
    /// Detail and history loaded.
    Ready,
    /// A failure owned by readiness.
    Error,
    /// The platform does not have the session (detail 404).
    NotFound,
}

/// `activeSessionReadiness`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Readiness {
    /// The selected session.
    pub session_id: Option<String>,
    /// Where it stands.
    pub status: ReadinessStatus,
    /// The detail has loaded (a refetch included).
    pub detail_ready: bool,
    /// The history has loaded.
    pub history_ready: bool,
    /// The insights have loaded.
    pub insights_ready: bool,
    /// The error text, for `error` and `not_found`.
    pub error: Option<String>,
}

/// `activeSessionDetail.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DetailStatus {
    /// Not requested.
    Idle,
    /// In flight, nothing loaded yet.
    Loading,
    /// Loaded (a refetch may be running).
    Ready,
    /// Failed.
    Error,
    /// 404.
    NotFound,
}

/// `activeSessionDetail`: the detail snapshot, with the insights.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DetailSnapshot {
    /// The session.
    pub session_id: String,
    /// Where the detail stands.
    pub status: DetailStatus,
    /// The detail error.
    pub error: Option<String>,
    /// The canonical record as loaded.
    pub record: Option<Json>,
    /// The insights as loaded, normalized field by field (RU-30; a 404 is the empty snapshot,
    /// `hasInsights` false).
    pub insights: Option<crate::api::InsightsValue>,
    /// The insights request is in flight.
    pub insights_loading: bool,
    /// `insightsError` (FAIL-12).
    pub insights_error: Option<String>,
}

/// The level truth a surface renders. Read with [`crate::Engine::snapshot`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Snapshot {
    /// `environmentUid` as the engine uses it.
    pub environment_uid: Option<String>,
    /// `isVisible`.
    pub is_visible: bool,
    /// `currentSessionId`: the selected session (SEL-1).
    pub current_session_id: Option<String>,
    /// What selected it.
    pub selection_origin: Option<Origin>,
    /// `isDirectLaunchSession` (SEL-11, SEL-12).
    pub is_direct_launch_session: bool,
    /// `isDefaultSession`: the selected session is the default session.
    pub is_default_session: bool,
    /// `defaultSessionStatus`.
    pub default_session_status: DefaultSessionStatus,
    /// `defaultSessionError`.
    pub default_session_error: Option<String>,
    /// `activeSessionReadiness`.
    pub active_session_readiness: Readiness,
    /// `activeSessionDetail`.
    pub active_session_detail: Option<DetailSnapshot>,
    /// `agentSessions`: the current pair's list, newest first.
    pub agent_sessions: Vec<SessionSummary>,
    /// `latestSessionsError`.
    pub latest_sessions_error: Option<String>,
    /// `isLoadingLatestSessions`.
    pub is_loading_latest_sessions: bool,
    /// `isCreatingAgentSession`.
    pub is_creating_agent_session: bool,
    /// `sessionNotice`.
    pub session_notice: Option<String>,
    /// The thread: the selected session's messages.
    pub thread: Vec<std::sync::Arc<Message>>,
    /// `activeRuntimeInteraction`: the admission decision of the selected session, with its
    /// notice and support reference (RTA-3); absent when never checked.
    pub active_runtime_interaction: Option<RuntimeInteraction>,
    /// `activeRuntimePresence`: diagnostic progress; never decides admission (RTA-4, RTA-5).
    pub active_runtime_presence: Option<RuntimePresence>,
    /// `isAssistantRuntimeStarting`: the decision is transient (SHR-5).
    pub is_assistant_runtime_starting: bool,
    /// Composer admission: the session is ready and its decision admits (`can_submit`, confirmed
    /// by the Agent); for a launched session before its first send, readiness alone (RTA-25).
    pub composer_admission: bool,
    /// Whether a message can be sent now, else what the engine waits for or why it cannot
    /// (this engine's reading of the fields above, with the failing read's typed error).
    pub send_readiness: SendReadiness,
    /// `composerState` (RU-38): what a composer shows and what a submit does now, derived from
    /// the values above ([`ComposerState`]).
    pub composer_state: ComposerState,
    /// `runStatus` of the selected session.
    pub run_status: RunStatus,
    /// `runStatusDetail`: "Working on your request.", "Sending queued message 1 of 2", an error...
    pub run_status_detail: Option<String>,
    /// The Agent works on the selected session: a local run (a held send included) or another
    /// writer reported by its record (SND-18, OI-20). Messages sent now are queued.
    pub is_agent_working: bool,
    /// `hasActiveChatStream`: the selected session's answer is streaming.
    pub has_active_chat_stream: bool,
    /// `isCancellingSession`: a run cancel is under way for the selected session.
    pub is_cancelling_session: bool,
    /// `messageQueue`: the selected session's waiting messages, first to leave first, each with
    /// its status (`queued` or `held`), hold reason and hold message (ADR 087).
    pub message_queue: Vec<QueueRow>,
    /// Why the selected session's queue is held, when it is (OI-20).
    pub message_queue_hold: Option<Hold>,
    /// `queuedMessageCountBySessionId`.
    #[serde(serialize_with = "crate::json::object")]
    pub queued_message_count_by_session_id: LiteMap<String, usize>,
    /// OI-4: the Agent's wake is 30 s past its deadline: the surface shows "This is taking longer
    /// than expected." with a "Check again" action (`refreshActiveSessionRuntimeAccess()`). Never
    /// changes admission or the runtime notice (SHR-12).
    pub is_runtime_wake_overdue: bool,
    /// `selectedReasoningEffortValue`: the picker's thinking level (the `runConfig` of later
    /// turns, OI-18).
    pub selected_reasoning_effort_value: Option<String>,
    /// `selectedProviderValue`.
    pub selected_provider_value: Option<String>,
    /// `selectedModelValue`: `"{provider}::{model}"`.
    pub selected_model_value: Option<String>,
    /// `availableProviders`: the catalog's enabled providers.
    pub available_providers: Vec<ProviderOption>,
    /// `availableModels`: the models of enabled providers.
    pub available_models: Vec<ModelOption>,
    /// `availableReasoningEfforts`: the levels the selected model offers.
    pub available_reasoning_efforts: Vec<EffortOption>,
    /// `availableModelsError`: a final catalog failure with no older data (OI-10); apart from
    /// readiness and runtime access (FAIL-15).
    pub available_models_error: Option<String>,
    /// `isLoadingAvailableModels`.
    pub is_loading_available_models: bool,
    /// `hasRequestedAvailableModels`: the catalog is wanted now (chat visible or a model choice
    /// pending).
    pub has_requested_available_models: bool,
    /// `sessionModelSelectionRequest`: a creation waits for the person to choose a model (SHR-6).
    pub session_model_selection_request: Option<SessionModelSelectionRequest>,
    /// `sessionModelLastUsed`: the listed sessions' models, most recent first.
    pub session_model_last_used: Vec<LastUsedModel>,
    /// `isUpdatingSessionModel`: a model change (PATCH) is in flight.
    pub is_updating_session_model: bool,
    /// Why the selected session's last turn failed, as a stable code beside `runStatusDetail`,
    /// while `runStatus` is `error` because of it.
    pub run_failure: Option<RunFailure>,
    /// `thinkingSummary`: the latest reasoning delta, or the running tool's status line
    /// (adr-notes 6, run status).
    pub thinking_summary: Option<String>,
    /// `hasVisibleAssistantOutput`: the answer under way shows something, or the history holds
    /// an answer (adr-notes 6, run status).
    pub has_visible_assistant_output: bool,
    /// The queued message on its way out as its own turn (status `sending`), until that turn
    /// ends (ADR 087).
    pub message_queue_sending: Option<QueueRow>,
    /// The queue strip's and the composer's texts (ADR 087), ready to render.
    pub message_queue_texts: QueueTexts,
    /// `agentId` (adr-notes 6): the Agent id last reported for the selected session, by its
    /// history (`session.agentUid`, legacy `agentId`) or by a frame of its streamed answer
    /// (a top-level `agent_id`, or the `agent_id` of a `data-*` part's data); null after a new
    /// selection until one reports it.
    pub agent_id: Option<String>,
    /// The session explorer's archived list: the last `fetchArchivedAgentSessions` read, most
    /// recently archived first (empty while it loads or after a failure).
    pub archived_sessions: Vec<ArchivedSession>,
    /// The Agent the archived list is for.
    pub archived_sessions_agent_uid: Option<String>,
    /// An archived-list read is in flight.
    pub is_loading_archived_sessions: bool,
    /// The archived-list read failed (or was refused).
    pub archived_sessions_error: Option<String>,
    /// The trimmed query the search results are for.
    pub session_search_query: Option<String>,
    /// The session explorer's search: the last `searchAgentSessions` read, newest first.
    pub session_search_results: Vec<SessionSummary>,
    /// A search is in flight.
    pub is_searching_sessions: bool,
    /// The search failed (or was refused).
    pub session_search_error: Option<String>,
    /// `capabilities` (ADR 099, adr-notes 5 and 6): what the source offers; all true for the
    /// platform.
    pub capabilities: Capabilities,
    /// The Agent icon projection of the active Environment (ADR 090, P13), keyed by Agent uid,
    /// with each icon's bytes (P14) once loaded. Read on [`crate::Command::RequestAgentIcons`];
    /// empty until then, without an Environment or a platform credential, and after a person or
    /// Environment change. An Agent without an entry, or an entry without an image, is drawn
    /// with the surface's own fallback icon.
    pub agent_icons: std::sync::Arc<BTreeMap<String, AgentIcon>>,
}

/// `capabilities`: the features the Agent source offers (ADR 099). Surfaces hide what is false.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Capabilities {
    /// Sessions can be archived and restored.
    pub archive_sessions: bool,
    /// Sessions can be searched on the server.
    pub search_sessions: bool,
    /// Session transcripts can be read.
    pub session_history: bool,
    /// Context-usage insights can be read.
    pub session_insights: bool,
    /// Model-provider settings (sign-in, custom providers) exist.
    pub model_provider_settings: bool,
}

impl Capabilities {
    /// The platform source: everything.
    pub const PLATFORM: Capabilities = Capabilities {
        archive_sessions: true,
        search_sessions: true,
        session_history: true,
        session_insights: true,
        model_provider_settings: true,
    };

    /// A local source (ADR 099): no archive, server search, insights or provider settings;
    /// transcripts until the runtime says it cannot list its conversations.
    pub const fn local(session_history: bool) -> Capabilities {
        Capabilities {
            archive_sessions: false,
            search_sessions: false,
            session_history,
            session_insights: false,
            model_provider_settings: false,
        }
    }
}

/// One Agent's icon (ADR 090).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentIcon {
    /// `mask` (follows the theme's colour) or `color` (drawn as is, never tinted).
    pub rendering: crate::api::IconRendering,
    /// The icon's address as the platform gave it (not rewritten).
    pub url: String,
    /// Where the icon's bytes stand (RU-34, RU-36): one entry per icon url, shared by every
    /// Agent that has it.
    pub status: IconStatus,
    /// The image, once loaded; kept while it is revalidated and when a revalidation fails.
    /// `None` while a first load runs, after a failed first load, or before the host asked for
    /// an Agent with this icon url.
    pub image: Option<IconImage>,
}

/// Where the bytes of one icon url stand (RU-34, RU-36).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum IconStatus {
    /// The host has not asked for an Agent with this icon url.
    Idle,
    /// The first load runs.
    Loading,
    /// An image is held (also while it is revalidated, and after a failed revalidation).
    Ready,
    /// The first load failed; it is not tried again for a minute.
    Error,
}

/// An icon's bytes as the platform delivered them (at most 512 KiB).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct IconImage {
    /// The image's handle (the reference's object URL, RU-34): a number, unique within the
    /// engine, that changes exactly when the image is replaced (RU-35: a revalidation whose
    /// fingerprint differs). A host that keeps a decoded copy per handle drops the copy whose
    /// handle it no longer sees.
    pub handle: u64,
    /// `Content-Type` of the answer (`image/svg+xml`, `image/png`, ...), when given.
    pub content_type: Option<String>,
    /// `ETag` of the answer, when given (the fingerprint, RU-35).
    pub etag: Option<String>,
    /// The bytes (serialized as standard base64).
    #[serde(serialize_with = "bytes_as_base64")]
    pub bytes: bytes::Bytes,
}

fn bytes_as_base64<S: serde::Serializer>(bytes: &bytes::Bytes, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::model::base64::encode(bytes))
}

/// One row of `archivedSessions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ArchivedSession {
    /// The session.
    pub session: SessionSummary,
    /// `archived_at`, when the record gives it.
    pub archived_at: Option<String>,
}

/// `sessionModelSelectionRequest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionModelSelectionRequest {
    /// Distinguishes successive requests.
    pub id: u64,
    /// The Agent's label, when known.
    pub agent_label: Option<String>,
    /// The Agent's uid.
    pub agent_uid: Option<String>,
    /// Which model fields the platform's refusal named as required (MOD-1).
    pub missing: MissingModelFields,
}

/// The fields a model-required refusal named (`llm_provider`, `llm_model`; at least one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct MissingModelFields {
    /// `llm_provider` was reported as required.
    pub provider: bool,
    /// `llm_model` was reported as required.
    pub model: bool,
}

/// One entry of `sessionModelLastUsed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LastUsedModel {
    /// `llm_provider`.
    pub provider: String,
    /// `llm_model`.
    pub model: String,
}

/// The run-status channel (adr-notes 6: it changes on every chunk), as the snapshot shows it;
/// [`crate::Engine::run_status`] computes it alone, without the rest of the snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RunStatusView {
    /// `runStatus`.
    pub run_status: RunStatus,
    /// `runStatusDetail`.
    pub run_status_detail: Option<String>,
    /// `runFailure`: why the turn failed, while `runStatus` is `error` because of it.
    pub run_failure: Option<RunFailure>,
    /// `thinkingSummary`.
    pub thinking_summary: Option<String>,
    /// `hasVisibleAssistantOutput`.
    pub has_visible_assistant_output: bool,
    /// `isAgentWorking`.
    pub is_agent_working: bool,
    /// `hasActiveChatStream`.
    pub has_active_chat_stream: bool,
    /// `isCancellingSession`.
    pub is_cancelling_session: bool,
}

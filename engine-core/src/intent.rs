//! Outgoing work for the shell: typed platform calls rendered to plain HTTP requests, aborts, and
//! storage-port requests.

use std::fmt;

use bytes::Bytes;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::http::{
    BodyMode, Header, HttpRequest, InvalidId, Method, Target, check_id, header_safe, segment,
};
use crate::input::SessionSummary;

/// Identifies one request for its whole life: counter-issued, never reused, opaque to shells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct RequestId(pub u64);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Work the shell must carry out. Drain with [`crate::Engine::poll_intent`].
// Intents are built once and moved out once; boxing the request would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "intent", rename_all = "snake_case")]
pub enum Intent {
    /// Send this request; feed its answer back under `id`.
    Http {
        /// The request's id.
        id: RequestId,
        /// What the request is, in domain terms.
        call: ApiCall,
        /// The request as bytes on the wire.
        request: HttpRequest,
    },
    /// Drop the request if it is still running. Advisory: a late answer is ignored anyway.
    Abort {
        /// The request to drop.
        id: RequestId,
    },
    /// Read or write the host's session-list storage (the storage port, OI-31).
    Storage(StorageRequest),
}

/// A request to the host's storage port, to be carried out in the order emitted (a read asked
/// before a write sees what was there before it). Storage failures are ignored by the engine:
/// its state in memory is authoritative.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum StorageRequest {
    /// Read the list stored under `key`; answer with [`crate::Input::StoredSessionsLoaded`].
    Load {
        /// `ms.main-sequence-ai.agent-sessions:{person}:{environment}`.
        key: String,
    },
    /// Store this list under `key` (replacing what was there).
    Save {
        /// The storage key.
        key: String,
        /// The list, as summaries (no messages, no record).
        sessions: Vec<SessionSummary>,
    },
    /// Read a session's stored queue (ADR 087, session storage); answer with
    /// [`crate::Input::StoredQueueLoaded`].
    LoadQueue {
        /// `main_sequence_ai.message_queue.{sessionId}`.
        key: String,
    },
    /// Store a session's queue (replacing what was there).
    SaveQueue {
        /// The storage key.
        key: String,
        /// The rows, first to leave first.
        rows: Vec<crate::queue::QueuedMessage>,
    },
    /// The session's queue emptied: remove its stored copy.
    RemoveQueue {
        /// The storage key.
        key: String,
    },
    /// Read the conversation a local source showed last (ADR 099); answer with
    /// [`crate::Input::StoredSelectionLoaded`].
    LoadSelection {
        /// `ms.command-center-ai.local-session:{baseUrl}`.
        key: String,
    },
    /// Store the conversation a local source shows (replacing what was there).
    SaveSelection {
        /// The storage key.
        key: String,
        /// The conversation's id.
        session_uid: String,
    },
}

/// How an Agent's latest session is looked up in the session list (OI-11).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "by", content = "value", rename_all = "snake_case")]
pub enum AgentFilter {
    /// `agent_uid={uid}`.
    Uid(String),
    /// `agent_id={n}`, for an all-digits Agent id.
    Id(String),
}

impl AgentFilter {
    /// `agent_id` when the id is all digits, else `agent_uid`.
    pub fn for_agent(agent: &str) -> AgentFilter {
        if !agent.is_empty() && agent.bytes().all(|b| b.is_ascii_digit()) {
            AgentFilter::Id(agent.to_owned())
        } else {
            AgentFilter::Uid(agent.to_owned())
        }
    }
}

/// The body of a get-or-create-session call by handle (P8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct GetOrCreateBody {
    /// The stable handle.
    pub handle_unique_id: String,
    /// The name the session gets when created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Model fields (the model-required fallback), sent only when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_provider: Option<String>,
    /// See `llm_provider`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_model: Option<String>,
    /// See `llm_provider`; `""` is sent as is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_thinking: Option<String>,
}

/// A platform call in domain terms. Tests and traces show these; the engine renders each one
/// into the bytes on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum ApiCall {
    /// P1: the person's latest sessions in an Environment, or one Agent's (with `agent`).
    ListSessions {
        /// `organization_environment_uid`.
        environment_uid: String,
        /// `created_by_user_uid`, when the person's uid is known.
        created_by_user_uid: Option<String>,
        /// Narrow the list to one Agent.
        agent: Option<AgentFilter>,
    },
    /// P2: the session detail.
    GetSessionDetail {
        /// The session.
        session_uid: String,
        /// `organization_environment_uid` (ENV-6).
        environment_uid: String,
    },
    /// P9: the history.
    GetSessionHistory {
        /// The session.
        session_uid: String,
    },
    /// P10: the insights.
    GetSessionInsights {
        /// The session.
        session_uid: String,
    },
    /// P7: a plain new session (cannot carry a model).
    StartNewSession {
        /// The Agent uid or numeric id.
        agent: String,
        /// The fresh thread id sent as `thread_id`.
        thread_id: String,
    },
    /// P8: the session behind a handle.
    GetOrCreateSession {
        /// The Agent.
        agent_uid: String,
        /// The body.
        body: GetOrCreateBody,
    },
    /// P5: archive.
    ArchiveSession {
        /// The session.
        session_uid: String,
    },
    /// P6: restore an archived session.
    UnarchiveSession {
        /// The session.
        session_uid: String,
    },
    /// P4: delete.
    DeleteSession {
        /// The session.
        session_uid: String,
    },
    /// P11: the admission decision, `rpc_url` and runtime token for a session.
    ResolveRuntimeAccess {
        /// The session.
        session_uid: String,
    },
    /// R1: `GET {rpc_url}/api/chat`, the Agent confirmation of ADR 093, with the runtime token
    /// of that session's latest runtime access.
    ConfirmAgent {
        /// The session the runtime access belongs to (INV-11).
        session_uid: String,
        /// The runtime base.
        rpc_url: String,
    },
    /// P12: the model-provider catalog of the person.
    ListModelProviders,
    /// P3: change the session's model (all three keys always sent; `llm_thinking` `""` when no
    /// level is chosen).
    UpdateSessionModel {
        /// The session.
        session_uid: String,
        /// `llm_provider`.
        llm_provider: String,
        /// `llm_model`.
        llm_model: String,
        /// `llm_thinking`.
        llm_thinking: String,
    },
    /// R2: `POST {rpc_url}/api/chat`, one turn (ADR 060); the answer is a ui-message-stream.
    SendMessage {
        /// The session the turn belongs to (INV-11).
        session_uid: String,
        /// The runtime base.
        rpc_url: String,
        /// The ADR 060 body (OI-18).
        body: Value,
    },
    /// R3: `POST {rpc_url}/api/chat/session/cancel` (OI-19).
    CancelRun {
        /// The session whose run is stopped.
        session_uid: String,
        /// The runtime base.
        rpc_url: String,
        /// The OI-19 body.
        body: Value,
    },
    /// P1: one Agent's archived sessions of the person, most recently archived first (the
    /// session explorer).
    ListArchivedSessions {
        /// `organization_environment_uid`.
        environment_uid: String,
        /// `agent_uid`.
        agent_uid: String,
        /// `created_by_user_uid`.
        created_by_user_uid: String,
        /// `limit`, 1 to 100.
        limit: u32,
    },
    /// P1: the person's sessions matching a search, newest first (the session explorer).
    SearchSessions {
        /// `organization_environment_uid`.
        environment_uid: String,
        /// `created_by_user_uid`.
        created_by_user_uid: String,
        /// `q`, trimmed and not empty.
        query: String,
        /// `limit`, 1 to 100.
        limit: u32,
    },
    /// P13: the Agent icon projection of an Environment (ADR 090).
    ListAgentIcons {
        /// `organization_environment_uid`.
        environment_uid: String,
    },
    /// P14: an icon's bytes, at the url the projection gave (`Accept: */*`, the person's
    /// credential).
    GetAgentIcon {
        /// The Agent the icon belongs to.
        agent_uid: String,
        /// The icon's address, absolute and on the platform's origin.
        url: String,
    },
    /// A local Agent runtime's route (ADR 099), against the local source's base; no
    /// credential.
    Local {
        /// The route.
        route: crate::api::local::LocalRoute,
    },
}

/// Largest icon body (P14): the platform delivers at most 512 KiB (ADR 090).
pub(crate) const MAX_ICON_BYTES: usize = 512 * 1024;

/// How a call's answer is read ([`ApiCall::policy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Policy {
    /// The whole body, at most `cap` bytes.
    Buffered { cap: usize },
    /// The status alone: the request is over at its head and the rest of its body is dropped.
    StatusOnly,
    /// A 2xx answer goes to its owner piece by piece, at most `cap` bytes in all; any other
    /// answer is buffered as an error body of at most `error_cap` bytes.
    StreamOn2xx { cap: usize, error_cap: usize },
}

/// The body caps a [`Policy`] is made of (`Config::max_body_bytes`, `max_answer_bytes`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub body: usize,
    pub answer: usize,
}

/// The person's platform credential, as the renderer needs it.
#[derive(Clone, Copy)]
pub(crate) struct Credential<'a> {
    pub token_type: &'a str,
    pub token: &'a str,
}

/// Which credential a request carries: the person's for the platform, the runtime token for an
/// Agent runtime. The person's credential never reaches a runtime.
#[derive(Clone, Copy)]
pub(crate) enum Auth<'a> {
    Platform(Option<Credential<'a>>),
    Runtime { token: &'a str },
}

impl ApiCall {
    /// Renders the call against the platform base. Fails, before any request exists, when an id
    /// in the path is invalid.
    pub(crate) fn render(&self, base: &str, auth: Auth<'_>) -> Result<HttpRequest, InvalidId> {
        if let Some(request) = self.render_runtime(auth)? {
            return Ok(request);
        }
        let credential = match auth {
            Auth::Platform(c)
                if c.is_none_or(|c| header_safe(c.token) && header_safe(c.token_type)) =>
            {
                c
            }
            _ => {
                return Err(InvalidId::refused("platform credential"));
            }
        };
        let seg = |what, id: &str| check_id(what, id).map(|()| segment(id));
        let mut query = Vec::new();
        let mut body = None;
        let (method, path) = match self {
            ApiCall::ListSessions {
                environment_uid,
                created_by_user_uid,
                agent,
            } => {
                query.push((
                    "organization_environment_uid".into(),
                    environment_uid.clone(),
                ));
                if let Some(user) = created_by_user_uid {
                    query.push(("created_by_user_uid".into(), user.clone()));
                }
                query.push(("is_archived".into(), "false".into()));
                query.push(("ordering".into(), "-started_at".into()));
                query.push(("limit".into(), "20".into()));
                match agent {
                    Some(AgentFilter::Uid(uid)) => query.push(("agent_uid".into(), uid.clone())),
                    Some(AgentFilter::Id(id)) => query.push(("agent_id".into(), id.clone())),
                    None => {}
                }
                (Method::Get, "/api/v1/agent-sessions/".to_owned())
            }
            ApiCall::GetSessionDetail {
                session_uid,
                environment_uid,
            } => {
                query.push((
                    "organization_environment_uid".into(),
                    environment_uid.clone(),
                ));
                (
                    Method::Get,
                    format!("/api/v1/agent-sessions/{}/", seg("session", session_uid)?),
                )
            }
            ApiCall::GetSessionHistory { session_uid } => (
                Method::Get,
                format!(
                    "/api/v1/agent-sessions/{}/history/",
                    seg("session", session_uid)?
                ),
            ),
            ApiCall::GetSessionInsights { session_uid } => (
                Method::Get,
                format!(
                    "/api/v1/agent-sessions/{}/insights/",
                    seg("session", session_uid)?
                ),
            ),
            ApiCall::StartNewSession { agent, thread_id } => {
                let mut m = Map::new();
                m.insert("thread_id".into(), Value::String(thread_id.clone()));
                body = Some(Value::Object(m));
                (
                    Method::Post,
                    format!("/api/v1/agents/{}/start-new-session/", seg("agent", agent)?),
                )
            }
            ApiCall::GetOrCreateSession { agent_uid, body: b } => {
                check_id("handle", &b.handle_unique_id)?;
                body = serde_json::to_value(b).ok();
                (
                    Method::Post,
                    format!(
                        "/api/v1/agents/{}/sessions/get-or-create-session/",
                        seg("agent", agent_uid)?
                    ),
                )
            }
            ApiCall::ArchiveSession { session_uid } => (
                Method::Post,
                format!(
                    "/api/v1/agent-sessions/{}/archive/",
                    seg("session", session_uid)?
                ),
            ),
            ApiCall::UnarchiveSession { session_uid } => (
                Method::Post,
                format!(
                    "/api/v1/agent-sessions/{}/unarchive/",
                    seg("session", session_uid)?
                ),
            ),
            ApiCall::DeleteSession { session_uid } => (
                Method::Delete,
                format!("/api/v1/agent-sessions/{}/", seg("session", session_uid)?),
            ),
            ApiCall::ResolveRuntimeAccess { session_uid } => {
                body = Some(Value::Object(Map::new()));
                (
                    Method::Post,
                    format!(
                        "/api/v1/agent-sessions/{}/resolve-runtime-access/",
                        seg("session", session_uid)?
                    ),
                )
            }
            ApiCall::ListModelProviders => (Method::Get, "/api/v1/model-providers/".to_owned()),
            ApiCall::UpdateSessionModel {
                session_uid,
                llm_provider,
                llm_model,
                llm_thinking,
            } => {
                let mut m = Map::new();
                m.insert("llm_provider".into(), Value::String(llm_provider.clone()));
                m.insert("llm_model".into(), Value::String(llm_model.clone()));
                m.insert("llm_thinking".into(), Value::String(llm_thinking.clone()));
                body = Some(Value::Object(m));
                (
                    Method::Patch,
                    format!("/api/v1/agent-sessions/{}/", seg("session", session_uid)?),
                )
            }
            ApiCall::ListAgentIcons { environment_uid } => {
                query.push((
                    "organization_environment_uid".into(),
                    environment_uid.clone(),
                ));
                (Method::Get, "/api/v1/command-center/agents/".to_owned())
            }
            ApiCall::GetAgentIcon { url, .. } => {
                return render_icon(url, base, credential);
            }
            ApiCall::ListArchivedSessions {
                environment_uid,
                agent_uid,
                created_by_user_uid,
                limit,
            } => {
                // The reference's order.
                query.push((
                    "organization_environment_uid".into(),
                    environment_uid.clone(),
                ));
                query.push(("agent_uid".into(), agent_uid.clone()));
                query.push(("created_by_user_uid".into(), created_by_user_uid.clone()));
                query.push(("is_archived".into(), "true".into()));
                query.push(("ordering".into(), "-archived_at".into()));
                query.push(("limit".into(), limit.to_string()));
                (Method::Get, "/api/v1/agent-sessions/".to_owned())
            }
            ApiCall::SearchSessions {
                environment_uid,
                created_by_user_uid,
                query: q,
                limit,
            } => {
                query.push((
                    "organization_environment_uid".into(),
                    environment_uid.clone(),
                ));
                query.push(("created_by_user_uid".into(), created_by_user_uid.clone()));
                query.push(("is_archived".into(), "false".into()));
                query.push(("q".into(), q.clone()));
                query.push(("ordering".into(), "-started_at".into()));
                query.push(("limit".into(), limit.to_string()));
                (Method::Get, "/api/v1/agent-sessions/".to_owned())
            }
            // Rendered against the local source (`Io::send_local`), never against the platform.
            ApiCall::Local { .. }
            | ApiCall::ConfirmAgent { .. }
            | ApiCall::SendMessage { .. }
            | ApiCall::CancelRun { .. } => {
                return Err(InvalidId::refused("call"));
            }
        };
        let mut headers = credential_header(credential);
        headers.push(Header::new("Accept", "application/json"));
        let body = body.map(|v| {
            headers.push(Header::new("Content-Type", "application/json"));
            Bytes::from(v.to_string())
        });
        Ok(HttpRequest {
            method,
            target: Target::Platform,
            base: base.trim_end_matches('/').to_owned(),
            path,
            query,
            headers,
            body,
            body_mode: BodyMode::Buffered,
            root_relative: false,
        })
    }

    /// Renders a runtime call (R1 to R3) with the runtime token; `None` for platform calls. The
    /// request path and headers are the same for every Agent (SND-8).
    fn render_runtime(&self, auth: Auth<'_>) -> Result<Option<HttpRequest>, InvalidId> {
        let (rpc_url, method, path, body, body_mode) = match self {
            ApiCall::ConfirmAgent { rpc_url, .. } => {
                (rpc_url, Method::Get, "/api/chat", None, BodyMode::Buffered)
            }
            ApiCall::SendMessage { rpc_url, body, .. } => (
                rpc_url,
                Method::Post,
                "/api/chat",
                Some(body),
                BodyMode::Streamed,
            ),
            ApiCall::CancelRun { rpc_url, body, .. } => (
                rpc_url,
                Method::Post,
                "/api/chat/session/cancel",
                Some(body),
                BodyMode::Buffered,
            ),
            _ => return Ok(None),
        };
        let token = match auth {
            Auth::Runtime { token } if header_safe(token) => token,
            _ => {
                return Err(InvalidId::refused("runtime token"));
            }
        };
        let mut headers = Vec::new();
        if body.is_some() {
            headers.push(Header::new("Content-Type", "application/json"));
        }
        headers.push(Header::sensitive(
            "Authorization",
            format!("Bearer {token}"),
        ));
        match self {
            ApiCall::SendMessage { .. } => {
                headers.push(Header::new("Accept", "text/event-stream"));
            }
            ApiCall::ConfirmAgent { .. } => {
                headers.push(Header::new("Accept", "application/json"));
                headers.push(Header::new("Cache-Control", "no-cache"));
            }
            _ => headers.push(Header::new("Accept", "application/json")),
        }
        Ok(Some(HttpRequest {
            method,
            target: Target::AgentRuntime,
            base: rpc_url.trim_end_matches('/').to_owned(),
            path: path.to_owned(),
            query: Vec::new(),
            headers,
            body: body.map(|v| Bytes::from(v.to_string())),
            body_mode,
            root_relative: false,
        }))
    }

    /// A turn: its answer streams (R2, or a local runtime's `POST /api/chat`).
    pub fn is_turn(&self) -> bool {
        matches!(
            self,
            ApiCall::SendMessage { .. }
                | ApiCall::Local {
                    route: crate::api::local::LocalRoute::SendMessage { .. }
                }
        )
    }

    /// How this call's answer is read: `io` obeys it without knowing why. The Agent
    /// confirmation is its status alone (RTA-16); a turn's 2xx answer streams; an icon's body is
    /// capped at [`MAX_ICON_BYTES`] (P14); every other body is buffered whole.
    pub(crate) fn policy(&self, limits: Limits) -> Policy {
        match self {
            ApiCall::ConfirmAgent { .. } => Policy::StatusOnly,
            c if c.is_turn() => Policy::StreamOn2xx {
                cap: limits.answer,
                error_cap: limits.body,
            },
            ApiCall::GetAgentIcon { .. } => Policy::Buffered {
                cap: limits.body.min(MAX_ICON_BYTES),
            },
            _ => Policy::Buffered { cap: limits.body },
        }
    }

    /// The operation this call performs, for error messages.
    pub fn operation(&self) -> crate::api::Operation {
        use crate::api::Operation as O;
        match self {
            ApiCall::ListSessions { .. } => O::SessionList,
            ApiCall::GetSessionDetail { .. } => O::SessionDetail,
            ApiCall::GetSessionHistory { .. } => O::SessionHistory,
            ApiCall::GetSessionInsights { .. } => O::SessionInsights,
            ApiCall::StartNewSession { .. } => O::StartNewSession,
            ApiCall::GetOrCreateSession { .. } => O::GetOrCreateSession,
            ApiCall::ArchiveSession { .. } => O::ArchiveSession,
            ApiCall::UnarchiveSession { .. } => O::UnarchiveSession,
            ApiCall::DeleteSession { .. } => O::DeleteSession,
            ApiCall::ResolveRuntimeAccess { .. } => O::ResolveRuntimeAccess,
            ApiCall::ConfirmAgent { .. } => O::ConfirmAgent,
            ApiCall::ListModelProviders => O::ModelProviders,
            ApiCall::UpdateSessionModel { .. } => O::UpdateSessionModel,
            ApiCall::SendMessage { .. } => O::SendMessage,
            ApiCall::CancelRun { .. } => O::CancelRun,
            ApiCall::ListArchivedSessions { .. } => O::ArchivedSessionList,
            ApiCall::SearchSessions { .. } => O::SessionSearch,
            ApiCall::ListAgentIcons { .. } => O::AgentIcons,
            ApiCall::GetAgentIcon { .. } => O::AgentIcon,
            ApiCall::Local { .. } => O::LocalRuntime,
        }
    }
}

/// `Authorization: {token_type} {token}` when the person's credential is held.
fn credential_header(credential: Option<Credential<'_>>) -> Vec<Header> {
    credential
        .map(|c| Header::sensitive("Authorization", format!("{} {}", c.token_type, c.token)))
        .into_iter()
        .collect()
}

/// P14: `GET {url}` with the person's credential and `Accept: */*` (the icon route answers 406
/// to an image-only Accept). Only an address on the platform's origin is rendered (the
/// credential goes nowhere else); a root-relative one (`/…`) is joined to that origin.
fn render_icon(
    url: &str,
    base: &str,
    credential: Option<Credential<'_>>,
) -> Result<HttpRequest, InvalidId> {
    let refused = || InvalidId::quoting("icon url", url);
    let (origin, path, root_relative) = crate::api::icon_address(url, base).ok_or_else(refused)?;
    let mut headers = credential_header(credential);
    headers.push(Header::new("Accept", "*/*"));
    Ok(HttpRequest {
        method: Method::Get,
        target: Target::Platform,
        base: origin,
        path,
        query: Vec::new(),
        headers,
        body: None,
        body_mode: BodyMode::Buffered,
        root_relative,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;

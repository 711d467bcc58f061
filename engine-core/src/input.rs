//! Host inputs (level values the engine diffs) and commands (the spec's actions).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::Secret;

mod wire;

/// The signed-in person (the spec's `auth`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Person {
    /// The person's public uid, when known.
    pub user_uid: Option<String>,
    /// The platform token; requests carry `Authorization: {token_type} {token}` when set.
    pub token: Option<Secret>,
    /// The token type; `Bearer` when absent.
    pub token_type: Option<String>,
}

impl Person {
    /// A signed-in person: their uid and their platform token (sent as `Bearer`).
    ///
    /// ```
    /// use engine_core::{Person, Secret};
    /// let person = Person::new("user-1", Secret::new("platform-token"));
    /// assert_eq!(person.user_uid.as_deref(), Some("user-1"));
    /// assert!(!format!("{person:?}").contains("platform-token"));
    /// let signed_out = Person::default(); // no uid, no token
    /// assert!(signed_out.token.is_none());
    /// ```
    pub fn new(user_uid: impl Into<String>, token: Secret) -> Person {
        Person {
            user_uid: Some(user_uid.into()),
            token: Some(token),
            token_type: None,
        }
    }

    /// A person without a platform token, known by their uid or not at all: the host of a
    /// local Agent runtime (ADR 099), which takes no credential.
    pub fn local(user_uid: Option<String>) -> Person {
        Person {
            user_uid,
            token: None,
            token_type: None,
        }
    }

    /// The same person with this platform token.
    pub fn with_token(mut self, token: Secret) -> Person {
        self.token = Some(token);
        self
    }

    /// The same person with another token type than `Bearer` (`Authorization: {token_type}
    /// {token}`).
    pub fn with_token_type(mut self, token_type: impl Into<String>) -> Person {
        self.token_type = Some(token_type.into());
        self
    }
}

/// Where the application's source for the default Agent stands (`defaultSession.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SourceStatus {
    /// Still loading.
    Loading,
    /// Ready (also when the application gives no status).
    #[default]
    Ready,
    /// Failed.
    Error,
}

/// The default session's descriptor (`defaultSession`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DefaultSession {
    /// The Agent; none means "no default Agent" (`missing`).
    pub agent_uid: Option<String>,
    /// The stable handle.
    pub handle_unique_id: String,
    /// The name the session gets when it is created.
    pub name: String,
    /// Whether the application's source for the Agent is ready.
    #[serde(default)]
    pub status: SourceStatus,
    /// Shown when the session cannot be opened.
    pub unavailable_message: Option<String>,
}

/// A launch target: open the Agent's latest session, or a new one (`launchTarget`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaunchTarget {
    /// The Agent uid, or its numeric id as a string.
    pub agent_id: String,
    /// A display label.
    pub label: Option<String>,
    /// Every new value opens the target again.
    pub launch_key: u64,
}

/// An Agent reference for `startAgentSession(agent)`: the uid is preferred, else a positive id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentRecord {
    /// The numeric id.
    pub id: Option<i64>,
    /// The uid.
    pub uid: Option<String>,
    /// The name.
    pub name: Option<String>,
}

/// A session as the stored and exposed lists hold it: a summary, with no messages and no record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// The session uid.
    pub uid: String,
    /// The Agent uid.
    pub agent_uid: Option<String>,
    /// The Agent's name.
    pub agent_name: Option<String>,
    /// The display title.
    pub title: String,
    /// Platform status.
    pub status: Option<String>,
    /// `started_at`.
    pub started_at: Option<String>,
    /// `ended_at`.
    pub ended_at: Option<String>,
    /// The default-session handle, when the session has one.
    pub handle_unique_id: Option<String>,
    /// The session's provider.
    pub llm_provider: Option<String>,
    /// The session's model.
    pub llm_model: Option<String>,
}

impl SessionSummary {
    /// The list's "updated at": `ended_at`, else `started_at`.
    pub fn updated_at(&self) -> Option<&str> {
        self.ended_at.as_deref().or(self.started_at.as_deref())
    }
}

impl From<&crate::api::SessionRecord> for SessionSummary {
    fn from(r: &crate::api::SessionRecord) -> SessionSummary {
        SessionSummary {
            uid: r.uid.clone(),
            agent_uid: r.agent_uid.clone(),
            agent_name: r.agent_name.clone(),
            title: r.title.clone(),
            status: r.status.clone(),
            started_at: r.started_at.clone(),
            ended_at: r.ended_at.clone(),
            handle_unique_id: r.handle_unique_id.clone(),
            llm_provider: r.llm_provider.clone(),
            llm_model: r.llm_model.clone(),
        }
    }
}

/// Everything the host tells the engine: level inputs (set a value; an unchanged value is not a
/// new event) and commands (the spec's actions).
///
/// Written as `{"input": <name>, "value": <payload>}` (the trace format's form), and read from
/// it by hand (see `input/wire.rs`: what serde's derive reads, without its buffering).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "input", content = "value", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Input {
    /// `auth`: the person and their platform token.
    Person(Person),
    /// `environmentUid`; blank means none.
    EnvironmentUid(Option<String>),
    /// `isVisible`: the chat is on screen.
    IsVisible(bool),
    /// The page-visibility signal: `false` when the page is hidden.
    PageVisible(bool),
    /// `requestedSessionId`; trimmed, blank means none.
    RequestedSessionId(Option<String>),
    /// `defaultSession`.
    DefaultSession(Option<DefaultSession>),
    /// `showsDefaultSession`.
    ShowsDefaultSession(bool),
    /// `launchTarget`.
    LaunchTarget(Option<LaunchTarget>),
    /// `avoidImplicitSessionSelection`.
    AvoidImplicitSessionSelection(bool),
    /// `viewContext`: sent as `context` with every turn.
    ViewContext(Option<Value>),
    /// The storage port's answer to [`crate::StorageRequest::Load`]; `None` when nothing is
    /// stored or the read failed.
    StoredSessionsLoaded {
        /// The key that was read.
        key: String,
        /// What was stored.
        sessions: Option<Vec<SessionSummary>>,
    },
    /// The storage port's answer to [`crate::StorageRequest::LoadQueue`]: the stored rows as
    /// JSON (`[{id, text, createdAt}]`), `None` when nothing is stored or the read failed.
    StoredQueueLoaded {
        /// The key that was read.
        key: String,
        /// What was stored; invalid rows are dropped.
        rows: Option<serde_json::Value>,
    },
    /// The storage port's answer to [`crate::StorageRequest::LoadSelection`]: the id stored,
    /// `None` when nothing is stored or the read failed.
    StoredSelectionLoaded {
        /// The key that was read.
        key: String,
        /// What was stored.
        session_uid: Option<String>,
    },
    /// ADR 099 `source`: a local Agent runtime ([`crate::LocalSource`]), or `None` for the
    /// platform (the default). A change is a change of scope, as one of person or Environment.
    Source(Option<crate::source::LocalSource>),
    /// An action.
    Command(Command),
}

/// The spec's actions.
///
/// Written as `{"command": <name>, <field>: ...}`, and read from it by hand (as [`Input`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "command", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Command {
    /// `retryDefaultSession()`.
    RetryDefaultSession,
    /// `restoreDefaultSessionSelection()`.
    RestoreDefaultSessionSelection,
    /// `startAgentSession(agent)`: a new session, selected as an ordinary session; later
    /// latest-sessions reads are narrowed to that Agent.
    StartAgentSession {
        /// The Agent.
        agent: AgentRecord,
    },
    /// `startAgentSessionById({agentId, label})`: a new, launched session.
    StartAgentSessionById {
        /// The Agent uid or numeric id.
        agent_id: String,
        /// A display label.
        label: Option<String>,
    },
    /// `openLatestOrStartAgentSessionById({agentId, label})`: the Agent's latest session, else a
    /// new one; launched.
    OpenLatestOrStartAgentSessionById {
        /// The Agent uid or numeric id.
        agent_id: String,
        /// A display label.
        label: Option<String>,
    },
    /// `createAgentSession()`: a new session for the selected session's Agent.
    CreateAgentSession,
    /// `archiveAgentSession(id)`.
    ArchiveAgentSession {
        /// The session.
        session_uid: String,
    },
    /// `unarchiveAgentSession(uid)`: restore an archived session; the returned record joins the
    /// list. A failure is a notify ("Session not restored").
    UnarchiveAgentSession {
        /// The session.
        session_uid: String,
    },
    /// `deleteAgentSession(id)`.
    DeleteAgentSession {
        /// The session.
        session_uid: String,
    },
    /// `refreshSessionDetail()`: read the detail again (a loaded session stays ready).
    RefreshSessionDetail,
    /// `refreshActiveSessionRuntimeAccess()`: ask for runtime access once, at once (the "Check
    /// again" action, RTA-27).
    RefreshActiveSessionRuntimeAccess,
    /// `revalidateStaleRuntimeAccess()`: confirm a decision one minute old or older again (the
    /// composer calls it when it takes focus, RTA-23).
    RevalidateStaleRuntimeAccess,
    /// The composer's submit: a turn for the selected session, or a queued message while the
    /// Agent works on it (SND-18). Text empty once trimmed is ignored.
    SendMessage {
        /// What the person wrote.
        text: String,
    },
    /// `cancelActiveSession()`: stop the selected session's run, then ask the Agent to stop
    /// (SND-16, SND-17).
    CancelActiveSession,
    /// `enqueueMessage(text)`: add a message to the selected session's queue (SND-24).
    EnqueueMessage {
        /// What the person wrote.
        text: String,
    },
    /// `removeQueuedMessage(id)`.
    RemoveQueuedMessage {
        /// The row.
        id: String,
    },
    /// `editQueuedMessage(id)`: the row leaves the queue and its text comes back as
    /// [`crate::Event::QueuedMessageReturned`].
    EditQueuedMessage {
        /// The row.
        id: String,
    },
    /// `reorderQueuedMessage(id, toIndex)`: clamped to the ends.
    ReorderQueuedMessage {
        /// The row.
        id: String,
        /// Where it goes.
        to_index: usize,
    },
    /// `clearMessageQueue()`.
    ClearMessageQueue,
    /// `sendNextQueuedMessage()`: release a held queue and send its first message once the
    /// thread is idle (SND-22).
    SendNextQueuedMessage,
    /// `setSelectedReasoningEffortValue(v)`: the picker's thinking level, which later turns carry
    /// in `runConfig` (OI-18). On a ready session it is PATCHed (CAT-15); ignored when the
    /// session is not ready; never PATCHed while a model choice waits (MOD-9).
    SetSelectedReasoningEffortValue {
        /// The level, or none.
        value: Option<String>,
    },
    /// `setSelectedProviderValue(v)`: the picker's provider (its first model is taken).
    SetSelectedProviderValue {
        /// The provider id.
        value: Option<String>,
    },
    /// `setSelectedModelValue(id)`: the picker's model, as `"{provider}::{model}"`.
    SetSelectedModelValue {
        /// The model id.
        value: Option<String>,
    },
    /// `resolveSessionModelSelection(choice)`: create the waiting session with this model
    /// (MOD-10, MOD-11). Refused while no catalog data is held (OI-21).
    ResolveSessionModelSelection {
        /// The provider, model and thinking level.
        choice: crate::api::ModelChoice,
    },
    /// `cancelSessionModelSelection()`: end the waiting creation, silently (MOD-15).
    CancelSessionModelSelection,
    /// `requestAvailableModels()`: read the catalog again at once (CAT-11).
    RequestAvailableModels,
    /// `invalidateModelProviderCatalog()`: drop every catalog entry (CAT-10).
    InvalidateModelProviderCatalog,
    /// `clearThread()`: stop the selected session's local run (no cancel request), and start
    /// its thread afresh: no messages shown, the run status idle, no notice, and the next turn
    /// carries the session id as its thread id. Reading the history again (selecting the session
    /// anew) shows it again (adr-notes 6).
    ClearThread,
    /// The session explorer's archived list (`fetchArchivedAgentSessions`): one Agent's archived
    /// sessions of the person, most recently archived first, into `archivedSessions`. The Agent
    /// is the selected session's (else the default session's) when none is named. A newer read
    /// aborts the one in flight; the latest list and the selection are not touched.
    FetchArchivedAgentSessions {
        /// The Agent uid.
        agent_uid: Option<String>,
        /// The page size: 20 when absent, clamped to 1 to 100.
        limit: Option<u32>,
    },
    /// The session explorer's search (`searchAgentSessions`): the person's active sessions
    /// matching `query` (trimmed), newest first, into `sessionSearchResults`. A blank query
    /// clears the search without a request. A newer search aborts the one in flight.
    SearchAgentSessions {
        /// What the person typed.
        query: String,
        /// The page size: 20 when absent, clamped to 1 to 100.
        limit: Option<u32>,
    },
    /// Read the latest-sessions list again now (while it is wanted: the chat visible, an
    /// Environment active, no launched session); a read in flight is replaced.
    RefreshLatestSessions,
    /// Forget the archived list (the reference explorer's "Show less"): a read in flight is
    /// aborted, the rows and error go, and archives or restores no longer read it again.
    ClearArchivedSessions,
    /// The surfaces draw these Agents: read the Agent icon projection of the active Environment
    /// unless one younger than five minutes is held (P13), and fetch the icons of these Agents
    /// (P14), into `Snapshot::agent_icons`. An empty list reads the projection alone. Ignored
    /// without an Environment or a platform credential (ADR 090).
    RequestAgentIcons {
        /// Agent uids.
        agent_uids: Vec<String>,
    },
}

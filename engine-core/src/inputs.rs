//! The current host inputs, normalized, and the keys derived from them.

use serde_json::Value;

use crate::input::{DefaultSession, LaunchTarget, Person, SourceStatus};

/// The person and Environment a session list belongs to (ENV-1, OI-31).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ScopeKey {
    pub person: Option<String>,
    pub environment: Option<String>,
    /// The local source's base (ADR 099): another source is another scope.
    pub source: Option<String>,
}

impl ScopeKey {
    /// The storage key of OI-31.
    pub(crate) fn storage_key(&self) -> String {
        format!(
            "ms.main-sequence-ai.agent-sessions:{}:{}",
            self.person.as_deref().unwrap_or("anonymous"),
            self.environment.as_deref().unwrap_or("no-environment")
        )
    }
}

/// One default-session combination: person, Environment, Agent and handle (DEF-10).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct DefaultKey {
    pub scope: ScopeKey,
    pub agent_uid: String,
    pub handle: String,
}

/// The level inputs as last supplied, normalized (blank strings read as none), and the marks
/// the engine keeps of them ([`Marks`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Inputs {
    pub person: Person,
    pub environment_uid: Option<String>,
    pub visible: bool,
    pub page_hidden: bool,
    pub requested_session_id: Option<String>,
    pub default_session: Option<DefaultSession>,
    pub shows_default_session: bool,
    pub launch_target: Option<LaunchTarget>,
    pub avoid_implicit: bool,
    pub view_context: Option<Value>,
    /// ADR 099: a local Agent runtime instead of the platform.
    pub source: Option<crate::source::LocalSource>,
    /// What the engine made of these inputs so far.
    pub marks: Marks,
}

/// What the engine made of the inputs so far: marks that keep a rule from acting twice or
/// remember when an input came.
#[derive(Debug, Clone, Default)]
pub(crate) struct Marks {
    /// Since when the page is hidden (RTA-10, RTA-22).
    pub page_hidden_since: Option<crate::time::Time>,
    /// The launchKey last opened (SEL-7).
    pub opened_launch_key: Option<u64>,
    /// The requested id was set while the person or the Environment was still unknown: it
    /// carries into the pair that completes them (OI-14).
    pub requested_before_scope: bool,
}

/// Trims; a blank value reads as none.
pub(crate) fn non_blank(value: Option<&str>) -> Option<String> {
    value
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

impl Inputs {
    pub(crate) fn scope(&self) -> ScopeKey {
        ScopeKey {
            person: non_blank(self.person.user_uid.as_deref()),
            environment: self.environment_uid.clone(),
            source: self.source.as_ref().map(|s| s.base_url().to_owned()),
        }
    }

    /// The Agent uid of the default session, when one is named.
    pub(crate) fn default_agent(&self) -> Option<String> {
        non_blank(
            self.default_session
                .as_ref()
                .and_then(|d| d.agent_uid.as_deref()),
        )
    }

    pub(crate) fn default_source_status(&self) -> SourceStatus {
        self.default_session
            .as_ref()
            .map(|d| d.status)
            .unwrap_or_default()
    }

    /// The combination (person, Environment, Agent, handle) the default session belongs to, once
    /// an Environment is active and an Agent is named, whatever the source's status.
    pub(crate) fn default_combination(&self) -> Option<DefaultKey> {
        let d = self.default_session.as_ref()?;
        self.environment_uid.as_ref()?;
        Some(DefaultKey {
            scope: self.scope(),
            agent_uid: self.default_agent()?,
            handle: d.handle_unique_id.clone(),
        })
    }

    /// The combination, while the source is ready: only then is the default session asked for or
    /// selected (DEF-4, DEF-5, DEF-6).
    pub(crate) fn default_key(&self) -> Option<DefaultKey> {
        self.default_combination()
            .filter(|_| self.default_source_status() == SourceStatus::Ready)
    }
}

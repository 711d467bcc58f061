//! What the snapshot shows with a local Agent source (ADR 099; `docs/local-agents.md`): the
//! local parts fill it, over the platform's values.

use super::Local;
use super::history::LIVE_ONLY_NOTICE;
use super::models as local_models;
use super::sessions::default_title;
use crate::snapshot::{Capabilities, Readiness, ReadinessStatus, Snapshot};

/// What the local view reads besides the local parts: the source's name, whether the chat is
/// visible, the conversation shown and when the engine started (wall clock).
pub(crate) struct Shown<'a> {
    pub(crate) display_name: &'a str,
    pub(crate) visible: bool,
    pub(crate) selected: Option<&'a str>,
    pub(crate) opened_ms: i64,
}

impl Local {
    /// The local runtime lists the conversation as working (a turn this engine did not start,
    /// such as one from before a reload): a stop sends its cancel.
    pub(crate) fn listed_working(&self, uid: &str) -> bool {
        self.sessions
            .inner()
            .sessions
            .iter()
            .any(|r| r.uid == uid && r.status.as_deref() == Some("running"))
    }

    /// The send guard's word with a local source: a runtime that has not passed its checks
    /// takes no message (its unavailable message, else "The local Agent is not ready yet.").
    pub(crate) fn refusal(&self) -> Option<crate::failure::RunFailure> {
        let admission = self.admission.inner();
        (!admission.ready).then(|| {
            let text = admission
                .message
                .clone()
                .unwrap_or_else(|| crate::api::local::NOT_READY_TEXT.to_owned());
            // RU-16: the send guard's refusal, "Source: Request was never sent. ...".
            crate::failure::RunFailure::from_source(
                crate::failure::FailureCode::RuntimeUnavailable,
                crate::failure::FailureSource::GUARD,
                &text,
            )
        })
    }

    /// What the snapshot shows with a local source: the runtime's decision, never a presence
    /// or a wake; the conversations (the one shown among them even when the runtime does not
    /// list it); the local capabilities; the composer admits once the runtime passed its
    /// checks and the conversation is ready.
    pub(crate) fn fill(&self, shown: &Shown<'_>, mut snapshot: Snapshot) -> Snapshot {
        let local = self;
        let admission = local.admission.inner();
        let sessions = local.sessions.inner();
        let agent = local.agent_name(shown.display_name);
        snapshot.active_runtime_interaction = Some(admission.interaction(&agent));
        snapshot.active_runtime_presence = None;
        snapshot.is_assistant_runtime_starting = false;
        snapshot.is_runtime_wake_overdue = false;
        // Platform values have no local counterpart (the reference's constants).
        snapshot.default_session_status = crate::snapshot::DefaultSessionStatus::Idle;
        snapshot.default_session_error = None;
        snapshot.is_direct_launch_session = false;
        snapshot.active_session_detail = None;
        snapshot.agent_id = None;
        snapshot.is_default_session =
            snapshot.current_session_id.as_deref() == Some(crate::source::DEFAULT_CONVERSATION);
        let readiness = local.readiness(shown.visible, shown.selected);
        snapshot.composer_admission = admission.ready && readiness.status == ReadinessStatus::Ready;
        snapshot.capabilities = Capabilities::local(!sessions.live_only);
        // The runtime's conversations, then this page's it does not list, then the one shown
        // when it is in neither; newest first (a row with no time counts as the engine's
        // start), each with the Agent's name as it stands now.
        let mut listed = sessions.sessions.clone();
        for row in &sessions.page {
            if !listed.iter().any(|r| r.uid == row.uid) {
                listed.push(row.clone());
            }
        }
        if let Some(uid) = snapshot.current_session_id.as_deref()
            && !listed.iter().any(|s| s.uid == uid)
        {
            listed.push(crate::input::SessionSummary {
                uid: uid.to_owned(),
                agent_uid: None,
                agent_name: None,
                title: default_title(uid).to_owned(),
                status: None,
                started_at: None,
                ended_at: None,
                handle_unique_id: None,
                llm_provider: None,
                llm_model: None,
            });
        }
        let opened = shown.opened_ms;
        let at = |s: &crate::input::SessionSummary| {
            s.updated_at()
                .and_then(crate::timestamp::unix_ms)
                .unwrap_or(opened)
        };
        listed.sort_by_key(|s| std::cmp::Reverse(at(s)));
        for row in &mut listed {
            row.agent_name = Some(agent.clone());
        }
        // No server search and nothing archived: the search looks through the rows listed
        // (title, case-insensitive), the archived list is empty.
        snapshot.session_search_query = local.search.as_ref().map(|(q, _)| q.clone());
        snapshot.session_search_results = local
            .search
            .as_ref()
            .map(|(query, limit)| {
                let query = query.to_lowercase();
                listed
                    .iter()
                    .filter(|r| r.title.to_lowercase().contains(&query))
                    .take(usize::try_from(*limit).unwrap_or(usize::MAX))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        snapshot.is_searching_sessions = false;
        snapshot.session_search_error = None;
        snapshot.archived_sessions = Vec::new();
        snapshot.archived_sessions_agent_uid = None;
        snapshot.is_loading_archived_sessions = false;
        snapshot.archived_sessions_error = None;
        snapshot.agent_sessions = listed;
        snapshot.is_loading_latest_sessions =
            crate::backend::local::sessions::is_reading(local.sessions.state());
        snapshot.latest_sessions_error = sessions.error.clone();
        snapshot.active_session_readiness = readiness;
        models_view(local, &mut snapshot);
        let history = local.history.inner();
        if snapshot.session_notice.is_none() && history.live_only {
            snapshot.session_notice = Some(LIVE_ONLY_NOTICE.to_owned());
        }
        snapshot
    }

    /// `activeSessionReadiness` with a local source: loading while the runtime is first
    /// checked; ready while it is unavailable (the decision locks the composer, not readiness);
    /// then the transcript's read decides (an error, or ready once it loaded or the runtime
    /// cannot reload it).
    pub(crate) fn readiness(&self, visible: bool, selected: Option<&str>) -> Readiness {
        let selected = selected.map(str::to_owned);
        let admission = self.admission.inner();
        let history = self.history.inner();
        let (status, error) = if !visible || selected.is_none() {
            (ReadinessStatus::Idle, None)
        } else if !admission.checked {
            (ReadinessStatus::Loading, None)
        } else if !admission.ready {
            (ReadinessStatus::Ready, None)
        } else if let Some(error) = &history.error {
            (ReadinessStatus::Error, Some(error.clone()))
        } else if history.loaded {
            (ReadinessStatus::Ready, None)
        } else {
            (ReadinessStatus::Loading, None)
        };
        Readiness {
            session_id: selected,
            status,
            detail_ready: true,
            history_ready: history.loaded,
            insights_ready: false,
            error,
        }
    }
}

/// The picker with a local source: the configured option first, then the runtime's catalog;
/// no model choice is ever asked for, and no platform value shows.
fn models_view(local: &Local, snapshot: &mut Snapshot) {
    let catalog = local.catalog.inner().catalog.as_deref();
    let values = &local.model.inner().values;
    let models = local_models::model_options(catalog);
    snapshot.selected_provider_value = values.provider.clone();
    snapshot.selected_model_value = values
        .provider
        .as_ref()
        .zip(values.model.as_ref())
        .map(|(p, m)| format!("{p}::{m}"));
    snapshot.selected_reasoning_effort_value = values.thinking.clone();
    snapshot.available_providers = local_models::provider_options(catalog);
    snapshot.available_reasoning_efforts = models
        .iter()
        .find(|m| {
            Some(m.provider.as_str()) == values.provider.as_deref()
                && Some(m.model.as_str()) == values.model.as_deref()
        })
        .map(|m| m.reasoning_options.clone())
        .unwrap_or_default();
    snapshot.available_models = models;
    snapshot.available_models_error = None;
    snapshot.is_loading_available_models =
        crate::backend::local::catalog::catalog_loading(local.catalog.state());
    snapshot.has_requested_available_models = local.catalog.inner().requested;
    snapshot.session_model_selection_request = None;
    snapshot.session_model_last_used = Vec::new();
    snapshot.is_updating_session_model = local.model.inner().is_updating();
}

//! Computing the [`Snapshot`] from the machines: each shared state in one place (SHR-1). The
//! view reads [`Parts`], which the engine lends it, and never the engine itself.

use std::collections::BTreeMap;
use std::sync::Arc;

use statig::blocking::InitializedStateMachine;

use crate::api::{ApiError, Catalog};
use crate::concerns::catalog::CatalogStore;
use crate::concerns::default_session::DefaultSessionMachine;
use crate::concerns::environment::Environment;
use crate::concerns::environment::State as EnvState;
use crate::concerns::explorer::ExplorerRead;
use crate::concerns::hydration::Hydration;
use crate::concerns::hydration::Load;
use crate::concerns::model_choice::ModelChoiceMachine;
use crate::concerns::opening::Opening;
use crate::concerns::opening::State as OpenState;
use crate::concerns::picker::Picker;
use crate::concerns::runtime_access::Decision;
use crate::concerns::runtime_access::RuntimeAccessMachine;
use crate::concerns::selection;
use crate::concerns::selection::Selection;
use crate::concerns::{cancel, catalog, default_session, explorer, model_choice, picker, send};
use crate::input::SourceStatus;
use crate::inputs::Inputs;
use crate::model::Origin;
use crate::queue::{QueueRow, QueueRowStatus, QueueTexts};
use crate::revision::ThreadView;
use crate::snapshot::AgentIcon;
use crate::snapshot::{
    ArchivedSession, DefaultSessionStatus, DetailSnapshot, DetailStatus, LastUsedModel, Readiness,
    ReadinessStatus, RunStatus, RunStatusView, SessionModelSelectionRequest, Snapshot,
};
use crate::work::Works;

/// What the view reads: the engine's parts, borrowed.
pub(crate) struct Parts<'a> {
    pub inputs: &'a Inputs,
    pub env: &'a InitializedStateMachine<Environment>,
    pub default: &'a InitializedStateMachine<DefaultSessionMachine>,
    pub opening: &'a InitializedStateMachine<Opening>,
    pub selection: &'a InitializedStateMachine<Selection>,
    pub hydration: &'a InitializedStateMachine<Hydration>,
    pub runtime: &'a InitializedStateMachine<RuntimeAccessMachine>,
    pub catalog: &'a InitializedStateMachine<CatalogStore>,
    pub choice: &'a InitializedStateMachine<ModelChoiceMachine>,
    pub picker: &'a InitializedStateMachine<Picker>,
    pub works: &'a Works,
    pub delete_error: Option<&'a str>,
    /// The wall clock (Unix ms) as of the last input.
    pub wall_now_ms: u64,
    /// The session explorer's archived list.
    pub archived: &'a InitializedStateMachine<ExplorerRead>,
    /// The session explorer's search.
    pub search: &'a InitializedStateMachine<ExplorerRead>,
}

/// What the snapshot shows that the engine derives beyond its parts.
pub(crate) struct Derived<'a> {
    /// The person's model-provider catalog.
    pub catalog: Option<Arc<Catalog>>,
    /// The thread the snapshot shows, borrowed; `None` leaves the snapshot's `thread` empty.
    pub thread: Option<ThreadView<'a>>,
    /// The selected session's Agent, by name.
    pub agent_name: Option<String>,
    /// `hasRequestedAvailableModels`.
    pub requested_models: bool,
    /// `sessionModelLastUsed`, as (provider, model).
    pub last_used: Vec<(String, String)>,
    pub agent_icons: Arc<BTreeMap<String, AgentIcon>>,
}

/// The run-status channel (adr-notes 6), computed alone: what [`crate::Engine::run_status`]
/// returns and the snapshot shows.
pub(crate) fn run_status(view: &Parts<'_>) -> RunStatusView {
    let (h, works) = (view.hydration.inner(), view.works);
    let uid = selection::selected(view.selection.state()).map(|s| s.0);
    let work = uid.and_then(|u| works.get(u));
    // SND-25: the record's `working` is another writer's unless it was read during our own turn.
    let writer = h.session_uid.as_deref() == uid
        && h.detail.value().is_some_and(|r| r.working)
        && !work.is_some_and(|w| w.own_working);
    let running = uid.is_some_and(|u| works.is_running(u));
    let run = work.map(|w| w.run.inner());
    let (mut status, mut detail) = run
        .map(|r| (r.status, r.detail.clone()))
        .unwrap_or_default();
    let mut failure = run.and_then(|r| r.failure.clone());
    // adr-notes 8: a history that failed to load says so in the run status (no turn of ours
    // runs then: a send is refused while the session is not ready).
    if !running
        && h.session_uid.as_deref() == uid
        && let Load::Failed(e) = &h.history
    {
        status = RunStatus::Error;
        detail = Some(specific(e).unwrap_or_else(|| "Session history request failed.".to_owned()));
        failure = None;
    }
    if !running && work.is_some_and(|w| !w.queue.rows.is_empty() && w.queue.hold.is_none()) {
        status = RunStatus::Queued;
    }
    RunStatusView {
        run_status: status,
        run_status_detail: detail,
        run_failure: failure.filter(|_| status == RunStatus::Error),
        thinking_summary: run.and_then(|r| r.thinking_summary.clone()),
        has_visible_assistant_output: run.is_some_and(|r| r.visible_output),
        is_agent_working: running || writer,
        has_active_chat_stream: uid.is_some_and(|u| works.is_streaming(u)),
        is_cancelling_session: work.is_some_and(|w| cancel::is_cancelling(w.cancel.state())),
    }
}

/// A specific message for readiness: the platform's own text, or the error's when it is not an
/// HTTP failure.
fn specific(e: &ApiError) -> Option<String> {
    match e {
        ApiError::Http { server_message, .. } => server_message.clone(),
        other => Some(other.to_string()).filter(|m| !m.trim().is_empty()),
    }
}

fn is_not_found(e: &ApiError) -> bool {
    e.status() == Some(404)
}

/// The typed errors behind the platform snapshot's failure texts (`sendReadiness`'s causes;
/// a local source has its own, `Backend::failures`).
pub(crate) fn failures<'a>(parts: &Parts<'a>) -> crate::snapshot::ready::Failures<'a> {
    let Parts {
        inputs,
        env,
        default,
        hydration: hyd,
        ..
    } = *parts;
    let h = hyd.inner();
    let session = match (&h.detail, &h.history) {
        (Load::Failed(e), _) | (_, Load::Failed(e)) => Some(e),
        _ => None,
    };
    crate::snapshot::ready::Failures {
        sessions: match env.state() {
            EnvState::Failed { error } => Some(error),
            _ => None,
        },
        default_session: inputs
            .default_key()
            .and_then(|k| default.inner().failure_error(&k)),
        session,
        local: false,
    }
}

/// The snapshot as the platform's sessions make it (a local source then fills in what it
/// decides: `Backend::fill`, `backend/local/view.rs`).
pub(crate) fn platform_snapshot(parts: &Parts<'_>, derived: Derived<'_>) -> Snapshot {
    let Parts {
        inputs,
        env,
        default,
        opening,
        selection: sel,
        hydration: hyd,
        runtime,
        catalog: store,
        choice,
        picker,
        works,
        delete_error,
        wall_now_ms,
        archived,
        search,
    } = *parts;
    let selected = selection::selected(sel.state());
    let launched = matches!(selected, Some((_, Origin::Launched)));
    let default_state = inputs.shows_default_session && !launched;
    let key = inputs.default_key();
    let list = env.inner().current();
    let default_uid =
        default_session::default_session_uid(key.as_ref(), default.inner(), env.inner().sessions());

    // OI-23: the first matching case wins.
    let (default_session_status, default_session_error) = if !default_state {
        (DefaultSessionStatus::Idle, None)
    } else if inputs.default_source_status() == SourceStatus::Error {
        (DefaultSessionStatus::Error, None)
    } else if inputs.default_source_status() != SourceStatus::Ready
        || inputs.environment_uid.is_none()
    {
        (DefaultSessionStatus::Loading, None)
    } else if inputs.default_agent().is_none() {
        (DefaultSessionStatus::Missing, None)
    } else if let Some(message) = key.as_ref().and_then(|k| default.inner().failure(k)) {
        (DefaultSessionStatus::Error, Some(message.to_owned()))
    } else {
        // OI-23: a model choice pending for the get-or-create counts as opening.
        let combination = inputs.default_combination();
        let choosing = combination.as_ref().is_some_and(|k| {
            choice.inner().retrying_default(k)
                || model_choice::pending(choice.state()).is_some_and(
                    |r| matches!(&r.origin, model_choice::Origin::Default { key, .. } if key == k),
                )
        });
        let opening = choosing
            || matches!(default.state(), default_session::State::Opening { key: k, .. } if Some(k) == key.as_ref());
        if opening || selected.map(|s| s.0) != default_uid || default_uid.is_none() {
            (DefaultSessionStatus::Opening, None)
        } else {
            (DefaultSessionStatus::Ready, None)
        }
    };

    let h = hyd.inner();
    let latest_error = match env.state() {
        EnvState::Failed { error } => Some(crate::concerns::environment::message_of(error)),
        _ => delete_error.map(str::to_owned),
    };
    let readiness = readiness(
        parts,
        selected.map(|s| s.0),
        default_state,
        matches!(env.state(), EnvState::Failed { .. }),
    );
    let active_session_detail = h.session_uid.as_ref().map(|uid| {
        let (status, error) = match &h.detail {
            Load::Idle => (DetailStatus::Idle, None),
            Load::Loading { previous: None, .. } => (DetailStatus::Loading, None),
            Load::Loading {
                previous: Some(_), ..
            }
            | Load::Loaded(_) => (DetailStatus::Ready, None),
            Load::Failed(e) if is_not_found(e) => (DetailStatus::NotFound, Some(e.to_string())),
            Load::Failed(e) => (DetailStatus::Error, Some(e.to_string())),
        };
        DetailSnapshot {
            session_id: uid.clone(),
            status,
            error,
            record: h.detail.value().map(|r| r.raw.clone()),
            insights: h.insights.value().map(|i| i.value.clone()),
            insights_loading: h.insights.is_loading(),
            insights_error: h.insights.error().map(|e| {
                specific(e).unwrap_or_else(|| "Session insights request failed.".to_owned())
            }),
        }
    });
    // RTA-25: a launched session has no decision before its first send; admission then depends
    // on readiness alone.
    let unsent_launch = selected.is_some_and(|(uid, _)| launched && !works.has_sent(uid));
    let decision = selected
        .filter(|_| !unsent_launch)
        .and_then(|(uid, _)| runtime.inner().decision(uid));
    let ready = readiness.status == ReadinessStatus::Ready;
    let is_runtime_wake_overdue = decision
        .and_then(wake_overdue_ms)
        .is_some_and(|at| wall_now_ms >= at);
    let composer_admission = ready && (unsent_launch || decision.is_some_and(Decision::admits));
    let uid = selected.map(|s| s.0);
    let work = uid.and_then(|u| works.get(u));
    // FAIL-15, OI-21: with no catalog data the picker lists are empty.
    let person = inputs.scope().person;
    let catalog = derived.catalog;
    let models = catalog
        .as_ref()
        .map(|c| c.model_options())
        .unwrap_or_default();
    let values = &picker.inner().values;
    // The thread: the history, then this engine's turns since, the streaming answer last;
    // `clearThread()` sets the history aside.
    let thread = derived.thread.map(|t| t.to_vec()).unwrap_or_default();
    let run = run_status(parts);
    let queue = work.map(|w| &w.queue);
    let hold = queue.and_then(|q| q.hold.as_ref());
    let row_status = if hold.is_some() {
        QueueRowStatus::Held
    } else {
        QueueRowStatus::Queued
    };
    let agent_name = derived.agent_name;
    let working = run.is_agent_working;
    Snapshot {
        active_runtime_interaction: decision.map(|d| d.interaction.clone()),
        active_runtime_presence: decision.and_then(|d| d.presence.clone()),
        is_assistant_runtime_starting: decision.is_some_and(Decision::is_starting),
        composer_admission,
        send_readiness: crate::snapshot::ready::SendReadiness::Ready,
        // Both derived last, from the final snapshot (`Engine::snapshot`).
        composer_state: crate::snapshot::composer::ComposerState::new(
            crate::snapshot::composer::ComposerStatus::Busy,
            [false; 3],
            None,
        ),
        environment_uid: inputs.environment_uid.clone(),
        is_visible: inputs.visible,
        current_session_id: selected.map(|s| s.0.to_owned()),
        selection_origin: selected.map(|s| s.1),
        is_direct_launch_session: launched,
        is_default_session: selected.is_some() && selected.map(|s| s.0) == default_uid,
        default_session_status,
        default_session_error,
        active_session_readiness: readiness,
        active_session_detail,
        agent_sessions: list.map(|l| l.sessions.clone()).unwrap_or_default(),
        latest_sessions_error: latest_error,
        is_loading_latest_sessions: matches!(env.state(), EnvState::Reading { .. }),
        is_creating_agent_session: !matches!(opening.state(), OpenState::Idle {}),
        session_notice: sel.inner().notice.clone(),
        thread,
        run_status: run.run_status,
        run_status_detail: run.run_status_detail,
        is_agent_working: working,
        has_active_chat_stream: run.has_active_chat_stream,
        is_cancelling_session: run.is_cancelling_session,
        message_queue: queue
            .map(|q| {
                q.rows
                    .iter()
                    .map(|r| QueueRow::new(r, row_status, hold))
                    .collect()
            })
            .unwrap_or_default(),
        message_queue_hold: queue.and_then(|q| q.hold.clone()),
        queued_message_count_by_session_id: works
            .iter()
            .filter(|(_, w)| !w.queue.rows.is_empty())
            .map(|(u, w)| (u.clone(), w.queue.rows.len()))
            .collect(),
        is_runtime_wake_overdue,
        selected_reasoning_effort_value: values.thinking.clone(),
        selected_provider_value: values.provider.clone(),
        selected_model_value: values
            .provider
            .as_ref()
            .zip(values.model.as_ref())
            .map(|(p, m)| format!("{p}::{m}")),
        available_providers: catalog
            .as_ref()
            .map(|c| c.provider_options())
            .unwrap_or_default(),
        available_reasoning_efforts: models
            .iter()
            .find(|m| {
                Some(m.provider.as_str()) == values.provider.as_deref()
                    && Some(m.model.as_str()) == values.model.as_deref()
            })
            .map(|m| m.reasoning_options.clone())
            .unwrap_or_default(),
        available_models: models,
        available_models_error: person
            .as_deref()
            .and_then(|p| store.inner().error(p))
            .map(str::to_owned),
        is_loading_available_models: catalog::is_loading(store.state()),
        has_requested_available_models: derived.requested_models,
        session_model_selection_request: model_choice::pending(choice.state()).map(|r| {
            SessionModelSelectionRequest {
                id: r.id,
                agent_label: r.agent_label.clone(),
                agent_uid: crate::inputs::non_blank(Some(&r.agent_uid)),
                missing: r.missing,
            }
        }),
        session_model_last_used: derived
            .last_used
            .into_iter()
            .map(|(provider, model)| LastUsedModel { provider, model })
            .collect(),
        is_updating_session_model: picker::is_updating(picker.state()),
        run_failure: run.run_failure,
        thinking_summary: run.thinking_summary,
        has_visible_assistant_output: run.has_visible_assistant_output,
        message_queue_sending: work
            .and_then(|w| send::queued_turn(w.run.state()))
            .map(|q| QueueRow::new(&q.row, QueueRowStatus::Sending, None)),
        message_queue_texts: QueueTexts::new(
            queue.map_or(0, |q| q.rows.len()),
            hold,
            working,
            agent_name.as_deref(),
        ),
        agent_id: h
            .agent_id
            .clone()
            .filter(|_| h.session_uid.as_deref() == uid),
        archived_sessions: archived
            .inner()
            .rows
            .iter()
            .map(|r| ArchivedSession {
                session: r.session.clone(),
                archived_at: r.archived_at.clone(),
            })
            .collect(),
        archived_sessions_agent_uid: archived.inner().subject.clone(),
        is_loading_archived_sessions: explorer::is_loading(archived.state()),
        archived_sessions_error: explorer::error(archived.state()).map(str::to_owned),
        session_search_query: search.inner().subject.clone(),
        session_search_results: search
            .inner()
            .rows
            .iter()
            .map(|r| r.session.clone())
            .collect(),
        is_searching_sessions: explorer::is_loading(search.state()),
        session_search_error: explorer::error(search.state()).map(str::to_owned),
        capabilities: crate::snapshot::Capabilities::PLATFORM,
        agent_icons: derived.agent_icons,
    }
}

/// OI-4, RU-42: a transient decision whose wake is still on its way is "taking longer" 30 s
/// after the wake's deadline (wall-clock ms); `None` without such a wake (RU-43).
pub(crate) fn wake_overdue_ms(decision: &Decision) -> Option<u64> {
    if !decision.is_starting() {
        return None;
    }
    let wake = decision.presence.as_ref()?.wake.as_ref()?;
    // RU-43: a wake that is over (expired, failed, superseded, serving) lends nothing to a later
    // check: only one still on its way can be taking longer than expected.
    if !matches!(wake.state.as_str(), "requested" | "in_progress") {
        return None;
    }
    let deadline = crate::timestamp::unix_ms(&wake.deadline_at)?;
    u64::try_from(deadline)
        .ok()
        .map(|ms| ms.saturating_add(30_000))
}

/// The selected session's readiness as the snapshot shows it, from the platform's sessions
/// (the send guard reads it, SND-2).
pub(crate) fn current_readiness(parts: &Parts<'_>) -> Readiness {
    let Parts {
        inputs,
        env,
        selection: sel,
        ..
    } = *parts;
    let selected = selection::selected(sel.state());
    let launched = matches!(selected, Some((_, Origin::Launched)));
    let default_state = inputs.shows_default_session && !launched;
    readiness(
        parts,
        selected.map(|s| s.0),
        default_state,
        matches!(env.state(), EnvState::Failed { .. }),
    )
}

fn readiness(
    parts: &Parts<'_>,
    selected: Option<&str>,
    default_state: bool,
    list_failed: bool,
) -> Readiness {
    let Parts {
        inputs,
        env,
        hydration: hyd,
        ..
    } = *parts;
    let h = hyd.inner();
    let detail_ready = h.detail.value().is_some();
    let history_ready = h.history.value().is_some();
    let insights_ready = h.insights.value().is_some();
    let (status, error) = if !inputs.visible {
        (ReadinessStatus::Idle, None) // SHR-2
    } else if let Some(_uid) = selected {
        match (&h.detail, &h.history) {
            (Load::Failed(e), _) if is_not_found(e) => (
                ReadinessStatus::NotFound,
                Some(specific(e).unwrap_or_else(|| "Session not found.".into())),
            ),
            (Load::Failed(e), _) => (
                ReadinessStatus::Error,
                Some(
                    specific(e)
                        .unwrap_or_else(|| "The session details could not be loaded.".into()),
                ),
            ),
            (_, Load::Failed(e)) => (
                ReadinessStatus::Error,
                Some(specific(e).unwrap_or_else(|| "Session history request failed.".into())),
            ),
            _ if detail_ready && history_ready => (ReadinessStatus::Ready, None),
            _ => (ReadinessStatus::Loading, None),
        }
    } else if default_state || inputs.avoid_implicit || inputs.environment_uid.is_none() {
        (ReadinessStatus::Idle, None) // SHR-3: nothing selected on purpose
    } else if list_failed {
        // FAIL-7: the list was needed to choose a session and failed.
        (
            ReadinessStatus::Error,
            Some("Choose or start a session before writing.".into()),
        )
    } else {
        match env.state() {
            EnvState::Unread {} | EnvState::Reading { .. } => (ReadinessStatus::Loading, None), // SHR-4
            _ => (ReadinessStatus::Idle, None), // SHR-3: the list loaded empty
        }
    };
    Readiness {
        session_id: selected.map(str::to_owned),
        status,
        detail_ready,
        history_ready,
        insights_ready,
        error,
    }
}

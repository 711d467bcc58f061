//! HYD: loading the selected session while the chat is visible: detail and history together,
//! insights once the detail has loaded, the thread, and what readiness is made of.

use statig::prelude::*;

use super::Signal;
use crate::api::{
    ApiError, History, Insights, SessionRecord, parse_history, parse_insights, parse_session_record,
};
use crate::concerns::ctx::Ctx;
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Outcome as Done, Owner};
use crate::message::Message;
use std::sync::Arc;

/// One resource's load.
#[derive(Debug, Clone, Default)]
pub(crate) enum Load<T> {
    #[default]
    Idle,
    /// In flight; a refetch keeps what was loaded before (HYD-9).
    Loading {
        id: RequestId,
        previous: Option<T>,
    },
    Loaded(T),
    Failed(ApiError),
}

impl<T> Load<T> {
    /// What is loaded now, a refetch included.
    pub(crate) fn value(&self) -> Option<&T> {
        match self {
            Load::Loaded(v)
            | Load::Loading {
                previous: Some(v), ..
            } => Some(v),
            _ => None,
        }
    }

    fn pending(&self) -> Option<RequestId> {
        match self {
            Load::Loading { id, .. } => Some(*id),
            _ => None,
        }
    }

    pub(crate) fn is_loading(&self) -> bool {
        matches!(self, Load::Loading { .. })
    }

    pub(crate) fn error(&self) -> Option<&ApiError> {
        match self {
            Load::Failed(e) => Some(e),
            _ => None,
        }
    }

    /// Starts a (re)load, keeping the loaded value.
    fn start(&mut self, id: RequestId) {
        let previous = match std::mem::take(self) {
            Load::Loaded(v)
            | Load::Loading {
                previous: Some(v), ..
            } => Some(v),
            _ => None,
        };
        *self = Load::Loading { id, previous };
    }
}

/// The history-failure notice (FAIL-11; the specification's wording).
pub(crate) const HISTORY_FAILED_NOTICE: &str = "Failed to rehydrate the selected AgentSession. Interaction is disabled until session history loads.";

/// Shared storage: everything loaded for the selected session.
#[derive(Debug, Default)]
pub(crate) struct Hydration {
    pub session_uid: Option<String>,
    pub detail: Load<SessionRecord>,
    pub history: Load<History>,
    pub insights: Load<Insights>,
    /// The thread: the loaded history's messages (HYD-4), shared with snapshots.
    pub thread: Vec<Arc<Message>>,
    /// Moves whenever `thread` is replaced ([`crate::Revisions::thread`]).
    pub thread_revision: u64,
    /// History is read once per selection (HYD-13, OI-26).
    history_requested: bool,
    /// Insights are read once per selection, after the first loaded detail (OI-26).
    insights_requested: bool,
    /// The selected session's answer streams: no history is read or applied (HYD-10, HYD-11).
    streaming: bool,
    /// `agentId` (adr-notes 6): the Agent id last reported for this selection, by its history
    /// (`session.agentUid`) or by a frame of its streamed answer.
    pub agent_id: Option<String>,
}

pub(crate) enum HydEvent<'a> {
    Evaluate {
        selected: Option<&'a str>,
        visible: bool,
        /// The selected session's answer streams (HYD-10, HYD-11).
        streaming: bool,
    },
    /// `refreshSessionDetail()`.
    RefreshDetail,
    /// The person or Environment changed: drop everything, even for the same session uid.
    Reset,
    Answer(&'a Answer),
    /// A model change was stored: the record the platform returned replaces the loaded one
    /// (CAT-18).
    RecordUpdated(&'a SessionRecord),
    /// A frame of the selected session's streamed answer reported this Agent id (adr-notes 6).
    AgentIdReported(&'a str),
    /// `clearThread()`: the thread starts afresh, and so does `agentId` (adr-notes 6).
    AgentIdForgotten,
}

#[state_machine(
    initial = "State::unselected()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl Hydration {
    #[superstate]
    fn any(&mut self, context: &mut Ctx<'_>, event: &HydEvent<'_>) -> Outcome<State> {
        match event {
            HydEvent::Evaluate {
                selected,
                visible,
                streaming,
            } => {
                if self.session_uid.as_deref() == *selected {
                    return Handled;
                }
                self.reset(context, *selected);
                self.streaming = *streaming;
                Transition(target(*selected, *visible))
            }
            HydEvent::Answer(a) => {
                self.on_answer(context, a);
                Handled
            }
            HydEvent::RefreshDetail => Handled,
            HydEvent::RecordUpdated(record) => {
                if self.session_uid.as_deref() == Some(record.uid.as_str()) {
                    match &mut self.detail {
                        Load::Loaded(r)
                        | Load::Loading {
                            previous: Some(r), ..
                        } => *r = (*record).clone(),
                        _ => {}
                    }
                }
                Handled
            }
            HydEvent::Reset => {
                self.reset(context, None);
                Transition(State::unselected())
            }
            HydEvent::AgentIdReported(agent_id) => {
                self.agent_id = Some((*agent_id).to_owned());
                Handled
            }
            HydEvent::AgentIdForgotten => {
                self.agent_id = None;
                Handled
            }
        }
    }

    /// Nothing selected.
    #[state(superstate = "any")]
    fn unselected(event: &HydEvent<'_>) -> Outcome<State> {
        let _ = event;
        Super
    }

    /// Selected, but the chat is not visible: nothing is requested (HYD-12).
    #[state(superstate = "any")]
    fn hidden(&mut self, context: &mut Ctx<'_>, event: &HydEvent<'_>) -> Outcome<State> {
        match event {
            HydEvent::Evaluate {
                selected,
                visible: true,
                streaming,
            } if self.session_uid.as_deref() == *selected => {
                self.follow_stream(context, *streaming);
                Transition(State::visible())
            }
            HydEvent::Evaluate {
                selected,
                streaming,
                ..
            } if self.session_uid.as_deref() == *selected => {
                self.follow_stream(context, *streaming);
                Handled
            }
            _ => Super,
        }
    }

    /// Selected and visible: the detail is read on entry (again on every return, HYD-13), the
    /// insights with it when a detail has loaded (OI-26, OI-7: coming back into view), and the
    /// history once per selection.
    #[state(superstate = "any", entry_action = "load")]
    fn visible(&mut self, context: &mut Ctx<'_>, event: &HydEvent<'_>) -> Outcome<State> {
        match event {
            HydEvent::Evaluate {
                selected,
                visible: false,
                ..
            } if self.session_uid.as_deref() == *selected => Transition(State::hidden()),
            HydEvent::Evaluate {
                selected,
                streaming,
                ..
            } if self.session_uid.as_deref() == *selected => {
                self.follow_stream(context, *streaming);
                // HYD-10: a history read held back while the answer streamed goes out after it.
                if !self.history_requested
                    && !self.streaming
                    && context.inputs.environment_uid.is_some()
                    && !matches!(self.detail, Load::Failed(ApiError::Refused { .. }))
                {
                    self.request_history(context);
                }
                Handled
            }
            HydEvent::RefreshDetail => {
                self.request_detail(context);
                Handled
            }
            _ => Super,
        }
    }

    #[action]
    fn load(&mut self, context: &mut Ctx<'_>) {
        // Without an Environment nothing is read yet (section 1); the scope change that brings
        // one starts a new selection.
        if context.inputs.environment_uid.is_none() {
            return;
        }
        self.request_detail(context);
        // OI-26, OI-7: coming back into view reads the insights of a loaded detail again at
        // once, beside the detail (which stays ready meanwhile, HYD-9); a detail that loaded
        // while the chat was hidden owes them anyway (HYD-3). Without a loaded detail they wait
        // for it.
        if self.detail.value().is_some() {
            self.request_insights(context);
        }
        // A session whose detail read was refused (an invalid id) is not loadable at all.
        let refused = matches!(self.detail, Load::Failed(ApiError::Refused { .. }));
        // HYD-10: not while the session's answer streams.
        if !self.history_requested && !refused && !self.streaming {
            self.request_history(context);
        }
    }
}

fn target(selected: Option<&str>, visible: bool) -> State {
    match (selected, visible) {
        (None, _) => State::unselected(),
        (Some(_), false) => State::hidden(),
        (Some(_), true) => State::visible(),
    }
}

impl Hydration {
    /// A new selection: drop everything of the old one (INV-10).
    fn reset(&mut self, context: &mut Ctx<'_>, selected: Option<&str>) {
        for id in [
            self.detail.pending(),
            self.history.pending(),
            self.insights.pending(),
        ]
        .into_iter()
        .flatten()
        {
            context.io.abort(id);
        }
        *self = Hydration {
            session_uid: selected.map(str::to_owned),
            thread_revision: self.thread_revision.wrapping_add(1),
            ..Hydration::default()
        };
    }

    /// HYD-10, HYD-11: while the session's answer streams no history is read; one in flight
    /// when the stream starts is dropped (it predates the turn) and read again after it.
    fn follow_stream(&mut self, context: &mut Ctx<'_>, streaming: bool) {
        self.streaming = streaming;
        if streaming && let Some(id) = self.history.pending() {
            context.io.abort(id);
            self.history = Load::Idle;
            self.history_requested = false;
        }
    }

    fn request_detail(&mut self, context: &mut Ctx<'_>) {
        let Some(session_uid) = self.session_uid.clone() else {
            return;
        };
        if let Some(id) = self.detail.pending() {
            context.io.abort(id);
        }
        // Without an Environment nothing can be read yet: the detail waits (readiness loading).
        let Some(environment_uid) = context.inputs.environment_uid.clone() else {
            return;
        };
        match context.send(
            Owner::Hydration,
            ApiCall::GetSessionDetail {
                session_uid,
                environment_uid,
            },
        ) {
            Ok(id) => self.detail.start(id),
            Err(e) => self.detail_failed(context, e),
        }
    }

    fn request_history(&mut self, context: &mut Ctx<'_>) {
        let Some(session_uid) = self.session_uid.clone() else {
            return;
        };
        self.history_requested = true;
        match context.send(Owner::Hydration, ApiCall::GetSessionHistory { session_uid }) {
            Ok(id) => self.history.start(id),
            Err(e) => self.history_failed(context, e),
        }
    }

    fn request_insights(&mut self, context: &mut Ctx<'_>) {
        let Some(session_uid) = self.session_uid.clone() else {
            return;
        };
        self.insights_requested = true;
        if let Some(id) = self.insights.pending() {
            context.io.abort(id);
        }
        match context.send(
            Owner::Hydration,
            ApiCall::GetSessionInsights { session_uid },
        ) {
            Ok(id) => self.insights.start(id),
            Err(e) => self.insights = Load::Failed(e),
        }
    }

    /// A failed detail read, a refetch included: readiness owns the error (`not_found` for a
    /// 404), the record goes, and so do the insights: dropped, an open read aborted, and not
    /// asked for again until a detail loads again (HYD-3).
    fn detail_failed(&mut self, context: &mut Ctx<'_>, error: ApiError) {
        if let Some(id) = self.insights.pending() {
            context.io.abort(id);
        }
        self.insights = Load::Idle;
        self.insights_requested = false;
        if let Some(session_uid) = self.session_uid.clone() {
            context.memory.signals.push_back(Signal::DetailFailed {
                session_uid,
                error: error.clone(),
            });
        }
        self.detail = Load::Failed(error);
    }

    fn history_failed(&mut self, context: &mut Ctx<'_>, error: ApiError) {
        self.history = Load::Failed(error);
        if let Some(session_uid) = self.session_uid.clone() {
            let text = HISTORY_FAILED_NOTICE.to_owned();
            context
                .memory
                .signals
                .push_back(Signal::Notice { session_uid, text });
        }
    }

    fn on_answer(&mut self, context: &mut Ctx<'_>, a: &Answer) {
        let id = Some(a.id);
        if id == self.detail.pending() {
            let env = context.inputs.environment_uid.clone().unwrap_or_default();
            let asked = self.session_uid.clone().unwrap_or_default();
            let read = a
                .ok_body()
                .and_then(parse_session_record)
                .and_then(|r| r.check_for(&env).map(|()| r))
                .and_then(|r| {
                    if r.uid == asked {
                        Ok(r)
                    } else {
                        Err(ApiError::Malformed {
                            message: "The session detail answer names another session.".into(),
                        })
                    }
                });
            match read {
                Ok(record) => {
                    context.memory.signals.push_back(Signal::DetailLoaded {
                        session_uid: record.uid.clone(),
                    });
                    self.detail = Load::Loaded(record);
                    // HYD-3, HYD-12: after a loaded detail, and only while visible.
                    if !self.insights_requested && context.inputs.visible {
                        self.request_insights(context);
                    }
                }
                Err(e) => self.detail_failed(context, e),
            }
        } else if id == self.history.pending() {
            let read = match &a.outcome {
                Done::Http { status: 404, .. } => Ok(History::empty()),
                _ => a.ok_body().and_then(parse_history),
            };
            match read {
                // HYD-11: not applied while the answer streams; read again after it.
                Ok(_) if self.streaming => {
                    self.history = Load::Idle;
                    self.history_requested = false;
                }
                Ok(history) => {
                    self.thread = history.messages.iter().cloned().map(Arc::new).collect();
                    self.thread_revision = self.thread_revision.wrapping_add(1);
                    // adr-notes 6: the history reports the Agent (or none).
                    self.agent_id = history.agent_uid.clone();
                    // RU-20: a history that is not running clears a stale `working` flag of
                    // the loaded record (no writer runs a turn the history does not show).
                    if history.status != crate::api::HistoryStatus::Running
                        && let Load::Loaded(record)
                        | Load::Loading {
                            previous: Some(record),
                            ..
                        } = &mut self.detail
                        && record.working
                    {
                        record.working = false;
                    }
                    self.history = Load::Loaded(history);
                    if let Some(session_uid) = self.session_uid.clone() {
                        context
                            .memory
                            .signals
                            .push_back(Signal::HistoryApplied { session_uid });
                    }
                }
                Err(e) => self.history_failed(context, e),
            }
        } else if id == self.insights.pending() {
            self.insights = match &a.outcome {
                Done::Http { status: 404, .. } => {
                    let session_uid = match &a.call {
                        ApiCall::GetSessionInsights { session_uid } => session_uid.as_str(),
                        _ => "",
                    };
                    Load::Loaded(Insights::none(session_uid))
                }
                _ => match a.ok_body().and_then(parse_insights) {
                    Ok(i) => Load::Loaded(i),
                    Err(e) => Load::Failed(e),
                },
            };
        }
    }
}

super::count_transitions!(Hydration);

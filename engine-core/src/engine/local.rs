//! The engine with a local Agent source (ADR 099; `docs/local-agents.md`): no platform
//! request at all (`Io::send` refuses them, and the platform's level rules do not run), the
//! local runtime's admission, its conversation list, which conversation is shown, and what the
//! snapshot shows of them. History, sending and new conversations come in the next steps of
//! issue 14.

use super::Engine;

/// The context for a local machine, borrowing the engine's inputs and I/O only (so that its
/// machines can be borrowed beside it).
macro_rules! io_ctx {
    ($engine:ident, $now:expr) => {
        Ctx {
            now: $now,
            inputs: &$engine.inputs,
            io: &mut $engine.io,
        }
    };
}
use crate::io::{Answer, Ctx, Owner};
use crate::machines::local_admission::AdmissionEvent;
use crate::machines::local_history::{HistoryEvent, LIVE_ONLY_NOTICE};
use crate::machines::local_selection::LocalSelEvent;
use crate::machines::local_sessions::{SessionsEvent, default_title};
use crate::machines::selection::{self, Origin, SelEvent};
use crate::snapshot::{Capabilities, Readiness, ReadinessStatus, Snapshot};
use crate::time::Time;

impl Engine {
    /// A new source, or none: a change of scope (ENV-2), and the local machines start over.
    pub(super) fn source_changed(&mut self, now: Time) {
        let mut ctx = io_ctx!(self, now);
        self.local_admission
            .handle_with_context(&AdmissionEvent::Reset, &mut ctx);
        self.local_sessions
            .handle_with_context(&SessionsEvent::Reset, &mut ctx);
        self.local_selection
            .handle_with_context(&LocalSelEvent::Reset, &mut ctx);
        self.local_history
            .handle_with_context(&HistoryEvent::Reset, &mut ctx);
        self.scope_changed(now);
        if self.inputs.source.is_some() {
            self.local_selection(now, &LocalSelEvent::Start);
        }
    }

    /// `requestedSessionId` with a local source: that conversation is shown.
    pub(super) fn local_requested(&mut self, id: &str, now: Time) {
        self.local_selection(now, &LocalSelEvent::Requested(id));
    }

    /// The storage port's answer for the shown conversation.
    pub(super) fn local_stored_selection(&mut self, key: &str, uid: Option<&str>, now: Time) {
        let event = LocalSelEvent::Stored {
            key,
            session_uid: uid,
        };
        self.local_selection(now, &event);
    }

    /// Hands an event to the local selection, then shows its conversation.
    fn local_selection(&mut self, now: Time, event: &LocalSelEvent<'_>) {
        let mut ctx = io_ctx!(self, now);
        self.local_selection.handle_with_context(event, &mut ctx);
        self.show_local_selection();
    }

    /// The shared selection shows the local selection's conversation.
    fn show_local_selection(&mut self) {
        let local = self.local_selection.inner();
        let Some(uid) = local.current.clone() else {
            return;
        };
        let origin = local.origin.unwrap_or(Origin::Restored);
        let shown = selection::selected(self.selection.state());
        if shown != Some((uid.as_str(), origin)) {
            self.selection.handle(&SelEvent::Choose {
                session_uid: &uid,
                origin,
            });
        }
    }

    /// The level rules with a local source: the runtime is checked while the chat is visible
    /// (and again every 5 s while it is unavailable); the conversations are read once it is
    /// ready.
    pub(super) fn evaluate_local(&mut self, now: Time) {
        // A change of person or Environment clears the shown selection (ENV-2); the local
        // conversation shown stays the same one.
        self.show_local_selection();
        let mut ctx = io_ctx!(self, now);
        let visible = ctx.inputs.visible;
        self.local_admission
            .handle_with_context(&AdmissionEvent::Evaluate { visible }, &mut ctx);
        let ready = self.local_admission.inner().ready;
        let may_read = visible && ready;
        self.local_sessions
            .handle_with_context(&SessionsEvent::Evaluate { may_read }, &mut ctx);
        let selected = selection::selected(self.selection.state()).map(|s| s.0);
        let fresh = selected.is_some_and(|s| self.local_selection.inner().fresh.contains(s));
        let event = HistoryEvent::Evaluate {
            selected,
            may_read,
            fresh,
        };
        self.local_history.handle_with_context(&event, &mut ctx);
        // The runs' clocks and the queue rules, as on the platform.
        self.evaluate_work(now);
    }

    /// An answer to a local admission check or list read.
    pub(super) fn local_answer(&mut self, answer: &Answer, now: Time) {
        let agent = self.local_agent_name();
        let mut ctx = io_ctx!(self, now);
        match answer.owner {
            Owner::LocalSessions => {
                let event = SessionsEvent::Answer {
                    answer,
                    agent: &agent,
                };
                self.local_sessions.handle_with_context(&event, &mut ctx);
            }
            Owner::LocalHistory => {
                self.local_history
                    .handle_with_context(&HistoryEvent::Answer(answer), &mut ctx);
                // HYD-4 as on the platform: a loaded transcript replaces this page's finished
                // turns of the conversation (they are in it now), and shows again after
                // `clearThread()`. A live-only runtime has none: this page's turns stay.
                let history = self.local_history.inner();
                if history.loaded
                    && !history.live_only
                    && let Some(uid) = history.session_uid.clone()
                {
                    let (mut ctx, p) = self.ctx(now);
                    let work = p.works.entry(&mut ctx, &uid);
                    work.thread_cleared = false;
                    work.run.handle_with_context(
                        &crate::machines::send::RunEvent::HistoryApplied,
                        &mut ctx,
                    );
                }
            }
            _ => self
                .local_admission
                .handle_with_context(&AdmissionEvent::Answer(answer), &mut ctx),
        }
    }

    /// The send guard's word with a local source: a runtime that has not passed its checks
    /// takes no message (its unavailable message, else "The local Agent is not ready yet.").
    pub(super) fn local_refusal(&self) -> Option<crate::failure::RunFailure> {
        let admission = self.local_admission.inner();
        (!admission.ready).then(|| {
            let text = admission
                .message
                .clone()
                .unwrap_or_else(|| crate::api::local::NOT_READY_TEXT.to_owned());
            crate::failure::RunFailure::new(crate::failure::FailureCode::RuntimeUnavailable, text)
        })
    }

    /// A turn of a local conversation ended: the list is read again, and after a failure the
    /// runtime is checked again (the reference's `onError`).
    pub(super) fn local_turn_ended(&mut self, failed: bool, now: Time) {
        let mut ctx = io_ctx!(self, now);
        self.local_sessions
            .handle_with_context(&SessionsEvent::Reread, &mut ctx);
        if failed {
            self.local_admission
                .handle_with_context(&AdmissionEvent::Recheck, &mut ctx);
        }
    }

    /// `createAgentSession()` with a local source: a new conversation under a client id (a
    /// UUID from the engine's seeded generator, so runs reproduce), shown at once, with no
    /// transcript to read; its first message goes out under that id (issue 14).
    pub(super) fn new_local_conversation(&mut self, now: Time) {
        let id = self.io.rng.uuid_v4();
        self.local_selection(now, &LocalSelEvent::Created(&id));
    }

    /// A first turn of a conversation started here: the runtime must name it.
    pub(super) fn is_new_local_conversation(&self, uid: &str) -> bool {
        self.inputs.source.is_some() && self.local_selection.inner().fresh.contains(uid)
    }

    /// ADR 099, adr-notes 2: the runtime named the conversation `from` ran in `to`; the new
    /// id replaces the client's everywhere: the selection and its stored copy, the thread, the
    /// run, the queue and its storage key.
    pub(super) fn local_rekey(&mut self, from: &str, to: &str, now: Time) {
        let (mut ctx, p) = self.ctx(now);
        if p.works.rekey(&mut ctx, from, to) {
            let key = crate::queue::storage_key(from);
            let request = crate::intent::StorageRequest::RemoveQueue { key };
            ctx.io
                .outbox
                .push_back(crate::intent::Intent::Storage(request));
        }
        let mut ctx = io_ctx!(self, now);
        self.local_history
            .handle_with_context(&HistoryEvent::Rekey { from, to }, &mut ctx);
        self.local_selection(now, &LocalSelEvent::Rekey { from, to });
    }

    /// `refreshActiveSessionRuntimeAccess()` with a local source: check the runtime now.
    pub(super) fn recheck_local(&mut self, now: Time) {
        let mut ctx = io_ctx!(self, now);
        self.local_admission
            .handle_with_context(&AdmissionEvent::Recheck, &mut ctx);
    }

    /// `refreshSessionDetail()` with a local source: the conversations are read again.
    pub(super) fn refresh_local(&mut self, now: Time) {
        let mut ctx = io_ctx!(self, now);
        self.local_sessions
            .handle_with_context(&SessionsEvent::Reread, &mut ctx);
    }

    /// The Agent's name: the source's, until the runtime names it.
    pub(crate) fn local_agent_name(&self) -> String {
        let named = self.local_admission.inner().agent_name.clone();
        named.unwrap_or_else(|| {
            self.inputs
                .source
                .as_ref()
                .map(|s| s.display_name().to_owned())
                .unwrap_or_default()
        })
    }

    /// What the snapshot shows with a local source: the runtime's decision, never a presence
    /// or a wake; the conversations (the one shown among them even when the runtime does not
    /// list it); the local capabilities; the composer admits once the runtime passed its
    /// checks and the conversation is ready.
    pub(crate) fn local_view(&self, mut snapshot: Snapshot) -> Snapshot {
        let admission = self.local_admission.inner();
        let sessions = self.local_sessions.inner();
        let agent = self.local_agent_name();
        snapshot.active_runtime_interaction = Some(admission.interaction(&agent));
        snapshot.active_runtime_presence = None;
        snapshot.is_assistant_runtime_starting = false;
        snapshot.is_runtime_wake_overdue = false;
        let readiness = self.local_readiness();
        snapshot.composer_admission = admission.ready && readiness.status == ReadinessStatus::Ready;
        snapshot.capabilities = Capabilities::local(!sessions.live_only);
        let mut listed = sessions.sessions.clone();
        // The Agent's name as it stands now (the runtime may name it after the list came).
        for row in &mut listed {
            row.agent_name = Some(agent.clone());
        }
        if let Some(uid) = snapshot.current_session_id.as_deref()
            && !listed.iter().any(|s| s.uid == uid)
        {
            listed.push(crate::input::SessionSummary {
                uid: uid.to_owned(),
                agent_uid: None,
                agent_name: Some(agent.clone()),
                title: default_title(uid).to_owned(),
                status: None,
                started_at: None,
                ended_at: None,
                handle_unique_id: None,
                llm_provider: None,
                llm_model: None,
            });
        }
        snapshot.agent_sessions = listed;
        snapshot.is_loading_latest_sessions =
            crate::machines::local_sessions::is_reading(self.local_sessions.state());
        snapshot.latest_sessions_error = sessions.error.clone();
        snapshot.active_session_readiness = readiness;
        let history = self.local_history.inner();
        if snapshot.session_notice.is_none() && history.live_only {
            snapshot.session_notice = Some(LIVE_ONLY_NOTICE.to_owned());
        }
        snapshot
    }

    /// `activeSessionReadiness` with a local source: loading while the runtime is first
    /// checked; ready while it is unavailable (the decision locks the composer, not readiness);
    /// then the transcript's read decides (an error, or ready once it loaded or the runtime
    /// cannot reload it).
    pub(crate) fn local_readiness(&self) -> Readiness {
        let selected = selection::selected(self.selection.state()).map(|s| s.0.to_owned());
        let admission = self.local_admission.inner();
        let history = self.local_history.inner();
        let (status, error) = if !self.inputs.visible || selected.is_none() {
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

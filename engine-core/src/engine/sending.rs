//! The engine's side of sending: the composer's submit, the queue, the run cancel, the body of
//! a turn, and the queue rules evaluated after every input (SND, OI-20, ADR 087).

use crate::time::Time;

use super::{Engine, WRITER_POLL};
use crate::concerns::cancel::CancelEvent;
use crate::concerns::hydration::HydEvent;
use crate::concerns::selection;
use crate::concerns::send::{QueuedTurn, RunEvent, Turn};
use crate::event::{Event, Notice, NoticeVariant};
use crate::failure::{FailureCode, FailureSource, RunFailure};
use crate::inputs::non_blank;
use crate::intent::Intent;
use crate::queue::{HoldReason, QueuedMessage, Refusal};

/// A message queued for a session whose stored queue belongs to another person or Environment
/// (`queue_storage`): handed back.
pub(crate) const QUEUE_ELSEWHERE_TEXT: &str =
    "This session's queue is kept for another Environment or person. The message was not queued.";

impl Engine {
    pub(super) fn selected_uid(&self) -> Option<String> {
        selection::selected(self.selection.state()).map(|(uid, _)| uid.to_owned())
    }

    pub(super) fn selected_work(&mut self) -> Option<&mut crate::work::Work> {
        let uid = self.selected_uid()?;
        self.works.get_mut(&uid)
    }

    /// SND-18, OI-20: the Agent works on the session: a local run, or another writer that its
    /// loaded record reports.
    pub(super) fn agent_working(&self, session_uid: &str) -> bool {
        self.works.is_running(session_uid) || self.writer_working(session_uid)
    }

    /// The loaded record of this (selected) session reports `working`.
    /// A `working` flag read while this engine's own turn ran, or before a detail read that
    /// followed it, is that turn's, not another writer's (SND-25).
    pub(super) fn writer_working(&self, session_uid: &str) -> bool {
        let h = self.backend.platform.hydration.inner();
        let own = self.works.get(session_uid).is_some_and(|w| w.own_working);
        !own && h.session_uid.as_deref() == Some(session_uid)
            && h.detail.value().is_some_and(|r| r.working)
    }

    /// The composer's submit.
    pub(super) fn send_message(&mut self, text: &str, now: Time) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let Some(uid) = self.selected_uid() else {
            self.io.events.push_back(Event::MessageNotSent {
                session_uid: None,
                text: text.to_owned(),
                reason: super::NO_SESSION_TEXT.to_owned(),
                code: FailureCode::NoSessionSelected,
            });
            return;
        };
        if self.agent_working(&uid) {
            self.enqueue(&uid, text, now);
        } else {
            self.start_turn(&uid, text, None, now);
        }
    }

    /// SND-24: add to the session's queue; a held queue holds the new row too.
    pub(super) fn enqueue(&mut self, session_uid: &str, text: &str, now: Time) {
        let row = QueuedMessage {
            id: format!("queued-{}", self.io.rng.uuid_v4()),
            text: text.trim().to_owned(),
            created_at: crate::timestamp::iso_from_unix_ms(self.io.wall_ms(now)),
        };
        let text = row.text.clone();
        // The session's stored queue belongs to another person or Environment (a session
        // shown under the wrong one): a row queued here could be neither stored nor sent.
        if !text.is_empty() && !self.works.can_store_queue(session_uid) {
            self.io.events.push_back(Event::MessageNotSent {
                session_uid: Some(session_uid.to_owned()),
                text,
                reason: QUEUE_ELSEWHERE_TEXT.to_owned(),
                code: FailureCode::SessionInAnotherEnvironment,
            });
            return;
        }
        let (mut ctx, p) = self.ctx(now);
        let work = p.works.entry(&mut ctx, session_uid);
        if work.queue.push(row) == Err(Refusal::Full) {
            ctx.emit(Event::Notify(Notice {
                title: "The queue is full".to_owned(),
                description: Some("Send or remove a message first.".to_owned()),
                variant: NoticeVariant::Info,
            }));
            // Nothing written is lost: the text comes back to the host.
            ctx.emit(Event::MessageNotSent {
                session_uid: Some(session_uid.to_owned()),
                text,
                reason: "The queue is full. Send or remove a message first.".to_owned(),
                code: FailureCode::QueueFull,
            });
        }
    }

    /// A turn for the selected session, through the send guard (SND-2).
    pub(super) fn start_turn(
        &mut self,
        session_uid: &str,
        text: &str,
        queued: Option<QueuedTurn>,
        now: Time,
    ) {
        let readiness = self.current_readiness();
        let guard = if readiness.status != crate::snapshot::ReadinessStatus::Ready {
            let text = readiness.error.unwrap_or_else(|| {
                "The session is still loading. Wait for it to finish before sending.".to_owned()
            });
            Some(RunFailure::from_source(
                FailureCode::SessionNotReady,
                FailureSource::GUARD,
                &text,
            ))
        } else {
            self.backend.refusal(&self.inputs, session_uid)
        };
        let turn = Turn {
            text: text.to_owned(),
            user_message_id: format!("user-{}", self.io.rng.uuid_v4()),
            answer_id: format!("answer-{}", self.io.rng.uuid_v4()),
            queued,
            auth_retried: false,
            hold_deadline_ms: None,
            new_chat: self.backend.is_new_conversation(session_uid),
        };
        // ADR 099: a local conversation's row shows the message (no-op on the platform).
        if guard.is_none() {
            let (backend, mut lent) = self.lend(now);
            backend.page(session_uid, Some(text), &mut lent.ctx);
        }
        let facts = self.body_facts();
        let agent_name = self.agent_name_of(session_uid);
        let (mut ctx, p) = self.ctx(now);
        let work = p.works.entry(&mut ctx, session_uid);
        if guard.is_none() {
            work.restorable = false;
            work.own_working = true;
            // adr-notes 8 (the reference's request start): a turn on its way clears the notice.
            p.selection
                .handle(&crate::concerns::selection::SelEvent::Notice(None));
        }
        let event = RunEvent::Facts {
            facts: &facts,
            agent_name: agent_name.as_deref(),
        };
        work.run.handle_with_context(&event, &mut ctx.work());
        match &guard {
            Some(failure) => work.run.handle_with_context(
                &RunEvent::Refuse {
                    turn: &turn,
                    failure,
                },
                &mut ctx.work(),
            ),
            None => work
                .run
                .handle_with_context(&RunEvent::Start(&turn), &mut ctx.work()),
        }
    }

    /// What the selected session's next turn body is made of (OI-18).
    pub(super) fn body_facts(&self) -> crate::api::chat::BodyFacts {
        let h = self.backend.platform.hydration.inner();
        let cleared = h
            .session_uid
            .as_deref()
            .and_then(|uid| self.works.get(uid))
            .is_some_and(|w| w.thread_cleared);
        crate::api::chat::BodyFacts {
            record: h.detail.value().map(|r| r.raw.value().into_owned()),
            thread_id: h
                .history
                .value()
                .filter(|_| !cleared)
                .and_then(|hist| hist.thread_id.clone()),
            user_uid: non_blank(self.inputs.person.user_uid.as_deref()),
            context: self.inputs.view_context.clone(),
            // ADR 099: a local runtime gets its level with the session's model (`PUT
            // /api/chat/session-model`); the turn's `runConfig` stays the chat runtime's own.
            reasoning_effort: self.backend.turn_effort(&self.inputs),
        }
    }

    /// The Agent name of a session, for notices (OI-6).
    pub(crate) fn agent_name_of(&self, session_uid: &str) -> Option<String> {
        self.backend.agent_name_of(&self.inputs, session_uid)
    }

    /// `cancelActiveSession()` (SND-16, SND-17, OI-19 as RU-22 narrows it).
    pub(super) fn cancel_active(&mut self, now: Time) {
        let uid = self.selected_uid();
        // RU-22: with a platform session selected the cancel always goes; RU-24: with none
        // (or a local conversation that does not work) there is nothing to stop.
        let always = crate::backend::reach(&self.inputs).cancels_without_work();
        let goes = |u: &str| always || self.agent_working(u) || self.backend.listed_working(u);
        let Some(uid) = uid.filter(|u| goes(u)) else {
            self.io.events.push_back(Event::Notify(Notice {
                title: "Unable to stop session".to_owned(),
                description: Some("There is no running work to stop.".to_owned()),
                variant: NoticeVariant::Error,
            }));
            return;
        };
        // The cancel names the thread of the run it stops (OI-19).
        let facts = self
            .works
            .get(&uid)
            .map(|w| w.run.inner().facts().clone())
            .filter(|f| f.record.is_some())
            .unwrap_or_else(|| self.body_facts());
        let running = self.works.is_running(&uid);
        let (mut ctx, p) = self.ctx(now);
        let decision = p.runtime.inner().decision(&uid);
        let cached = decision.and_then(|d| d.endpoint.clone());
        let work = p.works.entry(&mut ctx, &uid);
        // RU-22, SND-16 first: the stop reads idle, "Run cancelled.", the local run stops in this
        // step and the session is no longer working (a `working` flag its record still shows is
        // the stopped work's until the next detail read); a waiting queue is held `stopped` (a
        // run that ends here holds it itself); then the cancel request (SND-17).
        work.run
            .handle_with_context(&RunEvent::Stopping, &mut ctx.work());
        work.run
            .handle_with_context(&RunEvent::Stop { decision }, &mut ctx.work());
        if !running && !work.queue.rows.is_empty() {
            work.queue.hold(crate::queue::HoldReason::Stopped, None);
        }
        work.own_working = true;
        let start = CancelEvent::Start {
            cached: cached.as_ref(),
            facts: &facts,
        };
        work.cancel.handle_with_context(&start, &mut ctx.work());
    }

    /// `clearThread()` (adr-notes 6): the local run stops as a stop does, without a cancel
    /// request; the thread starts afresh.
    pub(super) fn clear_thread(&mut self, now: Time) {
        let Some(uid) = self.selected_uid() else {
            return;
        };
        let running = self.works.is_running(&uid);
        let (mut ctx, p) = self.ctx(now);
        let decision = p.runtime.inner().decision(&uid);
        let work = p.works.entry(&mut ctx, &uid);
        work.run
            .handle_with_context(&RunEvent::Stop { decision }, &mut ctx.work());
        work.run
            .handle_with_context(&RunEvent::Clear, &mut ctx.work());
        work.thread_cleared = true;
        // Only a run of ours stopped here: another writer's work goes on (SND-25).
        work.own_working |= running;
        p.selection
            .handle(&crate::concerns::selection::SelEvent::Notice(None));
        p.hydration
            .handle_with_context(&HydEvent::AgentIdForgotten, &mut ctx);
    }

    /// ADR 087: each queue change is written to the storage port; an emptied queue's copy is
    /// removed.
    pub(super) fn persist_queues(&mut self) {
        for crate::work::QueueWrite {
            uid,
            rows,
            read_first,
        } in self.works.queue_writes()
        {
            let key = crate::queue::storage_key(&uid);
            if read_first {
                // The storage port carries out its requests in order: the read sees what was
                // there before this write.
                let load = crate::intent::StorageRequest::LoadQueue { key: key.clone() };
                self.io.outbox.push_back(Intent::Storage(load));
            }
            let request = if rows.is_empty() {
                crate::intent::StorageRequest::RemoveQueue { key }
            } else {
                crate::intent::StorageRequest::SaveQueue { key, rows }
            };
            self.io.outbox.push_back(Intent::Storage(request));
        }
    }

    /// The runs' and cancels' clocks, and the queue rules (OI-20, SND-25).
    pub(super) fn evaluate_work(&mut self, now: Time) {
        let selected = self.selected_uid();
        // ADR 087: a session's stored queue is read once, when it first comes on screen.
        if let Some(uid) = selected.as_ref().filter(|_| self.inputs.visible)
            && self.works.ask_stored_queue(uid)
        {
            let key = crate::queue::storage_key(uid);
            let request = crate::intent::StorageRequest::LoadQueue { key };
            self.io.outbox.push_back(Intent::Storage(request));
        }
        // A turn's body facts are handed over when it starts (`start_turn`), not on every input.
        let visible = self.inputs.visible;
        let writer = selected
            .as_deref()
            .is_some_and(|uid| self.writer_working(uid));
        let (mut ctx, p) = self.ctx(now);
        for (uid, work) in p.works.iter_mut() {
            let decision = p.runtime.inner().decision(uid);
            work.run
                .handle_with_context(&RunEvent::Tick { decision }, &mut ctx.work());
            work.cancel
                .handle_with_context(&CancelEvent::Tick, &mut ctx.work());
            // OI-20: a drain armed for a session no longer on screen is held.
            if work.queue.armed && selected.as_deref() != Some(uid.as_str()) {
                work.queue.hold(HoldReason::Away, None);
            }
        }
        // OI-20: moving to another session while messages wait holds them.
        if self.works.last_selected != selected {
            if let Some(previous) = self.works.last_selected.take()
                && let Some(work) = self.works.get_mut(&previous)
                && work.queue.hold.is_none()
            {
                work.queue.hold(HoldReason::Away, None);
            }
            // adr-notes 8: the history of a session selected anew says how its last run went,
            // unless a turn of ours still runs (its own end says that).
            if let Some(uid) = selected.as_deref() {
                let running = self.works.is_running(uid);
                if let Some(work) = self.works.get_mut(uid) {
                    work.restorable = !running;
                }
            }
            self.works.last_selected = selected.clone();
        }
        let Some(uid) = selected else {
            self.works.writer_watch = None;
            return;
        };
        let running = self.works.is_running(&uid);
        let waiting = self
            .works
            .get(&uid)
            .is_some_and(|w| !w.queue.rows.is_empty() && w.queue.hold.is_none());
        // SND-25: another writer works while messages wait: read the detail every 10 s; once a
        // loaded record reports idle, the queue drains as after a clean finish. A read that
        // failed (or is under way) says nothing: the watch goes on.
        let h = self.backend.platform.hydration.inner();
        let record_idle = h.session_uid.as_deref() == Some(uid.as_str())
            && h.detail.value().is_some_and(|r| !r.working);
        let watching = matches!(&self.works.writer_watch, Some((u, _)) if *u == uid);
        if waiting && !running && visible && (writer || (watching && !record_idle)) {
            match &self.works.writer_watch {
                Some((u, at)) if *u == uid => {
                    if now >= *at {
                        self.works.writer_watch = Some((uid.clone(), now + WRITER_POLL));
                        let (mut ctx, p) = self.ctx(now);
                        p.hydration
                            .handle_with_context(&HydEvent::RefreshDetail, &mut ctx);
                    }
                }
                _ => self.works.writer_watch = Some((uid.clone(), now + WRITER_POLL)),
            }
        } else if let Some((u, _)) = self.works.writer_watch.take()
            && u == uid
            && waiting
            && !running
            && !writer
            && let Some(work) = self.works.get_mut(&uid)
        {
            work.queue.armed = true;
        }
        // SND-19, SND-20, SND-22: the first row leaves once the thread is idle and the session is
        // no longer loading (a history read after a stream keeps it loading a moment); a session
        // in error refuses the row, which then holds the queue (`unavailable`).
        let loading = self.current_readiness().status == crate::snapshot::ReadinessStatus::Loading;
        if !visible || running || writer || loading {
            return;
        }
        let next = self.works.get_mut(&uid).and_then(|w| {
            if w.queue.armed && w.queue.hold.is_none() {
                w.queue.armed = false;
                w.queue.take_first()
            } else {
                None
            }
        });
        if let Some((row, n, total)) = next {
            let text = row.text.clone();
            let queued = QueuedTurn { row, n, total };
            self.start_turn(&uid, &text, Some(queued), now);
        }
    }
}

//! Each session's working state: its run (turns, the answer stream), its run cancel and its
//! queue. Runs are kept per session, so a run goes on while another session is on screen.

use crate::deadline::{Deadline, TimeoutReason};
use crate::time::Time;
use litemap::LiteMap;

use statig::blocking::InitializedStateMachine;
use statig::prelude::*;

use crate::concerns::cancel::{self, Cancel, CancelEvent};
use crate::concerns::ctx::Ctx;
use crate::concerns::send::{self, Run, RunEnd, RunEvent, Turn, TurnEnded};
use crate::event::Event;
use crate::failure::FailureCode;
use crate::inputs::ScopeKey;
use crate::queue::HoldReason;
use crate::queue::Queue;
use crate::revision::Tracked;

/// One session's working state.
pub(crate) struct Work {
    pub run: InitializedStateMachine<Run>,
    pub cancel: InitializedStateMachine<Cancel>,
    /// The queue; every mutable borrow counts as a change (the settle loop's fixed point).
    pub queue: Tracked<Queue>,
    /// The record's `working` flag is this engine's own turn until a detail read after it
    /// (SND-25: only another writer's work delays the queue).
    pub own_working: bool,
    /// `clearThread()`: the history's messages and thread id are set aside until a history is
    /// applied again.
    pub thread_cleared: bool,
    /// A history that loads may say how the last run went (adr-notes 8): no turn of ours ran
    /// since the session was last selected.
    pub restorable: bool,
}

impl std::fmt::Debug for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Work")
            .field("run", self.run.state())
            .field("cancel", self.cancel.state())
            .field("queued", &self.queue.rows.len())
            .finish()
    }
}

impl Work {
    /// OI-20, SND-22, ADR 087: the queue follows how a turn ended. A failed turn is reported with
    /// its code ([`Event::RunFailed`]); a message that did not go out is put back at the front of
    /// the queue (a row that could not start, a row stopped or blocked before it left) or handed
    /// back ([`Event::MessageNotSent`]: a typed message, or a row spent by a failure inside its
    /// run). `on_screen`: the session is the one shown.
    pub(crate) fn turn_ended(&mut self, ended: TurnEnded, on_screen: bool) -> Vec<Event> {
        let TurnEnded {
            session_uid,
            end,
            sent,
            turn,
        } = ended;
        let session_uid = session_uid.as_str();
        let Turn {
            text: written,
            queued,
            auth_retried,
            ..
        } = turn;
        let queued_row = queued.is_some();
        if queued_row {
            self.queue.sending = false;
        }
        let mut events = Vec::new();
        if let RunEnd::Failed(failure) | RunEnd::Blocked { failure, .. } = &end {
            events.push(Event::RunFailed {
                session_uid: session_uid.to_owned(),
                failure: failure.clone(),
                sent,
            });
        }
        let refused_at_start =
            matches!(&end, RunEnd::Failed(f) if f.code == FailureCode::RequestRefused);
        if !sent {
            let waits =
                refused_at_start || matches!(end, RunEnd::Stopped(_) | RunEnd::Blocked { .. });
            match queued {
                // Nothing queued is lost: a row that could not start, or that a stop or a blocked
                // decision kept from leaving, goes back to the front, unless its one repeat after a
                // 401 or 403 is spent (SND-23): then it is handed back like a typed message, never
                // requested a third time.
                Some(q) if waits && !auth_retried => self.queue.put_back(q.row),
                _ => {
                    let failure = end.failure();
                    events.push(Event::MessageNotSent {
                        session_uid: Some(session_uid.to_owned()),
                        text: written,
                        reason: failure.map(|f| f.message.clone()).unwrap_or_default(),
                        code: failure.map_or(FailureCode::RunCancelled, |f| f.code),
                    });
                }
            }
        }
        let q = &mut self.queue;
        match end {
            RunEnd::Clean => {
                if q.rows.is_empty() {
                    q.settle_empty();
                } else if q.hold.is_none() {
                    q.armed = true;
                }
            }
            // ADR 087: the send of a row threw before its run started.
            RunEnd::Failed(f) if queued_row && !sent && refused_at_start => {
                q.hold(HoldReason::Unavailable, Some(f.message));
            }
            // A guard, a request or an answer failed inside the run: the row is spent, and the
            // rest wait `failed` (the reference gives this hold no message).
            RunEnd::Failed(_) => q.hold(HoldReason::Failed, None),
            RunEnd::Stopped(_) if on_screen => q.hold(HoldReason::Stopped, None),
            RunEnd::Stopped(_) => q.hold(HoldReason::Away, None),
            RunEnd::Blocked { notice, .. } => q.hold(HoldReason::Blocked, notice),
        }
        events
    }
}

/// Every session's working state, by session uid, for the current person and Environment.
/// Another pair's work is parked (stopped, nothing lost) and comes back with the pair.
#[derive(Debug, Default)]
pub(crate) struct Works {
    /// A sorted vector (a `BTreeMap` node holds room for 11 entries: issue 12), boxed: a
    /// `Work` is over 1 KiB inline, and the vector's spare capacity holds pointers.
    by_session: LiteMap<String, Box<Work>>,
    scope: Option<ScopeKey>,
    parked: LiteMap<ScopeKey, LiteMap<String, Box<Work>>>,
    /// SND-25: the next read of the detail while another writer works, and that such a watch
    /// runs for this session.
    pub writer_watch: Option<(String, Time)>,
    /// What storage holds of each session's queue, and which scope owns it (ADR 087).
    pub stored: crate::queue_storage::QueueStorage,
    /// The session selected at the last settle: leaving it holds its waiting queue (OI-20).
    pub last_selected: Option<String>,
    /// Works added, or the pair's set swapped in.
    revision: u64,
}

impl Works {
    /// ENV-2, INV-10: a new person or Environment sees only its own sessions' work (queues and
    /// local turns of a session uid never leak to another person).
    pub(crate) fn switch_scope(&mut self, scope: ScopeKey) {
        if self.scope.as_ref() == Some(&scope) {
            return;
        }
        let current = std::mem::take(&mut self.by_session);
        if let Some(old) = self.scope.take()
            && !current.is_empty()
        {
            self.parked.insert(old, current);
        }
        self.by_session = self.parked.remove(&scope).unwrap_or_default();
        self.scope = Some(scope);
        self.revision = self.revision.wrapping_add(1);
        self.writer_watch = None;
    }

    /// ADR 087: whether to ask storage for the session's queue now (once, by its owner).
    pub(crate) fn ask_stored_queue(&mut self, uid: &str) -> bool {
        self.stored.ask(self.scope.as_ref(), uid)
    }

    /// ADR 087: rows queued for the session here can be stored (`queue_storage`).
    pub(crate) fn can_store_queue(&self, uid: &str) -> bool {
        self.stored.can_store(self.scope.as_ref(), uid)
    }

    /// ADR 087: a stored queue came back; whether it is this scope's to restore.
    pub(crate) fn stored_queue_answered(&mut self, uid: &str) -> bool {
        self.stored.answered(self.scope.as_ref(), uid)
    }

    /// ADR 087: the rows to write to storage, per session of this scope whose queue changed
    /// since storage last held it (empty rows: remove the copy). Only the scope that owns a
    /// session's stored copy writes it (`queue_storage`).
    /// A write that comes before any read of that copy is told to read it first
    /// ([`QueueStorage::read_before_write`]).
    pub(crate) fn queue_writes(&mut self) -> Vec<QueueWrite> {
        let mut writes = Vec::new();
        for (uid, work) in self.by_session.iter() {
            let rows = &work.queue.rows;
            if self
                .stored
                .needs_write(self.scope.as_ref(), uid, rows.iter())
            {
                let read_first = self.stored.read_before_write(uid);
                let rows: Vec<_> = rows.iter().cloned().collect();
                self.stored.written(uid, rows.clone());
                writes.push(QueueWrite {
                    uid: uid.clone(),
                    rows,
                    read_first,
                });
            }
        }
        writes
    }

    /// ADR 099: a local runtime named the conversation `from` ran in `to`: its work (run,
    /// cancel, queue) moves there. A work already under `to` is replaced (its finished turns
    /// are in the runtime's transcript), its queued rows merged first with its hold kept; one
    /// whose turn still runs, or whose rows with ours would pass the queue's limit, cannot
    /// take ours, and then nothing moves: the conversation keeps the client's id
    /// ([`Rekeyed::Kept`]).
    pub(crate) fn rekey(&mut self, ctx: &mut Ctx<'_>, from: &str, to: &str) -> Rekeyed {
        if from == to {
            return Rekeyed::Moved { forget_old: false };
        }
        let waiting = |w: &Work| w.queue.rows.len() + usize::from(w.queue.sending);
        let merge = match (self.get(from), self.get(to)) {
            (None, _) => return Rekeyed::Moved { forget_old: false },
            (Some(_), None) => false,
            (Some(mine), Some(theirs)) => {
                // Its finished turns are in the runtime's transcript of that conversation:
                // only a turn still running there cannot be joined.
                let running = send::is_active(theirs.run.state());
                if running || waiting(mine) + waiting(theirs) > crate::queue::QUEUE_LIMIT {
                    return Rekeyed::Kept;
                }
                !theirs.queue.rows.is_empty()
            }
        };
        let Some(mut work) = self.by_session.remove(from) else {
            return Rekeyed::Moved { forget_old: false };
        };
        if merge && let Some(mut theirs) = self.by_session.remove(to) {
            let hold = theirs.queue.hold.take();
            let older = std::mem::take(&mut theirs.queue.rows);
            let queue = &mut work.queue;
            for row in older.into_iter().rev() {
                queue.rows.push_front(row);
            }
            if hold.is_some() {
                queue.hold = hold;
            }
        }
        work.run
            .handle_with_context(&RunEvent::Rekey(to), &mut ctx.work());
        work.cancel
            .handle_with_context(&CancelEvent::Rekey(to), &mut ctx.work());
        self.by_session.insert(to.to_owned(), work);
        self.revision = self.revision.wrapping_add(1);
        Rekeyed::Moved {
            forget_old: self.stored.forget(self.scope.as_ref(), from),
        }
    }

    /// The session's work, created on first use.
    pub(crate) fn entry(&mut self, ctx: &mut Ctx<'_>, session_uid: &str) -> &mut Work {
        let revision = &mut self.revision;
        self.by_session
            .entry(session_uid.to_owned())
            .or_insert_with(|| {
                *revision = revision.wrapping_add(1);
                Box::new(Work {
                    run: Run::for_session(session_uid)
                        .uninitialized_state_machine()
                        .init_with_context(&mut ctx.work()),
                    cancel: Cancel::for_session(session_uid)
                        .uninitialized_state_machine()
                        .init_with_context(&mut ctx.work()),
                    queue: Tracked::new(Queue::default()),
                    own_working: false,
                    thread_cleared: false,
                    restorable: true,
                })
            })
    }

    pub(crate) fn get(&self, session_uid: &str) -> Option<&Work> {
        self.by_session.get(session_uid).map(|w| &**w)
    }

    pub(crate) fn get_mut(&mut self, session_uid: &str) -> Option<&mut Work> {
        self.by_session.get_mut(session_uid).map(|w| &mut **w)
    }

    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (&String, &mut Work)> {
        self.by_session.iter_mut().map(|(k, w)| (k, &mut **w))
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&String, &Work)> {
        self.by_session.iter().map(|(k, w)| (k, &**w))
    }

    /// Hands an event to every run; each one takes only what belongs to it.
    pub(crate) fn each_run(&mut self, ctx: &mut Ctx<'_>, event: &RunEvent<'_>) {
        for (_, work) in self.by_session.iter_mut() {
            work.run.handle_with_context(event, &mut ctx.work());
        }
    }

    /// Hands an event to every cancel.
    pub(crate) fn each_cancel(&mut self, ctx: &mut Ctx<'_>, event: &CancelEvent<'_>) {
        for (_, work) in self.by_session.iter_mut() {
            work.cancel.handle_with_context(event, &mut ctx.work());
        }
    }

    /// A turn runs for this session (from its send to its end, a hold included).
    pub(crate) fn is_running(&self, session_uid: &str) -> bool {
        self.get(session_uid)
            .is_some_and(|w| send::is_active(w.run.state()))
    }

    /// The session's send is held through a wake.
    pub(crate) fn is_held(&self, session_uid: &str) -> bool {
        self.get(session_uid)
            .is_some_and(|w| send::is_held(w.run.state()))
    }

    /// The session's answer streams.
    pub(crate) fn is_streaming(&self, session_uid: &str) -> bool {
        self.get(session_uid)
            .is_some_and(|w| send::is_streaming(w.run.state()))
    }

    /// The session has had a turn (RTA-25, OI-17).
    pub(crate) fn has_sent(&self, session_uid: &str) -> bool {
        self.get(session_uid)
            .is_some_and(|w| w.run.inner().has_sent)
    }

    /// The earliest deadline of any run, cancel or writer watch.
    pub(crate) fn deadline(&self) -> Option<Deadline> {
        let runs = self.by_session.values().flat_map(|w| {
            let cancel = cancel::is_cancelling(w.cancel.state())
                .then(|| w.cancel.inner().deadline())
                .flatten();
            [send::deadline(w.run.state()), cancel]
        });
        let writer = self
            .writer_watch
            .as_ref()
            .map(|(_, at)| Some(Deadline::new(*at, TimeoutReason::WriterPoll)));
        runs.chain(writer).flatten().min()
    }

    /// Counts the changes the settle loop cannot see as transitions: works added or swapped,
    /// and every queue's mutable borrows (the runs' and cancels' transitions count in `Io`).
    /// (A scope switch or a new work moves the first number, so a smaller set of queues never
    /// passes for an unchanged one.)
    pub(crate) fn revision(&self) -> (u64, u64) {
        let queues = self
            .by_session
            .values()
            .fold(0u64, |sum, w| sum.wrapping_add(w.queue.revision()));
        (self.revision, queues)
    }
}

/// What a re-key did ([`Works::rekey`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rekeyed {
    /// The work is under the new id now; `forget_old`: the stored queue of the old id must be
    /// removed (it is written under the new one next).
    Moved { forget_old: bool },
    /// The new id's work has a turn of its own: nothing moved.
    Kept,
}

/// One queue to write to storage ([`Works::queue_writes`]).
#[derive(Debug)]
pub(crate) struct QueueWrite {
    pub uid: String,
    /// The rows; empty: remove the copy.
    pub rows: Vec<crate::queue::QueuedMessage>,
    /// Storage was never read for this uid here: read it before writing.
    pub read_first: bool,
}

//! The engine's side of change tracking (issue 12, point 1): the [`Revisions`] it moves after
//! every input, and the parts a host reads when one moved, without the whole snapshot.

use crate::concerns::selection;
use crate::revision::{Revisions, ThreadView};

use super::Engine;

/// What the revisions were last moved from.
#[derive(Debug, Default)]
pub(super) struct Seen {
    /// The session shown.
    shown: Option<String>,
    /// The settle loop's change count and the engine's own changes outside machine states.
    changes: (super::ChangeCount, u64),
    /// The shown run's status revision.
    run: Option<u64>,
    /// The shown thread's parts: the history's revision, the works' set, the local messages'
    /// revision, `clearThread()`, an answer streaming.
    thread: (u64, u64, Option<(u64, bool, bool)>),
    /// The shown answer's revision.
    streaming: Option<u64>,
}

/// How an input may have changed the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Touch {
    /// A piece of a streamed body: only what moved counts.
    Piece,
    /// Anything else (host inputs, heads, ends, failures, answers, timeouts): every part but
    /// the thread may have changed.
    Any,
}

impl Engine {
    /// Revision counters per part of the snapshot: compare them with the last ones seen to
    /// learn what changed since (see [`Revisions`]). Cheap: a copy of four numbers.
    pub fn revisions(&self) -> Revisions {
        self.revisions
    }

    /// The thread the snapshot shows, borrowed: no message is copied.
    pub fn thread(&self) -> ThreadView<'_> {
        let uid = selection::selected(self.selection.state()).map(|s| s.0);
        let work = uid.and_then(|u| self.works.get(u));
        let cleared = work.is_some_and(|w| w.thread_cleared);
        let run = work.map(|w| w.run.inner());
        ThreadView {
            history: if cleared {
                &[]
            } else {
                self.backend.history(&self.inputs).0
            },
            local: run.map_or(&[], |r| r.local.as_slice()),
            streaming: run.and_then(|r| r.answer.as_ref()).map(|a| a.message()),
            settled: run.and_then(|r| r.settled.as_ref()),
        }
    }

    /// Moves the revisions after an input.
    pub(super) fn note_changes(&mut self, touch: Touch) {
        let shown = selection::selected(self.selection.state()).map(|s| s.0);
        let moved_shown = self.seen.shown.as_deref() != shown;
        if moved_shown {
            self.seen.shown = shown.map(str::to_owned);
        }
        let work = shown.and_then(|u| self.works.get(u));
        let run = work.map(|w| w.run.inner());
        let history_revision = self.backend.history(&self.inputs).1;
        let thread = (
            history_revision,
            self.works.revision().0,
            work.map(|w| {
                (
                    w.run.inner().local.revision(),
                    w.thread_cleared,
                    run.is_some_and(|r| r.answer.is_some()),
                )
            }),
        );
        let streaming = run.map(|r| r.answer_revision);
        let run_revision = run.map(|r| r.status_revision);
        let changes = (self.change_count(), self.own_changes);
        let r = &mut self.revisions;
        if moved_shown || thread != self.seen.thread {
            self.seen.thread = thread;
            r.thread = r.thread.wrapping_add(1);
        }
        if moved_shown || streaming != self.seen.streaming {
            self.seen.streaming = streaming;
            r.streaming = r.streaming.wrapping_add(1);
        }
        let any = touch == Touch::Any || changes != self.seen.changes;
        if any {
            self.seen.changes = changes;
            r.state = r.state.wrapping_add(1);
        }
        if any || moved_shown || run_revision != self.seen.run {
            self.seen.run = run_revision;
            r.run = r.run.wrapping_add(1);
        }
    }
}

//! The settle loop: level rules and relayed signals until nothing changes (a fixed point
//! counted by change counters), and the quiet streamed piece that needs no round.

use super::*;

impl Engine {
    /// Applies the level rules and relays signals until nothing changes.
    pub(super) fn settle(&mut self, now: Time) {
        for _ in 0..MAX_SETTLE_ROUNDS {
            let before = self.change_count();
            self.evaluate(now);
            let relayed = self.relay_signals(now);
            if !relayed && self.change_count() == before {
                self.persist_queues();
                self.settled = (self.change_count(), self.own_changes);
                return;
            }
        }
        // A rule that keeps changing state is a bug; release builds stop here and stay usable.
        debug_assert!(false, "the settle loop did not reach a fixed point");
    }

    /// Counts every change a level rule may depend on: machine transitions that changed a
    /// state, the picker's values, works added and queues borrowed mutably. Nothing is cloned
    /// or compared to learn that a round changed nothing (issue 12, point 2).
    pub(super) fn change_count(&self) -> ChangeCount {
        (
            self.io.transitions,
            self.selection.inner().transitions,
            self.backend.platform.picker.inner().values_revision,
            self.works.revision(),
        )
    }

    /// Issue 12, point 2: a piece of a streamed body wakes only the run it belongs to. When it
    /// changed no machine's state, relayed nothing and its time reached no deadline (no rule
    /// acts on time, and `isRuntimeWakeOverdue` cannot flip), every level rule
    /// sees what it saw at the last fixed point (the answer's content and the run-status values
    /// are read by no rule), so the settle is skipped.
    pub(super) fn quiet(&self) -> bool {
        self.memory.signals.is_empty()
            && (self.change_count(), self.own_changes) == self.settled
            && !self.deadline_reached
    }

    /// The settle [`Engine::quiet`] skipped, run anyway: it must change nothing.
    #[cfg(debug_assertions)]
    pub(super) fn check_quiet(&mut self, now: Time) {
        let before = (
            self.settled,
            self.io.outbox.len(),
            self.io.events.len(),
            self.snapshot(),
        );
        self.settle(now);
        let after = (
            (self.change_count(), self.own_changes),
            self.io.outbox.len(),
            self.io.events.len(),
            self.snapshot(),
        );
        debug_assert!(
            after == before,
            "a quiet piece changed what a level rule reads"
        );
    }
}

//! Change tracking without copies (issue 12): counters that move when state changes, so the
//! settle loop and hosts learn "something changed" without cloning or comparing the world.

use std::ops::{Deref, DerefMut};

use serde::Serialize;

/// Revision counters, one per part of the [`crate::Snapshot`]. A part whose counter has not
/// moved since the host last looked is unchanged; a counter that moved means the part may have
/// changed: every change moves it, and `state` and `run` also move on every input other than
/// a piece of a streamed body (compare if an unchanged render matters). Counters only grow.
///
/// A host following changes keeps the last `Revisions` it rendered and, after each drain, reads
/// only the parts whose counter moved:
///
/// | counter | what it covers | read with |
/// | --- | --- | --- |
/// | `run` | `runStatus`, `runStatusDetail`, `runFailure`, `thinkingSummary`, `hasVisibleAssistantOutput`, `isAgentWorking`, `hasActiveChatStream`, `isCancellingSession` (adr-notes 6: they change on every chunk) | [`crate::Engine::run_status`] |
/// | `thread` | the thread's finished messages (added, removed, replaced, marked) and whether an answer streams | [`crate::Engine::thread`] |
/// | `streaming` | the streaming answer's content: moves with every [`crate::Event::Answer`] of the session shown | the `Answer` events, or [`crate::Engine::thread`] |
/// | `state` | every other snapshot value | [`crate::Engine::snapshot`] |
///
/// ```
/// use engine_core::{Config, Engine, Input, Time};
///
/// let now = Time::from_millis(0);
/// let mut engine = Engine::new(Config::new("https://platform.example.test").unwrap(), now);
/// let seen = engine.revisions();
/// engine.handle_input(Input::IsVisible(true), now);
/// let now_seen = engine.revisions();
/// assert_ne!(now_seen.state, seen.state); // something outside the thread may have changed
/// assert_eq!(now_seen.thread, seen.thread); // the thread did not
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Revisions {
    /// Every snapshot value not covered by the other counters.
    pub state: u64,
    /// The run-status channel.
    pub run: u64,
    /// The thread's finished messages, and whether an answer streams.
    pub thread: u64,
    /// The streaming answer's content.
    pub streaming: u64,
}

/// A value whose every mutable access counts as a change (`Deref` reads are free).
#[derive(Debug, Clone, Default)]
pub(crate) struct Tracked<T> {
    value: T,
    revision: u64,
}

impl<T> Tracked<T> {
    pub(crate) fn new(value: T) -> Tracked<T> {
        Tracked { value, revision: 0 }
    }

    /// How many times it was borrowed mutably.
    pub(crate) fn revision(&self) -> u64 {
        self.revision
    }
}

impl<T> Deref for Tracked<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Tracked<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.revision = self.revision.wrapping_add(1);
        &mut self.value
    }
}

/// Counts the transitions of a machine that changed its state (statig's `after_transition`).
pub(crate) fn count_transition<S: PartialEq>(counter: &mut u64, source: &S, target: &S) {
    if source != target {
        *counter = counter.wrapping_add(1);
    }
}

/// The thread as the snapshot shows it, borrowed from the engine: the history's messages, this
/// engine's turns since, and the streaming answer last. Finished messages are shared (`Arc`):
/// [`ThreadView::to_vec`] copies pointers, not messages.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ThreadView<'a> {
    /// The loaded history's messages (empty after `clearThread()`).
    pub history: &'a [std::sync::Arc<crate::message::Message>],
    /// This engine's messages since the history was applied.
    pub local: &'a [std::sync::Arc<crate::message::Message>],
    /// The answer streaming now, as far as it has come.
    pub streaming: Option<&'a crate::message::Message>,
    /// The last answer of the session's run, when it ended exactly as its stream left it: the
    /// message its deltas built, with the status of its `ended` delta, nothing settled or
    /// marked after (a clean end). It is in `local` (compare by `Arc::ptr_eq`) until the message
    /// changes or the next answer starts; a host that applied every delta of that answer to a
    /// mirror already has this message and need not read it again.
    pub settled: Option<&'a std::sync::Arc<crate::message::Message>>,
}

impl<'a> ThreadView<'a> {
    /// How many messages the thread shows.
    pub fn len(&self) -> usize {
        self.history.len() + self.local.len() + usize::from(self.streaming.is_some())
    }

    /// Whether it shows none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The messages in order.
    pub fn iter(self) -> impl Iterator<Item = &'a crate::message::Message> + 'a {
        self.history
            .iter()
            .chain(self.local.iter())
            .map(|m| &**m)
            .chain(self.streaming)
    }

    /// The thread as the snapshot's `thread`: shared finished messages, and a copy of the
    /// streaming one.
    pub fn to_vec(&self) -> Vec<std::sync::Arc<crate::message::Message>> {
        let mut out = Vec::with_capacity(self.len());
        out.extend(self.history.iter().cloned());
        out.extend(self.local.iter().cloned());
        out.extend(self.streaming.map(|m| std::sync::Arc::new(m.clone())));
        out
    }
}

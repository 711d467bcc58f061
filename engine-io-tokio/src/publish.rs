//! When a shell publishes the engine's snapshot, and what it counts doing so. Public so that
//! `engine-io-blocking` publishes by exactly the same rule: both shells take the same
//! `snapshot_interval` with the same default and behave alike.
//!
//! A snapshot holds the whole thread, so computing and comparing one costs as much as the
//! thread: one per answer chunk would make an answer quadratic and a long thread slow. The rule:
//!
//! - After a piece of a streamed answer (body bytes) the snapshot is published only when the
//!   bytes since the last publication reach half of those streamed so far (a doubling: linear
//!   in all), or once `snapshot_interval` has passed since the last one. A change held back is
//!   published at the latest `snapshot_interval` after the last publication ([`Throttle::due`]),
//!   so the last state is always published.
//! - Everything else publishes at once: host input, a response head, a body's end, a failure, a
//!   timer, and any piece whose drain emitted a terminal fact ([`is_urgent`]: the answer
//!   finished, aborted, ended or reported an error, a run failed, a message was not sent). The
//!   throttle never delays those, nor any event: events go out as they are drained.
//! - `snapshot_interval` of zero turns the throttle off: a snapshot after every drain.
//! - A snapshot is computed only when the engine's [`Revisions`] moved, and one equal to the
//!   last published is not published again ([`Counters::changed`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use engine_core::stream::SkipReason;
use engine_core::{Engine, Event, Revisions, Snapshot, StreamDelta};

/// The default `snapshot_interval` of both shells.
pub const DEFAULT_SNAPSHOT_INTERVAL: Duration = Duration::from_millis(50);

/// What a shell has done so far, for diagnostics and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Stats {
    /// Snapshots computed to be compared and published (each costs as much as the thread it
    /// holds).
    pub snapshots: u64,
    /// Snapshots handed to the host (those that differed from the last one published).
    pub published: u64,
    /// HTTP exchanges started (a request aborted before it started is not one).
    pub exchanges: u64,
    /// Time spent computing and comparing those snapshots.
    pub snapshot_time: Duration,
}

impl Stats {
    /// What was done since `earlier` (counts taken from the same shell).
    pub fn since(&self, earlier: &Stats) -> Stats {
        Stats {
            snapshots: self.snapshots.saturating_sub(earlier.snapshots),
            published: self.published.saturating_sub(earlier.published),
            exchanges: self.exchanges.saturating_sub(earlier.exchanges),
            snapshot_time: self.snapshot_time.saturating_sub(earlier.snapshot_time),
        }
    }
}

/// The counters behind [`Stats`], shared by a shell's driver and its host handle.
#[derive(Debug, Default)]
pub struct Counters {
    snapshots: AtomicU64,
    published: AtomicU64,
    exchanges: AtomicU64,
    snapshot_nanos: AtomicU64,
}

impl Counters {
    /// The counts so far.
    pub fn stats(&self) -> Stats {
        Stats {
            snapshots: self.snapshots.load(Ordering::Relaxed),
            published: self.published.load(Ordering::Relaxed),
            exchanges: self.exchanges.load(Ordering::Relaxed),
            snapshot_time: Duration::from_nanos(self.snapshot_nanos.load(Ordering::Relaxed)),
        }
    }

    /// Counts an exchange started.
    pub fn exchange(&self) {
        self.exchanges.fetch_add(1, Ordering::Relaxed);
    }

    /// The engine's snapshot when it changed since `last` (the one the host holds), counting
    /// the snapshots computed, those published, and the time they took. `seen` is the
    /// engine's [`Revisions`] as of `last`: when no counter moved, no snapshot is computed at
    /// all; when the thread or the streaming answer moved, the new snapshot is published
    /// without comparing; when only other parts moved (a host input, an answer), it is compared
    /// with `last` (the thread's shared messages by pointer first), so an input that changed
    /// nothing publishes nothing.
    pub fn changed(
        &self,
        engine: &Engine,
        last: &Snapshot,
        seen: &mut Revisions,
    ) -> Option<Snapshot> {
        let now = engine.revisions();
        if now == *seen {
            return None;
        }
        let start = Instant::now();
        let snapshot = engine.snapshot();
        let moved_thread = now.thread != seen.thread || now.streaming != seen.streaming;
        *seen = now;
        let changed = moved_thread || snapshot != *last;
        let took = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.snapshot_nanos.fetch_add(took, Ordering::Relaxed);
        self.snapshots.fetch_add(1, Ordering::Relaxed);
        if changed {
            self.published.fetch_add(1, Ordering::Relaxed);
            Some(snapshot)
        } else {
            None
        }
    }
}

/// Logs what a shell logs of an event before handing it on (issue 24, point 5: never silent):
/// a frame the engine skipped ([`StreamDelta::FrameSkipped`], the first of each type in an
/// answer) at `warn` when it was invalid (a known type with a bad field, or not a frame at
/// all), at `debug` when its type is unknown (forward compatibility), with the session's uid
/// and the frame's type. Nothing of the frame's content is logged.
pub fn log_event(event: &Event) {
    let Event::Answer {
        session_uid,
        delta: StreamDelta::FrameSkipped { frame_type, reason },
    } = event
    else {
        return;
    };
    let frame_type = frame_type.as_deref().unwrap_or("(not a frame)");
    if reason.is_invalid() {
        let why = match reason {
            SkipReason::InvalidField { field } => format!("invalid field {field}"),
            _ => "not a frame".to_owned(),
        };
        tracing::warn!(%session_uid, frame_type, why, "answer frame skipped");
    } else {
        tracing::debug!(%session_uid, frame_type, "answer frame of an unknown type skipped");
    }
}

/// Whether an event is a terminal fact that must not wait for the throttle: anything but the
/// progress of a streamed answer. A tool's status line ([`StreamDelta::ToolStatus`]) and a
/// skipped frame are few per answer and published at once, so the line of a running tool shows.
pub fn is_urgent(event: &Event) -> bool {
    match event {
        Event::Answer { delta, .. } => !matches!(
            delta,
            StreamDelta::Started { .. }
                | StreamDelta::PartAdded { .. }
                | StreamDelta::TextDelta { .. }
                | StreamDelta::ReasoningDelta { .. }
                | StreamDelta::ToolInputDelta { .. }
                | StreamDelta::PartUpdated { .. }
                | StreamDelta::PartsRemoved { .. }
                | StreamDelta::Metadata { .. }
                | StreamDelta::TransientData { .. }
                | StreamDelta::AgentId { .. }
        ),
        _ => true,
    }
}

/// The publication rule of [the module](self), for one shell.
#[derive(Debug)]
pub struct Throttle {
    interval: Duration,
    /// A change not yet published (the engine handled something since).
    dirty: bool,
    /// Piece bytes handled since the last publication.
    bytes_since: usize,
    /// Piece bytes handled while requests were in flight (reset when none is).
    bytes_streamed: usize,
    /// When the snapshot was last published.
    last: Option<Instant>,
}

/// What the engine handled before a drain, for [`Throttle::after`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    /// Only pieces of streamed answers, of this many bytes.
    Pieces(usize),
    /// Anything else (host input, a head, an end, a failure, a timer), possibly with pieces.
    Other,
}

impl Throttle {
    /// A throttle publishing at least every `interval` while an answer streams (zero: after
    /// every drain).
    pub fn new(interval: Duration) -> Throttle {
        Throttle {
            interval,
            dirty: false,
            bytes_since: 0,
            bytes_streamed: 0,
            last: None,
        }
    }

    /// After the engine handled something and was drained: whether to publish now. `urgent`:
    /// the drain emitted a terminal fact ([`is_urgent`]).
    pub fn after(&mut self, now: Instant, handled: Handled, urgent: bool) -> bool {
        self.dirty = true;
        let Handled::Pieces(bytes) = handled else {
            return true;
        };
        self.bytes_since = self.bytes_since.saturating_add(bytes);
        self.bytes_streamed = self.bytes_streamed.saturating_add(bytes);
        urgent
            || self.bytes_since >= self.bytes_streamed / 2
            || self
                .last
                .is_none_or(|last| now.saturating_duration_since(last) >= self.interval)
    }

    /// No request is in flight any more: the next answer doubles from zero again.
    pub fn idle(&mut self) {
        self.bytes_streamed = 0;
    }

    /// The snapshot was just computed (and published if it changed).
    pub fn published(&mut self, now: Instant) {
        self.dirty = false;
        self.bytes_since = 0;
        self.last = Some(now);
    }

    /// Whether a change is held back.
    pub fn dirty(&self) -> bool {
        self.dirty
    }

    /// When a change held back must be published at the latest; `None` when none is.
    pub fn due(&self) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        match self.last {
            Some(last) => last.checked_add(self.interval),
            None => Some(Instant::now()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_double_and_everything_else_publishes_at_once() {
        let t0 = Instant::now();
        let mut throttle = Throttle::new(Duration::from_secs(3600));
        throttle.published(t0);
        // 1000 bytes after 0: publish (1000 >= 500).
        assert!(throttle.after(t0, Handled::Pieces(1000), false));
        throttle.published(t0);
        // 100 more: held (100 < 550); a due time an interval after the last publication.
        assert!(!throttle.after(t0, Handled::Pieces(100), false));
        assert_eq!(throttle.due(), t0.checked_add(Duration::from_secs(3600)));
        // A terminal fact is not held.
        assert!(throttle.after(t0, Handled::Pieces(10), true));
        // Nor anything but a piece.
        assert!(throttle.after(t0, Handled::Other, false));
        throttle.published(t0);
        assert_eq!(throttle.due(), None);
    }

    #[test]
    fn a_zero_interval_publishes_after_every_drain() {
        let t0 = Instant::now();
        let mut throttle = Throttle::new(Duration::ZERO);
        throttle.published(t0);
        assert!(throttle.after(t0, Handled::Pieces(1_000_000), false));
        throttle.published(t0);
        assert!(throttle.after(t0, Handled::Pieces(1), false));
    }

    /// Issue 12, point 1: nothing moved, no snapshot is computed; an input that changes
    /// nothing visible computes one but publishes nothing; a change publishes.
    #[test]
    #[allow(clippy::panic)] // a test fails loudly
    fn snapshots_follow_the_revisions() {
        let now = engine_core::Time::from_millis(0);
        let config =
            engine_core::Config::new("https://platform.test").unwrap_or_else(|e| panic!("{e}"));
        let mut engine = Engine::new(config, now);
        let counters = Counters::default();
        let mut last = engine.snapshot();
        let mut seen = engine.revisions();
        assert!(counters.changed(&engine, &last, &mut seen).is_none());
        assert_eq!(
            counters.stats().snapshots,
            0,
            "nothing moved: nothing computed"
        );
        engine.handle_input(engine_core::Input::IsVisible(false), now);
        assert!(counters.changed(&engine, &last, &mut seen).is_none());
        assert_eq!(
            (counters.stats().snapshots, counters.stats().published),
            (1, 0)
        );
        engine.handle_input(engine_core::Input::IsVisible(true), now);
        let published = counters.changed(&engine, &last, &mut seen);
        assert!(published.as_ref().is_some_and(|s| s.is_visible));
        last = published.unwrap_or(last);
        assert!(counters.changed(&engine, &last, &mut seen).is_none());
        assert_eq!(
            (counters.stats().snapshots, counters.stats().published),
            (2, 1)
        );
    }

    /// Issue 24, point 5: a skipped frame is logged with the session's uid and its type, at
    /// `warn` when invalid (a bad field, not a frame), at `debug` when of an unknown type.
    #[test]
    #[allow(clippy::unwrap_used, clippy::indexing_slicing)]
    fn skipped_frames_are_logged_by_kind() {
        use std::sync::{Arc, Mutex};

        #[derive(Clone, Default)]
        struct Buffer(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Buffer {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .without_time()
            .with_writer(move || writer.clone())
            .finish();
        let skipped = |frame_type: Option<&str>, reason: SkipReason| Event::Answer {
            session_uid: "sess-1".to_owned(),
            delta: StreamDelta::FrameSkipped {
                frame_type: frame_type.map(str::to_owned),
                reason,
            },
        };
        tracing::subscriber::with_default(subscriber, || {
            log_event(&skipped(Some("x-future"), SkipReason::UnknownType));
            log_event(&skipped(
                Some("text-delta"),
                SkipReason::InvalidField { field: "id".into() },
            ));
            log_event(&skipped(None, SkipReason::NotAFrame));
            log_event(&Event::RequestVisible);
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("DEBUG"), "{text}");
        assert!(
            lines[0].contains("session_uid=sess-1 frame_type=\"x-future\""),
            "{text}"
        );
        assert!(lines[1].starts_with(" WARN"), "{text}");
        assert!(
            lines[1].contains("frame_type=\"text-delta\" why=\"invalid field id\""),
            "{text}"
        );
        assert!(lines[2].starts_with(" WARN"), "{text}");
        assert!(
            lines[2].contains("frame_type=\"(not a frame)\" why=\"not a frame\""),
            "{text}"
        );
    }
}

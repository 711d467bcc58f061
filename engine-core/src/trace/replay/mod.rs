//! [`replay`]: drives a fresh engine through a trace, checks its expectations and keeps a
//! readable timeline.

use crate::config::ConfigError;
use crate::time::Time;
use std::fmt::Write as _;
use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::engine::Engine;
use crate::event::Event;
use crate::intent::{Intent, StorageRequest};
use crate::snapshot::Snapshot;

use super::fields::Fields;
use super::{
    Expectation, FORMAT, Header, IntentExpectation, LineError, Offset, Record, Step, VERSION,
    lookup,
};

mod expect;
mod run;
mod timeline;

use expect::{clip, compact, debug_clipped, expect_keys};
use run::Run;
pub use timeline::TIMELINE_HEADER;

/// Why a replay stopped: every variant names the 1-based line of the trace.
///
/// The message names the cause; [`source`](std::error::Error::source) gives it as a value where
/// there is one: serde's error for a line that is not JSON or has a field of the wrong shape, the
/// [`ConfigError`] of a refused header. Two errors are equal when they are of the same kind and
/// say the same (their sources are not compared).
///
/// ```
/// use std::error::Error;
/// let e = engine_core::trace::replay("{\"trace\": ").unwrap_err();
/// assert_eq!(e.line(), 1);
/// assert!(e.source().and_then(|s| s.downcast_ref::<serde_json::Error>()).is_some());
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ReplayError {
    /// The line is not a record: not JSON, not an object, or a field of the wrong shape (the
    /// message is serde's).
    #[non_exhaustive]
    Malformed {
        /// The line.
        line: usize,
        /// What is wrong.
        message: String,
        /// serde's error, when serde refused the line.
        source: Option<Arc<serde_json::Error>>,
    },
    /// The line's record kind is none of the format's.
    UnknownKind {
        /// The line.
        line: usize,
        /// The key found.
        kind: String,
    },
    /// The header is missing, of another format or version, or its configuration is refused.
    #[non_exhaustive]
    Header {
        /// The line.
        line: usize,
        /// What is wrong.
        message: String,
        /// Why the configuration was refused, when it was.
        source: Option<ConfigError>,
    },
    /// A head, chunk, end or failure names a request the engine never issued: the replay has
    /// gone another way than the recorded run.
    UnknownRequest {
        /// The line.
        line: usize,
        /// The request id.
        id: u64,
        /// The ids issued so far, as `#1..#5` or `none`.
        issued: String,
    },
    /// An expectation does not hold; `expected` and `actual` are compact JSON.
    Expectation {
        /// The line.
        line: usize,
        /// What was checked (`snapshot.currentSessionId`, `intent 2 of 3: body.text`, ...).
        what: String,
        /// The expected value.
        expected: String,
        /// The actual value.
        actual: String,
    },
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayError::Malformed { line, message, .. } => {
                write!(f, "line {line}: malformed record: {message}")
            }
            ReplayError::UnknownKind { line, kind } => write!(
                f,
                "line {line}: unknown record kind {kind:?} (expected input, head, chunk, end, \
                 failure, timeout, expect or note)"
            ),
            ReplayError::Header { line, message, .. } => write!(f, "line {line}: {message}"),
            ReplayError::UnknownRequest { line, id, issued } => write!(
                f,
                "line {line}: request #{id} was never issued by the engine (issued so far: \
                 {issued})"
            ),
            ReplayError::Expectation {
                line,
                what,
                expected,
                actual,
            } => write!(
                f,
                "line {line}: expectation failed: {what}: expected {expected}, got {actual}"
            ),
        }
    }
}

impl std::error::Error for ReplayError {
    /// serde's error itself (not the `Arc` that shares it), or the refused configuration.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReplayError::Malformed {
                source: Some(e), ..
            } => Some(&**e),
            ReplayError::Header {
                source: Some(e), ..
            } => Some(e),
            _ => None,
        }
    }
}

impl PartialEq for ReplayError {
    fn eq(&self, other: &ReplayError) -> bool {
        // Every field but the source is in the message.
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Eq for ReplayError {}

impl ReplayError {
    fn header(line: usize, message: String) -> ReplayError {
        ReplayError::Header {
            line,
            message,
            source: None,
        }
    }

    fn malformed(line: usize, message: String) -> ReplayError {
        ReplayError::Malformed {
            line,
            message,
            source: None,
        }
    }

    /// The 1-based line the error is about.
    pub fn line(&self) -> usize {
        match self {
            ReplayError::Malformed { line, .. }
            | ReplayError::UnknownKind { line, .. }
            | ReplayError::Header { line, .. }
            | ReplayError::UnknownRequest { line, .. }
            | ReplayError::Expectation { line, .. } => *line,
        }
    }

    fn from_line(line: usize, e: LineError) -> ReplayError {
        match e {
            LineError::Malformed(message) => ReplayError::malformed(line, message),
            LineError::Json(message, e) => ReplayError::Malformed {
                line,
                message,
                source: Some(e),
            },
            LineError::UnknownKind(kind) => ReplayError::UnknownKind { line, kind },
        }
    }
}

/// What a timeline entry stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EntryKind {
    /// The engine's start (the header line): what [`Engine::new`] emitted.
    Start,
    /// An input to the engine.
    Step,
    /// A checkpoint that held.
    Expect,
    /// A comment.
    Note,
}

/// One line of the replay: the record and what the engine did in answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TimelineEntry {
    /// The trace line (1-based).
    pub line: usize,
    /// What the line is.
    pub kind: EntryKind,
    /// The offset the engine was driven at (the previous one for expects and notes).
    pub at: Offset,
    /// A one-line summary of the record.
    pub what: String,
    /// The intents the engine emitted, in order.
    pub intents: Vec<Intent>,
    /// The events the engine emitted, in order.
    pub events: Vec<Event>,
    /// The snapshot fields that changed, with their new values (camelCase names, in name order).
    pub changes: Vec<(String, Value)>,
}

/// A replay that ran to the end with every expectation met.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ReplayReport {
    /// The trace's header.
    pub header: Header,
    /// One entry per record, in order, the engine's start first.
    pub entries: Vec<TimelineEntry>,
    /// How many `expect` records held.
    pub expectations: usize,
    /// The snapshot at the end.
    pub snapshot: Snapshot,
}

/// What a replay computes besides checking the trace.
///
/// The default, [`ReplayOptions::timeline`], is what [`replay`] and [`replay_with`] do: every
/// timeline entry lists the snapshot fields that changed. That costs a snapshot of the engine
/// per record, which grows with the thread (on a long streamed answer, with the answer so far).
/// [`ReplayOptions::check`] leaves [`TimelineEntry::changes`] empty and computes a snapshot only
/// where an `expect` record checks snapshot fields, and at the end: the cost of a replay is then
/// that of the engine's inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplayOptions {
    changes: bool,
    entries: bool,
}

impl ReplayOptions {
    /// Every entry's [`TimelineEntry::changes`] is filled in (the default).
    pub const fn timeline() -> ReplayOptions {
        ReplayOptions {
            changes: true,
            entries: true,
        }
    }

    /// Only the trace's checks: [`TimelineEntry::changes`] stays empty.
    pub const fn check() -> ReplayOptions {
        ReplayOptions {
            changes: false,
            entries: true,
        }
    }

    /// No timeline at all: [`ReplayReport::entries`] stays empty and `on_entry` is never
    /// called; the intents and events of the records since the last `expect` are kept for the
    /// next one to read (a trace without expects keeps them all). The fastest replay (a long
    /// answer at about twice the engine's own cost), for checking traces in bulk.
    ///
    /// ```
    /// use engine_core::trace::{ReplayOptions, replay_with_options};
    /// let trace = concat!(
    ///     r#"{"trace": "agent-chat-engine", "version": 1, "config": {"platformBaseUrl": "https://p.test"}}"#, "\n",
    ///     r#"{"at": 0, "input": {"input": "is_visible", "value": true}}"#, "\n",
    ///     r#"{"expect": {"snapshot": {"isVisible": true}}}"#, "\n",
    /// );
    /// let report = replay_with_options(trace, ReplayOptions::bare(), |_| {}).unwrap();
    /// assert_eq!(report.expectations, 1);
    /// assert!(report.entries.is_empty());
    /// ```
    pub const fn bare() -> ReplayOptions {
        ReplayOptions {
            changes: false,
            entries: false,
        }
    }

    /// Whether entries list the changed snapshot fields.
    pub const fn changes(self) -> bool {
        self.changes
    }

    /// Whether the replay keeps a timeline entry per record.
    pub const fn entries(self) -> bool {
        self.entries
    }
}

impl Default for ReplayOptions {
    fn default() -> ReplayOptions {
        ReplayOptions::timeline()
    }
}

/// Replays a trace through a fresh engine: each record is fed at `start + at`, intents and
/// events are drained after each, and every `expect` record is checked where it stands.
///
/// Stops at the first malformed line, unknown record kind, request the engine never issued or
/// failed expectation, with its line number (see [`ReplayError`]).
pub fn replay(trace: &str) -> Result<ReplayReport, ReplayError> {
    replay_with(trace, |_| {})
}

/// [`replay`], handing each timeline entry to `on_entry` as soon as it is known, so a caller
/// can print the timeline up to a failure:
///
/// ```
/// let trace = concat!(
///     r#"{"trace": "agent-chat-engine", "version": 1, "config": {"platformBaseUrl": "https://p.test"}}"#, "\n",
///     r#"{"at": 0, "input": {"input": "is_visible", "value": true}}"#, "\n",
///     r#"{"expect": {"snapshot": {"isVisible": false}}}"#, "\n",
/// );
/// let mut printed = String::new();
/// let err = engine_core::trace::replay_with(trace, |entry| printed.push_str(&entry.render()))
///     .unwrap_err();
/// assert!(printed.contains("input is_visible true"));
/// assert!(printed.contains("= isVisible=true"));
/// assert_eq!(
///     err.to_string(),
///     "line 3: expectation failed: snapshot.isVisible: expected false, got true"
/// );
/// ```
pub fn replay_with(
    trace: &str,
    on_entry: impl FnMut(&TimelineEntry),
) -> Result<ReplayReport, ReplayError> {
    replay_with_options(trace, ReplayOptions::default(), on_entry)
}

/// [`replay_with`] with [`ReplayOptions`]: [`ReplayOptions::check`] replays a long answer at
/// the engine's own pace, without a snapshot per record.
///
/// ```
/// use engine_core::trace::{ReplayOptions, replay_with_options};
/// let trace = concat!(
///     r#"{"trace": "agent-chat-engine", "version": 1, "config": {"platformBaseUrl": "https://p.test"}}"#, "\n",
///     r#"{"at": 0, "input": {"input": "is_visible", "value": true}}"#, "\n",
///     r#"{"expect": {"snapshot": {"isVisible": true}}}"#, "\n",
/// );
/// let report = replay_with_options(trace, ReplayOptions::check(), |_| {}).unwrap();
/// assert_eq!(report.expectations, 1);
/// assert!(report.entries.iter().all(|e| e.changes.is_empty()));
/// ```
pub fn replay_with_options(
    trace: &str,
    options: ReplayOptions,
    mut on_entry: impl FnMut(&TimelineEntry),
) -> Result<ReplayReport, ReplayError> {
    let mut lines = trace.lines().enumerate().map(|(i, l)| (i + 1, l));
    let (header_line, header) = loop {
        let Some((n, text)) = lines.next() else {
            return Err(ReplayError::header(
                1,
                "the trace is empty: it starts with its header".to_owned(),
            ));
        };
        match Record::parse_line(text) {
            Ok(None) => continue,
            Ok(Some(Record::Header(h))) => break (n, h),
            Ok(Some(_)) => {
                return Err(ReplayError::header(
                    n,
                    format!(
                        "the first record is the header {{\"trace\": \"{FORMAT}\", \"version\": \
                         {VERSION}, \"config\": {{...}}}}"
                    ),
                ));
            }
            Err(e) => return Err(ReplayError::from_line(n, e)),
        }
    };
    if header.trace != FORMAT {
        return Err(ReplayError::header(
            header_line,
            format!(
                "not a trace of this engine: \"trace\" is {:?}, expected {FORMAT:?}",
                header.trace
            ),
        ));
    }
    if header.version != VERSION {
        return Err(ReplayError::header(
            header_line,
            format!(
                "unsupported trace version {} (this engine reads version {VERSION})",
                header.version
            ),
        ));
    }
    let config = header.config.to_config().map_err(|e| ReplayError::Header {
        line: header_line,
        message: e.to_string(),
        source: Some(e),
    })?;
    // Times come from the offsets alone: no clock is read.
    let start = Time::ZERO;
    let mut run = Run::new(Engine::new(config, start), start, options);
    let c = &header.config;
    let what = format!(
        "start: platform {}, seed {}, startUnixMs {}",
        c.platform_base_url, c.seed, c.start_unix_ms
    );
    run.record(header_line, EntryKind::Start, what);
    let mut shown = 0;
    for (n, text) in lines {
        for entry in run.entries.get(shown..).unwrap_or_default() {
            on_entry(entry);
        }
        shown = run.entries.len();
        match Record::parse_line(text).map_err(|e| ReplayError::from_line(n, e))? {
            None => {}
            Some(Record::Header(_)) => {
                return Err(ReplayError::header(
                    n,
                    "a second header: a trace has one, on its first line".to_owned(),
                ));
            }
            Some(Record::Note(_)) if !run.keep_entries => {}
            Some(Record::Note(text)) => {
                run.entries
                    .push(run.entry(n, EntryKind::Note, format!("# {text}")));
            }
            Some(Record::Expect(e)) => {
                run.checkpoint = true;
                run.check(n, &e)?;
                run.expectations += 1;
                if run.keep_entries {
                    let what = format!("expect {}: ok", expect_keys(&e));
                    run.entries.push(run.entry(n, EntryKind::Expect, what));
                }
            }
            Some(Record::Step { at, step }) => run.step(n, at, step)?,
        }
    }
    for entry in run.entries.get(shown..).unwrap_or_default() {
        on_entry(entry);
    }
    Ok(ReplayReport {
        header,
        entries: run.entries,
        expectations: run.expectations,
        snapshot: run.engine.snapshot(),
    })
}

#[cfg(test)]
mod tests;

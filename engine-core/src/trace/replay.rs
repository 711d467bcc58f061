//! [`replay`]: drives a fresh engine through a trace, checks its expectations and keeps a
//! readable timeline.

use crate::config::ConfigError;
use crate::time::Time;
use std::collections::BTreeSet;
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

/// The engine under replay and what has been seen.
struct Run {
    engine: Engine,
    start: Time,
    last: Offset,
    issued: BTreeSet<u64>,
    /// The top-level snapshot fields as of the last record, as compact JSON, when entries list
    /// the changes ([`ReplayOptions::changes`]).
    fields: Option<Fields>,
    /// What was emitted since the previous checkpoint.
    window_intents: Vec<Intent>,
    window_events: Vec<Event>,
    /// The previous record was an `expect`: the next input opens a new window.
    checkpoint: bool,
    entries: Vec<TimelineEntry>,
    /// Whether entries are kept ([`ReplayOptions::entries`]).
    keep_entries: bool,
    expectations: usize,
}

impl Run {
    fn new(engine: Engine, start: Time, options: ReplayOptions) -> Run {
        let fields = options.changes.then(|| Fields::of(engine.snapshot()));
        Run {
            start,
            engine,
            last: Offset::ZERO,
            issued: BTreeSet::new(),
            fields,
            window_intents: Vec::new(),
            window_events: Vec::new(),
            checkpoint: false,
            entries: Vec::new(),
            keep_entries: options.entries,
            expectations: 0,
        }
    }

    fn entry(&self, line: usize, kind: EntryKind, what: String) -> TimelineEntry {
        TimelineEntry {
            line,
            kind,
            at: self.last,
            what,
            intents: Vec::new(),
            events: Vec::new(),
            changes: Vec::new(),
        }
    }

    /// Drains the engine after a call and records the entry.
    fn record(&mut self, line: usize, kind: EntryKind, what: String) {
        if !self.keep_entries {
            while let Some(intent) = self.engine.poll_intent() {
                if let Intent::Http { id, .. } = &intent {
                    self.issued.insert(id.0);
                }
                self.window_intents.push(intent);
            }
            while let Some(event) = self.engine.poll_event() {
                self.window_events.push(event);
            }
            return;
        }
        let mut entry = self.entry(line, kind, what);
        while let Some(intent) = self.engine.poll_intent() {
            if let Intent::Http { id, .. } = &intent {
                self.issued.insert(id.0);
            }
            entry.intents.push(intent);
        }
        while let Some(event) = self.engine.poll_event() {
            entry.events.push(event);
        }
        if let Some(fields) = self.fields.as_mut() {
            entry.changes = fields.update(self.engine.snapshot());
        }
        self.window_intents.extend(entry.intents.iter().cloned());
        self.window_events.extend(entry.events.iter().cloned());
        self.entries.push(entry);
    }

    fn step(&mut self, line: usize, at: Offset, step: Step) -> Result<(), ReplayError> {
        if at < self.last {
            return Err(ReplayError::malformed(
                line,
                format!(
                    "offset {at} ms is earlier than the previous record's {} ms",
                    self.last
                ),
            ));
        }
        if let Step::Head { id, .. }
        | Step::Chunk { id, .. }
        | Step::End { id }
        | Step::Failure { id, .. } = &step
            && !self.issued.contains(&id.0)
        {
            return Err(ReplayError::UnknownRequest {
                line,
                id: id.0,
                issued: match (self.issued.first(), self.issued.last()) {
                    (Some(a), Some(b)) if a == b => format!("#{a}"),
                    (Some(a), Some(b)) => format!("#{a}..#{b}"),
                    _ => "none".to_owned(),
                },
            });
        }
        if self.checkpoint {
            self.window_intents.clear();
            self.window_events.clear();
            self.checkpoint = false;
        }
        self.last = at;
        let now = self.start + at.as_duration();
        let what = if self.keep_entries {
            step_summary(&step)
        } else {
            String::new()
        };
        match step {
            Step::Input(input) => self.engine.handle_input(input, now),
            Step::Head { id, head } => self.engine.handle_response(id, head, now),
            Step::Chunk { id, bytes } => self.engine.handle_body_chunk(id, Bytes::from(bytes), now),
            Step::End { id } => self.engine.handle_body_end(id, now),
            Step::Failure { id, failure } => self.engine.handle_failure(id, failure, now),
            Step::Timeout => self.engine.handle_timeout(now),
        }
        self.record(line, EntryKind::Step, what);
        Ok(())
    }

    fn check(&self, line: usize, e: &Expectation) -> Result<(), ReplayError> {
        let fail = |what: String, expected: String, actual: String| ReplayError::Expectation {
            line,
            what,
            expected,
            actual,
        };
        if let Some(fields) = &e.snapshot {
            // The engine has not moved since the last record: its snapshot now is that one.
            let snapshot = serde_json::to_value(self.engine.snapshot()).unwrap_or(Value::Null);
            for (path, expected) in fields {
                let actual = lookup(&snapshot, path);
                if actual != Some(expected) {
                    return Err(fail(
                        format!("snapshot.{path}"),
                        compact(expected),
                        shown(actual),
                    ));
                }
            }
        }
        let http: Vec<&Intent> = self
            .window_intents
            .iter()
            .filter(|i| matches!(i, Intent::Http { .. }))
            .collect();
        let actual_list = || {
            compact(&Value::Array(
                http.iter().map(|i| intent_value(i)).collect(),
            ))
        };
        if e.no_intents && !http.is_empty() {
            return Err(fail(
                "noIntents".to_owned(),
                "no HTTP intent".to_owned(),
                actual_list(),
            ));
        }
        if let Some(expected) = &e.intents {
            if expected.len() != http.len() {
                return Err(fail(
                    format!(
                        "intents ({} expected, {} emitted)",
                        expected.len(),
                        http.len()
                    ),
                    serde_json::to_string(expected).unwrap_or_default(),
                    actual_list(),
                ));
            }
            for (i, (want, got)) in expected.iter().zip(&http).enumerate() {
                if let Some((field, expected, actual)) = intent_mismatch(want, &intent_value(got)) {
                    return Err(fail(
                        format!("intent {} of {}: {field}", i + 1, http.len()),
                        expected,
                        actual,
                    ));
                }
            }
        }
        if let Some(expected) = &e.aborts {
            let aborted: Vec<u64> = self
                .window_intents
                .iter()
                .filter_map(|i| match i {
                    Intent::Abort { id } => Some(id.0),
                    _ => None,
                })
                .collect();
            if *expected != aborted {
                return Err(fail(
                    "aborts".to_owned(),
                    compact(&Value::from(expected.clone())),
                    compact(&Value::from(aborted)),
                ));
            }
        }
        if let Some(expected) = &e.events {
            let events: Vec<Value> = self
                .window_events
                .iter()
                .map(|ev| serde_json::to_value(ev).unwrap_or(Value::Null))
                .collect();
            if expected.len() != events.len() {
                return Err(fail(
                    format!(
                        "events ({} expected, {} emitted)",
                        expected.len(),
                        events.len()
                    ),
                    serde_json::to_string(expected).unwrap_or_default(),
                    compact(&Value::Array(events)),
                ));
            }
            for (i, (want, got)) in expected.iter().zip(&events).enumerate() {
                for (path, value) in want {
                    let actual = lookup(got, path);
                    if !matches_optional(value, actual) {
                        return Err(fail(
                            format!(
                                "event {} of {}: {path} (event {})",
                                i + 1,
                                events.len(),
                                compact(got)
                            ),
                            compact(value),
                            shown(actual),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// An HTTP intent as expectations see it: id, call, method, base, path, query, body.
fn intent_value(intent: &Intent) -> Value {
    let Intent::Http { id, call, request } = intent else {
        return Value::Null;
    };
    let mut m = Map::new();
    m.insert("id".into(), Value::from(id.0));
    let call = serde_json::to_value(call)
        .ok()
        .and_then(|c| c.get("call").cloned())
        .unwrap_or(Value::Null);
    m.insert("call".into(), call);
    m.insert("method".into(), Value::from(request.method.as_str()));
    m.insert("base".into(), Value::from(request.base.clone()));
    m.insert("path".into(), Value::from(request.path.clone()));
    if !request.query.is_empty() {
        let mut q = Map::new();
        for (k, v) in &request.query {
            q.entry(k.clone()).or_insert_with(|| Value::from(v.clone()));
        }
        m.insert("query".into(), Value::Object(q));
    }
    if let Some(body) = &request.body {
        let body = serde_json::from_slice::<Value>(body)
            .unwrap_or_else(|_| Value::from(String::from_utf8_lossy(body).into_owned()));
        m.insert("body".into(), body);
    }
    Value::Object(m)
}

/// The first field of `want` that `got` does not match: (field, expected, actual).
fn intent_mismatch(want: &IntentExpectation, got: &Value) -> Option<(String, String, String)> {
    let mut checks: Vec<(String, Value, Option<&Value>)> = Vec::new();
    let field = |name: &str| got.get(name);
    checks.push((
        "method".into(),
        Value::from(want.method.clone()),
        field("method"),
    ));
    checks.push(("path".into(), Value::from(want.path.clone()), field("path")));
    if let Some(id) = want.id {
        checks.push(("id".into(), Value::from(id), field("id")));
    }
    if let Some(call) = &want.call {
        checks.push(("call".into(), Value::from(call.clone()), field("call")));
    }
    if let Some(base) = &want.base {
        checks.push(("base".into(), Value::from(base.clone()), field("base")));
    }
    for (k, v) in want.query.iter().flatten() {
        let actual = field("query").and_then(|q| q.get(k));
        checks.push((format!("query.{k}"), Value::from(v.clone()), actual));
    }
    let body = field("body").unwrap_or(&Value::Null);
    let mut body_checks = want
        .body
        .iter()
        .flatten()
        .map(|(path, v)| (format!("body.{path}"), v.clone(), lookup(body, path)));
    checks
        .into_iter()
        .find(|(_, expected, actual)| *actual != Some(expected))
        .or_else(|| body_checks.find(|(_, expected, actual)| !matches_optional(expected, *actual)))
        .map(|(name, expected, actual)| {
            let mut shown_actual = shown(actual);
            if name == "method" || name == "path" {
                // Which request it was instead.
                shown_actual = format!("{shown_actual} (intent {})", compact(got));
            }
            (name, compact(&expected), shown_actual)
        })
}

/// A body or event field matches: equal, or `null` for a field left out (the engine omits empty
/// optional fields there). Snapshot fields are always present and compared strictly.
fn matches_optional(expected: &Value, actual: Option<&Value>) -> bool {
    match actual {
        Some(actual) => actual == expected,
        None => expected.is_null(),
    }
}

/// Compact JSON.
fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// An actual value, or that there is none.
fn shown(v: Option<&Value>) -> String {
    v.map(compact)
        .unwrap_or_else(|| "nothing (no such field)".to_owned())
}

fn expect_keys(e: &Expectation) -> String {
    let mut keys = Vec::new();
    if e.snapshot.is_some() {
        keys.push("snapshot");
    }
    if e.intents.is_some() {
        keys.push("intents");
    }
    if e.no_intents {
        keys.push("noIntents");
    }
    if e.aborts.is_some() {
        keys.push("aborts");
    }
    if e.events.is_some() {
        keys.push("events");
    }
    if keys.is_empty() {
        "nothing".to_owned()
    } else {
        keys.join(", ")
    }
}

/// At most `max` characters of `s`, with an ellipsis when cut.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(max).collect();
        out.push('…');
        out
    }
}

/// Appends `clip(&format!("{s:?}"), max)` to `out` without escaping all of a long `s`: `str`'s
/// `Debug` escapes character by character (`char::escape_debug`, except that `'` is kept: it is printable ASCII), so
/// the first `max` characters of its form come from the first `max` characters of `s`.
fn debug_clipped(out: &mut String, s: &str, max: usize) {
    let mut left = max;
    let mut push = |out: &mut String, c: char| {
        if left == 0 {
            return false;
        }
        left -= 1;
        out.push(c);
        true
    };
    push(out, '"');
    for c in s.chars() {
        let written = if c == ' ' || (c.is_ascii_graphic() && c != '"' && c != '\\') {
            push(out, c)
        } else {
            c.escape_debug().all(|e| push(out, e))
        };
        if !written {
            out.push('…');
            return;
        }
    }
    if !push(out, '"') {
        out.push('…');
    }
}

fn step_summary(step: &Step) -> String {
    match step {
        Step::Input(input) => {
            let v = serde_json::to_value(input).unwrap_or(Value::Null);
            let name = v.get("input").and_then(Value::as_str).unwrap_or("?");
            let value = v.get("value");
            let text = match (name, value) {
                ("command", Some(Value::Object(c))) => {
                    let command = c.get("command").and_then(Value::as_str).unwrap_or("?");
                    let mut rest = c.clone();
                    rest.remove("command");
                    if rest.is_empty() {
                        format!("command {command}")
                    } else {
                        format!("command {command} {}", compact(&Value::Object(rest)))
                    }
                }
                (_, Some(value)) => format!("input {name} {}", compact(value)),
                (_, None) => format!("input {name}"),
            };
            clip(&text, 160)
        }
        Step::Head { id, head } => format!(
            "head {id} {}{}",
            head.status,
            head.content_type
                .as_deref()
                .map(|c| format!(" {c}"))
                .unwrap_or_default()
        ),
        Step::Chunk { id, bytes } => match std::str::from_utf8(bytes) {
            Ok(text) => {
                let mut out = String::with_capacity(128);
                let _ = write!(out, "chunk {id} ");
                debug_clipped(&mut out, text, 100);
                let _ = write!(out, " ({} bytes)", bytes.len());
                out
            }
            Err(_) => format!("chunk {id} ({} bytes, binary)", bytes.len()),
        },
        Step::End { id } => format!("end {id}"),
        Step::Failure { id, failure } => format!(
            "failure {id} {} {:?}",
            serde_json::to_value(failure.kind)
                .ok()
                .and_then(|k| k.as_str().map(str::to_owned))
                .unwrap_or_default(),
            failure.message
        ),
        Step::Timeout => "timeout".to_owned(),
    }
}

fn intent_line(intent: &Intent) -> String {
    match intent {
        Intent::Http { id, request, .. } => {
            let body = request
                .body
                .as_ref()
                .map(|b| {
                    let text = serde_json::from_slice::<Value>(b)
                        .map(|v| compact(&v))
                        .unwrap_or_else(|_| String::from_utf8_lossy(b).into_owned());
                    format!(" {}", clip(&text, 120))
                })
                .unwrap_or_default();
            format!(
                "-> {id} {} {}{body}",
                request.method.as_str(),
                request.url()
            )
        }
        Intent::Abort { id } => format!("-> abort {id}"),
        Intent::Storage(StorageRequest::Load { key }) => format!("-> storage load {key}"),
        Intent::Storage(StorageRequest::Save { key, sessions }) => {
            let uids: Vec<&str> = sessions.iter().map(|s| s.uid.as_str()).collect();
            format!("-> storage save {key} [{}]", uids.join(", "))
        }
        Intent::Storage(StorageRequest::LoadQueue { key }) => {
            format!("-> storage load-queue {key}")
        }
        Intent::Storage(StorageRequest::SaveQueue { key, rows }) => {
            format!("-> storage save-queue {key} ({} rows)", rows.len())
        }
        Intent::Storage(StorageRequest::RemoveQueue { key }) => {
            format!("-> storage remove-queue {key}")
        }
        Intent::Storage(StorageRequest::LoadSelection { key }) => {
            format!("-> storage load-selection {key}")
        }
        Intent::Storage(StorageRequest::SaveSelection { key, session_uid }) => {
            format!("-> storage save-selection {key} {session_uid}")
        }
    }
}

/// A changed field's value, summarized where it is long (the session list by uids, the thread
/// by message ids, the detail by its status).
fn change_value(name: &str, v: &Value) -> String {
    let ids = |items: &Vec<Value>, key: &str| {
        let ids: Vec<&str> = items
            .iter()
            .map(|item| item.get(key).and_then(Value::as_str).unwrap_or("?"))
            .collect();
        format!("[{}]", ids.join(","))
    };
    let text = match (name, v) {
        ("agentSessions", Value::Array(items)) => ids(items, "uid"),
        ("thread", Value::Array(items)) => ids(items, "id"),
        ("activeSessionDetail", Value::Object(d)) => format!(
            "{{status:{},error:{}}}",
            d.get("status").map(compact).unwrap_or_default(),
            d.get("error").map(compact).unwrap_or_default()
        ),
        _ => compact(v),
    };
    clip(&text, 200)
}

impl TimelineEntry {
    /// The entry as timeline text: its line, offset (ms) and summary, then the intents (`->`),
    /// events (`!!`) and changed snapshot fields (`=`) that followed, one per line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let at = match self.kind {
            EntryKind::Start | EntryKind::Step => self.at.to_string(),
            EntryKind::Expect | EntryKind::Note => String::new(),
        };
        let _ = writeln!(out, "{:>5} {:>9}  {}", self.line, at, self.what);
        let pad = " ".repeat(18);
        for i in &self.intents {
            let _ = writeln!(out, "{pad}{}", intent_line(i));
        }
        for ev in &self.events {
            let v = serde_json::to_value(ev).unwrap_or(Value::Null);
            let _ = writeln!(out, "{pad}!! {}", clip(&compact(&v), 200));
        }
        for (name, v) in &self.changes {
            let _ = writeln!(out, "{pad}= {name}={}", change_value(name, v));
        }
        out
    }
}

impl ReplayReport {
    /// The readable timeline: a column header, every entry ([`TimelineEntry::render`]) and a
    /// closing count.
    pub fn timeline(&self) -> String {
        let mut out = String::from(TIMELINE_HEADER);
        out.push('\n');
        for e in &self.entries {
            out.push_str(&e.render());
        }
        let _ = writeln!(
            out,
            "{} records replayed, {} expectations held",
            self.entries
                .iter()
                .filter(|e| e.kind == EntryKind::Step)
                .count(),
            self.expectations
        );
        out
    }
}

/// The timeline's column header.
pub const TIMELINE_HEADER: &str = " line     at ms  record";

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunk summary escapes only the start of a chunk, and reads the same as clipping the
    /// whole chunk's `Debug` form.
    #[test]
    fn debug_clipped_is_the_clipped_debug_form() {
        let long = "data: {\"delta\":\"x\"}\n\n".repeat(20);
        let samples = [
            "",
            "plain",
            "it's \"quoted\" \\ back\tslash\r\n",
            "\u{301}accent first, then e\u{301} and \u{200b} and \u{7f}\u{0}",
            "ünïcödé 日本語 🎉 \u{feff}",
            long.as_str(),
        ];
        for s in samples {
            for max in [0, 1, 2, 5, 10, 11, 12, 100] {
                let mut out = String::new();
                debug_clipped(&mut out, s, max);
                assert_eq!(out, clip(&format!("{s:?}"), max), "{s:?} at {max}");
            }
        }
        // Exactly at the limit: no ellipsis.
        let mut out = String::new();
        debug_clipped(&mut out, "abc", 5);
        assert_eq!(out, "\"abc\"");
    }
}

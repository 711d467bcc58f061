//! The engine under replay: steps fed in, expectations checked, entries kept.

use super::expect::{intent_mismatch, intent_value, matches_optional, shown};
use super::timeline::step_summary;
use super::*;
use litemap::LiteMap;

/// The engine under replay and what has been seen.
pub(super) struct Run {
    pub(super) engine: Engine,
    pub(super) start: Time,
    pub(super) last: Offset,
    pub(super) issued: LiteMap<u64, ()>,
    /// The top-level snapshot fields as of the last record, as compact JSON, when entries list
    /// the changes ([`ReplayOptions::changes`]).
    pub(super) fields: Option<Fields>,
    /// What was emitted since the previous checkpoint.
    pub(super) window_intents: Vec<Intent>,
    pub(super) window_events: Vec<Event>,
    /// The previous record was an `expect`: the next input opens a new window.
    pub(super) checkpoint: bool,
    pub(super) entries: Vec<TimelineEntry>,
    /// Whether entries are kept ([`ReplayOptions::entries`]).
    pub(super) keep_entries: bool,
    pub(super) expectations: usize,
}

impl Run {
    pub(super) fn new(engine: Engine, start: Time, options: ReplayOptions) -> Run {
        let fields = options.changes.then(|| Fields::of(engine.snapshot()));
        Run {
            start,
            engine,
            last: Offset::ZERO,
            issued: LiteMap::new(),
            fields,
            window_intents: Vec::new(),
            window_events: Vec::new(),
            checkpoint: false,
            entries: Vec::new(),
            keep_entries: options.entries,
            expectations: 0,
        }
    }

    pub(super) fn entry(&self, line: usize, kind: EntryKind, what: String) -> TimelineEntry {
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
    pub(super) fn record(&mut self, line: usize, kind: EntryKind, what: String) {
        if !self.keep_entries {
            while let Some(intent) = self.engine.poll_intent() {
                if let Intent::Http { id, .. } = &intent {
                    self.issued.insert(id.0, ());
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
                self.issued.insert(id.0, ());
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

    pub(super) fn step(&mut self, line: usize, at: Offset, step: Step) -> Result<(), ReplayError> {
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
            && !self.issued.contains_key(&id.0)
        {
            return Err(ReplayError::UnknownRequest {
                line,
                id: id.0,
                issued: match (
                    self.issued.first().map(|(k, _)| k),
                    self.issued.last().map(|(k, _)| k),
                ) {
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

    pub(super) fn check(&self, line: usize, e: &Expectation) -> Result<(), ReplayError> {
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

//! [`TraceRecorder`]: writes a trace from the calls a shell makes, with credentials redacted.

use crate::time::Time;
use litemap::LiteMap;

use crate::config::Config;
use crate::input::Input;
use crate::intent::{ApiCall, Intent, RequestId};
use crate::response::{ResponseHead, TransportFailure};

use super::redact::Redactor;
use super::{Expectation, FORMAT, Header, Offset, Record, Step, TraceConfig, VERSION};

/// Writes a trace: the header, then one record per call the shell makes on the engine.
///
/// Call it alongside the engine, with the same arguments and the same `now`:
/// [`TraceRecorder::input`] before [`crate::Engine::handle_input`], [`TraceRecorder::head`],
/// [`TraceRecorder::chunk`], [`TraceRecorder::end`], [`TraceRecorder::failure`] and
/// [`TraceRecorder::timeout`] likewise, and [`TraceRecorder::intent`] for every intent drained
/// from [`crate::Engine::poll_intent`] (before its request is sent). Take the text with
/// [`TraceRecorder::take`] as often as you like (after each step, to stream it to a file).
///
/// Redaction: no credential is written.
/// - `Person.token` is a [`crate::Secret`], which serializes as `"[redacted]"`.
/// - The answer to a resolve-runtime-access call (known from its intent) has the string value
///   of every `"token"` key replaced by `"[redacted]"`, chunk by chunk, across chunk boundaries;
///   every other byte is kept.
/// - Request headers (`Authorization`) are outputs and never recorded.
///
/// A replay of a recorded trace therefore runs with the placeholder `[redacted]` as the
/// platform and runtime tokens. That changes nothing a trace checks: tokens only go into
/// request headers, which are neither compared nor shown. (One corner: a runtime-access answer
/// near [`Config::max_body_bytes`] changes length when redacted.)
///
/// ```
/// use std::time::Duration;
/// use engine_core::{Config, Engine, Input, Person, Secret, Time};
/// use engine_core::trace::TraceRecorder;
///
/// let start = Time::from_micros(5_000_000); // any origin the host chooses
/// let config = Config::new("https://platform.test").unwrap().with_seed(7);
/// let mut engine = Engine::new(config.clone(), start);
/// let mut recorder = TraceRecorder::new(&config, start);
/// let now = start + Duration::from_millis(15);
/// let person = Input::Person(Person::new("user-1", Secret::new("platform-secret")));
/// recorder.input(&person, now);
/// engine.handle_input(person, now);
/// while let Some(intent) = engine.poll_intent() {
///     recorder.intent(&intent);
/// }
/// let trace = recorder.take();
/// assert!(trace.starts_with(r#"{"trace":"agent-chat-engine","version":1,"#));
/// assert!(trace.contains(r#"{"at":15,"input":{"input":"person","#));
/// assert!(!trace.contains("platform-secret"));
/// assert!(engine_core::trace::replay(&trace).is_ok());
/// ```
#[derive(Debug)]
pub struct TraceRecorder {
    start: Time,
    last: Offset,
    out: String,
    /// Resolve-runtime-access requests: their answers are redacted.
    runtime_access: LiteMap<RequestId, ()>,
    /// The redaction state of each runtime-access answer under way.
    redactors: LiteMap<RequestId, Redactor>,
    /// Fingerprints (not the values) of the platform tokens seen, in order: a token is written
    /// as `[redacted-N]`, so a replay still sees when it changed.
    tokens: Vec<u64>,
}

impl TraceRecorder {
    /// A recorder for an engine built with `config` at `start` (the engine's time origin); the
    /// header is written at once.
    pub fn new(config: &Config, start: Time) -> TraceRecorder {
        let header = Header {
            trace: FORMAT.to_owned(),
            version: VERSION,
            config: TraceConfig::from_config(config),
            engine: Some(format!("engine-core {}", env!("CARGO_PKG_VERSION"))),
        };
        let mut recorder = TraceRecorder {
            start,
            last: Offset::ZERO,
            out: String::new(),
            runtime_access: LiteMap::new(),
            redactors: LiteMap::new(),
            tokens: Vec::new(),
        };
        recorder.push(&Record::Header(header));
        recorder
    }

    fn push(&mut self, record: &Record) {
        self.out.push_str(&record.to_line());
        self.out.push('\n');
    }

    /// The offset of `now`; never earlier than the previous record's (the engine reads an
    /// earlier `now` as the last one, and so does the trace).
    fn at(&mut self, now: Time) -> Offset {
        let at = Offset::from_duration(now.saturating_duration_since(self.start)).max(self.last);
        self.last = at;
        at
    }

    fn step(&mut self, now: Time, step: Step) {
        let at = self.at(now);
        self.push(&Record::Step { at, step });
    }

    /// A host input or command. The person's token is written as `[redacted-N]`, N counting the
    /// distinct tokens seen, so a token refresh replays as one.
    pub fn input(&mut self, input: &Input, now: Time) {
        let at = self.at(now);
        let record = Record::Step {
            at,
            step: Step::Input(input.clone()),
        };
        let mut line = record.to_line();
        if let Input::Person(person) = input
            && let Some(token) = &person.token
        {
            let n = self.token_number(token.expose());
            if let Ok(mut value) = serde_json::from_str::<serde_json::Value>(&line)
                && let Some(slot) = value.pointer_mut("/input/value/token")
            {
                *slot = serde_json::Value::String(format!("[redacted-{n}]"));
                line = value.to_string();
            }
        }
        self.out.push_str(&line);
        self.out.push('\n');
    }

    /// The number of this token among those seen (1-based).
    fn token_number(&mut self, token: &str) -> usize {
        use std::hash::{Hash, Hasher};
        // SipHash with fixed keys: deterministic, and the token itself is not kept.
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        token.hash(&mut hasher);
        let fingerprint = hasher.finish();
        match self.tokens.iter().position(|t| *t == fingerprint) {
            Some(i) => i + 1,
            None => {
                self.tokens.push(fingerprint);
                self.tokens.len()
            }
        }
    }

    /// An intent drained from the engine: tells the recorder which requests' answers carry a
    /// credential. Writes nothing (intents are outputs; a replay emits them again).
    pub fn intent(&mut self, intent: &Intent) {
        if let Intent::Http {
            id,
            call: ApiCall::ResolveRuntimeAccess { .. },
            ..
        } = intent
        {
            self.runtime_access.insert(*id, ());
        }
    }

    /// A response head.
    pub fn head(&mut self, id: RequestId, head: &ResponseHead, now: Time) {
        self.step(
            now,
            Step::Head {
                id,
                head: head.clone(),
            },
        );
    }

    /// A piece of a body; redacted when it belongs to a runtime-access answer.
    pub fn chunk(&mut self, id: RequestId, chunk: &[u8], now: Time) {
        let bytes = if self.runtime_access.contains_key(&id) {
            self.redactors.entry(id).or_default().feed(chunk)
        } else {
            chunk.to_vec()
        };
        self.step(now, Step::Chunk { id, bytes });
    }

    /// The end of a body.
    pub fn end(&mut self, id: RequestId, now: Time) {
        self.redactors.remove(&id);
        self.step(now, Step::End { id });
    }

    /// A transport failure.
    pub fn failure(&mut self, id: RequestId, failure: &TransportFailure, now: Time) {
        self.redactors.remove(&id);
        self.step(
            now,
            Step::Failure {
                id,
                failure: failure.clone(),
            },
        );
    }

    /// A timer fired ([`crate::Engine::handle_timeout`]).
    pub fn timeout(&mut self, now: Time) {
        self.step(now, Step::Timeout);
    }

    /// An `expect` record, checked at this point on replay.
    pub fn expect(&mut self, expectation: &Expectation) {
        self.push(&Record::Expect(expectation.clone()));
    }

    /// A `note` record (a comment).
    pub fn note(&mut self, text: &str) {
        self.push(&Record::Note(text.to_owned()));
    }

    /// The text written and not yet taken.
    pub fn text(&self) -> &str {
        &self.out
    }

    /// Takes the text written since the last call: whole lines, each ending in `\n`.
    pub fn take(&mut self) -> String {
        std::mem::take(&mut self.out)
    }
}

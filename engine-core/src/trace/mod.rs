//! Recorded traces: a versioned JSON Lines record of everything a shell fed an [`Engine`], with
//! optional expectations, that [`replay`] drives through a fresh engine and checks.
//!
//! A trace is one JSON object per line (the format is documented in full, with an example, in
//! `spec-tests/TRACES.md`):
//!
//! - line 1, the header: `{"trace": "agent-chat-engine", "version": 1, "config": {...}}` with
//!   the engine's [`Config`] (`platformBaseUrl`, `seed`, `startUnixMs`, optional limits);
//! - one record per input to the engine, each at its offset in milliseconds from the engine's
//!   start (`at`): `input` (an [`Input`] in its serde form), `head`, `chunk` (`text` when the
//!   bytes are UTF-8, else `base64`; hand-written traces may give a JSON body as `json`), `end`,
//!   `failure`, `timeout`; request ids are the engine's
//!   [`RequestId`] numbers, which a counter issues, so a replay issues the same ones;
//! - `expect` records, checked where they stand: snapshot fields, the HTTP intents and the
//!   events emitted since the previous checkpoint, the aborted request ids;
//! - `note` records, comments that replay shows and otherwise ignores.
//!
//! [`TraceRecorder`] writes a trace from a shell's calls, with credentials redacted.
//!
//! ```
//! let trace = r#"
//! {"trace": "agent-chat-engine", "version": 1, "config": {"platformBaseUrl": "https://platform.test", "seed": 1}}
//! {"at": 0, "input": {"input": "person", "value": {"userUid": "user-1", "token": "[redacted]"}}}
//! {"at": 0, "input": {"input": "environment_uid", "value": "env-1"}}
//! {"at": 0, "input": {"input": "is_visible", "value": true}}
//! {"expect": {"intents": [{"method": "GET", "path": "/api/v1/agent-sessions/", "query": {"organization_environment_uid": "env-1"}}, {"method": "GET", "path": "/api/v1/model-providers/"}]}}
//! {"at": 40, "head": {"id": 1, "status": 200, "contentType": "application/json"}}
//! {"at": 40, "chunk": {"id": 1, "text": "{\"count\": 0, \"next\": null, \"previous\": null, \"results\": []}"}}
//! {"at": 40, "end": {"id": 1}}
//! {"expect": {"snapshot": {"isLoadingLatestSessions": false, "agentSessions": []}, "noIntents": true}}
//! "#;
//! let report = engine_core::trace::replay(trace)?;
//! assert_eq!(report.expectations, 2);
//! assert_eq!(report.snapshot.current_session_id, None);
//! assert!(report.timeline().contains("GET https://platform.test/api/v1/model-providers/"));
//! # Ok::<(), engine_core::trace::ReplayError>(())
//! ```
//!
//! [`Engine`]: crate::Engine

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::config::{Config, ConfigError};
use crate::input::Input;
use crate::intent::RequestId;
use crate::model::base64;
use crate::response::{FailureKind, ResponseHead, TransportFailure};

mod fields;
mod recorder;
mod redact;
mod replay;

pub use recorder::TraceRecorder;
pub use replay::{
    EntryKind, ReplayError, ReplayOptions, ReplayReport, TIMELINE_HEADER, TimelineEntry, replay,
    replay_with, replay_with_options,
};

/// The header's `trace` value.
pub const FORMAT: &str = "agent-chat-engine";
/// The format version this engine writes and reads.
pub const VERSION: u32 = 1;

/// The first line of a trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// Always [`FORMAT`].
    pub trace: String,
    /// The format version ([`VERSION`]).
    pub version: u32,
    /// The engine's configuration.
    pub config: TraceConfig,
    /// The engine that wrote the trace, for information (`engine-core 0.1.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
}

/// The header's `config`: a [`Config`] with its defaults spelled out as optional fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceConfig {
    /// [`Config::platform_base_url`].
    pub platform_base_url: String,
    /// [`Config::seed`]; 0 when absent.
    #[serde(default)]
    pub seed: u64,
    /// [`Config::start_unix_ms`]; 0 when absent.
    #[serde(default)]
    pub start_unix_ms: u64,
    /// [`Config::max_body_bytes`]; the default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_body_bytes: Option<usize>,
    /// [`Config::max_answer_bytes`]; the default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_answer_bytes: Option<usize>,
    /// [`Config::max_event_bytes`]; the default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_event_bytes: Option<usize>,
    /// [`Config::platform_sender`]; false when absent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub platform_sender: bool,
}

impl TraceConfig {
    /// Every field of `config`, spelled out.
    pub fn from_config(config: &Config) -> TraceConfig {
        TraceConfig {
            platform_base_url: config.platform_base_url.clone(),
            seed: config.seed,
            start_unix_ms: config.start_unix_ms,
            max_body_bytes: Some(config.max_body_bytes),
            max_answer_bytes: Some(config.max_answer_bytes),
            max_event_bytes: Some(config.max_event_bytes),
            platform_sender: config.platform_sender,
        }
    }

    /// The engine configuration; fails when the platform base is not an absolute address.
    pub fn to_config(&self) -> Result<Config, ConfigError> {
        let mut config = Config::new(&self.platform_base_url)?.with_seed(self.seed);
        config.start_unix_ms = self.start_unix_ms;
        config.platform_sender = self.platform_sender;
        if let Some(v) = self.max_body_bytes {
            config.max_body_bytes = v;
        }
        if let Some(v) = self.max_answer_bytes {
            config.max_answer_bytes = v;
        }
        if let Some(v) = self.max_event_bytes {
            config.max_event_bytes = v;
        }
        Ok(config)
    }
}

/// A record's `at`: the time since the engine's start, in milliseconds with up to three decimals
/// (microsecond precision, so a replay sees the same order and the same elapsed times as the
/// recorded run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Offset(u64);

impl Offset {
    /// The engine's start.
    pub const ZERO: Offset = Offset(0);

    /// Whole milliseconds.
    pub fn from_millis(ms: u64) -> Offset {
        Offset(ms.saturating_mul(1000))
    }

    /// A duration, truncated to microseconds.
    pub fn from_duration(d: Duration) -> Offset {
        Offset(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
    }

    /// The offset as a duration.
    pub fn as_duration(self) -> Duration {
        Duration::from_micros(self.0)
    }

    /// The offset in microseconds.
    pub fn as_micros(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Offset {
    /// Milliseconds: `120`, or `120.5` with a fraction.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (ms, us) = (self.0 / 1000, self.0 % 1000);
        if us == 0 {
            write!(f, "{ms}")
        } else {
            let frac = format!("{us:03}");
            write!(f, "{ms}.{}", frac.trim_end_matches('0'))
        }
    }
}

impl Serialize for Offset {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_multiple_of(1000) {
            s.serialize_u64(self.0 / 1000)
        } else {
            // Exact for any offset under 2^53 µs (285 years).
            s.serialize_f64(self.0 as f64 / 1000.0)
        }
    }
}

impl<'de> Deserialize<'de> for Offset {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Offset, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Offset;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative number of milliseconds")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Offset, E> {
                v.checked_mul(1000)
                    .map(Offset)
                    .ok_or_else(|| E::custom("offset out of range"))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Offset, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom("an offset is a non-negative number of milliseconds"))
                    .and_then(|v| self.visit_u64(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Offset, E> {
                if !v.is_finite() || v < 0.0 {
                    return Err(E::custom(
                        "an offset is a non-negative number of milliseconds",
                    ));
                }
                let micros = (v * 1000.0).round();
                if micros > 9.0e15 {
                    return Err(E::custom("offset out of range"));
                }
                Ok(Offset(micros as u64))
            }
        }
        d.deserialize_any(V)
    }
}

/// One input to the engine, as a trace records it.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A host input or command ([`crate::Engine::handle_input`]).
    Input(Input),
    /// A response head ([`crate::Engine::handle_response`]).
    Head {
        /// The request.
        id: RequestId,
        /// The head.
        head: ResponseHead,
    },
    /// A piece of a body ([`crate::Engine::handle_body_chunk`]).
    Chunk {
        /// The request.
        id: RequestId,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// The end of a body ([`crate::Engine::handle_body_end`]).
    End {
        /// The request.
        id: RequestId,
    },
    /// A transport failure ([`crate::Engine::handle_failure`]).
    Failure {
        /// The request.
        id: RequestId,
        /// The failure.
        failure: TransportFailure,
    },
    /// A timer fired ([`crate::Engine::handle_timeout`]).
    Timeout,
}

/// A check at one point of a trace. Every field present is checked.
///
/// `intents`, `noIntents`, `aborts` and `events` look at what the engine emitted since the
/// previous checkpoint (a run of consecutive `expect` records is one checkpoint) or since the
/// start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Expectation {
    /// Snapshot fields by camelCase name or dotted path (`activeSessionReadiness.status`,
    /// `thread.2.role`); each value must equal the snapshot's exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Map<String, Value>>,
    /// The HTTP intents emitted, all of them, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intents: Option<Vec<IntentExpectation>>,
    /// No HTTP intent was emitted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_intents: bool,
    /// The request ids aborted, all of them, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborts: Option<Vec<u64>>,
    /// The events emitted, all of them, in order; each lists some fields of the event's serde
    /// form (`{"event": "notify", "title": "..."}`) by name or dotted path (`null` also matches
    /// a field left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<Map<String, Value>>>,
}

/// One expected HTTP intent. `method` and `path` must equal; every other field present must too.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IntentExpectation {
    /// The request id the engine gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// The call in domain terms ([`crate::ApiCall`]'s serde tag: `get_session_detail`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// `GET`, `POST`, `PATCH` or `DELETE`.
    pub method: String,
    /// The base: the platform base, or the runtime's `rpc_url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The path, percent-encoded as sent.
    pub path: String,
    /// Query parameters that must be present with these values (others are ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<BTreeMap<String, String>>,
    /// Body fields, by name or dotted path, that must equal (others are ignored); `null` also
    /// matches a field left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Map<String, Value>>,
}

/// One line of a trace.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// The header (first line).
    Header(Header),
    /// An input to the engine at an offset.
    Step {
        /// Time since the engine's start.
        at: Offset,
        /// The input.
        step: Step,
    },
    /// A check.
    Expect(Expectation),
    /// A comment.
    Note(String),
}

/// Why a line could not be read (the replay adds its number).
#[derive(Debug, Clone)]
pub(crate) enum LineError {
    Malformed(String),
    /// What serde refused, and serde's error (the replay keeps it as its source).
    Json(String, std::sync::Arc<serde_json::Error>),
    UnknownKind(String),
}

impl LineError {
    fn json(context: Option<&str>, e: serde_json::Error) -> LineError {
        let message = match context {
            Some(kind) => format!("{kind}: {e}"),
            None => e.to_string(),
        };
        LineError::Json(message, std::sync::Arc::new(e))
    }
}

/// The record kinds that carry an input, in the order they are listed in messages.
const STEP_KINDS: [&str; 6] = ["input", "head", "chunk", "end", "failure", "timeout"];

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HeadPayload {
    id: u64,
    status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    content_type: Option<String>,
    /// `X-Agent-Session-Uid` (ADR 099), when the answer had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    agent_session_uid: Option<String>,
    /// The status line's reason phrase, when the shell gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// `ETag`, when the answer had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    etag: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChunkPayload {
    id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    base64: Option<String>,
    /// A JSON body written as a value (for hand-written traces); fed as its compact text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    json: Option<Value>,
}

/// `{"at": .., "chunk": {"id": .., "text": ..}}` and nothing else.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChunkLine<'a> {
    at: Offset,
    #[serde(borrow)]
    chunk: TextChunk<'a>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TextChunk<'a> {
    id: u64,
    #[serde(borrow)]
    text: std::borrow::Cow<'a, str>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct IdPayload {
    id: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FailurePayload {
    id: u64,
    kind: FailureKind,
    #[serde(default)]
    message: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EmptyPayload {}

fn payload<T: for<'de> Deserialize<'de>>(kind: &str, v: Value) -> Result<T, LineError> {
    serde_json::from_value(v).map_err(|e| LineError::json(Some(kind), e))
}

impl Record {
    /// Reads one line; `None` for a blank line.
    pub(crate) fn parse_line(line: &str) -> Result<Option<Record>, LineError> {
        // Most records of a long answer are the recorder's text chunks: read in one typed pass.
        // Any other line, or one this reading refuses, takes the general path below (which
        // reads a text chunk to the same record, and says what is wrong with a bad one).
        if let Ok(ChunkLine { at, chunk }) = serde_json::from_str::<ChunkLine<'_>>(line) {
            return Ok(Some(Record::Step {
                at,
                step: Step::Chunk {
                    id: RequestId(chunk.id),
                    bytes: chunk.text.into_owned().into_bytes(),
                },
            }));
        }
        if line.trim().is_empty() {
            return Ok(None);
        }
        let value: Value = serde_json::from_str(line).map_err(|e| LineError::json(None, e))?;
        let Value::Object(mut map) = value else {
            return Err(LineError::Malformed("a record is a JSON object".to_owned()));
        };
        if map.contains_key("trace") {
            let header = payload("header", Value::Object(map))?;
            return Ok(Some(Record::Header(header)));
        }
        let note = map.remove("note");
        let at = map.remove("at");
        let mut kinds = map.keys().cloned();
        let (Some(kind), extra) = (kinds.next(), kinds.next()) else {
            return match (note, at) {
                (Some(Value::String(text)), None) => Ok(Some(Record::Note(text))),
                (Some(_), None) => Err(LineError::Malformed("note: a note is a string".into())),
                _ => Err(LineError::Malformed(format!(
                    "a record needs one of {}, expect or note",
                    STEP_KINDS.join(", ")
                ))),
            };
        };
        for k in [&kind].into_iter().chain(extra.as_ref()) {
            if !STEP_KINDS.contains(&k.as_str()) && k != "expect" {
                return Err(LineError::UnknownKind(k.clone()));
            }
        }
        if let Some(extra) = extra {
            return Err(LineError::Malformed(format!(
                "one kind per record, found {kind:?} and {extra:?}"
            )));
        }
        if let Some(n) = note
            && !n.is_string()
        {
            return Err(LineError::Malformed("note: a note is a string".into()));
        }
        let body = map.remove(&kind).unwrap_or(Value::Null);
        if kind == "expect" {
            if at.is_some() {
                return Err(LineError::Malformed(
                    "an expect record has no \"at\": it checks the state where it stands".into(),
                ));
            }
            return Ok(Some(Record::Expect(payload("expect", body)?)));
        }
        let at: Offset = match at {
            Some(at) => payload("at", at)?,
            None => {
                return Err(LineError::Malformed(format!(
                    "a {kind} record needs its offset \"at\" (milliseconds since the start)"
                )));
            }
        };
        let step = match kind.as_str() {
            "input" => Step::Input(payload("input", body)?),
            "head" => {
                let p: HeadPayload = payload("head", body)?;
                Step::Head {
                    id: RequestId(p.id),
                    head: ResponseHead {
                        agent_session_uid: p.agent_session_uid,
                        reason: p.reason,
                        etag: p.etag,
                        ..ResponseHead::new(p.status, p.content_type)
                    },
                }
            }
            "chunk" => {
                let p: ChunkPayload = payload("chunk", body)?;
                let bytes = match (p.text, p.base64, p.json) {
                    (Some(text), None, None) => text.into_bytes(),
                    (None, Some(b64), None) => base64::decode(&b64)
                        .map_err(|e| LineError::Malformed(format!("chunk: {e}")))?,
                    (None, None, Some(json)) => json.to_string().into_bytes(),
                    _ => {
                        return Err(LineError::Malformed(
                            "chunk: exactly one of \"text\", \"base64\" and \"json\"".into(),
                        ));
                    }
                };
                Step::Chunk {
                    id: RequestId(p.id),
                    bytes,
                }
            }
            "end" => Step::End {
                id: RequestId(payload::<IdPayload>("end", body)?.id),
            },
            "failure" => {
                let p: FailurePayload = payload("failure", body)?;
                Step::Failure {
                    id: RequestId(p.id),
                    failure: TransportFailure {
                        kind: p.kind,
                        message: p.message,
                    },
                }
            }
            _ => {
                payload::<EmptyPayload>("timeout", body)?;
                Step::Timeout
            }
        };
        Ok(Some(Record::Step { at, step }))
    }

    /// The record as one line of JSON (no newline).
    pub fn to_line(&self) -> String {
        let result = match self {
            Record::Header(h) => serde_json::to_string(h),
            Record::Expect(e) => serde_json::to_string(&ExpectLine { expect: e }),
            Record::Note(n) => serde_json::to_string(&NoteLine { note: n }),
            Record::Step { at, step } => {
                let at = *at;
                match step {
                    Step::Input(input) => serde_json::to_string(&StepLine {
                        at,
                        kind: StepOut::Input(input),
                    }),
                    Step::Head { id, head } => serde_json::to_string(&StepLine {
                        at,
                        kind: StepOut::Head(HeadPayload {
                            id: id.0,
                            status: head.status,
                            content_type: head.content_type.clone(),
                            agent_session_uid: head.agent_session_uid.clone(),
                            reason: head.reason.clone(),
                            etag: head.etag.clone(),
                        }),
                    }),
                    Step::Chunk { id, bytes } => {
                        let (text, base64) = match std::str::from_utf8(bytes) {
                            Ok(t) => (Some(t.to_owned()), None),
                            Err(_) => (None, Some(base64::encode(bytes))),
                        };
                        serde_json::to_string(&StepLine {
                            at,
                            kind: StepOut::Chunk(ChunkPayload {
                                id: id.0,
                                text,
                                base64,
                                json: None,
                            }),
                        })
                    }
                    Step::End { id } => serde_json::to_string(&StepLine {
                        at,
                        kind: StepOut::End(IdPayload { id: id.0 }),
                    }),
                    Step::Failure { id, failure } => serde_json::to_string(&StepLine {
                        at,
                        kind: StepOut::Failure(FailurePayload {
                            id: id.0,
                            kind: failure.kind,
                            message: failure.message.clone(),
                        }),
                    }),
                    Step::Timeout => serde_json::to_string(&StepLine {
                        at,
                        kind: StepOut::Timeout(EmptyPayload {}),
                    }),
                }
            }
        };
        // Serializing these types cannot fail: every map key is a string.
        result.unwrap_or_default()
    }
}

impl std::str::FromStr for Record {
    type Err = String;

    /// Reads one (non-blank) line.
    fn from_str(line: &str) -> Result<Record, String> {
        match Record::parse_line(line) {
            Ok(Some(record)) => Ok(record),
            Ok(None) => Err("a blank line".to_owned()),
            Err(LineError::Malformed(m) | LineError::Json(m, _)) => {
                Err(format!("malformed record: {m}"))
            }
            Err(LineError::UnknownKind(k)) => Err(format!("unknown record kind {k:?}")),
        }
    }
}

#[derive(Serialize)]
struct ExpectLine<'a> {
    expect: &'a Expectation,
}

#[derive(Serialize)]
struct NoteLine<'a> {
    note: &'a str,
}

#[derive(Serialize)]
struct StepLine<'a> {
    at: Offset,
    #[serde(flatten)]
    kind: StepOut<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum StepOut<'a> {
    Input(&'a Input),
    Head(HeadPayload),
    Chunk(ChunkPayload),
    End(IdPayload),
    Failure(FailurePayload),
    Timeout(EmptyPayload),
}

/// The value at a field name or dotted path (`a.b.0.c`): a name present as is wins over a path.
pub(crate) fn lookup<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    if let Some(v) = value.as_object().and_then(|m| m.get(path)) {
        return Some(v);
    }
    let mut current = value;
    for part in path.split('.') {
        current = match current {
            Value::Object(m) => m.get(part)?,
            Value::Array(items) => items.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(current)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests;

//! `engine-web`: `engine-core`'s drive contract for JavaScript hosts, compiled to WebAssembly
//! (`wasm32-unknown-unknown`) with wasm-bindgen. The typed, documented API is the npm package
//! `agent-chat-engine` (`bindings/web/ts/`), which wraps this class; this crate keeps to plain
//! values (numbers, strings, `Uint8Array`s, arrays) so that nothing is made that the host does
//! not read.
//!
//! Times are microseconds on the host's clock and request ids are numbers: both are `f64` on
//! the JavaScript side (exact to 2^53, which a counter and `performance.now() * 1000` never
//! reach). A negative or non-finite time reads as zero; an id that is not a whole number the
//! engine issued names no request (its answer is ignored).
//!
//! The hot path is [`WasmEngine::feed_body_chunks`]: the pieces of a streamed body go in, and
//! the answer's text, reasoning and tool-input deltas come out as plain objects made by one
//! call each (`{type: "delta", kind, index, sessionUid, text}`), the ones a piece appends to
//! one part joined by the engine; no JSON is written or read for them. Every other event
//! comes as its JSON text (the update that ends a text or reasoning part as an object, its text
//! crossing as a string).

use engine_core::{
    AppendKind, AppendedText, Engine, Event, HostConfig, Input, Intent, RequestId, ResponseHead,
    StreamDelta, Time, TransportFailure,
};
use std::sync::Arc;

use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = "
const KINDS = ['text', 'reasoning', 'tool_input', 'tool_input_text'];
export function answerDelta(kind, index, sessionUid, text) {
  return { type: 'delta', kind: KINDS[kind], index, sessionUid, text };
}
export function httpIntent(id, method, url, headers, body, streamed, target, rootRelative) {
  return { kind: 'http', id, method, url, headers, body, streamed, target, rootRelative };
}
export function withText(json, text) {
  const event = JSON.parse(json);
  event.delta.part.text = text;
  return event;
}
export function refusal(message, code) {
  const error = new Error(message);
  error.name = 'EngineError';
  if (code !== undefined) error.code = code;
  return error;
}
")]
extern "C" {
    /// A plain object for a delta: `kind` is `text` (0), `reasoning` (1) or `tool_input` (2:
    /// the input is the parse of the raw text; 3, `tool_input_text`: the raw text itself).
    #[wasm_bindgen(js_name = answerDelta)]
    fn answer_delta(kind: u8, index: u32, session_uid: &JsValue, text: &str) -> JsValue;
    /// A plain object for an HTTP intent.
    #[wasm_bindgen(js_name = httpIntent)]
    fn http_intent(
        id: f64,
        method: &str,
        url: &str,
        headers: Array,
        body: JsValue,
        streamed: bool,
        target: &str,
        root_relative: bool,
    ) -> JsValue;
    /// The event of `json` (a text or reasoning part's update, its text left empty) with the
    /// part's text put back.
    #[wasm_bindgen(js_name = withText)]
    fn with_text(json: &str, text: &str) -> JsValue;
    /// An `Error` named `EngineError`, with a stable `code` when given.
    fn refusal(message: &str, code: Option<String>) -> JsValue;
}

/// A refused value: an `EngineError` saying what and why (never the values it saw).
fn refused(what: &str, e: impl std::fmt::Display) -> JsValue {
    refusal(&format!("{what}: {e}"), None)
}

/// Reads JSON; an error says what kind and where, never the values it saw (they may be a
/// credential).
fn parse<T: serde::de::DeserializeOwned>(json: &str, what: &str) -> Result<T, JsValue> {
    serde_json::from_str(json).map_err(|e| refusal(&engine_core::json_error_text(what, &e), None))
}

/// JSON text of a value the engine made.
fn json<T: serde::Serialize>(value: &T, what: &str) -> Result<String, JsValue> {
    serde_json::to_string(value).map_err(|e| refused(what, e))
}

/// The host's time in microseconds; a negative or non-finite one reads as zero.
fn time(now_us: f64) -> Time {
    if now_us.is_finite() {
        // `as` saturates: negatives give 0.
        Time::from_micros(now_us as u64)
    } else {
        Time::from_micros(0)
    }
}

/// A request id as the engine issued it; anything else (negative, fractional, not finite) is
/// an id the engine never issued, whose answer it ignores.
fn request(id: f64) -> RequestId {
    if id.is_finite() && id >= 0.0 && id.fract() == 0.0 {
        RequestId(id as u64)
    } else {
        RequestId(u64::MAX)
    }
}

/// `platform`, `agent_runtime` or `local`.
fn target_name(target: engine_core::Target) -> &'static str {
    match target {
        engine_core::Target::Platform => "platform",
        engine_core::Target::AgentRuntime => "agent_runtime",
        engine_core::Target::Local => "local",
    }
}

/// An event that is not a delta, as JSON text; a text or reasoning part's update (its end,
/// which carries the whole text) as an object whose text crosses as a string, not as JSON to
/// escape here and scan there.
fn other_value(mut event: Event) -> Result<JsValue, JsValue> {
    use engine_core::message::Part;
    if let Event::Answer {
        delta: StreamDelta::PartUpdated { part, .. },
        ..
    } = &mut event
    {
        let text = match part {
            Part::Text(p) => Some(std::mem::take(&mut p.text)),
            Part::Reasoning(p) => Some(std::mem::take(&mut p.text)),
            _ => None,
        };
        if let Some(text) = text {
            return Ok(with_text(&json(&event, "The event")?, &text));
        }
    }
    Ok(JsValue::from_str(&json(&event, "The event")?))
}

/// One engine, driven from one JavaScript thread (a page's, a worker's, Node's).
///
/// A panic inside the engine (a defect) traps: the call throws a `WebAssembly.RuntimeError`,
/// and the module's memory may be half-changed. The TypeScript wrapper then refuses every
/// later call of every engine of that module (`EnginePoisoned`).
#[wasm_bindgen]
pub struct WasmEngine {
    engine: Engine,
    intent: Option<Intent>,
    /// The session uid of the last delta, as a JavaScript string made once (every delta of an
    /// answer names the same session).
    last_session: Option<(String, JsValue)>,
}

impl WasmEngine {
    /// A piece, copied once out of JavaScript's memory and handed over without another copy.
    fn chunk(&mut self, id: f64, chunk: Vec<u8>, now_us: f64) {
        self.engine
            .handle_body_chunk(request(id), bytes::Bytes::from(chunk), time(now_us));
    }

    /// The session uid as a JavaScript string, made once per answer.
    fn session_value(&mut self, session_uid: String) -> JsValue {
        match &self.last_session {
            Some((uid, value)) if *uid == session_uid => value.clone(),
            _ => {
                let value = JsValue::from_str(&session_uid);
                self.last_session = Some((session_uid, value.clone()));
                value
            }
        }
    }

    fn delta_value(&mut self, d: AppendedText) -> JsValue {
        let kind = match d.kind {
            AppendKind::Text => 0,
            AppendKind::Reasoning => 1,
            AppendKind::ToolInputText => 3,
            _ => 2,
        };
        let session = self.session_value(d.session_uid);
        let index = u32::try_from(d.index).unwrap_or(u32::MAX);
        answer_delta(kind, index, &session, &d.text)
    }

    fn event_value(&mut self, event: Event) -> Result<JsValue, JsValue> {
        match AppendedText::from_event(event) {
            Ok(text) => Ok(self.delta_value(text)),
            Err(other) => other_value(other),
        }
    }
}

#[wasm_bindgen]
impl WasmEngine {
    /// A new engine from its JSON configuration (`HostConfig`: `platformBaseUrl`, `seed`,
    /// `startUnixMs`, `record`, `platformSender`, the size limits), at the host's time `now_us`.
    /// A refused configuration throws an `EngineError` with its stable `code`
    /// (`config_base_url`).
    #[wasm_bindgen(constructor)]
    pub fn new(config: &str, now_us: f64) -> Result<WasmEngine, JsValue> {
        let form: HostConfig = parse(config, "The configuration")?;
        let engine = form.engine(time(now_us)).map_err(|e| {
            refusal(
                &format!("The configuration: {e}"),
                Some(e.code().to_owned()),
            )
        })?;
        Ok(WasmEngine {
            engine,
            intent: None,
            last_session: None,
        })
    }

    /// A host input or command, as the trace format's JSON.
    #[wasm_bindgen(js_name = handleInput)]
    pub fn handle_input(&mut self, input: &str, now_us: f64) -> Result<(), JsValue> {
        let input: Input = parse(input, "The input")?;
        self.engine.handle_input(input, time(now_us));
        Ok(())
    }

    /// The head of the answer to request `id` (`reason`: the status line's reason phrase;
    /// `etag`: the `ETag` header; `agent_session_uid`: `X-Agent-Session-Uid`).
    #[wasm_bindgen(js_name = handleResponse)]
    #[allow(clippy::too_many_arguments)] // one argument per field of the head
    pub fn handle_response(
        &mut self,
        id: f64,
        status: u16,
        content_type: Option<String>,
        agent_session_uid: Option<String>,
        reason: Option<String>,
        etag: Option<String>,
        now_us: f64,
    ) {
        let head = ResponseHead::new(status, content_type)
            .with_agent_session_uid(agent_session_uid)
            .with_reason(reason)
            .with_etag(etag);
        self.engine.handle_response(request(id), head, time(now_us));
    }

    /// A piece of the body of the answer to request `id`.
    #[wasm_bindgen(js_name = handleBodyChunk)]
    pub fn handle_body_chunk(&mut self, id: f64, chunk: Vec<u8>, now_us: f64) {
        self.chunk(id, chunk, now_us);
    }

    /// Pieces of the body of the answer to request `id` (one `Uint8Array`, or an array of
    /// them), each handed to the engine in order as it came, then every event they gave, in
    /// one call: text, reasoning and tool-input deltas as `{type: "delta", kind, index,
    /// sessionUid, text}` objects (`kind`: `text`, `reasoning`, `tool_input`, or
    /// `tool_input_text` when the tool's input is its raw text), the engine having joined those
    /// that one piece appends to one part frame after frame; any other event as its JSON text
    /// (the update that ends a text or reasoning part as an object, its text crossing as a
    /// string). Every piece is checked before any is handed over: a refused call changes
    /// nothing. The intents still follow with `pollIntent`.
    #[wasm_bindgen(js_name = feedBodyChunks)]
    pub fn feed_body_chunks(
        &mut self,
        id: f64,
        pieces: &JsValue,
        now_us: f64,
    ) -> Result<Array, JsValue> {
        if let Some(piece) = pieces.dyn_ref::<Uint8Array>() {
            self.chunk(id, piece.to_vec(), now_us);
            return self.drain_events();
        }
        let Some(list) = pieces.dyn_ref::<Array>() else {
            return Err(refusal(
                "A body piece must be a Uint8Array or an array of them.",
                None,
            ));
        };
        let mut checked = Vec::with_capacity(list.length() as usize);
        for piece in list.iter() {
            match piece.dyn_into::<Uint8Array>() {
                Ok(piece) => checked.push(piece),
                Err(_) => return Err(refusal("A body piece must be a Uint8Array.", None)),
            }
        }
        // Each piece as it came: the engine's limits and its joining of deltas go by piece.
        for piece in &checked {
            self.chunk(id, piece.to_vec(), now_us);
        }
        self.drain_events()
    }

    /// The body of the answer to request `id` is complete.
    #[wasm_bindgen(js_name = handleBodyEnd)]
    pub fn handle_body_end(&mut self, id: f64, now_us: f64) {
        self.engine.handle_body_end(request(id), time(now_us));
    }

    /// Request `id` failed below HTTP: `kind` is `no_answer` or `broken`.
    #[wasm_bindgen(js_name = handleFailure)]
    pub fn handle_failure(
        &mut self,
        id: f64,
        kind: &str,
        message: &str,
        now_us: f64,
    ) -> Result<(), JsValue> {
        let kind = match kind {
            "no_answer" => engine_core::FailureKind::NoAnswer,
            "broken" => engine_core::FailureKind::Broken,
            _ => {
                return Err(refusal(
                    "The failure: `kind` must be `no_answer` or `broken`.",
                    None,
                ));
            }
        };
        let failure = TransportFailure::new(kind, message);
        self.engine
            .handle_failure(request(id), failure, time(now_us));
        Ok(())
    }

    /// A timer tick.
    #[wasm_bindgen(js_name = handleTimeout)]
    pub fn handle_timeout(&mut self, now_us: f64) {
        self.engine.handle_timeout(time(now_us));
    }

    /// The next intent, or `undefined`: `{kind: "http", id, method, url, headers: [name,
    /// value][], body: Uint8Array | null, streamed, target, rootRelative}` (`rootRelative`:
    /// the address came root-relative and is not given to a URL rewrite), or the JSON text of an abort
    /// (`{"kind":"abort","id":..}`) or a storage request (`{"kind":"storage",...}`). Header
    /// values include the credential.
    #[wasm_bindgen(js_name = pollIntent)]
    pub fn poll_intent(&mut self) -> Result<JsValue, JsValue> {
        self.intent = self.engine.poll_intent();
        let Some(intent) = &self.intent else {
            return Ok(JsValue::UNDEFINED);
        };
        Ok(match intent {
            Intent::Http { id, request, .. } => {
                let headers = Array::new();
                for h in &request.headers {
                    headers.push(&Array::of2(
                        &JsValue::from_str(h.name()),
                        &JsValue::from_str(h.value()),
                    ));
                }
                let body = match request.body.as_deref() {
                    Some(b) => Uint8Array::from(b).into(),
                    None => JsValue::NULL,
                };
                http_intent(
                    id.0 as f64,
                    request.method.as_str(),
                    &request.url(),
                    headers,
                    body,
                    request.body_mode == engine_core::BodyMode::Streamed,
                    target_name(request.target),
                    request.root_relative,
                )
            }
            Intent::Abort { id } => {
                JsValue::from_str(&format!("{{\"kind\":\"abort\",\"id\":{}}}", id.0))
            }
            Intent::Storage(storage) => {
                let mut value = serde_json::to_value(storage).map_err(|e| refused("Storage", e))?;
                if let Some(object) = value.as_object_mut() {
                    object.insert("kind".to_owned(), "storage".into());
                }
                JsValue::from_str(&json(&value, "Storage")?)
            }
        })
    }

    /// The intent last polled, as the trace format writes it (credentials redacted).
    #[wasm_bindgen(js_name = intentJson)]
    pub fn intent_json(&self) -> Result<String, JsValue> {
        let intent = self
            .intent
            .as_ref()
            .ok_or_else(|| refusal("No intent is current.", None))?;
        json(intent, "The intent")
    }

    /// The next event (a delta object or JSON text, as `feedBodyChunks` gives them), or
    /// `undefined`.
    #[wasm_bindgen(js_name = pollEvent)]
    pub fn poll_event(&mut self) -> Result<JsValue, JsValue> {
        match self.engine.poll_event() {
            Some(event) => self.event_value(event),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// Every event waiting, in order, in one call (the objects and texts of `feedBodyChunks`).
    #[wasm_bindgen(js_name = drainEvents)]
    pub fn drain_events(&mut self) -> Result<Array, JsValue> {
        let out = Array::new();
        while let Some(event) = self.engine.poll_event() {
            out.push(&self.event_value(event)?);
        }
        Ok(out)
    }

    /// When to call `handleTimeout` next (microseconds on the host's clock), or `undefined`.
    #[wasm_bindgen(js_name = pollTimeout)]
    pub fn poll_timeout(&self) -> Option<f64> {
        self.engine.poll_timeout().map(|t| t.as_micros() as f64)
    }

    /// The snapshot as JSON.
    pub fn snapshot(&self) -> Result<String, JsValue> {
        json(&self.engine.snapshot(), "The snapshot")
    }

    /// The snapshot as JSON with an empty `thread`: what to read when `revisions().state`
    /// moved, the thread being read by its own counters.
    #[wasm_bindgen(js_name = snapshotWithoutThread)]
    pub fn snapshot_without_thread(&self) -> Result<String, JsValue> {
        json(&self.engine.snapshot_without_thread(), "The snapshot")
    }

    /// The thread as it changed for one reader: one entry per message, `null` for a finished
    /// message that is the one `cursor` was given at the same place by the last call (the
    /// reader keeps that object), `true` for the answer that streamed at this place at the last
    /// call and ended as it streamed (`ThreadView::settled`) when the reader says it applied
    /// every delta of the session's answer since, to the message it was given there (`mirrored`:
    /// it has that message already), else the message's
    /// JSON text. The streaming message is always given. The work is one pointer comparison
    /// per message and the JSON of those that changed, not the JSON of the whole thread.
    #[wasm_bindgen(js_name = threadChanges)]
    pub fn thread_changes(
        &self,
        cursor: &mut ThreadCursor,
        mirrored: bool,
    ) -> Result<Array, JsValue> {
        let view = self.engine.thread();
        let out = Array::new();
        let finished = view.history.iter().chain(view.local.iter());
        let mut count = 0;
        for (i, message) in finished.enumerate() {
            count = i + 1;
            if cursor.given.get(i).is_some_and(|g| Arc::ptr_eq(g, message)) {
                out.push(&JsValue::NULL);
            } else if mirrored
                && cursor.streaming_at == Some(i)
                && view.settled.is_some_and(|s| Arc::ptr_eq(s, message))
            {
                out.push(&JsValue::TRUE);
            } else {
                out.push(&JsValue::from_str(&json(&**message, "The thread")?));
            }
        }
        if let Some(message) = view.streaming {
            out.push(&JsValue::from_str(&json(message, "The thread")?));
        }
        cursor.given.clear();
        cursor
            .given
            .extend(view.history.iter().chain(view.local.iter()).cloned());
        cursor.streaming_at = view.streaming.map(|_| count);
        Ok(out)
    }

    /// The run-status channel as JSON.
    #[wasm_bindgen(js_name = runStatus)]
    pub fn run_status(&self) -> Result<String, JsValue> {
        json(&self.engine.run_status(), "The run status")
    }

    /// The revision counters: `[state, run, thread, streaming]`.
    pub fn revisions(&self) -> Vec<f64> {
        let r = self.engine.revisions();
        vec![
            r.state as f64,
            r.run as f64,
            r.thread as f64,
            r.streaming as f64,
        ]
    }

    /// The recorded trace (credentials redacted), when recording.
    pub fn trace(&self) -> Option<String> {
        self.engine.trace().map(str::to_owned)
    }
}

/// What one reader of the thread was last given by [`WasmEngine::thread_changes`]: the finished
/// messages, shared with the engine (a message the engine changes is a new one, so an unchanged
/// message is known by its address, and holding it keeps the address from being reused).
#[wasm_bindgen]
#[derive(Default)]
pub struct ThreadCursor {
    given: Vec<Arc<engine_core::message::Message>>,
    /// Where the streaming message was.
    streaming_at: Option<usize>,
}

#[wasm_bindgen]
impl ThreadCursor {
    /// A reader that was given nothing yet.
    #[wasm_bindgen(constructor)]
    pub fn new() -> ThreadCursor {
        ThreadCursor::default()
    }
}

/// The best-effort parse of a streamed tool input's raw text (ui-message-stream §5), as JSON
/// text, or `undefined` when nothing parses yet: what a tool part's `input` is while its
/// `rawInput` grows.
#[wasm_bindgen(js_name = parsePartialJson)]
pub fn parse_partial_json(text: &str) -> Option<String> {
    engine_core::stream::partial_json::parse_partial_json(text).map(|v| v.to_string())
}

/// The engine's version (the crate's).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

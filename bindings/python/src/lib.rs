//! `agent_engine._native`: `engine-core`'s drive contract as a Python class (PyO3). The typed,
//! documented Python API is `agent_engine.Engine` (`agent_engine/__init__.py`), which wraps
//! this one; this module keeps to plain values (ints, strings, bytes, tuples) so that nothing
//! is made that the host does not read.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use engine_core::{
    Engine, Event, Input, Intent, RequestId, ResponseHead, StreamDelta, Time, TransportFailure,
};

create_exception!(
    _native,
    EngineError,
    PyException,
    "A value the engine refused: malformed JSON, a bad configuration, no current intent."
);

fn refused(what: &str, e: impl std::fmt::Display) -> PyErr {
    EngineError::new_err(format!("{what}: {e}"))
}

/// Reads JSON; an error says what kind and where, never the values it saw (they may be a
/// credential).
/// Reads JSON; an error says what kind and where, never the values it saw.
fn parse<T: serde::de::DeserializeOwned>(json: &str, what: &str) -> PyResult<T> {
    serde_json::from_str(json)
        .map_err(|e| EngineError::new_err(engine_core::json_error_text(what, &e)))
}

/// An HTTP intent: ("http", id, method, url, headers, body or None, streamed).
type HttpTuple<'py> = (
    &'static str,
    u64,
    &'static str,
    String,
    Vec<(&'static str, String)>,
    Option<Bound<'py, PyBytes>>,
    bool,
);

/// A piece of a streamed answer: `text` appended to part `index` of the answer in
/// `session_uid`; `kind` is `text`, `reasoning` or `tool_input`.
#[pyclass(frozen, get_all, module = "agent_engine._native")]
pub struct AnswerDelta {
    kind: &'static str,
    index: usize,
    session_uid: Py<PyString>,
    text: Py<PyString>,
}

#[pymethods]
impl AnswerDelta {
    fn __repr__(&self) -> String {
        format!(
            "AnswerDelta(kind={:?}, index={}, session_uid={:?}, text={:?})",
            self.kind, self.index, self.session_uid, self.text
        )
    }
}

/// One engine (used from one thread: the host's event loop).
#[pyclass(unsendable, module = "agent_engine._native")]
pub struct NativeEngine {
    engine: Engine,
    intent: Option<Intent>,
    /// The session uid of the last delta, as a Python str made once (every delta of an
    /// answer names the same session).
    last_session: Option<(String, Py<PyString>)>,
}

impl NativeEngine {
    /// An event for Python: an answer delta as an [`AnswerDelta`], anything else as its JSON.
    fn event_value<'py>(&mut self, py: Python<'py>, event: Event) -> PyResult<Bound<'py, PyAny>> {
        let event = match event {
            Event::Answer { session_uid, delta } => {
                let (kind, index, text) = match delta {
                    StreamDelta::TextDelta { index, delta } => ("text", index, delta),
                    StreamDelta::ReasoningDelta { index, delta } => ("reasoning", index, delta),
                    StreamDelta::ToolInputDelta { index, delta, .. } => {
                        ("tool_input", index, delta)
                    }
                    delta => {
                        return self.json_value(py, &Event::Answer { session_uid, delta });
                    }
                };
                let session = match &self.last_session {
                    Some((uid, py_uid)) if *uid == session_uid => py_uid.clone_ref(py),
                    _ => {
                        let py_uid = PyString::new(py, &session_uid).unbind();
                        self.last_session = Some((session_uid, py_uid.clone_ref(py)));
                        py_uid
                    }
                };
                let delta = AnswerDelta {
                    kind,
                    index,
                    session_uid: session,
                    text: PyString::new(py, &text).unbind(),
                };
                return Ok(Bound::new(py, delta)?.into_any());
            }
            other => other,
        };
        self.json_value(py, &event)
    }

    fn json_value<'py>(&self, py: Python<'py>, event: &Event) -> PyResult<Bound<'py, PyAny>> {
        let json = serde_json::to_string(event).map_err(|e| refused("The event", e))?;
        Ok(json.into_pyobject(py)?.into_any())
    }
}

#[pymethods]
impl NativeEngine {
    /// A new engine from its JSON configuration, at the host's time `now_us`.
    #[new]
    fn new(config: &str, now_us: u64) -> PyResult<NativeEngine> {
        let form: engine_core::HostConfig = parse(config, "The configuration")?;
        let engine = form
            .engine(Time::from_micros(now_us))
            .map_err(|e| refused("The configuration", e))?;
        Ok(NativeEngine {
            engine,
            intent: None,
            last_session: None,
        })
    }

    /// A host input or command, as the trace format's JSON.
    fn handle_input(&mut self, input: &str, now_us: u64) -> PyResult<()> {
        let input: Input = parse(input, "The input")?;
        self.engine.handle_input(input, Time::from_micros(now_us));
        Ok(())
    }

    /// The head of the answer to request `id`.
    #[pyo3(signature = (id, status, content_type, agent_session_uid, now_us))]
    fn handle_response(
        &mut self,
        id: u64,
        status: u16,
        content_type: Option<String>,
        agent_session_uid: Option<String>,
        now_us: u64,
    ) {
        let head =
            ResponseHead::new(status, content_type).with_agent_session_uid(agent_session_uid);
        self.engine
            .handle_response(RequestId(id), head, Time::from_micros(now_us));
    }

    /// A piece of the body of the answer to request `id`.
    fn handle_body_chunk(&mut self, id: u64, chunk: &[u8], now_us: u64) {
        self.engine.handle_body_chunk(
            RequestId(id),
            bytes::Bytes::copy_from_slice(chunk),
            Time::from_micros(now_us),
        );
    }

    /// The body of the answer to request `id` is complete.
    fn handle_body_end(&mut self, id: u64, now_us: u64) {
        self.engine
            .handle_body_end(RequestId(id), Time::from_micros(now_us));
    }

    /// Request `id` failed below HTTP: `kind` is `no_answer` or `broken`.
    fn handle_failure(&mut self, id: u64, kind: &str, message: &str, now_us: u64) -> PyResult<()> {
        let failure: TransportFailure = parse(
            &serde_json::json!({"kind": kind, "message": message}).to_string(),
            "The failure",
        )?;
        self.engine
            .handle_failure(RequestId(id), failure, Time::from_micros(now_us));
        Ok(())
    }

    /// A timer tick.
    fn handle_timeout(&mut self, now_us: u64) {
        self.engine.handle_timeout(Time::from_micros(now_us));
    }

    /// The next intent: `("http", id, method, url, headers, body, streamed)`, `("abort", id)`,
    /// `("storage", json)`, or None. Header values include the credential.
    fn poll_intent<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.intent = self.engine.poll_intent();
        let Some(intent) = &self.intent else {
            return Ok(None);
        };
        let value = match intent {
            Intent::Http { id, request, .. } => {
                let headers: Vec<(&'static str, String)> = request
                    .headers
                    .iter()
                    .map(|h| (h.name(), h.value().to_owned()))
                    .collect();
                let tuple: HttpTuple<'py> = (
                    "http",
                    id.0,
                    request.method.as_str(),
                    request.url(),
                    headers,
                    request.body.as_deref().map(|b| PyBytes::new(py, b)),
                    request.body_mode == engine_core::BodyMode::Streamed,
                );
                tuple.into_pyobject(py)?.into_any()
            }
            Intent::Abort { id } => ("abort", id.0).into_pyobject(py)?.into_any(),
            Intent::Storage(request) => {
                let json = serde_json::to_string(request).map_err(|e| refused("Storage", e))?;
                ("storage", json).into_pyobject(py)?.into_any()
            }
        };
        Ok(Some(value))
    }

    /// The current intent as the trace format writes it (credentials redacted).
    fn intent_json(&self) -> PyResult<String> {
        let intent = self
            .intent
            .as_ref()
            .ok_or_else(|| EngineError::new_err("No intent is current."))?;
        serde_json::to_string(intent).map_err(|e| refused("The intent", e))
    }

    /// The next event: an answer delta as an `AnswerDelta`, any other event as its JSON
    /// (a str), or None.
    fn poll_event<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.engine.poll_event() {
            Some(event) => self.event_value(py, event).map(Some),
            None => Ok(None),
        }
    }

    /// Every event waiting, in order (as `poll_event` gives them), in one call.
    fn drain_events<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let mut out = Vec::new();
        while let Some(event) = self.engine.poll_event() {
            out.push(self.event_value(py, event)?);
        }
        Ok(out)
    }

    /// `handle_body_chunk`, then `drain_events`, in one call (the hot path of a streamed
    /// answer); the intents still follow with `poll_intent`.
    fn feed_body_chunk<'py>(
        &mut self,
        py: Python<'py>,
        id: u64,
        chunk: &[u8],
        now_us: u64,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.handle_body_chunk(id, chunk, now_us);
        self.drain_events(py)
    }

    /// When to call `handle_timeout` next (microseconds on the host's clock), or None.
    fn poll_timeout(&self) -> Option<u64> {
        self.engine.poll_timeout().map(Time::as_micros)
    }

    /// The snapshot as JSON.
    fn snapshot(&self) -> PyResult<String> {
        serde_json::to_string(&self.engine.snapshot()).map_err(|e| refused("The snapshot", e))
    }

    /// The thread alone (history, this engine's turns, the answer streaming) as a JSON array.
    fn thread(&self) -> PyResult<String> {
        let thread = self.engine.thread();
        let mut messages: Vec<&engine_core::message::Message> = thread
            .history
            .iter()
            .chain(thread.local)
            .map(|m| &**m)
            .collect();
        messages.extend(thread.streaming);
        serde_json::to_string(&messages).map_err(|e| refused("The thread", e))
    }

    /// The run-status channel as JSON.
    fn run_status(&self) -> PyResult<String> {
        serde_json::to_string(&self.engine.run_status()).map_err(|e| refused("The run status", e))
    }

    /// The revision counters: (state, run, thread, streaming).
    fn revisions(&self) -> (u64, u64, u64, u64) {
        let r = self.engine.revisions();
        (r.state, r.run, r.thread, r.streaming)
    }

    /// The recorded trace (credentials redacted), when recording.
    fn trace(&self) -> Option<String> {
        self.engine.trace().map(str::to_owned)
    }
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeEngine>()?;
    m.add_class::<AnswerDelta>()?;
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

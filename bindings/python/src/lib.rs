//! `agent_engine._native`: `engine-core`'s drive contract as a Python class (PyO3). The typed,
//! documented Python API is `agent_engine.Engine` (`agent_engine/__init__.py`), which wraps
//! this one; this module keeps to plain values (ints, strings, bytes, tuples) so that nothing
//! is made that the host does not read.

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};

use engine_core::{
    AppendKind, AppendMerger, AppendedText, Engine, Event, Input, Intent, Merged, RequestId,
    ResponseHead, Time, TransportFailure,
};

create_exception!(
    _native,
    EngineError,
    PyException,
    "A value the engine refused: malformed JSON, a bad configuration, no current intent."
);

create_exception!(
    _native,
    EnginePoisoned,
    PyException,
    "The engine panicked (a defect): the call that did raises this, and so does every later \
     call on that engine; make a new one. Not an `EngineError`: a host that logs refused \
     values and goes on must not go on with a poisoned engine."
);

const PANICKED: &str = "The engine panicked; it is poisoned and takes no more calls.";

/// A refused configuration: its text, and its stable code as the error's `code` attribute
/// (`"config_base_url"`).
fn config_refused(e: engine_core::ConfigError) -> PyErr {
    let err = refused("The configuration", &e);
    Python::attach(|py| {
        // Setting an attribute on a fresh exception cannot fail but for memory; the text
        // stands alone then.
        let _ = err.value(py).setattr("code", e.code());
    });
    err
}

fn refused(what: &str, e: impl std::fmt::Display) -> PyErr {
    EngineError::new_err(format!("{what}: {e}"))
}

/// Reads JSON; an error says what kind and where, never the values it saw (they may be a
/// credential).
fn parse<T: serde::de::DeserializeOwned>(json: &str, what: &str) -> PyResult<T> {
    serde_json::from_str(json)
        .map_err(|e| EngineError::new_err(engine_core::json_error_text(what, &e)))
}

/// An HTTP intent: ("http", id, method, url, headers, body or None, streamed, target).
type HttpTuple<'py> = (
    &'static str,
    u64,
    &'static str,
    String,
    Vec<(&'static str, String)>,
    Option<Bound<'py, PyBytes>>,
    bool,
    &'static str,
);

/// `platform`, `agent_runtime` or `local`.
fn target_name(target: engine_core::Target) -> &'static str {
    match target {
        engine_core::Target::Platform => "platform",
        engine_core::Target::AgentRuntime => "agent_runtime",
        engine_core::Target::Local => "local",
    }
}

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
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "AnswerDelta(kind='{}', index={}, session_uid={}, text={})",
            self.kind,
            self.index,
            self.session_uid.bind(py).repr()?,
            self.text.bind(py).repr()?
        ))
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
    /// A panic was caught in a call: the engine takes no more.
    poisoned: bool,
}

impl NativeEngine {
    /// Runs `f` with a panic caught: the call raises `EnginePoisoned` and the engine takes no
    /// more calls (its state may be half-changed), as the C ABI's `AE_ERR_POISONED`.
    fn guard<R>(&mut self, f: impl FnOnce(&mut Self) -> PyResult<R>) -> PyResult<R> {
        if self.poisoned {
            return Err(EnginePoisoned::new_err(
                "The engine panicked in an earlier call; make a new one.",
            ));
        }
        match catch_unwind(AssertUnwindSafe(|| f(&mut *self))) {
            Ok(result) => result,
            Err(_) => {
                self.poisoned = true;
                Err(EnginePoisoned::new_err(PANICKED))
            }
        }
    }

    fn chunk(&mut self, id: u64, chunk: &[u8], now_us: u64) {
        self.engine.handle_body_chunk(
            RequestId(id),
            bytes::Bytes::copy_from_slice(chunk),
            Time::from_micros(now_us),
        );
    }

    fn drain<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let mut out = Vec::new();
        while let Some(event) = self.engine.poll_event() {
            out.push(self.event_value(py, event)?);
        }
        Ok(out)
    }

    /// An event for Python: an answer delta as an [`AnswerDelta`], anything else as its JSON.
    fn event_value<'py>(&mut self, py: Python<'py>, event: Event) -> PyResult<Bound<'py, PyAny>> {
        match AppendedText::from_event(event) {
            Ok(delta) => self.delta_value(py, delta),
            Err(other) => self.json_value(py, &other),
        }
    }

    /// A text, reasoning or tool-input delta as an [`AnswerDelta`].
    fn delta_value<'py>(
        &mut self,
        py: Python<'py>,
        d: AppendedText,
    ) -> PyResult<Bound<'py, PyAny>> {
        let kind = match d.kind {
            AppendKind::Text => "text",
            AppendKind::Reasoning => "reasoning",
            _ => "tool_input",
        };
        let delta = AnswerDelta {
            kind,
            index: d.index,
            session_uid: self.session_str(py, d.session_uid),
            text: PyString::new(py, &d.text).unbind(),
        };
        Ok(Bound::new(py, delta)?.into_any())
    }

    /// The session uid as a Python str, made once per answer (every delta of an answer names
    /// the same session).
    fn session_str(&mut self, py: Python<'_>, session_uid: String) -> Py<PyString> {
        match &self.last_session {
            Some((uid, py_uid)) if *uid == session_uid => py_uid.clone_ref(py),
            _ => {
                let py_uid = PyString::new(py, &session_uid).unbind();
                self.last_session = Some((session_uid, py_uid.clone_ref(py)));
                py_uid
            }
        }
    }

    /// Every event waiting, appended to `out`, with the deltas that follow one another in the
    /// same part of the same answer merged into one (`merger` carries the last one across
    /// calls, so that a merge can span body pieces).
    fn drain_merged<'py>(
        &mut self,
        py: Python<'py>,
        merger: &mut AppendMerger,
        out: &mut Vec<Bound<'py, PyAny>>,
    ) -> PyResult<()> {
        while let Some(event) = self.engine.poll_event() {
            merger.push(event, |m| {
                out.push(self.merged_value(py, m)?);
                Ok::<_, PyErr>(())
            })?;
        }
        Ok(())
    }

    /// A merged delta as an [`AnswerDelta`], any other event as its JSON.
    fn merged_value<'py>(
        &mut self,
        py: Python<'py>,
        merged: Merged,
    ) -> PyResult<Bound<'py, PyAny>> {
        match merged {
            Merged::Text(text) => self.delta_value(py, text),
            Merged::Other(other) => self.json_value(py, &other),
            _ => Err(refused("The event", "of a kind this build does not know")),
        }
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
        let engine = catch_unwind(AssertUnwindSafe(|| form.engine(Time::from_micros(now_us))))
            .map_err(|_| EnginePoisoned::new_err(PANICKED))?
            .map_err(config_refused)?;
        Ok(NativeEngine {
            engine,
            intent: None,
            last_session: None,
            poisoned: false,
        })
    }

    /// A panic inside the engine poisoned it: every call raises `EnginePoisoned`.
    #[getter]
    fn poisoned(&self) -> bool {
        self.poisoned
    }

    /// A host input or command, as the trace format's JSON.
    fn handle_input(&mut self, input: &str, now_us: u64) -> PyResult<()> {
        self.guard(|s| {
            let input: Input = parse(input, "The input")?;
            s.engine.handle_input(input, Time::from_micros(now_us));
            Ok(())
        })
    }

    /// The head of the answer to request `id` (`reason`: the status line's reason phrase;
    /// `etag`: the `ETag` header).
    #[pyo3(signature = (id, status, content_type, agent_session_uid, now_us, reason=None, etag=None))]
    #[allow(clippy::too_many_arguments)] // one Python argument per field of the head
    fn handle_response(
        &mut self,
        id: u64,
        status: u16,
        content_type: Option<String>,
        agent_session_uid: Option<String>,
        now_us: u64,
        reason: Option<String>,
        etag: Option<String>,
    ) -> PyResult<()> {
        let head = ResponseHead::new(status, content_type)
            .with_agent_session_uid(agent_session_uid)
            .with_reason(reason)
            .with_etag(etag);
        self.guard(|s| {
            s.engine
                .handle_response(RequestId(id), head, Time::from_micros(now_us));
            Ok(())
        })
    }

    /// A piece of the body of the answer to request `id`.
    fn handle_body_chunk(&mut self, id: u64, chunk: &[u8], now_us: u64) -> PyResult<()> {
        self.guard(|s| {
            s.chunk(id, chunk, now_us);
            Ok(())
        })
    }

    /// The body of the answer to request `id` is complete.
    fn handle_body_end(&mut self, id: u64, now_us: u64) -> PyResult<()> {
        self.guard(|s| {
            s.engine
                .handle_body_end(RequestId(id), Time::from_micros(now_us));
            Ok(())
        })
    }

    /// Request `id` failed below HTTP: `kind` is `no_answer` or `broken`.
    fn handle_failure(&mut self, id: u64, kind: &str, message: &str, now_us: u64) -> PyResult<()> {
        self.guard(|s| {
            let failure: TransportFailure = parse(
                &serde_json::json!({"kind": kind, "message": message}).to_string(),
                "The failure",
            )?;
            s.engine
                .handle_failure(RequestId(id), failure, Time::from_micros(now_us));
            Ok(())
        })
    }

    /// A timer tick.
    fn handle_timeout(&mut self, now_us: u64) -> PyResult<()> {
        self.guard(|s| {
            s.engine.handle_timeout(Time::from_micros(now_us));
            Ok(())
        })
    }

    /// The next intent: `("http", id, method, url, headers, body, streamed, target)`,
    /// `("abort", id)`,
    /// `("storage", json)`, or None. Header values include the credential.
    fn poll_intent<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.guard(|s| {
            s.intent = s.engine.poll_intent();
            let Some(intent) = &s.intent else {
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
                        target_name(request.target),
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
        })
    }

    /// The current intent as the trace format writes it (credentials redacted).
    fn intent_json(&mut self) -> PyResult<String> {
        self.guard(|s| {
            let intent = s
                .intent
                .as_ref()
                .ok_or_else(|| EngineError::new_err("No intent is current."))?;
            serde_json::to_string(intent).map_err(|e| refused("The intent", e))
        })
    }

    /// The next event: an answer delta as an `AnswerDelta`, any other event as its JSON
    /// (a str), or None.
    fn poll_event<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.guard(|s| match s.engine.poll_event() {
            Some(event) => s.event_value(py, event).map(Some),
            None => Ok(None),
        })
    }

    /// Every event waiting, in order (as `poll_event` gives them), in one call.
    fn drain_events<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.guard(|s| s.drain(py))
    }

    /// `handle_body_chunk`, then `drain_events`, in one call; the intents still follow with
    /// `poll_intent`.
    fn feed_body_chunk<'py>(
        &mut self,
        py: Python<'py>,
        id: u64,
        chunk: &[u8],
        now_us: u64,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.guard(|s| {
            s.chunk(id, chunk, now_us);
            s.drain(py)
        })
    }

    /// Several pieces of the body of the answer to request `id` (any iterable of bytes, or one
    /// piece as bytes), each handed to the engine in order as `handle_body_chunk` would, then
    /// every event they gave, in one call: the hot path of a streamed answer (a piece read from
    /// a fast stream holds many deltas). Text, reasoning and tool-input deltas that follow one
    /// another in the same part of the same answer come merged into one `AnswerDelta`
    /// (appending its text is appending theirs, in order); any other event ends a merge. Every
    /// piece is checked before any is handed over: a refused call changes nothing. The intents
    /// still follow with `poll_intent`.
    fn feed_body_chunks<'py>(
        &mut self,
        py: Python<'py>,
        id: u64,
        pieces: &Bound<'py, PyAny>,
        now_us: u64,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.guard(|s| {
            let mut out = Vec::new();
            let mut merger = AppendMerger::default();
            if let Ok(piece) = pieces.cast::<PyBytes>() {
                // One piece, the shell's case: no list of pieces to make.
                s.chunk(id, piece.as_bytes(), now_us);
            } else {
                for piece in &body_pieces(pieces)? {
                    s.chunk(id, piece.as_bytes(), now_us);
                    s.drain_merged(py, &mut merger, &mut out)?;
                }
            }
            // After the last piece; with no piece, the events waiting from before (none are,
            // in a host that drains) come out all the same.
            s.drain_merged(py, &mut merger, &mut out)?;
            merger.finish(|m| {
                out.push(s.merged_value(py, m)?);
                Ok::<_, PyErr>(())
            })?;
            Ok(out)
        })
    }

    /// When to call `handle_timeout` next (microseconds on the host's clock), or None.
    fn poll_timeout(&mut self) -> PyResult<Option<u64>> {
        self.guard(|s| Ok(s.engine.poll_timeout().map(Time::as_micros)))
    }

    /// The snapshot as JSON.
    fn snapshot(&mut self) -> PyResult<String> {
        self.guard(|s| {
            serde_json::to_string(&s.engine.snapshot()).map_err(|e| refused("The snapshot", e))
        })
    }

    /// The thread alone (history, this engine's turns, the answer streaming) as a JSON array.
    fn thread(&mut self) -> PyResult<String> {
        self.guard(|s| {
            let messages: Vec<_> = s.engine.thread().iter().collect();
            serde_json::to_string(&messages).map_err(|e| refused("The thread", e))
        })
    }

    /// The run-status channel as JSON.
    fn run_status(&mut self) -> PyResult<String> {
        self.guard(|s| {
            serde_json::to_string(&s.engine.run_status()).map_err(|e| refused("The run status", e))
        })
    }

    /// The revision counters: (state, run, thread, streaming).
    fn revisions(&mut self) -> PyResult<(u64, u64, u64, u64)> {
        self.guard(|s| {
            let r = s.engine.revisions();
            Ok((r.state, r.run, r.thread, r.streaming))
        })
    }

    /// The recorded trace (credentials redacted), when recording.
    fn trace(&mut self) -> PyResult<Option<String>> {
        self.guard(|s| Ok(s.engine.trace().map(str::to_owned)))
    }

    /// A test hook: panics inside the guard, as a defect in the engine would, so that the tests
    /// can check that the engine is then poisoned.
    #[allow(clippy::panic, reason = "the hook's whole purpose")]
    fn _panic_for_test(&mut self) -> PyResult<()> {
        self.guard(|_| -> PyResult<()> { std::panic::panic_any("a panic the test asked for") })
    }
}

/// The pieces of `feed_body_chunks` given as an iterable of `bytes`, every one checked
/// (and a generator consumed) before any is fed. Anything else, `bytearray` and `memoryview`
/// included (as `handle_body_chunk`), is a `TypeError` naming its type.
fn body_pieces<'py>(pieces: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let not_bytes = |value: &Bound<'py, PyAny>| {
        let name = value
            .get_type()
            .name()
            .map_or_else(|_| "?".to_owned(), |n| n.to_string());
        PyTypeError::new_err(format!("A body piece must be bytes, not {name}."))
    };
    if pieces.is_instance_of::<PyString>() || pieces.is_instance_of::<PyByteArray>() {
        return Err(not_bytes(pieces));
    }
    pieces
        .try_iter()
        .map_err(|_| not_bytes(pieces))?
        .map(|piece| {
            let piece = piece?;
            piece
                .cast_into::<PyBytes>()
                .map_err(|e| not_bytes(e.into_inner().as_any()))
        })
        .collect()
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeEngine>()?;
    m.add_class::<AnswerDelta>()?;
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    m.add("EnginePoisoned", m.py().get_type::<EnginePoisoned>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

//! A C ABI over `engine-core`'s drive contract, for hosts outside Rust (C, C++, Swift, Kotlin,
//! Go, Python through `bindings/python`).
//!
//! The host owns I/O and time: it creates an engine ([`ae_engine_new`]), hands it inputs and
//! commands ([`ae_handle_input`]), the answers of the requests it asked for
//! ([`ae_handle_response`], [`ae_handle_body_chunk`], [`ae_handle_body_end`],
//! [`ae_handle_failure`]) and timer ticks ([`ae_handle_timeout`]), each with the host's time in
//! microseconds on one monotonic line. After every `ae_handle_*` it drains
//! [`ae_poll_intent`] and [`ae_poll_event`] until they answer [`AE_NONE`], then reads
//! [`ae_poll_timeout`]. The snapshot is [`ae_snapshot`] (JSON), with [`ae_revisions`] saying which
//! part changed since the last look; whether a message can be sent now, and if not why, is
//! [`ae_send_readiness`] (no JSON to read).
//!
//! Inputs, intents and events use the JSON forms of the trace format (`spec-tests/TRACES.md`);
//! bodies are bytes. JSON is made only where the host asks for it: an intent's method, address,
//! headers and body, and an answer delta's text, are read as borrowed views.
//!
//! # Rules of the boundary
//!
//! - **Status codes.** Every function that can fail returns an `int32_t`: [`AE_OK`] (0),
//!   [`AE_NONE`] (1: nothing to poll), or a negative `AE_ERR_*` code. The message of the last
//!   error on the calling thread is [`ae_last_error`].
//! - **No panic crosses.** Every entry point catches a panic and reports [`AE_ERR_PANIC`]; the
//!   engine it happened in is poisoned and refuses further calls with [`AE_ERR_POISONED`] (it
//!   can still be freed).
//! - **Ownership.** Pointers passed in are borrowed for the call only. An [`AeBuf`] filled by
//!   the library belongs to the caller, who frees it with [`ae_buf_free`] (once). An [`AeStr`]
//!   is borrowed from the engine: the views of an intent (its method, address, body and
//!   headers) stay valid until the next [`ae_poll_intent`], those of an event until the next
//!   [`ae_poll_event`], those of a readiness until the next [`ae_send_readiness`] or
//!   [`ae_send_readiness_json`], and none outlives [`ae_engine_free`]. On [`AE_NONE`] a view struct is
//!   zeroed. The engine is freed with [`ae_engine_free`].
//! - **Errors.** [`ae_last_error`] keeps the last error of the thread until another one
//!   replaces it (a success does not clear it, as `errno`). Its message never quotes the
//!   values of a refused argument (they may hold a credential).
//! - **Threads.** An engine may move between threads but must not be used by two at once.

#![allow(unsafe_code)]

use std::cell::RefCell;
use std::ffi::c_char;
use std::panic::{AssertUnwindSafe, catch_unwind};

use engine_core::{
    Engine, Event, Input, Intent, RequestId, ResponseHead, StreamDelta, Time, TransportFailure,
};

mod readiness;
pub use readiness::{
    AE_SEND_BLOCKED, AE_SEND_READY, AE_SEND_WAITING, AeReadiness, ae_send_readiness,
    ae_send_readiness_json,
};

/// Success.
pub const AE_OK: i32 = 0;
/// Nothing to poll (no intent, no event, no timeout).
pub const AE_NONE: i32 = 1;
/// A required pointer was null (or a buffer pointer was null with a non-zero length).
pub const AE_ERR_NULL: i32 = -1;
/// A JSON argument did not parse, or does not have the expected form.
pub const AE_ERR_JSON: i32 = -2;
/// The configuration was refused (see the message, e.g. RU-45's "The chat backend connection
/// requires an absolute http(s) platform API base URL."). The C counterpart of Rust's
/// `ConfigError::code`: its one cause today is `config_base_url`, which this status stands for;
/// a new cause gets a status of its own.
pub const AE_ERR_CONFIG: i32 = -3;
/// The call panicked inside the library; the engine is poisoned.
pub const AE_ERR_PANIC: i32 = -4;
/// The engine panicked in an earlier call and takes no more calls (free it).
pub const AE_ERR_POISONED: i32 = -5;
/// The call does not apply now (no current intent or event, a header index out of range).
pub const AE_ERR_STATE: i32 = -6;
/// A length no buffer can have (more than `PTRDIFF_MAX` bytes).
pub const AE_ERR_LENGTH: i32 = -7;

/// [`AeIntentView::kind`]: send this HTTP request.
pub const AE_INTENT_HTTP: u32 = 1;
/// [`AeIntentView::kind`]: drop the request `id` if it still runs.
pub const AE_INTENT_ABORT: u32 = 2;
/// [`AeIntentView::kind`]: a storage request (read its JSON with [`ae_intent_json`]).
pub const AE_INTENT_STORAGE: u32 = 3;

/// [`AeIntentView::target`]: the platform API (with `"platformSender": true`, the host's own
/// sender carries it, RU-47).
pub const AE_TARGET_PLATFORM: u32 = 0;
/// [`AeIntentView::target`]: an Agent runtime (always carried directly, RU-49).
pub const AE_TARGET_AGENT_RUNTIME: u32 = 1;
/// [`AeIntentView::target`]: a local Agent runtime (ADR 099).
pub const AE_TARGET_LOCAL: u32 = 2;

/// [`AeEventView::kind`]: any event but the deltas below (read its JSON with
/// [`ae_event_json`]).
pub const AE_EVENT_OTHER: u32 = 0;
/// [`AeEventView::kind`]: text appended to the answer's text part `index`.
pub const AE_EVENT_TEXT_DELTA: u32 = 1;
/// [`AeEventView::kind`]: text appended to the answer's reasoning part `index`.
pub const AE_EVENT_REASONING_DELTA: u32 = 2;
/// [`AeEventView::kind`]: raw input appended to the answer's tool call `index`.
pub const AE_EVENT_TOOL_INPUT_DELTA: u32 = 3;

/// Bytes the library made; the caller owns them and frees them with [`ae_buf_free`].
#[repr(C)]
#[derive(Debug)]
pub struct AeBuf {
    /// The bytes (null when `len` is 0).
    pub ptr: *mut u8,
    /// How many.
    pub len: usize,
}

/// Bytes borrowed from the engine (each function says for how long). Not NUL-terminated.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AeStr {
    /// The bytes (null when `len` is 0).
    pub ptr: *const u8,
    /// How many.
    pub len: usize,
}

/// The intent [`ae_poll_intent`] took, as views (no JSON).
#[repr(C)]
#[derive(Debug)]
pub struct AeIntentView {
    /// `AE_INTENT_HTTP`, `AE_INTENT_ABORT` or `AE_INTENT_STORAGE`.
    pub kind: u32,
    /// The request's id (HTTP and abort).
    pub id: u64,
    /// `GET`, `POST`, ... (HTTP).
    pub method: AeStr,
    /// The absolute address with its query (HTTP).
    pub url: AeStr,
    /// The body (HTTP; empty when none).
    pub body: AeStr,
    /// 1 when the answer streams (feed its chunks as they come), 0 when it is read whole.
    pub streamed: u8,
    /// How many headers; read each with [`ae_intent_header`].
    pub header_count: usize,
    /// Where it goes (HTTP): `AE_TARGET_PLATFORM`, `AE_TARGET_AGENT_RUNTIME` or
    /// `AE_TARGET_LOCAL`.
    pub target: u32,
}

/// The event [`ae_poll_event`] took: an answer delta as views, anything else as a kind to read
/// as JSON.
#[repr(C)]
#[derive(Debug)]
pub struct AeEventView {
    /// `AE_EVENT_*`.
    pub kind: u32,
    /// The part's index (deltas).
    pub index: usize,
    /// The session whose answer it is (deltas).
    pub session_uid: AeStr,
    /// The appended text (deltas).
    pub text: AeStr,
}

/// What changed, as [`engine_core::Revisions`]: compare with the values last seen.
#[repr(C)]
#[derive(Debug, Default)]
pub struct AeRevisions {
    /// Every snapshot value not covered by the other counters.
    pub state: u64,
    /// The run-status channel.
    pub run: u64,
    /// The thread's finished messages, and whether an answer streams.
    pub thread: u64,
    /// The streaming answer's content.
    pub streaming: u64,
}

/// One engine and what its last polls took.
pub struct AeEngine {
    engine: Engine,
    intent: Option<Intent>,
    /// The current intent's address (made when it was polled).
    intent_url: String,
    event: Option<Event>,
    /// The last `sendReadiness` read, with the revisions it was read at.
    readiness: Option<readiness::Readiness>,
    poisoned: bool,
}

/// An error to report.
struct Failure {
    code: i32,
    message: String,
}

impl Failure {
    fn new(code: i32, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }
}

thread_local! {
    static LAST_ERROR: RefCell<Option<(i32, String)>> = const { RefCell::new(None) };
}

fn report(failure: Failure) -> i32 {
    LAST_ERROR.with(|e| *e.borrow_mut() = Some((failure.code, failure.message)));
    failure.code
}

/// Runs `f` with a panic caught.
fn guarded(f: impl FnOnce() -> Result<i32, Failure>) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(code)) => code,
        Ok(Err(failure)) => report(failure),
        Err(_) => report(Failure::new(AE_ERR_PANIC, "The library panicked.")),
    }
}

/// Runs `f` on the engine behind `engine`, with a panic caught (the engine is then poisoned).
fn with_engine(
    engine: *mut AeEngine,
    f: impl FnOnce(&mut AeEngine) -> Result<i32, Failure>,
) -> i32 {
    // SAFETY: the caller passes null or a pointer from `ae_engine_new` not yet freed, and no
    // other thread uses it meanwhile (the boundary's rules); null is refused here.
    let Some(e) = (unsafe { engine.as_mut() }) else {
        return report(Failure::new(AE_ERR_NULL, "The engine pointer is null."));
    };
    if e.poisoned {
        return report(Failure::new(
            AE_ERR_POISONED,
            "The engine panicked in an earlier call; free it.",
        ));
    }
    match catch_unwind(AssertUnwindSafe(|| f(&mut *e))) {
        Ok(Ok(code)) => code,
        Ok(Err(failure)) => report(failure),
        Err(_) => {
            e.poisoned = true;
            report(Failure::new(
                AE_ERR_PANIC,
                "The engine panicked; it is poisoned and takes no more calls.",
            ))
        }
    }
}

/// The bytes behind `(ptr, len)`.
fn bytes<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a [u8], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::new(AE_ERR_NULL, format!("{what} is null.")));
    }
    if len > isize::MAX as usize {
        return Err(Failure::new(
            AE_ERR_LENGTH,
            format!("{what} is longer than any buffer can be ({len} bytes)."),
        ));
    }
    // SAFETY: the caller passes `len` readable bytes at `ptr` for the call (the boundary's
    // rules); null and impossible lengths were refused above.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

fn json<T: serde::de::DeserializeOwned>(
    ptr: *const u8,
    len: usize,
    what: &str,
) -> Result<T, Failure> {
    let raw = bytes(ptr, len, what)?;
    serde_json::from_slice(raw)
        .map_err(|e| Failure::new(AE_ERR_JSON, engine_core::json_error_text(what, &e)))
}

fn out<'a, T>(ptr: *mut T, what: &str) -> Result<&'a mut T, Failure> {
    // SAFETY: the caller passes null or a pointer to a writable `T` for the call (the
    // boundary's rules); null is refused.
    unsafe { ptr.as_mut() }.ok_or_else(|| Failure::new(AE_ERR_NULL, format!("{what} is null.")))
}

fn view(bytes: &[u8]) -> AeStr {
    AeStr {
        ptr: if bytes.is_empty() {
            std::ptr::null()
        } else {
            bytes.as_ptr()
        },
        len: bytes.len(),
    }
}

fn owned(bytes: Vec<u8>) -> AeBuf {
    if bytes.is_empty() {
        return AeBuf {
            ptr: std::ptr::null_mut(),
            len: 0,
        };
    }
    let boxed = bytes.into_boxed_slice();
    let len = boxed.len();
    AeBuf {
        ptr: Box::into_raw(boxed).cast::<u8>(),
        len,
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, Failure> {
    serde_json::to_vec(value).map_err(|e| Failure::new(AE_ERR_JSON, e.to_string()))
}

fn time(now_us: u64) -> Time {
    Time::from_micros(now_us)
}

/// Makes an engine from a JSON configuration, `{"platformBaseUrl": "https://...", "seed": 0,
/// "startUnixMs": 0, "maxBodyBytes": null, "maxAnswerBytes": null, "maxEventBytes": null,
/// "record": false, "platformSender": false}` (only `platformBaseUrl` is required), at the
/// host's time `now_us`. On success `*out` is the engine, to free with [`ae_engine_free`].
/// `platformSender: true` (RU-47): the host hands platform requests to its application's own
/// sender, which authenticates them; their intents then carry no `Authorization` header.
///
/// # Safety
/// `config` points to `len` readable bytes (or is null with `len` 0); `out` is null or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_engine_new(
    config: *const u8,
    len: usize,
    now_us: u64,
    out: *mut *mut AeEngine,
) -> i32 {
    guarded(|| {
        let out = self::out(out, "The engine's out pointer")?;
        *out = std::ptr::null_mut();
        let form: engine_core::HostConfig = json(config, len, "The configuration")?;
        let engine = form
            .engine(time(now_us))
            .map_err(|e| Failure::new(AE_ERR_CONFIG, e.to_string()))?;
        let boxed = Box::new(AeEngine {
            engine,
            intent: None,
            intent_url: String::new(),
            event: None,
            readiness: None,
            poisoned: false,
        });
        *out = Box::into_raw(boxed);
        Ok(AE_OK)
    })
}

/// Frees an engine made by [`ae_engine_new`]. Null is ignored.
///
/// # Safety
/// `engine` is null or a pointer from [`ae_engine_new`] not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_engine_free(engine: *mut AeEngine) {
    if engine.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `engine` came from `Box::into_raw` in `ae_engine_new` and is freed once.
        drop(unsafe { Box::from_raw(engine) });
    }));
}

/// Frees a buffer the library filled. A buffer with a null pointer is ignored.
///
/// # Safety
/// `buf` was filled by this library and not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_buf_free(buf: AeBuf) {
    if buf.ptr.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let slice = std::ptr::slice_from_raw_parts_mut(buf.ptr, buf.len);
        // SAFETY: `ptr` and `len` came from `Box::into_raw` of a boxed slice in `owned`, and
        // the buffer is freed once.
        drop(unsafe { Box::from_raw(slice) });
    }));
}

/// The message of the last error on this thread, into `*out` (free it with [`ae_buf_free`]);
/// returns that error's code, or [`AE_OK`] (and an empty buffer) when there was none.
///
/// # Safety
/// `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_last_error(out: *mut AeBuf) -> i32 {
    guarded(|| {
        let out = self::out(out, "The out buffer")?;
        let (code, message) =
            LAST_ERROR.with(|e| e.borrow().clone().unwrap_or((AE_OK, String::new())));
        *out = owned(message.into_bytes());
        Ok(code)
    })
}

/// The library's version, a static NUL-terminated string.
#[unsafe(no_mangle)]
pub extern "C" fn ae_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// A host input or command, as the trace format writes it: `{"input": "is_visible", "value":
/// true}`, `{"input": "command", "value": {"command": "send_message", "text": "Hi"}}`.
///
/// # Safety
/// `engine` is an engine of this library; `input` points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_handle_input(
    engine: *mut AeEngine,
    input: *const u8,
    len: usize,
    now_us: u64,
) -> i32 {
    with_engine(engine, |e| {
        let input: Input = json(input, len, "The input")?;
        e.engine.handle_input(input, time(now_us));
        Ok(AE_OK)
    })
}

/// The head of the answer to request `id`: `{"status": 200, "contentType":
/// "application/json", "agentSessionUid": null, "reason": "OK", "etag": null}` (`reason`,
/// optional: the status line's reason phrase, quoted by the text of a refused message or cancel
/// request; `etag`, optional: the `ETag` header, an Agent icon's fingerprint).
///
/// # Safety
/// `engine` is an engine of this library; `head` points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_handle_response(
    engine: *mut AeEngine,
    id: u64,
    head: *const u8,
    len: usize,
    now_us: u64,
) -> i32 {
    with_engine(engine, |e| {
        let head: ResponseHead = json(head, len, "The response head")?;
        e.engine.handle_response(RequestId(id), head, time(now_us));
        Ok(AE_OK)
    })
}

/// A piece of the body of the answer to request `id`, as it came (any split).
///
/// # Safety
/// `engine` is an engine of this library; `chunk` points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_handle_body_chunk(
    engine: *mut AeEngine,
    id: u64,
    chunk: *const u8,
    len: usize,
    now_us: u64,
) -> i32 {
    with_engine(engine, |e| {
        let chunk = bytes(chunk, len, "The chunk")?;
        e.engine.handle_body_chunk(
            RequestId(id),
            bytes::Bytes::copy_from_slice(chunk),
            time(now_us),
        );
        Ok(AE_OK)
    })
}

/// The body of the answer to request `id` is complete.
///
/// # Safety
/// `engine` is an engine of this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_handle_body_end(engine: *mut AeEngine, id: u64, now_us: u64) -> i32 {
    with_engine(engine, |e| {
        e.engine.handle_body_end(RequestId(id), time(now_us));
        Ok(AE_OK)
    })
}

/// Request `id` failed below HTTP: `{"kind": "no_answer", "message": "connection refused"}`
/// (`kind` `no_answer` or `broken`).
///
/// # Safety
/// `engine` is an engine of this library; `failure` points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_handle_failure(
    engine: *mut AeEngine,
    id: u64,
    failure: *const u8,
    len: usize,
    now_us: u64,
) -> i32 {
    with_engine(engine, |e| {
        let failure: TransportFailure = json(failure, len, "The failure")?;
        e.engine
            .handle_failure(RequestId(id), failure, time(now_us));
        Ok(AE_OK)
    })
}

/// The time [`ae_poll_timeout`] named has come (or passed).
///
/// # Safety
/// `engine` is an engine of this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_handle_timeout(engine: *mut AeEngine, now_us: u64) -> i32 {
    with_engine(engine, |e| {
        e.engine.handle_timeout(time(now_us));
        Ok(AE_OK)
    })
}

/// Takes the next intent into `*out` ([`AE_OK`]), or answers [`AE_NONE`] (and zeroes `*out`).
/// The views in `*out`, [`ae_intent_header`] and [`ae_intent_json`] read this intent until the
/// next `ae_poll_intent`. Credentials are in the headers only, never in the JSON.
///
/// # Safety
/// `engine` is an engine of this library; `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_poll_intent(engine: *mut AeEngine, out: *mut AeIntentView) -> i32 {
    with_engine(engine, |e| {
        let out = self::out(out, "The intent view")?;
        e.intent = e.engine.poll_intent();
        e.intent_url.clear();
        let Some(intent) = &e.intent else {
            *out = empty_intent();
            return Ok(AE_NONE);
        };
        *out = match intent {
            Intent::Http { id, request, .. } => {
                e.intent_url = request.url();
                AeIntentView {
                    kind: AE_INTENT_HTTP,
                    id: id.0,
                    method: view(request.method.as_str().as_bytes()),
                    url: view(e.intent_url.as_bytes()),
                    body: view(request.body.as_deref().unwrap_or_default()),
                    streamed: u8::from(request.body_mode == engine_core::BodyMode::Streamed),
                    header_count: request.headers.len(),
                    target: match request.target {
                        engine_core::Target::Platform => AE_TARGET_PLATFORM,
                        engine_core::Target::AgentRuntime => AE_TARGET_AGENT_RUNTIME,
                        engine_core::Target::Local => AE_TARGET_LOCAL,
                    },
                }
            }
            Intent::Abort { id } => AeIntentView {
                kind: AE_INTENT_ABORT,
                id: id.0,
                ..empty_intent()
            },
            Intent::Storage(_) => AeIntentView {
                kind: AE_INTENT_STORAGE,
                ..empty_intent()
            },
        };
        Ok(AE_OK)
    })
}

fn empty_intent() -> AeIntentView {
    AeIntentView {
        kind: 0,
        id: 0,
        method: view(&[]),
        url: view(&[]),
        body: view(&[]),
        streamed: 0,
        header_count: 0,
        target: AE_TARGET_PLATFORM,
    }
}

/// Header `index` of the current HTTP intent, its real value included (a credential too: send
/// it, never log it).
///
/// # Safety
/// `engine` is an engine of this library; `name` and `value` are null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_intent_header(
    engine: *mut AeEngine,
    index: usize,
    name: *mut AeStr,
    value: *mut AeStr,
) -> i32 {
    with_engine(engine, |e| {
        let name = self::out(name, "The header name")?;
        let value = self::out(value, "The header value")?;
        let Some(Intent::Http { request, .. }) = &e.intent else {
            return Err(Failure::new(AE_ERR_STATE, "No HTTP intent is current."));
        };
        let Some(header) = request.headers.get(index) else {
            return Err(Failure::new(
                AE_ERR_STATE,
                format!("The intent has {} headers.", request.headers.len()),
            ));
        };
        *name = view(header.name().as_bytes());
        *value = view(header.value().as_bytes());
        Ok(AE_OK)
    })
}

/// The current intent as the trace format writes it (credentials redacted), into `*out`.
///
/// # Safety
/// `engine` is an engine of this library; `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_intent_json(engine: *mut AeEngine, out: *mut AeBuf) -> i32 {
    with_engine(engine, |e| {
        let out = self::out(out, "The out buffer")?;
        let Some(intent) = &e.intent else {
            return Err(Failure::new(AE_ERR_STATE, "No intent is current."));
        };
        *out = owned(to_json(intent)?);
        Ok(AE_OK)
    })
}

/// Takes the next event into `*out` ([`AE_OK`]), or answers [`AE_NONE`] (and zeroes `*out`);
/// its views last until the next `ae_poll_event`. An answer's text,
/// reasoning or tool-input delta comes as views; any other event as `AE_EVENT_OTHER`, to read
/// with [`ae_event_json`] (which also reads a delta).
///
/// # Safety
/// `engine` is an engine of this library; `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_poll_event(engine: *mut AeEngine, out: *mut AeEventView) -> i32 {
    with_engine(engine, |e| {
        let out = self::out(out, "The event view")?;
        e.event = e.engine.poll_event();
        *out = AeEventView {
            kind: AE_EVENT_OTHER,
            index: 0,
            session_uid: view(&[]),
            text: view(&[]),
        };
        let Some(event) = &e.event else {
            return Ok(AE_NONE);
        };
        if let Event::Answer { session_uid, delta } = event {
            let (kind, index, text) = match delta {
                StreamDelta::TextDelta { index, delta } => (AE_EVENT_TEXT_DELTA, *index, delta),
                StreamDelta::ReasoningDelta { index, delta } => {
                    (AE_EVENT_REASONING_DELTA, *index, delta)
                }
                StreamDelta::ToolInputDelta { index, delta, .. } => {
                    (AE_EVENT_TOOL_INPUT_DELTA, *index, delta)
                }
                _ => return Ok(AE_OK),
            };
            *out = AeEventView {
                kind,
                index,
                session_uid: view(session_uid.as_bytes()),
                text: view(text.as_bytes()),
            };
        }
        Ok(AE_OK)
    })
}

/// The current event as JSON (`{"event": "notify", ...}`), into `*out`.
///
/// # Safety
/// `engine` is an engine of this library; `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_event_json(engine: *mut AeEngine, out: *mut AeBuf) -> i32 {
    with_engine(engine, |e| {
        let out = self::out(out, "The out buffer")?;
        let Some(event) = &e.event else {
            return Err(Failure::new(AE_ERR_STATE, "No event is current."));
        };
        *out = owned(to_json(event)?);
        Ok(AE_OK)
    })
}

/// When [`ae_handle_timeout`] should next be called, in `*out_us` on the host's clock
/// ([`AE_OK`]), or [`AE_NONE`] when no timer runs.
///
/// # Safety
/// `engine` is an engine of this library; `out_us` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_poll_timeout(engine: *mut AeEngine, out_us: *mut u64) -> i32 {
    with_engine(engine, |e| {
        let out = self::out(out_us, "The timeout")?;
        match e.engine.poll_timeout() {
            Some(at) => {
                *out = at.as_micros();
                Ok(AE_OK)
            }
            None => Ok(AE_NONE),
        }
    })
}

/// The whole snapshot as JSON (the spec's camelCase names), into `*out`.
///
/// # Safety
/// `engine` is an engine of this library; `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_snapshot(engine: *mut AeEngine, out: *mut AeBuf) -> i32 {
    with_engine(engine, |e| {
        let out = self::out(out, "The out buffer")?;
        *out = owned(to_json(&e.engine.snapshot())?);
        Ok(AE_OK)
    })
}

/// The run-status channel alone as JSON (`runStatus`, `runStatusDetail`, ...), into `*out`:
/// cheaper than the snapshot when only [`AeRevisions::run`] moved.
///
/// # Safety
/// `engine` is an engine of this library; `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_run_status(engine: *mut AeEngine, out: *mut AeBuf) -> i32 {
    with_engine(engine, |e| {
        let out = self::out(out, "The out buffer")?;
        *out = owned(to_json(&e.engine.run_status())?);
        Ok(AE_OK)
    })
}

/// The thread alone as a JSON array of messages (the history, this engine's turns, the
/// answer streaming), into `*out`: what to read again when [`AeRevisions::thread`] or
/// [`AeRevisions::streaming`] moved, cheaper than the whole snapshot.
///
/// # Safety
/// `engine` is an engine of this library; `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_thread(engine: *mut AeEngine, out: *mut AeBuf) -> i32 {
    with_engine(engine, |e| {
        let out = self::out(out, "The out buffer")?;
        let messages: Vec<_> = e.engine.thread().iter().collect();
        *out = owned(to_json(&messages)?);
        Ok(AE_OK)
    })
}

/// The revision counters, into `*out`: a part whose counter moved since the host last looked
/// has changed.
///
/// # Safety
/// `engine` is an engine of this library; `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_revisions(engine: *mut AeEngine, out: *mut AeRevisions) -> i32 {
    with_engine(engine, |e| {
        let out = self::out(out, "The revisions")?;
        let r = e.engine.revisions();
        *out = AeRevisions {
            state: r.state,
            run: r.run,
            thread: r.thread,
            streaming: r.streaming,
        };
        Ok(AE_OK)
    })
}

/// The recorded trace (JSON Lines, credentials redacted) of an engine made with `"record":
/// true`, into `*out`; [`AE_NONE`] when it records nothing.
///
/// # Safety
/// `engine` is an engine of this library; `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ae_trace(engine: *mut AeEngine, out: *mut AeBuf) -> i32 {
    with_engine(engine, |e| {
        let out = self::out(out, "The out buffer")?;
        match e.engine.trace() {
            Some(trace) => {
                *out = owned(trace.as_bytes().to_vec());
                Ok(AE_OK)
            }
            None => Ok(AE_NONE),
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, clippy::undocumented_unsafe_blocks)]
mod tests {
    use super::*;

    fn engine() -> *mut AeEngine {
        let config = br#"{"platformBaseUrl": "http://127.0.0.1:8787", "seed": 3}"#;
        let mut e = std::ptr::null_mut();
        assert_eq!(
            unsafe { ae_engine_new(config.as_ptr(), config.len(), 0, &mut e) },
            AE_OK
        );
        e
    }

    fn last_error() -> (i32, String) {
        let mut buf = AeBuf {
            ptr: std::ptr::null_mut(),
            len: 0,
        };
        let code = unsafe { ae_last_error(&mut buf) };
        let text = if buf.ptr.is_null() {
            String::new()
        } else {
            String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(buf.ptr, buf.len) })
                .into_owned()
        };
        unsafe { ae_buf_free(buf) };
        (code, text)
    }

    /// No panic crosses the boundary: it is reported as `AE_ERR_PANIC` with a message, and the
    /// engine it happened in is poisoned (`AE_ERR_POISONED`) but can still be freed.
    #[test]
    fn a_panic_is_caught_and_poisons_the_engine() {
        let e = engine();
        let code = with_engine(e, |_| panic!("boom"));
        assert_eq!(code, AE_ERR_PANIC);
        assert_eq!(last_error().0, AE_ERR_PANIC);
        assert_eq!(unsafe { ae_handle_timeout(e, 1) }, AE_ERR_POISONED);
        let (code, text) = last_error();
        assert_eq!(code, AE_ERR_POISONED);
        assert!(text.contains("free it"), "{text}");
        unsafe { ae_engine_free(e) };
        assert_eq!(guarded(|| panic!("boom")), AE_ERR_PANIC);
    }

    /// The same inputs give the same intents through the boundary (INV-12).
    #[test]
    fn the_same_inputs_give_the_same_intents() {
        let run = || {
            let e = engine();
            let inputs: [&[u8]; 2] = [
                br#"{"input":"source","value":{"baseUrl":"http://127.0.0.1:8787","displayName":"A"}}"#,
                br#"{"input":"is_visible","value":true}"#,
            ];
            for input in inputs {
                assert_eq!(
                    unsafe { ae_handle_input(e, input.as_ptr(), input.len(), 10) },
                    AE_OK
                );
            }
            let mut out = Vec::new();
            let mut view = empty_intent();
            while unsafe { ae_poll_intent(e, &mut view) } == AE_OK {
                let mut buf = AeBuf {
                    ptr: std::ptr::null_mut(),
                    len: 0,
                };
                assert_eq!(unsafe { ae_intent_json(e, &mut buf) }, AE_OK);
                out.push(unsafe { std::slice::from_raw_parts(buf.ptr, buf.len) }.to_vec());
                unsafe { ae_buf_free(buf) };
            }
            unsafe { ae_engine_free(e) };
            out
        };
        let first = run();
        assert!(!first.is_empty());
        assert_eq!(first, run());
    }

    /// RU-47: with `"platformSender": true` the platform intents carry no `Authorization`
    /// header though the person has a token (the host's sender authenticates them); without
    /// it they carry `Bearer {token}`.
    #[test]
    fn platform_sender_intents_carry_no_authorization() {
        let authorizations = |config: &[u8]| {
            let mut e = std::ptr::null_mut();
            assert_eq!(
                unsafe { ae_engine_new(config.as_ptr(), config.len(), 0, &mut e) },
                AE_OK
            );
            let inputs: [&[u8]; 3] = [
                br#"{"input":"person","value":{"userUid":"u-1","token":"t-secret"}}"#,
                br#"{"input":"environment_uid","value":"env-1"}"#,
                br#"{"input":"is_visible","value":true}"#,
            ];
            for input in inputs {
                assert_eq!(
                    unsafe { ae_handle_input(e, input.as_ptr(), input.len(), 10) },
                    AE_OK
                );
            }
            let (mut requests, mut found) = (0, Vec::new());
            let mut view = empty_intent();
            while unsafe { ae_poll_intent(e, &mut view) } == AE_OK {
                if view.kind != AE_INTENT_HTTP {
                    continue;
                }
                requests += 1;
                assert_eq!(view.target, AE_TARGET_PLATFORM);
                for index in 0..view.header_count {
                    let (mut name, mut value) = (empty_str(), empty_str());
                    assert_eq!(
                        unsafe { ae_intent_header(e, index, &mut name, &mut value) },
                        AE_OK
                    );
                    let read = |s: AeStr| unsafe { std::slice::from_raw_parts(s.ptr, s.len) };
                    if read(name).eq_ignore_ascii_case(b"authorization") {
                        found.push(String::from_utf8_lossy(read(value)).into_owned());
                    }
                }
            }
            unsafe { ae_engine_free(e) };
            assert!(requests > 0);
            (requests, found)
        };
        let (_, found) = authorizations(
            br#"{"platformBaseUrl": "http://127.0.0.1:8787", "platformSender": true}"#,
        );
        assert!(found.is_empty(), "{found:?}");
        let (requests, found) = authorizations(br#"{"platformBaseUrl": "http://127.0.0.1:8787"}"#);
        assert_eq!(found.len(), requests);
        assert!(found.iter().all(|v| v == "Bearer t-secret"));
    }

    /// RU-45: a refused base URL is `AE_ERR_CONFIG` with the reference's text.
    #[test]
    fn a_refused_base_url_is_the_config_status_with_its_text() {
        let config = br#"{"platformBaseUrl": "/api"}"#;
        let mut e = std::ptr::null_mut();
        assert_eq!(
            unsafe { ae_engine_new(config.as_ptr(), config.len(), 0, &mut e) },
            AE_ERR_CONFIG
        );
        assert!(e.is_null());
        assert_eq!(
            last_error(),
            (
                AE_ERR_CONFIG,
                "The chat backend connection requires an absolute http(s) platform API base URL."
                    .to_owned()
            )
        );
    }

    fn empty_str() -> AeStr {
        AeStr {
            ptr: std::ptr::null(),
            len: 0,
        }
    }
}

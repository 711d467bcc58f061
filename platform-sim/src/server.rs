//! The HTTP front: logging, faults, authentication and dispatch.

use std::collections::VecDeque;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State as AxumState};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::state::State;
use crate::types::{Fault, FaultKind, LoggedRequest, SimConfig};
use crate::{faults, local, platform, runtime};

/// How long a cut connection waits before breaking, so that what was sent is flushed first.
pub(crate) const FLUSH_PAUSE: Duration = Duration::from_millis(20);

/// The largest request body read.
const BODY_LIMIT: usize = 4 << 20;

/// Locks a mutex, ignoring poisoning (the data stays usable).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What every request handler shares.
pub(crate) struct Shared {
    pub config: SimConfig,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    started: Instant,
    log: Mutex<Vec<LoggedRequest>>,
    faults: Mutex<VecDeque<Fault>>,
    pub state: Mutex<State>,
    /// Set to true when the server shuts down.
    pub shutdown: watch::Sender<bool>,
    /// Bytes the body-writing faults produced so far (`faults`).
    pub fault_bytes: AtomicU64,
}

impl Shared {
    pub(crate) fn new(config: SimConfig, url: String) -> Shared {
        let state = State::new(&config);
        Shared {
            config,
            url,
            started: Instant::now(),
            log: Mutex::new(Vec::new()),
            faults: Mutex::new(VecDeque::new()),
            state: Mutex::new(state),
            shutdown: watch::Sender::new(false),
            fault_bytes: AtomicU64::new(0),
        }
    }

    pub(crate) fn log(&self) -> Vec<LoggedRequest> {
        lock(&self.log).clone()
    }

    pub(crate) fn clear_log(&self) {
        lock(&self.log).clear();
    }

    pub(crate) fn fault(&self, fault: Fault) {
        if fault.times > 0 {
            lock(&self.faults).push_back(fault);
        }
    }

    pub(crate) fn clear_faults(&self) {
        lock(&self.faults).clear();
    }

    /// Stops every running answer and the server's accept loop.
    pub(crate) fn begin_shutdown(&self) {
        self.shutdown.send_replace(true);
        let state = lock(&self.state);
        for session in &state.sessions {
            if let Some(turn) = &session.turn {
                turn.cancel.send_replace(true);
            }
        }
    }

    /// The first queued fault matching the request, used once.
    fn take_fault(&self, method: &str, path: &str) -> Option<FaultKind> {
        let mut faults = lock(&self.faults);
        let index = faults.iter().position(|f| f.matches(method, path))?;
        let fault = faults.get_mut(index)?;
        fault.times = fault.times.saturating_sub(1);
        let kind = fault.kind.clone();
        if fault.times == 0 {
            faults.remove(index);
        }
        Some(kind)
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Waits `ms`, or less when the server shuts down.
    pub(crate) async fn pause(&self, ms: u64) {
        let mut shutdown = self.shutdown.subscribe();
        tokio::select! {
            _ = shutdown.wait_for(|down| *down) => {}
            () = tokio::time::sleep(Duration::from_millis(ms)) => {}
        }
    }
}

/// A request, read.
#[derive(Debug)]
pub(crate) struct Req {
    pub method: Method,
    pub headers: HeaderMap,
    pub query: Vec<(String, String)>,
    pub body: Bytes,
}

impl Req {
    /// The first value of a query parameter.
    pub(crate) fn param(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON: `Ok(None)` when empty, a 400 answer when it is not JSON.
    pub(crate) fn json(&self) -> Result<Option<Value>, Response> {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        serde_json::from_slice(&self.body).map(Some).map_err(|_| {
            error(
                400,
                "JSON parse error - the request body is not valid JSON.",
            )
        })
    }

    /// The bearer credential of `Authorization` (any scheme), if any.
    pub(crate) fn credential(&self) -> Option<(&str, &str)> {
        let value = self.headers.get(AUTHORIZATION)?.to_str().ok()?.trim();
        let (scheme, credential) = value.split_once(' ')?;
        Some((scheme, credential.trim()))
    }
}

/// A JSON answer.
pub(crate) fn json_response(status: u16, value: &Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = Response::new(Body::from(value.to_string()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A `{"detail": message}` answer.
pub(crate) fn error(status: u16, message: &str) -> Response {
    json_response(status, &json!({ "detail": message }))
}

/// RU-50: the 401 of the reference's stand-in, for a missing or refused credential alike.
pub(crate) const UNAUTHENTICATED: &str =
    "Authentication credentials were not provided or are not valid.";

/// RU-50: 404 for a path with no route: "The stand-in has no route for {METHOD} {path}."
pub(crate) fn no_route(method: &Method, path: &str) -> Response {
    error(
        404,
        &format!("The stand-in has no route for {method} {path}."),
    )
}

/// RU-50: 405 for a route that takes other methods only.
pub(crate) fn not_allowed(method: &Method) -> Response {
    error(405, &format!("Method \"{method}\" not allowed."))
}

/// RU-50: 404 for an address outside the platform API and the Agents' runtimes.
pub(crate) fn outside(req: &Req, path: &str, query: &str) -> Response {
    let host = req
        .headers
        .get(axum::http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("127.0.0.1");
    let query = if query.is_empty() {
        String::new()
    } else {
        format!("?{query}")
    };
    let url = format!("http://{host}{path}{query}");
    error(
        404,
        &format!("The stand-in answers the platform API and the Agent's runtime only, not {url}."),
    )
}

/// An answer without a body.
pub(crate) fn empty(status: u16) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::NO_CONTENT);
    response
}

/// A response whose body fails at once: the connection closes before any byte is written.
fn close_without_answer() -> Response {
    let failing = futures_util::stream::once(async {
        Err::<Bytes, std::io::Error>(std::io::Error::other("closed without an answer"))
    });
    Response::new(Body::from_stream(failing))
}

/// The same answer, with its body cut after half of it (the connection then breaks).
pub(crate) async fn cut_in_half(response: Response) -> Response {
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let half = bytes.slice(..bytes.len() / 2);
    // The pause lets the head and the first half go out before the connection breaks.
    let stream = futures_util::StreamExt::chain(
        futures_util::stream::iter([Ok(half)]),
        futures_util::stream::once(async {
            tokio::time::sleep(FLUSH_PAUSE).await;
            Err::<Bytes, _>(std::io::Error::other("dropped mid-answer"))
        }),
    );
    let mut parts = parts;
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from_stream(stream))
}

/// Replaces every secret in `text` with `[redacted]`.
fn redact(text: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .filter(|s| !s.is_empty())
        .fold(text.to_owned(), |text, secret| {
            text.replace(secret.as_str(), "[redacted]")
        })
}

fn redact_value(value: &mut Value, secrets: &[String]) {
    match value {
        Value::String(text) => *text = redact(text, secrets),
        Value::Array(items) => items.iter_mut().for_each(|v| redact_value(v, secrets)),
        Value::Object(map) => map.values_mut().for_each(|v| redact_value(v, secrets)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Decodes one percent-encoded path segment.
pub(crate) fn decode(segment: &str) -> String {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8_lossy()
        .into_owned()
}

/// Where a path goes: the runtime of an Agent (`/runtime/{agent}/...`), the local runtime's
/// routes (when one is played), or the platform.
enum Target {
    Runtime { agent: String, rest: String },
    Local,
    Platform,
}

fn target(path: &str, local: bool) -> Target {
    if local && local::is_local_route(path) {
        return Target::Local;
    }
    match path
        .strip_prefix("/runtime/")
        .and_then(|rest| rest.split_once('/'))
    {
        Some((agent, rest)) => Target::Runtime {
            agent: decode(agent),
            rest: format!("/{rest}"),
        },
        None => Target::Platform,
    }
}

/// The one handler: log, fault, authenticate, dispatch.
pub(crate) async fn handle(
    AxumState(shared): AxumState<Arc<Shared>>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    if let Some(page) = crate::web::serve(&shared.config, &parts.method, parts.uri.path()) {
        return page;
    }
    let body = axum::body::to_bytes(body, BODY_LIMIT)
        .await
        .unwrap_or_default();
    let received = parts.uri.path().to_owned();
    // Behind a prefix, the path served is the one after it (stripped once).
    let prefixed = match shared.config.path_prefix.as_deref() {
        None => Some(received.clone()),
        Some(prefix) => received
            .strip_prefix(prefix.trim_end_matches('/'))
            .filter(|rest| rest.starts_with('/'))
            .map(str::to_owned),
    };
    let path = prefixed.clone().unwrap_or_default();
    let raw_query = parts.uri.query().unwrap_or_default().to_owned();
    let query = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&parts.uri)
        .map(|q| q.0)
        .unwrap_or_default();
    let req = Req {
        method: parts.method.clone(),
        headers: parts.headers,
        query,
        body,
    };
    let target = target(&path, shared.config.local.is_some());

    // Who is asking, and the log entry (tokens redacted), before any fault.
    let (authorized, secrets) = {
        let state = lock(&shared.state);
        let authorized = match &target {
            Target::Runtime { agent, .. } => req.credential().is_some_and(|(scheme, token)| {
                scheme.eq_ignore_ascii_case("bearer") && state.runtime_token_valid(agent, token)
            }),
            Target::Local => !req.headers.contains_key(AUTHORIZATION),
            Target::Platform => req
                .credential()
                .is_some_and(|(_, token)| token == shared.config.platform_token),
        };
        let mut secrets = state.runtime_tokens();
        secrets.push(shared.config.platform_token.clone());
        (authorized, secrets)
    };
    let logged_body = if req.body.is_empty() {
        None
    } else {
        let mut value = serde_json::from_slice(&req.body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&req.body).into_owned()));
        redact_value(&mut value, &secrets);
        Some(value)
    };
    let logged_path = redact(&received, &secrets);
    let logged_query = redact(&raw_query, &secrets);
    // Redacted as the request log is (`RUST_LOG=platform_sim=debug`); headers never.
    tracing::debug!(
        method = req.method.as_str(),
        path = %logged_path,
        query = %logged_query,
        authorized,
        "request"
    );
    lock(&shared.log).push(LoggedRequest {
        method: req.method.as_str().to_owned(),
        path: logged_path.clone(),
        query: logged_query.clone(),
        body: logged_body,
        authorized,
        at_ms: shared.elapsed_ms(),
    });

    if prefixed.is_none() || matches!(target, Target::Platform) && !path.starts_with("/api/v1/") {
        return outside(&req, &logged_path, &logged_query);
    }
    // A runtime address of no Agent the platform hands out is outside too.
    if let Target::Runtime { agent, .. } = &target
        && lock(&shared.state).agent(agent).is_none()
    {
        return outside(&req, &logged_path, &logged_query);
    }
    let mut drop_after = None;
    let mut drip = None;
    match shared.take_fault(req.method.as_str(), &path) {
        Some(FaultKind::Status(status, body)) => {
            return if body.is_null() {
                empty(status)
            } else {
                json_response(status, &body)
            };
        }
        Some(FaultKind::Delay(ms)) => shared.pause(ms).await,
        Some(FaultKind::MalformedJson) => {
            let mut response = Response::new(Body::from(r#"{"detail": "truncated"#));
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            return response;
        }
        Some(FaultKind::CloseWithoutAnswer) => return close_without_answer(),
        Some(FaultKind::DropMidStream { after_chunks }) => drop_after = Some(after_chunks),
        Some(FaultKind::Redirect { status, location }) => {
            return faults::redirect(status, &location);
        }
        Some(FaultKind::Drip { bytes, pause_ms }) => drip = Some((bytes, pause_ms)),
        Some(FaultKind::InvalidUtf8) => return faults::invalid_utf8(shared.config.dialect),
        Some(FaultKind::HugeLine { bytes }) => return faults::huge_line(&shared, bytes),
        Some(FaultKind::LargeAnswer { bytes }) => return faults::large_answer(&shared, bytes),
        Some(FaultKind::LargeHistory { messages }) => {
            return faults::large_history(&shared, &path, messages);
        }
        None => {}
    }
    let response = dispatch(&shared, &req, &path, target, authorized, drop_after).await;
    match drip {
        Some((bytes, pause_ms)) => faults::drip(&shared, response, bytes, pause_ms),
        None => response,
    }
}

/// Authenticates and answers a request (cut in half for `DropMidStream`).
async fn dispatch(
    shared: &Arc<Shared>,
    req: &Req,
    path: &str,
    target: Target,
    authorized: bool,
    drop_after: Option<usize>,
) -> Response {
    match target {
        Target::Runtime { agent, rest } => {
            let call = runtime::Call {
                agent: &agent,
                rest: &rest,
                path,
            };
            runtime::handle(shared, req, call, authorized, drop_after).await
        }
        Target::Local => match &shared.config.local {
            Some(config) => local::handle(shared, config, req, path, drop_after).await,
            None => error(404, "Not found."),
        },
        Target::Platform => {
            let response = platform::handle(shared, req, path, authorized);
            match drop_after {
                Some(_) => cut_in_half(response).await,
                None => response,
            }
        }
    }
}

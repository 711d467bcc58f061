//! The reqwest glue both shells share: the client, one exchange from request to its last part
//! ([`exchange`]: timeouts, limits while reading, failures), the request for an
//! [`HttpRequest`], transport errors in the project's own words ([`no_answer_text`],
//! [`BROKEN_TEXT`]; the library's own line, without the URL, goes to the log), and durations
//! for messages.
//! Public so that `engine-io-blocking`, which runs the same async client on a thread of its
//! own, says, sends and reads exactly the same.
//!
//! An exchange decides nothing: no retries, no parsing of bodies, no interpretation of
//! statuses. A failure before the head is [`FailureKind::NoAnswer`], after it
//! [`FailureKind::Broken`]. A buffered body is handed over whole as one chunk; a streamed one
//! (`BodyMode::Streamed`) piece by piece as it arrives, bounded by `stream_idle_timeout` of
//! silence before its head and between two pieces. Neither is read past the engine's own
//! limit ([`Limits`]): the piece that passes it is the last handed over, and the engine then
//! refuses the answer and aborts it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use engine_core::{BodyMode, FailureKind, HttpRequest, Method, ResponseHead, TransportFailure};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tokio::time::{Instant, timeout_at};

/// The status line's reason phrase: as received when it differs from the canonical one (hyper
/// keeps it then, HTTP/1 only), else the status's canonical phrase (RU-19 puts it in the text
/// of a refused runtime request). `None` for a status without one.
fn reason_phrase(response: &reqwest::Response) -> Option<String> {
    match response.extensions().get::<hyper::ext::ReasonPhrase>() {
        Some(reason) => Some(String::from_utf8_lossy(reason.as_bytes()).into_owned()),
        None => response.status().canonical_reason().map(str::to_owned),
    }
}

/// A piece of an answer, in the order the engine takes them.
#[derive(Debug)]
pub enum Part {
    /// The status line (always first, unless the request failed before it).
    Head(ResponseHead),
    /// Body bytes.
    Chunk(Bytes),
    /// The body ended (last).
    End,
    /// The request failed (last).
    Failed(TransportFailure),
}

/// Where an exchange hands its parts: the shell's way to its engine.
pub trait Sink {
    /// Hands a part over, waiting for room (back-pressure: a fast answer is read no faster
    /// than the engine takes it); `false` when the engine is gone, and the exchange stops.
    fn send(&self, part: Part) -> impl Future<Output = bool> + Send;

    /// Waits until there is room for a part (cancel-safe: dropping the wait loses nothing);
    /// `false` when the engine is gone. A streamed answer keeps reading while it waits, and
    /// hands over what arrived meanwhile as one piece. The default is always ready: each piece
    /// is then handed over as it came, `send` waiting for room. Room seen here may be taken
    /// by another exchange before `send`, which then waits.
    fn ready(&self) -> impl Future<Output = bool> + Send {
        std::future::ready(true)
    }
}

/// The limits every exchange of a shell applies.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Buffered requests: the head and the whole body within this.
    pub request_timeout: Duration,
    /// Streamed requests: the wait for the head and between two pieces of the body.
    pub stream_idle_timeout: Duration,
    /// A buffered body (and a streamed non-2xx one) is handed over once it grows past this
    /// (`Config::max_body_bytes`, which the engine then refuses) and no more of it is read.
    pub max_body_bytes: usize,
    /// A streamed 2xx answer is no longer read once it passed this (`Config::max_answer_bytes`:
    /// the engine fails the answer as too large and aborts it).
    pub max_answer_bytes: usize,
}

/// The HTTP client of a shell, or why it could not be built (every request then fails, no
/// answer, with the reason in its message).
pub type Client = Result<reqwest::Client, ClientError>;

/// Why a shell's HTTP client could not be built (a TLS backend that cannot start, a user agent
/// that is not a header value). Its [`source`](std::error::Error::source) is reqwest's error,
/// stripped of any address, and the causes go on from there.
///
/// ```
/// use std::error::Error;
/// let e = engine_io_tokio::transport::client(std::time::Duration::from_secs(1), "bad\nagent")
///     .unwrap_err();
/// assert_eq!(e.to_string(), "The HTTP client could not be built.");
/// assert!(e.source().and_then(|s| s.downcast_ref::<reqwest::Error>()).is_some());
/// ```
#[derive(Debug, Clone)]
pub struct ClientError {
    /// Shared, so that the shell's client (and its error) can be cloned.
    source: Arc<reqwest::Error>,
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("The HTTP client could not be built.")
    }
}

impl std::error::Error for ClientError {
    /// reqwest's error itself (not its `Arc`), so that it can be downcast.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

impl ClientError {
    /// The error and its causes on one line, without any address (what a failed request says
    /// after "No HTTP client: ").
    pub fn describe(&self) -> String {
        describe(&self.source)
    }
}

/// Builds a shell's client: the TLS backend the crate's features chose (see "TLS" in the crate
/// docs), this connect timeout, no redirects (the engine sees every status as sent: a 307 would
/// repeat a message request, and carry a credential elsewhere).
pub fn client(connect_timeout: Duration, user_agent: &str) -> Client {
    #[cfg(feature = "rustls-ring")]
    install_ring_provider();
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(user_agent)
        .build()
        .map_err(|e| ClientError {
            source: Arc::new(e.without_url()),
        })
}

/// `rustls-ring`: makes ring the process's default rustls crypto provider, which reqwest's
/// rustls backend then uses, unless the host (or another library) already installed one: that
/// one is kept.
#[cfg(feature = "rustls-ring")]
// rustls 0.23.48 deprecates the ring provider for its want of post-quantum key exchange; ring is
// what this feature is for (no aws-lc build). The default `rustls` feature (aws-lc-rs) has it.
#[allow(deprecated)]
fn install_ring_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install one in between: the first one installed wins, and either
        // serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// Carries `request` out to `url` (its address after the host's rewrite) and hands its answer
/// to `out`, part by part, to its last part or until `out` is gone.
pub async fn exchange(
    client: &Client,
    request: &HttpRequest,
    url: &str,
    limits: Limits,
    out: &impl Sink,
) {
    let streamed = request.body_mode == BodyMode::Streamed;
    let started = Instant::now();
    let head_limit = if streamed {
        limits.stream_idle_timeout
    } else {
        limits.request_timeout
    };
    let client = match client {
        Ok(client) => client,
        Err(e) => {
            let message = format!("No HTTP client: {}", e.describe());
            fail(out, FailureKind::NoAnswer, message).await;
            return;
        }
    };
    let builder = match build(client, request, url) {
        Ok(builder) => builder,
        Err(message) => {
            fail(out, FailureKind::NoAnswer, message).await;
            return;
        }
    };
    tracing::debug!("sending");
    let mut response = match timeout_at(started + head_limit, builder.send()).await {
        Ok(Ok(response)) => response,
        Ok(Err(e)) => {
            tracing::debug!(error = %describe(&e), "no answer");
            fail(out, FailureKind::NoAnswer, no_answer_text(&e).to_owned()).await;
            return;
        }
        Err(_) => {
            let message = format!("No answer within {}.", show(head_limit));
            fail(out, FailureKind::NoAnswer, message).await;
            return;
        }
    };
    let status = response.status().as_u16();
    tracing::Span::current().record("status", status);
    tracing::debug!(status, "response head");
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mut head = ResponseHead::new(status, content_type).with_reason(reason_phrase(&response));
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    // ADR 099: a local runtime names the conversation a turn ran in.
    head.agent_session_uid = header("x-agent-session-uid");
    // RU-35: an Agent icon's fingerprint.
    head = head.with_etag(header("etag"));
    if !out.send(Part::Head(head)).await {
        return;
    }
    if streamed {
        let limit = if (200..300).contains(&status) {
            limits.max_answer_bytes
        } else {
            limits.max_body_bytes
        };
        stream_body(&mut response, limits.stream_idle_timeout, limit, out).await;
    } else {
        let deadline = started + limits.request_timeout;
        buffer_body(&mut response, deadline, limits, out).await;
    }
}

/// The most a streamed piece gathers while the engine is busy ([`stream_body`]).
const GATHER_BYTES: usize = 64 * 1024;

/// Hands each piece on as it arrives; fails the answer when it is silent too long, and stops
/// reading once it passed `limit` (the engine refuses it on the piece that passes it).
///
/// While the engine has no room for a piece (the sink's channel is full), reading goes on and
/// what arrives is joined to the piece waiting, up to [`GATHER_BYTES`]: an answer written one
/// small event at a time then reaches a busy engine as fewer, larger pieces (one hand-over
/// and one engine input for many events). With room, each piece goes on at once, as it came.
async fn stream_body(
    response: &mut reqwest::Response,
    idle: Duration,
    limit: usize,
    out: &impl Sink,
) {
    let mut total: usize = 0;
    let mut waiting = Gathered::default();
    // One timer for the whole body, not one per piece: each piece only notes its time, and
    // the timer, when it fires, moves to the deadline if that is later. Silence counts only
    // while nothing waits for the engine, from the last piece read or handed over (as when
    // each piece had its own timeout, started once the one before was handed over).
    let stall = tokio::time::sleep(idle);
    tokio::pin!(stall);
    let mut deadline = Instant::now() + idle;
    loop {
        let next = tokio::select! {
            biased;
            ready = out.ready(), if !waiting.is_empty() => {
                if !ready || !out.send(Part::Chunk(waiting.take())).await {
                    return;
                }
                if total > limit {
                    tracing::debug!(bytes = total, limit, "answer past its limit: no more read");
                    return;
                }
                deadline = Instant::now() + idle;
                continue;
            }
            // Past the limit, the piece that passed it waits: nothing more is read.
            next = response.chunk(), if waiting.len() < GATHER_BYTES && total <= limit => next,
            () = &mut stall, if waiting.is_empty() => {
                if Instant::now() < deadline {
                    stall.as_mut().reset(deadline);
                    continue;
                }
                let message = format!("The answer stalled for {}.", show(idle));
                fail(out, FailureKind::Broken, message).await;
                return;
            }
        };
        deadline = Instant::now() + idle;
        match next {
            Ok(Some(chunk)) => {
                total = total.saturating_add(chunk.len());
                waiting.push(chunk);
            }
            Ok(None) => {
                tracing::debug!(bytes = total, "answer ended");
                if waiting.is_empty() || out.send(Part::Chunk(waiting.take())).await {
                    out.send(Part::End).await;
                }
                return;
            }
            Err(e) => {
                tracing::debug!(error = %describe(&e), "answer broke off");
                if waiting.is_empty() || out.send(Part::Chunk(waiting.take())).await {
                    fail(out, FailureKind::Broken, BROKEN_TEXT.to_owned()).await;
                }
                return;
            }
        }
    }
}

/// The pieces read and not handed over yet: one as it came (no copy), or several joined.
#[derive(Default)]
struct Gathered {
    one: Bytes,
    joined: BytesMut,
}

impl Gathered {
    fn len(&self) -> usize {
        self.one.len() + self.joined.len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn push(&mut self, chunk: Bytes) {
        if chunk.is_empty() {
            return;
        }
        if self.is_empty() {
            self.one = chunk;
            return;
        }
        if !self.one.is_empty() {
            let one = std::mem::take(&mut self.one);
            self.joined.extend_from_slice(&one);
        }
        self.joined.extend_from_slice(&chunk);
    }

    fn take(&mut self) -> Bytes {
        if self.joined.is_empty() {
            std::mem::take(&mut self.one)
        } else {
            self.joined.split().freeze()
        }
    }
}

/// Reads the whole body, then hands it on as one piece. A body past the limit is handed on at
/// once and no more of it is read (the engine refuses it).
async fn buffer_body(
    response: &mut reqwest::Response,
    deadline: Instant,
    limits: Limits,
    out: &impl Sink,
) {
    let mut body = BytesMut::new();
    loop {
        match timeout_at(deadline, response.chunk()).await {
            Ok(Ok(Some(chunk))) => {
                body.extend_from_slice(&chunk);
                if body.len() > limits.max_body_bytes {
                    tracing::debug!(bytes = body.len(), "body past its limit: no more read");
                    out.send(Part::Chunk(body.freeze())).await;
                    return;
                }
            }
            Ok(Ok(None)) => {
                tracing::debug!(bytes = body.len(), "answer ended");
                if !body.is_empty() && !out.send(Part::Chunk(body.freeze())).await {
                    return;
                }
                out.send(Part::End).await;
                return;
            }
            Ok(Err(e)) => {
                tracing::debug!(error = %describe(&e), "answer broke off");
                fail(out, FailureKind::Broken, BROKEN_TEXT.to_owned()).await;
                return;
            }
            Err(_) => {
                let message = format!(
                    "The answer did not complete within {}.",
                    show(limits.request_timeout)
                );
                fail(out, FailureKind::Broken, message).await;
                return;
            }
        }
    }
}

async fn fail(out: &impl Sink, kind: FailureKind, message: String) {
    tracing::info!(?kind, %message, "request failed");
    out.send(Part::Failed(TransportFailure::new(kind, message)))
        .await;
}

/// The reqwest request for `request`; an error names the offending header, never its value.
pub fn build(
    client: &reqwest::Client,
    request: &HttpRequest,
    url: &str,
) -> Result<reqwest::RequestBuilder, String> {
    let method = match request.method {
        Method::Get => reqwest::Method::GET,
        Method::Post => reqwest::Method::POST,
        Method::Patch => reqwest::Method::PATCH,
        Method::Put => reqwest::Method::PUT,
        Method::Delete => reqwest::Method::DELETE,
    };
    let mut headers = HeaderMap::new();
    for header in &request.headers {
        let name = HeaderName::from_bytes(header.name().as_bytes())
            .map_err(|_| format!("Invalid header name {:?}.", header.name()))?;
        let mut value = HeaderValue::from_str(header.value())
            .map_err(|_| format!("Invalid value for header {:?}.", header.name()))?;
        // Kept out of HPACK tables and of the client's own debug output.
        value.set_sensitive(header.is_sensitive());
        headers.append(name, value);
    }
    let mut builder = client.request(method, url).headers(headers);
    if let Some(body) = &request.body {
        builder = builder.body(body.clone());
    }
    Ok(builder)
}

/// What a failure after the head reads: the engine's own text for an answer that ended early
/// (a body that breaks off is an interrupted answer), never the HTTP library's.
pub const BROKEN_TEXT: &str = engine_core::stream::INTERRUPTED_TEXT;

/// What a failure before the head reads, in the project's own words: the HTTP library's text
/// names its internals (and sometimes the address), so it goes to the log only ([`describe`]).
pub fn no_answer_text(error: &reqwest::Error) -> &'static str {
    if error.is_connect() {
        if error.is_timeout() {
            "Could not connect to the server in time."
        } else if refused(error) {
            "The server refused to connect."
        } else {
            "Could not connect to the server."
        }
    } else if error.is_timeout() {
        "No answer in time."
    } else {
        "The server closed without answering."
    }
}

/// Whether an I/O error in the causes of `error` is a refusal.
fn refused(error: &reqwest::Error) -> bool {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        current = e.source();
    }
    false
}

/// A transport error as one line: the error and its causes, without the URL (for the log, and
/// for a client that could not be built).
pub fn describe(error: &reqwest::Error) -> String {
    let mut message = String::new();
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    let mut first = true;
    while let Some(e) = current {
        let text = if first {
            // reqwest's own line names the URL; the engine already knows which request it was.
            strip_url(&e.to_string())
        } else {
            e.to_string()
        };
        first = false;
        if !text.is_empty() && !message.contains(&text) {
            if !message.is_empty() {
                message.push_str(": ");
            }
            message.push_str(&text);
        }
        current = e.source();
    }
    if message.is_empty() {
        message.push_str("The request failed.");
    }
    message
}

/// `"error sending request for url (http://…)"` → `"error sending request"`.
fn strip_url(text: &str) -> String {
    match text.find(" for url (") {
        Some(at) => text.get(..at).unwrap_or(text).to_owned(),
        None => text.to_owned(),
    }
}

/// A duration for messages: `250 ms`, `30 s`.
pub fn show(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test fails loudly
mod tests {
    use super::*;

    #[test]
    fn messages_name_no_url_and_read_well() {
        assert_eq!(show(Duration::from_secs(30)), "30 s");
        assert_eq!(show(Duration::from_millis(250)), "250 ms");
        assert_eq!(
            strip_url("error sending request for url (http://h/p?q=1)"),
            "error sending request"
        );
    }

    /// `rustls-ring`: building the client installs ring as the process's rustls provider, and
    /// the client builds (it would panic without a provider).
    #[cfg(feature = "rustls-ring")]
    #[test]
    fn ring_provider_is_installed() {
        let built = client(Duration::from_secs(1), "test");
        assert!(built.is_ok(), "{built:?}");
        let names = |p: &rustls::crypto::CryptoProvider| -> Vec<String> {
            p.kx_groups
                .iter()
                .map(|g| format!("{:?}", g.name()))
                .collect()
        };
        let installed = rustls::crypto::CryptoProvider::get_default().map(|p| names(p));
        // Deprecated in rustls 0.23.48 (no post-quantum key exchange): see install_ring_provider.
        #[allow(deprecated)]
        let ring = rustls::crypto::ring::default_provider();
        assert_eq!(installed, Some(names(&ring)));
    }

    /// A client that cannot be built says so, and its causes walk down to the header value
    /// refused, through reqwest's error (which names no address).
    #[test]
    fn client_error_keeps_its_causes() {
        use std::error::Error as _;
        let e = client(Duration::from_secs(1), "bad\nagent").unwrap_err();
        assert_eq!(e.to_string(), "The HTTP client could not be built.");
        let mut chain = Vec::new();
        let mut current: Option<&(dyn std::error::Error + 'static)> = Some(&e);
        while let Some(err) = current {
            chain.push(err.to_string());
            current = err.source();
        }
        assert!(chain.len() >= 3, "{chain:?}");
        let reqwest_error = e.source().and_then(|s| s.downcast_ref::<reqwest::Error>());
        assert!(reqwest_error.is_some_and(|r| r.is_builder() && r.url().is_none()));
        assert!(
            chain.last().is_some_and(|c| c.contains("header value")),
            "{chain:?}"
        );
        assert!(
            e.describe().starts_with("builder error"),
            "{}",
            e.describe()
        );
    }

    /// No TLS feature: the client builds and speaks plain HTTP; an `https` address fails
    /// without even connecting.
    #[cfg(not(any(feature = "rustls", feature = "rustls-ring", feature = "native-tls")))]
    #[tokio::test]
    async fn without_tls_https_is_refused() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let c = client(Duration::from_secs(1), "test").unwrap();
        let sent = c.get(format!("https://127.0.0.1:{port}/")).send().await;
        assert!(sent.is_err());
        let accepted = tokio::time::timeout(Duration::from_millis(100), listener.accept()).await;
        assert!(accepted.is_err(), "a connection was made");
    }
}

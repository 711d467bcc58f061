//! The application's own request sender (RU-47 to RU-49, the reference's
//! `connection.sendPlatformRequest`): an application that reaches the platform through its own
//! client (its session cookie, a proxy, a token it renews itself) hands the shell a
//! [`PlatformSender`], and every platform request (P1 to P14) goes to it as one complete request.
//!
//! - The request is as the engine built it, at its address after the host's rewrite, without
//!   any `Authorization` header: with a sender the engine is configured with
//!   [`engine_core::Config::platform_sender`], so it never adds the person's token (RU-47).
//! - The sender's answer is final (RU-48): a 401 is that request's answer, and nothing repeats
//!   it; renewing a credential belongs to the sender.
//! - The Agent runtime's requests never go to it (RU-49): they go directly, on the shell's own
//!   client, with the runtime token.
//! - A sender's answer is complete (status, headers, whole body); its body is held to the
//!   engine's body limit like any other. A sender that takes longer than the shell's
//!   `request_timeout` fails the request ("No answer within ..."); an error it returns fails it
//!   as no answer, with its text. Aborting a request drops the sender's future.
//!
//! ```
//! use std::sync::Arc;
//! use engine_io_tokio::sender::{PlatformSender, SenderRequest, SenderResponse, SenderFuture};
//!
//! // A sender that answers every platform request itself (a real one calls its own client).
//! let sender: Arc<dyn PlatformSender> = Arc::new(|request: SenderRequest| -> SenderFuture {
//!     assert!(request.header("authorization").is_none());
//!     Box::pin(async move {
//!         Ok(SenderResponse::new(200, br#"{"results": []}"#.to_vec())
//!             .with_header("content-type", "application/json"))
//!     })
//! });
//! # let _ = sender;
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use engine_core::{FailureKind, HttpRequest, Method, ResponseHead, Target, TransportFailure};
use tokio::time::{Instant, timeout_at};

use crate::transport::{Client, Limits, Part, Sink, exchange, show};

/// A platform request as the application's sender receives it.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SenderRequest {
    /// The method (`PATCH` for P3, ...).
    pub method: Method,
    /// The absolute address, after the host's rewrite (RU-47).
    pub url: String,
    /// The headers as built (`Accept`, `Content-Type`), never `Authorization`.
    pub headers: Vec<(String, String)>,
    /// The body, when the request has one (JSON).
    pub body: Option<Bytes>,
}

impl SenderRequest {
    /// The value of header `name` (any case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl std::fmt::Debug for SenderRequest {
    /// The body's size, not its bytes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SenderRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &self.headers)
            .field("body_bytes", &self.body.as_ref().map(Bytes::len))
            .finish()
    }
}

/// The sender's complete answer.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SenderResponse {
    /// The HTTP status.
    pub status: u16,
    /// The status line's reason phrase, when the sender has one (else the status's canonical
    /// phrase is used).
    pub reason: Option<String>,
    /// The answer's headers; the engine reads `Content-Type`, `ETag` and `X-Agent-Session-Uid`.
    pub headers: Vec<(String, String)>,
    /// The whole body.
    pub body: Bytes,
}

impl std::fmt::Debug for SenderResponse {
    /// The headers' names and the body's size, not their values (a `Set-Cookie` stays out).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("SenderResponse")
            .field("status", &self.status)
            .field("reason", &self.reason)
            .field("headers", &names)
            .field("body_bytes", &self.body.len())
            .finish()
    }
}

impl SenderResponse {
    /// An answer with this status and body, and no header.
    pub fn new(status: u16, body: impl Into<Bytes>) -> SenderResponse {
        SenderResponse {
            status,
            reason: None,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// The same answer with one more header.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    }
}

/// What a sender returns: its answer, or why there is none (the request then fails as no
/// answer, with this text).
pub type SenderFuture = Pin<Box<dyn Future<Output = Result<SenderResponse, String>> + Send>>;

/// The application's own sender of platform requests. Any
/// `Fn(SenderRequest) -> SenderFuture + Send + Sync` is one; a blocking function becomes one
/// with [`from_blocking`].
pub trait PlatformSender: Send + Sync + 'static {
    /// Sends one platform request and returns its complete answer.
    fn send(&self, request: SenderRequest) -> SenderFuture;
}

impl<F> PlatformSender for F
where
    F: Fn(SenderRequest) -> SenderFuture + Send + Sync + 'static,
{
    fn send(&self, request: SenderRequest) -> SenderFuture {
        self(request)
    }
}

/// A sender from a blocking function (the blocking shell's hosts), run on tokio's blocking
/// pool. An aborted request drops its answer; the call itself runs to its end.
pub fn from_blocking<F>(send: F) -> Arc<dyn PlatformSender>
where
    F: Fn(SenderRequest) -> Result<SenderResponse, String> + Send + Sync + 'static,
{
    let send = Arc::new(send);
    Arc::new(move |request: SenderRequest| -> SenderFuture {
        let send = Arc::clone(&send);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || send(request))
                .await
                .map_err(|_| "The request sender stopped without an answer.".to_owned())?
        })
    })
}

/// Carries `request` out: a platform request through `sender` when there is one, anything else
/// (and every request without a sender) with the shell's own client ([`exchange`]).
pub async fn carry(
    client: &Client,
    sender: Option<&dyn PlatformSender>,
    request: &HttpRequest,
    url: &str,
    limits: Limits,
    out: &impl Sink,
) {
    match sender {
        Some(sender) if request.target == Target::Platform => {
            send_through(sender, request, url, limits, out).await;
        }
        _ => exchange(client, request, url, limits, out).await,
    }
}

async fn send_through(
    sender: &dyn PlatformSender,
    request: &HttpRequest,
    url: &str,
    limits: Limits,
    out: &impl Sink,
) {
    let headers = request
        .headers
        .iter()
        .filter(|h| !h.name().eq_ignore_ascii_case("authorization"))
        .map(|h| (h.name().to_owned(), h.value().to_owned()))
        .collect();
    let outgoing = SenderRequest {
        method: request.method,
        url: url.to_owned(),
        headers,
        body: request.body.clone(),
    };
    let deadline = Instant::now() + limits.request_timeout;
    let failure =
        |message: String| Part::Failed(TransportFailure::new(FailureKind::NoAnswer, message));
    let response = match timeout_at(deadline, sender.send(outgoing)).await {
        Ok(Ok(response)) => response,
        Ok(Err(message)) => {
            // Not its text: a sender's own words may hold a credential.
            tracing::info!("the request sender failed");
            out.send(failure(message)).await;
            return;
        }
        Err(_) => {
            let message = format!("No answer within {}.", show(limits.request_timeout));
            out.send(failure(message)).await;
            return;
        }
    };
    let canonical = || {
        reqwest::StatusCode::from_u16(response.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .map(str::to_owned)
    };
    let head = ResponseHead::new(response.status, response.header("content-type"))
        .with_reason(response.reason.clone().or_else(canonical))
        .with_agent_session_uid(response.header("x-agent-session-uid"))
        .with_etag(response.header("etag"));
    // Held to the engine's limit as a read would be: one byte past it is enough to refuse.
    let body = response.body.slice(
        ..response
            .body
            .len()
            .min(limits.max_body_bytes.saturating_add(1)),
    );
    let _ = out.send(Part::Head(head)).await
        && (body.is_empty() || out.send(Part::Chunk(body)).await)
        && out.send(Part::End).await;
}

//! One HTTP exchange on a worker thread with `reqwest::blocking`: head, body, end or failure,
//! each sent back to the driver tagged with the request id.

use std::io::{ErrorKind, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use bytes::Bytes;
use engine_core::{
    BodyMode, FailureKind, HttpRequest, Method, RequestId, ResponseHead, TransportFailure,
};
use reqwest::blocking::{Client, Response};

use crate::driver::Msg;

/// Size of one read from a response body.
const READ_SIZE: usize = 16 * 1024;

/// The transport limits a worker applies.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Buffered requests: the wait for the head, for each read, and (checked between reads) the
    /// whole exchange.
    pub request_timeout: Duration,
    /// Streamed requests: the wait for the head and for each piece of the body.
    pub stream_idle_timeout: Duration,
    /// A buffered body is handed over once it grows past this (the engine's own limit, which then
    /// refuses it), so an endless body cannot exhaust memory.
    pub max_body_bytes: usize,
}

/// Builds the shared client. Per-request timeouts are set on each request.
pub(crate) fn client(connect_timeout: Duration) -> Result<Client, String> {
    Client::builder()
        .connect_timeout(connect_timeout)
        // The engine sees every status as sent: a redirect is not followed (a 307 would repeat a
        // message request, and carry a credential elsewhere).
        .redirect(reqwest::redirect::Policy::none())
        .timeout(None::<Duration>)
        .user_agent(concat!("engine-io-blocking/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| describe(&e.without_url()))
}

/// One request on its worker thread.
pub(crate) struct Exchange {
    pub id: RequestId,
    pub request: HttpRequest,
    /// The address requested: the request's own after the host's rewrite.
    pub url: String,
    pub limits: Limits,
    pub aborted: Arc<AtomicBool>,
    pub to_driver: Sender<Msg>,
}

impl Exchange {
    /// Runs the exchange to its end, its failure, or its abort.
    pub(crate) fn run(self, client: &Result<Client, String>) {
        let started = Instant::now();
        let client = match client {
            Ok(client) => client,
            Err(message) => {
                self.fail(FailureKind::NoAnswer, format!("No HTTP client: {message}"));
                return;
            }
        };
        let Some(response) = self.send(client) else {
            return;
        };
        if self.is_aborted() {
            tracing::debug!("aborted before the head was handed over");
            return;
        }
        let head = ResponseHead {
            status: response.status().as_u16(),
            content_type: response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
        };
        tracing::debug!(
            status = head.status,
            elapsed_ms = elapsed_ms(started),
            "head"
        );
        if !self.deliver(Msg::Head(self.id, head)) {
            return;
        }
        match self.request.body_mode {
            BodyMode::Buffered => self.read_buffered(response, started),
            BodyMode::Streamed => self.read_streamed(response, started),
        }
    }

    /// Sends the request and waits for the head; a failure here is "no answer".
    fn send(&self, client: &Client) -> Option<Response> {
        let request = &self.request;
        let method = match request.method {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
            Method::Patch => reqwest::Method::PATCH,
            Method::Delete => reqwest::Method::DELETE,
        };
        let mut builder = client.request(method, self.url.as_str());
        // A buffered request has an overall limit; a streamed answer has none here (reqwest's
        // blocking timeout covers the whole body): the driver fails it after a silence of
        // `stream_idle_timeout` instead.
        if request.body_mode == BodyMode::Buffered {
            builder = builder.timeout(self.limits.request_timeout);
        }
        for header in &request.headers {
            let Ok(mut value) = reqwest::header::HeaderValue::from_str(header.value()) else {
                let message = format!("Invalid value for header {:?}.", header.name());
                self.fail(FailureKind::NoAnswer, message);
                return None;
            };
            // Kept out of HPACK tables and of the client's own debug output.
            value.set_sensitive(header.is_sensitive());
            builder = builder.header(header.name(), value);
        }
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        match builder.send() {
            Ok(response) => Some(response),
            Err(e) => {
                self.fail(FailureKind::NoAnswer, describe(&e.without_url()));
                None
            }
        }
    }

    /// Reads the whole body, then hands it over as one chunk and ends.
    fn read_buffered(&self, mut response: Response, started: Instant) {
        let mut body = Vec::new();
        let mut buf = vec![0_u8; READ_SIZE];
        let cap = self.limits.max_body_bytes.saturating_add(1);
        while body.len() < cap {
            if self.is_aborted() {
                tracing::debug!("aborted while reading the body");
                return;
            }
            if started.elapsed() > self.limits.request_timeout {
                self.fail(
                    FailureKind::Broken,
                    "Timed out reading the response body.".into(),
                );
                return;
            }
            match response.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => body.extend_from_slice(buf.get(..n).unwrap_or_default()),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    self.fail(FailureKind::Broken, describe(&e));
                    return;
                }
            }
        }
        let len = body.len();
        if len > 0 && !self.deliver(Msg::Chunk(self.id, Bytes::from(body))) {
            return;
        }
        if self.deliver(Msg::End(self.id)) {
            tracing::debug!(bytes = len, elapsed_ms = elapsed_ms(started), "end");
        }
    }

    /// Hands over every piece as it arrives, then ends.
    fn read_streamed(&self, mut response: Response, started: Instant) {
        let mut buf = vec![0_u8; READ_SIZE];
        let mut total: usize = 0;
        loop {
            if self.is_aborted() {
                tracing::debug!(bytes = total, "aborted while streaming");
                return;
            }
            match response.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    total = total.saturating_add(n);
                    let piece = Bytes::copy_from_slice(buf.get(..n).unwrap_or_default());
                    if !self.deliver(Msg::Chunk(self.id, piece)) {
                        return;
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    self.fail(FailureKind::Broken, describe(&e));
                    return;
                }
            }
        }
        if self.deliver(Msg::End(self.id)) {
            tracing::debug!(bytes = total, elapsed_ms = elapsed_ms(started), "end");
        }
    }

    fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Acquire)
    }

    /// Sends a message to the driver; `false` when the request should stop (aborted, or the
    /// driver is gone).
    fn deliver(&self, msg: Msg) -> bool {
        !self.is_aborted() && self.to_driver.send(msg).is_ok()
    }

    fn fail(&self, kind: FailureKind, message: String) {
        if self.is_aborted() {
            return;
        }
        tracing::debug!(?kind, %message, "transport failure");
        let failure = TransportFailure { kind, message };
        // The driver may be gone (shutdown); nothing else to do then.
        let _ = self.to_driver.send(Msg::Failure(self.id, failure));
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// An error and its sources on one line.
fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let line = inner.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        source = inner.source();
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;
    use std::sync::mpsc;

    fn run(url: &str, mode: BodyMode, timeout: Duration) -> Vec<Msg> {
        let (tx, rx) = mpsc::channel();
        let (base, path) = url.split_at(url.find("/p").unwrap());
        let request = HttpRequest {
            method: Method::Get,
            target: engine_core::Target::Platform,
            base: base.to_owned(),
            path: path.to_owned(),
            query: Vec::new(),
            headers: Vec::new(),
            body: None,
            body_mode: mode,
            root_relative: false,
        };
        let exchange = Exchange {
            id: RequestId(7),
            url: request.url(),
            request,
            limits: Limits {
                request_timeout: timeout,
                stream_idle_timeout: timeout,
                max_body_bytes: 1024,
            },
            aborted: Arc::new(AtomicBool::new(false)),
            to_driver: tx,
        };
        exchange.run(&client(Duration::from_secs(2)));
        rx.try_iter().collect()
    }

    /// A one-shot server that writes `reply` after reading the request head.
    fn serve(reply: &'static [u8], hold: Duration) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut buf = [0_u8; 4096];
            let _ = socket.read(&mut buf);
            let _ = socket.write_all(reply);
            std::thread::sleep(hold);
        });
        format!("http://{addr}/p")
    }

    fn failure(msgs: &[Msg]) -> &TransportFailure {
        match msgs.last() {
            Some(Msg::Failure(RequestId(7), f)) => f,
            _ => panic!("no failure in {} messages", msgs.len()),
        }
    }

    #[test]
    fn refused_is_no_answer() {
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let msgs = run(
            &format!("http://127.0.0.1:{port}/p"),
            BodyMode::Buffered,
            Duration::from_secs(2),
        );
        assert_eq!(msgs.len(), 1);
        let f = failure(&msgs);
        assert_eq!(f.kind, FailureKind::NoAnswer);
        assert!(!f.message.contains("127.0.0.1"), "{}", f.message);
    }

    #[test]
    fn no_head_in_time_is_no_answer() {
        let url = serve(b"", Duration::from_secs(2));
        let msgs = run(&url, BodyMode::Buffered, Duration::from_millis(200));
        assert_eq!(msgs.len(), 1);
        let f = failure(&msgs);
        assert_eq!(f.kind, FailureKind::NoAnswer);
        assert!(f.message.contains("timed out"), "{}", f.message);
    }

    #[test]
    fn cut_body_is_broken_after_the_head() {
        let url = serve(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":",
            Duration::ZERO,
        );
        for mode in [BodyMode::Buffered, BodyMode::Streamed] {
            let url = if mode == BodyMode::Buffered {
                url.clone()
            } else {
                serve(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\ndata: {",
                    Duration::ZERO,
                )
            };
            let msgs = run(&url, mode, Duration::from_secs(2));
            assert!(matches!(msgs.first(), Some(Msg::Head(_, head)) if head.status == 200));
            assert_eq!(failure(&msgs).kind, FailureKind::Broken);
        }
    }

    #[test]
    fn stalled_stream_is_broken_after_the_idle_timeout() {
        let url = serve(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\ndata:\r\n",
            Duration::from_secs(2),
        );
        let msgs = run(&url, BodyMode::Streamed, Duration::from_millis(300));
        assert!(
            matches!(msgs.first(), Some(Msg::Head(_, h)) if h.content_type.as_deref() == Some("text/event-stream"))
        );
        assert!(matches!(msgs.get(1), Some(Msg::Chunk(_, c)) if c.as_ref() == b"data:"));
        assert_eq!(failure(&msgs).kind, FailureKind::Broken);
    }

    #[test]
    fn buffered_body_is_one_chunk_then_end() {
        let url = serve(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
            Duration::ZERO,
        );
        let msgs = run(&url, BodyMode::Buffered, Duration::from_secs(2));
        assert!(
            matches!(msgs.as_slice(), [Msg::Head(_, h), Msg::Chunk(_, c), Msg::End(RequestId(7))]
            if h.status == 404 && h.content_type.is_none() && c.as_ref() == b"{}")
        );
    }

    #[test]
    fn oversized_buffered_body_is_handed_over_at_the_limit() {
        // 1024 is the limit in `run`; the server announces more and keeps the connection open.
        let mut reply = b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n".to_vec();
        reply.extend(std::iter::repeat_n(b' ', 5000));
        let url = serve(Box::leak(reply.into_boxed_slice()), Duration::ZERO);
        let msgs = run(&url, BodyMode::Buffered, Duration::from_secs(2));
        assert!(matches!(msgs.get(1), Some(Msg::Chunk(_, c)) if c.len() > 1024));
        assert!(matches!(msgs.last(), Some(Msg::End(_))));
    }
}

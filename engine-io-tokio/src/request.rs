//! One request task: sends an [`HttpRequest`] with reqwest and reports its answer, part by part,
//! over the engine task's channel. It decides nothing: no retries, no parsing.

use crate::transport::{build, describe, show};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use engine_core::{BodyMode, FailureKind, HttpRequest, RequestId, ResponseHead, TransportFailure};
use reqwest::header::CONTENT_TYPE;
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout, timeout_at};
use tracing::Instrument;

/// A piece of an answer, in the order the engine takes them.
#[derive(Debug)]
pub(crate) enum Part {
    /// The status line (always first, unless the request failed before it).
    Head(ResponseHead),
    /// Body bytes.
    Chunk(Bytes),
    /// The body ended (last).
    End,
    /// The request failed (last).
    Failed(TransportFailure),
}

/// A part of request `id`'s answer.
#[derive(Debug)]
pub(crate) struct Completion {
    pub id: RequestId,
    pub part: Part,
}

/// The transport limits of one shell.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// A buffered request, head and body, must finish within this.
    pub request_timeout: Duration,
    /// A streamed answer may be silent this long (before its head, and between chunks).
    pub stream_idle_timeout: Duration,
    /// A buffered body is handed over whole up to this size; past it, as it arrives (the engine
    /// refuses it and aborts the request).
    pub buffer_limit: usize,
}

/// The HTTP client of a shell, or why it could not be built (every request then fails with
/// that message).
pub(crate) type Client = Result<reqwest::Client, String>;

/// Builds the shell's client: rustls, this connect timeout, no redirects (the engine sees every
/// status as sent, and a credential never follows a redirect).
pub(crate) fn client(connect_timeout: Duration) -> Client {
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("engine-io-tokio/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| describe(&e))
}

/// Where a request task sends its parts.
struct Out {
    id: RequestId,
    tx: mpsc::Sender<Completion>,
}

impl Out {
    /// Sends a part; `false` when the engine task is gone (the request then stops).
    async fn send(&self, part: Part) -> bool {
        let id = self.id;
        self.tx.send(Completion { id, part }).await.is_ok()
    }
}

/// Sends `request` to `url` (its address after the host's rewrite) and reports its answer under
/// `id`. Returns `id` when done.
pub(crate) async fn execute(
    client: Client,
    id: RequestId,
    request: HttpRequest,
    url: String,
    limits: Limits,
    tx: mpsc::Sender<Completion>,
) -> RequestId {
    // Never the headers (credentials) nor the body; the path holds ids, not secrets.
    let span = tracing::info_span!(
        "http",
        id = id.0,
        method = request.method.as_str(),
        target = ?request.target,
        path = %request.path,
        status = tracing::field::Empty,
    );
    let out = Out { id, tx };
    run(client, request, &url, limits, &out)
        .instrument(span)
        .await;
    id
}

async fn run(client: Client, request: HttpRequest, url: &str, limits: Limits, out: &Out) {
    let streamed = request.body_mode == BodyMode::Streamed;
    let started = Instant::now();
    let head_limit = if streamed {
        limits.stream_idle_timeout
    } else {
        limits.request_timeout
    };
    let client = match client {
        Ok(client) => client,
        Err(message) => {
            fail(out, TransportFailure::no_answer(message)).await;
            return;
        }
    };
    let builder = match build(&client, &request, url) {
        Ok(builder) => builder,
        Err(message) => {
            fail(out, TransportFailure::no_answer(message)).await;
            return;
        }
    };
    tracing::debug!("sending");
    let mut response = match timeout_at(started + head_limit, builder.send()).await {
        Ok(Ok(response)) => response,
        Ok(Err(e)) => {
            fail(out, TransportFailure::no_answer(describe(&e))).await;
            return;
        }
        Err(_) => {
            let message = format!("No answer within {}.", show(head_limit));
            fail(out, TransportFailure::no_answer(message)).await;
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
    if !out
        .send(Part::Head(ResponseHead {
            status,
            content_type,
        }))
        .await
    {
        return;
    }
    if streamed {
        stream_body(&mut response, limits.stream_idle_timeout, out).await;
    } else {
        let deadline = started + limits.request_timeout;
        buffer_body(&mut response, deadline, limits, out).await;
    }
}

/// Hands each chunk on as it arrives; fails the answer when it is silent too long.
async fn stream_body(response: &mut reqwest::Response, idle: Duration, out: &Out) {
    let mut chunks = 0_u64;
    loop {
        match timeout(idle, response.chunk()).await {
            Ok(Ok(Some(chunk))) => {
                chunks += 1;
                if !chunk.is_empty() && !out.send(Part::Chunk(chunk)).await {
                    return;
                }
            }
            Ok(Ok(None)) => {
                tracing::debug!(chunks, "answer ended");
                out.send(Part::End).await;
                return;
            }
            Ok(Err(e)) => {
                fail(out, broken(describe(&e))).await;
                return;
            }
            Err(_) => {
                let message = format!("The answer stalled for {}.", show(idle));
                fail(out, broken(message)).await;
                return;
            }
        }
    }
}

/// Reads the whole body, then hands it on as one chunk. A body past the buffer limit is handed
/// on as it arrives instead, so the engine can refuse it without the shell holding it all.
async fn buffer_body(
    response: &mut reqwest::Response,
    deadline: Instant,
    limits: Limits,
    out: &Out,
) {
    let mut body = BytesMut::new();
    let mut passing_through = false;
    loop {
        match timeout_at(deadline, response.chunk()).await {
            Ok(Ok(Some(chunk))) => {
                if passing_through {
                    if !out.send(Part::Chunk(chunk)).await {
                        return;
                    }
                    continue;
                }
                body.extend_from_slice(&chunk);
                if body.len() > limits.buffer_limit {
                    passing_through = true;
                    if !out.send(Part::Chunk(body.split().freeze())).await {
                        return;
                    }
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
                fail(out, broken(describe(&e))).await;
                return;
            }
            Err(_) => {
                let message = format!(
                    "The answer did not complete within {}.",
                    show(limits.request_timeout)
                );
                fail(out, broken(message)).await;
                return;
            }
        }
    }
}

async fn fail(out: &Out, failure: TransportFailure) {
    tracing::info!(kind = ?failure.kind, message = %failure.message, "request failed");
    out.send(Part::Failed(failure)).await;
}

fn broken(message: String) -> TransportFailure {
    TransportFailure {
        kind: FailureKind::Broken,
        message,
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod tests {
    use super::*;
    use engine_core::Method;

    use std::sync::{Arc, Mutex};

    use axum::Router;
    use axum::body::Body;
    use axum::http::{HeaderMap as AxumHeaders, StatusCode, header};
    use axum::response::{IntoResponse, Response};
    use axum::routing::{get, post};
    use engine_core::{Header, Target};

    const LIMITS: Limits = Limits {
        request_timeout: Duration::from_secs(5),
        stream_idle_timeout: Duration::from_secs(5),
        buffer_limit: 1024,
    };

    async fn serve(app: Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}")
    }

    fn request(base: &str, path: &str, body_mode: BodyMode) -> HttpRequest {
        HttpRequest {
            method: Method::Get,
            target: Target::Platform,
            base: base.to_owned(),
            path: path.to_owned(),
            query: vec![("q".into(), "a b&c".into())],
            headers: vec![
                Header::sensitive("Authorization", "Bearer secret-token"),
                Header::new("Accept", "application/json"),
            ],
            body: None,
            body_mode,
            root_relative: false,
        }
    }

    /// A body that sends these pieces with a pause between them, then ends (or breaks off).
    fn paced(pieces: Vec<&'static str>, pause: Duration, then_error: bool) -> Body {
        let stream = futures_util::stream::unfold(
            (pieces.into_iter(), false),
            move |(mut it, paused)| async move {
                if paused {
                    tokio::time::sleep(pause).await;
                }
                match it.next() {
                    Some(p) => Some((Ok::<_, std::io::Error>(Bytes::from(p)), (it, true))),
                    None if then_error => Some((Err(std::io::Error::other("cut")), (it, true))),
                    None => None,
                }
            },
        );
        Body::from_stream(stream)
    }

    async fn collect(client: Client, request: HttpRequest, limits: Limits) -> Vec<Part> {
        let (tx, mut rx) = mpsc::channel(16);
        let id = execute(
            client,
            RequestId(7),
            request.clone(),
            request.url(),
            limits,
            tx,
        )
        .await;
        assert_eq!(id, RequestId(7));
        let mut parts = Vec::new();
        while let Some(c) = rx.recv().await {
            assert_eq!(c.id, RequestId(7));
            parts.push(c.part);
        }
        parts
    }

    fn shape(parts: &[Part]) -> Vec<String> {
        parts
            .iter()
            .map(|p| match p {
                Part::Head(h) => format!("head {}", h.status),
                Part::Chunk(c) => format!("chunk {}", String::from_utf8_lossy(c)),
                Part::End => "end".into(),
                Part::Failed(f) => format!("failed {:?}", f.kind),
            })
            .collect()
    }

    fn test_client() -> Client {
        client(Duration::from_secs(2))
    }

    #[tokio::test]
    async fn buffered_answer_is_head_one_chunk_end_with_headers_and_query() {
        let seen = Arc::new(Mutex::new(None));
        let keep = seen.clone();
        let app = Router::new().route(
            "/x/",
            get(
                move |headers: AxumHeaders, uri: axum::http::Uri| async move {
                    *keep.lock().unwrap() = Some((
                        headers.get("authorization").cloned(),
                        uri.query().map(str::to_owned),
                    ));
                    (
                        [(header::CONTENT_TYPE, "application/json")],
                        paced(vec!["{\"a\":", "1}"], Duration::from_millis(10), false),
                    )
                },
            ),
        );
        let base = serve(app).await;
        let parts = collect(
            test_client(),
            request(&base, "/x/", BodyMode::Buffered),
            LIMITS,
        )
        .await;
        assert_eq!(shape(&parts), ["head 200", "chunk {\"a\":1}", "end"]);
        let Part::Head(head) = &parts[0] else {
            panic!()
        };
        assert_eq!(head.content_type.as_deref(), Some("application/json"));
        let (auth, query) = seen.lock().unwrap().clone().unwrap();
        assert_eq!(auth.unwrap(), "Bearer secret-token");
        assert_eq!(query.as_deref(), Some("q=a%20b%26c"));
    }

    #[tokio::test]
    async fn streamed_answer_arrives_chunk_by_chunk() {
        let app = Router::new().route(
            "/s",
            get(|| async {
                paced(
                    vec!["da", "ta: 1\n\n", "data: 2\n\n"],
                    Duration::from_millis(30),
                    false,
                )
            }),
        );
        let base = serve(app).await;
        let parts = collect(
            test_client(),
            request(&base, "/s", BodyMode::Streamed),
            LIMITS,
        )
        .await;
        assert_eq!(
            shape(&parts),
            [
                "head 200",
                "chunk da",
                "chunk ta: 1\n\n",
                "chunk data: 2\n\n",
                "end"
            ]
        );
    }

    #[tokio::test]
    async fn error_status_is_an_answer_and_redirects_are_not_followed() {
        let app = Router::new()
            .route(
                "/e",
                get(|| async { (StatusCode::SERVICE_UNAVAILABLE, "busy") }),
            )
            .route(
                "/r",
                get(|| async {
                    (StatusCode::FOUND, [(header::LOCATION, "/e")], "").into_response()
                }),
            );
        let base = serve(app).await;
        let parts = collect(
            test_client(),
            request(&base, "/e", BodyMode::Buffered),
            LIMITS,
        )
        .await;
        assert_eq!(shape(&parts), ["head 503", "chunk busy", "end"]);
        let parts = collect(
            test_client(),
            request(&base, "/r", BodyMode::Buffered),
            LIMITS,
        )
        .await;
        assert_eq!(shape(&parts), ["head 302", "end"]);
    }

    #[tokio::test]
    async fn refused_connection_is_no_answer() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let parts = collect(
            test_client(),
            request(&base, "/", BodyMode::Buffered),
            LIMITS,
        )
        .await;
        assert_eq!(shape(&parts), ["failed NoAnswer"]);
        let Part::Failed(f) = &parts[0] else { panic!() };
        assert!(!f.message.contains("secret-token"), "{}", f.message);
        assert!(!f.message.contains(&base), "{}", f.message);
    }

    #[tokio::test]
    async fn timeouts_are_no_answer_before_the_head_and_broken_after() {
        let app = Router::new()
            .route(
                "/slow-head",
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    "late"
                }),
            )
            .route(
                "/slow-body",
                get(|| async { paced(vec!["a", "b"], Duration::from_secs(5), false) }),
            );
        let base = serve(app).await;
        let short = Limits {
            request_timeout: Duration::from_millis(150),
            stream_idle_timeout: Duration::from_millis(150),
            ..LIMITS
        };
        for mode in [BodyMode::Buffered, BodyMode::Streamed] {
            let parts = collect(test_client(), request(&base, "/slow-head", mode), short).await;
            assert_eq!(shape(&parts), ["failed NoAnswer"], "{mode:?}");
            let Part::Failed(f) = &parts[0] else { panic!() };
            assert!(f.message.contains("150 ms"), "{}", f.message);
        }
        let parts = collect(
            test_client(),
            request(&base, "/slow-body", BodyMode::Buffered),
            short,
        )
        .await;
        assert_eq!(shape(&parts), ["head 200", "failed Broken"]);
        let parts = collect(
            test_client(),
            request(&base, "/slow-body", BodyMode::Streamed),
            short,
        )
        .await;
        assert_eq!(shape(&parts), ["head 200", "chunk a", "failed Broken"]);
    }

    #[tokio::test]
    async fn a_body_that_breaks_off_is_broken() {
        let app = Router::new().route(
            "/cut",
            post(|| async { Response::new(paced(vec!["part"], Duration::from_millis(5), true)) }),
        );
        let base = serve(app).await;
        for mode in [BodyMode::Buffered, BodyMode::Streamed] {
            let mut r = request(&base, "/cut", mode);
            r.method = Method::Post;
            r.body = Some(Bytes::from_static(b"{}"));
            let parts = collect(test_client(), r, LIMITS).await;
            let shape = shape(&parts);
            assert_eq!(
                shape.first().map(String::as_str),
                Some("head 200"),
                "{mode:?}"
            );
            assert_eq!(
                shape.last().map(String::as_str),
                Some("failed Broken"),
                "{mode:?}"
            );
        }
    }

    #[tokio::test]
    async fn an_oversized_buffered_body_passes_through() {
        let app = Router::new().route(
            "/big",
            get(|| async {
                paced(
                    vec!["aaaa", "bbbb", "cccc"],
                    Duration::from_millis(5),
                    false,
                )
            }),
        );
        let base = serve(app).await;
        let limits = Limits {
            buffer_limit: 6,
            ..LIMITS
        };
        let parts = collect(
            test_client(),
            request(&base, "/big", BodyMode::Buffered),
            limits,
        )
        .await;
        assert_eq!(
            shape(&parts),
            ["head 200", "chunk aaaabbbb", "chunk cccc", "end"]
        );
    }

    #[tokio::test]
    async fn a_client_that_could_not_be_built_fails_every_request() {
        let r = request("http://127.0.0.1:9", "/", BodyMode::Buffered);
        let parts = collect(Err("no TLS backend".into()), r, LIMITS).await;
        assert_eq!(shape(&parts), ["failed NoAnswer"]);
    }

    #[tokio::test]
    async fn an_invalid_header_fails_without_showing_its_value() {
        let mut r = request("http://127.0.0.1:9", "/", BodyMode::Buffered);
        r.headers = vec![Header::sensitive("Authorization", "Bearer bad\u{7f}secret")];
        let parts = collect(test_client(), r, LIMITS).await;
        let Some(Part::Failed(f)) = parts.first() else {
            panic!()
        };
        assert_eq!(f.kind, FailureKind::NoAnswer);
        assert!(!f.message.contains("secret"), "{}", f.message);
    }
}

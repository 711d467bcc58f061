//! One request task: carries an [`HttpRequest`] out with the exchange both shells share
//! ([`crate::transport::exchange`]) and reports its answer, part by part, over the engine
//! task's channel. It decides nothing: no retries, no parsing.

use std::time::Duration;

use engine_core::{HttpRequest, RequestId};
use tokio::sync::mpsc;
use tracing::Instrument;

use crate::sender::{PlatformSender, carry};
use crate::transport::{self, Sink};
pub(crate) use crate::transport::{Client, Limits, Part};

/// A part of request `id`'s answer.
#[derive(Debug)]
pub(crate) struct Completion {
    pub id: RequestId,
    pub part: Part,
}

/// Builds the shell's client (see [`transport::client`]).
pub(crate) fn client(connect_timeout: Duration) -> Client {
    transport::client(
        connect_timeout,
        concat!("engine-io-tokio/", env!("CARGO_PKG_VERSION")),
    )
}

/// Where a request task sends its parts.
struct Out {
    id: RequestId,
    tx: mpsc::Sender<Completion>,
}

impl Sink for Out {
    /// Sends a part; `false` when the engine task is gone (the request then stops).
    async fn send(&self, part: Part) -> bool {
        let id = self.id;
        self.tx.send(Completion { id, part }).await.is_ok()
    }

    async fn ready(&self) -> bool {
        self.tx.reserve().await.is_ok()
    }
}

/// Sends `request` to `url` (its address after the host's rewrite) and reports its answer under
/// `id`. Returns `id` when done.
pub(crate) async fn execute(
    client: Client,
    sender: Option<std::sync::Arc<dyn PlatformSender>>,
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
    carry(&client, sender.as_deref(), &request, &url, limits, &out)
        .instrument(span)
        .await;
    id
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
    use bytes::Bytes;
    use engine_core::{BodyMode, FailureKind, Method};

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
        max_body_bytes: 1024,
        max_answer_bytes: 1024,
    };

    async fn serve(app: Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}")
    }

    fn request(base: &str, path: &str, body_mode: BodyMode) -> HttpRequest {
        let mut request = HttpRequest::new(Method::Get, Target::Platform, base, path);
        request.query = vec![("q".into(), "a b&c".into())];
        request.headers = vec![
            Header::sensitive("Authorization", "Bearer secret-token"),
            Header::new("Accept", "application/json"),
        ];
        request.body_mode = body_mode;
        request
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
            None,
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

    /// No answer is read past the engine's limit: a buffered body past `max_body_bytes` is
    /// handed over at once, a streamed 2xx answer up to the piece that passes
    /// `max_answer_bytes`; then nothing more (the engine refuses the answer on that piece and
    /// aborts the request). The blocking shell shares this code.
    #[tokio::test]
    async fn no_answer_is_read_past_its_limit() {
        let pieces = || async {
            paced(
                vec!["aaaa", "bbbb", "cccc"],
                Duration::from_millis(5),
                false,
            )
        };
        let base = serve(Router::new().route("/big", get(pieces))).await;
        let limits = Limits {
            max_body_bytes: 6,
            max_answer_bytes: 6,
            ..LIMITS
        };
        for (mode, expected) in [
            (BodyMode::Buffered, vec!["head 200", "chunk aaaabbbb"]),
            (
                BodyMode::Streamed,
                vec!["head 200", "chunk aaaa", "chunk bbbb"],
            ),
        ] {
            let parts = collect(test_client(), request(&base, "/big", mode), limits).await;
            assert_eq!(shape(&parts), expected, "{mode:?}");
        }
    }

    /// A streamed answer of `count` pieces of 1 KiB (each starting with its index), one every
    /// millisecond but for a pause of `pause` before piece `at`, read through a sink with room
    /// for one part by an engine that takes nothing for `busy`; the idle timeout is `idle`.
    /// Returns the parts handed over and the bytes the server wrote.
    async fn busy_engine(
        count: usize,
        (at, pause): (usize, u64),
        busy: u64,
        idle: u64,
    ) -> (Vec<Part>, Vec<u8>) {
        let piece = |i: usize| Bytes::from(format!("{i:04}{}", "x".repeat(1020)));
        let written: Vec<u8> = (0..count).flat_map(|i| piece(i).to_vec()).collect();
        let body = move || async move {
            let stream = futures_util::stream::unfold(0_usize, move |i| async move {
                if i == count {
                    return None;
                }
                let wait = if i == at { pause } else { 1 };
                tokio::time::sleep(Duration::from_millis(wait)).await;
                Some((Ok::<_, std::io::Error>(piece(i)), i + 1))
            });
            Body::from_stream(stream)
        };
        let base = serve(Router::new().route("/a", get(body))).await;
        let limits = Limits {
            stream_idle_timeout: Duration::from_millis(idle),
            max_answer_bytes: 1 << 20,
            ..LIMITS
        };
        let request = request(&base, "/a", BodyMode::Streamed);
        // Room for one part only: the head fills it until the engine takes it.
        let (tx, mut rx) = mpsc::channel(1);
        let task = tokio::spawn(execute(
            test_client(),
            None,
            RequestId(7),
            request.clone(),
            request.url(),
            limits,
            tx,
        ));
        tokio::time::sleep(Duration::from_millis(busy)).await;
        let mut parts = Vec::new();
        while let Some(c) = rx.recv().await {
            parts.push(c.part);
        }
        task.await.unwrap();
        (parts, written)
    }

    /// The pieces of `parts`, and their bytes joined.
    fn pieces(parts: &[Part]) -> (Vec<&Bytes>, Vec<u8>) {
        let chunks: Vec<&Bytes> = parts
            .iter()
            .filter_map(|p| match p {
                Part::Chunk(c) => Some(c),
                _ => None,
            })
            .collect();
        let body = chunks.iter().flat_map(|c| c.iter().copied()).collect();
        (chunks, body)
    }

    /// Issue 12 (shells end to end): while the engine takes nothing (its channel is full),
    /// reading goes on and the pieces that arrive are joined, in order, nothing lost, up to 64
    /// KiB a piece; and the engine's wait is no stall: reading that stopped at 64 KiB counts
    /// the silence from when the engine took the piece. Here the server writes 64 pieces, is
    /// silent 550 ms, and writes 36 more; the engine takes nothing for 600 ms (idle 300 ms).
    #[tokio::test]
    async fn pieces_that_arrive_while_the_engine_is_busy_are_joined_and_that_is_no_stall() {
        let (parts, written) = busy_engine(100, (64, 550), 600, 300).await;
        let shape = shape(&parts);
        assert_eq!(shape.first().map(String::as_str), Some("head 200"));
        assert_eq!(shape.last().map(String::as_str), Some("end"), "no stall");
        let (chunks, body) = pieces(&parts);
        assert_eq!(body, written, "every byte, in order");
        // The 64 pieces that arrived while the engine was busy reach it as one; the 36 written
        // after the pause, with the engine taking each at once, as they came.
        let first = chunks.first().map_or(0, |c| c.len());
        assert!((64 * 1024..65 * 1024).contains(&first), "{first} bytes");
        assert!(chunks.len() <= 1 + 36, "{} pieces", chunks.len());
    }

    /// The same with less than 64 KiB gathered: the server writes 3 pieces, is silent 450 ms,
    /// and writes 2 more; the engine takes nothing for 500 ms (idle 300 ms). The silence
    /// while pieces wait for the engine is not the answer's: nothing stalls, nothing is lost.
    #[tokio::test]
    async fn a_silence_while_pieces_wait_for_the_engine_is_no_stall() {
        let (parts, written) = busy_engine(5, (3, 450), 500, 300).await;
        let shape = shape(&parts);
        assert_eq!(shape.last().map(String::as_str), Some("end"), "{shape:?}");
        assert_eq!(pieces(&parts).1, written, "every byte, in order");
    }

    #[tokio::test]
    async fn a_client_that_could_not_be_built_fails_every_request() {
        let r = request("http://127.0.0.1:9", "/", BodyMode::Buffered);
        let broken = transport::client(Duration::from_secs(1), "bad\nagent");
        assert!(broken.is_err());
        let parts = collect(broken, r, LIMITS).await;
        assert_eq!(shape(&parts), ["failed NoAnswer"]);
        let Some(Part::Failed(f)) = parts.first() else {
            panic!()
        };
        assert!(
            f.message.starts_with("No HTTP client: builder error"),
            "{}",
            f.message
        );
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

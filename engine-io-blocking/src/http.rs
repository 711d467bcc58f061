//! The shell's transport: one small tokio runtime of its own (one I/O thread) runs every HTTP
//! exchange as a task with reqwest's async client (one client, so connections are pooled).
//! The tasks' messages go into one bounded channel that the driver thread reads directly
//! ([`Transport::wait`]): a piece of an answer wakes the driver, nothing in between. The host
//! never sees the runtime.
//!
//! Why not `reqwest::blocking`: its reads can only be bounded by the request's whole-exchange
//! timeout, so a streamed answer that hangs could neither be aborted nor ended by shutdown; a
//! task is dropped at once (its connection closed) by an abort or by the runtime's shutdown.

use std::sync::Arc;
use std::time::Duration;

use engine_core::{HttpRequest, RequestId};
use engine_io_tokio::sender::carry;
use engine_io_tokio::transport::{self, Client, Part, Sink};
use tokio::sync::{Notify, mpsc};
use tokio::task::AbortHandle;

use crate::msg::Msg;

/// Messages the tasks may hold ahead of the driver: a fast answer then waits for the engine
/// (back-pressure) instead of filling memory.
const TASK_CAPACITY: usize = 16;

pub(crate) use engine_io_tokio::transport::Limits;

/// The runtime, the client, and the tasks' channel.
pub(crate) struct Transport {
    runtime: tokio::runtime::Runtime,
    client: Client,
    out: mpsc::Sender<Msg>,
    inbox: mpsc::Receiver<Msg>,
}

/// What [`Transport::wait`] saw first.
pub(crate) enum Woken {
    /// A task's message.
    Task(Msg),
    /// The host's inbox was notified (it may hold messages).
    Host,
    /// The wait's time passed.
    Timeout,
}

impl Transport {
    /// Starts the runtime; an error when it could not start.
    pub(crate) fn start(connect_timeout: Duration) -> Result<Transport, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(1)
            .thread_name("engine-io-blocking-http")
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| format!("Could not start the HTTP runtime: {e}"))?;
        // Built inside the runtime: the client's resolver and pool belong to it.
        let client = runtime.block_on(async {
            transport::client(
                connect_timeout,
                concat!("engine-io-blocking/", env!("CARGO_PKG_VERSION")),
            )
        });
        let (out, inbox) = mpsc::channel::<Msg>(TASK_CAPACITY);
        Ok(Transport {
            runtime,
            client,
            out,
            inbox,
        })
    }

    /// Starts one exchange; its handle aborts it (the task is dropped, its connection closed).
    pub(crate) fn spawn(&self, exchange: Exchange, span: tracing::Span) -> AbortHandle {
        use tracing::Instrument;
        let client = self.client.clone();
        let out = self.out.clone();
        self.runtime
            .spawn(exchange.run(client, out).instrument(span))
            .abort_handle()
    }

    /// A task's message, if one is waiting.
    pub(crate) fn try_recv(&mut self) -> Option<Msg> {
        self.inbox.try_recv().ok()
    }

    /// Blocks the driver thread until a task's message, a notification of the host's inbox,
    /// or the end of `wait` (none: no limit), whichever comes first.
    pub(crate) fn wait(&mut self, host: &Notify, wait: Option<Duration>) -> Woken {
        let inbox = &mut self.inbox;
        self.runtime.block_on(async {
            let timeout = async {
                match wait {
                    Some(wait) => tokio::time::sleep(wait).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = host.notified() => Woken::Host,
                // Never `None`: the transport holds a sender.
                Some(msg) = inbox.recv() => Woken::Task(msg),
                () = timeout => Woken::Timeout,
            }
        })
    }

    /// Drops every exchange still running (closing their connections) and stops the runtime's
    /// threads.
    pub(crate) fn stop(self, wait: Duration) {
        drop(self.out);
        self.runtime.shutdown_timeout(wait);
    }
}

/// The host's side of the driver's inbox: a bounded channel (the host waits while it is full)
/// and a notification that wakes the driver wherever it waits.
#[derive(Debug, Clone)]
pub(crate) struct HostInbox {
    pub tx: std::sync::mpsc::SyncSender<Msg>,
    pub notify: Arc<Notify>,
}

impl HostInbox {
    /// Sends `msg` and wakes the driver; `Err` when the driver is gone.
    pub(crate) fn send(&self, msg: Msg) -> Result<(), std::sync::mpsc::SendError<Msg>> {
        self.tx.send(msg)?;
        self.notify.notify_one();
        Ok(())
    }
}

/// One request, carried out by a task.
pub(crate) struct Exchange {
    pub id: RequestId,
    pub request: HttpRequest,
    /// The address requested: the request's own after the host's rewrite.
    pub url: String,
    pub limits: Limits,
    /// The application's sender of platform requests, if any.
    pub sender: Option<std::sync::Arc<dyn engine_io_tokio::sender::PlatformSender>>,
}

/// Where a task sends its messages.
struct Out {
    id: RequestId,
    tx: mpsc::Sender<Msg>,
}

impl Sink for Out {
    /// Waits for room (back-pressure); `false` when the driver is gone.
    async fn send(&self, part: Part) -> bool {
        let id = self.id;
        let msg = match part {
            Part::Head(head) => Msg::Head(id, head),
            Part::Chunk(chunk) => Msg::Chunk(id, chunk),
            Part::End => Msg::End(id),
            Part::Failed(failure) => Msg::Failure(id, failure),
        };
        self.tx.send(msg).await.is_ok()
    }

    async fn ready(&self) -> bool {
        self.tx.reserve().await.is_ok()
    }
}

impl Exchange {
    /// Runs the exchange to its end or its failure; dropped when aborted.
    async fn run(self, client: Client, tx: mpsc::Sender<Msg>) {
        let out = Out { id: self.id, tx };
        let sender = self.sender.as_deref();
        carry(&client, sender, &self.request, &self.url, self.limits, &out).await;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use engine_core::{BodyMode, FailureKind, Method, TransportFailure};
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::time::Duration;

    fn run(url: &str, mode: BodyMode, timeout: Duration) -> Vec<Msg> {
        let (base, path) = url.split_at(url.find("/p").unwrap());
        let mut request = HttpRequest::new(Method::Get, engine_core::Target::Platform, base, path);
        request.body_mode = mode;
        let exchange = Exchange {
            id: RequestId(7),
            url: request.url(),
            request,
            sender: None,
            limits: Limits {
                request_timeout: timeout,
                stream_idle_timeout: timeout,
                max_body_bytes: 1024,
                max_answer_bytes: 1024,
            },
        };
        let mut transport = Transport::start(Duration::from_secs(2)).unwrap();
        let _task = transport.spawn(exchange, tracing::Span::none());
        let mut msgs = Vec::new();
        let host = Notify::new();
        while let Woken::Task(msg) = transport.wait(&host, Some(timeout + Duration::from_secs(2))) {
            let last = matches!(msg, Msg::End(_) | Msg::Failure(..));
            msgs.push(msg);
            if last {
                break;
            }
        }
        transport.stop(Duration::from_secs(1));
        msgs
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
        assert_eq!(f.message, "No answer within 200 ms.");
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
        assert_eq!(failure(&msgs).message, "The answer stalled for 300 ms.");
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

    /// No more is read past the limit: the engine refuses the body on this piece.
    #[test]
    fn oversized_buffered_body_is_handed_over_at_the_limit() {
        // 1024 is the limit in `run`; the server announces more and keeps the connection open.
        let mut reply = b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n".to_vec();
        reply.extend(std::iter::repeat_n(b' ', 5000));
        let url = serve(Box::leak(reply.into_boxed_slice()), Duration::ZERO);
        let msgs = run(&url, BodyMode::Buffered, Duration::from_secs(2));
        assert_eq!(msgs.len(), 2);
        assert!(matches!(msgs.get(1), Some(Msg::Chunk(_, c)) if c.len() > 1024));
    }
}

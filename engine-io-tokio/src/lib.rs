//! Tokio shell for [`engine_core`]: one task per engine that carries its HTTP intents out with
//! reqwest (rustls by default: see [TLS](#tls)), runs its timer, answers its storage intents, and hands the host snapshots
//! (a [`watch`] of the level truth) and events (a [`broadcast`] of edge facts).
//!
//! The shell decides nothing: no retries, no parsing of bodies, no interpretation of statuses.
//! It follows the engine's drive contract: after every `handle_*` call it drains the intents
//! and events, then sleeps until the next input, completion, or `poll_timeout()`.
//!
//! ```
//! use std::time::Duration;
//! use engine_core::stream::StreamDelta;
//! use engine_core::{Command, Config, DefaultSession, Event, Input, Person, Secret};
//! use engine_io_tokio::{ShellConfig, spawn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let sim = platform_sim::Sim::start(platform_sim::SimConfig::default()).await?;
//! # let platform_url = sim.url();
//! // The platform (here platform-sim's `http://127.0.0.1:PORT`), and the person the chat acts
//! // for, with their token (platform-sim's demo values).
//! let (handle, task) = spawn(ShellConfig::new(Config::new(&platform_url)?));
//! let mut events = handle.subscribe(); // subscribe before sending inputs
//! handle.input(Input::Person(Person::new("user-demo", Secret::new("sim-platform-token"))))?;
//! handle.input(Input::EnvironmentUid(Some("env-demo".into())))?;
//! // The session to write to: this host's default session with the Agent.
//! handle.input(Input::DefaultSession(Some(DefaultSession {
//!     agent_uid: Some("agent-demo".into()),
//!     handle_unique_id: "hello-host".into(),
//!     name: "Hello".into(),
//!     ..DefaultSession::default()
//! })))?;
//! handle.input(Input::ShowsDefaultSession(true))?;
//! handle.input(Input::IsVisible(true))?;
//! // Ready, or the cause at once (a wrong token: `sessions_failed` or
//! // `default_session_failed`, status 401; a closed port: the transport's failure).
//! handle.wait_ready(Duration::from_secs(30)).await?;
//! handle.command(Command::SendMessage { text: "Hello".into() })?;
//! # let mut answer = String::new();
//! while let Ok(event) = events.recv().await {
//!     match event {
//!         Event::Answer { delta: StreamDelta::TextDelta { delta, .. }, .. } => {
//!             print!("{delta}");
//! #           answer.push_str(&delta);
//!         }
//!         Event::Answer { delta: StreamDelta::Ended { .. }, .. } => break,
//!         Event::RunFailed { failure, .. } => return Err(failure.message.into()),
//!         _ => {}
//!     }
//! }
//! # assert_eq!(answer, "You said: Hello");
//! handle.shutdown().await;
//! task.await?;
//! # sim.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! [`Handle::wait_ready`] waits for [`Snapshot::send_readiness`]: it returns the snapshot once
//! a message can be sent, and otherwise the [`NotReady`] cause as soon as there is one (its
//! `code`, `message`, and the failing read's [`NotReady::status`]), or after the timeout a
//! `timed_out` cause naming what it still waited for. `examples/hello.rs` is the same host as a
//! program: `cargo run -p engine-io-tokio --example hello` (against an embedded platform-sim
//! unless `AGENT_PLATFORM_URL` names a platform).
//!
//! Transport outcomes map onto the engine's answer path: a head, body chunks and an end, or a
//! [`TransportFailure`](engine_core::TransportFailure): `NoAnswer` for anything before the head
//! (refused connection, DNS, TLS, connect or request timeout), `Broken` for anything after it.
//! Buffered answers arrive as one chunk; streamed ones (`BodyMode::Streamed`) chunk by chunk,
//! each read no further than the engine's limit (`Config::max_body_bytes`, and
//! `Config::max_answer_bytes` for a streamed 2xx answer: the engine then refuses the answer).
//! The exchange is [`transport::exchange`], the same in both shells.
//! Redirects are not followed: the engine sees every status as sent. Credentials (sensitive
//! headers) are sent but never logged; each request gets a `tracing` span with its id, method,
//! target, path and status.
//!
//! # TLS
//!
//! The crate's features choose the TLS backend of `https` requests (reqwest's):
//!
//! | feature | backend | build needs |
//! | --- | --- | --- |
//! | `rustls` (default) | rustls, aws-lc-rs crypto, the platform's certificate verifier | a C compiler (aws-lc-sys's build takes about a minute) |
//! | `rustls-ring` | rustls, ring crypto, the platform's certificate verifier | a C compiler |
//! | `native-tls` | the platform's library: OpenSSL on Linux, Secure Transport on macOS, SChannel on Windows | OpenSSL's headers on Linux (`libssl-dev`) |
//!
//! For another backend, turn the default off:
//! `engine-io-tokio = { version = "0.1", default-features = false, features = ["native-tls"] }`.
//! With `rustls-ring`, the shell installs ring as the process's default rustls provider when it
//! builds its client, unless one is installed already (a host that installs its own first keeps
//! it). When several are on, reqwest picks native-tls over rustls, and with both rustls features
//! the installed provider (ring, unless the host chose) is used. With none, the shell speaks
//! plain HTTP only (a local runtime on loopback, a proxy that terminates TLS): an `https`
//! request fails as [`FailureKind::NoAnswer`](engine_core::FailureKind::NoAnswer).
//!
//! # URL rewrite
//!
//! [`ShellConfig::rewrite_request_url`] is the reference's `connection.rewriteRequestUrl`: a
//! function from a request's absolute address and its [`Target`](engine_core::Target)
//! (platform, Agent runtime, or a local runtime) to the address actually requested, for hosts that reach the
//! platform or the runtimes through an address of their own (a proxy, a tunnel). The shell
//! applies it exactly once to every request it carries out (platform, runtime, icon bytes), as
//! [`HttpRequest::request_url`](engine_core::HttpRequest::request_url) does: the engine's
//! requests always hold the original address, so a prefix is never doubled, and a retry is
//! rewritten once again from the original. An address that came root-relative (an `rpc_url` or
//! an icon url starting with `/`, resolved against the platform's origin) is not given to it,
//! as in the reference. An absolute `http`/`https` address it returns is requested as it
//! is; a root-relative one (`/__platform__/...`, RU-46) is resolved against the platform's
//! origin, which stands in for the reference's page ([`engine_core::rewrite_on_platform`]).
//! Anything else fails the request (no answer).
//!
//! ```
//! use std::sync::Arc;
//! use engine_core::{Config, Target};
//! use engine_io_tokio::ShellConfig;
//!
//! let mut config = ShellConfig::new(Config::new("https://platform.example.test").unwrap());
//! config.rewrite_request_url = Some(Arc::new(|url: &str, target: Target| match target {
//!     Target::Platform => url.replacen("https://platform.example.test", "http://127.0.0.1:8080/platform", 1),
//!     Target::AgentRuntime | Target::Local => url.to_owned(),
//! }));
//! assert!(format!("{config:?}").contains("rewrite_request_url: true"));
//! ```
//!
//! # The application's request sender
//!
//! [`ShellConfig::platform_sender`] is the reference's `connection.sendPlatformRequest`: every
//! platform request goes to the application's own sender (its cookie, proxy or token renewal),
//! without the engine's `Authorization` header; the Agent runtime's requests still go directly.
//! See [`sender`].

mod driver;
pub mod publish;
pub mod ready;
mod request;
pub mod sender;
mod storage;
pub mod transport;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use engine_core::{Command, Engine, Event, Input, NotReady, Snapshot, UrlRewrite};
use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::JoinHandle;

pub use publish::Stats;
pub use storage::{MemoryStorage, Storage};

/// Capacity of the event channel of [`Handle::subscribe`].
pub const EVENT_CAPACITY: usize = 1024;

/// How a shell is built. Start from [`ShellConfig::new`] and change fields as needed.
#[non_exhaustive]
pub struct ShellConfig {
    /// The engine's configuration.
    pub engine: engine_core::Config,
    /// Time allowed to open a connection (TCP and TLS). Default 10 s.
    pub connect_timeout: Duration,
    /// Time allowed for a whole buffered request, head and body. Default 30 s.
    pub request_timeout: Duration,
    /// A streamed answer (`BodyMode::Streamed`) has no overall limit, only this limit on
    /// silence: before its head and between two chunks. Default 120 s.
    pub stream_idle_timeout: Duration,
    /// While an answer streams in, the snapshot is published at least this often, and
    /// otherwise only when the answer has grown by half since the last one; terminal facts
    /// (the answer ended, a run failed, a stop), host inputs and events are never held back
    /// (see [`publish`]). Zero: a snapshot after every wake-up. Default 50 ms, as the blocking
    /// shell's.
    pub snapshot_interval: Duration,
    /// The storage port. Default: a fresh [`MemoryStorage`].
    pub storage: Box<dyn Storage>,
    /// Record a trace of everything fed to the engine (tokens redacted); read it with
    /// [`Handle::trace`]. Default off.
    pub record_trace: bool,
    /// The host's URL rewrite (see [the crate docs](crate#url-rewrite)), applied once to every
    /// request. Default none: requests go to their own address.
    pub rewrite_request_url: Option<Arc<UrlRewrite>>,
    /// The application's own sender of platform requests ([`sender`], RU-47): every platform
    /// request goes to it, without the engine's `Authorization` header; runtime requests still
    /// go directly. Setting it sets [`engine_core::Config::platform_sender`] at start. Default
    /// none.
    pub platform_sender: Option<Arc<dyn sender::PlatformSender>>,
}

impl std::fmt::Debug for ShellConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShellConfig")
            .field("engine", &self.engine)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("stream_idle_timeout", &self.stream_idle_timeout)
            .field("snapshot_interval", &self.snapshot_interval)
            .field("record_trace", &self.record_trace)
            .field("rewrite_request_url", &self.rewrite_request_url.is_some())
            .field("platform_sender", &self.platform_sender.is_some())
            .finish_non_exhaustive()
    }
}

impl ShellConfig {
    /// Default connect timeout.
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default buffered-request timeout.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default idle timeout of streamed answers.
    pub const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

    /// The defaults for this engine configuration, with in-memory storage. When
    /// `engine.start_unix_ms` is 0 it is set from the system clock.
    pub fn new(mut engine: engine_core::Config) -> ShellConfig {
        if engine.start_unix_ms == 0 {
            engine.start_unix_ms = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .ok()
                .and_then(|d| u64::try_from(d.as_millis()).ok())
                .unwrap_or(0);
        }
        ShellConfig {
            engine,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            stream_idle_timeout: Self::DEFAULT_STREAM_IDLE_TIMEOUT,
            snapshot_interval: publish::DEFAULT_SNAPSHOT_INTERVAL,
            storage: Box::new(MemoryStorage::default()),
            record_trace: false,
            rewrite_request_url: None,
            platform_sender: None,
        }
    }
}

/// The engine task has stopped (after [`Handle::shutdown`], or when it was aborted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("The engine task has stopped.")]
pub struct Closed;

/// Starts an engine on its own task and returns the host's handle to it and the task.
///
/// The engine's time origin is now. The task runs until [`Handle::shutdown`], or until every
/// [`Handle`] is dropped; dropping or aborting the returned [`JoinHandle`]'s task also aborts
/// its requests. Must be called inside a tokio runtime (either flavour).
pub fn spawn(config: ShellConfig) -> (Handle, JoinHandle<()>) {
    let ShellConfig {
        mut engine,
        connect_timeout,
        request_timeout,
        stream_idle_timeout,
        snapshot_interval,
        storage,
        record_trace,
        rewrite_request_url,
        platform_sender,
    } = config;
    engine.platform_sender |= platform_sender.is_some();
    // RU-46: a root-relative result of the rewrite is resolved on the platform's origin.
    let rewrite_request_url =
        rewrite_request_url.map(|r| engine_core::rewrite_on_platform(r, &engine.platform_base_url));
    let limits = transport::Limits {
        request_timeout,
        stream_idle_timeout,
        max_body_bytes: engine.max_body_bytes,
        max_answer_bytes: engine.max_answer_bytes,
    };
    let clock = engine_core::InstantClock::new(driver::instant_now());
    let engine = if record_trace {
        Engine::new_recording(engine, engine_core::Time::ZERO)
    } else {
        Engine::new(engine, engine_core::Time::ZERO)
    };
    let (snapshot_tx, snapshot_rx) = watch::channel(engine.snapshot());
    let (event_tx, _) = broadcast::channel(EVENT_CAPACITY);
    let (host_tx, host_rx) = mpsc::unbounded_channel();
    let (done_tx, done_rx) = mpsc::channel(driver::COMPLETION_CAPACITY);
    let handle = Handle {
        host: host_tx,
        snapshots: snapshot_rx,
        events: event_tx.downgrade(),
        counters: Arc::new(publish::Counters::default()),
    };
    let mut driver = driver::Driver::new(
        engine,
        storage,
        request::client(connect_timeout),
        limits,
        event_tx,
        snapshot_tx,
        done_tx,
    );
    driver.throttle = publish::Throttle::new(snapshot_interval);
    driver.clock = clock;
    driver.rewrite = rewrite_request_url;
    driver.sender = platform_sender;
    driver.counters = Arc::clone(&handle.counters);
    let task = tokio::spawn(driver.run(host_rx, done_rx));
    (handle, task)
}

/// The host's side of a running engine. Cheap to clone; every clone talks to the same task.
#[derive(Debug, Clone)]
pub struct Handle {
    host: mpsc::UnboundedSender<driver::HostMessage>,
    snapshots: watch::Receiver<Snapshot>,
    /// Weak, so the event channel closes when the task stops.
    events: broadcast::WeakSender<Event>,
    counters: Arc<publish::Counters>,
}

impl Handle {
    /// Hands the engine a host input or command. Inputs are applied in the order sent.
    pub fn input(&self, input: Input) -> Result<(), Closed> {
        self.host
            .send(driver::HostMessage::Input(input))
            .map_err(|_| Closed)
    }

    /// Hands the engine a command (`Input::Command`).
    pub fn command(&self, command: Command) -> Result<(), Closed> {
        self.input(Input::Command(command))
    }

    /// The level truth: a receiver that always holds the latest snapshot. A new snapshot is
    /// sent only when it differs from the previous one, and while an answer streams in only as
    /// [`ShellConfig::snapshot_interval`] says (a change held back is always sent, at the latest
    /// that interval after the last one, and before the task stops). After the task stops, the
    /// receiver keeps the last snapshot and `changed()` fails.
    pub fn snapshots(&self) -> watch::Receiver<Snapshot> {
        self.snapshots.clone()
    }

    /// The edge facts, from now on (earlier events are not replayed: subscribe before sending
    /// the inputs whose events matter). The channel holds [`EVENT_CAPACITY`] events; a receiver
    /// that falls further behind gets `RecvError::Lagged(n)` and misses the `n` oldest ones,
    /// then goes on. Nothing is lost for rendering: the snapshot holds the level truth. After
    /// the task stops, `recv` returns `RecvError::Closed`.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        match self.events.upgrade() {
            Some(sender) => sender.subscribe(),
            // The task has stopped: a receiver that is closed from the start.
            None => broadcast::channel(1).1,
        }
    }

    /// Waits until a snapshot satisfies `pred` (the current one included) and returns it; `None`
    /// after `timeout`, or when the task stopped without one doing so.
    pub async fn wait_for(
        &self,
        pred: impl Fn(&Snapshot) -> bool,
        timeout: Duration,
    ) -> Option<Snapshot> {
        let mut snapshots = self.snapshots.clone();
        let found = tokio::time::timeout(timeout, async {
            snapshots
                .wait_for(|s| pred(s))
                .await
                .map(|s| s.clone())
                .ok()
        })
        .await;
        found.ok().flatten()
    }

    /// Waits until a message can be sent ([`Snapshot::send_readiness`] is `Ready`) and returns
    /// that snapshot, reading only snapshots that follow the inputs sent before the call.
    /// Returns the cause as soon as the engine is blocked, without waiting out `timeout`: a
    /// refused or unanswered read (its [`NotReady::failure`] and [`NotReady::status`]: a wrong
    /// token is `sessions_failed` or `default_session_failed` with status 401), or something
    /// the host must give (`not_visible`, `no_environment`, `no_session`, ...). After
    /// `timeout`, [`NotReadyCode::TimedOut`](engine_core::NotReadyCode::TimedOut) naming what
    /// it still waited for ("Not ready after 30 s: Loading the sessions..."); when the task
    /// has stopped, [`NotReadyCode::Closed`](engine_core::NotReadyCode::Closed).
    pub async fn wait_ready(&self, timeout: Duration) -> Result<Snapshot, NotReady> {
        let now = tokio::time::Instant::now();
        // A timeout too long to add is as good as a year.
        let deadline = now
            .checked_add(timeout)
            .unwrap_or_else(|| now + Duration::from_secs(365 * 86_400));
        // The inputs sent before this call are taken (and their snapshot published) first: the
        // snapshot at hand may be older than they are.
        let (synced, taken) = tokio::sync::oneshot::channel();
        if self.host.send(driver::HostMessage::Sync(synced)).is_err() {
            return Err(ready::closed(Closed));
        }
        match tokio::time::timeout_at(deadline, taken).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err(ready::closed(Closed)),
            Err(_) => return Err(ready::timed_out(&self.snapshots.borrow(), timeout)),
        }
        let mut snapshots = self.snapshots.clone();
        loop {
            {
                let snapshot = snapshots.borrow_and_update();
                if let Some(settled) = ready::settled(&snapshot) {
                    return settled.map(|()| snapshot.clone());
                }
            }
            match tokio::time::timeout_at(deadline, snapshots.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Err(ready::closed(Closed)),
                Err(_) => return Err(ready::timed_out(&snapshots.borrow(), timeout)),
            }
        }
    }

    /// Stops the task: in-flight requests are aborted, timers dropped, and later inputs fail
    /// with [`Closed`]. Returns once the task has stopped. Idempotent.
    pub async fn shutdown(&self) {
        // Fails when the task is already gone; either way, wait for it to be.
        let _ = self.host.send(driver::HostMessage::Shutdown);
        self.host.closed().await;
    }

    /// The trace recorded so far (JSON Lines, `spec-tests/TRACES.md`), when the shell was built
    /// with [`ShellConfig::record_trace`]; `None` otherwise or once the task has stopped.
    pub async fn trace(&self) -> Option<String> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.host.send(driver::HostMessage::Trace(tx)).ok()?;
        rx.await.ok().flatten()
    }

    /// What the task has done so far: snapshots computed and published, exchanges started.
    pub fn stats(&self) -> Stats {
        self.counters.stats()
    }

    /// Whether the task has stopped.
    pub fn is_closed(&self) -> bool {
        self.host.is_closed()
    }
}

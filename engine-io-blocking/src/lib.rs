//! Blocking shell for [`engine_core`]: runs one [`Engine`] on a driver thread, executes its HTTP
//! intents, runs its timer, and hands the host the latest [`Snapshot`] (level) and a stream of
//! [`Event`]s (edge). The host needs no async runtime (the shell's transport runs a small one of
//! its own, out of sight), and may call it from any thread.
//!
//! ```
//! use std::time::Duration;
//! use engine_core::stream::StreamDelta;
//! use engine_core::{Command, Config, DefaultSession, Event, Input, Person, Secret};
//! use engine_io_blocking::{Shell, ShellConfig};
//!
//! # let sim = platform_sim::BlockingSim::start(platform_sim::SimConfig::default())?;
//! # let platform_url = sim.url();
//! // The platform (here platform-sim's `http://127.0.0.1:PORT`), and the person the chat acts
//! // for, with their token (platform-sim's demo values).
//! let shell = Shell::start(ShellConfig::new(Config::new(&platform_url)?));
//! let events = shell.events(); // subscribe before sending inputs
//! shell.input(Input::Person(Person::new("user-demo", Secret::new("sim-platform-token"))))?;
//! shell.input(Input::EnvironmentUid(Some("env-demo".into())))?;
//! // The session to write to: this host's default session with the Agent.
//! shell.input(Input::DefaultSession(Some(DefaultSession {
//!     agent_uid: Some("agent-demo".into()),
//!     handle_unique_id: "hello-host".into(),
//!     name: "Hello".into(),
//!     ..DefaultSession::default()
//! })))?;
//! shell.input(Input::ShowsDefaultSession(true))?;
//! shell.input(Input::IsVisible(true))?;
//! // Ready, or the cause at once (a wrong token: `sessions_failed` or
//! // `default_session_failed`, status 401; a closed port: the transport's failure).
//! shell.wait_ready(Duration::from_secs(30))?;
//! shell.command(Command::SendMessage { text: "Hello".into() })?;
//! # let mut answer = String::new();
//! for event in events.iter() {
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
//! shell.shutdown();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Shell::wait_ready`] waits for [`Snapshot::send_readiness`]: it returns the snapshot once a
//! message can be sent, and otherwise the [`NotReady`] cause as soon as there is one (its
//! `code`, `message`, and the failing read's [`NotReady::status`]), or after the timeout a
//! `timed_out` cause naming what it still waited for. `examples/hello.rs` is the same host as a
//! program: `cargo run -p engine-io-blocking --example hello-blocking` (against an embedded
//! platform-sim unless `AGENT_PLATFORM_URL` names a platform).
//!
//! # How it runs
//!
//! - The driver thread owns the engine and waits on one bounded channel (host input, request
//!   completions, shutdown) until the engine's [`Engine::poll_timeout`].
//!   After every `handle_*` call it drains intents and events, sends the events to every
//!   [`Shell::events`] receiver, then publishes the snapshot if it changed. While an answer
//!   streams in, the snapshot (which holds the whole thread) is published when the bytes since
//!   the last one reach half of those streamed so far, or every
//!   [`ShellConfig::snapshot_interval`]: an answer costs time linear in its size. A terminal
//!   fact (the answer ended or failed) is published at once, and the last state always is.
//! - The HTTP intents run as tasks on one transport thread (one HTTP client, so connections are
//!   pooled), whatever their number: the head, then the body (buffered: read whole and handed
//!   over as one chunk; streamed: each piece as it arrives), then the end. A failure before the
//!   head is [`FailureKind::NoAnswer`](engine_core::FailureKind::NoAnswer), after it
//!   [`FailureKind::Broken`](engine_core::FailureKind::Broken). The pieces wait for room in the
//!   driver's channel, so a fast answer is read no faster than the engine takes it; one is not
//!   read past the engine's limit ([`engine_core::Config::max_answer_bytes`] for a streamed 2xx
//!   answer, [`engine_core::Config::max_body_bytes`] otherwise), which the engine then refuses.
//! - A request asked for and aborted in the same turn of the engine is never sent. An abort drops
//!   the request's task at once (its connection closed), and so does shutdown for every request
//!   still in flight: a hung answer keeps no thread and no socket.
//! - Storage intents are answered from the [`Storage`] on the driver thread.
//! - The shell holds no rule of the spec: no retries, no body parsing.
//!
//! # TLS
//!
//! The same features as `engine-io-tokio` (whose transport this shell runs) choose the TLS
//! backend: `rustls` (default; aws-lc-rs crypto), `rustls-ring` (ring crypto, no aws-lc build)
//! and `native-tls` (OpenSSL on Linux, which needs `libssl-dev` to build); with none, plain HTTP
//! only. The table and the rules are in `engine-io-tokio`'s crate docs, "TLS".
//!
//! # URL rewrite
//!
//! [`ShellConfig::rewrite_request_url`] is the reference's `connection.rewriteRequestUrl`: a
//! function from a request's absolute address and its [`Target`](engine_core::Target)
//! (platform, Agent runtime, or a local runtime) to the address actually requested, for hosts that reach the
//! platform or the runtimes through an address of their own (a proxy, a tunnel). The driver
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
//! use engine_io_blocking::ShellConfig;
//!
//! let mut config = ShellConfig::new(Config::new("https://platform.example.test").unwrap());
//! config.rewrite_request_url = Some(Arc::new(|url: &str, target: Target| match target {
//!     Target::Platform => url.replacen("https://platform.example.test", "http://127.0.0.1:8080/platform", 1),
//!     Target::AgentRuntime | Target::Local => url.to_owned(),
//! }));
//! assert!(format!("{config:?}").contains("rewrite_request_url: true"));
//! ```

mod driver;
mod http;
mod msg;
mod storage;

use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use engine_core::{Command, Engine, Event, Input, NotReady, Snapshot};
use engine_io_tokio::ready;

use crate::driver::{Driver, Published};
use crate::http::{HostInbox, Limits};
use crate::msg::Msg;
pub use crate::storage::{MemoryStorage, Storage};
pub use engine_io_tokio::Stats;
/// The application's own sender of platform requests (RU-47), shared with the tokio shell.
pub use engine_io_tokio::sender;

/// Room in the driver's channel: a host or an answer this far ahead of the engine waits.
const INBOX_CAPACITY: usize = 64;

/// How a [`Shell`] is started. Build with [`ShellConfig::new`] and adjust the fields.
#[non_exhaustive]
pub struct ShellConfig {
    /// The engine's configuration. A `start_unix_ms` of 0 is set from the system clock at start.
    pub engine: engine_core::Config,
    /// Limit on establishing a connection. Default 10 s.
    pub connect_timeout: Duration,
    /// Buffered requests: limit on the wait for the head and on each read, and on the whole
    /// exchange (checked between reads). Default 30 s.
    pub request_timeout: Duration,
    /// Streamed requests: limit on the wait for the head and between two pieces of the body.
    /// Default 120 s.
    pub stream_idle_timeout: Duration,
    /// While an answer streams in, the snapshot is published at least this often, and
    /// otherwise only when the answer has grown by half since the last one; terminal facts
    /// (the answer ended, a run failed, a stop), host inputs and events are never held back
    /// (the rule of [`engine_io_tokio::publish`], shared with the tokio shell). Zero: a
    /// snapshot after every message. Default 50 ms.
    pub snapshot_interval: Duration,
    /// The storage port. Default: an empty [`MemoryStorage`].
    pub storage: Box<dyn Storage>,
    /// Record a trace of everything fed to the engine (tokens redacted); read it with
    /// [`Shell::trace`]. Default off.
    pub record_trace: bool,
    /// The host's URL rewrite (see [the crate docs](crate#url-rewrite)), applied once to every
    /// request. Default none: requests go to their own address.
    pub rewrite_request_url: Option<Arc<engine_core::UrlRewrite>>,
    /// The application's own sender of platform requests (RU-47, see
    /// [`engine_io_tokio::sender`]; a blocking function becomes one with
    /// [`sender::from_blocking`]): every platform request goes to it, without the engine's
    /// `Authorization` header; runtime requests still go directly. Setting it sets
    /// [`engine_core::Config::platform_sender`] at start. Default none.
    pub platform_sender: Option<Arc<dyn sender::PlatformSender>>,
}

impl ShellConfig {
    /// The defaults for this engine configuration.
    pub fn new(engine: engine_core::Config) -> ShellConfig {
        ShellConfig {
            engine,
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            stream_idle_timeout: Duration::from_secs(120),
            snapshot_interval: engine_io_tokio::publish::DEFAULT_SNAPSHOT_INTERVAL,
            storage: Box::new(MemoryStorage::default()),
            record_trace: false,
            rewrite_request_url: None,
            platform_sender: None,
        }
    }

    /// The same configuration with this storage.
    pub fn with_storage(mut self, storage: impl Storage) -> ShellConfig {
        self.storage = Box::new(storage);
        self
    }
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

/// The shell's driver has stopped: nothing more can be sent to the engine. It has no cause
/// behind it ([`source`](std::error::Error::source) is `None`), and goes into any boxed error.
///
/// ```
/// use std::error::Error;
/// let e: Box<dyn Error + Send + Sync> = engine_io_blocking::Closed.into();
/// assert_eq!(e.to_string(), "The engine shell has stopped.");
/// assert!(e.source().is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("The engine shell has stopped.")]
pub struct Closed;

/// A running engine on its own driver thread. `Shell` is `Send + Sync`: share it by reference
/// or in an `Arc`. Dropping it shuts it down like [`Shell::shutdown`].
#[derive(Debug)]
pub struct Shell {
    to_driver: HostInbox,
    published: Arc<Published>,
    driver: Option<JoinHandle<()>>,
}

impl Shell {
    /// Builds the engine at the current instant and starts its driver thread.
    ///
    /// Should the thread fail to start, the shell comes back already closed: every send returns
    /// [`Closed`].
    pub fn start(config: ShellConfig) -> Shell {
        let ShellConfig {
            engine: mut engine_config,
            connect_timeout,
            request_timeout,
            stream_idle_timeout,
            snapshot_interval,
            storage,
            record_trace,
            rewrite_request_url,
            platform_sender,
        } = config;
        engine_config.platform_sender |= platform_sender.is_some();
        // RU-46: a root-relative result of the rewrite is resolved on the platform's origin.
        let rewrite_request_url = rewrite_request_url
            .map(|r| engine_core::rewrite_on_platform(r, &engine_config.platform_base_url));
        if engine_config.start_unix_ms == 0 {
            engine_config.start_unix_ms = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                .unwrap_or(0);
        }
        let limits = Limits {
            request_timeout,
            stream_idle_timeout,
            max_body_bytes: engine_config.max_body_bytes,
            max_answer_bytes: engine_config.max_answer_bytes,
        };
        let clock = engine_core::InstantClock::new(Instant::now());
        let engine = if record_trace {
            Engine::new_recording(engine_config, engine_core::Time::ZERO)
        } else {
            Engine::new(engine_config, engine_core::Time::ZERO)
        };
        let snapshot = engine.snapshot();
        let seen = engine.revisions();
        let published = Arc::new(Published::new(snapshot.clone()));
        let (tx, inbox) = std::sync::mpsc::sync_channel(INBOX_CAPACITY);
        let notify = Arc::new(tokio::sync::Notify::new());
        let to_driver = HostInbox {
            tx,
            notify: Arc::clone(&notify),
        };
        let driver = Driver {
            engine,
            inbox,
            notify,
            connect_timeout,
            limits,
            storage,
            published: Arc::clone(&published),
            last: snapshot,
            rewrite: rewrite_request_url,
            sender: platform_sender,
            clock,
            throttle: engine_io_tokio::publish::Throttle::new(snapshot_interval),
            seen,
        };
        let spawned = std::thread::Builder::new()
            .name("engine-io-blocking-driver".into())
            .spawn(move || driver.run());
        let driver = match spawned {
            Ok(handle) => Some(handle),
            Err(e) => {
                tracing::error!(error = %e, "could not start the driver thread");
                published.close();
                None
            }
        };
        Shell {
            to_driver,
            published,
            driver,
        }
    }

    /// Hands a host input (or command) to the engine. Waits while the driver's channel is full
    /// (the engine is that far behind).
    pub fn input(&self, input: Input) -> Result<(), Closed> {
        if self.driver.is_none() {
            return Err(Closed);
        }
        self.to_driver.send(Msg::Input(input)).map_err(|_| Closed)
    }

    /// Hands a command to the engine (`Input::Command`).
    pub fn command(&self, command: Command) -> Result<(), Closed> {
        self.input(Input::Command(command))
    }

    /// The trace recorded so far (JSON Lines, `spec-tests/TRACES.md`), when the shell was built
    /// with [`ShellConfig::record_trace`]; `None` otherwise or once the driver has stopped.
    pub fn trace(&self) -> Option<String> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.to_driver.send(Msg::Trace(tx)).ok()?;
        rx.recv().ok().flatten()
    }

    /// The latest published snapshot.
    pub fn snapshot(&self) -> Snapshot {
        self.published.snapshot()
    }

    /// Blocks until `pred` holds for the latest snapshot and returns that snapshot; `None` when
    /// `timeout` passes first or the driver has stopped. Checks the current snapshot first, then
    /// each newly published one (a condition variable: no busy wait). `pred` runs under the
    /// snapshot lock, so keep it quick.
    pub fn wait_for(
        &self,
        pred: impl Fn(&Snapshot) -> bool,
        timeout: Duration,
    ) -> Option<Snapshot> {
        self.published.wait_for(pred, timeout)
    }

    /// Blocks until a message can be sent ([`Snapshot::send_readiness`] is `Ready`) and returns
    /// that snapshot, reading only snapshots that follow the inputs sent before the call.
    /// Returns the cause as soon as the engine is blocked, without waiting out `timeout`: a
    /// refused or unanswered read (its [`NotReady::failure`] and [`NotReady::status`]: a wrong
    /// token is `sessions_failed` or `default_session_failed` with status 401), or something
    /// the host must give (`not_visible`, `no_environment`, `no_session`, ...). After
    /// `timeout`, [`NotReadyCode::TimedOut`](engine_core::NotReadyCode::TimedOut) naming what
    /// it still waited for ("Not ready after 30 s: Loading the sessions..."); when the driver
    /// has stopped, [`NotReadyCode::Closed`](engine_core::NotReadyCode::Closed).
    pub fn wait_ready(&self, timeout: Duration) -> Result<Snapshot, NotReady> {
        // The inputs sent before this call are taken (and their snapshot published) first: the
        // snapshot at hand may be older than they are.
        let (synced, taken) = std::sync::mpsc::channel();
        if self.driver.is_none() || self.to_driver.send(Msg::Sync(synced)).is_err() {
            return Err(ready::closed(Closed));
        }
        let started = Instant::now();
        match taken.recv_timeout(timeout) {
            Ok(()) => {}
            Err(RecvTimeoutError::Timeout) => {
                return Err(ready::timed_out(&self.snapshot(), timeout));
            }
            Err(RecvTimeoutError::Disconnected) => return Err(ready::closed(Closed)),
        }
        let left = timeout.saturating_sub(started.elapsed());
        let settled = |s: &Snapshot| ready::settled(s).is_some();
        let snapshot = match self.published.wait_for(settled, left) {
            Some(snapshot) => snapshot,
            None if !self.published.running() => {
                return Err(ready::closed(Closed));
            }
            None => return Err(ready::timed_out(&self.snapshot(), timeout)),
        };
        match ready::settled(&snapshot) {
            Some(Ok(())) => Ok(snapshot),
            Some(Err(cause)) => Err(cause),
            None => Err(ready::timed_out(&snapshot, timeout)),
        }
    }

    /// What the shell has done so far: snapshots computed and published, exchanges started.
    pub fn stats(&self) -> Stats {
        self.published.counters.stats()
    }

    /// A new receiver of every event the engine emits from now on, in order. Each call makes an
    /// independent subscription (every receiver gets every later event); events emitted while
    /// no receiver exists are dropped. A dropped receiver is forgotten. When the driver stops,
    /// receivers see the channel disconnected after its last events. The events of an input are
    /// sent before the snapshot it produces is published.
    pub fn events(&self) -> Receiver<Event> {
        self.published.subscribe()
    }

    /// Stops the driver and joins its thread. In-flight requests are dropped (their connections
    /// closed) and the transport's threads end before it returns.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(handle) = self.driver.take() {
            // The driver may be gone already (it panicked); then there is nothing to stop.
            let _ = self.to_driver.send(Msg::Shutdown);
            if handle.join().is_err() {
                tracing::error!("the driver thread panicked");
            }
        }
    }
}

impl Drop for Shell {
    fn drop(&mut self) {
        self.stop();
    }
}

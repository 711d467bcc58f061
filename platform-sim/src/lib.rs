//! A simulated platform and Agent runtime on loopback, for tests and as the CLI's embedded
//! default.
//!
//! [`Sim::start`] binds `127.0.0.1:0` and serves, for one simulated organization held in memory,
//! the platform API of `platform-api.md` (P1 to P14; every Agent has a `mask` icon) under
//! [`Sim::url`] (or under [`SimConfig::path_prefix`] of it, for URL-rewrite tests), and
//! each Agent's runtime (R1 to R3) under `{url}/runtime/{agent_uid}`, which is the `rpc_url`
//! resolve-runtime-access hands out together with a per-session runtime token. Answers stream as
//! a real Agent's do: by default in the dialect of the platform's Agent runtime (RU-1 of
//! `reference-update.md`: reasoning, a tool call and its result, text in `textDelta`s, written
//! in `json.dumps` style), or in the AI SDK's ui-message-stream names
//! ([`SimConfig::with_dialect`], [`Dialect`]).
//!
//! It refuses as the reference's own stand-in does (RU-50 to RU-53 of `reference-update.md`),
//! with the same statuses and texts: an address outside the platform API and the runtimes is
//! 404 naming it, a path without a route 404 ("The stand-in has no route for GET
//! /api/v1/unknown/."), a route taking other methods 405, and only then a missing or refused
//! credential 401 ("Authentication credentials were not provided or are not valid."). Unlike
//! the stand-in, which takes any bearer, the platform takes only [`SimConfig::platform_token`],
//! so that tests can see a refused token. A turn on a model the catalog does not offer, or of a
//! provider the person has not signed in to, answers as the stand-in's failed turn does
//! ([`AnswerStyle::RefusedTurn`]).
//!
//! Every request is logged ([`Sim::log`]) before any queued [`Fault`] applies to it; tokens are
//! never logged. [`BlockingSim`] runs the same server on its own thread for hosts without async.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! use platform_sim::{Fault, FaultKind, Sim, SimConfig};
//! let sim = Sim::start(SimConfig::default()).await?;
//! sim.fault(Fault::once("GET", "/history/", FaultKind::Status(500, serde_json::json!({"detail": "boom"}))));
//! println!("platform at {}", sim.url());
//! # assert!(sim.url().starts_with("http://127.0.0.1:"));
//! sim.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! The shells' front examples (`engine-io-tokio`, `engine-io-blocking`) and their `hello`
//! programs run against it; its demo values are the person `user-demo` with the token
//! [`DEFAULT_PLATFORM_TOKEN`], the Environment `env-demo` and the Agent [`DEFAULT_AGENT_UID`],
//! which answers a message with "You said: " and its text.

// Handlers refuse a request by returning its finished answer early (`Result<_, Response>`); the
// size of that error variant does not matter here.
#![allow(clippy::result_large_err)]

mod answer;
mod faults;
mod local;
mod platform;
mod runtime;
mod server;
mod state;
mod types;
mod web;
mod wire;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use types::{
    AgentSpec, AnswerStyle, DEFAULT_AGENT_UID, DEFAULT_PLATFORM_TOKEN, Dialect, Fault, FaultKind,
    LocalRuntime, LoggedRequest, REFUSED_TURN_TEXT, RuntimeBehaviour, SIM_TOOL, SimConfig,
    default_catalog,
};

pub use answer::{answer_body, event};

pub use local::{SESSION_HEADER, runtime_uid};

pub use faults::{AFTER_HUGE_LINE, INVALID_UTF8_TEXT, history_text};
pub use platform::{AGENT_ICON_ETAG, AGENT_ICON_SVG};
use server::{Shared, lock};

/// For URL-rewrite tests of a simulator behind [`SimConfig::path_prefix`]: every request in
/// `log` arrived under `prefix` exactly once (never twice), and the host's rewrite was called
/// once per request (`calls`: the addresses and targets it was given), only with original
/// addresses under `base` (an Agent-runtime target exactly for the `/runtime/` paths). Says what
/// is wrong otherwise.
pub fn check_rewritten_once(
    log: &[LoggedRequest],
    prefix: &str,
    base: &str,
    calls: &[(String, engine_core::Target)],
) -> Result<(), String> {
    let doubled = format!("{prefix}{prefix}/");
    for r in log {
        if !r.path.starts_with(&format!("{prefix}/")) || r.path.starts_with(&doubled) {
            return Err(format!("not rewritten exactly once: {}", r.path));
        }
    }
    if calls.len() != log.len() {
        return Err(format!(
            "{} rewrites for {} requests",
            calls.len(),
            log.len()
        ));
    }
    for (url, target) in calls {
        let runtime = *target == engine_core::Target::AgentRuntime;
        if !url.starts_with(base) || url.contains(prefix) || runtime != url.contains("/runtime/") {
            return Err(format!("the rewrite was given {url} ({target:?})"));
        }
    }
    Ok(())
}

/// For tests of a host's own sender of platform requests (RU-47, RU-49): the simulator saw a
/// turn (`POST …/api/chat`) on an Agent's runtime, every request it saw carried the credential
/// its target takes, and it saw exactly `sent` platform requests: those the sender carried, so
/// the engine sent none itself. Says what is wrong otherwise.
pub fn check_sent_by_the_sender(log: &[LoggedRequest], sent: usize) -> Result<(), String> {
    if !log.iter().any(|r| {
        r.method == "POST" && r.path.starts_with("/runtime/") && r.path.ends_with("/api/chat")
    }) {
        return Err("no turn reached an Agent's runtime".into());
    }
    if let Some(r) = log.iter().find(|r| !r.authorized) {
        return Err(format!(
            "{} {} came without its credential",
            r.method, r.path
        ));
    }
    let platform = log
        .iter()
        .filter(|r| r.path.starts_with("/api/v1/"))
        .count();
    if platform != sent {
        return Err(format!(
            "{platform} platform requests arrived, the sender carried {sent}"
        ));
    }
    Ok(())
}

/// For tests that stop a shell once a default session has started: every read the start
/// makes has answered (the list, the catalog, the detail, history and insights, runtime access
/// and its check). Nothing else is under way then (no poll runs once the runtime is ready), so
/// a test that stops here finds each request of the start in the simulator's log.
pub fn session_settled(s: &engine_core::Snapshot) -> bool {
    let readiness = &s.active_session_readiness;
    s.composer_admission
        && !s.is_loading_latest_sessions
        && !s.is_loading_available_models
        && readiness.detail_ready
        && readiness.history_ready
        && readiness.insights_ready
}

/// How long [`Sim::shutdown`] waits for open connections before dropping them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// A running simulator. Dropping it stops the server too (without waiting).
pub struct Sim {
    shared: Arc<Shared>,
    task: Option<JoinHandle<()>>,
}

impl Sim {
    /// Starts a simulator on `127.0.0.1:0` (a free port).
    pub async fn start(config: SimConfig) -> std::io::Result<Sim> {
        Sim::start_on_port(config, 0).await
    }

    /// Starts a simulator on `127.0.0.1:port` (0: a free port).
    pub async fn start_on_port(config: SimConfig, port: u16) -> std::io::Result<Sim> {
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await?;
        let address = listener.local_addr()?;
        let shared = Arc::new(Shared::new(config, format!("http://{address}")));
        let router = axum::Router::new()
            .fallback(server::handle)
            .with_state(Arc::clone(&shared));
        let mut shutdown = shared.shutdown.subscribe();
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, router).with_graceful_shutdown(async move {
                let _ = shutdown.wait_for(|down| *down).await;
            });
            let _ = serve.await;
        });
        Ok(Sim {
            shared,
            task: Some(task),
        })
    }

    /// The platform base URL, `http://127.0.0.1:PORT` (no trailing slash).
    pub fn url(&self) -> String {
        self.shared.url.clone()
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &SimConfig {
        &self.shared.config
    }

    /// Every request received so far, in order.
    pub fn log(&self) -> Vec<LoggedRequest> {
        self.shared.log()
    }

    /// Forgets the logged requests.
    pub fn clear_log(&self) {
        self.shared.clear_log();
    }

    /// Queues a fault for the next matching request(s).
    pub fn fault(&self, fault: Fault) {
        self.shared.fault(fault);
    }

    /// Drops every queued fault.
    pub fn clear_faults(&self) {
        self.shared.clear_faults();
    }

    /// The bytes the faults that write their own large bodies ([`FaultKind::LargeAnswer`],
    /// the long line of [`FaultKind::HugeLine`]) have produced so far: produced as the client
    /// reads, so this tells how much of such an answer was read (plus what socket buffers
    /// took).
    pub fn fault_bytes(&self) -> u64 {
        self.shared
            .fault_bytes
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The canonical records of every session, oldest first.
    pub fn sessions(&self) -> Vec<Value> {
        sessions(&self.shared)
    }

    /// Changes how an Agent's runtime behaves from now on (its wake starts over). False when
    /// there is no such Agent.
    pub fn set_runtime(&self, agent_uid: &str, runtime: RuntimeBehaviour) -> bool {
        set_runtime(&self.shared, agent_uid, runtime)
    }

    /// Stops the server: running answers end with an `abort` chunk, open connections get
    /// two seconds to close.
    pub async fn shutdown(mut self) {
        self.shared.begin_shutdown();
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(SHUTDOWN_GRACE, task).await.is_err() {
                abort.abort();
            }
        }
    }
}

impl std::fmt::Debug for Sim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sim")
            .field("url", &self.shared.url)
            .finish_non_exhaustive()
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.shared.begin_shutdown();
    }
}

fn sessions(shared: &Shared) -> Vec<Value> {
    let state = lock(&shared.state);
    state
        .sessions
        .iter()
        .map(|s| state.record(s, &shared.config))
        .collect()
}

fn set_runtime(shared: &Shared, agent_uid: &str, runtime: RuntimeBehaviour) -> bool {
    let mut state = lock(&shared.state);
    match state.agents.iter_mut().find(|a| a.spec.uid == agent_uid) {
        Some(agent) => {
            agent.spec.runtime = runtime;
            agent.checks = 0;
            agent.wake_started_ms = None;
            true
        }
        None => false,
    }
}

/// A simulator for hosts without async: the server runs on its own thread with its own tokio
/// runtime. Dropping it stops the server and joins the thread.
pub struct BlockingSim {
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BlockingSim {
    /// Starts a simulator on `127.0.0.1:0` on a thread of its own.
    pub fn start(config: SimConfig) -> std::io::Result<BlockingSim> {
        BlockingSim::start_on_port(config, 0)
    }

    /// Starts a simulator on `127.0.0.1:port` (0: a free port) on a thread of its own.
    pub fn start_on_port(config: SimConfig, port: u16) -> std::io::Result<BlockingSim> {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("platform-sim".to_owned())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                runtime.block_on(async move {
                    match Sim::start_on_port(config, port).await {
                        Ok(sim) => {
                            let _ = ready_tx.send(Ok(Arc::clone(&sim.shared)));
                            let _ = stop_rx.await;
                            sim.shutdown().await;
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                        }
                    }
                });
            })?;
        match ready_rx.recv() {
            Ok(Ok(shared)) => Ok(BlockingSim {
                shared,
                stop: Some(stop_tx),
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err(std::io::Error::other("the simulator thread ended early"))
            }
        }
    }

    /// The platform base URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        self.shared.url.clone()
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &SimConfig {
        &self.shared.config
    }

    /// Every request received so far, in order.
    pub fn log(&self) -> Vec<LoggedRequest> {
        self.shared.log()
    }

    /// Forgets the logged requests.
    pub fn clear_log(&self) {
        self.shared.clear_log();
    }

    /// Queues a fault for the next matching request(s).
    pub fn fault(&self, fault: Fault) {
        self.shared.fault(fault);
    }

    /// Drops every queued fault.
    pub fn clear_faults(&self) {
        self.shared.clear_faults();
    }

    /// The bytes the faults that write their own large bodies ([`FaultKind::LargeAnswer`],
    /// the long line of [`FaultKind::HugeLine`]) have produced so far: produced as the client
    /// reads, so this tells how much of such an answer was read (plus what socket buffers
    /// took).
    pub fn fault_bytes(&self) -> u64 {
        self.shared
            .fault_bytes
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The canonical records of every session, oldest first.
    pub fn sessions(&self) -> Vec<Value> {
        sessions(&self.shared)
    }

    /// Changes how an Agent's runtime behaves from now on (see [`Sim::set_runtime`]).
    pub fn set_runtime(&self, agent_uid: &str, runtime: RuntimeBehaviour) -> bool {
        set_runtime(&self.shared, agent_uid, runtime)
    }

    /// Stops the server and joins its thread.
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl std::fmt::Debug for BlockingSim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockingSim")
            .field("url", &self.shared.url)
            .finish_non_exhaustive()
    }
}

impl Drop for BlockingSim {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

//! The driver thread: owns the engine, feeds it messages and time, executes its intents and
//! publishes its snapshots and events.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use engine_core::{
    Engine, Event, Input, Intent, RequestId, ResponseHead, SessionSummary, Snapshot,
    StorageRequest, TransportFailure,
};
use reqwest::blocking::Client;

use crate::http::{Exchange, Limits};
use crate::storage::Storage;

/// What the driver receives: host input, request completions, and the stop request.
#[derive(Debug)]
pub(crate) enum Msg {
    /// A host input or command.
    Input(Input),
    /// The head of request `id`.
    Head(RequestId, ResponseHead),
    /// A piece of the body of request `id`.
    Chunk(RequestId, Bytes),
    /// The end of the body of request `id`.
    End(RequestId),
    /// Request `id` failed below HTTP.
    Failure(RequestId, TransportFailure),
    /// The recorded trace, when recording.
    Trace(std::sync::mpsc::Sender<Option<String>>),
    /// Stop the driver.
    Shutdown,
}

/// The latest snapshot, whether the driver still runs, and the event subscribers; shared by the
/// driver and the [`crate::Shell`].
#[derive(Debug)]
pub(crate) struct Published {
    latest: Mutex<Latest>,
    changed: Condvar,
    /// `None` once the driver has stopped.
    subscribers: Mutex<Option<Vec<Sender<Event>>>>,
}

#[derive(Debug)]
pub(crate) struct Latest {
    pub snapshot: Snapshot,
    pub running: bool,
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Published {
    pub(crate) fn new(snapshot: Snapshot) -> Published {
        Published {
            latest: Mutex::new(Latest {
                snapshot,
                running: true,
            }),
            changed: Condvar::new(),
            subscribers: Mutex::new(Some(Vec::new())),
        }
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        lock(&self.latest).snapshot.clone()
    }

    /// Waits until `pred` holds for the latest snapshot, the deadline passes, or the driver stops.
    pub(crate) fn wait_for(
        &self,
        pred: impl Fn(&Snapshot) -> bool,
        timeout: Duration,
    ) -> Option<Snapshot> {
        let deadline = Instant::now().checked_add(timeout);
        let mut latest = lock(&self.latest);
        loop {
            if pred(&latest.snapshot) {
                return Some(latest.snapshot.clone());
            }
            if !latest.running {
                return None;
            }
            latest = match deadline {
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
                    }
                    self.changed
                        .wait_timeout(latest, left)
                        .map(|(guard, _)| guard)
                        .unwrap_or_else(|e| e.into_inner().0)
                }
                None => self
                    .changed
                    .wait(latest)
                    .unwrap_or_else(PoisonError::into_inner),
            };
        }
    }

    /// A new receiver of every event published from now on.
    pub(crate) fn subscribe(&self) -> std::sync::mpsc::Receiver<Event> {
        let (tx, rx) = std::sync::mpsc::channel();
        if let Some(list) = lock(&self.subscribers).as_mut() {
            list.push(tx);
        }
        // Once stopped, `tx` is dropped here and the receiver reports disconnection at once.
        rx
    }

    fn publish_events(&self, events: &mut Vec<Event>) {
        if events.is_empty() {
            return;
        }
        let mut guard = lock(&self.subscribers);
        if let Some(list) = guard.as_mut() {
            list.retain(|tx| events.iter().all(|e| tx.send(e.clone()).is_ok()));
        }
        events.clear();
    }

    fn publish_snapshot(&self, snapshot: Snapshot) {
        lock(&self.latest).snapshot = snapshot;
        self.changed.notify_all();
    }

    /// Marks the driver stopped: waiters return, event receivers disconnect.
    pub(crate) fn close(&self) {
        lock(&self.latest).running = false;
        self.changed.notify_all();
        lock(&self.subscribers).take();
    }
}

/// Closes the published state when the driver ends, by return or by unwinding.
struct CloseOnDrop(Arc<Published>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Everything the driver thread owns.
pub(crate) struct Driver {
    pub engine: Engine,
    pub inbox: Receiver<Msg>,
    /// Handed to each worker for its completions.
    pub to_self: Sender<Msg>,
    pub connect_timeout: Duration,
    pub limits: Limits,
    pub storage: Box<dyn Storage>,
    pub published: Arc<Published>,
    /// The last snapshot published.
    pub last: Snapshot,
    /// The host's URL rewrite, applied once to every request carried out.
    pub rewrite: Option<Arc<engine_core::UrlRewrite>>,
    /// The engine's time origin: the driver works in instants and hands the engine
    /// [`engine_core::Time`]s.
    pub clock: engine_core::InstantClock,
}

/// The driver's working state beyond what it was built with.
struct Running {
    client: Arc<Result<Client, String>>,
    /// Requests whose results the engine still wants, with their abort flags.
    in_flight: BTreeMap<RequestId, Arc<AtomicBool>>,
    /// Messages produced by the driver itself (storage answers), handled before the inbox.
    local: VecDeque<Msg>,
    events: Vec<Event>,
    /// The deadline last fired, to keep a deadline that does not move from spinning.
    fired: Option<Instant>,
    /// Streamed answers in flight: when they last showed a sign of life, and whether their head
    /// came. A blocking read cannot time out per read, so the driver watches for silence.
    streams: BTreeMap<RequestId, (Instant, bool)>,
}

/// The least wait after a deadline fired without moving.
const SPIN_GUARD: Duration = Duration::from_millis(1);

impl Driver {
    /// Runs until [`Msg::Shutdown`] (or until every sender is gone).
    pub(crate) fn run(mut self) {
        let _close = CloseOnDrop(Arc::clone(&self.published));
        // Built here, off the host's thread: reqwest's blocking client must not be built or
        // dropped inside an async runtime, and the host may be in one.
        let client = Arc::new(crate::http::client(self.connect_timeout));
        if let Err(e) = client.as_ref() {
            tracing::error!(error = %e, "the HTTP client could not be built; every request fails");
        }
        let mut run = Running {
            client,
            in_flight: BTreeMap::new(),
            local: VecDeque::new(),
            events: Vec::new(),
            fired: None,
            streams: BTreeMap::new(),
        };
        // The engine may have work from its construction.
        self.drain(&mut run);
        loop {
            let next = match run.local.pop_front() {
                Some(msg) => Some(msg),
                None => match self.wait(&run) {
                    Ok(msg) => Some(msg),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                },
            };
            let now = Instant::now();
            match next {
                None => {
                    self.silent_streams(&mut run, now);
                    run.fired = self.deadline();
                    self.engine.handle_timeout(self.clock.time(now));
                }
                Some(Msg::Shutdown) => break,
                Some(msg) => self.handle(&mut run, msg, now),
            }
            self.drain(&mut run);
        }
        for flag in run.in_flight.values() {
            flag.store(true, Ordering::Release);
        }
        tracing::debug!(abandoned = run.in_flight.len(), "driver stopped");
    }

    /// Waits for the next message until the engine's deadline (a past deadline is clamped to
    /// now; an early or spurious wake-up only costs a harmless `handle_timeout`).
    fn wait(&self, run: &Running) -> Result<Msg, RecvTimeoutError> {
        let idle = self.limits.stream_idle_timeout;
        let watchdog = run.streams.values().map(|(at, _)| *at + idle).min();
        let deadline = match (self.deadline(), watchdog) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match deadline {
            None => self
                .inbox
                .recv()
                .map_err(|_| RecvTimeoutError::Disconnected),
            Some(deadline) => {
                let mut wait = deadline.saturating_duration_since(Instant::now());
                if run.fired.is_some_and(|fired| deadline <= fired) {
                    wait = wait.max(SPIN_GUARD);
                }
                self.inbox.recv_timeout(wait)
            }
        }
    }

    /// The engine's next deadline, as an instant.
    fn deadline(&self) -> Option<Instant> {
        self.engine.poll_timeout().map(|t| self.clock.instant(t))
    }

    /// A streamed answer silent for longer than the idle limit fails: no answer before its
    /// head, broken after it. Its worker may still be blocked in a read; its results are
    /// dropped.
    fn silent_streams(&mut self, run: &mut Running, now: Instant) {
        let idle = self.limits.stream_idle_timeout;
        let silent: Vec<(RequestId, bool)> = run
            .streams
            .iter()
            .filter(|(_, (at, _))| now.saturating_duration_since(*at) >= idle)
            .map(|(id, (_, head))| (*id, *head))
            .collect();
        for (id, head) in silent {
            run.streams.remove(&id);
            if let Some(flag) = run.in_flight.remove(&id) {
                flag.store(true, Ordering::Release);
                let message = format!("No data for {} ms.", idle.as_millis());
                let failure = TransportFailure {
                    kind: if head {
                        engine_core::FailureKind::Broken
                    } else {
                        engine_core::FailureKind::NoAnswer
                    },
                    message,
                };
                self.engine
                    .handle_failure(id, failure, self.clock.time(now));
            }
        }
    }

    fn handle(&mut self, run: &mut Running, msg: Msg, now: Instant) {
        // Signs of life of a streamed answer.
        match &msg {
            Msg::Head(id, _) | Msg::Chunk(id, _) => {
                if let Some(entry) = run.streams.get_mut(id) {
                    *entry = (now, true);
                }
            }
            Msg::End(id) | Msg::Failure(id, _) => {
                run.streams.remove(id);
            }
            _ => {}
        }
        let engine = &mut self.engine;
        let now = self.clock.time(now);
        match msg {
            Msg::Input(input) => engine.handle_input(input, now),
            // Completions of requests no longer in flight (aborted) are dropped here; the
            // engine would ignore them anyway.
            Msg::Head(id, head) if run.in_flight.contains_key(&id) => {
                engine.handle_response(id, head, now);
            }
            Msg::Chunk(id, chunk) if run.in_flight.contains_key(&id) => {
                engine.handle_body_chunk(id, chunk, now);
            }
            Msg::End(id) if run.in_flight.remove(&id).is_some() => {
                engine.handle_body_end(id, now);
            }
            Msg::Failure(id, failure) if run.in_flight.remove(&id).is_some() => {
                engine.handle_failure(id, failure, now);
            }
            Msg::Head(id, _) | Msg::Chunk(id, _) | Msg::End(id) | Msg::Failure(id, _) => {
                tracing::trace!(
                    id = id.0,
                    "dropped a completion of a request no longer in flight"
                );
            }
            Msg::Trace(reply) => {
                let _ = reply.send(self.engine.trace().map(str::to_owned));
            }
            Msg::Shutdown => {}
        }
    }

    /// The drive contract: after a mutation, drain intents and events, then publish.
    fn drain(&mut self, run: &mut Running) {
        // Executing an intent never mutates the engine (storage answers go to `run.local`), so
        // one pass over each queue empties both.
        while let Some(intent) = self.engine.poll_intent() {
            self.execute(run, intent);
        }
        while let Some(event) = self.engine.poll_event() {
            run.events.push(event);
        }
        // Events first: when a waiter sees a snapshot, the events that led to it are queued.
        self.published.publish_events(&mut run.events);
        let snapshot = self.engine.snapshot();
        if snapshot != self.last {
            self.last = snapshot.clone();
            self.published.publish_snapshot(snapshot);
        }
    }

    fn execute(&mut self, run: &mut Running, intent: Intent) {
        match intent {
            Intent::Http { id, call, request } => {
                let aborted = Arc::new(AtomicBool::new(false));
                run.in_flight.insert(id, Arc::clone(&aborted));
                let span = tracing::debug_span!(
                    "request",
                    id = id.0,
                    call = ?call.operation(),
                    method = request.method.as_str(),
                    path = %request.path,
                );
                if request.body_mode == engine_core::BodyMode::Streamed {
                    run.streams.insert(id, (Instant::now(), false));
                }
                // Once, here: the request carries the original address, never a rewritten one.
                let url = request.request_url(self.rewrite.as_deref());
                let exchange = Exchange {
                    id,
                    url,
                    request,
                    limits: self.limits,
                    aborted,
                    to_driver: self.to_self.clone(),
                };
                let client = Arc::clone(&run.client);
                let spawned = std::thread::Builder::new()
                    .name(format!("engine-http-{}", id.0))
                    .spawn(move || {
                        let _entered = span.enter();
                        tracing::debug!("sending");
                        exchange.run(&client);
                    });
                if let Err(e) = spawned {
                    tracing::error!(id = id.0, error = %e, "could not start a request thread");
                    let failure = TransportFailure::no_answer(format!(
                        "Could not start a request thread: {e}"
                    ));
                    run.local.push_back(Msg::Failure(id, failure));
                }
            }
            Intent::Abort { id } => {
                run.streams.remove(&id);
                if let Some(flag) = run.in_flight.remove(&id) {
                    tracing::debug!(id = id.0, "abort");
                    flag.store(true, Ordering::Release);
                }
            }
            Intent::Storage(request) => self.storage(run, request),
        }
    }

    fn storage(&mut self, run: &mut Running, request: StorageRequest) {
        match request {
            StorageRequest::Load { key } => {
                let sessions = self.storage.load(&key).and_then(|value| {
                    serde_json::from_value::<Vec<SessionSummary>>(value)
                        .inspect_err(
                            |e| tracing::warn!(%key, error = %e, "stored sessions unreadable"),
                        )
                        .ok()
                });
                run.local
                    .push_back(Msg::Input(Input::StoredSessionsLoaded { key, sessions }));
            }
            StorageRequest::LoadQueue { key } => {
                let rows = self.storage.load(&key);
                run.local
                    .push_back(Msg::Input(Input::StoredQueueLoaded { key, rows }));
            }
            StorageRequest::Save { key, sessions } => match serde_json::to_value(&sessions) {
                Ok(value) => self.storage.save(&key, value),
                Err(e) => tracing::warn!(%key, error = %e, "sessions not stored"),
            },
            StorageRequest::SaveQueue { key, rows } => match serde_json::to_value(&rows) {
                Ok(value) => self.storage.save(&key, value),
                Err(e) => tracing::warn!(%key, error = %e, "queue not stored"),
            },
            StorageRequest::RemoveQueue { key } => self.storage.remove(&key),
        }
    }
}

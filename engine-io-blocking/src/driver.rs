//! The driver thread: owns the engine, feeds it messages and time, executes its intents and
//! publishes its snapshots and events.

use std::collections::{BTreeMap, VecDeque};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use engine_core::{
    Engine, Event, HttpRequest, Input, Intent, RequestId, SessionSummary, Snapshot, StorageRequest,
    TransportFailure,
};
use engine_io_tokio::publish::{Counters, Handled, Throttle, is_urgent, log_event};
use tokio::task::AbortHandle;

use crate::http::{Exchange, Limits, Transport, Woken};
use crate::msg::Msg;
use crate::storage::Storage;

/// At most this many messages are handled before the requests they asked for are started.
const BATCH: usize = 64;

/// How long shutdown waits for the transport's threads after dropping every exchange.
const STOP_WAIT: Duration = Duration::from_secs(1);

/// The latest snapshot, whether the driver still runs, and the event subscribers; shared by the
/// driver and the [`crate::Shell`].
#[derive(Debug)]
pub(crate) struct Published {
    latest: Mutex<Latest>,
    changed: Condvar,
    /// `None` once the driver has stopped.
    subscribers: Mutex<Option<Vec<Sender<Event>>>>,
    /// What the driver has done ([`crate::Shell::stats`]).
    pub(crate) counters: Counters,
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
            counters: Counters::default(),
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

    /// Whether the driver still runs.
    pub(crate) fn running(&self) -> bool {
        lock(&self.latest).running
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
    /// The host's messages ([`crate::http::HostInbox`] sends them).
    pub inbox: Receiver<Msg>,
    /// Notified on each host message: wakes the driver while it waits on the transport.
    pub notify: Arc<tokio::sync::Notify>,
    pub connect_timeout: Duration,
    pub limits: Limits,
    pub storage: Box<dyn Storage>,
    pub published: Arc<Published>,
    /// The last snapshot published.
    pub last: Snapshot,
    /// The host's URL rewrite, applied once to every request carried out.
    pub rewrite: Option<Arc<engine_core::UrlRewrite>>,
    /// The application's sender of platform requests, if any.
    pub sender: Option<Arc<dyn engine_io_tokio::sender::PlatformSender>>,
    /// The engine's time origin: the driver works in instants and hands the engine
    /// [`engine_core::Time`]s.
    pub clock: engine_core::InstantClock,
    /// When snapshots are published (the rule both shells share).
    pub throttle: Throttle,
    /// The engine's revisions as of `last`.
    pub seen: engine_core::Revisions,
}

/// The driver's working state beyond what it was built with.
struct Running {
    transport: Result<Transport, String>,
    /// Requests whose results the engine still wants, with their tasks' abort handles.
    /// (`None`: failed to start, its failure queued in `local`.)
    in_flight: BTreeMap<RequestId, Option<AbortHandle>>,
    /// Requests asked for and not started yet: started once the messages at hand are handled
    /// (at most [`BATCH`] of them), unless aborted first.
    starting: Vec<(RequestId, HttpRequest, tracing::Span)>,
    /// Messages produced by the driver itself (storage answers), handled before the inbox.
    local: VecDeque<Msg>,
    events: Vec<Event>,
    /// The deadline last fired, to keep a deadline that does not move from spinning.
    fired: Option<Instant>,
}
/// The least wait after a deadline fired without moving.
const SPIN_GUARD: Duration = Duration::from_millis(1);

impl Driver {
    /// Runs until [`Msg::Shutdown`] (or until every sender is gone).
    pub(crate) fn run(mut self) {
        let _close = CloseOnDrop(Arc::clone(&self.published));
        // Built here, off the host's thread: a tokio runtime must not be built or dropped
        // inside another one, and the host may be in one.
        let transport = Transport::start(self.connect_timeout);
        if let Err(e) = &transport {
            tracing::error!(error = %e, "the HTTP transport could not start; every request fails");
        }
        let mut run = Running {
            transport,
            in_flight: BTreeMap::new(),
            starting: Vec::new(),
            local: VecDeque::new(),
            events: Vec::new(),
            fired: None,
        };
        // The engine may have work from its construction.
        self.drain(&mut run, Handled::Other, Instant::now());
        // Messages handled since the requests asked for were last started.
        let mut batch = 0_usize;
        loop {
            let queued = match run.local.pop_front() {
                Some(msg) => Some(msg),
                None if batch < BATCH => match self.inbox.try_recv() {
                    Ok(msg) => Some(msg),
                    Err(TryRecvError::Empty) => {
                        run.transport.as_mut().ok().and_then(Transport::try_recv)
                    }
                    Err(TryRecvError::Disconnected) => break,
                },
                None => None,
            };
            batch += 1;
            let next = match queued {
                Some(msg) => Some(msg),
                None => {
                    // Nothing more at hand: start what the engine still wants, then wait.
                    batch = 0;
                    self.start_all(&mut run);
                    match self.wait(&mut run) {
                        Ok(msg) => Some(msg),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
            };
            let now = Instant::now();
            let handled = match next {
                None if self.throttle.due().is_some_and(|due| due <= now) => {
                    // A change held back by the throttle is due.
                    self.publish(now);
                    continue;
                }
                None => {
                    run.fired = self.deadline();
                    self.engine.handle_timeout(self.clock.time(now));
                    Handled::Other
                }
                Some(Msg::Shutdown) => break,
                Some(msg) => self.handle(&mut run, msg, now),
            };
            self.drain(&mut run, handled, now);
        }
        tracing::debug!(abandoned = run.in_flight.len(), "driver stopped");
        // The host keeps the last snapshot: a change held back is published before the end.
        if self.throttle.dirty() {
            self.publish(Instant::now());
        }
        for task in run.in_flight.values().flatten() {
            task.abort();
        }
        // Every exchange still running is dropped (its connection closed) and the transport's
        // threads end: a hung answer keeps neither a thread nor a socket.
        if let Ok(transport) = run.transport {
            transport.stop(STOP_WAIT);
        }
    }

    /// Waits for the next message, the host's or a task's, until the engine's deadline (a past
    /// deadline is clamped to now; an early or spurious wake-up only costs a harmless
    /// `handle_timeout`).
    fn wait(&self, run: &mut Running) -> Result<Msg, RecvTimeoutError> {
        let publish = self.throttle.due();
        let mut deadline = match (self.deadline(), publish) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(at) = deadline
            && run.fired.is_some_and(|fired| at <= fired)
        {
            deadline = Some(at.max(Instant::now() + SPIN_GUARD));
        }
        let transport = match &mut run.transport {
            Ok(transport) => transport,
            // No transport: only the host's messages can come.
            Err(_) => {
                return match deadline {
                    None => self
                        .inbox
                        .recv()
                        .map_err(|_| RecvTimeoutError::Disconnected),
                    Some(at) => self
                        .inbox
                        .recv_timeout(at.saturating_duration_since(Instant::now())),
                };
            }
        };
        loop {
            match self.inbox.try_recv() {
                Ok(msg) => return Ok(msg),
                Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
                Err(TryRecvError::Empty) => {}
            }
            if let Some(msg) = transport.try_recv() {
                return Ok(msg);
            }
            let wait = deadline.map(|at| at.saturating_duration_since(Instant::now()));
            match transport.wait(&self.notify, wait) {
                Woken::Task(msg) => return Ok(msg),
                Woken::Host => {}
                Woken::Timeout => return Err(RecvTimeoutError::Timeout),
            }
        }
    }

    /// The engine's next deadline, as an instant.
    fn deadline(&self) -> Option<Instant> {
        self.engine.poll_timeout().map(|t| self.clock.instant(t))
    }

    /// Hands a message to the engine and says what it was (the publication after a piece of an
    /// answer may wait, see [`engine_io_tokio::publish`]).
    fn handle(&mut self, run: &mut Running, msg: Msg, now: Instant) -> Handled {
        let mut handled = Handled::Other;
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
                handled = Handled::Pieces(chunk.len());
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
            Msg::Sync(reply) => {
                let _ = reply.send(());
            }
            Msg::Shutdown => {}
        }
        handled
    }

    /// The drive contract: after a mutation, drain intents and events, then publish when the
    /// throttle says so.
    fn drain(&mut self, run: &mut Running, handled: Handled, now: Instant) {
        // Executing an intent never mutates the engine (storage answers go to `run.local`), so
        // one pass over each queue empties both.
        while let Some(intent) = self.engine.poll_intent() {
            self.execute(run, intent);
        }
        if run.in_flight.is_empty() {
            self.throttle.idle();
        }
        let mut urgent = false;
        while let Some(event) = self.engine.poll_event() {
            urgent |= is_urgent(&event);
            log_event(&event);
            run.events.push(event);
        }
        // Events first: when a waiter sees a snapshot, the events that led to it are queued.
        self.published.publish_events(&mut run.events);
        if self.throttle.after(now, handled, urgent) {
            self.publish(now);
        }
    }

    fn publish(&mut self, now: Instant) {
        self.throttle.published(now);
        if let Some(snapshot) =
            self.published
                .counters
                .changed(&self.engine, &self.last, &mut self.seen)
        {
            self.last = snapshot.clone();
            self.published.publish_snapshot(snapshot);
        }
    }

    fn execute(&mut self, run: &mut Running, intent: Intent) {
        match intent {
            Intent::Http { id, call, request } => {
                let span = tracing::debug_span!(
                    "request",
                    id = id.0,
                    call = ?call.operation(),
                    method = request.method.as_str(),
                    path = %request.path,
                );
                run.starting.push((id, request, span));
            }
            Intent::Abort { id } => {
                let before = run.starting.len();
                run.starting.retain(|(starting, _, _)| *starting != id);
                if run.starting.len() < before {
                    tracing::debug!(id = id.0, "aborted before it started");
                } else if let Some(Some(task)) = run.in_flight.remove(&id) {
                    tracing::debug!(id = id.0, "abort");
                    task.abort();
                }
            }
            Intent::Storage(request) => self.storage(run, request),
        }
    }

    /// Starts the requests asked for since the last call. Only here, once the messages at hand
    /// are handled: a request aborted meanwhile (a burst of inputs that each replace the last
    /// one's request) never starts, never takes a connection.
    fn start_all(&mut self, run: &mut Running) {
        for (id, request, span) in std::mem::take(&mut run.starting) {
            self.start(run, id, request, span);
        }
    }

    /// Starts an exchange on the transport.
    fn start(
        &mut self,
        run: &mut Running,
        id: RequestId,
        request: HttpRequest,
        span: tracing::Span,
    ) {
        // Once, here: the request carries the original address, never a rewritten one.
        let url = request.request_url(self.rewrite.as_deref());
        match &run.transport {
            Ok(transport) => {
                let exchange = Exchange {
                    id,
                    url,
                    request,
                    limits: self.limits,
                    sender: self.sender.clone(),
                };
                self.published.counters.exchange();
                let task = transport.spawn(exchange, span);
                // Ids are never reused; should one be, the older request is dropped.
                if let Some(Some(previous)) = run.in_flight.insert(id, Some(task)) {
                    previous.abort();
                }
            }
            Err(message) => {
                let failure = TransportFailure::no_answer(format!("No HTTP client: {message}"));
                run.in_flight.insert(id, None);
                run.local.push_back(Msg::Failure(id, failure));
            }
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
            StorageRequest::LoadSelection { key } => {
                let session_uid = self
                    .storage
                    .load(&key)
                    .and_then(|v| v.as_str().map(str::to_owned));
                run.local
                    .push_back(Msg::Input(Input::StoredSelectionLoaded {
                        key,
                        session_uid,
                    }));
            }
            StorageRequest::SaveSelection { key, session_uid } => {
                self.storage
                    .save(&key, serde_json::Value::String(session_uid));
            }
        }
    }
}

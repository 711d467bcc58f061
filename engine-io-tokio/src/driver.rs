//! The engine's task: the only owner of the [`Engine`]. It feeds the engine host inputs, request
//! completions and time, and carries out what the engine asks for.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use engine_core::{
    Engine, Event, FailureKind, Input, InstantClock, Intent, RequestId, SessionSummary, Snapshot,
    StorageRequest, Time, TransportFailure, UrlRewrite,
};
use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::{AbortHandle, JoinError, JoinSet};

use crate::publish::{Counters, Handled, Throttle, is_urgent, log_event};
use crate::request::{self, Client, Completion, Limits, Part};
use crate::storage::Storage;

/// Completions handled in one go before the engine task looks at its other inputs and at
/// publishing again.
const COMPLETION_BATCH: usize = 64;

/// Capacity of the completion channel: a request task waits when the engine task is this far
/// behind, so a fast stream cannot outrun the engine.
pub(crate) const COMPLETION_CAPACITY: usize = 64;

/// A piece of an answer smaller than this waits one scheduler round for the pieces behind it
/// (an answer written one event at a time), and is joined with them; a larger one already
/// carries many events, and goes to the engine as it came.
const SMALL_PIECE: usize = 4096;

/// What a [`crate::Handle`] sends the engine task.
#[derive(Debug)]
pub(crate) enum HostMessage {
    Input(Input),
    /// The recorded trace, when recording.
    Trace(tokio::sync::oneshot::Sender<Option<String>>),
    /// Answered once every earlier message was taken and its snapshot published.
    Sync(tokio::sync::oneshot::Sender<()>),
    Shutdown,
}

/// A request task the engine still waits on.
#[derive(Debug)]
struct InFlight {
    abort: AbortHandle,
    head_seen: bool,
}

/// The engine and everything its task owns.
pub(crate) struct Driver {
    pub engine: Engine,
    pub storage: Box<dyn Storage>,
    pub client: Client,
    pub limits: Limits,
    pub events: broadcast::Sender<Event>,
    pub snapshots: watch::Sender<Snapshot>,
    pub done_tx: mpsc::Sender<Completion>,
    /// The host's URL rewrite, applied once to every request carried out.
    pub rewrite: Option<Arc<UrlRewrite>>,
    /// The application's sender of platform requests, if any.
    pub sender: Option<Arc<dyn crate::sender::PlatformSender>>,
    tasks: JoinSet<RequestId>,
    in_flight: BTreeMap<RequestId, InFlight>,
    /// Storage answers for the engine, fed in after the drain that asked for them.
    follow_ups: VecDeque<Input>,
    /// The engine's time origin: instants in, [`Time`]s to the engine, deadlines back out. Set
    /// it to the origin the engine was built on.
    pub clock: InstantClock,
    /// When snapshots are published (see [`crate::publish`]). Set it to the shell's interval.
    pub throttle: Throttle,
    /// What the task has done, shared with the handles.
    pub counters: Arc<Counters>,
    /// The events drained since the last publication held a terminal fact.
    urgent: bool,
    /// The engine's revisions as of the snapshot the host holds.
    seen: engine_core::Revisions,
}

/// The shell's clock: tokio's, so paused-time tests move it too.
pub(crate) fn instant_now() -> std::time::Instant {
    tokio::time::Instant::now().into_std()
}

impl Driver {
    pub(crate) fn new(
        engine: Engine,
        storage: Box<dyn Storage>,
        client: Client,
        limits: Limits,
        events: broadcast::Sender<Event>,
        snapshots: watch::Sender<Snapshot>,
        done_tx: mpsc::Sender<Completion>,
    ) -> Driver {
        let seen = engine.revisions();
        Driver {
            engine,
            storage,
            client,
            limits,
            events,
            snapshots,
            done_tx,
            rewrite: None,
            sender: None,
            tasks: JoinSet::new(),
            in_flight: BTreeMap::new(),
            follow_ups: VecDeque::new(),
            clock: InstantClock::new(instant_now()),
            throttle: Throttle::new(crate::publish::DEFAULT_SNAPSHOT_INTERVAL),
            counters: Arc::new(Counters::default()),
            urgent: false,
            seen,
        }
    }

    /// Now, as the engine's [`Time`].
    fn now(&self) -> Time {
        self.clock.time(instant_now())
    }

    /// Runs until shutdown, or until every handle is gone.
    pub(crate) async fn run(
        mut self,
        mut host: mpsc::UnboundedReceiver<HostMessage>,
        mut done: mpsc::Receiver<Completion>,
    ) {
        // The engine may have work from its construction.
        let now = self.now();
        self.settle(now);
        self.publish();
        let sleep = tokio::time::sleep_until(tokio::time::Instant::now());
        tokio::pin!(sleep);
        let mut armed: Option<Time> = None;
        // A change held back by the throttle is published at the latest then.
        let publish_sleep = tokio::time::sleep_until(tokio::time::Instant::now());
        tokio::pin!(publish_sleep);
        let mut publish_armed: Option<std::time::Instant> = None;
        loop {
            // Re-arm only when the deadline moved; a past deadline fires at once.
            let deadline = self.engine.poll_timeout();
            if deadline != armed {
                armed = deadline;
                if let Some(at) = deadline {
                    let at = tokio::time::Instant::from_std(self.clock.instant(at))
                        .max(tokio::time::Instant::now());
                    sleep.as_mut().reset(at);
                }
            }
            let due = self.throttle.due();
            if due != publish_armed {
                publish_armed = due;
                if let Some(at) = due {
                    let at = tokio::time::Instant::from_std(at).max(tokio::time::Instant::now());
                    publish_sleep.as_mut().reset(at);
                }
            }
            let handled = tokio::select! {
                message = host.recv() => match message {
                    Some(HostMessage::Input(input)) => {
                        let now = self.now();
                        self.engine.handle_input(input, now);
                        self.settle(now);
                        Some(Handled::Other)
                    }
                    Some(HostMessage::Trace(reply)) => {
                        let _ = reply.send(self.engine.trace().map(str::to_owned));
                        None
                    }
                    Some(HostMessage::Sync(reply)) => {
                        let _ = reply.send(());
                        None
                    }
                    Some(HostMessage::Shutdown) | None => break,
                },
                Some(completion) = done.recv() => {
                    if matches!(&completion.part, Part::Chunk(c) if c.len() < SMALL_PIECE) {
                        // A small piece of an answer: the request tasks first queue what else
                        // has arrived (one scheduler round), and the pieces of one request at
                        // hand become one engine input.
                        tokio::task::yield_now().await;
                    }
                    let mut handled = None;
                    for completion in batch(completion, || done.try_recv().ok()) {
                        handled = merge(handled, self.complete(completion));
                    }
                    handled
                }
                Some(joined) = self.tasks.join_next(), if !self.tasks.is_empty() => {
                    self.reaped(joined).then_some(Handled::Other)
                }
                () = &mut sleep, if armed.is_some() => {
                    // Spurious or early wake-ups are harmless: the engine checks its timers.
                    armed = None;
                    let now = self.now();
                    self.engine.handle_timeout(now);
                    self.settle(now);
                    Some(Handled::Other)
                }
                () = &mut publish_sleep, if publish_armed.is_some() => {
                    publish_armed = None;
                    self.publish();
                    None
                }
            };
            if self.in_flight.is_empty() {
                self.throttle.idle();
            }
            // Once per wake-up at most: a batch of chunks gives one snapshot, not one per chunk,
            // and pieces of an answer only as the throttle says.
            if let Some(handled) = handled {
                let urgent = std::mem::take(&mut self.urgent);
                if self.throttle.after(instant_now(), handled, urgent) {
                    self.publish();
                }
            }
        }
        tracing::debug!(in_flight = self.in_flight.len(), "engine task stopping");
        // The host keeps the last snapshot: a change held back is published before the end.
        if self.throttle.dirty() {
            self.publish();
        }
        self.in_flight.clear();
        self.tasks.shutdown().await;
    }

    /// The drive contract: drain intents and events until both are empty, feeding storage
    /// answers back in (each answer is a new input, drained in turn).
    fn settle(&mut self, now: Time) {
        loop {
            loop {
                let mut idle = true;
                while let Some(intent) = self.engine.poll_intent() {
                    idle = false;
                    self.carry_out(intent);
                }
                while let Some(event) = self.engine.poll_event() {
                    idle = false;
                    self.urgent |= is_urgent(&event);
                    log_event(&event);
                    // No subscriber is not an error: the snapshot holds the level truth.
                    let _ = self.events.send(event);
                }
                if idle {
                    break;
                }
            }
            match self.follow_ups.pop_front() {
                Some(input) => self.engine.handle_input(input, now),
                None => break,
            }
        }
    }

    /// Publishes the snapshot when it changed.
    fn publish(&mut self) {
        self.throttle.published(instant_now());
        let changed = self
            .counters
            .changed(&self.engine, &self.snapshots.borrow(), &mut self.seen);
        if let Some(snapshot) = changed {
            self.snapshots.send_replace(snapshot);
        }
    }

    fn carry_out(&mut self, intent: Intent) {
        match intent {
            Intent::Http { id, request, .. } => {
                // Once, here: the request carries the original address, never a rewritten one.
                let url = request.request_url(self.rewrite.as_deref());
                let task = request::execute(
                    self.client.clone(),
                    self.sender.clone(),
                    id,
                    request,
                    url,
                    self.limits,
                    self.done_tx.clone(),
                );
                self.counters.exchange();
                let abort = self.tasks.spawn(task);
                let previous = self.in_flight.insert(
                    id,
                    InFlight {
                        abort,
                        head_seen: false,
                    },
                );
                // Ids are never reused; should one be, the older request is dropped.
                if let Some(previous) = previous {
                    previous.abort.abort();
                }
            }
            Intent::Abort { id } => {
                if let Some(request) = self.in_flight.remove(&id) {
                    tracing::debug!(id = id.0, "aborting request");
                    request.abort.abort();
                }
            }
            Intent::Storage(request) => self.storage(request),
        }
    }

    fn storage(&mut self, request: StorageRequest) {
        match request {
            StorageRequest::Load { key } => {
                let sessions = self.storage.load(&key).and_then(|value| {
                    serde_json::from_value::<Vec<SessionSummary>>(value)
                        .inspect_err(
                            |e| tracing::debug!(%key, error = %e, "stored list unreadable"),
                        )
                        .ok()
                });
                self.follow_ups
                    .push_back(Input::StoredSessionsLoaded { key, sessions });
            }
            StorageRequest::LoadQueue { key } => {
                let rows = self.storage.load(&key);
                self.follow_ups
                    .push_back(Input::StoredQueueLoaded { key, rows });
            }
            StorageRequest::Save { key, sessions } => match serde_json::to_value(&sessions) {
                Ok(value) => self.storage.save(&key, value),
                Err(e) => tracing::warn!(%key, error = %e, "session list not stored"),
            },
            StorageRequest::SaveQueue { key, rows } => match serde_json::to_value(&rows) {
                Ok(value) => self.storage.save(&key, value),
                Err(e) => tracing::warn!(%key, error = %e, "message queue not stored"),
            },
            StorageRequest::RemoveQueue { key } => self.storage.remove(&key),
            StorageRequest::LoadSelection { key } => {
                let session_uid = self
                    .storage
                    .load(&key)
                    .and_then(|v| v.as_str().map(str::to_owned));
                self.follow_ups
                    .push_back(Input::StoredSelectionLoaded { key, session_uid });
            }
            StorageRequest::SaveSelection { key, session_uid } => {
                self.storage
                    .save(&key, serde_json::Value::String(session_uid));
            }
        }
    }

    /// Hands a part of an answer to the engine and says what it was. Parts of aborted requests
    /// are dropped here (the engine would ignore them anyway).
    fn complete(&mut self, Completion { id, part }: Completion) -> Option<Handled> {
        let now = self.now();
        let request = self.in_flight.get_mut(&id)?;
        let handled = match part {
            Part::Head(head) => {
                request.head_seen = true;
                self.engine.handle_response(id, head, now);
                Handled::Other
            }
            Part::Chunk(chunk) => {
                let bytes = chunk.len();
                self.engine.handle_body_chunk(id, chunk, now);
                Handled::Pieces(bytes)
            }
            Part::End => {
                self.in_flight.remove(&id);
                self.engine.handle_body_end(id, now);
                Handled::Other
            }
            Part::Failed(failure) => {
                self.in_flight.remove(&id);
                self.engine.handle_failure(id, failure, now);
                Handled::Other
            }
        };
        self.settle(now);
        Some(handled)
    }

    /// A request task ended. One that panicked before its last part is reported as failed
    /// (returns whether the engine was told).
    fn reaped(&mut self, joined: Result<RequestId, JoinError>) -> bool {
        let Err(error) = joined else {
            return false;
        };
        if !error.is_panic() {
            return false;
        }
        let task = error.id();
        let Some(id) = self
            .in_flight
            .iter()
            .find(|(_, r)| r.abort.id() == task)
            .map(|(id, _)| *id)
        else {
            return false;
        };
        let head_seen = self
            .in_flight
            .remove(&id)
            .is_some_and(|request| request.head_seen);
        tracing::error!(id = id.0, "request task panicked");
        let failure = TransportFailure::new(
            if head_seen {
                FailureKind::Broken
            } else {
                FailureKind::NoAnswer
            },
            "The request failed unexpectedly.",
        );
        let now = self.now();
        self.engine.handle_failure(id, failure, now);
        self.settle(now);
        true
    }
}

/// `first` and the completions at hand after it (at most [`COMPLETION_BATCH`] in all), in
/// order, with each run of consecutive small pieces (under [`SMALL_PIECE`]) of one request
/// joined into one piece.
fn batch(first: Completion, mut next: impl FnMut() -> Option<Completion>) -> Vec<Completion> {
    let mut out: Vec<Completion> = Vec::new();
    let mut held = first;
    // The pieces joined to `held`'s, when more than one.
    let mut joined = bytes::BytesMut::new();
    for _ in 1..COMPLETION_BATCH {
        let Some(more) = next() else { break };
        if let (Part::Chunk(a), Part::Chunk(b)) = (&held.part, &more.part)
            && held.id == more.id
            && a.len().max(b.len()) < SMALL_PIECE
        {
            if joined.is_empty() {
                joined.extend_from_slice(a);
            }
            joined.extend_from_slice(b);
            continue;
        }
        out.push(with_joined(std::mem::replace(&mut held, more), &mut joined));
    }
    out.push(with_joined(held, &mut joined));
    out
}

/// `completion`, its piece replaced by the pieces `joined` holds, if any.
fn with_joined(mut completion: Completion, joined: &mut bytes::BytesMut) -> Completion {
    if !joined.is_empty() {
        completion.part = Part::Chunk(joined.split().freeze());
    }
    completion
}

/// What a batch handled: pieces add up, anything else wins.
fn merge(a: Option<Handled>, b: Option<Handled>) -> Option<Handled> {
    match (a, b) {
        (Some(Handled::Pieces(x)), Some(Handled::Pieces(y))) => {
            Some(Handled::Pieces(x.saturating_add(y)))
        }
        (Some(Handled::Other), _) | (_, Some(Handled::Other)) => Some(Handled::Other),
        (a, None) => a,
        (None, b) => b,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use engine_core::ResponseHead;

    fn piece(id: u64, text: &str) -> Completion {
        Completion {
            id: RequestId(id),
            part: Part::Chunk(Bytes::copy_from_slice(text.as_bytes())),
        }
    }

    fn shape(batch: &[Completion]) -> Vec<String> {
        batch
            .iter()
            .map(|c| match &c.part {
                Part::Head(h) => format!("{} head {}", c.id.0, h.status),
                Part::Chunk(b) => format!("{} {}", c.id.0, String::from_utf8_lossy(b)),
                Part::End => format!("{} end", c.id.0),
                Part::Failed(_) => format!("{} failed", c.id.0),
            })
            .collect()
    }

    /// Only consecutive small pieces of one request are joined: a head, an end, another
    /// request's piece or a large piece ends the run, and the order stays as it came.
    #[test]
    fn a_batch_joins_runs_of_small_pieces_of_one_request() {
        let large = "L".repeat(SMALL_PIECE);
        let head = Completion {
            id: RequestId(2),
            part: Part::Head(ResponseHead::new(200, None)),
        };
        let mut queued = vec![
            piece(1, "b"),
            piece(1, "c"),
            head,
            piece(1, "d"),
            piece(2, "x"),
            piece(2, "y"),
            piece(1, "e"),
            piece(1, &large),
            piece(1, "f"),
            Completion {
                id: RequestId(1),
                part: Part::End,
            },
        ]
        .into_iter();
        let batch = batch(piece(1, "a"), || queued.next());
        assert_eq!(
            shape(&batch),
            [
                "1 abc".to_owned(),
                "2 head 200".to_owned(),
                "1 d".to_owned(),
                "2 xy".to_owned(),
                "1 e".to_owned(),
                format!("1 {large}"),
                "1 f".to_owned(),
                "1 end".to_owned(),
            ]
        );
    }

    /// A batch takes at most `COMPLETION_BATCH` completions; the rest stay queued.
    #[test]
    fn a_batch_takes_at_most_its_size() {
        let mut taken: u64 = 0;
        let batch = batch(piece(1, "a"), || {
            taken += 1;
            Some(piece(100 + taken, "z"))
        });
        assert_eq!(taken, COMPLETION_BATCH as u64 - 1);
        assert_eq!(batch.len(), COMPLETION_BATCH);
    }
}

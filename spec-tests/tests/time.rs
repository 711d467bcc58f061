#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! A core without a host clock (issue 12, point 4): the engine is driven on plain
//! [`engine_core::Time`] values from an origin the host chooses, no `std::time::Instant`
//! anywhere; timers come back as `Time`s; a trace counts from the engine's start, so runs at
//! different origins record the same trace, and its replay (which reads no clock) is the same
//! every time.

use std::collections::BTreeSet;
use std::time::Duration;

use engine_core::trace::replay;
use engine_core::{
    ApiCall, Command, Config, Engine, Input, Intent, Person, RequestId, ResponseHead, Secret, Time,
};
use serde_json::Value;
use spec_tests::BASE;
use spec_tests::fixtures::{
    AGENT, ENV, USER, answer, history, insights, record, runtime_ready, runtime_transient,
};
use spec_tests::turns::{is_resolve, is_send};

/// A host whose clock is a plain counter of microseconds.
struct Host {
    engine: Engine,
    now: Time,
    sent: Vec<(RequestId, ApiCall)>,
    open: BTreeSet<RequestId>,
}

impl Host {
    fn new(origin: Time, recording: bool) -> Host {
        let mut config = Config::new(BASE).unwrap().with_seed(3);
        config.start_unix_ms = 1_790_928_000_000;
        let engine = if recording {
            Engine::new_recording(config, origin)
        } else {
            Engine::new(config, origin)
        };
        let mut host = Host {
            engine,
            now: origin,
            sent: Vec::new(),
            open: BTreeSet::new(),
        };
        host.drain();
        host
    }

    fn drain(&mut self) {
        while let Some(intent) = self.engine.poll_intent() {
            match intent {
                Intent::Http { id, call, .. } => {
                    self.open.insert(id);
                    self.sent.push((id, call));
                }
                Intent::Abort { id } => {
                    self.open.remove(&id);
                }
                Intent::Storage(_) => {}
            }
        }
        while self.engine.poll_event().is_some() {}
    }

    fn wait(&mut self, ms: u64) {
        self.now += Duration::from_millis(ms);
    }

    fn input(&mut self, input: Input) {
        self.engine.handle_input(input, self.now);
        self.drain();
    }

    fn reply_bytes(&mut self, id: RequestId, content_type: &str, body: &[u8]) {
        let head = ResponseHead::new(200, Some(content_type.into()));
        self.engine.handle_response(id, head, self.now);
        self.engine
            .handle_body_chunk(id, bytes::Bytes::copy_from_slice(body), self.now);
        self.open.remove(&id);
        self.engine.handle_body_end(id, self.now);
        self.drain();
    }

    fn reply(&mut self, id: RequestId, body: &Value) {
        self.reply_bytes(id, "application/json", body.to_string().as_bytes());
    }

    fn pending(&self, pred: impl Fn(&ApiCall) -> bool) -> RequestId {
        self.sent
            .iter()
            .rev()
            .find(|(id, call)| self.open.contains(id) && pred(call))
            .map(|(id, _)| *id)
            .unwrap_or_else(|| panic!("no such open request; sent: {:?}", self.sent))
    }

    fn count(&self, pred: impl Fn(&ApiCall) -> bool) -> usize {
        self.sent.iter().filter(|(_, c)| pred(c)).count()
    }

    /// Session s-1 requested, loaded, its runtime first waking (an interval of 2.5 s), then
    /// ready once the timer fired; returns the time the timer was due.
    fn open_s1_through_a_wake(&mut self) -> Time {
        self.input(Input::Person(Person::new(
            USER,
            Secret::new("platform-token"),
        )));
        self.input(Input::EnvironmentUid(Some(ENV.into())));
        self.input(Input::RequestedSessionId(Some("s-1".into())));
        self.input(Input::IsVisible(true));
        self.wait(40);
        let detail = self.pending(|c| matches!(c, ApiCall::GetSessionDetail { .. }));
        self.reply(detail, &record("s-1", AGENT, ENV, 0));
        let hist = self.pending(|c| matches!(c, ApiCall::GetSessionHistory { .. }));
        self.reply(hist, &history("s-1"));
        self.wait(20);
        let resolve = self.pending(is_resolve);
        self.reply(resolve, &runtime_transient("waking", Some(2_500)));
        // RTA-9, OI-2: the next round is due 2.5 s after the answer, as a `Time`.
        let due = self.engine.poll_timeout().expect("a poll is scheduled");
        assert_eq!(due, self.now + Duration::from_millis(2_500));
        let resolves = self.count(is_resolve);
        // One microsecond early: nothing is due.
        self.now = Time::from_micros(due.as_micros() - 1);
        self.engine.handle_timeout(self.now);
        self.drain();
        assert_eq!(
            self.count(is_resolve),
            resolves,
            "not due a microsecond early"
        );
        self.now = due;
        self.engine.handle_timeout(self.now);
        self.drain();
        assert_eq!(
            self.count(is_resolve),
            resolves + 1,
            "the timer sent a poll"
        );
        self.wait(30);
        let resolve = self.pending(is_resolve);
        self.reply(resolve, &runtime_ready("s-1"));
        due
    }

    /// Sends "Hello" and streams the answer "Hi." back, answering what the engine asks on the way
    /// (the model catalog excepted).
    fn send_hello(&mut self) {
        self.wait(1_000);
        self.input(Input::Command(Command::SendMessage {
            text: "Hello".into(),
        }));
        for _ in 0..8 {
            self.wait(30);
            if let Some((id, _)) = self
                .sent
                .iter()
                .find(|(id, c)| self.open.contains(id) && is_send(c))
                .cloned()
            {
                self.reply_bytes(id, "text/event-stream", &answer("msg-1", "Hi."));
                return;
            }
            let open = self
                .sent
                .iter()
                .find(|(id, c)| self.open.contains(id) && !matches!(c, ApiCall::ListModelProviders))
                .cloned();
            if let Some((id, call)) = open {
                match call {
                    ApiCall::ResolveRuntimeAccess { .. } => self.reply(id, &runtime_ready("s-1")),
                    ApiCall::GetSessionInsights { .. } => self.reply(id, &insights("s-1")),
                    _ => self.reply_bytes(id, "application/json", b"{}"),
                }
            } else if let Some(t) = self.engine.poll_timeout() {
                self.now = self.now.max(t);
                self.engine.handle_timeout(self.now);
                self.drain();
            }
        }
        panic!("the message was never sent: {:?}", self.sent);
    }
}

/// An arbitrary origin: 5 s on the host's clock.
const ORIGIN: Time = Time::from_micros(5_000_000);

/// RTA-9, OI-2, SND-1: plain `Time` values from an arbitrary origin drive a timer (the waking
/// poll is due exactly 2.5 s after its answer, not a microsecond earlier) and a send whose
/// answer streams into the thread; `elapsed_ms` counts from the origin.
#[test]
fn plain_times_drive_a_timer_and_a_send() {
    let mut host = Host::new(ORIGIN, false);
    host.open_s1_through_a_wake();
    host.send_hello();
    let sends: Vec<_> = host.sent.iter().filter(|(_, c)| is_send(c)).collect();
    assert_eq!(sends.len(), 1, "one message request: {:?}", host.sent);
    let thread = serde_json::to_string(&host.engine.snapshot().thread).unwrap();
    assert!(
        thread.contains("Hello") && thread.contains("Hi."),
        "{thread}"
    );
    let elapsed = host.now.saturating_duration_since(ORIGIN).as_millis();
    assert_eq!(u128::from(host.engine.elapsed_ms()), elapsed);
}

/// INV-12: only differences of time matter. The same run at origin 0 and at 5 s issues the same
/// requests, gives the same snapshot and records the same trace (offsets from the engine's
/// start); replaying that trace, which reads no clock, gives the same timeline every time.
#[test]
fn inv_12_origin_free_runs_and_clockless_replay() {
    let run = |origin: Time| {
        let mut host = Host::new(origin, true);
        let due = host.open_s1_through_a_wake();
        host.send_hello();
        let calls: Vec<Value> = host
            .sent
            .iter()
            .map(|(_, c)| serde_json::to_value(c).unwrap())
            .collect();
        let snapshot = serde_json::to_value(host.engine.snapshot()).unwrap();
        let trace = host.engine.trace().unwrap().to_owned();
        (
            due.saturating_duration_since(origin),
            calls,
            snapshot,
            trace,
        )
    };
    let (due_a, calls_a, snap_a, trace_a) = run(Time::ZERO);
    let (due_b, calls_b, snap_b, trace_b) = run(ORIGIN);
    assert_eq!(due_a, due_b, "the timer lies as far from the start");
    assert_eq!(calls_a, calls_b);
    assert_eq!(snap_a, snap_b);
    assert_eq!(trace_a, trace_b, "a trace counts from the engine's start");
    // The waking poll's answer and the poll itself appear at their offsets.
    assert!(
        trace_b.contains(r#"{"at":2559.999,"timeout":{}}"#)
            && trace_b.contains(r#"{"at":2560,"timeout":{}}"#),
        "{trace_b}"
    );
    let first = replay(&trace_b).unwrap_or_else(|e| panic!("{e}\n{trace_b}"));
    let second = replay(&trace_b).unwrap();
    assert_eq!(first.timeline(), second.timeline());
    assert_eq!(
        serde_json::to_value(&first.snapshot).unwrap(),
        serde_json::to_value(&second.snapshot).unwrap()
    );
    assert_eq!(serde_json::to_value(&first.snapshot).unwrap(), snap_b);
}

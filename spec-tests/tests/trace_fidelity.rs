#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Trace fidelity: runs recorded with `Engine::new_recording` on a nanosecond clock, as a shell
//! records them, replay to the same intents, events and snapshot (INV-12), and a recorded trace
//! holds no credential.
//!
//! Each test pinned a bug found in review (now fixed).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use engine_core::trace::{EntryKind, replay};
use engine_core::{
    ApiCall, Command, Config, Engine, Input, InstantClock, Intent, Person, RequestId, ResponseHead,
    Secret, Time,
};
use serde_json::{Value, json};
use spec_tests::BASE;
use spec_tests::fixtures::{
    AGENT, ENV, RUNTIME_TOKEN, USER, answer, history, record, runtime_ready,
};

/// An engine recording itself (`Engine::new_recording`), driven on a clock with nanosecond
/// offsets the way a shell drives it with `Instant::now()`, converted by an [`InstantClock`].
struct Live {
    engine: Engine,
    start: Instant,
    clock: InstantClock,
    /// Nanoseconds since the start.
    now_ns: u64,
    intents: Vec<Value>,
    events: Vec<Value>,
    sent: Vec<(RequestId, ApiCall)>,
    open: BTreeSet<RequestId>,
}

impl Live {
    fn new() -> Live {
        let mut config = Config::new(BASE).unwrap().with_seed(5);
        config.start_unix_ms = 1_790_928_000_000;
        let start = Instant::now();
        let mut live = Live {
            engine: Engine::new_recording(config, InstantClock::new(start).time(start)),
            start,
            clock: InstantClock::new(start),
            now_ns: 0,
            intents: Vec::new(),
            events: Vec::new(),
            sent: Vec::new(),
            open: BTreeSet::new(),
        };
        live.drain();
        live
    }

    fn now(&self) -> Time {
        self.clock
            .time(self.start + Duration::from_nanos(self.now_ns))
    }

    fn wait_ns(&mut self, ns: u64) -> &mut Self {
        self.now_ns += ns;
        self
    }

    fn wait(&mut self, ms: u64) -> &mut Self {
        self.wait_ns(ms * 1_000_000)
    }

    fn drain(&mut self) {
        while let Some(intent) = self.engine.poll_intent() {
            match &intent {
                Intent::Http { id, call, .. } => {
                    self.open.insert(*id);
                    self.sent.push((*id, call.clone()));
                }
                Intent::Abort { id } => {
                    self.open.remove(id);
                }
                Intent::Storage(_) => {}
            }
            self.intents.push(serde_json::to_value(&intent).unwrap());
        }
        while let Some(event) = self.engine.poll_event() {
            self.events.push(serde_json::to_value(&event).unwrap());
        }
    }

    fn input(&mut self, input: Input) -> &mut Self {
        let now = self.now();
        self.engine.handle_input(input, now);
        self.drain();
        self
    }

    fn person(&mut self, token: &str) -> &mut Self {
        self.input(Input::Person(Person::new(USER, Secret::new(token))))
    }

    fn head(&mut self, id: RequestId, status: u16, content_type: &str) -> &mut Self {
        let now = self.now();
        let head = ResponseHead::new(status, Some(content_type.into()));
        self.engine.handle_response(id, head, now);
        self.drain();
        self
    }

    fn chunk(&mut self, id: RequestId, bytes: &[u8]) -> &mut Self {
        let now = self.now();
        self.engine
            .handle_body_chunk(id, bytes::Bytes::copy_from_slice(bytes), now);
        self.drain();
        self
    }

    fn end(&mut self, id: RequestId) -> &mut Self {
        let now = self.now();
        self.open.remove(&id);
        self.engine.handle_body_end(id, now);
        self.drain();
        self
    }

    fn reply_text(&mut self, id: RequestId, status: u16, body: &str) -> &mut Self {
        self.head(id, status, "application/json");
        self.chunk(id, body.as_bytes());
        self.end(id)
    }

    fn reply(&mut self, id: RequestId, status: u16, body: &Value) -> &mut Self {
        self.reply_text(id, status, &body.to_string())
    }

    fn open_matching(&self, pred: impl Fn(&ApiCall) -> bool) -> Option<RequestId> {
        self.sent
            .iter()
            .rev()
            .find(|(id, call)| self.open.contains(id) && pred(call))
            .map(|(id, _)| *id)
    }

    fn pending(&self, what: &str, pred: impl Fn(&ApiCall) -> bool) -> RequestId {
        self.open_matching(pred)
            .unwrap_or_else(|| panic!("no open {what} request; sent: {:?}", self.sent))
    }

    /// Person, Environment, requested session s-1, visible: the detail and history answered.
    fn open_s1(&mut self, token: &str) -> &mut Self {
        self.person(token)
            .input(Input::EnvironmentUid(Some(ENV.into())))
            .input(Input::RequestedSessionId(Some("s-1".into())))
            .input(Input::IsVisible(true));
        self.wait(40);
        let detail = self.pending("detail", is_detail);
        self.reply(detail, 200, &record("s-1", AGENT, ENV, 0));
        let hist = self.pending("history", is_history);
        self.reply(hist, 200, &history("s-1"))
    }

    fn trace(&self) -> String {
        self.engine.trace().expect("recording").to_owned()
    }

    /// Replays the recorded trace and checks it gives the same intents (in order), events and
    /// final snapshot as the live run.
    fn assert_replays_identically(&self) {
        let trace = self.trace();
        let report = replay(&trace).unwrap_or_else(|e| panic!("{e}\n{trace}"));
        let steps = report
            .entries
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::Start | EntryKind::Step));
        let mut intents = Vec::new();
        let mut events = Vec::new();
        for e in steps {
            intents.extend(e.intents.iter().map(|i| serde_json::to_value(i).unwrap()));
            events.extend(e.events.iter().map(|ev| serde_json::to_value(ev).unwrap()));
        }
        for (i, (got, want)) in intents.iter().zip(&self.intents).enumerate() {
            assert_eq!(got, want, "intent {i} differs\n{}", report.timeline());
        }
        assert_eq!(
            intents.len(),
            self.intents.len(),
            "intents differ in number\n{}",
            report.timeline()
        );
        assert_eq!(events, self.events, "events differ\n{}", report.timeline());
        assert_eq!(
            serde_json::to_value(&report.snapshot).unwrap(),
            serde_json::to_value(self.engine.snapshot()).unwrap(),
            "snapshots differ\n{}",
            report.timeline()
        );
    }
}

fn is_detail(c: &ApiCall) -> bool {
    matches!(c, ApiCall::GetSessionDetail { .. })
}
fn is_history(c: &ApiCall) -> bool {
    matches!(c, ApiCall::GetSessionHistory { .. })
}
fn is_resolve(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ResolveRuntimeAccess { .. })
}
fn is_confirm(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ConfirmAgent { .. })
}
fn is_insights(c: &ApiCall) -> bool {
    matches!(c, ApiCall::GetSessionInsights { .. })
}
fn is_send(c: &ApiCall) -> bool {
    matches!(c, ApiCall::SendMessage { .. })
}

/// INV-12: the host refreshes the person's platform token (same person, a new token). The live
/// engine reads the detail again for the new token; the trace writes both tokens as
/// `"[redacted]"`, so on replay the token "did not change" and no detail request is issued:
/// the replay issues different requests from the recorded run.
#[test]
fn inv_12_a_token_refresh_replays_identically() {
    let mut live = Live::new();
    live.open_s1("platform-token-1");
    live.wait(20);
    let rra = live.pending("resolve", is_resolve);
    live.reply(rra, 200, &runtime_ready("s-1"));
    live.wait(1_000);
    let before = live.sent.len();
    live.person("platform-token-2");
    assert!(
        live.sent[before..].iter().any(|(_, c)| is_detail(c)),
        "the live engine reads the detail again for a new token: {:?}",
        &live.sent[before..]
    );
    live.wait(30);
    let detail = live.pending("detail", is_detail);
    live.reply(detail, 200, &record("s-1", AGENT, ENV, 0));
    live.assert_replays_identically();
}

/// INV-12: the runtime-access answer carries a blank token. The live engine refuses the answer
/// (no usable token); the recorder writes `"token":"[redacted]"`, a usable token, so the replay
/// takes the session as ready and goes another way.
#[test]
fn inv_12_a_blank_runtime_token_replays_identically() {
    let mut live = Live::new();
    live.open_s1("platform-token");
    live.wait(20);
    let rra = live.pending("resolve", is_resolve);
    let mut body = runtime_ready("s-1");
    body["token"] = json!("   ");
    live.reply(rra, 200, &body);
    live.wait(100);
    live.assert_replays_identically();
}

/// INV-12: a shell's clock has nanoseconds, the engine's `Time` and the trace microseconds. A
/// runtime-access poll due at D (2 s after an answer that came 800 ns into a microsecond) is not
/// due for an input 300 ns before D: the shell's conversion moves both back to the microsecond,
/// as the trace does, so the replay sends no poll the recorded run never sent.
#[test]
fn inv_12_sub_microsecond_times_replay_identically() {
    let mut live = Live::new();
    live.open_s1("platform-token");
    // The answer arrives 800 ns into a microsecond.
    live.wait(20).wait_ns(800);
    let rra = live.pending("resolve", is_resolve);
    let mut waking = runtime_ready("s-1");
    waking["mode"] = json!("unavailable");
    waking["token"] = Value::Null;
    waking["rpc_url"] = Value::Null;
    waking["is_ready"] = json!(false);
    waking["runtime_interaction"] = json!({"state": "waking", "can_submit": false,
        "notice": null, "operation": null, "retry_after_ms": 2000});
    live.reply(rra, 200, &waking);
    let deadline = live.engine.poll_timeout().expect("a poll is scheduled");
    let due_ns = u64::try_from(
        live.clock
            .instant(deadline)
            .duration_since(live.start)
            .as_nanos(),
    )
    .unwrap();
    // The engine runs on whole microseconds, as its trace does.
    assert_eq!(due_ns % 1_000, 0, "the deadline lies on a microsecond");
    // 300 ns before the deadline, the host says something that changes nothing.
    live.now_ns = due_ns - 300;
    let before = live.sent.len();
    live.input(Input::IsVisible(true));
    assert_eq!(live.sent.len(), before, "not due yet in the live run");
    live.assert_replays_identically();
}

/// INV-12: a `viewContext` of JSON `null` is sent as `"context": null` with every turn; the
/// trace writes `{"input": "view_context", "value": null}`, which reads back as no context, so
/// the replayed message request has no `context` at all.
#[test]
fn inv_12_a_null_view_context_replays_identically() {
    let mut live = Live::new();
    live.input(Input::ViewContext(Some(Value::Null)));
    live.open_s1("platform-token");
    live.wait(20);
    let rra = live.pending("resolve", is_resolve);
    live.reply(rra, 200, &runtime_ready("s-1"));
    live.wait(50);
    if let Some(confirm) = live.open_matching(is_confirm) {
        live.head(confirm, 200, "application/json");
    }
    if let Some(ins) = live.open_matching(is_insights) {
        live.reply(
            ins,
            200,
            &json!({"agent_session_uid": "s-1", "has_insights": false}),
        );
    }
    live.wait(1_000);
    live.input(Input::Command(Command::SendMessage {
        text: "Hello".into(),
    }));
    let mut sent = false;
    for _ in 0..8 {
        live.wait(30);
        if let Some(post) = live.open_matching(is_send) {
            live.head(post, 200, "text/event-stream");
            live.chunk(post, &answer("msg-1", "Hi."));
            live.end(post);
            sent = true;
            break;
        }
        if let Some(id) = live.open_matching(is_confirm) {
            live.head(id, 200, "application/json");
        } else if let Some(id) = live.open_matching(is_resolve) {
            live.reply(id, 200, &runtime_ready("s-1"));
        } else if live.engine.poll_timeout().is_some() {
            let now = live.now();
            live.engine.handle_timeout(now);
            live.drain();
        }
    }
    assert!(sent, "the message went: {:?}", live.sent);
    let body = live
        .intents
        .iter()
        .find(|i| i["call"]["call"] == "send_message")
        .map(|i| i.to_string())
        .unwrap_or_default();
    // A null viewContext is no viewContext, live and replayed.
    assert!(!body.contains("context"), "live body: {body}");
    live.assert_replays_identically();
}

/// The runtime token is redacted only behind a literal `"token"` key. JSON lets the platform
/// spell the key with escapes (`"\u0074oken"`); the engine reads it as `token` and uses it,
/// and the recorder writes it out in the clear.
#[test]
fn a_runtime_token_behind_an_escaped_key_is_redacted() {
    let mut live = Live::new();
    live.open_s1("platform-token");
    live.wait(20);
    let rra = live.pending("resolve", is_resolve);
    let body = runtime_ready("s-1")
        .to_string()
        .replace("\"token\":", "\"\\u0074oken\":");
    assert!(body.contains(RUNTIME_TOKEN) && !body.contains("\"token\":"));
    live.reply_text(rra, 200, &body);
    live.wait(50);
    // The live engine took the token: it asks the runtime with it.
    assert!(
        live.sent.iter().any(|(_, c)| is_confirm(c)),
        "the engine used the runtime access: {:?}",
        live.sent
    );
    let trace = live.trace();
    assert!(
        !trace.contains(RUNTIME_TOKEN),
        "the runtime token is in the trace"
    );
}

/// A replay keeps, for every record, the full new value of every snapshot field that changed:
/// while an answer streams, each chunk changes `thread`, so each chunk's entry holds a copy of
/// the whole thread. One answer of 200 KB in 1,000 chunks (a 300 KB trace) keeps about 100 MB;
/// twice the chunks keep four times that (quadratic), and `agent-chat replay` holds them all.
#[test]
fn replay_memory_is_linear_in_the_trace() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces/default-session-to-first-answer.jsonl");
    let base = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = base
        .lines()
        .take_while(|l| !l.contains("\"at\": 2010"))
        .filter(|l| !l.starts_with("{\"expect\""))
        .map(str::to_owned)
        .collect();
    let start = "data: {\"messageId\":\"msg-1\",\"type\":\"start\"}\n\ndata: {\"id\":\"t-1\",\"type\":\"text-start\"}\n\n";
    lines.push(json!({"at": 2010, "chunk": {"id": 10, "text": start}}).to_string());
    let delta = "x".repeat(200);
    for i in 0..1_000_u64 {
        let event =
            format!("data: {{\"delta\":\"{delta}\",\"id\":\"t-1\",\"type\":\"text-delta\"}}\n\n");
        lines.push(json!({"at": 2011 + i, "chunk": {"id": 10, "text": event}}).to_string());
    }
    let trace = lines.join("\n");
    let report = replay(&trace).unwrap_or_else(|e| panic!("{e}"));
    let kept: usize = report
        .entries
        .iter()
        .flat_map(|e| &e.changes)
        .map(|(_, v)| v.to_string().len())
        .sum();
    assert!(
        kept < 20 * trace.len(),
        "the replay keeps {kept} bytes of snapshot values for a trace of {} bytes",
        trace.len()
    );
}

fn is_local(c: &ApiCall, route: &engine_core::api::local::LocalRoute) -> bool {
    matches!(c, ApiCall::Local { route: r } if r == route)
}

/// INV-12 with a local source (ADR 099, issue 14): the source, the stored selection, the
/// runtime's checks, a new conversation (its client id from the seeded generator), its first
/// turn and the runtime's id in `X-Agent-Session-Uid` replay to the same intents, events and
/// snapshot.
#[test]
fn inv_12_a_local_conversation_replays_identically() {
    use engine_core::api::local::LocalRoute;
    let mut live = Live::new();
    let source = engine_core::LocalSource::new("http://127.0.0.1:8787", "Ledger Helper").unwrap();
    live.input(Input::Source(Some(source)))
        .person("unused-platform-token")
        .input(Input::IsVisible(true))
        .input(Input::StoredSelectionLoaded {
            key: "ms.command-center-ai.local-session:http://127.0.0.1:8787".into(),
            session_uid: None,
        });
    for (route, body) in [
        (LocalRoute::Ready, json!({"ok": true})),
        (LocalRoute::Health, json!({"mode": "local"})),
        (LocalRoute::ChatCheck, json!({"status": "ready"})),
    ] {
        live.wait(3);
        let id = live.pending(route.operation_name(), |c| is_local(c, &route));
        live.reply(id, 200, &body);
    }
    live.wait(5);
    live.input(Input::Command(Command::CreateAgentSession));
    live.input(Input::Command(Command::SendMessage {
        text: "Hello".into(),
    }));
    let turn = live.pending("local turn", |c| {
        matches!(
            c,
            ApiCall::Local {
                route: LocalRoute::SendMessage { .. }
            }
        )
    });
    live.wait(7);
    let now = live.now();
    let head = ResponseHead::new(200, Some("text/event-stream".into()))
        .with_agent_session_uid(Some("local-9".into()));
    live.engine.handle_response(turn, head, now);
    live.drain();
    live.chunk(turn, &answer("m-1", "Hi.")).end(turn);
    assert_eq!(
        live.engine.snapshot().current_session_id.as_deref(),
        Some("local-9")
    );
    live.assert_replays_identically();
}

/// A transport's message can quote the request's headers (an HTTP library refusing a header
/// value does): the person's platform token is taken out of it before the engine keeps, shows
/// or records it (issue 15's review; secrets stay out of snapshots and traces).
#[test]
fn a_failure_message_quoting_the_token_is_redacted() {
    let mut live = Live::new();
    live.person("tok-0123456789");
    live.input(Input::EnvironmentUid(Some(ENV.into())))
        .input(Input::RequestedSessionId(Some("s-1".into())))
        .input(Input::IsVisible(true));
    live.wait(40);
    let detail = live.pending("detail", is_detail);
    let now = live.now();
    let failure =
        engine_core::TransportFailure::no_answer("Illegal header value b'Bearer tok-0123456789 '");
    live.engine.handle_failure(detail, failure, now);
    live.drain();
    let snapshot = serde_json::to_string(&live.engine.snapshot()).unwrap();
    assert!(snapshot.contains("Illegal header value"), "{snapshot}");
    assert!(!snapshot.contains("tok-0123456789"), "{snapshot}");
    assert!(!live.trace().contains("tok-0123456789"));
    assert!(
        live.events
            .iter()
            .all(|e| !e.to_string().contains("tok-0123456789"))
    );
}

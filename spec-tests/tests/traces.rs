#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Recorded traces (`TRACES.md`): every trace under `traces/` replays with its expectations met;
//! a wrong expectation or a malformed line fails with its line number; a run recorded with
//! `TraceRecorder` replays to the same intents, events and snapshots (INV-12) and contains no
//! credential.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use engine_core::trace::{EntryKind, ReplayError, TraceRecorder, replay};
use engine_core::{
    ApiCall, Command, Config, DefaultSession, Engine, FailureKind, Input, Intent, Person,
    RequestId, ResponseHead, Secret, Time, TransportFailure,
};
use serde_json::{Value, json};
use spec_tests::BASE;
use spec_tests::fixtures::{
    AGENT, ENV, ENV2, HANDLE, RUNTIME_TOKEN, USER, answer, catalog, handle_record, history,
    insights, model_required, page, record, runtime_ready, runtime_transient, with_model,
};

/// The platform token the recorded runs use.
const PLATFORM_TOKEN: &str = "platform-token-secret";

// ---------------------------------------------------------------------------------------------
// The traces under traces/
// ---------------------------------------------------------------------------------------------

fn traces_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("traces")
}

fn read_trace(name: &str) -> String {
    let path = traces_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Replays one trace file; fails with the file, the line and the difference.
fn replay_file(name: &str) -> engine_core::trace::ReplayReport {
    match replay(&read_trace(name)) {
        Ok(report) => report,
        Err(e) => panic!("traces/{name}:{}: {e}", e.line()),
    }
}

/// Every `*.jsonl` file under `traces/` replays with every expectation met.
#[test]
fn every_trace_under_traces_replays() {
    let mut names: Vec<String> = std::fs::read_dir(traces_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    names.sort();
    assert!(names.len() >= 5, "traces: {names:?}");
    let failures: Vec<String> = names
        .iter()
        .filter_map(|name| {
            replay(&read_trace(name))
                .err()
                .map(|e| format!("traces/{name}:{}: {e}", e.line()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for name in &names {
        let report = replay_file(name);
        assert!(report.expectations > 0, "{name} checks nothing");
    }
}

/// DEF-11, HYD-5, RTA-14, SND-3, SND-7: the default session opens, hydrates, its Agent is
/// confirmed, and the first message's answer streams in.
#[test]
fn trace_default_session_to_first_answer() {
    let report = replay_file("default-session-to-first-answer.jsonl");
    assert_eq!(report.snapshot.current_session_id.as_deref(), Some("s-def"));
    assert_eq!(report.snapshot.run_status, engine_core::RunStatus::Complete);
}

/// SND-9, SND-10: a send held through a wake goes exactly once.
#[test]
fn trace_waking_agent() {
    let report = replay_file("waking-agent.jsonl");
    let posts = report
        .entries
        .iter()
        .flat_map(|e| &e.intents)
        .filter(|i| {
            matches!(
                i,
                Intent::Http {
                    call: ApiCall::SendMessage { .. },
                    ..
                }
            )
        })
        .count();
    assert_eq!(posts, 1);
}

/// REQ-5, REQ-6: an unloadable requested session gives way to the newest, with the notice.
#[test]
fn trace_requested_session_unavailable() {
    let report = replay_file("requested-session-unavailable.jsonl");
    assert_eq!(report.snapshot.current_session_id.as_deref(), Some("s-1"));
    assert!(report.snapshot.session_notice.is_some());
}

/// MOD-4, MOD-10, MOD-12: model required, then chosen; the default session opens with it.
#[test]
fn trace_model_required_then_chosen() {
    let report = replay_file("model-required-then-chosen.jsonl");
    assert_eq!(report.snapshot.current_session_id.as_deref(), Some("s-def"));
    assert_eq!(report.snapshot.session_model_selection_request, None);
}

/// ENV-4, INV-10: an Environment change aborts the open get-or-create; its late answer changes
/// nothing.
#[test]
fn trace_environment_switch_mid_open() {
    let report = replay_file("environment-switch-mid-open.jsonl");
    assert_eq!(report.snapshot.environment_uid.as_deref(), Some(ENV2));
}

/// Issue 24, point 6, RU-1, RU-4: a turn recorded by `agent-chat --record` against
/// `platform-sim`'s Agent speaking the runtime's dialect (`tool-call-*`, `textDelta`, no `start`)
/// replays: the answer holds the lifecycle data, the reasoning, the tool call with its
/// arguments and result, and the text; the run completed.
#[test]
fn trace_runtime_dialect_answer() {
    let trace = read_trace("runtime-dialect-answer.jsonl");
    assert!(trace.contains(r#"\"type\":\"tool-call-start\""#));
    assert!(trace.contains(r#"\"textDelta\""#));
    assert!(!trace.contains(r#"\"type\":\"start\""#));
    let report = replay_file("runtime-dialect-answer.jsonl");
    assert_eq!(report.snapshot.run_status, engine_core::RunStatus::Complete);
    let answer = report.snapshot.thread.last().unwrap();
    let Some(engine_core::message::Part::Tool(tool)) = answer
        .parts
        .iter()
        .find(|p| matches!(p, engine_core::message::Part::Tool(_)))
    else {
        panic!("no tool part: {answer:?}");
    };
    assert_eq!(tool.tool_name, "count_words");
    assert_eq!(tool.state, engine_core::message::ToolState::OutputAvailable);
    let text: String = answer
        .parts
        .iter()
        .filter_map(|p| match p {
            engine_core::message::Part::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "You said: What is in the notes?");
}

/// The complete example in `TRACES.md` is `traces/requested-session-unavailable.jsonl`, verbatim.
#[test]
fn traces_md_example_is_a_trace_of_the_suite() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("TRACES.md")).unwrap();
    let start = doc.find("```jsonl\n").expect("a jsonl block") + "```jsonl\n".len();
    let len = doc[start..].find("```").unwrap();
    let example = &doc[start..start + len];
    assert_eq!(example, read_trace("requested-session-unavailable.jsonl"));
    assert_eq!(replay(example).unwrap().expectations, 4);
}

// ---------------------------------------------------------------------------------------------
// Failures name their line
// ---------------------------------------------------------------------------------------------

/// The 1-based number of the first line of `trace` containing `needle`.
fn line_of(trace: &str, needle: &str) -> usize {
    trace
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line contains {needle:?}"))
        + 1
}

#[test]
fn a_wrong_snapshot_expectation_fails_with_its_line_and_the_difference() {
    let trace = read_trace("requested-session-unavailable.jsonl");
    let good = r#""currentSessionId": "s-1""#;
    assert!(
        trace.contains(good),
        "the trace expects currentSessionId s-1"
    );
    let line = line_of(&trace, good);
    let broken = trace.replacen(good, r#""currentSessionId": "s-9""#, 1);
    let err = replay(&broken).unwrap_err();
    assert_eq!(err.line(), line);
    match &err {
        ReplayError::Expectation {
            what,
            expected,
            actual,
            ..
        } => {
            assert_eq!(what, "snapshot.currentSessionId");
            assert_eq!(expected, r#""s-9""#);
            assert_eq!(actual, r#""s-1""#);
        }
        other => panic!("not an expectation failure: {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("line {line}: expectation failed")),
        "{message}"
    );
    assert!(
        message.contains(r#"expected "s-9", got "s-1""#),
        "{message}"
    );
}

#[test]
fn a_wrong_intent_expectation_names_the_intent_and_field() {
    let trace = format!(
        "{}\n{}\n{}\n{}\n",
        r#"{"trace":"agent-chat-engine","version":1,"config":{"platformBaseUrl":"https://platform.test","seed":1}}"#,
        r#"{"at":0,"input":{"input":"environment_uid","value":"env-1"}}"#,
        r#"{"at":0,"input":{"input":"requested_session_id","value":"s-1"}}"#,
        r#"{"at":0,"input":{"input":"is_visible","value":true}}"#,
    );
    let ok = format!(
        "{trace}{}\n",
        r#"{"expect":{"intents":[{"method":"GET","path":"/api/v1/agent-sessions/"},{"method":"GET","path":"/api/v1/agent-sessions/s-1/","query":{"organization_environment_uid":"env-1"}},{"method":"GET","path":"/api/v1/agent-sessions/s-1/history/"},{"method":"POST","path":"/api/v1/agent-sessions/s-1/resolve-runtime-access/","body":{}}]}}"#
    );
    replay(&ok).unwrap();
    // The second intent's path differs.
    let wrong_path = ok.replace("s-1/history/", "s-1/insights/");
    let err = replay(&wrong_path).unwrap_err();
    assert_eq!(err.line(), 5);
    let message = err.to_string();
    assert!(message.contains("intent 3 of 4: path"), "{message}");
    assert!(
        message.contains(r#"expected "/api/v1/agent-sessions/s-1/insights/", got "/api/v1/agent-sessions/s-1/history/""#),
        "{message}"
    );
    // A query value differs.
    let wrong_query = ok.replace(
        r#""query":{"organization_environment_uid":"env-1"}"#,
        r#""query":{"organization_environment_uid":"env-2"}"#,
    );
    let message = replay(&wrong_query).unwrap_err().to_string();
    assert!(
        message.contains(
            r#"intent 2 of 4: query.organization_environment_uid: expected "env-2", got "env-1""#
        ),
        "{message}"
    );
    // One intent missing: both lists are shown.
    let missing = ok.replace(
        r#",{"method":"GET","path":"/api/v1/agent-sessions/s-1/history/"}"#,
        "",
    );
    let message = replay(&missing).unwrap_err().to_string();
    assert!(
        message.contains("line 5: expectation failed: intents (3 expected, 4 emitted)"),
        "{message}"
    );
    assert!(
        message.contains(r#""call":"get_session_history""#),
        "{message}"
    );
    // noIntents where there were some.
    let none = format!("{trace}{}\n", r#"{"expect":{"noIntents":true}}"#);
    let message = replay(&none).unwrap_err().to_string();
    assert!(
        message.starts_with("line 5: expectation failed: noIntents"),
        "{message}"
    );
}

#[test]
fn a_wrong_event_expectation_fails_with_its_line() {
    let trace = read_trace("default-session-to-first-answer.jsonl");
    let good = r#""delta.messageId": "msg-1""#;
    let line = line_of(&trace, good);
    let broken = trace.replacen(good, r#""delta.messageId": "msg-2""#, 1);
    let err = replay(&broken).unwrap_err();
    assert_eq!(err.line(), line, "{err}");
    let message = err.to_string();
    assert!(
        message.contains("expectation failed: event 1 of 1: delta.messageId"),
        "{message}"
    );
    assert!(
        message.contains(r#"expected "msg-2", got "msg-1""#),
        "{message}"
    );
    // One event too many expected (after a later input: a new checkpoint).
    let extra = format!(
        "{trace}{}\n{}\n",
        r#"{"at": 99999, "timeout": {}}"#, r#"{"expect": {"events": [{"event": "notify"}]}}"#
    );
    let err = replay(&extra).unwrap_err();
    assert_eq!(err.line(), trace.lines().count() + 2);
    assert!(
        err.to_string().contains("events (1 expected, 0 emitted)"),
        "{err}"
    );
}

#[test]
fn a_malformed_line_fails_with_its_line_number() {
    let trace = read_trace("waking-agent.jsonl");
    let lines: Vec<&str> = trace.lines().collect();
    let at = 4;
    // Cut a record in half.
    let mut cut: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    cut[at - 1] = cut[at - 1][..cut[at - 1].len() / 2].to_owned();
    let err = replay(&cut.join("\n")).unwrap_err();
    assert!(
        matches!(err, ReplayError::Malformed { line: 4, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().starts_with("line 4: malformed record: "),
        "{err}"
    );
    // A field of the wrong type: serde's message.
    let mut typed = lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    typed[at - 1] = r#"{"at":"soon","timeout":{}}"#.to_owned();
    let err = replay(&typed.join("\n")).unwrap_err();
    assert_eq!(err.line(), 4);
    assert!(
        err.to_string().contains("at: invalid type: string"),
        "{err}"
    );
    // An unknown record kind.
    let mut unknown = lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    unknown[at - 1] = r#"{"at":0,"wait":{}}"#.to_owned();
    let err = replay(&unknown.join("\n")).unwrap_err();
    assert!(
        matches!(&err, ReplayError::UnknownKind { line: 4, kind } if kind == "wait"),
        "{err:?}"
    );
    // No header; another version.
    let err = replay(&lines[1..].join("\n")).unwrap_err();
    assert!(
        matches!(err, ReplayError::Header { line: 1, .. }),
        "{err:?}"
    );
    let v2 = trace.replacen(r#""version": 1"#, r#""version": 2"#, 1);
    let err = replay(&v2).unwrap_err();
    assert!(
        err.to_string().contains("unsupported trace version 2"),
        "{err}"
    );
    // A request the engine never issued.
    let stray = format!("{trace}{}\n", r#"{"at":999999,"end":{"id":999}}"#);
    let err = replay(&stray).unwrap_err();
    assert!(
        matches!(err, ReplayError::UnknownRequest { id: 999, .. }),
        "{err:?}"
    );
    assert_eq!(err.line(), trace.lines().count() + 1);
}

// ---------------------------------------------------------------------------------------------
// Recording: a driver that feeds an engine and a recorder the same calls
// ---------------------------------------------------------------------------------------------

/// What one call made the engine do, in comparable form.
#[derive(Debug, Clone, PartialEq)]
struct Observed {
    intents: Vec<Value>,
    events: Vec<Value>,
    changes: Vec<(String, Value)>,
}

/// An engine driven on a virtual clock, recorded by a `TraceRecorder` as a shell would.
struct Recording {
    engine: Engine,
    recorder: TraceRecorder,
    epoch: Time,
    now_ms: u64,
    last: Value,
    observed: Vec<Observed>,
    sent: Vec<(RequestId, ApiCall)>,
    open: BTreeSet<RequestId>,
}

impl Recording {
    fn new(seed: u64) -> Recording {
        let mut config = Config::new(BASE).unwrap().with_seed(seed);
        config.start_unix_ms = 1_790_928_000_000;
        let epoch = Time::from_millis(42_000); // any origin
        let engine = Engine::new(config.clone(), epoch);
        let recorder = TraceRecorder::new(&config, epoch);
        let last = serde_json::to_value(engine.snapshot()).unwrap();
        let mut r = Recording {
            engine,
            recorder,
            epoch,
            now_ms: 0,
            last,
            observed: Vec::new(),
            sent: Vec::new(),
            open: BTreeSet::new(),
        };
        r.drain();
        r
    }

    fn now(&self) -> Time {
        self.epoch + Duration::from_millis(self.now_ms)
    }

    fn wait(&mut self, ms: u64) -> &mut Self {
        self.now_ms += ms;
        self
    }

    fn note(&mut self, text: &str) -> &mut Self {
        self.recorder.note(text);
        self
    }

    /// Drains the engine as a shell does: every intent goes to the recorder too.
    fn drain(&mut self) {
        let mut intents = Vec::new();
        while let Some(intent) = self.engine.poll_intent() {
            self.recorder.intent(&intent);
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
            intents.push(serde_json::to_value(&intent).unwrap());
        }
        let mut events = Vec::new();
        while let Some(event) = self.engine.poll_event() {
            events.push(serde_json::to_value(&event).unwrap());
        }
        let now = serde_json::to_value(self.engine.snapshot()).unwrap();
        let changes = now
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, v)| self.last.get(k.as_str()) != Some(*v))
            .map(|(k, v)| (k.clone(), timeline_value(k, v)))
            .collect();
        self.last = now;
        self.observed.push(Observed {
            intents,
            events,
            changes,
        });
    }

    fn input(&mut self, input: Input) -> &mut Self {
        let now = self.now();
        self.recorder.input(&input, now);
        self.engine.handle_input(input, now);
        self.drain();
        self
    }

    fn command(&mut self, command: Command) -> &mut Self {
        self.input(Input::Command(command))
    }

    fn head(&mut self, id: RequestId, status: u16, content_type: Option<&str>) -> &mut Self {
        let head = ResponseHead::new(status, content_type.map(str::to_owned));
        let now = self.now();
        self.recorder.head(id, &head, now);
        self.engine.handle_response(id, head, now);
        self.drain();
        self
    }

    fn chunk(&mut self, id: RequestId, bytes: &[u8]) -> &mut Self {
        let now = self.now();
        self.recorder.chunk(id, bytes, now);
        self.engine
            .handle_body_chunk(id, bytes::Bytes::copy_from_slice(bytes), now);
        self.drain();
        self
    }

    fn end(&mut self, id: RequestId) -> &mut Self {
        let now = self.now();
        self.open.remove(&id);
        self.recorder.end(id, now);
        self.engine.handle_body_end(id, now);
        self.drain();
        self
    }

    fn fail(&mut self, id: RequestId, kind: FailureKind) -> &mut Self {
        let failure = TransportFailure::new(kind, "connection reset");
        let now = self.now();
        self.open.remove(&id);
        self.recorder.failure(id, &failure, now);
        self.engine.handle_failure(id, failure, now);
        self.drain();
        self
    }

    /// A JSON answer: head, the body in pieces of `piece` bytes (whole when `None`), end.
    fn reply_in(
        &mut self,
        id: RequestId,
        status: u16,
        body: &Value,
        piece: Option<usize>,
    ) -> &mut Self {
        let bytes = body.to_string().into_bytes();
        self.head(id, status, Some("application/json"));
        for part in bytes.chunks(piece.unwrap_or(bytes.len()).max(1)) {
            self.chunk(id, part);
        }
        self.end(id)
    }

    fn reply(&mut self, id: RequestId, status: u16, body: &Value) -> &mut Self {
        self.reply_in(id, status, body, None)
    }

    /// Moves the clock to the engine's next deadline and fires it.
    fn timeout(&mut self) -> &mut Self {
        let deadline = self.engine.poll_timeout().expect("a timer runs");
        let ms = deadline
            .saturating_duration_since(self.epoch)
            .as_micros()
            .div_ceil(1000);
        self.now_ms = self.now_ms.max(u64::try_from(ms).unwrap());
        let now = self.now();
        self.recorder.timeout(now);
        self.engine.handle_timeout(now);
        self.drain();
        self
    }

    /// The newest open request matching `pred`, if any.
    fn open_matching(&self, pred: impl Fn(&ApiCall) -> bool) -> Option<RequestId> {
        self.sent
            .iter()
            .rev()
            .find(|(id, call)| self.open.contains(id) && pred(call))
            .map(|(id, _)| *id)
    }

    /// Fires timers until a request matching `pred` is open.
    fn until_open(&mut self, pred: impl Fn(&ApiCall) -> bool) -> &mut Self {
        for _ in 0..20 {
            if self.open_matching(&pred).is_some() {
                return self;
            }
            self.timeout();
        }
        panic!("no matching request after 20 timers; sent: {:?}", self.sent);
    }

    /// The newest open request matching `pred`.
    fn pending(&self, what: &str, pred: impl Fn(&ApiCall) -> bool) -> RequestId {
        self.sent
            .iter()
            .rev()
            .find(|(id, call)| self.open.contains(id) && pred(call))
            .map(|(id, _)| *id)
            .unwrap_or_else(|| panic!("no open {what} request; sent: {:?}", self.sent))
    }

    fn person(&mut self) -> &mut Self {
        self.input(Input::Person(Person::new(
            USER,
            Secret::new(PLATFORM_TOKEN),
        )))
    }

    fn text(&mut self) -> String {
        self.recorder.take()
    }
}

fn is_list(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ListSessions { .. })
}
fn is_catalog(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ListModelProviders)
}
fn is_get_or_create(c: &ApiCall) -> bool {
    matches!(c, ApiCall::GetOrCreateSession { .. })
}
fn is_detail(c: &ApiCall) -> bool {
    matches!(c, ApiCall::GetSessionDetail { .. })
}
fn is_history(c: &ApiCall) -> bool {
    matches!(c, ApiCall::GetSessionHistory { .. })
}
fn is_insights(c: &ApiCall) -> bool {
    matches!(c, ApiCall::GetSessionInsights { .. })
}
fn is_resolve(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ResolveRuntimeAccess { .. })
}
fn is_confirm(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ConfirmAgent { .. })
}
fn is_send(c: &ApiCall) -> bool {
    matches!(c, ApiCall::SendMessage { .. })
}

fn default_session() -> Input {
    Input::DefaultSession(Some(DefaultSession {
        agent_uid: Some(AGENT.into()),
        handle_unique_id: HANDLE.into(),
        name: "Ledger chat".into(),
        status: Default::default(),
        unavailable_message: None,
    }))
}

/// The default session opens, hydrates, is confirmed, and a first message is answered; the
/// runtime-access answer arrives in small pieces (the token split across them).
fn flow_default_session_to_first_answer(r: &mut Recording) {
    r.note("The chat opens on the default session of agent-1 (handle ledger_default).");
    r.person()
        .input(Input::EnvironmentUid(Some(ENV.into())))
        .input(Input::IsVisible(true))
        .input(default_session())
        .input(Input::ShowsDefaultSession(true));
    r.wait(40);
    let list = r.pending("list", is_list);
    r.reply(list, 200, &page(&[]));
    let cat = r.pending("catalog", is_catalog);
    r.reply(cat, 200, &catalog());
    r.wait(80);
    let goc = r.pending("get-or-create", is_get_or_create);
    r.reply(goc, 200, &handle_record("s-def", AGENT, ENV, HANDLE, 1));
    r.wait(30);
    let detail = r.pending("detail", is_detail);
    r.reply(detail, 200, &handle_record("s-def", AGENT, ENV, HANDLE, 1));
    let hist = r.pending("history", is_history);
    r.reply(hist, 200, &history("s-def"));
    r.wait(20);
    let rra = r.pending("resolve", is_resolve);
    r.reply_in(rra, 200, &runtime_ready("s-def"), Some(7));
    r.wait(60);
    let confirm = r.pending("confirm", is_confirm);
    r.head(confirm, 200, Some("application/json"));
    let ins = r.pending("insights", is_insights);
    r.reply(ins, 200, &insights("s-def"));
    r.wait(1_500);
    r.note("The person writes; access is resolved again, the confirmation is remembered.");
    r.command(Command::SendMessage {
        text: "How did Q3 go?".into(),
    });
    r.wait(30);
    let rra = r.pending("resolve", is_resolve);
    r.reply(rra, 200, &runtime_ready("s-def"));
    r.wait(200);
    let post = r.pending("send", is_send);
    r.head(post, 200, Some("text/event-stream"));
    let body = answer("msg-1", "Q3 revenue rose 4%.");
    let (a, b) = body.split_at(70);
    r.wait(50).chunk(post, a);
    r.wait(50).chunk(post, b);
    r.end(post);
}

/// A talking session (requested s-1, hydrated, confirmed) whose Agent went idle: the send is
/// held through the wake and goes once when the Agent is back.
fn flow_waking_agent(r: &mut Recording) {
    r.person()
        .input(Input::EnvironmentUid(Some(ENV.into())))
        .input(Input::RequestedSessionId(Some("s-1".into())))
        .input(Input::IsVisible(true));
    r.wait(40);
    let detail = r.pending("detail", is_detail);
    r.reply(detail, 200, &record("s-1", AGENT, ENV, 0));
    let hist = r.pending("history", is_history);
    r.reply(hist, 200, &history("s-1"));
    let rra = r.pending("resolve", is_resolve);
    r.reply(rra, 200, &runtime_ready("s-1"));
    r.wait(50);
    let confirm = r.pending("confirm", is_confirm);
    r.head(confirm, 200, Some("application/json"));
    r.wait(20_000);
    r.command(Command::SendMessage {
        text: "Hello".into(),
    });
    r.wait(30);
    let rra = r.pending("resolve", is_resolve);
    r.reply(rra, 200, &runtime_transient("waking", Some(2_000)));
    // The engine polls: the first poll gets no answer, the second is still waking.
    r.until_open(is_resolve);
    let rra = r.pending("resolve", is_resolve);
    r.fail(rra, FailureKind::NoAnswer);
    r.until_open(is_resolve);
    r.wait(30);
    let rra = r.pending("resolve", is_resolve);
    r.reply(rra, 200, &runtime_transient("waking", Some(2_000)));
    r.until_open(is_resolve);
    r.wait(30);
    let rra = r.pending("resolve", is_resolve);
    r.reply(rra, 200, &runtime_ready("s-1"));
    r.wait(40);
    // Confirmations and resolves are answered until the held message goes.
    for _ in 0..8 {
        if let Some(id) = r.open_matching(is_send) {
            r.head(id, 200, Some("text/event-stream"));
            r.wait(40).chunk(id, &answer("msg-w", "Hello again."));
            r.end(id);
            return;
        }
        if let Some(id) = r.open_matching(is_confirm) {
            r.head(id, 200, Some("application/json"));
        } else if let Some(id) = r.open_matching(is_resolve) {
            r.reply(id, 200, &runtime_ready("s-1"));
        } else {
            r.timeout();
        }
        r.wait(30);
    }
    panic!("the held message never went");
}

/// The requested session is not found: the notice, and the newest session instead.
fn flow_requested_session_unavailable(r: &mut Recording) {
    r.person()
        .input(Input::EnvironmentUid(Some(ENV.into())))
        .input(Input::IsVisible(true));
    r.wait(40);
    let list = r.pending("list", is_list);
    r.reply(list, 200, &page(&[record("s-1", AGENT, ENV, 40)]));
    r.wait(100);
    r.input(Input::RequestedSessionId(Some("s-9".into())));
    r.wait(40);
    let detail = r.pending("detail", is_detail);
    r.reply(detail, 404, &json!({"detail": "No AgentSession matches."}));
}

/// Get-or-create is refused for want of a model; the person chooses one; the retry carries it.
fn flow_model_required_then_chosen(r: &mut Recording) {
    r.person()
        .input(Input::EnvironmentUid(Some(ENV.into())))
        .input(Input::IsVisible(true))
        .input(default_session())
        .input(Input::ShowsDefaultSession(true));
    r.wait(40);
    let list = r.pending("list", is_list);
    r.reply(list, 200, &page(&[]));
    let cat = r.pending("catalog", is_catalog);
    r.reply(cat, 200, &catalog());
    let goc = r.pending("get-or-create", is_get_or_create);
    r.reply(goc, 400, &model_required());
    r.wait(3_000);
    r.command(Command::ResolveSessionModelSelection {
        choice: engine_core::api::ModelChoice {
            provider: "team-models".into(),
            model: "tm-1".into(),
            thinking: Some("high".into()),
        },
    });
    r.wait(60);
    let goc = r.pending("get-or-create", is_get_or_create);
    let created = with_model(
        handle_record("s-def", AGENT, ENV, HANDLE, 1),
        "team-models",
        "tm-1",
        Some("high"),
    );
    r.reply(goc, 200, &created);
}

/// The Environment changes while get-or-create runs: it is aborted and its late answer applies
/// nothing; the new Environment's default session opens.
fn flow_environment_switch_mid_open(r: &mut Recording) {
    r.person()
        .input(Input::EnvironmentUid(Some(ENV.into())))
        .input(Input::IsVisible(true))
        .input(default_session())
        .input(Input::ShowsDefaultSession(true));
    r.wait(40);
    let cat = r.pending("catalog", is_catalog);
    r.reply(cat, 200, &catalog());
    let old = r.pending("get-or-create", is_get_or_create);
    r.wait(20);
    r.input(Input::EnvironmentUid(Some(ENV2.into())));
    r.wait(30);
    r.reply(old, 200, &handle_record("s-def", AGENT, ENV, HANDLE, 1));
    r.wait(30);
    let new = r.pending("get-or-create", is_get_or_create);
    r.reply(new, 200, &handle_record("s-def-2", AGENT, ENV2, HANDLE, 2));
}

type Flow = fn(&mut Recording);

const FLOWS: [(&str, Flow); 5] = [
    (
        "default-session-to-first-answer",
        flow_default_session_to_first_answer,
    ),
    ("waking-agent", flow_waking_agent),
    (
        "requested-session-unavailable",
        flow_requested_session_unavailable,
    ),
    (
        "model-required-then-chosen",
        flow_model_required_then_chosen,
    ),
    (
        "environment-switch-mid-open",
        flow_environment_switch_mid_open,
    ),
];

/// INV-12: a recorded run replays to identical intents, events and snapshot changes, record by
/// record, and to the same final snapshot.
#[test]
fn inv_12_a_recorded_run_replays_identically() {
    for (name, flow) in FLOWS {
        let mut r = Recording::new(7);
        flow(&mut r);
        let trace = r.text();
        let report = replay(&trace).unwrap_or_else(|e| panic!("{name}: {e}"));
        let replayed: Vec<Observed> = report
            .entries
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::Start | EntryKind::Step))
            .map(|e| Observed {
                intents: e
                    .intents
                    .iter()
                    .map(|i| serde_json::to_value(i).unwrap())
                    .collect(),
                events: e
                    .events
                    .iter()
                    .map(|ev| serde_json::to_value(ev).unwrap())
                    .collect(),
                changes: e.changes.clone(),
            })
            .collect();
        assert_eq!(replayed.len(), r.observed.len(), "{name}");
        for (i, (got, want)) in replayed.iter().zip(&r.observed).enumerate() {
            assert_eq!(got, want, "{name}: step {i} differs\n{}", report.timeline());
        }
        assert_eq!(
            serde_json::to_value(&report.snapshot).unwrap(),
            serde_json::to_value(r.engine.snapshot()).unwrap(),
            "{name}"
        );
        // The timeline shows every record and what followed.
        let timeline = report.timeline();
        assert!(
            timeline.contains("-> #1 GET https://platform.test/api/v1/"),
            "{timeline}"
        );
        // Replaying the same trace twice gives the same report.
        let again = replay(&trace).unwrap();
        assert_eq!(again.entries, report.entries, "{name}");
    }
}

/// A recorded trace holds neither the platform token nor the runtime token, not even split
/// across chunks; the runtime-access answers read `"token":"[redacted]"` once reassembled.
#[test]
fn a_recorded_trace_contains_no_token() {
    for (name, flow) in FLOWS {
        let mut r = Recording::new(3);
        flow(&mut r);
        let trace = r.text();
        for secret in [PLATFORM_TOKEN, RUNTIME_TOKEN, "Bearer "] {
            assert!(!trace.contains(secret), "{name} contains {secret:?}");
        }
        // The person's token, numbered (a refresh would be `[redacted-2]`).
        assert!(trace.contains(r#""token":"[redacted-1]""#), "{name}");
    }
    // The default-session flow splits its runtime-access answer into 7-byte pieces: reassembled,
    // the body names the token field with the placeholder, and no piece holds a part of it.
    let mut r = Recording::new(3);
    flow_default_session_to_first_answer(&mut r);
    let trace = r.text();
    let rra = r.sent.iter().find(|(_, c)| is_resolve(c)).unwrap().0;
    let mut body = String::new();
    for line in trace.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["chunk"]["id"] == json!(rra.0) {
            body.push_str(v["chunk"]["text"].as_str().unwrap());
        }
    }
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["token"], "[redacted]");
    assert_eq!(body["rpc_url"], "https://rt.test/agents/s-def");
    for piece in ["rt-tok", "token-s", "-secret"] {
        assert!(!trace.contains(piece), "{piece}");
    }
}

/// The timeline keeps the thread and the session list as their ids.
fn timeline_value(key: &str, value: &Value) -> Value {
    match (key, value) {
        ("thread" | "agentSessions", Value::Array(items)) => Value::Array(
            items
                .iter()
                .map(|i| {
                    i.get("id")
                        .or_else(|| i.get("uid"))
                        .cloned()
                        .unwrap_or(Value::Null)
                })
                .collect(),
        ),
        _ => value.clone(),
    }
}

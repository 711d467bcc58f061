#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Both shells against `platform-sim` on loopback: the same scenarios, the same expectations.
//! The rules themselves are checked on a virtual clock elsewhere; here the bytes really travel.

use std::time::Duration;

use engine_core::{
    Command, Config, DefaultSession, Event, Input, Person, ReadinessStatus, RunStatus, Secret,
    Snapshot, SourceStatus,
};
use platform_sim::{AgentSpec, AnswerStyle, Fault, FaultKind, RuntimeBehaviour, SimConfig};
use spec_tests::turns::streamed_text;

const WAIT: Duration = Duration::from_secs(20);

/// What the suite needs from a shell.
trait ShellUnderTest: Sized {
    fn start_with(base: &str, record: bool) -> Self;
    /// The recorded trace.
    fn trace(&self) -> Option<String>;
    fn snapshot(&self) -> Snapshot;
    fn input(&self, input: Input);
    fn command(&self, command: Command);
    fn wait_for(&self, pred: &dyn Fn(&Snapshot) -> bool) -> Snapshot;
    /// The events received so far.
    fn events(&mut self) -> Vec<Event>;
    fn stop(self);
}

struct Tokio {
    rt: tokio::runtime::Runtime,
    handle: engine_io_tokio::Handle,
    events: tokio::sync::broadcast::Receiver<Event>,
    seen: Vec<Event>,
}

impl ShellUnderTest for Tokio {
    fn start_with(base: &str, record: bool) -> Tokio {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let mut config = engine_io_tokio::ShellConfig::new(Config::new(base).unwrap());
        config.record_trace = record;
        let (handle, events) = rt.block_on(async {
            let (handle, _task) = engine_io_tokio::spawn(config);
            let events = handle.subscribe();
            (handle, events)
        });
        Tokio {
            rt,
            handle,
            events,
            seen: Vec::new(),
        }
    }
    fn trace(&self) -> Option<String> {
        self.rt.block_on(self.handle.trace())
    }
    fn snapshot(&self) -> Snapshot {
        self.handle.snapshots().borrow().clone()
    }
    fn input(&self, input: Input) {
        self.handle.input(input).unwrap();
    }
    fn command(&self, command: Command) {
        self.handle.command(command).unwrap();
    }
    fn wait_for(&self, pred: &dyn Fn(&Snapshot) -> bool) -> Snapshot {
        let got = self.rt.block_on(self.handle.wait_for(pred, WAIT));
        got.unwrap_or_else(|| panic!("timed out; last: {:#?}", self.handle.snapshots().borrow()))
    }
    fn events(&mut self) -> Vec<Event> {
        while let Ok(e) = self.events.try_recv() {
            self.seen.push(e);
        }
        self.seen.clone()
    }
    fn stop(self) {
        self.rt.block_on(self.handle.shutdown());
    }
}

struct Blocking {
    shell: engine_io_blocking::Shell,
    events: std::sync::mpsc::Receiver<Event>,
    seen: Vec<Event>,
}

impl ShellUnderTest for Blocking {
    fn start_with(base: &str, record: bool) -> Blocking {
        let mut config = engine_io_blocking::ShellConfig::new(Config::new(base).unwrap());
        config.record_trace = record;
        let shell = engine_io_blocking::Shell::start(config);
        let events = shell.events();
        Blocking {
            shell,
            events,
            seen: Vec::new(),
        }
    }
    fn trace(&self) -> Option<String> {
        self.shell.trace()
    }
    fn snapshot(&self) -> Snapshot {
        self.shell.snapshot()
    }
    fn input(&self, input: Input) {
        self.shell.input(input).unwrap();
    }
    fn command(&self, command: Command) {
        self.shell.command(command).unwrap();
    }
    fn wait_for(&self, pred: &dyn Fn(&Snapshot) -> bool) -> Snapshot {
        self.shell
            .wait_for(pred, WAIT)
            .unwrap_or_else(|| panic!("timed out; last: {:#?}", self.shell.snapshot()))
    }
    fn events(&mut self) -> Vec<Event> {
        while let Ok(e) = self.events.try_recv() {
            self.seen.push(e);
        }
        self.seen.clone()
    }
    fn stop(self) {
        self.shell.shutdown();
    }
}

/// A simulator on loopback, on its own thread.
fn sim(config: SimConfig) -> platform_sim::BlockingSim {
    platform_sim::BlockingSim::start(config).unwrap()
}

fn agent(runtime: RuntimeBehaviour) -> SimConfig {
    let mut config = SimConfig::default();
    if let Some(a) = config.agents.first_mut() {
        a.runtime = runtime;
    }
    config
}

/// Opens the default session of the simulator's first Agent.
fn open<S: ShellUnderTest>(config: &SimConfig, url: &str) -> S {
    open_with(config, url, false)
}

fn open_with<S: ShellUnderTest>(config: &SimConfig, url: &str, record: bool) -> S {
    let shell = S::start_with(url, record);
    let agent: &AgentSpec = config.agents.first().unwrap();
    shell.input(Input::Person(Person::new(
        config.person_uid.clone(),
        Secret::new(config.platform_token.clone()),
    )));
    shell.input(Input::EnvironmentUid(Some(config.environment_uid.clone())));
    shell.input(Input::DefaultSession(Some(DefaultSession {
        agent_uid: Some(agent.uid.clone()),
        handle_unique_id: "shell-suite".into(),
        name: "shell suite".into(),
        status: SourceStatus::Ready,
        unavailable_message: None,
    })));
    shell.input(Input::ShowsDefaultSession(true));
    shell.input(Input::IsVisible(true));
    shell.wait_for(&|s| s.active_session_readiness.status == ReadinessStatus::Ready);
    shell
}

fn posts(sim: &platform_sim::BlockingSim, path_end: &str) -> usize {
    sim.log()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with(path_end))
        .count()
}

fn answered(s: &Snapshot) -> bool {
    !s.is_agent_working && matches!(s.run_status, RunStatus::Complete | RunStatus::Error)
}

/// The default session opens and a message's answer streams back.
fn default_session_and_answer<S: ShellUnderTest>() {
    let config = SimConfig::default();
    let sim = sim(config.clone());
    let mut shell: S = open(&config, &sim.url());
    shell.wait_for(&|s| s.composer_admission);
    shell.command(Command::SendMessage {
        text: "hello there".into(),
    });
    let s = shell.wait_for(&answered);
    assert_eq!(
        s.run_status,
        RunStatus::Complete,
        "{:?}",
        s.run_status_detail
    );
    assert!(streamed_text(&shell.events()).contains("hello there"));
    assert_eq!(posts(&sim, "/api/chat"), 1);
    shell.stop();
    sim.shutdown();
}

/// A waking Agent holds the send, then the message is delivered exactly once.
fn waking_agent_holds_then_delivers_once<S: ShellUnderTest>() {
    let config = agent(RuntimeBehaviour::Waking { checks: 2 });
    let sim = sim(config.clone());
    let shell: S = open(&config, &sim.url());
    shell.command(Command::SendMessage {
        text: "wake up".into(),
    });
    let s = shell.wait_for(&answered);
    assert_eq!(
        s.run_status,
        RunStatus::Complete,
        "{:?}",
        s.run_status_detail
    );
    assert_eq!(posts(&sim, "/api/chat"), 1, "{:#?}", sim.log());
    shell.stop();
    sim.shutdown();
}

/// A connection dropped mid-stream is reported and the message is not sent again.
fn dropped_stream_is_reported_not_resent<S: ShellUnderTest>() {
    let config = SimConfig::default();
    let sim = sim(config.clone());
    let shell: S = open(&config, &sim.url());
    shell.wait_for(&|s| s.composer_admission);
    sim.fault(Fault {
        method: Some("POST".into()),
        path_contains: "/api/chat".into(),
        times: 1,
        kind: FaultKind::DropMidStream { after_chunks: 2 },
    });
    shell.command(Command::SendMessage {
        text: "cut me off".into(),
    });
    let s = shell.wait_for(&answered);
    assert_eq!(s.run_status, RunStatus::Error);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(posts(&sim, "/api/chat"), 1, "never re-sent");
    shell.stop();
    sim.shutdown();
}

/// A terminal decision blocks sending: no message request reaches the Agent.
fn terminal_decision_blocks_sending<S: ShellUnderTest>() {
    let config = agent(RuntimeBehaviour::Terminal {
        message: "The agent is being repaired.".into(),
        support_reference: "SR-7".into(),
    });
    let sim = sim(config.clone());
    let mut shell: S = open(&config, &sim.url());
    shell.wait_for(&|s| {
        s.active_runtime_interaction
            .as_ref()
            .is_some_and(|i| !i.can_submit && !s.is_assistant_runtime_starting)
    });
    shell.command(Command::SendMessage {
        text: "anyone?".into(),
    });
    shell.wait_for(&|s| s.run_status == RunStatus::Error);
    assert_eq!(posts(&sim, "/api/chat"), 0);
    assert!(
        shell
            .events()
            .iter()
            .any(|e| matches!(e, Event::MessageNotSent { text, .. } if text == "anyone?"))
    );
    shell.stop();
    sim.shutdown();
}

/// Cancel stops the run and reaches the simulator.
fn cancel_reaches_the_simulator<S: ShellUnderTest>() {
    let mut config = SimConfig {
        answer_delay_ms: 200,
        ..SimConfig::default()
    };
    if let Some(a) = config.agents.first_mut() {
        a.answer = AnswerStyle::Fixed("one two three four five six seven eight nine ten".into());
    }
    let sim = sim(config.clone());
    let shell: S = open(&config, &sim.url());
    shell.wait_for(&|s| s.composer_admission);
    shell.command(Command::SendMessage {
        text: "talk slowly".into(),
    });
    shell.wait_for(&|s| s.has_active_chat_stream);
    shell.command(Command::CancelActiveSession);
    shell.wait_for(&|s| !s.is_agent_working && !s.is_cancelling_session);
    assert_eq!(posts(&sim, "/api/chat/session/cancel"), 1);
    shell.stop();
    sim.shutdown();
}

/// An Environment change drops what was in flight: the slow detail read never lands.
fn environment_change_aborts_in_flight<S: ShellUnderTest>() {
    let config = SimConfig::default();
    let sim = sim(config.clone());
    let shell: S = open(&config, &sim.url());
    sim.fault(Fault {
        method: Some("GET".into()),
        path_contains: "/api/v1/agent-sessions/".into(),
        times: 5,
        kind: FaultKind::Delay(1_500),
    });
    shell.command(Command::RefreshSessionDetail);
    shell.input(Input::EnvironmentUid(Some("env-other".into())));
    let s = shell.wait_for(&|s| s.environment_uid.as_deref() == Some("env-other"));
    assert_eq!(s.current_session_id, None);
    std::thread::sleep(Duration::from_millis(1_800));
    let s = shell.wait_for(&|s| s.environment_uid.as_deref() == Some("env-other"));
    assert_eq!(
        s.current_session_id, None,
        "a stale answer selected nothing"
    );
    assert!(s.active_session_detail.is_none());
    shell.stop();
    sim.shutdown();
}

/// INV-12: a run recorded against the simulator replays to the same snapshot, and the trace
/// holds no token (neither the platform's nor the runtime's).
fn recorded_run_replays_identically<S: ShellUnderTest>() {
    let config = agent(RuntimeBehaviour::Waking { checks: 1 });
    let sim = sim(config.clone());
    let shell: S = open_with(&config, &sim.url(), true);
    shell.command(Command::SendMessage {
        text: "record me".into(),
    });
    shell.wait_for(&answered);
    let trace = shell.trace().expect("a recorded trace");
    let live = shell.snapshot();
    shell.stop();
    sim.shutdown();
    assert!(
        !trace.contains(&config.platform_token),
        "platform token in the trace"
    );
    assert!(!trace.contains("simrt_"), "runtime token in the trace");
    let report = engine_core::trace::replay(&trace).unwrap_or_else(|e| panic!("{e}"));
    let replayed = serde_json::to_value(&report.snapshot).unwrap();
    let live = serde_json::to_value(&live).unwrap();
    assert_eq!(replayed, live);
    assert!(
        replayed["thread"]
            .to_string()
            .contains("You said: record me"),
        "{replayed}"
    );
}

/// ADR 099, issue 14: a local Agent runtime on loopback (platform-sim's local mode). The
/// default conversation is shown, the runtime's checks pass, a message's answer streams back,
/// and the runtime's id (`X-Agent-Session-Uid`) replaces `default`; a second message goes
/// under that id. No request carries a credential, and none goes to the platform's routes.
fn local_runtime_conversation<S: ShellUnderTest>() {
    let config = SimConfig {
        local: Some(platform_sim::LocalRuntime::default()),
        ..SimConfig::default()
    };
    let sim = sim(config);
    let shell = S::start_with(&sim.url(), false);
    let source = engine_core::LocalSource::new(&sim.url(), "Local Agent").unwrap();
    shell.input(Input::Source(Some(source)));
    shell.input(Input::IsVisible(true));
    shell.wait_for(&|s| s.composer_admission);
    assert_eq!(
        shell.snapshot().current_session_id.as_deref(),
        Some("default")
    );
    shell.command(Command::SendMessage {
        text: "hello local".into(),
    });
    let s = shell.wait_for(&|s| answered(s) && s.current_session_id.as_deref() != Some("default"));
    assert_eq!(
        s.run_status,
        RunStatus::Complete,
        "{:?}",
        s.run_status_detail
    );
    assert_eq!(s.current_session_id.as_deref(), Some("local-default"));
    let shown = serde_json::to_string(&s.thread).unwrap();
    assert!(shown.contains("You said: hello local"), "{shown}");
    shell.command(Command::SendMessage {
        text: "again".into(),
    });
    shell.wait_for(&|s| {
        answered(s)
            && serde_json::to_string(&s.thread)
                .unwrap()
                .contains("You said: again")
    });
    // The models (ADR 099): the runtime's catalog behind the configured option, the model it
    // holds for the conversation, and a choice `PUT` for it.
    let s = shell.wait_for(&|s| {
        s.available_models.len() > 1
            && s.selected_model_value.is_some()
            && !s.is_loading_available_models
    });
    assert_eq!(s.available_models[0].id, "local::configured");
    let pick = s
        .available_models
        .iter()
        .find(|m| m.provider != "local" && Some(&m.id) != s.selected_model_value.as_ref())
        .expect("a catalog model")
        .clone();
    shell.command(Command::SetSelectedModelValue {
        value: Some(pick.id.clone()),
    });
    let put = |log: &[platform_sim::LoggedRequest]| {
        log.iter()
            .find(|r| r.method == "PUT" && r.path == "/api/chat/session-model")
            .cloned()
    };
    let s = shell.wait_for(&|s| !s.is_updating_session_model && put(&sim.log()).is_some());
    assert_eq!(s.selected_model_value.as_deref(), Some(pick.id.as_str()));
    let body = put(&sim.log()).unwrap().body.unwrap();
    assert_eq!(
        (&body["sessionUid"], &body["provider"], &body["model"]),
        (
            &serde_json::json!("local-default"),
            &serde_json::json!(pick.provider),
            &serde_json::json!(pick.model)
        )
    );
    let log = sim.log();
    let turns: Vec<_> = log
        .iter()
        .filter(|r| r.method == "POST" && r.path == "/api/chat")
        .collect();
    assert_eq!(turns.len(), 2, "{log:#?}");
    assert_eq!(
        turns[0].body.as_ref().unwrap()["runtime_session_uid"],
        "default"
    );
    assert_eq!(
        turns[1].body.as_ref().unwrap()["runtime_session_uid"],
        "local-default"
    );
    assert!(
        turns
            .iter()
            .all(|t| t.body.as_ref().unwrap().get("session").is_none())
    );
    assert!(
        log.iter().all(|r| r.authorized),
        "a credential reached the local runtime"
    );
    assert!(
        log.iter().all(|r| !r.path.starts_with("/api/v1/")),
        "{log:#?}"
    );
    shell.stop();
    sim.shutdown();
}

/// ADR 099: a local runtime that cannot list or reload conversations (404 on both) is
/// live-only: `capabilities.sessionHistory` false, the notice "Earlier messages are not shown:
/// this local Agent cannot reload a conversation yet.", no error, and a message still goes.
fn live_only_local_runtime<S: ShellUnderTest>() {
    let config = SimConfig {
        local: Some(platform_sim::LocalRuntime {
            lists_sessions: false,
            ..platform_sim::LocalRuntime::default()
        }),
        ..SimConfig::default()
    };
    let sim = sim(config);
    let shell = S::start_with(&sim.url(), false);
    let source = engine_core::LocalSource::new(&sim.url(), "Local Agent").unwrap();
    shell.input(Input::Source(Some(source)));
    shell.input(Input::IsVisible(true));
    let s = shell.wait_for(&|s| s.composer_admission && !s.capabilities.session_history);
    assert_eq!(s.latest_sessions_error, None);
    assert_eq!(
        s.session_notice.as_deref(),
        Some("Earlier messages are not shown: this local Agent cannot reload a conversation yet.")
    );
    shell.command(Command::SendMessage {
        text: "hello live".into(),
    });
    let s = shell.wait_for(&|s| {
        answered(s)
            && serde_json::to_string(&s.thread)
                .unwrap()
                .contains("You said: hello live")
    });
    assert_eq!(
        s.run_status,
        RunStatus::Complete,
        "{:?}",
        s.run_status_detail
    );
    shell.stop();
    sim.shutdown();
}

macro_rules! suite {
    ($shell:ty, $module:ident) => {
        mod $module {
            use super::*;
            #[test]
            fn default_session_and_answer() {
                super::default_session_and_answer::<$shell>();
            }
            #[test]
            fn waking_agent_holds_then_delivers_once() {
                super::waking_agent_holds_then_delivers_once::<$shell>();
            }
            #[test]
            fn dropped_stream_is_reported_not_resent() {
                super::dropped_stream_is_reported_not_resent::<$shell>();
            }
            #[test]
            fn terminal_decision_blocks_sending() {
                super::terminal_decision_blocks_sending::<$shell>();
            }
            #[test]
            fn cancel_reaches_the_simulator() {
                super::cancel_reaches_the_simulator::<$shell>();
            }
            #[test]
            fn environment_change_aborts_in_flight() {
                super::environment_change_aborts_in_flight::<$shell>();
            }
            #[test]
            fn recorded_run_replays_identically() {
                super::recorded_run_replays_identically::<$shell>();
            }
            #[test]
            fn local_runtime_conversation() {
                super::local_runtime_conversation::<$shell>();
            }
            #[test]
            fn live_only_local_runtime() {
                super::live_only_local_runtime::<$shell>();
            }
        }
    };
}

suite!(Tokio, tokio_shell);
suite!(Blocking, blocking_shell);

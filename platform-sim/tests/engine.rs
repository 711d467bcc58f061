//! engine-core itself against the simulator: a small real-time shell executes the engine's
//! intents with reqwest, so every request shape the engine sends meets the simulator's checks.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use engine_core::message::{Part, Role};
use engine_core::{
    Command, Config, DefaultSession, Engine, FailureKind, Input, InstantClock, Intent, Person,
    RequestId, ResponseHead, RunStatus, Secret, Snapshot, SourceStatus, TransportFailure,
};
use futures_util::StreamExt;
use platform_sim::{DEFAULT_PLATFORM_TOKEN, RuntimeBehaviour, Sim, SimConfig};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

enum Msg {
    Head(RequestId, ResponseHead),
    Chunk(RequestId, Bytes),
    End(RequestId),
    Fail(RequestId, FailureKind, String),
}

struct Shell {
    engine: Engine,
    http: reqwest::Client,
    tx: mpsc::UnboundedSender<Msg>,
    rx: mpsc::UnboundedReceiver<Msg>,
    tasks: HashMap<RequestId, JoinHandle<()>>,
    /// The engine's time origin: instants in, `Time`s to the engine.
    clock: InstantClock,
}

impl Shell {
    fn new(sim: &Sim) -> Shell {
        let clock = InstantClock::new(Instant::now());
        let now = clock.time(Instant::now());
        let mut engine = Engine::new(Config::new(&sim.url()).unwrap(), now);
        let config = sim.config();
        for input in [
            Input::Person(Person::new(
                config.person_uid.clone(),
                Secret::new(DEFAULT_PLATFORM_TOKEN),
            )),
            Input::EnvironmentUid(Some(config.environment_uid.clone())),
            Input::DefaultSession(Some(DefaultSession {
                agent_uid: Some(config.agents[0].uid.clone()),
                handle_unique_id: "demo_default".into(),
                name: "Demo chat".into(),
                status: SourceStatus::Ready,
                unavailable_message: None,
            })),
            Input::ShowsDefaultSession(true),
            Input::IsVisible(true),
        ] {
            engine.handle_input(input, now);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        Shell {
            engine,
            http: reqwest::Client::new(),
            tx,
            rx,
            tasks: HashMap::new(),
            clock,
        }
    }

    fn drain(&mut self) {
        while let Some(intent) = self.engine.poll_intent() {
            match intent {
                Intent::Http { id, request, .. } => {
                    let method =
                        reqwest::Method::from_bytes(request.method.as_str().as_bytes()).unwrap();
                    let mut builder = self.http.request(method, request.url());
                    for header in &request.headers {
                        builder = builder.header(header.name(), header.value());
                    }
                    if let Some(body) = request.body.clone() {
                        builder = builder.body(body);
                    }
                    let tx = self.tx.clone();
                    let task = tokio::spawn(async move {
                        let response = match builder.send().await {
                            Ok(response) => response,
                            Err(e) => {
                                let _ =
                                    tx.send(Msg::Fail(id, FailureKind::NoAnswer, e.to_string()));
                                return;
                            }
                        };
                        let content_type = response
                            .headers()
                            .get("content-type")
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned);
                        let head = ResponseHead::new(response.status().as_u16(), content_type)
                            .with_reason(response.status().canonical_reason().map(str::to_owned));
                        let _ = tx.send(Msg::Head(id, head));
                        let mut body = response.bytes_stream();
                        while let Some(piece) = body.next().await {
                            match piece {
                                Ok(bytes) => {
                                    let _ = tx.send(Msg::Chunk(id, bytes));
                                }
                                Err(e) => {
                                    let _ =
                                        tx.send(Msg::Fail(id, FailureKind::Broken, e.to_string()));
                                    return;
                                }
                            }
                        }
                        let _ = tx.send(Msg::End(id));
                    });
                    self.tasks.insert(id, task);
                }
                Intent::Abort { id } => {
                    if let Some(task) = self.tasks.remove(&id) {
                        task.abort();
                    }
                }
                Intent::Storage(_) => {}
            }
        }
        while self.engine.poll_event().is_some() {}
    }

    /// Runs the engine in real time until `done` holds (true) or `limit` passes (false).
    async fn run_until(&mut self, limit: Duration, done: impl Fn(&Snapshot) -> bool) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            self.drain();
            if done(&self.engine.snapshot()) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            let wake = self
                .engine
                .poll_timeout()
                .map_or(deadline, |t| self.clock.instant(t).min(deadline));
            tokio::select! {
                msg = self.rx.recv() => {
                    let now = self.clock.time(Instant::now());
                    match msg {
                        Some(Msg::Head(id, head)) => self.engine.handle_response(id, head, now),
                        Some(Msg::Chunk(id, bytes)) => self.engine.handle_body_chunk(id, bytes, now),
                        Some(Msg::End(id)) => {
                            self.tasks.remove(&id);
                            self.engine.handle_body_end(id, now);
                        }
                        Some(Msg::Fail(id, kind, message)) => {
                            self.tasks.remove(&id);
                            self.engine.handle_failure(id, TransportFailure::new(kind, message), now);
                        }
                        None => return false,
                    }
                }
                () = tokio::time::sleep_until(wake.into()) => {
                    self.engine.handle_timeout(self.clock.time(Instant::now()));
                }
            }
        }
    }

    fn send(&mut self, text: &str) {
        self.engine.handle_input(
            Input::Command(Command::SendMessage { text: text.into() }),
            self.clock.time(Instant::now()),
        );
    }
}

fn last_assistant_text(snapshot: &Snapshot) -> String {
    snapshot
        .thread
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map(|m| {
            m.parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn the_engine_opens_the_default_session_and_gets_an_answer() {
    let sim = Sim::start(SimConfig {
        answer_delay_ms: 2,
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let mut shell = Shell::new(&sim);
    assert!(
        shell
            .run_until(Duration::from_secs(3), |s| s.composer_admission)
            .await,
        "{:#?}",
        sim.log()
    );
    shell.send("How are you?");
    let finished = shell
        .run_until(Duration::from_secs(3), |s| {
            s.run_status == RunStatus::Complete && !s.has_active_chat_stream
        })
        .await;
    let snapshot = shell.engine.snapshot();
    assert!(
        finished,
        "{:?} {:#?}",
        snapshot.run_status_detail,
        sim.log()
    );
    assert_eq!(last_assistant_text(&snapshot), "You said: How are you?");

    let log = sim.log();
    assert_eq!(log.iter().filter(|r| r.is("POST", "/api/chat")).count(), 1);
    assert!(log.iter().all(|r| r.authorized), "{log:#?}");
    let turn = log.iter().find(|r| r.is("POST", "/api/chat")).unwrap();
    let body = turn.body.as_ref().unwrap();
    assert_eq!(body["session"]["uid"], body["runtime_session_uid"]);
    sim.shutdown().await;
}

#[tokio::test]
async fn the_engine_follows_a_wake_to_a_ready_agent() {
    let mut config = SimConfig {
        answer_delay_ms: 2,
        ..SimConfig::default()
    };
    config.agents[0].runtime = RuntimeBehaviour::Waking { checks: 1 };
    let sim = Sim::start(config).await.unwrap();
    let mut shell = Shell::new(&sim);
    let started = Instant::now();
    let saw_waking = shell
        .run_until(Duration::from_secs(2), |s| s.is_assistant_runtime_starting)
        .await;
    assert!(saw_waking, "{:#?}", sim.log());
    assert!(
        shell
            .run_until(Duration::from_secs(6), |s| s.composer_admission)
            .await,
        "{:#?}",
        sim.log()
    );
    assert!(started.elapsed() < Duration::from_secs(6));
    let checks: Vec<_> = sim
        .log()
        .into_iter()
        .filter(|r| r.is("GET", "/api/chat"))
        .collect();
    assert_eq!(checks.len(), 2, "{checks:#?}");
    sim.shutdown().await;
}

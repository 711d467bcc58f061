#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The HTTP fault suite (issue 13): both shells against `platform-sim` on loopback, each fault
//! on the message request (or the reads around it) over real HTTP. For every case: how many
//! message requests reached the Agent (at most one; two with the 401/403 repeat of SND-23),
//! the person's text kept in the thread or handed back, a clear end state with a stable
//! failure code and the project's own words (never the HTTP library's), a bounded figure for
//! memory, and every socket (and, in the exclusive tests, every thread) released after the
//! shell's shutdown. Every case runs in both answer dialects of the simulator (issue 24, point
//! 4): the platform's Agent runtime's (RU-1) and the AI SDK's.
//!
//! Tests run in parallel threads of one process, so the process-wide counts (threads, socket
//! fds) are checked only by the two `released_*` tests, which hold [`EXCLUSIVE`] for writing
//! while every other test holds it for reading. Every test checks the figures it can isolate:
//! the client sockets to its own simulator's port and, for the tokio shell, the tasks and the
//! threads of the runtime it runs in.

use std::cell::Cell;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{PoisonError, RwLock};
use std::time::{Duration, Instant};

use engine_core::message::{Message, Part, Role, ToolState};
use engine_core::{
    Command, Config, Event, FailureCode, Input, ReadinessStatus, RunStatus, Snapshot,
};
use engine_io_tokio::Stats;
use platform_sim::{AnswerStyle, BlockingSim, Dialect, Fault, FaultKind, SIM_TOOL, SimConfig};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(20);

/// How long released resources may take to go (a connection's close, a thread's end).
const RELEASE_WAIT: Duration = Duration::from_secs(5);

/// Held for reading by every case, for writing by the tests that count the process's threads
/// and sockets (nothing else runs meanwhile).
static EXCLUSIVE: RwLock<()> = RwLock::new(());

thread_local! {
    /// Set while this thread holds [`EXCLUSIVE`] for writing.
    static ALONE: Cell<bool> = const { Cell::new(false) };
}

/// Texts of the HTTP library (and of addresses) that must never reach `runStatusDetail`.
const FOREIGN: [&str; 10] = [
    "error sending request",
    "error decoding",
    "hyper",
    "reqwest",
    "connection",
    "client error",
    "sendrequest",
    "http://",
    "127.0.0.1",
    "/runtime/",
];

/// What a case changes in the engine's and the shell's configuration.
#[derive(Debug, Clone, Copy, Default)]
struct Tune {
    max_answer_bytes: Option<usize>,
    max_event_bytes: Option<usize>,
    stream_idle_timeout: Option<Duration>,
    snapshot_interval: Option<Duration>,
}

impl Tune {
    fn engine(&self, base: &str) -> Config {
        let mut config = Config::new(base).unwrap();
        if let Some(n) = self.max_answer_bytes {
            config.max_answer_bytes = n;
        }
        if let Some(n) = self.max_event_bytes {
            config.max_event_bytes = n;
        }
        config
    }
}

/// What the suite needs from a shell.
trait ShellUnderTest: Sized {
    fn start(base: &str, tune: Tune) -> Self;
    fn snapshot(&self) -> Snapshot;
    fn input(&self, input: Input);
    fn wait_for(&self, what: &str, pred: &dyn Fn(&Snapshot) -> bool) -> Snapshot;
    /// The events received so far.
    fn events(&mut self) -> Vec<Event>;
    fn stats(&self) -> Stats;
    /// Shuts the shell down; checks that what it alone owns is gone.
    fn stop(self);
}

static RUNTIMES: AtomicUsize = AtomicUsize::new(0);

struct Tokio {
    rt: tokio::runtime::Runtime,
    /// The name of the runtime's threads (unique in the process).
    name: String,
    handle: engine_io_tokio::Handle,
    task: tokio::task::JoinHandle<()>,
    events: tokio::sync::broadcast::Receiver<Event>,
    seen: Vec<Event>,
}

impl ShellUnderTest for Tokio {
    fn start(base: &str, tune: Tune) -> Tokio {
        // At most 15 bytes: the kernel's thread name (`comm`) keeps no more.
        let name = format!("flt-tk-{}", RUNTIMES.fetch_add(1, Ordering::Relaxed));
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(name.clone())
            .enable_all()
            .build()
            .unwrap();
        let mut config = engine_io_tokio::ShellConfig::new(tune.engine(base));
        if let Some(d) = tune.stream_idle_timeout {
            config.stream_idle_timeout = d;
        }
        if let Some(d) = tune.snapshot_interval {
            config.snapshot_interval = d;
        }
        let (handle, task, events) = rt.block_on(async {
            let (handle, task) = engine_io_tokio::spawn(config);
            let events = handle.subscribe();
            (handle, task, events)
        });
        Tokio {
            rt,
            name,
            handle,
            task,
            events,
            seen: Vec::new(),
        }
    }
    fn snapshot(&self) -> Snapshot {
        self.handle.snapshots().borrow().clone()
    }
    fn input(&self, input: Input) {
        self.handle.input(input).unwrap();
    }
    fn wait_for(&self, what: &str, pred: &dyn Fn(&Snapshot) -> bool) -> Snapshot {
        let got = self.rt.block_on(self.handle.wait_for(pred, WAIT));
        got.unwrap_or_else(|| {
            panic!(
                "timed out waiting for {what}; last: {:#?}",
                self.handle.snapshots().borrow()
            )
        })
    }
    fn events(&mut self) -> Vec<Event> {
        while let Ok(e) = self.events.try_recv() {
            self.seen.push(e);
        }
        self.seen.clone()
    }
    fn stats(&self) -> Stats {
        self.handle.stats()
    }
    fn stop(self) {
        let Tokio {
            rt,
            name,
            handle,
            task,
            ..
        } = self;
        rt.block_on(handle.shutdown());
        rt.block_on(task).unwrap();
        drop(handle);
        // Every task the shell spawned (its exchanges, their connections) ends with it.
        let metrics = rt.metrics();
        settle("the shell's tasks to end", || {
            metrics.num_alive_tasks() == 0
        });
        rt.shutdown_timeout(RELEASE_WAIT);
        settle("the runtime's threads to end", || threads_named(&name) == 0);
    }
}

struct Blocking {
    shell: engine_io_blocking::Shell,
    events: std::sync::mpsc::Receiver<Event>,
    seen: Vec<Event>,
}

impl ShellUnderTest for Blocking {
    fn start(base: &str, tune: Tune) -> Blocking {
        let mut config = engine_io_blocking::ShellConfig::new(tune.engine(base));
        if let Some(d) = tune.stream_idle_timeout {
            config.stream_idle_timeout = d;
        }
        if let Some(d) = tune.snapshot_interval {
            config.snapshot_interval = d;
        }
        let shell = engine_io_blocking::Shell::start(config);
        let events = shell.events();
        Blocking {
            shell,
            events,
            seen: Vec::new(),
        }
    }
    fn snapshot(&self) -> Snapshot {
        self.shell.snapshot()
    }
    fn input(&self, input: Input) {
        self.shell.input(input).unwrap();
    }
    fn wait_for(&self, what: &str, pred: &dyn Fn(&Snapshot) -> bool) -> Snapshot {
        self.shell.wait_for(pred, WAIT).unwrap_or_else(|| {
            panic!(
                "timed out waiting for {what}; last: {:#?}",
                self.shell.snapshot()
            )
        })
    }
    fn events(&mut self) -> Vec<Event> {
        while let Ok(e) = self.events.try_recv() {
            self.seen.push(e);
        }
        self.seen.clone()
    }
    fn stats(&self) -> Stats {
        self.shell.stats()
    }
    fn stop(self) {
        // Joins the driver, which stops the transport's runtime: the shell's threads
        // ("engine-io-blocking-driver", "engine-io-blocking-http") are counted by the
        // exclusive tests.
        self.shell.shutdown();
    }
}

// ---------------------------------------------------------------------------------------------
// Process figures (Linux /proc).

/// Polls `done` (every 5 ms) until it holds; fails after [`RELEASE_WAIT`].
fn settle(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + RELEASE_WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The process's threads, but for the test harness's own (named after their tests: one may
/// start, waiting for [`EXCLUSIVE`], while a case runs alone) and the main thread.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .filter(|comm| {
            !["tokio_shell", "blocking_shell", "faults"]
                .iter()
                .any(|harness| comm.starts_with(harness))
        })
        .count()
}

/// The process's threads whose name starts with `prefix`.
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .filter(|comm| comm.starts_with(prefix))
        .count()
}

/// The inodes of the process's open socket fds.
fn socket_inodes() -> Vec<String> {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            target
                .strip_prefix("socket:[")
                .and_then(|rest| rest.strip_suffix(']'))
                .map(str::to_owned)
        })
        .collect()
}

/// The process's open socket fds.
fn sockets() -> usize {
    socket_inodes().len()
}

/// The process's TCP sockets connected to `127.0.0.1:port`: the clients of one simulator.
fn client_sockets(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/self/net/tcp").unwrap_or_default();
    let remote = format!("0100007F:{port:04X}");
    let to_port: HashSet<&str> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.get(2) == Some(&remote.as_str()))
                .then(|| fields.get(9).copied())
                .flatten()
        })
        .collect();
    socket_inodes()
        .iter()
        .filter(|inode| to_port.contains(inode.as_str()))
        .count()
}

/// The largest buffer the kernel gives a TCP socket (`/proc/sys/net/ipv4/{name}`, its third
/// figure; 8 MiB when it cannot be read).
fn tcp_buffer_max(name: &str) -> usize {
    std::fs::read_to_string(format!("/proc/sys/net/ipv4/{name}"))
        .ok()
        .and_then(|text| text.split_whitespace().nth(2)?.parse().ok())
        .unwrap_or(8 << 20)
}

fn port_of(url: &str) -> u16 {
    url.rsplit(':').next().unwrap().parse().unwrap()
}

// ---------------------------------------------------------------------------------------------
// The frame every case runs in.

/// A running case: its simulator and its shell, with the session open and admitting.
struct Run<S> {
    sim: BlockingSim,
    shell: S,
}

/// Starts a simulator (with `faults` queued first) and a shell, opens the default session,
/// runs `case`, shuts the shell down and checks that what it held is released: its client
/// sockets always, every thread and socket of the process when run alone.
fn run<S: ShellUnderTest, D: Speaks>(
    config: SimConfig,
    tune: Tune,
    faults: Vec<Fault>,
    case: impl FnOnce(&mut Run<S>),
) {
    let config = config.with_dialect(D::DIALECT);
    let alone = ALONE.with(Cell::get);
    let _shared = (!alone).then(|| EXCLUSIVE.read().unwrap_or_else(PoisonError::into_inner));
    let sim = BlockingSim::start(config.clone()).unwrap();
    let port = port_of(&sim.url());
    let baseline = alone.then(|| (threads(), sockets()));
    for fault in faults {
        sim.fault(fault);
    }
    let shell = S::start(&sim.url(), tune);
    for input in config.default_session_inputs("fault-suite") {
        shell.input(input);
    }
    shell.wait_for("the session to be ready", &|s| {
        s.active_session_readiness.status == ReadinessStatus::Ready && s.composer_admission
    });
    let mut run = Run { sim, shell };
    case(&mut run);
    let Run { sim, shell } = run;
    shell.stop();
    settle("the shell's sockets to close", || client_sockets(port) == 0);
    if let Some((threads_before, sockets_before)) = baseline {
        settle("the process's threads to come back", || {
            threads() <= threads_before
        });
        settle("the process's sockets to come back", || {
            sockets() <= sockets_before
        });
    }
    sim.shutdown();
}

/// Runs every case of `cases` alone in the process, counting its threads and sockets.
fn alone(cases: &[fn()]) {
    let _only = EXCLUSIVE.write().unwrap_or_else(PoisonError::into_inner);
    ALONE.with(|a| a.set(true));
    for case in cases {
        case();
    }
    ALONE.with(|a| a.set(false));
}

impl<S: ShellUnderTest> Run<S> {
    /// Sends `text` and waits until its turn has ended (the thread holds it and nothing runs).
    fn send(&mut self, text: &str) -> Snapshot {
        self.shell.input(Input::Command(Command::SendMessage {
            text: text.to_owned(),
        }));
        let s = self.shell.wait_for("the turn to end", &|s| {
            user_message(s, text).is_some()
                && !s.is_agent_working
                && !s.has_active_chat_stream
                && matches!(s.run_status, RunStatus::Complete | RunStatus::Error)
        });
        self.caught_up();
        s
    }

    /// Waits until the simulator has logged every exchange the shell started (a request
    /// emitted with the end state, a repeat say, is then in the log); gives up quietly after
    /// [`RELEASE_WAIT`] (an exchange aborted before it was written never arrives).
    fn caught_up(&self) {
        let started = self.shell.stats().exchanges;
        let deadline = Instant::now() + RELEASE_WAIT;
        while (self.sim.log().len() as u64) < started && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The message requests (`POST {rpc_url}/api/chat`) the Agent received.
    fn message_requests(&self) -> usize {
        self.sim
            .log()
            .iter()
            .filter(|r| r.method == "POST" && r.path.ends_with("/api/chat"))
            .count()
    }

    fn count(&self, method: &str, path_end: &str) -> usize {
        self.sim
            .log()
            .iter()
            .filter(|r| r.method == method && r.path.ends_with(path_end))
            .count()
    }

    /// The texts handed back (`MessageNotSent`) with their codes.
    fn handed_back(&mut self) -> Vec<(String, FailureCode)> {
        self.shell
            .events()
            .into_iter()
            .filter_map(|e| match e {
                Event::MessageNotSent { text, code, .. } => Some((text, code)),
                _ => None,
            })
            .collect()
    }
}

fn text_of(m: &Message) -> String {
    m.parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

fn user_message<'a>(s: &'a Snapshot, text: &str) -> Option<&'a Message> {
    s.thread
        .iter()
        .map(|m| &**m)
        .find(|m| m.role == Role::User && text_of(m) == text)
}

/// The assistant message that follows the user message `text`.
fn answer_to<'a>(s: &'a Snapshot, text: &str) -> Option<&'a Message> {
    let at = s
        .thread
        .iter()
        .position(|m| m.role == Role::User && text_of(m) == text)?;
    s.thread
        .get(at + 1)
        .map(|m| &**m)
        .filter(|m| m.role == Role::Assistant)
}

/// The end state of a failed turn: status error, this code, exactly this text, in the
/// project's own words, after its source label (RU-13, RU-16).
fn assert_failed(s: &Snapshot, code: FailureCode, detail: &str) {
    assert_eq!(s.run_status, RunStatus::Error, "{:?}", s.run_status_detail);
    assert_eq!(
        s.run_failure.as_ref().map(|f| f.code),
        Some(code),
        "{:?}",
        s.run_failure
    );
    assert_eq!(s.run_status_detail.as_deref(), Some(detail));
    assert_eq!(
        s.run_failure.as_ref().map(|f| f.message.as_str()),
        Some(detail)
    );
    assert_own_words(detail);
}

/// A status and its canonical reason phrase, as the shells pass it (RU-19).
fn reason(status: u16) -> String {
    match spec_tests::canonical_reason(status) {
        Some(reason) => format!("{status} {reason}"),
        None => status.to_string(),
    }
}

/// RU-16: a failed turn's text, labelled.
fn sending(message: &str) -> String {
    format!("Source: Sending to the Agent. {message}")
}

/// RU-16: a failed turn's text with no source of its own (an answer cut short, RU-6).
fn never_sent(message: &str) -> String {
    format!("Source: Request was never sent. {message}")
}

/// RU-19: the text of a refused message request to the simulator's Agent.
fn refused<S>(r: &Run<S>, status: &str, message: &str) -> String {
    sending(&format!(
        "Agent chat stream request failed. Status: HTTP {status}. Call: POST {}/runtime/{}/api/chat. Server response: {message}",
        r.sim.url(),
        platform_sim::DEFAULT_AGENT_UID,
    ))
}

/// No word of the HTTP library, and no address but in the "Call:" part RU-19 puts in a refusal's
/// text on purpose.
fn assert_own_words(text: &str) {
    let without_call = match text.split_once(" Call: ") {
        Some((before, rest)) => match rest.split_once(". Server response: ") {
            Some((_, after)) => format!("{before} {after}"),
            None => text.to_owned(),
        },
        None => text.to_owned(),
    };
    let lower = without_call.to_lowercase();
    for foreign in FOREIGN {
        assert!(!lower.contains(foreign), "{foreign:?} leaked into {text:?}");
    }
}

fn assert_complete(s: &Snapshot) {
    assert_eq!(
        s.run_status,
        RunStatus::Complete,
        "{:?} {:?}",
        s.run_status_detail,
        s.run_failure
    );
    assert_eq!(s.run_status_detail.as_deref(), Some("Run completed."));
    assert!(s.run_failure.is_none());
}

/// A bounded figure for memory: the whole snapshot, as JSON, stays under `limit` bytes.
fn assert_snapshot_under(s: &Snapshot, limit: usize) {
    let size = serde_json::to_string(s).unwrap().len();
    assert!(size < limit, "the snapshot is {size} bytes (limit {limit})");
}

/// The message request only.
fn on_chat(kind: FaultKind) -> Fault {
    Fault::once("POST", "/api/chat", kind)
}

fn fixed_answer(text: &str) -> SimConfig {
    let mut config = SimConfig::default();
    if let Some(a) = config.agents.first_mut() {
        a.answer = AnswerStyle::Fixed(text.to_owned());
    }
    config
}

// ---------------------------------------------------------------------------------------------
// The cases.

/// SND-14, SND-15, INV-8: the connection is reset before the answer's head. The message
/// request was sent once and never again; the Agent is checked again (a new
/// resolve-runtime-access); the turn fails `agent_unreachable` in the project's words; the
/// text stays in the thread (it was sent, so it is not handed back).
fn reset_before_head<S: ShellUnderTest, D: Speaks>() {
    let faults = vec![on_chat(FaultKind::CloseWithoutAnswer)];
    run::<S, D>(SimConfig::default(), Tune::default(), faults, |r| {
        let access_before = r.count("POST", "/resolve-runtime-access/");
        let s = r.send("reset before the head");
        assert_failed(
            &s,
            FailureCode::AgentUnreachable,
            &sending("The server closed without answering."),
        );
        assert_eq!(r.message_requests(), 1);
        assert!(user_message(&s, "reset before the head").is_some());
        assert!(r.handed_back().is_empty());
        // SND-15: the send's own access read, then the re-check.
        let deadline = Instant::now() + WAIT;
        while r.count("POST", "/resolve-runtime-access/") < access_before + 2 {
            assert!(Instant::now() < deadline, "no re-check: {:#?}", r.sim.log());
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_snapshot_under(&s, 64 * 1024);
        assert!(r.shell.stats().exchanges < 20);
    });
}

/// SND-14, adr-notes 8 ("The answer was interrupted"): the connection breaks in the middle of
/// the answer. One message request; `stream_interrupted` in the project's words; the partial
/// answer stays, failed; the text stays in the thread.
fn reset_mid_answer<S: ShellUnderTest, D: Speaks>() {
    let config = fixed_answer("one two three four five six seven eight");
    // Cut after the reasoning, the tool call and two words.
    let after_chunks = D::DIALECT.frames_before_text() + 2;
    let faults = vec![on_chat(FaultKind::DropMidStream { after_chunks })];
    run::<S, D>(config, Tune::default(), faults, |r| {
        let s = r.send("cut me off");
        assert_failed(
            &s,
            FailureCode::StreamInterrupted,
            &never_sent("The answer was interrupted before it finished."),
        );
        assert_eq!(r.message_requests(), 1);
        let answer = answer_to(&s, "cut me off").expect("the partial answer stays");
        assert_eq!(text_of(answer), "one two ");
        assert!(r.handed_back().is_empty());
        assert_snapshot_under(&s, 64 * 1024);
    });
}

/// RU-1, RU-6, RU-15, issue 24 point 4: the run fails mid-answer (the runtime's terminal
/// `error` frame instead of `finish`; an `error` chunk in the AI SDK's names): the turn fails
/// `stream_error` with the Agent's text; the text streamed before stays; one message request.
/// A tool call that failed (`isError`) does not fail the turn: its part keeps the error.
fn error_mid_stream<S: ShellUnderTest, D: Speaks>() {
    let mut config = SimConfig::default();
    if let Some(a) = config.agents.first_mut() {
        a.answer = AnswerStyle::FailedRun("The model is overloaded.".to_owned());
    }
    run::<S, D>(config, Tune::default(), Vec::new(), |r| {
        let s = r.send("fail midway");
        assert_eq!(s.run_status, RunStatus::Error, "{:?}", s.run_status_detail);
        assert_eq!(
            s.run_failure.as_ref().map(|f| f.code),
            Some(FailureCode::StreamError)
        );
        let detail = s.run_status_detail.clone().unwrap_or_default();
        assert!(detail.contains("The model is overloaded."), "{detail}");
        assert_eq!(r.message_requests(), 1);
        let answer = answer_to(&s, "fail midway").expect("the partial answer stays");
        assert_eq!(text_of(answer), "You said: fail midway");
    });
    let mut config = SimConfig::default();
    if let Some(a) = config.agents.first_mut() {
        a.answer = AnswerStyle::FailingTool("Word counter unavailable".to_owned());
    }
    run::<S, D>(config, Tune::default(), Vec::new(), |r| {
        let s = r.send("tool fails");
        assert_complete(&s);
        let answer = answer_to(&s, "tool fails").expect("the answer");
        assert_eq!(text_of(answer), "You said: tool fails");
        let tool = answer
            .parts
            .iter()
            .find_map(|p| match p {
                Part::Tool(t) => Some(t),
                _ => None,
            })
            .expect("the tool part");
        assert_eq!(tool.tool_name, SIM_TOOL);
        assert_eq!(tool.state, ToolState::OutputError);
        assert_eq!(tool.error_text.as_deref(), Some("Word counter unavailable"));
    });
}

/// SND-7 (interpretations "Idle timeout", "Shell publication"): an answer that drips a
/// few bytes at a time, within the idle timeout, is read whole: the turn completes with the
/// whole text, one message request; with the interval off, snapshots are computed on the
/// answer's doublings only, not once per piece.
fn slow_drip<S: ShellUnderTest, D: Speaks>() {
    let words = "drip ".repeat(60);
    let config = fixed_answer(words.trim_end());
    let tune = Tune {
        stream_idle_timeout: Some(Duration::from_secs(5)),
        snapshot_interval: Some(Duration::from_secs(3600)),
        ..Tune::default()
    };
    let faults = vec![on_chat(FaultKind::Drip {
        bytes: 16,
        pause_ms: 1,
    })];
    run::<S, D>(config, tune, faults, |r| {
        let before = r.shell.stats();
        let s = r.send("drip slowly");
        assert_complete(&s);
        assert_eq!(r.message_requests(), 1);
        let answer = answer_to(&s, "drip slowly").expect("the answer");
        assert_eq!(text_of(answer), words.trim_end());
        // About 60 events of ~60 bytes in 16-byte pieces: ~240 pieces, far fewer snapshots.
        let stats = r.shell.stats().since(&before);
        assert!(stats.snapshots < 40, "{stats:?}");
    });
}

/// SND-7, adr-notes 8 (interpretations "Idle timeout"): an answer that drips slower than the idle
/// timeout fails `stream_interrupted` with the shell's own text, one message request, the
/// text kept.
fn drip_past_idle_timeout<S: ShellUnderTest, D: Speaks>() {
    let tune = Tune {
        stream_idle_timeout: Some(Duration::from_millis(500)),
        ..Tune::default()
    };
    let faults = vec![on_chat(FaultKind::Drip {
        bytes: 64,
        pause_ms: 2_000,
    })];
    run::<S, D>(SimConfig::default(), tune, faults, |r| {
        let s = r.send("too slow");
        assert_failed(
            &s,
            FailureCode::StreamInterrupted,
            &never_sent("The answer stalled for 500 ms."),
        );
        assert_eq!(r.message_requests(), 1);
        assert!(user_message(&s, "too slow").is_some());
        assert!(r.handed_back().is_empty());
    });
}

/// SND-7 (interpretations "Stream outcome for the run", "Limits while reading"): an answer past
/// `max_answer_bytes` fails `stream_too_large` with the engine's text, and the rest is not
/// read: of an answer of 64 MiB (or four times the bound) the simulator produced only what
/// the limit and the socket buffers took.
fn answer_larger_than_limit<S: ShellUnderTest, D: Speaks>() {
    let limit = 256 * 1024;
    let tune = Tune {
        max_answer_bytes: Some(limit),
        ..Tune::default()
    };
    // What the limit, both socket buffers and a margin for the libraries' own buffers hold.
    let bound = limit + tcp_buffer_max("tcp_rmem") + tcp_buffer_max("tcp_wmem") + (4 << 20);
    let size = (64 << 20).max(4 * bound);
    let faults = vec![on_chat(FaultKind::LargeAnswer { bytes: size })];
    run::<S, D>(SimConfig::default(), tune, faults, |r| {
        let s = r.send("tell me everything");
        assert_failed(
            &s,
            FailureCode::StreamTooLarge,
            &never_sent("The response body exceeded the limit of 262144 bytes."),
        );
        assert_eq!(r.message_requests(), 1);
        assert!(user_message(&s, "tell me everything").is_some());
        let produced = r.sim.fault_bytes();
        assert!(
            produced < bound as u64,
            "{produced} bytes of {size} were produced (bound {bound})"
        );
        // The failed answer keeps what fit, no more.
        assert_snapshot_under(&s, 2 * limit);
    });
}

/// SND-3, interpretations "Failed resolve-runtime-access during a send": malformed JSON in the
/// send's resolve-runtime-access answer fails `runtime_access_failed` before any message
/// request; the text is handed back and kept in the thread as failed.
fn malformed_json_access<S: ShellUnderTest, D: Speaks>() {
    run::<S, D>(SimConfig::default(), Tune::default(), Vec::new(), |r| {
        r.sim.fault(Fault::once(
            "POST",
            "/resolve-runtime-access/",
            FaultKind::MalformedJson,
        ));
        let s = r.send("malformed access");
        assert_failed(
            &s,
            FailureCode::RuntimeAccessFailed,
            "Source: Connecting to the Agent. The runtime access answer is not a JSON object.",
        );
        assert_eq!(r.message_requests(), 0);
        assert_eq!(
            r.handed_back(),
            vec![(
                "malformed access".to_owned(),
                FailureCode::RuntimeAccessFailed
            )]
        );
    });
}

/// SND-7, adr-notes 8 (interpretations "Stream outcome for the run"): a 2xx answer that is truncated JSON instead
/// of a stream holds no event: `stream_interrupted` with "The answer was interrupted before it
/// finished.", one message request.
fn malformed_json_answer<S: ShellUnderTest, D: Speaks>() {
    let faults = vec![on_chat(FaultKind::MalformedJson)];
    run::<S, D>(SimConfig::default(), Tune::default(), faults, |r| {
        let s = r.send("malformed answer");
        assert_failed(
            &s,
            FailureCode::StreamInterrupted,
            &never_sent("The answer was interrupted before it finished."),
        );
        assert_eq!(r.message_requests(), 1);
        assert!(user_message(&s, "malformed answer").is_some());
    });
}

/// SND-7, SND-14, interpretations "Non-2xx message request": 500, 502, 503 and 504 each fail
/// their turn `agent_http_error` with RU-19's text ("Source: Sending to the Agent. Agent chat
/// stream request failed. Status: HTTP N {reason}. Call: POST {url}. Server response: {message}",
/// the reason phrase as the shell read it), one message request each, never repeated; the texts
/// stay in the thread.
fn server_errors<S: ShellUnderTest, D: Speaks>() {
    run::<S, D>(SimConfig::default(), Tune::default(), Vec::new(), |r| {
        for (n, status) in [500u16, 502, 503, 504].into_iter().enumerate() {
            r.sim.fault(on_chat(FaultKind::Status(
                status,
                json!({"detail": "Upstream said no."}),
            )));
            let text = format!("status {status} please");
            let s = r.send(&text);
            assert_failed(
                &s,
                FailureCode::AgentHttpError,
                &refused(r, &reason(status), "Upstream said no."),
            );
            assert_eq!(r.message_requests(), n + 1, "after {status}");
            assert!(user_message(&s, &text).is_some());
        }
        assert!(r.handed_back().is_empty());
    });
}

/// SND-23: a 401 on the message request resolves access again and repeats it once: two
/// message requests, the answer completes.
fn unauthorized_then_refreshed<S: ShellUnderTest, D: Speaks>() {
    run::<S, D>(SimConfig::default(), Tune::default(), Vec::new(), |r| {
        r.sim.fault(on_chat(FaultKind::Status(
            401,
            json!({"detail": "Token expired."}),
        )));
        let access_before = r.count("POST", "/resolve-runtime-access/");
        let s = r.send("knock again");
        assert_complete(&s);
        assert_eq!(r.message_requests(), 2);
        assert_eq!(
            r.count("POST", "/resolve-runtime-access/"),
            access_before + 2
        );
        let answer = answer_to(&s, "knock again").expect("the answer");
        assert_eq!(text_of(answer), "You said: knock again");
    });
}

/// SND-23: a 403 on the message request and again on its one repeat is a plain failure:
/// exactly two message requests, `agent_http_error` with the status text; the text stays.
fn forbidden_twice<S: ShellUnderTest, D: Speaks>() {
    run::<S, D>(SimConfig::default(), Tune::default(), Vec::new(), |r| {
        r.sim
            .fault(on_chat(FaultKind::Status(403, json!({"detail": "Not yours."}))).repeat(2));
        let s = r.send("let me in");
        assert_failed(
            &s,
            FailureCode::AgentHttpError,
            &refused(r, "403 Forbidden", "Not yours."),
        );
        assert_eq!(r.message_requests(), 2);
        assert!(user_message(&s, "let me in").is_some());
        assert!(r.handed_back().is_empty());
    });
}

/// SND-7, SND-14 (shells: redirects are not followed): a 307 on the message request is its
/// answer: `agent_http_error`, RU-19's text with the fallback "Chat stream failed with status
/// 307.", one message request,
/// nothing requested at the redirect's address.
fn redirect_307<S: ShellUnderTest, D: Speaks>() {
    let faults = vec![on_chat(FaultKind::Redirect {
        status: 307,
        location: "/elsewhere/api/chat".into(),
    })];
    run::<S, D>(SimConfig::default(), Tune::default(), faults, |r| {
        let s = r.send("go elsewhere");
        assert_failed(
            &s,
            FailureCode::AgentHttpError,
            &refused(
                r,
                "307 Temporary Redirect",
                "Chat stream failed with status 307.",
            ),
        );
        assert_eq!(r.message_requests(), 1);
        assert!(!r.sim.log().iter().any(|l| l.path.contains("/elsewhere")));
        assert!(user_message(&s, "go elsewhere").is_some());
    });
}

/// SND-14, SND-15, INV-8 (interpretations "Idle timeout"): the Agent never answers the message
/// request: after the idle timeout it is `agent_unreachable` "No answer within 500 ms.", one
/// message request, the text kept.
fn no_answer_at_all<S: ShellUnderTest, D: Speaks>() {
    let tune = Tune {
        stream_idle_timeout: Some(Duration::from_millis(500)),
        ..Tune::default()
    };
    let faults = vec![on_chat(FaultKind::Delay(60_000))];
    run::<S, D>(SimConfig::default(), tune, faults, |r| {
        let s = r.send("anyone there?");
        assert_failed(
            &s,
            FailureCode::AgentUnreachable,
            &sending("No answer within 500 ms."),
        );
        assert_eq!(r.message_requests(), 1);
        assert!(user_message(&s, "anyone there?").is_some());
        assert!(r.handed_back().is_empty());
    });
}

/// SND-7 (interpretations "Framing"): invalid UTF-8 in an answer is decoded lossily (U+FFFD); the
/// turn completes with that text, one message request.
fn invalid_utf8<S: ShellUnderTest, D: Speaks>() {
    let faults = vec![on_chat(FaultKind::InvalidUtf8)];
    run::<S, D>(SimConfig::default(), Tune::default(), faults, |r| {
        let s = r.send("bad bytes");
        assert_complete(&s);
        assert_eq!(r.message_requests(), 1);
        let answer = answer_to(&s, "bad bytes").expect("the answer");
        assert_eq!(text_of(answer), platform_sim::INVALID_UTF8_TEXT);
    });
}

/// SND-7 (interpretations "Framing", "Stream outcome for the run"): one SSE line of 4 MiB (past
/// `max_event_bytes`, here 64 KiB) is dropped without being held; the events after it apply
/// and the turn completes; the snapshot stays small although the whole line was read.
fn huge_sse_line<S: ShellUnderTest, D: Speaks>() {
    let line = 4 << 20;
    let tune = Tune {
        max_event_bytes: Some(64 * 1024),
        ..Tune::default()
    };
    let faults = vec![on_chat(FaultKind::HugeLine { bytes: line })];
    run::<S, D>(SimConfig::default(), tune, faults, |r| {
        let s = r.send("one long line");
        assert_complete(&s);
        assert_eq!(r.message_requests(), 1);
        let answer = answer_to(&s, "one long line").expect("the answer");
        assert_eq!(text_of(answer), platform_sim::AFTER_HUGE_LINE);
        assert!(r.sim.fault_bytes() > (line as u64) / 2, "the line was read");
        assert_snapshot_under(&s, 64 * 1024);
    });
}

/// HYD-4, HYD-5, SND-1: a history of 50 000 messages loads (the thread holds exactly its
/// messages, readiness ready) and a message then goes out once, alone in its body, and
/// completes; while its answer streams, snapshots (each holding the 50 000 messages) are
/// computed a bounded number of times.
fn history_of_50k<S: ShellUnderTest, D: Speaks>() {
    let n = 50_000;
    let faults = vec![Fault::once(
        "GET",
        "/history/",
        FaultKind::LargeHistory { messages: n },
    )];
    // Snapshots on the answer's doublings only, not on time: a figure independent of speed.
    let tune = Tune {
        snapshot_interval: Some(Duration::from_secs(3600)),
        ..Tune::default()
    };
    run::<S, D>(SimConfig::default(), tune, faults, |r| {
        let s = r.shell.snapshot();
        assert_eq!(s.thread.len(), n);
        assert_eq!(
            s.thread.last().map(|m| text_of(m)),
            Some(platform_sim::history_text(n - 1))
        );
        let before = r.shell.stats();
        let s = r.send("after a long talk");
        assert_complete(&s);
        assert_eq!(s.thread.len(), n + 2);
        assert_eq!(r.message_requests(), 1);
        let log = r.sim.log();
        let body = log
            .iter()
            .find(|l| l.method == "POST" && l.path.ends_with("/api/chat"))
            .and_then(|l| l.body.as_ref())
            .unwrap();
        assert_eq!(body["messages"].as_array().map(Vec::len), Some(1), "SND-1");
        assert_eq!(
            text_of(answer_to(&s, "after a long talk").unwrap()),
            "You said: after a long talk"
        );
        let stats = r.shell.stats().since(&before);
        assert!(stats.snapshots < 30, "{stats:?}");
    });
}

/// The dialect the simulator's Agents answer in (issue 24, point 4: every case runs in both).
trait Speaks {
    const DIALECT: Dialect;
}

/// The platform's Agent runtime's dialect (RU-1).
struct RuntimeDialect;
impl Speaks for RuntimeDialect {
    const DIALECT: Dialect = Dialect::Runtime;
}

/// The AI SDK's names.
struct AiSdkDialect;
impl Speaks for AiSdkDialect {
    const DIALECT: Dialect = Dialect::AiSdk;
}

macro_rules! suite {
    ($shell:ty, $dialect:ty, $module:ident) => {
        mod $module {
            use super::*;

            #[test]
            fn reset_before_head() {
                super::reset_before_head::<$shell, $dialect>();
            }
            #[test]
            fn reset_mid_answer() {
                super::reset_mid_answer::<$shell, $dialect>();
            }
            #[test]
            fn error_mid_stream() {
                super::error_mid_stream::<$shell, $dialect>();
            }
            #[test]
            fn slow_drip() {
                super::slow_drip::<$shell, $dialect>();
            }
            #[test]
            fn drip_past_idle_timeout() {
                super::drip_past_idle_timeout::<$shell, $dialect>();
            }
            #[test]
            fn answer_larger_than_limit() {
                super::answer_larger_than_limit::<$shell, $dialect>();
            }
            #[test]
            fn malformed_json_access() {
                super::malformed_json_access::<$shell, $dialect>();
            }
            #[test]
            fn malformed_json_answer() {
                super::malformed_json_answer::<$shell, $dialect>();
            }
            #[test]
            fn server_errors() {
                super::server_errors::<$shell, $dialect>();
            }
            #[test]
            fn unauthorized_then_refreshed() {
                super::unauthorized_then_refreshed::<$shell, $dialect>();
            }
            #[test]
            fn forbidden_twice() {
                super::forbidden_twice::<$shell, $dialect>();
            }
            #[test]
            fn redirect_307() {
                super::redirect_307::<$shell, $dialect>();
            }
            #[test]
            fn no_answer_at_all() {
                super::no_answer_at_all::<$shell, $dialect>();
            }
            #[test]
            fn invalid_utf8() {
                super::invalid_utf8::<$shell, $dialect>();
            }
            #[test]
            fn huge_sse_line() {
                super::huge_sse_line::<$shell, $dialect>();
            }
            #[test]
            fn history_of_50k() {
                super::history_of_50k::<$shell, $dialect>();
            }

            /// Every thread and socket of the process comes back after `shutdown()`, for the
            /// faults that leave a connection open or half-read (run alone in the process).
            #[test]
            fn released_after_shutdown() {
                alone(&[
                    super::reset_before_head::<$shell, $dialect>,
                    super::reset_mid_answer::<$shell, $dialect>,
                    super::drip_past_idle_timeout::<$shell, $dialect>,
                    super::answer_larger_than_limit::<$shell, $dialect>,
                    super::no_answer_at_all::<$shell, $dialect>,
                    super::huge_sse_line::<$shell, $dialect>,
                    super::redirect_307::<$shell, $dialect>,
                ]);
            }
        }
    };
}

suite!(Tokio, RuntimeDialect, tokio_shell);
suite!(Blocking, RuntimeDialect, blocking_shell);
suite!(Tokio, AiSdkDialect, tokio_shell_ai_sdk);
suite!(Blocking, AiSdkDialect, blocking_shell_ai_sdk);

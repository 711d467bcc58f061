#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Interactive `agent-chat` against a platform-sim started by the test: commands work while an
//! answer streams, answers do not run into each other, `/new` moves to the new session.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use platform_sim::{DEFAULT_PLATFORM_TOKEN, Sim, SimConfig};

/// Starts `agent-chat` against `sim` with stdin piped.
fn chat(sim: &Sim, token_file: &std::path::Path, extra: &[&str]) -> Child {
    let config = sim.config();
    Command::new(env!("CARGO_BIN_EXE_agent-chat"))
        .env_remove("AGENT_CHAT_TOKEN")
        .args(["--platform", &sim.url(), "--token-file"])
        .arg(token_file)
        .args([
            "--environment",
            &config.environment_uid,
            "--agent",
            &config.agents[0].uid,
            "--user",
            &config.person_uid,
        ])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn token_file(name: &str) -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("agent-chat-review-{name}-{}", std::process::id()));
    std::fs::write(&path, DEFAULT_PLATFORM_TOKEN).unwrap();
    path
}

async fn wait_log(sim: &Sim, what: impl Fn(&platform_sim::LoggedRequest) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !sim.log().iter().any(&what) {
        assert!(
            Instant::now() < deadline,
            "not logged; log: {:#?}",
            sim.log()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `/cancel` typed while an answer streams must reach the Agent while it streams. The
/// interactive loop awaits the whole turn before it reads the next line, so the cancel goes
/// out only after the answer has finished (and then cancels nothing).
#[tokio::test(flavor = "multi_thread")]
async fn cancel_reaches_the_agent_while_the_answer_streams() {
    let sim = Sim::start(SimConfig {
        answer_delay_ms: 300,
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let token = token_file("cancel");
    let mut child = chat(&sim, &token, &[]);
    let mut stdin = child.stdin.take().unwrap();
    wait_log(&sim, |r| r.is("GET", "/api/chat")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // About fifteen frames 300 ms apart: the answer runs for four to five seconds.
    writeln!(stdin, "one two three four five six seven eight").unwrap();
    wait_log(&sim, |r| {
        r.is("POST", "/api/chat") && !r.path.contains("cancel")
    })
    .await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    writeln!(stdin, "/cancel").unwrap();
    let turn_at = sim
        .log()
        .iter()
        .find(|r| r.is("POST", "/api/chat") && !r.path.contains("cancel"))
        .unwrap()
        .at_ms;
    // Give the cancel until well after the answer would have ended on its own.
    let deadline = Instant::now() + Duration::from_secs(7);
    let cancel_at = loop {
        let found = sim
            .log()
            .iter()
            .find(|r| r.is("POST", "/api/chat/session/cancel"))
            .map(|r| r.at_ms);
        if found.is_some() || Instant::now() > deadline {
            break found;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    writeln!(stdin, "/quit").unwrap();
    drop(stdin);
    let _ = child.wait();
    let _ = std::fs::remove_file(token);
    let cancel_at = cancel_at.expect("no cancel reached the Agent (the answer ran to its end)");
    assert!(
        cancel_at - turn_at < 2500,
        "the cancel went out {} ms after the turn (the answer had already ended)",
        cancel_at - turn_at
    );
}

/// After a turn times out ("(no answer yet; it may still come)"), the rest of its answer stays
/// in the broadcast receiver and is printed as the start of the next turn's answer, on the same
/// line as it.
#[tokio::test(flavor = "multi_thread")]
async fn the_next_answer_does_not_carry_the_previous_one() {
    let sim = Sim::start(SimConfig {
        answer_delay_ms: 120,
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let token = token_file("stale");
    let mut child = chat(&sim, &token, &["--timeout", "2"]);
    let mut stdin = child.stdin.take().unwrap();
    wait_log(&sim, |r| r.is("GET", "/api/chat")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // 28 frames (reasoning, a tool call, eleven words) 120 ms apart: over three seconds, past
    // the two-second turn limit.
    writeln!(stdin, "a1 a2 a3 a4 a5 a6 a7 a8 zeta").unwrap();
    // Let that answer finish on the platform.
    tokio::time::sleep(Duration::from_millis(5500)).await;
    writeln!(stdin, "omega").unwrap();
    // Its 20 frames take 2.3 s.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    writeln!(stdin, "/quit").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(token);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.contains("You said: omega"))
        .unwrap_or_else(|| panic!("no answer to omega: {stdout:?}"));
    assert!(
        !line.contains("zeta"),
        "the previous answer leaks into this one: {line:?}"
    );
}

/// `/new` ("start a new session with this Agent") creates a session, but the chat stays on the
/// default session (ShowsDefaultSession stays true), so the next message goes to the old one.
#[tokio::test(flavor = "multi_thread")]
async fn new_moves_the_chat_to_the_new_session() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let token = token_file("new");
    let mut child = chat(&sim, &token, &[]);
    let mut stdin = child.stdin.take().unwrap();
    wait_log(&sim, |r| r.is("GET", "/api/chat")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = sim.sessions().len();
    writeln!(stdin, "/new").unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while sim.sessions().len() == before {
        assert!(Instant::now() < deadline, "/new created no session");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let created = sim.sessions().last().unwrap()["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    writeln!(stdin, "hello new session").unwrap();
    wait_log(&sim, |r| {
        r.is("POST", "/api/chat") && !r.path.contains("cancel")
    })
    .await;
    writeln!(stdin, "/quit").unwrap();
    drop(stdin);
    let _ = child.wait();
    let _ = std::fs::remove_file(token);
    let turn = sim
        .log()
        .into_iter()
        .find(|r| r.is("POST", "/api/chat") && !r.path.contains("cancel"))
        .unwrap();
    let body = turn.body.unwrap();
    assert_eq!(
        body["runtime_session_uid"].as_str(),
        Some(created.as_str()),
        "the message went to another session than the one /new created"
    );
}

/// Whether the logged request's query holds `key=value` (both unreserved text).
fn has(r: &platform_sim::LoggedRequest, key: &str, value: &str) -> bool {
    r.query
        .split('&')
        .any(|pair| pair == format!("{key}={value}"))
}

/// The session explorer in the chat (issue 11, point 6): `/search` lists the platform's matches,
/// `/archive N` archives, `/archived` lists the Agent's archived sessions (P1 with
/// `is_archived=true`, `ordering=-archived_at`), `/unarchive N` restores one.
#[tokio::test(flavor = "multi_thread")]
async fn search_archive_archived_and_unarchive() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let token = token_file("explorer");
    let mut child = chat(&sim, &token, &[]);
    let mut stdin = child.stdin.take().unwrap();
    wait_log(&sim, |r| r.is("GET", "/api/chat")).await;
    let uid = sim.sessions()[0]["uid"].as_str().unwrap().to_owned();
    writeln!(stdin, "/search agent-ch").unwrap();
    wait_log(&sim, |r| {
        r.is("GET", "/api/v1/agent-sessions/") && has(r, "q", "agent-ch")
    })
    .await;
    writeln!(stdin, "/sessions").unwrap();
    writeln!(stdin, "/archive 1").unwrap();
    wait_log(&sim, |r| {
        r.is("POST", &format!("/api/v1/agent-sessions/{uid}/archive/"))
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    writeln!(stdin, "/archived").unwrap();
    wait_log(&sim, |r| {
        r.is("GET", "/api/v1/agent-sessions/") && has(r, "ordering", "-archived_at")
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    writeln!(stdin, "/unarchive 1").unwrap();
    wait_log(&sim, |r| {
        r.is("POST", &format!("/api/v1/agent-sessions/{uid}/unarchive/"))
    })
    .await;
    writeln!(stdin, "/quit").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(token);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("   1  agent-chat  {uid}\n")),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("(archiving {uid})")), "{stdout}");
    assert!(
        stdout.lines().any(
            |l| l.starts_with(&format!("   1  agent-chat  {uid}  (archived 20"))
                && l.ends_with(" UTC)")
        ),
        "the archived row with its archived_at, readable (issue 25, point 1): {stdout}"
    );
    assert!(stdout.contains(&format!("(restoring {uid})")), "{stdout}");
    let archived = sim
        .log()
        .into_iter()
        .find(|r| has(r, "ordering", "-archived_at"))
        .unwrap();
    assert!(has(&archived, "is_archived", "true"), "{archived:?}");
    assert!(has(&archived, "agent_uid", &sim.config().agents[0].uid));
}

/// adr-notes 8 (run status details, stop), issues 11 and 25 (point 1): from a pipe the record is
/// compact: a clean run adds no status line ("Working on your request.", "Run completed." are
/// shown in place on a terminal only); a stop shows "Run cancelled." (when it was seen: the chat
/// follows the latest snapshot), then "Run cancellation requested." once the cancel route
/// answered, in the order things happened (RU-22).
#[tokio::test(flavor = "multi_thread")]
async fn the_run_status_line_and_a_stop() {
    let sim = Sim::start(SimConfig {
        answer_delay_ms: 200,
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let token = token_file("status");
    let mut child = chat(&sim, &token, &[]);
    let mut stdin = child.stdin.take().unwrap();
    wait_log(&sim, |r| r.is("GET", "/api/chat")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    writeln!(stdin, "first").unwrap();
    // The short answer ends on its own ("Run completed.").
    tokio::time::sleep(Duration::from_millis(3000)).await;
    writeln!(stdin, "one two three four five six seven eight nine ten").unwrap();
    wait_log(&sim, |r| {
        r.is("POST", "/api/chat")
            && !r.path.contains("cancel")
            && r.body
                .as_ref()
                .is_some_and(|b| b.to_string().contains("seven"))
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    writeln!(stdin, "/stop").unwrap();
    wait_log(&sim, |r| r.is("POST", "/api/chat/session/cancel")).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    writeln!(stdin, "/quit").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(token);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in ["Working on your request.", "Thinking...", "Run completed."] {
        assert!(!stderr.contains(line), "{line:?} in:\n{stderr}");
    }
    let requested = stderr
        .find("· Run cancellation requested.")
        .unwrap_or_else(|| panic!("no stop notice in:\n{stderr}"));
    // RU-22: "Run cancelled." at the stop, before the Agent's answer.
    if let Some(cancelled) = stderr.find("· Run cancelled.") {
        assert!(cancelled < requested, "{stderr}");
    }
    assert!(!stderr.to_lowercase().contains("abort"), "{stderr}");
}

/// ADR 087 in the chat (issue 11, point 11): a message queued while an answer streams is answered
/// as its own turn, on its own line and with its own "Run completed."; a stop holds what waits
/// and says how to release it.
#[tokio::test(flavor = "multi_thread")]
async fn queued_turns_end_on_their_own_lines_and_a_held_queue_says_so() {
    let sim = Sim::start(SimConfig {
        answer_delay_ms: 150,
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let token = token_file("queue");
    let mut child = chat(&sim, &token, &[]);
    let mut stdin = child.stdin.take().unwrap();
    wait_log(&sim, |r| r.is("GET", "/api/chat")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    writeln!(stdin, "alpha beta gamma delta").unwrap();
    wait_log(&sim, |r| {
        r.is("POST", "/api/chat") && !r.path.contains("cancel")
    })
    .await;
    writeln!(stdin, "queued one").unwrap();
    // Both answers run to their end (the second goes after the first).
    let deadline = Instant::now() + Duration::from_secs(15);
    while sim
        .log()
        .iter()
        .filter(|r| r.is("POST", "/api/chat") && !r.path.contains("cancel"))
        .count()
        < 2
    {
        assert!(Instant::now() < deadline, "the queued message never went");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(2500)).await;
    // A stop with a message waiting holds it.
    writeln!(
        stdin,
        "one two three four five six seven eight nine ten eleven"
    )
    .unwrap();
    wait_log(&sim, |r| {
        r.is("POST", "/api/chat")
            && r.body
                .as_ref()
                .is_some_and(|b| b.to_string().contains("eleven"))
    })
    .await;
    writeln!(stdin, "held back").unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    writeln!(stdin, "/stop").unwrap();
    wait_log(&sim, |r| r.is("POST", "/api/chat/session/cancel")).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    writeln!(stdin, "/quit").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(token);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("You said: queued one")),
        "the queued answer starts its own line:\n{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l == "You said: alpha beta gamma delta"),
        "the first answer is whole, on its own line:\n{stdout}"
    );
    assert!(
        stderr.contains("· Held after you stopped Demo Agent. (1 waiting; /next sends the first)"),
        "{stderr}"
    );
    assert!(
        !stdout.contains("held back"),
        "the held message was not sent: {stdout}"
    );
}

/// `agent-chat` on its embedded simulator, reading a pipe, its stdout and stderr merged into
/// one pipe in the order it wrote them.
struct Merged {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    out: std::sync::Arc<(std::sync::Mutex<Vec<u8>>, std::sync::Condvar)>,
    reader: Option<std::thread::JoinHandle<()>>,
}

/// How long one wait may last before the test fails (a hang, not a speed check).
const WAIT_LIMIT: Duration = Duration::from_secs(30);

impl Merged {
    fn start(extra: &[&str]) -> Merged {
        let mut child = Command::new("sh")
            .env_remove("AGENT_CHAT_TOKEN")
            .env_remove("RUST_LOG")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" 2>&1")
            .arg(env!("CARGO_BIN_EXE_agent-chat"))
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let mut stdout = child.stdout.take().unwrap();
        let out =
            std::sync::Arc::new((std::sync::Mutex::new(Vec::new()), std::sync::Condvar::new()));
        let shared = out.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                let n = std::io::Read::read(&mut stdout, &mut buf).unwrap_or(0);
                let (lock, cvar) = &*shared;
                lock.lock().unwrap().extend_from_slice(&buf[..n]);
                cvar.notify_all();
                if n == 0 {
                    return;
                }
            }
        });
        let merged = Merged {
            child,
            stdin,
            out,
            reader: Some(reader),
        };
        merged.wait_for("Connected to Demo Agent. Write a message (/help).\n");
        merged
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.out.0.lock().unwrap()).into_owned()
    }

    /// Waits until the output holds `needle`.
    fn wait_for(&self, needle: &str) {
        let (lock, cvar) = &*self.out;
        let mut out = lock.lock().unwrap();
        let limit = Instant::now() + WAIT_LIMIT;
        while !String::from_utf8_lossy(&out).contains(needle) {
            let left = limit.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "never saw {needle:?} in:\n{}",
                String::from_utf8_lossy(&out)
            );
            out = cvar.wait_timeout(out, left).unwrap().0;
        }
    }

    fn line(&mut self, line: &str) {
        writeln!(self.stdin.as_mut().unwrap(), "{line}").unwrap();
    }

    /// Ends the input and returns the whole output once the chat has ended.
    fn finish(mut self) -> String {
        drop(self.stdin.take());
        assert!(self.child.wait().unwrap().success());
        // The reader reads to the end of the pipe.
        self.reader.take().unwrap().join().unwrap();
        self.text()
    }
}

/// The index of the line of `text` holding `needle`.
fn line_at(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"))
}

/// Issue 25, point 1, from a pipe: a message queued while an answer streams; the answer's line
/// is never split (the "queued" notice, on stderr, comes after the answer ended its line on
/// stdout, and the queued answer starts a line of its own); no transient run status and no
/// escape sequence is written.
#[test]
fn a_queued_message_never_splits_the_answer_in_a_pipe() {
    let mut chat = Merged::start(&["--answer-delay-ms", "150"]);
    chat.line("alpha beta gamma delta epsilon zeta");
    chat.wait_for("You said: alpha");
    chat.line("queued one");
    chat.wait_for("You said: queued one\n");
    let out = chat.finish();
    let answer = line_at(&out, "You said: alpha");
    assert_eq!(
        out.lines().nth(answer),
        Some("You said: alpha beta gamma delta epsilon zeta"),
        "{out}"
    );
    let notice = line_at(
        &out,
        "(queued: Demo Agent is working. Your message will send when it finishes.)",
    );
    let queued = line_at(&out, "You said: queued one");
    assert!(answer < notice && notice < queued, "{out}");
    assert_eq!(
        out.lines().nth(queued),
        Some("You said: queued one"),
        "{out}"
    );
    for status in [
        "Working on your request.",
        "Thinking...",
        "Sending queued message",
        "Run completed.",
    ] {
        assert!(!out.contains(status), "{status:?} in:\n{out}");
    }
    assert!(!out.contains('\u{1b}'), "an escape sequence: {out:?}");
}

/// Issue 25, point 1, from a pipe: Ctrl-C (SIGINT) while an answer streams stops it; the part
/// that arrived ends its line, then the Ctrl-C notice, then "Run cancelled." (the stop, RU-22)
/// when it was seen, then "Run cancellation requested." (the Agent's answer): the order in
/// which things happened.
#[cfg(unix)]
#[test]
fn a_stops_notices_come_in_the_order_things_happened_in_a_pipe() {
    let mut chat = Merged::start(&["--answer-delay-ms", "200"]);
    chat.line(
        "one two three four five six seven eight nine ten eleven twelve thirteen fourteen last",
    );
    chat.wait_for("You said: one two");
    let pid = nix::unistd::Pid::from_raw(i32::try_from(chat.child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    chat.wait_for("· Run cancellation requested.\n");
    let out = chat.finish();
    let answer = line_at(&out, "You said: one two");
    assert!(!out.lines().nth(answer).unwrap().contains("last"), "{out}");
    let ctrl_c = line_at(&out, "(stopping the answer: Ctrl-C again leaves)");
    let requested = line_at(&out, "· Run cancellation requested.");
    assert!(answer < ctrl_c && ctrl_c < requested, "{out}");
    if out.contains("· Run cancelled.") {
        assert!(line_at(&out, "· Run cancelled.") < requested, "{out}");
    }
}

/// Issue 27, point 8 (ADR 090, RU-34): `/agents` lists the Agents of the sessions with what a
/// terminal can show of their icons: the simulator's Agent has a `mask` SVG icon, loaded.
#[test]
fn agents_lists_the_icons() {
    let mut chat = Merged::start(&[]);
    chat.line("/agents");
    chat.wait_for(" bytes\n");
    let out = chat.finish();
    let svg = platform_sim::AGENT_ICON_SVG.len();
    assert!(
        out.contains(&format!(
            "  Demo Agent  agent-demo  icon: mask, image/svg+xml, {svg} bytes\n"
        )),
        "{out}"
    );
}

/// Issue 25, point 1: `/models` labels the reasoning levels it lists (no bare brackets, none
/// for a model without levels), `/effort` without a level names the levels offered.
#[test]
fn models_and_effort_read_well() {
    let mut chat = Merged::start(&[]);
    chat.line("/models");
    chat.line("/effort");
    chat.wait_for("this model offers");
    let out = chat.finish();
    assert!(
        out.contains(
            "* acme-cloud::acme-large  Acme Large  (reasoning effort: low, medium, high)\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("  acme-cloud::acme-small  Acme Small\n"),
        "{out}"
    );
    assert!(!out.contains('['), "{out}");
    assert!(
        out.contains("Use /effort LEVEL; this model offers: low, medium, high.\n"),
        "{out}"
    );
}

/// Issue 25 (found by a second reader): the input ends (Ctrl-D, a pipe's end) after `/new`
/// moved the chat off the session the last message went to; the chat leaves at once instead
/// of waiting out `--timeout` for that session's answer to show in the new session's thread.
/// The per-run limit only turns a hang into a failure.
#[test]
fn the_input_ending_after_new_leaves_at_once() {
    let mut chat = Merged::start(&["--timeout", "600"]);
    chat.line("hello");
    chat.wait_for("You said: hello\n");
    chat.line("/new");
    chat.wait_for("(starting a new session)");
    drop(chat.stdin.take());
    let pid = chat.child.id();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let killer = std::thread::spawn(move || {
        if done_rx.recv_timeout(WAIT_LIMIT).is_err() {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    });
    let status = chat.child.wait().unwrap();
    let _ = done_tx.send(());
    killer.join().unwrap();
    assert!(
        status.success(),
        "the chat did not leave: {status:?}\n{}",
        chat.text()
    );
}

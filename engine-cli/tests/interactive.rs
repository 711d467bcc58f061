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
        stdout.contains(&format!("   1  agent-chat  {uid}  (")),
        "the archived row with its archived_at: {stdout}"
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
/// shown in place on a terminal only); a stop shows "Run cancellation requested." once the
/// cancel route answered, and "Run cancelled." (when it was seen) after it, in the order things
/// happened.
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
    if let Some(cancelled) = stderr.find("· Run cancelled.") {
        assert!(requested < cancelled, "{stderr}");
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

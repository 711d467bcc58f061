#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Issue 16, items 2 to 4: failures named by their cause (each in one sentence with what to
//! try), bad addresses and an unwritable `--record` file as bad usage, the interactive mode's
//! exit status when it never connected, Ctrl-C during `send`, control characters stripped from
//! answers, RUST_LOG without the token, `--help` with examples. Every platform here is a
//! platform-sim on 127.0.0.1 started by the test, or a loopback port nothing listens on.

use std::io::{BufRead, Read, Write};
use std::process::{Command, Output, Stdio};

use platform_sim::{DEFAULT_PLATFORM_TOKEN, Fault, FaultKind, SIM_TOOL, Sim, SimConfig};

fn agent_chat() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-chat"));
    cmd.env_remove("AGENT_CHAT_TOKEN").env_remove("RUST_LOG");
    cmd
}

/// `agent-chat --platform URL` for this Environment and Agent, the sim's person, this token
/// (through AGENT_CHAT_TOKEN), then `extra`.
fn against(url: &str, environment: &str, agent: &str, token: &str, extra: &[&str]) -> Command {
    let mut cmd = agent_chat();
    cmd.env("AGENT_CHAT_TOKEN", token).args([
        "--platform",
        url,
        "--environment",
        environment,
        "--agent",
        agent,
        "--user",
        "user-demo",
        "--timeout",
        "10",
    ]);
    cmd.args(extra);
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `cmd` off the async runtime (the sim runs on it).
async fn run(mut cmd: Command, stdin: Option<&'static str>) -> Output {
    tokio::task::spawn_blocking(move || match stdin {
        None => cmd.stdin(Stdio::null()).output().unwrap(),
        Some(input) => {
            let mut child = cmd
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
            child.wait_with_output().unwrap()
        }
    })
    .await
    .unwrap()
}

/// A loopback address nothing listens on (bound, then released).
fn closed_port_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}")
}

/// The one line of stderr, asserted to be the only one.
fn only_line(out: &Output) -> String {
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {stderr:?}");
    lines[0].to_owned()
}

#[test]
fn a_bad_platform_address_is_bad_usage_with_its_reason() {
    for (url, why) in [
        ("http://[::1", "invalid IPv6 address"),
        ("http://127.0.0.1:99999", "invalid port number"),
        ("platform.example", "relative URL without a base"),
    ] {
        let out = against(url, "env-demo", "agent-demo", "t", &["send", "hi"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{url}: {out:?}");
        assert_eq!(
            only_line(&out),
            format!(
                "agent-chat: --platform {url:?} is not a URL ({why}); write it as https://platform.example"
            )
        );
        assert!(out.stdout.is_empty());
    }
    let out = against("ftp://platform.example", "e", "a", "t", &["send", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        only_line(&out),
        "agent-chat: --platform \"ftp://platform.example\" must start with http:// or https://, not ftp://"
    );
}

/// Nothing listening: one sentence naming the address and the refusal, exit 1, in `send` and
/// in the interactive chat alike; a line typed afterwards is not answered with "Choose or
/// start a session before writing.", and the engine's text is never doubled.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_connection_is_named() {
    let url = closed_port_url();
    let at = url.trim_start_matches("http://").to_owned();
    let expected = format!(
        "agent-chat: Nothing is listening at {at} (connection refused): check the --platform address and that the platform is running."
    );
    let out = run(
        against(&url, "env-demo", "agent-demo", "t", &["send", "hi"]),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(only_line(&out), expected);

    let out = run(
        against(&url, "env-demo", "agent-demo", "t", &[]),
        Some("hello\n"),
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(only_line(&out), expected);
    assert!(out.stdout.is_empty(), "{out:?}");
}

/// A wrong token (401, with the platform's message), an Environment the platform lists no
/// Agent in, an Agent the Environment does not have: each its own sentence, exit 1. An
/// `HTTPS://` address is taken (the scheme in capitals), and a TLS failure is named as one.
#[tokio::test(flavor = "multi_thread")]
async fn token_environment_agent_and_tls_failures_are_named() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let url = sim.url();
    let cases = [
        (
            "env-demo",
            "agent-demo",
            "wrong-token",
            "agent-chat: The platform refused the token (HTTP 401: Authentication credentials were not provided or are not valid.): check --token-file or AGENT_CHAT_TOKEN.".to_owned(),
        ),
        (
            "env-nope",
            "agent-demo",
            DEFAULT_PLATFORM_TOKEN,
            "agent-chat: The platform lists no Agent in Environment \"env-nope\": check --environment.".to_owned(),
        ),
        (
            "env-demo",
            "agent-nope",
            DEFAULT_PLATFORM_TOKEN,
            "agent-chat: Environment \"env-demo\" has no Agent \"agent-nope\" (it has: agent-demo): check --agent.".to_owned(),
        ),
    ];
    for (environment, agent, token, expected) in cases {
        let out = run(
            against(&url, environment, agent, token, &["send", "hi"]),
            None,
        )
        .await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert_eq!(only_line(&out), expected);
    }
    // TLS to a server that speaks plain HTTP.
    let https = url.replacen("http://", "HTTPS://", 1);
    let out = run(
        against(
            &https,
            "env-demo",
            "agent-demo",
            DEFAULT_PLATFORM_TOKEN,
            &["send", "hi"],
        ),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let line = only_line(&out);
    assert!(
        line.starts_with("agent-chat: The secure connection to 127.0.0.1 failed ("),
        "{line}"
    );
    assert!(
        line.ends_with("(or use http:// for a local platform)."),
        "{line}"
    );
    // The same address in capitals, over http: answered.
    let upper = url.replacen("http://", "HTTP://", 1);
    let out = run(
        against(
            &upper,
            "env-demo",
            "agent-demo",
            DEFAULT_PLATFORM_TOKEN,
            &["send", "hi"],
        ),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(text(&out.stdout), "You said: hi\n");
    sim.shutdown().await;
}

/// The default session cannot be opened (the platform answers 500 with a message): the
/// interactive chat says why once (the platform's message, not doubled), does not send a
/// message typed then (no "Choose or start a session before writing."), and exits 1.
#[tokio::test(flavor = "multi_thread")]
async fn an_interactive_chat_that_never_connected_exits_1() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    sim.fault(
        Fault::once(
            "POST",
            "get-or-create-session",
            FaultKind::Status(500, serde_json::json!({"detail": "Agent store is down."})),
        )
        .repeat(100),
    );
    let out = run(
        against(
            &sim.url(),
            "env-demo",
            "agent-demo",
            DEFAULT_PLATFORM_TOKEN,
            &[],
        ),
        Some("hello\n"),
    )
    .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let reason = "The platform did not open the Agent's session: Agent store is down.";
    assert!(
        stderr.contains(&format!("{reason}\nType /retry to try again.\n")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("(not sent: {reason} Type /retry to try again.)")),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(&format!("agent-chat: the chat never connected: {reason}\n")),
        "{stderr}"
    );
    assert!(!stderr.contains("Choose or start a session"), "{stderr}");
    assert!(!stderr.contains("could not be opened. The"), "{stderr}");
    assert!(
        !sim.log().iter().any(|r| r.path.ends_with("/api/chat")),
        "a message was sent: {:#?}",
        sim.log()
    );
    sim.shutdown().await;
}

/// `--record` into a folder that does not exist: bad usage at once (exit 2), before anything
/// is sent.
#[test]
fn an_unwritable_record_file_is_bad_usage_at_once() {
    let path = std::env::temp_dir()
        .join(format!("agent-chat-no-such-dir-{}", std::process::id()))
        .join("trace.jsonl");
    let out = agent_chat()
        .arg("--record")
        .arg(&path)
        .args(["send", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let line = only_line(&out);
    assert!(
        line.starts_with(&format!(
            "agent-chat: cannot write the trace file {}: ",
            path.display()
        )),
        "{line}"
    );
    assert!(out.stdout.is_empty(), "nothing was sent: {out:?}");
}

/// Control characters and escape sequences in an answer are not printed; every answer ends its
/// line, two piped answers never run together.
#[test]
fn answers_are_printed_without_control_characters_each_on_its_line() {
    let mut child = agent_chat()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"red \x1b[31mtext\x1b[0m and a bell\x07 here\nsecond\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout, "You said: red text and a bell here\nYou said: second\n",
        "{stdout:?}"
    );
    // Each answer's own lines are shown, the last one's too (the input ended before it came);
    // the record is compact (issue 25, point 1): no run status line for a clean run.
    let stderr = text(&out.stderr);
    assert_eq!(stderr.matches("· count_words: ok\n").count(), 2, "{stderr}");
    for status in ["Run completed.", "Working on your request.", "Thinking..."] {
        assert!(!stderr.contains(status), "{stderr}");
    }
}

/// `RUST_LOG=trace` logs to stderr, and the token appears nowhere: not in a run that answers,
/// not in one the platform refuses.
#[tokio::test(flavor = "multi_thread")]
async fn rust_log_trace_never_shows_the_token() {
    let token = "tok-SECRET-4f9c2a";
    let sim = Sim::start(SimConfig {
        platform_token: token.to_owned(),
        ..SimConfig::default()
    })
    .await
    .unwrap();
    for (given, code) in [(token, 0), ("tok-SECRET-wrong", 1)] {
        let mut cmd = against(
            &sim.url(),
            "env-demo",
            "agent-demo",
            given,
            &["send", "hello"],
        );
        cmd.env("RUST_LOG", "trace");
        let out = run(cmd, None).await;
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        assert!(stderr.contains("TRACE"), "no trace output: {stderr}");
        let all = format!("{}{stderr}", text(&out.stdout));
        assert!(!all.contains("SECRET"), "the token is in the output");
    }
    sim.shutdown().await;
}

/// Ctrl-C (SIGINT) while `send` streams its answer: the answer stops, its line is closed, the
/// trace is written, exit 130.
#[cfg(unix)]
#[test]
fn ctrl_c_during_send_stops_the_answer() {
    let trace = std::env::temp_dir().join(format!("agent-chat-int-{}.jsonl", std::process::id()));
    let mut child = agent_chat()
        .args(["--answer-delay-ms", "200", "--record"])
        .arg(&trace)
        .args([
            "send",
            "alpha beta gamma delta epsilon zeta eta theta iota kappa omega",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    // Wait for the answer to be streaming: its first words.
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("said:") {
        let buf = stdout.fill_buf().unwrap();
        assert!(!buf.is_empty(), "the answer never came");
        seen.extend_from_slice(buf);
        let n = buf.len();
        stdout.consume(n);
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    stdout.read_to_end(&mut seen).unwrap();
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let printed = text(&seen);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(printed.ends_with('\n'), "the line is open: {printed:?}");
    assert!(!printed.contains("omega"), "the answer ran to its end");
    assert!(
        stderr.ends_with("agent-chat: interrupted: the answer was stopped\n"),
        "{stderr}"
    );
    let written = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    assert!(written.contains("alpha beta"), "{written}");
}

#[test]
fn help_shows_examples_and_exit_statuses() {
    let out = agent_chat().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = text(&out.stdout);
    for line in [
        "Examples:",
        "  agent-chat --answer-delay-ms 300    a slowly streamed answer, to try Ctrl-C or /stop",
        "In the chat: /help lists the commands; Ctrl-C stops the running answer, a second Ctrl-C (or",
        "Exit status: 0 answered",
        "--answer-delay-ms <MS>",
    ] {
        assert!(help.contains(line), "missing {line:?} in:\n{help}");
    }
}

/// Ctrl-C (SIGINT) while the piped chat waits for a waking Agent: it leaves at once with 130,
/// says what it was waiting for, and writes the trace.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_before_the_chat_is_ready_exits_130() {
    use platform_sim::RuntimeBehaviour;
    let mut config = SimConfig::default();
    for agent in &mut config.agents {
        agent.runtime = RuntimeBehaviour::Waking { checks: 100_000 };
    }
    let sim = Sim::start(config).await.unwrap();
    let trace = std::env::temp_dir().join(format!("agent-chat-wait-{}.jsonl", std::process::id()));
    let mut cmd = against(
        &sim.url(),
        "env-demo",
        "agent-demo",
        DEFAULT_PLATFORM_TOKEN,
        &["--record", trace.to_str().unwrap()],
    );
    let out = tokio::task::spawn_blocking(move || {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut seen = String::new();
        // The wake is shown: the chat is waiting.
        while !seen.contains("is starting now") {
            let mut line = String::new();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "{seen}");
            seen.push_str(&line);
        }
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
        stderr.read_to_string(&mut seen).unwrap();
        let status = child.wait().unwrap();
        (status, seen)
    })
    .await
    .unwrap();
    let (status, stderr) = out;
    assert_eq!(status.code(), Some(130), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("agent-chat: interrupted before the chat was ready (")
            && last.contains("is starting now"),
        "{stderr}"
    );
    let written = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    assert!(written.lines().count() > 3, "{written}");
    sim.shutdown().await;
}

/// A 403 is not always a bad token: the platform forbids an Environment the token's user has no
/// access to. The sentence names both, with the platform's message. A 404 carrying the
/// platform's own error message is the platform answering (an unknown Environment or Agent),
/// not "not the platform's API": its message is shown.
#[tokio::test(flavor = "multi_thread")]
async fn a_forbidden_environment_and_a_404_with_the_platform_message_are_named() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let url = sim.url();
    let cases = [
        (
            403,
            serde_json::json!({"detail": "You do not have access to this environment."}),
            "agent-chat: The platform refused access (HTTP 403: You do not have access to this environment.): check that the token is right (--token-file or AGENT_CHAT_TOKEN) and that its user has access to Environment \"env-demo\" and its Agent.",
        ),
        (
            404,
            serde_json::json!({"message": "Organization environment not found."}),
            "agent-chat: The platform answered HTTP 404 to the session list: Organization environment not found. (an unknown Environment or Agent?): check --environment and --agent, and the --platform address.",
        ),
    ];
    for (status, body, said) in cases {
        sim.fault(Fault::once(
            "GET",
            "agent-sessions",
            FaultKind::Status(status, body),
        ));
        let out = run(
            against(
                &url,
                "env-demo",
                "agent-demo",
                DEFAULT_PLATFORM_TOKEN,
                &["send", "hi"],
            ),
            None,
        )
        .await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert_eq!(only_line(&out), said);
    }
    sim.shutdown().await;
}

/// The Agent needs a model before its session is created (platform-sim's `needs_model`): a
/// message typed meanwhile is not sent, and the chat says what to type, not the engine's
/// "Choose or start a session before writing."
#[tokio::test(flavor = "multi_thread")]
async fn a_message_while_a_model_is_needed_says_how_to_choose_one() {
    let mut config = SimConfig::default();
    config.agents[0].needs_model = true;
    let sim = Sim::start(config).await.unwrap();
    let out = run(
        against(
            &sim.url(),
            "env-demo",
            "agent-demo",
            DEFAULT_PLATFORM_TOKEN,
            &[],
        ),
        Some("hello\n"),
    )
    .await;
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "(not sent: A model is needed to start this session. Type /models, then /choose ID [LEVEL].)"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("Choose or start a session"), "{stderr}");
    assert!(!stderr.contains("no_session_selected"), "{stderr}");
    assert!(
        !sim.log().iter().any(|r| r.path.ends_with("/api/chat")),
        "a message was sent: {:#?}",
        sim.log()
    );
    sim.shutdown().await;
}

/// `agent-chat send ... | head -c 3`: the reader goes away mid-answer. The command stops the
/// answer and ends quietly with 141 (128 + SIGPIPE), without a panic ("failed printing to
/// stdout: Broken pipe", exit 101).
#[test]
fn send_into_a_closed_pipe_ends_quietly() {
    let mut child = agent_chat()
        .args(["--answer-delay-ms", "100", "send", "a b c d e f g h i j"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 3];
    stdout.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"You");
    // The reader goes away, as `head -c 3` does.
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    // Only the line of the tool call that came before the text (issue 24, point 4).
    assert_eq!(stderr, format!("· {SIM_TOOL}: ok\n"));
}

/// The Agent's failure text carries escape sequences (a window title, a screen clear): `send`
/// prints it without them.
#[tokio::test(flavor = "multi_thread")]
async fn a_failure_text_from_the_agent_is_printed_without_control_characters() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    sim.fault(Fault::once(
        "POST",
        "/api/chat",
        FaultKind::Status(
            500,
            serde_json::json!({"detail": "Runtime \u{1b}]0;pwned\u{7}ex\u{1b}[2Jploded.\u{7}"}),
        ),
    ));
    let out = run(
        against(
            &sim.url(),
            "env-demo",
            "agent-demo",
            DEFAULT_PLATFORM_TOKEN,
            &["send", "hello"],
        ),
        None,
    )
    .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Runtime exploded."), "{stderr:?}");
    assert!(
        !stderr.contains(['\u{1b}', '\u{7}']),
        "a control character was printed: {stderr:?}"
    );
    sim.shutdown().await;
}

/// `--record` over an existing trace: a run that fails before it connects (a bad address, a
/// refused connection) leaves the file as it was; a good run replaces it with its trace. A file
/// the failed run would have created is not left behind.
#[tokio::test(flavor = "multi_thread")]
async fn an_existing_record_file_survives_a_failed_start() {
    let dir = std::env::temp_dir();
    let keep = dir.join(format!("agent-chat-keep-{}.jsonl", std::process::id()));
    let old = "{\"a good trace\":true}\n";
    std::fs::write(&keep, old).unwrap();
    let keep_s = keep.to_str().unwrap().to_owned();
    let out = run(
        against(
            "http://[::1",
            "env-demo",
            "agent-demo",
            "t",
            &["--record", &keep_s, "send", "hi"],
        ),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(std::fs::read_to_string(&keep).unwrap(), old);
    let out = run(
        against(
            &closed_port_url(),
            "env-demo",
            "agent-demo",
            "t",
            &["--record", &keep_s, "send", "hi"],
        ),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(std::fs::read_to_string(&keep).unwrap(), old);
    // A new file, and a run that fails: no empty file is left.
    let fresh = dir.join(format!("agent-chat-fresh-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&fresh);
    let out = run(
        against(
            &closed_port_url(),
            "env-demo",
            "agent-demo",
            "t",
            &["--record", fresh.to_str().unwrap(), "send", "hi"],
        ),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(!fresh.exists(), "an empty trace file was left behind");
    // A good run (the embedded simulator): the trace replaces the file.
    let mut cmd = agent_chat();
    cmd.args(["--record", &keep_s, "send", "hi"]);
    let out = run(cmd, None).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let written = std::fs::read_to_string(&keep).unwrap();
    assert!(!written.contains("a good trace"), "{written}");
    let first = written.lines().next().unwrap_or_default();
    assert!(
        serde_json::from_str::<serde_json::Value>(first).is_ok(),
        "{written}"
    );
    let _ = std::fs::remove_file(&keep);
}

/// A trace that cannot be written at the end (a full device) is an error: exit 1 with why,
/// though the answer came.
#[cfg(target_os = "linux")]
#[test]
fn a_trace_that_cannot_be_written_exits_1() {
    let out = agent_chat()
        .args(["--record", "/dev/full", "send", "hi"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(text(&out.stdout), "You said: hi\n");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // After the line of the answer's tool call (issue 24, point 4).
    let tool_line = format!("· {SIM_TOOL}: ok\n");
    assert!(
        stderr
            .strip_prefix(&tool_line)
            .is_some_and(|rest| rest.starts_with("agent-chat: cannot write the trace /dev/full: ")),
        "{stderr}"
    );
}

/// A message the engine could not send (a local runtime nothing listens at): the chat says so
/// once, "(not sent [code]: ...)", not also as "(failed [code] ...)", its source label once
/// (RU-13).
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_send_is_said_once() {
    let url = closed_port_url();
    let mut cmd = agent_chat();
    cmd.args(["--local", &url, "--timeout", "5"]);
    let out = run(cmd, Some("hello\n")).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("[runtime_unavailable]"))
        .collect();
    assert_eq!(
        said,
        [
            "(not sent [runtime_unavailable]: Source: Request was never sent. Local Agent readiness: the local Agent did not answer.)"
        ],
        "{stderr}"
    );
}

/// A build without a TLS feature (`--no-default-features`) cannot reach an `https` platform:
/// it says so, not "Could not reach".
#[cfg(not(any(feature = "rustls", feature = "rustls-ring", feature = "native-tls")))]
#[tokio::test(flavor = "multi_thread")]
async fn a_build_without_tls_says_so_for_an_https_platform() {
    let url = closed_port_url().replacen("http://", "https://", 1);
    let at = url.trim_start_matches("https://").to_owned();
    let out = run(
        against(&url, "env-demo", "agent-demo", "t", &["send", "hi"]),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        only_line(&out),
        format!(
            "agent-chat: This agent-chat was built without TLS (no rustls, rustls-ring or native-tls feature), so it cannot reach https://{at}: install a build with one (the default has rustls), or use http:// for a local platform."
        )
    );
}

/// Issue 25, point 5: `--local` with nothing listening says so at once, naming the address
/// and the refusal, then waits (the runtime may be starting) and, timed out, names the
/// address again; exit 3.
#[test]
fn a_local_runtime_not_listening_is_named_at_once() {
    let url = closed_port_url();
    let at = url.trim_start_matches("http://").to_owned();
    let out = agent_chat()
        .args(["--local", &url, "--timeout", "1", "send", "hi"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert_eq!(
        lines[0],
        format!(
            "agent-chat: Nothing is listening at {at} (connection refused): waiting up to 1 s for Local Agent to start (--timeout; Ctrl-C stops)."
        )
    );
    assert!(
        lines[1].starts_with(&format!(
            "agent-chat: timed out after 1 s waiting for the session at {url}"
        )),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

/// Issue 25, point 5: an address without its scheme is bad usage whose hint is the person's
/// own address with one, never a form the next run refuses (a same-origin path, or `https`
/// for a local runtime).
#[test]
fn a_missing_scheme_is_suggested_back() {
    let out = agent_chat()
        .args(["--local", "127.0.0.1:8787", "send", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        only_line(&out),
        "agent-chat: --local \"127.0.0.1:8787\" needs its scheme: write it as http://127.0.0.1:8787"
    );
    let out = agent_chat()
        .args(["--local", "example.com:8787", "send", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let line = only_line(&out);
    assert!(
        !line.contains("/__agent__") && !line.contains("https://"),
        "{line}"
    );
    let out = against("localhost:8080", "e", "a", "t", &["send", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(only_line(&out).ends_with("(write it as http://localhost:8080)"));
}

/// A loopback server that answers every request with `response` (raw HTTP/1.1), or never
/// answers when it is `None`; it lives as long as the test process.
fn raw_server(response: Option<&'static str>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            match response {
                Some(r) => {
                    let _ = stream.write_all(r.as_bytes());
                }
                None => held.push(stream),
            }
        }
    });
    url
}

/// Issue 25, point 5: a platform that does not answer in time is a time out (exit 3, as
/// documented), not a failure (1).
#[tokio::test(flavor = "multi_thread")]
async fn a_platform_that_never_answers_times_out_with_3() {
    let url = raw_server(None);
    let mut cmd = agent_chat();
    cmd.env("AGENT_CHAT_TOKEN", "t").args([
        "--platform",
        &url,
        "--environment",
        "env-demo",
        "--agent",
        "agent-demo",
        "--user",
        "user-demo",
        "--timeout",
        "1",
        "send",
        "hi",
    ]);
    let out = run(cmd, None).await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        only_line(&out).contains("did not answer within 1 s"),
        "{out:?}"
    );
}

/// Issue 25, point 5: a server that is not the platform is described by its page's title,
/// never quoted whole.
#[tokio::test(flavor = "multi_thread")]
async fn a_non_platform_html_page_is_not_quoted() {
    let url = raw_server(Some(
        "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 120\r\nConnection: close\r\n\r\n<!DOCTYPE html><html><head><title>Welcome to nginx</title></head><body><h1>Not Found</h1><p>nginx</p></body></html>     ",
    ));
    let out = run(
        against(&url, "env-demo", "agent-demo", "t", &["send", "hi"]),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let line = only_line(&out);
    assert!(
        line.contains("not as the platform's API (HTTP 404 to /api/v1/agent-sessions/: an HTML page titled \"Welcome to nginx\")"),
        "{line}"
    );
    assert!(!line.contains('<'), "{line}");
}

/// Issue 25 (found by a second reader): `--local` at a server that answers, but not as a local
/// Agent runtime does (here a platform, which wants a token), says why at once instead of
/// waiting silently until the time out. The platform's stand-in answers `/ready` as an address
/// outside what it serves (RU-50).
#[tokio::test(flavor = "multi_thread")]
async fn a_local_address_that_is_no_local_runtime_says_why_at_once() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let mut cmd = agent_chat();
    cmd.args(["--local", &sim.url(), "--timeout", "3", "send", "hi"]);
    let out = run(cmd, None).await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert_eq!(
        lines[0],
        format!(
            "agent-chat: Local Agent is not running: The stand-in answers the platform API and \
             the Agent's runtime only, not {}/ready. (looking again every 5 s)",
            sim.url()
        )
    );
    assert!(
        lines[1].starts_with("agent-chat: timed out after 3 s"),
        "{stderr}"
    );
    sim.shutdown().await;
}

#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! `agent-chat` in a real terminal (issue 16): the built binary under a pseudo-terminal
//! (rexpect), against its embedded simulator with a slow answer (`--answer-delay-ms`). Every
//! step waits for the text it expects (rexpect's per-expectation limit only turns a hang into a
//! failure); nothing sleeps.

use std::process::Command;

use rexpect::session::PtySession;

/// How long one expectation may wait before the test fails (a hang, not a speed check).
const EXPECT_LIMIT_MS: u64 = 30_000;

/// The line the chat prints once the person can write.
const READY: &str = "Connected to Demo Agent. Write a message (/help).";

/// A message whose echoed answer streams for several seconds at 200 ms a word. Its first 80
/// columns ("You said: one ... twelve") are printed as a line of their own once the thirteenth
/// word arrives: the tests wait for that line to know the answer is streaming.
const LONG: &str = "one two three four five six seven eight nine ten eleven twelve thirteen \
    fourteen fifteen sixteen seventeen eighteen nineteen twenty twentyone twentytwo twentythree \
    twentyfour twentyfive last";

/// The engine's stop notices (adr-notes 8).
const STOPPED: &str = r"· Run cancel(led|lation requested)\.";

/// The first row of the answer to [`LONG`].
const FIRST_ROW: &str =
    r"You said: one two three four five six seven eight nine ten eleven twelve\r?\n";

/// Checks the rest of the answer to [`LONG`] in `text`: never its last word, never text the
/// person typed (`typed`), and every line of it closed. Returns how many such lines there were.
fn check_rest_of_answer(text: &str, typed: &str) -> usize {
    let segments: Vec<&str> = text.split('\n').collect();
    let mut lines = 0;
    for (i, segment) in segments.iter().enumerate() {
        assert!(
            !segment.contains("last"),
            "the answer ran to its end: {text:?}"
        );
        if segment.contains("teen") || segment.contains("twenty") {
            lines += 1;
            assert!(
                !segment.contains(typed),
                "typed text in the answer: {text:?}"
            );
            assert!(
                i + 1 < segments.len(),
                "the answer's line is open: {text:?}"
            );
        }
    }
    lines
}

fn start(extra: &[&str]) -> PtySession {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-chat"));
    cmd.env_remove("AGENT_CHAT_TOKEN")
        .env_remove("RUST_LOG")
        .env("TERM", "xterm")
        .args(extra);
    let options = rexpect::reader::Options::new()
        .timeout_ms(Some(EXPECT_LIMIT_MS))
        .strip_ansi_escape_codes(true);
    let mut p = rexpect::spawn_with_options(cmd, options).unwrap();
    p.exp_string(READY).unwrap();
    p.exp_string("> ").unwrap();
    p
}

fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("agent-chat-pty-{name}-{}", std::process::id()))
}

/// The exit code of the ended session.
fn exit_code(p: &PtySession) -> i32 {
    match p.process().wait().unwrap() {
        nix::sys::wait::WaitStatus::Exited(_, code) => code,
        other => panic!("not exited: {other:?}"),
    }
}

/// The prompt shows, a message streams an answer that ends its line, and the Up arrow recalls
/// the last line (sent again as the same message, never as `^[[A`).
#[test]
fn the_prompt_an_answer_and_the_history() {
    let mut p = start(&["--answer-delay-ms", "20"]);
    p.send_line("hello there").unwrap();
    let before = p.exp_regex(r"You said: hello there\r?\n").unwrap().0;
    assert!(
        !before.contains("You said:"),
        "an answer before this one: {before:?}"
    );
    p.exp_string("· Run completed.").unwrap();
    p.exp_string("> ").unwrap();
    // Up, then Enter: the same line again.
    p.send("\x1b[A").unwrap();
    p.send("\r").unwrap();
    p.flush().unwrap();
    let (between, answer) = p.exp_regex(r"You said: [^\r\n]*\r?\n").unwrap();
    assert_eq!(answer.trim_end(), "You said: hello there", "{between:?}");
    assert!(!between.contains("[A"), "{between:?}");
    p.exp_string("· Run completed.").unwrap();
    p.send_line("/quit").unwrap();
    let rest = p.exp_eof().unwrap();
    assert!(!rest.contains("You said: [A"), "{rest:?}");
    assert_eq!(exit_code(&p), 0);
}

/// Ctrl-C while an answer streams stops it: its line is closed (what arrived, nothing typed in
/// it), the stop notice shows; a second Ctrl-C leaves, exit 0, and the `--record` trace is
/// written.
#[test]
fn ctrl_c_stops_the_answer_and_a_second_one_leaves() {
    let trace = temp("trace.jsonl");
    let _ = std::fs::remove_file(&trace);
    let mut p = start(&[
        "--answer-delay-ms",
        "200",
        "--record",
        trace.to_str().unwrap(),
    ]);
    p.send_line(LONG).unwrap();
    p.exp_regex(FIRST_ROW).unwrap();
    // Typed while the answer streams, never sent: it stays on the prompt's line.
    p.send("xyz").unwrap();
    p.flush().unwrap();
    p.exp_string("xyz").unwrap();
    p.send_control('c').unwrap();
    let (stopping, _) = p
        .exp_regex(r"\(stopping the answer: Ctrl-C again leaves\)")
        .unwrap();
    // The engine's stop notice: "Run cancelled." at once, then "Run cancellation requested."
    // once the cancel route answered (snapshots published close together may show the second
    // only).
    let (stopped, _) = p.exp_regex(STOPPED).unwrap();
    // What arrived after the first row is printed once the answer stops, on its own line.
    assert!(
        check_rest_of_answer(&format!("{stopping}{stopped}"), "xyz") >= 1,
        "the rest of the answer: {stopping:?} {stopped:?}"
    );
    p.exp_string("> ").unwrap();
    p.send_control('c').unwrap();
    let rest = p.exp_eof().unwrap();
    assert!(!rest.contains("last"), "{rest:?}");
    assert_eq!(exit_code(&p), 0);
    let written = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    assert!(written.lines().count() > 3, "{written}");
    for line in written.lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    }
    assert!(written.contains(LONG), "the message is in the trace");
}

/// Two Ctrl-C in a row in the middle of an answer: the chat leaves with the answer's line
/// closed and the trace written.
#[test]
fn two_ctrl_c_mid_answer_leave_with_the_line_closed() {
    let trace = temp("twice.jsonl");
    let _ = std::fs::remove_file(&trace);
    let mut p = start(&[
        "--answer-delay-ms",
        "200",
        "--record",
        trace.to_str().unwrap(),
    ]);
    p.send_line(LONG).unwrap();
    p.exp_regex(FIRST_ROW).unwrap();
    p.send_control('c').unwrap();
    // The second Ctrl-C once the first was taken (rustyline drops input that arrived in the
    // same read as a Ctrl-C), while the answer is still being stopped.
    let before = p
        .exp_string("(stopping the answer: Ctrl-C again leaves)")
        .unwrap();
    p.send_control('c').unwrap();
    let rest = format!("{before}{}", p.exp_eof().unwrap());
    // What arrived after the first row is on a line of its own that ends.
    assert!(check_rest_of_answer(&rest, "\u{0}") >= 1, "{rest:?}");
    assert_eq!(exit_code(&p), 0);
    let written = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    assert!(written.contains(LONG), "{written}");
}

/// The notices: a message written while the Agent works is queued; a stop holds it and says
/// how to release it; `/next` releases it (its answer follows); commands with nothing to do say
/// so.
#[test]
fn queue_hold_and_commands_with_nothing_to_do() {
    let mut p = start(&["--answer-delay-ms", "200"]);
    p.send_line(LONG).unwrap();
    p.exp_string("· Writing a response...").unwrap();
    p.send_line("queued one").unwrap();
    p.exp_string("(queued: it goes when the agent finishes)")
        .unwrap();
    p.send_line("/stop").unwrap();
    p.exp_string("· Held after you stopped Demo Agent. (1 waiting; /next sends the first)")
        .unwrap();
    p.send_line("/next").unwrap();
    p.exp_string("(the first of 1 queued message(s) goes once the agent is idle)")
        .unwrap();
    p.exp_regex(r"You said: queued one\r?\n").unwrap();
    p.exp_string("· Run completed.").unwrap();
    p.send_line("/next").unwrap();
    p.exp_string("(nothing is queued)").unwrap();
    p.send_line("/choose acme::large").unwrap();
    p.exp_string("(no session is waiting for a model: /model ID changes this one's)")
        .unwrap();
    p.send_line("/retry").unwrap();
    p.exp_string("(nothing to retry: the default session is not in error)")
        .unwrap();
    p.send_line("/stop").unwrap();
    p.exp_string("[Unable to stop session] There is no running work to stop.")
        .unwrap();
    // Ctrl-D on an empty line leaves.
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
    assert_eq!(exit_code(&p), 0);
}

/// `/switch N` shows the session's history.
#[test]
fn switch_shows_the_history() {
    let mut p = start(&["--answer-delay-ms", "10"]);
    p.send_line("remember this").unwrap();
    p.exp_regex(r"You said: remember this\r?\n").unwrap();
    p.exp_string("· Run completed.").unwrap();
    p.send_line("/sessions").unwrap();
    p.exp_regex(r"\*  1  agent-chat  \S+").unwrap();
    p.send_line("/switch 1").unwrap();
    p.exp_string("(switching to ").unwrap();
    p.exp_regex(r"you: remember this\r?\n").unwrap();
    p.exp_regex(r"agent: You said: remember this\r?\n").unwrap();
    p.exp_string("(end of the history)").unwrap();
    p.send_line("/quit").unwrap();
    p.exp_eof().unwrap();
    assert_eq!(exit_code(&p), 0);
}

/// In a terminal too, a platform nothing listens on is named in one sentence, no prompt is
/// offered, and the exit status is 1.
#[test]
fn an_unreachable_platform_in_a_terminal_exits_1_with_its_cause() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-chat"));
    cmd.env("AGENT_CHAT_TOKEN", "t")
        .env_remove("RUST_LOG")
        .env("TERM", "xterm")
        .args(["--platform", &format!("http://127.0.0.1:{port}")])
        .args(["--environment", "e", "--agent", "a", "--user", "u"]);
    let options = rexpect::reader::Options::new()
        .timeout_ms(Some(EXPECT_LIMIT_MS))
        .strip_ansi_escape_codes(true);
    let mut p = rexpect::spawn_with_options(cmd, options).unwrap();
    let out = p.exp_eof().unwrap();
    assert_eq!(
        out.trim_end(),
        format!(
            "agent-chat: Nothing is listening at 127.0.0.1:{port} (connection refused): check the --platform address and that the platform is running."
        )
    );
    assert!(!out.contains("> "), "a prompt: {out:?}");
    assert_eq!(exit_code(&p), 1);
}

/// SIGTERM while the line editor reads (its raw mode on): the chat ends like a second Ctrl-C,
/// with exit status 143, the `--record` trace written and the terminal back in its ordinary
/// mode (canonical input, signals), not left raw.
#[test]
fn sigterm_writes_the_trace_and_restores_the_terminal() {
    use nix::sys::termios::{LocalFlags, tcgetattr};
    let trace = temp("sigterm.jsonl");
    let _ = std::fs::remove_file(&trace);
    let mut p = start(&[
        "--answer-delay-ms",
        "20",
        "--record",
        trace.to_str().unwrap(),
    ]);
    p.send_line("hello there").unwrap();
    p.exp_string("· Run completed.").unwrap();
    p.exp_string("> ").unwrap();
    let pty = p.process().get_file_handle().unwrap();
    // The editor reads: the terminal is raw.
    let raw = tcgetattr(&pty).unwrap();
    assert!(!raw.local_flags.contains(LocalFlags::ICANON), "{raw:?}");
    p.process_mut()
        .signal(nix::sys::signal::Signal::SIGTERM)
        .unwrap();
    p.exp_eof().unwrap();
    match p.process().wait().unwrap() {
        nix::sys::wait::WaitStatus::Exited(_, code) => assert_eq!(code, 143),
        other => panic!("not exited: {other:?}"),
    }
    let mode = tcgetattr(&pty).unwrap();
    assert!(
        mode.local_flags
            .contains(LocalFlags::ICANON | LocalFlags::ISIG),
        "the terminal was left raw: {mode:?}"
    );
    let written = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    assert!(written.contains("hello there"), "{written}");
}

/// Ctrl-C at an empty prompt: the prompt's line is erased (cursor up, row cleared) before the
/// notice, so no stray "> " line stays above it; the prompt comes back below the notice.
#[test]
fn ctrl_c_at_an_empty_prompt_leaves_no_stray_prompt_line() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-chat"));
    cmd.env_remove("AGENT_CHAT_TOKEN")
        .env_remove("RUST_LOG")
        .env("TERM", "xterm");
    // The terminal's bytes as they are: the erasing sequence is what is checked.
    let options = rexpect::reader::Options::new()
        .timeout_ms(Some(EXPECT_LIMIT_MS))
        .strip_ansi_escape_codes(false);
    let mut p = rexpect::spawn_with_options(cmd, options).unwrap();
    p.exp_string(READY).unwrap();
    p.exp_string("> ").unwrap();
    p.send_control('c').unwrap();
    let before = p
        .exp_string("(nothing is running: Ctrl-C again, Ctrl-D or /quit leaves)")
        .unwrap();
    assert!(
        before.contains("\u{1b}[1A\r\u{1b}[2K"),
        "the prompt's line was not erased: {before:?}"
    );
    p.exp_string("> ").unwrap();
    p.send_line("/quit").unwrap();
    p.exp_eof().unwrap();
    assert_eq!(exit_code(&p), 0);
}

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    missing_docs
)]
//! `agent-chat replay`: its output and its failures (each test pinned a bug found in review,
//! now fixed).

use std::process::{Command, Stdio};

fn agent_chat() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-chat"));
    cmd.env_remove("AGENT_CHAT_TOKEN");
    cmd.env("RUST_BACKTRACE", "0");
    cmd
}

fn trace_file(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../spec-tests/traces")
        .join(name)
}

fn temp_file(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("agent-chat-review-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// `agent-chat replay FILE | head` is how a long timeline is read. When the reader goes away
/// the command panics ("failed printing to stdout: Broken pipe") and exits 101 instead of
/// stopping quietly.
#[test]
fn replay_into_a_closed_pipe_does_not_panic() {
    let mut child = agent_chat()
        .arg("replay")
        .arg(trace_file("default-session-to-first-answer.jsonl"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away at once, as `head -1` does after its line.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(out.status.code(), Some(101), "{stderr}");
}

/// TRACES.md shows the timeline one entry after the other; the command prints a blank line
/// after every entry (`println!` of a rendering that already ends in a newline).
#[test]
fn replay_prints_the_timeline_as_documented() {
    let out = agent_chat()
        .arg("replay")
        .arg(trace_file("requested-session-unavailable.jsonl"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("    1         0  start: platform https://platform.test, seed 1, startUnixMs 1790928000000\n    2            # "),
        "{stdout}"
    );
    assert!(!stdout.contains("\n\n"), "{stdout}");
}

/// A trace with one line that is not UTF-8 (a hand edit, a truncated copy) is a malformed line:
/// the message should name it, as every other malformed line is named. The command refuses the
/// whole file as unreadable instead, without a line number.
#[test]
fn a_line_that_is_not_utf8_is_named() {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(
        br#"{"trace": "agent-chat-engine", "version": 1, "config": {"platformBaseUrl": "https://platform.test"}}"#,
    );
    bytes.extend_from_slice(
        b"\n{\"at\": 0, \"input\": {\"input\": \"is_visible\", \"value\": true}}\n",
    );
    bytes.extend_from_slice(b"{\"note\": \"caf\xe9\"}\n");
    let path = temp_file("latin1.jsonl", &bytes);
    let out = agent_chat().arg("replay").arg(&path).output().unwrap();
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("line 3"), "{stderr}");
}

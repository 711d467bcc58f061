#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! `agent-chat` as a person runs it: the non-interactive mode against the embedded simulator,
//! and the clear refusals.

use std::process::Command;

fn agent_chat() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-chat"));
    cmd.env_remove("AGENT_CHAT_TOKEN");
    cmd
}

#[test]
fn send_prints_the_answer_and_exits_zero() {
    let out = agent_chat()
        .args(["send", "hello from the test"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout.contains("You said: hello from the test"), "{stdout}");
}

#[test]
fn a_real_platform_needs_a_token_and_never_echoes_it() {
    let out = agent_chat()
        .args(["--platform", "http://127.0.0.1:9", "send", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("token"), "{stderr}");

    let out = agent_chat()
        .env("AGENT_CHAT_TOKEN", "secret-token-value")
        .args([
            "--platform",
            "http://127.0.0.1:9",
            "--environment",
            "env-1",
            "--agent",
            "agent-1",
            "--user",
            "user-1",
            "--timeout",
            "3",
            "send",
            "hi",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains("secret-token-value"), "{all}");
    assert!(all.contains("agent-chat:"), "{all}");
}

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    missing_docs
)]
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

/// Issue 11 (typed send failures): `agent-chat send` names the failure's stable code beside
/// its text and exits 1 when the Agent answers the message request with an error.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_send_names_its_code() {
    use platform_sim::{DEFAULT_PLATFORM_TOKEN, Fault, FaultKind, Sim, SimConfig};
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    sim.fault(Fault::once(
        "POST",
        "/api/chat",
        FaultKind::Status(500, serde_json::json!({"detail": "Runtime exploded."})),
    ));
    let token = std::env::temp_dir().join(format!("agent-chat-code-{}", std::process::id()));
    std::fs::write(&token, DEFAULT_PLATFORM_TOKEN).unwrap();
    let config = sim.config();
    let out = tokio::task::spawn_blocking({
        let url = sim.url();
        let token = token.clone();
        let env = config.environment_uid.clone();
        let agent = config.agents[0].uid.clone();
        let user = config.person_uid.clone();
        move || {
            agent_chat()
                .args(["--platform", &url, "--token-file"])
                .arg(&token)
                .args(["--environment", &env, "--agent", &agent, "--user", &user])
                .args(["send", "hello"])
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    let _ = std::fs::remove_file(&token);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("[agent_http_error]"), "{stderr}");
    assert!(stderr.contains("Runtime exploded."), "{stderr}");
}

/// A blank message is bad usage (exit 2) at once: the engine ignores it, so nothing would come.
#[test]
fn an_empty_message_is_bad_usage() {
    let out = agent_chat().args(["send", "   "]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("the message is empty"));
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

fn repo_file(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
}

#[test]
fn replay_prints_the_timeline_and_fails_at_a_wrong_expectation_with_its_line() {
    let good = repo_file("spec-tests/traces/requested-session-unavailable.jsonl");
    let out = agent_chat().arg("replay").arg(&good).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("expectations met"));

    let text = std::fs::read_to_string(&good).unwrap();
    let (line, _) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("\"expect\""))
        .unwrap();
    let broken: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == line {
                r#"{"expect": {"snapshot": {"currentSessionId": "no-such-session"}}}"#.to_owned()
            } else {
                l.to_owned()
            }
        })
        .collect();
    let path = std::env::temp_dir().join(format!("agent-chat-broken-{}.jsonl", std::process::id()));
    std::fs::write(&path, broken.join("\n")).unwrap();
    let out = agent_chat().arg("replay").arg(&path).output().unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("line {}", line + 1)), "{stderr}");
    assert!(stderr.contains("no-such-session"), "{stderr}");
}

#[test]
fn decode_stream_prints_the_assembled_message() {
    let sse = repo_file("spec-tests/vectors/ui-stream/tool-call.sse");
    let out = agent_chat()
        .arg("decode-stream")
        .arg(&sse)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let message: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["role"], "assistant");
    assert_eq!(message["parts"][1]["type"], "tool-get_weather");
    assert_eq!(message["parts"][1]["state"], "output-available");
}

#[test]
fn piped_lines_get_their_answers_before_the_chat_ends() {
    use std::io::Write;
    let mut child = agent_chat()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"piped hello\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("You said: piped hello\n"), "{stdout:?}");
}

/// Issue 14 (ADR 099): `agent-chat --local URL send` chats with a local Agent runtime: no
/// platform, no token, no credential on any request; the answer is printed. A base that is not
/// a loopback address is bad usage, with the reason.
#[tokio::test(flavor = "multi_thread")]
async fn send_to_a_local_runtime() {
    use platform_sim::{LocalRuntime, Sim, SimConfig};
    let config = SimConfig {
        local: Some(LocalRuntime::default()),
        ..SimConfig::default()
    };
    let sim = Sim::start(config).await.unwrap();
    let url = sim.url();
    let out = tokio::task::spawn_blocking(move || {
        agent_chat()
            .args(["--local", &url, "send", "hello local"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout.contains("You said: hello local"), "{stdout}");
    let log = sim.log();
    assert!(
        log.iter()
            .all(|r| r.authorized && !r.path.starts_with("/api/v1/")),
        "{log:#?}"
    );
    sim.shutdown().await;

    let out = agent_chat()
        .args(["--local", "https://agents.example.com", "send", "hi"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "--local needs the runtime's own loopback address, such as http://127.0.0.1:8787, not \"https://agents.example.com\""
        ),
        "{stderr}"
    );
    let out = agent_chat()
        .args(["--local", "/__agent__", "send", "hi"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--local needs the runtime's own address"),
        "{stderr}"
    );
}

/// ADR 099: a one-shot send waits for a local runtime that is still loading its model (it is
/// looked for again every 5 s), then gets its answer; one in managed mode is refused at once
/// (exit 1); a runtime that is not there is waited for until `--timeout`, and the time out names
/// what it waited for (exit 3).
#[tokio::test]
async fn send_waits_for_a_local_runtime_that_is_loading() {
    use platform_sim::{LocalRuntime, Sim, SimConfig};
    let config = SimConfig {
        local: Some(LocalRuntime {
            ready_after: 1,
            ..LocalRuntime::default()
        }),
        ..SimConfig::default()
    };
    let sim = Sim::start(config).await.unwrap();
    let url = sim.url();
    let out = tokio::task::spawn_blocking(move || {
        agent_chat()
            .args(["--local", &url, "--timeout", "30", "send", "hello"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout.contains("You said: hello"), "{stdout}");
    sim.shutdown().await;

    // A runtime in managed mode will not pass by waiting: refused at once (exit 1).
    let config = SimConfig {
        local: Some(LocalRuntime {
            mode: "managed".into(),
            ..LocalRuntime::default()
        }),
        ..SimConfig::default()
    };
    let sim = Sim::start(config).await.unwrap();
    let url = sim.url();
    let out = tokio::task::spawn_blocking(move || {
        agent_chat()
            .args(["--local", &url, "send", "hello"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("runs in managed mode"), "{stderr}");
    sim.shutdown().await;

    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let out = agent_chat()
        .args(["--local", &url, "--timeout", "1", "send", "hello"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "timed out after 1 s waiting for the session at {url} (Local Agent is not running: "
        )),
        "{stderr}"
    );
}

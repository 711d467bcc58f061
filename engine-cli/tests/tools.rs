#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Issue 24, points 4 and 5: `agent-chat` shows a tool call as one line naming the tool and
//! its outcome, between the reasoning and the text, in both answer dialects of the simulator;
//! `decode-stream` shows the tool part; an answer that showed nothing while frames were skipped
//! says so on stderr. Every platform here is a platform-sim on 127.0.0.1 started by the test
//! (or the embedded one).

use std::io::Read;
use std::process::{Command, Stdio};

use platform_sim::{AnswerStyle, DEFAULT_PLATFORM_TOKEN, Dialect, SIM_TOOL, Sim, SimConfig};
use serde_json::json;

fn agent_chat() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-chat"));
    cmd.env_remove("AGENT_CHAT_TOKEN").env_remove("RUST_LOG");
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// stdout and stderr of `cmd` through one pipe, in the order they were written.
fn merged(mut cmd: Command) -> (Option<i32>, String) {
    let (mut reader, writer) = std::io::pipe().unwrap();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .spawn()
        .unwrap();
    // The writers given to the child are dropped with `cmd`'s copies at its end.
    drop(cmd);
    let mut all = String::new();
    reader.read_to_string(&mut all).unwrap();
    (child.wait().unwrap().code(), all)
}

/// `agent-chat --platform URL ... send TEXT` for the simulator's default Agent.
fn send_to(sim: &Sim, message: &str) -> Command {
    let config = sim.config();
    let mut cmd = agent_chat();
    cmd.env("AGENT_CHAT_TOKEN", DEFAULT_PLATFORM_TOKEN).args([
        "--platform",
        &sim.url(),
        "--environment",
        &config.environment_uid,
        "--agent",
        &config.agents[0].uid,
        "--user",
        &config.person_uid,
        "--timeout",
        "20",
        "send",
        message,
    ]);
    cmd
}

/// A simulator whose Agent answers in `style` and `dialect`, without pauses.
async fn sim_with(style: AnswerStyle, dialect: Dialect) -> Sim {
    let mut config = SimConfig::default().with_dialect(dialect);
    config.answer_delay_ms = 0;
    config.agents[0].answer = style;
    Sim::start(config).await.unwrap()
}

/// Issue 24, point 4 (RU-1, RU-4): `agent-chat send` against the embedded simulator, in both
/// dialects: the tool call's line (`· count_words: ok`) on stderr comes before the answer's
/// text on stdout; stdout holds the text alone.
#[test]
fn send_shows_the_tool_call_before_the_text() {
    for dialect in Dialect::ALL {
        let mut cmd = agent_chat();
        cmd.args(["--dialect", dialect.name(), "send", "Grüße 🌍, count me"]);
        let (code, all) = merged(cmd);
        assert_eq!(code, Some(0), "{dialect:?}: {all}");
        let tool = all
            .find(&format!("· {SIM_TOOL}: ok\n"))
            .unwrap_or_else(|| panic!("{dialect:?}: no tool line: {all}"));
        let answer = all
            .find("You said: Grüße 🌍, count me\n")
            .unwrap_or_else(|| panic!("{dialect:?}: no answer: {all}"));
        assert!(tool < answer, "{dialect:?}: {all}");

        let out = agent_chat()
            .args(["--dialect", dialect.name(), "send", "hi"])
            .output()
            .unwrap();
        assert_eq!(text(&out.stdout), "You said: hi\n", "{dialect:?}");
        assert!(
            text(&out.stderr).contains("· count_words: ok"),
            "{dialect:?}"
        );
    }
}

/// Issue 24, point 4 (RU-1 `isError`, AI SDK `tool-output-error`): a failed tool call is one
/// line naming the tool and its error, control characters stripped and the line kept to one
/// line; the answer goes on and `send` exits 0.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_tool_call_names_its_error() {
    for dialect in Dialect::ALL {
        let error = "Word counter\nunavailable\u{1b}[31m (try later)";
        let sim = sim_with(AnswerStyle::FailingTool(error.into()), dialect).await;
        let cmd = send_to(&sim, "count this");
        let (code, all) = tokio::task::spawn_blocking(move || merged(cmd))
            .await
            .unwrap();
        assert_eq!(code, Some(0), "{dialect:?}: {all}");
        let line = format!("· {SIM_TOOL} failed: Word counter unavailable (try later)\n");
        let tool = all
            .find(&line)
            .unwrap_or_else(|| panic!("{dialect:?}: {all:?}"));
        let answer = all.find("You said: count this").unwrap();
        assert!(tool < answer, "{dialect:?}: {all}");
        assert!(!all.contains('\u{1b}'), "{all:?}");
        sim.shutdown().await;
    }
}

/// Issue 24, point 5: an answer whose every frame was skipped (types this engine does not
/// read, a frame with an invalid field) ends "complete" with nothing shown: `send` says so on
/// stderr, naming the frame types; an answer that shows its text says nothing of the kind.
#[tokio::test(flavor = "multi_thread")]
async fn an_answer_that_showed_nothing_says_so() {
    let frames = vec![
        json!({"type": "start-step"}),
        json!({"type": "x-future", "text": "a"}),
        json!({"type": "x-future", "text": "b"}),
        json!({"type": "text-delta", "textDelta": "no id"}),
        json!({"type": "finish", "finishReason": "stop"}),
    ];
    let sim = sim_with(AnswerStyle::Script(frames), Dialect::Runtime).await;
    let out = tokio::task::spawn_blocking({
        let mut cmd = send_to(&sim, "anything?");
        move || cmd.output().unwrap()
    })
    .await
    .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(text(&out.stdout), "\n");
    assert!(
        stderr.contains(
            "(the answer showed nothing: the Agent sent frames this chat does not read: \
             text-delta (invalid id), x-future)"
        ),
        "{stderr}"
    );
    sim.shutdown().await;

    let sim = sim_with(AnswerStyle::Echo, Dialect::Runtime).await;
    let out = tokio::task::spawn_blocking({
        let mut cmd = send_to(&sim, "hello");
        move || cmd.output().unwrap()
    })
    .await
    .unwrap();
    assert!(!text(&out.stderr).contains("showed nothing"));
    sim.shutdown().await;
}

fn vector(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../spec-tests/vectors/assistant-stream")
        .join(name)
}

/// Issue 24, points 4 and 5: `decode-stream` on a runtime-dialect answer prints the tool part
/// (a dynamic tool with its error) and, on stderr, the tool's line; on a body whose frames
/// were all skipped, it says so with the counts by type.
#[test]
fn decode_stream_shows_tools_and_skipped_frames() {
    let out = agent_chat()
        .arg("decode-stream")
        .arg(vector("mstau-tool-error.sse"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let message: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tool = message["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == "dynamic-tool")
        .unwrap_or_else(|| panic!("no tool part: {message}"));
    assert_eq!(tool["toolName"], "get_weather");
    assert_eq!(tool["state"], "output-error");
    assert_eq!(
        text(&out.stderr),
        "· get_weather failed: Weather service unavailable\n"
    );

    let body: String = std::iter::repeat_n("data: {\"type\":\"x-future\"}\n\n", 12)
        .chain(["data: {\"type\":\"finish\"}\n\n", "data: [DONE]\n\n"])
        .collect();
    let file = std::env::temp_dir().join(format!("agent-chat-skipped-{}.sse", std::process::id()));
    std::fs::write(&file, body).unwrap();
    let out = agent_chat()
        .arg("decode-stream")
        .arg(&file)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        text(&out.stderr),
        "(the answer showed nothing: the Agent sent 12 frames this chat does not read: \
         x-future ×12)\n"
    );
}

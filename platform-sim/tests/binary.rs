#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The `platform-sim` binary (issue 16, item 4): `RUST_LOG` logs each request on stderr, and
//! the platform token appears nowhere in what it prints, even at `trace`.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

#[tokio::test(flavor = "multi_thread")]
async fn rust_log_logs_requests_without_the_token() {
    let token = "tok-SECRET-7d1e";
    let mut child = Command::new(env!("CARGO_BIN_EXE_platform-sim"))
        .env("RUST_LOG", "trace")
        .env("PLATFORM_SIM_TOKEN", token)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    let url = loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "no address: {printed}"
        );
        printed.push_str(&line);
        if let Some(url) = line.trim().strip_prefix("platform-sim listening on ") {
            break url.to_owned();
        }
    };
    let client = reqwest::Client::new();
    for given in [token, "tok-SECRET-wrong"] {
        let answer = client
            .get(format!(
                "{url}/api/v1/agent-sessions/?organization_environment_uid=env-demo"
            ))
            .bearer_auth(given)
            .send()
            .await
            .unwrap();
        assert_eq!(
            answer.status().as_u16(),
            if given == token { 200 } else { 401 }
        );
    }
    child.kill().unwrap();
    let _ = child.wait();
    stdout.read_to_string(&mut printed).unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(
        stderr.contains(
            "request method=\"GET\" path=/api/v1/agent-sessions/ query=organization_environment_uid=env-demo authorized=true"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("authorized=false"), "{stderr}");
    assert!(stderr.contains("TRACE"), "no trace output: {stderr}");
    assert!(!stderr.contains("SECRET"), "the token is in the log");
    assert!(!printed.contains("SECRET"), "the token is printed");
}

/// Starts the binary and reads its stdout until its "chat with it:" line (the platform's).
fn chat_line(token: Option<&str>) -> (std::process::Child, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_platform-sim"));
    command.env_remove("PLATFORM_SIM_TOKEN");
    if let Some(token) = token {
        command.env("PLATFORM_SIM_TOKEN", token);
    }
    let mut child = command.stdout(Stdio::piped()).spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    let line = loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "no chat line: {printed}"
        );
        printed.push_str(&line);
        if let Some(rest) = line.trim().strip_prefix("chat with it: AGENT_CHAT_TOKEN=") {
            break rest.to_owned();
        }
    };
    // Read on to its last line: a closed pipe would end the binary at its next print.
    loop {
        let mut rest = String::new();
        assert!(stdout.read_line(&mut rest).unwrap() > 0, "{printed}");
        printed.push_str(&rest);
        if rest.starts_with("press Ctrl-C to stop") {
            break;
        }
    }
    (child, line, printed)
}

/// Issue 25, point 5: the printed `agent-chat` command can be pasted as it is: the token in
/// agent-chat's variable (no token file to create first), and every flag the platform target
/// needs; a chosen token is named by its variable, never echoed.
#[tokio::test(flavor = "multi_thread")]
async fn the_printed_command_can_be_pasted() {
    let (mut child, line, printed) = chat_line(None);
    let (token, command) = line.split_once(' ').unwrap();
    assert_eq!(token, platform_sim::DEFAULT_PLATFORM_TOKEN);
    let args: Vec<&str> = command
        .strip_prefix("cargo run -p engine-cli --bin agent-chat -- ")
        .unwrap_or_else(|| panic!("{line}"))
        .split(' ')
        .collect();
    assert!(
        !printed.contains("FILE"),
        "a placeholder to fill: {printed}"
    );
    let flag = |name: &str| {
        let at = args
            .iter()
            .position(|a| *a == name)
            .unwrap_or_else(|| panic!("{name}: {line}"));
        args[at + 1].to_owned()
    };
    assert_eq!(args.len(), 8, "{line}");
    // What it names works: the token reads the person's sessions in the Environment.
    let answer = reqwest::Client::new()
        .get(format!(
            "{}/api/v1/agent-sessions/?organization_environment_uid={}&created_by_user_uid={}&agent_uid={}",
            flag("--platform"),
            flag("--environment"),
            flag("--user"),
            flag("--agent")
        ))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 200);
    child.kill().unwrap();
    let _ = child.wait();

    let (mut child, line, printed) = chat_line(Some("tok-SECRET-chosen"));
    child.kill().unwrap();
    let _ = child.wait();
    assert!(
        line.starts_with("\"$PLATFORM_SIM_TOKEN\" cargo run"),
        "{line}"
    );
    assert!(!printed.contains("SECRET"), "the chosen token is printed");
}

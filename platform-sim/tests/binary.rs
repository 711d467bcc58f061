#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
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

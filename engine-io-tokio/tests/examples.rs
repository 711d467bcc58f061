//! The example programs run as written (issue 25, point 2): `engine-io-tokio`'s `hello`,
//! `engine-io-blocking`'s `hello-blocking` and `engine-core`'s `own_loop` each start
//! platform-sim on loopback themselves, send a message and print the simulator's answer; the
//! two hosts name the cause of a wrong token and of a closed port and exit with status 1
//! (issue 25, point 3).
//!
//! The programs are the ones cargo built next to this test (`target/<profile>/examples/`):
//! `cargo test --workspace` builds every example first; a targeted run needs
//! `cargo build -p engine-io-tokio -p engine-io-blocking -p engine-core --examples` before it.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // a test fails loudly

use std::path::PathBuf;
use std::process::{Command, Output};

/// The answer platform-sim gives to "Hello" (`AnswerStyle::Echo`).
const ANSWER: &str = "You said: Hello";

/// The example program `name`, as cargo built it next to this test.
fn example(name: &str) -> PathBuf {
    let test = std::env::current_exe().expect("the test's own path");
    // target/<profile>/deps/examples-<hash> -> target/<profile>/examples/<name>
    let dir = test
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>");
    let path = dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is not built: cargo build -p engine-io-tokio -p engine-io-blocking -p engine-core --examples",
        path.display()
    );
    path
}

/// Runs example `name` with these environment variables (and none of the AGENT_* ones of the
/// test's own environment).
fn run(name: &str, vars: &[(&str, &str)]) -> Output {
    let mut command = Command::new(example(name));
    for var in [
        "AGENT_PLATFORM_URL",
        "AGENT_CHAT_TOKEN",
        "AGENT_USER",
        "AGENT_ENVIRONMENT",
        "AGENT_UID",
    ] {
        command.env_remove(var);
    }
    command.envs(vars.iter().copied());
    command.output().expect("the example runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A loopback port nothing listens on: bound by this test, then closed.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    port
}

const HOSTS: [&str; 2] = ["hello", "hello-blocking"];

/// Issue 25 point 2: each program answers on the first try, against the simulator it starts.
#[test]
fn every_example_answers_against_platform_sim() {
    for name in HOSTS.into_iter().chain(["own_loop"]) {
        let out = run(name, &[]);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "{name}: {:?}\n{stderr}", out.status);
        assert_eq!(stdout.trim(), ANSWER, "{name}: stderr {stderr}");
        assert!(!stderr.contains("not ready"), "{name}: {stderr}");
    }
}

/// Issue 25 point 3: a wrong token is named with the refused read's status, not waited out.
#[test]
fn a_wrong_token_is_named_with_its_status() {
    for name in HOSTS {
        let out = run(name, &[("AGENT_CHAT_TOKEN", "not-the-token")]);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.contains("not ready: Authentication credentials were not provided or are not valid. (code default_session_failed, HTTP 401)"),
            "{name}: {stderr}"
        );
        assert!(
            stderr.contains("the failing read: Session get-or-create failed. Status: HTTP 401 Unauthorized. Call: POST "),
            "{name}: {stderr}"
        );
        assert!(!stderr.contains("timed_out"), "{name}: {stderr}");
        assert!(!stdout.contains(ANSWER), "{name}: {stdout}");
        assert!(
            !stderr.contains("not-the-token"),
            "{name}: the token leaked: {stderr}"
        );
    }
}

/// Issue 25 point 3: a closed port is named with the transport's failure, not waited out.
#[test]
fn a_closed_port_is_named_with_the_transport_failure() {
    for name in HOSTS {
        let url = format!("http://127.0.0.1:{}", closed_port());
        let out = run(name, &[("AGENT_PLATFORM_URL", &url)]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.contains("(code default_session_failed)\n"),
            "{name}: {stderr}"
        );
        let failure = stderr
            .lines()
            .find_map(|l| l.strip_prefix("the failing read: "))
            .unwrap_or_else(|| panic!("{name}: no failing read: {stderr}"));
        assert!(
            failure.to_lowercase().contains("connect"),
            "{name}: the transport's words: {failure}"
        );
        assert!(!stderr.contains("timed_out"), "{name}: {stderr}");
    }
}

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! Issue 25, points 2 and 3 (the C part): the C README's example (`examples/c/hello.c`) runs
//! against platform-sim and answers. Built with the system's C compiler, it is run against a
//! simulator this test starts on 127.0.0.1 (port 0): it opens the default session, waits with
//! `ae_send_readiness`, sends "Hello" and prints the streamed answer; with a wrong token it
//! exits 1 naming the cause and its HTTP status 401 at once (no request retried, no timer
//! waited out); against a closed port it exits 1 naming the transport failure. Each run again
//! under valgrind when it is installed (required when `AE_REQUIRE_VALGRIND` is set): no leak,
//! no invalid access.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use platform_sim::{BlockingSim, DEFAULT_AGENT_UID, DEFAULT_PLATFORM_TOKEN, SimConfig};

/// The example, built once for all the tests (a build while another test runs it would fail).
fn hello() -> &'static Path {
    static HELLO: OnceLock<PathBuf> = OnceLock::new();
    HELLO.get_or_init(|| common::build("hello"))
}

/// The example's commands: run directly, then under valgrind when there is one.
fn commands() -> Vec<(&'static str, Command)> {
    let mut commands = vec![("hello", Command::new(hello()))];
    if let Some(valgrind) = common::valgrind() {
        commands.push((
            "hello under valgrind",
            common::under_valgrind(&valgrind, hello()),
        ));
    }
    commands
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn sim() -> BlockingSim {
    BlockingSim::start(SimConfig {
        answer_delay_ms: 0,
        ..SimConfig::default()
    })
    .unwrap()
}

/// Runs the example against the platform at `url` with `token`, as the simulator's person, in its
/// Environment, with its Agent.
fn run_against(command: &mut Command, url: &str, token: &str, config: &SimConfig) -> Output {
    common::run(command.args([
        url,
        token,
        &config.person_uid,
        &config.environment_uid,
        DEFAULT_AGENT_UID,
    ]))
}

/// Issue 25 point 2: the example answers. It prints the simulator's echo of "Hello", exits 0,
/// and the message reached the Agent with the platform's credential.
#[test]
fn hello_sends_hello_and_prints_the_answer() {
    for (run, mut command) in commands() {
        let out = common::run(&mut command);
        assert_eq!(out.status.code(), Some(2), "{run} without arguments");
        assert!(text(&out.stderr).contains("usage:"), "{run}");
    }
    for (run, mut command) in commands() {
        let sim = sim();
        let out = run_against(
            &mut command,
            &sim.url(),
            DEFAULT_PLATFORM_TOKEN,
            sim.config(),
        );
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(
            out.status.success(),
            "{run}: {}\n{stdout}\n{stderr}",
            out.status
        );
        assert_eq!(stdout, "You said: Hello\n", "{run}; stderr: {stderr}");
        assert!(!stderr.contains(DEFAULT_PLATFORM_TOKEN), "{run}: {stderr}");
        let turns: Vec<_> = sim
            .log()
            .into_iter()
            .filter(|r| {
                r.method == "POST"
                    && r.body
                        .as_ref()
                        .is_some_and(|b| b.to_string().contains("\"Hello\""))
            })
            .collect();
        assert_eq!(
            turns.len(),
            1,
            "{run}: one turn carries the message: {turns:?}"
        );
        assert!(turns.iter().all(|r| r.authorized), "{run}: {turns:?}");
    }
}

/// Issue 25 point 3: a wrong token stops the example at once with the cause: its code, the
/// platform's message and HTTP status 401, exit 1, nothing answered. The refused get-or-create
/// is not retried first (no timer waited out).
#[test]
fn a_wrong_token_is_named_with_its_status() {
    for (run, mut command) in commands() {
        let sim = sim();
        let out = run_against(&mut command, &sim.url(), "not-the-token", sim.config());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{run}: {stderr}");
        assert!(
            stderr.contains("not ready (default_session_failed): Authentication credentials were not provided or are not valid.\n"),
            "{run}: {stderr}"
        );
        assert!(
            stderr.contains("failure: Session get-or-create failed. Status: HTTP 401 Unauthorized. Call: POST ")
                && stderr.contains("/sessions/get-or-create-session/. Server response: Authentication credentials were not provided or are not valid.\n"),
            "{run}: {stderr}"
        );
        assert!(stderr.contains("HTTP status: 401\n"), "{run}: {stderr}");
        assert!(!stderr.contains("not-the-token"), "{run}: {stderr}");
        assert_eq!(text(&out.stdout), "", "{run}: nothing answered");
        let log = sim.log();
        let opened = log
            .iter()
            .filter(|r| r.path.contains("get-or-create"))
            .count();
        assert_eq!(opened, 1, "{run}: {log:?}");
        assert!(log.iter().all(|r| !r.authorized), "{run}: {log:?}");
    }
}

/// Issue 25 point 3: nothing listens on the port: the example exits 1 naming the transport
/// failure (the socket's "Connection refused"), with no HTTP status.
#[test]
fn a_closed_port_is_named_as_a_transport_failure() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");
    for (run, mut command) in commands() {
        let out = run_against(
            &mut command,
            &url,
            DEFAULT_PLATFORM_TOKEN,
            &SimConfig::default(),
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{run}: {stderr}");
        assert!(
            stderr.contains("not ready (default_session_failed): "),
            "{run}: {stderr}"
        );
        assert!(
            stderr.contains("failure: Connection refused\n"),
            "{run}: {stderr}"
        );
        assert!(!stderr.contains("HTTP status"), "{run}: {stderr}");
        assert_eq!(text(&out.stdout), "", "{run}: nothing answered");
    }
}

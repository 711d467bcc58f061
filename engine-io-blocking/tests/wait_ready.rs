//! `Shell::wait_ready` against platform-sim on loopback (issue 25, point 3): the snapshot once
//! a message can be sent; the cause as soon as the engine is blocked (the hello-world
//! without a default session, a wrong token); a timed-out wait naming what it waited for. (A
//! stopped driver cannot be waited on: `Shell::shutdown` takes the shell.)

#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::time::Duration;

use engine_core::api::ApiError;
use engine_core::{Config, DefaultSession, Input, NotReadyCode, Person, Secret, SendReadiness};
use engine_io_blocking::{Shell, ShellConfig};
use platform_sim::{
    BlockingSim, DEFAULT_AGENT_UID, DEFAULT_PLATFORM_TOKEN, Fault, FaultKind, SimConfig,
};

/// A wait no test reaches unless the shell hangs.
const LONG: Duration = Duration::from_secs(30);

/// A shell on `sim` for the demo person with `token`, in the demo Environment, visible.
fn open(sim: &BlockingSim, token: &str) -> Shell {
    let shell = Shell::start(ShellConfig::new(Config::new(&sim.url()).unwrap()));
    let inputs = [
        Input::Person(Person::new("user-demo", Secret::new(token))),
        Input::EnvironmentUid(Some("env-demo".into())),
        Input::IsVisible(true),
    ];
    for input in inputs {
        shell.input(input).unwrap();
    }
    shell
}

fn default_session() -> Input {
    Input::DefaultSession(Some(DefaultSession {
        agent_uid: Some(DEFAULT_AGENT_UID.into()),
        handle_unique_id: "wait-ready-test".into(),
        name: "Wait ready".into(),
        ..DefaultSession::default()
    }))
}

/// Issue 25 points 2 and 3: with a default session, the wait ends ready and hands back the
/// snapshot that is.
#[test]
fn a_default_session_becomes_ready() {
    let sim = BlockingSim::start(SimConfig::default()).unwrap();
    let shell = open(&sim, DEFAULT_PLATFORM_TOKEN);
    shell.input(default_session()).unwrap();
    shell.input(Input::ShowsDefaultSession(true)).unwrap();
    let s = shell.wait_ready(LONG).unwrap();
    assert_eq!(s.send_readiness, SendReadiness::Ready);
    assert!(s.composer_admission);
    shell.shutdown();
}

/// Issue 25 point 3: the hello-world (no default session, no sessions yet) is told at
/// once that nothing will be selected by itself, in the reference's words; it is not waited
/// out, and not taken from the snapshot before the inputs (which said "not visible").
#[test]
fn without_a_session_the_cause_comes_at_once() {
    let sim = BlockingSim::start(SimConfig::default()).unwrap();
    let shell = open(&sim, DEFAULT_PLATFORM_TOKEN);
    let cause = shell.wait_ready(LONG).unwrap_err();
    assert_eq!(cause.code, NotReadyCode::NoSession, "{cause:?}");
    assert_eq!(cause.message, "Choose or start a session before writing.");
    assert_eq!(cause.failure, None);
    shell.shutdown();
}

/// Issue 25 point 3: a wrong token is the refused list, with its status and the snapshot's own
/// `latestSessionsError` text.
#[test]
fn a_wrong_token_is_the_refused_list() {
    let sim = BlockingSim::start(SimConfig::default()).unwrap();
    let shell = open(&sim, "not-the-token");
    let cause = shell.wait_ready(LONG).unwrap_err();
    assert_eq!(cause.code, NotReadyCode::SessionsFailed, "{cause:?}");
    assert_eq!(cause.status(), Some(401));
    assert!(matches!(
        cause.failure,
        Some(ApiError::Http { status: 401, .. })
    ));
    assert_eq!(
        Some(cause.message.as_str()),
        shell.snapshot().latest_sessions_error.as_deref()
    );
    // RU-19: the full text names the request; the server message ends it.
    let text = &cause.message;
    assert!(
        text.starts_with(
            "Latest agent sessions request failed. Status: HTTP 401 Unauthorized. Call: GET http://127.0.0.1:"
        ) && text.ends_with(
            ". Server response: Authentication credentials were not provided or are not valid."
        ),
        "{text}"
    );
    shell.shutdown();
}

/// Issue 25 point 3: a wait that runs out names what the engine still waits for; the list is
/// held back by the simulator, so the engine is still loading it.
#[test]
fn a_wait_that_runs_out_names_what_it_waited_for() {
    let sim = BlockingSim::start(SimConfig::default()).unwrap();
    sim.fault(Fault::once(
        "GET",
        "agent-sessions",
        FaultKind::Delay(60_000),
    ));
    let shell = open(&sim, DEFAULT_PLATFORM_TOKEN);
    let cause = shell.wait_ready(Duration::from_millis(300)).unwrap_err();
    assert_eq!(cause.code, NotReadyCode::TimedOut);
    assert_eq!(
        cause.message,
        "Not ready after 300 ms: Loading the sessions..."
    );
    assert_eq!(cause.status(), None);
    shell.shutdown();
}

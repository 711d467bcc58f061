//! The URL rewrite (adr-notes 6 `connection.rewriteRequestUrl`) against `platform-sim` on
//! loopback, served only under a path prefix as a reverse proxy would: every request the shell
//! carries out (platform, Agent runtime, icon bytes) is rewritten exactly once and reaches the
//! simulator with one prefix, never two.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_core::{Command, Config, Input, Person, RunStatus, Secret, Snapshot, Target};
use engine_io_blocking::{Shell, ShellConfig};
use platform_sim::{AGENT_ICON_ETAG, AGENT_ICON_SVG, BlockingSim, DEFAULT_AGENT_UID, SimConfig};

const WAIT: Duration = Duration::from_secs(20);

/// A simulator served only under `/proxy`, as behind a reverse proxy.
fn prefixed() -> SimConfig {
    SimConfig {
        path_prefix: Some("/proxy".into()),
        answer_delay_ms: 1,
        ..SimConfig::default()
    }
}

type Calls = Arc<Mutex<Vec<(String, Target)>>>;

/// A shell whose rewrite sends `base` to `{base}/proxy`, recording every call.
fn start(sim: &BlockingSim, config: &SimConfig) -> (Shell, Calls) {
    start_with(sim, config, &format!("{}/proxy", sim.url()))
}

/// A shell whose rewrite sends `base` to `to`, recording every call.
fn start_with(sim: &BlockingSim, config: &SimConfig, to: &str) -> (Shell, Calls) {
    let base = sim.url();
    let calls: Calls = Arc::default();
    let mut shell = ShellConfig::new(Config::new(&base).unwrap());
    let (seen, to) = (Arc::clone(&calls), to.to_owned());
    shell.rewrite_request_url = Some(Arc::new(move |url: &str, target: Target| {
        seen.lock().unwrap().push((url.to_owned(), target));
        url.replacen(&base, &to, 1)
    }));
    assert!(format!("{shell:?}").contains("rewrite_request_url: true"));
    let shell = Shell::start(shell);
    for input in config.default_session_inputs("rewrite-suite") {
        shell.input(input).unwrap();
    }
    (shell, calls)
}

fn wait(shell: &Shell, pred: impl Fn(&Snapshot) -> bool, sim: &BlockingSim) -> Snapshot {
    shell
        .wait_for(pred, WAIT)
        .unwrap_or_else(|| panic!("timed out: {:#?}\n{:#?}", shell.snapshot(), sim.log()))
}

#[test]
fn every_request_is_rewritten_once_and_reaches_the_prefixed_platform() {
    let config = prefixed();
    let sim = BlockingSim::start(config.clone()).unwrap();
    let base = sim.url();
    let (shell, calls) = start(&sim, &config);
    wait(&shell, |s| s.composer_admission, &sim);
    shell
        .command(Command::RequestAgentIcons {
            agent_uids: vec![DEFAULT_AGENT_UID.into()],
        })
        .unwrap();
    let s = wait(
        &shell,
        |s| {
            s.agent_icons
                .get(DEFAULT_AGENT_UID)
                .is_some_and(|i| i.image.is_some())
        },
        &sim,
    );
    let icon = &s.agent_icons[DEFAULT_AGENT_UID];
    assert_eq!(
        icon.url,
        format!("{base}/api/v1/command-center/agents/{DEFAULT_AGENT_UID}/icon/")
    );
    let image = icon.image.as_ref().unwrap();
    assert_eq!(image.bytes.as_ref(), AGENT_ICON_SVG.as_bytes());
    // RU-35: the shell passes the ETag in the response head.
    assert_eq!(image.etag.as_deref(), Some(AGENT_ICON_ETAG));
    shell
        .command(Command::SendMessage {
            text: "through the proxy".into(),
        })
        .unwrap();
    let s = wait(
        &shell,
        |s| !s.is_agent_working && s.run_status != RunStatus::Idle,
        &sim,
    );
    assert_eq!(
        s.run_status,
        RunStatus::Complete,
        "{:?}",
        s.run_status_detail
    );
    shell.shutdown();

    let log = sim.log();
    let calls = calls.lock().unwrap().clone();
    // Once per request: the hook saw each original address once, and only originals.
    platform_sim::check_rewritten_once(&log, "/proxy", &base, &calls).unwrap();
    let path = |method: &str, path: &str| log.iter().any(|r| r.method == method && r.path == path);
    assert!(path(
        "GET",
        &format!("/proxy/api/v1/command-center/agents/{DEFAULT_AGENT_UID}/icon/")
    ));
    assert!(path(
        "POST",
        &format!("/proxy/runtime/{DEFAULT_AGENT_UID}/api/chat")
    ));
    assert!(log.iter().all(|r| r.authorized), "{log:#?}");
    sim.shutdown();
}

/// Without the rewrite a prefixed platform answers 404 to everything: the rewrite is what
/// reaches it (so the test above cannot pass by accident).
#[test]
fn without_the_rewrite_the_prefixed_platform_is_not_reached() {
    let config = SimConfig {
        path_prefix: Some("/proxy".into()),
        ..SimConfig::default()
    };
    let sim = BlockingSim::start(config.clone()).unwrap();
    let shell = Shell::start(ShellConfig::new(Config::new(&sim.url()).unwrap()));
    shell
        .input(Input::Person(Person::new(
            config.person_uid.clone(),
            Secret::new(config.platform_token.clone()),
        )))
        .unwrap();
    shell
        .input(Input::EnvironmentUid(Some(config.environment_uid.clone())))
        .unwrap();
    shell.input(Input::IsVisible(true)).unwrap();
    let s = wait(&shell, |s| s.latest_sessions_error.is_some(), &sim);
    assert!(s.agent_sessions.is_empty());
    assert!(sim.log().iter().all(|r| !r.path.starts_with("/proxy/")));
    shell.shutdown();
    sim.shutdown();
}

/// RU-46: the reference's own rewrites return root-relative addresses (`/__platform__...`),
/// which its browser resolves against the page; the shell resolves them against the platform's
/// origin. Here every address goes to `/proxy{path}`: the platform reads and the Agent
/// runtime's check (the composer admits only after it) reach the prefixed simulator, each
/// rewritten once.
#[test]
fn a_root_relative_rewrite_is_resolved_on_the_platform_origin() {
    let config = prefixed();
    let sim = BlockingSim::start(config.clone()).unwrap();
    let base = sim.url();
    let (shell, calls) = start_with(&sim, &config, "/proxy");
    wait(&shell, platform_sim::session_settled, &sim);
    shell.shutdown();
    let log = sim.log();
    let calls = calls.lock().unwrap().clone();
    platform_sim::check_rewritten_once(&log, "/proxy", &base, &calls).unwrap();
    assert!(
        log.iter().any(|r| r.path.starts_with("/proxy/runtime/")),
        "{log:#?}"
    );
    sim.shutdown();
}

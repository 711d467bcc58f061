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

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_core::{Command, Config, RunStatus, Target};
use engine_io_tokio::{ShellConfig, spawn};
use platform_sim::{AGENT_ICON_ETAG, AGENT_ICON_SVG, DEFAULT_AGENT_UID, Sim, SimConfig};

const WAIT: Duration = Duration::from_secs(20);

/// A simulator served only under `/proxy`, as behind a reverse proxy.
fn prefixed() -> SimConfig {
    SimConfig {
        path_prefix: Some("/proxy".into()),
        answer_delay_ms: 1,
        ..SimConfig::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_is_rewritten_once_and_reaches_the_prefixed_platform() {
    let config = prefixed();
    let sim = Sim::start(config.clone()).await.unwrap();
    let base = sim.url();
    let calls: Arc<Mutex<Vec<(String, Target)>>> = Arc::default();
    let mut shell = ShellConfig::new(Config::new(&base).unwrap());
    let (seen, prefixed) = (Arc::clone(&calls), format!("{base}/proxy"));
    let from = base.clone();
    shell.rewrite_request_url = Some(Arc::new(move |url: &str, target: Target| {
        seen.lock().unwrap().push((url.to_owned(), target));
        url.replacen(&from, &prefixed, 1)
    }));
    assert!(format!("{shell:?}").contains("rewrite_request_url: true"));
    let (handle, task) = spawn(shell);
    for input in config.default_session_inputs("rewrite-suite") {
        handle.input(input).unwrap();
    }
    let ready = handle.wait_for(|s| s.composer_admission, WAIT).await;
    assert!(ready.is_some(), "{:#?}", sim.log());

    // P13/P14 through the rewrite: the icon url as the platform gave it, the bytes delivered.
    handle
        .command(Command::RequestAgentIcons {
            agent_uids: vec![DEFAULT_AGENT_UID.into()],
        })
        .unwrap();
    let s = handle
        .wait_for(
            |s| {
                s.agent_icons
                    .get(DEFAULT_AGENT_UID)
                    .is_some_and(|i| i.image.is_some())
            },
            WAIT,
        )
        .await
        .expect("the icon loads");
    let icon = &s.agent_icons[DEFAULT_AGENT_UID];
    assert_eq!(
        icon.url,
        format!("{base}/api/v1/command-center/agents/{DEFAULT_AGENT_UID}/icon/")
    );
    let image = icon.image.as_ref().unwrap();
    assert_eq!(image.bytes.as_ref(), AGENT_ICON_SVG.as_bytes());
    // RU-35: the shell passes the ETag in the response head.
    assert_eq!(image.etag.as_deref(), Some(AGENT_ICON_ETAG));
    assert_eq!(image.content_type.as_deref(), Some("image/svg+xml"));

    let s = common::turn(&handle, "through the proxy").await;
    assert_eq!(
        s.run_status,
        RunStatus::Complete,
        "{:?}",
        s.run_status_detail
    );
    handle.shutdown().await;
    task.await.unwrap();

    let log = sim.log();
    let calls = calls.lock().unwrap().clone();
    // Once per request: the hook saw each original address once, and only originals.
    platform_sim::check_rewritten_once(&log, "/proxy", &base, &calls).unwrap();
    let path = |method: &str, path: &str| log.iter().any(|r| r.method == method && r.path == path);
    assert!(path("GET", "/proxy/api/v1/command-center/agents/"));
    assert!(path(
        "GET",
        &format!("/proxy/api/v1/command-center/agents/{DEFAULT_AGENT_UID}/icon/")
    ));
    assert!(path(
        "POST",
        &format!("/proxy/runtime/{DEFAULT_AGENT_UID}/api/chat")
    ));
    assert!(log.iter().all(|r| r.authorized), "{log:#?}");
    sim.shutdown().await;
}

/// RU-46: the reference's own rewrites return root-relative addresses (`/__platform__...`),
/// which its browser resolves against the page; the shell resolves them against the platform's
/// origin. Here every address goes to `/proxy{path}`: the platform reads and the Agent
/// runtime's check (the composer admits only after it) reach the prefixed simulator, each
/// rewritten once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_relative_rewrite_is_resolved_on_the_platform_origin() {
    let config = prefixed();
    let sim = Sim::start(config.clone()).await.unwrap();
    let base = sim.url();
    let calls: Arc<Mutex<Vec<(String, Target)>>> = Arc::default();
    let mut shell = ShellConfig::new(Config::new(&base).unwrap());
    let (seen, from) = (Arc::clone(&calls), base.clone());
    shell.rewrite_request_url = Some(Arc::new(move |url: &str, target: Target| {
        seen.lock().unwrap().push((url.to_owned(), target));
        url.replacen(&from, "/proxy", 1)
    }));
    let (handle, task) = spawn(shell);
    for input in config.default_session_inputs("rewrite-suite") {
        handle.input(input).unwrap();
    }
    let ready = handle.wait_for(platform_sim::session_settled, WAIT).await;
    assert!(ready.is_some(), "{:#?}", sim.log());
    handle.shutdown().await;
    task.await.unwrap();
    let log = sim.log();
    let calls = calls.lock().unwrap().clone();
    platform_sim::check_rewritten_once(&log, "/proxy", &base, &calls).unwrap();
    assert!(
        log.iter().any(|r| r.path.starts_with("/proxy/runtime/")),
        "{log:#?}"
    );
    sim.shutdown().await;
}

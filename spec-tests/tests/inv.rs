#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! INV-2: the engine takes nothing from the process environment. The same scenario runs in
//! child processes whose environments differ (proxy, locale, time zone, log filters, variables
//! named like the engine's own inputs) and must print the same transcript.

use std::process::Command as Process;

use spec_tests::Harness;
use spec_tests::fixtures::{answer, runtime_ready};

const MARK: &str = "=====TRANSCRIPT=====";

/// The scenario: a session is chosen, loaded, checked, and a message is sent and answered.
fn scenario() -> String {
    let mut h = Harness::talking("s-1");
    h.send("Hello");
    let r = h.runtime_request("s-1");
    h.reply(r, 200, runtime_ready("s-1"));
    let id = h.message_request("s-1");
    h.stream_head(id).chunk(id, &answer("m", "Hi.")).end(id);
    h.advance(120_000);
    h.transcript()
}

/// Run by the parent in child processes only.
#[test]
fn inv_2_child() {
    if std::env::var_os("INV2_CHILD").is_some() {
        println!("{MARK}\n{}\n{MARK}", scenario());
    }
}

fn run_child(envs: &[(&str, &str)]) -> String {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Process::new(exe);
    cmd.args([
        "--exact",
        "inv_2_child",
        "--nocapture",
        "--test-threads",
        "1",
    ])
    .env("INV2_CHILD", "1");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let parts: Vec<&str> = stdout.split(MARK).collect();
    assert!(parts.len() >= 3, "no transcript in {stdout}");
    parts[1].to_owned()
}

/// INV-2: two processes with different environments produce the same outputs, in order.
#[test]
fn inv_2_process_environment_changes_nothing() {
    let plain = run_child(&[]);
    let noisy = run_child(&[
        ("HTTP_PROXY", "http://127.0.0.1:9"),
        ("HTTPS_PROXY", "http://127.0.0.1:9"),
        ("TZ", "Pacific/Kiritimati"),
        ("LANG", "tr_TR.UTF-8"),
        ("RUST_LOG", "trace"),
        ("ENVIRONMENT_UID", "env-elsewhere"),
        ("AGENT_SESSION_UID", "s-9"),
        ("REQUESTED_SESSION_ID", "s-9"),
    ]);
    assert!(
        plain.contains("api/chat"),
        "the scenario reached the answer"
    );
    assert_eq!(plain, noisy);
}

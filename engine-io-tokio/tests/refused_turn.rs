//! RU-53 through the engine: a turn the platform's stand-in fails (a provider the person has not
//! signed in to) answers 200 with `start`, an `error` frame and `[DONE]`; the engine ends the
//! run `error` with the text in its detail, and the thread keeps the person's message.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use engine_core::{Config, RunStatus};
use engine_io_tokio::{ShellConfig, spawn};
use platform_sim::{Sim, SimConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ru_53_a_refused_turn_ends_the_run_in_error_with_its_text() {
    let mut config = SimConfig {
        answer_delay_ms: 1,
        ..SimConfig::default()
    };
    // The default provider, signed out: every session's model is one of its.
    config.catalog["providers"][0]["authenticated"] = false.into();
    let sim = Sim::start(config.clone()).await.unwrap();
    let (handle, task) = spawn(ShellConfig::new(Config::new(&sim.url()).unwrap()));
    common::open_default(&handle, &sim, &config, "refused-suite").await;
    let s = common::turn(&handle, "Hello.").await;
    assert_eq!(s.run_status, RunStatus::Error, "{:?}", s.run_status_detail);
    assert!(
        s.run_status_detail
            .as_deref()
            .is_some_and(|d| d.contains("Sign in to Acme Cloud before you use Acme Large.")),
        "{:?}",
        s.run_status_detail
    );
    let texts: Vec<String> = s.thread.iter().map(|m| format!("{m:?}")).collect();
    assert!(texts.iter().any(|t| t.contains("Hello.")), "{texts:?}");
    handle.shutdown().await;
    task.await.unwrap();
    sim.shutdown().await;
}

//! What the loopback tests of this shell share: opening the simulator's default session and
//! one turn to its end.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use engine_core::{Command, RunStatus, Snapshot};
use engine_io_tokio::Handle;
use platform_sim::{Sim, SimConfig};

/// How long a test waits for the engine.
pub const WAIT: Duration = Duration::from_secs(20);

/// Feeds the simulator's default session (`handle_name` as its handle) and waits until the
/// composer admits a message.
pub async fn open_default(handle: &Handle, sim: &Sim, config: &SimConfig, handle_name: &str) {
    for input in config.default_session_inputs(handle_name) {
        handle.input(input).unwrap();
    }
    let ready = handle.wait_for(|s| s.composer_admission, WAIT).await;
    assert!(ready.is_some(), "{:#?}", sim.log());
}

/// Sends `text` and waits until its run is over.
pub async fn turn(handle: &Handle, text: &str) -> Snapshot {
    handle
        .command(Command::SendMessage { text: text.into() })
        .unwrap();
    handle
        .wait_for(
            |s| !s.is_agent_working && s.run_status != RunStatus::Idle,
            WAIT,
        )
        .await
        .expect("the run ends")
}

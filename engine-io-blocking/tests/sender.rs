//! RU-47 to RU-49 in the blocking shell, against `platform-sim` on loopback: a blocking
//! function as the application's sender ([`sender::from_blocking`]) gets every platform request
//! without the engine's `Authorization` header; the runtime's requests go directly.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_core::{Command, Config, Method, RunStatus};
use engine_io_blocking::sender::{self, SenderRequest, SenderResponse};
use engine_io_blocking::{Shell, ShellConfig};
use platform_sim::{BlockingSim, SimConfig};

const WAIT: Duration = Duration::from_secs(20);

type Seen = Arc<Mutex<Vec<SenderRequest>>>;

/// The application's blocking client: one request carried out on a runtime of its own, with
/// its own credential.
fn forward(
    runtime: &tokio::runtime::Runtime,
    client: &reqwest::Client,
    credential: &str,
    request: &SenderRequest,
) -> Result<SenderResponse, String> {
    runtime.block_on(async {
        let method = reqwest::Method::from_bytes(request.method.as_str().as_bytes()).unwrap();
        let mut builder = client
            .request(method, &request.url)
            .header("authorization", credential);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        if let Some(body) = request.body.clone() {
            builder = builder.body(body);
        }
        let response = builder.send().await.map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = response.bytes().await.map_err(|e| e.to_string())?;
        let answer = SenderResponse::new(status, body);
        Ok(match content_type {
            Some(t) => answer.with_header("Content-Type", t),
            None => answer,
        })
    })
}

#[test]
fn ru_47_ru_49_a_blocking_sender_gets_every_platform_request() {
    let config = SimConfig {
        answer_delay_ms: 1,
        ..SimConfig::default()
    };
    let sim = BlockingSim::start(config.clone()).unwrap();
    let base = sim.url();
    let seen = Seen::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = reqwest::Client::new();
    let credential = format!("Bearer {}", config.platform_token);
    let log = Arc::clone(&seen);
    let mut shell = ShellConfig::new(Config::new(&base).unwrap());
    shell.platform_sender = Some(sender::from_blocking(move |request: SenderRequest| {
        log.lock().unwrap().push(request.clone());
        forward(&runtime, &client, &credential, &request)
    }));
    assert!(format!("{shell:?}").contains("platform_sender: true"));
    let shell = Shell::start(shell);
    for input in config.default_session_inputs("sender-suite") {
        shell.input(input).unwrap();
    }
    let ready = shell.wait_for(|s| s.composer_admission, WAIT);
    assert!(ready.is_some(), "{:#?}", sim.log());
    shell
        .command(Command::SendMessage {
            text: "through the application's sender".into(),
        })
        .unwrap();
    let s = shell
        .wait_for(
            |s| !s.is_agent_working && s.run_status != RunStatus::Idle,
            WAIT,
        )
        .unwrap();
    assert_eq!(
        s.run_status,
        RunStatus::Complete,
        "{:?}",
        s.run_status_detail
    );
    shell.shutdown();

    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty());
    for request in &seen {
        assert!(
            request.url.starts_with(&format!("{base}/api/v1/")),
            "{request:?}"
        );
        assert_eq!(request.header("authorization"), None, "{request:?}");
    }
    assert!(
        seen.iter()
            .any(|r| r.method == Method::Post && r.url.ends_with("/resolve-runtime-access/"))
    );
    platform_sim::check_sent_by_the_sender(&sim.log(), seen.len()).unwrap();
    sim.shutdown();
}

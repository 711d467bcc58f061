//! RU-47 to RU-49, the application's own sender of platform requests, against `platform-sim`
//! on loopback: every platform request goes to the sender as one complete request without the
//! engine's `Authorization` header (the sender adds its own), the Agent runtime's requests go
//! directly with the runtime token, and a 401 from the sender is final.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::sync::{Arc, Mutex};

mod common;

use engine_core::{Config, Method, RunStatus};
use engine_io_tokio::sender::{PlatformSender, SenderFuture, SenderRequest, SenderResponse};
use engine_io_tokio::{ShellConfig, spawn};
use platform_sim::{Sim, SimConfig};

use common::WAIT;

type Seen = Arc<Mutex<Vec<SenderRequest>>>;

/// A sender that records each request and carries it out with its own client and its own
/// credential (`credential`: the `Authorization` value it adds).
fn forwarding(seen: &Seen, credential: String) -> Arc<dyn PlatformSender> {
    let (seen, client) = (Arc::clone(seen), reqwest::Client::new());
    Arc::new(move |request: SenderRequest| -> SenderFuture {
        seen.lock().unwrap().push(request.clone());
        let (client, credential) = (client.clone(), credential.clone());
        Box::pin(async move {
            let method = reqwest::Method::from_bytes(request.method.as_str().as_bytes()).unwrap();
            let mut builder = client
                .request(method, &request.url)
                .header("authorization", credential);
            for (name, value) in &request.headers {
                builder = builder.header(name, value);
            }
            if let Some(body) = request.body {
                builder = builder.body(body);
            }
            let response = builder.send().await.map_err(|e| e.to_string())?;
            let status = response.status().as_u16();
            let headers = response
                .headers()
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or_default().to_owned()))
                .collect();
            let body = response.bytes().await.map_err(|e| e.to_string())?;
            let mut answer = SenderResponse::new(status, body);
            answer.headers = headers;
            Ok(answer)
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ru_47_ru_49_platform_requests_go_to_the_sender_runtime_requests_do_not() {
    let config = SimConfig {
        answer_delay_ms: 1,
        ..SimConfig::default()
    };
    let sim = Sim::start(config.clone()).await.unwrap();
    let base = sim.url();
    let seen = Seen::default();
    let mut shell = ShellConfig::new(Config::new(&base).unwrap());
    let credential = format!("Bearer {}", config.platform_token);
    shell.platform_sender = Some(forwarding(&seen, credential));
    assert!(format!("{shell:?}").contains("platform_sender: true"));
    let (handle, task) = spawn(shell);
    common::open_default(&handle, &sim, &config, "sender-suite").await;
    let s = common::turn(&handle, "through the application's sender").await;
    assert_eq!(
        s.run_status,
        RunStatus::Complete,
        "{:?}",
        s.run_status_detail
    );
    handle.shutdown().await;
    task.await.unwrap();

    let seen = seen.lock().unwrap().clone();
    // Every platform request, each an absolute address on the platform, none with the
    // engine's Authorization header; P11 (resolve-runtime-access) among them, as a POST.
    assert!(!seen.is_empty());
    for request in &seen {
        assert!(
            request.url.starts_with(&format!("{base}/api/v1/")),
            "{request:?}"
        );
        assert_eq!(request.header("authorization"), None, "{request:?}");
        assert_eq!(request.header("accept"), Some("application/json"));
    }
    assert!(
        seen.iter()
            .any(|r| r.method == Method::Post && r.url.ends_with("/resolve-runtime-access/"))
    );
    assert!(
        seen.iter().all(|r| !r.url.contains("/runtime/")),
        "the runtime never goes to it"
    );
    // The runtime's requests went directly, each request with its target's credential, and
    // the engine sent no platform request itself.
    platform_sim::check_sent_by_the_sender(&sim.log(), seen.len()).unwrap();
    sim.shutdown().await;
}

/// RU-48: a 401 from the sender is that request's answer: the sender is called once for it and
/// the engine does not repeat it (renewal belongs to the sender).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ru_48_a_401_from_the_sender_is_final() {
    let config = SimConfig::default();
    let sim = Sim::start(config.clone()).await.unwrap();
    let seen = Seen::default();
    let mut shell = ShellConfig::new(Config::new(&sim.url()).unwrap());
    // A credential the platform refuses.
    shell.platform_sender = Some(forwarding(&seen, "Bearer expired".into()));
    let (handle, task) = spawn(shell);
    for input in config.default_session_inputs("sender-suite") {
        handle.input(input).unwrap();
    }
    let s = handle
        .wait_for(
            |s| !s.is_loading_latest_sessions && s.latest_sessions_error.is_some(),
            WAIT,
        )
        .await
        .expect("the list fails");
    assert!(s.latest_sessions_error.unwrap().contains("401"));
    handle.shutdown().await;
    task.await.unwrap();
    let lists = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.url.contains("/api/v1/agent-sessions/?"))
        .count();
    assert_eq!(lists, 1, "called once, never repeated");
    assert!(sim.log().iter().all(|r| !r.authorized));
    sim.shutdown().await;
}

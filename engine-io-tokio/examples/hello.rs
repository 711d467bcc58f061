//! A complete host on the tokio shell: it opens the Agent's default session, waits until a
//! message can be sent (or prints why not), sends one and prints the answer as it streams.
//!
//! `cargo run -p engine-io-tokio --example hello`: with `AGENT_PLATFORM_URL` unset it starts
//! platform-sim on loopback; `AGENT_CHAT_TOKEN`, `AGENT_USER`, `AGENT_ENVIRONMENT` and
//! `AGENT_UID` default to the simulator's demo values. Not ready: the cause, and exit status 1.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use engine_core::stream::StreamDelta;
use engine_core::{Command, Config, DefaultSession, Event, Input, Person, Secret};
use engine_io_tokio::{ShellConfig, spawn};
use platform_sim::{DEFAULT_AGENT_UID, DEFAULT_PLATFORM_TOKEN, Sim, SimConfig};

/// The environment variable `name`, else `default`.
fn var(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

#[tokio::main]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    // The platform named, else a simulator started here (stopped when `sim` is dropped).
    let mut sim = None;
    let url = match std::env::var("AGENT_PLATFORM_URL") {
        Ok(url) => url,
        Err(_) => sim.insert(Sim::start(SimConfig::default()).await?).url(),
    };
    let (handle, task) = spawn(ShellConfig::new(Config::new(&url)?));
    let mut events = handle.subscribe(); // before the inputs whose events matter
    // Who the chat acts for, where, and with which Agent (by default the simulator's).
    let token = Secret::new(var("AGENT_CHAT_TOKEN", DEFAULT_PLATFORM_TOKEN));
    let person = Person::new(var("AGENT_USER", "user-demo"), token);
    let environment = var("AGENT_ENVIRONMENT", "env-demo");
    let default_session = DefaultSession {
        agent_uid: Some(var("AGENT_UID", DEFAULT_AGENT_UID)),
        handle_unique_id: "hello-example".into(),
        name: "Hello".into(),
        ..DefaultSession::default()
    };
    for input in [
        Input::Person(person),
        Input::EnvironmentUid(Some(environment)),
        Input::DefaultSession(Some(default_session)), // the session to write to
        Input::ShowsDefaultSession(true),
        Input::IsVisible(true),
    ] {
        handle.input(input)?;
    }

    // Ready, or the cause as soon as there is one: a wrong token, a closed port...
    if let Err(cause) = handle.wait_ready(Duration::from_secs(30)).await {
        let (code, status) = (cause.code.as_str(), cause.status());
        let http = status.map(|s| format!(", HTTP {s}")).unwrap_or_default();
        eprintln!("not ready: {cause} (code {code}{http})");
        if let Some(failure) = &cause.failure {
            eprintln!("the failing read: {failure}"); // the transport's words, for a closed port
        }
        return Ok(ExitCode::FAILURE);
    }
    let hello = Command::SendMessage {
        text: "Hello".into(),
    };
    handle.command(hello)?;
    while let Ok(event) = events.recv().await {
        match event {
            Event::Answer { delta, .. } => match delta {
                StreamDelta::TextDelta { delta, .. } => {
                    print!("{delta}");
                    std::io::stdout().flush()?;
                }
                StreamDelta::Ended { .. } => break,
                _ => {}
            },
            Event::RunFailed { failure, .. } => return Err(failure.message.into()),
            _ => {}
        }
    }
    println!();
    handle.shutdown().await;
    task.await?;
    Ok(ExitCode::SUCCESS)
}

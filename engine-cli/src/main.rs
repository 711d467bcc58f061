//! `agent-chat`: a terminal chat on the agent-chat engine. With no arguments it starts an
//! embedded platform simulator and opens the default session of its demo Agent; with
//! `--platform URL` it talks to a real platform. `agent-chat send "text"` sends one message,
//! prints the answer and exits.

mod answer;
mod args;
mod chat;
mod commands;
mod failure;
mod line;
mod logging;
mod offline;
mod record;
mod screen;
mod stage;
mod target;
mod terminal;
mod text;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Action, Args};

/// The longest the pre-flight check waits for each answer (less when `--timeout` is less).
const PREFLIGHT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    logging::init();
    match &args.command {
        Some(Action::Replay { file }) => return offline::replay(file),
        Some(Action::DecodeStream { file }) => return offline::decode_stream(file),
        Some(Action::Simulate {
            seeds,
            from,
            steps,
            fault_rate,
            cross_environment,
            vary_presence,
            local_source,
            out,
        }) => {
            let sim = spec_tests::sim::Sim {
                seed: *from,
                steps: *steps,
                fault_rate: *fault_rate,
                cross_environment: *cross_environment,
                vary_presence: *vary_presence,
                dialect: spec_tests::sim::dialect_of(*from),
                local: *local_source,
            };
            return offline::simulate(sim, *seeds, out);
        }
        _ => {}
    }
    // Opened before anything starts: a path that cannot be written is bad usage, said at once.
    let mut record = match args
        .record
        .as_deref()
        .map(record::Record::create)
        .transpose()
    {
        Ok(r) => r,
        Err(e) => {
            terminal::error_line(&format!("agent-chat: {e}"));
            return ExitCode::from(2);
        }
    };
    let target = match target::Target::resolve(&args).await {
        Ok(t) => t,
        Err(e) => {
            terminal::error_line(&format!("agent-chat: {e}"));
            return ExitCode::from(2);
        }
    };
    let timeout = std::time::Duration::from_secs(args.timeout);
    // The check may run into a time out; a Ctrl-C meanwhile ends the command at once.
    let checked = tokio::select! {
        checked = target.check(timeout.min(PREFLIGHT_TIMEOUT)) => checked,
        _ = tokio::signal::ctrl_c() => {
            terminal::raw_err("\n");
            return ExitCode::from(chat::INTERRUPTED);
        }
    };
    if let Err(cause) = checked {
        terminal::error_line(&format!("agent-chat: {cause}"));
        target.stop().await;
        // The documented statuses: 3 timed out, 1 failed or refused.
        let timed_out = matches!(cause, failure::Cause::TimedOut { .. });
        return ExitCode::from(if timed_out { 3 } else { 1 });
    }
    if let Some(line) = target.local_not_listening(args.timeout).await {
        terminal::error_line(&format!("agent-chat: {line}"));
    }
    let code = match &args.command {
        Some(Action::Send { text }) => {
            chat::send_once(&target, text, args.timeout, record.as_mut()).await
        }
        _ => chat::interactive(&target, args.timeout, record.as_mut()).await,
    };
    target.stop().await;
    code
}

//! `agent-chat`: a terminal chat on the agent-chat engine. With no arguments it starts an
//! embedded platform simulator and opens the default session of its demo Agent; with
//! `--platform URL` it talks to a real platform. `agent-chat send "text"` sends one message,
//! prints the answer and exits.

mod args;
mod chat;
mod offline;
mod stage;
mod target;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Action, Args};

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
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
            out,
        }) => {
            let sim = spec_tests::sim::Sim {
                seed: *from,
                steps: *steps,
                fault_rate: *fault_rate,
                cross_environment: *cross_environment,
                vary_presence: *vary_presence,
            };
            return offline::simulate(sim, *seeds, out);
        }
        _ => {}
    }
    let target = match target::Target::resolve(&args).await {
        Ok(t) => t,
        Err(e) => {
            eprintln!("agent-chat: {e}");
            return ExitCode::from(2);
        }
    };
    let record = args.record.as_deref();
    let code = match &args.command {
        Some(Action::Send { text }) => chat::send_once(&target, text, args.timeout, record).await,
        _ => chat::interactive(&target, args.timeout, record).await,
    };
    target.stop().await;
    code
}

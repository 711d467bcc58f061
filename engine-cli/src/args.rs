//! The command line.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// A terminal chat with an Agent, on the deterministic agent-chat engine.
///
/// With no `--platform` it starts an embedded platform simulator and opens the default session
/// of its demo Agent.
#[derive(Debug, Parser)]
#[command(name = "agent-chat", version, about)]
pub struct Args {
    /// The platform's base URL (absolute http or https). Without it, an embedded simulator runs.
    #[arg(long, global = true)]
    pub platform: Option<String>,
    /// Chat with a local Agent runtime at this loopback address instead (ADR 099): no platform,
    /// no token; `--agent` names it (default "Local Agent"), `--user` is sent as `user_uid`.
    #[arg(long, global = true, value_name = "URL", conflicts_with_all = ["platform", "token_file", "environment"])]
    pub local: Option<String>,
    /// A file holding the platform token (else the AGENT_CHAT_TOKEN environment variable).
    #[arg(long, global = true)]
    pub token_file: Option<PathBuf>,
    /// The Organization Environment.
    #[arg(long, global = true)]
    pub environment: Option<String>,
    /// The Agent whose default session to open.
    #[arg(long, global = true)]
    pub agent: Option<String>,
    /// The person's public uid.
    #[arg(long, global = true)]
    pub user: Option<String>,
    /// How long to wait for the session and for an answer, in seconds.
    #[arg(long, global = true, default_value_t = 120)]
    pub timeout: u64,
    /// Record a trace of the session into this file (JSON Lines, tokens redacted).
    #[arg(long, global = true)]
    pub record: Option<PathBuf>,
    /// What to do; without one, an interactive chat.
    #[command(subcommand)]
    pub command: Option<Action>,
}

/// A non-interactive action.
#[derive(Debug, Subcommand)]
pub enum Action {
    /// Send one message, print the answer, exit (0 answered, 1 failed, 2 bad usage, 3 timed out).
    Send {
        /// The message.
        text: String,
    },
    /// Replay a recorded trace, print its timeline, and check its expectations (exit 1 on the
    /// first failed one or a malformed line).
    Replay {
        /// The trace file (JSON Lines).
        file: PathBuf,
    },
    /// Decode a ui-message-stream body and print the assembled message (AI SDK shape).
    DecodeStream {
        /// The body, as an Agent sends it (`.sse`).
        file: PathBuf,
    },
    /// Run the deterministic simulation (docs/testing.md) for many seeds, checking every
    /// invariant after every step; print the totals and steps per second. A failing seed is
    /// printed and its trace written for `agent-chat replay` (exit 1).
    Simulate {
        /// How many seeds.
        #[arg(long, default_value_t = 1000)]
        seeds: u64,
        /// The first seed.
        #[arg(long, default_value_t = 0)]
        from: u64,
        /// Steps per seed.
        #[arg(long, default_value_t = 300)]
        steps: usize,
        /// One request in this many gets a fault (0: none).
        #[arg(long, default_value_t = 8)]
        fault_rate: u32,
        /// Let the host ask for sessions of the other Environment, and keep them across a
        /// switch.
        #[arg(long)]
        cross_environment: bool,
        /// Run each seed again with every runtime-access answer reporting another presence
        /// phase, and check that admission and the runtime notice stay the same (INV-6).
        #[arg(long)]
        vary_presence: bool,
        /// Where a failing seed's trace is written.
        #[arg(long, default_value = "sim-failures")]
        out: PathBuf,
    },
}

/// The environment variable that may hold the platform token.
pub const TOKEN_ENV: &str = "AGENT_CHAT_TOKEN";

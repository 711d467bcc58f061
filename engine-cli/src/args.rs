//! The command line.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// A terminal chat with an Agent, on the deterministic agent-chat engine.
///
/// With no `--platform` it starts an embedded platform simulator and opens the default session
/// of its demo Agent.
#[derive(Debug, Parser)]
#[command(name = "agent-chat", version, about, after_help = EXAMPLES)]
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
    /// Record a trace of the session into this file (JSON Lines, tokens redacted). The file is
    /// opened at start (exit 2 when it cannot be) and written when the chat ends, Ctrl-C
    /// included; an existing file is replaced only then (a run that fails before the chat
    /// starts leaves it as it was). A trace that cannot be written makes the exit status 1.
    #[arg(long, global = true)]
    pub record: Option<PathBuf>,
    /// The embedded simulator's pause between streamed answer pieces, in milliseconds (as
    /// `platform-sim --answer-delay-ms`): a slow answer, to try `/stop` or Ctrl-C on.
    #[arg(long, global = true, value_name = "MS", conflicts_with_all = ["platform", "local"])]
    pub answer_delay_ms: Option<u64>,
    /// How the embedded simulator's Agent spells its answers (as `platform-sim --dialect`):
    /// `runtime`, as the platform's real Agent runtime does, or `ai-sdk`, the AI SDK's names.
    #[arg(long, global = true, value_enum, default_value_t = platform_sim::Dialect::Runtime, hide_possible_values = true, conflicts_with_all = ["platform", "local"])]
    pub dialect: platform_sim::Dialect,
    /// What to do; without one, an interactive chat.
    #[command(subcommand)]
    pub command: Option<Action>,
}

/// Examples shown under `--help`.
const EXAMPLES: &str = "\
Examples:
  agent-chat                          chat with the embedded simulator's demo Agent
  agent-chat send \"hello\"             one message, its answer on stdout, then exit
  agent-chat --answer-delay-ms 300    a slowly streamed answer, to try Ctrl-C or /stop
  agent-chat --dialect ai-sdk send hi the simulator's Agent in the AI SDK's names
  AGENT_CHAT_TOKEN=... agent-chat --platform https://platform.example \\
      --environment ENV --agent AGENT_UID --user USER_UID
  agent-chat --local http://127.0.0.1:8787 send hello
  agent-chat --record session.jsonl send hi && agent-chat replay session.jsonl
  RUST_LOG=engine_io_tokio=debug agent-chat send hi   log to stderr (tokens never appear)

In the chat: /help lists the commands; Ctrl-C stops the running answer, a second Ctrl-C (or
Ctrl-D, or /quit) leaves.

Exit status: 0 answered (or the chat ended after it connected), 1 failed, refused, the chat
never connected or the trace could not be written, 2 bad usage (a bad URL, an unwritable
--record file), 3 timed out, 130 interrupted (Ctrl-C during `send`, or before the chat was
ready), 141 `send`'s output closed (`| head`), 143/129 SIGTERM/SIGHUP during the chat.";

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
    /// Decode an answer stream (the runtime's dialect or the AI SDK's) and print the assembled
    /// message (AI SDK shape); on stderr, a line per tool call and its outcome, and why an
    /// answer that shows nothing does so.
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
        /// Let the host also switch to a local Agent runtime and back (ADR 099).
        #[arg(long)]
        local_source: bool,
        /// Where a failing seed's trace is written.
        #[arg(long, default_value = "sim-failures")]
        out: PathBuf,
    },
}

/// The environment variable that may hold the platform token.
pub const TOKEN_ENV: &str = "AGENT_CHAT_TOKEN";

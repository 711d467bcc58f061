//! `platform-sim`: runs the simulated platform on loopback until Ctrl-C.

use std::process::ExitCode;

use clap::Parser;
use platform_sim::{
    DEFAULT_PLATFORM_TOKEN, Dialect, LocalRuntime, RuntimeBehaviour, Sim, SimConfig,
};

/// The environment variable that sets the platform token (else the built-in default).
/// `println!` that ignores a closed stdout (`platform-sim | head -3`): the simulator keeps
/// serving instead of panicking on its next line.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

const TOKEN_ENV: &str = "PLATFORM_SIM_TOKEN";

/// A simulated platform and Agent runtime on 127.0.0.1, for the chat engine.
#[derive(Debug, Parser)]
#[command(name = "platform-sim", version, about, after_help = EXAMPLES)]
struct Args {
    /// The port to listen on (0: a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// The demo Agent is idle and wakes after this many readiness checks.
    #[arg(long, value_name = "N")]
    waking_checks: Option<u32>,
    /// The demo Agent has no default model (session creation needs one).
    #[arg(long)]
    needs_model: bool,
    /// The pause between streamed answer chunks, in milliseconds.
    #[arg(long, value_name = "MS")]
    answer_delay_ms: Option<u64>,
    /// How the Agents spell their answers: `runtime`, as the platform's real Agent runtime
    /// does (no `start` frame, reasoning, a `tool-call-*` call and its `tool-result`, text in
    /// `textDelta`, `json.dumps` style with `\uXXXX` escapes), or `ai-sdk`, the AI SDK's
    /// ui-message-stream names (`start`, `tool-input-*` / `tool-output-*`, `delta`). Both carry
    /// the same answer.
    #[arg(long, value_enum, default_value_t = Dialect::Runtime, hide_possible_values = true)]
    dialect: Dialect,
    /// Also play a local Agent runtime at the root (ADR 099): /ready, /health, /api/chat, the
    /// local session routes. No credential is needed or accepted there.
    #[arg(long)]
    local: bool,
    /// The local runtime reports this `mode` on /health; the engine refuses a runtime that
    /// reports any other non-empty mode (a managed runtime), as the reference does.
    #[arg(long, value_name = "MODE", default_value = "local", requires = "local")]
    local_mode: String,
    /// The local runtime answers /ready with `ok: false` this many times first.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "local")]
    local_ready_after: u32,
    /// The local runtime cannot list conversations or reload their history (404: live-only).
    #[arg(long, requires = "local")]
    local_live_only: bool,
    /// Serve the files of this folder under /demo/ (the web package's demo page:
    /// bindings/web/demo, built by `npm run build:demo` there), with /demo/config.json giving
    /// the page the demo values, the platform token among them.
    #[arg(long, value_name = "DIR")]
    web: Option<std::path::PathBuf>,
}

/// Examples shown under `--help`.
const EXAMPLES: &str = "\
Examples:
  platform-sim --port 8080                       the demo platform on 127.0.0.1:8080
  platform-sim --answer-delay-ms 300             slowly streamed answers
  platform-sim --dialect ai-sdk                  answers in the AI SDK's names
  platform-sim --waking-checks 3                 an Agent that wakes after three checks
  platform-sim --needs-model                     session creation needs a model
  platform-sim --local --port 8787               also a local Agent runtime (ADR 099)
  platform-sim --web bindings/web/demo           the web package's demo page at /demo/
  PLATFORM_SIM_TOKEN=my-token platform-sim       another platform token
  RUST_LOG=platform_sim=debug platform-sim       one log line per request on stderr
                                                 (tokens redacted, headers never logged)";

/// A `tracing` subscriber on stderr filtered by `RUST_LOG`, when it is set.
fn init_logging() {
    let Some(filter) = std::env::var_os("RUST_LOG").filter(|v| !v.is_empty()) else {
        return;
    };
    let filter = tracing_subscriber::EnvFilter::builder().parse_lossy(filter.to_string_lossy());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    init_logging();
    let mut config = SimConfig::default();
    let custom_token = std::env::var(TOKEN_ENV)
        .ok()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    if let Some(token) = &custom_token {
        config.platform_token.clone_from(token);
    }
    for agent in &mut config.agents {
        if let Some(checks) = args.waking_checks {
            agent.runtime = RuntimeBehaviour::Waking { checks };
        }
        agent.needs_model = args.needs_model;
    }
    if let Some(delay) = args.answer_delay_ms {
        config.answer_delay_ms = delay;
    }
    config = config.with_dialect(args.dialect);
    config.web = args.web.clone();
    if args.local {
        config.local = Some(LocalRuntime {
            mode: args.local_mode.clone(),
            ready_after: args.local_ready_after,
            lists_sessions: !args.local_live_only,
            ..LocalRuntime::default()
        });
    }
    let sim = match Sim::start_on_port(config, args.port).await {
        Ok(sim) => sim,
        Err(e) => {
            eprintln!(
                "platform-sim: cannot listen on 127.0.0.1:{}: {e}",
                args.port
            );
            return ExitCode::FAILURE;
        }
    };
    let config = sim.config();
    say!("platform-sim listening on {}", sim.url());
    say!(
        "environment: {}  person: {}  answers: {} dialect",
        config.environment_uid,
        config.person_uid,
        config.dialect.name()
    );
    for agent in &config.agents {
        say!(
            "agent: {} ({})  runtime: {:?}  needs model: {}",
            agent.uid,
            agent.name,
            agent.runtime,
            agent.needs_model
        );
    }
    if custom_token.is_some() {
        say!("platform token: the value of ${TOKEN_ENV} (send it as `Authorization: Bearer ...`)");
    } else {
        // The built-in default is a public development value, not a secret.
        say!(
            "platform token: the built-in default {DEFAULT_PLATFORM_TOKEN:?} (set ${TOKEN_ENV} to choose another)"
        );
    }
    if let Some(agent) = config.agents.first() {
        // A line to paste as it is: the token goes in agent-chat's variable (never on its
        // command line); a chosen token is named by its variable, not echoed.
        let token = if custom_token.is_some() {
            format!("\"${TOKEN_ENV}\"")
        } else {
            DEFAULT_PLATFORM_TOKEN.to_owned()
        };
        say!(
            "chat with it: AGENT_CHAT_TOKEN={token} cargo run -p engine-cli --bin agent-chat -- --platform {} --environment {} --agent {} --user {}",
            sim.url(),
            config.environment_uid,
            agent.uid,
            config.person_uid
        );
    }
    if let Some(local) = &config.local {
        say!(
            "local runtime: {} (mode {:?}, ready after {} check{}, {}), no credential",
            sim.url(),
            local.mode,
            local.ready_after,
            if local.ready_after == 1 { "" } else { "s" },
            if local.lists_sessions {
                "lists its conversations"
            } else {
                "live-only"
            }
        );
        say!(
            "chat with it: cargo run -p engine-cli --bin agent-chat -- --local {}",
            sim.url()
        );
    }
    if config.web.is_some() {
        say!("demo page: {}/demo/", sim.url());
    }
    say!("press Ctrl-C to stop");
    if let Err(e) = tokio::signal::ctrl_c().await {
        eprintln!("platform-sim: cannot wait for Ctrl-C: {e}");
    }
    sim.shutdown().await;
    ExitCode::SUCCESS
}

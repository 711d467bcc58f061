//! `RUST_LOG`: the engine's and the HTTP stack's `tracing` output, on stderr.
//!
//! Nothing is logged unless `RUST_LOG` asks (a chat's screen is for the chat). Tokens never
//! appear at any level: the engine keeps them in `Secret` (whose Debug output is redacted), the
//! shell marks the `Authorization` header sensitive, and this command never logs a header.

use tracing_subscriber::EnvFilter;

/// Installs a subscriber on stderr filtered by `RUST_LOG` (for example
/// `RUST_LOG=engine_io_tokio=debug`); none when it is unset or empty. A filter that does not
/// parse is reported once and the rest of it applied.
pub fn init() {
    let Some(filter) = std::env::var_os("RUST_LOG").filter(|v| !v.is_empty()) else {
        return;
    };
    let filter = filter.to_string_lossy().into_owned();
    let env_filter = EnvFilter::builder().parse_lossy(&filter);
    let _ = tracing_subscriber::fmt()
        .with_env_filter(env_filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

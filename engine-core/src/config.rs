//! Engine configuration.

use serde::Serialize;

/// How an engine is built. Construct with [`Config::new`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    /// The platform base address (absolute `http`/`https`, no trailing slash).
    pub platform_base_url: String,
    /// Seed of the engine's generator (fresh thread ids and handles), so runs reproduce.
    pub seed: u64,
    /// Largest answer body the engine buffers; a larger one fails the request.
    pub max_body_bytes: usize,
    /// Largest streamed answer (all its bytes); a larger one is cut off and its turn fails.
    pub max_answer_bytes: usize,
    /// Largest single ui-message-stream event; a larger one is dropped.
    pub max_event_bytes: usize,
    /// Wall-clock time (Unix milliseconds) at the engine's start, for absolute values (the wake
    /// deadlines of held sends, the engine's own wake, fresh handles: OI-4, OI-5, OI-28). Hosts
    /// set it to the real clock; the default 0 suits tests on a virtual clock only.
    pub start_unix_ms: u64,
}

/// Why a configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The platform base is not an absolute `http`/`https` address.
    #[error("The platform base URL must be an absolute http or https URL, got {0:?}.")]
    BaseUrl(String),
}

impl Config {
    /// Default body limit: 8 MiB.
    pub const DEFAULT_MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
    /// Default streamed-answer limit: 64 MiB.
    pub const DEFAULT_MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;
    /// Default event limit: 1 MiB.
    pub const DEFAULT_MAX_EVENT_BYTES: usize = 1024 * 1024;

    /// A configuration for this platform base with seed 0.
    ///
    /// ```
    /// let config = engine_core::Config::new("https://platform.example.test/").unwrap();
    /// assert_eq!(config.platform_base_url, "https://platform.example.test");
    /// assert!(engine_core::Config::new("platform.example.test").is_err());
    /// ```
    pub fn new(platform_base_url: &str) -> Result<Config, ConfigError> {
        let base = platform_base_url.trim();
        let rest = base
            .strip_prefix("https://")
            .or_else(|| base.strip_prefix("http://"))
            .unwrap_or("");
        let host = rest.split('/').next().unwrap_or("");
        if host.is_empty() || base.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(ConfigError::BaseUrl(platform_base_url.to_owned()));
        }
        Ok(Config {
            platform_base_url: base.trim_end_matches('/').to_owned(),
            seed: 0,
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
            max_answer_bytes: Self::DEFAULT_MAX_ANSWER_BYTES,
            max_event_bytes: Self::DEFAULT_MAX_EVENT_BYTES,
            start_unix_ms: 0,
        })
    }

    /// The same configuration with another seed.
    pub fn with_seed(mut self, seed: u64) -> Config {
        self.seed = seed;
        self
    }
}

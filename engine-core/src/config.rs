//! Engine configuration.

use serde::Serialize;

/// How an engine is built. Construct with [`Config::new`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
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
    /// RU-47: the application's own request sender carries every platform request (the
    /// reference's `connection.sendPlatformRequest`). Platform requests then go without the
    /// engine's `Authorization` header, even with a person's token (the sender authenticates
    /// them, and renews its credential itself: the engine repeats no platform request); runtime
    /// requests are unchanged (RU-49: direct, with the runtime token). The person's token still
    /// stands for "signed in" where the engine asks for one (icons). Default `false`.
    pub platform_sender: bool,
}

/// Why a configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The platform base is not an absolute `http`/`https` address (RU-45: the reference's
    /// text). The value refused, as given, is kept for the host's own message.
    #[error("The chat backend connection requires an absolute http(s) platform API base URL.")]
    BaseUrl(String),
}

impl ConfigError {
    /// A stable code: `config_base_url`.
    pub fn code(&self) -> &'static str {
        match self {
            ConfigError::BaseUrl(_) => "config_base_url",
        }
    }
}

impl Config {
    /// Default body limit: 8 MiB.
    pub const DEFAULT_MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
    /// Default streamed-answer limit: 64 MiB.
    pub const DEFAULT_MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;
    /// Default event limit: 1 MiB.
    pub const DEFAULT_MAX_EVENT_BYTES: usize = 1024 * 1024;

    /// A configuration for this platform base with seed 0 (RU-45). The base is trimmed and
    /// must be an absolute `http` or `https` URL with a host, and no query or fragment (every
    /// platform path is appended to it); the scheme is read without regard to case, as RFC
    /// 3986 says, and kept in lower case.
    ///
    /// ```
    /// let config = engine_core::Config::new("https://platform.example.test/").unwrap();
    /// assert_eq!(config.platform_base_url, "https://platform.example.test");
    /// let config = engine_core::Config::new("HTTPS://platform.example.test").unwrap();
    /// assert_eq!(config.platform_base_url, "https://platform.example.test");
    /// assert!(engine_core::Config::new("platform.example.test").is_err());
    /// assert!(engine_core::Config::new("ftp://platform.example.test").is_err());
    /// let refused = engine_core::Config::new("/api").unwrap_err();
    /// assert_eq!(
    ///     refused.to_string(),
    ///     "The chat backend connection requires an absolute http(s) platform API base URL."
    /// );
    /// assert_eq!(refused.code(), "config_base_url");
    /// ```
    pub fn new(platform_base_url: &str) -> Result<Config, ConfigError> {
        let base = platform_base_url.trim();
        let refused = || ConfigError::BaseUrl(platform_base_url.to_owned());
        let (scheme, rest) = base.split_once("://").ok_or_else(refused)?;
        let scheme = scheme.to_ascii_lowercase();
        let host = rest.split('/').next().unwrap_or("");
        if !matches!(scheme.as_str(), "http" | "https")
            || host.is_empty()
            || base
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '?' | '#'))
        {
            return Err(refused());
        }
        Ok(Config {
            platform_base_url: format!("{scheme}://{}", rest.trim_end_matches('/')),
            seed: 0,
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
            max_answer_bytes: Self::DEFAULT_MAX_ANSWER_BYTES,
            max_event_bytes: Self::DEFAULT_MAX_EVENT_BYTES,
            start_unix_ms: 0,
            platform_sender: false,
        })
    }

    /// The same configuration with another seed.
    pub fn with_seed(mut self, seed: u64) -> Config {
        self.seed = seed;
        self
    }
}

/// How a host outside Rust describes an engine: the JSON form `engine-ffi` and the Python
/// package take, `{"platformBaseUrl": "https://...", "seed": 0, "startUnixMs": 0,
/// "maxBodyBytes": null, "maxAnswerBytes": null, "maxEventBytes": null, "record": false,
/// "platformSender": false}` (only `platformBaseUrl` is required; unknown fields are refused).
///
/// ```
/// let form: engine_core::HostConfig =
///     serde_json::from_str(r#"{"platformBaseUrl": "https://platform.example", "seed": 3}"#).unwrap();
/// let engine = form.engine(engine_core::Time::ZERO).unwrap();
/// assert!(engine.trace().is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct HostConfig {
    /// [`Config::platform_base_url`].
    pub platform_base_url: String,
    /// [`Config::seed`].
    #[serde(default)]
    pub seed: u64,
    /// [`Config::start_unix_ms`].
    #[serde(default)]
    pub start_unix_ms: u64,
    /// [`Config::max_body_bytes`], when not the default.
    #[serde(default)]
    pub max_body_bytes: Option<usize>,
    /// [`Config::max_answer_bytes`], when not the default.
    #[serde(default)]
    pub max_answer_bytes: Option<usize>,
    /// [`Config::max_event_bytes`], when not the default.
    #[serde(default)]
    pub max_event_bytes: Option<usize>,
    /// Record a trace ([`crate::Engine::new_recording`]).
    #[serde(default)]
    pub record: bool,
    /// [`Config::platform_sender`].
    #[serde(default)]
    pub platform_sender: bool,
}

impl HostConfig {
    /// The form for this platform base, everything else at its default.
    ///
    /// ```
    /// let mut form = engine_core::HostConfig::new("https://platform.example");
    /// form.seed = 3;
    /// assert_eq!(form.engine(engine_core::Time::ZERO).map(|e| e.trace().is_none()), Ok(true));
    /// ```
    pub fn new(platform_base_url: impl Into<String>) -> HostConfig {
        HostConfig {
            platform_base_url: platform_base_url.into(),
            seed: 0,
            start_unix_ms: 0,
            max_body_bytes: None,
            max_answer_bytes: None,
            max_event_bytes: None,
            record: false,
            platform_sender: false,
        }
    }

    /// The [`Config`] this form describes ([`HostConfig::engine`] starts its engine).
    pub(crate) fn config(&self) -> Result<Config, ConfigError> {
        let mut config = Config::new(&self.platform_base_url)?.with_seed(self.seed);
        config.start_unix_ms = self.start_unix_ms;
        config.platform_sender = self.platform_sender;
        if let Some(n) = self.max_body_bytes {
            config.max_body_bytes = n;
        }
        if let Some(n) = self.max_answer_bytes {
            config.max_answer_bytes = n;
        }
        if let Some(n) = self.max_event_bytes {
            config.max_event_bytes = n;
        }
        Ok(config)
    }
}

/// A JSON error as a host is told it: what kind, and where, never the values the parser saw
/// (a refused input may hold a credential). `what` names the argument.
///
/// ```
/// let e = serde_json::from_str::<u8>(r#""Bearer s3cret""#).unwrap_err();
/// let text = engine_core::json_error_text("The input", &e);
/// assert!(text.starts_with("The input does not have the expected form"));
/// assert!(!text.contains("s3cret"));
/// ```
pub fn json_error_text(what: &str, e: &serde_json::Error) -> String {
    let kind = match e.classify() {
        serde_json::error::Category::Io => "could not be read",
        serde_json::error::Category::Syntax => "is not JSON",
        serde_json::error::Category::Data => "does not have the expected form",
        serde_json::error::Category::Eof => "ends too early",
    };
    format!("{what} {kind} (line {}, column {}).", e.line(), e.column())
}

//! Why a platform cannot be used, in one sentence with what to try: the `--platform` address
//! checked with the `url` crate before anything starts, then a pre-flight read that tells
//! apart a refused connection, a name that does not resolve, a TLS failure, a refused token
//! and an unknown Environment or Agent.
//!
//! The engine reports every failure to reach the platform with the same text ("The Agent's
//! session could not be opened. Try again.", by the specification), so the command asks first,
//! with the reads the engine is about to make: the person's latest session of the Agent in the
//! Environment (P1), then, when there is none, the Environment's Agents (P13).

use std::fmt;
use std::time::Duration;

use engine_core::Secret;
use url::Url;

/// The `--platform` address as the engine takes it, or why it is not one (bad usage, exit 2).
/// The scheme may be in any case (`HTTPS://` is `https://`).
pub fn platform_url(text: &str) -> Result<Url, String> {
    let trimmed = text.trim();
    let url = Url::parse(trimmed).map_err(|e| {
        format!(
            "--platform {trimmed:?} is not a URL ({e}); write it as {}",
            with_scheme(trimmed).unwrap_or_else(|| "https://platform.example".into())
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        let hint = with_scheme(trimmed)
            .map(|s| format!(" (write it as {s})"))
            .unwrap_or_default();
        return Err(format!(
            "--platform {trimmed:?} must start with http:// or https://, not {}://{hint}",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("--platform {trimmed:?} names no host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "--platform {trimmed:?} must not carry a query or a fragment"
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "--platform must not carry a user name or password; the token goes in --token-file or {}",
            crate::args::TOKEN_ENV
        ));
    }
    Ok(url)
}

/// The address the person meant when they left out the scheme (`127.0.0.1:8080`,
/// `localhost:8080`, `platform.example`): `http://` for a loopback host, else `https://`;
/// `None` for anything else (a path, an address with a scheme, something that is no host).
pub fn with_scheme(text: &str) -> Option<String> {
    if text.contains("://") || text.starts_with('/') || text.is_empty() {
        return None;
    }
    let https = Url::parse(&format!("https://{text}")).ok()?;
    let host = https.host_str()?;
    let loopback = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    Some(format!(
        "{}://{text}",
        if loopback { "http" } else { "https" }
    ))
}

/// Why the platform cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// Nothing listens at the address.
    Refused { at: String },
    /// The host name does not resolve.
    Unresolved { host: String },
    /// The TLS handshake failed.
    Tls { host: String, detail: String },
    /// No answer in time.
    TimedOut { at: String, after: Duration },
    /// An `https` platform, but this build has no TLS backend.
    NoTls { at: String },
    /// Some other failure to connect or to get an answer.
    Unreachable { at: String, detail: String },
    /// The platform refused the token (401).
    Token { status: u16, message: String },
    /// The platform forbids the read (403): a token without access to this Environment (or
    /// Agent) as often as a bad one.
    Forbidden {
        message: String,
        environment: String,
    },
    /// The address answers, but not as the platform's API (404 to the session list, without
    /// the platform's error message).
    NotThePlatform { status: u16, message: String },
    /// The platform answered 404 with its own error message: an unknown Environment or Agent.
    NotFound { message: String },
    /// The platform lists no Agent in the Environment.
    UnknownEnvironment { environment: String },
    /// The Environment's Agents do not include this one.
    UnknownAgent {
        agent: String,
        environment: String,
        known: Vec<String>,
    },
    /// Another HTTP failure of the session list.
    Http { status: u16, message: String },
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Refused { at } => write!(
                f,
                "Nothing is listening at {at} (connection refused): check the --platform address and that the platform is running."
            ),
            Cause::Unresolved { host } => write!(
                f,
                "The host name {host} could not be resolved: check the --platform address and your network or DNS."
            ),
            Cause::Tls { host, detail } => write!(
                f,
                "The secure connection to {host} failed ({detail}): check that the address is the platform's and that its certificate is valid (or use http:// for a local platform)."
            ),
            Cause::TimedOut { at, after } => write!(
                f,
                "{at} did not answer within {} s: check the address, your network, or raise --timeout.",
                after.as_secs()
            ),
            Cause::NoTls { at } => write!(
                f,
                "This agent-chat was built without TLS (no rustls, rustls-ring or native-tls feature), so it cannot reach https://{at}: install a build with one (the default has rustls), or use http:// for a local platform."
            ),
            Cause::Unreachable { at, detail } => write!(
                f,
                "Could not reach {at} ({detail}): check the --platform address and your network."
            ),
            Cause::Token { status, message } => write!(
                f,
                "The platform refused the token (HTTP {status}{}): check --token-file or {}.",
                detail(message),
                crate::args::TOKEN_ENV
            ),
            Cause::Forbidden {
                message,
                environment,
            } => write!(
                f,
                "The platform refused access (HTTP 403{}): check that the token is right (--token-file or {}) and that its user has access to Environment {:?} and its Agent.",
                detail(message),
                crate::args::TOKEN_ENV,
                environment
            ),
            Cause::NotFound { message } => write!(
                f,
                "The platform answered HTTP 404 to the session list: {message} (an unknown Environment or Agent?): check --environment and --agent, and the --platform address."
            ),
            Cause::NotThePlatform { status, message } => write!(
                f,
                "The address answers, but not as the platform's API (HTTP {status} to /api/v1/agent-sessions/{}): check the --platform address.",
                detail(message)
            ),
            Cause::UnknownEnvironment { environment } => write!(
                f,
                "The platform lists no Agent in Environment {environment:?}: check --environment."
            ),
            Cause::UnknownAgent {
                agent,
                environment,
                known,
            } => write!(
                f,
                "Environment {environment:?} has no Agent {agent:?} (it has: {}): check --agent.",
                known.join(", ")
            ),
            Cause::Http { status, message } => write!(
                f,
                "The platform answered HTTP {status} to the session list{}: check --environment, --agent and --user, or try again later.",
                detail(message)
            ),
        }
    }
}

/// `": message"`, or nothing for an empty one.
fn detail(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

/// Whether this build has a TLS backend (one of the features `rustls`, `rustls-ring`,
/// `native-tls`); without one an `https` platform cannot be reached.
const TLS: bool = cfg!(any(
    feature = "rustls",
    feature = "rustls-ring",
    feature = "native-tls"
));

/// The pre-flight's user agent.
const USER_AGENT: &str = concat!("agent-chat/", env!("CARGO_PKG_VERSION"));

/// Who asks, of what.
pub struct Preflight<'a> {
    /// The platform.
    pub base: &'a Url,
    /// The person's token (sent, never shown).
    pub token: &'a Secret,
    /// The Environment.
    pub environment: &'a str,
    /// The Agent.
    pub agent: &'a str,
    /// The person.
    pub user: &'a str,
    /// How long to wait for each answer.
    pub timeout: Duration,
}

impl Preflight<'_> {
    /// Ok when the platform answers with this token and knows the Agent in the Environment (or
    /// does not say that it does not); else the cause.
    pub async fn run(&self) -> Result<(), Cause> {
        if self.base.scheme() == "https" && !TLS {
            return Err(Cause::NoTls { at: self.at() });
        }
        // The engine's own client (engine-io-tokio): the same TLS backend, no redirects, and
        // with `rustls-ring` the crypto provider installed first (reqwest panics without one).
        let client = engine_io_tokio::transport::client(self.timeout, USER_AGENT).map_err(|e| {
            Cause::Unreachable {
                at: self.at(),
                detail: crate::text::one_line(&e.describe()),
            }
        })?;
        let sessions = self.endpoint(
            "api/v1/agent-sessions/",
            &[
                ("organization_environment_uid", self.environment),
                ("created_by_user_uid", self.user),
                ("agent_uid", self.agent),
                ("is_archived", "false"),
                ("ordering", "-started_at"),
                ("limit", "1"),
            ],
        );
        let (status, body) = self.get(&client, sessions).await?;
        tracing::debug!(status, "pre-flight: the session list answered");
        match status {
            200..=299 => {}
            401 => {
                return Err(Cause::Token {
                    status,
                    message: message_of(&body),
                });
            }
            403 => {
                return Err(Cause::Forbidden {
                    message: message_of(&body),
                    environment: self.environment.to_owned(),
                });
            }
            // The platform's own error body (platform-api 3): it knows the path, not what the
            // query names.
            404 if body.is_object() && !message_of(&body).is_empty() => {
                return Err(Cause::NotFound {
                    message: message_of(&body),
                });
            }
            404 => {
                return Err(Cause::NotThePlatform {
                    status,
                    message: message_of(&body),
                });
            }
            _ => {
                return Err(Cause::Http {
                    status,
                    message: message_of(&body),
                });
            }
        }
        if !rows(&body).is_some_and(|r| r.is_empty()) {
            // A session of the Agent in the Environment, or an answer this check cannot read:
            // the engine goes on and says what it finds.
            return Ok(());
        }
        // No session yet: the Environment's Agents, when the platform lists them.
        let agents = self.endpoint(
            "api/v1/command-center/agents/",
            &[("organization_environment_uid", self.environment)],
        );
        let Ok((200, body)) = self.get(&client, agents).await else {
            return Ok(());
        };
        let Some(list) = body.as_array() else {
            return Ok(());
        };
        let known: Vec<String> = list
            .iter()
            .filter_map(|a| a.get("agentUid").or_else(|| a.get("agent_uid")))
            .filter_map(|v| v.as_str())
            .map(crate::text::one_line)
            .collect();
        if known.is_empty() {
            return Err(Cause::UnknownEnvironment {
                environment: self.environment.to_owned(),
            });
        }
        if !known.iter().any(|k| k == self.agent) {
            return Err(Cause::UnknownAgent {
                agent: self.agent.to_owned(),
                environment: self.environment.to_owned(),
                known,
            });
        }
        Ok(())
    }

    /// `host:port` for the person.
    fn at(&self) -> String {
        let host = self.base.host_str().unwrap_or_default();
        match self.base.port_or_known_default() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        }
    }

    /// The platform path under the base, with its query.
    fn endpoint(&self, path: &str, query: &[(&str, &str)]) -> Url {
        let mut url = self.base.clone();
        {
            // A base with a path keeps it (`https://host/platform` + `api/...`).
            let base_path = url.path().trim_end_matches('/').to_owned();
            url.set_path(&format!("{base_path}/{path}"));
        }
        url.query_pairs_mut().extend_pairs(query);
        url
    }

    /// The status and JSON body (`null` when not JSON) of a GET, or why there was none.
    async fn get(
        &self,
        client: &reqwest::Client,
        url: Url,
    ) -> Result<(u16, serde_json::Value), Cause> {
        let mut authorization =
            reqwest::header::HeaderValue::from_str(&format!("Bearer {}", self.token.expose()))
                .map_err(|_| Cause::Token {
                    status: 0,
                    message: "the token holds characters a header cannot carry".into(),
                })?;
        authorization.set_sensitive(true);
        let response = client
            .get(url)
            .timeout(self.timeout)
            .header(reqwest::header::AUTHORIZATION, authorization)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| {
                let cause = self.classify(&e);
                tracing::debug!(error = %chain(&e), ?cause, "pre-flight: no answer");
                cause
            })?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await.unwrap_or_default();
        let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
            let text = String::from_utf8_lossy(&bytes);
            serde_json::Value::String(text_body(&text))
        });
        Ok((status, body))
    }

    /// The cause of a request that got no answer.
    fn classify(&self, error: &reqwest::Error) -> Cause {
        let host = self.base.host_str().unwrap_or_default().to_owned();
        let text = chain(error);
        let lower = text.to_lowercase();
        if error.is_timeout() {
            return Cause::TimedOut {
                at: self.at(),
                after: self.timeout,
            };
        }
        if io_kind(error) == Some(std::io::ErrorKind::ConnectionRefused) {
            return Cause::Refused { at: self.at() };
        }
        if lower.contains("dns error")
            || lower.contains("failed to lookup address")
            || lower.contains("name or service not known")
            || lower.contains("no address associated")
        {
            return Cause::Unresolved { host };
        }
        if self.base.scheme() == "https"
            && [
                "tls",
                "certificate",
                "handshake",
                "corrupt message",
                "alert",
                // OpenSSL (native-tls on Linux): "wrong version number", "ssl routines".
                "ssl",
                "wrong version number",
            ]
            .iter()
            .any(|w| lower.contains(w))
        {
            return Cause::Tls {
                host,
                detail: last_cause(error),
            };
        }
        Cause::Unreachable {
            at: self.at(),
            detail: last_cause(error),
        }
    }
}

/// The first I/O error kind among the causes of `error`.
fn io_kind(error: &reqwest::Error) -> Option<std::io::ErrorKind> {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        current = e.source();
    }
    None
}

/// The error and its causes as one line, without the URL.
fn chain(error: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        let text = e.to_string();
        let text = match text.find(" for url (") {
            Some(at) => text.get(..at).unwrap_or_default().to_owned(),
            None => text,
        };
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        current = e.source();
    }
    crate::text::one_line(&parts.join(": "))
}

/// The innermost cause's text (the most specific one).
fn last_cause(error: &reqwest::Error) -> String {
    let mut last = error.to_string();
    let mut current = std::error::Error::source(error);
    while let Some(e) = current {
        last = e.to_string();
        current = e.source();
    }
    crate::text::one_line(&last)
}

/// The platform's error message (platform-api 3: `message`, `detail`, `error`, `error_detail`),
/// or the whole body for a short text one.
fn message_of(body: &serde_json::Value) -> String {
    let text = match body {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(map) => ["message", "detail", "error", "error_detail"]
            .iter()
            .find_map(|k| map.get(*k).and_then(|v| v.as_str()).map(str::to_owned))
            .unwrap_or_default(),
        _ => String::new(),
    };
    crate::text::one_line(text.trim())
}

/// What a body that is not JSON says, in a few words: an HTML page by its title (never its
/// markup), other text cut at 200 characters.
fn text_body(text: &str) -> String {
    let text = text.trim();
    if !text.starts_with('<') {
        return crate::text::one_line(text).chars().take(200).collect();
    }
    let lower = text.to_ascii_lowercase();
    let title = lower
        .find("<title")
        .and_then(|at| Some(at + lower.get(at..)?.find('>')? + 1))
        .and_then(|start| Some((start, start + lower.get(start..)?.find("</title")?)))
        .and_then(|(start, end)| text.get(start..end))
        .map(|t| crate::text::one_line(t.trim()))
        .filter(|t| !t.is_empty());
    match title {
        Some(title) => format!(
            "an HTML page titled {:?}",
            title.chars().take(100).collect::<String>()
        ),
        None => "an HTML page".into(),
    }
}

/// The rows of a P1 answer: an array, or a page's `results`.
fn rows(body: &serde_json::Value) -> Option<&Vec<serde_json::Value>> {
    body.as_array()
        .or_else(|| body.get("results").and_then(|r| r.as_array()))
}

/// What the person is told when the engine could not open the default session: its text, once,
/// and what to try. (`error` is the platform's answer, or the engine's generic text.)
pub fn session_not_opened(error: &str) -> String {
    let error = crate::text::one_line(error.trim());
    let generic = error.is_empty() || error == GENERIC;
    if generic {
        "The Agent's session could not be opened.".to_owned()
    } else {
        format!("The platform did not open the Agent's session: {error}")
    }
}

/// The engine's text for a default session that could not be opened (adr-notes 8).
const GENERIC: &str = "The Agent's session could not be opened. Try again.";

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn platform_addresses() {
        assert_eq!(
            platform_url("HTTPS://Platform.Example").unwrap().as_str(),
            "https://platform.example/"
        );
        assert!(platform_url("http://127.0.0.1:8080/base").is_ok());
        for bad in [
            "http://[::1",
            "http://127.0.0.1:99999",
            "platform.example",
            "ftp://platform.example",
            "https://user:pw@platform.example",
            "https://platform.example/?a=b",
            "",
        ] {
            assert!(platform_url(bad).is_err(), "{bad}");
        }
        let e = platform_url("http://127.0.0.1:99999").unwrap_err();
        assert_eq!(
            e,
            "--platform \"http://127.0.0.1:99999\" is not a URL (invalid port number); write it as https://platform.example"
        );
    }

    #[test]
    fn the_engine_generic_text_is_not_doubled() {
        assert_eq!(
            session_not_opened(GENERIC),
            "The Agent's session could not be opened."
        );
        assert_eq!(
            session_not_opened("Agent not found."),
            "The platform did not open the Agent's session: Agent not found."
        );
    }

    /// Issue 25, point 5: a scheme left out is suggested back with the person's own address.
    #[test]
    fn a_missing_scheme_is_suggested_back() {
        assert_eq!(
            platform_url("127.0.0.1:8080").unwrap_err(),
            "--platform \"127.0.0.1:8080\" is not a URL (relative URL without a base); write it as http://127.0.0.1:8080"
        );
        assert_eq!(
            platform_url("localhost:8080").unwrap_err(),
            "--platform \"localhost:8080\" must start with http:// or https://, not localhost:// (write it as http://localhost:8080)"
        );
        assert_eq!(
            with_scheme("platform.example").as_deref(),
            Some("https://platform.example")
        );
        for none in ["/api", "http://x", "", "a b"] {
            assert_eq!(with_scheme(none), None, "{none}");
        }
        // What is suggested is taken.
        for given in ["127.0.0.1:8080", "localhost:8080", "platform.example"] {
            assert!(
                platform_url(&with_scheme(given).unwrap()).is_ok(),
                "{given}"
            );
        }
    }

    /// Issue 25, point 5: a server that is not the platform is described, not quoted whole.
    #[test]
    fn an_html_page_is_named_by_its_title() {
        let page = "<!DOCTYPE html>\n<html><head><TITLE>404 Not Found</TITLE><style>body{}</style></head><body>".to_owned()
            + &"x".repeat(5000);
        assert_eq!(text_body(&page), "an HTML page titled \"404 Not Found\"");
        assert_eq!(text_body("<html><body>no title"), "an HTML page");
        assert_eq!(text_body("  plain words  "), "plain words");
        assert_eq!(text_body(&"y".repeat(300)).chars().count(), 200);
    }

    #[test]
    fn the_platform_message_is_read_from_its_error_body() {
        let body = serde_json::json!({"detail": "Invalid token.", "code": "x"});
        assert_eq!(message_of(&body), "Invalid token.");
        assert_eq!(message_of(&serde_json::json!("a\u{1b}[2Jb")), "ab");
    }
}

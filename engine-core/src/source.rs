//! The Agent source (ADR 099, adr-notes section 5): the platform, or a local Agent runtime.
//!
//! A local source names where the runtime answers and what the Agent is called until the
//! runtime says. Outside a browser there is no page origin to stay on, so a local source is
//! either an absolute `http`/`https` address on a loopback host, or a path (`/__agent__`) that
//! the host serves itself and forwards (the reference's same-origin path); a path is joined to
//! the origin of the platform base in [`crate::Config`]. No credential is ever sent to it.

use serde::{Deserialize, Serialize};

/// The id of a local runtime's default conversation (the first one shown when nothing is
/// requested or stored; the runtime answers under its own id).
pub const DEFAULT_CONVERSATION: &str = "default";

/// A local Agent runtime: `Input::Source(Some(..))` (ADR 099).
///
/// ```
/// use engine_core::LocalSource;
///
/// let source = LocalSource::new("http://127.0.0.1:8787/", "Ledger Helper").unwrap();
/// assert_eq!(source.base_url(), "http://127.0.0.1:8787");
/// assert!(LocalSource::new("https://agents.example.com", "Ledger Helper").is_err());
/// assert!(LocalSource::new("/__agent__", " ").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "RawSource")]
pub struct LocalSource {
    base_url: String,
    display_name: String,
}

/// The serialized form, checked on the way in.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSource {
    base_url: String,
    display_name: String,
}

impl TryFrom<RawSource> for LocalSource {
    type Error = SourceError;

    fn try_from(raw: RawSource) -> Result<LocalSource, SourceError> {
        LocalSource::new(&raw.base_url, &raw.display_name)
    }
}

/// Why a local source was refused. `Display` is the text a person reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// Neither a loopback address nor a path.
    #[error(
        "A local Agent source needs a loopback address such as http://127.0.0.1:8787 or a same-origin path such as /__agent__: {0}"
    )]
    BaseUrl(String),
    /// A blank display name.
    #[error("A local Agent source needs a displayName.")]
    DisplayName,
}

impl SourceError {
    /// A stable code: `local_source_base_url` or `local_source_display_name`.
    pub fn code(&self) -> &'static str {
        match self {
            SourceError::BaseUrl(_) => "local_source_base_url",
            SourceError::DisplayName => "local_source_display_name",
        }
    }
}

impl LocalSource {
    /// Checks and normalizes a local source: the base trimmed and without trailing slashes (an
    /// empty path is `/`), the name trimmed.
    pub fn new(base_url: &str, display_name: &str) -> Result<LocalSource, SourceError> {
        let display_name = display_name.trim();
        if display_name.is_empty() {
            return Err(SourceError::DisplayName);
        }
        let trimmed = base_url.trim();
        let refused = || SourceError::BaseUrl(serde_json::Value::from(trimmed).to_string());
        let acceptable = |c: char| c.is_ascii_graphic() && !matches!(c, '#' | '?' | '\\');
        if trimmed.is_empty() || !trimmed.chars().all(acceptable) {
            return Err(refused());
        }
        let base = if trimmed.starts_with('/') {
            if trimmed.starts_with("//") {
                return Err(refused());
            }
            trimmed
        } else {
            let lower = trimmed.to_ascii_lowercase();
            let rest = lower
                .strip_prefix("http://")
                .or_else(|| lower.strip_prefix("https://"))
                .ok_or_else(refused)?;
            let authority = rest.split(['/', '?']).next().unwrap_or_default();
            if !is_loopback(authority) {
                return Err(refused());
            }
            trimmed
        };
        let base = base.trim_end_matches('/');
        let base = if base.is_empty() { "/" } else { base };
        Ok(LocalSource {
            base_url: base.to_owned(),
            display_name: display_name.to_owned(),
        })
    }

    /// The base as given, normalized: an absolute loopback address or a path.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The Agent's name until the runtime names it.
    pub fn display_name(&self) -> &str {
        &self.display_name
    }

    /// The base is a path the host serves (joined to the platform base's origin).
    pub fn is_path(&self) -> bool {
        self.base_url.starts_with('/')
    }

    /// The storage key of the selected conversation: `ms.command-center-ai.local-session:{baseUrl}`.
    pub fn selection_key(&self) -> String {
        format!("ms.command-center-ai.local-session:{}", self.base_url)
    }
}

/// `localhost`, `127.x.y.z` or `[::1]`, with an optional port of digits; no user info.
fn is_loopback(authority: &str) -> bool {
    if authority.contains('@') {
        return false;
    }
    let Some((host, port)) = crate::http::host_and_port(authority) else {
        return false;
    };
    let port_ok =
        port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    let host_ok = host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    host_ok && port_ok
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn loopback_addresses_and_paths_are_accepted() {
        for (given, kept) in [
            ("http://127.0.0.1:8787", "http://127.0.0.1:8787"),
            (" http://127.0.0.1:8787/ ", "http://127.0.0.1:8787"),
            (
                "http://localhost:3000/agent/",
                "http://localhost:3000/agent",
            ),
            ("https://127.1.2.3", "https://127.1.2.3"),
            ("http://[::1]:8787", "http://[::1]:8787"),
            ("HTTP://LOCALHOST:8787", "HTTP://LOCALHOST:8787"),
            ("/__agent__", "/__agent__"),
            ("/__agent__///", "/__agent__"),
            ("/", "/"),
        ] {
            let source = LocalSource::new(given, "Ledger Helper").unwrap();
            assert_eq!(source.base_url(), kept, "{given}");
        }
        let source = LocalSource::new("/__agent__", "  Ledger Helper ").unwrap();
        assert_eq!(source.display_name(), "Ledger Helper");
        assert!(source.is_path());
        assert_eq!(
            source.selection_key(),
            "ms.command-center-ai.local-session:/__agent__"
        );
    }

    #[test]
    fn everything_else_is_refused_with_its_text() {
        for given in [
            "",
            "__agent__",
            "//evil.example/agent",
            "https://agents.example.com",
            "http://10.0.0.5:8787",
            "http://127.0.0.1.evil.example",
            "http://user@127.0.0.1:8787",
            "http://127.0.0.1:87a7",
            "http://[::2]:8787",
            "http://[::1",
            "ftp://127.0.0.1",
            "file:///tmp/agent",
            "http://127.0.0.1:8787/a b",
            "http://127.0.0.1:8787/#x",
            "http://127.0.0.1:8787?x",
            "/__agent__?x=1",
            "/agent\\x",
        ] {
            let error = LocalSource::new(given, "Ledger Helper").unwrap_err();
            assert_eq!(error.code(), "local_source_base_url", "{given}");
            assert!(
                error.to_string().starts_with(
                    "A local Agent source needs a loopback address such as http://127.0.0.1:8787 or a same-origin path such as /__agent__: \""
                ),
                "{error}"
            );
        }
        let error = LocalSource::new("/__agent__", " \t").unwrap_err();
        assert_eq!(error, SourceError::DisplayName);
        assert_eq!(
            error.to_string(),
            "A local Agent source needs a displayName."
        );
    }

    #[test]
    fn serde_checks_on_the_way_in() {
        let source: LocalSource =
            serde_json::from_str(r#"{"baseUrl": "http://127.0.0.1:8787/", "displayName": "A"}"#)
                .unwrap();
        assert_eq!(source.base_url(), "http://127.0.0.1:8787");
        assert_eq!(
            serde_json::to_value(&source).unwrap(),
            serde_json::json!({"baseUrl": "http://127.0.0.1:8787", "displayName": "A"})
        );
        let refused = serde_json::from_str::<LocalSource>(
            r#"{"baseUrl": "https://example.com", "displayName": "A"}"#,
        );
        assert!(refused.is_err());
    }
}

//! Plain data shared by every layer of the engine, with no rule of its own: what selected a
//! session, and a credential that never shows.

use std::fmt;

use serde::{Deserialize, Serialize, Serializer};

/// What selected the session (SEL-11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Origin {
    /// `requestedSessionId`.
    Requested,
    /// The default session.
    Default,
    /// The implicit newest session (SEL-2), the fallback of REQ-5, or the reselection after the
    /// selected session was archived or deleted.
    Newest,
    /// `launchTarget`, `startAgentSessionById` or `openLatestOrStartAgentSessionById`.
    Launched,
    /// `startAgentSession` or `createAgentSession`.
    Created,
    /// A local source's conversation kept in storage, or its runtime's default one (ADR 099).
    Restored,
}

/// A credential string that never shows in `Debug` or serialized output.
///
/// Serializing writes `"[redacted]"`, so a serialized `Person` cannot be read back with its
/// credential: hosts keep credentials in their own store and hand them in.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The credential itself, for building a request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("[redacted]")
    }
}

pub(crate) mod base64;

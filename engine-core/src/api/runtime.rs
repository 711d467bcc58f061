//! P11 `resolve-runtime-access` answers, normalized strictly (OI-3, `platform-api.md` P11).

use serde::Serialize;
use serde_json::{Map, Value};

use super::ApiError;
use super::error::parse_json;
use crate::model::Secret;

/// The states a `runtime_interaction` may name (OI-3). Any other value is malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum InteractionState {
    /// Ready.
    Ready,
    /// Ready with a warning.
    Warning,
    /// Checking (transient).
    Checking,
    /// Starting (transient).
    Starting,
    /// Waking (transient).
    Waking,
    /// An update is required.
    UpdateRequired,
    /// Updating (transient).
    Updating,
    /// The update failed.
    UpdateFailed,
    /// Unavailable.
    Unavailable,
}

impl InteractionState {
    /// Checking, starting, waking and updating.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            Self::Checking | Self::Starting | Self::Waking | Self::Updating
        )
    }
}

/// A notice's severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Severity {
    /// Information.
    Info,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// Success.
    Success,
}

/// The backend's notice on a decision: all four fields non-empty, else no notice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RuntimeNotice {
    /// Machine-readable code.
    pub code: String,
    /// Severity.
    pub severity: Severity,
    /// Title.
    pub title: String,
    /// Message.
    pub message: String,
}

/// `runtime_interaction`: the admission decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RuntimeInteraction {
    /// The state.
    pub state: InteractionState,
    /// The admission decision itself.
    pub can_submit: bool,
    /// The backend's notice, when complete.
    pub notice: Option<RuntimeNotice>,
    /// `operation.support_reference`, when the operation object is complete.
    pub support_reference: Option<String>,
    /// `retry_after_ms` (or `retryAfterMs`): negative reads as 0, a non-number as absent.
    pub retry_after_ms: Option<u64>,
}

/// `runtime_presence.phase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PresencePhase {
    /// Not deployed.
    NotDeployed,
    /// Observing.
    Observing,
    /// Idle (scaled to zero).
    Idle,
    /// Provisioning.
    Provisioning,
    /// Pulling the image.
    PullingImage,
    /// Starting.
    Starting,
    /// Serving.
    Serving,
    /// Redeploying.
    Redeploying,
    /// Failed.
    Failed,
}

/// `runtime_presence.wake`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Wake {
    /// The wake operation.
    pub operation_uid: String,
    /// `requested`, `in_progress`, `serving`, `failed`, `expired` or `superseded`.
    pub state: String,
    /// ISO-8601.
    pub requested_at: String,
    /// ISO-8601: bounds how long a held send waits (plus 30 s).
    pub deadline_at: String,
}

/// `runtime_presence`: diagnostic progress; never decides admission.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RuntimePresence {
    /// The phase.
    pub phase: PresencePhase,
    /// Human detail (non-empty).
    pub detail: String,
    /// `replicas.desired`.
    pub desired_replicas: Option<u64>,
    /// `replicas.actual`.
    pub actual_replicas: Option<u64>,
    /// `observed_at`.
    pub observed_at: Option<String>,
    /// The wake, when complete and valid (else none).
    pub wake: Option<Wake>,
}

/// Where a ready decision sends its requests: the runtime base and its bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuntimeEndpoint {
    /// The runtime base, absolute, without a trailing slash.
    pub rpc_url: String,
    /// The runtime bearer token (never shown).
    pub token: Secret,
}

/// How the answer says the runtime is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AccessMode {
    /// `mode: "token"` with a usable `rpc_url` and token.
    Token(RuntimeEndpoint),
    /// `mode: "unavailable"`, with its human text (`detail`, else `ready.detail`).
    Unavailable {
        /// The text to show when a send meets it.
        detail: Option<String>,
    },
    /// Any other mode (only valid while `can_submit` is false).
    Other,
}

/// A normalized P11 answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuntimeAccess {
    /// The admission decision.
    pub interaction: RuntimeInteraction,
    /// The diagnostic presence.
    pub presence: RuntimePresence,
    /// The mode and, for `token`, the endpoint.
    pub mode: AccessMode,
}

/// Parses and checks a 2xx P11 body. Malformed answers (not an object; `runtime_interaction` or
/// `runtime_presence` missing or malformed; an unknown state; a non-boolean `can_submit`;
/// `can_submit` true with mode `token` but no usable `rpc_url` or an empty token, or with a mode
/// other than `token`/`unavailable`) are [`ApiError::Malformed`].
///
/// `platform_base` resolves an `rpc_url` that is root-relative (`/rt/a1`) or has no scheme
/// (`rt.example/a1` gets the platform's scheme), standing in for the browser page of the reference.
pub fn parse_runtime_access(body: &[u8], platform_base: &str) -> Result<RuntimeAccess, ApiError> {
    let Some(Value::Object(map)) = parse_json(body) else {
        return Err(malformed(NOT_AN_OBJECT));
    };
    let interaction = field(&map, "runtime_interaction", "runtimeInteraction")
        .and_then(Value::as_object)
        .and_then(interaction_from)
        .ok_or_else(|| malformed(NO_CONTRACT))?;
    let presence = field(&map, "runtime_presence", "runtimePresence")
        .and_then(Value::as_object)
        .and_then(presence_from)
        .ok_or_else(|| malformed(NO_CONTRACT))?;
    let mode = match field(&map, "mode", "mode").and_then(Value::as_str) {
        Some("token") => match endpoint_from(&map, platform_base) {
            Some(endpoint) => AccessMode::Token(endpoint),
            None if interaction.can_submit => return Err(malformed(NO_ENDPOINT)),
            None => AccessMode::Other,
        },
        Some("unavailable") => AccessMode::Unavailable {
            detail: unavailable_detail(&map),
        },
        _ => AccessMode::Other,
    };
    if interaction.can_submit && mode == AccessMode::Other {
        return Err(malformed(NO_RUNTIME));
    }
    Ok(RuntimeAccess {
        interaction,
        presence,
        mode,
    })
}

/// Message for a body that is not a JSON object (or not JSON at all).
const NOT_AN_OBJECT: &str = "The runtime access answer is not a JSON object.";
/// Message for a missing or malformed `runtime_interaction` or `runtime_presence`.
const NO_CONTRACT: &str =
    "Runtime access response is missing the runtime interaction or presence contract.";
/// Message for `can_submit` true with mode `token` but no usable `rpc_url` or token.
const NO_ENDPOINT: &str = "The runtime access answer has no usable rpc_url or token.";
/// Message for `can_submit` true with a mode other than `token` or `unavailable`.
const NO_RUNTIME: &str = "The runtime access answer can submit but names no runtime.";

/// The operation statuses that make `runtime_interaction.operation` valid.
const OPERATION_STATUSES: [&str; 8] = [
    "queued",
    "running",
    "succeeded",
    "failed",
    "cancelled",
    "skipped",
    "blocked",
    "superseded",
];

/// The wake states that make `runtime_presence.wake` valid.
const WAKE_STATES: [&str; 6] = [
    "requested",
    "in_progress",
    "serving",
    "failed",
    "expired",
    "superseded",
];

fn malformed(message: &str) -> ApiError {
    ApiError::Malformed {
        message: message.to_owned(),
    }
}

/// The value at `snake`, else at `camel`. A `null` reads as absent, so `{"rpc_url": null,
/// "rpcUrl": "..."}` takes the camelCase value; any other snake_case value wins.
fn field<'a>(map: &'a Map<String, Value>, snake: &str, camel: &str) -> Option<&'a Value> {
    map.get(snake)
        .filter(|value| !value.is_null())
        .or_else(|| map.get(camel))
        .filter(|value| !value.is_null())
}

/// The trimmed string at `snake` (else `camel`), unless absent, not a string, or blank.
fn text(map: &Map<String, Value>, snake: &str, camel: &str) -> Option<String> {
    let text = field(map, snake, camel)?.as_str()?.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// `runtime_interaction`; `None` when its `state` is unknown or `can_submit` is not a boolean.
fn interaction_from(map: &Map<String, Value>) -> Option<RuntimeInteraction> {
    let state = match field(map, "state", "state")?.as_str()? {
        "ready" => InteractionState::Ready,
        "warning" => InteractionState::Warning,
        "checking" => InteractionState::Checking,
        "starting" => InteractionState::Starting,
        "waking" => InteractionState::Waking,
        "update_required" => InteractionState::UpdateRequired,
        "updating" => InteractionState::Updating,
        "update_failed" => InteractionState::UpdateFailed,
        "unavailable" => InteractionState::Unavailable,
        _ => return None,
    };
    let can_submit = field(map, "can_submit", "canSubmit")?.as_bool()?;
    Some(RuntimeInteraction {
        state,
        can_submit,
        notice: field(map, "notice", "notice")
            .and_then(Value::as_object)
            .and_then(notice_from),
        support_reference: field(map, "operation", "operation")
            .and_then(Value::as_object)
            .and_then(support_reference_from),
        retry_after_ms: field(map, "retry_after_ms", "retryAfterMs").and_then(retry_after_ms),
    })
}

/// A notice with all four fields non-blank and a known severity; else none.
fn notice_from(map: &Map<String, Value>) -> Option<RuntimeNotice> {
    let severity = match field(map, "severity", "severity")?.as_str()?.trim() {
        "info" => Severity::Info,
        "warning" => Severity::Warning,
        "error" => Severity::Error,
        "success" => Severity::Success,
        _ => return None,
    };
    Some(RuntimeNotice {
        code: text(map, "code", "code")?,
        severity,
        title: text(map, "title", "title")?,
        message: text(map, "message", "message")?,
    })
}

/// `operation.support_reference`, when the operation names a uid, a known status, a
/// `created_at` string and a non-blank support reference; else none.
fn support_reference_from(map: &Map<String, Value>) -> Option<String> {
    text(map, "uid", "uid")?;
    let status = field(map, "status", "status")?.as_str()?.trim();
    if !OPERATION_STATUSES.contains(&status) {
        return None;
    }
    field(map, "created_at", "createdAt")?.as_str()?;
    text(map, "support_reference", "supportReference")
}

/// `retry_after_ms`: a number, negative read as 0, fractions floored, saturating at
/// `u64::MAX`; anything else is absent.
fn retry_after_ms(value: &Value) -> Option<u64> {
    let number = value.as_number()?;
    if let Some(exact) = number.as_u64() {
        return Some(exact);
    }
    if number.as_i64().is_some() {
        // Fits i64 but not u64: negative.
        return Some(0);
    }
    let float = number.as_f64()?;
    if float.is_nan() || float <= 0.0 {
        return Some(0);
    }
    // A float-to-integer `as` cast truncates toward zero (here: floors, the value being
    // positive) and saturates at `u64::MAX`.
    Some(float.floor() as u64)
}

/// `runtime_presence`; `None` when its `phase` is unknown or `detail` is not a non-blank string.
fn presence_from(map: &Map<String, Value>) -> Option<RuntimePresence> {
    let phase = match field(map, "phase", "phase")?.as_str()? {
        "not_deployed" => PresencePhase::NotDeployed,
        "observing" => PresencePhase::Observing,
        "idle" => PresencePhase::Idle,
        "provisioning" => PresencePhase::Provisioning,
        "pulling_image" => PresencePhase::PullingImage,
        "starting" => PresencePhase::Starting,
        "serving" => PresencePhase::Serving,
        "redeploying" => PresencePhase::Redeploying,
        "failed" => PresencePhase::Failed,
        _ => return None,
    };
    let detail = text(map, "detail", "detail")?;
    let replicas = field(map, "replicas", "replicas").and_then(Value::as_object);
    let replica_count = |key: &str| {
        replicas
            .and_then(|replicas| field(replicas, key, key))
            .and_then(Value::as_u64)
    };
    Some(RuntimePresence {
        phase,
        detail,
        desired_replicas: replica_count("desired"),
        actual_replicas: replica_count("actual"),
        observed_at: text(map, "observed_at", "observedAt"),
        wake: field(map, "wake", "wake")
            .and_then(Value::as_object)
            .and_then(wake_from),
    })
}

/// A wake with all four fields non-blank and a known state; else none.
fn wake_from(map: &Map<String, Value>) -> Option<Wake> {
    let state = text(map, "state", "state")?;
    if !WAKE_STATES.contains(&state.as_str()) {
        return None;
    }
    Some(Wake {
        operation_uid: text(map, "operation_uid", "operationUid")?,
        state,
        requested_at: text(map, "requested_at", "requestedAt")?,
        deadline_at: text(map, "deadline_at", "deadlineAt")?,
    })
}

/// The text of a `mode: "unavailable"` answer: `detail`, else `ready.detail`.
fn unavailable_detail(map: &Map<String, Value>) -> Option<String> {
    text(map, "detail", "detail").or_else(|| {
        field(map, "ready", "ready")
            .and_then(Value::as_object)
            .and_then(|ready| text(ready, "detail", "detail"))
    })
}

/// The endpoint of a `mode: "token"` answer: a resolvable `rpc_url` and a non-blank token that
/// can go into a header (no control characters).
fn endpoint_from(map: &Map<String, Value>, platform_base: &str) -> Option<RuntimeEndpoint> {
    let token = text(map, "token", "token").filter(|t| !t.chars().any(char::is_control))?;
    let rpc_url = field(map, "rpc_url", "rpcUrl")
        .and_then(Value::as_str)
        .and_then(|rpc_url| resolve_rpc_url(rpc_url, platform_base))?;
    Some(RuntimeEndpoint {
        rpc_url,
        token: Secret::new(token),
    })
}

/// The resolved `rpc_url` of a P11 body, and whether it came root-relative (starting with `/`),
/// for the shells' URL rewrite (`platform-api.md` section 1); `None` without a usable one.
pub(crate) fn rpc_url_of(body: &[u8], platform_base: &str) -> Option<(String, bool)> {
    let Some(Value::Object(map)) = parse_json(body) else {
        return None;
    };
    let raw = field(&map, "rpc_url", "rpcUrl").and_then(Value::as_str)?;
    let resolved = resolve_rpc_url(raw, platform_base)?;
    Some((resolved, raw.trim().starts_with('/')))
}

/// An absolute `http`/`https` URL split into its lowercase scheme, its authority and the rest
/// (empty or starting with `/`).
pub(crate) struct Absolute<'a> {
    /// `http` or `https`.
    pub scheme: &'static str,
    /// `host[:port]` (possibly with userinfo), checked by [`valid_authority`].
    pub authority: &'a str,
    /// The path.
    pub path: &'a str,
}

/// Splits `url` as `http(s)://authority[/path]`; `None` for any other scheme, a missing `//`
/// or an invalid authority.
pub(crate) fn split_absolute(url: &str) -> Option<Absolute<'_>> {
    let (scheme, rest) = url.split_once(':')?;
    let scheme = if scheme.eq_ignore_ascii_case("https") {
        "https"
    } else if scheme.eq_ignore_ascii_case("http") {
        "http"
    } else {
        return None;
    };
    let rest = rest.strip_prefix("//")?;
    let (authority, path) = rest
        .find('/')
        .and_then(|at| rest.split_at_checked(at))
        .unwrap_or((rest, ""));
    valid_authority(authority).then_some(Absolute {
        scheme,
        authority,
        path,
    })
}

/// Whether `authority` is `[userinfo@]host[:port]` with a non-empty host, a port of digits, and
/// only ASCII letters, digits and `.-_~%:@[]`.
fn valid_authority(authority: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || ".-_~%:@[]".contains(c);
    if authority.is_empty() || !authority.chars().all(allowed) {
        return false;
    }
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let Some((host, port)) = crate::http::host_and_port(host_port) else {
        return false;
    };
    let host_ok = !host.is_empty() && host.chars().any(|c| c.is_ascii_alphanumeric());
    let port_ok = port.is_none_or(|port| {
        !port.is_empty() && port.len() <= 5 && port.chars().all(|c| c.is_ascii_digit())
    });
    host_ok && port_ok
}

/// Whether the text before the first `:` of `url` is a URL scheme (`javascript:`, `ftp://`,
/// `https://`) rather than a host followed by a port (`rt.example:8443/a1`).
fn has_scheme(url: &str) -> bool {
    let Some((before, after)) = url.split_once(':') else {
        return false;
    };
    let mut chars = before.chars();
    let scheme_like = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !scheme_like {
        return false;
    }
    // `host:port[/path]` is not a scheme.
    let port = after.split('/').next().unwrap_or_default();
    let is_port =
        after.starts_with(|c: char| c.is_ascii_digit()) && port.chars().all(|c| c.is_ascii_digit());
    !is_port
}

/// Resolves an `rpc_url` to an absolute `http`/`https` URL without a trailing slash
/// (`platform-api.md` section 1):
///
/// - `http://...` and `https://...` are kept; any other scheme is refused;
/// - `//host/path` takes the platform's scheme;
/// - `/path` is joined to the platform's origin (not its path);
/// - `host/path` takes the platform's scheme (`https://host/path`).
///
/// Refused: an empty value, whitespace or control characters, non-ASCII characters, `\`, a
/// query or fragment (`?`, `#`: the runtime paths are appended to the URL), an empty or invalid
/// host, and a relative form when `platform_base` is not itself an absolute `http(s)` URL.
fn resolve_rpc_url(rpc_url: &str, platform_base: &str) -> Option<String> {
    let rpc_url = rpc_url.trim();
    let acceptable = |c: char| c.is_ascii_graphic() && !matches!(c, '?' | '#' | '\\');
    if rpc_url.is_empty() || !rpc_url.chars().all(acceptable) {
        return None;
    }
    let platform = || split_absolute(platform_base.trim());
    let absolute = if let Some(rest) = rpc_url.strip_prefix("//") {
        format!("{}://{rest}", platform()?.scheme)
    } else if rpc_url.starts_with('/') {
        let platform = platform()?;
        format!("{}://{}{rpc_url}", platform.scheme, platform.authority)
    } else if has_scheme(rpc_url) {
        rpc_url.to_owned()
    } else {
        format!("{}://{rpc_url}", platform()?.scheme)
    };
    let parts = split_absolute(&absolute)?;
    let resolved = format!("{}://{}{}", parts.scheme, parts.authority, parts.path);
    Some(resolved.trim_end_matches('/').to_owned())
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests;

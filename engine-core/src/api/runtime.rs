//! P11 `resolve-runtime-access` answers, normalized strictly (OI-3, `platform-api.md` P11).

use serde::Serialize;
use serde_json::{Map, Value};

use super::ApiError;
use super::error::parse_json;
use crate::input::Secret;

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
    let Some((host, port)) = host_and_port(host_port) else {
        return false;
    };
    let host_ok = !host.is_empty() && host.chars().any(|c| c.is_ascii_alphanumeric());
    let port_ok = port.is_none_or(|port| {
        !port.is_empty() && port.len() <= 5 && port.chars().all(|c| c.is_ascii_digit())
    });
    host_ok && port_ok
}

/// Splits `host[:port]` or `[v6][:port]` (no user info); `None` when the brackets or what
/// follows them are malformed. The host of an IPv6 literal is what is inside the brackets.
pub(crate) fn host_and_port(host_port: &str) -> Option<(&str, Option<&str>)> {
    if let Some(bracketed) = host_port.strip_prefix('[') {
        let (inside, after) = bracketed.split_once(']')?;
        if inside.is_empty() || inside.contains('[') {
            return None;
        }
        return match after {
            "" => Some((inside, None)),
            _ => after.strip_prefix(':').map(|port| (inside, Some(port))),
        };
    }
    if host_port.contains(['[', ']']) {
        return None;
    }
    Some(match host_port.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (host_port, None),
    })
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
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::error::hostile_bodies;

    const PLATFORM: &str = "https://platform.example.test";

    const READY_EXAMPLE: &str = r#"{
      "session_uid": "5b0c7e1e-1111-4a6e-9c6f-000000000a01",
      "mode": "token",
      "rpc_url": "https://rt.example.test/agents/ledger",
      "token": "rt-token-abc",
      "expires_at": "2026-10-02T09:15:00Z",
      "is_ready": true,
      "runtime_interaction": {"state": "ready", "can_submit": true, "notice": null, "operation": null, "retry_after_ms": null},
      "runtime_presence": {"phase": "serving", "replicas": {"desired": 1, "actual": 1}, "detail": "Running.", "observed_at": "2026-10-02T08:20:00Z", "wake": null}
    }"#;

    const TRANSIENT_EXAMPLE: &str = r#"{
      "mode": "unavailable",
      "rpc_url": null,
      "token": null,
      "is_ready": false,
      "detail": "Starting.",
      "runtime_interaction": {"state": "waking", "can_submit": false, "notice": {"code": "agent_waking", "severity": "info", "title": "Starting Ledger Helper", "message": "Ledger Helper is starting."}, "operation": null, "retry_after_ms": 2500},
      "runtime_presence": {"phase": "provisioning", "replicas": {"desired": 1, "actual": 0}, "detail": "Waiting for capacity.", "observed_at": "2026-10-02T08:20:00Z", "wake": {"operation_uid": "op-17", "state": "in_progress", "requested_at": "2026-10-02T08:19:50Z", "deadline_at": "2026-10-02T08:29:50Z"}}
    }"#;

    const TERMINAL_EXAMPLE: &str = r#"{
      "mode": "unavailable",
      "rpc_url": null,
      "token": null,
      "runtime_interaction": {"state": "update_failed", "can_submit": false, "notice": {"code": "agent_update_failed", "severity": "error", "title": "Update failed", "message": "Ledger Helper could not be updated."}, "operation": {"uid": "op-18", "status": "failed", "created_at": "2026-10-02T08:00:00Z", "started_at": "2026-10-02T08:00:05Z", "finished_at": "2026-10-02T08:03:00Z", "support_reference": "upd-op-18"}, "retry_after_ms": null},
      "runtime_presence": {"phase": "failed", "replicas": {"desired": 1, "actual": 0}, "detail": "Update failed.", "observed_at": "2026-10-02T08:03:00Z", "wake": null}
    }"#;

    /// A named change to an example answer.
    type Edit = (&'static str, fn(&mut Value));

    const CONTRACT: &str =
        "Runtime access response is missing the runtime interaction or presence contract.";

    fn ready() -> Value {
        serde_json::from_str(READY_EXAMPLE).unwrap()
    }

    fn transient() -> Value {
        serde_json::from_str(TRANSIENT_EXAMPLE).unwrap()
    }

    fn parse(value: &Value) -> Result<RuntimeAccess, ApiError> {
        parse_runtime_access(value.to_string().as_bytes(), PLATFORM)
    }

    fn access(value: &Value) -> RuntimeAccess {
        parse(value).unwrap()
    }

    fn malformed_message(result: Result<RuntimeAccess, ApiError>) -> String {
        match result {
            Err(ApiError::Malformed { message }) => message,
            other => panic!("expected Malformed, got {other:?}"),
        }
    }

    fn endpoint(access: &RuntimeAccess) -> &RuntimeEndpoint {
        match &access.mode {
            AccessMode::Token(endpoint) => endpoint,
            other => panic!("expected a token mode, got {other:?}"),
        }
    }

    /// The ready example with its `rpc_url` replaced.
    fn with_rpc_url(rpc_url: &str) -> Value {
        let mut value = ready();
        value["rpc_url"] = json!(rpc_url);
        value
    }

    fn resolve(rpc_url: &str) -> Option<String> {
        resolve_rpc_url(rpc_url, PLATFORM)
    }

    #[test]
    fn ready_example() {
        let access = parse_runtime_access(READY_EXAMPLE.as_bytes(), PLATFORM).unwrap();
        assert_eq!(
            access.interaction,
            RuntimeInteraction {
                state: InteractionState::Ready,
                can_submit: true,
                notice: None,
                support_reference: None,
                retry_after_ms: None,
            }
        );
        assert_eq!(
            access.presence,
            RuntimePresence {
                phase: PresencePhase::Serving,
                detail: "Running.".to_owned(),
                desired_replicas: Some(1),
                actual_replicas: Some(1),
                observed_at: Some("2026-10-02T08:20:00Z".to_owned()),
                wake: None,
            }
        );
        let endpoint = endpoint(&access);
        assert_eq!(endpoint.rpc_url, "https://rt.example.test/agents/ledger");
        assert_eq!(endpoint.token.expose(), "rt-token-abc");
        assert!(!format!("{access:?}").contains("rt-token-abc"));
        assert!(!format!("{access:#?}").contains("rt-token-abc"));
    }

    #[test]
    fn transient_example() {
        let access = parse_runtime_access(TRANSIENT_EXAMPLE.as_bytes(), PLATFORM).unwrap();
        assert_eq!(
            access.interaction,
            RuntimeInteraction {
                state: InteractionState::Waking,
                can_submit: false,
                notice: Some(RuntimeNotice {
                    code: "agent_waking".to_owned(),
                    severity: Severity::Info,
                    title: "Starting Ledger Helper".to_owned(),
                    message: "Ledger Helper is starting.".to_owned(),
                }),
                support_reference: None,
                retry_after_ms: Some(2500),
            }
        );
        assert!(access.interaction.state.is_transient());
        assert_eq!(
            access.presence,
            RuntimePresence {
                phase: PresencePhase::Provisioning,
                detail: "Waiting for capacity.".to_owned(),
                desired_replicas: Some(1),
                actual_replicas: Some(0),
                observed_at: Some("2026-10-02T08:20:00Z".to_owned()),
                wake: Some(Wake {
                    operation_uid: "op-17".to_owned(),
                    state: "in_progress".to_owned(),
                    requested_at: "2026-10-02T08:19:50Z".to_owned(),
                    deadline_at: "2026-10-02T08:29:50Z".to_owned(),
                }),
            }
        );
        assert_eq!(
            access.mode,
            AccessMode::Unavailable {
                detail: Some("Starting.".to_owned())
            }
        );
    }

    #[test]
    fn terminal_example() {
        let access = parse_runtime_access(TERMINAL_EXAMPLE.as_bytes(), PLATFORM).unwrap();
        assert_eq!(access.interaction.state, InteractionState::UpdateFailed);
        assert!(!access.interaction.state.is_transient());
        assert!(!access.interaction.can_submit);
        assert_eq!(
            access.interaction.notice,
            Some(RuntimeNotice {
                code: "agent_update_failed".to_owned(),
                severity: Severity::Error,
                title: "Update failed".to_owned(),
                message: "Ledger Helper could not be updated.".to_owned(),
            })
        );
        assert_eq!(
            access.interaction.support_reference.as_deref(),
            Some("upd-op-18")
        );
        assert_eq!(access.interaction.retry_after_ms, None);
        assert_eq!(access.presence.phase, PresencePhase::Failed);
        assert_eq!(access.presence.detail, "Update failed.");
        assert_eq!(access.presence.wake, None);
        assert_eq!(access.mode, AccessMode::Unavailable { detail: None });
    }

    #[test]
    fn every_state_and_phase_is_read() {
        let states = [
            ("ready", InteractionState::Ready),
            ("warning", InteractionState::Warning),
            ("checking", InteractionState::Checking),
            ("starting", InteractionState::Starting),
            ("waking", InteractionState::Waking),
            ("update_required", InteractionState::UpdateRequired),
            ("updating", InteractionState::Updating),
            ("update_failed", InteractionState::UpdateFailed),
            ("unavailable", InteractionState::Unavailable),
        ];
        for (name, state) in states {
            let mut value = ready();
            value["runtime_interaction"]["state"] = json!(name);
            assert_eq!(access(&value).interaction.state, state, "{name}");
        }
        let phases = [
            ("not_deployed", PresencePhase::NotDeployed),
            ("observing", PresencePhase::Observing),
            ("idle", PresencePhase::Idle),
            ("provisioning", PresencePhase::Provisioning),
            ("pulling_image", PresencePhase::PullingImage),
            ("starting", PresencePhase::Starting),
            ("serving", PresencePhase::Serving),
            ("redeploying", PresencePhase::Redeploying),
            ("failed", PresencePhase::Failed),
        ];
        for (name, phase) in phases {
            let mut value = ready();
            value["runtime_presence"]["phase"] = json!(name);
            assert_eq!(access(&value).presence.phase, phase, "{name}");
        }
    }

    #[test]
    fn camel_case_spellings() {
        let value = json!({
            "mode": "token",
            "rpcUrl": "https://rt.example.test/agents/ledger/",
            "token": "rt-token-camel",
            "runtimeInteraction": {
                "state": "warning",
                "canSubmit": true,
                "notice": {"code": "c", "severity": "warning", "title": "T", "message": "M"},
                "operation": {"uid": "op-1", "status": "succeeded", "createdAt": "2026-10-02T08:00:00Z", "supportReference": "ref-1"},
                "retryAfterMs": 1200
            },
            "runtimePresence": {
                "phase": "serving",
                "detail": "Running.",
                "replicas": {"desired": 2, "actual": 1},
                "observedAt": "2026-10-02T08:20:00Z",
                "wake": {"operationUid": "op-2", "state": "serving", "requestedAt": "a", "deadlineAt": "b"}
            }
        });
        let access = access(&value);
        assert_eq!(access.interaction.state, InteractionState::Warning);
        assert!(access.interaction.can_submit);
        assert_eq!(
            access.interaction.notice.as_ref().map(|n| n.severity),
            Some(Severity::Warning)
        );
        assert_eq!(
            access.interaction.support_reference.as_deref(),
            Some("ref-1")
        );
        assert_eq!(access.interaction.retry_after_ms, Some(1200));
        assert_eq!(access.presence.desired_replicas, Some(2));
        assert_eq!(access.presence.actual_replicas, Some(1));
        assert_eq!(
            access.presence.observed_at.as_deref(),
            Some("2026-10-02T08:20:00Z")
        );
        assert_eq!(
            access.presence.wake,
            Some(Wake {
                operation_uid: "op-2".to_owned(),
                state: "serving".to_owned(),
                requested_at: "a".to_owned(),
                deadline_at: "b".to_owned(),
            })
        );
        let endpoint = endpoint(&access);
        assert_eq!(endpoint.rpc_url, "https://rt.example.test/agents/ledger");
        assert_eq!(endpoint.token.expose(), "rt-token-camel");
    }

    #[test]
    fn snake_case_wins_over_camel_case() {
        let mut value = ready();
        value["rpcUrl"] = json!("https://camel.example.test/x");
        value["runtimeInteraction"] = json!({"state": "unavailable", "canSubmit": false});
        value["runtimePresence"] = json!({"phase": "failed", "detail": "Camel."});
        value["runtime_interaction"]["canSubmit"] = json!(false);
        value["runtime_interaction"]["retry_after_ms"] = json!(100);
        value["runtime_interaction"]["retryAfterMs"] = json!(900);
        value["runtime_presence"]["observedAt"] = json!("camel");
        let access = access(&value);
        assert_eq!(access.interaction.state, InteractionState::Ready);
        assert!(access.interaction.can_submit);
        assert_eq!(access.interaction.retry_after_ms, Some(100));
        assert_eq!(access.presence.detail, "Running.");
        assert_eq!(
            access.presence.observed_at.as_deref(),
            Some("2026-10-02T08:20:00Z")
        );
        assert_eq!(
            endpoint(&access).rpc_url,
            "https://rt.example.test/agents/ledger"
        );

        // A snake_case value of the wrong type still wins (and is judged on its own).
        let mut value = ready();
        value["runtime_interaction"]["can_submit"] = json!("yes");
        value["runtime_interaction"]["canSubmit"] = json!(true);
        assert_eq!(malformed_message(parse(&value)), CONTRACT);
    }

    #[test]
    fn null_snake_case_falls_back_to_camel_case() {
        let mut value = ready();
        value["rpc_url"] = Value::Null;
        value["rpcUrl"] = json!("https://camel.example.test/x");
        value["runtime_interaction"]["retry_after_ms"] = Value::Null;
        value["runtime_interaction"]["retryAfterMs"] = json!(700);
        let access = access(&value);
        assert_eq!(endpoint(&access).rpc_url, "https://camel.example.test/x");
        assert_eq!(access.interaction.retry_after_ms, Some(700));
    }

    #[test]
    fn not_an_object_is_malformed() {
        let bodies: [&[u8]; 12] = [
            b"",
            b" ",
            b"null",
            b"[]",
            b"[{}]",
            b"\"x\"",
            b"5",
            b"true",
            b"{",
            b"{\"mode\": }",
            b"\xFF\xFE",
            b"<html>",
        ];
        for body in bodies {
            assert_eq!(
                malformed_message(parse_runtime_access(body, PLATFORM)),
                "The runtime access answer is not a JSON object.",
                "{body:?}"
            );
        }
        // A leading byte order mark is tolerated.
        let mut with_bom = b"\xEF\xBB\xBF".to_vec();
        with_bom.extend_from_slice(READY_EXAMPLE.as_bytes());
        assert!(parse_runtime_access(&with_bom, PLATFORM).is_ok());
    }

    #[test]
    fn missing_or_malformed_contract_is_malformed() {
        let edits: Vec<Edit> = vec![
            ("no interaction", |v| {
                v.as_object_mut().unwrap().remove("runtime_interaction");
            }),
            ("null interaction", |v| {
                v["runtime_interaction"] = Value::Null
            }),
            ("interaction array", |v| {
                v["runtime_interaction"] = json!([])
            }),
            ("interaction string", |v| {
                v["runtime_interaction"] = json!("ready")
            }),
            ("no state", |v| {
                v["runtime_interaction"]
                    .as_object_mut()
                    .unwrap()
                    .remove("state");
            }),
            ("unknown state", |v| {
                v["runtime_interaction"]["state"] = json!("sleeping")
            }),
            ("state wrong case", |v| {
                v["runtime_interaction"]["state"] = json!("READY")
            }),
            ("state number", |v| {
                v["runtime_interaction"]["state"] = json!(1)
            }),
            ("no can_submit", |v| {
                v["runtime_interaction"]
                    .as_object_mut()
                    .unwrap()
                    .remove("can_submit");
            }),
            ("can_submit null", |v| {
                v["runtime_interaction"]["can_submit"] = Value::Null
            }),
            ("can_submit string", |v| {
                v["runtime_interaction"]["can_submit"] = json!("true")
            }),
            ("can_submit number", |v| {
                v["runtime_interaction"]["can_submit"] = json!(1)
            }),
            ("no presence", |v| {
                v.as_object_mut().unwrap().remove("runtime_presence");
            }),
            ("presence null", |v| v["runtime_presence"] = Value::Null),
            ("presence number", |v| v["runtime_presence"] = json!(3)),
            ("presence array", |v| v["runtime_presence"] = json!([{}])),
            ("no phase", |v| {
                v["runtime_presence"]
                    .as_object_mut()
                    .unwrap()
                    .remove("phase");
            }),
            ("unknown phase", |v| {
                v["runtime_presence"]["phase"] = json!("napping")
            }),
            ("phase object", |v| {
                v["runtime_presence"]["phase"] = json!({})
            }),
            ("no detail", |v| {
                v["runtime_presence"]
                    .as_object_mut()
                    .unwrap()
                    .remove("detail");
            }),
            ("empty detail", |v| {
                v["runtime_presence"]["detail"] = json!("")
            }),
            ("blank detail", |v| {
                v["runtime_presence"]["detail"] = json!("  \t ")
            }),
            ("detail number", |v| {
                v["runtime_presence"]["detail"] = json!(5)
            }),
            ("detail null", |v| {
                v["runtime_presence"]["detail"] = Value::Null
            }),
        ];
        for (name, edit) in edits {
            let mut value = ready();
            edit(&mut value);
            assert_eq!(malformed_message(parse(&value)), CONTRACT, "{name}");
            // The same with can_submit false (where it still exists) and an unavailable mode.
            let mut value = transient();
            edit(&mut value);
            assert_eq!(
                malformed_message(parse(&value)),
                CONTRACT,
                "{name} (transient)"
            );
        }
        assert_eq!(malformed_message(parse(&json!({}))), CONTRACT);
    }

    #[test]
    fn notice_is_lenient() {
        let complete = json!({"code": "c", "severity": "success", "title": "T", "message": "M"});
        let mut value = transient();
        value["runtime_interaction"]["notice"] = complete.clone();
        assert_eq!(
            access(&value).interaction.notice,
            Some(RuntimeNotice {
                code: "c".to_owned(),
                severity: Severity::Success,
                title: "T".to_owned(),
                message: "M".to_owned(),
            })
        );
        let incomplete = [
            json!(null),
            json!("notice"),
            json!([complete.clone()]),
            json!({}),
            json!({"severity": "info", "title": "T", "message": "M"}),
            json!({"code": "", "severity": "info", "title": "T", "message": "M"}),
            json!({"code": "c", "severity": "info", "title": " ", "message": "M"}),
            json!({"code": "c", "severity": "info", "title": "T"}),
            json!({"code": "c", "severity": "info", "title": "T", "message": 5}),
            json!({"code": "c", "severity": "fatal", "title": "T", "message": "M"}),
            json!({"code": "c", "severity": "INFO", "title": "T", "message": "M"}),
            json!({"code": "c", "severity": null, "title": "T", "message": "M"}),
            json!({"code": "c", "title": "T", "message": "M"}),
        ];
        for notice in incomplete {
            let mut value = transient();
            value["runtime_interaction"]["notice"] = notice.clone();
            let access = access(&value);
            assert_eq!(access.interaction.notice, None, "{notice}");
            assert_eq!(access.interaction.state, InteractionState::Waking);
        }
    }

    #[test]
    fn operation_is_lenient() {
        let complete = json!({"uid": "op-18", "status": "failed", "created_at": "2026-10-02T08:00:00Z", "support_reference": "upd-op-18"});
        for status in OPERATION_STATUSES {
            let mut operation = complete.clone();
            operation["status"] = json!(status);
            let mut value = transient();
            value["runtime_interaction"]["operation"] = operation;
            assert_eq!(
                access(&value).interaction.support_reference.as_deref(),
                Some("upd-op-18"),
                "{status}"
            );
        }
        let incomplete = [
            json!(null),
            json!("upd-op-18"),
            json!([complete.clone()]),
            json!({"status": "failed", "created_at": "t", "support_reference": "r"}),
            json!({"uid": "", "status": "failed", "created_at": "t", "support_reference": "r"}),
            json!({"uid": "op", "status": "exploded", "created_at": "t", "support_reference": "r"}),
            json!({"uid": "op", "created_at": "t", "support_reference": "r"}),
            json!({"uid": "op", "status": "failed", "support_reference": "r"}),
            json!({"uid": "op", "status": "failed", "created_at": 5, "support_reference": "r"}),
            json!({"uid": "op", "status": "failed", "created_at": "t"}),
            json!({"uid": "op", "status": "failed", "created_at": "t", "support_reference": ""}),
            json!({"uid": "op", "status": "failed", "created_at": "t", "support_reference": 18}),
        ];
        for operation in incomplete {
            let mut value = transient();
            value["runtime_interaction"]["operation"] = operation.clone();
            assert_eq!(
                access(&value).interaction.support_reference,
                None,
                "{operation}"
            );
        }
    }

    #[test]
    fn retry_after_ms_edge_cases() {
        let cases = [
            (json!(2500), Some(2500)),
            (json!(0), Some(0)),
            (json!(-5), Some(0)),
            (json!(-0.0), Some(0)),
            (json!(-1.5), Some(0)),
            (json!(2500.7), Some(2500)),
            (json!(0.9), Some(0)),
            (json!(1e30), Some(u64::MAX)),
            (json!(u64::MAX), Some(u64::MAX)),
            (json!(i64::MIN), Some(0)),
            (json!("300"), None),
            (json!(true), None),
            (json!(null), None),
            (json!([300]), None),
            (json!({"ms": 300}), None),
        ];
        for (raw, expected) in cases {
            let mut value = transient();
            value["runtime_interaction"]["retry_after_ms"] = raw.clone();
            assert_eq!(access(&value).interaction.retry_after_ms, expected, "{raw}");
        }
        // Beyond u64 and i64 in the raw text.
        for (raw, expected) in [
            ("18446744073709551616", u64::MAX),
            ("-9223372036854775809", 0),
            ("1e300", u64::MAX),
        ] {
            let body = TRANSIENT_EXAMPLE.replace(
                r#""retry_after_ms": 2500"#,
                &format!(r#""retry_after_ms": {raw}"#),
            );
            let access = parse_runtime_access(body.as_bytes(), PLATFORM).unwrap();
            assert_eq!(access.interaction.retry_after_ms, Some(expected), "{raw}");
        }
        // Absent.
        let mut value = transient();
        value["runtime_interaction"]
            .as_object_mut()
            .unwrap()
            .remove("retry_after_ms");
        assert_eq!(access(&value).interaction.retry_after_ms, None);
    }

    #[test]
    fn replicas_and_observed_at_are_lenient() {
        let cases = [
            (json!({"desired": 3, "actual": 0}), (Some(3), Some(0))),
            (json!({"desired": null, "actual": 2}), (None, Some(2))),
            (json!({"actual": 2}), (None, Some(2))),
            (json!({}), (None, None)),
            (json!({"desired": -1, "actual": 1.5}), (None, None)),
            (json!({"desired": "1", "actual": true}), (None, None)),
            (json!({"desired": [1], "actual": {"n": 1}}), (None, None)),
            (json!([1, 1]), (None, None)),
            (json!("1/1"), (None, None)),
            (json!(null), (None, None)),
        ];
        for (replicas, (desired, actual)) in cases {
            let mut value = ready();
            value["runtime_presence"]["replicas"] = replicas.clone();
            let presence = access(&value).presence;
            assert_eq!(presence.desired_replicas, desired, "{replicas}");
            assert_eq!(presence.actual_replicas, actual, "{replicas}");
        }
        let mut value = ready();
        value["runtime_presence"]
            .as_object_mut()
            .unwrap()
            .remove("replicas");
        let presence = access(&value).presence;
        assert_eq!(
            (presence.desired_replicas, presence.actual_replicas),
            (None, None)
        );

        for observed_at in [json!(null), json!(5), json!(""), json!({})] {
            let mut value = ready();
            value["runtime_presence"]["observed_at"] = observed_at.clone();
            assert_eq!(access(&value).presence.observed_at, None, "{observed_at}");
        }
    }

    #[test]
    fn wake_is_lenient() {
        let complete = json!({"operation_uid": "op-17", "state": "requested", "requested_at": "r", "deadline_at": "d"});
        for state in WAKE_STATES {
            let mut wake = complete.clone();
            wake["state"] = json!(state);
            let mut value = transient();
            value["runtime_presence"]["wake"] = wake;
            assert_eq!(
                access(&value).presence.wake.map(|wake| wake.state),
                Some(state.to_owned())
            );
        }
        let incomplete = [
            json!(null),
            json!("op-17"),
            json!([complete.clone()]),
            json!({}),
            json!({"state": "requested", "requested_at": "r", "deadline_at": "d"}),
            json!({"operation_uid": "", "state": "requested", "requested_at": "r", "deadline_at": "d"}),
            json!({"operation_uid": "op", "state": "asleep", "requested_at": "r", "deadline_at": "d"}),
            json!({"operation_uid": "op", "state": 1, "requested_at": "r", "deadline_at": "d"}),
            json!({"operation_uid": "op", "state": "requested", "deadline_at": "d"}),
            json!({"operation_uid": "op", "state": "requested", "requested_at": " ", "deadline_at": "d"}),
            json!({"operation_uid": "op", "state": "requested", "requested_at": "r"}),
            json!({"operation_uid": "op", "state": "requested", "requested_at": "r", "deadline_at": 0}),
        ];
        for wake in incomplete {
            let mut value = transient();
            value["runtime_presence"]["wake"] = wake.clone();
            let access = access(&value);
            assert_eq!(access.presence.wake, None, "{wake}");
            assert_eq!(access.presence.phase, PresencePhase::Provisioning);
        }
    }

    #[test]
    fn unavailable_mode_detail() {
        let cases = [
            (json!({"detail": "Top."}), Some("Top.")),
            (
                json!({"detail": "Top.", "ready": {"ready": false, "detail": "Nested."}}),
                Some("Top."),
            ),
            (
                json!({"ready": {"ready": false, "detail": "Nested."}}),
                Some("Nested."),
            ),
            (
                json!({"detail": "  ", "ready": {"detail": " Nested. "}}),
                Some("Nested."),
            ),
            (
                json!({"detail": null, "ready": {"detail": "Nested."}}),
                Some("Nested."),
            ),
            (json!({"detail": 5, "ready": {"detail": ""}}), None),
            (json!({"ready": true}), None),
            (json!({"ready": "Nested."}), None),
            (json!({}), None),
        ];
        for (extra, expected) in cases {
            for can_submit in [false, true] {
                let mut value = transient();
                let map = value.as_object_mut().unwrap();
                map.remove("detail");
                for (key, field) in extra.as_object().unwrap() {
                    map.insert(key.clone(), field.clone());
                }
                value["runtime_interaction"]["can_submit"] = json!(can_submit);
                assert_eq!(
                    access(&value).mode,
                    AccessMode::Unavailable {
                        detail: expected.map(str::to_owned)
                    },
                    "{extra} can_submit={can_submit}"
                );
            }
        }
        // An unavailable mode may carry an rpc_url and token; they are not read.
        let mut value = ready();
        value["mode"] = json!("unavailable");
        assert_eq!(
            access(&value).mode,
            AccessMode::Unavailable { detail: None }
        );
    }

    #[test]
    fn other_modes() {
        let modes = [
            json!(null),
            json!("direct"),
            json!("TOKEN"),
            json!(" token"),
            json!(""),
            json!(1),
            json!(["token"]),
        ];
        for mode in modes {
            let mut value = ready();
            value["mode"] = mode.clone();
            assert_eq!(
                malformed_message(parse(&value)),
                "The runtime access answer can submit but names no runtime.",
                "{mode}"
            );
            value["runtime_interaction"]["can_submit"] = json!(false);
            assert_eq!(access(&value).mode, AccessMode::Other, "{mode}");
        }
        let mut value = ready();
        value.as_object_mut().unwrap().remove("mode");
        assert_eq!(
            malformed_message(parse(&value)),
            "The runtime access answer can submit but names no runtime."
        );
        value["runtime_interaction"]["can_submit"] = json!(false);
        assert_eq!(access(&value).mode, AccessMode::Other);
    }

    #[test]
    fn token_mode_needs_rpc_url_and_token() {
        let edits: Vec<Edit> = vec![
            ("no token", |v| {
                v.as_object_mut().unwrap().remove("token");
            }),
            ("null token", |v| v["token"] = Value::Null),
            ("empty token", |v| v["token"] = json!("")),
            ("blank token", |v| v["token"] = json!(" \t\n ")),
            ("numeric token", |v| v["token"] = json!(12345)),
            ("object token", |v| v["token"] = json!({"value": "t"})),
            ("no rpc_url", |v| {
                v.as_object_mut().unwrap().remove("rpc_url");
            }),
            ("null rpc_url", |v| v["rpc_url"] = Value::Null),
            ("empty rpc_url", |v| v["rpc_url"] = json!("")),
            ("numeric rpc_url", |v| v["rpc_url"] = json!(8080)),
            ("javascript rpc_url", |v| {
                v["rpc_url"] = json!("javascript:alert(1)")
            }),
            ("rpc_url with query", |v| {
                v["rpc_url"] = json!("https://rt.example.test/a?x=1")
            }),
        ];
        for (name, edit) in edits {
            let mut value = ready();
            edit(&mut value);
            assert_eq!(
                malformed_message(parse(&value)),
                "The runtime access answer has no usable rpc_url or token.",
                "{name}"
            );
            value["runtime_interaction"]["can_submit"] = json!(false);
            value["runtime_interaction"]["state"] = json!("waking");
            assert_eq!(access(&value).mode, AccessMode::Other, "{name}");
        }
    }

    #[test]
    fn token_mode_with_can_submit_false_keeps_the_endpoint() {
        let mut value = ready();
        value["runtime_interaction"]["state"] = json!("update_required");
        value["runtime_interaction"]["can_submit"] = json!(false);
        let access = access(&value);
        assert_eq!(
            endpoint(&access).rpc_url,
            "https://rt.example.test/agents/ledger"
        );
    }

    #[test]
    fn token_is_trimmed_and_never_shown() {
        let mut value = ready();
        value["token"] = json!("  secret-runtime-token-XYZ \n");
        let access = access(&value);
        assert_eq!(endpoint(&access).token.expose(), "secret-runtime-token-XYZ");
        for shown in [
            format!("{access:?}"),
            format!("{access:#?}"),
            format!("{:?}", access.mode),
            format!("{:?}", endpoint(&access)),
        ] {
            assert!(!shown.contains("secret-runtime-token-XYZ"), "{shown}");
            assert!(!shown.contains("runtime-token"), "{shown}");
        }
        let serialized = serde_json::to_string(&endpoint(&access).token).unwrap();
        assert!(!serialized.contains("secret-runtime-token-XYZ"));
    }

    #[test]
    fn errors_never_show_the_token() {
        let mut value = ready();
        value["token"] = json!("leaky-token-123");
        value["rpc_url"] = json!("ftp://rt.example.test/a");
        let error = parse(&value).unwrap_err();
        assert!(!format!("{error:?}").contains("leaky-token-123"));
        assert!(!error.to_string().contains("leaky-token-123"));
    }

    #[test]
    fn rpc_url_absolute_forms() {
        let cases = [
            (
                "https://rt.example.test/agents/ledger",
                "https://rt.example.test/agents/ledger",
            ),
            (
                "https://rt.example/agents/a1/",
                "https://rt.example/agents/a1",
            ),
            (
                "https://rt.example/agents/a1///",
                "https://rt.example/agents/a1",
            ),
            ("https://rt.example/", "https://rt.example"),
            ("https://rt.example", "https://rt.example"),
            ("http://rt.example:8080/a1", "http://rt.example:8080/a1"),
            ("HTTPS://RT.example/A1", "https://RT.example/A1"),
            ("  https://rt.example/a1  ", "https://rt.example/a1"),
            ("https://[::1]:8443/a1", "https://[::1]:8443/a1"),
            ("http://127.0.0.1/a1", "http://127.0.0.1/a1"),
            (
                "https://rt-1.internal_svc.example/a%20b",
                "https://rt-1.internal_svc.example/a%20b",
            ),
        ];
        for (rpc_url, expected) in cases {
            assert_eq!(resolve(rpc_url).as_deref(), Some(expected), "{rpc_url}");
            assert_eq!(
                endpoint(&access(&with_rpc_url(rpc_url))).rpc_url,
                expected,
                "{rpc_url}"
            );
        }
    }

    #[test]
    fn rpc_url_relative_forms() {
        let cases = [
            ("//rt.example/agents/a1", "https://rt.example/agents/a1"),
            ("//rt.example/agents/a1/", "https://rt.example/agents/a1"),
            ("/rt/a1", "https://platform.example.test/rt/a1"),
            ("/rt/a1/", "https://platform.example.test/rt/a1"),
            ("/", "https://platform.example.test"),
            ("rt.example/a1", "https://rt.example/a1"),
            ("rt.example", "https://rt.example"),
            ("rt.example:8443/a1", "https://rt.example:8443/a1"),
            ("localhost:3000", "https://localhost:3000"),
        ];
        for (rpc_url, expected) in cases {
            assert_eq!(resolve(rpc_url).as_deref(), Some(expected), "{rpc_url}");
        }
        // The platform's scheme and origin are used, never its path.
        let base = "http://platform.example.test:8000/prefix/api";
        assert_eq!(
            resolve_rpc_url("/rt/a1", base).as_deref(),
            Some("http://platform.example.test:8000/rt/a1")
        );
        assert_eq!(
            resolve_rpc_url("//rt.example/a1", base).as_deref(),
            Some("http://rt.example/a1")
        );
        assert_eq!(
            resolve_rpc_url("rt.example/a1", base).as_deref(),
            Some("http://rt.example/a1")
        );
        // Through the parser, with a platform base that has a path prefix.
        let body = with_rpc_url("/rt/a1/").to_string();
        let access =
            parse_runtime_access(body.as_bytes(), "https://platform.example.test/prefix").unwrap();
        assert_eq!(
            endpoint(&access).rpc_url,
            "https://platform.example.test/rt/a1"
        );
        // A platform base with a trailing slash works too.
        assert_eq!(
            resolve_rpc_url("/rt/a1", "https://platform.example.test/").as_deref(),
            Some("https://platform.example.test/rt/a1")
        );
    }

    #[test]
    fn relative_rpc_url_needs_a_usable_platform_base() {
        for base in [
            "",
            "platform.example.test",
            "ftp://platform.example.test",
            "https://",
            "/api",
        ] {
            for rpc_url in ["/rt/a1", "//rt.example/a1", "rt.example/a1"] {
                assert_eq!(resolve_rpc_url(rpc_url, base), None, "{rpc_url} on {base}");
            }
            // An absolute rpc_url needs no base.
            assert_eq!(
                resolve_rpc_url("https://rt.example/a1", base).as_deref(),
                Some("https://rt.example/a1")
            );
        }
    }

    #[test]
    fn rpc_url_refusals() {
        let refused = [
            "",
            "   ",
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,hi",
            "ftp://rt.example/a1",
            "file:///etc/passwd",
            "mailto:a@b.example",
            "ws://rt.example/a1",
            "http:rt.example/a1",
            "https:/rt.example/a1",
            "https://",
            "https:///a1",
            "//",
            "///a1",
            "https://rt.example/a1?x=1",
            "https://rt.example/a1#frag",
            "/rt/a1?token=1",
            "rt.example/a1#x",
            "https://rt.example/a 1",
            "https://rt .example/a1",
            "https://rt.example/a\t1",
            "https://rt.example/a\n1",
            "https://rt.example/a\u{0}1",
            "https://rt.example/a\u{7f}1",
            "https://rt.example\\a1",
            "https:\\\\rt.example/a1",
            "https://rt.ex\u{e4}mple/a1",
            "https://rt.example:port/a1",
            "https://rt.example:/a1",
            "https://rt.example:123456/a1",
            "https://:8080/a1",
            "https://user@/a1",
            "https://[/a1",
            "https://[]/a1",
            "https://[::1/a1",
            "https://[::1]x/a1",
            "https://[a[b]/a1",
            "https://[a[b]:8443/a1",
            "https://rt]example/a1",
            "https://.../a1",
            "https://rt.example,evil/a1",
        ];
        for rpc_url in refused {
            assert_eq!(resolve(rpc_url), None, "{rpc_url:?}");
            assert_eq!(
                malformed_message(parse(&with_rpc_url(rpc_url))),
                "The runtime access answer has no usable rpc_url or token.",
                "{rpc_url:?}"
            );
        }
    }

    #[test]
    fn hostile_bodies_do_not_panic() {
        for body in hostile_bodies() {
            let _ = parse_runtime_access(&body, PLATFORM);
            let _ = parse_runtime_access(&body, "");
        }
        let huge = "x".repeat(1_000_000);
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let mut bodies = vec![
            String::new(),
            "null".to_owned(),
            "[]".to_owned(),
            r#""x""#.to_owned(),
            deep.clone(),
            format!(r#""{huge}""#),
            format!(r#"{{"mode": "{huge}", "runtime_interaction": {deep}}}"#),
        ];
        for (path, replacement) in [
            ("token", json!(huge)),
            ("rpc_url", json!(huge)),
            ("rpc_url", json!(format!("https://{huge}"))),
            ("rpc_url", json!(format!("/{}", "/".repeat(1_000_000)))),
            (
                "rpc_url",
                json!(format!("https://rt.example/{}", "/".repeat(1_000_000))),
            ),
            ("rpc_url", json!(format!("{}:{}", huge, huge))),
            ("rpc_url", json!(":".repeat(10_000))),
            ("rpc_url", json!("[".repeat(10_000))),
            ("rpc_url", json!("@".repeat(10_000))),
            ("rpc_url", json!("\u{1F600}".repeat(10_000))),
            ("detail", json!(huge)),
            ("ready", json!({"detail": huge})),
            (
                "runtime_interaction",
                json!({"state": huge, "can_submit": true}),
            ),
            (
                "runtime_presence",
                json!({"phase": "idle", "detail": huge, "wake": {"operation_uid": huge}}),
            ),
        ] {
            for can_submit in [true, false] {
                let mut value = ready();
                if path != "runtime_interaction" {
                    value["runtime_interaction"]["can_submit"] = json!(can_submit);
                }
                value[path] = replacement.clone();
                bodies.push(value.to_string());
            }
        }
        for body in &bodies {
            for base in [PLATFORM, "", "https://", huge.as_str(), "\u{1F600}://x"] {
                let _ = parse_runtime_access(body.as_bytes(), base);
            }
        }
        // A 1 MB string inside an otherwise ready answer: the token is never shown.
        let mut value = ready();
        value["token"] = json!(format!("tok-{huge}"));
        let access = access(&value);
        assert!(!format!("{access:?}").contains("tok-xxx"));
    }
}

//! Error bodies (`platform-api.md` section 3) and the typed errors of platform reads.

use std::collections::HashSet;
use std::fmt;

use serde::Serialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The platform operation a failure belongs to; its text starts the error message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Operation {
    /// P1, the latest-sessions list (or an Agent's latest session).
    SessionList,
    /// P2, the session detail.
    SessionDetail,
    /// P9, the history.
    SessionHistory,
    /// P10, the insights.
    SessionInsights,
    /// P7, start-new-session.
    StartNewSession,
    /// P8, get-or-create-session.
    GetOrCreateSession,
    /// P5, archive.
    ArchiveSession,
    /// P6, unarchive.
    UnarchiveSession,
    /// P4, delete.
    DeleteSession,
    /// P11, resolve-runtime-access.
    ResolveRuntimeAccess,
    /// R1, the Agent confirmation.
    ConfirmAgent,
    /// P12, the model-provider catalog.
    ModelProviders,
    /// P3, a model change.
    UpdateSessionModel,
    /// R2, a turn.
    SendMessage,
    /// R3, the run cancel.
    CancelRun,
    /// P1, one Agent's archived sessions (the session explorer).
    ArchivedSessionList,
    /// P1, the session search (the session explorer).
    SessionSearch,
    /// P13, the Agent icon projection.
    AgentIcons,
    /// P14, an icon's bytes.
    AgentIcon,
    /// A local Agent runtime's route (ADR 099; its own texts are `api::local`'s).
    LocalRuntime,
}

impl Operation {
    /// The operation's name as it starts an error message ("Session detail request failed").
    pub fn failed_text(self) -> &'static str {
        match self {
            Operation::SessionList => "Latest agent sessions request failed",
            Operation::SessionDetail => "Session detail request failed",
            Operation::SessionHistory => "Session history request failed",
            Operation::SessionInsights => "Session insights request failed",
            Operation::StartNewSession => "Session creation failed",
            Operation::GetOrCreateSession => "Session get-or-create failed",
            Operation::ArchiveSession => "Session archive failed",
            Operation::UnarchiveSession => "Session restore failed",
            Operation::DeleteSession => "Delete session failed",
            Operation::ResolveRuntimeAccess => "Runtime access request failed",
            Operation::ConfirmAgent => "Agent readiness check failed",
            Operation::ModelProviders => "Available models request failed",
            Operation::UpdateSessionModel => "Session model update failed",
            Operation::SendMessage => "Chat stream failed",
            Operation::CancelRun => "Session cancellation failed",
            Operation::ArchivedSessionList => "Archived session list request failed",
            Operation::SessionSearch => "Conversation search failed",
            Operation::AgentIcons => "Agent icon projection failed",
            Operation::AgentIcon => "Agent icon request failed",
            Operation::LocalRuntime => "Local Agent request failed",
        }
    }
}

/// Why a platform call failed. `Display` gives the message a person sees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApiError {
    /// The call was refused before any request left (bad id, no Environment, ...).
    #[error("{message}")]
    Refused {
        /// Why.
        message: String,
    },
    /// The platform answered with a non-2xx status. With the request it answered, the text is
    /// RU-19's full one, "{operation}. Status: HTTP {code}[ {reason}]. Call: {METHOD} {url}.
    /// Server response: {message}" (the last part only when the body gave a message); without,
    /// "{operation}. Status: HTTP {code}." and the message.
    #[error("{}", http_text(*operation, *status, server_message.as_deref(), call.as_deref()))]
    Http {
        /// Which call.
        operation: Operation,
        /// The HTTP status.
        status: u16,
        /// The human message read from the error body (section 3), if any.
        server_message: Option<String>,
        /// The request that was answered, for the text (not serialized: the text carries it).
        #[serde(skip)]
        call: Option<Box<FailedCall>>,
    },
    /// No answer: a network failure or a timeout.
    #[error("{message}")]
    Transport {
        /// The transport's own message.
        message: String,
    },
    /// A 2xx answer whose body could not be read as the expected shape.
    #[error("{message}")]
    Malformed {
        /// What was wrong.
        message: String,
    },
    /// A session record from another Environment (or without one).
    #[error("{}", match actual { Some(a) => format!("The session belongs to Organization Environment {a}, not {expected}."), None => "The session response did not include organization_environment_uid.".to_owned() })]
    WrongEnvironment {
        /// The active Environment.
        expected: String,
        /// The record's Environment, when it named one.
        actual: Option<String>,
    },
    /// A body larger than the configured limit.
    #[error("The response body exceeded the limit of {limit} bytes.")]
    BodyTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
}

impl ApiError {
    /// The refusal of a session request while no Environment is active (section 1).
    pub fn no_environment() -> ApiError {
        ApiError::Refused {
            message: "Session requests require organization_environment_uid.".to_owned(),
        }
    }

    /// The platform's own message, when the failure carries one (HTTP error bodies only).
    pub fn server_message(&self) -> Option<&str> {
        match self {
            ApiError::Http { server_message, .. } => server_message.as_deref(),
            _ => None,
        }
    }

    /// The HTTP status, for HTTP failures.
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Builds the error for a non-2xx answer, reading the body's message (section 3).
    pub fn http(operation: Operation, status: u16, body: &[u8]) -> ApiError {
        ApiError::Http {
            operation,
            status,
            server_message: error_message(body),
            call: None,
        }
    }

    /// The same error with the request it answered (RU-19's full text).
    pub fn with_call(self, failed: FailedCall) -> ApiError {
        match self {
            ApiError::Http {
                operation,
                status,
                server_message,
                ..
            } => ApiError::Http {
                operation,
                status,
                server_message,
                call: Some(Box::new(failed)),
            },
            other => other,
        }
    }
}

/// The request a platform failure answered, as RU-19's text names it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FailedCall {
    /// The operation's text when it names more than [`Operation::failed_text`] (P2: "Agent
    /// session detail request failed for session {id}").
    pub operation_text: Option<String>,
    /// The server message when the body gives none, where RU-19 pins one (P2: "Session
    /// detail failed with status {code}.").
    pub fallback: Option<String>,
    /// `GET`, `POST`, ...
    pub method: &'static str,
    /// The address the engine built (before the host's rewrite).
    pub url: String,
    /// The status line's reason phrase, when the head had one.
    pub reason: Option<String>,
}

/// RU-19's reason phrase after the code: " {reason}", or nothing without one.
pub(crate) fn reason_suffix(reason: Option<&str>) -> String {
    reason
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(|r| format!(" {r}"))
        .unwrap_or_default()
}

fn http_text(
    operation: Operation,
    status: u16,
    message: Option<&str>,
    call: Option<&FailedCall>,
) -> String {
    let server = |m: Option<&str>| {
        m.map(|m| format!(" Server response: {m}"))
            .unwrap_or_default()
    };
    let Some(call) = call else {
        return format!(
            "{}. Status: HTTP {status}.{}",
            operation.failed_text(),
            server(message)
        );
    };
    let server = server(message.or(call.fallback.as_deref()));
    let reason = reason_suffix(call.reason.as_deref());
    let text = call
        .operation_text
        .as_deref()
        .unwrap_or(operation.failed_text());
    format!(
        "{text}. Status: HTTP {status}{reason}. Call: {} {}.{server}",
        call.method, call.url
    )
}

/// The longest message [`error_message`] returns, in characters; longer ones are cut and end
/// with "…".
const MAX_MESSAGE_CHARS: usize = 500;

/// The fields that hold the message itself, in order of preference.
const MESSAGE_FIELDS: [&str; 4] = ["message", "detail", "error", "error_detail"];

/// Metadata fields that never contribute text to a collected message (RU-19).
const METADATA_FIELDS: [&str; 4] = ["code", "request_id", "status", "status_code"];

/// The field whose texts are collected without a `field: ` prefix.
const NON_FIELD_ERRORS: &str = "non_field_errors";

/// Reads a human message from a platform error body (`platform-api.md` section 3): `message`,
/// `detail`, `error`, `error_detail`; else every string with its field path, de-duplicated and
/// joined with `"; "`; else the raw text (trimmed, when not empty and not JSON).
///
/// A JSON string body is its own message and a JSON array has its strings joined. Raw text is
/// decoded leniently (invalid UTF-8 becomes U+FFFD); raw text starting with `<` (an HTML error
/// page) gives no message. Messages longer than 500 characters are cut and end with "…".
pub fn error_message(body: &[u8]) -> Option<String> {
    let message = match parse_json(body) {
        Some(value) => message_from_json(&value, body),
        None => message_from_text(body),
    };
    message.map(cap_message)
}

/// The server message of an answer (RU-18, RU-19), read by its content type: with a content
/// type containing `application/json` the body is parsed and the message extracted (no parse,
/// or no message, gives `None`: the call's fallback); otherwise the body is text: blank gives
/// `None`, JSON text its extracted message (else the trimmed text), other text the trimmed text.
///
/// The extraction is [`error_message`]'s (RU-19). Invalid UTF-8 is decoded leniently; messages
/// longer than 500 characters are cut and end with "…".
///
/// ```
/// use engine_core::api::server_message;
///
/// let json = Some("application/json; charset=utf-8");
/// assert_eq!(server_message(json, br#"{"detail": " boom "}"#).as_deref(), Some("boom"));
/// assert_eq!(server_message(json, b"<html>oops</html>"), None);
/// assert_eq!(server_message(Some("text/html"), b" <html>oops</html> ").as_deref(), Some("<html>oops</html>"));
/// assert_eq!(server_message(None, br#"{"error": "x"}"#).as_deref(), Some("x"));
/// assert_eq!(server_message(None, b"{}").as_deref(), Some("{}"));
/// assert_eq!(server_message(Some("text/plain"), b"  \n"), None);
/// ```
pub fn server_message(content_type: Option<&str>, body: &[u8]) -> Option<String> {
    let json_type =
        content_type.is_some_and(|t| t.to_ascii_lowercase().contains("application/json"));
    let message = if json_type {
        parse_json(body).and_then(|value| message_from_json(&value, body))
    } else {
        let text = String::from_utf8_lossy(strip_bom(body));
        let text = text.trim();
        if text.is_empty() {
            None
        } else {
            parse_json(text.as_bytes())
                .and_then(|value| message_from_json(&value, text.as_bytes()))
                .or_else(|| Some(text.to_owned()))
        }
    };
    message.map(cap_message)
}

/// The model-required refusal of P7 and P8 (`platform-api.md`, "Model-required refusal"): when
/// `status` is exactly 400, the body is a JSON object and `llm_provider` and/or `llm_model` hold
/// a string (or a list containing a string) that says "required" in any letter case, returns the
/// fields named, in the order `llm_provider`, `llm_model`. Anything else is `None`.
pub fn model_required_fields(status: u16, body: &[u8]) -> Option<Vec<String>> {
    if status != 400 {
        return None;
    }
    let Some(Value::Object(map)) = parse_json(body) else {
        return None;
    };
    let fields: Vec<String> = ["llm_provider", "llm_model"]
        .into_iter()
        .filter(|field| map.get(*field).is_some_and(says_required))
        .map(str::to_owned)
        .collect();
    (!fields.is_empty()).then_some(fields)
}

/// Parses a body as JSON (a leading UTF-8 byte order mark is ignored). `None` when it is not JSON.
pub(super) fn parse_json(body: &[u8]) -> Option<Value> {
    serde_json::from_slice(strip_bom(body)).ok()
}

/// The body without a leading UTF-8 byte order mark.
fn strip_bom(body: &[u8]) -> &[u8] {
    body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body)
}

/// Whether a field-error value says "required": a string, or a list with such a string.
fn says_required(value: &Value) -> bool {
    fn text_says_required(text: &str) -> bool {
        text.to_lowercase().contains("required")
    }
    match value {
        Value::String(text) => text_says_required(text),
        Value::Array(items) => items
            .iter()
            .any(|item| item.as_str().is_some_and(text_says_required)),
        _ => false,
    }
}

/// The message of a JSON error body (`value` is `body` parsed).
fn message_from_json(value: &Value, body: &[u8]) -> Option<String> {
    match value {
        Value::Object(map) => MESSAGE_FIELDS
            .iter()
            .find_map(|field| map.get(*field).and_then(Value::as_str).and_then(non_blank))
            .or_else(|| collected_message(body)),
        Value::String(text) => non_blank(text),
        Value::Array(_) => collected_message(body),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// Every string of the JSON `body` with its field path, in document order, de-duplicated
/// (first occurrence kept) and joined with `"; "`. `None` when there is none.
///
/// The body is walked by the deserializer itself rather than through a [`Value`], whose map
/// does not keep the platform's field order.
fn collected_message(body: &[u8]) -> Option<String> {
    let mut texts = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_slice(strip_bom(body));
    // The body already parsed as JSON; should the walk stop early anyway, what it collected
    // so far is still the best message.
    let _ = Collect {
        path: String::new(),
        index: None,
        out: &mut texts,
    }
    .deserialize(&mut deserializer);
    let mut seen = HashSet::new();
    texts.retain(|text| seen.insert(text.clone()));
    (!texts.is_empty()).then(|| texts.join("; "))
}

/// Walks one JSON value, pushing `path: text` (or `text` at an empty path) for every non-blank
/// string (RU-19). A list entry that is a string keeps the list's path, one that is an object
/// or a list adds `[i]`; `non_field_errors` adds nothing to the path; metadata fields are
/// skipped with all they hold. Nesting is bounded by the JSON parser's recursion limit.
struct Collect<'a> {
    /// The field path of the value (`outer[0].inner`), empty at the top.
    path: String,
    /// The value's index when it is a list entry: added to the path when it is an object or a
    /// list.
    index: Option<usize>,
    /// The texts collected so far.
    out: &'a mut Vec<String>,
}

impl Collect<'_> {
    /// The path of this value's own entries: with `[i]` when it is a list entry.
    fn container_path(&self) -> String {
        match self.index {
            Some(i) => format!("{}[{i}]", self.path),
            None => self.path.clone(),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Collect<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Collect<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        if let Some(text) = non_blank(text) {
            self.out.push(if self.path.is_empty() {
                text
            } else {
                format!("{}: {text}", self.path)
            });
        }
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let path = self.container_path();
        let out = self.out;
        let mut i = 0;
        while seq
            .next_element_seed(Collect {
                path: path.clone(),
                index: Some(i),
                out: &mut *out,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let path = self.container_path();
        let out = self.out;
        while let Some(key) = map.next_key::<String>()? {
            if METADATA_FIELDS.contains(&key.as_str()) {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let child = if key == NON_FIELD_ERRORS {
                path.clone()
            } else if path.is_empty() {
                key
            } else {
                format!("{path}.{key}")
            };
            map.next_value_seed(Collect {
                path: child,
                index: None,
                out: &mut *out,
            })?;
        }
        Ok(())
    }
}

/// The raw text of a body that is not JSON: trimmed, not empty, and not markup.
fn message_from_text(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.starts_with('<') {
        return None;
    }
    non_blank(text)
}

/// The trimmed text, unless it is empty.
fn non_blank(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Cuts a message to [`MAX_MESSAGE_CHARS`] characters, marking the cut with "…".
fn cap_message(mut message: String) -> String {
    if let Some((cut, _)) = message.char_indices().nth(MAX_MESSAGE_CHARS) {
        // `cut` comes from `char_indices`, so it is a char boundary.
        message.truncate(cut);
        message.push('…');
    }
    message
}

/// Bodies no parser may panic on, shared by the parser tests of this module's siblings.
#[cfg(test)]
pub(super) fn hostile_bodies() -> Vec<Vec<u8>> {
    let deep_array = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let deep_object =
        |depth: usize| format!("{}1{}", r#"{"detail":"#.repeat(depth), "}".repeat(depth));
    let huge = "x".repeat(2_000_000);
    let mut bodies: Vec<Vec<u8>> = [
        "",
        " ",
        "null",
        "[]",
        "{}",
        r#""x""#,
        "true",
        "0",
        "-0",
        "1e400",
        "123456789012345678901234567890",
        r#"{"uid": 5}"#,
        r#"{"uid": null, "id": 7}"#,
        r#"{"uid": ""}"#,
        r#"{"uid": "   "}"#,
        r#"{"uid": ["a"]}"#,
        r#"{"uid": {"uid": "a"}}"#,
        r#"{"session": 1, "result": [], "data": "x"}"#,
        r#"{"session": {"uid": 3}}"#,
        r#"{"results": 5}"#,
        r#"{"results": [1, "a", null, {"uid": 5}, [], {"uid": "ok"}]}"#,
        r#"[1, "a", null, {"uid": 5}, [], {"uid": "ok", "agent": [], "bound_handles": [1, null]}]"#,
        r#"{"uid": "u", "agent": 7, "agent_uid": 8, "agent_name": [], "name": 5, "title": {}, "summary": null, "working": "yes", "is_archived": 1, "bound_handle": "h", "bound_handles": {"handle_unique_id": "x"}}"#,
        r#"{"session": [], "messages": {"a": 1}, "inProgressMessage": []}"#,
        r#"{"session": {"status": 5, "error": 6, "sessionId": [], "threadId": {}}, "messages": [1, null, "x", [], {"role": 5}, {"role": "assistant", "content": "text"}, {"role": "assistant", "content": [1, null, {"type": 5}, {"type": "text", "text": 5}, {"type": "tool-call"}, {"type": "tool_call", "toolCallId": 1, "toolName": "x"}, {"type": "reasoning", "text": null, "content": 3}]}], "inProgressMessage": {"role": "user", "content": [{"type": "text"}]}}"#,
        r#"{"messages": [{"role": "assistant", "content": [{"type": "text", "text": "<think><think></think></think><think>"}]}]}"#,
        r#"{"has_insights": "yes", "hasInsights": null, "harness": 5}"#,
        r#"{"detail": null, "message": [], "error": {}, "non_field_errors": [[[["deep"]]]]}"#,
        r#""\ud800""#,
        r#"{"detail": "\u0000"}"#,
        r#"{"llm_model": "required", "llm_model": 5}"#,
        "<html>",
        "{",
        "[",
        "\"",
    ]
    .iter()
    .map(|body| body.as_bytes().to_vec())
    .collect();
    bodies.extend([
        deep_array(100).into_bytes(),
        deep_array(127).into_bytes(),
        deep_array(100_000).into_bytes(),
        deep_object(120).into_bytes(),
        deep_object(100_000).into_bytes(),
        huge.clone().into_bytes(),
        format!(r#"{{"detail": "{huge}"}}"#).into_bytes(),
        format!(r#"{{"uid": "{huge}", "name": "{huge}"}}"#).into_bytes(),
        format!(
            r#"{{"messages": [{{"role": "assistant", "content": [{{"type": "text", "text": "{}"}}]}}]}}"#,
            "<think>a</think>".repeat(10_000)
        )
        .into_bytes(),
        format!("[{}]", vec![r#""s""#; 50_000].join(",")).into_bytes(),
        format!("[{}]", (0..20_000).map(|i| format!(r#""s{i}""#)).collect::<Vec<_>>().join(",")).into_bytes(),
        vec![0xFF, 0xFE, 0x00, 0x80],
        b"\xEF\xBB\xBF".to_vec(),
        b"{\"detail\": \"\xFF\"}".to_vec(),
        vec![b'{'; 10_000],
    ]);
    bodies
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests;

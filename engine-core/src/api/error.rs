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
    /// The platform answered with a non-2xx status.
    #[error("{}. Status: HTTP {status}.{}", operation.failed_text(), server_message.as_deref().map(|m| format!(" Server response: {m}")).unwrap_or_default())]
    Http {
        /// Which call.
        operation: Operation,
        /// The HTTP status.
        status: u16,
        /// The human message read from the error body (section 3), if any.
        server_message: Option<String>,
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
        }
    }
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
mod tests {
    use super::*;

    fn message(body: &str) -> Option<String> {
        error_message(body.as_bytes())
    }

    #[test]
    fn detail_body_reads_detail() {
        let body = r#"{"detail": "Model selection cannot change while a turn is working or persisting.", "error_code": "agent_session_selection_runtime_active"}"#;
        assert_eq!(
            message(body).as_deref(),
            Some("Model selection cannot change while a turn is working or persisting.")
        );
    }

    #[test]
    fn message_fields_in_order_and_trimmed() {
        assert_eq!(
            message(r#"{"detail": "d", "message": "  m  "}"#).as_deref(),
            Some("m")
        );
        assert_eq!(
            message(r#"{"message": "   ", "detail": "d"}"#).as_deref(),
            Some("d")
        );
        assert_eq!(
            message(r#"{"message": 5, "error": "e", "error_detail": "x"}"#).as_deref(),
            Some("e")
        );
        assert_eq!(
            message(r#"{"error_detail": "x", "code": "c"}"#).as_deref(),
            Some("x")
        );
    }

    #[test]
    fn field_map_collects_paths_in_document_order() {
        let body = r#"{"llm_provider": ["This field is required."], "llm_model": ["This field is required."]}"#;
        assert_eq!(
            message(body).as_deref(),
            Some("llm_provider: This field is required.; llm_model: This field is required.")
        );
    }

    #[test]
    fn non_field_errors_have_no_prefix() {
        let body = r#"{"non_field_errors": ["Send exactly one of handle_unique_id and session_uid.", "Second."]}"#;
        assert_eq!(
            message(body).as_deref(),
            Some("Send exactly one of handle_unique_id and session_uid.; Second.")
        );
    }

    #[test]
    fn nested_paths_join_with_dots_and_skip_metadata() {
        let body = r#"{
            "code": "invalid",
            "request_id": "r-1",
            "status": "error",
            "status_code": "400",
            "error_code": "bad",
            "runtime_config_override": {"limits": {"max_turns": ["Too large."]}, "non_field_errors": ["Bad config."]},
            "llm_model": "Unknown model.",
            "again": "Unknown model.",
            "dup": ["x", "x"],
            "count": 3,
            "empty": "  "
        }"#;
        assert_eq!(
            message(body).as_deref(),
            Some(
                "error_code: bad; runtime_config_override.limits.max_turns: Too large.; runtime_config_override: Bad config.; llm_model: Unknown model.; again: Unknown model.; dup: x"
            )
        );
    }

    /// RU-19's example, verbatim: list entries that are objects add `[i]`, `request_id` is
    /// skipped.
    #[test]
    fn ru_19_list_entries_add_their_index() {
        let body = r#"{"models": [{"metadata": ["Metadata cannot contain authentication fields: token."], "thinking_levels": ["A non-reasoning model cannot expose thinking levels."]}], "request_id": "r"}"#;
        assert_eq!(
            message(body).as_deref(),
            Some(
                "models[0].metadata: Metadata cannot contain authentication fields: token.; models[0].thinking_levels: A non-reasoning model cannot expose thinking levels."
            )
        );
        // A string entry keeps the list's path; lists in lists add each index; a top-level list
        // starts at its index; `non_field_errors` adds nothing, `status` is skipped with all it
        // holds; numbers, booleans and null give nothing.
        assert_eq!(
            message(r#"{"a": ["x", ["y", {"b": "z"}], 3, null, true]}"#).as_deref(),
            Some("a: x; a[1]: y; a[1][1].b: z")
        );
        assert_eq!(
            message(r#"[{"a": "x"}, "y", {"non_field_errors": ["w"]}]"#).as_deref(),
            Some("[0].a: x; y; [2]: w")
        );
        assert_eq!(
            message(r#"{"status": {"a": "hidden"}, "status_code": ["hidden"], "code": "c", "f": [{"non_field_errors": ["v"]}]}"#).as_deref(),
            Some("f[0]: v")
        );
    }

    /// RU-18: the body read by its content type.
    #[test]
    fn ru_18_server_message_by_content_type() {
        let json = Some("Application/JSON");
        assert_eq!(
            server_message(json, br#"{"detail": "boom"}"#).as_deref(),
            Some("boom")
        );
        assert_eq!(server_message(json, b"not json"), None);
        assert_eq!(server_message(json, b"{}"), None);
        assert_eq!(server_message(json, b""), None);
        assert_eq!(
            server_message(json, br#"{"llm_model": ["Bad."]}"#).as_deref(),
            Some("llm_model: Bad.")
        );
        for text_type in [None, Some("text/plain"), Some("text/html")] {
            assert_eq!(server_message(text_type, b" \n "), None);
            assert_eq!(
                server_message(text_type, br#" {"message": "m"} "#).as_deref(),
                Some("m")
            );
            assert_eq!(
                server_message(text_type, b"[1, 2]").as_deref(),
                Some("[1, 2]")
            );
            assert_eq!(
                server_message(text_type, b"  Bad gateway \n").as_deref(),
                Some("Bad gateway")
            );
            assert_eq!(
                server_message(text_type, b"<h1>502</h1>").as_deref(),
                Some("<h1>502</h1>")
            );
        }
        let long = "a".repeat(600);
        assert_eq!(
            server_message(None, long.as_bytes()).map(|m| m.chars().count()),
            Some(501)
        );
    }

    #[test]
    fn non_string_detail_falls_back_to_collection() {
        assert_eq!(
            message(r#"{"detail": {"llm_model": ["Bad."]}}"#).as_deref(),
            Some("detail.llm_model: Bad.")
        );
    }

    #[test]
    fn json_string_and_array_bodies() {
        assert_eq!(
            message(r#""  Plain failure. ""#).as_deref(),
            Some("Plain failure.")
        );
        assert_eq!(
            message(r#"["One.", "Two.", "One."]"#).as_deref(),
            Some("One.; Two.")
        );
        assert_eq!(message(r#"[]"#), None);
        assert_eq!(message(r#""""#), None);
    }

    #[test]
    fn json_without_text_gives_none() {
        assert_eq!(message("{}"), None);
        assert_eq!(message("null"), None);
        assert_eq!(message("42"), None);
        assert_eq!(message("true"), None);
        assert_eq!(message(r#"{"code": "x", "status": 500}"#), None);
    }

    #[test]
    fn plain_text_is_trimmed() {
        assert_eq!(message("  Bad gateway  \n").as_deref(), Some("Bad gateway"));
        assert_eq!(message(""), None);
        assert_eq!(message("   \n"), None);
        // Broken JSON is raw text.
        assert_eq!(
            message(r#"{"detail": "x"#).as_deref(),
            Some(r#"{"detail": "x"#)
        );
    }

    #[test]
    fn html_body_gives_none() {
        let body = "\n<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head><body><h1>Server Error</h1></body></html>";
        assert_eq!(message(body), None);
        assert_eq!(message("<html>oops</html>"), None);
    }

    #[test]
    fn invalid_utf8_is_decoded_leniently() {
        let body = b"Bad \xFF\xFE gateway";
        assert_eq!(
            error_message(body).as_deref(),
            Some("Bad \u{FFFD}\u{FFFD} gateway")
        );
        assert_eq!(error_message(b"\xC3"), Some("\u{FFFD}".to_owned()));
    }

    #[test]
    fn byte_order_mark_is_ignored() {
        assert_eq!(
            error_message(b"\xEF\xBB\xBF{\"detail\": \"x\"}").as_deref(),
            Some("x")
        );
    }

    #[test]
    fn long_messages_are_capped_at_a_char_boundary() {
        let long = "é".repeat(800);
        let capped = message(&format!(r#"{{"detail": "{long}"}}"#)).unwrap();
        assert_eq!(capped.chars().count(), 501);
        assert!(capped.ends_with('…'));
        assert!(capped.starts_with("éé"));

        let exact = "a".repeat(500);
        assert_eq!(message(&exact).as_deref(), Some(exact.as_str()));
        let over = "a".repeat(501);
        assert_eq!(message(&over), Some(format!("{exact}…")));
    }

    #[test]
    fn http_error_display_carries_the_server_message() {
        let error = ApiError::http(Operation::SessionDetail, 409, br#"{"detail": "Busy."}"#);
        assert_eq!(error.server_message(), Some("Busy."));
        assert_eq!(error.status(), Some(409));
        assert_eq!(
            error.to_string(),
            "Session detail request failed. Status: HTTP 409. Server response: Busy."
        );
        let error = ApiError::http(Operation::SessionList, 500, b"<html></html>");
        assert_eq!(
            error.to_string(),
            "Latest agent sessions request failed. Status: HTTP 500."
        );
    }

    #[test]
    fn model_required_both_fields() {
        let body = br#"{"llm_provider": ["This field is required."], "llm_model": ["This field is required."]}"#;
        assert_eq!(
            model_required_fields(400, body),
            Some(vec!["llm_provider".to_owned(), "llm_model".to_owned()])
        );
    }

    #[test]
    fn model_required_one_field_string_or_list() {
        assert_eq!(
            model_required_fields(400, br#"{"llm_model": "REQUIRED field"}"#),
            Some(vec!["llm_model".to_owned()])
        );
        assert_eq!(
            model_required_fields(
                400,
                br#"{"llm_model": ["Unknown model."], "llm_provider": [3, "Provider is Required."]}"#
            ),
            Some(vec!["llm_provider".to_owned()])
        );
    }

    #[test]
    fn model_required_negative_cases() {
        let required = br#"{"llm_provider": ["This field is required."]}"#;
        assert_eq!(
            model_required_fields(400, br#"{"llm_model": ["Unknown model."]}"#),
            None
        );
        assert_eq!(model_required_fields(500, required), None);
        assert_eq!(model_required_fields(401, required), None);
        assert_eq!(
            model_required_fields(400, br#"[{"llm_model": ["This field is required."]}]"#),
            None
        );
        assert_eq!(
            model_required_fields(400, br#"["This field is required."]"#),
            None
        );
        assert_eq!(
            model_required_fields(400, b"llm_model: This field is required."),
            None
        );
        assert_eq!(
            model_required_fields(400, br#"{"name": ["This field is required."]}"#),
            None
        );
        assert_eq!(
            model_required_fields(400, br#"{"llm_model": [["This field is required."]]}"#),
            None
        );
        assert_eq!(
            model_required_fields(400, br#"{"llm_model": {"x": "required"}}"#),
            None
        );
        assert_eq!(model_required_fields(400, b""), None);
    }

    #[test]
    fn hostile_bodies_do_not_panic() {
        for body in hostile_bodies() {
            let _ = error_message(&body);
            let _ = server_message(Some("application/json"), &body);
            let _ = server_message(None, &body);
            let _ = model_required_fields(400, &body);
        }
    }
}

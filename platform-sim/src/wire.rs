//! Wire helpers: timestamps, catalog look-ups, answer frames, and the history shape of an answer.

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use serde_json::{Map, Value, json};

/// Wall-clock milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for Unix milliseconds (UTC).
pub(crate) fn iso(ms: u64) -> String {
    let secs = ms / 1000;
    let millis = ms % 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if mo <= 2 { y + 1 } else { y };
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}.{millis:03}Z")
}

/// The current time as ISO-8601.
pub(crate) fn iso_now() -> String {
    iso(now_ms())
}

// ---------------------------------------------------------------------------------------------
// Catalog

/// A provider and model the catalog offers, with the model's thinking levels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModelPick {
    pub provider: String,
    pub model: String,
    pub levels: Vec<String>,
    pub context_window: Option<u64>,
    pub max_tokens: Option<u64>,
}

impl ModelPick {
    /// The default level of the model: `medium` when offered, else the first, else `""`.
    pub(crate) fn default_thinking(&self) -> String {
        if self.levels.iter().any(|l| l == "medium") {
            "medium".to_owned()
        } else {
            self.levels.first().cloned().unwrap_or_default()
        }
    }
}

/// Why a model choice was refused: the field and its message.
pub(crate) type FieldError = (&'static str, &'static str);

const UNKNOWN_PROVIDER: FieldError = (
    "llm_provider",
    "This provider is not in the platform's model catalog.",
);
const UNKNOWN_MODEL: FieldError = (
    "llm_model",
    "This model is not in the platform's model catalog.",
);
const UNKNOWN_LEVEL: FieldError = (
    "llm_thinking",
    "This thinking level is not offered by the model.",
);

fn providers(catalog: &Value) -> impl Iterator<Item = &Map<String, Value>> {
    catalog
        .get("providers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

fn str_field<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

fn pick(provider: &Map<String, Value>, model: &str) -> Option<ModelPick> {
    let provider_id = str_field(provider, "provider")?;
    let entry = provider
        .get("models")
        .and_then(Value::as_array)?
        .iter()
        .filter_map(Value::as_object)
        .find(|m| str_field(m, "model") == Some(model))?;
    Some(ModelPick {
        provider: provider_id.to_owned(),
        model: model.to_owned(),
        levels: entry
            .get("thinking_levels")
            .and_then(Value::as_array)
            .map(|levels| {
                levels
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        context_window: entry.get("context_window").and_then(Value::as_u64),
        max_tokens: entry.get("max_tokens").and_then(Value::as_u64),
    })
}

/// RU-53: why the stand-in fails a turn on `provider`/`model` before it starts: the model is
/// not in the catalog ("The model {provider}/{model} is not in the platform's model
/// catalog."), or its provider takes a sign-in the person has not made ("Sign in to {provider
/// display name} before you use {model display name}."). `None`: the turn may run.
pub(crate) fn turn_refusal(catalog: &Value, provider: &str, model: &str) -> Option<String> {
    let not_in_catalog =
        || format!("The model {provider}/{model} is not in the platform's model catalog.");
    let Some(provider_map) =
        providers(catalog).find(|p| str_field(p, "provider") == Some(provider))
    else {
        return Some(not_in_catalog());
    };
    let Some(entry) = provider_map
        .get("models")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .find(|m| str_field(m, "model") == Some(model))
    else {
        return Some(not_in_catalog());
    };
    let signed_out = provider_map.get("authenticated").and_then(Value::as_bool) == Some(false);
    signed_out.then(|| {
        let provider_name = str_field(provider_map, "display_name").unwrap_or(provider);
        let model_name = str_field(entry, "display_name").unwrap_or(model);
        format!("Sign in to {provider_name} before you use {model_name}.")
    })
}

/// The model `provider`/`model` of the catalog, if it offers it.
pub(crate) fn find_model(catalog: &Value, provider: &str, model: &str) -> Option<ModelPick> {
    providers(catalog)
        .filter(|p| str_field(p, "provider") == Some(provider))
        .find_map(|p| pick(p, model))
}

/// Checks a choice against the catalog: the provider, then the model, then the level (`""` is
/// always allowed). `model` absent takes the provider's default model; `provider` absent takes
/// the default provider.
pub(crate) fn check_choice(
    catalog: &Value,
    provider: Option<&str>,
    model: Option<&str>,
    thinking: Option<&str>,
) -> Result<(ModelPick, String), FieldError> {
    let provider_map = match provider {
        Some(id) => providers(catalog)
            .find(|p| str_field(p, "provider") == Some(id))
            .ok_or(UNKNOWN_PROVIDER)?,
        None => providers(catalog)
            .find(|p| p.get("enabled").and_then(Value::as_bool) != Some(false))
            .ok_or(UNKNOWN_PROVIDER)?,
    };
    let model_id = match model {
        Some(m) => m,
        None => str_field(provider_map, "default_model").ok_or(UNKNOWN_MODEL)?,
    };
    let picked = pick(provider_map, model_id).ok_or(UNKNOWN_MODEL)?;
    let thinking = match thinking {
        None => picked.default_thinking(),
        Some("") => String::new(),
        Some(level) if picked.levels.iter().any(|l| l == level) => level.to_owned(),
        Some(_) => return Err(UNKNOWN_LEVEL),
    };
    Ok((picked, thinking))
}

/// The catalog's digest, if it names one.
pub(crate) fn catalog_digest(catalog: &Value) -> Value {
    catalog
        .get("catalog_digest")
        .filter(|d| d.is_string())
        .cloned()
        .unwrap_or(Value::Null)
}

// ---------------------------------------------------------------------------------------------
// Answer frames

/// One SSE event of an answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Frame {
    /// A chunk, written as compact JSON by serde_json.
    Chunk(Value),
    /// A chunk written as `text` (the runtime dialect's `json.dumps` style, in its own key
    /// order).
    Written {
        /// The chunk, for the history.
        chunk: Value,
        /// Its JSON text.
        text: String,
    },
    /// Data written verbatim (a scripted string, `[DONE]`).
    Raw(String),
}

impl Frame {
    /// `data: {payload}\n\n`.
    pub(crate) fn bytes(&self) -> Bytes {
        let payload = match self {
            Frame::Chunk(value) => value.to_string(),
            Frame::Written { text, .. } | Frame::Raw(text) => text.clone(),
        };
        Bytes::from(format!("data: {payload}\n\n"))
    }

    /// The chunk it carries, when it is one.
    pub(crate) fn chunk(&self) -> Option<&Value> {
        match self {
            Frame::Chunk(chunk) | Frame::Written { chunk, .. } => Some(chunk),
            Frame::Raw(_) => None,
        }
    }

    /// The terminator.
    pub(crate) fn done() -> Frame {
        Frame::Raw("[DONE]".to_owned())
    }
}

/// The frame a cancelled answer ends with (before `[DONE]`).
pub(crate) fn abort_frame() -> Frame {
    Frame::Chunk(json!({"type": "abort", "reason": "The run was cancelled."}))
}

// ---------------------------------------------------------------------------------------------
// The history shape of an answer

#[derive(Debug, Clone)]
enum HistoryPart {
    Text(String),
    Reasoning(String),
    Tool {
        id: String,
        name: String,
        input: Value,
        result: Option<Value>,
        is_error: bool,
    },
}

/// Collects the chunks of an answer into the platform's `content` parts (P9).
#[derive(Debug, Clone, Default)]
pub(crate) struct AnswerBuilder {
    parts: Vec<HistoryPart>,
    open_text: HashMap<String, usize>,
    open_reasoning: HashMap<String, usize>,
    tools: HashMap<String, usize>,
    /// The first `error` chunk's text.
    pub error: Option<String>,
}

impl AnswerBuilder {
    /// Applies one chunk; chunks it does not know change nothing.
    pub(crate) fn apply(&mut self, chunk: &Value) {
        let Some(map) = chunk.as_object() else {
            return;
        };
        let text = |key: &str| map.get(key).and_then(Value::as_str).unwrap_or_default();
        let id = text("id").to_owned();
        match text("type") {
            "text-start" => {
                self.parts.push(HistoryPart::Text(String::new()));
                self.open_text.insert(id, self.parts.len() - 1);
            }
            "text-delta" => {
                let index = match self.open_text.get(&id) {
                    Some(index) => *index,
                    None => {
                        self.parts.push(HistoryPart::Text(String::new()));
                        self.open_text.insert(id, self.parts.len() - 1);
                        self.parts.len() - 1
                    }
                };
                // The runtime's text is in `textDelta`, the AI SDK's in `delta` (RU-4).
                let delta = map
                    .get("textDelta")
                    .and_then(Value::as_str)
                    .unwrap_or_else(|| text("delta"));
                if let Some(HistoryPart::Text(t)) = self.parts.get_mut(index) {
                    t.push_str(delta);
                }
            }
            "text-end" => {
                self.open_text.remove(&id);
            }
            "reasoning-start" => {
                self.parts.push(HistoryPart::Reasoning(String::new()));
                self.open_reasoning.insert(id, self.parts.len() - 1);
            }
            "reasoning-delta" => {
                let index = match self.open_reasoning.get(&id) {
                    Some(index) => *index,
                    None => {
                        self.parts.push(HistoryPart::Reasoning(String::new()));
                        self.open_reasoning.insert(id, self.parts.len() - 1);
                        self.parts.len() - 1
                    }
                };
                if let Some(HistoryPart::Reasoning(t)) = self.parts.get_mut(index) {
                    t.push_str(text("delta"));
                }
            }
            "reasoning-end" => {
                self.open_reasoning.remove(&id);
            }
            "tool-input-start" | "tool-input-available" => {
                let call = text("toolCallId").to_owned();
                let name = text("toolName").to_owned();
                let input = map.get("input").cloned();
                match self.tools.get(&call).and_then(|i| self.parts.get_mut(*i)) {
                    Some(HistoryPart::Tool {
                        name: n, input: i, ..
                    }) => {
                        if !name.is_empty() {
                            *n = name;
                        }
                        if let Some(input) = input {
                            *i = input;
                        }
                    }
                    _ => {
                        self.parts.push(HistoryPart::Tool {
                            id: call.clone(),
                            name,
                            input: input.unwrap_or_else(|| json!({})),
                            result: None,
                            is_error: false,
                        });
                        self.tools.insert(call, self.parts.len() - 1);
                    }
                }
            }
            // The runtime's call (RU-1): announced, its whole arguments in one delta, then
            // its result.
            "tool-call-start" => {
                let call = text("toolCallId").to_owned();
                self.parts.push(HistoryPart::Tool {
                    id: call.clone(),
                    name: text("toolName").to_owned(),
                    input: json!({}),
                    result: None,
                    is_error: false,
                });
                self.tools.insert(call, self.parts.len() - 1);
            }
            "tool-call-delta" => {
                let parsed = serde_json::from_str::<Value>(text("argsText"))
                    .ok()
                    .filter(Value::is_object);
                if let (Some(args), Some(HistoryPart::Tool { input, .. })) = (
                    parsed,
                    self.tools
                        .get(text("toolCallId"))
                        .and_then(|i| self.parts.get_mut(*i)),
                ) {
                    *input = args;
                }
            }
            "tool-result" => {
                let failed = map.get("isError").and_then(Value::as_bool) == Some(true);
                if let Some(HistoryPart::Tool {
                    result, is_error, ..
                }) = self
                    .tools
                    .get(text("toolCallId"))
                    .and_then(|i| self.parts.get_mut(*i))
                {
                    *is_error = failed;
                    *result = map.get("result").cloned();
                }
            }
            "tool-output-available" | "tool-output-error" => {
                let call = text("toolCallId");
                let failed = text("type") == "tool-output-error";
                if let Some(HistoryPart::Tool {
                    result, is_error, ..
                }) = self.tools.get(call).and_then(|i| self.parts.get_mut(*i))
                {
                    *is_error = failed;
                    *result = if failed {
                        Some(Value::String(text("errorText").to_owned()))
                    } else {
                        map.get("output").cloned()
                    };
                }
            }
            "error" if self.error.is_none() => {
                let message = ["errorText", "error", "message"]
                    .iter()
                    .find_map(|k| map.get(*k).and_then(Value::as_str))
                    .unwrap_or("The agent reported an error.");
                self.error = Some(message.to_owned());
            }
            _ => {}
        }
    }

    /// The `content` array (blank text and reasoning left out).
    pub(crate) fn content(&self) -> Vec<Value> {
        self.parts
            .iter()
            .filter_map(|part| match part {
                HistoryPart::Text(t) if !t.trim().is_empty() => {
                    Some(json!({"type": "text", "text": t}))
                }
                HistoryPart::Reasoning(t) if !t.trim().is_empty() => {
                    Some(json!({"type": "reasoning", "text": t}))
                }
                HistoryPart::Tool {
                    id,
                    name,
                    input,
                    result,
                    is_error,
                } => {
                    let mut part = json!({"type": "tool-call", "toolCallId": id, "toolName": name, "args": input, "isError": is_error});
                    if let (Some(result), Some(map)) = (result, part.as_object_mut()) {
                        map.insert("result".into(), result.clone());
                    }
                    Some(part)
                }
                HistoryPart::Text(_) | HistoryPart::Reasoning(_) => None,
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn iso_formats_known_instants() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso(1_790_928_900_123), "2026-10-02T08:15:00.123Z");
    }

    /// RU-53: the stand-in's texts for a turn it refuses before it starts.
    #[test]
    fn a_turn_is_refused_off_the_catalog_or_signed_out() {
        let mut catalog = crate::types::default_catalog();
        assert_eq!(turn_refusal(&catalog, "acme-cloud", "acme-large"), None);
        assert_eq!(
            turn_refusal(&catalog, "acme-cloud", "gone-model").as_deref(),
            Some("The model acme-cloud/gone-model is not in the platform's model catalog.")
        );
        assert_eq!(
            turn_refusal(&catalog, "nobody", "x").as_deref(),
            Some("The model nobody/x is not in the platform's model catalog.")
        );
        catalog["providers"][0]["authenticated"] = false.into();
        assert_eq!(
            turn_refusal(&catalog, "acme-cloud", "acme-large").as_deref(),
            Some("Sign in to Acme Cloud before you use Acme Large.")
        );
    }

    #[test]
    fn default_model_comes_from_the_catalog() {
        let catalog = crate::types::default_catalog();
        let (pick, thinking) = check_choice(&catalog, None, None, None).unwrap();
        assert_eq!(
            (pick.provider.as_str(), pick.model.as_str()),
            ("acme-cloud", "acme-large")
        );
        assert_eq!(thinking, "medium");
        assert!(check_choice(&catalog, Some("acme-cloud"), Some("nope"), Some("")).is_err());
        assert!(check_choice(&catalog, Some("team-models"), Some("tm-1"), Some("high")).is_ok());
        assert!(check_choice(&catalog, Some("team-models"), Some("tm-1"), Some("low")).is_err());
    }

    #[test]
    fn builder_collects_parts() {
        let mut b = AnswerBuilder::default();
        for chunk in [
            json!({"type": "reasoning-start", "id": "r"}),
            json!({"type": "reasoning-delta", "id": "r", "delta": "think"}),
            json!({"type": "tool-input-available", "toolCallId": "c1", "toolName": "sum", "input": {"a": 1}}),
            json!({"type": "tool-output-available", "toolCallId": "c1", "output": 3}),
            json!({"type": "text-start", "id": "t"}),
            json!({"type": "text-delta", "id": "t", "delta": "Hi "}),
            json!({"type": "text-delta", "id": "t", "delta": "there"}),
        ] {
            b.apply(&chunk);
        }
        let content = b.content();
        assert_eq!(content.len(), 3);
        assert_eq!(content[1]["result"], 3);
        assert_eq!(content[2]["text"], "Hi there");
    }
}

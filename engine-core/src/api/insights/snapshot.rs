//! RU-30: the insights snapshot a surface renders, normalized field by field from a P10 answer
//! as the reference does. Every field has one spelling (camelCase); either spelling of the
//! answer is read (the first one present wins, as the reference's reads); strings are trimmed
//! and blank reads as absent; a number is a JSON number or a string holding one; what does not
//! fit reads as absent (`null`), never as an error. The sections (`model`, `usage`, `context`,
//! `lastTurn`, `config`, `editable`) are `null` when the answer has none; `info` is `{}` then.
//! The sections are read from the answer's `insights` object when it is a non-empty object,
//! else from the answer itself; the rest from the answer's top level.

use litemap::LiteMap;

use serde::Serialize;
use serde_json::{Map, Number, Value};

/// The normalized insights of a session (`activeSessionDetail.insights`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InsightsSnapshot {
    /// `has_insights` when the answer gives a boolean, else whether it holds any section.
    pub has_insights: bool,
    /// `agent_session_uid` (or `agentSessionId`, `agent_session_id`).
    pub agent_session_id: Option<String>,
    /// `computed_at`.
    pub computed_at: Option<String>,
    /// `reason` (`turn_completed`, ...).
    pub reason: Option<String>,
    /// `updated_at`.
    pub updated_at: Option<String>,
    /// `harness` (`tau`, `pi`), when known.
    pub harness: Option<String>,
    /// `harness_protocol` (RU-31: checked against the harness when parsed).
    pub harness_protocol: Option<String>,
    /// `harness_version`; `""` for a known harness that gives none.
    pub harness_version: Option<String>,
    /// The harness's own fields: `tau`'s entries, or the checkpoint of `pi` (and of an answer
    /// without a harness).
    #[serde(flatten)]
    pub harness_fields: HarnessFields,
    /// The session's configuration, when given.
    pub config: Option<Box<InsightsConfig>>,
    /// Which configuration values a person may edit, when given.
    pub editable: Option<Box<Editable>>,
    /// Explanations keyed by topic (`{}` when none).
    #[serde(serialize_with = "crate::json::object")]
    pub info: LiteMap<String, InfoNode>,
    /// The context window's use, completed from `config` where the answer leaves gaps.
    pub context: Option<Box<InsightsContext>>,
    /// The last turn, when given.
    pub last_turn: Option<Box<LastTurn>>,
    /// The model, completed from `config.model` where the answer leaves gaps.
    pub model: Option<Box<InsightsModel>>,
    /// The session as the harness sees it (always present).
    pub session: InsightsSession,
    /// Message and token counts, when given.
    pub usage: Option<Box<Usage>>,
    /// The insights' format version (1 when not a number).
    pub version: Number,
}

/// The fields only one kind of harness gives.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum HarnessFields {
    /// `tau`: its session's entries.
    #[serde(rename_all = "camelCase")]
    Tau {
        /// `entry_count`.
        entry_count: Option<Number>,
        /// `last_sequence`.
        last_sequence: Option<Number>,
        /// `active_branch_entry_count`.
        active_branch_entry_count: Option<Number>,
        /// `entry_type_counts`, the entries that are numbers.
        #[serde(serialize_with = "crate::json::object")]
        entry_type_counts: LiteMap<String, Number>,
        /// `title`.
        title: Option<String>,
    },
    /// `pi` (and an answer without a harness): its checkpoint.
    #[serde(rename_all = "camelCase")]
    Checkpoint {
        /// `checkpoint_version`.
        checkpoint_version: Option<Number>,
        /// `bundle_hash`.
        bundle_hash: Option<String>,
        /// `flushed_at`.
        flushed_at: Option<String>,
    },
}

/// `session`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InsightsSession {
    /// `agentId`.
    pub agent_id: Option<Number>,
    /// Its `agentSessionId`, else the answer's.
    pub agent_session_id: Option<String>,
    /// `lastError`.
    pub last_error: Option<String>,
    /// `sessionId`.
    pub session_id: Option<String>,
    /// `startedAt`.
    pub started_at: Option<String>,
    /// `running`, `completed` or `error`; anything else reads `completed`.
    pub status: String,
    /// `threadId`.
    pub thread_id: Option<String>,
    /// Its `updatedAt`, else the answer's.
    pub updated_at: Option<String>,
}

/// `model`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InsightsModel {
    /// `contextWindow`.
    pub context_window: Option<Number>,
    /// `maxOutputTokens`.
    pub max_output_tokens: Option<Number>,
    /// `model`.
    pub model: Option<String>,
    /// `provider`.
    pub provider: Option<String>,
    /// `reasoningEffort`.
    pub reasoning_effort: Option<String>,
}

/// Token counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TokenTotals {
    /// `cacheRead`.
    pub cache_read: Option<Number>,
    /// `cacheWrite`.
    pub cache_write: Option<Number>,
    /// `input`.
    pub input: Option<Number>,
    /// `output`.
    pub output: Option<Number>,
    /// `total`.
    pub total: Option<Number>,
}

/// `usage`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Usage {
    /// `assistantMessages`.
    pub assistant_messages: Option<Number>,
    /// `assistantTurns`.
    pub assistant_turns: Option<Number>,
    /// `estimatedCostUsd`.
    pub estimated_cost_usd: Option<Number>,
    /// `tokens` (always present; its counts may be null).
    pub tokens: TokenTotals,
    /// `toolCalls`.
    pub tool_calls: Option<Number>,
    /// `toolResults`.
    pub tool_results: Option<Number>,
    /// `totalMessages`.
    pub total_messages: Option<Number>,
    /// `userMessages`.
    pub user_messages: Option<Number>,
}

/// `context`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InsightsContext {
    /// `compactionEnabled`, else `config.compaction.enabled`.
    pub compaction_enabled: Option<bool>,
    /// `compactionReserveTokens`, else `config.compaction.reserveTokens`.
    pub compaction_reserve_tokens: Option<Number>,
    /// `compactionThresholdPercent`, else `config.compaction.thresholdPercent`.
    pub compaction_threshold_percent: Option<Number>,
    /// `compactionThresholdTokens`, else `config.compaction.thresholdTokens`.
    pub compaction_threshold_tokens: Option<Number>,
    /// `contextWindow`, else `config.model.contextWindow`.
    pub context_window: Option<Number>,
    /// `latestCompaction`.
    pub latest_compaction: Option<String>,
    /// `percentOfContextWindow`.
    pub percent_of_context_window: Option<Number>,
    /// `source`.
    pub source: Option<String>,
    /// `status`.
    pub status: Option<String>,
    /// `tokens`.
    pub tokens: Option<Number>,
    /// `tokensRemainingBeforeCompaction`.
    pub tokens_remaining_before_compaction: Option<Number>,
    /// `tokensRemainingBeforeContextLimit`.
    pub tokens_remaining_before_context_limit: Option<Number>,
}

/// `lastTurn`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LastTurn {
    /// `completedAt`.
    pub completed_at: Option<String>,
    /// `errorMessage`.
    pub error_message: Option<String>,
    /// `finishReason`.
    pub finish_reason: Option<String>,
    /// `model` (`{model, provider}`, always present).
    pub model: TurnModel,
    /// `tokens` (always present).
    pub tokens: TokenTotals,
}

/// `lastTurn.model`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TurnModel {
    /// `model`.
    pub model: Option<String>,
    /// `provider`.
    pub provider: Option<String>,
}

/// `config`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InsightsConfig {
    /// `compaction`, when a non-empty object.
    pub compaction: Option<Compaction>,
    /// `model`, when a non-empty object.
    pub model: Option<InsightsModel>,
}

/// `config.compaction`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Compaction {
    /// `enabled`.
    pub enabled: Option<bool>,
    /// `reserveTokens`.
    pub reserve_tokens: Option<Number>,
    /// `thresholdPercent`.
    pub threshold_percent: Option<Number>,
    /// `thresholdTokens`.
    pub threshold_tokens: Option<Number>,
}

/// `editable`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Editable {
    /// `config`, when a non-empty object.
    pub config: Option<EditableConfig>,
}

/// `editable.config`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct EditableConfig {
    /// The compaction settings' fields, when a non-empty object.
    #[serde(serialize_with = "crate::json::option_object")]
    pub compaction: Option<LiteMap<&'static str, Option<EditableField>>>,
    /// The model settings' fields, when a non-empty object.
    #[serde(serialize_with = "crate::json::option_object")]
    pub model: Option<LiteMap<&'static str, Option<EditableField>>>,
}

/// One editable value: whether a person may change it, and its kind; `null` when the answer's
/// `type` is not `boolean`, `integer` or `number`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[non_exhaustive]
pub enum EditableField {
    /// A switch.
    Boolean {
        /// May be changed.
        editable: bool,
    },
    /// A whole number.
    Integer(NumberBounds),
    /// A number.
    Number(NumberBounds),
}

/// The bounds of an editable number.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct NumberBounds {
    /// May be changed.
    pub editable: bool,
    /// `min`.
    pub min: Option<Number>,
    /// `max`.
    pub max: Option<Number>,
    /// `step`.
    pub step: Option<Number>,
    /// `unit`.
    pub unit: Option<String>,
}

/// One topic of `info`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct InfoNode {
    /// `label`.
    pub label: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `source`: the documents it comes from (entries of another kind are left out).
    pub source: Vec<InfoSource>,
    /// Sub-topics.
    #[serde(serialize_with = "crate::json::object")]
    pub children: LiteMap<String, InfoNode>,
}

/// Where an `info` topic comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct InfoSource {
    /// `astro_doc` or `pi_doc`.
    pub kind: String,
    /// `astro`, `pi-coding-agent` or `pi-ai`, else `null`.
    pub package: Option<String>,
    /// `path`.
    pub path: Option<String>,
    /// `section`.
    pub section: Option<String>,
}

/// The value at the first of `keys` present (a `null` counts as present, as the reference
/// reads).
fn read<'a>(map: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|key| map.get(*key))
}

/// An object's entries, or none.
fn object(value: Option<&Value>) -> Option<&Map<String, Value>> {
    value.and_then(Value::as_object)
}

/// A non-empty object, or `None`.
fn section(value: Option<&Value>) -> Option<&Map<String, Value>> {
    object(value).filter(|m| !m.is_empty())
}

fn text(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
}

fn text_at(map: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    text(read(map, keys))
}

/// A JSON number, or a string holding a finite one (`"7"`, `"0.5"`).
fn number(value: Option<&Value>) -> Option<Number> {
    match value? {
        Value::Number(n) => Some(n.clone()),
        Value::String(s) => {
            let s = s.trim();
            if let Ok(n) = s.parse::<i64>() {
                Some(n.into())
            } else {
                s.parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .and_then(Number::from_f64)
            }
        }
        _ => None,
    }
}

fn number_at(map: &Map<String, Value>, keys: &[&str]) -> Option<Number> {
    number(read(map, keys))
}

fn boolean(value: Option<&Value>) -> Option<bool> {
    value.and_then(Value::as_bool)
}

/// JavaScript's truthiness of a value (the reference's `Boolean(editable)`).
fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_) | Value::Object(_)) => true,
    }
}

fn tokens(value: Option<&Value>) -> TokenTotals {
    let empty = Map::new();
    let m = object(value).unwrap_or(&empty);
    TokenTotals {
        cache_read: number_at(m, &["cacheRead", "cache_read"]),
        cache_write: number_at(m, &["cacheWrite", "cache_write"]),
        input: number_at(m, &["input"]),
        output: number_at(m, &["output"]),
        total: number_at(m, &["total"]),
    }
}

fn model(m: &Map<String, Value>) -> InsightsModel {
    InsightsModel {
        context_window: number_at(m, &["contextWindow", "context_window"]),
        max_output_tokens: number_at(m, &["maxOutputTokens", "max_output_tokens"]),
        model: text_at(m, &["model"]),
        provider: text_at(m, &["provider"]),
        reasoning_effort: text_at(m, &["reasoningEffort", "reasoning_effort"]),
    }
}

fn usage(m: &Map<String, Value>) -> Usage {
    Usage {
        assistant_messages: number_at(m, &["assistantMessages", "assistant_messages"]),
        assistant_turns: number_at(m, &["assistantTurns", "assistant_turns"]),
        estimated_cost_usd: number_at(m, &["estimatedCostUsd", "estimated_cost_usd"]),
        tokens: tokens(read(m, &["tokens"])),
        tool_calls: number_at(m, &["toolCalls", "tool_calls"]),
        tool_results: number_at(m, &["toolResults", "tool_results"]),
        total_messages: number_at(m, &["totalMessages", "total_messages"]),
        user_messages: number_at(m, &["userMessages", "user_messages"]),
    }
}

fn context(m: &Map<String, Value>) -> InsightsContext {
    InsightsContext {
        compaction_enabled: boolean(read(m, &["compactionEnabled", "compaction_enabled"])),
        compaction_reserve_tokens: number_at(
            m,
            &["compactionReserveTokens", "compaction_reserve_tokens"],
        ),
        compaction_threshold_percent: number_at(
            m,
            &["compactionThresholdPercent", "compaction_threshold_percent"],
        ),
        compaction_threshold_tokens: number_at(
            m,
            &["compactionThresholdTokens", "compaction_threshold_tokens"],
        ),
        context_window: number_at(m, &["contextWindow", "context_window"]),
        latest_compaction: text_at(m, &["latestCompaction", "latest_compaction"]),
        percent_of_context_window: number_at(
            m,
            &["percentOfContextWindow", "percent_of_context_window"],
        ),
        source: text_at(m, &["source"]),
        status: text_at(m, &["status"]),
        tokens: number_at(m, &["tokens"]),
        tokens_remaining_before_compaction: number_at(
            m,
            &[
                "tokensRemainingBeforeCompaction",
                "tokens_remaining_before_compaction",
            ],
        ),
        tokens_remaining_before_context_limit: number_at(
            m,
            &[
                "tokensRemainingBeforeContextLimit",
                "tokens_remaining_before_context_limit",
            ],
        ),
    }
}

fn config(m: &Map<String, Value>) -> InsightsConfig {
    InsightsConfig {
        compaction: section(read(m, &["compaction"])).map(|c| Compaction {
            enabled: boolean(read(c, &["enabled"])),
            reserve_tokens: number_at(c, &["reserveTokens", "reserve_tokens"]),
            threshold_percent: number_at(c, &["thresholdPercent", "threshold_percent"]),
            threshold_tokens: number_at(c, &["thresholdTokens", "threshold_tokens"]),
        }),
        model: section(read(m, &["model"])).map(model),
    }
}

fn editable_field(value: Option<&Value>) -> Option<EditableField> {
    let m = section(value)?;
    let editable = truthy(m.get("editable"));
    let bounds = || NumberBounds {
        editable,
        min: number(m.get("min")),
        max: number(m.get("max")),
        step: number(m.get("step")),
        unit: text(m.get("unit")),
    };
    match m.get("type").and_then(Value::as_str)? {
        "boolean" => Some(EditableField::Boolean { editable }),
        "integer" => Some(EditableField::Integer(bounds())),
        "number" => Some(EditableField::Number(bounds())),
        _ => None,
    }
}

/// The editable fields of one settings group: each name with its alternative spelling.
fn editable_group(
    value: Option<&Value>,
    fields: &[(&'static str, &'static str)],
) -> Option<LiteMap<&'static str, Option<EditableField>>> {
    let m = section(value)?;
    Some(
        fields
            .iter()
            .map(|(name, alias)| (*name, editable_field(read(m, &[name, alias]))))
            .collect(),
    )
}

fn editable(m: &Map<String, Value>) -> Editable {
    Editable {
        config: section(read(m, &["config"])).map(|c| EditableConfig {
            compaction: editable_group(
                read(c, &["compaction"]),
                &[
                    ("enabled", "enabled"),
                    ("reserveTokens", "reserve_tokens"),
                    ("thresholdPercent", "threshold_percent"),
                    ("thresholdTokens", "threshold_tokens"),
                ],
            ),
            model: editable_group(
                read(c, &["model"]),
                &[
                    ("contextWindow", "context_window"),
                    ("maxOutputTokens", "max_output_tokens"),
                    ("model", "model"),
                    ("provider", "provider"),
                    ("reasoningEffort", "reasoning_effort"),
                ],
            ),
        }),
    }
}

fn info_source(value: &Value) -> Option<InfoSource> {
    let m = value.as_object()?;
    let kind = m.get("kind").and_then(Value::as_str)?;
    if !matches!(kind, "astro_doc" | "pi_doc") {
        return None;
    }
    let package = m
        .get("package")
        .and_then(Value::as_str)
        .filter(|p| matches!(*p, "astro" | "pi-coding-agent" | "pi-ai"));
    Some(InfoSource {
        kind: kind.to_owned(),
        package: package.map(str::to_owned),
        path: text(m.get("path")),
        section: text(m.get("section")),
    })
}

fn info_node(value: &Value) -> Option<InfoNode> {
    let m = value.as_object()?;
    Some(InfoNode {
        label: text(m.get("label")),
        description: text(m.get("description")),
        source: m
            .get("source")
            .and_then(Value::as_array)
            .map(|s| s.iter().filter_map(info_source).collect())
            .unwrap_or_default(),
        children: info_tree(m.get("children")),
    })
}

fn info_tree(value: Option<&Value>) -> LiteMap<String, InfoNode> {
    object(value)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| info_node(v).map(|n| (k.clone(), n)))
                .collect()
        })
        .unwrap_or_default()
}

fn last_turn(m: &Map<String, Value>) -> LastTurn {
    let empty = Map::new();
    let turn_model = object(read(m, &["model"])).unwrap_or(&empty);
    LastTurn {
        completed_at: text_at(m, &["completedAt", "completed_at"]),
        error_message: text_at(m, &["errorMessage", "error_message"]),
        finish_reason: text_at(m, &["finishReason", "finish_reason"]),
        model: TurnModel {
            model: text_at(turn_model, &["model"]),
            provider: text_at(turn_model, &["provider"]),
        },
        tokens: tokens(read(m, &["tokens"])),
    }
}

fn session(
    value: Option<&Value>,
    agent_session_id: Option<&String>,
    updated_at: Option<&String>,
) -> InsightsSession {
    let empty = Map::new();
    let m = object(value).unwrap_or(&empty);
    let status = read(m, &["status"])
        .and_then(Value::as_str)
        .filter(|s| matches!(*s, "running" | "completed" | "error"))
        .unwrap_or("completed");
    InsightsSession {
        agent_id: number_at(m, &["agentId", "agent_id"]),
        agent_session_id: text_at(
            m,
            &["agentSessionId", "agent_session_id", "agent_session_uid"],
        )
        .or_else(|| agent_session_id.cloned()),
        last_error: text_at(m, &["lastError", "last_error"]),
        session_id: text_at(m, &["sessionId", "session_id"]),
        started_at: text_at(m, &["startedAt", "started_at"]),
        status: status.to_owned(),
        thread_id: text_at(m, &["threadId", "thread_id"]),
        updated_at: text_at(m, &["updatedAt", "updated_at"]).or_else(|| updated_at.cloned()),
    }
}

/// The model, completed from `config.model`.
fn merged_model(
    own: Option<InsightsModel>,
    config: Option<&InsightsModel>,
) -> Option<InsightsModel> {
    if own.is_none() && config.is_none() {
        return None;
    }
    let own = own.as_ref();
    let pick_n = |f: fn(&InsightsModel) -> &Option<Number>| {
        own.and_then(|m| f(m).clone())
            .or_else(|| config.and_then(|c| f(c).clone()))
    };
    let pick_s = |f: fn(&InsightsModel) -> &Option<String>| {
        own.and_then(|m| f(m).clone())
            .or_else(|| config.and_then(|c| f(c).clone()))
    };
    Some(InsightsModel {
        context_window: pick_n(|m| &m.context_window),
        max_output_tokens: pick_n(|m| &m.max_output_tokens),
        model: pick_s(|m| &m.model),
        provider: pick_s(|m| &m.provider),
        reasoning_effort: pick_s(|m| &m.reasoning_effort),
    })
}

/// The context, completed from `config`.
fn merged_context(
    own: Option<InsightsContext>,
    config: Option<&InsightsConfig>,
) -> Option<InsightsContext> {
    let compaction = config.and_then(|c| c.compaction.as_ref());
    let config_model = config.and_then(|c| c.model.as_ref());
    if own.is_none() && compaction.is_none() && config_model.is_none() {
        return None;
    }
    let mut context = own.unwrap_or(InsightsContext {
        compaction_enabled: None,
        compaction_reserve_tokens: None,
        compaction_threshold_percent: None,
        compaction_threshold_tokens: None,
        context_window: None,
        latest_compaction: None,
        percent_of_context_window: None,
        source: None,
        status: None,
        tokens: None,
        tokens_remaining_before_compaction: None,
        tokens_remaining_before_context_limit: None,
    });
    if let Some(c) = compaction {
        context.compaction_enabled = context.compaction_enabled.or(c.enabled);
        context.compaction_reserve_tokens = context
            .compaction_reserve_tokens
            .or_else(|| c.reserve_tokens.clone());
        context.compaction_threshold_percent = context
            .compaction_threshold_percent
            .or_else(|| c.threshold_percent.clone());
        context.compaction_threshold_tokens = context
            .compaction_threshold_tokens
            .or_else(|| c.threshold_tokens.clone());
    }
    if let Some(m) = config_model {
        context.context_window = context.context_window.or_else(|| m.context_window.clone());
    }
    Some(context)
}

/// RU-30's `hasInsights`: the answer's boolean, else whether it holds any section.
pub(super) fn has_insights(root: &Map<String, Value>) -> bool {
    boolean(read(root, &["hasInsights", "has_insights"])).unwrap_or_else(|| {
        let candidate = section(read(root, &["insights"])).unwrap_or(root);
        ["config", "editable", "model", "context", "usage"]
            .iter()
            .any(|key| section(read(candidate, &[key])).is_some())
            || section(read(candidate, &["lastTurn", "last_turn"])).is_some()
            || !info_tree(read(candidate, &["info"])).is_empty()
    })
}

/// RU-30: the snapshot of an insights answer (a JSON object). `harness` and `protocol` are the
/// answer's, already checked (RU-31).
pub(super) fn normalize(
    root: &Map<String, Value>,
    harness: Option<&str>,
    protocol: Option<String>,
) -> InsightsSnapshot {
    let candidate = section(read(root, &["insights"])).unwrap_or(root);
    let config = section(read(candidate, &["config"])).map(config);
    let editable = section(read(candidate, &["editable"])).map(editable);
    let own_model = section(read(candidate, &["model"])).map(model);
    let own_context = section(read(candidate, &["context"])).map(context);
    let info = info_tree(read(candidate, &["info"]));
    let last_turn = section(read(candidate, &["lastTurn", "last_turn"])).map(last_turn);
    let usage = section(read(candidate, &["usage"])).map(usage);
    let has_insights = has_insights(root);
    let agent_session_id = text_at(
        root,
        &["agentSessionId", "agent_session_id", "agent_session_uid"],
    );
    let updated_at = text_at(root, &["updatedAt", "updated_at"]);
    let version_text = read(root, &["harnessVersion", "harness_version"])
        .and_then(Value::as_str)
        .map(|v| v.trim().to_owned());
    let known = matches!(harness, Some("tau" | "pi"));
    let harness_version = if known {
        Some(version_text.unwrap_or_default())
    } else {
        version_text
    };
    let harness_fields = if harness == Some("tau") {
        HarnessFields::Tau {
            entry_count: number_at(root, &["entryCount", "entry_count"]),
            last_sequence: number_at(root, &["lastSequence", "last_sequence"]),
            active_branch_entry_count: number_at(
                root,
                &["activeBranchEntryCount", "active_branch_entry_count"],
            ),
            entry_type_counts: object(read(root, &["entryTypeCounts", "entry_type_counts"]))
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| number(Some(v)).map(|n| (k.clone(), n)))
                        .collect()
                })
                .unwrap_or_default(),
            title: text_at(root, &["title"]),
        }
    } else {
        HarnessFields::Checkpoint {
            checkpoint_version: number_at(root, &["checkpointVersion", "checkpoint_version"]),
            bundle_hash: text_at(root, &["bundleHash", "bundle_hash"]),
            flushed_at: text_at(root, &["flushedAt", "flushed_at"]),
        }
    };
    let version = match read(candidate, &["version"]) {
        Some(Value::Number(n)) => n.clone(),
        _ => Number::from(1),
    };
    InsightsSnapshot {
        has_insights,
        session: session(
            read(candidate, &["session"]),
            agent_session_id.as_ref(),
            updated_at.as_ref(),
        ),
        agent_session_id,
        computed_at: text_at(root, &["computedAt", "computed_at"]),
        reason: text_at(root, &["reason"]),
        updated_at,
        harness: harness.map(str::to_owned),
        harness_protocol: protocol,
        harness_version,
        harness_fields,
        context: merged_context(own_context, config.as_ref()).map(Box::new),
        model: merged_model(own_model, config.as_ref().and_then(|c| c.model.as_ref()))
            .map(Box::new),
        config: config.map(Box::new),
        editable: editable.map(Box::new),
        info,
        last_turn: last_turn.map(Box::new),
        usage: usage.map(Box::new),
        version,
    }
}

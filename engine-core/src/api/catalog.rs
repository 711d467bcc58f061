//! The model-provider catalog (`platform-api.md` P12): strict parsing, the picker projection,
//! and the pure choices every picker shares (`rules.md` CAT, MOD-6, MOD-19, OI-22, OI-29).
//!
//! Everything here is a pure function of its arguments: the catalog store (freshness, retries,
//! one request per person) lives elsewhere.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use super::ApiError;
use super::error::parse_json;

/// The most providers a catalog may list; more fails the read as hostile.
pub const MAX_PROVIDERS: usize = 200;
/// The most models a catalog may list, all providers together; more fails the read.
pub const MAX_MODELS: usize = 2000;
/// The longest string the catalog may hold anywhere (ids, names, list items), in UTF-8 bytes.
pub const MAX_STRING_BYTES: usize = 1024;
/// The most items of a provider's `auth_methods` and of a model's `input`.
pub const MAX_LIST_ITEMS: usize = 32;
/// The most entries of a provider's `configured_credentials`.
pub const MAX_CREDENTIALS: usize = 200;

/// The start of every message of an invalid catalog.
const INVALID_PREFIX: &str = "The platform's list of models was invalid: ";
/// The message of a catalog without `providers`.
const NO_PROVIDERS: &str = "The platform's list of models did not contain providers.";

/// The only `schema_version` this client reads.
const SCHEMA_VERSION: u64 = 1;
/// The prefix of `catalog_digest`.
const DIGEST_PREFIX: &str = "sha256:";
/// The number of lowercase hex digits after [`DIGEST_PREFIX`].
const DIGEST_HEX_DIGITS: usize = 64;

/// The title of the notice for a stored model the catalog lacks (CAT-14).
const MISSING_MODEL_TITLE: &str = "Session model is not available";
/// The closing sentence of that notice's description.
const MISSING_MODEL_TAIL: &str = "Using the first available model from the picker instead.";

/// The P12 answer, validated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Catalog {
    /// `catalog_digest`: `sha256:` and 64 lowercase hex digits.
    pub catalog_digest: String,
    /// `providers`, in the platform's order.
    pub providers: Vec<CatalogProvider>,
}

/// One `providers[]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CatalogProvider {
    /// Provider id, the value stored in `llm_provider`; never empty.
    pub provider: String,
    /// `display_name`.
    pub display_name: String,
    /// `auth_methods`; non-empty means sign-in is required.
    pub auth_methods: Vec<String>,
    /// `sign_in_available`.
    pub sign_in_available: bool,
    /// `known`: false for Organization custom providers.
    pub known: bool,
    /// `enabled`: disabled providers and their models are hidden from pickers.
    pub enabled: bool,
    /// `authenticated`.
    pub authenticated: bool,
    /// `credential_status`.
    pub credential_status: CredentialStatus,
    /// `default_model`.
    pub default_model: String,
    /// `configured_credentials` (newest platforms only); `None` when absent or `null`.
    pub configured_credentials: Option<Vec<ConfiguredCredential>>,
    /// `models`, in the platform's order.
    pub models: Vec<CatalogModel>,
}

impl CatalogProvider {
    /// Whether the provider requires a sign-in it lacks: `auth_methods` is non-empty and
    /// `authenticated` is false.
    pub fn needs_sign_in(&self) -> bool {
        !self.auth_methods.is_empty() && !self.authenticated
    }
}

/// `providers[].credential_status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum CredentialStatus {
    /// `active`.
    Active,
    /// `revoked`.
    Revoked,
    /// `missing`.
    Missing,
}

impl CredentialStatus {
    /// Reads the wire value (exact, lower case).
    fn from_wire(text: &str) -> Option<CredentialStatus> {
        match text {
            "active" => Some(CredentialStatus::Active),
            "revoked" => Some(CredentialStatus::Revoked),
            "missing" => Some(CredentialStatus::Missing),
            _ => None,
        }
    }
}

/// One `providers[].configured_credentials[]` entry. Every key must be present; the table gives
/// no types, so `uid` and `status` must be strings, `authenticated` a boolean, and the three
/// owner ids strings or `null`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ConfiguredCredential {
    /// `uid`.
    pub uid: String,
    /// `custom_id`.
    pub custom_id: Option<String>,
    /// `user_uid`.
    pub user_uid: Option<String>,
    /// `organization_environment_uid`.
    pub organization_environment_uid: Option<String>,
    /// `status`.
    pub status: String,
    /// `authenticated`.
    pub authenticated: bool,
}

/// One `providers[].models[]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CatalogModel {
    /// The value stored in `llm_model`; never empty.
    pub model: String,
    /// `display_name`.
    pub display_name: String,
    /// `api`, e.g. `openai-responses`.
    pub api: String,
    /// `input`, e.g. `["text", "image"]`.
    pub input: Vec<String>,
    /// `reasoning`; true whenever `thinking_levels` is non-empty.
    pub reasoning: bool,
    /// `thinking_levels`, in the platform's order, without repeats.
    pub thinking_levels: Vec<ThinkingLevel>,
    /// `context_window`, a JSON number kept as sent, or `None` for `null`.
    pub context_window: Option<Number>,
    /// `max_tokens`, a JSON number kept as sent, or `None` for `null`.
    pub max_tokens: Option<Number>,
}

impl CatalogModel {
    /// The default level (P12 projection): `medium` when offered, else the first level, else
    /// none.
    pub fn default_thinking(&self) -> Option<ThinkingLevel> {
        if self.thinking_levels.contains(&ThinkingLevel::Medium) {
            Some(ThinkingLevel::Medium)
        } else {
            self.thinking_levels.first().copied()
        }
    }
}

/// A thinking (reasoning effort) level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ThinkingLevel {
    /// `off`.
    Off,
    /// `on`.
    On,
    /// `minimal`.
    Minimal,
    /// `low`.
    Low,
    /// `medium`.
    Medium,
    /// `high`.
    High,
    /// `xhigh`.
    Xhigh,
    /// `max`.
    Max,
}

impl ThinkingLevel {
    /// Every level, in the order the specification lists them.
    pub const ALL: [ThinkingLevel; 8] = [
        ThinkingLevel::Off,
        ThinkingLevel::On,
        ThinkingLevel::Minimal,
        ThinkingLevel::Low,
        ThinkingLevel::Medium,
        ThinkingLevel::High,
        ThinkingLevel::Xhigh,
        ThinkingLevel::Max,
    ];

    /// The wire value (`llm_thinking`, `thinking_levels`).
    pub fn as_str(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::On => "on",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
            ThinkingLevel::Xhigh => "xhigh",
            ThinkingLevel::Max => "max",
        }
    }

    /// The picker label: the wire value in title case ("Xhigh" included).
    pub fn label(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "Off",
            ThinkingLevel::On => "On",
            ThinkingLevel::Minimal => "Minimal",
            ThinkingLevel::Low => "Low",
            ThinkingLevel::Medium => "Medium",
            ThinkingLevel::High => "High",
            ThinkingLevel::Xhigh => "Xhigh",
            ThinkingLevel::Max => "Max",
        }
    }

    /// Reads a wire value exactly (lower case, no spaces), as the strict parse does.
    pub fn from_wire(text: &str) -> Option<ThinkingLevel> {
        ThinkingLevel::ALL
            .into_iter()
            .find(|level| level.as_str() == text)
    }

    /// Reads a level a picker or a session holds: trimmed, any letter case. Blank is none.
    fn from_loose(text: &str) -> Option<ThinkingLevel> {
        ThinkingLevel::from_wire(&text.trim().to_ascii_lowercase())
    }
}

impl fmt::Display for ThinkingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A provider choice of the picker projection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProviderOption {
    /// `display_name`.
    pub label: String,
    /// The provider id.
    pub value: String,
}

/// A reasoning-effort choice of a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EffortOption {
    /// The level in title case.
    pub label: String,
    /// The wire value.
    pub value: String,
}

/// A model choice of the picker projection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelOption {
    /// `"{provider}::{model}"`.
    pub id: String,
    /// The provider id.
    pub provider: String,
    /// The model id.
    pub model: String,
    /// The model's `display_name`.
    pub label: String,
    /// Whether the model can be chosen: its provider is enabled (sign-in does not matter).
    pub selectable: bool,
    /// Whether its provider requires a sign-in it lacks.
    pub needs_sign_in: bool,
    /// The model's `thinking_levels` as choices.
    pub reasoning_options: Vec<EffortOption>,
    /// The default level: `medium` when offered, else the first, else none.
    pub default_reasoning: Option<String>,
}

impl Catalog {
    /// The providers a picker offers: the enabled ones, in catalog order.
    pub fn provider_options(&self) -> Vec<ProviderOption> {
        self.enabled_providers()
            .map(|provider| ProviderOption {
                label: provider.display_name.clone(),
                value: provider.provider.clone(),
            })
            .collect()
    }

    /// The models a picker offers: those of enabled providers, in catalog order.
    pub fn model_options(&self) -> Vec<ModelOption> {
        self.enabled_providers()
            .flat_map(|provider| {
                provider
                    .models
                    .iter()
                    .map(move |model| model_option(provider, model))
            })
            .collect()
    }

    /// The enabled providers, in catalog order.
    fn enabled_providers(&self) -> impl Iterator<Item = &CatalogProvider> + Clone {
        self.providers.iter().filter(|provider| provider.enabled)
    }
}

/// The projection of one model of `provider`.
fn model_option(provider: &CatalogProvider, model: &CatalogModel) -> ModelOption {
    ModelOption {
        id: format!("{}::{}", provider.provider, model.model),
        provider: provider.provider.clone(),
        model: model.model.clone(),
        label: model.display_name.clone(),
        selectable: provider.enabled,
        needs_sign_in: provider.needs_sign_in(),
        reasoning_options: model
            .thinking_levels
            .iter()
            .map(|level| EffortOption {
                label: level.label().to_owned(),
                value: level.as_str().to_owned(),
            })
            .collect(),
        default_reasoning: model
            .default_thinking()
            .map(|level| level.as_str().to_owned()),
    }
}

/// A provider, model and thinking level chosen for a session (the "choose a model" state, MOD-6,
/// MOD-10, MOD-11).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelChoice {
    /// The provider id (`llm_provider`).
    pub provider: String,
    /// The model id (`llm_model`).
    pub model: String,
    /// The thinking level (`llm_thinking`), none when the model offers no level.
    pub thinking: Option<String>,
}

/// What [`resolve_selection`] settles on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Resolved {
    /// The provider id, none when the catalog offers no model.
    pub provider: Option<String>,
    /// The model id, none when the catalog offers no model.
    pub model: Option<String>,
    /// The thinking level, none when the model offers no level.
    pub thinking: Option<String>,
    /// A model was asked for and the catalog offers no such selectable model, so another one
    /// (or none) was taken (CAT-13, CAT-14).
    pub model_missing: bool,
}

/// Parses and validates a P12 answer strictly (`platform-api.md` P12).
///
/// Every field of the table must be present with its type; unknown fields are ignored. Beyond
/// the table, the read also fails on an empty provider or model id, a repeated provider id, a
/// repeated model id within one provider, a repeated thinking level, and on hostile sizes (see
/// [`MAX_PROVIDERS`], [`MAX_MODELS`], [`MAX_STRING_BYTES`], [`MAX_LIST_ITEMS`],
/// [`MAX_CREDENTIALS`]). A failure is [`ApiError::Malformed`] with "The platform's list of models
/// was invalid: {what}." naming the field by its path (`providers[1].models[0].reasoning`), or
/// "The platform's list of models did not contain providers." when `providers` is absent or
/// `null`. Values are never quoted into messages.
pub fn parse_catalog(body: &[u8]) -> Result<Catalog, ApiError> {
    let value = parse_json(body).ok_or_else(|| invalid("the answer is not valid JSON"))?;
    let Value::Object(root) = value else {
        return Err(invalid("the answer is not a JSON object"));
    };
    match root.get("schema_version") {
        None => return Err(invalid("schema_version is missing")),
        Some(Value::Number(n)) if n.as_u64() == Some(SCHEMA_VERSION) => {}
        Some(_) => return Err(invalid("schema_version must be the number 1")),
    }
    let catalog_digest = string(&root, "", "catalog_digest")?;
    if !is_digest(&catalog_digest) {
        return Err(invalid(
            "catalog_digest must be \"sha256:\" followed by 64 lowercase hex digits",
        ));
    }
    let items = match root.get("providers") {
        None | Some(Value::Null) => {
            return Err(ApiError::Malformed {
                message: NO_PROVIDERS.to_owned(),
            });
        }
        Some(Value::Array(items)) => items,
        Some(_) => return Err(invalid("providers must be a list")),
    };
    if items.len() > MAX_PROVIDERS {
        return Err(invalid(format_args!(
            "providers has more than {MAX_PROVIDERS} entries"
        )));
    }
    let mut providers = Vec::with_capacity(items.len());
    let mut first_index: HashMap<&str, usize> = HashMap::new();
    let mut model_count = 0_usize;
    for (index, item) in items.iter().enumerate() {
        let path = format!("providers[{index}]");
        let provider = parse_provider(item, &path, &mut model_count)?;
        if let Some(first) = first_index.insert(wire_id(item, "provider"), index) {
            return Err(invalid(format_args!(
                "{path}.provider repeats the id of providers[{first}]"
            )));
        }
        providers.push(provider);
    }
    Ok(Catalog {
        catalog_digest,
        providers,
    })
}

/// Validates one `providers[]` entry at `path`, counting its models into `model_count`.
fn parse_provider(
    value: &Value,
    path: &str,
    model_count: &mut usize,
) -> Result<CatalogProvider, ApiError> {
    let map = object(value, path)?;
    let provider = id(map, path, "provider")?;
    let display_name = string(map, path, "display_name")?;
    let auth_methods = string_list(map, path, "auth_methods")?;
    let sign_in_available = boolean(map, path, "sign_in_available")?;
    let known = boolean(map, path, "known")?;
    let enabled = boolean(map, path, "enabled")?;
    let authenticated = boolean(map, path, "authenticated")?;
    let status_path = join(path, "credential_status");
    let credential_status = CredentialStatus::from_wire(&string(map, path, "credential_status")?)
        .ok_or_else(|| {
        invalid(format_args!(
            "{status_path} must be one of active, revoked, missing"
        ))
    })?;
    let default_model = string(map, path, "default_model")?;
    let configured_credentials = match map.get("configured_credentials") {
        None | Some(Value::Null) => None,
        Some(value) => Some(parse_credentials(
            value,
            &join(path, "configured_credentials"),
        )?),
    };
    let models_path = join(path, "models");
    let items = list(map, path, "models")?;
    *model_count = model_count.saturating_add(items.len());
    if *model_count > MAX_MODELS {
        return Err(invalid(format_args!(
            "{models_path} brings the catalog above {MAX_MODELS} models in all"
        )));
    }
    let mut models = Vec::with_capacity(items.len());
    let mut first_index: HashMap<&str, usize> = HashMap::new();
    for (index, item) in items.iter().enumerate() {
        let model_path = format!("{models_path}[{index}]");
        let model = parse_model(item, &model_path)?;
        if let Some(first) = first_index.insert(wire_id(item, "model"), index) {
            return Err(invalid(format_args!(
                "{model_path}.model repeats the id of {models_path}[{first}]"
            )));
        }
        models.push(model);
    }
    Ok(CatalogProvider {
        provider,
        display_name,
        auth_methods,
        sign_in_available,
        known,
        enabled,
        authenticated,
        credential_status,
        default_model,
        configured_credentials,
        models,
    })
}

/// Validates `configured_credentials` at `path`: a list of objects with every key present.
fn parse_credentials(value: &Value, path: &str) -> Result<Vec<ConfiguredCredential>, ApiError> {
    let Value::Array(items) = value else {
        return Err(invalid(format_args!("{path} must be a list")));
    };
    if items.len() > MAX_CREDENTIALS {
        return Err(invalid(format_args!(
            "{path} has more than {MAX_CREDENTIALS} entries"
        )));
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let path = format!("{path}[{index}]");
            let map = object(item, &path)?;
            Ok(ConfiguredCredential {
                uid: string(map, &path, "uid")?,
                custom_id: nullable_string(map, &path, "custom_id")?,
                user_uid: nullable_string(map, &path, "user_uid")?,
                organization_environment_uid: nullable_string(
                    map,
                    &path,
                    "organization_environment_uid",
                )?,
                status: string(map, &path, "status")?,
                authenticated: boolean(map, &path, "authenticated")?,
            })
        })
        .collect()
}

/// Validates one `models[]` entry at `path`.
fn parse_model(value: &Value, path: &str) -> Result<CatalogModel, ApiError> {
    let map = object(value, path)?;
    let model = id(map, path, "model")?;
    let display_name = string(map, path, "display_name")?;
    let api = string(map, path, "api")?;
    let input = string_list(map, path, "input")?;
    let reasoning = boolean(map, path, "reasoning")?;
    let levels_path = join(path, "thinking_levels");
    let items = list(map, path, "thinking_levels")?;
    let mut thinking_levels: Vec<ThinkingLevel> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let level = item
            .as_str()
            .and_then(ThinkingLevel::from_wire)
            .ok_or_else(|| {
                invalid(format_args!(
                    "{levels_path}[{index}] must be one of off, on, minimal, low, medium, high, xhigh, max"
                ))
            })?;
        if thinking_levels.contains(&level) {
            return Err(invalid(format_args!(
                "{levels_path}[{index}] repeats an earlier level"
            )));
        }
        thinking_levels.push(level);
    }
    if !reasoning && !thinking_levels.is_empty() {
        return Err(invalid(format_args!(
            "{path}.reasoning is false while thinking_levels is not empty"
        )));
    }
    Ok(CatalogModel {
        model,
        display_name,
        api,
        input,
        reasoning,
        thinking_levels,
        context_window: nullable_number(map, path, "context_window")?,
        max_tokens: nullable_number(map, path, "max_tokens")?,
    })
}

/// The id at `key` of an entry already validated (so it is a string), borrowed from the body.
fn wire_id<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The failure "The platform's list of models was invalid: {what}.".
fn invalid(what: impl fmt::Display) -> ApiError {
    ApiError::Malformed {
        message: format!("{INVALID_PREFIX}{what}."),
    }
}

/// `path.key`, or `key` at the top.
fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Whether `text` is `sha256:` followed by 64 lowercase hex digits.
fn is_digest(text: &str) -> bool {
    text.strip_prefix(DIGEST_PREFIX).is_some_and(|hex| {
        hex.len() == DIGEST_HEX_DIGITS
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// The object `value` at `path`.
fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, ApiError> {
    value
        .as_object()
        .ok_or_else(|| invalid(format_args!("{path} must be an object")))
}

/// The value at `key`, which must be present.
fn field<'a>(map: &'a Map<String, Value>, path: &str, key: &str) -> Result<&'a Value, ApiError> {
    map.get(key)
        .ok_or_else(|| invalid(format_args!("{} is missing", join(path, key))))
}

/// A string of at most [`MAX_STRING_BYTES`] bytes, at `field_path`.
fn checked_string(value: &Value, field_path: &str) -> Result<String, ApiError> {
    let Value::String(text) = value else {
        return Err(invalid(format_args!("{field_path} must be a string")));
    };
    if text.len() > MAX_STRING_BYTES {
        return Err(invalid(format_args!(
            "{field_path} is longer than {MAX_STRING_BYTES} bytes"
        )));
    }
    Ok(text.clone())
}

/// The required string at `key`.
fn string(map: &Map<String, Value>, path: &str, key: &str) -> Result<String, ApiError> {
    checked_string(field(map, path, key)?, &join(path, key))
}

/// The required, non-empty string at `key` (a provider or model id).
fn id(map: &Map<String, Value>, path: &str, key: &str) -> Result<String, ApiError> {
    let text = string(map, path, key)?;
    if text.trim().is_empty() {
        return Err(invalid(format_args!(
            "{} must not be empty",
            join(path, key)
        )));
    }
    Ok(text)
}

/// The required string-or-null at `key`.
fn nullable_string(
    map: &Map<String, Value>,
    path: &str,
    key: &str,
) -> Result<Option<String>, ApiError> {
    match field(map, path, key)? {
        Value::Null => Ok(None),
        value @ Value::String(_) => checked_string(value, &join(path, key)).map(Some),
        _ => Err(invalid(format_args!(
            "{} must be a string or null",
            join(path, key)
        ))),
    }
}

/// The required boolean at `key`.
fn boolean(map: &Map<String, Value>, path: &str, key: &str) -> Result<bool, ApiError> {
    field(map, path, key)?
        .as_bool()
        .ok_or_else(|| invalid(format_args!("{} must be a boolean", join(path, key))))
}

/// The required number-or-null at `key`.
fn nullable_number(
    map: &Map<String, Value>,
    path: &str,
    key: &str,
) -> Result<Option<Number>, ApiError> {
    match field(map, path, key)? {
        Value::Null => Ok(None),
        Value::Number(n) => Ok(Some(n.clone())),
        _ => Err(invalid(format_args!(
            "{} must be a number or null",
            join(path, key)
        ))),
    }
}

/// The required list at `key`.
fn list<'a>(map: &'a Map<String, Value>, path: &str, key: &str) -> Result<&'a [Value], ApiError> {
    field(map, path, key)?
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| invalid(format_args!("{} must be a list", join(path, key))))
}

/// The required list of at most [`MAX_LIST_ITEMS`] strings at `key`.
fn string_list(map: &Map<String, Value>, path: &str, key: &str) -> Result<Vec<String>, ApiError> {
    let list_path = join(path, key);
    let items = list(map, path, key)?;
    if items.len() > MAX_LIST_ITEMS {
        return Err(invalid(format_args!(
            "{list_path} has more than {MAX_LIST_ITEMS} entries"
        )));
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| checked_string(item, &format!("{list_path}[{index}]")))
        .collect()
}

mod choose;

pub use choose::{
    catalog_signature, missing_model_notice, pick_default_session_model, resolve_selection,
};

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests;

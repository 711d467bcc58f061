//! What the picker and the default session choose from a catalog: the selection a stored or
//! wanted model resolves to (CAT-9, CAT-14), the default session's model, the catalog's
//! signature, and the notice for a stored model the catalog lacks.

use super::*;

/// Whether two ids are equal ignoring letter case.
fn same_text(a: &str, b: &str) -> bool {
    a == b || a.to_lowercase() == b.to_lowercase()
}

/// The trimmed text, unless absent or blank.
fn non_blank(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|text| !text.is_empty())
}

/// The first item equal to `wanted` exactly, else the first equal ignoring letter case.
fn find_id<'a, T>(
    items: impl Iterator<Item = &'a T> + Clone,
    wanted: &str,
    key: impl Fn(&T) -> &str,
) -> Option<&'a T> {
    items
        .clone()
        .find(|item| key(item) == wanted)
        .or_else(|| items.into_iter().find(|item| same_text(key(item), wanted)))
}

/// The signature of a combination of session, stored choice and catalog (CAT-12, CAT-14,
/// OI-22): the session id, the stored provider and model in lower case (absent reads as empty),
/// and the catalog's provider values and model ids of the picker projection, in order.
///
/// It depends on content only, so an identical reload gives the same signature, while display
/// names, flags other than `enabled`, and the digest do not enter it. The text is a JSON array,
/// so no two combinations share a signature.
pub fn catalog_signature(
    session_uid: &str,
    stored_provider: Option<&str>,
    stored_model: Option<&str>,
    catalog: &Catalog,
) -> String {
    let lower = |text: Option<&str>| Value::String(text.unwrap_or("").to_lowercase());
    let providers = catalog
        .provider_options()
        .into_iter()
        .map(|option| Value::String(option.value))
        .collect();
    let models = catalog
        .model_options()
        .into_iter()
        .map(|option| Value::String(option.id))
        .collect();
    Value::Array(vec![
        Value::String(session_uid.to_owned()),
        lower(stored_provider),
        lower(stored_model),
        Value::Array(providers),
        Value::Array(models),
    ])
    .to_string()
}

/// The choice first offered in the "choose a model" state (MOD-6, OI-29).
///
/// `last_used` holds `(provider, model)` pairs of recent sessions, most recent first. A model is
/// usable when its provider is enabled (so it is selectable) and does not need a sign-in it
/// lacks. The first entry whose provider (ignoring letter case) and model (its id, else its
/// display name, ignoring letter case) match a usable model gives the choice; otherwise the first
/// usable model in catalog order; otherwise none. The thinking level is the model's default.
/// The choice carries the catalog's own ids.
pub fn pick_default_session_model(
    catalog: &Catalog,
    last_used: &[(String, String)],
) -> Option<ModelChoice> {
    let usable = || {
        catalog
            .enabled_providers()
            .filter(|provider| !provider.needs_sign_in())
            .flat_map(|provider| provider.models.iter().map(move |model| (provider, model)))
    };
    let remembered = last_used.iter().find_map(|(provider, model)| {
        let provider = non_blank(Some(provider))?;
        let model = non_blank(Some(model))?;
        let candidates = || usable().filter(|(p, _)| same_text(&p.provider, provider));
        candidates()
            .find(|(_, m)| same_text(&m.model, model))
            .or_else(|| candidates().find(|(_, m)| same_text(&m.display_name, model)))
    });
    remembered
        .or_else(|| usable().next())
        .map(|(provider, model)| ModelChoice {
            provider: provider.provider.clone(),
            model: model.model.clone(),
            thinking: model
                .default_thinking()
                .map(|level| level.as_str().to_owned()),
        })
}

/// `resolveRunConfigSelection` (MOD-19): the one resolution every picker uses.
///
/// Only selectable models count (those of enabled providers). When `provider` and `model` name
/// one (exact ids first, else ignoring letter case) it is taken. Otherwise (CAT-13) the first
/// model of that provider is taken, or, when the provider is absent, unknown, disabled or lists
/// no model, the first model of the first provider that lists one; `model_missing` is set when a
/// model was asked for. Blank inputs read as absent.
///
/// The thinking level (OI-22) is `current_thinking` when the resolved model offers it, else the
/// model's default level, else none; the stored `llm_thinking` is not an input.
pub fn resolve_selection(
    catalog: &Catalog,
    provider: Option<&str>,
    model: Option<&str>,
    current_thinking: Option<&str>,
) -> Resolved {
    let provider = non_blank(provider);
    let model = non_blank(model);
    let wanted_provider =
        provider.and_then(|wanted| find_id(catalog.enabled_providers(), wanted, |p| &p.provider));
    let found = wanted_provider
        .zip(model)
        .and_then(|(p, wanted)| find_id(p.models.iter(), wanted, |m| &m.model).map(|m| (p, m)));
    let (chosen, model_missing) = match found {
        Some(found) => (Some(found), false),
        None => {
            let fallback = wanted_provider
                .and_then(|p| p.models.first().map(|m| (p, m)))
                .or_else(|| {
                    catalog
                        .enabled_providers()
                        .find_map(|p| p.models.first().map(|m| (p, m)))
                });
            (fallback, model.is_some())
        }
    };
    let Some((provider, model)) = chosen else {
        return Resolved {
            provider: None,
            model: None,
            thinking: None,
            model_missing,
        };
    };
    let thinking = current_thinking
        .and_then(ThinkingLevel::from_loose)
        .filter(|level| model.thinking_levels.contains(level))
        .or_else(|| model.default_thinking());
    Resolved {
        provider: Some(provider.provider.clone()),
        model: Some(model.model.clone()),
        thinking: thinking.map(|level| level.as_str().to_owned()),
        model_missing,
    }
}

/// The notify title and description for a stored model the catalog lacks (CAT-14, OI-6):
/// "Session model is not available" and "Provider: {p} · Model: {m} · Using the first available
/// model from the picker instead.", leaving out a part whose value is absent or blank.
pub fn missing_model_notice(provider: Option<&str>, model: Option<&str>) -> (String, String) {
    let mut parts: Vec<String> = Vec::with_capacity(3);
    if let Some(provider) = non_blank(provider) {
        parts.push(format!("Provider: {provider}"));
    }
    if let Some(model) = non_blank(model) {
        parts.push(format!("Model: {model}"));
    }
    parts.push(MISSING_MODEL_TAIL.to_owned());
    (MISSING_MODEL_TITLE.to_owned(), parts.join(" · "))
}

use serde_json::json;

use super::*;
use crate::api::error::hostile_bodies;

/// The example body of `platform-api.md` P12.
const EXAMPLE: &str = r#"{
  "schema_version": 1,
  "catalog_digest": "sha256:4f2a9c0b8e7d6a5f4c3b2a1908f7e6d5c4b3a29180f7e6d5c4b3a2918f7e6d5c",
  "providers": [
{"provider": "acme-cloud", "display_name": "Acme Cloud", "auth_methods": ["oauth"], "sign_in_available": true, "known": true, "enabled": true, "authenticated": true, "credential_status": "active", "default_model": "acme-large",
 "models": [
   {"model": "acme-large", "display_name": "Acme Large", "api": "openai-responses", "input": ["text", "image"], "reasoning": true, "thinking_levels": ["low", "medium", "high"], "context_window": 200000, "max_tokens": 32000},
   {"model": "acme-small", "display_name": "Acme Small", "api": "openai-responses", "input": ["text"], "reasoning": false, "thinking_levels": [], "context_window": 64000, "max_tokens": 8000}
 ]},
{"provider": "team-models", "display_name": "Team Models", "auth_methods": [], "sign_in_available": false, "known": false, "enabled": true, "authenticated": true, "credential_status": "active", "default_model": "tm-1",
 "models": [{"model": "tm-1", "display_name": "TM 1", "api": "openai-completions", "input": ["text"], "reasoning": true, "thinking_levels": ["off", "high"], "context_window": 128000, "max_tokens": 16000}]}
  ]
}"#;

fn example() -> Value {
    serde_json::from_str(EXAMPLE).unwrap()
}

fn parse_value(value: &Value) -> Result<Catalog, ApiError> {
    parse_catalog(value.to_string().as_bytes())
}

fn catalog_of(value: &Value) -> Catalog {
    parse_value(value).unwrap()
}

fn message(result: Result<Catalog, ApiError>) -> String {
    match result {
        Err(ApiError::Malformed { message }) => message,
        other => panic!("expected Malformed, got {other:?}"),
    }
}

fn provider(id: &str, enabled: bool, models: Value) -> Value {
    json!({"provider": id, "display_name": id.to_uppercase(), "auth_methods": [],
        "sign_in_available": false, "known": true, "enabled": enabled, "authenticated": false,
        "credential_status": "missing", "default_model": "", "models": models})
}

fn model(id: &str, label: &str, levels: Value) -> Value {
    let reasoning = levels.as_array().is_some_and(|l| !l.is_empty());
    json!({"model": id, "display_name": label, "api": "openai-responses", "input": ["text"],
        "reasoning": reasoning, "thinking_levels": levels, "context_window": null,
        "max_tokens": null})
}

fn with_providers(providers: Vec<Value>) -> Catalog {
    let mut value = example();
    value["providers"] = Value::Array(providers);
    catalog_of(&value)
}

fn remove(value: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    value
        .pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove(key)
        .unwrap();
}

/// Sets (or adds) the value at `pointer`.
fn set(value: &mut Value, pointer: &str, new: Value) {
    if let Some(slot) = value.pointer_mut(pointer) {
        *slot = new;
        return;
    }
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    value
        .pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .insert(key.to_owned(), new);
}

#[test]
fn spec_example_parses() {
    let catalog = parse_catalog(EXAMPLE.as_bytes()).unwrap();
    assert_eq!(
        catalog.catalog_digest,
        "sha256:4f2a9c0b8e7d6a5f4c3b2a1908f7e6d5c4b3a29180f7e6d5c4b3a2918f7e6d5c"
    );
    assert_eq!(catalog.providers.len(), 2);
    let acme = &catalog.providers[0];
    assert_eq!(acme.provider, "acme-cloud");
    assert_eq!(acme.display_name, "Acme Cloud");
    assert_eq!(acme.auth_methods, ["oauth"]);
    assert!(acme.sign_in_available && acme.known && acme.enabled && acme.authenticated);
    assert_eq!(acme.credential_status, CredentialStatus::Active);
    assert_eq!(acme.default_model, "acme-large");
    assert_eq!(acme.configured_credentials, None);
    assert!(!acme.needs_sign_in());
    let large = &acme.models[0];
    assert_eq!(large.model, "acme-large");
    assert_eq!(large.display_name, "Acme Large");
    assert_eq!(large.api, "openai-responses");
    assert_eq!(large.input, ["text", "image"]);
    assert!(large.reasoning);
    assert_eq!(
        large.thinking_levels,
        [
            ThinkingLevel::Low,
            ThinkingLevel::Medium,
            ThinkingLevel::High
        ]
    );
    assert_eq!(large.context_window, Some(Number::from(200_000)));
    assert_eq!(large.max_tokens, Some(Number::from(32_000)));
    assert_eq!(acme.models[1].thinking_levels, []);
    let team = &catalog.providers[1];
    assert!(!team.known);
    assert_eq!(
        team.models[0].thinking_levels,
        [ThinkingLevel::Off, ThinkingLevel::High]
    );
}

#[test]
fn optional_and_nullable_fields() {
    let mut value = example();
    set(
        &mut value,
        "/providers/0/models/0/context_window",
        Value::Null,
    );
    set(&mut value, "/providers/0/models/0/max_tokens", json!(1.5));
    set(
        &mut value,
        "/providers/0/configured_credentials",
        Value::Null,
    );
    set(
        &mut value,
        "/providers/1/configured_credentials",
        json!([{"uid": "c1", "custom_id": null, "user_uid": "u1",
            "organization_environment_uid": null, "status": "active", "authenticated": true}]),
    );
    value["extra"] = json!({"ignored": true});
    value["providers"][0]["extra"] = json!(5);
    let catalog = catalog_of(&value);
    let large = &catalog.providers[0].models[0];
    assert_eq!(large.context_window, None);
    assert_eq!(
        large.max_tokens.as_ref().and_then(Number::as_f64),
        Some(1.5)
    );
    assert_eq!(catalog.providers[0].configured_credentials, None);
    assert_eq!(
        catalog.providers[1].configured_credentials,
        Some(vec![ConfiguredCredential {
            uid: "c1".to_owned(),
            custom_id: None,
            user_uid: Some("u1".to_owned()),
            organization_environment_uid: None,
            status: "active".to_owned(),
            authenticated: true,
        }])
    );
    let mut value = example();
    set(&mut value, "/providers/0/configured_credentials", json!([]));
    set(&mut value, "/providers/0/models/1/reasoning", json!(true));
    set(&mut value, "/providers/1/models", json!([]));
    let catalog = catalog_of(&value);
    assert_eq!(catalog.providers[0].configured_credentials, Some(vec![]));
    assert!(catalog.providers[1].models.is_empty());
}

#[test]
fn providers_missing_has_its_own_message() {
    for providers in [None, Some(Value::Null)] {
        let mut value = example();
        match providers {
            None => remove(&mut value, "/providers"),
            Some(p) => set(&mut value, "/providers", p),
        }
        assert_eq!(
            message(parse_value(&value)),
            "The platform's list of models did not contain providers."
        );
    }
}

#[test]
fn every_strictness_violation_names_its_field() {
    enum Change {
        Remove,
        Set(Value),
    }
    use Change::{Remove, Set};
    let credential = json!({"uid": "c1", "custom_id": "x", "user_uid": "u1",
        "organization_environment_uid": "e1", "status": "active", "authenticated": true});
    let cases: Vec<(&str, Change, &str)> = vec![
        ("/schema_version", Remove, "schema_version is missing"),
        ("/schema_version", Set(json!(2)), "schema_version must be"),
        ("/schema_version", Set(json!("1")), "schema_version must be"),
        ("/schema_version", Set(json!(1.0)), "schema_version must be"),
        (
            "/schema_version",
            Set(json!(null)),
            "schema_version must be",
        ),
        ("/catalog_digest", Remove, "catalog_digest is missing"),
        (
            "/catalog_digest",
            Set(json!(null)),
            "catalog_digest must be a string",
        ),
        (
            "/catalog_digest",
            Set(json!(format!("sha256:{}", "A".repeat(64)))),
            "catalog_digest must be",
        ),
        (
            "/catalog_digest",
            Set(json!(format!("sha256:{}", "a".repeat(63)))),
            "catalog_digest must be",
        ),
        (
            "/catalog_digest",
            Set(json!(format!("sha256:{}", "a".repeat(65)))),
            "catalog_digest must be",
        ),
        (
            "/catalog_digest",
            Set(json!(format!("sha256:{}g", "a".repeat(63)))),
            "catalog_digest must be",
        ),
        (
            "/catalog_digest",
            Set(json!(format!("sha512:{}", "a".repeat(64)))),
            "catalog_digest must be",
        ),
        (
            "/catalog_digest",
            Set(json!(format!(" sha256:{}", "a".repeat(64)))),
            "catalog_digest must be",
        ),
        ("/providers", Set(json!({})), "providers must be a list"),
        ("/providers", Set(json!("x")), "providers must be a list"),
        (
            "/providers/1",
            Set(json!(1)),
            "providers[1] must be an object",
        ),
        (
            "/providers/1/provider",
            Remove,
            "providers[1].provider is missing",
        ),
        (
            "/providers/1/provider",
            Set(json!(7)),
            "providers[1].provider must be a string",
        ),
        (
            "/providers/1/provider",
            Set(json!(" ")),
            "providers[1].provider must not be empty",
        ),
        (
            "/providers/0/display_name",
            Remove,
            "providers[0].display_name is missing",
        ),
        (
            "/providers/0/display_name",
            Set(json!(null)),
            "providers[0].display_name must be a string",
        ),
        (
            "/providers/0/auth_methods",
            Remove,
            "providers[0].auth_methods is missing",
        ),
        (
            "/providers/0/auth_methods",
            Set(json!("oauth")),
            "providers[0].auth_methods must be a list",
        ),
        (
            "/providers/0/auth_methods",
            Set(json!(["oauth", 1])),
            "providers[0].auth_methods[1] must be a string",
        ),
        (
            "/providers/0/sign_in_available",
            Remove,
            "providers[0].sign_in_available is missing",
        ),
        (
            "/providers/0/sign_in_available",
            Set(json!("true")),
            "providers[0].sign_in_available must be a boolean",
        ),
        (
            "/providers/0/known",
            Set(json!(1)),
            "providers[0].known must be a boolean",
        ),
        (
            "/providers/0/known",
            Remove,
            "providers[0].known is missing",
        ),
        (
            "/providers/0/enabled",
            Set(json!(null)),
            "providers[0].enabled must be a boolean",
        ),
        (
            "/providers/0/enabled",
            Remove,
            "providers[0].enabled is missing",
        ),
        (
            "/providers/0/authenticated",
            Set(json!(0)),
            "providers[0].authenticated must be a boolean",
        ),
        (
            "/providers/0/authenticated",
            Remove,
            "providers[0].authenticated is missing",
        ),
        (
            "/providers/0/credential_status",
            Remove,
            "providers[0].credential_status is missing",
        ),
        (
            "/providers/0/credential_status",
            Set(json!("expired")),
            "providers[0].credential_status must be one of active, revoked, missing",
        ),
        (
            "/providers/0/credential_status",
            Set(json!("Active")),
            "providers[0].credential_status must be one of",
        ),
        (
            "/providers/0/credential_status",
            Set(json!(1)),
            "providers[0].credential_status must be a string",
        ),
        (
            "/providers/0/default_model",
            Remove,
            "providers[0].default_model is missing",
        ),
        (
            "/providers/0/default_model",
            Set(json!(null)),
            "providers[0].default_model must be a string",
        ),
        (
            "/providers/0/configured_credentials",
            Set(json!({})),
            "providers[0].configured_credentials must be a list",
        ),
        (
            "/providers/0/configured_credentials",
            Set(json!([1])),
            "providers[0].configured_credentials[0] must be an object",
        ),
        (
            "/providers/0/models",
            Remove,
            "providers[0].models is missing",
        ),
        (
            "/providers/0/models",
            Set(json!(null)),
            "providers[0].models must be a list",
        ),
        (
            "/providers/0/models/1",
            Set(json!([])),
            "providers[0].models[1] must be an object",
        ),
        (
            "/providers/1/models/0/model",
            Remove,
            "providers[1].models[0].model is missing",
        ),
        (
            "/providers/1/models/0/model",
            Set(json!(1)),
            "providers[1].models[0].model must be a string",
        ),
        (
            "/providers/1/models/0/model",
            Set(json!("")),
            "providers[1].models[0].model must not be empty",
        ),
        (
            "/providers/1/models/0/display_name",
            Remove,
            "providers[1].models[0].display_name is missing",
        ),
        (
            "/providers/1/models/0/api",
            Remove,
            "providers[1].models[0].api is missing",
        ),
        (
            "/providers/1/models/0/api",
            Set(json!(["x"])),
            "providers[1].models[0].api must be a string",
        ),
        (
            "/providers/1/models/0/input",
            Remove,
            "providers[1].models[0].input is missing",
        ),
        (
            "/providers/1/models/0/input",
            Set(json!([null])),
            "providers[1].models[0].input[0] must be a string",
        ),
        (
            "/providers/1/models/0/reasoning",
            Remove,
            "providers[1].models[0].reasoning is missing",
        ),
        (
            "/providers/1/models/0/reasoning",
            Set(json!("yes")),
            "providers[1].models[0].reasoning must be a boolean",
        ),
        (
            "/providers/1/models/0/reasoning",
            Set(json!(false)),
            "providers[1].models[0].reasoning is false while thinking_levels is not empty",
        ),
        (
            "/providers/1/models/0/thinking_levels",
            Remove,
            "providers[1].models[0].thinking_levels is missing",
        ),
        (
            "/providers/1/models/0/thinking_levels",
            Set(json!("high")),
            "providers[1].models[0].thinking_levels must be a list",
        ),
        (
            "/providers/1/models/0/thinking_levels",
            Set(json!(["high", "ultra"])),
            "providers[1].models[0].thinking_levels[1] must be one of off, on, minimal, low, medium, high, xhigh, max",
        ),
        (
            "/providers/1/models/0/thinking_levels",
            Set(json!(["High"])),
            "providers[1].models[0].thinking_levels[0] must be one of",
        ),
        (
            "/providers/1/models/0/thinking_levels",
            Set(json!([3])),
            "providers[1].models[0].thinking_levels[0] must be one of",
        ),
        (
            "/providers/1/models/0/thinking_levels",
            Set(json!(["high", "low", "high"])),
            "providers[1].models[0].thinking_levels[2] repeats an earlier level",
        ),
        (
            "/providers/1/models/0/context_window",
            Remove,
            "providers[1].models[0].context_window is missing",
        ),
        (
            "/providers/1/models/0/context_window",
            Set(json!("128000")),
            "providers[1].models[0].context_window must be a number or null",
        ),
        (
            "/providers/1/models/0/max_tokens",
            Remove,
            "providers[1].models[0].max_tokens is missing",
        ),
        (
            "/providers/1/models/0/max_tokens",
            Set(json!(true)),
            "providers[1].models[0].max_tokens must be a number or null",
        ),
    ];
    let mut credential_cases: Vec<(String, Change, String)> = Vec::new();
    for key in [
        "uid",
        "custom_id",
        "user_uid",
        "organization_environment_uid",
        "status",
        "authenticated",
    ] {
        let mut without = credential.clone();
        without.as_object_mut().unwrap().remove(key);
        credential_cases.push((
            "/providers/0/configured_credentials".to_owned(),
            Set(json!([credential.clone(), without])),
            format!("providers[0].configured_credentials[1].{key} is missing"),
        ));
        let mut mistyped = credential.clone();
        mistyped[key] = json!([]);
        credential_cases.push((
            "/providers/0/configured_credentials".to_owned(),
            Set(json!([mistyped])),
            format!("providers[0].configured_credentials[0].{key} must be"),
        ));
    }
    let all = cases
        .into_iter()
        .map(|(pointer, change, expected)| (pointer.to_owned(), change, expected.to_owned()))
        .chain(credential_cases);
    for (pointer, change, expected) in all {
        let mut value = example();
        match change {
            Remove => remove(&mut value, &pointer),
            Set(new) => set(&mut value, &pointer, new),
        }
        let text = message(parse_value(&value));
        assert!(
            text.starts_with("The platform's list of models was invalid: "),
            "{pointer}: {text}"
        );
        assert!(text.ends_with('.'), "{pointer}: {text}");
        assert!(
            text.contains(&expected),
            "{pointer}: {text} lacks {expected}"
        );
    }
}

#[test]
fn answers_that_are_not_objects() {
    for body in ["", "{", "[]", "null", "1", r#""providers""#] {
        let text = message(parse_catalog(body.as_bytes()));
        assert!(
            text.starts_with("The platform's list of models was invalid: the answer"),
            "{body}: {text}"
        );
    }
}

#[test]
fn duplicate_ids_are_refused() {
    let mut value = example();
    value["providers"][1]["provider"] = json!("acme-cloud");
    assert_eq!(
        message(parse_value(&value)),
        "The platform's list of models was invalid: providers[1].provider repeats the id of providers[0]."
    );
    let mut value = example();
    value["providers"][0]["models"][1]["model"] = json!("acme-large");
    assert_eq!(
        message(parse_value(&value)),
        "The platform's list of models was invalid: providers[0].models[1].model repeats the id of providers[0].models[0]."
    );
    // The same model id under two providers, and ids differing in case only, are fine.
    let mut value = example();
    value["providers"][1]["models"][0]["model"] = json!("acme-large");
    value["providers"][0]["models"][1]["model"] = json!("ACME-LARGE");
    assert!(parse_value(&value).is_ok());
}

#[test]
fn size_caps() {
    let many = |count: usize, enabled: bool| {
        (0..count)
            .map(|i| provider(&format!("p{i}"), enabled, json!([])))
            .collect::<Vec<_>>()
    };
    let mut value = example();
    value["providers"] = Value::Array(many(MAX_PROVIDERS, true));
    assert!(parse_value(&value).is_ok());
    value["providers"] = Value::Array(many(MAX_PROVIDERS + 1, true));
    assert_eq!(
        message(parse_value(&value)),
        "The platform's list of models was invalid: providers has more than 200 entries."
    );

    let models = |from: usize, count: usize| {
        Value::Array(
            (from..from + count)
                .map(|i| model(&format!("m{i}"), "M", json!([])))
                .collect(),
        )
    };
    value["providers"] = json!([
        provider("a", true, models(0, 1500)),
        provider("b", false, models(0, 500)),
    ]);
    assert!(parse_value(&value).is_ok());
    value["providers"] = json!([
        provider("a", true, models(0, 1500)),
        provider("b", false, models(0, 501)),
    ]);
    assert_eq!(
        message(parse_value(&value)),
        "The platform's list of models was invalid: providers[1].models brings the catalog above 2000 models in all."
    );

    let mut value = example();
    value["providers"][0]["display_name"] = json!("é".repeat(MAX_STRING_BYTES / 2));
    assert!(parse_value(&value).is_ok());
    for pointer in [
        "/providers/0/display_name",
        "/providers/1/models/0/model",
        "/providers/0/auth_methods/0",
    ] {
        let mut value = example();
        set(&mut value, pointer, json!("x".repeat(MAX_STRING_BYTES + 1)));
        let text = message(parse_value(&value));
        assert!(text.contains("is longer than 1024 bytes"), "{text}");
        assert!(text.len() < 200, "the value is not echoed: {text}");
    }
    let mut value = example();
    set(
        &mut value,
        "/providers/0/auth_methods",
        json!(vec!["oauth"; MAX_LIST_ITEMS + 1]),
    );
    assert_eq!(
        message(parse_value(&value)),
        "The platform's list of models was invalid: providers[0].auth_methods has more than 32 entries."
    );
    let mut value = example();
    set(
        &mut value,
        "/providers/0/configured_credentials",
        json!(vec![1; MAX_CREDENTIALS + 1]),
    );
    assert!(message(parse_value(&value)).contains("configured_credentials has more than 200"));
}

#[test]
fn hostile_bodies_do_not_panic() {
    for body in hostile_bodies() {
        assert!(parse_catalog(&body).is_err());
    }
}

#[test]
fn picker_projection() {
    let mut value = example();
    value["providers"][0]["authenticated"] = json!(false);
    value["providers"].as_array_mut().unwrap().insert(
        1,
        provider("off", false, json!([model("hidden", "Hidden", json!([]))])),
    );
    let catalog = catalog_of(&value);
    assert_eq!(
        catalog.provider_options(),
        [
            ProviderOption {
                label: "Acme Cloud".to_owned(),
                value: "acme-cloud".to_owned()
            },
            ProviderOption {
                label: "Team Models".to_owned(),
                value: "team-models".to_owned()
            },
        ]
    );
    let models = catalog.model_options();
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "acme-cloud::acme-large",
            "acme-cloud::acme-small",
            "team-models::tm-1"
        ]
    );
    assert!(models.iter().all(|m| m.selectable));
    // Sign-in is required by acme-cloud (oauth) and missing; team-models has no auth methods.
    assert!(models[0].needs_sign_in && models[1].needs_sign_in);
    assert!(!models[2].needs_sign_in);
    assert_eq!(models[0].label, "Acme Large");
    assert_eq!(models[0].provider, "acme-cloud");
    assert_eq!(models[0].model, "acme-large");
    let efforts: Vec<(&str, &str)> = models[0]
        .reasoning_options
        .iter()
        .map(|e| (e.label.as_str(), e.value.as_str()))
        .collect();
    assert_eq!(
        efforts,
        [("Low", "low"), ("Medium", "medium"), ("High", "high")]
    );
    assert_eq!(models[0].default_reasoning.as_deref(), Some("medium"));
    assert!(models[1].reasoning_options.is_empty());
    assert_eq!(models[1].default_reasoning, None);
    assert_eq!(models[2].default_reasoning.as_deref(), Some("off"));
    assert_eq!(
        serde_json::to_value(&models[2]).unwrap(),
        json!({"id": "team-models::tm-1", "provider": "team-models", "model": "tm-1",
            "label": "TM 1", "selectable": true, "needsSignIn": false,
            "reasoningOptions": [{"label": "Off", "value": "off"}, {"label": "High", "value": "high"}],
            "defaultReasoning": "off"})
    );
}

#[test]
fn level_labels_are_title_case() {
    let labels: Vec<&str> = ThinkingLevel::ALL.iter().map(|l| l.label()).collect();
    assert_eq!(
        labels,
        [
            "Off", "On", "Minimal", "Low", "Medium", "High", "Xhigh", "Max"
        ]
    );
    for level in ThinkingLevel::ALL {
        assert_eq!(ThinkingLevel::from_wire(level.as_str()), Some(level));
        assert_eq!(serde_json::to_value(level).unwrap(), json!(level.as_str()));
    }
}

#[test]
fn signature_is_content_based() {
    let catalog = parse_catalog(EXAMPLE.as_bytes()).unwrap();
    let base = catalog_signature("s1", Some("acme-cloud"), Some("acme-large"), &catalog);
    // An identical reload, and a reload that changes only names, flags or the digest.
    let reload = parse_catalog(EXAMPLE.as_bytes()).unwrap();
    assert_eq!(
        catalog_signature("s1", Some("acme-cloud"), Some("acme-large"), &reload),
        base
    );
    let mut value = example();
    value["catalog_digest"] = json!(format!("sha256:{}", "0".repeat(64)));
    value["providers"][0]["display_name"] = json!("Renamed");
    value["providers"][0]["authenticated"] = json!(false);
    value["providers"][0]["models"][0]["thinking_levels"] = json!(["max"]);
    assert_eq!(
        catalog_signature(
            "s1",
            Some("acme-cloud"),
            Some("acme-large"),
            &catalog_of(&value)
        ),
        base
    );
    // Stored values compare in lower case.
    assert_eq!(
        catalog_signature("s1", Some("ACME-Cloud"), Some("Acme-Large"), &catalog),
        base
    );
    assert_eq!(
        catalog_signature("s1", None, None, &catalog),
        catalog_signature("s1", Some(""), Some(""), &catalog)
    );
    // Sensitive to the session, the stored choice and the catalog's ids.
    let mut others = vec![
        catalog_signature("s2", Some("acme-cloud"), Some("acme-large"), &catalog),
        catalog_signature("s1", Some("team-models"), Some("acme-large"), &catalog),
        catalog_signature("s1", Some("acme-cloud"), Some("acme-small"), &catalog),
        catalog_signature("s1", None, Some("acme-large"), &catalog),
    ];
    let mut value = example();
    value["providers"][1]["models"][0]["model"] = json!("tm-2");
    others.push(catalog_signature(
        "s1",
        Some("acme-cloud"),
        Some("acme-large"),
        &catalog_of(&value),
    ));
    let mut value = example();
    value["providers"][1]["enabled"] = json!(false);
    others.push(catalog_signature(
        "s1",
        Some("acme-cloud"),
        Some("acme-large"),
        &catalog_of(&value),
    ));
    let mut value = example();
    value["providers"].as_array_mut().unwrap().reverse();
    others.push(catalog_signature(
        "s1",
        Some("acme-cloud"),
        Some("acme-large"),
        &catalog_of(&value),
    ));
    for other in &others {
        assert_ne!(other, &base);
    }
    // No separator ambiguity between the parts.
    assert_ne!(
        catalog_signature("a", Some("b,c"), None, &catalog),
        catalog_signature("a,b", Some("c"), None, &catalog)
    );
}

fn recent(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(p, m)| ((*p).to_owned(), (*m).to_owned()))
        .collect()
}

fn choice(provider: &str, model: &str, thinking: Option<&str>) -> Option<ModelChoice> {
    Some(ModelChoice {
        provider: provider.to_owned(),
        model: model.to_owned(),
        thinking: thinking.map(str::to_owned),
    })
}

#[test]
fn default_model_follows_last_used() {
    let catalog = parse_catalog(EXAMPLE.as_bytes()).unwrap();
    assert_eq!(
        pick_default_session_model(
            &catalog,
            &recent(&[("team-models", "tm-1"), ("acme-cloud", "acme-large")])
        ),
        choice("team-models", "tm-1", Some("off"))
    );
    // Matched by display label, ignoring letter case; the catalog's ids are offered.
    assert_eq!(
        pick_default_session_model(&catalog, &recent(&[("Acme-Cloud", "acme large")])),
        choice("acme-cloud", "acme-large", Some("medium"))
    );
    // Entries the catalog cannot run are skipped.
    assert_eq!(
        pick_default_session_model(
            &catalog,
            &recent(&[
                ("gone", "x"),
                ("acme-cloud", "gone"),
                ("", ""),
                ("acme-cloud", "acme-small")
            ])
        ),
        choice("acme-cloud", "acme-small", None)
    );
}

#[test]
fn default_model_skips_disabled_and_unsigned() {
    let mut value = example();
    value["providers"][0]["authenticated"] = json!(false);
    let unsigned = catalog_of(&value);
    assert_eq!(
        pick_default_session_model(&unsigned, &recent(&[("acme-cloud", "acme-large")])),
        choice("team-models", "tm-1", Some("off"))
    );
    // Without auth methods, no sign-in is needed whatever `authenticated` says.
    let mut value = example();
    value["providers"][0]["authenticated"] = json!(false);
    value["providers"][0]["auth_methods"] = json!([]);
    assert_eq!(
        pick_default_session_model(
            &catalog_of(&value),
            &recent(&[("acme-cloud", "acme-small")])
        ),
        choice("acme-cloud", "acme-small", None)
    );
    let mut value = example();
    value["providers"][1]["enabled"] = json!(false);
    assert_eq!(
        pick_default_session_model(&catalog_of(&value), &recent(&[("team-models", "tm-1")])),
        choice("acme-cloud", "acme-large", Some("medium"))
    );
}

#[test]
fn default_model_fallback_order_and_none() {
    let catalog = with_providers(vec![
        provider("empty", true, json!([])),
        provider(
            "disabled",
            false,
            json!([model("d1", "D1", json!(["low"]))]),
        ),
        provider(
            "second",
            true,
            json!([
                model("s1", "S1", json!(["minimal", "max"])),
                model("s2", "S2", json!([]))
            ]),
        ),
    ]);
    assert_eq!(
        pick_default_session_model(&catalog, &[]),
        choice("second", "s1", Some("minimal"))
    );
    assert_eq!(
        pick_default_session_model(&catalog, &recent(&[("disabled", "d1")])),
        choice("second", "s1", Some("minimal"))
    );
    let nothing = with_providers(vec![
        provider("empty", true, json!([])),
        provider("disabled", false, json!([model("d1", "D1", json!([]))])),
    ]);
    assert_eq!(
        pick_default_session_model(&nothing, &recent(&[("disabled", "d1")])),
        None
    );
    assert_eq!(
        pick_default_session_model(&with_providers(vec![]), &[]),
        None
    );
}

fn resolved(provider: &str, model: &str, thinking: Option<&str>, model_missing: bool) -> Resolved {
    Resolved {
        provider: Some(provider.to_owned()),
        model: Some(model.to_owned()),
        thinking: thinking.map(str::to_owned),
        model_missing,
    }
}

#[test]
fn resolve_found_model() {
    let catalog = parse_catalog(EXAMPLE.as_bytes()).unwrap();
    assert_eq!(
        resolve_selection(&catalog, Some("team-models"), Some("tm-1"), None),
        resolved("team-models", "tm-1", Some("off"), false)
    );
    assert_eq!(
        resolve_selection(
            &catalog,
            Some(" Acme-Cloud "),
            Some("ACME-SMALL"),
            Some("high")
        ),
        resolved("acme-cloud", "acme-small", None, false)
    );
}

#[test]
fn resolve_missing_model_takes_first_of_provider() {
    let catalog = parse_catalog(EXAMPLE.as_bytes()).unwrap();
    assert_eq!(
        resolve_selection(&catalog, Some("team-models"), Some("retired"), None),
        resolved("team-models", "tm-1", Some("off"), true)
    );
    // No model asked for: the first of the provider, nothing missing.
    assert_eq!(
        resolve_selection(&catalog, Some("team-models"), None, None),
        resolved("team-models", "tm-1", Some("off"), false)
    );
    assert_eq!(
        resolve_selection(&catalog, Some("team-models"), Some("  "), None),
        resolved("team-models", "tm-1", Some("off"), false)
    );
}

#[test]
fn resolve_unknown_or_empty_provider_takes_first_of_first_provider() {
    let catalog = parse_catalog(EXAMPLE.as_bytes()).unwrap();
    assert_eq!(
        resolve_selection(&catalog, Some("gone"), Some("tm-1"), None),
        resolved("acme-cloud", "acme-large", Some("medium"), true)
    );
    assert_eq!(
        resolve_selection(&catalog, None, None, None),
        resolved("acme-cloud", "acme-large", Some("medium"), false)
    );
    // A provider that lists no model, or a disabled one, falls back the same way; an
    // enabled provider without models is passed over.
    let catalog = with_providers(vec![
        provider("empty", true, json!([])),
        provider("off", false, json!([model("o1", "O1", json!([]))])),
        provider("on", true, json!([model("n1", "N1", json!(["high"]))])),
    ]);
    assert_eq!(
        resolve_selection(&catalog, Some("empty"), Some("x"), None),
        resolved("on", "n1", Some("high"), true)
    );
    assert_eq!(
        resolve_selection(&catalog, Some("off"), Some("o1"), None),
        resolved("on", "n1", Some("high"), true)
    );
    // Nothing selectable at all.
    let nothing = with_providers(vec![provider(
        "off",
        false,
        json!([model("o1", "O1", json!([]))]),
    )]);
    assert_eq!(
        resolve_selection(&nothing, Some("off"), Some("o1"), Some("high")),
        Resolved {
            provider: None,
            model: None,
            thinking: None,
            model_missing: true
        }
    );
}

#[test]
fn resolve_thinking_kept_defaulted_or_none() {
    let catalog = parse_catalog(EXAMPLE.as_bytes()).unwrap();
    let thinking = |model: &str, current: Option<&str>| {
        let provider = if model == "tm-1" {
            "team-models"
        } else {
            "acme-cloud"
        };
        resolve_selection(&catalog, Some(provider), Some(model), current).thinking
    };
    assert_eq!(
        thinking("acme-large", Some("high")).as_deref(),
        Some("high")
    );
    assert_eq!(
        thinking("acme-large", Some(" HIGH ")).as_deref(),
        Some("high")
    );
    assert_eq!(
        thinking("acme-large", Some("off")).as_deref(),
        Some("medium")
    );
    assert_eq!(
        thinking("acme-large", Some("bogus")).as_deref(),
        Some("medium")
    );
    assert_eq!(thinking("acme-large", Some("")).as_deref(), Some("medium"));
    assert_eq!(thinking("tm-1", Some("medium")).as_deref(), Some("off"));
    assert_eq!(thinking("tm-1", Some("high")).as_deref(), Some("high"));
    assert_eq!(thinking("acme-small", Some("high")), None);
    assert_eq!(thinking("acme-small", None), None);
}

#[test]
fn missing_model_notice_texts() {
    let tail = "Using the first available model from the picker instead.";
    let (title, description) = missing_model_notice(Some("acme-cloud"), Some("acme-xl"));
    assert_eq!(title, "Session model is not available");
    assert_eq!(
        description,
        format!("Provider: acme-cloud · Model: acme-xl · {tail}")
    );
    assert_eq!(
        missing_model_notice(None, Some("acme-xl")).1,
        format!("Model: acme-xl · {tail}")
    );
    assert_eq!(
        missing_model_notice(Some("acme-cloud"), Some("  ")).1,
        format!("Provider: acme-cloud · {tail}")
    );
    assert_eq!(missing_model_notice(None, None).1, tail);
}

/// RU-29: sign-in is not selectability (`openai-codex` with `auth_methods ["oauth"]`,
/// `authenticated false`: selectable, needing sign-in); `reasoning: true` with no levels offers
/// none and no default; the five levels default to `medium`; a custom provider (`known false`,
/// `auth_methods []`) joins the same lists.
#[test]
fn ru_29_catalog_projection() {
    let mut codex = provider(
        "openai-codex",
        true,
        json!([
            model(
                "gpt-5.5",
                "GPT-5.5",
                json!(["low", "medium", "high", "xhigh", "max"])
            ),
            model("gpt-5.5-mini", "GPT-5.5 mini", json!([]))
        ]),
    );
    codex["auth_methods"] = json!(["oauth"]);
    codex["authenticated"] = json!(false);
    codex["models"][1]["reasoning"] = json!(true);
    let mut acme = provider(
        "acme-models",
        true,
        json!([model("alpha", "Alpha", json!([]))]),
    );
    acme["display_name"] = json!("Acme Models");
    acme["known"] = json!(false);
    acme["authenticated"] = json!(true);
    let catalog = with_providers(vec![codex, acme]);
    let providers: Vec<(String, String)> = catalog
        .provider_options()
        .into_iter()
        .map(|p| (p.label, p.value))
        .collect();
    assert_eq!(
        providers,
        [
            ("OPENAI-CODEX".to_owned(), "openai-codex".to_owned()),
            ("Acme Models".to_owned(), "acme-models".to_owned())
        ]
    );
    let models = catalog.model_options();
    let by_id = |id: &str| models.iter().find(|m| m.id == id).unwrap();
    let big = by_id("openai-codex::gpt-5.5");
    assert!(
        big.selectable && big.needs_sign_in,
        "selectable, yet not signed in"
    );
    assert_eq!(big.default_reasoning.as_deref(), Some("medium"));
    assert_eq!(big.reasoning_options.len(), 5);
    let mini = by_id("openai-codex::gpt-5.5-mini");
    assert!(mini.reasoning_options.is_empty());
    assert_eq!(mini.default_reasoning, None);
    let alpha = by_id("acme-models::alpha");
    assert!(alpha.selectable && !alpha.needs_sign_in);
}

/// RU-28: the reference's pinned table of the model first offered (providers `anthropic` and
/// `openai-codex`, models `anthropic::claude-fable-5-1`, `openai-codex::gpt-5.5` and
/// `openai-codex::gpt-5.5-mini`, enabled, selectable, no sign-in).
#[test]
fn ru_28_the_model_first_offered() {
    let mut anthropic = provider(
        "anthropic",
        true,
        json!([model("claude-fable-5-1", "Claude Fable 5.1", json!([]))]),
    );
    anthropic["authenticated"] = json!(true);
    let mut codex = provider(
        "openai-codex",
        true,
        json!([
            model("gpt-5.5", "GPT-5.5", json!([])),
            model("gpt-5.5-mini", "GPT-5.5 mini", json!([]))
        ]),
    );
    codex["authenticated"] = json!(true);
    let catalog = with_providers(vec![anthropic.clone(), codex.clone()]);
    let offered = |catalog: &Catalog, last: &[(&str, &str)]| {
        pick_default_session_model(catalog, &recent(last))
            .map(|c| format!("{}::{}", c.provider, c.model))
    };
    assert_eq!(
        offered(&catalog, &[("openai-codex", "gpt-5.5")]).as_deref(),
        Some("openai-codex::gpt-5.5")
    );
    assert_eq!(
        offered(&catalog, &[("", ""), ("OpenAI-Codex", "GPT-5.5-mini")]).as_deref(),
        Some("openai-codex::gpt-5.5-mini"),
        "empty entries skipped, case ignored"
    );
    assert_eq!(
        offered(&catalog, &[("gone", "gone")]).as_deref(),
        Some("anthropic::claude-fable-5-1")
    );
    let mut unsigned = anthropic.clone();
    unsigned["auth_methods"] = json!(["oauth"]);
    unsigned["authenticated"] = json!(false);
    let needs_sign_in = with_providers(vec![unsigned, codex.clone()]);
    assert_eq!(
        offered(&needs_sign_in, &[]).as_deref(),
        Some("openai-codex::gpt-5.5")
    );
    let mut disabled = anthropic;
    disabled["enabled"] = json!(false);
    assert_eq!(offered(&with_providers(vec![disabled]), &[]), None);
    assert_eq!(offered(&with_providers(vec![]), &[]), None);
}

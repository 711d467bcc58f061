#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! CAT: the model catalog and picker reconciliation (rules.md, "CAT: Model catalog and picker
//! reconciliation"), with FAIL-15 (a catalog failure leaves readiness and runtime access alone)
//! and ENV-9 (an Environment change alone does not read the catalog again), read through OI-6,
//! OI-10 and OI-22; plus hostile P12 answers fed through the engine.

use engine_core::api::error_message;
use engine_core::{
    ApiCall, Command, Event, Input, NoticeVariant, Person, ReadinessStatus, RequestId, Secret,
    Target,
};
use serde_json::{Value, json};
use spec_tests::fixtures::{
    AGENT, AGENT2, CATALOG_DIGEST, ENV, ENV2, HANDLE, USER, catalog, catalog_model, catalog_of,
    catalog_provider, insights, model_required, record, runtime_ready, runtime_terminal,
    runtime_transient, with_model,
};
use spec_tests::models::{body_of, is_catalog, is_patch, json_body, picker, values};
use spec_tests::{Harness, Sent};

const S1: &str = "s-1";
const USER2: &str = "user-2";
const FAILED: &str = "Available models request failed.";
const INVALID: &str = "The platform's list of models was invalid: ";
const NO_PROVIDERS: &str = "The platform's list of models did not contain providers.";
const MISSING_TITLE: &str = "Session model is not available";
const MISSING_TAIL: &str = "Using the first available model from the picker instead.";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn catalogs(h: &Harness) -> usize {
    h.count(is_catalog)
}

fn catalog_request(h: &Harness) -> RequestId {
    h.expect_pending("catalog", is_catalog)
}

fn answer_catalog_with(h: &mut Harness, body: Value) {
    let id = catalog_request(h);
    h.reply(id, 200, body);
}

fn answer_catalog(h: &mut Harness) {
    answer_catalog_with(h, catalog());
}

fn patch_request(h: &Harness) -> RequestId {
    h.expect_pending("PATCH", is_patch)
}

/// Fails the open catalog request and both retries with `status` and `body`: the failure is
/// final.
fn fail_three_times(h: &mut Harness, status: u16, body: Value) {
    let id = catalog_request(h);
    h.reply(id, status, body.clone());
    h.advance(1_000);
    let id = catalog_request(h);
    h.reply(id, status, body.clone());
    h.advance(2_000);
    let id = catalog_request(h);
    h.reply(id, status, body);
}

/// Answers the open catalog request and both retries with these raw bytes (HTTP 200).
fn raw_three_times(h: &mut Harness, bytes: &[u8]) {
    for delay in [1_000, 2_000, 0] {
        let id = catalog_request(h);
        h.reply_raw(id, 200, Some("application/json"), bytes, None);
        h.advance(delay);
    }
}

fn person(h: &mut Harness, uid: &str) {
    h.input(Input::Person(Person::new(
        uid.to_owned(),
        Secret::new("platform-token-secret"),
    )));
}

fn model_ids(h: &Harness) -> Vec<String> {
    h.snapshot()
        .available_models
        .into_iter()
        .map(|m| m.id)
        .collect()
}

fn provider_values(h: &Harness) -> Vec<String> {
    h.snapshot()
        .available_providers
        .into_iter()
        .map(|p| p.value)
        .collect()
}

const EXAMPLE_IDS: [&str; 3] = [
    "acme-cloud::acme-large",
    "acme-cloud::acme-small",
    "team-models::tm-1",
];

fn missing_notices(h: &Harness) -> Vec<engine_core::Notice> {
    h.notices()
        .into_iter()
        .filter(|n| n.title == MISSING_TITLE)
        .collect()
}

/// S1 selected, visible and ready with `rec` as its detail record; the catalog request is still
/// open.
fn ready_with(rec: Value) -> Harness {
    let mut h = Harness::selected(S1);
    h.answer_detail(S1, rec);
    h.answer_history(S1);
    let id = h.insights_request(S1);
    h.reply(id, 200, insights(S1));
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
    h
}

/// S1 ready (stored acme-cloud / acme-large, no level) with the P12 example loaded: the picker
/// shows acme-cloud::acme-large at medium.
fn ready_with_catalog() -> Harness {
    let mut h = Harness::ready(S1);
    answer_catalog(&mut h);
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
    );
    h
}

/// A hidden chat for USER in ENV.
fn hidden() -> Harness {
    let mut h = Harness::new();
    h.person(USER);
    h.env(Some(ENV));
    h
}

/// A hidden chat in the default-session state whose get-or-create was refused for want of a
/// model: the choice waits and the catalog is read (MOD-8).
fn hidden_choice() -> Harness {
    let mut h = hidden();
    h.default_session(Some(AGENT));
    h.shows_default(true);
    let id = h.get_or_create_request();
    h.reply(id, 400, model_required());
    assert!(h.snapshot().session_model_selection_request.is_some());
    h
}

// ---------------------------------------------------------------------------------------------
// CAT-1, CAT-2, CAT-3, CAT-4: the request and when it goes out
// ---------------------------------------------------------------------------------------------

/// CAT-1: the catalog is read with GET /api/v1/model-providers/ on the platform (no query, no
/// body, the person's credential); the picker's providers and models come only from its answer:
/// nothing before it, only the enabled providers' models after it, and never a session's
/// stored model the catalog lacks.
#[test]
fn cat_1_request_shape_and_choices_from_the_answer() {
    let mut h = Harness::ready(S1);
    let id = catalog_request(&h);
    let r = &h.request(id).request;
    assert_eq!(r.method.as_str(), "GET");
    assert_eq!(r.target, Target::Platform);
    assert_eq!(r.path, "/api/v1/model-providers/");
    assert!(r.query.is_empty(), "{:?}", r.query);
    assert!(r.body.is_none());
    assert_eq!(r.url(), "https://platform.test/api/v1/model-providers/");
    assert_eq!(
        r.header("authorization"),
        Some("Bearer platform-token-secret")
    );
    let s = h.snapshot();
    assert!(s.available_providers.is_empty());
    assert!(s.available_models.is_empty());
    assert_eq!(s.selected_model_value, None, "no choice before the answer");

    let mut body = catalog();
    let mut hidden_provider = catalog_provider("hidden-p", &[catalog_model("h1", &["low"])]);
    hidden_provider["enabled"] = json!(false);
    body["providers"]
        .as_array_mut()
        .unwrap()
        .push(hidden_provider);
    h.reply(id, 200, body);
    assert_eq!(provider_values(&h), ["acme-cloud", "team-models"]);
    assert_eq!(model_ids(&h), EXAMPLE_IDS);
}

/// CAT-1: a stored model the catalog lacks is never offered as a choice.
#[test]
fn cat_1_stored_model_outside_the_catalog_is_not_offered() {
    let mut h = ready_with(with_model(
        record(S1, AGENT, ENV, 0),
        "acme-cloud",
        "acme-xl",
        None,
    ));
    answer_catalog(&mut h);
    assert_eq!(model_ids(&h), EXAMPLE_IDS);
    assert!(!model_ids(&h).iter().any(|m| m.contains("acme-xl")));
}

/// CAT-1 (P12): the catalog is never read without the person's public uid: no uid, or an
/// all-digits (legacy numeric) uid, emits no catalog request.
#[test]
fn cat_1_no_request_without_a_public_person_uid() {
    let mut h = Harness::new();
    h.input(Input::Person(
        Person::default().with_token(Secret::new("platform-token-secret")),
    ));
    h.env(Some(ENV));
    h.visible(true);
    assert_eq!(catalogs(&h), 0);

    let mut h = Harness::new();
    person(&mut h, "12345");
    h.env(Some(ENV));
    h.visible(true);
    h.command(Command::RequestAvailableModels);
    assert_eq!(catalogs(&h), 0);
    let error = h.snapshot().available_models_error.unwrap_or_default();
    assert!(error.contains("public user uid"), "{error}");
}

/// CAT-2: the catalog loads as soon as the chat is visible, with nothing selected (before the
/// list answers, with implicit selection avoided, with a requested session).
#[test]
fn cat_2_loads_whenever_visible_whatever_is_selected() {
    let h = Harness::visible_in_env();
    assert_eq!(h.current(), None);
    assert_eq!(catalogs(&h), 1);
    assert!(h.snapshot().has_requested_available_models);
    assert!(h.snapshot().is_loading_available_models);

    let mut h = hidden();
    h.avoid_implicit(true);
    h.visible(true);
    h.answer_list(&[]);
    assert_eq!(h.current(), None);
    assert_eq!(catalogs(&h), 1);

    let mut h = hidden();
    h.requested(Some(S1));
    assert_eq!(catalogs(&h), 0);
    h.visible(true);
    assert_eq!(catalogs(&h), 1);
}

/// CAT-2: whatever the runtime decision (ready, transient, terminal), the catalog read goes on,
/// its answer fills the picker, and requestAvailableModels() reads it again.
#[test]
fn cat_2_loads_whatever_the_runtime_decision() {
    for decision in [
        runtime_ready(S1),
        runtime_transient("waking", Some(30_000)),
        runtime_terminal(Some("SUP-1")),
    ] {
        let mut h = Harness::hydrated(S1);
        let cid = catalog_request(&h);
        let rid = h.runtime_request(S1);
        h.reply(rid, 200, decision.clone());
        assert!(h.snapshot().active_runtime_interaction.is_some());
        assert!(!h.was_aborted(cid), "{decision}");
        h.reply(cid, 200, catalog());
        assert_eq!(model_ids(&h), EXAMPLE_IDS, "{decision}");
        h.command(Command::RequestAvailableModels);
        assert_eq!(catalogs(&h), 2, "{decision}");
    }
}

/// CAT-3: loading the catalog (its answer, its failures and retries, while visible, hidden with a
/// choice pending, or with a session ready) emits nothing but catalog requests: no Agent or
/// session creation, no resolve-runtime-access, nothing to an rpc_url.
#[test]
fn cat_3_loading_emits_no_creation_runtime_or_rpc_request() {
    let only_catalog = |h: &Harness, mark: usize| {
        for s in h.sent_since(mark) {
            assert!(is_catalog(&s.call), "{:?}", s.call);
            assert_eq!(s.request.target, Target::Platform);
        }
    };
    // Visible, nothing selected.
    let mut h = Harness::visible_in_env();
    h.answer_list(&[]);
    let mark = h.mark();
    answer_catalog(&mut h);
    h.command(Command::RequestAvailableModels);
    fail_three_times(&mut h, 503, json!({}));
    h.advance(10_000);
    only_catalog(&h, mark);

    // Hidden with a model choice pending.
    let mut h = hidden_choice();
    let mark = h.mark();
    answer_catalog(&mut h);
    h.command(Command::RequestAvailableModels);
    fail_three_times(&mut h, 500, json!({}));
    only_catalog(&h, mark);

    // A ready session whose runtime check is still open.
    let mut h = Harness::ready(S1);
    let mark = h.mark();
    answer_catalog(&mut h);
    only_catalog(&h, mark);
    assert!(!h.sent().iter().any(|s| matches!(
        s.call,
        ApiCall::StartNewSession { .. } | ApiCall::GetOrCreateSession { .. }
    )));
}

/// CAT-4: while the chat is hidden and no choice waits, nothing requests the catalog: a
/// requested session, the default session's get-or-create and its answer, time, even
/// requestAvailableModels() and invalidateModelProviderCatalog().
#[test]
fn cat_4_no_request_while_hidden_without_a_choice() {
    let mut h = hidden();
    h.requested(Some(S1));
    h.default_session(Some(AGENT));
    h.shows_default(true);
    let id = h.get_or_create_request();
    h.reply(
        id,
        200,
        spec_tests::fixtures::handle_record("s-def", AGENT, ENV, HANDLE, 1),
    );
    h.command(Command::RequestAvailableModels);
    h.command(Command::InvalidateModelProviderCatalog);
    h.advance(600_000);
    assert_eq!(catalogs(&h), 0);
    let s = h.snapshot();
    assert!(!s.has_requested_available_models);
    assert!(!s.is_loading_available_models);
}

/// CAT-4, OI-10: once the chat is hidden and the choice is cancelled, a waiting retry is dropped
/// and no further catalog request goes out.
#[test]
fn cat_4_no_retry_once_the_catalog_is_no_longer_wanted() {
    let mut h = hidden_choice();
    let id = catalog_request(&h);
    h.reply(id, 500, json!({}));
    h.command(Command::CancelSessionModelSelection);
    h.advance(60_000);
    assert_eq!(catalogs(&h), 1);
    assert!(!h.snapshot().has_requested_available_models);
}

// ---------------------------------------------------------------------------------------------
// CAT-5, CAT-6, CAT-7, ENV-9: one entry per person, fresh for five minutes
// ---------------------------------------------------------------------------------------------

fn other_catalog() -> Value {
    catalog_of(&[catalog_provider(
        "b-models",
        &[catalog_model("b1", &["low"])],
    )])
}

/// CAT-5: a different person gets a request of its own and sees only its own catalog;
/// returning to a person whose entry is still fresh emits no request and shows that person's
/// catalog again.
#[test]
fn cat_5_one_entry_per_person() {
    let mut h = Harness::visible_in_env();
    answer_catalog(&mut h);
    h.advance(1_000);
    person(&mut h, USER2);
    assert_eq!(catalogs(&h), 2);
    assert!(
        model_ids(&h).is_empty(),
        "another person's catalog is not shown"
    );
    answer_catalog_with(&mut h, other_catalog());
    assert_eq!(model_ids(&h), ["b-models::b1"]);
    h.advance(1_000);
    person(&mut h, USER);
    assert_eq!(catalogs(&h), 2, "USER's entry is fresh");
    assert_eq!(model_ids(&h), EXAMPLE_IDS);
    person(&mut h, USER2);
    assert_eq!(catalogs(&h), 2, "USER2's entry is fresh");
    assert_eq!(model_ids(&h), ["b-models::b1"]);
}

/// CAT-5: a person change while the first person's read is in flight emits the new person's
/// own request; the first person's answer never shows as the new person's catalog.
#[test]
fn cat_5_person_change_during_a_read() {
    let mut h = Harness::visible_in_env();
    let first = catalog_request(&h);
    person(&mut h, USER2);
    let second = catalog_request(&h);
    assert_ne!(first, second);
    h.reply(first, 200, catalog());
    assert!(model_ids(&h).is_empty(), "{}", h.transcript());
    h.reply(second, 200, other_catalog());
    assert_eq!(model_ids(&h), ["b-models::b1"]);
}

/// CAT-6, ENV-9: within five minutes of a successful load, further demand emits no request:
/// visibility flips, a selection, a selection change, Environment changes, and a second picker
/// (a model choice).
#[test]
fn cat_6_fresh_entry_serves_every_demand() {
    let mut h = Harness::visible_in_env();
    answer_catalog(&mut h);
    h.advance(10_000);
    h.visible(false);
    h.visible(true);
    h.answer_list(&[record(S1, AGENT, ENV, 0), record("s-2", AGENT, ENV, 5)]);
    assert!(h.current().is_some());
    h.requested(Some(S1));
    h.advance(50_000);
    h.env(Some(ENV2));
    h.env(Some(ENV));
    h.advance(100_000);
    h.command(Command::StartAgentSessionById {
        agent_id: AGENT2.into(),
        label: None,
    });
    let id = h.expect_pending("start-new-session", |c| {
        matches!(c, ApiCall::StartNewSession { .. })
    });
    h.reply(id, 400, model_required());
    assert!(h.snapshot().session_model_selection_request.is_some());
    h.advance(139_999);
    assert_eq!(h.now_ms(), 299_999);
    h.visible(false);
    h.visible(true);
    assert_eq!(catalogs(&h), 1, "{}", h.transcript());
    assert_eq!(model_ids(&h), EXAMPLE_IDS);
}

/// CAT-7, OI-10: the entry is fresh while younger than 300 000 ms: a demand at 299 999 ms after
/// the load emits nothing, one at 300 000 ms emits a new request; time alone emits none.
#[test]
fn cat_7_five_minute_boundary() {
    let mut h = Harness::visible_in_env();
    h.advance(5_000);
    answer_catalog(&mut h);
    h.advance(299_999);
    h.visible(false);
    h.visible(true);
    assert_eq!(catalogs(&h), 1, "age 299 999 ms is fresh");
    h.advance(1);
    assert_eq!(catalogs(&h), 1, "time alone is no demand");
    h.visible(false);
    h.visible(true);
    assert_eq!(catalogs(&h), 2, "age 300 000 ms is stale");
    // OI-10: the data held stays in use while the refresh runs.
    assert_eq!(model_ids(&h), EXAMPLE_IDS);
    assert!(h.snapshot().is_loading_available_models);
}

/// CAT-7, CAT-6: an Environment change is a demand too: it emits nothing while the entry is
/// fresh and a request once it is 300 000 ms old.
#[test]
fn cat_7_environment_change_after_five_minutes() {
    let mut h = Harness::visible_in_env();
    answer_catalog(&mut h);
    h.advance(299_999);
    h.env(Some(ENV2));
    assert_eq!(catalogs(&h), 1);
    h.advance(1);
    h.env(Some(ENV));
    assert_eq!(catalogs(&h), 2);
}

/// ENV-9, CAT-5: a change of Environment alone does not request the catalog again, and does not
/// drop the person's data.
#[test]
fn env_9_environment_change_keeps_the_catalog() {
    let mut h = Harness::visible_in_env();
    answer_catalog(&mut h);
    h.advance(1_000);
    h.env(Some(ENV2));
    h.env(None);
    h.env(Some(ENV2));
    assert_eq!(catalogs(&h), 1);
    assert_eq!(model_ids(&h), EXAMPLE_IDS);
    assert_eq!(h.snapshot().available_models_error, None);
}

/// ENV-9: an Environment change while the catalog read is in flight neither aborts it nor emits
/// another; its answer is used.
#[test]
fn env_9_environment_change_during_a_read() {
    let mut h = Harness::visible_in_env();
    let id = catalog_request(&h);
    h.env(Some(ENV2));
    assert!(!h.was_aborted(id));
    assert_eq!(catalogs(&h), 1);
    h.reply(id, 200, catalog());
    assert_eq!(model_ids(&h), EXAMPLE_IDS);
    assert_eq!(catalogs(&h), 1);
}

// ---------------------------------------------------------------------------------------------
// CAT-8, OI-10, FAIL-15: failures and retries
// ---------------------------------------------------------------------------------------------

/// CAT-8, OI-10: a failed read is retried after 1 s and then 2 s, three attempts in all; only the
/// third failure is reported, as availableModelsError with the fallback text when the error
/// has no message; no fourth attempt follows.
#[test]
fn cat_8_three_attempts_then_the_error() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[]);
    let id = catalog_request(&h);
    h.reply(id, 500, json!({}));
    assert_eq!(h.snapshot().available_models_error, None);
    assert!(h.snapshot().is_loading_available_models);
    h.advance(999);
    assert_eq!(catalogs(&h), 1);
    h.advance(1);
    assert_eq!(catalogs(&h), 2);
    let id = catalog_request(&h);
    h.reply(id, 502, json!({}));
    assert_eq!(h.snapshot().available_models_error, None);
    h.advance(1_999);
    assert_eq!(catalogs(&h), 2);
    h.advance(1);
    assert_eq!(catalogs(&h), 3);
    let id = catalog_request(&h);
    h.reply(id, 500, json!({}));
    let s = h.snapshot();
    assert_eq!(s.available_models_error.as_deref(), Some(FAILED));
    assert!(!s.is_loading_available_models);
    assert!(s.available_models.is_empty());
    h.advance(600_000);
    assert_eq!(catalogs(&h), 3);
}

/// CAT-8, OI-10: the error is the failure's message when it has one; no answer counts as a
/// failure as well; a later successful read clears the error.
#[test]
fn cat_8_error_message_and_recovery() {
    let mut h = Harness::visible_in_env();
    fail_three_times(&mut h, 503, json!({"detail": "Catalog offline."}));
    assert_eq!(
        h.snapshot().available_models_error.as_deref(),
        Some("Catalog offline.")
    );
    h.command(Command::RequestAvailableModels);
    assert_eq!(catalogs(&h), 4);
    answer_catalog(&mut h);
    assert_eq!(h.snapshot().available_models_error, None);
    assert_eq!(model_ids(&h), EXAMPLE_IDS);

    let mut h = Harness::visible_in_env();
    for delay in [1_000, 2_000, 0] {
        let id = catalog_request(&h);
        h.fail(id);
        h.advance(delay);
    }
    assert_eq!(catalogs(&h), 3);
    let error = h.snapshot().available_models_error.unwrap_or_default();
    assert!(!error.trim().is_empty());
}

/// CAT-8, OI-10, FAIL-15: when the refresh of a stale entry fails three times, the older data
/// stays in use and availableModelsError stays unset.
#[test]
fn cat_8_failure_with_older_data_keeps_it() {
    let mut h = ready_with_catalog();
    h.advance(300_000);
    h.command(Command::RequestAvailableModels);
    fail_three_times(&mut h, 500, json!({"detail": "Catalog offline."}));
    let s = h.snapshot();
    assert_eq!(catalogs(&h), 4);
    assert_eq!(s.available_models_error, None);
    assert_eq!(model_ids(&h), EXAMPLE_IDS);
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
    );
}

/// FAIL-15, OI-10: a final catalog failure changes neither activeSessionReadiness nor
/// activeRuntimeInteraction (nor admission), for a ready decision and for a terminal one.
#[test]
fn fail_15_catalog_failure_leaves_readiness_and_runtime_alone() {
    let mut talking = Harness::talking(S1);
    let mut blocked = Harness::ready(S1);
    let rid = blocked.runtime_request(S1);
    blocked.reply(rid, 200, runtime_terminal(Some("SUP-9")));
    for h in [&mut talking, &mut blocked] {
        let before = h.snapshot();
        fail_three_times(h, 500, json!({}));
        let after = h.snapshot();
        assert!(after.available_models_error.is_some());
        assert_eq!(
            after.active_session_readiness,
            before.active_session_readiness
        );
        assert_eq!(
            after.active_runtime_interaction,
            before.active_runtime_interaction
        );
        assert_eq!(after.composer_admission, before.composer_admission);
        assert_eq!(
            after.is_assistant_runtime_starting,
            before.is_assistant_runtime_starting
        );
        assert_eq!(after.session_notice, None);
        assert!(
            !h.events().iter().any(|e| matches!(e, Event::Notify(_))),
            "a catalog failure is not notified"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Hostile P12 answers through the engine
// ---------------------------------------------------------------------------------------------

fn hostile_catalogs() -> Vec<(&'static str, Vec<u8>)> {
    let as_bytes = |v: Value| v.to_string().into_bytes();
    let mut out: Vec<(&'static str, Vec<u8>)> = Vec::new();
    let mut v = catalog();
    v["schema_version"] = json!(2);
    out.push(("schema_version 2", as_bytes(v)));
    let mut v = catalog();
    v["schema_version"] = json!("1");
    out.push(("schema_version string", as_bytes(v)));
    let mut v = catalog();
    v["schema_version"] = json!(1.0);
    out.push(("schema_version 1.0", as_bytes(v)));
    let mut v = catalog();
    v.as_object_mut().unwrap().remove("schema_version");
    out.push(("schema_version missing", as_bytes(v)));
    let mut v = catalog();
    v["catalog_digest"] = json!(CATALOG_DIGEST.to_uppercase());
    out.push(("digest upper case", as_bytes(v)));
    let mut v = catalog();
    v["catalog_digest"] = json!("sha256:abc");
    out.push(("digest short", as_bytes(v)));
    let mut v = catalog();
    v["catalog_digest"] = json!(CATALOG_DIGEST.replace("sha256:", "md5:"));
    out.push(("digest prefix", as_bytes(v)));
    let mut v = catalog();
    let first = v["providers"][0].clone();
    v["providers"].as_array_mut().unwrap().push(first);
    out.push(("duplicate provider", as_bytes(v)));
    let mut v = catalog();
    let first = v["providers"][0]["models"][0].clone();
    v["providers"][0]["models"]
        .as_array_mut()
        .unwrap()
        .push(first);
    out.push(("duplicate model", as_bytes(v)));
    let mut v = catalog();
    v["providers"][0]["models"][0]["thinking_levels"] = json!(["low", "low"]);
    out.push(("duplicate level", as_bytes(v)));
    let mut v = catalog();
    v["providers"][0]["models"][0]["thinking_levels"] = json!(["turbo"]);
    out.push(("unknown level", as_bytes(v)));
    let mut v = catalog();
    v["providers"][0]["models"][0]["reasoning"] = json!(false);
    out.push(("levels without reasoning", as_bytes(v)));
    let mut v = catalog();
    v["providers"][0]["display_name"] = json!("x".repeat(5_000));
    out.push(("huge string", as_bytes(v)));
    let providers: Vec<Value> = (0..201)
        .map(|i| catalog_provider(&format!("p{i}"), &[catalog_model("m", &[])]))
        .collect();
    out.push(("201 providers", as_bytes(catalog_of(&providers))));
    let providers: Vec<Value> = (0..10)
        .map(|i| {
            let models: Vec<Value> = (0..201)
                .map(|j| catalog_model(&format!("m{j}"), &[]))
                .collect();
            catalog_provider(&format!("p{i}"), &models)
        })
        .collect();
    out.push(("2010 models", as_bytes(catalog_of(&providers))));
    let mut v = catalog();
    v.as_object_mut().unwrap().remove("providers");
    out.push(("providers missing", as_bytes(v)));
    let mut v = catalog();
    v["providers"] = Value::Null;
    out.push(("providers null", as_bytes(v)));
    let mut v = catalog();
    v["providers"] = json!({"acme-cloud": {}});
    out.push(("providers object", as_bytes(v)));
    out.push(("a list", as_bytes(json!([catalog()]))));
    out.push(("html", b"<html><body>Bad gateway</body></html>".to_vec()));
    out.push(("empty", Vec::new()));
    out.push((
        "deep nesting",
        format!(
            "{{\"schema_version\":1,\"x\":{}{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        )
        .into_bytes(),
    ));
    out
}

/// CAT-1, CAT-8, OI-10, FAIL-15: a hostile P12 answer (wrong schema_version, bad digest,
/// duplicate ids or levels, hostile sizes, no providers, not an object, not JSON, deep nesting)
/// fails the read like any failure: retried, then availableModelsError with the strict parser's
/// message, empty lists, readiness untouched, no panic.
#[test]
fn cat_hostile_payloads_set_the_error_without_panic() {
    for (name, bytes) in hostile_catalogs() {
        let mut h = Harness::ready(S1);
        let readiness = h.snapshot().active_session_readiness;
        raw_three_times(&mut h, &bytes);
        let s = h.snapshot();
        assert_eq!(catalogs(&h), 3, "{name}: retried like any failure");
        let error = s
            .available_models_error
            .clone()
            .unwrap_or_else(|| panic!("{name}: no availableModelsError"));
        assert!(
            error.starts_with(INVALID) || error == NO_PROVIDERS,
            "{name}: {error}"
        );
        assert!(error.len() < 400, "{name}: values are not quoted: {error}");
        assert!(s.available_models.is_empty(), "{name}");
        assert!(s.available_providers.is_empty(), "{name}");
        assert_eq!(s.selected_model_value, None, "{name}");
        assert_eq!(s.active_session_readiness, readiness, "{name}");
        assert_eq!(h.count(is_patch), 0, "{name}");
    }
}

/// CAT-8, OI-10: a hostile refresh of a stale entry keeps the older data and sets no error.
#[test]
fn cat_hostile_refresh_keeps_older_data() {
    let mut h = ready_with_catalog();
    h.advance(300_000);
    h.command(Command::RequestAvailableModels);
    let mut v = catalog();
    v["schema_version"] = json!(2);
    raw_three_times(&mut h, v.to_string().as_bytes());
    assert_eq!(h.snapshot().available_models_error, None);
    assert_eq!(model_ids(&h), EXAMPLE_IDS);
}

// ---------------------------------------------------------------------------------------------
// CAT-9, CAT-10, CAT-11: sharing, invalidation, reading at once
// ---------------------------------------------------------------------------------------------

/// CAT-9, OI-10: the composer's picker, the "choose a model" state and requestAvailableModels()
/// all share the one entry: simultaneous demand emits a single request, and its result shows in
/// every picker (the lists and the choice's first offer).
#[test]
fn cat_9_simultaneous_demand_shares_one_request() {
    let mut h = hidden_choice();
    assert_eq!(catalogs(&h), 1);
    h.visible(true);
    h.command(Command::RequestAvailableModels);
    h.command(Command::RequestAvailableModels);
    assert_eq!(catalogs(&h), 1);
    answer_catalog(&mut h);
    assert_eq!(model_ids(&h), EXAMPLE_IDS);
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
    );
    assert_eq!(catalogs(&h), 1);
}

/// CAT-10: invalidateModelProviderCatalog() drops the entry, so it is not used again: a new
/// request goes out at once although the entry was fresh, and the dropped data is not shown
/// meanwhile.
#[test]
fn cat_10_invalidate_reads_again_at_once() {
    let mut h = Harness::visible_in_env();
    answer_catalog(&mut h);
    h.advance(10_000);
    h.command(Command::InvalidateModelProviderCatalog);
    assert_eq!(catalogs(&h), 2);
    assert!(
        model_ids(&h).is_empty(),
        "a dropped entry is not used again"
    );
    answer_catalog_with(&mut h, other_catalog());
    assert_eq!(model_ids(&h), ["b-models::b1"]);
}

/// CAT-10: the entries of every person are dropped: returning to another person whose entry
/// was fresh reads again.
#[test]
fn cat_10_invalidate_drops_every_person() {
    let mut h = Harness::visible_in_env();
    answer_catalog(&mut h);
    person(&mut h, USER2);
    answer_catalog_with(&mut h, other_catalog());
    assert_eq!(catalogs(&h), 2);
    h.command(Command::InvalidateModelProviderCatalog);
    assert_eq!(catalogs(&h), 3, "USER2's picker is mounted");
    answer_catalog_with(&mut h, other_catalog());
    h.advance(1_000);
    person(&mut h, USER);
    assert_eq!(catalogs(&h), 4, "USER's dropped entry is not used");
    assert!(model_ids(&h).is_empty());
}

/// CAT-10: while no picker is mounted (hidden, no choice) invalidation emits nothing; the
/// dropped entry is read again as soon as the chat is visible, within five minutes. With a model
/// choice pending (a mounted picker) it reads at once although the chat is hidden.
#[test]
fn cat_10_invalidate_while_hidden_reads_on_the_next_demand() {
    let mut h = Harness::visible_in_env();
    answer_catalog(&mut h);
    h.visible(false);
    h.command(Command::InvalidateModelProviderCatalog);
    assert_eq!(catalogs(&h), 1);
    h.advance(1_000);
    h.visible(true);
    assert_eq!(catalogs(&h), 2);

    // A pending model choice mounts a picker while hidden: invalidation reads at once.
    let mut h = hidden_choice();
    answer_catalog(&mut h);
    h.advance(1_000);
    h.command(Command::InvalidateModelProviderCatalog);
    assert_eq!(catalogs(&h), 2);
    assert!(model_ids(&h).is_empty());
}

/// CAT-10, OI-10: invalidation discards a read still in flight: a new request goes out, and the
/// answer of the discarded one changes nothing.
#[test]
fn cat_10_invalidate_discards_the_read_in_flight() {
    let mut h = Harness::visible_in_env();
    let old = catalog_request(&h);
    h.command(Command::InvalidateModelProviderCatalog);
    let new = catalog_request(&h);
    assert_ne!(old, new);
    assert_eq!(catalogs(&h), 2);
    h.reply(old, 200, catalog());
    assert!(model_ids(&h).is_empty());
    h.reply(new, 200, other_catalog());
    assert_eq!(model_ids(&h), ["b-models::b1"]);
}

/// CAT-11: requestAvailableModels() emits a request at once although the entry is fresh.
#[test]
fn cat_11_request_reads_at_once_even_when_fresh() {
    let mut h = Harness::visible_in_env();
    answer_catalog(&mut h);
    h.advance(1_000);
    h.command(Command::RequestAvailableModels);
    assert_eq!(catalogs(&h), 2);
    // OI-10: the data held stays in use while the refresh runs.
    assert_eq!(model_ids(&h), EXAMPLE_IDS);
    answer_catalog_with(&mut h, other_catalog());
    assert_eq!(model_ids(&h), ["b-models::b1"]);
}

/// CAT-11, OI-10: a demand while a read is in flight joins it.
#[test]
fn cat_11_request_joins_a_read_in_flight() {
    let mut h = Harness::visible_in_env();
    let id = catalog_request(&h);
    h.command(Command::RequestAvailableModels);
    assert_eq!(catalogs(&h), 1);
    assert!(!h.was_aborted(id));
}

/// CAT-11: the read at once applies while the catalog is wanted: hidden with no choice it emits
/// nothing; hidden with a choice pending it reads even though the entry is fresh.
#[test]
fn cat_11_request_only_while_wanted() {
    let mut h = hidden();
    h.command(Command::RequestAvailableModels);
    assert_eq!(catalogs(&h), 0);

    let mut h = hidden_choice();
    answer_catalog(&mut h);
    h.advance(1_000);
    h.command(Command::RequestAvailableModels);
    assert_eq!(catalogs(&h), 2);
}

// ---------------------------------------------------------------------------------------------
// CAT-12, CAT-13, CAT-14, OI-22: reconciliation with the stored model
// ---------------------------------------------------------------------------------------------

/// CAT-12, OI-22: the stored provider and model are applied to the picker, but not the stored
/// llm_thinking: the picker takes the model's default level (medium) instead of the stored high;
/// no PATCH.
#[test]
fn cat_12_stored_model_applied_stored_level_not() {
    let mut h = ready_with(with_model(
        record(S1, AGENT, ENV, 0),
        "team-models",
        "tm-1",
        Some("high"),
    ));
    answer_catalog(&mut h);
    assert_eq!(
        picker(&h),
        values("team-models", "team-models::tm-1", Some("off"))
    );
    let mut h = ready_with(with_model(
        record(S1, AGENT, ENV, 0),
        "acme-cloud",
        "acme-large",
        Some("high"),
    ));
    answer_catalog(&mut h);
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
    );
    assert_eq!(h.count(is_patch), 0);
}

/// CAT-12, OI-22: once applied, the same session, stored choice and catalog content do not
/// re-apply: a reload whose content is identical (only the digest and names differ) leaves an
/// edit already made in the picker, and so does a detail refresh storing the same choice in
/// other letter case.
#[test]
fn cat_12_same_combination_does_not_overwrite_an_edit() {
    let mut h = ready_with_catalog();
    h.command(Command::SetSelectedModelValue {
        value: Some("team-models::tm-1".into()),
    });
    let edited = values("team-models", "team-models::tm-1", Some("off"));
    assert_eq!(picker(&h), edited);
    h.command(Command::RequestAvailableModels);
    let mut reload = catalog();
    reload["catalog_digest"] = json!(format!("sha256:{}", "0".repeat(64)));
    reload["providers"][0]["display_name"] = json!("Acme Cloud (renamed)");
    reload["providers"][0]["models"][0]["display_name"] = json!("Acme L");
    answer_catalog_with(&mut h, reload);
    assert_eq!(picker(&h), edited, "{}", h.transcript());
    h.command(Command::RefreshSessionDetail);
    h.answer_detail(
        S1,
        with_model(record(S1, AGENT, ENV, 0), "ACME-Cloud", "Acme-Large", None),
    );
    assert_eq!(picker(&h), edited);
    assert_eq!(h.count(is_patch), 1, "only the edit's own PATCH");
    assert!(missing_notices(&h).is_empty());
}

/// CAT-12: a new combination is applied: a detail refresh storing another model moves the
/// picker to it, with no PATCH.
#[test]
fn cat_12_new_stored_choice_is_applied() {
    let mut h = ready_with_catalog();
    h.command(Command::RefreshSessionDetail);
    h.answer_detail(
        S1,
        with_model(record(S1, AGENT, ENV, 0), "team-models", "tm-1", None),
    );
    assert_eq!(
        picker(&h),
        values("team-models", "team-models::tm-1", Some("off"))
    );
    assert_eq!(h.count(is_patch), 0);
}

fn missing_case(provider: &str, model: &str, cat: Value) -> Harness {
    let mut h = ready_with(with_model(record(S1, AGENT, ENV, 0), provider, model, None));
    answer_catalog_with(&mut h, cat);
    h.advance(5_000);
    assert_eq!(
        h.count(is_patch),
        0,
        "{provider}/{model}: shown only, no PATCH"
    );
    h
}

/// CAT-13: a stored model the catalog lacks falls back to the first model of the session's
/// provider, or to the first model of the first provider when the provider is unknown or lists
/// no model; the replacement is only shown, no PATCH is emitted.
#[test]
fn cat_13_missing_model_fallbacks_without_patch() {
    let h = missing_case("acme-cloud", "acme-xl", catalog());
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
    );
    let h = missing_case("team-models", "retired", catalog());
    assert_eq!(
        picker(&h),
        values("team-models", "team-models::tm-1", Some("off"))
    );
    let h = missing_case("gone", "x", catalog());
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
    );
    let cat = catalog_of(&[
        catalog_provider("p1", &[catalog_model("m1", &["high"])]),
        catalog_provider("empty", &[]),
    ]);
    let h = missing_case("empty", "x", cat);
    assert_eq!(picker(&h), values("p1", "p1::m1", Some("high")));
    // The record keeps its stored model.
    let record = h.snapshot().active_session_detail.unwrap().record.unwrap();
    assert_eq!(record.value()["llm_provider"], "empty");
    assert_eq!(record.value()["llm_model"], "x");
}

/// CAT-14, OI-6, OI-22: the fallback is notified once, variant info, title "Session model is not
/// available", description naming the stored provider and model; an identical reload does not
/// notify again, a catalog with other content does.
#[test]
fn cat_14_missing_model_notified_once_per_combination() {
    let h = missing_case("acme-cloud", "acme-xl", catalog());
    let mut h = h;
    let n = missing_notices(&h);
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].variant, NoticeVariant::Info);
    assert_eq!(
        n[0].description.as_deref(),
        Some(format!("Provider: acme-cloud · Model: acme-xl · {MISSING_TAIL}").as_str())
    );
    h.command(Command::RequestAvailableModels);
    answer_catalog(&mut h);
    h.visible(false);
    h.visible(true);
    assert_eq!(missing_notices(&h).len(), 1, "{}", h.transcript());
    h.command(Command::RequestAvailableModels);
    let mut changed = catalog();
    changed["providers"]
        .as_array_mut()
        .unwrap()
        .push(catalog_provider("new-p", &[catalog_model("n1", &[])]));
    answer_catalog_with(&mut h, changed);
    assert_eq!(missing_notices(&h).len(), 2);
    assert_eq!(h.count(is_patch), 0);
    assert!(h.notices().iter().all(|n| n.title == MISSING_TITLE));
}

/// CAT-14, OI-6: parts without a value are left out of the description.
#[test]
fn cat_14_description_leaves_out_empty_parts() {
    let h = missing_case("", "acme-xl", catalog());
    let n = missing_notices(&h);
    assert_eq!(n.len(), 1);
    assert_eq!(
        n[0].description.as_deref(),
        Some(format!("Model: acme-xl · {MISSING_TAIL}").as_str())
    );
}

/// CAT-14: a stored model the catalog has is not notified.
#[test]
fn cat_14_found_model_is_not_notified() {
    let h = ready_with_catalog();
    assert!(h.notices().is_empty());
}

// ---------------------------------------------------------------------------------------------
// CAT-15 to CAT-19, OI-22: picker edits on a ready session
// ---------------------------------------------------------------------------------------------

/// CAT-15, OI-22: each edit of provider, model or thinking level on a ready session emits
/// PATCH /api/v1/agent-sessions/{uid}/ with exactly llm_provider, llm_model and llm_thinking,
/// the last "" when the model has no level.
#[test]
fn cat_15_edits_patch_all_three_keys() {
    let mut h = ready_with_catalog();
    let edits: [(Command, Value); 4] = [
        (
            Command::SetSelectedProviderValue {
                value: Some("team-models".into()),
            },
            json!({"llm_provider": "team-models", "llm_model": "tm-1", "llm_thinking": "off"}),
        ),
        (
            Command::SetSelectedModelValue {
                value: Some("acme-cloud::acme-small".into()),
            },
            json!({"llm_provider": "acme-cloud", "llm_model": "acme-small", "llm_thinking": ""}),
        ),
        (
            Command::SetSelectedModelValue {
                value: Some("acme-cloud::acme-large".into()),
            },
            json!({"llm_provider": "acme-cloud", "llm_model": "acme-large", "llm_thinking": "medium"}),
        ),
        (
            Command::SetSelectedReasoningEffortValue {
                value: Some("high".into()),
            },
            json!({"llm_provider": "acme-cloud", "llm_model": "acme-large", "llm_thinking": "high"}),
        ),
    ];
    for (edit, expected) in edits {
        let mark = h.mark();
        h.command(edit.clone());
        let sent: Vec<&Sent> = h
            .sent_since(mark)
            .iter()
            .filter(|s| is_patch(&s.call))
            .collect();
        assert_eq!(sent.len(), 1, "{edit:?}");
        let r = &sent[0].request;
        assert_eq!(r.method.as_str(), "PATCH");
        assert_eq!(r.target, Target::Platform);
        assert_eq!(r.path, "/api/v1/agent-sessions/s-1/");
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(json_body(sent[0]), expected, "{edit:?}");
        let id = sent[0].id;
        let stored = with_model(
            record(S1, AGENT, ENV, 0),
            expected["llm_provider"].as_str().unwrap(),
            expected["llm_model"].as_str().unwrap(),
            expected["llm_thinking"].as_str(),
        );
        h.reply(id, 200, stored);
    }
    assert_eq!(h.count(is_patch), 4);
}

/// CAT-15: an edit that changes nothing emits no PATCH.
#[test]
fn cat_15_unchanged_edit_emits_nothing() {
    let mut h = ready_with_catalog();
    h.command(Command::SetSelectedModelValue {
        value: Some("acme-cloud::acme-large".into()),
    });
    h.command(Command::SetSelectedReasoningEffortValue {
        value: Some("medium".into()),
    });
    assert_eq!(h.count(is_patch), 0);
}

/// CAT-15, OI-22: on a session that is not ready (detail still loading, or the chat hidden) an
/// edit emits no PATCH and leaves the picker unchanged.
#[test]
fn cat_15_not_ready_session_no_patch_picker_unchanged() {
    let mut h = Harness::selected(S1);
    answer_catalog(&mut h);
    let before = picker(&h);
    h.command(Command::SetSelectedProviderValue {
        value: Some("team-models".into()),
    });
    h.command(Command::SetSelectedModelValue {
        value: Some("acme-cloud::acme-small".into()),
    });
    assert_eq!(picker(&h), before);
    assert_eq!(h.count(is_patch), 0);

    let mut h = ready_with_catalog();
    h.visible(false);
    assert_ne!(h.readiness(), ReadinessStatus::Ready);
    let before = picker(&h);
    h.command(Command::SetSelectedProviderValue {
        value: Some("team-models".into()),
    });
    assert_eq!(picker(&h), before);
    assert_eq!(h.count(is_patch), 0);
}

/// CAT-16: the picker shows the new value at once, before the PATCH answers, and
/// isUpdatingSessionModel is true until it does.
#[test]
fn cat_16_picker_shows_the_edit_before_the_answer() {
    let mut h = ready_with_catalog();
    h.command(Command::SetSelectedModelValue {
        value: Some("team-models::tm-1".into()),
    });
    let s = h.snapshot();
    assert_eq!(s.selected_model_value.as_deref(), Some("team-models::tm-1"));
    assert_eq!(s.selected_provider_value.as_deref(), Some("team-models"));
    assert_eq!(s.selected_reasoning_effort_value.as_deref(), Some("off"));
    let efforts: Vec<String> = s
        .available_reasoning_efforts
        .into_iter()
        .map(|e| e.value)
        .collect();
    assert_eq!(efforts, ["off", "high"]);
    assert!(s.is_updating_session_model);
    let id = patch_request(&h);
    h.reply(
        id,
        200,
        with_model(
            record(S1, AGENT, ENV, 0),
            "team-models",
            "tm-1",
            Some("off"),
        ),
    );
    assert!(!h.snapshot().is_updating_session_model);
    assert_eq!(
        picker(&h),
        values("team-models", "team-models::tm-1", Some("off"))
    );
}

/// CAT-17, OI-22: a refused PATCH restores the previous values and sets sessionNotice to
/// "Failed to update session model: {message}"; the record keeps its stored model; no notify.
#[test]
fn cat_17_refused_patch_restores_and_sets_the_notice() {
    let refusals = [
        (
            409,
            json!({"detail": "Model selection cannot change while a turn is working or persisting.", "error_code": "agent_session_selection_runtime_active"}),
        ),
        (
            400,
            json!({"llm_model": ["This model is not in the platform's model catalog."]}),
        ),
    ];
    for (status, body) in refusals {
        let mut h = ready_with_catalog();
        let record_before = h.snapshot().active_session_detail.unwrap().record;
        h.command(Command::SetSelectedModelValue {
            value: Some("team-models::tm-1".into()),
        });
        let id = patch_request(&h);
        h.reply(id, status, body.clone());
        let message = error_message(body.to_string().as_bytes()).unwrap();
        let s = h.snapshot();
        assert_eq!(
            picker(&h),
            values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
        );
        assert_eq!(
            s.session_notice,
            Some(format!("Failed to update session model: {message}"))
        );
        assert!(!s.is_updating_session_model);
        assert_eq!(s.active_session_detail.unwrap().record, record_before);
        assert!(h.notices().is_empty());
        assert_eq!(h.count(is_patch), 1, "a refusal is not retried");
    }
}

/// CAT-17, OI-22: a refusal without a message gives "Failed to update session model."
#[test]
fn cat_17_refusal_without_message() {
    let mut h = ready_with_catalog();
    h.command(Command::SetSelectedReasoningEffortValue {
        value: Some("low".into()),
    });
    let id = patch_request(&h);
    h.reply_raw(id, 500, Some("text/html"), b"<html>oops</html>", None);
    assert_eq!(
        h.snapshot().session_notice.as_deref(),
        Some("Failed to update session model.")
    );
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
    );
}

/// CAT-17 (P3): a 200 whose body is not a JSON object is a failure too: the picker is restored
/// and the notice set.
#[test]
fn cat_17_non_object_success_is_a_failure() {
    let mut h = ready_with_catalog();
    h.command(Command::SetSelectedProviderValue {
        value: Some("team-models".into()),
    });
    let id = patch_request(&h);
    h.reply(id, 200, json!(["not", "a", "record"]));
    let s = h.snapshot();
    assert!(
        s.session_notice
            .as_deref()
            .is_some_and(|n| n.starts_with("Failed to update session model")),
        "{:?}",
        s.session_notice
    );
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
    );
    assert_eq!(
        s.active_session_detail.unwrap().record.unwrap().value()["llm_model"],
        "acme-large"
    );
}

/// CAT-18, OI-18: an accepted PATCH replaces the canonical detail payload with the stored
/// record, and later message requests carry it as `session` (with the new level in runConfig).
#[test]
fn cat_18_accepted_patch_updates_the_payload_sent_later() {
    let mut h = Harness::talking(S1);
    answer_catalog(&mut h);
    h.command(Command::SetSelectedModelValue {
        value: Some("team-models::tm-1".into()),
    });
    let id = patch_request(&h);
    let mut stored = with_model(
        record(S1, AGENT, ENV, 0),
        "team-models",
        "tm-1",
        Some("off"),
    );
    stored["catalog_digest"] = json!(CATALOG_DIGEST);
    h.reply(id, 200, stored.clone());
    assert_eq!(
        h.snapshot().active_session_detail.unwrap().record,
        Some(stored.clone().into())
    );
    h.send("Which model now?");
    let rid = h.runtime_request(S1);
    h.reply(rid, 200, runtime_ready(S1));
    let mid = h.message_request(S1);
    let b = body_of(&h, mid);
    assert_eq!(b["session"], stored);
    assert_eq!(b["runConfig"], json!({"reasoning_effort": "off"}));
}

/// CAT-19, OI-22: a newer edit aborts the PATCH still in flight; the aborted PATCH's answer,
/// success or refusal, changes neither the picker, the detail payload nor sessionNotice; the
/// newer PATCH's answer applies.
#[test]
fn cat_19_newer_patch_aborts_the_older() {
    for late in [
        (
            200,
            with_model(
                record(S1, AGENT, ENV, 0),
                "team-models",
                "tm-1",
                Some("off"),
            ),
        ),
        (409, json!({"detail": "Busy."})),
    ] {
        let mut h = ready_with_catalog();
        let record_before = h.snapshot().active_session_detail.unwrap().record;
        h.command(Command::SetSelectedModelValue {
            value: Some("team-models::tm-1".into()),
        });
        let first = patch_request(&h);
        h.command(Command::SetSelectedModelValue {
            value: Some("acme-cloud::acme-small".into()),
        });
        let second = patch_request(&h);
        assert_ne!(first, second);
        assert!(h.was_aborted(first));
        assert_eq!(
            body_of(&h, second),
            json!({"llm_provider": "acme-cloud", "llm_model": "acme-small", "llm_thinking": ""})
        );
        let edited = values("acme-cloud", "acme-cloud::acme-small", None);
        h.reply(first, late.0, late.1.clone());
        let s = h.snapshot();
        assert_eq!(picker(&h), edited, "late {}", late.0);
        assert_eq!(s.active_session_detail.unwrap().record, record_before);
        assert_eq!(s.session_notice, None);
        assert!(s.is_updating_session_model);
        let stored = with_model(
            record(S1, AGENT, ENV, 0),
            "acme-cloud",
            "acme-small",
            Some(""),
        );
        h.reply(second, 200, stored.clone());
        assert_eq!(picker(&h), edited);
        assert_eq!(
            h.snapshot().active_session_detail.unwrap().record,
            Some(stored.into())
        );
        assert_eq!(h.count(is_patch), 2);
    }
}

// ---------------------------------------------------------------------------------------------
// Transcript
// ---------------------------------------------------------------------------------------------

/// CAT-15, CAT-16, CAT-17: an edit shown at once, its PATCH refused (409), the picker restored
/// and the session notice set.
#[test]
fn cat_transcript_refused_patch() {
    let mut h = ready_with_catalog();
    h.command(Command::SetSelectedModelValue {
        value: Some("team-models::tm-1".into()),
    });
    let id = patch_request(&h);
    h.reply(
        id,
        409,
        json!({"detail": "Model selection cannot change while a turn is working or persisting.", "error_code": "agent_session_selection_runtime_active"}),
    );
    insta::assert_snapshot!(h.transcript());
}

/// CAT-11: requestAvailableModels() while a retry waits reads at once, without waiting for the
/// retry's delay.
#[test]
fn cat_11_request_during_a_retry_wait_reads_at_once() {
    let mut h = Harness::visible_in_env();
    let id = catalog_request(&h);
    h.reply(id, 500, json!({}));
    h.advance(100);
    h.command(Command::RequestAvailableModels);
    assert_eq!(catalogs(&h), 2);
    answer_catalog(&mut h);
    h.advance(5_000);
    assert_eq!(catalogs(&h), 2);
    assert_eq!(model_ids(&h), EXAMPLE_IDS);
}

/// CAT-15, MOD-19: an edit the catalog cannot take (a level the model does not offer, a model the
/// catalog lacks) changes nothing and emits no PATCH.
#[test]
fn cat_15_edit_outside_the_catalog_changes_nothing() {
    let mut h = ready_with_catalog();
    let before = picker(&h);
    h.command(Command::SetSelectedReasoningEffortValue {
        value: Some("max".into()),
    });
    h.command(Command::SetSelectedModelValue {
        value: Some("acme-cloud::acme-xl".into()),
    });
    h.command(Command::SetSelectedModelValue {
        value: Some("not-a-model-id".into()),
    });
    assert_eq!(picker(&h), before);
    assert_eq!(h.count(is_patch), 0);
}

/// CAT-17, CAT-19, OI-22: when the newer of two PATCHes is refused (the older one aborted, so
/// never stored), the picker follows the session record held before it: the stored
/// acme-cloud / acme-large, not the aborted edit's team-models / tm-1.
#[test]
fn cat_17_19_refusal_after_an_aborted_patch_follows_the_record() {
    let mut h = ready_with_catalog();
    h.command(Command::SetSelectedModelValue {
        value: Some("team-models::tm-1".into()),
    });
    let first = patch_request(&h);
    h.command(Command::SetSelectedModelValue {
        value: Some("acme-cloud::acme-small".into()),
    });
    assert!(h.was_aborted(first));
    let second = patch_request(&h);
    h.reply(second, 409, json!({"detail": "Busy."}));
    let record = h.snapshot().active_session_detail.unwrap().record.unwrap();
    assert_eq!(record.value()["llm_model"], "acme-large");
    assert_eq!(
        h.snapshot().session_notice.as_deref(),
        Some("Failed to update session model: Busy.")
    );
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
    );
}

/// RU-26: `setSelectedProviderValue(p)` keeps the current model when `p` lists it, else takes
/// `p`'s first model; the thinking level follows OI-22; the session is PATCHed with all three
/// fields, as for a model change. Choosing the provider already shown changes nothing and sends
/// nothing.
#[test]
fn ru_26_a_provider_keeps_the_current_model_when_it_lists_it() {
    let mut h = Harness::ready(S1);
    let body = catalog_of(&[
        catalog_provider(
            "acme-cloud",
            &[catalog_model("acme-large", &["low", "medium", "high"])],
        ),
        catalog_provider(
            "mirror",
            &[
                catalog_model("mirror-first", &[]),
                catalog_model("acme-large", &["medium"]),
            ],
        ),
        catalog_provider("other", &[catalog_model("other-1", &["high"])]),
    ]);
    answer_catalog_with(&mut h, body);
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
    );

    // `mirror` lists acme-large (not first): it is kept, with the level it offers.
    h.command(Command::SetSelectedProviderValue {
        value: Some("mirror".into()),
    });
    assert_eq!(
        picker(&h),
        values("mirror", "mirror::acme-large", Some("medium"))
    );
    let id = patch_request(&h);
    assert_eq!(
        body_of(&h, id),
        json!({"llm_provider": "mirror", "llm_model": "acme-large", "llm_thinking": "medium"})
    );
    let stored = with_model(
        record(S1, AGENT, ENV, 0),
        "mirror",
        "acme-large",
        Some("medium"),
    );
    h.reply(id, 200, stored);

    // The provider shown again: nothing changes, no PATCH.
    let mark = h.mark();
    h.command(Command::SetSelectedProviderValue {
        value: Some("mirror".into()),
    });
    assert!(h.sent_since(mark).iter().all(|s| !is_patch(&s.call)));

    // `other` does not list it: its first model, at that model's default level.
    h.command(Command::SetSelectedProviderValue {
        value: Some("other".into()),
    });
    assert_eq!(picker(&h), values("other", "other::other-1", Some("high")));
    let id = patch_request(&h);
    assert_eq!(
        body_of(&h, id),
        json!({"llm_provider": "other", "llm_model": "other-1", "llm_thinking": "high"})
    );
}

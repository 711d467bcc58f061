#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The model picker with a local source (ADR 099, adr-notes section 5: "the first message of a
//! new local conversation runs on the runtime's configured model and the picker applies from
//! the next"; `platform-api.md` section 8; issue 14, `docs/local-agents.md`): the catalog from
//! `GET /api/chat/model-providers` behind the configured option `local::configured`, the model
//! held for the conversation shown from `GET /api/chat/session-model`, and a person's choice
//! `PUT` for a conversation the runtime knows, or kept for a new one until it does.

use engine_core::api::local::LocalRoute;
use engine_core::{ApiCall, Command, Method, NoticeVariant};
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::fixtures::{answer, catalog};
use spec_tests::local::*;

fn session_model(uid: &str) -> LocalRoute {
    LocalRoute::SessionModel {
        session_uid: uid.to_owned(),
    }
}

fn is_put(call: &ApiCall) -> bool {
    matches!(
        call,
        ApiCall::Local {
            route: LocalRoute::SetSessionModel { .. }
        }
    )
}

fn held(uid: &str, provider: &str, model: &str, level: Option<&str>) -> Value {
    json!({"sessionUid": uid, "model": {"provider": provider, "model": model, "thinkingLevel": level}})
}

/// The picker's three values as the snapshot shows them.
fn picker(h: &Harness) -> (Option<String>, Option<String>, Option<String>) {
    let s = h.snapshot();
    (
        s.selected_provider_value,
        s.selected_model_value,
        s.selected_reasoning_effort_value,
    )
}

fn values(
    provider: &str,
    model: &str,
    level: Option<&str>,
) -> (Option<String>, Option<String>, Option<String>) {
    (
        Some(provider.to_owned()),
        Some(format!("{provider}::{model}")),
        level.map(str::to_owned),
    )
}

fn choose_model(h: &mut Harness, id: &str) {
    h.command(Command::SetSelectedModelValue {
        value: Some(id.to_owned()),
    });
}

fn choose_level(h: &mut Harness, level: &str) {
    h.command(Command::SetSelectedReasoningEffortValue {
        value: Some(level.to_owned()),
    });
}

/// The catalog answered with the P12 example.
fn with_catalog(mut h: Harness) -> Harness {
    let id = pending(&h, LocalRoute::ModelProviders);
    h.reply(id, 200, catalog());
    h
}

/// `talking(uid)` with the catalog read and the runtime holding acme-large at `high`.
fn holding(uid: &str) -> Harness {
    let mut h = with_catalog(talking(uid));
    let id = pending(&h, session_model(uid));
    h.reply(id, 200, held(uid, "acme-cloud", "acme-large", Some("high")));
    h
}

fn put_body(h: &Harness) -> (spec_tests::Sent, Value) {
    let id = h.expect_pending("a session-model PUT", is_put);
    let sent = h.request(id).clone();
    let body = serde_json::from_slice(sent.request.body.as_ref().unwrap()).unwrap();
    (sent, body)
}

/// `platform-api.md` section 8, adr-notes 5: the catalog is `GET
/// /api/chat/model-providers` (P12 shape), read once the chat is visible and the runtime ready;
/// the picker offers "Local Agent" and "Configured by the local Agent" (`local::configured`, no
/// levels) first, then the catalog's providers and models; it is not read again on its own, but
/// on `requestAvailableModels()`. A failed read shows no error: the configured option alone.
#[test]
fn adr_099_the_catalog_behind_the_configured_option() {
    let mut h = showing("local-2");
    let id = pending(&h, LocalRoute::ModelProviders);
    let r = &h.request(id).request;
    assert_eq!(
        (r.method, r.url().as_str(), r.header("Authorization")),
        (
            Method::Get,
            "http://127.0.0.1:8787/api/chat/model-providers",
            None
        )
    );
    let s = h.snapshot();
    assert!(s.is_loading_available_models && s.has_requested_available_models);
    let ids: Vec<_> = s.available_models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["local::configured"]);
    let configured = &s.available_models[0];
    assert_eq!(
        (
            configured.provider.as_str(),
            configured.model.as_str(),
            configured.label.as_str(),
            configured.selectable,
            configured.reasoning_options.len()
        ),
        (
            "local",
            "configured",
            "Configured by the local Agent",
            true,
            0
        )
    );
    h.reply(id, 200, catalog());
    let s = h.snapshot();
    assert!(!s.is_loading_available_models);
    let ids: Vec<_> = s.available_models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "local::configured",
            "acme-cloud::acme-large",
            "acme-cloud::acme-small",
            "team-models::tm-1"
        ]
    );
    let providers: Vec<_> = s
        .available_providers
        .iter()
        .map(|p| (p.label.as_str(), p.value.as_str()))
        .collect();
    assert_eq!(
        providers,
        [
            ("Local Agent", "local"),
            ("Acme Cloud", "acme-cloud"),
            ("Team Models", "team-models")
        ]
    );
    assert_eq!(s.available_models_error, None);
    assert_eq!(s.session_model_selection_request, None);
    // Not read again on its own; again on request.
    let mark = h.mark();
    h.advance(600_000);
    assert!(
        h.sent_since(mark)
            .iter()
            .all(|s| !is_local(&s.call, &LocalRoute::ModelProviders))
    );
    h.command(Command::RequestAvailableModels);
    let again = pending(&h, LocalRoute::ModelProviders);
    h.reply(again, 500, json!({"detail": "Catalog offline."}));
    let s = h.snapshot();
    assert_eq!(s.available_models.len(), 4, "older data stays in use");
    assert_eq!(s.available_models_error, None);

    // A first read that fails: the configured option alone, no error.
    let mut h = showing("local-2");
    let id = pending(&h, LocalRoute::ModelProviders);
    h.reply(id, 500, json!({"detail": "Catalog offline."}));
    let s = h.snapshot();
    let ids: Vec<_> = s.available_models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["local::configured"]);
    assert_eq!(s.available_models_error, None);
    assert!(h.notices().is_empty(), "{:?}", h.notices());
}

/// `platform-api.md` section 8: the model the runtime holds for the conversation shown is `GET
/// /api/chat/session-model?sessionUid=...`; the picker shows it (provider, `"{provider}::{model}"`,
/// level, and that model's levels from the catalog); a conversation it holds none for shows
/// the configured option. It is read again after every turn, never while one runs, and for
/// every conversation shown.
#[test]
fn adr_099_the_model_held_for_the_conversation_shown() {
    let mut h = with_catalog(talking("local-2"));
    let id = pending(&h, session_model("local-2"));
    assert_eq!(
        h.request(id).request.url(),
        "http://127.0.0.1:8787/api/chat/session-model?sessionUid=local-2"
    );
    h.reply(
        id,
        200,
        held("local-2", "acme-cloud", "acme-large", Some("high")),
    );
    assert_eq!(picker(&h), values("acme-cloud", "acme-large", Some("high")));
    let levels: Vec<_> = h
        .snapshot()
        .available_reasoning_efforts
        .iter()
        .map(|l| l.value.clone())
        .collect();
    assert_eq!(levels, ["low", "medium", "high"]);

    h.send("Hello");
    let turn = h.expect_pending("local turn", is_local_turn);
    assert!(
        h.pending(|c| is_local(c, &session_model("local-2")))
            .is_none(),
        "not while the turn runs"
    );
    h.stream_head(turn)
        .chunk(turn, &answer("m-1", "Hi."))
        .end(turn);
    let again = pending(&h, session_model("local-2"));
    h.reply(again, 404, json!({"detail": "Unknown session."}));
    assert_eq!(picker(&h), values("local", "configured", None));
    assert!(h.snapshot().available_reasoning_efforts.is_empty());

    h.requested(Some("local-3"));
    let other = pending(&h, session_model("local-3"));
    h.reply(other, 200, held("local-3", "team-models", "tm-1", None));
    assert_eq!(picker(&h), values("team-models", "tm-1", None));
    // Read once per conversation and turn.
    let mark = h.mark();
    h.advance(120_000);
    assert!(
        h.sent_since(mark)
            .iter()
            .all(|s| !is_local(&s.call, &session_model("local-3")))
    );
}

/// A choice for a conversation the runtime knows is `PUT /api/chat/session-model` with
/// `{sessionUid, provider, model, thinkingLevel}` (the model with the current level; a level
/// with the current model), shown at once and while in flight (`isUpdatingSessionModel`); a
/// refusal notifies "The model did not change" with "Changing the session's model: {detail}".
/// The configured option, or a provider alone, sends nothing. The turn's `runConfig` carries no
/// level: it reaches the runtime with the session's model.
#[test]
fn adr_099_a_choice_for_a_known_conversation_is_put() {
    let mut h = holding("local-2");
    choose_model(&mut h, "team-models::tm-1");
    let (sent, body) = put_body(&h);
    assert_eq!(
        (sent.request.method, sent.request.url().as_str()),
        (Method::Put, "http://127.0.0.1:8787/api/chat/session-model")
    );
    assert_eq!(sent.request.header("Authorization"), None);
    assert_eq!(
        body,
        json!({"sessionUid": "local-2", "provider": "team-models", "model": "tm-1", "thinkingLevel": "high"})
    );
    assert!(h.snapshot().is_updating_session_model);
    assert_eq!(picker(&h), values("team-models", "tm-1", Some("high")));
    h.reply(
        sent.id,
        200,
        held("local-2", "team-models", "tm-1", Some("high")),
    );
    assert!(!h.snapshot().is_updating_session_model);

    choose_level(&mut h, "off");
    let (sent, body) = put_body(&h);
    assert_eq!(body["thinkingLevel"], "off");
    assert_eq!(body["model"], "tm-1");
    h.reply(sent.id, 500, json!({"detail": "No key for Team Models."}));
    let notice = h.notices().pop().expect("a notice");
    assert_eq!(notice.title, "The model did not change");
    assert_eq!(
        notice.description.as_deref(),
        Some("Changing the session's model: No key for Team Models.")
    );
    assert_eq!(notice.variant, NoticeVariant::Error);
    // As the platform's picker (CAT-17): back to what the runtime holds.
    assert_eq!(picker(&h), values("team-models", "tm-1", Some("high")));

    let mark = h.mark();
    h.command(Command::SetSelectedProviderValue {
        value: Some("acme-cloud".into()),
    });
    choose_model(&mut h, "local::configured");
    assert!(
        h.sent_since(mark).iter().all(|s| !is_put(&s.call)),
        "{:?}",
        h.sent_since(mark)
    );
    assert_eq!(picker(&h), values("local", "configured", None));
    // The configured option sends nothing; for a conversation the runtime knows, the model it
    // holds is read again and shown.
    let read = pending(&h, session_model("local-2"));
    h.reply(
        read,
        200,
        held("local-2", "team-models", "tm-1", Some("high")),
    );
    assert_eq!(picker(&h), values("team-models", "tm-1", Some("high")));

    h.send("Hello");
    let turn = h.expect_pending("local turn", is_local_turn);
    let body = turn_body_of(&h, turn);
    assert_eq!(body["runConfig"], json!({}));
    assert!(body.get("model").is_none());
}

/// A listed conversation is known to the runtime: a choice is `PUT` at once, before the model
/// it holds was read.
#[test]
fn adr_099_a_listed_conversation_takes_a_choice_at_once() {
    let mut h = local();
    stored(&mut h, KEY, Some("local-2"));
    pass_checks(&mut h);
    let id = pending(&h, LocalRoute::Sessions);
    h.reply(
        id,
        200,
        json!({"sessions": [{"sessionUid": "local-2", "title": "Ledger"}]}),
    );
    choose_model(&mut h, "acme-cloud::acme-small");
    let (_, body) = put_body(&h);
    assert_eq!(body["sessionUid"], "local-2");
    assert!(h.notices().is_empty());
}

/// adr-notes 5: the first message of a new local conversation runs on the runtime's configured
/// model and the picker applies from the next. A choice made before the runtime knows the
/// conversation sends nothing, is said once per engine ("The first message uses the local
/// Agent's model", info), and is kept; it follows the runtime's id, and once the runtime names
/// the model it holds (after the first answer) it is `PUT`, and the picker shows what the
/// runtime answered.
#[test]
fn adr_099_a_new_conversations_choice_applies_from_the_next_message() {
    let (mut h, client) = new_conversation();
    let h0 = pending(&h, session_model(&client));
    h.reply(h0, 404, json!({"detail": "Unknown session."}));
    assert_eq!(picker(&h), values("local", "configured", None));
    let mark = h.mark();
    choose_model(&mut h, "acme-cloud::acme-large");
    choose_level(&mut h, "low");
    assert!(h.sent_since(mark).iter().all(|s| !is_put(&s.call)));
    let said: Vec<_> = h
        .notices()
        .into_iter()
        .filter(|n| n.title == "The first message uses the local Agent's model")
        .collect();
    assert_eq!(said.len(), 1, "said once: {said:?}");
    assert_eq!(
        said[0].description.as_deref(),
        Some(
            "A new local conversation starts with the model the Agent was started with. Your \
             choice applies from the next message."
        )
    );
    assert_eq!(said[0].variant, NoticeVariant::Info);
    assert_eq!(picker(&h), values("acme-cloud", "acme-large", Some("low")));

    h.send("Hello");
    let turn = h.expect_pending("local turn", is_local_turn);
    let body = turn_body_of(&h, turn);
    assert_eq!(body["runConfig"], json!({}));
    assert!(body.get("model").is_none());
    h.head_with(turn, named_head(Some("local-9")));
    h.chunk(turn, &answer("m-1", "Hi.")).end(turn);
    let read = pending(&h, session_model("local-9"));
    h.reply(read, 200, held("local-9", "acme-cloud", "acme-small", None));
    let (sent, body) = put_body(&h);
    assert_eq!(
        body,
        json!({"sessionUid": "local-9", "provider": "acme-cloud", "model": "acme-large", "thinkingLevel": "low"})
    );
    h.reply(
        sent.id,
        200,
        held("local-9", "acme-cloud", "acme-large", Some("low")),
    );
    assert_eq!(picker(&h), values("acme-cloud", "acme-large", Some("low")));

    // Another new conversation: not said again; a refused PUT falls back to the runtime's.
    h.command(Command::CreateAgentSession);
    let second = h.snapshot().current_session_id.unwrap();
    let read = pending(&h, session_model(&second));
    h.reply(read, 404, json!({}));
    choose_model(&mut h, "team-models::tm-1");
    let told = h
        .notices()
        .iter()
        .filter(|n| n.title == "The first message uses the local Agent's model")
        .count();
    assert_eq!(told, 1);
    h.send("Again");
    let turn = h.expect_pending("local turn", is_local_turn);
    h.head_with(turn, named_head(Some("local-10")));
    h.chunk(turn, &answer("m-2", "Hi.")).end(turn);
    let read = pending(&h, session_model("local-10"));
    h.reply(
        read,
        200,
        held("local-10", "acme-cloud", "acme-small", None),
    );
    let (sent, _) = put_body(&h);
    h.reply(sent.id, 400, json!({"detail": "Unknown model."}));
    assert_eq!(picker(&h), values("acme-cloud", "acme-small", None));
    assert_eq!(
        h.notices().pop().map(|n| n.title),
        Some("The model did not change".to_owned())
    );
}

/// A picker value that names no model (blank, or without `::`) sends nothing, and a blank level
/// is none; a model is applied with a level it offers: the current one, else its default, and
/// none for a model without levels (the catalog says which).
#[test]
fn adr_099_a_choice_goes_out_with_a_level_the_model_offers() {
    let mut h = holding("local-2");
    let mark = h.mark();
    for value in ["", "  ", "tm-1", "acme-cloud::", "::tm-1"] {
        choose_model(&mut h, value);
    }
    assert!(h.sent_since(mark).iter().all(|s| !is_put(&s.call)));
    choose_model(&mut h, "acme-cloud::acme-small");
    let (sent, body) = put_body(&h);
    assert_eq!(
        body,
        json!({"sessionUid": "local-2", "provider": "acme-cloud", "model": "acme-small", "thinkingLevel": null})
    );
    h.reply(
        sent.id,
        200,
        held("local-2", "acme-cloud", "acme-small", None),
    );
    choose_model(&mut h, "acme-cloud::acme-large");
    let (sent, body) = put_body(&h);
    assert_eq!(body["thinkingLevel"], "medium", "the model's default level");
    h.reply(
        sent.id,
        200,
        held("local-2", "acme-cloud", "acme-large", Some("medium")),
    );
    choose_level(&mut h, "  ");
    let (_, body) = put_body(&h);
    assert_eq!(body["thinkingLevel"], Value::Null);
}

/// A change still on its way belongs to its conversation: another conversation shown meanwhile
/// shows nothing of the last one, has its own model read at once, and takes its own change
/// without aborting the first; a refusal of the first is still said but changes nothing shown
/// for the other. A read that gets no answer at all leaves the picker as it is; a source change
/// aborts a change on its way.
#[test]
fn adr_099_a_change_on_its_way_belongs_to_its_conversation() {
    let mut h = holding("local-2");
    choose_model(&mut h, "team-models::tm-1");
    let (first, _) = put_body(&h);
    h.requested(Some("local-3"));
    let transcript = pending(&h, history_route("local-3"));
    h.reply(transcript, 200, spec_tests::fixtures::history("local-3"));
    assert_eq!(picker(&h), (None, None, None), "nothing of local-2's");
    let read = pending(&h, session_model("local-3"));
    h.reply(read, 200, held("local-3", "acme-cloud", "acme-small", None));
    assert_eq!(picker(&h), values("acme-cloud", "acme-small", None));
    assert!(
        !h.snapshot().is_updating_session_model,
        "local-2's change is not local-3's"
    );
    choose_model(&mut h, "acme-cloud::acme-large");
    assert!(
        !h.was_aborted(first.id),
        "another conversation's change goes on"
    );
    let second = h
        .pending(|c| {
            matches!(c, ApiCall::Local { route: LocalRoute::SetSessionModel { session_uid, .. } } if session_uid == "local-3")
        })
        .expect("local-3's change");
    h.reply(first.id, 500, json!({"detail": "No key."}));
    assert_eq!(
        h.notices().pop().map(|n| n.title),
        Some("The model did not change".to_owned())
    );
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-large", Some("medium")),
        "local-2's refusal changes nothing shown for local-3"
    );
    h.reply(
        second,
        200,
        held("local-3", "acme-cloud", "acme-large", Some("medium")),
    );
    h.send("Hello");
    let turn = h.expect_pending("local turn", is_local_turn);
    h.stream_head(turn)
        .chunk(turn, &answer("m-1", "Hi."))
        .end(turn);
    let read = pending(&h, session_model("local-3"));
    h.fail(read);
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-large", Some("medium")),
        "no answer: unchanged"
    );

    let mut h = holding("local-2");
    choose_model(&mut h, "team-models::tm-1");
    let (sent, _) = put_body(&h);
    h.input(engine_core::Input::Source(None));
    assert!(h.was_aborted(sent.id));
}

/// The runtime may answer the model read of an id it maps (`default`, or a client's id) under
/// its own id: the answer is still the conversation's.
#[test]
fn adr_099_a_model_answer_under_the_runtimes_own_id() {
    let mut h = with_catalog(talking("default"));
    let id = pending(&h, session_model("default"));
    h.reply(
        id,
        200,
        held("local-default", "team-models", "tm-1", Some("high")),
    );
    assert_eq!(picker(&h), values("team-models", "tm-1", Some("high")));
}

/// A choice made while the model is being read wins: the read, from before the choice, is
/// dropped and does not show over it.
#[test]
fn adr_099_a_choice_made_while_the_model_is_read_wins() {
    let mut h = with_catalog(talking("local-2"));
    let read = pending(&h, session_model("local-2"));
    h.reply(
        read,
        200,
        held("local-2", "acme-cloud", "acme-large", Some("high")),
    );
    h.send("Hello");
    let turn = h.expect_pending("local turn", is_local_turn);
    h.stream_head(turn)
        .chunk(turn, &answer("m-1", "Hi."))
        .end(turn);
    let again = pending(&h, session_model("local-2"));
    choose_model(&mut h, "team-models::tm-1");
    assert!(
        h.was_aborted(again),
        "the read from before the choice is dropped"
    );
    let (sent, _) = put_body(&h);
    h.reply(
        sent.id,
        200,
        held("local-2", "team-models", "tm-1", Some("high")),
    );
    assert_eq!(picker(&h), values("team-models", "tm-1", Some("high")));
}

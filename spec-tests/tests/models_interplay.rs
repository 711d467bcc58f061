#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Interleavings of the model flows (MOD, CAT, SHR-6, FAIL-16, DEF-12 and OI-23, OI-27): a
//! model choice or its retry meeting another creation, retryDefaultSession(), a source-status
//! flicker, a launched session, a PATCH in flight, and catalog invalidation.

use engine_core::api::ModelChoice;
use engine_core::{
    ApiCall, Command, DefaultSession, DefaultSessionStatus, Event, Input, RequestId, SourceStatus,
};
use serde_json::json;
use spec_tests::Harness;
use spec_tests::fixtures::{
    AGENT, AGENT2, ENV, HANDLE, catalog, handle_record, page, record, with_model,
};
use spec_tests::models::{
    is_catalog, is_goc, is_patch, is_start_new, json_body, picker, refuse, values,
};

const S1: &str = "s-1";
const S_DEF: &str = "s-def";
const S_L: &str = "s-launched";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn resolve(h: &mut Harness, provider: &str, model: &str, thinking: Option<&str>) {
    h.command(Command::ResolveSessionModelSelection {
        choice: ModelChoice {
            provider: provider.to_owned(),
            model: model.to_owned(),
            thinking: thinking.map(str::to_owned),
        },
    });
}

fn request_id(h: &Harness) -> Option<u64> {
    h.snapshot().session_model_selection_request.map(|r| r.id)
}

fn answer_catalog(h: &mut Harness) {
    let id = h.expect_pending("catalog", is_catalog);
    h.reply(id, 200, catalog());
}

/// A visible default-session state (list empty, catalog loaded) whose get-or-create was refused
/// for want of a model: the choice waits.
fn default_waiting() -> Harness {
    let mut h = Harness::default_state();
    h.answer_list(&[]);
    answer_catalog(&mut h);
    let id = h.get_or_create_request();
    refuse(&mut h, id);
    assert!(request_id(&h).is_some(), "{}", h.transcript());
    h
}

/// startAgentSessionById for AGENT2; returns its start-new-session request.
fn start_by_id(h: &mut Harness) -> RequestId {
    h.command(Command::StartAgentSessionById {
        agent_id: AGENT2.into(),
        label: Some("Ops Helper".into()),
    });
    h.expect_pending("start-new-session", is_start_new)
}

fn set_status(h: &mut Harness, status: SourceStatus) {
    h.input(Input::DefaultSession(Some(DefaultSession {
        agent_uid: Some(AGENT.to_owned()),
        handle_unique_id: HANDLE.to_owned(),
        name: "Ledger chat".to_owned(),
        status,
        unavailable_message: None,
    })));
}

fn fail_catalog_three_times(h: &mut Harness) {
    let id = h.expect_pending("catalog", is_catalog);
    h.reply(id, 500, json!({}));
    h.advance(1_000);
    let id = h.expect_pending("catalog retry 1", is_catalog);
    h.reply(id, 500, json!({}));
    h.advance(2_000);
    let id = h.expect_pending("catalog retry 2", is_catalog);
    h.reply(id, 500, json!({}));
}

// ---------------------------------------------------------------------------------------------
// OI-27, DEF-11: a newer refusal while the default session's retry runs
// ---------------------------------------------------------------------------------------------

/// OI-27, DEF-11, MOD-12, SHR-6: while the default session's retry with the chosen model is in
/// flight no choice is pending (SHR-6), so a later action's model-required refusal has nothing
/// to replace: the retry goes on, and when it succeeds the default session opens. The engine
/// aborts the retry (the `retrying` state falls through to the superstate's `Required`), so the
/// default session never opens: nothing is in flight, nothing waits for it, and
/// defaultSessionStatus stays `opening` for good.
#[test]
fn oi_27_action_refusal_does_not_abort_the_default_retry() {
    let mut h = default_waiting();
    resolve(&mut h, "team-models", "tm-1", Some("high"));
    let retry = h.get_or_create_request();
    assert_eq!(request_id(&h), None, "SHR-6: the retry no longer waits");
    let id = start_by_id(&mut h);
    refuse(&mut h, id);
    assert!(
        !h.was_aborted(retry),
        "the default retry was aborted by an unrelated refusal\n{}",
        h.transcript()
    );
    let stored = with_model(
        handle_record(S_DEF, AGENT, ENV, HANDLE, 1),
        "team-models",
        "tm-1",
        Some("high"),
    );
    h.reply(retry, 200, stored);
    assert_eq!(h.current().as_deref(), Some(S_DEF), "{}", h.transcript());
}

// ---------------------------------------------------------------------------------------------
// retryDefaultSession() while the choice waits
// ---------------------------------------------------------------------------------------------

/// SHR-6, DEF-11, DEF-13, OI-23: retryDefaultSession() while the default session's model choice
/// waits emits a new get-or-create (DEF-13). When that one succeeds the default session is open
/// and selected, so no creation waits for a choice any more: sessionModelSelectionRequest must
/// be unset and defaultSessionStatus ready. The engine keeps the old choice waiting, so the
/// request stays set and the status stays `opening` with the default session selected.
#[test]
fn shr_6_retry_default_during_choice_then_success_clears_the_choice() {
    let mut h = default_waiting();
    let before = h.count(is_goc);
    h.command(Command::RetryDefaultSession);
    assert_eq!(h.count(is_goc), before + 1, "DEF-13: one new get-or-create");
    let id = h.get_or_create_request();
    h.reply(id, 200, handle_record(S_DEF, AGENT, ENV, HANDLE, 1));
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some(S_DEF));
    assert_eq!(
        s.session_model_selection_request,
        None,
        "SHR-6: nothing waits for a choice\n{}",
        h.transcript()
    );
    assert_eq!(s.default_session_status, DefaultSessionStatus::Ready);
}

/// MOD-16, OI-23, OI-27: retryDefaultSession() while the choice waits, and the new
/// get-or-create is refused for want of a model again (a first attempt, not a retry, so a new
/// choice is right). A choice for the default session is pending, so defaultSessionStatus is
/// `opening` and defaultSessionError empty (MOD-16's interpretation). The engine ends the older
/// choice "as cancelled" with a `DefaultFailed(SESSION_MODEL_NEEDED_MESSAGE)` for the very
/// combination the new choice waits for, and the view checks the failure before the pending
/// choice: status `error` with the needed message while the choice is on screen.
#[test]
fn mod_16_same_default_choice_replaced_stays_opening() {
    let mut h = default_waiting();
    let first = request_id(&h).unwrap();
    h.command(Command::RetryDefaultSession);
    let id = h.get_or_create_request();
    refuse(&mut h, id);
    let second = request_id(&h).expect("a new choice waits");
    assert_ne!(second, first);
    let s = h.snapshot();
    assert_eq!(
        (s.default_session_status, s.default_session_error),
        (DefaultSessionStatus::Opening, None),
        "{}",
        h.transcript()
    );
}

// ---------------------------------------------------------------------------------------------
// DEF-12: a status flicker and the pending choice
// ---------------------------------------------------------------------------------------------

/// DEF-12, SHR-6: defaultSession.status going loading and back to ready is no change of
/// combination (the project's "Status flicker" choice: it neither cancels nor repeats the
/// get-or-create; only a change of person, Environment, Agent or handle does, and "A
/// default-session choice is dropped ... when the person, Environment, Agent or handle
/// changes"). The pending choice must survive and no second get-or-create go out. The model
/// choice machine is fed the ready-filtered `default_key()` instead of the combination, so the
/// flicker abandons the choice and emits a fresh get-or-create for the same combination.
#[test]
fn def_12_status_flicker_keeps_the_pending_choice() {
    let mut h = default_waiting();
    let waiting = request_id(&h).unwrap();
    let gocs = h.count(is_goc);
    set_status(&mut h, SourceStatus::Loading);
    set_status(&mut h, SourceStatus::Ready);
    assert_eq!(
        h.count(is_goc),
        gocs,
        "DEF-12: no second get-or-create\n{}",
        h.transcript()
    );
    assert_eq!(
        request_id(&h),
        Some(waiting),
        "SHR-6: the choice still waits"
    );
}

// ---------------------------------------------------------------------------------------------
// MOD-9, MOD-13: the default retry succeeds while a launched session is selected
// ---------------------------------------------------------------------------------------------

/// MOD-9, MOD-13, DEF-18: while the default session's choice waits, a launch opens S_L (stored
/// acme-cloud / acme-large) and stays selected (DEF-18). The choice is then resolved with
/// team-models / tm-1 and the default session is created, but not selected. The choice's values
/// belong to the created session (MOD-13: the engine puts them into the picker "when it selects
/// the created session"); the composer of S_L must keep S_L's own model, and a later level edit
/// on S_L must PATCH S_L's own provider and model (MOD-9: the open session's model settings stay
/// unchanged). The engine copies the choice into the picker on any successful retry.
#[test]
fn mod_9_default_retry_while_launched_keeps_the_launched_picker() {
    let mut h = default_waiting();
    h.launch(AGENT2, 1);
    let lookup = h.expect_pending("Agent lookup", |c| {
        matches!(c, ApiCall::ListSessions { agent: Some(_), .. })
    });
    h.reply(lookup, 200, page(&[]));
    let id = h.expect_pending("start-new-session", is_start_new);
    h.reply(id, 201, record(S_L, AGENT2, ENV, 30));
    assert_eq!(h.current().as_deref(), Some(S_L));
    h.hydrate(S_L, AGENT2);
    assert!(request_id(&h).is_some(), "the default choice still waits");
    resolve(&mut h, "team-models", "tm-1", Some("high"));
    let goc = h.get_or_create_request();
    let stored = with_model(
        handle_record(S_DEF, AGENT, ENV, HANDLE, 1),
        "team-models",
        "tm-1",
        Some("high"),
    );
    h.reply(goc, 200, stored);
    assert_eq!(h.current().as_deref(), Some(S_L), "DEF-18");
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("medium")),
        "S_L's composer shows S_L's stored model\n{}",
        h.transcript()
    );
    h.command(Command::SetSelectedReasoningEffortValue {
        value: Some("low".into()),
    });
    if let Some(id) = h.pending(is_patch) {
        let b = json_body(h.request(id));
        assert_eq!(b["llm_provider"], "acme-cloud", "{b}");
        assert_eq!(b["llm_model"], "acme-large", "{b}");
    }
}

// ---------------------------------------------------------------------------------------------
// MOD-6, MOD-9: a PATCH refused while the choice waits
// ---------------------------------------------------------------------------------------------

/// MOD-6, MOD-9, CAT-17: a PATCH of the open session S1 is in flight when another path is
/// refused for want of a model; in the "choose a model" state the person picks acme-small. The
/// PATCH is then refused: S1's record stays as it was, but the values in the "choose a model"
/// state are the person's pick and must stay so. The engine's refusal handler writes the
/// composer's pre-PATCH values over the picker while the choice waits.
#[test]
fn mod_9_refused_patch_does_not_overwrite_the_choice_state() {
    let mut h = Harness::ready(S1);
    answer_catalog(&mut h);
    h.command(Command::SetSelectedModelValue {
        value: Some("team-models::tm-1".into()),
    });
    let patch = h.expect_pending("PATCH", is_patch);
    let id = start_by_id(&mut h);
    refuse(&mut h, id);
    assert!(request_id(&h).is_some());
    h.command(Command::SetSelectedModelValue {
        value: Some("acme-cloud::acme-small".into()),
    });
    let pick = values("acme-cloud", "acme-cloud::acme-small", None);
    assert_eq!(picker(&h), pick);
    h.reply(patch, 409, json!({"detail": "Busy."}));
    assert!(request_id(&h).is_some());
    assert_eq!(picker(&h), pick, "{}", h.transcript());
}

// ---------------------------------------------------------------------------------------------
// FAIL-16: no PATCH without catalog data
// ---------------------------------------------------------------------------------------------

/// FAIL-16, CAT-10, OI-21: after invalidateModelProviderCatalog() drops the person's entry and
/// the new read fails for good, no catalog data is held: availableModelsError is set and "no
/// PATCH can be made" from the picker. The engine keeps the provider and model the picker held
/// before the invalidation, so a level edit PATCHes them.
#[test]
fn fail_16_no_patch_after_invalidation_and_final_failure() {
    let mut h = Harness::ready(S1);
    answer_catalog(&mut h);
    h.command(Command::InvalidateModelProviderCatalog);
    fail_catalog_three_times(&mut h);
    let s = h.snapshot();
    assert!(s.available_models_error.is_some());
    assert!(s.available_models.is_empty());
    h.command(Command::SetSelectedReasoningEffortValue {
        value: Some("high".into()),
    });
    assert_eq!(h.count(is_patch), 0, "{}", h.transcript());
}

// ---------------------------------------------------------------------------------------------
// Verified behaviour (passing)
// ---------------------------------------------------------------------------------------------

/// MOD-7, SEL-15, MOD-8: a launch started while visible, hidden before its refusal: the refusal
/// calls onRequestVisible once; the catalog is read while hidden; the retry's success opens the
/// session as launched and calls onRequestVisible once more (SEL-15); no PATCH.
#[test]
fn mod_7_sel_15_launch_refused_while_hidden() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[]);
    answer_catalog(&mut h);
    h.launch(AGENT2, 7);
    let lookup = h.expect_pending("Agent lookup", |c| {
        matches!(c, ApiCall::ListSessions { agent: Some(_), .. })
    });
    h.reply(lookup, 200, page(&[]));
    let id = h.expect_pending("start-new-session", is_start_new);
    h.visible(false);
    refuse(&mut h, id);
    let visible_calls = |h: &Harness| {
        h.events()
            .iter()
            .filter(|e| matches!(e, Event::RequestVisible))
            .count()
    };
    assert_eq!(visible_calls(&h), 1);
    resolve(&mut h, "acme-cloud", "acme-small", None);
    let goc = h.get_or_create_request();
    let handle = match &h.request(goc).call {
        ApiCall::GetOrCreateSession { body, .. } => body.handle_unique_id.clone(),
        other => panic!("{other:?}"),
    };
    assert!(handle.starts_with("cc-session-") && handle != HANDLE);
    h.reply(goc, 200, handle_record(S_L, AGENT2, ENV, &handle, 5));
    assert_eq!(h.current().as_deref(), Some(S_L));
    assert!(h.snapshot().is_direct_launch_session);
    assert_eq!(visible_calls(&h), 2);
    assert_eq!(h.count(is_patch), 0);
}

/// CAT-10, CAT-19, INV-10: invalidating the catalog while a PATCH is in flight neither aborts
/// nor changes the PATCH; an identical reload does not re-apply the stored model over the
/// person's edit (CAT-12), and the PATCH's answer is applied.
#[test]
fn cat_10_12_invalidation_during_a_patch() {
    let mut h = Harness::ready(S1);
    answer_catalog(&mut h);
    h.command(Command::SetSelectedModelValue {
        value: Some("team-models::tm-1".into()),
    });
    let patch = h.expect_pending("PATCH", is_patch);
    h.command(Command::InvalidateModelProviderCatalog);
    answer_catalog(&mut h);
    assert!(!h.was_aborted(patch));
    let edited = values("team-models", "team-models::tm-1", Some("off"));
    assert_eq!(picker(&h), edited);
    let stored = with_model(
        record(S1, AGENT, ENV, 0),
        "team-models",
        "tm-1",
        Some("off"),
    );
    h.reply(patch, 200, stored);
    assert_eq!(picker(&h), edited);
    assert_eq!(h.count(is_patch), 1);
}

/// MOD-9: picker changes in the "choose a model" state leave the model settings of the already
/// open session unchanged. S1 (level medium) is answering with a second message queued when
/// another path is refused for want of a model; in the "choose a model" state the person picks
/// level low. The queued message then leaves for S1 and must carry S1's own level (medium), as
/// it does again once the choice is cancelled. The engine takes runConfig from the shared
/// picker, which holds the choice state's values. (OI-20's "whatever ... is selected at the
/// moment it leaves" is read as S1's composer selection, which the choice state borrows.)
#[test]
fn mod_9_queued_message_during_choice_keeps_the_session_level() {
    use spec_tests::fixtures::{answer, history};
    use spec_tests::turns::{all_ready_on, body, post_on};
    let mut h = Harness::talking(S1);
    answer_catalog(&mut h);
    let id = post_on(&mut h, S1, "First");
    h.stream_head(id);
    h.send("Second");
    let sid = start_by_id(&mut h);
    refuse(&mut h, sid);
    h.command(Command::SetSelectedReasoningEffortValue {
        value: Some("low".into()),
    });
    h.chunk(id, &answer("msg-1", "One.")).end(id);
    if let Some(hid) = h.pending(|c| matches!(c, ApiCall::GetSessionHistory { .. })) {
        h.reply(hid, 200, history(S1));
    }
    all_ready_on(&mut h, S1);
    let m = h.message_request(S1);
    assert_eq!(
        body(&h, m)["runConfig"],
        json!({"reasoning_effort": "medium"}),
        "{}",
        h.transcript()
    );
}

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! SHR: the shared states every surface renders, computed once.
//!
//! The surface stages themselves (connecting state, configuration prerequisite, transcript) are
//! the host's; these tests check the snapshot values they render from. The runtime values are
//! covered with runtime access in rta.rs (SHR-5, SHR-11, SHR-12); sessionModelSelectionRequest
//! does not exist in the engine yet (it belongs to the model-required fallback).

use engine_core::{
    ApiCall, DefaultSession, DefaultSessionStatus, Input, ReadinessStatus, SourceStatus,
};
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::fixtures::{AGENT, ENV, ENV2, HANDLE, USER, handle_record, page, record};

const HISTORY_NOTICE: &str = "Failed to rehydrate the selected AgentSession. Interaction is disabled until session history loads.";
const UNAVAILABLE_PREFIX: &str = "The session referenced by this link is unavailable. ";

fn default_session_with_status(status: SourceStatus, agent: Option<&str>) -> Input {
    Input::DefaultSession(Some(DefaultSession {
        agent_uid: agent.map(str::to_owned),
        handle_unique_id: HANDLE.to_owned(),
        name: "Ledger chat".to_owned(),
        status,
        unavailable_message: None,
    }))
}

fn is_session_request(c: &ApiCall) -> bool {
    matches!(
        c,
        ApiCall::GetOrCreateSession { .. }
            | ApiCall::GetSessionDetail { .. }
            | ApiCall::GetSessionHistory { .. }
            | ApiCall::GetSessionInsights { .. }
            | ApiCall::StartNewSession { .. }
    )
}

// ---------------------------------------------------------------------------------------------
// SHR-1

/// The shared values of a snapshot, as JSON, under the specification's names.
fn shared(h: &Harness) -> Value {
    let v = serde_json::to_value(h.snapshot()).unwrap();
    json!({
        "defaultSessionStatus": v["defaultSessionStatus"],
        "defaultSessionError": v["defaultSessionError"],
        "activeSessionReadiness": v["activeSessionReadiness"],
        "activeRuntimeInteraction": v["activeRuntimeInteraction"],
        "isAssistantRuntimeStarting": v["isAssistantRuntimeStarting"],
        "sessionNotice": v["sessionNotice"],
    })
}

/// SHR-1: every reader of the engine (two surfaces, here the harness's view and a direct read)
/// observes the same computed shared states at every step of a varied input sequence, and
/// reading them changes nothing. The states carry the specification's names.
#[test]
fn shr_1_two_surfaces_observe_identical_shared_states() {
    let mut h = Harness::visible_in_env();
    type Step = Box<dyn Fn(&mut Harness)>;
    let mut steps: Vec<Step> = vec![
        Box::new(|h| {
            h.answer_list(&[record("s-1", AGENT, ENV, 1), record("s-2", AGENT, ENV, 2)]);
        }),
        Box::new(|h| {
            h.answer_detail("s-2", record("s-2", AGENT, ENV, 2));
        }),
        Box::new(|h| {
            let id = h.history_request("s-2");
            h.reply(id, 500, json!({"detail": "Down."}));
        }),
        Box::new(|h| {
            h.requested(Some("s-gone"));
        }),
        Box::new(|h| {
            let id = h.detail_request("s-gone");
            h.reply(id, 404, json!({"detail": "Not found."}));
        }),
        Box::new(|h| {
            h.shows_default(true);
        }),
        Box::new(|h| {
            h.default_session(Some(AGENT));
        }),
        Box::new(|h| {
            let id = h.get_or_create_request();
            h.reply(id, 500, json!({"detail": "Handle store down."}));
        }),
        Box::new(|h| {
            h.visible(false);
        }),
    ];
    // One engine computes the states once; every surface reads the same snapshot, and reading
    // it is free of effects: no intent, no event, no timer change, so two surfaces reading in
    // any order, any number of times, see the same values.
    let check = |h: &Harness| {
        let engine = h.engine();
        let timer = engine.poll_timeout();
        let ignored = engine.ignored_answers();
        let first = shared(h);
        let a = engine.snapshot();
        let b = engine.snapshot();
        assert_eq!(a, b);
        assert_eq!(shared(h), first);
        assert_eq!(engine.poll_timeout(), timer);
        assert_eq!(engine.ignored_answers(), ignored);
    };
    check(&h);
    for step in steps.drain(..) {
        let (marks, events) = (h.mark(), h.events().len());
        step(&mut h);
        check(&h);
        // The reads above added nothing to what the step itself produced.
        let (marks2, events2) = (h.mark(), h.events().len());
        check(&h);
        assert_eq!((h.mark(), h.events().len()), (marks2, events2));
        assert!(marks2 >= marks && events2 >= events);
    }
    let v = serde_json::to_value(h.snapshot()).unwrap();
    for key in [
        "defaultSessionStatus",
        "defaultSessionError",
        "activeSessionReadiness",
        "activeRuntimeInteraction",
        "isAssistantRuntimeStarting",
        "sessionNotice",
    ] {
        assert!(v.get(key).is_some(), "snapshot lacks {key}: {v}");
    }
    assert_eq!(v["defaultSessionStatus"], json!("error"));
}

// ---------------------------------------------------------------------------------------------
// SHR-2

/// SHR-2: readiness is idle while the chat is hidden, even for a session whose detail and history
/// have loaded; it returns to ready when the chat is visible again.
#[test]
fn shr_2_hidden_chat_is_idle_even_when_loaded() {
    let mut h = Harness::ready("s-1");
    h.visible(false);
    let r = h.snapshot().active_session_readiness;
    assert_eq!(r.status, ReadinessStatus::Idle);
    assert_eq!(r.error, None);
    assert_eq!(r.session_id.as_deref(), Some("s-1"));
    h.visible(true);
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
}

/// SHR-2: a readiness error or a pending load does not show while hidden either.
#[test]
fn shr_2_hidden_chat_is_idle_for_failed_and_loading_sessions() {
    let mut h = Harness::selected("s-1");
    h.visible(false);
    assert_eq!(h.readiness(), ReadinessStatus::Idle);
    h.visible(true);
    let id = h.detail_request("s-1");
    h.reply(id, 500, json!({"detail": "Boom."}));
    assert_eq!(h.readiness(), ReadinessStatus::Error);
    h.visible(false);
    let r = h.snapshot().active_session_readiness;
    assert_eq!(r.status, ReadinessStatus::Idle);
    assert_eq!(r.error, None);
}

/// SHR-2: a chat that was never visible is idle with a selected session.
#[test]
fn shr_2_never_visible_is_idle() {
    let mut h = Harness::new();
    h.person(USER);
    h.env(Some(ENV));
    h.requested(Some("s-1"));
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some("s-1"));
    assert_eq!(h.readiness(), ReadinessStatus::Idle);
}

// ---------------------------------------------------------------------------------------------
// SHR-3, SHR-4

/// SHR-3: visible, avoidImplicitSessionSelection set, a loaded list: nothing is selected and
/// readiness is idle.
#[test]
fn shr_3_avoid_implicit_is_idle() {
    let mut h = Harness::new();
    h.avoid_implicit(true);
    h.person(USER);
    h.env(Some(ENV));
    h.visible(true);
    assert_eq!(h.readiness(), ReadinessStatus::Idle);
    h.answer_list(&[record("s-1", AGENT, ENV, 0)]);
    let s = h.snapshot();
    assert_eq!(s.current_session_id, None);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Idle);
    assert_eq!(s.active_session_readiness.error, None);
}

/// SHR-3: in the default-session state, while the default rules keep the selection empty (source
/// loading, no default Agent, get-or-create in flight), readiness is idle even though the list
/// holds sessions.
#[test]
fn shr_3_default_state_with_empty_selection_is_idle() {
    let mut h = Harness::visible_in_env();
    h.shows_default(true);
    h.input(default_session_with_status(
        SourceStatus::Loading,
        Some(AGENT),
    ));
    h.answer_list(&[record("s-1", AGENT, ENV, 0)]);
    assert_eq!(h.snapshot().current_session_id, None);
    assert_eq!(h.readiness(), ReadinessStatus::Idle);

    h.input(default_session_with_status(SourceStatus::Ready, None));
    assert_eq!(h.snapshot().current_session_id, None);
    assert_eq!(h.readiness(), ReadinessStatus::Idle);

    h.default_session(Some(AGENT));
    assert!(
        h.pending(|c| matches!(c, ApiCall::GetOrCreateSession { .. }))
            .is_some()
    );
    assert_eq!(h.snapshot().current_session_id, None);
    assert_eq!(h.readiness(), ReadinessStatus::Idle);
}

/// SHR-3: a latest-sessions list that loaded empty, with nothing else selecting, leaves readiness
/// idle without an error.
#[test]
fn shr_3_empty_list_is_idle() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[]);
    let s = h.snapshot();
    assert_eq!(s.current_session_id, None);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Idle);
    assert_eq!(s.active_session_readiness.error, None);
    assert_eq!(s.latest_sessions_error, None);
}

/// SHR-4: readiness is loading while the list that would choose a session has not answered, and
/// while the selected session's detail or history is pending.
#[test]
fn shr_4_loading_while_list_detail_or_history_pending() {
    let mut h = Harness::visible_in_env();
    assert_eq!(h.snapshot().current_session_id, None);
    assert_eq!(h.readiness(), ReadinessStatus::Loading);
    h.answer_list(&[record("s-1", AGENT, ENV, 0)]);
    assert_eq!(h.readiness(), ReadinessStatus::Loading);
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    assert_eq!(h.readiness(), ReadinessStatus::Loading);
    h.answer_history("s-1");
    assert_eq!(h.readiness(), ReadinessStatus::Ready);

    let mut h = Harness::selected("s-1");
    h.answer_history("s-1");
    assert_eq!(h.readiness(), ReadinessStatus::Loading);
}

// ---------------------------------------------------------------------------------------------
// SHR-7

/// SHR-7: a notice about one session (the history-failure notice) is cleared when the selection
/// moves to another session.
#[test]
fn shr_7_notice_cleared_when_selection_moves() {
    let mut h = Harness::selected("s-1");
    let id = h.history_request("s-1");
    h.reply(id, 500, json!({"detail": "Down."}));
    assert_eq!(h.snapshot().session_notice.as_deref(), Some(HISTORY_NOTICE));
    h.requested(Some("s-2"));
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some("s-2"));
    assert_eq!(h.snapshot().session_notice, None);
    h.hydrate("s-2", AGENT);
    assert_eq!(h.snapshot().session_notice, None);
}

/// SHR-7, REQ-6: the notice set by the step that moves a failed requested session to the newest
/// one stays while that newest session hydrates, and is cleared by the next move.
#[test]
fn shr_7_requested_notice_survives_its_own_selection_step() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-gone"));
    h.answer_list(&[record("s-1", AGENT, ENV, 0)]);
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some("s-gone"));
    let id = h.detail_request("s-gone");
    h.reply(id, 404, json!({"detail": "Not found."}));
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-1"));
    let notice = s.session_notice.expect("sessionNotice");
    assert!(notice.starts_with(UNAVAILABLE_PREFIX), "{notice}");
    assert!(notice.contains("Not found."), "{notice}");
    h.hydrate("s-1", AGENT);
    assert_eq!(
        h.snapshot().session_notice.as_deref(),
        Some(notice.as_str())
    );
    h.requested(Some("s-3"));
    assert_eq!(h.snapshot().session_notice, None);
}

/// SHR-7: a change of Environment clears the selection and with it the notice about the old
/// session.
#[test]
fn shr_7_notice_cleared_when_selection_is_cleared() {
    let mut h = Harness::selected("s-1");
    let id = h.history_request("s-1");
    h.fail(id);
    assert_eq!(h.snapshot().session_notice.as_deref(), Some(HISTORY_NOTICE));
    h.env(Some(ENV2));
    let s = h.snapshot();
    assert_eq!(s.current_session_id, None);
    assert_eq!(s.session_notice, None);
}

/// SHR-7: a late answer for a session that is no longer selected does not set a notice about it.
#[test]
fn shr_7_late_history_failure_of_an_old_session_sets_no_notice() {
    let mut h = Harness::selected("s-1");
    let old = h.history_request("s-1");
    h.requested(Some("s-2"));
    h.reply(old, 500, json!({"detail": "Down."}));
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some("s-2"));
    assert_eq!(h.snapshot().session_notice, None);
}

// ---------------------------------------------------------------------------------------------
// SHR-8, SHR-9, SHR-10 (the values the surface renders from)

/// SHR-8: in the default-session state, while defaultSession.status is loading the values read
/// as loading, never as an error: defaultSessionStatus loading, no defaultSessionError, readiness
/// idle and no error, and no get-or-create.
#[test]
fn shr_8_source_loading_is_not_an_error() {
    let mut h = Harness::visible_in_env();
    h.shows_default(true);
    h.input(default_session_with_status(
        SourceStatus::Loading,
        Some(AGENT),
    ));
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Loading);
    assert_eq!(s.default_session_error, None);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Idle);
    assert_eq!(s.active_session_readiness.error, None);
    assert_eq!(s.session_notice, None);
    assert_eq!(
        h.count(|c| matches!(c, ApiCall::GetOrCreateSession { .. })),
        0
    );
}

/// SHR-8: while the default session opens, the values read as opening, never as an error, even
/// when the latest-sessions list fails meanwhile.
#[test]
fn shr_8_opening_is_not_an_error() {
    let mut h = Harness::visible_in_env();
    h.shows_default(true);
    h.default_session(Some(AGENT));
    let goc = h.get_or_create_request();
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Opening);
    assert_eq!(s.default_session_error, None);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Idle);
    let list = h.list_request();
    h.reply(list, 500, json!({"detail": "Boom."}));
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Opening);
    assert_eq!(s.default_session_error, None);
    assert_ne!(s.active_session_readiness.status, ReadinessStatus::Error);
    assert_eq!(s.active_session_readiness.error, None);
    h.reply(goc, 200, handle_record("s-d", AGENT, ENV, HANDLE, 0));
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-d"));
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Loading);
}

/// SHR-9: with no default Agent, defaultSessionStatus is missing (a calm prerequisite): no
/// defaultSessionError, no readiness error, no notice, no notify, and no session request.
#[test]
fn shr_9_missing_default_agent_is_calm() {
    let mut h = Harness::visible_in_env();
    h.shows_default(true);
    h.default_session(None);
    h.answer_list(&[record("s-1", AGENT, ENV, 0)]);
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Missing);
    assert_eq!(s.default_session_error, None);
    assert_eq!(s.current_session_id, None);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Idle);
    assert_eq!(s.active_session_readiness.error, None);
    assert_eq!(s.session_notice, None);
    assert_eq!(s.latest_sessions_error, None);
    assert!(h.events().is_empty(), "{:?}", h.events());
    assert_eq!(h.count(is_session_request), 0);
    // Retrying does not turn it into an error either.
    h.command(engine_core::Command::RetryDefaultSession);
    assert_eq!(
        h.snapshot().default_session_status,
        DefaultSessionStatus::Missing
    );
    assert_eq!(h.count(is_session_request), 0);
}

/// SHR-10: while session progress is under way and no transcript is visible, the values read as
/// progress: readiness loading with an empty thread until the history has loaded, and no error.
#[test]
fn shr_10_progress_without_transcript_reads_as_loading() {
    let mut h = Harness::ready("s-1");
    assert!(!h.snapshot().thread.is_empty());
    h.requested(Some("s-2"));
    let s = h.snapshot();
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Loading);
    assert_eq!(s.active_session_readiness.error, None);
    assert!(
        s.thread.is_empty(),
        "old transcript still shown: {:?}",
        s.thread
    );
    h.answer_detail("s-2", record("s-2", AGENT, ENV, 0));
    let s = h.snapshot();
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Loading);
    assert!(s.thread.is_empty());
    h.answer_history("s-2");
    let s = h.snapshot();
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Ready);
    assert!(!s.thread.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Transcripts

/// SHR-8, SHR-9: the default-session values from source loading through missing, opening and
/// ready.
#[test]
fn shr_transcript_default_session_values() {
    let mut h = Harness::visible_in_env();
    h.shows_default(true);
    h.input(default_session_with_status(
        SourceStatus::Loading,
        Some(AGENT),
    ));
    h.input(default_session_with_status(SourceStatus::Ready, None));
    h.default_session(Some(AGENT));
    let id = h.get_or_create_request();
    h.reply(id, 200, handle_record("s-d", AGENT, ENV, HANDLE, 0));
    let list = h.list_request();
    h.reply(
        list,
        200,
        page(&[handle_record("s-d", AGENT, ENV, HANDLE, 0)]),
    );
    insta::assert_snapshot!(h.transcript());
}

/// SHR-7, REQ-6: a failed requested session gives way to the newest, with its notice.
#[test]
fn shr_transcript_requested_notice() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-gone"));
    h.answer_list(&[record("s-1", AGENT, ENV, 0)]);
    let id = h.detail_request("s-gone");
    h.reply(id, 404, json!({"detail": "Not found."}));
    h.requested(Some("s-3"));
    insta::assert_snapshot!(h.transcript());
}

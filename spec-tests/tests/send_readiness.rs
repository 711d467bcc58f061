#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! `sendReadiness` (issue 25, point 3): whether a message can be sent now, what the engine
//! still waits for, or why it cannot — with the failing read's typed error — while the
//! reference's own snapshot texts (FAIL-6, FAIL-7, DEF-*, RTA-13, SHR-3, SHR-4) stay as they are.

use engine_core::api::{ApiError, Operation};
use engine_core::{NotReady, NotReadyCode, SendReadiness, Waiting};
use serde_json::json;
use spec_tests::Harness;
use spec_tests::fixtures::{AGENT, ENV, model_required, page, record, runtime_terminal};

fn readiness(h: &Harness) -> SendReadiness {
    h.snapshot().send_readiness
}

fn blocked(h: &Harness) -> NotReady {
    match readiness(h) {
        SendReadiness::Blocked(cause) => cause,
        other => panic!("expected a blocked readiness, got {other:?}"),
    }
}

fn waiting(h: &Harness) -> Waiting {
    match readiness(h) {
        SendReadiness::Waiting { waiting_for } => waiting_for,
        other => panic!("expected a waiting readiness, got {other:?}"),
    }
}

/// Issue 25 point 3: what the host has not given yet is named, not waited for: visibility
/// (SHR-2), then the Environment.
#[test]
fn host_inputs_missing_are_named() {
    let mut h = Harness::new();
    let cause = blocked(&h);
    assert_eq!(cause.code, NotReadyCode::NotVisible);
    assert_eq!(
        cause.message,
        "The chat is not visible: give the engine Input::IsVisible(true)."
    );
    h.visible(true);
    let cause = blocked(&h);
    assert_eq!(cause.code, NotReadyCode::NoEnvironment);
    assert!(cause.failure.is_none());
    h.env(Some(ENV));
    assert_eq!(waiting(&h), Waiting::Sessions, "SHR-4: the list loads");
}

/// Issue 25 point 3, FAIL-6, FAIL-7: a refused latest-sessions list with nothing selected is
/// the cause, with its status and the server's message; the snapshot's own texts are the
/// reference's (`latestSessionsError`, and readiness's "Choose or start a session before
/// writing.").
#[test]
fn a_refused_list_is_the_cause_with_its_status() {
    let mut h = Harness::visible_in_env();
    let id = h.list_request();
    let url = h.request(id).request.url();
    h.reply(id, 401, json!({"detail": "Invalid token."}));
    let s = h.snapshot();
    // RU-19: the full text, naming the request.
    let text = format!(
        "Latest agent sessions request failed. Status: HTTP 401 Unauthorized. Call: GET {url}. Server response: Invalid token."
    );
    assert_eq!(s.latest_sessions_error.as_deref(), Some(text.as_str()));
    assert_eq!(
        s.active_session_readiness.error.as_deref(),
        Some("Choose or start a session before writing.")
    );
    assert!(!s.composer_admission);
    let cause = blocked(&h);
    assert_eq!(cause.code, NotReadyCode::SessionsFailed);
    assert_eq!(
        Some(cause.message.as_str()),
        s.latest_sessions_error.as_deref()
    );
    assert_eq!(cause.status(), Some(401));
    assert!(matches!(
        &cause.failure,
        Some(ApiError::Http { operation: Operation::SessionList, status: 401, server_message: Some(m), .. })
            if m == "Invalid token."
    ));
    assert_eq!(
        serde_json::to_value(readiness(&h)).unwrap(),
        json!({
            "state": "blocked",
            "code": "sessions_failed",
            "message": text,
            "failure": {"kind": "http", "operation": "session_list", "status": 401, "server_message": "Invalid token."},
            "noticeCode": null,
        })
    );
}

/// Issue 25 point 3: a list that got no answer (a closed port) names the transport's failure.
#[test]
fn a_list_without_answer_names_the_transport_failure() {
    let mut h = Harness::visible_in_env();
    let id = h.list_request();
    h.fail_with(id, "connection refused");
    let cause = blocked(&h);
    assert_eq!(cause.code, NotReadyCode::SessionsFailed);
    assert!(
        matches!(&cause.failure, Some(ApiError::Transport { message }) if message.contains("connection refused")),
        "{cause:?}"
    );
    assert_eq!(cause.status(), None);
    assert!(cause.message.contains("connection refused"), "{cause:?}");
}

/// Issue 25 point 3, SHR-3: an empty list and no default session: nothing will be selected by
/// itself, and the host is told so at once instead of waiting.
#[test]
fn nothing_to_select_is_named() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[]);
    let cause = blocked(&h);
    assert_eq!(cause.code, NotReadyCode::NoSession);
    assert_eq!(cause.message, "Choose or start a session before writing.");
    assert_eq!(
        h.snapshot().active_session_readiness.status,
        engine_core::ReadinessStatus::Idle,
        "SHR-3 unchanged"
    );
}

/// Issue 25 point 3, DEF-*, OI-6: the default session opens (waiting), and a refused
/// get-or-create is the cause with its status, its message the snapshot's
/// `defaultSessionError`.
#[test]
fn a_refused_default_session_is_the_cause() {
    let mut h = Harness::default_state();
    assert_eq!(waiting(&h), Waiting::DefaultSession);
    let id = h.get_or_create_request();
    h.reply(id, 403, json!({"detail": "Not allowed here."}));
    let s = h.snapshot();
    assert_eq!(
        s.default_session_error.as_deref(),
        Some("Not allowed here.")
    );
    let cause = blocked(&h);
    assert_eq!(cause.code, NotReadyCode::DefaultSessionFailed);
    assert_eq!(cause.message, "Not allowed here.");
    assert_eq!(cause.status(), Some(403));
}

/// Issue 25 point 3: a default session that names no Agent is a configuration to fix.
#[test]
fn a_default_session_without_agent_is_named() {
    let mut h = Harness::visible_in_env();
    h.default_session(None);
    h.shows_default(true);
    assert_eq!(blocked(&h).code, NotReadyCode::NoDefaultAgent);
}

/// Issue 25 point 3, MOD-8: a session that needs a model waits for the host's choice.
#[test]
fn a_model_choice_is_named() {
    let mut h = Harness::default_state();
    let id = h.get_or_create_request();
    h.reply(id, 400, model_required());
    assert_eq!(blocked(&h).code, NotReadyCode::ModelRequired);
}

/// Issue 25 point 3, FAIL-10: the selected session loads (waiting), and a failed detail read
/// is the cause with its status; the readiness text is the reference's.
#[test]
fn a_failed_session_read_is_the_cause() {
    let mut h = Harness::selected("s-1");
    assert_eq!(waiting(&h), Waiting::Session);
    let id = h.detail_request("s-1");
    h.reply(id, 500, json!({"detail": "Database unavailable."}));
    let s = h.snapshot();
    let cause = blocked(&h);
    assert_eq!(cause.code, NotReadyCode::SessionUnavailable);
    assert_eq!(
        Some(cause.message.as_str()),
        s.active_session_readiness.error.as_deref()
    );
    assert_eq!(cause.status(), Some(500));
}

/// Issue 25 point 3, RTA-3, RTA-13: the runtime's decision is waited for; it admits (ready,
/// as `composerAdmission`), or a terminal decision is the cause with the backend's notice.
#[test]
fn the_runtime_decides() {
    let mut h = Harness::hydrated("s-1");
    assert_eq!(waiting(&h), Waiting::RuntimeAccess);
    assert!(!h.snapshot().composer_admission);
    h.runtime_ready("s-1", 200);
    assert!(h.snapshot().composer_admission);
    assert_eq!(readiness(&h), SendReadiness::Ready);
    assert!(readiness(&h).is_ready());

    let mut h = Harness::hydrated("s-1");
    let id = h.runtime_request("s-1");
    h.reply(id, 200, runtime_terminal(Some("upd-op-18")));
    let cause = blocked(&h);
    assert_eq!(cause.code, NotReadyCode::RuntimeUnavailable);
    assert_eq!(cause.message, "Ledger Helper could not be updated.");
    assert_eq!(cause.notice_code.as_deref(), Some("agent_update_failed"));
}

/// Issue 25 point 3: once the list answers, a selected session replaces the list's failure as
/// the thing waited for (no stale cause).
#[test]
fn a_later_list_clears_the_cause() {
    let mut h = Harness::visible_in_env();
    let id = h.list_request();
    h.reply(id, 500, json!({"detail": "Down."}));
    assert_eq!(blocked(&h).code, NotReadyCode::SessionsFailed);
    h.command(engine_core::Command::RefreshLatestSessions);
    let id = h.list_request();
    h.reply(id, 200, page(&[record("s-1", AGENT, ENV, 0)]));
    assert_eq!(waiting(&h), Waiting::Session);
}

/// Issue 25 point 3, RTA-7: a waking runtime is waited for as starting, not as a failure.
#[test]
fn a_waking_runtime_is_waited_for() {
    let mut h = Harness::hydrated("s-1");
    let id = h.runtime_request("s-1");
    h.reply(
        id,
        200,
        spec_tests::fixtures::runtime_transient("waking", Some(2000)),
    );
    assert!(h.snapshot().is_assistant_runtime_starting);
    assert!(matches!(
        readiness(&h),
        SendReadiness::Waiting {
            waiting_for: Waiting::RuntimeStart | Waiting::RuntimeAccess
        }
    ));
}

/// Issue 25 point 3, ADR 099: a local runtime needs no Environment and always shows a
/// conversation: while its checks and its conversation load the engine waits (never
/// `no_session`); a runtime that does not answer its checks is the cause, with the local
/// notice's code; once the transcript loads, ready.
#[test]
fn a_local_runtime_waits_then_names_its_refusal() {
    use engine_core::api::local::LocalRoute;
    use spec_tests::local;
    let h = local::local();
    assert!(
        matches!(readiness(&h), SendReadiness::Waiting { .. }),
        "{:?}",
        readiness(&h)
    );
    let mut h = local::local();
    local::stored(&mut h, local::KEY, Some("c-1"));
    assert!(matches!(readiness(&h), SendReadiness::Waiting { .. }));
    let id = local::pending(&h, LocalRoute::Ready);
    h.fail_with(id, "connection refused");
    let cause = blocked(&h);
    assert_eq!(cause.code, NotReadyCode::RuntimeUnavailable);
    assert_eq!(
        cause.notice_code.as_deref(),
        Some("local_agent_unavailable")
    );
    let h = local::talking("c-1");
    assert_eq!(readiness(&h), SendReadiness::Ready);
}

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! FAIL-1 to FAIL-5: failures of the default session (rules.md, "FAIL: Failure rules"), with the
//! status precedence of OI-23 and the default unavailable text of OI-6.

use engine_core::{
    ApiCall, Command, DefaultSession, DefaultSessionStatus, Event, Input, SourceStatus,
};
use serde_json::json;
use spec_tests::Harness;
use spec_tests::fixtures::{AGENT, ENV, HANDLE, USER, handle_record, record};

const OI6_UNAVAILABLE: &str = "The Agent's session could not be opened. Try again.";

fn descriptor(
    agent: Option<&str>,
    status: SourceStatus,
    unavailable: Option<&str>,
) -> DefaultSession {
    DefaultSession {
        agent_uid: agent.map(str::to_owned),
        handle_unique_id: HANDLE.to_owned(),
        name: "Ledger chat".to_owned(),
        status,
        unavailable_message: unavailable.map(str::to_owned),
    }
}

fn set_default(
    h: &mut Harness,
    agent: Option<&str>,
    status: SourceStatus,
    unavailable: Option<&str>,
) {
    h.input(Input::DefaultSession(Some(descriptor(
        agent,
        status,
        unavailable,
    ))));
}

/// A visible chat in the default-session state; the get-or-create is open.
fn default_state(unavailable: Option<&str>) -> Harness {
    let mut h = Harness::visible_in_env();
    set_default(&mut h, Some(AGENT), SourceStatus::Ready, unavailable);
    h.shows_default(true);
    h
}

fn goc_count(h: &Harness) -> usize {
    h.count(|c| matches!(c, ApiCall::GetOrCreateSession { .. }))
}

fn no_notify(h: &Harness) -> bool {
    !h.events().iter().any(|e| matches!(e, Event::Notify(_)))
}

fn status_and_error(h: &Harness) -> (DefaultSessionStatus, Option<String>) {
    let s = h.snapshot();
    (s.default_session_status, s.default_session_error)
}

// ---------------------------------------------------------------------------------------------
// FAIL-1, FAIL-2: the application's source
// ---------------------------------------------------------------------------------------------

/// FAIL-1: with defaultSession.status error the status is error and nothing is selected, not even
/// a listed session behind the handle; no get-or-create goes out.
#[test]
fn fail1_source_error_is_error_with_nothing_selected() {
    let mut h = Harness::visible_in_env();
    set_default(&mut h, Some(AGENT), SourceStatus::Error, None);
    h.shows_default(true);
    h.answer_list(&[
        handle_record("s-def", AGENT, ENV, HANDLE, 1),
        record("s-newest", AGENT, ENV, 40),
    ]);
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Error);
    assert_eq!(s.current_session_id, None);
    assert_eq!(goc_count(&h), 0);
    assert!(no_notify(&h));
    // Error wins over a missing Agent and a missing Environment.
    set_default(&mut h, None, SourceStatus::Error, None);
    assert_eq!(
        h.snapshot().default_session_status,
        DefaultSessionStatus::Error
    );
    h.env(None);
    assert_eq!(
        h.snapshot().default_session_status,
        DefaultSessionStatus::Error
    );
    assert_eq!(h.snapshot().current_session_id, None);
}

/// FAIL-1: a default session already selected is deselected when the source turns to error, and
/// outside the default-session state the status is idle instead.
#[test]
fn fail1_source_error_deselects_and_is_idle_outside_the_default_state() {
    let mut h = default_state(None);
    let id = h.get_or_create_request();
    h.reply(id, 200, handle_record("s-def", AGENT, ENV, HANDLE, 1));
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some("s-def"));
    set_default(&mut h, Some(AGENT), SourceStatus::Error, None);
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Error);
    assert_eq!(s.current_session_id, None);
    h.shows_default(false);
    assert_eq!(
        h.snapshot().default_session_status,
        DefaultSessionStatus::Idle
    );
    // Back to ready: the answered combination is selected again without a new request.
    h.shows_default(true);
    set_default(&mut h, Some(AGENT), SourceStatus::Ready, None);
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Ready);
    assert_eq!(s.current_session_id.as_deref(), Some("s-def"));
    assert_eq!(goc_count(&h), 1);
}

/// FAIL-2: with no defaultSession.agentUid (absent or blank) the status is missing, not error,
/// and defaultSessionError is empty, once the source is ready and an Environment is active.
#[test]
fn fail2_no_agent_is_missing_not_error() {
    let mut h = Harness::visible_in_env();
    h.shows_default(true);
    set_default(
        &mut h,
        None,
        SourceStatus::Ready,
        Some("Custom unavailable."),
    );
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Missing);
    assert_eq!(s.default_session_error, None);
    assert_eq!(s.current_session_id, None);
    set_default(&mut h, Some("   "), SourceStatus::Ready, None);
    assert_eq!(status_and_error(&h), (DefaultSessionStatus::Missing, None));
    // A list load and a retry change nothing.
    h.answer_list(&[handle_record("s-def", AGENT, ENV, HANDLE, 1)]);
    h.command(Command::RetryDefaultSession);
    assert_eq!(status_and_error(&h), (DefaultSessionStatus::Missing, None));
    assert_eq!(h.snapshot().current_session_id, None);
    assert_eq!(goc_count(&h), 0);
    assert!(no_notify(&h));
    // The earlier cases of OI-23 come first.
    set_default(&mut h, None, SourceStatus::Loading, None);
    assert_eq!(status_and_error(&h), (DefaultSessionStatus::Loading, None));
    set_default(&mut h, None, SourceStatus::Ready, None);
    h.env(None);
    assert_eq!(status_and_error(&h), (DefaultSessionStatus::Loading, None));
    h.env(Some(ENV));
    assert_eq!(status_and_error(&h), (DefaultSessionStatus::Missing, None));
    h.shows_default(false);
    assert_eq!(status_and_error(&h), (DefaultSessionStatus::Idle, None));
}

// ---------------------------------------------------------------------------------------------
// FAIL-3, FAIL-4: a failed get-or-create
// ---------------------------------------------------------------------------------------------

/// FAIL-3: a failed get-or-create makes the status error, with the platform's message read from
/// the error body as defaultSessionError; no notify, nothing selected, no automatic retry.
#[test]
fn fail3_platform_message_becomes_the_error() {
    let cases = [
        (
            500,
            json!({"detail": "Agent is archived."}),
            "Agent is archived.",
        ),
        (
            403,
            json!({"detail": "You do not have permission.", "code": "permission_denied"}),
            "You do not have permission.",
        ),
        (
            409,
            json!({"message": "Handle is locked."}),
            "Handle is locked.",
        ),
        (
            400,
            json!({"handle_unique_id": ["Ensure this field has no more than 64 characters."]}),
            "handle_unique_id: Ensure this field has no more than 64 characters.",
        ),
    ];
    for (code, body, message) in cases {
        let mut h = default_state(Some("Custom unavailable."));
        let id = h.get_or_create_request();
        h.reply(id, code, body);
        let s = h.snapshot();
        assert_eq!(
            s.default_session_status,
            DefaultSessionStatus::Error,
            "{code}"
        );
        assert_eq!(s.default_session_error.as_deref(), Some(message), "{code}");
        assert_eq!(s.current_session_id, None);
        assert!(no_notify(&h));
        assert_eq!(goc_count(&h), 1);
        // It stays an error through visibility changes and list loads.
        h.answer_list(&[record("s-1", AGENT, ENV, 10)]);
        h.visible(false).visible(true);
        assert_eq!(
            status_and_error(&h),
            (DefaultSessionStatus::Error, Some(message.to_owned()))
        );
        assert_eq!(h.snapshot().current_session_id, None);
        assert_eq!(goc_count(&h), 1);
    }
}

/// FAIL-3: the status is error after a failed get-or-create even when a listed session behind the
/// handle is selected.
#[test]
fn fail3_error_even_with_a_listed_match_selected() {
    let mut h = default_state(None);
    h.answer_list(&[handle_record("s-def", AGENT, ENV, HANDLE, 1)]);
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some("s-def"));
    let id = h.get_or_create_request();
    h.reply(id, 503, json!({"detail": "Platform maintenance."}));
    assert_eq!(
        status_and_error(&h),
        (
            DefaultSessionStatus::Error,
            Some("Platform maintenance.".to_owned())
        )
    );
    assert!(no_notify(&h));
}

/// FAIL-4: a get-or-create with no answer gives defaultSession.unavailableMessage.
#[test]
fn fail4_no_answer_uses_unavailable_message() {
    let mut h = default_state(Some("The ledger assistant is offline."));
    let id = h.get_or_create_request();
    h.fail(id);
    assert_eq!(
        status_and_error(&h),
        (
            DefaultSessionStatus::Error,
            Some("The ledger assistant is offline.".to_owned())
        )
    );
    assert_eq!(h.snapshot().current_session_id, None);
    assert!(no_notify(&h));
}

/// FAIL-4 (OI-6): without an unavailableMessage of the application, the default text is used.
#[test]
fn fail4_default_unavailable_text() {
    let mut h = default_state(None);
    let id = h.get_or_create_request();
    h.fail(id);
    assert_eq!(
        status_and_error(&h),
        (
            DefaultSessionStatus::Error,
            Some(OI6_UNAVAILABLE.to_owned())
        )
    );
    insta::assert_snapshot!(h.transcript());
}

/// FAIL-4: answers that carry no message (an empty body, an HTML error page, a body with no
/// text, a success without a session uid) give the unavailable message, never the client's own
/// error text.
#[test]
fn fail4_answers_without_a_message() {
    type Reply = (u16, Option<&'static str>, &'static [u8]);
    let replies: [Reply; 5] = [
        (500, Some("application/json"), b""),
        (
            502,
            Some("text/html"),
            b"<html><body><h1>502 Bad Gateway</h1></body></html>",
        ),
        (500, Some("application/json"), b"{}"),
        (
            503,
            Some("application/json"),
            b"{\"code\": \"unavailable\"}",
        ),
        (
            200,
            Some("application/json"),
            b"{\"session\": {\"uid\": \"s-wrapped\"}}",
        ),
    ];
    for unavailable in [Some("Custom unavailable."), None] {
        for (code, content_type, body) in replies {
            let mut h = default_state(unavailable);
            let id = h.get_or_create_request();
            h.reply_raw(id, code, content_type, body, None);
            assert_eq!(
                status_and_error(&h),
                (
                    DefaultSessionStatus::Error,
                    Some(unavailable.unwrap_or(OI6_UNAVAILABLE).to_owned())
                ),
                "{code} {:?}",
                String::from_utf8_lossy(body)
            );
            assert_eq!(h.snapshot().current_session_id, None);
            assert!(no_notify(&h));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// FAIL-5: retry
// ---------------------------------------------------------------------------------------------

/// FAIL-5: after a failure retryDefaultSession() emits a new get-or-create; when it succeeds the
/// status is ready and defaultSessionError is cleared.
#[test]
fn fail5_retry_after_failure_recovers() {
    let mut h = default_state(None);
    let first = h.get_or_create_request();
    h.reply(first, 500, json!({"detail": "Agent is restarting."}));
    assert_eq!(
        status_and_error(&h),
        (
            DefaultSessionStatus::Error,
            Some("Agent is restarting.".to_owned())
        )
    );
    h.command(Command::RetryDefaultSession);
    assert_eq!(goc_count(&h), 2);
    let second = h.get_or_create_request();
    assert_ne!(first, second);
    assert_eq!(status_and_error(&h), (DefaultSessionStatus::Opening, None));
    h.reply(second, 200, handle_record("s-def", AGENT, ENV, HANDLE, 1));
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Ready);
    assert_eq!(s.default_session_error, None);
    assert_eq!(s.current_session_id.as_deref(), Some("s-def"));
    assert!(no_notify(&h));
    insta::assert_snapshot!(h.transcript());
}

/// FAIL-5: a retry that fails again reports the new failure; a further retry can still recover.
#[test]
fn fail5_retry_that_fails_again() {
    let mut h = default_state(Some("Custom unavailable."));
    let id = h.get_or_create_request();
    h.fail(id);
    h.command(Command::RetryDefaultSession);
    let id = h.get_or_create_request();
    h.reply(id, 500, json!({"detail": "Still down."}));
    assert_eq!(
        status_and_error(&h),
        (DefaultSessionStatus::Error, Some("Still down.".to_owned()))
    );
    h.command(Command::RetryDefaultSession);
    assert_eq!(goc_count(&h), 3);
    let id = h.get_or_create_request();
    h.reply(id, 200, handle_record("s-def", AGENT, ENV, HANDLE, 1));
    assert_eq!(status_and_error(&h), (DefaultSessionStatus::Ready, None));
}

/// FAIL-5: a retry after a failure while the chat is hidden still asks (the get-or-create is not
/// gated on visibility), and its success selects the default session.
#[test]
fn fail5_retry_while_hidden() {
    let mut h = Harness::new();
    h.person(USER);
    h.env(Some(ENV));
    set_default(&mut h, Some(AGENT), SourceStatus::Ready, None);
    h.shows_default(true);
    let id = h.get_or_create_request();
    h.fail(id);
    assert_eq!(
        h.snapshot().default_session_status,
        DefaultSessionStatus::Error
    );
    h.command(Command::RetryDefaultSession);
    assert_eq!(goc_count(&h), 2);
    assert_eq!(h.count(|c| matches!(c, ApiCall::ListSessions { .. })), 0);
    let id = h.get_or_create_request();
    h.reply(id, 200, handle_record("s-def", AGENT, ENV, HANDLE, 1));
    assert_eq!(status_and_error(&h), (DefaultSessionStatus::Ready, None));
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some("s-def"));
}

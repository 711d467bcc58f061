#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! REQ: a requested session (REQ-1 to REQ-9, with OI-13, OI-14, OI-24 and OI-30; SHR-7 and
//! INV-10 where the tests check them).

use engine_core::{ApiCall, Command, Event, Method, Origin, RequestId};
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::fixtures::{AGENT, ENV, ENV2, record};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const PREFIX: &str = "The session referenced by this link is unavailable.";

fn removed_events(h: &Harness) -> Vec<String> {
    h.events()
        .iter()
        .filter_map(|e| match e {
            Event::RequestedSessionRemoved { session_uid } => Some(session_uid.clone()),
            _ => None,
        })
        .collect()
}

fn count_detail(h: &Harness, uid: &str) -> usize {
    h.count(|c| matches!(c, ApiCall::GetSessionDetail { session_uid, .. } if session_uid == uid))
}

fn archived(uid: &str) -> Value {
    let mut r = record(uid, AGENT, ENV, 30);
    r["is_archived"] = json!(true);
    r["archived_at"] = json!("2026-10-03T07:30:00Z");
    r
}

fn archive(h: &mut Harness, uid: &str) -> RequestId {
    h.command(Command::ArchiveAgentSession {
        session_uid: uid.to_owned(),
    });
    h.expect_pending(
        "archive",
        |c| matches!(c, ApiCall::ArchiveSession { session_uid } if session_uid == uid),
    )
}

fn delete(h: &mut Harness, uid: &str) -> RequestId {
    h.command(Command::DeleteAgentSession {
        session_uid: uid.to_owned(),
    });
    h.expect_pending(
        "delete",
        |c| matches!(c, ApiCall::DeleteSession { session_uid } if session_uid == uid),
    )
}

/// A visible chat whose list loaded [s-1 (08:40), s-2 (08:10)], then s-9 requested and
/// loaded (s-9 started 08:30, absent from the list).
fn requested_loaded() -> Harness {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 40), record("s-2", AGENT, ENV, 10)]);
    h.requested(Some("s-9"));
    h.answer_detail("s-9", record("s-9", AGENT, ENV, 30));
    h.answer_history("s-9");
    assert_eq!(h.current().as_deref(), Some("s-9"));
    h
}

/// The ways a detail read can fail (OI-24).
#[derive(Debug, Clone, Copy)]
enum Failure {
    NotFound,
    ServerError,
    NoAnswer,
    OtherEnvironment,
}

const FAILURES: [Failure; 4] = [
    Failure::NotFound,
    Failure::ServerError,
    Failure::NoAnswer,
    Failure::OtherEnvironment,
];

fn fail_detail(h: &mut Harness, uid: &str, f: Failure) {
    let id = h.detail_request(uid);
    match f {
        Failure::NotFound => h.reply(id, 404, json!({"detail": "No AgentSession matches."})),
        Failure::ServerError => h.reply(id, 500, json!({"detail": "Database unavailable."})),
        Failure::NoAnswer => h.fail(id),
        Failure::OtherEnvironment => h.reply(id, 200, record(uid, AGENT, ENV2, 30)),
    };
}

// ---------------------------------------------------------------------------------------------
// REQ-1
// ---------------------------------------------------------------------------------------------

/// REQ-1: setting requestedSessionId selects the session in the same step, before the list or
/// the detail has answered.
#[test]
fn req_1_selected_in_same_step_before_any_answer() {
    let mut h = Harness::visible_in_env();
    let list = h.list_request();
    h.requested(Some("s-9"));
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-9"));
    assert_eq!(s.selection_origin, Some(Origin::Requested));
    assert_eq!(
        s.active_session_readiness.session_id.as_deref(),
        Some("s-9")
    );
    assert!(
        h.open_requests().iter().any(|r| r.id == list),
        "list still pending"
    );
}

/// REQ-1: a requested session replaces the implicit newest session at once, and is selected
/// at once while the chat is hidden too.
#[test]
fn req_1_replaces_newest_and_applies_while_hidden() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 40)]);
    assert_eq!(h.current().as_deref(), Some("s-1"));
    h.requested(Some("s-9"));
    assert_eq!(h.current().as_deref(), Some("s-9"));

    let mut h = Harness::new();
    h.person("user-1").env(Some(ENV));
    h.requested(Some("s-9"));
    assert_eq!(h.current().as_deref(), Some("s-9"));
}

// ---------------------------------------------------------------------------------------------
// REQ-2
// ---------------------------------------------------------------------------------------------

/// REQ-2: the detail is requested at once, GET /api/v1/agent-sessions/{uid}/ with the
/// Environment, while the latest-sessions list has not loaded.
#[test]
fn req_2_detail_requested_without_waiting_for_list() {
    let mut h = Harness::visible_in_env();
    let list = h.list_request();
    h.requested(Some("s-9"));
    let id = h.detail_request("s-9");
    let req = &h.request(id).request;
    assert_eq!(req.method, Method::Get);
    assert_eq!(req.path, "/api/v1/agent-sessions/s-9/");
    assert_eq!(
        req.query,
        vec![("organization_environment_uid".to_owned(), ENV.to_owned())]
    );
    assert_eq!(req.body, None);
    assert_eq!(
        req.header("Authorization"),
        Some("Bearer platform-token-secret")
    );
    assert!(h.open_requests().iter().any(|r| r.id == list));
}

/// REQ-2: the detail is requested when the loaded list does not contain the session.
#[test]
fn req_2_detail_requested_when_missing_from_loaded_list() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 40)]);
    h.requested(Some("s-9"));
    h.detail_request("s-9");
    assert_eq!(count_detail(&h, "s-9"), 1);
}

/// REQ-2: the detail read follows the visibility gate: nothing while hidden, the request as
/// soon as the chat becomes visible.
#[test]
fn req_2_detail_follows_visibility_gate() {
    let mut h = Harness::new();
    h.person("user-1").env(Some(ENV));
    h.requested(Some("s-9"));
    assert_eq!(h.current().as_deref(), Some("s-9"));
    assert_eq!(count_detail(&h, "s-9"), 0);
    assert!(h.sent().is_empty(), "nothing is requested while hidden");
    h.visible(true);
    assert_eq!(count_detail(&h, "s-9"), 1);
    h.detail_request("s-9");
}

// ---------------------------------------------------------------------------------------------
// REQ-3
// ---------------------------------------------------------------------------------------------

/// REQ-3, OI-13: a loaded requested session missing from the list is added to it, in its place
/// by updated time.
#[test]
fn req_3_loaded_session_added_to_list_in_order() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 40), record("s-2", AGENT, ENV, 10)]);
    h.requested(Some("s-9"));
    assert_eq!(
        h.list_uids(),
        ["s-1", "s-2"],
        "not added before the detail loads"
    );
    h.answer_detail("s-9", record("s-9", AGENT, ENV, 30));
    assert_eq!(h.list_uids(), ["s-1", "s-9", "s-2"]);
}

/// REQ-3: a requested session already in the list is not added twice.
#[test]
fn req_3_listed_session_not_duplicated() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 40), record("s-2", AGENT, ENV, 10)]);
    h.requested(Some("s-2"));
    h.answer_detail("s-2", record("s-2", AGENT, ENV, 10));
    assert_eq!(h.list_uids(), ["s-1", "s-2"]);
}

/// REQ-3: a requested session whose detail loaded before the list keeps its place in the list
/// once the list loads without it.
#[test]
fn req_3_added_session_survives_later_list_load() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-9"));
    h.answer_detail("s-9", record("s-9", AGENT, ENV, 30));
    assert_eq!(h.list_uids(), ["s-9"]);
    h.answer_list(&[record("s-1", AGENT, ENV, 40), record("s-2", AGENT, ENV, 10)]);
    assert_eq!(h.current().as_deref(), Some("s-9"));
    assert_eq!(h.list_uids(), ["s-1", "s-9", "s-2"], "{}", h.transcript());
}

/// REQ-3: a loaded requested session stays in the list when the list is read again without it
/// (it is still a requested session missing from the platform's latest sessions).
#[test]
fn req_3_added_session_survives_list_refresh() {
    let mut h = requested_loaded();
    assert_eq!(h.list_uids(), ["s-1", "s-9", "s-2"]);
    h.command(Command::RetryDefaultSession);
    h.answer_list(&[record("s-1", AGENT, ENV, 40), record("s-2", AGENT, ENV, 10)]);
    assert_eq!(h.current().as_deref(), Some("s-9"));
    assert_eq!(h.list_uids(), ["s-1", "s-9", "s-2"], "{}", h.transcript());
}

/// REQ-3 (transcript): requested session missing from the list, detail requested at once,
/// added to the list once loaded.
#[test]
fn req_3_transcript_requested_added() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 40), record("s-2", AGENT, ENV, 10)]);
    h.requested(Some("s-9"));
    h.answer_detail("s-9", record("s-9", AGENT, ENV, 30));
    h.answer_history("s-9");
    insta::assert_snapshot!(h.transcript());
}

// ---------------------------------------------------------------------------------------------
// REQ-4
// ---------------------------------------------------------------------------------------------

/// REQ-4: a loaded requested session stays selected when the list loads later.
#[test]
fn req_4_loaded_requested_survives_list_load() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-9"));
    h.answer_detail("s-9", record("s-9", AGENT, ENV, 5));
    h.answer_history("s-9");
    h.answer_list(&[record("s-1", AGENT, ENV, 59)]);
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-9"));
    assert_eq!(s.selection_origin, Some(Origin::Requested));
    assert_eq!(count_detail(&h, "s-1"), 0, "the newest is not hydrated");
}

/// REQ-4: a loaded requested session stays selected when the list refreshes with newer
/// sessions (the refresh of retryDefaultSession re-reads the list).
#[test]
fn req_4_loaded_requested_survives_list_refresh() {
    let mut h = requested_loaded();
    let mark = h.mark();
    h.command(Command::RetryDefaultSession);
    assert!(
        h.sent_since(mark)
            .iter()
            .any(|s| matches!(s.call, ApiCall::ListSessions { agent: None, .. })),
        "the list is read again: {}",
        h.transcript()
    );
    h.answer_list(&[record("s-0", AGENT, ENV, 59), record("s-1", AGENT, ENV, 40)]);
    assert_eq!(h.current().as_deref(), Some("s-9"));
    assert_eq!(count_detail(&h, "s-0"), 0);
}

// ---------------------------------------------------------------------------------------------
// REQ-5, REQ-6 (OI-24, OI-30), SHR-7
// ---------------------------------------------------------------------------------------------

/// REQ-5, OI-24: every way the detail read can fail (404, another HTTP error, no answer, a
/// record from another Environment) selects the newest listed session instead, which is then
/// hydrated.
#[test]
fn req_5_failed_requested_falls_back_to_newest() {
    for f in FAILURES {
        let mut h = Harness::visible_in_env();
        h.answer_list(&[record("s-2", AGENT, ENV, 10), record("s-1", AGENT, ENV, 40)]);
        h.requested(Some("s-9"));
        fail_detail(&mut h, "s-9", f);
        let s = h.snapshot();
        assert_eq!(s.current_session_id.as_deref(), Some("s-1"), "{f:?}");
        assert_eq!(s.selection_origin, Some(Origin::Newest), "{f:?}");
        h.detail_request("s-1");
    }
}

/// REQ-5: when the list is empty, a failed requested session leaves nothing selected.
#[test]
fn req_5_failed_requested_with_empty_list_selects_nothing() {
    for f in FAILURES {
        let mut h = Harness::visible_in_env();
        h.answer_list(&[]);
        h.requested(Some("s-9"));
        fail_detail(&mut h, "s-9", f);
        assert_eq!(h.current(), None, "{f:?}");
        assert!(
            h.snapshot()
                .session_notice
                .as_deref()
                .is_some_and(|n| n.starts_with(PREFIX)),
            "{f:?}"
        );
    }
}

/// REQ-5: a requested session that fails before the list has loaded gives way to the newest
/// session as soon as the list loads.
#[test]
fn req_5_failure_before_list_selects_newest_once_loaded() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-9"));
    fail_detail(&mut h, "s-9", Failure::NotFound);
    h.answer_list(&[record("s-1", AGENT, ENV, 40), record("s-2", AGENT, ENV, 10)]);
    assert_eq!(h.current().as_deref(), Some("s-1"));
}

/// REQ-5, REQ-6, INV-10: the failure of a requested session that is no longer selected does
/// nothing: no fallback, no notice.
#[test]
fn req_5_stale_failure_of_replaced_request_is_ignored() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 40)]);
    h.requested(Some("s-9"));
    let old = h.detail_request("s-9");
    h.requested(Some("s-8"));
    assert!(h.was_aborted(old));
    let before = h.snapshot();
    h.reply(old, 404, json!({"detail": "Not found."}));
    assert_eq!(h.snapshot(), before);
    assert_eq!(h.current().as_deref(), Some("s-8"));
    assert_eq!(h.snapshot().session_notice, None);
}

/// REQ-5: a failure of the requested session after its detail has loaded (a later re-read)
/// does not replace it (REQ-4 holds).
#[test]
fn req_5_reread_failure_after_load_keeps_selection() {
    let mut h = requested_loaded();
    h.command(Command::RefreshSessionDetail);
    let id = h.detail_request("s-9");
    h.reply(id, 500, json!({"detail": "Hiccup."}));
    assert_eq!(h.current().as_deref(), Some("s-9"));
}

/// REQ-6, OI-24, OI-30: with no answer, sessionNotice is exactly the prefix followed by the
/// transport error's message, as one plain string.
#[test]
fn req_6_notice_text_no_answer() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 40)]);
    h.requested(Some("s-9"));
    assert_eq!(h.snapshot().session_notice, None);
    fail_detail(&mut h, "s-9", Failure::NoAnswer);
    assert_eq!(
        h.snapshot().session_notice.as_deref(),
        Some("The session referenced by this link is unavailable. connection refused")
    );
}

/// REQ-6, OI-24: for an HTTP failure the notice is the prefix, a space, then the error's
/// message, which carries the server's message.
#[test]
fn req_6_notice_text_http_failures() {
    for (f, server) in [
        (Failure::NotFound, "No AgentSession matches."),
        (Failure::ServerError, "Database unavailable."),
    ] {
        let mut h = Harness::visible_in_env();
        h.answer_list(&[record("s-1", AGENT, ENV, 40)]);
        h.requested(Some("s-9"));
        fail_detail(&mut h, "s-9", f);
        let notice = h.snapshot().session_notice.expect("a notice");
        let reason = notice
            .strip_prefix(PREFIX)
            .and_then(|r| r.strip_prefix(' '))
            .unwrap_or_else(|| panic!("{notice:?}"));
        assert!(reason.contains(server), "{notice:?}");
    }
}

/// REQ-6, OI-24: a record from another Environment gives the notice with a non-empty reason.
#[test]
fn req_6_notice_text_other_environment() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 40)]);
    h.requested(Some("s-9"));
    fail_detail(&mut h, "s-9", Failure::OtherEnvironment);
    let notice = h.snapshot().session_notice.expect("a notice");
    let reason = notice
        .strip_prefix(PREFIX)
        .and_then(|r| r.strip_prefix(' '))
        .unwrap_or_else(|| panic!("{notice:?}"));
    assert!(!reason.trim().is_empty(), "{notice:?}");
}

/// REQ-6, SHR-7: the notice set by the fallback step stays while the fallback session is
/// hydrated, and is cleared when the selection moves to another session.
#[test]
fn req_6_notice_kept_for_fallback_cleared_on_move() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 40), record("s-2", AGENT, ENV, 10)]);
    h.requested(Some("s-9"));
    fail_detail(&mut h, "s-9", Failure::NotFound);
    assert_eq!(h.current().as_deref(), Some("s-1"));
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 40));
    h.answer_history("s-1");
    assert!(
        h.snapshot()
            .session_notice
            .as_deref()
            .is_some_and(|n| n.starts_with(PREFIX))
    );
    h.requested(Some("s-2"));
    assert_eq!(h.current().as_deref(), Some("s-2"));
    assert_eq!(h.snapshot().session_notice, None);
}

/// REQ-6, SHR-7: a loaded requested session has no notice.
#[test]
fn req_6_no_notice_when_requested_loads() {
    let h = requested_loaded();
    assert_eq!(h.snapshot().session_notice, None);
}

/// REQ-5, REQ-6 (transcript): the requested detail answers 404; the newest session is selected
/// and the notice set in the same step.
#[test]
fn req_5_transcript_not_found_fallback() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 40)]);
    h.requested(Some("s-9"));
    fail_detail(&mut h, "s-9", Failure::NotFound);
    insta::assert_snapshot!(h.transcript());
}

// ---------------------------------------------------------------------------------------------
// REQ-7, REQ-8, REQ-9 (OI-11, OI-24)
// ---------------------------------------------------------------------------------------------

/// REQ-7, OI-11, OI-24: archiving the requested session through the engine sends
/// POST /api/v1/agent-sessions/{uid}/archive/ and, once it succeeds, calls
/// onRequestedSessionRemoved once with that id.
#[test]
fn req_7_archive_requested_calls_removed_once() {
    let mut h = requested_loaded();
    let id = archive(&mut h, "s-9");
    let req = &h.request(id).request;
    assert_eq!(req.method, Method::Post);
    assert_eq!(req.path, "/api/v1/agent-sessions/s-9/archive/");
    assert!(req.query.is_empty());
    assert_eq!(req.body, None);
    assert!(
        removed_events(&h).is_empty(),
        "not before the archive succeeds"
    );
    h.reply(id, 200, archived("s-9"));
    assert_eq!(removed_events(&h), ["s-9"]);
    assert!(!h.list_uids().contains(&"s-9".to_owned()));
    // Later steps do not call it again.
    h.visible(false).visible(true);
    assert_eq!(removed_events(&h), ["s-9"]);
}

/// REQ-7, OI-24: a failed archive (HTTP error or no answer) does not call
/// onRequestedSessionRemoved.
#[test]
fn req_7_failed_archive_does_not_call_removed() {
    let mut h = requested_loaded();
    let id = archive(&mut h, "s-9");
    h.reply(id, 500, json!({"detail": "Archive refused."}));
    let id = archive(&mut h, "s-9");
    h.fail(id);
    assert!(removed_events(&h).is_empty());
    assert_eq!(h.current().as_deref(), Some("s-9"));
}

/// REQ-7, OI-24: a requested session that merely disappears from a re-read list does not call
/// onRequestedSessionRemoved; only the engine's own archive counts.
#[test]
fn req_7_list_without_requested_does_not_call_removed() {
    let mut h = requested_loaded();
    h.command(Command::RetryDefaultSession);
    h.answer_list(&[record("s-1", AGENT, ENV, 40)]);
    assert!(removed_events(&h).is_empty());
}

/// REQ-7 (transcript): archive of the requested session and onRequestedSessionRemoved.
#[test]
fn req_7_transcript_archive_requested() {
    let mut h = requested_loaded();
    let id = archive(&mut h, "s-9");
    h.reply(id, 200, archived("s-9"));
    insta::assert_snapshot!(h.transcript());
}

/// REQ-8: archiving another session while a session is requested does not call
/// onRequestedSessionRemoved.
#[test]
fn req_8_archive_other_session_does_not_call_removed() {
    let mut h = requested_loaded();
    let id = archive(&mut h, "s-1");
    h.reply(id, 200, archived("s-1"));
    assert!(removed_events(&h).is_empty());
    assert_eq!(h.current().as_deref(), Some("s-9"));
    assert_eq!(h.list_uids(), ["s-9", "s-2"]);
}

/// REQ-8: archiving the selected session when no session is requested does not call
/// onRequestedSessionRemoved.
#[test]
fn req_8_archive_without_request_does_not_call_removed() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 40), record("s-2", AGENT, ENV, 10)]);
    assert_eq!(h.current().as_deref(), Some("s-1"));
    let id = archive(&mut h, "s-1");
    h.reply(id, 200, archived("s-1"));
    assert!(removed_events(&h).is_empty());
}

/// REQ-9, OI-11, OI-24: deleting the requested session through the engine
/// (DELETE /api/v1/agent-sessions/{uid}/) never calls onRequestedSessionRemoved.
#[test]
fn req_9_delete_requested_does_not_call_removed() {
    let mut h = requested_loaded();
    let id = delete(&mut h, "s-9");
    let req = &h.request(id).request;
    assert_eq!(req.method, Method::Delete);
    assert_eq!(req.path, "/api/v1/agent-sessions/s-9/");
    assert_eq!(req.body, None);
    h.reply_raw(id, 204, None, b"", None);
    assert!(
        !h.list_uids().contains(&"s-9".to_owned()),
        "the delete succeeded"
    );
    assert!(removed_events(&h).is_empty());
    assert!(
        !h.events()
            .iter()
            .any(|e| matches!(e, Event::RequestedSessionRemoved { .. }))
    );
}

//! Orders of inputs that cross the concerns: selection, default session, actions, hydration and
//! scope changes arriving in unusual orders. Each test names the rules it checks.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use engine_core::{ApiCall, Command, DefaultSessionStatus, Event, Input, Origin, Person, Secret};
use serde_json::json;
use spec_tests::Harness;
use spec_tests::fixtures::{AGENT, AGENT2, ENV, ENV2, HANDLE, USER, handle_record, page, record};

fn goc_count(h: &Harness) -> usize {
    h.count(|c| matches!(c, ApiCall::GetOrCreateSession { .. }))
}

/// DEF-1, DEF-11, INV-10: archiving the listed default session while its get-or-create is still
/// running asks again; the running answer (the platform's view from before the archive) never
/// brings the archived session back.
#[test]
fn archived_default_session_is_not_brought_back_by_its_running_get_or_create() {
    let mut h = Harness::default_state();
    let first = h.get_or_create_request();
    h.answer_list(&[
        handle_record("s-d", AGENT, ENV, HANDLE, 5),
        record("s-1", AGENT, ENV, 1),
    ]);
    assert_eq!(h.current().as_deref(), Some("s-d"));
    h.command(Command::ArchiveAgentSession {
        session_uid: "s-d".into(),
    });
    let archive = h.expect_pending("archive", |c| matches!(c, ApiCall::ArchiveSession { .. }));
    h.reply(archive, 200, json!({"uid": "s-d", "is_archived": true}));
    assert!(h.was_aborted(first), "the running get-or-create is dropped");
    assert_eq!(goc_count(&h), 2, "and asked anew");
    h.reply(first, 200, handle_record("s-d", AGENT, ENV, HANDLE, 5));
    assert_ne!(h.current().as_deref(), Some("s-d"));
    assert!(!h.list_uids().contains(&"s-d".to_owned()));
    let second = h.get_or_create_request();
    h.reply(second, 201, handle_record("s-d2", AGENT, ENV, HANDLE, 9));
    assert_eq!(h.current().as_deref(), Some("s-d2"));
    assert_eq!(
        h.snapshot().default_session_status,
        DefaultSessionStatus::Ready
    );
}

/// REQ-4: a session that loaded as the newest and is then requested is a loaded requested
/// session: a later failing re-read of its detail does not replace it with the newest.
#[test]
fn requesting_the_loaded_newest_session_keeps_it_loaded() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 9), record("s-2", AGENT, ENV, 1)]);
    h.hydrate("s-1", AGENT);
    h.requested(Some("s-1"));
    assert_eq!(h.snapshot().selection_origin, Some(Origin::Requested));
    h.visible(false).visible(true);
    let id = h.detail_request("s-1");
    h.reply(id, 500, json!({"detail": "Down."}));
    assert_eq!(h.current().as_deref(), Some("s-1"));
    assert_eq!(h.snapshot().session_notice, None);
}

/// REQ-5, REQ-6: requesting a session whose detail read already failed (404) under another
/// origin falls back to the newest session with the notice, as a fresh request would.
#[test]
fn requesting_a_session_whose_detail_already_failed_falls_back() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 9), record("s-2", AGENT, ENV, 1)]);
    let id = h.detail_request("s-1");
    h.reply(id, 404, json!({"detail": "No AgentSession matches."}));
    assert_eq!(
        h.current().as_deref(),
        Some("s-1"),
        "the newest stays: it was not requested"
    );
    h.requested(Some("s-1"));
    assert_eq!(h.current().as_deref(), Some("s-2"));
    let notice = h.snapshot().session_notice.unwrap();
    assert!(
        notice.starts_with("The session referenced by this link is unavailable. "),
        "{notice}"
    );
    assert!(notice.contains("No AgentSession matches."), "{notice}");
}

/// SEL-14, OI-14: a requested id set while a launch lookup runs is the latest selecting event:
/// the lookup is dropped and its late answer selects nothing.
#[test]
fn requested_id_beats_a_running_launch() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 9)]);
    h.launch(AGENT2, 1);
    let lookup = h.expect_pending("lookup", |c| {
        matches!(c, ApiCall::ListSessions { agent: Some(_), .. })
    });
    h.requested(Some("s-9"));
    assert!(h.was_aborted(lookup));
    h.reply(lookup, 200, page(&[record("s-L", AGENT2, ENV, 30)]));
    assert_eq!(h.current().as_deref(), Some("s-9"));
    assert_eq!(h.snapshot().selection_origin, Some(Origin::Requested));
    assert!(!h.events().contains(&Event::RequestVisible));
}

/// ENV-2, OI-14: a requested id consumed by an Environment change does not come back through an
/// Environment-less detour (env-1, none, env-2).
#[test]
fn requested_id_does_not_return_through_an_environment_detour() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-9"));
    h.answer_detail("s-9", record("s-9", AGENT, ENV, 1));
    h.env(None);
    h.env(Some(ENV2));
    assert_eq!(h.current(), None);
    assert!(
        h.pending(
            |c| matches!(c, ApiCall::GetSessionDetail { session_uid, .. } if session_uid == "s-9")
        )
        .is_none()
    );
}

/// ENV-2, OI-14: a session requested before the person and the Environment are known carries
/// into the pair that completes them, in either order of arrival, and is read there.
#[test]
fn requested_id_set_before_person_and_environment_carries_into_them() {
    for person_first in [true, false] {
        let mut h = Harness::new();
        h.visible(true);
        h.requested(Some("s-9"));
        if person_first {
            h.person(USER);
            h.env(Some(ENV));
        } else {
            h.env(Some(ENV));
            h.person(USER);
        }
        assert_eq!(
            h.current().as_deref(),
            Some("s-9"),
            "person first: {person_first}"
        );
        h.detail_request("s-9");
        // Once complete, a later change consumes it as usual.
        h.env(Some(ENV2));
        assert_eq!(h.current(), None);
    }
}

/// FAIL-13, SEL-8: a start action before any Environment is refused before any request, with
/// the no-Environment text, so no session is created that could not be shown.
#[test]
fn start_action_without_environment_is_refused_before_any_request() {
    let mut h = Harness::new();
    h.input(Input::Person(Person::new(USER, Secret::new("t"))));
    h.visible(true);
    h.command(Command::StartAgentSessionById {
        agent_id: AGENT.into(),
        label: None,
    });
    // Only the catalog is read: it belongs to the person, not to an Environment.
    let session_requests: Vec<_> = h
        .sent()
        .iter()
        .filter(|s| !matches!(s.call, engine_core::ApiCall::ListModelProviders))
        .collect();
    assert!(session_requests.is_empty(), "{session_requests:?}");
    let notice = h.notices().pop().unwrap();
    assert_eq!(notice.title, "Agent session not created");
    assert_eq!(
        notice.description.as_deref(),
        Some("Session requests require organization_environment_uid.")
    );
}

/// SEL-8, OI-13: an archived record answered by a creation is selected as created but never
/// listed.
#[test]
fn archived_creation_answer_is_not_listed() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 1)]);
    h.command(Command::StartAgentSessionById {
        agent_id: AGENT.into(),
        label: None,
    });
    let id = h.expect_pending("start", |c| matches!(c, ApiCall::StartNewSession { .. }));
    let mut created = record("s-new", AGENT, ENV, 9);
    created["is_archived"] = json!(true);
    h.reply(id, 201, created);
    assert_eq!(h.current().as_deref(), Some("s-new"));
    assert_eq!(h.list_uids(), ["s-1"]);
}

/// `unarchiveAgentSession(uid)` (adr-notes section 6, OI-13): POST .../unarchive/ with no body;
/// the restored record joins the list in its place by time; the selection does not move.
#[test]
fn unarchive_restores_the_session_into_the_list() {
    let mut h = Harness::selected("s-1");
    let mark = h.mark();
    h.command(Command::UnarchiveAgentSession {
        session_uid: "s-old".into(),
    });
    let sent = h.sent_since(mark).to_vec();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].request.method.as_str(), "POST");
    assert_eq!(
        sent[0].request.path,
        "/api/v1/agent-sessions/s-old/unarchive/"
    );
    assert!(sent[0].request.body.is_none());
    let mut restored = record("s-old", AGENT, ENV, 30);
    restored["archived_at"] = json!(null);
    h.reply(sent[0].id, 200, restored);
    assert_eq!(h.list_uids(), ["s-old", "s-1"]);
    assert_eq!(h.current().as_deref(), Some("s-1"));
    assert!(h.notices().is_empty());
}

/// A refused or still-archived restore is a notify ("Session not restored"), and the list does
/// not change; an id that cannot be a path segment is refused before any request.
#[test]
fn unarchive_failures_are_notified() {
    let mut h = Harness::selected("s-1");
    h.command(Command::UnarchiveAgentSession {
        session_uid: "s-old".into(),
    });
    let id = h
        .pending(|c| matches!(c, ApiCall::UnarchiveSession { .. }))
        .unwrap();
    h.reply(id, 500, json!({"detail": "Storage is read-only."}));
    let n = h.notices();
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].title, "Session not restored");
    assert!(
        n[0].description
            .as_deref()
            .unwrap_or("")
            .contains("Storage is read-only."),
        "{n:?}"
    );
    h.command(Command::UnarchiveAgentSession {
        session_uid: "s-old".into(),
    });
    let id = h
        .pending(|c| matches!(c, ApiCall::UnarchiveSession { .. }))
        .unwrap();
    let mut still = record("s-old", AGENT, ENV, 30);
    still["is_archived"] = json!(true);
    h.reply(id, 200, still);
    let n = h.notices();
    assert_eq!(
        n[1].description.as_deref(),
        Some("Unable to restore this session.")
    );
    assert_eq!(h.list_uids(), ["s-1"]);
    let mark = h.mark();
    h.command(Command::UnarchiveAgentSession {
        session_uid: "undefined".into(),
    });
    assert!(h.sent_since(mark).is_empty());
    assert_eq!(h.notices().len(), 3);
}

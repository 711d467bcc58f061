#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Malformed and hostile platform answers for every request kind the engine makes (the list, the
//! detail of an implicit and of a requested session, history, insights, get-or-create,
//! start-new-session and archive), answers for unknown or finished requests, and hostile ids.
//!
//! Every case must end without a panic in the failure state the rules name for that request, or,
//! where the wire contract says a shape is read leniently, in the loaded state.

use engine_core::{
    ApiCall, Command, Config, DefaultSessionStatus, Event, NoticeVariant, Origin, ReadinessStatus,
    RequestId,
};
use serde_json::{Value, json};
use spec_tests::fixtures::{
    AGENT, AGENT2, ENV, ENV2, HANDLE, USER, handle_record, history, insights, page, record,
};
use spec_tests::{BASE, Harness};

const HISTORY_NOTICE: &str = "Failed to rehydrate the selected AgentSession. Interaction is disabled until session history loads.";
const UNAVAILABLE_PREFIX: &str = "The session referenced by this link is unavailable. ";
const DEFAULT_UNAVAILABLE: &str = "The Agent's session could not be opened. Try again.";
const SMALL_LIMIT: usize = 2048;

// ---------------------------------------------------------------------------------------------
// The request kinds and how each one is reached

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The latest-sessions list.
    List,
    /// The detail of the implicitly selected session s-1.
    Detail,
    /// The detail of the requested session s-r (the list holds s-1).
    RequestedDetail,
    /// The history of s-1.
    History,
    /// The insights of s-1.
    Insights,
    /// The default session's get-or-create.
    GetOrCreate,
    /// start-new-session for startAgentSessionById, next to a ready s-1.
    StartNew,
    /// The archive of s-2, next to a ready s-1.
    Archive,
}

const KINDS: [Kind; 8] = [
    Kind::List,
    Kind::Detail,
    Kind::RequestedDetail,
    Kind::History,
    Kind::Insights,
    Kind::GetOrCreate,
    Kind::StartNew,
    Kind::Archive,
];

fn harness(limit: Option<usize>) -> Harness {
    let mut h = match limit {
        None => Harness::new(),
        Some(limit) => {
            let mut config = Config::new(BASE).unwrap().with_seed(1);
            config.max_body_bytes = limit;
            Harness::with_config(config)
        }
    };
    h.person(USER);
    h.env(Some(ENV));
    h.visible(true);
    h
}

/// A harness with the request of `kind` open, and that request's id.
fn setup(kind: Kind, limit: Option<usize>) -> (Harness, RequestId) {
    let mut h = harness(limit);
    let id = match kind {
        Kind::List => h.list_request(),
        Kind::Detail => {
            h.answer_list(&[record("s-1", AGENT, ENV, 2)]);
            h.detail_request("s-1")
        }
        Kind::RequestedDetail => {
            h.answer_list(&[record("s-1", AGENT, ENV, 2)]);
            h.requested(Some("s-r"));
            h.detail_request("s-r")
        }
        Kind::History => {
            h.answer_list(&[record("s-1", AGENT, ENV, 2)]);
            h.answer_detail("s-1", record("s-1", AGENT, ENV, 2));
            h.history_request("s-1")
        }
        Kind::Insights => {
            h.answer_list(&[record("s-1", AGENT, ENV, 2)]);
            h.answer_detail("s-1", record("s-1", AGENT, ENV, 2));
            h.answer_history("s-1");
            h.insights_request("s-1")
        }
        Kind::GetOrCreate => {
            h.shows_default(true);
            h.default_session(Some(AGENT));
            h.get_or_create_request()
        }
        Kind::StartNew | Kind::Archive => {
            h.answer_list(&[record("s-1", AGENT, ENV, 2), record("s-2", AGENT, ENV, 1)]);
            h.answer_detail("s-1", record("s-1", AGENT, ENV, 2));
            h.answer_history("s-1");
            if kind == Kind::StartNew {
                h.command(Command::StartAgentSessionById {
                    agent_id: AGENT2.to_owned(),
                    label: None,
                });
                h.expect_pending("start-new-session", |c| {
                    matches!(c, ApiCall::StartNewSession { .. })
                })
            } else {
                h.command(Command::ArchiveAgentSession {
                    session_uid: "s-2".to_owned(),
                });
                h.expect_pending("archive", |c| matches!(c, ApiCall::ArchiveSession { .. }))
            }
        }
    };
    (h, id)
}

/// A record whose name carries multi-byte characters.
fn unicode_record(uid: &str, agent: &str, minute: u32) -> Value {
    let mut r = record(uid, agent, ENV, minute);
    r["name"] = json!("Café ☕ «naïve» — 🚀");
    r
}

/// A valid answer for `kind`.
fn valid_answer(kind: Kind) -> (u16, Value) {
    match kind {
        Kind::List => (200, page(&[unicode_record("s-1", AGENT, 2)])),
        Kind::Detail => (200, unicode_record("s-1", AGENT, 2)),
        Kind::RequestedDetail => (200, unicode_record("s-r", AGENT, 3)),
        Kind::History => {
            let mut hist = history("s-1");
            hist["messages"][1]["content"][0]["text"] = json!("Q3 totals 4120 € ✓ — naïve 🚀");
            (200, hist)
        }
        Kind::Insights => (200, insights("s-1")),
        Kind::GetOrCreate => (200, handle_record("s-d", AGENT, ENV, HANDLE, 4)),
        Kind::StartNew => (201, unicode_record("s-n", AGENT2, 5)),
        Kind::Archive => {
            let mut r = record("s-2", AGENT, ENV, 1);
            r["is_archived"] = json!(true);
            r["archived_at"] = json!("2026-10-03T07:30:00Z");
            (200, r)
        }
    }
}

/// How an answer is expected to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// The failure state the rules name for the request.
    Failed,
    /// Read leniently as loaded (an empty list, an empty transcript, no insights fields).
    Loaded,
    /// No rule decides; the state must only be consistent (archive: removed xor a failure notice).
    Consistent,
}

fn notify_titles(h: &Harness) -> Vec<String> {
    h.events()
        .iter()
        .filter_map(|e| match e {
            Event::Notify(n) => Some(n.title.clone()),
            _ => None,
        })
        .collect()
}

/// Every text a surface may show.
fn visible_texts(h: &Harness) -> Vec<String> {
    let s = h.snapshot();
    let mut texts: Vec<String> = [
        s.latest_sessions_error.clone(),
        s.active_session_readiness.error.clone(),
        s.session_notice.clone(),
        s.default_session_error.clone(),
        s.active_session_detail
            .as_ref()
            .and_then(|d| d.insights_error.clone()),
        s.active_session_detail
            .as_ref()
            .and_then(|d| d.error.clone()),
    ]
    .into_iter()
    .flatten()
    .collect();
    for e in h.events() {
        if let Event::Notify(n) = e {
            texts.push(n.title.clone());
            texts.extend(n.description.clone());
        }
    }
    texts
}

/// FAIL-6, FAIL-7, FAIL-9, FAIL-10, FAIL-11, FAIL-12, FAIL-13, FAIL-4, REQ-5, REQ-6: the state
/// each kind of request ends in after `expect`.
fn assert_outcome(kind: Kind, expect: Expect, h: &Harness, label: &str) {
    let s = h.snapshot();
    let r = &s.active_session_readiness;
    for text in visible_texts(h) {
        assert!(
            !text.contains("<html") && !text.contains("<!DOCTYPE") && !text.contains("<body"),
            "{label}: markup leaked into a visible text: {text:?}"
        );
    }
    match (kind, expect) {
        (Kind::List, Expect::Failed) => {
            let e = s.latest_sessions_error.as_deref();
            assert!(e.is_some_and(|e| !e.trim().is_empty()), "{label}: {e:?}");
            assert_eq!(s.current_session_id, None, "{label}");
            assert_eq!(r.status, ReadinessStatus::Error, "{label}");
            assert!(s.agent_sessions.is_empty(), "{label}");
        }
        (Kind::List, Expect::Loaded) => {
            assert_eq!(s.latest_sessions_error, None, "{label}");
            assert!(s.agent_sessions.is_empty(), "{label}");
            assert_eq!(s.current_session_id, None, "{label}");
            assert_eq!(r.status, ReadinessStatus::Idle, "{label}");
        }
        (Kind::Detail, Expect::Failed) => {
            assert_eq!(s.current_session_id.as_deref(), Some("s-1"), "{label}");
            assert!(
                matches!(r.status, ReadinessStatus::Error | ReadinessStatus::NotFound),
                "{label}: {:?}",
                r.status
            );
            assert!(r.error.is_some(), "{label}");
            assert_eq!(
                h.count(|c| matches!(c, ApiCall::GetSessionInsights { .. })),
                0,
                "{label}"
            );
            assert!(notify_titles(h).is_empty(), "{label}");
        }
        (Kind::RequestedDetail, Expect::Failed) => {
            // REQ-5: the newest session instead, REQ-6: the notice with the reason.
            assert_eq!(s.current_session_id.as_deref(), Some("s-1"), "{label}");
            assert_eq!(s.selection_origin, Some(Origin::Newest), "{label}");
            let notice = s.session_notice.as_deref().unwrap_or_default();
            assert!(
                notice.starts_with(UNAVAILABLE_PREFIX),
                "{label}: {notice:?}"
            );
            assert!(
                notice.len() > UNAVAILABLE_PREFIX.len(),
                "{label}: no reason"
            );
            assert_eq!(
                h.count(
                    |c| matches!(c, ApiCall::GetSessionInsights { session_uid } if session_uid == "s-r")
                ),
                0,
                "{label}"
            );
        }
        (Kind::History, Expect::Failed) => {
            assert_eq!(r.status, ReadinessStatus::Error, "{label}");
            assert_eq!(s.session_notice.as_deref(), Some(HISTORY_NOTICE), "{label}");
            assert!(s.thread.is_empty(), "{label}");
        }
        (Kind::History, Expect::Loaded) => {
            assert_eq!(r.status, ReadinessStatus::Ready, "{label}");
            assert_eq!(s.session_notice, None, "{label}");
        }
        (Kind::Insights, Expect::Failed) => {
            let d = s.active_session_detail.as_ref().unwrap();
            assert!(d.insights_error.is_some(), "{label}");
            assert_eq!(r.status, ReadinessStatus::Ready, "{label}");
        }
        (Kind::Insights, Expect::Loaded) => {
            let d = s.active_session_detail.as_ref().unwrap();
            assert_eq!(d.insights_error, None, "{label}");
            assert!(r.insights_ready, "{label}");
            assert_eq!(r.status, ReadinessStatus::Ready, "{label}");
        }
        (Kind::GetOrCreate, Expect::Failed) => {
            assert_eq!(
                s.default_session_status,
                DefaultSessionStatus::Error,
                "{label}"
            );
            let e = s.default_session_error.as_deref();
            assert!(e.is_some_and(|e| !e.trim().is_empty()), "{label}: {e:?}");
            assert_eq!(s.current_session_id, None, "{label}");
            assert!(notify_titles(h).is_empty(), "{label}");
        }
        (Kind::StartNew, Expect::Failed) => {
            assert_eq!(notify_titles(h), ["Agent session not created"], "{label}");
            assert_eq!(s.current_session_id.as_deref(), Some("s-1"), "{label}");
            assert!(!s.is_direct_launch_session, "{label}");
            assert!(!s.is_creating_agent_session, "{label}");
            assert!(
                !h.events()
                    .iter()
                    .any(|e| matches!(e, Event::RequestVisible)),
                "{label}"
            );
        }
        (Kind::Archive, _) => {
            let listed = s.agent_sessions.iter().any(|x| x.uid == "s-2");
            let failures = h
                .events()
                .iter()
                .filter(|e| matches!(e, Event::Notify(n) if n.variant == NoticeVariant::Error))
                .count();
            if expect == Expect::Failed {
                assert!(listed, "{label}: archived on a failed answer");
            }
            assert_eq!(
                failures,
                usize::from(listed),
                "{label}: listed={listed}, failure notices={failures}"
            );
            assert_eq!(s.current_session_id.as_deref(), Some("s-1"), "{label}");
            assert!(
                !h.events()
                    .iter()
                    .any(|e| matches!(e, Event::RequestedSessionRemoved { .. })),
                "{label}"
            );
        }
        (kind, expect) => panic!("{label}: no expectation for {kind:?} {expect:?}"),
    }
}

/// Runs `answer` against every kind and checks the outcome given by `expect`.
fn for_every_kind(
    name: &str,
    answer: impl Fn(Kind, &mut Harness, RequestId),
    expect: impl Fn(Kind) -> Expect,
) {
    for kind in KINDS {
        let (mut h, id) = setup(kind, None);
        answer(kind, &mut h, id);
        assert_outcome(kind, expect(kind), &h, &format!("{name} / {kind:?}"));
    }
}

/// The archive's body is not read by any rule; everything else fails on a broken 2xx body.
fn failed_except_archive(kind: Kind) -> Expect {
    if kind == Kind::Archive {
        Expect::Consistent
    } else {
        Expect::Failed
    }
}

// ---------------------------------------------------------------------------------------------
// Malformed bodies

/// FAIL-6, FAIL-7, FAIL-10, FAIL-11, FAIL-12, FAIL-13, FAIL-4, REQ-5, REQ-6: a 500 whose body is
/// an HTML page fails every request, and no markup reaches a visible text; the default session
/// falls back to the unavailable text.
#[test]
fn html_500_fails_every_request_without_leaking_markup() {
    let page = b"<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head><body><h1>Server Error</h1><p>Traceback ...</p></body></html>";
    for_every_kind(
        "html 500",
        |_, h, id| {
            h.reply_raw(id, 500, Some("text/html; charset=utf-8"), page, None);
        },
        |_| Expect::Failed,
    );
    let (mut h, id) = setup(Kind::GetOrCreate, None);
    h.reply_raw(id, 500, Some("text/html"), page, None);
    assert_eq!(
        h.snapshot().default_session_error.as_deref(),
        Some(DEFAULT_UNAVAILABLE)
    );
}

/// FAIL-6, FAIL-7, FAIL-10, FAIL-11, FAIL-12, FAIL-13, FAIL-4, REQ-5, REQ-6: a 200 whose JSON is
/// cut off fails every request that reads its body.
#[test]
fn truncated_json_fails_every_request() {
    for_every_kind(
        "truncated",
        |kind, h, id| {
            let (_, v) = valid_answer(kind);
            let text = v.to_string();
            let cut = &text.as_bytes()[..text.len() / 2];
            h.reply_raw(id, 200, Some("application/json"), cut, None);
        },
        failed_except_archive,
    );
}

/// FAIL-6, FAIL-7, FAIL-10, FAIL-11, FAIL-12, FAIL-13, FAIL-4, REQ-5, REQ-6: a 200 whose body is
/// not valid UTF-8 fails every request that reads its body.
#[test]
fn invalid_utf8_fails_every_request() {
    for_every_kind(
        "invalid utf-8",
        |_, h, id| {
            h.reply_raw(
                id,
                200,
                Some("application/json"),
                b"{\"uid\": \"s-\xff\xfe\", \"organization_environment_uid\": \"env-1\", \"results\": [], \"messages\": []}",
                None,
            );
        },
        failed_except_archive,
    );
}

/// FAIL-6, FAIL-7, FAIL-10, FAIL-11, FAIL-12, FAIL-13, FAIL-4, REQ-5, REQ-6: an error answer whose
/// body is not valid UTF-8 fails every request and shows no raw bytes.
#[test]
fn invalid_utf8_error_body_fails_every_request() {
    for_every_kind(
        "invalid utf-8 500",
        |_, h, id| {
            h.reply_raw(
                id,
                500,
                Some("text/plain"),
                b"Bad \xff\xfe gateway \xc3",
                None,
            );
        },
        |_| Expect::Failed,
    );
}

/// FAIL-6, FAIL-7, FAIL-10, FAIL-11, FAIL-12, FAIL-13, FAIL-4, REQ-5, REQ-6: an empty 200 body
/// fails every request that reads its body.
#[test]
fn empty_body_fails_every_request() {
    for_every_kind(
        "empty",
        |_, h, id| {
            h.reply_raw(id, 200, Some("application/json"), b"", None);
        },
        failed_except_archive,
    );
}

/// FAIL-10, FAIL-11, FAIL-12, FAIL-13, FAIL-4, REQ-5, REQ-6: JSON of the wrong type at the top
/// (a string, an array of numbers, null) fails every record, history and insights read; the list
/// reads anything but an array or a page as an empty list (platform-api P1), which is no error.
#[test]
fn wrong_top_level_json_types() {
    for body in [json!("surprise"), json!([1, 2, 3]), Value::Null, json!(42)] {
        for_every_kind(
            &format!("top-level {body}"),
            |_, h, id| {
                h.reply(id, 200, body.clone());
            },
            |kind| match kind {
                Kind::List => Expect::Loaded,
                other => failed_except_archive(other),
            },
        );
    }
}

/// FAIL-10, FAIL-13, FAIL-4, REQ-5, REQ-6: an object whose fields have the wrong types: the
/// record reads (uid a number) fail; the list (results a number) is empty; the history (messages
/// a string) and insights (has_insights a string) are read leniently as loaded.
#[test]
fn wrong_field_types() {
    let body = json!({
        "uid": 5,
        "organization_environment_uid": 7,
        "results": 5,
        "messages": "nope",
        "session": 5,
        "inProgressMessage": [],
        "has_insights": "yes",
        "harness": 9
    });
    for_every_kind(
        "wrong field types",
        |_, h, id| {
            h.reply(id, 200, body.clone());
        },
        |kind| match kind {
            Kind::List | Kind::History | Kind::Insights => Expect::Loaded,
            other => failed_except_archive(other),
        },
    );
}

/// A record with one field removed.
fn without(mut v: Value, field: &str) -> Value {
    v.as_object_mut().unwrap().remove(field);
    v
}

/// FAIL-6, FAIL-7: a list row without organization_environment_uid fails the whole read; rows
/// that are not records at all are skipped.
#[test]
fn list_row_missing_environment_fails_the_read() {
    let (mut h, id) = setup(Kind::List, None);
    h.reply(
        id,
        200,
        page(&[
            record("s-1", AGENT, ENV, 2),
            without(record("s-2", AGENT, ENV, 1), "organization_environment_uid"),
        ]),
    );
    assert_outcome(Kind::List, Expect::Failed, &h, "list row without env");
    assert_eq!(
        h.snapshot().latest_sessions_error.as_deref(),
        Some("The session response did not include organization_environment_uid.")
    );

    let (mut h, id) = setup(Kind::List, None);
    h.reply(
        id,
        200,
        json!({"results": [1, "x", null, [], {"uid": 5}, record("s-1", AGENT, ENV, 2)]}),
    );
    let s = h.snapshot();
    assert_eq!(s.latest_sessions_error, None);
    assert_eq!(s.current_session_id.as_deref(), Some("s-1"));
}

/// FAIL-10, REQ-5, REQ-6: a detail without uid or without organization_environment_uid fails.
#[test]
fn detail_missing_fields_fails() {
    for field in ["uid", "organization_environment_uid"] {
        let (mut h, id) = setup(Kind::Detail, None);
        h.reply(id, 200, without(record("s-1", AGENT, ENV, 2), field));
        assert_outcome(Kind::Detail, Expect::Failed, &h, &format!("no {field}"));
        let (mut h, id) = setup(Kind::RequestedDetail, None);
        h.reply(id, 200, without(record("s-r", AGENT, ENV, 2), field));
        assert_outcome(
            Kind::RequestedDetail,
            Expect::Failed,
            &h,
            &format!("requested, no {field}"),
        );
    }
}

/// FAIL-4, FAIL-13: get-or-create and start-new-session answers without a session uid fail.
#[test]
fn creation_answers_without_uid_fail() {
    let (mut h, id) = setup(Kind::GetOrCreate, None);
    h.reply(
        id,
        201,
        without(handle_record("s-d", AGENT, ENV, HANDLE, 0), "uid"),
    );
    assert_outcome(Kind::GetOrCreate, Expect::Failed, &h, "goc no uid");
    assert_eq!(
        h.snapshot().default_session_error.as_deref(),
        Some(DEFAULT_UNAVAILABLE)
    );
    // A wrapped get-or-create answer is refused too (platform-api P8).
    let (mut h, id) = setup(Kind::GetOrCreate, None);
    h.reply(
        id,
        200,
        json!({"session": handle_record("s-d", AGENT, ENV, HANDLE, 0)}),
    );
    assert_outcome(Kind::GetOrCreate, Expect::Failed, &h, "goc wrapped");

    let (mut h, id) = setup(Kind::StartNew, None);
    h.reply(id, 201, json!({"thread_id": "t-1", "data": {"uid": 7}}));
    assert_outcome(Kind::StartNew, Expect::Failed, &h, "start-new no uid");
}

// ---------------------------------------------------------------------------------------------
// Records from another Environment

/// FAIL-10: the detail of the selected session from another Environment is a readiness error
/// naming both Environments.
#[test]
fn detail_from_another_environment_is_a_readiness_error() {
    let (mut h, id) = setup(Kind::Detail, None);
    h.reply(id, 200, record("s-1", AGENT, ENV2, 2));
    assert_outcome(Kind::Detail, Expect::Failed, &h, "detail env-2");
    let r = h.snapshot().active_session_readiness;
    assert_eq!(r.status, ReadinessStatus::Error);
    assert_eq!(
        r.error.as_deref(),
        Some("The session belongs to Organization Environment env-2, not env-1.")
    );
}

/// REQ-5, REQ-6: the detail of a requested session from another Environment counts as "cannot be
/// loaded": the newest session is selected with the unavailable notice naming the reason.
#[test]
fn requested_detail_from_another_environment_falls_back_to_newest() {
    let (mut h, id) = setup(Kind::RequestedDetail, None);
    h.reply(id, 200, record("s-r", AGENT, ENV2, 2));
    assert_outcome(Kind::RequestedDetail, Expect::Failed, &h, "requested env-2");
    assert_eq!(
        h.snapshot().session_notice.as_deref(),
        Some(
            "The session referenced by this link is unavailable. The session belongs to Organization Environment env-2, not env-1."
        )
    );
    assert!(
        !h.snapshot().agent_sessions.iter().any(|s| s.uid == "s-r"),
        "a foreign record joined the list"
    );
}

/// FAIL-6, FAIL-7: a list holding one record from another Environment fails as a whole, and none
/// of its records are listed or selected.
#[test]
fn list_with_a_foreign_record_fails() {
    let (mut h, id) = setup(Kind::List, None);
    h.reply(
        id,
        200,
        page(&[record("s-1", AGENT, ENV, 2), record("s-x", AGENT, ENV2, 3)]),
    );
    assert_outcome(Kind::List, Expect::Failed, &h, "list env-2");
    assert_eq!(
        h.snapshot().latest_sessions_error.as_deref(),
        Some("The session belongs to Organization Environment env-2, not env-1.")
    );
}

/// FAIL-13: an Agent lookup (openLatestOrStartAgentSessionById) answered with another
/// Environment's session fails with a notify and selects nothing.
#[test]
fn agent_lookup_with_a_foreign_record_fails() {
    let mut h = harness(None);
    h.answer_list(&[record("s-1", AGENT, ENV, 2)]);
    h.command(Command::OpenLatestOrStartAgentSessionById {
        agent_id: AGENT2.to_owned(),
        label: None,
    });
    let lookup = h.expect_pending("lookup", |c| {
        matches!(c, ApiCall::ListSessions { agent: Some(_), .. })
    });
    h.reply(lookup, 200, page(&[record("s-x", AGENT2, ENV2, 3)]));
    assert_eq!(notify_titles(&h), ["Agent session not opened"]);
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-1"));
    assert!(!s.is_direct_launch_session);
    assert_eq!(h.count(|c| matches!(c, ApiCall::StartNewSession { .. })), 0);
}

// ---------------------------------------------------------------------------------------------
// Chunking

/// Every kind: a valid answer fed one byte at a time (multi-byte characters split across chunks)
/// ends exactly as the same answer fed whole: same snapshot, same events, same later requests.
#[test]
fn one_byte_chunks_equal_a_whole_body() {
    for kind in KINDS {
        let (status, body) = valid_answer(kind);
        let bytes = body.to_string().into_bytes();
        let (mut whole, id) = setup(kind, None);
        whole.reply_raw(id, status, Some("application/json"), &bytes, None);
        let (mut chunked, id2) = setup(kind, None);
        assert_eq!(id, id2);
        chunked.reply_raw(id, status, Some("application/json"), &bytes, Some(1));
        assert_eq!(whole.snapshot(), chunked.snapshot(), "{kind:?}");
        assert_eq!(whole.events(), chunked.events(), "{kind:?}");
        let calls = |h: &Harness| {
            h.sent()
                .iter()
                .map(|s| format!("{:?} {}", s.call, s.request.url()))
                .collect::<Vec<_>>()
        };
        assert_eq!(calls(&whole), calls(&chunked), "{kind:?}");
        assert_eq!(chunked.engine().ignored_answers(), 0, "{kind:?}");
        // The answer was read as the success it is.
        let s = chunked.snapshot();
        match kind {
            Kind::List => assert_eq!(s.agent_sessions[0].title, "Café ☕ «naïve» — 🚀"),
            Kind::Detail | Kind::RequestedDetail => {
                let record = s.active_session_detail.unwrap().record.unwrap();
                assert_eq!(
                    record.value()["name"],
                    json!("Café ☕ «naïve» — 🚀"),
                    "{kind:?}"
                );
            }
            Kind::History => assert!(s.active_session_readiness.history_ready),
            Kind::Insights => assert!(s.active_session_readiness.insights_ready),
            Kind::GetOrCreate => assert_eq!(s.current_session_id.as_deref(), Some("s-d")),
            Kind::StartNew => assert_eq!(s.current_session_id.as_deref(), Some("s-n")),
            Kind::Archive => assert!(!s.agent_sessions.iter().any(|x| x.uid == "s-2")),
        }
    }
}

/// The history's multi-byte text survives one-byte chunking intact.
#[test]
fn one_byte_chunks_keep_multibyte_history_text() {
    let (mut h, id) = setup(Kind::History, None);
    let (status, body) = valid_answer(Kind::History);
    h.reply_raw(
        id,
        status,
        Some("application/json"),
        body.to_string().as_bytes(),
        Some(1),
    );
    let thread = h.snapshot().thread;
    assert_eq!(thread.len(), 2);
    assert_eq!(
        serde_json::to_value(&thread[1]).unwrap()["parts"][0]["text"],
        json!("Q3 totals 4120 € ✓ — naïve 🚀")
    );
}

/// FAIL-6, FAIL-10, FAIL-11: a truncated answer fed one byte at a time fails just like a whole one.
#[test]
fn one_byte_chunks_of_a_truncated_body_fail() {
    for kind in [Kind::List, Kind::Detail, Kind::History] {
        let (status, body) = valid_answer(kind);
        let text = body.to_string();
        let cut = &text.as_bytes()[..text.len() - 3];
        let (mut h, id) = setup(kind, None);
        h.reply_raw(id, status, Some("application/json"), cut, Some(1));
        assert_outcome(
            kind,
            Expect::Failed,
            &h,
            &format!("chunked truncated {kind:?}"),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Oversized bodies

/// A valid answer for `kind` made larger than `SMALL_LIMIT` by a long field.
fn oversized_answer(kind: Kind) -> (u16, Value) {
    let (status, mut v) = valid_answer(kind);
    let padding = "x".repeat(SMALL_LIMIT * 2);
    match kind {
        Kind::List => v["results"][0]["summary"] = json!(padding),
        _ => v["padding"] = json!(padding),
    }
    (status, v)
}

/// FAIL-6, FAIL-7, FAIL-10, FAIL-11, FAIL-12, FAIL-13, FAIL-4, REQ-5, REQ-6: an answer body larger
/// than `max_body_bytes` fails its request in the kind's failure state, and the engine aborts the
/// request (`Intent::Abort`); normal answers under the limit still work.
#[test]
fn oversized_body_fails_and_aborts_every_request() {
    for kind in KINDS {
        for chunk in [None, Some(97)] {
            let label = format!("oversized {kind:?} chunk {chunk:?}");
            let (mut h, id) = setup(kind, Some(SMALL_LIMIT));
            let (status, body) = oversized_answer(kind);
            let bytes = body.to_string().into_bytes();
            assert!(bytes.len() > SMALL_LIMIT);
            h.reply_raw(id, status, Some("application/json"), &bytes, chunk);
            assert!(h.was_aborted(id), "{label}: no Intent::Abort");
            assert_outcome(kind, Expect::Failed, &h, &label);
            let texts = visible_texts(&h).join(" | ");
            if kind != Kind::GetOrCreate {
                assert!(
                    texts.contains(&format!("{SMALL_LIMIT} bytes")),
                    "{label}: {texts}"
                );
            }
        }
    }
}

/// The body limit counts bytes across chunks: an answer exactly at the limit is read, one byte
/// more fails.
#[test]
fn body_limit_boundary() {
    let (status, body) = valid_answer(Kind::Detail);
    let base = body.to_string();
    for (extra, fails) in [(0usize, false), (1, true)] {
        let (mut h, id) = setup(Kind::Detail, Some(SMALL_LIMIT));
        // Pad with trailing JSON whitespace up to the limit (plus `extra`).
        let mut bytes = base.clone().into_bytes();
        bytes.resize(SMALL_LIMIT + extra, b' ');
        h.reply_raw(id, status, Some("application/json"), &bytes, Some(100));
        assert_eq!(h.was_aborted(id), fails, "extra {extra}");
        let detail = h.snapshot().active_session_detail.unwrap();
        assert_eq!(detail.record.is_none(), fails, "extra {extra}");
    }
}

// ---------------------------------------------------------------------------------------------
// Duplicate answers and unknown ids

/// Every kind: a second answer for an id that already answered (success first, then a 500) is
/// ignored and counted; nothing changes and nothing new is requested.
#[test]
fn duplicate_answer_after_success_is_ignored() {
    for kind in KINDS {
        let (mut h, id) = setup(kind, None);
        let (status, body) = valid_answer(kind);
        h.reply(id, status, body);
        let before = h.snapshot();
        let events = h.events().len();
        let ignored = h.engine().ignored_answers();
        let mark = h.mark();
        h.reply(id, 500, json!({"detail": "Second answer."}));
        h.fail(id);
        assert_eq!(h.snapshot(), before, "{kind:?}");
        assert_eq!(h.events().len(), events, "{kind:?}");
        assert!(h.sent_since(mark).is_empty(), "{kind:?}");
        assert!(h.engine().ignored_answers() > ignored, "{kind:?}");
    }
}

/// FAIL-6, FAIL-7, FAIL-10, FAIL-11, FAIL-12, FAIL-13, FAIL-4, REQ-5, REQ-6: every kind: a valid
/// answer arriving after the request already failed changes nothing; the failure state stays.
#[test]
fn duplicate_answer_after_failure_is_ignored() {
    for kind in KINDS {
        let (mut h, id) = setup(kind, None);
        h.reply(id, 500, json!({"detail": "First answer."}));
        let before = h.snapshot();
        let events = h.events().len();
        let ignored = h.engine().ignored_answers();
        let mark = h.mark();
        let (status, body) = valid_answer(kind);
        h.reply(id, status, body);
        assert_eq!(h.snapshot(), before, "{kind:?}");
        assert_eq!(h.events().len(), events, "{kind:?}");
        assert!(h.sent_since(mark).is_empty(), "{kind:?}");
        assert!(h.engine().ignored_answers() > ignored, "{kind:?}");
        assert_outcome(kind, Expect::Failed, &h, &format!("after failure {kind:?}"));
    }
}

/// Answers, chunks and failures for ids the engine never issued are ignored and counted; the
/// open requests stay open and nothing changes.
#[test]
fn answers_for_unknown_ids_are_ignored() {
    let (mut h, _) = setup(Kind::History, None);
    let before = h.snapshot();
    let open: Vec<RequestId> = h.open_requests().iter().map(|s| s.id).collect();
    let mark = h.mark();
    assert_eq!(h.engine().ignored_answers(), 0);
    h.reply(RequestId(9_999), 200, page(&[record("s-9", AGENT, ENV, 9)]));
    let after_one = h.engine().ignored_answers();
    assert!(after_one > 0);
    h.reply_raw(RequestId(0), 200, None, b"{}", Some(1));
    h.fail(RequestId(u64::MAX));
    assert!(h.engine().ignored_answers() > after_one);
    assert_eq!(h.snapshot(), before);
    assert!(h.events().is_empty());
    assert!(h.sent_since(mark).is_empty());
    let still_open: Vec<RequestId> = h.open_requests().iter().map(|s| s.id).collect();
    assert_eq!(still_open, open);
    // The real answer still works afterwards.
    h.answer_history("s-1");
    assert_eq!(
        h.snapshot().active_session_readiness.status,
        ReadinessStatus::Ready
    );
}

/// An answer for a request the engine aborted (its session is no longer selected) is ignored:
/// the new session's thread and readiness do not change.
#[test]
fn answers_for_aborted_requests_are_ignored() {
    let (mut h, history_id) = setup(Kind::History, None);
    h.requested(Some("s-2"));
    assert!(h.was_aborted(history_id));
    let before = h.snapshot();
    let ignored = h.engine().ignored_answers();
    h.reply(history_id, 200, history("s-1"));
    assert_eq!(h.snapshot(), before);
    assert!(h.snapshot().thread.is_empty());
    assert!(h.engine().ignored_answers() > ignored);
}

// ---------------------------------------------------------------------------------------------
// Hostile ids

/// Decodes `%XX` escapes; `None` when an escape is broken.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// `path` is `prefix` + one segment + `suffix`, and that segment decodes to exactly `id`.
fn assert_one_segment(path: &str, prefix: &str, suffix: &str, id: &str) {
    let middle = path
        .strip_prefix(prefix)
        .and_then(|p| p.strip_suffix(suffix))
        .unwrap_or_else(|| panic!("{path:?} is not {prefix}<id>{suffix}"));
    assert!(!middle.is_empty(), "{path:?}");
    for c in ['/', '?', '#', ' ', '\\'] {
        assert!(!middle.contains(c), "{path:?}: raw {c:?} in the id segment");
    }
    assert_ne!(middle, "..", "{path:?}");
    assert_ne!(middle, ".", "{path:?}");
    assert_eq!(percent_decode(middle).as_deref(), Some(id), "{path:?}");
}

/// Whether a request about session `id` was emitted.
fn requested_for(h: &Harness, id: &str) -> bool {
    h.count(|c| match c {
        ApiCall::GetSessionDetail { session_uid, .. }
        | ApiCall::GetSessionHistory { session_uid }
        | ApiCall::GetSessionInsights { session_uid }
        | ApiCall::ArchiveSession { session_uid }
        | ApiCall::DeleteSession { session_uid } => session_uid == id,
        _ => false,
    }) > 0
}

/// Hostile requestedSessionIds: each either produces no request at all, or only requests whose
/// path holds the id as exactly one percent-encoded segment; nothing panics.
#[test]
fn hostile_requested_ids_never_escape_their_segment() {
    let ids = [
        "undefined",
        "null",
        "..",
        ".",
        "a/b?c#d%",
        "../../admin",
        "%2e%2e",
        "s 1\t",
        "séssion/ü",
        "?x=1",
        "#frag",
        "a\\b",
        "NULL",
    ];
    for raw in ids {
        let mut h = harness(None);
        h.answer_list(&[record("s-1", AGENT, ENV, 2)]);
        let mark = h.mark();
        h.requested(Some(raw));
        let id = raw.trim();
        for sent in h.sent_since(mark) {
            let r = &sent.request;
            assert!(r.url().starts_with(BASE), "{raw:?}: {}", r.url());
            match &sent.call {
                ApiCall::GetSessionDetail { session_uid, .. } if session_uid == id => {
                    assert_one_segment(&r.path, "/api/v1/agent-sessions/", "/", id);
                }
                ApiCall::GetSessionHistory { session_uid } if session_uid == id => {
                    assert_one_segment(&r.path, "/api/v1/agent-sessions/", "/history/", id);
                }
                ApiCall::ResolveRuntimeAccess { session_uid } if session_uid == id => {
                    let tail = "/resolve-runtime-access/";
                    assert_one_segment(&r.path, "/api/v1/agent-sessions/", tail, id);
                }
                ApiCall::GetSessionDetail { session_uid, .. }
                | ApiCall::GetSessionHistory { session_uid }
                | ApiCall::ResolveRuntimeAccess { session_uid } => {
                    assert_eq!(session_uid, "s-1", "{raw:?}");
                }
                other => panic!("{raw:?}: unexpected {other:?}"),
            }
        }
    }
}

/// The ids the platform contract refuses ("undefined", "null", any case, spaces around, and the
/// dot segments) emit no request at all; the session gives way to the newest one (REQ-5).
#[test]
fn refused_requested_ids_emit_no_request() {
    for raw in ["undefined", "null", "..", ".", " Undefined ", "NULL"] {
        let mut h = harness(None);
        h.answer_list(&[record("s-1", AGENT, ENV, 2)]);
        h.answer_detail("s-1", record("s-1", AGENT, ENV, 2));
        h.answer_history("s-1");
        h.requested(Some(raw));
        let id = raw.trim();
        assert!(!requested_for(&h, id), "{raw:?}");
        for sent in h.sent() {
            let url = sent.request.url().to_lowercase();
            assert!(
                !url.contains("/undefined/") && !url.contains("/null/") && !url.contains("/./"),
                "{raw:?}: {url}"
            );
            assert!(!url.contains("/../"), "{raw:?}: {url}");
        }
        let s = h.snapshot();
        assert_eq!(s.current_session_id.as_deref(), Some("s-1"), "{raw:?}");
        assert_eq!(s.selection_origin, Some(Origin::Newest), "{raw:?}");
    }
}

/// REQ-5, REQ-6: a refused requested id is a requested session that cannot be loaded: the newest
/// session is selected and sessionNotice carries the unavailable notice (not the notice of a
/// history read that was never made for the session now shown).
#[test]
fn refused_requested_id_sets_the_unavailable_notice() {
    for raw in ["undefined", "null", ".."] {
        let mut h = harness(None);
        h.answer_list(&[record("s-1", AGENT, ENV, 2)]);
        h.requested(Some(raw));
        let s = h.snapshot();
        assert_eq!(s.current_session_id.as_deref(), Some("s-1"), "{raw:?}");
        let notice = s.session_notice.unwrap_or_default();
        assert!(
            notice.starts_with(UNAVAILABLE_PREFIX),
            "{raw:?}: {notice:?}"
        );
    }
}

/// RU-25: the lookup ids "undefined" and " null " are invalid: no request names them, and the
/// error the notice carries names "valid session uid"; the lookup id "52" is requested as "52"
/// (a host's number arrives as its digits: the engine's ids are strings, `platform-api.md`
/// section 1; a record's numeric `uid` is still no uid, section P2).
#[test]
fn ru_25_invalid_and_numeric_lookup_ids() {
    for raw in ["undefined", " null "] {
        let mut h = harness(None);
        h.answer_list(&[record("s-1", AGENT, ENV, 2)]);
        h.requested(Some(raw));
        assert!(!requested_for(&h, raw.trim()), "{raw:?}");
        let notice = h.snapshot().session_notice.unwrap_or_default();
        assert!(
            notice.starts_with(UNAVAILABLE_PREFIX),
            "{raw:?}: {notice:?}"
        );
        assert!(notice.contains("valid session uid"), "{raw:?}: {notice:?}");
    }
    let mut h = harness(None);
    h.answer_list(&[record("s-1", AGENT, ENV, 2)]);
    h.requested(Some("52"));
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some("52"));
    let detail = h.detail_request("52");
    assert_eq!(h.request(detail).request.path, "/api/v1/agent-sessions/52/");
}

/// A requested id with every reserved character reaches detail, history and insights as one
/// percent-encoded segment ("a%2Fb%3Fc%23d%25"), and its record loads.
#[test]
fn reserved_characters_are_one_encoded_segment() {
    let id = "a/b?c#d%";
    let mut h = harness(None);
    h.requested(Some(id));
    let detail = h.detail_request(id);
    let r = &h.request(detail).request;
    assert_eq!(r.path, "/api/v1/agent-sessions/a%2Fb%3Fc%23d%25/");
    assert_eq!(
        r.url(),
        format!(
            "{BASE}/api/v1/agent-sessions/a%2Fb%3Fc%23d%25/?organization_environment_uid={ENV}"
        )
    );
    let r = &h.request(h.history_request(id)).request;
    assert_eq!(r.path, "/api/v1/agent-sessions/a%2Fb%3Fc%23d%25/history/");
    h.reply(detail, 200, record(id, AGENT, ENV, 2));
    let r = &h.request(h.insights_request(id)).request;
    assert_eq!(r.path, "/api/v1/agent-sessions/a%2Fb%3Fc%23d%25/insights/");
    h.answer_history(id);
    assert_eq!(
        h.snapshot().active_session_readiness.status,
        ReadinessStatus::Ready
    );
    h.command(Command::ArchiveAgentSession {
        session_uid: id.to_owned(),
    });
    let archive = h.expect_pending("archive", |c| matches!(c, ApiCall::ArchiveSession { .. }));
    assert_eq!(
        h.request(archive).request.path,
        "/api/v1/agent-sessions/a%2Fb%3Fc%23d%25/archive/"
    );
}

/// Hostile uids inside platform answers: a listed session whose uid is a refused id emits no
/// request for it, and one with reserved characters is requested as one encoded segment.
#[test]
fn hostile_uids_in_list_answers() {
    let mut h = harness(None);
    h.answer_list(&[record("undefined", AGENT, ENV, 2)]);
    assert!(!requested_for(&h, "undefined"));
    assert!(
        h.sent()
            .iter()
            .all(|s| !s.request.path.contains("undefined"))
    );

    let mut h = harness(None);
    h.answer_list(&[record("../../admin?x#y", AGENT, ENV, 2)]);
    let detail = h.detail_request("../../admin?x#y");
    assert_one_segment(
        &h.request(detail).request.path,
        "/api/v1/agent-sessions/",
        "/",
        "../../admin?x#y",
    );
}

/// FAIL-13: hostile Agent ids for the creating actions: refused ids emit nothing and notify;
/// reserved characters are one encoded segment of the start-new-session path.
#[test]
fn hostile_agent_ids_for_actions() {
    for raw in ["undefined", "null", "..", "  "] {
        let mut h = harness(None);
        h.answer_list(&[record("s-1", AGENT, ENV, 2)]);
        let mark = h.mark();
        h.command(Command::StartAgentSessionById {
            agent_id: raw.to_owned(),
            label: None,
        });
        assert!(h.sent_since(mark).is_empty(), "{raw:?}");
        let titles = notify_titles(&h);
        assert_eq!(titles.len(), 1, "{raw:?}: {titles:?}");
        assert_eq!(h.snapshot().current_session_id.as_deref(), Some("s-1"));
    }
    let mut h = harness(None);
    h.command(Command::StartAgentSessionById {
        agent_id: "a/b?c#d%".to_owned(),
        label: None,
    });
    let id = h.expect_pending("start-new-session", |c| {
        matches!(c, ApiCall::StartNewSession { .. })
    });
    assert_eq!(
        h.request(id).request.path,
        "/api/v1/agents/a%2Fb%3Fc%23d%25/start-new-session/"
    );
}

/// Hostile ids for archive: a refused id emits no request and reports the failure; the default
/// session's Agent uid with reserved characters is one encoded segment of the get-or-create path.
#[test]
fn hostile_ids_for_archive_and_get_or_create() {
    let mut h = harness(None);
    h.answer_list(&[record("s-1", AGENT, ENV, 2)]);
    let mark = h.mark();
    h.command(Command::ArchiveAgentSession {
        session_uid: "undefined".to_owned(),
    });
    assert!(h.sent_since(mark).is_empty());
    assert_eq!(notify_titles(&h).len(), 1);
    assert_eq!(h.snapshot().agent_sessions.len(), 1);

    let mut h = harness(None);
    h.shows_default(true);
    h.default_session(Some("a/b?c#d%"));
    let id = h.get_or_create_request();
    assert_eq!(
        h.request(id).request.path,
        "/api/v1/agents/a%2Fb%3Fc%23d%25/sessions/get-or-create-session/"
    );
}

// ---------------------------------------------------------------------------------------------
// Transcripts

/// A requested id with reserved characters, hydrated to ready.
#[test]
fn hostile_transcript_reserved_characters_requested_id() {
    let id = "a/b?c#d%";
    let mut h = harness(None);
    h.answer_list(&[record("s-1", AGENT, ENV, 2)]);
    h.requested(Some(id));
    h.answer_detail(id, record(id, AGENT, ENV, 3));
    h.answer_history(id);
    insta::assert_snapshot!(h.transcript());
}

/// FAIL-10: an oversized detail answer under a small body limit is aborted and fails.
#[test]
fn hostile_transcript_oversized_detail() {
    let (mut h, id) = setup(Kind::Detail, Some(SMALL_LIMIT));
    let (status, body) = oversized_answer(Kind::Detail);
    h.reply_raw(
        id,
        status,
        Some("application/json"),
        body.to_string().as_bytes(),
        Some(1024),
    );
    insta::assert_snapshot!(h.transcript());
}

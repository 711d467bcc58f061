#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! ENV: person and Environment scoping (rules.md, "ENV: Environment"), with the stored lists of
//! OI-31 (the storage port) and the list query of OI-11, plus INV-10 for answers that belong to
//! an earlier person or Environment.
//!
//! The runtime-decision rule of this section (ENV-3) is covered with runtime access in rta.rs; the
//! catalog rule of this section waits for the model catalog.

use engine_core::{
    AgentFilter, ApiCall, DefaultSessionStatus, Input, Person, ReadinessStatus, Secret,
    SessionSummary, StorageRequest,
};
use serde_json::json;
use spec_tests::fixtures::{
    AGENT, AGENT2, ENV, ENV2, HANDLE, USER, handle_record, history, page, record,
};
use spec_tests::{Harness, Sent};

const KEY_USER_ENV: &str = "ms.main-sequence-ai.agent-sessions:user-1:env-1";
const KEY_USER_ENV2: &str = "ms.main-sequence-ai.agent-sessions:user-1:env-2";
const KEY_USER2_ENV: &str = "ms.main-sequence-ai.agent-sessions:user-2:env-1";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn summary(uid: &str, minute: u32) -> SessionSummary {
    SessionSummary {
        uid: uid.to_owned(),
        agent_uid: Some(AGENT.to_owned()),
        agent_name: Some("Ledger Helper".to_owned()),
        title: format!("Session {uid}"),
        status: Some("completed".to_owned()),
        started_at: Some(format!("2026-10-02T08:{minute:02}:00Z")),
        ended_at: None,
        handle_unique_id: None,
        llm_provider: None,
        llm_model: None,
    }
}

fn uids(h: &Harness) -> Vec<String> {
    h.snapshot()
        .agent_sessions
        .iter()
        .map(|s| s.uid.clone())
        .collect()
}

fn loads(h: &Harness) -> Vec<String> {
    h.storage()
        .iter()
        .filter_map(|s| match s {
            StorageRequest::Load { key } => Some(key.clone()),
            _ => None,
        })
        .collect()
}

fn saves(h: &Harness) -> Vec<(String, Vec<String>)> {
    h.storage()
        .iter()
        .filter_map(|s| match s {
            StorageRequest::Save { key, sessions } => Some((
                key.clone(),
                sessions.iter().map(|s| s.uid.clone()).collect(),
            )),
            _ => None,
        })
        .collect()
}

fn stored(h: &mut Harness, key: &str, sessions: Option<Vec<SessionSummary>>) {
    h.input(Input::StoredSessionsLoaded {
        key: key.to_owned(),
        sessions,
    });
}

fn anonymous() -> Input {
    Input::Person(Person::default().with_token(Secret::new("platform-token-secret")))
}

fn query_value<'a>(s: &'a Sent, name: &str) -> Option<&'a str> {
    s.request
        .query
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn is_list(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ListSessions { .. })
}

fn is_goc(c: &ApiCall) -> bool {
    matches!(c, ApiCall::GetOrCreateSession { .. })
}

// ---------------------------------------------------------------------------------------------
// ENV-1: one list per person and Environment
// ---------------------------------------------------------------------------------------------

/// ENV-1 (OI-31): the first meeting of a person and Environment asks the storage port for the
/// list stored under ms.main-sequence-ai.agent-sessions:{user}:{env}; its answer is shown at
/// once, before the platform answers; the platform's list then replaces it and is saved.
#[test]
fn env1_stored_list_is_loaded_and_restored_at_once() {
    let mut h = Harness::new();
    h.person(USER);
    assert!(
        loads(&h).is_empty(),
        "no load for a pair without an Environment"
    );
    h.env(Some(ENV));
    assert_eq!(loads(&h), vec![KEY_USER_ENV.to_owned()]);
    stored(
        &mut h,
        KEY_USER_ENV,
        Some(vec![summary("s-old", 5), summary("s-older", 1)]),
    );
    assert_eq!(uids(&h), ["s-old", "s-older"]);
    assert_eq!(h.count(is_list), 0, "hidden: not read yet");
    // Visible: the pair's list is read from the platform, and its answer wins.
    h.visible(true);
    assert_eq!(h.count(is_list), 1);
    h.answer_list(&[record("s-a", AGENT, ENV, 20), record("s-b", AGENT, ENV, 10)]);
    assert_eq!(uids(&h), ["s-a", "s-b"]);
    assert_eq!(
        saves(&h).last().cloned(),
        Some((KEY_USER_ENV.to_owned(), vec!["s-a".into(), "s-b".into()]))
    );
    // A stored answer arriving after the platform's list changes nothing (memory wins).
    stored(&mut h, KEY_USER_ENV, Some(vec![summary("s-old", 5)]));
    assert_eq!(uids(&h), ["s-a", "s-b"]);
    insta::assert_snapshot!(h.transcript());
}

/// ENV-1: each person and Environment pair keeps its own list; switching back restores the
/// pair's list at once and reads it again while the chat is visible.
#[test]
fn env1_lists_are_kept_per_pair() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-a", AGENT, ENV, 20), record("s-b", AGENT, ENV, 10)]);
    assert_eq!(uids(&h), ["s-a", "s-b"]);

    // Another Environment: its own (empty) list, a storage load and a platform read for it.
    h.env(Some(ENV2));
    assert!(uids(&h).is_empty());
    assert_eq!(loads(&h).last().map(String::as_str), Some(KEY_USER_ENV2));
    stored(&mut h, KEY_USER_ENV2, Some(vec![summary("s-stored-2", 3)]));
    assert_eq!(uids(&h), ["s-stored-2"]);
    let id = h.list_request();
    assert_eq!(
        query_value(h.request(id), "organization_environment_uid"),
        Some(ENV2)
    );
    h.reply(id, 200, page(&[record("s-c", AGENT, ENV2, 30)]));
    assert_eq!(uids(&h), ["s-c"]);

    // Back: the first pair's list is there at once, and read again.
    let lists = h.count(is_list);
    h.env(Some(ENV));
    assert_eq!(uids(&h), ["s-a", "s-b"]);
    assert_eq!(h.count(is_list), lists + 1);
    let id = h.list_request();
    assert_eq!(
        query_value(h.request(id), "organization_environment_uid"),
        Some(ENV)
    );
    h.reply(id, 200, page(&[record("s-a", AGENT, ENV, 20)]));
    assert_eq!(uids(&h), ["s-a"]);

    // Another person in the same Environment: a list of its own.
    h.person("user-2");
    assert!(uids(&h).is_empty());
    assert_eq!(loads(&h).last().map(String::as_str), Some(KEY_USER2_ENV));
    h.answer_list(&[record("s-u2", AGENT, ENV, 40)]);
    assert_eq!(uids(&h), ["s-u2"]);
    h.person(USER);
    assert_eq!(uids(&h), ["s-a"]);
    // Every save went to the key of the pair whose list it holds.
    for (key, list) in saves(&h) {
        let expected = if list.contains(&"s-c".to_owned()) {
            KEY_USER_ENV2
        } else if list.contains(&"s-u2".to_owned()) {
            KEY_USER2_ENV
        } else {
            KEY_USER_ENV
        };
        assert_eq!(key, expected, "{list:?}");
    }
}

/// ENV-1 (OI-31): a person without a uid is stored as "anonymous"; a scope without an
/// Environment asks for no stored list.
#[test]
fn env1_anonymous_key_and_no_load_without_environment() {
    let mut h = Harness::new();
    h.input(anonymous());
    h.visible(true);
    assert!(loads(&h).is_empty());
    h.env(Some(ENV));
    assert_eq!(
        loads(&h),
        vec!["ms.main-sequence-ai.agent-sessions:anonymous:env-1".to_owned()]
    );
    h.env(None);
    assert_eq!(loads(&h).len(), 1);
    assert!(
        loads(&h).iter().all(|k| !k.ends_with(":no-environment")),
        "{:?}",
        loads(&h)
    );
}

/// ENV-1: a stored list answered for a pair that is no longer current is not shown, and a load
/// answered with nothing leaves the list empty.
#[test]
fn env1_late_or_empty_stored_answers() {
    let mut h = Harness::new();
    h.person(USER);
    h.env(Some(ENV));
    h.env(Some(ENV2));
    stored(&mut h, KEY_USER_ENV, Some(vec![summary("s-env1", 5)]));
    assert!(uids(&h).is_empty());
    stored(&mut h, KEY_USER_ENV2, None);
    assert!(uids(&h).is_empty());
    stored(&mut h, KEY_USER_ENV2, Some(vec![summary("s-env2", 5)]));
    assert_eq!(uids(&h), ["s-env2"]);
}

// ---------------------------------------------------------------------------------------------
// ENV-2: the selection is cleared
// ---------------------------------------------------------------------------------------------

/// ENV-2, INV-10: an Environment change clears the selection in the same step, and the old
/// session's hydration answers arriving afterwards change neither selection, readiness nor
/// thread.
#[test]
fn env2_environment_change_clears_the_selection() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-1"));
    assert_eq!(h.current().as_deref(), Some("s-1"));
    let detail = h.detail_request("s-1");
    let hist = h.history_request("s-1");
    h.env(Some(ENV2));
    let s = h.snapshot();
    assert_eq!(s.current_session_id, None);
    assert!(s.thread.is_empty());
    let before = h.snapshot();
    h.reply(detail, 200, record("s-1", AGENT, ENV, 0));
    h.reply(hist, 200, history("s-1"));
    let after = h.snapshot();
    assert_eq!(after.current_session_id, None);
    assert!(after.thread.is_empty());
    assert_eq!(
        after.active_session_readiness,
        before.active_session_readiness
    );
}

/// ENV-2: a change of person (a new user uid) clears the selection, an implicitly chosen
/// newest session included; a new token for the same person does not.
#[test]
fn env2_person_change_clears_the_selection() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-new", AGENT, ENV, 30)]);
    assert_eq!(h.current().as_deref(), Some("s-new"));
    h.input(Input::Person(Person::new(
        USER.to_owned(),
        Secret::new("renewed-token"),
    )));
    assert_eq!(h.current().as_deref(), Some("s-new"));
    h.person("user-2");
    assert_eq!(h.current(), None);
    // The new person's own list chooses again; the old one's session is not brought back.
    h.answer_list(&[record("s-u2", AGENT, ENV, 10)]);
    assert_eq!(h.current().as_deref(), Some("s-u2"));
}

/// ENV-2: the person becoming anonymous is a change of person too.
#[test]
fn env2_person_becoming_anonymous_clears_the_selection() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-1"));
    assert_eq!(h.current().as_deref(), Some("s-1"));
    h.input(anonymous());
    assert_eq!(h.current(), None);
}

/// ENV-2: in the default-session state an Environment change clears the default session and a
/// launched session alike.
#[test]
fn env2_change_clears_default_and_launched_selections() {
    let mut h = Harness::default_state();
    let id = h.get_or_create_request();
    h.reply(id, 200, handle_record("s-def", AGENT, ENV, HANDLE, 1));
    assert_eq!(h.current().as_deref(), Some("s-def"));
    h.launch(AGENT2, 1);
    let id = h.expect_pending("launch lookup", |c| {
        matches!(c, ApiCall::ListSessions { agent: Some(AgentFilter::Uid(a)), .. } if a == AGENT2)
    });
    h.reply(id, 200, page(&[record("s-launch", AGENT2, ENV, 30)]));
    assert_eq!(h.current().as_deref(), Some("s-launch"));
    h.person("user-2");
    let s = h.snapshot();
    assert_eq!(s.current_session_id, None);
    assert!(!s.is_direct_launch_session);
}

// ---------------------------------------------------------------------------------------------
// ENV-4, ENV-5: the default session across a change
// ---------------------------------------------------------------------------------------------

/// ENV-4, ENV-5, INV-10: an Environment change aborts the open get-or-create; its late answer
/// selects nothing; a get-or-create for the new Environment goes out and its answer is selected.
#[test]
fn env4_environment_change_cancels_open_get_or_create() {
    let mut h = Harness::default_state();
    let old = h.get_or_create_request();
    h.env(Some(ENV2));
    assert!(h.was_aborted(old));
    assert_eq!(h.count(is_goc), 2);
    let new = h.get_or_create_request();
    assert_ne!(new, old);
    // The old answer arrives anyway.
    h.reply(old, 200, handle_record("s-def", AGENT, ENV, HANDLE, 1));
    let s = h.snapshot();
    assert_eq!(s.current_session_id, None);
    assert_eq!(s.default_session_status, DefaultSessionStatus::Opening);
    assert_eq!(s.default_session_error, None);
    assert!(!s.agent_sessions.iter().any(|x| x.uid == "s-def"));
    h.reply(new, 200, handle_record("s-def-2", AGENT, ENV2, HANDLE, 2));
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-def-2"));
    assert_eq!(s.default_session_status, DefaultSessionStatus::Ready);
    insta::assert_snapshot!(h.transcript());
}

/// ENV-4, INV-10: a person change aborts the open get-or-create, and its late failure sets no
/// defaultSessionError for the new person.
#[test]
fn env4_person_change_cancels_open_get_or_create() {
    let mut h = Harness::default_state();
    let old = h.get_or_create_request();
    h.person("user-2");
    assert!(h.was_aborted(old));
    h.reply(old, 500, json!({"detail": "Old person's failure."}));
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Opening);
    assert_eq!(s.default_session_error, None);
    assert_eq!(s.current_session_id, None);
    h.fail(old);
    assert_eq!(h.snapshot().default_session_error, None);
}

/// ENV-4: losing the Environment aborts the open get-or-create too; its answer selects nothing.
#[test]
fn env4_environment_removed_cancels_open_get_or_create() {
    let mut h = Harness::default_state();
    let old = h.get_or_create_request();
    h.env(None);
    assert!(h.was_aborted(old));
    assert_eq!(h.count(is_goc), 1);
    h.reply(old, 200, handle_record("s-def", AGENT, ENV, HANDLE, 1));
    assert_eq!(h.current(), None);
}

/// ENV-5: after an Environment or person change the default session opens for the new
/// combination: one get-or-create with the same Agent and handle, answered into the selection.
#[test]
fn env5_default_session_opens_for_the_new_scope() {
    let mut h = Harness::default_state();
    let id = h.get_or_create_request();
    h.reply(id, 200, handle_record("s-def", AGENT, ENV, HANDLE, 1));
    assert_eq!(h.current().as_deref(), Some("s-def"));

    let mark = h.mark();
    h.env(Some(ENV2));
    let new: Vec<&Sent> = h
        .sent_since(mark)
        .iter()
        .filter(|s| is_goc(&s.call))
        .collect();
    assert_eq!(new.len(), 1);
    assert_eq!(
        new[0].request.path,
        "/api/v1/agents/agent-1/sessions/get-or-create-session/"
    );
    let body: serde_json::Value =
        serde_json::from_slice(new[0].request.body.as_ref().unwrap()).unwrap();
    assert_eq!(
        body,
        json!({"handle_unique_id": HANDLE, "name": "Ledger chat"})
    );
    h.reply(
        new[0].id,
        200,
        handle_record("s-def-env2", AGENT, ENV2, HANDLE, 2),
    );
    assert_eq!(h.current().as_deref(), Some("s-def-env2"));
    assert_eq!(
        h.snapshot().default_session_status,
        DefaultSessionStatus::Ready
    );

    let mark = h.mark();
    h.person("user-2");
    assert_eq!(
        h.sent_since(mark)
            .iter()
            .filter(|s| is_goc(&s.call))
            .count(),
        1
    );
    let id = h.get_or_create_request();
    h.reply(id, 200, handle_record("s-def-u2", AGENT, ENV2, HANDLE, 3));
    assert_eq!(h.current().as_deref(), Some("s-def-u2"));

    // While the chat is hidden the new combination is asked for as well.
    h.visible(false);
    let mark = h.mark();
    h.env(Some(ENV));
    let new: Vec<&Sent> = h.sent_since(mark).iter().collect();
    assert_eq!(new.len(), 1, "only the get-or-create while hidden");
    assert!(is_goc(&new[0].call));
}

/// ENV-1, INV-10: a latest-sessions answer for the previous Environment, arriving after the
/// change, neither fills the new pair's list nor selects a session.
#[test]
fn env1_stale_list_answer_after_environment_change() {
    let mut h = Harness::visible_in_env();
    let old = h.list_request();
    h.env(Some(ENV2));
    assert!(h.was_aborted(old));
    h.reply(old, 200, page(&[record("s-env1", AGENT, ENV, 30)]));
    let s = h.snapshot();
    assert!(s.agent_sessions.is_empty());
    assert_eq!(s.current_session_id, None);
    assert_eq!(s.latest_sessions_error, None);
    h.answer_list(&[record("s-env2", AGENT, ENV2, 10)]);
    assert_eq!(uids(&h), ["s-env2"]);
    assert_eq!(h.current().as_deref(), Some("s-env2"));
    // The first pair got nothing from the stale answer either.
    h.env(Some(ENV));
    assert!(uids(&h).is_empty());
}

// ---------------------------------------------------------------------------------------------
// ENV-6, ENV-7: query parameters
// ---------------------------------------------------------------------------------------------

/// ENV-6, ENV-7 (OI-11): the latest-sessions read carries organization_environment_uid and
/// created_by_user_uid, with the fixed list parameters.
#[test]
fn env6_env7_latest_sessions_query() {
    let h = Harness::visible_in_env();
    let s = h.request(h.list_request());
    assert_eq!(s.request.method.as_str(), "GET");
    assert_eq!(s.request.path, "/api/v1/agent-sessions/");
    let q: Vec<(&str, &str)> = s
        .request
        .query
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        q,
        vec![
            ("organization_environment_uid", ENV),
            ("created_by_user_uid", USER),
            ("is_archived", "false"),
            ("ordering", "-started_at"),
            ("limit", "20"),
        ]
    );
}

/// ENV-6: every session-list and session-detail request carries the active Environment,
/// before and after a change; requests made under the old Environment keep the old one.
#[test]
fn env6_every_list_and_detail_request_carries_the_environment() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-1"));
    h.answer_list(&[record("s-1", AGENT, ENV, 0)]);
    h.launch(AGENT2, 1);
    h.env(Some(ENV2));
    h.requested(Some("s-2"));
    h.launch(AGENT2, 2);
    h.command(engine_core::Command::OpenLatestOrStartAgentSessionById {
        agent_id: AGENT2.to_owned(),
        label: None,
    });
    let mut env1 = 0;
    let mut env2 = 0;
    for s in h.sent() {
        let value = match &s.call {
            ApiCall::ListSessions { .. } | ApiCall::GetSessionDetail { .. } => {
                query_value(s, "organization_environment_uid")
            }
            _ => continue,
        };
        match value {
            Some(ENV) => env1 += 1,
            Some(ENV2) => env2 += 1,
            other => panic!("{other:?} on {:?}", s.request),
        }
        // The typed call and the wire agree.
        match &s.call {
            ApiCall::ListSessions {
                environment_uid, ..
            }
            | ApiCall::GetSessionDetail {
                environment_uid, ..
            } => {
                assert_eq!(Some(environment_uid.as_str()), value);
            }
            _ => unreachable!(),
        }
    }
    // env-1: latest list, s-1 detail, launch lookup; env-2: latest list, s-2 detail, launch
    // lookup, open-latest lookup.
    assert!(env1 >= 3, "env-1 requests: {env1}\n{}", h.transcript());
    assert!(env2 >= 4, "env-2 requests: {env2}\n{}", h.transcript());
    assert!(h.count(|c| matches!(c, ApiCall::GetSessionDetail { session_uid, environment_uid } if session_uid == "s-2" && environment_uid == ENV2)) >= 1);
    assert!(
        h.count(|c| matches!(c, ApiCall::ListSessions { environment_uid, agent: None, .. } if environment_uid == ENV2))
            >= 1
    );
}

/// ENV-7 (OI-11): created_by_user_uid follows the person, and is left out while the person's
/// uid is unknown.
#[test]
fn env7_created_by_user_follows_the_person() {
    let mut h = Harness::visible_in_env();
    let first = h.list_request();
    assert_eq!(
        query_value(h.request(first), "created_by_user_uid"),
        Some(USER)
    );
    h.person("user-2");
    let second = h.list_request();
    assert_ne!(first, second);
    assert_eq!(
        query_value(h.request(second), "created_by_user_uid"),
        Some("user-2")
    );
    assert_eq!(
        query_value(h.request(second), "organization_environment_uid"),
        Some(ENV)
    );
    h.input(anonymous());
    let third = h.list_request();
    assert_ne!(second, third);
    assert_eq!(query_value(h.request(third), "created_by_user_uid"), None);
    assert_eq!(
        query_value(h.request(third), "organization_environment_uid"),
        Some(ENV)
    );
}

/// ENV-7: the Agent-filtered lookup of a launch is user-scoped as well.
#[test]
fn env7_launch_lookup_is_user_scoped() {
    let mut h = Harness::visible_in_env();
    h.launch(AGENT2, 1);
    let id = h.expect_pending("launch lookup", |c| {
        matches!(c, ApiCall::ListSessions { agent: Some(_), .. })
    });
    let s = h.request(id);
    assert_eq!(query_value(s, "created_by_user_uid"), Some(USER));
    assert_eq!(query_value(s, "organization_environment_uid"), Some(ENV));
    assert_eq!(query_value(s, "agent_uid"), Some(AGENT2));
}

// ---------------------------------------------------------------------------------------------
// ENV-8: an empty list is not an error
// ---------------------------------------------------------------------------------------------

/// ENV-8: a successful but empty session list sets no latestSessionsError, as a page or as a
/// bare array, in the default-session state too.
#[test]
fn env8_empty_list_is_not_an_error() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[]);
    let s = h.snapshot();
    assert_eq!(s.latest_sessions_error, None);
    assert!(s.agent_sessions.is_empty());
    assert_eq!(s.current_session_id, None);
    assert_ne!(s.active_session_readiness.status, ReadinessStatus::Error);

    let mut h = Harness::visible_in_env();
    let id = h.list_request();
    h.reply(id, 200, json!([]));
    assert_eq!(h.snapshot().latest_sessions_error, None);

    // The Environment is not the default Agent's: the list comes back empty, and the default
    // session still opens without any list error.
    let mut h = Harness::default_state();
    h.answer_list(&[]);
    let id = h.get_or_create_request();
    h.reply(id, 200, handle_record("s-def", AGENT, ENV, HANDLE, 1));
    let s = h.snapshot();
    assert_eq!(s.latest_sessions_error, None);
    assert_eq!(s.current_session_id.as_deref(), Some("s-def"));
}

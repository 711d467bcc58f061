#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! SEL: choosing the session (SEL-1 to SEL-15, with OI-11, OI-13, OI-14, OI-15 and OI-16).

use engine_core::{
    AgentFilter, AgentRecord, ApiCall, Command, Event, Input, Method, Notice, NoticeVariant,
    Origin, Person, ReadinessStatus, RequestId, Secret,
};
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::fixtures::{AGENT, AGENT2, ENV, ENV2, HANDLE, USER, handle_record, page, record};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The exact query of the latest-sessions list (OI-11), with an optional Agent filter.
fn list_query(user: Option<&str>, filter: Option<(&str, &str)>) -> Vec<(String, String)> {
    let mut q = vec![("organization_environment_uid", ENV)];
    if let Some(u) = user {
        q.push(("created_by_user_uid", u));
    }
    q.extend([
        ("is_archived", "false"),
        ("ordering", "-started_at"),
        ("limit", "20"),
    ]);
    if let Some(f) = filter {
        q.push(f);
    }
    pairs(&q)
}

/// The open Agent-filtered list read (an Agent's latest session, OI-11).
fn agent_lookup(h: &Harness) -> RequestId {
    h.expect_pending("agent lookup", |c| {
        matches!(c, ApiCall::ListSessions { agent: Some(_), .. })
    })
}

/// The open start-new-session request.
fn start_new(h: &Harness) -> RequestId {
    h.expect_pending("start-new-session", |c| {
        matches!(c, ApiCall::StartNewSession { .. })
    })
}

fn count_lookups(h: &Harness) -> usize {
    h.count(|c| matches!(c, ApiCall::ListSessions { agent: Some(_), .. }))
}

fn count_start_new(h: &Harness) -> usize {
    h.count(|c| matches!(c, ApiCall::StartNewSession { .. }))
}

fn count_hydration(h: &Harness) -> usize {
    h.count(|c| {
        matches!(
            c,
            ApiCall::GetSessionDetail { .. }
                | ApiCall::GetSessionHistory { .. }
                | ApiCall::GetSessionInsights { .. }
        )
    })
}

fn request_visible_count(h: &Harness) -> usize {
    h.events()
        .iter()
        .filter(|e| matches!(e, Event::RequestVisible))
        .count()
}

fn notices(h: &Harness) -> Vec<Notice> {
    h.events()
        .iter()
        .filter_map(|e| match e {
            Event::Notify(n) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

fn origin(h: &Harness) -> Option<Origin> {
    h.snapshot().selection_origin
}

fn is_uuid_v4(s: &str) -> bool {
    let b = s.as_bytes();
    s.len() == 36
        && s.chars().enumerate().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                c == '-'
            } else {
                c.is_ascii_hexdigit() && !c.is_ascii_uppercase()
            }
        })
        && b[14] == b'4'
        && matches!(b[19], b'8' | b'9' | b'a' | b'b')
}

/// A record in ENV whose updated time is its `ended_at` (minute `end`).
fn ended_record(uid: &str, start: u32, end: u32) -> Value {
    let mut r = record(uid, AGENT, ENV, start);
    r["ended_at"] = json!(format!("2026-10-02T08:{end:02}:00Z"));
    r
}

fn agent_record(id: Option<i64>, uid: Option<&str>) -> AgentRecord {
    AgentRecord {
        id,
        uid: uid.map(str::to_owned),
        name: Some("Ledger Helper".to_owned()),
    }
}

fn start_by_id(agent: &str) -> Command {
    Command::StartAgentSessionById {
        agent_id: agent.to_owned(),
        label: Some("Ledger".to_owned()),
    }
}

fn open_latest(agent: &str) -> Command {
    Command::OpenLatestOrStartAgentSessionById {
        agent_id: agent.to_owned(),
        label: Some("Ledger".to_owned()),
    }
}

/// A visible chat whose latest-sessions list has loaded with `records`.
fn with_list(records: &[Value]) -> Harness {
    let mut h = Harness::visible_in_env();
    h.answer_list(records);
    h
}

/// Launches `agent` with `key` and answers the lookup with `rows`; when the Agent has none,
/// answers the start-new-session request with a record `created`.
fn launch_and_open(h: &mut Harness, agent: &str, key: u64, rows: &[Value], created: &str) {
    h.launch(agent, key);
    let id = agent_lookup(h);
    h.reply(id, 200, page(rows));
    if rows.is_empty() {
        let id = start_new(h);
        h.reply(id, 201, record(created, agent, ENV, 50));
    }
}

/// The rendered hydration requests (detail, history, insights), without ids.
/// The runtime-access requests so far, rendered without ids.
fn runtime_requests(h: &Harness) -> Vec<String> {
    h.sent()
        .iter()
        .filter(|s| {
            matches!(
                s.call,
                ApiCall::ResolveRuntimeAccess { .. } | ApiCall::ConfirmAgent { .. }
            )
        })
        .map(|s| {
            let r = &s.request;
            format!(
                "{} {} {:?} {:?} base={}",
                r.method.as_str(),
                r.path,
                r.query,
                r.body,
                r.base
            )
        })
        .collect()
}

fn hydration_requests(h: &Harness) -> Vec<String> {
    h.sent()
        .iter()
        .filter(|s| {
            matches!(
                s.call,
                ApiCall::GetSessionDetail { .. }
                    | ApiCall::GetSessionHistory { .. }
                    | ApiCall::GetSessionInsights { .. }
            )
        })
        .map(|s| {
            let r = &s.request;
            format!(
                "{} {} {:?} {:?} {:?} auth={:?}",
                r.method.as_str(),
                r.path,
                r.query,
                r.headers,
                r.body,
                r.header("Authorization")
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// SEL-1
// ---------------------------------------------------------------------------------------------

/// SEL-1, INV-10: however often the selection moves, the engine exposes one selected session;
/// readiness and the detail snapshot describe that same session, the previous session's
/// hydration requests are aborted, and their late answers change nothing.
#[test]
fn sel_1_one_selected_session_at_a_time() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 40)]);
    let check = |h: &Harness, want: &str| {
        let s = h.snapshot();
        assert_eq!(s.current_session_id.as_deref(), Some(want));
        assert_eq!(s.active_session_readiness.session_id.as_deref(), Some(want));
        assert_eq!(
            s.active_session_detail
                .as_ref()
                .map(|d| d.session_id.as_str()),
            Some(want)
        );
        // Only the selected session has hydration requests open.
        for open in h.open_requests() {
            match &open.call {
                ApiCall::GetSessionDetail { session_uid, .. }
                | ApiCall::GetSessionHistory { session_uid }
                | ApiCall::GetSessionInsights { session_uid } => {
                    assert_eq!(session_uid, want, "hydration of another session is open");
                }
                _ => {}
            }
        }
    };
    check(&h, "s-1");
    let old_detail = h.detail_request("s-1");
    let old_history = h.history_request("s-1");

    h.requested(Some("s-2"));
    check(&h, "s-2");
    assert!(h.was_aborted(old_detail) && h.was_aborted(old_history));

    // A late answer for s-1 changes nothing (INV-10).
    let before = h.snapshot();
    h.reply(old_detail, 200, record("s-1", AGENT, ENV, 40));
    h.reply(old_history, 200, spec_tests::fixtures::history("s-1"));
    assert_eq!(h.snapshot(), before);

    launch_and_open(&mut h, AGENT2, 1, &[], "s-L");
    check(&h, "s-L");
    h.command(start_by_id(AGENT));
    let id = start_new(&h);
    h.reply(id, 201, record("s-N", AGENT, ENV, 55));
    check(&h, "s-N");
}

// ---------------------------------------------------------------------------------------------
// SEL-2
// ---------------------------------------------------------------------------------------------

/// SEL-2, OI-11: with nothing requested, no default session and implicit selection allowed, the
/// engine reads the person's latest sessions with the exact query of OI-11 and selects nothing
/// before the list answers.
#[test]
fn sel_2_latest_sessions_request_and_nothing_selected_before_it_loads() {
    let h = Harness::visible_in_env();
    let id = h.list_request();
    let req = &h.request(id).request;
    assert_eq!(req.method, Method::Get);
    assert_eq!(req.path, "/api/v1/agent-sessions/");
    assert_eq!(req.query, list_query(Some(USER), None));
    assert_eq!(req.body, None);
    assert_eq!(h.current(), None);
    assert_eq!(count_hydration(&h), 0);
}

/// SEL-2, OI-11: without a person uid, created_by_user_uid is left out of the list read.
#[test]
fn sel_2_list_read_without_person_uid_omits_created_by() {
    let mut h = Harness::new();
    h.input(Input::Person(
        Person::default().with_token(Secret::new("platform-token-secret")),
    ));
    h.env(Some(ENV));
    h.visible(true);
    let id = h.list_request();
    assert_eq!(h.request(id).request.query, list_query(None, None));
}

/// SEL-2, OI-13: the newest session (updated time = ended_at, else started_at, descending) is
/// selected in the step the list loads, whatever order the platform listed the rows in.
#[test]
fn sel_2_selects_newest_by_updated_time_when_list_loads() {
    let mut h = Harness::visible_in_env();
    // Platform order: b (started 08:40, running), a (started 08:10, ended 08:50), c (08:20).
    h.answer_list(&[
        record("s-b", AGENT, ENV, 40),
        ended_record("s-a", 10, 50),
        record("s-c", AGENT, ENV, 20),
    ]);
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-a"));
    assert_eq!(s.selection_origin, Some(Origin::Newest));
    let order: Vec<&str> = s.agent_sessions.iter().map(|x| x.uid.as_str()).collect();
    assert_eq!(order, ["s-a", "s-b", "s-c"]);
    // The newest session is then hydrated like any other.
    h.detail_request("s-a");
    h.history_request("s-a");
    assert_eq!(count_hydration(&h), 2);
}

/// SEL-2, OI-13 (Proposed): sessions with equal updated times keep the platform's order.
#[test]
fn sel_2_equal_updated_times_keep_platform_order() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[
        record("s-x", AGENT, ENV, 30),
        record("s-y", AGENT, ENV, 30),
        record("s-z", AGENT, ENV, 5),
    ]);
    assert_eq!(h.current().as_deref(), Some("s-x"));
}

/// SEL-2: a list that loads empty selects nothing and emits no hydration request.
#[test]
fn sel_2_empty_list_selects_nothing() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[]);
    assert_eq!(h.current(), None);
    assert_eq!(count_hydration(&h), 0);
}

/// SEL-2, SEL-14: the implicit newest session does not replace a session already selected; a
/// later list load leaves a selected session alone.
#[test]
fn sel_2_implicit_choice_only_while_nothing_selected() {
    let mut h = Harness::visible_in_env();
    h.command(Command::StartAgentSession {
        agent: agent_record(None, Some(AGENT)),
    });
    let id = start_new(&h);
    h.reply(id, 201, record("s-new", AGENT, ENV, 1));
    assert_eq!(h.current().as_deref(), Some("s-new"));
    h.answer_list(&[record("s-1", AGENT, ENV, 59)]);
    assert_eq!(h.current().as_deref(), Some("s-new"));
    assert_eq!(origin(&h), Some(Origin::Created));
}

/// SEL-2 (transcript): the list loads and its newest session is selected and hydrated.
#[test]
fn sel_2_transcript_implicit_newest() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 10), record("s-2", AGENT, ENV, 40)]);
    h.answer_detail("s-2", record("s-2", AGENT, ENV, 40));
    h.answer_history("s-2");
    assert_eq!(h.current().as_deref(), Some("s-2"));
    assert_eq!(
        h.snapshot().active_session_readiness.status,
        ReadinessStatus::Ready
    );
    insta::assert_snapshot!(h.transcript());
}

// ---------------------------------------------------------------------------------------------
// SEL-3, SEL-4
// ---------------------------------------------------------------------------------------------

/// SEL-3: with avoidImplicitSessionSelection set and nothing requested, started or opened, a
/// loaded list selects nothing, readiness is idle and no detail, history, insights or
/// resolve-runtime-access request is emitted.
#[test]
fn sel_3_avoid_implicit_selects_nothing() {
    let mut h = Harness::new();
    h.avoid_implicit(true);
    h.person(USER);
    h.env(Some(ENV));
    h.visible(true);
    h.answer_list(&[record("s-1", AGENT, ENV, 40), record("s-2", AGENT, ENV, 10)]);
    let s = h.snapshot();
    assert_eq!(s.current_session_id, None);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Idle);
    assert_eq!(s.agent_sessions.len(), 2, "the list itself still loads");
    assert_eq!(count_hydration(&h), 0);
    // Hiding and showing again changes nothing.
    h.visible(false).visible(true);
    assert_eq!(h.current(), None);
    assert_eq!(count_hydration(&h), 0);
    assert_eq!(
        h.count(|c| matches!(c, ApiCall::ResolveRuntimeAccess { .. })),
        0
    );
    assert!(h.snapshot().active_runtime_interaction.is_none());
}

/// SEL-3: avoidImplicitSessionSelection set after the list request went out still keeps the
/// loaded list from selecting anything.
#[test]
fn sel_3_avoid_implicit_set_while_list_pending() {
    let mut h = Harness::visible_in_env();
    h.avoid_implicit(true);
    h.answer_list(&[record("s-1", AGENT, ENV, 40)]);
    assert_eq!(h.current(), None);
    assert_eq!(
        h.snapshot().active_session_readiness.status,
        ReadinessStatus::Idle
    );
    assert_eq!(count_hydration(&h), 0);
}

fn avoid_implicit_with_list() -> Harness {
    let mut h = Harness::new();
    h.avoid_implicit(true);
    h.person(USER);
    h.env(Some(ENV));
    h.visible(true);
    h.answer_list(&[record("s-1", AGENT, ENV, 40)]);
    h
}

/// SEL-4: with avoidImplicitSessionSelection set, a requestedSessionId still selects its
/// session, which is hydrated as usual.
#[test]
fn sel_4_avoid_implicit_requested_session_selected_and_hydrated() {
    let mut h = avoid_implicit_with_list();
    h.requested(Some("s-7"));
    assert_eq!(h.current().as_deref(), Some("s-7"));
    assert_eq!(origin(&h), Some(Origin::Requested));
    h.hydrate("s-7", AGENT);
    assert_eq!(
        h.snapshot().active_session_readiness.status,
        ReadinessStatus::Ready
    );
    h.insights_request("s-7");
    h.runtime_ready("s-7", 200);
    assert!(h.snapshot().composer_admission, "checked like any other");
}

/// SEL-4: with avoidImplicitSessionSelection set, a start action still selects the session it
/// created, which is hydrated as usual.
#[test]
fn sel_4_avoid_implicit_start_action_selected_and_hydrated() {
    let mut h = avoid_implicit_with_list();
    h.command(Command::StartAgentSession {
        agent: agent_record(None, Some(AGENT)),
    });
    let id = start_new(&h);
    h.reply(id, 201, record("s-new", AGENT, ENV, 50));
    assert_eq!(h.current().as_deref(), Some("s-new"));
    h.hydrate("s-new", AGENT);
    assert_eq!(
        h.snapshot().active_session_readiness.status,
        ReadinessStatus::Ready
    );
    h.runtime_ready("s-new", 200);
    assert!(h.snapshot().composer_admission, "checked like any other");
}

/// SEL-4: with avoidImplicitSessionSelection set, an open action still selects the Agent's
/// latest session, which is hydrated as usual.
#[test]
fn sel_4_avoid_implicit_open_action_selected_and_hydrated() {
    let mut h = avoid_implicit_with_list();
    h.command(open_latest(AGENT2));
    let id = agent_lookup(&h);
    h.reply(id, 200, page(&[record("s-a2", AGENT2, ENV, 30)]));
    assert_eq!(h.current().as_deref(), Some("s-a2"));
    h.hydrate("s-a2", AGENT2);
    assert_eq!(
        h.snapshot().active_session_readiness.status,
        ReadinessStatus::Ready
    );
    // An opened session is a launched one: its check waits for its first send (RTA-25), and
    // admission follows readiness alone.
    assert!(h.snapshot().composer_admission);
    assert_eq!(
        h.count(|c| matches!(c, ApiCall::ResolveRuntimeAccess { .. })),
        0
    );
}

// ---------------------------------------------------------------------------------------------
// SEL-5, SEL-6, SEL-7
// ---------------------------------------------------------------------------------------------

/// SEL-5, OI-11: a launch target on a visible chat looks the Agent's latest session up with the
/// Agent-filtered list (exact query) and selects the first row; no session is created.
#[test]
fn sel_5_launch_opens_agents_latest_session() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    h.launch(AGENT2, 1);
    let id = agent_lookup(&h);
    let req = &h.request(id).request;
    assert_eq!(req.method, Method::Get);
    assert_eq!(req.path, "/api/v1/agent-sessions/");
    assert_eq!(
        req.query,
        list_query(Some(USER), Some(("agent_uid", AGENT2)))
    );
    assert_eq!(
        h.request(id).call,
        ApiCall::ListSessions {
            environment_uid: ENV.to_owned(),
            created_by_user_uid: Some(USER.to_owned()),
            agent: Some(AgentFilter::Uid(AGENT2.to_owned())),
        }
    );
    assert_eq!(
        h.current().as_deref(),
        Some("s-1"),
        "not selected before the answer"
    );
    h.reply(
        id,
        200,
        page(&[
            record("s-a", AGENT2, ENV, 30),
            record("s-b", AGENT2, ENV, 20),
        ]),
    );
    assert_eq!(h.current().as_deref(), Some("s-a"));
    assert_eq!(origin(&h), Some(Origin::Launched));
    assert_eq!(count_start_new(&h), 0);
    // The opened session is hydrated.
    h.detail_request("s-a");
    h.history_request("s-a");
}

/// SEL-5, OI-11: an all-digits Agent id is looked up with agent_id, and created under its
/// numeric id.
#[test]
fn sel_5_numeric_agent_id_uses_agent_id_filter() {
    let mut h = with_list(&[]);
    h.launch("42", 1);
    let id = agent_lookup(&h);
    assert_eq!(
        h.request(id).request.query,
        list_query(Some(USER), Some(("agent_id", "42")))
    );
    h.reply(id, 200, page(&[]));
    let id = start_new(&h);
    assert_eq!(
        h.request(id).request.path,
        "/api/v1/agents/42/start-new-session/"
    );
}

/// SEL-5, OI-11, OI-16: when the Agent has no session, the launch creates one through the plain
/// start-new-session endpoint with a fresh {"thread_id": uuid} body, and selects it.
#[test]
fn sel_5_launch_creates_session_when_agent_has_none() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    h.launch(AGENT2, 1);
    let id = agent_lookup(&h);
    assert_eq!(
        count_start_new(&h),
        0,
        "no creation before the lookup answers"
    );
    h.reply(id, 200, page(&[]));
    let id = start_new(&h);
    let req = &h.request(id).request;
    assert_eq!(req.method, Method::Post);
    assert_eq!(
        req.path,
        format!("/api/v1/agents/{AGENT2}/start-new-session/")
    );
    assert!(req.query.is_empty());
    let body: Value = serde_json::from_slice(req.body.as_ref().expect("a body")).unwrap();
    let obj = body.as_object().expect("an object body");
    assert_eq!(obj.len(), 1, "only thread_id: {body}");
    assert!(is_uuid_v4(obj["thread_id"].as_str().unwrap()), "{body}");
    assert_eq!(req.header("Content-Type"), Some("application/json"));
    assert_eq!(
        h.current().as_deref(),
        Some("s-1"),
        "not selected before the answer"
    );
    h.reply(id, 201, record("s-new", AGENT2, ENV, 50));
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-new"));
    assert!(s.is_direct_launch_session);
    assert!(s.agent_sessions.iter().any(|x| x.uid == "s-new"));
    assert_eq!(count_start_new(&h), 1);
}

/// SEL-5, SEL-15 (transcript): launch on a visible chat, lookup empty, start-new-session,
/// selection as a launched session and onRequestVisible in the same drain.
#[test]
fn sel_5_transcript_launch_creates() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[]);
    launch_and_open(&mut h, AGENT, 1, &[], "s-new");
    assert_eq!(h.current().as_deref(), Some("s-new"));
    insta::assert_snapshot!(h.transcript());
}

/// SEL-5, OI-6: a failed lookup notifies "Agent session not opened" and leaves the selection.
#[test]
fn sel_5_failed_launch_notifies_and_keeps_selection() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    h.launch(AGENT2, 1);
    let id = agent_lookup(&h);
    h.reply(id, 500, json!({"detail": "Lookup exploded."}));
    assert_eq!(h.current().as_deref(), Some("s-1"));
    assert_eq!(count_start_new(&h), 0);
    let n = notices(&h);
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].title, "Agent session not opened");
    assert_eq!(n[0].variant, NoticeVariant::Error);
    assert!(
        n[0].description
            .as_deref()
            .unwrap()
            .contains("Lookup exploded."),
        "{n:?}"
    );
    assert_eq!(request_visible_count(&h), 0);
}

/// SEL-6: while the chat is hidden a launch target emits no request and leaves the selection
/// as it is.
#[test]
fn sel_6_hidden_launch_is_not_opened() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    h.hydrate("s-1", AGENT);
    h.visible(false);
    let mark = h.mark();
    h.launch(AGENT2, 1);
    h.launch(AGENT2, 2);
    assert!(h.sent_since(mark).is_empty(), "{}", h.transcript());
    assert_eq!(h.current().as_deref(), Some("s-1"));
    assert_eq!(origin(&h), Some(Origin::Newest));
    assert!(!h.snapshot().is_direct_launch_session);
    assert_eq!(request_visible_count(&h), 0);
}

/// SEL-6: a hidden chat that never was visible emits nothing for a launch target.
#[test]
fn sel_6_never_visible_launch_emits_nothing() {
    let mut h = Harness::new();
    h.person(USER).env(Some(ENV));
    let mark = h.mark();
    h.launch(AGENT, 1);
    assert!(h.sent_since(mark).is_empty());
    assert_eq!(h.current(), None);
}

/// SEL-7: the same launchKey supplied again, or the chat hidden and shown, does not open the
/// target again; a new launchKey opens it again.
#[test]
fn sel_7_launch_once_per_key() {
    let mut h = with_list(&[]);
    launch_and_open(&mut h, AGENT2, 1, &[record("s-a", AGENT2, ENV, 30)], "");
    assert_eq!(count_lookups(&h), 1);
    h.launch(AGENT2, 1);
    h.visible(false).visible(true);
    h.input(Input::LaunchTarget(None));
    h.launch(AGENT2, 1);
    assert_eq!(count_lookups(&h), 1, "{}", h.transcript());
    h.launch(AGENT2, 2);
    assert_eq!(count_lookups(&h), 2);
    let id = agent_lookup(&h);
    h.reply(id, 200, page(&[record("s-a", AGENT2, ENV, 30)]));
    h.launch(AGENT2, 3);
    assert_eq!(count_lookups(&h), 3);
}

/// SEL-7, OI-15: launchKey changes made while the chat is hidden are remembered and the target
/// is opened once, for the latest key (and the target it came with), when the chat shows.
#[test]
fn sel_7_key_changes_while_hidden_open_once_for_latest() {
    let mut h = with_list(&[]);
    h.visible(false);
    h.launch(AGENT, 1);
    h.launch(AGENT, 2);
    h.launch(AGENT2, 3);
    assert_eq!(count_lookups(&h), 0);
    h.visible(true);
    assert_eq!(count_lookups(&h), 1);
    let id = agent_lookup(&h);
    assert_eq!(
        h.request(id).request.query,
        list_query(Some(USER), Some(("agent_uid", AGENT2)))
    );
    h.reply(id, 200, page(&[record("s-a2", AGENT2, ENV, 30)]));
    assert_eq!(h.current().as_deref(), Some("s-a2"));
    h.visible(false).visible(true);
    assert_eq!(count_lookups(&h), 1);
}

/// SEL-7: a key already opened while visible, supplied again after hiding, is not reopened
/// when the chat shows.
#[test]
fn sel_7_same_key_supplied_while_hidden_not_reopened() {
    let mut h = with_list(&[]);
    launch_and_open(&mut h, AGENT2, 5, &[record("s-a", AGENT2, ENV, 30)], "");
    h.visible(false);
    h.launch(AGENT2, 5);
    h.visible(true);
    assert_eq!(count_lookups(&h), 1);
}

// ---------------------------------------------------------------------------------------------
// SEL-8, SEL-9, SEL-10 (with OI-16)
// ---------------------------------------------------------------------------------------------

/// SEL-8, OI-16: startAgentSessionById creates a new session through start-new-session
/// without looking up the Agent's sessions, and selects it as a launched session.
#[test]
fn sel_8_start_by_id_creates_and_selects() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    let mark = h.mark();
    h.command(start_by_id(AGENT2));
    let sent = h.sent_since(mark);
    assert_eq!(sent.len(), 1, "only start-new-session: {}", h.transcript());
    let req = &sent[0].request;
    assert_eq!(req.method, Method::Post);
    assert_eq!(
        req.path,
        format!("/api/v1/agents/{AGENT2}/start-new-session/")
    );
    let body: Value = serde_json::from_slice(req.body.as_ref().unwrap()).unwrap();
    assert_eq!(body.as_object().unwrap().len(), 1);
    assert!(is_uuid_v4(body["thread_id"].as_str().unwrap()));
    assert_eq!(count_lookups(&h), 0);
    let id = start_new(&h);
    h.reply(id, 201, record("s-new", AGENT2, ENV, 50));
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-new"));
    assert_eq!(s.selection_origin, Some(Origin::Launched));
    assert!(s.is_direct_launch_session);
}

/// SEL-8, OI-16: a numeric Agent id is used as is in the start-new-session path; every
/// creation draws a fresh thread_id.
#[test]
fn sel_8_numeric_agent_id_and_fresh_thread_ids() {
    let mut h = with_list(&[]);
    h.command(start_by_id("42"));
    let id = start_new(&h);
    assert_eq!(
        h.request(id).request.path,
        "/api/v1/agents/42/start-new-session/"
    );
    h.reply(id, 201, record("s-n1", "agent-42", ENV, 50));
    h.command(start_by_id("42"));
    let id2 = start_new(&h);
    let thread = |id| match &h.request(id).call {
        ApiCall::StartNewSession { thread_id, .. } => thread_id.clone(),
        other => panic!("{other:?}"),
    };
    assert_ne!(thread(id), thread(id2));
}

/// SEL-8, OI-6: a refused start-new-session notifies "Agent session not created" with the
/// error's message and leaves the selection as it was.
#[test]
fn sel_8_failed_creation_notifies() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    h.command(start_by_id(AGENT2));
    let id = start_new(&h);
    h.reply(id, 500, json!({"detail": "Agent is being deployed."}));
    assert_eq!(h.current().as_deref(), Some("s-1"));
    assert!(!h.snapshot().is_direct_launch_session);
    let n = notices(&h);
    assert_eq!(n.len(), 1, "{n:?}");
    assert_eq!(n[0].title, "Agent session not created");
    assert_eq!(n[0].variant, NoticeVariant::Error);
    assert!(
        n[0].description
            .as_deref()
            .unwrap()
            .contains("Agent is being deployed."),
        "{n:?}"
    );
    assert_eq!(request_visible_count(&h), 0);
}

/// SEL-9, OI-11: openLatestOrStartAgentSessionById selects the Agent's latest session (the
/// first row of the Agent-filtered list) without creating one.
#[test]
fn sel_9_open_latest_selects_existing() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    h.command(open_latest(AGENT2));
    let id = agent_lookup(&h);
    assert_eq!(
        h.request(id).request.query,
        list_query(Some(USER), Some(("agent_uid", AGENT2)))
    );
    h.reply(
        id,
        200,
        page(&[
            record("s-a", AGENT2, ENV, 30),
            record("s-b", AGENT2, ENV, 10),
        ]),
    );
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-a"));
    assert!(s.is_direct_launch_session);
    assert_eq!(count_start_new(&h), 0);
}

/// SEL-9, OI-11, OI-16: when the Agent has no session, openLatestOrStartAgentSessionById creates
/// one through start-new-session and selects it.
#[test]
fn sel_9_open_latest_creates_when_none() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    h.command(open_latest("17"));
    let id = agent_lookup(&h);
    assert_eq!(
        h.request(id).request.query,
        list_query(Some(USER), Some(("agent_id", "17")))
    );
    h.reply(id, 200, page(&[]));
    let id = start_new(&h);
    assert_eq!(
        h.request(id).request.path,
        "/api/v1/agents/17/start-new-session/"
    );
    h.reply(id, 201, record("s-17", "agent-17", ENV, 50));
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-17"));
    assert!(s.is_direct_launch_session);
}

/// SEL-9, OI-6: failures of openLatestOrStartAgentSessionById notify "Agent session not opened"
/// (lookup and creation alike) and keep the selection.
#[test]
fn sel_9_open_latest_failures_notify_not_opened() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    h.command(open_latest(AGENT2));
    let id = agent_lookup(&h);
    h.fail(id);
    h.command(open_latest(AGENT2));
    let id = agent_lookup(&h);
    h.reply(id, 200, page(&[]));
    let id = start_new(&h);
    h.reply(id, 503, json!({"detail": "Runtime pool exhausted."}));
    assert_eq!(h.current().as_deref(), Some("s-1"));
    let n = notices(&h);
    assert_eq!(n.len(), 2, "{n:?}");
    for x in &n {
        assert_eq!(x.title, "Agent session not opened");
        assert_eq!(x.variant, NoticeVariant::Error);
    }
    assert_eq!(n[0].description.as_deref(), Some("connection refused"));
    assert!(
        n[1].description
            .as_deref()
            .unwrap()
            .contains("Runtime pool exhausted."),
        "{n:?}"
    );
}

/// SEL-10, OI-16: startAgentSession(agent) uses the Agent's uid, creates through
/// start-new-session and selects the result as an ordinary (not launched) session.
#[test]
fn sel_10_start_agent_session_uses_uid_and_is_ordinary() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    h.command(Command::StartAgentSession {
        agent: agent_record(Some(7), Some(AGENT2)),
    });
    assert_eq!(count_lookups(&h), 0);
    let id = start_new(&h);
    let req = &h.request(id).request;
    assert_eq!(
        req.path,
        format!("/api/v1/agents/{AGENT2}/start-new-session/")
    );
    let body: Value = serde_json::from_slice(req.body.as_ref().unwrap()).unwrap();
    assert_eq!(body.as_object().unwrap().len(), 1);
    assert!(is_uuid_v4(body["thread_id"].as_str().unwrap()));
    h.reply(id, 201, record("s-new", AGENT2, ENV, 50));
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-new"));
    assert_eq!(s.selection_origin, Some(Origin::Created));
    assert!(!s.is_direct_launch_session);
}

/// SEL-10, OI-16: without a uid, startAgentSession uses a positive numeric id; an Agent with
/// neither is refused before any request (OI-6 text).
#[test]
fn sel_10_start_agent_session_numeric_id_and_refusals() {
    let mut h = with_list(&[]);
    h.command(Command::StartAgentSession {
        agent: agent_record(Some(7), Some("   ")),
    });
    let id = start_new(&h);
    assert_eq!(
        h.request(id).request.path,
        "/api/v1/agents/7/start-new-session/"
    );
    h.reply(id, 201, record("s-7", "agent-7", ENV, 50));

    for agent in [
        agent_record(None, None),
        agent_record(Some(0), None),
        agent_record(Some(-3), None),
    ] {
        let mark = h.mark();
        let before = notices(&h).len();
        h.command(Command::StartAgentSession { agent });
        assert!(h.sent_since(mark).is_empty());
        let n = notices(&h);
        assert_eq!(n.len(), before + 1);
        let last = n.last().unwrap();
        assert_eq!(last.title, "Agent session not created");
        assert_eq!(last.variant, NoticeVariant::Error);
        assert_eq!(
            last.description.as_deref(),
            Some("This agent has no identifier, so a session cannot start.")
        );
    }
    assert_eq!(h.current().as_deref(), Some("s-7"));
}

/// SEL-10, OI-16: startAgentSession narrows later latest-sessions reads to that Agent.
#[test]
fn sel_10_start_agent_session_narrows_later_list_reads() {
    let mut h = Harness::new();
    h.person(USER).env(Some(ENV));
    h.command(Command::StartAgentSession {
        agent: agent_record(None, Some(AGENT2)),
    });
    let id = start_new(&h);
    h.reply(id, 201, record("s-new", AGENT2, ENV, 50));
    h.visible(true);
    let id = h.expect_pending("latest sessions", |c| {
        matches!(c, ApiCall::ListSessions { .. })
    });
    assert_eq!(
        h.request(id).request.query,
        list_query(Some(USER), Some(("agent_uid", AGENT2)))
    );
}

/// SEL-10, OI-16: createAgentSession() creates a session for the selected session's Agent and
/// selects it as an ordinary session.
#[test]
fn sel_10_create_agent_session_uses_selected_sessions_agent() {
    let mut h = with_list(&[record("s-1", AGENT2, ENV, 40)]);
    h.hydrate("s-1", AGENT2);
    h.command(Command::CreateAgentSession);
    let id = start_new(&h);
    assert_eq!(
        h.request(id).request.path,
        format!("/api/v1/agents/{AGENT2}/start-new-session/")
    );
    h.reply(id, 201, record("s-c", AGENT2, ENV, 55));
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-c"));
    assert_eq!(s.selection_origin, Some(Origin::Created));
    assert!(!s.is_direct_launch_session);
    assert_eq!(request_visible_count(&h), 0);
}

/// SEL-10, OI-16 (Proposed), OI-6: createAgentSession() with nothing selected creates nothing
/// and notifies a creation failure.
#[test]
fn sel_10_create_agent_session_without_selection_notifies() {
    let mut h = with_list(&[]);
    let mark = h.mark();
    h.command(Command::CreateAgentSession);
    assert!(h.sent_since(mark).is_empty());
    let n = notices(&h);
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].title, "Agent session not created");
    assert_eq!(n[0].variant, NoticeVariant::Error);
    assert!(
        matches!(
            n[0].description.as_deref(),
            Some(
                "This agent has no identifier, so a session cannot start."
                    | "Unable to create a new agent session."
            )
        ),
        "{n:?}"
    );
    assert_eq!(h.current(), None);
}

/// SEL-8, SEL-9, OI-16, OI-6: blank Agent ids are refused before any request, with the texts
/// OI-6 assigns to each action.
#[test]
fn sel_8_sel_9_blank_agent_ids_refused() {
    let mut h = with_list(&[]);
    let mark = h.mark();
    h.command(start_by_id("  "));
    h.command(open_latest(""));
    assert!(h.sent_since(mark).is_empty());
    let n = notices(&h);
    assert_eq!(n.len(), 2);
    assert_eq!(n[0].title, "Agent session not created");
    assert_eq!(
        n[0].description.as_deref(),
        Some("The selected agent has no valid identifier.")
    );
    assert_eq!(n[1].title, "Agent session not opened");
    assert_eq!(
        n[1].description.as_deref(),
        Some("The selected code repository agent has no valid identifier.")
    );
    assert_eq!(request_visible_count(&h), 0);
}

// ---------------------------------------------------------------------------------------------
// SEL-11, SEL-12
// ---------------------------------------------------------------------------------------------

/// SEL-11: isDirectLaunchSession is true for sessions selected by launchTarget,
/// startAgentSessionById and openLatestOrStartAgentSessionById.
#[test]
fn sel_11_launched_paths_are_direct() {
    let mut h = with_list(&[]);
    launch_and_open(&mut h, AGENT, 1, &[record("s-a", AGENT, ENV, 30)], "");
    assert_eq!(h.current().as_deref(), Some("s-a"));
    assert!(h.snapshot().is_direct_launch_session);

    let mut h = with_list(&[]);
    h.command(start_by_id(AGENT));
    let id = start_new(&h);
    h.reply(id, 201, record("s-b", AGENT, ENV, 30));
    assert_eq!(h.current().as_deref(), Some("s-b"));
    assert!(h.snapshot().is_direct_launch_session);

    let mut h = with_list(&[]);
    h.command(open_latest(AGENT));
    let id = agent_lookup(&h);
    h.reply(id, 200, page(&[record("s-c", AGENT, ENV, 30)]));
    assert_eq!(h.current().as_deref(), Some("s-c"));
    assert!(h.snapshot().is_direct_launch_session);
}

/// SEL-11: isDirectLaunchSession is false for requested, newest, startAgentSession and
/// createAgentSession selections.
#[test]
fn sel_11_other_paths_are_not_direct() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    assert_eq!(origin(&h), Some(Origin::Newest));
    assert!(!h.snapshot().is_direct_launch_session);
    h.hydrate("s-1", AGENT);

    h.command(Command::CreateAgentSession);
    let id = start_new(&h);
    h.reply(id, 201, record("s-c", AGENT, ENV, 45));
    assert_eq!(h.current().as_deref(), Some("s-c"));
    assert!(!h.snapshot().is_direct_launch_session);

    h.command(Command::StartAgentSession {
        agent: agent_record(None, Some(AGENT)),
    });
    let id = start_new(&h);
    h.reply(id, 201, record("s-s", AGENT, ENV, 46));
    assert_eq!(h.current().as_deref(), Some("s-s"));
    assert!(!h.snapshot().is_direct_launch_session);

    h.requested(Some("s-r"));
    assert_eq!(h.current().as_deref(), Some("s-r"));
    assert!(!h.snapshot().is_direct_launch_session);
}

/// SEL-11: the default session is not a launched session.
#[test]
fn sel_11_default_session_is_not_direct() {
    let mut h = Harness::visible_in_env();
    h.default_session(Some(AGENT));
    h.shows_default(true);
    let id = h.get_or_create_request();
    h.reply(id, 200, handle_record("s-d", AGENT, ENV, HANDLE, 20));
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-d"));
    assert_eq!(s.selection_origin, Some(Origin::Default));
    assert!(!s.is_direct_launch_session);
}

/// SEL-12: isDirectLaunchSession turns false when the selection moves to another session, and a
/// later non-launch reselection of the launched session does not make it true again.
#[test]
fn sel_12_direct_flag_lost_on_move_and_not_regained() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    launch_and_open(&mut h, AGENT2, 1, &[record("s-L", AGENT2, ENV, 30)], "");
    assert!(h.snapshot().is_direct_launch_session);
    h.requested(Some("s-2"));
    assert_eq!(h.current().as_deref(), Some("s-2"));
    assert!(!h.snapshot().is_direct_launch_session);
    h.requested(Some("s-L"));
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-L"));
    assert_eq!(s.selection_origin, Some(Origin::Requested));
    assert!(!s.is_direct_launch_session);
    h.hydrate("s-L", AGENT2);
    assert!(!h.snapshot().is_direct_launch_session);
}

/// SEL-12: isDirectLaunchSession turns false when the selection moves to none.
#[test]
fn sel_12_direct_flag_lost_when_selection_empties() {
    let mut h = with_list(&[]);
    launch_and_open(&mut h, AGENT2, 1, &[record("s-L", AGENT2, ENV, 30)], "");
    assert!(h.snapshot().is_direct_launch_session);
    h.env(Some(ENV2));
    let s = h.snapshot();
    assert_eq!(s.current_session_id, None);
    assert!(!s.is_direct_launch_session);
}

/// SEL-12: archiving the launched session moves the selection to the newest listed session,
/// which is not a launched session.
#[test]
fn sel_12_direct_flag_lost_after_archive() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    launch_and_open(&mut h, AGENT2, 1, &[record("s-L", AGENT2, ENV, 50)], "");
    h.command(Command::ArchiveAgentSession {
        session_uid: "s-L".to_owned(),
    });
    let id = h.expect_pending("archive", |c| matches!(c, ApiCall::ArchiveSession { .. }));
    let mut archived = record("s-L", AGENT2, ENV, 50);
    archived["is_archived"] = json!(true);
    h.reply(id, 200, archived);
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-1"));
    assert!(!s.is_direct_launch_session);
}

// ---------------------------------------------------------------------------------------------
// SEL-13
// ---------------------------------------------------------------------------------------------

/// SEL-13: the detail, history and insights requests of a session are identical whatever
/// selected it (requested, newest, launched, startAgentSessionById, startAgentSession), and so
/// are its runtime-access requests, except that a launched session has none before its first
/// send (RTA-25).
#[test]
fn sel_13_hydration_requests_do_not_depend_on_origin() {
    let finish = |h: &mut Harness| {
        h.hydrate("s-1", AGENT);
        h.insights_request("s-1");
        if h.snapshot().is_direct_launch_session {
            assert!(
                h.pending(|c| matches!(c, ApiCall::ResolveRuntimeAccess { .. }))
                    .is_none()
            );
        } else {
            h.runtime_ready("s-1", 200);
            assert!(h.snapshot().composer_admission);
        }
        let mut all = hydration_requests(h);
        all.extend(runtime_requests(h));
        all
    };
    let requested = {
        let mut h = Harness::visible_in_env();
        h.requested(Some("s-1"));
        finish(&mut h)
    };
    let newest = {
        let mut h = Harness::visible_in_env();
        h.answer_list(&[record("s-1", AGENT, ENV, 0)]);
        finish(&mut h)
    };
    let launched = {
        let mut h = with_list(&[]);
        launch_and_open(&mut h, AGENT, 1, &[record("s-1", AGENT, ENV, 0)], "");
        finish(&mut h)
    };
    let by_id = {
        let mut h = with_list(&[]);
        h.command(start_by_id(AGENT));
        let id = start_new(&h);
        h.reply(id, 201, record("s-1", AGENT, ENV, 0));
        finish(&mut h)
    };
    let started = {
        let mut h = with_list(&[]);
        h.command(Command::StartAgentSession {
            agent: agent_record(None, Some(AGENT)),
        });
        let id = start_new(&h);
        h.reply(id, 201, record("s-1", AGENT, ENV, 0));
        finish(&mut h)
    };
    assert_eq!(requested.len(), 5, "{requested:#?}");
    assert!(requested[0].starts_with("GET /api/v1/agent-sessions/s-1/ "));
    assert!(requested[0].contains("organization_environment_uid"));
    assert!(requested[3].starts_with("POST /api/v1/agent-sessions/s-1/resolve-runtime-access/"));
    assert!(requested[4].starts_with("GET /api/chat"));
    for (name, other) in [("newest", &newest), ("started", &started)] {
        assert_eq!(&requested, other, "{name}");
    }
    for (name, other) in [("launched", &launched), ("by_id", &by_id)] {
        assert_eq!(&requested[..3], other.as_slice(), "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// SEL-14 (OI-14)
// ---------------------------------------------------------------------------------------------

/// SEL-14, OI-14: while showsDefaultSession is false the latest selecting event wins:
/// requested, launch, a changed requested id, startAgentSession, openLatest..., startById.
#[test]
fn sel_14_latest_selecting_event_wins() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    assert_eq!(h.current().as_deref(), Some("s-1"));
    h.requested(Some("s-r1"));
    assert_eq!(h.current().as_deref(), Some("s-r1"));
    launch_and_open(&mut h, AGENT2, 1, &[record("s-L", AGENT2, ENV, 30)], "");
    assert_eq!(h.current().as_deref(), Some("s-L"));
    h.requested(Some("s-r2"));
    assert_eq!(h.current().as_deref(), Some("s-r2"));
    h.command(Command::StartAgentSession {
        agent: agent_record(None, Some(AGENT)),
    });
    let id = start_new(&h);
    h.reply(id, 201, record("s-S", AGENT, ENV, 50));
    assert_eq!(h.current().as_deref(), Some("s-S"));
    h.command(open_latest(AGENT2));
    let id = agent_lookup(&h);
    h.reply(id, 200, page(&[record("s-O", AGENT2, ENV, 20)]));
    assert_eq!(h.current().as_deref(), Some("s-O"));
    h.command(start_by_id(AGENT));
    let id = start_new(&h);
    h.reply(id, 201, record("s-B", AGENT, ENV, 51));
    assert_eq!(h.current().as_deref(), Some("s-B"));
    h.requested(Some("s-r1"));
    assert_eq!(h.current().as_deref(), Some("s-r1"));
}

/// SEL-14, OI-14: an unchanged requestedSessionId supplied again (also with surrounding spaces)
/// is not a new event and does not take the selection back from a later launch.
#[test]
fn sel_14_unchanged_requested_id_is_not_a_new_event() {
    let mut h = with_list(&[]);
    h.requested(Some("s-r"));
    launch_and_open(&mut h, AGENT2, 1, &[record("s-L", AGENT2, ENV, 30)], "");
    assert_eq!(h.current().as_deref(), Some("s-L"));
    h.requested(Some("s-r"));
    assert_eq!(h.current().as_deref(), Some("s-L"));
    h.requested(Some("  s-r "));
    assert_eq!(h.current().as_deref(), Some("s-L"));
}

/// SEL-14, OI-14: requestedSessionId is trimmed, and a blank value means none (it selects
/// nothing and emits no request).
#[test]
fn sel_14_requested_id_trimmed_and_blank_is_none() {
    let mut h = Harness::new();
    h.avoid_implicit(true);
    h.person(USER).env(Some(ENV)).visible(true);
    h.answer_list(&[record("s-1", AGENT, ENV, 40)]);
    let mark = h.mark();
    h.requested(Some("   "));
    assert_eq!(h.current(), None);
    assert!(h.sent_since(mark).is_empty());
    h.requested(Some("  s-3  "));
    assert_eq!(h.current().as_deref(), Some("s-3"));
    let id = h.detail_request("s-3");
    assert_eq!(h.request(id).request.path, "/api/v1/agent-sessions/s-3/");
}

/// SEL-14, OI-14: a list that loads while a requested session is selected (its detail still
/// pending) does not replace it with the newest session.
#[test]
fn sel_14_list_load_does_not_replace_pending_requested() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-9"));
    h.answer_list(&[record("s-1", AGENT, ENV, 59)]);
    assert_eq!(h.current().as_deref(), Some("s-9"));
    assert_eq!(origin(&h), Some(Origin::Requested));
}

/// SEL-14: a newer start action replaces an open action still looking up; the older one's late
/// answer selects nothing and calls no onRequestVisible for it.
#[test]
fn sel_14_newer_action_replaces_one_in_flight() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    h.command(open_latest(AGENT2));
    let lookup = agent_lookup(&h);
    h.command(Command::StartAgentSession {
        agent: agent_record(None, Some(AGENT)),
    });
    let create = start_new(&h);
    h.reply(create, 201, record("s-S", AGENT, ENV, 50));
    assert_eq!(h.current().as_deref(), Some("s-S"));
    h.reply(lookup, 200, page(&[record("s-O", AGENT2, ENV, 20)]));
    assert_eq!(h.current().as_deref(), Some("s-S"));
    assert_eq!(request_visible_count(&h), 0);
}

// ---------------------------------------------------------------------------------------------
// SEL-15 (OI-15)
// ---------------------------------------------------------------------------------------------

/// SEL-15, OI-15: after a launch selects its session, onRequestVisible is called once, in the
/// drain that carries the selection, and never before it or again afterwards.
#[test]
fn sel_15_request_visible_once_after_launch() {
    let mut h = with_list(&[]);
    h.launch(AGENT, 1);
    assert_eq!(request_visible_count(&h), 0);
    let id = agent_lookup(&h);
    h.reply(id, 200, page(&[]));
    assert_eq!(request_visible_count(&h), 0, "not before the selection");
    let id = start_new(&h);
    h.reply(id, 201, record("s-new", AGENT, ENV, 50));
    assert_eq!(h.current().as_deref(), Some("s-new"));
    assert_eq!(request_visible_count(&h), 1);
    // Later steps do not call it again.
    h.hydrate("s-new", AGENT);
    h.visible(false).visible(true);
    h.launch(AGENT, 1);
    assert_eq!(request_visible_count(&h), 1);
}

/// SEL-15, OI-15: startAgentSessionById and openLatestOrStartAgentSessionById call
/// onRequestVisible after their selection even while the chat is hidden.
#[test]
fn sel_15_request_visible_while_hidden() {
    let mut h = Harness::new();
    h.person(USER).env(Some(ENV));
    h.command(start_by_id(AGENT));
    let id = start_new(&h);
    assert_eq!(request_visible_count(&h), 0);
    h.reply(id, 201, record("s-b", AGENT, ENV, 50));
    assert_eq!(h.current().as_deref(), Some("s-b"));
    assert_eq!(request_visible_count(&h), 1);

    h.command(open_latest(AGENT2));
    let id = agent_lookup(&h);
    assert_eq!(request_visible_count(&h), 1);
    h.reply(id, 200, page(&[record("s-o", AGENT2, ENV, 30)]));
    assert_eq!(h.current().as_deref(), Some("s-o"));
    assert_eq!(request_visible_count(&h), 2);
    assert!(!h.snapshot().is_visible);
}

/// SEL-15: no onRequestVisible for selections that are not launches (newest, requested,
/// startAgentSession, createAgentSession), nor for a failed launch.
#[test]
fn sel_15_no_request_visible_for_other_selections() {
    let mut h = with_list(&[record("s-1", AGENT, ENV, 40)]);
    h.hydrate("s-1", AGENT);
    h.requested(Some("s-2"));
    h.command(Command::StartAgentSession {
        agent: agent_record(None, Some(AGENT)),
    });
    let id = start_new(&h);
    h.reply(id, 201, record("s-s", AGENT, ENV, 50));
    h.hydrate("s-s", AGENT);
    h.command(Command::CreateAgentSession);
    let id = start_new(&h);
    h.reply(id, 201, record("s-c", AGENT, ENV, 51));
    h.command(start_by_id(AGENT));
    let id = start_new(&h);
    h.reply(id, 500, json!({"detail": "no"}));
    assert_eq!(h.current().as_deref(), Some("s-c"));
    assert_eq!(request_visible_count(&h), 0, "{}", h.transcript());
}

/// SEL-15, OI-15 (transcript): openLatestOrStartAgentSessionById while hidden: lookup, selection
/// and onRequestVisible in that order, no hydration until the chat shows.
#[test]
fn sel_15_transcript_open_latest_hidden() {
    let mut h = Harness::new();
    h.person(USER).env(Some(ENV));
    h.command(open_latest(AGENT2));
    let id = agent_lookup(&h);
    h.reply(id, 200, page(&[record("s-o", AGENT2, ENV, 30)]));
    assert_eq!(count_hydration(&h), 0);
    h.visible(true);
    h.detail_request("s-o");
    insta::assert_snapshot!(h.transcript());
}

// ---------------------------------------------------------------------------------------------
// INV-10 for opening
// ---------------------------------------------------------------------------------------------

/// SEL-5, INV-10: a launch lookup answered after the Environment changed selects nothing.
#[test]
fn sel_5_stale_launch_answer_after_environment_change() {
    let mut h = with_list(&[]);
    h.launch(AGENT2, 1);
    let id = agent_lookup(&h);
    h.env(Some(ENV2));
    let before = h.snapshot();
    h.reply(id, 200, page(&[record("s-a", AGENT2, ENV, 30)]));
    assert_eq!(h.snapshot(), before);
    assert_eq!(h.current(), None);
    assert_eq!(request_visible_count(&h), 0);
}

/// RU-21: a refresh of the latest sessions keeps the selection: the selected session stays
/// selected and listed though the new page omits it (s-1 selected, a read of s-7 and s-8:
/// s-1, s-7 and s-8 listed), with no history read and no readiness change; a row for a
/// session held takes the new row's fields (a new name) without a history read; the Agent
/// that answers keeps working through the read.
#[test]
fn ru_21_a_list_refresh_keeps_the_selection() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 1)]);
    h.hydrate("s-1", AGENT);
    let readiness = h.snapshot().active_session_readiness;
    let histories = |h: &Harness| h.count(|c| matches!(c, ApiCall::GetSessionHistory { .. }));
    let before = histories(&h);
    h.command(Command::RefreshLatestSessions);
    h.answer_list(&[record("s-8", AGENT, ENV, 8), record("s-7", AGENT, ENV, 7)]);
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-1"));
    let mut listed: Vec<&str> = s.agent_sessions.iter().map(|r| r.uid.as_str()).collect();
    listed.sort_unstable();
    assert_eq!(listed, ["s-1", "s-7", "s-8"]);
    assert_eq!(s.active_session_readiness, readiness);
    assert_eq!(histories(&h), before, "no history read");

    let mut renamed = record("s-1", AGENT, ENV, 1);
    renamed["name"] = json!("Renamed chat");
    h.command(Command::RefreshLatestSessions);
    h.answer_list(&[renamed]);
    let s = h.snapshot();
    let row = s.agent_sessions.iter().find(|r| r.uid == "s-1").unwrap();
    assert_eq!(row.title, "Renamed chat");
    assert_eq!(s.current_session_id.as_deref(), Some("s-1"));
    assert_eq!(histories(&h), before, "no history read");

    let mut h = Harness::talking("s-1");
    let id = spec_tests::turns::post_on(&mut h, "s-1", "Hello");
    h.stream_head(id);
    h.command(Command::RefreshLatestSessions);
    h.answer_list(&[record("s-1", AGENT, ENV, 1)]);
    assert!(h.snapshot().is_agent_working, "the answer still streams");
    assert!(h.snapshot().has_active_chat_stream);
}

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The session explorer's reads (adr-notes section 6, the reference's
//! `fetchArchivedAgentSessions` and `searchAgentSessions`; adr-notes section 7, "Archived/search
//! page: default 20, clamped 1 to 100"): one Agent's archived sessions and the session search,
//! each with its own rows, loading flag and error, and the command that reads the latest list
//! again on purpose. Neither read touches `agentSessions`, `currentSessionId` or readiness.

use engine_core::{ApiCall, Command, Input, Person, ReadinessStatus, Snapshot};
use serde_json::{Value, json};
use spec_tests::fixtures::{AGENT, AGENT2, ENV, ENV2, USER, page, record};
use spec_tests::{Harness, Sent};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn is_archived_list(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ListArchivedSessions { .. })
}

fn is_search(c: &ApiCall) -> bool {
    matches!(c, ApiCall::SearchSessions { .. })
}

fn query(s: &Sent) -> Vec<(&str, &str)> {
    s.request
        .query
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

fn archived(uid: &str, agent: &str, env: &str, archived_at: &str) -> Value {
    let mut r = record(uid, agent, env, 10);
    r["is_archived"] = json!(true);
    r["archived_at"] = json!(archived_at);
    r
}

fn fetch_archived(h: &mut Harness, agent: Option<&str>, limit: Option<u32>) {
    h.command(Command::FetchArchivedAgentSessions {
        agent_uid: agent.map(str::to_owned),
        limit,
    });
}

fn search(h: &mut Harness, q: &str, limit: Option<u32>) {
    h.command(Command::SearchAgentSessions {
        query: q.to_owned(),
        limit,
    });
}

fn archived_uids(s: &Snapshot) -> Vec<&str> {
    s.archived_sessions
        .iter()
        .map(|r| r.session.uid.as_str())
        .collect()
}

fn result_uids(s: &Snapshot) -> Vec<&str> {
    s.session_search_results
        .iter()
        .map(|r| r.uid.as_str())
        .collect()
}

/// The values the explorer must never disturb: the latest list, its flags, the selection and
/// readiness.
fn untouched(s: &Snapshot) -> (Vec<String>, Option<String>, bool, Option<String>, String) {
    (
        s.agent_sessions.iter().map(|x| x.uid.clone()).collect(),
        s.latest_sessions_error.clone(),
        s.is_loading_latest_sessions,
        s.current_session_id.clone(),
        serde_json::to_string(&s.active_session_readiness).unwrap(),
    )
}

const NEEDS_AGENT_AND_PERSON: &str =
    "The archived session list requires agent_uid and created_by_user_uid.";
const NO_ENVIRONMENT: &str = "Session requests require organization_environment_uid.";

/// A visible chat in [`ENV`] with no person.
fn no_person() -> Harness {
    let mut h = Harness::new();
    h.env(Some(ENV)).visible(true);
    h
}

/// A visible chat for [`USER`] with no Environment.
fn no_environment() -> Harness {
    let mut h = Harness::new();
    h.person(USER).visible(true);
    h
}

/// Runs `act`, which must send no explorer read, and returns the snapshot after it.
fn refused(mut h: Harness, act: impl FnOnce(&mut Harness)) -> Snapshot {
    let mark = h.mark();
    act(&mut h);
    let sent = h.sent_since(mark);
    assert!(
        sent.iter()
            .all(|s| !is_archived_list(&s.call) && !is_search(&s.call)),
        "{sent:?}"
    );
    h.snapshot()
}

/// The archived-list reads sent since `mark`.
fn archived_reads_since(h: &Harness, mark: usize) -> Vec<Sent> {
    let sent = h.sent_since(mark).iter();
    sent.filter(|s| is_archived_list(&s.call))
        .cloned()
        .collect()
}

/// The one request sent since `mark`, which must be a P1 read (GET, no body).
fn one_list_read(h: &Harness, mark: usize) -> Sent {
    let sent = h.sent_since(mark);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].request.method.as_str(), "GET");
    assert_eq!(sent[0].request.path, "/api/v1/agent-sessions/");
    assert!(sent[0].request.body.is_none());
    sent[0].clone()
}

/// A chat whose session `s-1` (Agent [`AGENT`]) is selected and loaded.
fn ready() -> Harness {
    Harness::ready("s-1")
}

/// [`ready`] with the archived list of [`AGENT`] loaded: one row, `uid`.
fn ready_with_archived(uid: &str) -> Harness {
    let mut h = ready();
    fetch_archived(&mut h, Some(AGENT), None);
    let id = h.expect_pending("archived", is_archived_list);
    h.reply(
        id,
        200,
        page(&[archived(uid, AGENT, ENV, "2026-10-03T07:30:00Z")]),
    );
    h
}

// ---------------------------------------------------------------------------------------------
// The archived list
// ---------------------------------------------------------------------------------------------

/// adr-notes 6 and 7, ENV-6, ENV-7: the archived list is P1 with the reference's parameters in
/// its order (`organization_environment_uid`, `agent_uid`, `created_by_user_uid`,
/// `is_archived=true`, `ordering=-archived_at`, `limit=20`); its rows keep the platform's order
/// and their `archived_at`, and the latest list, the selection and readiness stay as they were.
#[test]
fn archived_list_reads_one_agents_archived_sessions() {
    let mut h = ready();
    let before = untouched(&h.snapshot());
    let mark = h.mark();
    fetch_archived(&mut h, Some(AGENT2), None);
    let sent = [one_list_read(&h, mark)];
    assert_eq!(
        query(&sent[0]),
        [
            ("organization_environment_uid", ENV),
            ("agent_uid", AGENT2),
            ("created_by_user_uid", USER),
            ("is_archived", "true"),
            ("ordering", "-archived_at"),
            ("limit", "20"),
        ]
    );
    let s = h.snapshot();
    assert!(s.is_loading_archived_sessions);
    assert_eq!(s.archived_sessions_agent_uid.as_deref(), Some(AGENT2));
    assert_eq!(untouched(&s), before);

    h.reply(
        sent[0].id,
        200,
        page(&[
            archived("s-8", AGENT2, ENV, "2026-10-03T07:30:00Z"),
            archived("s-9", AGENT2, ENV, "2026-10-01T07:30:00Z"),
        ]),
    );
    let s = h.snapshot();
    assert!(!s.is_loading_archived_sessions);
    assert_eq!(s.archived_sessions_error, None);
    assert_eq!(archived_uids(&s), ["s-8", "s-9"]);
    assert_eq!(
        s.archived_sessions[0].archived_at.as_deref(),
        Some("2026-10-03T07:30:00Z")
    );
    assert_eq!(s.archived_sessions[1].session.title, "Session s-9");
    assert_eq!(untouched(&s), before);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Ready);
    assert!(h.notices().is_empty());
}

/// adr-notes 6: with no Agent named, the archived list is the selected session's Agent's; with
/// no selected session, the default session's. `agent_uid` is sent even for an all-digits id
/// (the reference never uses `agent_id` here).
#[test]
fn archived_list_defaults_to_the_selected_sessions_agent() {
    let mut h = ready();
    let mark = h.mark();
    fetch_archived(&mut h, None, None);
    let sent = h.sent_since(mark).to_vec();
    assert_eq!(sent.len(), 1);
    assert_eq!(query(&sent[0])[1], ("agent_uid", AGENT));

    let mut h = Harness::visible_in_env();
    h.default_session(Some(AGENT2));
    let mark = h.mark();
    fetch_archived(&mut h, None, None);
    let sent = archived_reads_since(&h, mark);
    assert_eq!(sent.len(), 1);
    assert_eq!(query(&sent[0])[1], ("agent_uid", AGENT2));

    let mark = h.mark();
    fetch_archived(&mut h, Some(" 42 "), None);
    assert_eq!(query(&h.sent_since(mark)[0])[1], ("agent_uid", "42"));
}

/// adr-notes 6: the archived list needs an Agent, the person's uid and an Environment; without
/// one it is refused before any request, with the refusal as `archivedSessionsError`.
#[test]
fn archived_list_is_refused_without_agent_person_or_environment() {
    let s = refused(Harness::visible_in_env(), |h| fetch_archived(h, None, None));
    assert_eq!(
        s.archived_sessions_error.as_deref(),
        Some(NEEDS_AGENT_AND_PERSON)
    );
    assert!(!s.is_loading_archived_sessions);
    assert_eq!(s.archived_sessions_agent_uid, None);
    let s = refused(no_person(), |h| fetch_archived(h, Some(AGENT), None));
    assert_eq!(
        s.archived_sessions_error.as_deref(),
        Some(NEEDS_AGENT_AND_PERSON)
    );
    let s = refused(no_environment(), |h| fetch_archived(h, Some(AGENT), None));
    assert_eq!(s.archived_sessions_error.as_deref(), Some(NO_ENVIRONMENT));
}

/// adr-notes 7 ("Archived/search page: default 20, clamped 1 to 100"): 0 reads as 1, 101 as 100,
/// for both reads; values inside the range are sent as given.
#[test]
fn limits_are_clamped_to_1_and_100() {
    let mut h = ready();
    for (given, sent) in [
        (Some(0), "1"),
        (Some(1), "1"),
        (Some(55), "55"),
        (Some(100), "100"),
        (Some(101), "100"),
        (Some(u32::MAX), "100"),
        (None, "20"),
    ] {
        let mark = h.mark();
        fetch_archived(&mut h, Some(AGENT), given);
        search(&mut h, "ledger", given);
        let new = h.sent_since(mark).to_vec();
        assert_eq!(new.len(), 2, "{given:?}");
        for s in &new {
            assert_eq!(query(s).last(), Some(&("limit", sent)), "{given:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The search
// ---------------------------------------------------------------------------------------------

/// adr-notes 6, ENV-6, ENV-7: the search is P1 with `organization_environment_uid`,
/// `created_by_user_uid`, `is_archived=false`, `q` (trimmed), `ordering=-started_at`,
/// `limit=20`, in that order. Its rows are its own: sessions the latest list does not hold stay
/// out of `agentSessions`; archived rows are left out (OI-13).
#[test]
fn search_sends_the_trimmed_query_and_keeps_its_rows_apart() {
    let mut h = ready();
    let before = untouched(&h.snapshot());
    let mark = h.mark();
    search(&mut h, "  ledger q3 & co  ", None);
    let sent = [one_list_read(&h, mark)];
    assert_eq!(
        query(&sent[0]),
        [
            ("organization_environment_uid", ENV),
            ("created_by_user_uid", USER),
            ("is_archived", "false"),
            ("q", "ledger q3 & co"),
            ("ordering", "-started_at"),
            ("limit", "20"),
        ]
    );
    assert!(
        sent[0].request.url().contains("&q=ledger%20q3%20%26%20co&"),
        "{}",
        sent[0].request.url()
    );
    let s = h.snapshot();
    assert!(s.is_searching_sessions);
    assert_eq!(s.session_search_query.as_deref(), Some("ledger q3 & co"));
    assert_eq!(untouched(&s), before);

    h.reply(
        sent[0].id,
        200,
        page(&[
            record("s-7", AGENT2, ENV, 40),
            archived("s-6", AGENT, ENV, "2026-10-03T07:30:00Z"),
            record("s-1", AGENT, ENV, 0),
        ]),
    );
    let s = h.snapshot();
    assert!(!s.is_searching_sessions);
    assert_eq!(s.session_search_error, None);
    assert_eq!(result_uids(&s), ["s-7", "s-1"]);
    assert_eq!(untouched(&s), before);
    assert_eq!(h.list_uids(), ["s-1"]);
    assert!(h.notices().is_empty());
}

/// adr-notes 6: a query blank once trimmed sends nothing; it clears the results, the error and a
/// search in flight (aborted). The reference's client refuses a blank query before any request.
#[test]
fn a_blank_search_clears_without_a_request() {
    let mut h = ready();
    search(&mut h, "ledger", None);
    let id = h.expect_pending("search", is_search);
    h.reply(id, 200, page(&[record("s-7", AGENT2, ENV, 40)]));
    assert_eq!(result_uids(&h.snapshot()), ["s-7"]);

    let mark = h.mark();
    search(&mut h, " \t ", None);
    assert!(h.sent_since(mark).is_empty());
    let s = h.snapshot();
    assert!(s.session_search_results.is_empty());
    assert_eq!(s.session_search_query, None);
    assert_eq!(s.session_search_error, None);
    assert!(!s.is_searching_sessions);

    search(&mut h, "ledger", None);
    let id = h.expect_pending("search", is_search);
    search(&mut h, "", None);
    assert!(h.was_aborted(id));
    assert!(!h.snapshot().is_searching_sessions);
    h.reply(id, 200, page(&[record("s-7", AGENT2, ENV, 40)]));
    assert!(h.snapshot().session_search_results.is_empty());
}

/// adr-notes 6: the search needs the person's uid and an Environment; without one it is refused
/// before any request, with the refusal as `sessionSearchError`.
#[test]
fn search_is_refused_without_person_or_environment() {
    let s = refused(no_person(), |h| search(h, "ledger", None));
    assert_eq!(
        s.session_search_error.as_deref(),
        Some("Session search requires created_by_user_uid and a query.")
    );
    assert_eq!(s.session_search_query.as_deref(), Some("ledger"));
    let s = refused(no_environment(), |h| search(h, "ledger", None));
    assert_eq!(s.session_search_error.as_deref(), Some(NO_ENVIRONMENT));
}

// ---------------------------------------------------------------------------------------------
// Superseded reads, failures, scope changes
// ---------------------------------------------------------------------------------------------

/// adr-notes 6, INV-10: a newer read of the same kind aborts the one in flight (the abort goes
/// out before the newer request) and the superseded read's late answer changes nothing. The two
/// reads do not supersede each other.
#[test]
fn a_newer_read_aborts_the_one_in_flight() {
    let mut h = ready();
    search(&mut h, "first", None);
    let first = h.expect_pending("search", is_search);
    fetch_archived(&mut h, Some(AGENT), None);
    let archived_first = h.expect_pending("archived", is_archived_list);
    search(&mut h, "second", None);
    let second = h.expect_pending("search", is_search);
    assert!(h.was_aborted(first));
    assert!(!h.was_aborted(archived_first));
    assert!(h.transcript().contains(&format!(
        "-> abort {first}\n    -> {second} GET /api/v1/agent-sessions/"
    )));
    let s = h.snapshot();
    assert!(s.is_searching_sessions);
    assert_eq!(s.session_search_query.as_deref(), Some("second"));

    let ignored = h.engine().ignored_answers();
    h.reply(first, 200, page(&[record("s-5", AGENT, ENV, 5)]));
    assert!(h.engine().ignored_answers() > ignored);
    let s = h.snapshot();
    assert!(s.session_search_results.is_empty());
    assert!(s.is_searching_sessions);

    h.reply(second, 200, page(&[record("s-6", AGENT, ENV, 6)]));
    assert_eq!(result_uids(&h.snapshot()), ["s-6"]);

    fetch_archived(&mut h, Some(AGENT2), None);
    let archived_second = h.expect_pending("archived", is_archived_list);
    assert!(h.was_aborted(archived_first));
    h.reply(
        archived_first,
        200,
        page(&[archived("s-8", AGENT, ENV, "2026-10-03T07:30:00Z")]),
    );
    let s = h.snapshot();
    assert!(s.archived_sessions.is_empty());
    assert!(s.is_loading_archived_sessions);
    assert_eq!(s.archived_sessions_agent_uid.as_deref(), Some(AGENT2));
    h.reply(archived_second, 200, page(&[]));
    let s = h.snapshot();
    assert!(!s.is_loading_archived_sessions);
    // An empty answer is not an error (as ENV-8 says of the latest list).
    assert_eq!(s.archived_sessions_error, None);
    assert_eq!(result_uids(&s), ["s-6"]);
}

/// adr-notes 6 and 8, FAIL-6: a failed read sets only its own error (the platform's message,
/// the transport's, or the Environment check's) and empties its rows; `latestSessionsError`
/// and readiness stay as they were. A row from another Environment fails the whole read, as on
/// the latest list (ENV-6).
#[test]
fn failures_set_only_their_own_error() {
    let mut h = ready();
    let before = untouched(&h.snapshot());
    search(&mut h, "ledger", None);
    let id = h.expect_pending("search", is_search);
    h.reply(id, 200, page(&[record("s-2", AGENT, ENV, 2)]));
    assert_eq!(result_uids(&h.snapshot()), ["s-2"]);
    // The rows of an older read do not show while a newer one runs, nor after it fails.
    search(&mut h, "ledger", None);
    assert!(h.snapshot().session_search_results.is_empty());
    let id = h.expect_pending("search", is_search);
    h.reply(id, 500, json!({"detail": "Search index offline."}));
    let s = h.snapshot();
    assert!(s.session_search_results.is_empty());
    let error = s.session_search_error.clone().unwrap();
    assert!(error.starts_with("Conversation search failed."), "{error}");
    assert!(error.contains("Search index offline."), "{error}");
    assert!(!s.is_searching_sessions);
    assert_eq!(s.archived_sessions_error, None);
    assert_eq!(untouched(&s), before);

    // A new search clears the error while it runs.
    search(&mut h, "ledger", None);
    assert_eq!(h.snapshot().session_search_error, None);
    let id = h.expect_pending("search", is_search);
    h.reply(
        id,
        200,
        page(&[record("s-2", AGENT, ENV, 2), record("s-3", AGENT, ENV2, 3)]),
    );
    let s = h.snapshot();
    assert_eq!(
        s.session_search_error.as_deref(),
        Some("The session belongs to Organization Environment env-2, not env-1.")
    );
    assert!(s.session_search_results.is_empty());

    fetch_archived(&mut h, Some(AGENT), None);
    let id = h.expect_pending("archived", is_archived_list);
    h.fail(id);
    let s = h.snapshot();
    assert!(s.archived_sessions_error.is_some());
    assert!(!s.is_loading_archived_sessions);

    fetch_archived(&mut h, Some(AGENT), None);
    let id = h.expect_pending("archived", is_archived_list);
    let mut nameless = archived("s-8", AGENT, ENV, "2026-10-03T07:30:00Z");
    nameless
        .as_object_mut()
        .unwrap()
        .remove("organization_environment_uid");
    h.reply(id, 200, page(&[nameless]));
    assert_eq!(
        h.snapshot().archived_sessions_error.as_deref(),
        Some("The session response did not include organization_environment_uid.")
    );
    assert_eq!(untouched(&h.snapshot()), before);
    assert!(h.notices().is_empty());
}

/// ENV-2, INV-10: a change of person or Environment drops both reads: their rows, errors and
/// subjects go, a read in flight is aborted and its late answer shows nothing of the old pair.
#[test]
fn a_person_or_environment_change_clears_the_explorer() {
    let mut h = ready_with_archived("s-8");
    search(&mut h, "ledger", None);
    let pending = h.expect_pending("search", is_search);
    assert_eq!(archived_uids(&h.snapshot()), ["s-8"]);

    h.env(Some(ENV2));
    assert!(h.was_aborted(pending));
    let s = h.snapshot();
    assert!(s.archived_sessions.is_empty());
    assert_eq!(s.archived_sessions_agent_uid, None);
    assert!(!s.is_loading_archived_sessions);
    assert!(s.session_search_results.is_empty());
    assert_eq!(s.session_search_query, None);
    assert!(!s.is_searching_sessions);
    h.reply(pending, 200, page(&[record("s-2", AGENT, ENV, 2)]));
    assert!(h.snapshot().session_search_results.is_empty());

    // The same for a new person, and for a failed read's error.
    search(&mut h, "ledger", None);
    let id = h.expect_pending("search", is_search);
    assert_eq!(
        query(h.request(id))[0],
        ("organization_environment_uid", ENV2)
    );
    h.reply(id, 500, json!({"detail": "Down."}));
    assert!(h.snapshot().session_search_error.is_some());
    h.input(Input::Person(Person::local(Some("user-2".into()))));
    let s = h.snapshot();
    assert_eq!(s.session_search_error, None);
    assert_eq!(s.session_search_query, None);
}

/// adr-notes 6: the explorer reads are actions of their own, not gated on the chat being visible
/// (HYD-12 gates the latest-sessions read only).
#[test]
fn explorer_reads_do_not_wait_for_visibility() {
    let mut h = ready();
    h.visible(false);
    let mark = h.mark();
    search(&mut h, "ledger", None);
    fetch_archived(&mut h, None, None);
    let new = h.sent_since(mark).to_vec();
    assert_eq!(new.len(), 2);
    assert!(is_search(&new[0].call) && is_archived_list(&new[1].call));
    assert!(
        !new.iter()
            .any(|s| matches!(s.call, ApiCall::ListSessions { .. }))
    );
}

// ---------------------------------------------------------------------------------------------
// Archive, restore, and reading the latest list again
// ---------------------------------------------------------------------------------------------

/// adr-notes 6 (`unarchiveAgentSession`, `archiveAgentSession`): a row of the archived list can
/// be restored with the engine's unarchive; the restored session joins the latest list, and the
/// archived list is read again with the same query (the reference reloads the archived list
/// shown after a change). An archive reads it again too, and drops the session from the search
/// results; the selection moves only as the archive rules say.
#[test]
fn restoring_or_archiving_reads_the_archived_list_again() {
    let mut h = ready();
    fetch_archived(&mut h, Some(AGENT), Some(50));
    let first = h.expect_pending("archived", is_archived_list);
    let first_query: Vec<(String, String)> = h.request(first).request.query.clone();
    h.reply(
        first,
        200,
        page(&[archived("s-old", AGENT, ENV, "2026-10-03T07:30:00Z")]),
    );
    h.command(Command::UnarchiveAgentSession {
        session_uid: "s-old".into(),
    });
    let id = h.expect_pending("unarchive", |c| {
        matches!(c, ApiCall::UnarchiveSession { .. })
    });
    let mut restored = record("s-old", AGENT, ENV, 30);
    restored["archived_at"] = json!(null);
    let mark = h.mark();
    h.reply(id, 200, restored);
    assert_eq!(h.list_uids(), ["s-old", "s-1"]);
    assert_eq!(h.current().as_deref(), Some("s-1"));
    let again = archived_reads_since(&h, mark);
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].request.query, first_query);
    assert!(h.snapshot().is_loading_archived_sessions);
    h.reply(again[0].id, 200, page(&[]));
    assert!(h.snapshot().archived_sessions.is_empty());

    search(&mut h, "session", None);
    let id = h.expect_pending("search", is_search);
    h.reply(
        id,
        200,
        page(&[
            record("s-old", AGENT, ENV, 30),
            record("s-1", AGENT, ENV, 0),
        ]),
    );
    h.command(Command::ArchiveAgentSession {
        session_uid: "s-old".into(),
    });
    let id = h.expect_pending("archive", |c| matches!(c, ApiCall::ArchiveSession { .. }));
    let mark = h.mark();
    h.reply(
        id,
        200,
        archived("s-old", AGENT, ENV, "2026-10-04T07:30:00Z"),
    );
    assert_eq!(result_uids(&h.snapshot()), ["s-1"]);
    assert_eq!(h.list_uids(), ["s-1"]);
    assert_eq!(archived_reads_since(&h, mark).len(), 1);
}

/// No archived list read yet: an archive or a restore reads none.
#[test]
fn no_archived_list_is_read_unless_one_was_asked_for() {
    let mut h = ready();
    h.command(Command::ArchiveAgentSession {
        session_uid: "s-1".into(),
    });
    let id = h.expect_pending("archive", |c| matches!(c, ApiCall::ArchiveSession { .. }));
    h.reply(id, 200, archived("s-1", AGENT, ENV, "2026-10-04T07:30:00Z"));
    assert_eq!(h.count(is_archived_list), 0);
    assert!(h.snapshot().archived_sessions.is_empty());
}

/// adr-notes 6, ENV-6, ENV-7, HYD-12: `RefreshLatestSessions` reads the latest list again with
/// its usual query (a read in flight is replaced: aborted, its late answer ignored); the
/// selection stays. While the chat is hidden it waits for the chat to be visible.
#[test]
fn refresh_latest_sessions_reads_the_list_again() {
    let mut h = ready();
    let mark = h.mark();
    h.command(Command::RefreshLatestSessions);
    let sent = [one_list_read(&h, mark)];
    assert_eq!(
        query(&sent[0]),
        [
            ("organization_environment_uid", ENV),
            ("created_by_user_uid", USER),
            ("is_archived", "false"),
            ("ordering", "-started_at"),
            ("limit", "20"),
        ]
    );
    assert!(h.snapshot().is_loading_latest_sessions);
    h.command(Command::RefreshLatestSessions);
    assert!(h.was_aborted(sent[0].id));
    let second = h.list_request();
    assert_ne!(second, sent[0].id);
    h.reply(sent[0].id, 200, page(&[record("s-4", AGENT, ENV, 50)]));
    assert_eq!(h.list_uids(), ["s-1"]);
    h.answer_list(&[record("s-2", AGENT, ENV, 20), record("s-1", AGENT, ENV, 0)]);
    assert_eq!(h.list_uids(), ["s-2", "s-1"]);
    assert_eq!(h.current().as_deref(), Some("s-1"));
    assert!(!h.snapshot().is_loading_latest_sessions);

    h.visible(false);
    let mark = h.mark();
    h.command(Command::RefreshLatestSessions);
    assert!(h.sent_since(mark).is_empty());
    h.visible(true);
    assert_eq!(
        h.sent_since(mark)
            .iter()
            .filter(|s| matches!(s.call, ApiCall::ListSessions { .. }))
            .count(),
        1
    );
}

/// adr-notes 6 (the reference explorer's "Show less"): `ClearArchivedSessions` aborts the read in
/// flight and forgets the rows; a later restore reads no archived list.
#[test]
fn clearing_the_archived_list_forgets_it() {
    let mut h = ready_with_archived("s-old");
    fetch_archived(&mut h, Some(AGENT), None);
    let pending = h.expect_pending("archived", is_archived_list);
    h.command(Command::ClearArchivedSessions);
    assert!(h.was_aborted(pending));
    let s = h.snapshot();
    assert!(s.archived_sessions.is_empty());
    assert!(!s.is_loading_archived_sessions);
    assert_eq!(s.archived_sessions_agent_uid, None);
    h.command(Command::UnarchiveAgentSession {
        session_uid: "s-old".into(),
    });
    let id = h.expect_pending("unarchive", |c| {
        matches!(c, ApiCall::UnarchiveSession { .. })
    });
    h.reply(id, 200, record("s-old", AGENT, ENV, 30));
    assert_eq!(h.count(is_archived_list), 2);
    assert_eq!(h.list_uids(), ["s-old", "s-1"]);
}

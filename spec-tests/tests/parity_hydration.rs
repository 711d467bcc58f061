#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Reference parity of hydration (issue 11): coming back into view (OI-26, OI-7), the history's
//! shape and the snapshot's `agentId` (P9, adr-notes 6), and a detail refetch that fails.

use engine_core::message::Part;
use engine_core::{ApiCall, Command, DetailStatus, Input, Person, ReadinessStatus, Secret};
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::fixtures::{AGENT, AGENT2, ENV, USER, answer, history, insights, page, record};
use spec_tests::turns::post_on;

const S1: &str = "s-1";

// ---------------------------------------------------------------------------------------------
// Helpers

fn is_list(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ListSessions { agent: None, .. })
}

fn is_detail(c: &ApiCall) -> bool {
    matches!(c, ApiCall::GetSessionDetail { session_uid, .. } if session_uid == S1)
}

fn is_history(c: &ApiCall) -> bool {
    matches!(c, ApiCall::GetSessionHistory { session_uid } if session_uid == S1)
}

fn is_insights(c: &ApiCall) -> bool {
    matches!(c, ApiCall::GetSessionInsights { session_uid } if session_uid == S1)
}

/// The session reads (list, detail, history, insights) of the steps since `mark`, in order.
fn reads_since(h: &Harness, mark: usize) -> Vec<&'static str> {
    h.sent_since(mark)
        .iter()
        .filter_map(|s| {
            let c = &s.call;
            if is_list(c) {
                Some("list")
            } else if is_detail(c) {
                Some("detail")
            } else if is_history(c) {
                Some("history")
            } else if is_insights(c) {
                Some("insights")
            } else {
                None
            }
        })
        .collect()
}

fn detail_status(h: &Harness) -> DetailStatus {
    h.snapshot().active_session_detail.expect("a detail").status
}

/// A message's serialized form.
fn as_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap()
}

/// One SSE event.
fn frame(chunk: Value) -> Vec<u8> {
    format!("data: {chunk}\n\n").into_bytes()
}

/// A ready session whose answer streams: returns the message request's id (head answered).
fn streaming(h: &mut Harness) -> engine_core::RequestId {
    let id = post_on(h, S1, "Hello");
    h.stream_head(id);
    h.chunk(id, &frame(json!({"type": "start", "messageId": "msg-1"})));
    id
}

// ---------------------------------------------------------------------------------------------
// 5. Coming back into view (OI-26, OI-7)

/// OI-26, OI-7, HYD-13, HYD-9: the chat becoming visible again reads the latest-sessions list, the
/// detail and the insights again, in the same step, and not the history; the insights do not wait
/// for the detail (it is still loaded), and the detail and readiness stay ready meanwhile.
#[test]
fn oi26_oi7_return_to_view_rereads_list_detail_and_insights_not_history() {
    let mut h = Harness::ready(S1);
    h.visible(false);
    let mark = h.mark();
    h.visible(true);
    assert_eq!(reads_since(&h, mark), ["list", "detail", "insights"]);
    let list = h.list_request();
    let r = &h.request(list).request;
    assert_eq!(r.path, "/api/v1/agent-sessions/");
    assert!(
        r.query
            .contains(&("organization_environment_uid".to_owned(), ENV.to_owned()))
    );
    assert!(
        r.query
            .contains(&("created_by_user_uid".to_owned(), USER.to_owned()))
    );
    // Both reads are open together: the insights went out before any detail answer.
    let detail = h.detail_request(S1);
    let ins = h.insights_request(S1);
    let s = h.snapshot();
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Ready);
    let d = s.active_session_detail.unwrap();
    assert_eq!(d.status, DetailStatus::Ready);
    assert!(d.insights_loading);
    let shown = d.insights.as_ref().map(|i| {
        let v = serde_json::to_value(i).unwrap();
        (
            v["hasInsights"].clone(),
            v["agentSessionId"].clone(),
            v["harness"].clone(),
        )
    });
    let loaded = insights(S1);
    assert_eq!(
        shown,
        Some((
            loaded["has_insights"].clone(),
            loaded["agent_session_uid"].clone(),
            loaded["harness"].clone()
        )),
        "the loaded insights stay shown"
    );
    assert!(s.is_loading_latest_sessions);
    // Insights first, then the detail, then the list: ready throughout, nothing more read.
    h.reply(ins, 200, insights(S1));
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
    h.reply(detail, 200, record(S1, AGENT, ENV, 0));
    h.answer_list(&[record(S1, AGENT, ENV, 0)]);
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
    assert_eq!(h.current().as_deref(), Some(S1));
    assert_eq!(h.count(is_history), 1);
    assert_eq!(h.count(is_insights), 2);
    assert!(h.open_requests().iter().all(|s| !is_insights(&s.call)));
}

/// HYD-12, OI-26: nothing is read while the chat is hidden, however long: no list, detail,
/// history or insights request, and readiness is idle; the reads of OI-26 go out on return.
#[test]
fn hyd_12_nothing_is_read_while_hidden() {
    let mut h = Harness::ready(S1);
    h.visible(false);
    let mark = h.mark();
    h.advance(10 * 60_000);
    h.command(Command::RefreshSessionDetail);
    assert!(
        reads_since(&h, mark).is_empty(),
        "{:?}",
        reads_since(&h, mark)
    );
    assert_eq!(h.readiness(), ReadinessStatus::Idle);
    h.visible(true);
    assert_eq!(reads_since(&h, mark), ["list", "detail", "insights"]);
}

/// OI-26, HYD-3: without a loaded detail (its first read was still open when the chat was
/// hidden), coming back reads the detail again and the insights wait for it, once.
#[test]
fn oi26_return_without_a_loaded_detail_insights_wait_for_it() {
    let mut h = Harness::selected(S1);
    let first = h.detail_request(S1);
    h.visible(false);
    let mark = h.mark();
    h.visible(true);
    assert_eq!(reads_since(&h, mark), ["list", "detail"]);
    assert!(h.was_aborted(first));
    assert_eq!(h.count(is_insights), 0);
    h.answer_detail(S1, record(S1, AGENT, ENV, 0));
    assert_eq!(h.count(is_insights), 1);
    h.answer_history(S1);
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
}

/// OI-26, HYD-13: a list read still open when the chat was hidden is replaced on return (one
/// list read open, never two), and a failed list read is tried again on return.
#[test]
fn oi26_return_replaces_an_open_list_read_and_retries_a_failed_one() {
    let mut h = Harness::visible_in_env();
    let first = h.list_request();
    h.visible(false).visible(true);
    assert!(h.was_aborted(first));
    let second = h.list_request();
    assert_ne!(first, second);
    h.reply(second, 500, json!({"detail": "Down."}));
    assert!(h.snapshot().latest_sessions_error.is_some());
    h.visible(false).visible(true);
    h.answer_list(&[record(S1, AGENT, ENV, 0)]);
    assert_eq!(h.snapshot().latest_sessions_error, None);
    assert_eq!(h.current().as_deref(), Some(S1));
    assert_eq!(h.count(is_list), 3);
}

/// OI-7, RTA-26: a launched session coming back into view reads its detail and insights again but
/// no latest-sessions list.
#[test]
fn oi7_rta_26_no_list_reread_for_a_launched_session() {
    let mut h = Harness::ready(S1);
    h.launch(AGENT2, 1);
    let id = h.expect_pending("launch lookup", |c| {
        matches!(c, ApiCall::ListSessions { agent: Some(_), .. })
    });
    h.reply(id, 200, page(&[record("s-l", AGENT2, ENV, 30)]));
    assert!(h.snapshot().is_direct_launch_session);
    let lists = h.count(is_list);
    h.visible(false).visible(true);
    assert_eq!(h.count(is_list), lists, "list read for a launched session");
    assert_eq!(
        h.count(
            |c| matches!(c, ApiCall::GetSessionDetail { session_uid, .. } if session_uid == "s-l")
        ),
        2
    );
}

/// OI-7, OI-26: another session selected while visible is hydrated but reads no list: only the
/// chat becoming visible again re-reads it.
#[test]
fn oi7_a_new_selection_while_visible_reads_no_list() {
    let mut h = Harness::ready(S1);
    let lists = h.count(is_list);
    h.requested(Some("s-2"));
    assert_eq!(h.current().as_deref(), Some("s-2"));
    assert_eq!(h.count(is_list), lists);
    h.visible(false).visible(true);
    assert_eq!(h.count(is_list), lists + 1);
}

/// HYD-10, HYD-11, OI-26: coming back into view while the session's answer streams reads the
/// list, the detail and the insights, never the history; the answer keeps streaming into the
/// thread.
#[test]
fn hyd_10_return_to_view_while_streaming_reads_no_history() {
    let mut h = Harness::talking(S1);
    let id = streaming(&mut h);
    h.visible(false);
    let mark = h.mark();
    h.visible(true);
    assert_eq!(reads_since(&h, mark), ["list", "detail", "insights"]);
    h.chunk(id, &answer("msg-1", "Streaming on."));
    h.end(id);
    assert!(h.snapshot().thread.iter().any(|m| m.id == "msg-1"));
    assert_eq!(h.count(is_history), 1);
}

// ---------------------------------------------------------------------------------------------
// 9. History shape (P9) and agentId (adr-notes 6)

/// The reference's agent-origin history: a user message written by another Agent.
fn agent_origin_history(session: Value) -> Value {
    json!({
        "version": 1,
        "session": session,
        "messages": [{
            "id": "u_1",
            "role": "user",
            "createdAt": "2026-05-10T12:00:00.000Z",
            "content": [{"type": "text", "text": "Inspect the repository."}],
            "provenance": {
                "origin": "agent",
                "channel": "a2a",
                "callerAgentName": "research-assistant",
                "handleUniqueId": "6f41da6f-bfd8-4598-a8a2-822bfabfba51",
                "callerAgentSessionId": "session-uid-52",
                "targetAgentUid": "agent-uid-25",
                "unknown": true
            }
        }, {
            "id": "a_1",
            "role": "assistant",
            "content": [{"type": "text", "text": "All green."}],
            "provenance": {
                "origin": "agent", "actorKind": "Service", "actorUid": "7a1b", "actorName": "Nobody"
            }
        }, {
            "id": "u_2",
            "role": "user",
            "content": [{"type": "text", "text": "Status?"}],
            "provenance": {"origin": "user", "actorKind": " User ", "actorName": "ada@example.com"}
        }, {
            "id": "u_3",
            "role": "user",
            "content": [{"type": "text", "text": "And now?"}],
            "provenance": {"origin": "", "actorKind": "user"}
        }],
        "inProgressMessage": null
    })
}

/// Hydrates `S1` with this history answer.
fn hydrate_with(history: Value) -> Harness {
    let mut h = Harness::selected(S1);
    h.answer_detail(S1, record(S1, AGENT, ENV, 0));
    let id = h.history_request(S1);
    h.reply(id, 200, history);
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
    h
}

/// P9: a message's provenance leads its parts as a `data-main_sequence_ai_provenance` part and is
/// its metadata (`custom.mainSequenceAi.provenance`), normalized: every field present, legacy
/// names read as the new ones, unknown fields dropped; a message without a valid origin has
/// neither.
#[test]
fn p9_provenance_is_the_leading_data_part_and_the_metadata() {
    let h = hydrate_with(agent_origin_history(
        json!({"sessionId": S1, "status": "completed"}),
    ));
    let thread = h.snapshot().thread;
    let expected = json!({
        "origin": "agent", "channel": "a2a", "actorKind": null, "actorUid": null,
        "actorName": null, "callerAgentName": "research-assistant",
        "handleUniqueId": "6f41da6f-bfd8-4598-a8a2-822bfabfba51",
        "callerAgentSessionUid": "session-uid-52", "targetAgentUid": "agent-uid-25"
    });
    let first = as_json(&thread[0]);
    assert_eq!(
        first["parts"],
        json!([
            {"type": "data-main_sequence_ai_provenance", "data": expected},
            {"type": "text", "text": "Inspect the repository.", "state": "done"}
        ])
    );
    assert_eq!(
        first["metadata"],
        json!({"custom": {"mainSequenceAi": {"provenance": expected}}})
    );
    assert_eq!(first["provenance"], expected);
    // No valid origin: no data part, no metadata.
    let last = as_json(&thread[3]);
    assert_eq!(
        last["parts"],
        json!([{"type": "text", "text": "And now?", "state": "done"}])
    );
    assert!(last.get("metadata").is_none() && last.get("provenance").is_none());
}

/// P9: the actor fields count only with a valid `actorKind` (`user` or `agent`, any letter case),
/// and the actor's name only with an actor uid.
#[test]
fn p9_actor_fields_only_with_a_valid_actor_kind() {
    let h = hydrate_with(agent_origin_history(json!({"sessionId": S1})));
    let thread = h.snapshot().thread;
    let provenance = |i: usize| match &thread[i].parts[0] {
        Part::Data(d) => d.data.clone(),
        other => panic!("not a data part: {other:?}"),
    };
    let unknown_kind = provenance(1);
    assert_eq!(
        (
            &unknown_kind.value()["actorKind"],
            &unknown_kind.value()["actorUid"],
            &unknown_kind.value()["actorName"]
        ),
        (&Value::Null, &Value::Null, &Value::Null)
    );
    let user_without_uid = provenance(2);
    assert_eq!(user_without_uid.value()["actorKind"], json!("user"));
    assert_eq!(user_without_uid.value()["actorUid"], Value::Null);
    assert_eq!(user_without_uid.value()["actorName"], Value::Null);
}

/// P9, adr-notes 6: `session.agentUid` is the snapshot's `agentId` once the history has loaded;
/// the legacy shape (`agentId`, a number) reads the same way.
#[test]
fn p9_adr6_agent_id_from_the_history_and_its_legacy_name() {
    let h = hydrate_with(
        json!({"session": {"sessionId": S1, "agentUid": "agent-uid-25", "agentId": 7}, "messages": []}),
    );
    let s = h.snapshot();
    assert_eq!(s.agent_id.as_deref(), Some("agent-uid-25"));
    assert_eq!(as_json(&s)["agentId"], json!("agent-uid-25"));
    let h = hydrate_with(
        json!({"session": {"sessionId": S1, "agentId": 25, "agentSessionId": 87}, "messages": []}),
    );
    assert_eq!(h.snapshot().agent_id.as_deref(), Some("25"));
}

/// adr-notes 6: `agentId` is null before anything reports one, for a history without an Agent,
/// for a 404 history, and again after a new selection until its history reports one.
#[test]
fn adr6_agent_id_is_per_selection() {
    let mut h = Harness::selected(S1);
    assert_eq!(h.snapshot().agent_id, None);
    assert_eq!(as_json(&h.snapshot())["agentId"], Value::Null);
    h.answer_detail(S1, record(S1, AGENT, ENV, 0));
    let id = h.history_request(S1);
    h.reply(
        id,
        200,
        json!({"session": {"sessionId": S1, "agentUid": "agent-uid-25"}}),
    );
    assert_eq!(h.snapshot().agent_id.as_deref(), Some("agent-uid-25"));
    h.requested(Some("s-2"));
    assert_eq!(h.snapshot().agent_id, None, "carried into a new selection");
    h.answer_detail("s-2", record("s-2", AGENT, ENV, 0));
    let id = h.history_request("s-2");
    h.reply(id, 404, json!({"detail": "Not found."}));
    assert_eq!(h.snapshot().agent_id, None);
    h.requested(Some("s-3"));
    h.answer_detail("s-3", record("s-3", AGENT, ENV, 0));
    let id = h.history_request("s-3");
    h.reply(id, 200, history("s-3"));
    assert_eq!(h.snapshot().agent_id, None);
}

/// adr-notes 6: a frame of the selected session's streamed answer that carries `agent_id` (at its
/// top level, as a string or a number, or in a `data-*` part's data) reports the Agent: it is the
/// value from then on, after the answer ends too; the `agent_id` inside `new_session` does not.
#[test]
fn adr6_agent_id_from_the_stream_is_the_last_reported() {
    let mut h = Harness::selected(S1);
    h.answer_detail(S1, record(S1, AGENT, ENV, 0));
    let hist = h.history_request(S1);
    h.reply(
        hist,
        200,
        json!({"session": {"sessionId": S1, "agentUid": "agent-uid-25"}}),
    );
    let ins = h.insights_request(S1);
    h.reply(ins, 200, insights(S1));
    h.runtime_ready(S1, 200);
    let id = streaming(&mut h);
    assert_eq!(h.snapshot().agent_id.as_deref(), Some("agent-uid-25"));
    h.chunk(
        id,
        &frame(
            json!({"type": "new_session", "new_session": {"session_uid": S1, "agent_id": "inner"}}),
        ),
    );
    assert_eq!(h.snapshot().agent_id.as_deref(), Some("agent-uid-25"));
    h.chunk(
        id,
        &frame(json!({"type": "start-step", "agent_id": " ag-9 "})),
    );
    assert_eq!(h.snapshot().agent_id.as_deref(), Some("ag-9"));
    h.chunk(
        id,
        &frame(json!({"type": "data-agent", "data": {"agent_id": 42}})),
    );
    assert_eq!(h.snapshot().agent_id.as_deref(), Some("42"));
    // A frame without one, or with a blank one, changes nothing.
    h.chunk(
        id,
        &frame(json!({"type": "text-start", "id": "t", "agent_id": "  "})),
    );
    h.chunk(
        id,
        &frame(json!({"type": "data-note", "data": "ag-not-an-id"})),
    );
    assert_eq!(h.snapshot().agent_id.as_deref(), Some("42"));
    h.chunk(id, &frame(json!({"type": "finish"})));
    h.chunk(id, b"data: [DONE]\n\n");
    h.end(id);
    assert_eq!(h.snapshot().agent_id.as_deref(), Some("42"));
    // The next answer reports again, even the value reported before the history's.
    let id = post_on(&mut h, S1, "Again");
    h.stream_head(id);
    h.chunk(id, &frame(json!({"type": "start", "agent_id": 7})));
    assert_eq!(h.snapshot().agent_id.as_deref(), Some("7"));
}

// ---------------------------------------------------------------------------------------------
// 10. A detail refetch that fails (FAIL-9, FAIL-10)

/// How a loaded session's detail is read again.
#[derive(Debug, Clone, Copy)]
enum Refetch {
    Visibility,
    Token,
    Refresh,
    WriterPoll,
}

/// A ready session with insights loaded, its detail read again the given way; returns the
/// refetch's id.
fn refetched(how: Refetch) -> (Harness, engine_core::RequestId) {
    let mut h = match how {
        Refetch::WriterPoll => {
            // SND-25: another writer works and a message waits: the detail is read every 10 s.
            let mut h = spec_tests::turns::another_writer_at_work(S1);
            h.send("Wait for it");
            h
        }
        _ => Harness::ready(S1),
    };
    let details = h.count(is_detail);
    match how {
        Refetch::Visibility => {
            h.visible(false).visible(true);
        }
        Refetch::Token => {
            h.input(Input::Person(Person::new(
                USER.to_owned(),
                Secret::new("a-new-token"),
            )));
        }
        Refetch::Refresh => {
            h.command(Command::RefreshSessionDetail);
        }
        Refetch::WriterPoll => {
            h.advance(10_000);
        }
    }
    assert_eq!(h.count(is_detail), details + 1, "{how:?}: no refetch");
    assert_eq!(h.readiness(), ReadinessStatus::Ready, "{how:?}");
    let id = h.detail_request(S1);
    (h, id)
}

/// FAIL-9, HYD-3, HYD-9: a detail refetch (on return to view, a new token, refreshSessionDetail(),
/// the other-writer poll) that answers 404 makes readiness and activeSessionDetail.status
/// not_found, drops the insights from the snapshot (an open insights read is aborted), and no
/// insights request goes out afterwards, not even on a later return to view.
#[test]
fn fail_9_detail_refetch_404_is_not_found_and_drops_the_insights() {
    for how in [
        Refetch::Visibility,
        Refetch::Token,
        Refetch::Refresh,
        Refetch::WriterPoll,
    ] {
        let (mut h, id) = refetched(how);
        let open_insights = h.pending(is_insights);
        h.reply(id, 404, json!({"detail": "Not found."}));
        let s = h.snapshot();
        let r = &s.active_session_readiness;
        assert_eq!(r.status, ReadinessStatus::NotFound, "{how:?}");
        assert_eq!(r.error.as_deref(), Some("Not found."), "{how:?}");
        assert!(!r.detail_ready && !r.insights_ready, "{how:?}");
        let d = s.active_session_detail.clone().unwrap();
        assert_eq!(d.status, DetailStatus::NotFound, "{how:?}");
        assert_eq!(d.record, None, "{how:?}");
        assert_eq!(d.insights, None, "{how:?}: insights kept");
        assert!(!d.insights_loading, "{how:?}");
        assert_eq!(d.insights_error, None, "{how:?}");
        assert_eq!(s.current_session_id.as_deref(), Some(S1), "{how:?}");
        assert!(!s.composer_admission, "{how:?}");
        if let Some(ins) = open_insights {
            assert!(h.was_aborted(ins), "{how:?}: insights read left open");
        }
        let insights_before = h.count(is_insights);
        h.visible(false).visible(true);
        let d = h.detail_request(S1);
        h.reply(d, 404, json!({"detail": "Not found."}));
        assert_eq!(
            h.count(is_insights),
            insights_before,
            "{how:?}: insights asked for"
        );
        assert_eq!(detail_status(&h), DetailStatus::NotFound, "{how:?}");
    }
}

/// FAIL-10, HYD-3: any other failed refetch (500, no answer) is a readiness error and drops the
/// insights the same way; once a detail read succeeds again the session is ready and its
/// insights are asked for once more.
#[test]
fn fail_10_other_refetch_failures_drop_the_insights_until_a_detail_loads() {
    for fail in ["500", "no answer"] {
        let (mut h, id) = refetched(Refetch::Refresh);
        match fail {
            "500" => {
                h.reply(id, 500, json!({"detail": "Boom."}));
            }
            _ => {
                h.fail(id);
            }
        }
        let s = h.snapshot();
        assert_eq!(
            s.active_session_readiness.status,
            ReadinessStatus::Error,
            "{fail}"
        );
        let d = s.active_session_detail.unwrap();
        assert_eq!(d.status, DetailStatus::Error, "{fail}");
        assert_eq!(d.insights, None, "{fail}");
        assert!(h.notices().is_empty(), "{fail}: a notify");
        let before = h.count(is_insights);
        h.command(Command::RefreshSessionDetail);
        assert_eq!(
            h.count(is_insights),
            before,
            "{fail}: insights before a detail"
        );
        h.answer_detail(S1, record(S1, AGENT, ENV, 0));
        assert_eq!(h.readiness(), ReadinessStatus::Ready, "{fail}");
        assert_eq!(h.count(is_insights), before + 1, "{fail}");
        assert_eq!(h.count(is_history), 1, "{fail}");
    }
}

/// FAIL-9, OI-26: an insights answer that arrives after the refetch answered 404 is not shown.
#[test]
fn fail_9_late_insights_after_a_404_refetch_are_ignored() {
    let (mut h, id) = refetched(Refetch::Visibility);
    let ins = h.insights_request(S1);
    h.reply(id, 404, json!({"detail": "Not found."}));
    h.reply(ins, 200, insights(S1));
    let d = h.snapshot().active_session_detail.unwrap();
    assert_eq!(d.insights, None);
    assert_eq!(d.status, DetailStatus::NotFound);
}

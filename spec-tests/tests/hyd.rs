#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! HYD: hydration of the selected session (detail, history, insights, the thread and readiness).
//!
//! The two streaming rules of this section (no history read or applied while an answer streams)
//! need streamed answers, which the engine does not have yet: they are not covered here.

use engine_core::message::{MessageStatus, Part, Role};
use engine_core::{ApiCall, Input, Method, Person, ReadinessStatus, Secret};
use serde_json::{Value, json};
use spec_tests::fixtures::{AGENT, ENV, ENV2, USER, insights, page, record};
use spec_tests::{BASE, Harness};

// ---------------------------------------------------------------------------------------------
// Helpers

/// The session requests of a step, without the runtime check that a selection also starts (RTA).
fn hydration_calls(sent: &[spec_tests::Sent]) -> Vec<&ApiCall> {
    sent.iter()
        .map(|s| &s.call)
        .filter(|c| {
            !matches!(
                c,
                ApiCall::ResolveRuntimeAccess { .. } | ApiCall::ConfirmAgent { .. }
            )
        })
        .collect()
}

fn is_detail(c: &ApiCall, uid: &str) -> bool {
    matches!(c, ApiCall::GetSessionDetail { session_uid, .. } if session_uid == uid)
}

fn is_history(c: &ApiCall, uid: &str) -> bool {
    matches!(c, ApiCall::GetSessionHistory { session_uid } if session_uid == uid)
}

fn is_insights(c: &ApiCall, uid: &str) -> bool {
    matches!(c, ApiCall::GetSessionInsights { session_uid } if session_uid == uid)
}

fn is_session_read(c: &ApiCall) -> bool {
    matches!(
        c,
        ApiCall::GetSessionDetail { .. }
            | ApiCall::GetSessionHistory { .. }
            | ApiCall::GetSessionInsights { .. }
    )
}

fn details(h: &Harness, uid: &str) -> usize {
    h.count(|c| is_detail(c, uid))
}

fn histories(h: &Harness, uid: &str) -> usize {
    h.count(|c| is_history(c, uid))
}

fn insights_reqs(h: &Harness, uid: &str) -> usize {
    h.count(|c| is_insights(c, uid))
}

fn thread_ids(h: &Harness) -> Vec<String> {
    h.snapshot().thread.iter().map(|m| m.id.clone()).collect()
}

/// A history answer with these `(id, role, text)` messages.
fn history_with(session: &str, messages: &[(&str, &str, &str)]) -> Value {
    let messages: Vec<Value> = messages
        .iter()
        .map(|(id, role, text)| {
            json!({"id": id, "role": role, "content": [{"type": "text", "text": text}]})
        })
        .collect();
    json!({
        "version": 1,
        "session": {"sessionId": session, "threadId": session, "status": "completed"},
        "messages": messages,
        "inProgressMessage": null
    })
}

// ---------------------------------------------------------------------------------------------
// HYD-1, HYD-2

/// HYD-1: a visible chat with a selected session emits GET /api/v1/agent-sessions/{uid}/ for it,
/// once, with the person's credential and the Environment (ENV-6).
#[test]
fn hyd_1_detail_is_requested_for_the_selected_session_while_visible() {
    let h = Harness::selected("s-1");
    assert_eq!(details(&h, "s-1"), 1);
    let sent = h.request(h.detail_request("s-1"));
    let r = &sent.request;
    assert_eq!(r.method, Method::Get);
    assert_eq!(r.path, "/api/v1/agent-sessions/s-1/");
    assert_eq!(
        r.query,
        vec![("organization_environment_uid".to_owned(), ENV.to_owned())]
    );
    assert_eq!(
        r.url(),
        format!("{BASE}/api/v1/agent-sessions/s-1/?organization_environment_uid={ENV}")
    );
    assert_eq!(
        r.header("Authorization"),
        Some("Bearer platform-token-secret")
    );
    assert_eq!(r.header("Accept"), Some("application/json"));
    assert!(r.body.is_none());
}

/// HYD-1: a session selected any other way (here requested before the list answers) gets its
/// detail request as well; nothing waits for the list.
#[test]
fn hyd_1_detail_is_requested_for_a_requested_session_before_the_list_answers() {
    let mut h = Harness::visible_in_env();
    let list = h.list_request();
    h.requested(Some("s-7"));
    assert_eq!(details(&h, "s-7"), 1);
    assert!(h.pending(|c| matches!(c, ApiCall::ListSessions { .. })) == Some(list));
}

/// HYD-2: the history request goes out alongside the detail request, in the same step and before
/// any detail answer; it is GET /api/v1/agent-sessions/{uid}/history/ without a query or body.
#[test]
fn hyd_2_history_is_requested_together_with_the_detail() {
    let mut h = Harness::visible_in_env();
    let mark = h.mark();
    h.answer_list(&[record("s-1", AGENT, ENV, 0)]);
    let step = hydration_calls(h.sent_since(mark));
    assert_eq!(step.len(), 2, "{step:?}");
    assert!(step.iter().any(|c| is_detail(c, "s-1")));
    assert!(step.iter().any(|c| is_history(c, "s-1")));
    let r = &h.request(h.history_request("s-1")).request;
    assert_eq!(r.method, Method::Get);
    assert_eq!(r.path, "/api/v1/agent-sessions/s-1/history/");
    assert!(r.query.is_empty());
    assert!(r.body.is_none());
    assert_eq!(
        r.header("Authorization"),
        Some("Bearer platform-token-secret")
    );
    // Still open together: the history did not wait for the detail.
    assert!(h.pending(|c| is_detail(c, "s-1")).is_some());
    assert_eq!(histories(&h, "s-1"), 1);
}

// ---------------------------------------------------------------------------------------------
// HYD-3

/// HYD-3: insights are requested only once the detail has loaded: not with the detail, not after
/// the history, and exactly once after the detail answer.
#[test]
fn hyd_3_insights_follow_a_loaded_detail() {
    let mut h = Harness::selected("s-1");
    assert_eq!(insights_reqs(&h, "s-1"), 0);
    h.answer_history("s-1");
    assert_eq!(
        insights_reqs(&h, "s-1"),
        0,
        "insights before the detail answer"
    );
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    assert_eq!(insights_reqs(&h, "s-1"), 1);
    let r = &h.request(h.insights_request("s-1")).request;
    assert_eq!(r.method, Method::Get);
    assert_eq!(r.path, "/api/v1/agent-sessions/s-1/insights/");
    assert!(r.query.is_empty());
    assert!(r.body.is_none());
}

/// HYD-3: a failed detail (404, another HTTP error, no answer, a malformed body, a record from
/// another Environment) is never followed by an insights request.
#[test]
fn hyd_3_no_insights_after_a_failed_detail() {
    type Answer = Box<dyn Fn(&mut Harness, engine_core::RequestId)>;
    let answers: Vec<(&str, Answer)> = vec![
        (
            "404",
            Box::new(|h, id| {
                h.reply(id, 404, json!({"detail": "Not found."}));
            }),
        ),
        (
            "500",
            Box::new(|h, id| {
                h.reply(id, 500, json!({"detail": "Boom."}));
            }),
        ),
        (
            "no answer",
            Box::new(|h, id| {
                h.fail(id);
            }),
        ),
        (
            "malformed",
            Box::new(|h, id| {
                h.reply_raw(id, 200, Some("application/json"), b"{\"uid\": ", None);
            }),
        ),
        (
            "other environment",
            Box::new(|h, id| {
                h.reply(id, 200, record("s-1", AGENT, ENV2, 0));
            }),
        ),
    ];
    for (name, answer) in answers {
        let mut h = Harness::selected("s-1");
        let id = h.detail_request("s-1");
        answer(&mut h, id);
        h.answer_history("s-1");
        assert_eq!(
            insights_reqs(&h, "s-1"),
            0,
            "{name}: insights after a failed detail"
        );
        assert!(
            matches!(
                h.readiness(),
                ReadinessStatus::Error | ReadinessStatus::NotFound
            ),
            "{name}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// HYD-4

/// HYD-4: a loaded history replaces the thread: afterwards it holds exactly the history's
/// messages, in order, and none of the thread shown before (another session's).
#[test]
fn hyd_4_loaded_history_replaces_the_thread() {
    let mut h = Harness::ready("s-1");
    let thread = h.snapshot().thread;
    assert_eq!(thread_ids(&h), ["m-1", "m-2"]);
    assert_eq!(thread[0].role, Role::User);
    assert_eq!(thread[0].parts, [Part::done_text("Total for Q3?")]);
    assert_eq!(thread[1].role, Role::Assistant);
    assert_eq!(thread[1].status, MessageStatus::Complete);

    h.requested(Some("s-2"));
    let id = h.history_request("s-2");
    h.reply(
        id,
        200,
        history_with(
            "s-2",
            &[
                ("m-7", "user", "Budget for Q4?"),
                ("m-8", "assistant", "Q4 budget is 5000."),
                ("m-9", "user", "Thanks."),
            ],
        ),
    );
    let thread = h.snapshot().thread;
    assert_eq!(thread_ids(&h), ["m-7", "m-8", "m-9"]);
    assert_eq!(thread[1].parts, [Part::done_text("Q4 budget is 5000.")]);
    assert!(
        thread.iter().all(|m| m.id != "m-1" && m.id != "m-2"),
        "messages of the earlier thread survived"
    );
}

// ---------------------------------------------------------------------------------------------
// HYD-5, HYD-6

/// HYD-5, HYD-6: detail first, then history: loading while only the detail has loaded, ready once
/// both have.
#[test]
fn hyd_5_hyd_6_ready_after_detail_then_history() {
    let mut h = Harness::selected("s-1");
    assert_eq!(h.readiness(), ReadinessStatus::Loading);
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    let r = h.snapshot().active_session_readiness;
    assert_eq!(r.status, ReadinessStatus::Loading);
    assert!(r.detail_ready && !r.history_ready);
    h.answer_history("s-1");
    let r = h.snapshot().active_session_readiness;
    assert_eq!(r.status, ReadinessStatus::Ready);
    assert!(r.detail_ready && r.history_ready);
    assert_eq!(r.session_id.as_deref(), Some("s-1"));
    assert_eq!(r.error, None);
}

/// HYD-5, HYD-6: history first, then detail: loading while only the history has loaded, ready once
/// both have.
#[test]
fn hyd_5_hyd_6_ready_after_history_then_detail() {
    let mut h = Harness::selected("s-1");
    h.answer_history("s-1");
    let r = h.snapshot().active_session_readiness;
    assert_eq!(r.status, ReadinessStatus::Loading);
    assert!(!r.detail_ready && r.history_ready);
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
}

/// HYD-5: both loaded while the chat is hidden part of the way: readiness is ready only while
/// visible (idle while hidden, SHR-2), and ready again at once when the chat returns.
#[test]
fn hyd_5_ready_requires_visibility() {
    let mut h = Harness::selected("s-1");
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    h.visible(false);
    h.answer_history("s-1");
    assert_eq!(h.readiness(), ReadinessStatus::Idle);
    h.visible(true);
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
}

// ---------------------------------------------------------------------------------------------
// HYD-7

/// HYD-7: readiness is ready while the insights request is still open, and stays ready whatever
/// the insights answer is (success, 404, 500, no answer, a malformed body).
#[test]
fn hyd_7_insights_never_gate_readiness() {
    type Answer = Box<dyn Fn(&mut Harness, engine_core::RequestId)>;
    let answers: Vec<(&str, Answer)> = vec![
        (
            "200",
            Box::new(|h, id| {
                h.reply(id, 200, insights("s-1"));
            }),
        ),
        (
            "404",
            Box::new(|h, id| {
                h.reply(id, 404, json!({"detail": "Not found."}));
            }),
        ),
        (
            "500",
            Box::new(|h, id| {
                h.reply(id, 500, json!({"detail": "Insights exploded."}));
            }),
        ),
        (
            "no answer",
            Box::new(|h, id| {
                h.fail(id);
            }),
        ),
        (
            "malformed",
            Box::new(|h, id| {
                h.reply_raw(id, 200, Some("application/json"), b"[1, 2", None);
            }),
        ),
    ];
    for (name, answer) in answers {
        let mut h = Harness::selected("s-1");
        h.hydrate("s-1", AGENT);
        let id = h.insights_request("s-1");
        assert_eq!(
            h.readiness(),
            ReadinessStatus::Ready,
            "{name}: insights pending"
        );
        assert!(!h.snapshot().active_session_readiness.insights_ready);
        answer(&mut h, id);
        let r = h.snapshot().active_session_readiness;
        assert_eq!(r.status, ReadinessStatus::Ready, "{name}: after the answer");
        assert_eq!(r.error, None, "{name}");
    }
}

/// HYD-7: insights that answer before the history do not make the session ready.
#[test]
fn hyd_7_loaded_insights_do_not_replace_history() {
    let mut h = Harness::selected("s-1");
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    let id = h.insights_request("s-1");
    h.reply(id, 200, insights("s-1"));
    let r = h.snapshot().active_session_readiness;
    assert!(r.insights_ready);
    assert_eq!(r.status, ReadinessStatus::Loading);
}

// ---------------------------------------------------------------------------------------------
// HYD-8

/// HYD-8: a 404 history is a loaded, empty transcript: the thread is empty (the earlier session's
/// messages included), readiness becomes ready, and there is no error, notice or notify.
#[test]
fn hyd_8_history_404_is_an_empty_transcript() {
    let mut h = Harness::ready("s-1");
    assert_eq!(thread_ids(&h), ["m-1", "m-2"]);
    h.requested(Some("s-2"));
    h.answer_detail("s-2", record("s-2", AGENT, ENV, 0));
    let id = h.history_request("s-2");
    h.reply(id, 404, json!({"detail": "Not found."}));
    let s = h.snapshot();
    assert!(s.thread.is_empty(), "thread: {:?}", s.thread);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Ready);
    assert!(s.active_session_readiness.history_ready);
    assert_eq!(s.active_session_readiness.error, None);
    assert_eq!(s.session_notice, None);
    assert!(h.events().is_empty(), "events: {:?}", h.events());
}

/// HYD-8: a 404 with a non-JSON body counts the same way.
#[test]
fn hyd_8_history_404_with_a_text_body() {
    let mut h = Harness::selected("s-1");
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    let id = h.history_request("s-1");
    h.reply_raw(id, 404, Some("text/html"), b"<h1>Not Found</h1>", None);
    let s = h.snapshot();
    assert!(s.thread.is_empty());
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Ready);
    assert_eq!(s.session_notice, None);
    assert!(h.events().is_empty());
}

// ---------------------------------------------------------------------------------------------
// HYD-9

/// HYD-9: refreshSessionDetail() reads the detail of a ready session again; readiness stays ready
/// while that read runs and after it answers.
#[test]
fn hyd_9_detail_refetch_keeps_readiness_ready() {
    let mut h = Harness::ready("s-1");
    h.command(engine_core::Command::RefreshSessionDetail);
    assert_eq!(details(&h, "s-1"), 2);
    assert!(h.pending(|c| is_detail(c, "s-1")).is_some());
    let r = h.snapshot().active_session_readiness;
    assert_eq!(r.status, ReadinessStatus::Ready);
    assert!(r.detail_ready);
    let mut changed = record("s-1", AGENT, ENV, 0);
    changed["name"] = json!("Renamed");
    h.answer_detail("s-1", changed);
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
    assert_eq!(
        h.snapshot()
            .active_session_detail
            .unwrap()
            .record
            .unwrap()
            .value()["name"],
        json!("Renamed")
    );
}

/// HYD-9: a new person token reads the detail again (OI-26); readiness stays ready meanwhile.
#[test]
fn hyd_9_token_change_refetches_detail_and_stays_ready() {
    let mut h = Harness::ready("s-1");
    h.input(Input::Person(Person::new(
        USER.to_owned(),
        Secret::new("a-new-token"),
    )));
    assert_eq!(details(&h, "s-1"), 2);
    let id = h.detail_request("s-1");
    assert_eq!(
        h.request(id).request.header("Authorization"),
        Some("Bearer a-new-token")
    );
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
    assert_eq!(histories(&h, "s-1"), 1);
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
}

// ---------------------------------------------------------------------------------------------
// HYD-12

/// HYD-12: while the chat is hidden, a requested session gets no detail, history or insights
/// request, and the latest-sessions list is not read either; nothing at all goes out.
#[test]
fn hyd_12_hidden_chat_requests_nothing_for_a_requested_session() {
    let mut h = Harness::new();
    h.person(USER);
    h.env(Some(ENV));
    h.requested(Some("s-1"));
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some("s-1"));
    h.visible(false);
    assert!(h.sent().is_empty(), "sent while hidden: {:?}", h.sent());
    h.visible(true);
    assert_eq!(details(&h, "s-1"), 1);
    assert_eq!(histories(&h, "s-1"), 1);
}

/// HYD-12: the default session opened while hidden (its get-or-create is not gated, OI-25) is
/// selected but not hydrated, and no list is read, until the chat is visible.
#[test]
fn hyd_12_hidden_default_session_is_not_hydrated() {
    let mut h = Harness::new();
    h.person(USER);
    h.env(Some(ENV));
    h.shows_default(true);
    h.default_session(Some(AGENT));
    let id = h.get_or_create_request();
    h.reply(
        id,
        201,
        spec_tests::fixtures::handle_record("s-d", AGENT, ENV, spec_tests::fixtures::HANDLE, 0),
    );
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some("s-d"));
    assert_eq!(h.count(is_session_read), 0);
    assert_eq!(
        h.count(|c| matches!(c, ApiCall::ListSessions { .. })),
        0,
        "list read while hidden"
    );
    h.visible(true);
    assert_eq!(details(&h, "s-d"), 1);
    assert_eq!(histories(&h, "s-d"), 1);
}

/// HYD-12: once the chat is hidden, a new selection is not hydrated, and a list answer that
/// selects a session while hidden requests nothing either.
#[test]
fn hyd_12_selection_changes_while_hidden_request_nothing() {
    let mut h = Harness::visible_in_env();
    let list = h.list_request();
    h.visible(false);
    let mark = h.mark();
    h.reply(
        list,
        200,
        page(&[record("s-1", AGENT, ENV, 1), record("s-2", AGENT, ENV, 2)]),
    );
    h.requested(Some("s-9"));
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some("s-9"));
    assert!(
        h.sent_since(mark).is_empty(),
        "sent while hidden: {:?}",
        h.sent_since(mark)
    );
}

/// HYD-12, HYD-3: a detail answer that arrives after the chat was hidden does not emit the
/// insights request while the chat is hidden; the insights follow once the chat is visible again,
/// exactly once.
#[test]
fn hyd_12_no_insights_request_while_hidden() {
    let mut h = Harness::selected("s-1");
    let detail = h.detail_request("s-1");
    h.visible(false);
    let mark = h.mark();
    h.reply(detail, 200, record("s-1", AGENT, ENV, 0));
    h.answer_history("s-1");
    assert!(
        h.sent_since(mark).is_empty(),
        "sent while hidden: {:?}",
        h.sent_since(mark)
            .iter()
            .map(|s| &s.call)
            .collect::<Vec<_>>()
    );
    h.visible(true);
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    assert_eq!(insights_reqs(&h, "s-1"), 1);
    assert_eq!(histories(&h, "s-1"), 1);
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
}

// ---------------------------------------------------------------------------------------------
// HYD-13

/// HYD-13: when the chat becomes visible again on the same session, the detail is read again and
/// readiness is ready from that step on; history is not read again (the latest-sessions list and
/// the insights are, OI-26, OI-7: see `parity_hydration.rs`).
#[test]
fn hyd_13_return_to_view_rereads_detail_not_history() {
    let mut h = Harness::ready("s-1");
    h.visible(false);
    assert_eq!(h.readiness(), ReadinessStatus::Idle);
    let mark = h.mark();
    h.visible(true);
    let step: Vec<&ApiCall> = hydration_calls(h.sent_since(mark))
        .into_iter()
        .filter(|c| is_detail(c, "s-1") || is_history(c, "s-1"))
        .collect();
    assert_eq!(step.len(), 1, "{step:?}");
    assert!(is_detail(step[0], "s-1"));
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
    assert_eq!(histories(&h, "s-1"), 1);
    assert_eq!(thread_ids(&h), ["m-1", "m-2"]);
    // Several more round trips change nothing about history.
    for _ in 0..3 {
        h.visible(false);
        h.visible(true);
        h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    }
    assert_eq!(details(&h, "s-1"), 5);
    assert_eq!(histories(&h, "s-1"), 1);
}

/// HYD-13: history is read once per selection: only a new selection of the session reads it
/// again.
#[test]
fn hyd_13_new_selection_reads_history_again() {
    let mut h = Harness::ready("s-1");
    h.requested(Some("s-2"));
    h.hydrate("s-2", AGENT);
    h.requested(Some("s-1"));
    assert_eq!(histories(&h, "s-1"), 2);
    assert_eq!(details(&h, "s-1"), 2);
}

// ---------------------------------------------------------------------------------------------
// Transcripts

/// HYD-1, HYD-2, HYD-3, HYD-5, HYD-6, HYD-7, HYD-13: the full hydration of one session, hidden and
/// shown again; coming back into view reads the list, the detail and the insights again, not the
/// history (OI-26, OI-7).
#[test]
fn hyd_transcript_hydrate_hide_and_return() {
    let mut h = Harness::ready("s-1");
    h.visible(false);
    h.visible(true);
    h.answer_list(&[record("s-1", AGENT, ENV, 0)]);
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    let id = h.insights_request("s-1");
    h.reply(id, 200, insights("s-1"));
    insta::assert_snapshot!(h.transcript());
}

/// HYD-4, HYD-8: moving to a session whose history answers 404 empties the thread.
#[test]
fn hyd_transcript_history_404_after_another_session() {
    let mut h = Harness::ready("s-1");
    h.requested(Some("s-2"));
    h.answer_detail("s-2", record("s-2", AGENT, ENV, 0));
    let id = h.history_request("s-2");
    h.reply(id, 404, json!({"detail": "Not found."}));
    insta::assert_snapshot!(h.transcript());
}

/// RU-31: a `tau` insights answer carrying `pi-checkpoint-v1` is refused: the insights error
/// names the expected "tau-session-v1", no insights are held, and readiness stays `ready`; the
/// matching pair loads. A 404 is the empty snapshot (`hasInsights` false, naming the session);
/// the id "73" reads `/api/v1/agent-sessions/73/insights/`.
#[test]
fn ru_31_harness_and_protocol() {
    let mut h = Harness::selected("73");
    h.hydrate("73", AGENT);
    let id = h.insights_request("73");
    assert_eq!(
        h.request(id).request.path,
        "/api/v1/agent-sessions/73/insights/"
    );
    h.reply(
        id,
        200,
        json!({"harness": "tau", "harness_protocol": "pi-checkpoint-v1", "has_insights": true}),
    );
    let s = h.snapshot();
    let detail = s.active_session_detail.clone().expect("a detail");
    let error = detail.insights_error.unwrap_or_default();
    assert!(error.contains("\"tau-session-v1\""), "{error:?}");
    assert_eq!(detail.insights, None);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Ready);
    assert!(!s.active_session_readiness.insights_ready);

    let mut h = Harness::selected("s-1");
    h.hydrate("s-1", AGENT);
    let id = h.insights_request("s-1");
    h.reply(
        id,
        200,
        json!({"harness": "pi", "harness_protocol": "pi-checkpoint-v1", "has_insights": false, "checkpoint_version": 4, "insights": {}}),
    );
    let detail = h.snapshot().active_session_detail.expect("a detail");
    assert_eq!(detail.insights_error, None);
    assert!(detail.insights.is_some());

    let mut h = Harness::selected("s-1");
    h.hydrate("s-1", AGENT);
    let id = h.insights_request("s-1");
    h.reply(id, 404, json!({"detail": "Not found."}));
    let s = h.snapshot();
    let detail = s.active_session_detail.expect("a detail");
    assert_eq!(detail.insights_error, None);
    let empty = serde_json::to_value(detail.insights.expect("the empty snapshot")).unwrap();
    assert_eq!(empty["hasInsights"], false);
    assert_eq!(empty["agentSessionId"], "s-1");
    assert_eq!(empty["usage"], Value::Null);
}

/// RU-30: the insights a surface renders, normalized field by field from the P10 answer: the
/// tau answer keeps every field (its entries, model, usage, context, the session falling back on
/// the answer's id); `pi` with `has_insights` false, `checkpoint_version` 4 and `insights` `{}`
/// gives `hasInsights` false, `checkpointVersion` 4, `info` `{}` and the four sections null.
#[test]
fn ru_30_the_insights_snapshot() {
    let shown = |answer: Value| {
        let mut h = Harness::selected("s-1");
        h.hydrate("s-1", AGENT);
        let id = h.insights_request("s-1");
        h.reply(id, 200, answer);
        let detail = h.snapshot().active_session_detail.expect("a detail");
        assert_eq!(detail.insights_error, None);
        let insights = detail.insights.expect("insights");
        // The typed snapshot and the serialized one are the same value.
        let typed = insights.snapshot();
        let value = serde_json::to_value(&insights).unwrap();
        assert_eq!(serde_json::to_value(&typed).unwrap(), value);
        value
    };
    let tau = shown(json!({
        "agent_session_uid": "s-1", "harness": "tau", "harness_protocol": "tau-session-v1",
        "harness_version": "0.4.2", "computed_at": "2026-10-02T08:17:00Z", "reason": "turn_completed",
        "updated_at": "2026-10-02T08:16:30Z", "has_insights": true, "entry_count": 4, "last_sequence": 7,
        "active_branch_entry_count": 3, "entry_type_counts": {"message": 3, "session_info": 1},
        "title": "Competition analysis",
        "insights": {"version": 1,
            "model": {"provider": "openai", "model": "gpt-5.4", "reasoningEffort": "high", "contextWindow": 200000},
            "usage": {"totalMessages": 2, "tokens": {"input": 60, "output": 20, "cacheRead": 10, "cacheWrite": 5, "total": 95}},
            "context": {"source": "runtime", "status": "measured", "tokens": 95, "contextWindow": 200000},
            "lastTurn": {"finishReason": "stop", "model": {"provider": "openai", "model": "gpt-5.4"}}}
    }));
    assert_eq!(tau["hasInsights"], true);
    assert_eq!(tau["agentSessionId"], "s-1");
    assert_eq!(tau["harnessProtocol"], "tau-session-v1");
    assert_eq!(tau["harnessVersion"], "0.4.2");
    assert_eq!(tau["computedAt"], "2026-10-02T08:17:00Z");
    assert_eq!(tau["reason"], "turn_completed");
    assert_eq!(tau["updatedAt"], "2026-10-02T08:16:30Z");
    assert_eq!(tau["entryCount"], 4);
    assert_eq!(tau["lastSequence"], 7);
    assert_eq!(tau["activeBranchEntryCount"], 3);
    assert_eq!(
        tau["entryTypeCounts"],
        json!({"message": 3, "session_info": 1})
    );
    assert_eq!(tau["title"], "Competition analysis");
    assert_eq!(tau["model"]["reasoningEffort"], "high");
    assert_eq!(tau["usage"]["tokens"]["cacheRead"], 10);
    assert_eq!(tau["lastTurn"]["finishReason"], "stop");
    assert_eq!(tau["context"]["tokens"], 95);
    assert_eq!(tau["info"], json!({}));
    assert_eq!(tau["session"]["agentSessionId"], "s-1");

    let pi = shown(
        json!({"harness": "pi", "harness_protocol": "pi-checkpoint-v1",
        "has_insights": false, "checkpoint_version": 4, "insights": {}}),
    );
    assert_eq!(pi["hasInsights"], false);
    assert_eq!(pi["checkpointVersion"], 4);
    assert_eq!(pi["info"], json!({}));
    for key in ["context", "model", "usage", "lastTurn"] {
        assert_eq!(pi[key], Value::Null, "{key}");
    }
}

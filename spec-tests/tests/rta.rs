#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! RTA: runtime access and client-verified Agent readiness (ADR 093), with the shared-state,
//! failure, invariant and Environment rules built on it (SHR-5, SHR-11, SHR-12, FAIL-14, INV-6,
//! INV-11, the runtime half of ENV-3).
//!
//! Times are exact: a poll due at +2000 is checked absent at +1999 and present at +2000. The rules
//! tied to sending (the draft, the held send, the queue) belong to SND and are not checked here.

use engine_core::api::{InteractionState, PresencePhase, RuntimeInteraction, Severity};
use engine_core::{
    ApiCall, Command, Config, DefaultSessionStatus, Input, Method, ReadinessStatus, Target,
    TimeoutReason,
};
use serde_json::{Value, json};
use spec_tests::fixtures::{
    AGENT, AGENT2, ENV, ENV2, HANDLE, RUNTIME_TOKEN, handle_record, page, record, rpc_url,
    runtime_ready, runtime_terminal, runtime_transient,
};
use spec_tests::{BASE, Harness};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// 2026-10-02T08:00:00.000Z: the wall clock at the engine's start in the wake tests.
const START_UNIX_MS: u64 = 1_790_928_000_000;

fn is_resolve(c: &ApiCall, uid: &str) -> bool {
    matches!(c, ApiCall::ResolveRuntimeAccess { session_uid } if session_uid == uid)
}

fn is_confirm(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ConfirmAgent { .. })
}

fn is_runtime_call(c: &ApiCall) -> bool {
    matches!(
        c,
        ApiCall::ResolveRuntimeAccess { .. } | ApiCall::ConfirmAgent { .. }
    )
}

/// resolve-runtime-access requests for `uid` emitted since `mark`.
fn resolves_since(h: &Harness, mark: usize, uid: &str) -> usize {
    h.sent_since(mark)
        .iter()
        .filter(|s| is_resolve(&s.call, uid))
        .count()
}

/// Confirmations emitted since `mark`.
fn confirms_since(h: &Harness, mark: usize) -> usize {
    h.sent_since(mark)
        .iter()
        .filter(|s| is_confirm(&s.call))
        .count()
}

/// Any runtime request (resolve or confirmation) emitted since `mark`.
fn runtime_since(h: &Harness, mark: usize) -> usize {
    h.sent_since(mark)
        .iter()
        .filter(|s| is_runtime_call(&s.call))
        .count()
}

fn interaction(h: &Harness) -> RuntimeInteraction {
    h.snapshot()
        .active_runtime_interaction
        .expect("an activeRuntimeInteraction")
}

fn state(h: &Harness) -> InteractionState {
    interaction(h).state
}

fn admitted(h: &Harness) -> bool {
    h.snapshot().composer_admission
}

fn starting(h: &Harness) -> bool {
    h.snapshot().is_assistant_runtime_starting
}

/// The silent `checking` of RTA-19: locked, no notice, no interval.
fn assert_silent_checking(h: &Harness) {
    let i = interaction(h);
    assert_eq!(i.state, InteractionState::Checking);
    assert!(!i.can_submit);
    assert_eq!(i.notice, None);
    assert_eq!(i.retry_after_ms, None);
    assert!(!admitted(h));
    assert!(starting(h));
}

/// `uid` hydrated, its first check answered ready and confirmed by a 200.
fn confirmed(uid: &str) -> Harness {
    let mut h = Harness::hydrated(uid);
    h.runtime_ready(uid, 200);
    assert_eq!(state(&h), InteractionState::Ready);
    assert!(admitted(&h));
    h
}

/// A hydrated session in an engine whose wall clock starts at [`START_UNIX_MS`].
fn hydrated_with_wall_clock(uid: &str) -> Harness {
    let mut config = Config::new(BASE).unwrap().with_seed(1);
    config.start_unix_ms = START_UNIX_MS;
    let mut h = Harness::with_config(config);
    h.person(spec_tests::fixtures::USER);
    h.env(Some(ENV));
    h.visible(true);
    h.requested(Some(uid));
    h.hydrate(uid, AGENT);
    h
}

/// Answers the open resolve of `uid` with `body` (status 200).
fn answer_resolve(h: &mut Harness, uid: &str, body: Value) {
    let id = h.runtime_request(uid);
    h.reply(id, 200, body);
}

/// Answers the open confirmation of `uid` with `status` and an ignored body.
fn answer_confirm(h: &mut Harness, uid: &str, status: u16) {
    let id = h.confirm_request(uid);
    h.reply_raw(
        id,
        status,
        Some("application/json"),
        br#"{"status":"ready","protocol":"ui-message-stream"}"#,
        None,
    );
}

/// Asserts that the next resolve of `uid` goes out exactly `ms` from now: none at `ms - 1`,
/// exactly one at `ms`. Leaves the clock at `ms`.
fn expect_poll_after(h: &mut Harness, uid: &str, ms: u64) {
    let mark = h.mark();
    let start = h.now_ms();
    if ms > 0 {
        h.advance(ms - 1);
        assert_eq!(
            resolves_since(h, mark, uid),
            0,
            "no poll before +{ms} (at +{})\n{}",
            ms - 1,
            h.transcript()
        );
        h.advance(1);
    }
    assert_eq!(
        resolves_since(h, mark, uid),
        1,
        "one poll at +{ms}\n{}",
        h.transcript()
    );
    let sent = h
        .sent_since(mark)
        .iter()
        .find(|s| is_resolve(&s.call, uid))
        .unwrap();
    assert_eq!(sent.at_ms, start + ms);
}

/// A ready answer for `uid` with another presence.
fn ready_with_presence(uid: &str, phase: &str) -> Value {
    let mut v = runtime_ready(uid);
    v["runtime_presence"]["phase"] = json!(phase);
    v["runtime_presence"]["detail"] = json!(format!("Presence {phase}."));
    v
}

/// A transient answer whose presence reports `phase`.
fn transient_with_presence(state: &str, phase: &str) -> Value {
    let mut v = runtime_transient(state, Some(2000));
    v["runtime_presence"]["phase"] = json!(phase);
    v["runtime_presence"]["detail"] = json!(format!("Presence {phase}."));
    v
}

fn no_notify(h: &Harness) {
    assert!(h.notices().is_empty(), "{:?}", h.notices());
}

// ---------------------------------------------------------------------------------------------
// RTA-1, RTA-2: when runtime access is resolved
// ---------------------------------------------------------------------------------------------

/// RTA-1: a visible, selected session gets POST .../resolve-runtime-access/ to the platform, with
/// the body {} as JSON and the person's credential, in the same step as its selection.
#[test]
fn rta_1_resolve_request_shape() {
    let mut h = Harness::visible_in_env();
    let mark = h.mark();
    h.requested(Some("s-1"));
    let id = h.runtime_request("s-1");
    assert_eq!(h.request(id).at_ms, 0);
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
    let req = &h.request(id).request;
    assert_eq!(req.method, Method::Post);
    assert_eq!(req.target, Target::Platform);
    assert_eq!(req.base, BASE);
    assert_eq!(
        req.path,
        "/api/v1/agent-sessions/s-1/resolve-runtime-access/"
    );
    assert!(req.query.is_empty());
    let body: Value = serde_json::from_slice(req.body.as_ref().expect("a body")).unwrap();
    assert_eq!(body, json!({}));
    assert_eq!(req.header("Content-Type"), Some("application/json"));
    assert_eq!(req.header("Accept"), Some("application/json"));
    assert_eq!(
        req.header("Authorization"),
        Some("Bearer platform-token-secret")
    );
}

/// RTA-1: the implicitly selected (newest) session is checked as well, once the list selects it.
#[test]
fn rta_1_implicit_selection_is_checked() {
    let mut h = Harness::visible_in_env();
    assert_eq!(h.count(is_runtime_call), 0, "nothing selected yet");
    h.answer_list(&[record("s-7", AGENT, ENV, 10)]);
    assert_eq!(h.current().as_deref(), Some("s-7"));
    h.runtime_request("s-7");
    assert_eq!(h.count(|c| is_resolve(c, "s-7")), 1);
}

/// RTA-2: while isVisible is false no resolve-runtime-access and no confirmation go out for the
/// selected session, however long; the check starts when the chat becomes visible.
#[test]
fn rta_2_no_check_while_chat_hidden() {
    let mut h = Harness::new();
    h.person(spec_tests::fixtures::USER);
    h.env(Some(ENV));
    h.requested(Some("s-1"));
    assert_eq!(h.current().as_deref(), Some("s-1"));
    h.advance(120_000);
    assert_eq!(h.count(is_runtime_call), 0);
    assert_eq!(h.snapshot().active_runtime_interaction, None);
    assert!(!starting(&h));
    h.visible(true);
    h.runtime_request("s-1");
    assert_eq!(h.count(is_runtime_call), 1);
}

/// RTA-2, RTA-11: hiding the chat aborts a check in flight and stops polling of a transient
/// decision; nothing is sent until the chat shows again.
#[test]
fn rta_2_hiding_the_chat_stops_checks_and_polls() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("starting", Some(1000)));
    h.visible(false);
    let mark = h.mark();
    h.advance(90_000);
    assert_eq!(runtime_since(&h, mark), 0);
    // A confirmation in flight is aborted as well.
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    let confirm = h.confirm_request("s-1");
    let mark = h.mark();
    h.visible(false);
    assert!(h.was_aborted(confirm));
    h.advance(90_000);
    assert_eq!(runtime_since(&h, mark), 0);
}

// ---------------------------------------------------------------------------------------------
// RTA-3 to RTA-7: the decision and admission
// ---------------------------------------------------------------------------------------------

/// RTA-3, RTA-19: runtime_interaction and runtime_presence are exposed as they were answered;
/// a ready answer shows only once the Agent confirmed it, and until then the session shows the
/// silent checking decision.
#[test]
fn rta_3_interaction_and_presence_exposed_after_confirmation() {
    let mut h = Harness::hydrated("s-1");
    assert_silent_checking(&h);
    assert_eq!(h.snapshot().active_runtime_presence, None);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    // RTA-19: answered ready, not yet confirmed: still silent checking.
    assert_silent_checking(&h);
    assert_eq!(h.snapshot().active_runtime_presence, None);
    answer_confirm(&mut h, "s-1", 200);
    let s = h.snapshot();
    let i = s.active_runtime_interaction.unwrap();
    assert_eq!(i.state, InteractionState::Ready);
    assert!(i.can_submit);
    assert_eq!(i.notice, None);
    assert_eq!(i.support_reference, None);
    assert_eq!(i.retry_after_ms, None);
    let p = s.active_runtime_presence.unwrap();
    assert_eq!(p.phase, PresencePhase::Serving);
    assert_eq!(p.detail, "Observed.");
    assert_eq!(p.desired_replicas, Some(1));
    assert_eq!(p.actual_replicas, Some(1));
    assert_eq!(p.observed_at.as_deref(), Some("2026-10-02T08:20:00Z"));
    assert_eq!(p.wake, None);
    assert!(s.composer_admission);
    assert!(!s.is_assistant_runtime_starting);
}

/// RTA-3: a transient decision's notice, interval and presence (with its wake) are exposed as
/// the platform sent them.
#[test]
fn rta_3_transient_decision_exposed_as_answered() {
    let mut h = Harness::hydrated("s-1");
    let mut v = runtime_transient("waking", Some(2500));
    v["runtime_presence"]["wake"] = json!({"operation_uid": "op-17", "state": "in_progress",
        "requested_at": "2026-10-02T08:19:50Z", "deadline_at": "2026-10-02T08:29:50Z"});
    answer_resolve(&mut h, "s-1", v);
    let i = interaction(&h);
    assert_eq!(i.state, InteractionState::Waking);
    assert!(!i.can_submit);
    let n = i.notice.unwrap();
    assert_eq!(n.code, "agent_waking");
    assert_eq!(n.severity, Severity::Info);
    assert_eq!(n.title, "Starting Ledger Helper");
    assert_eq!(n.message, "Ledger Helper is starting.");
    assert_eq!(i.retry_after_ms, Some(2500));
    let p = h.snapshot().active_runtime_presence.unwrap();
    assert_eq!(p.phase, PresencePhase::Provisioning);
    let w = p.wake.unwrap();
    assert_eq!(w.operation_uid, "op-17");
    assert_eq!(w.state, "in_progress");
    assert_eq!(w.requested_at, "2026-10-02T08:19:50Z");
    assert_eq!(w.deadline_at, "2026-10-02T08:29:50Z");
}

/// RTA-4, SHR-12: a presence reporting a serving runtime never opens admission while the
/// decision is transient or terminal.
#[test]
fn rta_4_presence_never_opens_admission() {
    for state_name in ["checking", "starting", "waking", "updating"] {
        let mut h = Harness::hydrated("s-1");
        answer_resolve(
            &mut h,
            "s-1",
            transient_with_presence(state_name, "serving"),
        );
        assert_eq!(
            h.snapshot().active_runtime_presence.unwrap().phase,
            PresencePhase::Serving
        );
        assert!(!admitted(&h), "{state_name}");
        assert!(starting(&h), "{state_name}");
        assert_eq!(h.count(is_confirm), 0, "{state_name}");
    }
    let mut h = Harness::hydrated("s-1");
    let mut v = runtime_terminal(Some("upd-op-18"));
    v["runtime_presence"]["phase"] = json!("serving");
    answer_resolve(&mut h, "s-1", v);
    assert_eq!(
        h.snapshot().active_runtime_presence.unwrap().phase,
        PresencePhase::Serving
    );
    assert!(!admitted(&h));
    assert_eq!(h.count(is_confirm), 0);
}

/// RTA-5, SHR-12: with a confirmed can_submit decision, admission is open whatever the
/// presence reports (idle, failed, not deployed, starting).
#[test]
fn rta_5_presence_never_closes_admission() {
    for phase in ["idle", "failed", "not_deployed", "starting", "redeploying"] {
        let mut h = Harness::hydrated("s-1");
        answer_resolve(&mut h, "s-1", ready_with_presence("s-1", phase));
        answer_confirm(&mut h, "s-1", 200);
        assert!(admitted(&h), "{phase}");
        assert!(!starting(&h), "{phase}");
        assert_eq!(interaction(&h).notice, None, "{phase}");
    }
}

/// RTA-6, RTA-16: a can_submit decision confirmed by a serving Agent opens admission on a ready
/// session; before the session is ready the same decision does not.
#[test]
fn rta_6_confirmed_decision_opens_admission() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-1"));
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    answer_confirm(&mut h, "s-1", 200);
    assert_eq!(state(&h), InteractionState::Ready);
    assert_eq!(
        h.snapshot().active_session_readiness.status,
        ReadinessStatus::Loading
    );
    assert!(!admitted(&h), "admission also needs a ready session");
    h.hydrate("s-1", AGENT);
    assert!(admitted(&h));
}

/// RTA-7, SHR-5: each transient state locks the composer and sets isAssistantRuntimeStarting.
#[test]
fn rta_7_transient_states_lock_and_start() {
    for (name, expected) in [
        ("checking", InteractionState::Checking),
        ("starting", InteractionState::Starting),
        ("waking", InteractionState::Waking),
        ("updating", InteractionState::Updating),
    ] {
        let mut h = confirmed("s-1");
        h.command(Command::RefreshActiveSessionRuntimeAccess);
        answer_resolve(&mut h, "s-1", runtime_transient(name, Some(2000)));
        assert_eq!(state(&h), expected);
        assert!(!admitted(&h), "{name}");
        assert!(starting(&h), "{name}");
        assert_eq!(
            h.snapshot().active_session_readiness.status,
            ReadinessStatus::Ready
        );
    }
}

/// RTA-9, RTA-14, OI-9: after a transient decision turns ready, admission reopens with one
/// confirmation, and later reads within the confirmation memory send nothing more to the Agent.
#[test]
fn rta_8_nothing_sent_when_admission_reopens() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("starting", Some(1000)));
    assert!(!admitted(&h));
    h.advance(1000);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    answer_confirm(&mut h, "s-1", 200);
    assert!(admitted(&h));
    h.advance(120_000);
    for s in h.sent() {
        if s.request.target == Target::AgentRuntime {
            assert_eq!(s.request.method, Method::Get, "only confirmations");
            assert!(is_confirm(&s.call));
        }
    }
    assert_eq!(
        h.sent()
            .iter()
            .filter(|s| s.request.target == Target::AgentRuntime)
            .count(),
        1
    );
}

// ---------------------------------------------------------------------------------------------
// RTA-9 to RTA-12: polling
// ---------------------------------------------------------------------------------------------

/// RTA-9: after a transient answer the next resolve goes out exactly retry_after_ms later.
#[test]
fn rta_9_poll_after_retry_after_ms() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("waking", Some(2500)));
    expect_poll_after(&mut h, "s-1", 2500);
    // The interval counts from the previous answer, not from the request.
    h.advance(700);
    answer_resolve(&mut h, "s-1", runtime_transient("waking", Some(1200)));
    expect_poll_after(&mut h, "s-1", 1200);
}

/// RTA-9, OI-2: without an interval the next resolve goes out after two seconds.
#[test]
fn rta_9_poll_after_two_seconds_without_interval() {
    for interval in [json!(null), json!("2500"), json!({"ms": 1}), json!(true)] {
        let mut h = Harness::hydrated("s-1");
        let mut v = runtime_transient("starting", None);
        v["runtime_interaction"]["retry_after_ms"] = interval.clone();
        answer_resolve(&mut h, "s-1", v);
        assert_eq!(interaction(&h).retry_after_ms, None, "{interval}");
        expect_poll_after(&mut h, "s-1", 2000);
    }
    // The field left out entirely.
    let mut h = Harness::hydrated("s-1");
    let mut v = runtime_transient("starting", None);
    v["runtime_interaction"]
        .as_object_mut()
        .unwrap()
        .remove("retry_after_ms");
    answer_resolve(&mut h, "s-1", v);
    expect_poll_after(&mut h, "s-1", 2000);
}

/// RTA-9, OI-2: an interval above 0 is held between 500 ms and 30 s; fractions are floored.
#[test]
fn rta_9_interval_clamped() {
    for (given, wait) in [
        (json!(1), 500),
        (json!(499), 500),
        (json!(500), 500),
        (json!(501), 501),
        (json!(2500.9), 2500),
        (json!(29_999), 29_999),
        (json!(30_000), 30_000),
        (json!(30_001), 30_000),
        (json!(600_000), 30_000),
    ] {
        let mut h = Harness::hydrated("s-1");
        let mut v = runtime_transient("waking", None);
        v["runtime_interaction"]["retry_after_ms"] = given.clone();
        answer_resolve(&mut h, "s-1", v);
        expect_poll_after(&mut h, "s-1", wait);
    }
}

/// RTA-9, OI-2: an interval of 0, or a negative one (read as 0), asks again at once.
#[test]
fn rta_9_zero_or_negative_interval_asks_at_once() {
    for given in [json!(0), json!(-1), json!(-2500), json!(-0.5)] {
        let mut h = Harness::hydrated("s-1");
        let mut v = runtime_transient("waking", None);
        v["runtime_interaction"]["retry_after_ms"] = given.clone();
        let id = h.runtime_request("s-1");
        let mark = h.mark();
        h.reply(id, 200, v);
        assert_eq!(interaction(&h).retry_after_ms, Some(0), "{given}");
        assert_eq!(
            resolves_since(&h, mark, "s-1"),
            1,
            "the immediate poll, in the step of the answer: {given}"
        );
        assert_eq!(h.sent().last().unwrap().at_ms, 0);
        assert!(is_resolve(&h.sent().last().unwrap().call, "s-1"));
    }
}

/// RTA-9, OI-2: the camelCase retryAfterMs (and runtimeInteraction) are read as well.
#[test]
fn rta_9_camel_case_interval() {
    let mut h = Harness::hydrated("s-1");
    let mut v = runtime_transient("waking", None);
    let inner = v
        .as_object_mut()
        .unwrap()
        .remove("runtime_interaction")
        .unwrap();
    let mut inner = inner.as_object().unwrap().clone();
    inner.remove("retry_after_ms");
    inner.insert("retryAfterMs".into(), json!(4200));
    inner.insert("canSubmit".into(), inner["can_submit"].clone());
    inner.remove("can_submit");
    v["runtimeInteraction"] = Value::Object(inner);
    answer_resolve(&mut h, "s-1", v);
    assert_eq!(state(&h), InteractionState::Waking);
    assert_eq!(interaction(&h).retry_after_ms, Some(4200));
    expect_poll_after(&mut h, "s-1", 4200);
}

/// RTA-10: a poll due while the page is hidden is not sent; it goes out the moment the page is
/// shown again, and the timer is not armed meanwhile.
#[test]
fn rta_10_no_poll_while_page_hidden() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("waking", Some(2000)));
    h.advance(500);
    h.input(Input::PageVisible(false));
    assert_eq!(h.engine().poll_timeout(), None, "no timer while hidden");
    let mark = h.mark();
    h.advance(40_000);
    assert_eq!(runtime_since(&h, mark), 0);
    h.input(Input::PageVisible(true));
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
    assert_eq!(h.sent().last().unwrap().at_ms, 40_500);
}

/// RTA-10, RTA-17, OI-4 (issue 26: a timer states its reason): while the Agent confirms, the timer is
/// the confirmation's limit; after a failed confirmation it is the next poll; while the page is
/// hidden it is the later "taking longer" notice of OI-4 (no poll), and the poll again when shown.
#[test]
fn rta_10_timeout_reason_names_the_timer() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert_eq!(
        h.engine().timeout_reason(),
        Some(TimeoutReason::RuntimeConfirmLimit)
    );
    answer_confirm(&mut h, "s-1", 502);
    assert_eq!(
        h.engine().timeout_reason(),
        Some(TimeoutReason::RuntimePoll)
    );
    assert_eq!(TimeoutReason::RuntimePoll.to_string(), "runtime_poll");
    let poll = h.engine().poll_timeout();
    // Hidden: no poll; the only timer left is OI-4's "taking longer" for the wake, later.
    h.input(Input::PageVisible(false));
    assert_eq!(
        h.engine().timeout_reason(),
        Some(TimeoutReason::WakeOverdue)
    );
    assert!(h.engine().poll_timeout() > poll);
    h.input(Input::PageVisible(true));
    assert_eq!(
        h.engine().timeout_reason(),
        Some(TimeoutReason::RuntimePoll)
    );
    assert_eq!(h.engine().poll_timeout(), poll);
}

/// RTA-10: other inputs arriving while the page is hidden (answers, commands, level inputs) do
/// not send a poll that fell due meanwhile.
#[test]
fn rta_10_other_inputs_while_hidden_send_no_poll() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("waking", Some(2000)));
    h.input(Input::PageVisible(false));
    h.advance(5000);
    let mark = h.mark();
    h.command(Command::RefreshSessionDetail);
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    h.input(Input::ViewContext(Some(json!({"page": "ledger"}))));
    h.input(Input::AvoidImplicitSessionSelection(true));
    h.advance(5000);
    assert_eq!(runtime_since(&h, mark), 0);
    h.input(Input::PageVisible(true));
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
}

/// RTA-10: a page hidden and shown again before the poll is due leaves the poll at its time.
#[test]
fn rta_10_short_hide_keeps_schedule() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("waking", Some(5000)));
    h.advance(1000);
    h.input(Input::PageVisible(false));
    h.advance(2000);
    h.input(Input::PageVisible(true));
    assert_eq!(runtime_since(&h, 0), 1, "only the first check so far");
    expect_poll_after(&mut h, "s-1", 2000);
}

/// RTA-10, RTA-12: backoff retries after failures are not sent while the page is hidden either.
#[test]
fn rta_10_no_retry_while_page_hidden() {
    let mut h = Harness::hydrated("s-1");
    let id = h.runtime_request("s-1");
    h.reply(id, 500, json!({"detail": "boom"}));
    h.input(Input::PageVisible(false));
    let mark = h.mark();
    h.advance(100_000);
    assert_eq!(runtime_since(&h, mark), 0);
    h.input(Input::PageVisible(true));
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
}

/// RTA-11: once the decision is ready and confirmed, no further resolve is scheduled.
#[test]
fn rta_11_polling_stops_when_ready() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("starting", Some(1000)));
    h.advance(1000);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    answer_confirm(&mut h, "s-1", 200);
    let mark = h.mark();
    assert_eq!(h.engine().poll_timeout(), None);
    h.advance(600_000);
    assert_eq!(runtime_since(&h, mark), 0);
}

/// RTA-11, RTA-13: a terminal decision stops polling as well.
#[test]
fn rta_11_polling_stops_when_terminal() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("updating", Some(1000)));
    h.advance(1000);
    answer_resolve(&mut h, "s-1", runtime_terminal(Some("upd-op-18")));
    let mark = h.mark();
    assert_eq!(h.engine().poll_timeout(), None);
    h.advance(600_000);
    assert_eq!(runtime_since(&h, mark), 0);
}

/// RTA-12, OI-1: a failing first check (immediate, previous delay 0) is retried after 2, 4, 8,
/// 16 and 30 s, then every 30 s, whether it fails by HTTP error or by no answer; the decision
/// stays checking and locked, and no notify is emitted.
#[test]
fn rta_12_backoff_schedule() {
    let mut h = Harness::hydrated("s-1");
    let id = h.runtime_request("s-1");
    h.reply(id, 500, json!({"detail": "Internal error."}));
    for (round, wait) in [2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]
        .into_iter()
        .enumerate()
    {
        expect_poll_after(&mut h, "s-1", wait);
        let id = h.runtime_request("s-1");
        match round % 3 {
            0 => h.fail(id),
            1 => h.reply(id, 503, json!({"detail": "Unavailable."})),
            _ => h.reply(id, 404, json!({"detail": "Not found."})),
        };
        assert_eq!(state(&h), InteractionState::Checking);
        assert!(!admitted(&h));
    }
    assert_eq!(h.count(is_confirm), 0);
    no_notify(&h);
    assert_eq!(
        h.snapshot().active_session_readiness.status,
        ReadinessStatus::Ready,
        "a runtime failure is not a session error"
    );
}

/// RTA-12, OI-1: the previous delay after a transient answer is its interval: 2500 ms leads to a
/// backoff of 5000, then 10 000; a successful answer puts its own interval back.
#[test]
fn rta_12_backoff_doubles_the_last_interval() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("waking", Some(2500)));
    expect_poll_after(&mut h, "s-1", 2500);
    let id = h.runtime_request("s-1");
    h.fail(id);
    // The decision is kept meanwhile, with the platform's own notice.
    let i = interaction(&h);
    assert_eq!(i.state, InteractionState::Waking);
    assert_eq!(i.notice.unwrap().code, "agent_waking");
    expect_poll_after(&mut h, "s-1", 5000);
    let id = h.runtime_request("s-1");
    h.reply(id, 500, json!({}));
    expect_poll_after(&mut h, "s-1", 10_000);
    answer_resolve(&mut h, "s-1", runtime_transient("waking", Some(700)));
    expect_poll_after(&mut h, "s-1", 700);
    let id = h.runtime_request("s-1");
    h.reply(id, 502, json!({}));
    // max(2000, 2 x 700) = 2000.
    expect_poll_after(&mut h, "s-1", 2000);
    no_notify(&h);
}

/// RTA-12, OI-1: a transient answer without interval (2 s) followed by a failure backs off 4 s;
/// a large interval backs off to the 30 s cap.
#[test]
fn rta_12_backoff_after_default_and_large_intervals() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("starting", None));
    expect_poll_after(&mut h, "s-1", 2000);
    let id = h.runtime_request("s-1");
    h.fail(id);
    expect_poll_after(&mut h, "s-1", 4000);

    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("starting", Some(20_000)));
    expect_poll_after(&mut h, "s-1", 20_000);
    let id = h.runtime_request("s-1");
    h.fail(id);
    expect_poll_after(&mut h, "s-1", 30_000);
}

/// RTA-12: retries only run while the chat is visible: hiding it stops them.
#[test]
fn rta_12_no_retry_while_chat_hidden() {
    let mut h = Harness::hydrated("s-1");
    let id = h.runtime_request("s-1");
    h.fail(id);
    h.advance(1000);
    h.visible(false);
    let mark = h.mark();
    h.advance(300_000);
    assert_eq!(runtime_since(&h, mark), 0);
}

/// RTA-12: a failure while a ready decision is in force keeps it (and admission).
#[test]
fn rta_12_failure_keeps_ready_decision() {
    let mut h = confirmed("s-1");
    h.advance(1000);
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    let id = h.runtime_request("s-1");
    h.reply(id, 500, json!({"detail": "boom"}));
    assert_eq!(state(&h), InteractionState::Ready);
    assert_eq!(interaction(&h).notice, None);
    assert!(admitted(&h));
    no_notify(&h);
}

// ---------------------------------------------------------------------------------------------
// RTA-13: terminal decisions
// ---------------------------------------------------------------------------------------------

/// RTA-13, SHR-5: a terminal decision keeps sending disabled, shows the backend's own notice
/// with its support reference, and is not transient.
#[test]
fn rta_13_terminal_with_support_reference() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_terminal(Some("upd-op-18")));
    let i = interaction(&h);
    assert_eq!(i.state, InteractionState::UpdateFailed);
    assert!(!i.can_submit);
    let n = i.notice.unwrap();
    assert_eq!(n.code, "agent_update_failed");
    assert_eq!(n.severity, Severity::Error);
    assert_eq!(n.title, "Update failed");
    assert_eq!(n.message, "Ledger Helper could not be updated.");
    assert_eq!(i.support_reference.as_deref(), Some("upd-op-18"));
    assert!(!admitted(&h));
    assert!(!starting(&h));
    assert_eq!(h.count(is_confirm), 0);
}

/// RTA-13: without an operation there is no support reference (no placeholder either).
#[test]
fn rta_13_terminal_without_support_reference() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_terminal(None));
    let i = interaction(&h);
    assert_eq!(i.support_reference, None);
    assert_eq!(
        i.notice.unwrap().message,
        "Ledger Helper could not be updated."
    );
    assert!(!admitted(&h));
    // An operation lacking support_reference gives none as well.
    let mut h = Harness::hydrated("s-1");
    let mut v = runtime_terminal(Some("x"));
    v["runtime_interaction"]["operation"]
        .as_object_mut()
        .unwrap()
        .remove("support_reference");
    answer_resolve(&mut h, "s-1", v);
    assert_eq!(interaction(&h).support_reference, None);
}

/// RTA-13, OI-3, SHR-5: every non-transient known state with can_submit false is terminal
/// blocked: locked, not starting, not confirmed, not polled.
#[test]
fn rta_13_every_terminal_state() {
    for (name, expected) in [
        ("update_required", InteractionState::UpdateRequired),
        ("update_failed", InteractionState::UpdateFailed),
        ("unavailable", InteractionState::Unavailable),
        ("ready", InteractionState::Ready),
        ("warning", InteractionState::Warning),
    ] {
        let mut h = Harness::hydrated("s-1");
        let mut v = runtime_terminal(Some("ref-1"));
        v["runtime_interaction"]["state"] = json!(name);
        // A token answer with can_submit false is still never confirmed.
        v["mode"] = json!("token");
        v["rpc_url"] = json!(rpc_url("s-1"));
        v["token"] = json!(RUNTIME_TOKEN);
        answer_resolve(&mut h, "s-1", v);
        assert_eq!(state(&h), expected, "{name}");
        assert!(!admitted(&h), "{name}");
        assert!(!starting(&h), "{name}");
        let mark = h.mark();
        h.advance(300_000);
        assert_eq!(runtime_since(&h, mark), 0, "{name}");
        assert_eq!(h.count(is_confirm), 0, "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// RTA-14 to RTA-18: the Agent confirmation
// ---------------------------------------------------------------------------------------------

/// RTA-14, INV-11: a ready decision is confirmed at once with GET {rpc_url}/api/chat to the Agent
/// runtime, carrying the runtime token (never the person's credential), Accept JSON, no cache,
/// and no body.
#[test]
fn rta_14_confirmation_request_shape() {
    let mut h = Harness::hydrated("s-1");
    let mark = h.mark();
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert_eq!(confirms_since(&h, mark), 1, "in the same step");
    let id = h.confirm_request("s-1");
    let sent = h.request(id);
    assert_eq!(
        sent.call,
        ApiCall::ConfirmAgent {
            session_uid: "s-1".into(),
            rpc_url: rpc_url("s-1"),
        }
    );
    let req = &sent.request;
    assert_eq!(req.method, Method::Get);
    assert_eq!(req.target, Target::AgentRuntime);
    assert_eq!(req.url(), "https://rt.test/agents/s-1/api/chat");
    assert_eq!(
        req.header("Authorization"),
        Some(format!("Bearer {RUNTIME_TOKEN}").as_str())
    );
    assert_eq!(req.header("Accept"), Some("application/json"));
    assert_eq!(req.header("Cache-Control"), Some("no-cache"));
    assert_eq!(req.body, None);
    assert!(
        !format!("{:?}", req.headers).contains("platform-token-secret"),
        "the person's credential never reaches the runtime"
    );
    assert!(
        req.headers
            .iter()
            .all(|hd| !hd.value().contains("platform-token-secret"))
    );
}

/// RTA-14: a trailing slash on rpc_url does not double the slash of /api/chat.
#[test]
fn rta_14_rpc_url_trailing_slash() {
    let mut h = Harness::hydrated("s-1");
    let mut v = runtime_ready("s-1");
    v["rpc_url"] = json!("https://rt.test/agents/s-1/");
    answer_resolve(&mut h, "s-1", v);
    let id = h.confirm_request("s-1");
    assert_eq!(
        h.request(id).request.url(),
        "https://rt.test/agents/s-1/api/chat"
    );
}

/// RTA-14, OI-9: within 15 s of a serving answer from the same chat URL the decision takes
/// effect without a request (age 14 999 ms); at 15 000 ms the Agent is asked again.
#[test]
fn rta_14_fifteen_second_memory_boundary() {
    let mut h = confirmed("s-1");
    h.advance(14_999);
    let mark = h.mark();
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert_eq!(confirms_since(&h, mark), 0, "remembered at 14 999 ms");
    assert_eq!(state(&h), InteractionState::Ready);
    assert!(admitted(&h));

    let mut h = confirmed("s-1");
    h.advance(15_000);
    let mark = h.mark();
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert_eq!(confirms_since(&h, mark), 1, "forgotten at 15 000 ms");
}

/// RTA-14, OI-9: the memory belongs to the chat URL: a ready answer naming another URL is
/// confirmed, and a remembered URL is reused even for another session's decision.
#[test]
fn rta_14_memory_keyed_by_chat_url() {
    let mut h = confirmed("s-1");
    h.advance(1000);
    let mark = h.mark();
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    let mut v = runtime_ready("s-1");
    v["rpc_url"] = json!("https://rt.test/agents/other");
    answer_resolve(&mut h, "s-1", v);
    assert_eq!(confirms_since(&h, mark), 1);
    let id = h.confirm_request("s-1");
    assert_eq!(
        h.request(id).request.url(),
        "https://rt.test/agents/other/api/chat"
    );
    // A second session whose Agent answers at s-1's chat URL is taken without a request.
    let mut h = confirmed("s-1");
    h.advance(1000);
    h.requested(Some("s-2"));
    h.hydrate("s-2", AGENT);
    let mark = h.mark();
    let mut v = runtime_ready("s-2");
    v["rpc_url"] = json!(rpc_url("s-1"));
    answer_resolve(&mut h, "s-2", v);
    assert_eq!(confirms_since(&h, mark), 0);
    assert_eq!(state(&h), InteractionState::Ready);
    assert!(admitted(&h));
}

/// RTA-15: a transient or terminal decision never triggers a confirmation, even when it carries
/// an rpc_url and a token, and it is never turned into a ready one.
#[test]
fn rta_15_only_ready_decisions_are_confirmed() {
    for body in [
        runtime_transient("checking", Some(1000)),
        runtime_transient("starting", Some(1000)),
        runtime_transient("waking", Some(1000)),
        runtime_transient("updating", Some(1000)),
        runtime_terminal(Some("r")),
    ] {
        let mut h = Harness::hydrated("s-1");
        let mut v = body;
        v["mode"] = json!("token");
        v["rpc_url"] = json!(rpc_url("s-1"));
        v["token"] = json!(RUNTIME_TOKEN);
        let expected = v["runtime_interaction"]["state"].clone();
        answer_resolve(&mut h, "s-1", v);
        h.advance(5000);
        assert_eq!(h.count(is_confirm), 0);
        let i = interaction(&h);
        assert!(!i.can_submit);
        assert_eq!(json!(i.state), expected);
        assert!(!admitted(&h));
    }
}

/// RTA-15, OI-3: a can_submit answer with mode "unavailable" is never confirmed and never admits.
#[test]
fn rta_15_unavailable_mode_not_confirmed() {
    let mut h = Harness::hydrated("s-1");
    let mut v = runtime_ready("s-1");
    v["mode"] = json!("unavailable");
    answer_resolve(&mut h, "s-1", v);
    h.advance(10_000);
    assert_eq!(h.count(is_confirm), 0);
    assert!(!admitted(&h));
    assert!(!starting(&h));
}

/// RTA-15, RTA-6, OI-3 (Proposed): a can_submit decision in a state other than ready (warning,
/// or even starting) is ready: confirmed, then admitting, and not transient.
#[test]
fn rta_15_can_submit_in_other_states_is_confirmed() {
    for name in ["warning", "starting", "checking"] {
        let mut h = Harness::hydrated("s-1");
        let mut v = runtime_ready("s-1");
        v["runtime_interaction"]["state"] = json!(name);
        answer_resolve(&mut h, "s-1", v);
        answer_confirm(&mut h, "s-1", 200);
        assert!(interaction(&h).can_submit, "{name}");
        assert!(admitted(&h), "{name}");
        assert!(!starting(&h), "{name}");
    }
}

/// RTA-16: any HTTP answer but 502, 503 and 504 means the Agent serves.
#[test]
fn rta_16_any_other_status_serves() {
    for status in [
        200, 201, 204, 301, 400, 401, 403, 404, 405, 429, 500, 501, 505,
    ] {
        let mut h = Harness::hydrated("s-1");
        h.runtime_ready("s-1", status);
        assert_eq!(state(&h), InteractionState::Ready, "{status}");
        assert!(admitted(&h), "{status}");
        assert!(!starting(&h), "{status}");
        let mark = h.mark();
        h.advance(300_000);
        assert_eq!(runtime_since(&h, mark), 0, "{status}: settled");
    }
}

/// RTA-16: a serving answer whose body is not JSON (or is empty) serves all the same.
#[test]
fn rta_16_confirmation_body_ignored() {
    for body in [&b""[..], b"<html>oops</html>", b"{not json", b"\xff\xfe"] {
        let mut h = Harness::hydrated("s-1");
        answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
        let id = h.confirm_request("s-1");
        h.reply_raw(id, 200, Some("text/html"), body, Some(1));
        assert!(admitted(&h));
    }
}

/// The waking decision the engine builds (RTA-17, OI-5, OI-6) for the Agent "Ledger Helper".
fn assert_client_waking(h: &Harness, agent: Option<&str>) {
    let i = interaction(h);
    assert_eq!(i.state, InteractionState::Waking);
    assert!(!i.can_submit);
    assert_eq!(i.retry_after_ms, Some(3000));
    assert_eq!(i.support_reference, None);
    let n = i.notice.unwrap();
    assert_eq!(n.code, "agent_runtime_client_waking");
    assert_eq!(n.severity, Severity::Info);
    let (title, message) = match agent {
        Some(a) => (
            format!("Starting {a}"),
            format!("{a} was idle and is starting now. You can write as soon as it is ready."),
        ),
        None => (
            "Starting the agent".to_owned(),
            "The agent was idle and is starting now. You can write as soon as it is ready."
                .to_owned(),
        ),
    };
    assert_eq!(n.title, title);
    assert_eq!(n.message, message);
    let p = h.snapshot().active_runtime_presence.unwrap();
    assert_eq!(p.phase, PresencePhase::Starting);
    assert_eq!(p.detail, message);
    assert_eq!(p.desired_replicas, None);
    assert_eq!(p.actual_replicas, None);
    let w = p.wake.expect("a wake");
    assert!(w.operation_uid.starts_with("client-wake-"), "{w:?}");
    assert_eq!(w.state, "in_progress");
    assert!(!admitted(h));
    assert!(starting(h));
}

/// RTA-17, RTA-20: no answer, 502, 503 or 504 to the first confirmation makes the decision the
/// engine's own waking one (not the still-checking notice): locked and starting.
#[test]
fn rta_17_not_serving_builds_waking() {
    for status in [None, Some(502), Some(503), Some(504)] {
        let mut h = Harness::hydrated("s-1");
        answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
        let id = h.confirm_request("s-1");
        match status {
            None => h.fail(id),
            Some(s) => h.reply_raw(id, s, Some("text/html"), b"<h1>Bad gateway</h1>", None),
        };
        assert_client_waking(&h, Some("Ledger Helper"));
        no_notify(&h);
    }
}

/// RTA-17, OI-5: the first confirmation gives up after exactly 3 s (still open at 2 999 ms),
/// which counts as no answer: the request is aborted and the decision becomes waking.
#[test]
fn rta_17_confirmation_gives_up_after_three_seconds() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    let id = h.confirm_request("s-1");
    h.advance(2999);
    assert!(!h.was_aborted(id));
    assert_silent_checking(&h);
    h.advance(1);
    assert!(h.was_aborted(id));
    assert_client_waking(&h, Some("Ledger Helper"));
    // A late answer to the abandoned request changes nothing.
    h.reply_raw(id, 200, None, b"", None);
    assert_client_waking(&h, Some("Ledger Helper"));
}

/// RTA-17, OI-5, OI-6: the built wake: operation_uid "client-wake-{ms}", requested_at the
/// wall-clock time of the first failed confirmation and deadline_at five minutes later; with an
/// unknown Agent name the texts say "the agent".
#[test]
fn rta_17_built_wake_wall_clock_fields() {
    let mut h = hydrated_with_wall_clock("s-1");
    h.advance(1000);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    h.advance(3000);
    assert_client_waking(&h, Some("Ledger Helper"));
    let w = h.snapshot().active_runtime_presence.unwrap().wake.unwrap();
    assert_eq!(
        w.operation_uid,
        format!("client-wake-{}", START_UNIX_MS + 4000)
    );
    assert_eq!(w.requested_at, "2026-10-02T08:00:04.000Z");
    assert_eq!(w.deadline_at, "2026-10-02T08:05:04.000Z");
}

/// RTA-17, RTA-20, OI-6: with no Agent name on the record, the built notice says "the agent".
#[test]
fn rta_17_unknown_agent_name() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-1"));
    let mut r = record("s-1", AGENT, ENV, 0);
    r.as_object_mut().unwrap().remove("agent_name");
    h.answer_detail("s-1", r);
    h.answer_history("s-1");
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    let id = h.confirm_request("s-1");
    h.fail(id);
    assert_client_waking(&h, None);
}

/// RTA-18, OI-5: while the built wake runs, a round (resolve, then a confirmation) starts every
/// 3 s; its confirmation gives up after 20 s (open at 19 999 ms); requested_at stays the time of
/// the first failure; the first serving answer makes the decision ready.
#[test]
fn rta_18_waking_rounds_until_the_agent_serves() {
    let mut h = hydrated_with_wall_clock("s-1");
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    let id = h.confirm_request("s-1");
    h.fail(id); // t = 0: first failure
    assert_client_waking(&h, Some("Ledger Helper"));
    let first_wake = h.snapshot().active_runtime_presence.unwrap().wake.unwrap();
    assert_eq!(first_wake.requested_at, "2026-10-02T08:00:00.000Z");
    assert_eq!(first_wake.deadline_at, "2026-10-02T08:05:00.000Z");

    // Round 1 at +3000: resolve, ready, confirmation with the 20 s limit.
    expect_poll_after(&mut h, "s-1", 3000);
    let mark = h.mark();
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert_eq!(confirms_since(&h, mark), 1, "a wake always asks the Agent");
    let id = h.confirm_request("s-1");
    h.advance(19_999);
    assert!(!h.was_aborted(id), "the 20 s limit while waking");
    assert_eq!(state(&h), InteractionState::Waking);
    h.advance(1);
    assert!(h.was_aborted(id));
    assert_client_waking(&h, Some("Ledger Helper"));
    let wake = h.snapshot().active_runtime_presence.unwrap().wake.unwrap();
    assert_eq!(wake, first_wake, "one wake clock per chat URL");

    // Round 2 at +3000 again: the Agent answers 503.
    expect_poll_after(&mut h, "s-1", 3000);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    answer_confirm(&mut h, "s-1", 503);
    assert_eq!(
        h.snapshot().active_runtime_presence.unwrap().wake.unwrap(),
        first_wake
    );

    // Round 3: the Agent serves; the decision becomes ready and polling stops.
    expect_poll_after(&mut h, "s-1", 3000);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    answer_confirm(&mut h, "s-1", 200);
    assert_eq!(state(&h), InteractionState::Ready);
    assert!(admitted(&h));
    assert!(!starting(&h));
    let mark = h.mark();
    h.advance(300_000);
    assert_eq!(runtime_since(&h, mark), 0);
}

/// RTA-18, OI-5: a serving answer clears the wake clock: the next failure opens a fresh clock,
/// and its confirmation gives up after 3 s again.
#[test]
fn rta_18_serving_clears_the_wake_clock() {
    let mut h = hydrated_with_wall_clock("s-1");
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    let id = h.confirm_request("s-1");
    h.fail(id); // first wake at t = 0
    expect_poll_after(&mut h, "s-1", 3000);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    answer_confirm(&mut h, "s-1", 200); // serving at 3000: the clock is cleared
    h.advance(20_000); // past the 15 s memory
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    let id = h.confirm_request("s-1");
    h.advance(2999);
    assert!(!h.was_aborted(id));
    assert!(admitted(&h), "the ready decision stays in force meanwhile");
    h.advance(1);
    assert!(h.was_aborted(id), "3 s limit: no wake is followed any more");
    assert_client_waking(&h, Some("Ledger Helper"));
    let wake = h.snapshot().active_runtime_presence.unwrap().wake.unwrap();
    // 23 000 ms of engine time + 3 000 ms limit = 26 s after the start.
    assert_eq!(wake.requested_at, "2026-10-02T08:00:26.000Z");
    assert_eq!(
        wake.operation_uid,
        format!("client-wake-{}", START_UNIX_MS + 26_000)
    );
}

/// RTA-18, OI-9: the memory belongs to each chat URL: a wake started by a failure at another URL
/// leaves s-1's remembered serving answer in use (the next round takes it without a request),
/// and a wake at s-1's own URL asks the Agent in every round.
#[test]
fn rta_18_memory_per_chat_url_through_a_wake() {
    let mut h = confirmed("s-1");
    h.advance(15_000);
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    answer_confirm(&mut h, "s-1", 200); // serving at 15 000
    h.advance(1000);
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    let mark = h.mark();
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert_eq!(confirms_since(&h, mark), 0, "remembered");
    // Another URL on the same decision fails; then back to s-1's URL: still remembered.
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    let mut v = runtime_ready("s-1");
    v["rpc_url"] = json!("https://rt.test/agents/other");
    answer_resolve(&mut h, "s-1", v);
    answer_confirm(&mut h, "s-1", 504);
    assert_eq!(state(&h), InteractionState::Waking);
    expect_poll_after(&mut h, "s-1", 3000);
    let mark = h.mark();
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert_eq!(
        confirms_since(&h, mark),
        0,
        "s-1's chat URL is still remembered (age 4000 ms)"
    );
    assert!(admitted(&h));
    // Now s-1's own URL fails (memory past 15 s), and the next round within 15 s asks again.
    h.advance(12_000);
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    answer_confirm(&mut h, "s-1", 502);
    expect_poll_after(&mut h, "s-1", 3000);
    let mark = h.mark();
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert_eq!(confirms_since(&h, mark), 1);
}

// ---------------------------------------------------------------------------------------------
// RTA-19 to RTA-24: coming into view, page return, focus
// ---------------------------------------------------------------------------------------------

/// RTA-19: until the first confirmation returns, a newly selected session shows checking with
/// no notice, even when resolve-runtime-access already answered ready.
#[test]
fn rta_19_checking_until_first_confirmation() {
    let mut h = Harness::hydrated("s-1");
    assert_silent_checking(&h);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    h.advance(2000);
    assert_silent_checking(&h);
    assert_eq!(h.snapshot().active_runtime_presence, None);
    answer_confirm(&mut h, "s-1", 200);
    assert!(admitted(&h));
}

/// RTA-19: a first answer that is transient or terminal is shown as it is.
#[test]
fn rta_19_first_transient_or_terminal_shown_as_is() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("starting", Some(1000)));
    assert_eq!(state(&h), InteractionState::Starting);
    assert_eq!(interaction(&h).notice.unwrap().code, "agent_waking");
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_terminal(None));
    assert_eq!(state(&h), InteractionState::UpdateFailed);
}

/// RTA-19, RTA-24: a session coming back into view with a decision younger than one minute
/// (59 999 ms) keeps it, with no request.
#[test]
fn rta_19_young_decision_kept_when_coming_back() {
    let mut h = confirmed("s-1");
    h.requested(Some("s-2"));
    h.hydrate("s-2", AGENT);
    assert_silent_checking(&h);
    answer_resolve(&mut h, "s-2", runtime_terminal(None));
    h.advance(59_999);
    let mark = h.mark();
    h.requested(Some("s-1"));
    assert_eq!(runtime_since(&h, mark), 0);
    assert_eq!(state(&h), InteractionState::Ready);
    h.hydrate("s-1", AGENT);
    assert!(admitted(&h));
}

/// RTA-19, RTA-21: a session selected for the first time gets its own silent checking decision,
/// not the decision of the session shown before.
#[test]
fn rta_19_new_session_does_not_inherit_decision() {
    let mut h = confirmed("s-1");
    h.requested(Some("s-2"));
    assert_silent_checking(&h);
    h.runtime_request("s-2");
}

/// RTA-20, OI-6: a failing first check (HTTP error) keeps checking, locked, and adds the
/// still-checking notice naming the session's Agent; no notify.
#[test]
fn rta_20_failing_first_check_adds_still_checking_notice() {
    for fail in [None, Some(500u16), Some(401), Some(404)] {
        let mut h = Harness::hydrated("s-1");
        let id = h.runtime_request("s-1");
        match fail {
            None => h.fail(id),
            Some(s) => h.reply(id, s, json!({"detail": "nope"})),
        };
        let i = interaction(&h);
        assert_eq!(i.state, InteractionState::Checking);
        assert!(!i.can_submit);
        let n = i.notice.expect("the still-checking notice");
        assert_eq!(n.code, "agent_runtime_client_check_retrying");
        assert_eq!(n.severity, Severity::Warning);
        assert_eq!(n.title, "Still checking");
        assert_eq!(
            n.message,
            "Could not confirm that Ledger Helper is ready. Trying again."
        );
        assert!(!admitted(&h));
        assert!(starting(&h));
        no_notify(&h);
        // The notice stays through further failures and goes with the first real answer.
        expect_poll_after(&mut h, "s-1", 2000);
        let id = h.runtime_request("s-1");
        h.fail(id);
        assert_eq!(
            interaction(&h).notice.unwrap().code,
            "agent_runtime_client_check_retrying"
        );
        expect_poll_after(&mut h, "s-1", 4000);
        answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
        answer_confirm(&mut h, "s-1", 200);
        assert_eq!(interaction(&h).notice, None);
        assert!(admitted(&h));
    }
}

/// RTA-20, OI-6: with no Agent name on the record the notice says "the agent".
#[test]
fn rta_20_still_checking_unknown_agent() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-1"));
    let mut r = record("s-1", AGENT, ENV, 0);
    r["agent_name"] = Value::Null;
    h.answer_detail("s-1", r);
    h.answer_history("s-1");
    let id = h.runtime_request("s-1");
    h.reply(id, 500, json!({}));
    assert_eq!(
        interaction(&h).notice.unwrap().message,
        "Could not confirm that the agent is ready. Trying again."
    );
}

/// RTA-20, OI-6: a first check failing before the session's record is known says "the agent";
/// once the record names the Agent, the next failure names it.
#[test]
fn rta_20_still_checking_names_the_agent_once_known() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-1"));
    let id = h.runtime_request("s-1");
    h.reply(id, 503, json!({}));
    assert_eq!(
        interaction(&h).notice.unwrap().message,
        "Could not confirm that the agent is ready. Trying again."
    );
    h.hydrate("s-1", AGENT);
    expect_poll_after(&mut h, "s-1", 2000);
    let id = h.runtime_request("s-1");
    h.fail(id);
    assert_eq!(
        interaction(&h).notice.unwrap().message,
        "Could not confirm that Ledger Helper is ready. Trying again."
    );
}

/// RTA-20: a later failure (not the first check) does not add the still-checking notice.
#[test]
fn rta_20_later_failure_adds_no_notice() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("checking", Some(1000)));
    h.advance(1000);
    let id = h.runtime_request("s-1");
    h.reply(id, 500, json!({}));
    assert_eq!(interaction(&h).notice.unwrap().code, "agent_waking");
}

/// RTA-20: a first check abandoned because the chat was hidden is still the first check when
/// it is asked again: its failure adds the still-checking notice.
#[test]
fn rta_20_first_check_asked_again_after_hide() {
    let mut h = Harness::hydrated("s-1");
    h.visible(false);
    h.advance(1000);
    h.visible(true);
    let id = h.runtime_request("s-1");
    h.reply(id, 500, json!({}));
    let i = interaction(&h);
    assert_eq!(i.state, InteractionState::Checking);
    assert_eq!(
        i.notice.map(|n| n.code).as_deref(),
        Some("agent_runtime_client_check_retrying")
    );
}

/// RTA-21, RTA-24, OI-7, OI-8: coming back into view on a session whose decision is one minute
/// old (60 000 ms, inclusive) drops it to silent checking and runs a round; the confirmation is
/// made (the 15 s memory long expired) and the decision is ready again.
#[test]
fn rta_21_stale_decision_rechecked_when_selected_again() {
    let mut h = confirmed("s-1");
    h.requested(Some("s-2"));
    h.hydrate("s-2", AGENT);
    answer_resolve(&mut h, "s-2", runtime_terminal(None));
    h.advance(60_000);
    let mark = h.mark();
    h.requested(Some("s-1"));
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
    assert_silent_checking(&h);
    h.hydrate("s-1", AGENT);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert_silent_checking(&h);
    answer_confirm(&mut h, "s-1", 200);
    assert!(admitted(&h));
}

/// RTA-21, RTA-24: the chat becoming visible again on a session with a one-minute-old decision
/// re-checks it; at 59 999 ms it does not.
#[test]
fn rta_21_visibility_flip_boundary() {
    let mut h = confirmed("s-1");
    h.visible(false);
    h.advance(59_999);
    let mark = h.mark();
    h.visible(true);
    assert_eq!(runtime_since(&h, mark), 0);
    assert_eq!(state(&h), InteractionState::Ready);

    let mut h = confirmed("s-1");
    h.visible(false);
    h.advance(60_000);
    let mark = h.mark();
    h.visible(true);
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
    assert_silent_checking(&h);
}

/// RTA-21: a stale terminal decision is re-checked on coming into view too.
#[test]
fn rta_21_stale_terminal_rechecked() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_terminal(Some("r-1")));
    h.visible(false);
    h.advance(60_000);
    h.visible(true);
    assert_silent_checking(&h);
    h.runtime_request("s-1");
}

/// RTA-22, RTA-24, OI-7: the page shown again after 60 000 ms hidden with a decision 60 000 ms
/// old runs a background check: the ready decision stays in force (admission open) until the
/// answer arrives.
#[test]
fn rta_22_page_return_background_check() {
    let mut h = confirmed("s-1");
    h.input(Input::PageVisible(false));
    h.advance(60_000);
    let mark = h.mark();
    h.input(Input::PageVisible(true));
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
    assert_eq!(state(&h), InteractionState::Ready);
    assert!(admitted(&h), "background: the decision stays in force");
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert!(admitted(&h));
    answer_confirm(&mut h, "s-1", 200);
    assert!(admitted(&h));
    // A non-ready answer locks the composer.
    let mut h = confirmed("s-1");
    h.input(Input::PageVisible(false));
    h.advance(61_000);
    h.input(Input::PageVisible(true));
    answer_resolve(&mut h, "s-1", runtime_transient("waking", Some(1000)));
    assert!(!admitted(&h));
    assert!(starting(&h));
}

/// RTA-22, RTA-17: a background check whose confirmation fails locks with the waking decision.
#[test]
fn rta_22_background_check_confirmation_fails() {
    let mut h = confirmed("s-1");
    h.input(Input::PageVisible(false));
    h.advance(60_000);
    h.input(Input::PageVisible(true));
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert!(admitted(&h));
    answer_confirm(&mut h, "s-1", 503);
    assert_client_waking(&h, Some("Ledger Helper"));
}

/// RTA-24: a page hidden for 59 999 ms triggers nothing even with an old decision.
#[test]
fn rta_24_short_hide_no_check() {
    let mut h = confirmed("s-1");
    h.advance(1);
    h.input(Input::PageVisible(false));
    h.advance(59_999);
    let mark = h.mark();
    h.input(Input::PageVisible(true));
    assert_eq!(runtime_since(&h, mark), 0);
    assert!(admitted(&h));
}

/// RTA-24: a page hidden 60 000 ms with a decision only 59 999 ms old triggers nothing.
#[test]
fn rta_24_young_decision_no_check_on_page_return() {
    let mut h = Harness::hydrated("s-1");
    h.input(Input::PageVisible(false)); // hidden at 0, the first check still in flight
    h.advance(1);
    h.runtime_ready("s-1", 200); // confirmed at 1
    h.advance(59_999);
    let mark = h.mark();
    h.input(Input::PageVisible(true)); // hidden 60 000 ms, decision 59 999 ms old
    assert_eq!(runtime_since(&h, mark), 0);
    assert!(admitted(&h));
}

/// RTA-23, RTA-24: revalidateStaleRuntimeAccess() runs a background round for a decision one
/// minute old; at 59 999 ms it sends nothing.
#[test]
fn rta_23_revalidate_boundary() {
    let mut h = confirmed("s-1");
    h.advance(59_999);
    let mark = h.mark();
    h.command(Command::RevalidateStaleRuntimeAccess);
    assert_eq!(runtime_since(&h, mark), 0);
    h.advance(1);
    h.command(Command::RevalidateStaleRuntimeAccess);
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
    assert!(admitted(&h), "background: the decision stays in force");
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert_eq!(confirms_since(&h, mark), 1, "past the 15 s memory");
    answer_confirm(&mut h, "s-1", 200);
    assert!(admitted(&h));
    // The decision is young again.
    h.advance(59_999);
    let mark = h.mark();
    h.command(Command::RevalidateStaleRuntimeAccess);
    assert_eq!(runtime_since(&h, mark), 0);
    // And one minute after the last focus check, a new one may start.
    h.advance(1);
    h.command(Command::RevalidateStaleRuntimeAccess);
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
}

/// RTA-23: a non-ready answer to the focus check locks the composer.
#[test]
fn rta_23_revalidate_locks_on_non_ready_answer() {
    let mut h = confirmed("s-1");
    h.advance(60_000);
    h.command(Command::RevalidateStaleRuntimeAccess);
    answer_resolve(&mut h, "s-1", runtime_terminal(Some("ref-9")));
    assert!(!admitted(&h));
    assert_eq!(interaction(&h).support_reference.as_deref(), Some("ref-9"));
}

/// RTA-23: at most one focus check starts per minute, even while the decision stays old.
#[test]
fn rta_23_at_most_one_per_minute() {
    let mut h = confirmed("s-1");
    h.advance(60_000);
    h.command(Command::RevalidateStaleRuntimeAccess);
    let id = h.runtime_request("s-1");
    h.reply(id, 500, json!({})); // the decision stays old; a retry is due at +2000
    h.advance(1000);
    let mark = h.mark();
    h.command(Command::RevalidateStaleRuntimeAccess);
    assert_eq!(
        runtime_since(&h, mark),
        0,
        "a second focus check within the minute"
    );
    assert!(
        admitted(&h),
        "the ready decision is kept through the failure"
    );
}

/// RTA-23, RTA-24: revalidation with a young decision does nothing, whatever its kind.
#[test]
fn rta_24_revalidate_young_transient_or_terminal() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_terminal(None));
    h.advance(59_999);
    let mark = h.mark();
    h.command(Command::RevalidateStaleRuntimeAccess);
    assert_eq!(runtime_since(&h, mark), 0);
    h.advance(1);
    h.command(Command::RevalidateStaleRuntimeAccess);
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
}

// ---------------------------------------------------------------------------------------------
// RTA-25, RTA-26: launched sessions
// ---------------------------------------------------------------------------------------------

/// Launches AGENT2 on a visible chat whose list loaded, and answers the lookup with `uid`.
fn launched(uid: &str) -> Harness {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[record("s-1", AGENT, ENV, 40)]);
    h.launch(AGENT2, 1);
    let id = h.expect_pending("agent lookup", |c| {
        matches!(c, ApiCall::ListSessions { agent: Some(_), .. })
    });
    h.reply(id, 200, page(&[record(uid, AGENT2, ENV, 30)]));
    assert_eq!(h.current().as_deref(), Some(uid));
    assert!(h.snapshot().is_direct_launch_session);
    h
}

/// RTA-25, OI-17: a launched session gets no resolve-runtime-access and no confirmation before
/// its first send; no decision is shown, it is not starting, and admission follows readiness.
#[test]
fn rta_25_launched_session_not_checked() {
    let mut h = launched("s-L");
    let mark_before = h
        .sent()
        .iter()
        .filter(|s| is_resolve(&s.call, "s-L"))
        .count();
    assert_eq!(mark_before, 0);
    assert_eq!(h.snapshot().active_runtime_interaction, None);
    assert_eq!(h.snapshot().active_runtime_presence, None);
    assert!(!starting(&h));
    assert!(!admitted(&h), "readiness still loading");
    h.hydrate("s-L", AGENT2);
    assert!(admitted(&h), "readiness alone");
    h.advance(120_000);
    h.visible(false);
    h.visible(true);
    h.command(Command::RevalidateStaleRuntimeAccess);
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    h.input(Input::PageVisible(false));
    h.advance(60_000);
    h.input(Input::PageVisible(true));
    assert_eq!(h.count(|c| is_resolve(c, "s-L")), 0);
    assert_eq!(h.count(is_confirm), 0);
    assert_eq!(h.snapshot().active_runtime_interaction, None);
}

/// RTA-25: leaving the launched session for an ordinary one checks that one as usual.
#[test]
fn rta_25_ordinary_selection_after_launch_is_checked() {
    let mut h = launched("s-L");
    h.requested(Some("s-1"));
    assert!(!h.snapshot().is_direct_launch_session);
    h.runtime_request("s-1");
    assert_silent_checking(&h);
}

/// RTA-26: a launched session does not wait for the latest-sessions read: it is selected while
/// that read is still open.
#[test]
fn rta_26_launched_session_does_not_wait_for_the_list() {
    let mut h = Harness::visible_in_env();
    let list = h.list_request();
    h.launch(AGENT2, 1);
    let id = h.expect_pending("agent lookup", |c| {
        matches!(c, ApiCall::ListSessions { agent: Some(_), .. })
    });
    h.reply(id, 200, page(&[record("s-L", AGENT2, ENV, 30)]));
    assert!(h.pending(|c| matches!(c, ApiCall::ListSessions { agent: None, .. })) == Some(list));
    assert_eq!(
        h.current().as_deref(),
        Some("s-L"),
        "not waiting for the list"
    );
    assert!(h.snapshot().is_direct_launch_session);
}

/// RTA-26, RTA-25: a launched session selected while the chat is hidden triggers no
/// latest-sessions read (and no runtime check) when the chat becomes visible; leaving it for the
/// ordinary surface does read the list.
#[test]
fn rta_26_launched_session_triggers_no_list_read() {
    let plain_lists =
        |h: &Harness| h.count(|c| matches!(c, ApiCall::ListSessions { agent: None, .. }));
    let mut h = Harness::new();
    h.person(spec_tests::fixtures::USER);
    h.env(Some(ENV));
    h.command(Command::StartAgentSessionById {
        agent_id: AGENT2.into(),
        label: None,
    });
    let id = h.expect_pending("start-new-session", |c| {
        matches!(c, ApiCall::StartNewSession { .. })
    });
    h.reply(id, 201, record("s-L", AGENT2, ENV, 50));
    assert!(h.snapshot().is_direct_launch_session);
    h.visible(true);
    h.hydrate("s-L", AGENT2);
    h.visible(false);
    h.advance(120_000);
    h.visible(true);
    assert_eq!(
        plain_lists(&h),
        0,
        "no latest-sessions read for a launched session"
    );
    assert_eq!(h.count(is_runtime_call), 0);
    assert!(admitted(&h), "readiness alone");
    // Leaving the launched session: the ordinary surface reads the list.
    h.command(Command::RestoreDefaultSessionSelection);
    assert_eq!(plain_lists(&h), 1);
}

// ---------------------------------------------------------------------------------------------
// RTA-27: refresh
// ---------------------------------------------------------------------------------------------

/// RTA-27: refresh emits exactly one resolve at once whatever the decision: a young ready one,
/// a terminal one, a transient one between polls.
#[test]
fn rta_27_refresh_asks_at_once() {
    let mut h = confirmed("s-1");
    h.advance(10);
    let mark = h.mark();
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
    assert_eq!(runtime_since(&h, mark), 1);
    assert!(admitted(&h), "the decision stays while the refresh runs");

    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_terminal(Some("r")));
    let mark = h.mark();
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert_eq!(confirms_since(&h, mark), 1, "a ready answer is confirmed");
    answer_confirm(&mut h, "s-1", 200);
    assert!(admitted(&h));
}

/// RTA-27, OI-8: a poll request in flight is aborted, not joined; its late answer changes
/// nothing; polling continues from the refresh's answer.
#[test]
fn rta_27_refresh_aborts_poll_in_flight() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("waking", Some(1000)));
    h.advance(1000);
    let poll = h.runtime_request("s-1");
    let mark = h.mark();
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    assert!(h.was_aborted(poll));
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
    let refresh = h.runtime_request("s-1");
    assert_ne!(refresh, poll);
    // The aborted poll's late answer changes nothing.
    h.reply(poll, 200, runtime_terminal(Some("late")));
    assert_eq!(state(&h), InteractionState::Waking);
    h.reply(refresh, 200, runtime_transient("updating", Some(4000)));
    assert_eq!(state(&h), InteractionState::Updating);
    expect_poll_after(&mut h, "s-1", 4000);
}

/// RTA-27: a refresh while the confirmation is in flight aborts it and starts a new round.
#[test]
fn rta_27_refresh_during_confirmation() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    let confirm = h.confirm_request("s-1");
    let mark = h.mark();
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    assert!(h.was_aborted(confirm));
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
    h.runtime_ready("s-1", 200);
    assert!(admitted(&h));
}

/// RTA-27, OI-1: a failing refresh emits no notify and is retried with backoff from the
/// interval in force (2 s after a settled decision).
#[test]
fn rta_27_refresh_failure_is_silent() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_terminal(Some("r")));
    h.advance(5000);
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    let id = h.runtime_request("s-1");
    h.reply(id, 500, json!({"detail": "boom"}));
    no_notify(&h);
    assert_eq!(state(&h), InteractionState::UpdateFailed, "decision kept");
    assert_eq!(interaction(&h).support_reference.as_deref(), Some("r"));
    expect_poll_after(&mut h, "s-1", 2000);
}

// ---------------------------------------------------------------------------------------------
// SHR-5, SHR-11, SHR-12, FAIL-14, INV-6, INV-11
// ---------------------------------------------------------------------------------------------

/// SHR-5: isAssistantRuntimeStarting is false with no decision (hidden, nothing selected), true
/// for the silent checking decision, false once ready.
#[test]
fn shr_5_starting_tracks_the_decision() {
    let mut h = Harness::visible_in_env();
    assert_eq!(h.snapshot().active_runtime_interaction, None);
    assert!(!starting(&h));
    h.requested(Some("s-1"));
    assert!(starting(&h));
    h.hydrate("s-1", AGENT);
    h.runtime_ready("s-1", 200);
    assert!(!starting(&h));
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    answer_resolve(&mut h, "s-1", runtime_transient("updating", Some(1000)));
    assert!(starting(&h));
    h.advance(1000);
    answer_resolve(&mut h, "s-1", runtime_terminal(None));
    assert!(!starting(&h));
}

/// SHR-11: while the transcript is visible and the decision is transient, the thread stays in
/// place and readiness ready, while the composer is locked.
#[test]
fn shr_11_transcript_stays_readable_while_transient() {
    let mut h = confirmed("s-1");
    let thread = h.snapshot().thread;
    assert_eq!(thread.len(), 2);
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    answer_resolve(&mut h, "s-1", runtime_transient("waking", Some(3000)));
    let s = h.snapshot();
    assert_eq!(s.thread, thread);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Ready);
    assert!(s.is_assistant_runtime_starting);
    assert!(!s.composer_admission);
    // The engine's own waking decision too (past the 15 s memory, the Agent does not answer).
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    answer_resolve(&mut h, "s-1", runtime_transient("waking", Some(20_000)));
    h.advance(20_000);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    h.advance(3000);
    let s = h.snapshot();
    assert_eq!(
        s.active_runtime_interaction.unwrap().state,
        InteractionState::Waking
    );
    assert_eq!(s.thread, thread);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Ready);
    assert!(!s.composer_admission);
}

/// SHR-12, INV-6: answers that differ only in runtime_presence change neither admission nor
/// the runtime notice, for a ready and for a transient decision.
#[test]
fn inv_6_presence_only_changes() {
    let mut h = confirmed("s-1");
    for phase in ["idle", "failed", "not_deployed", "serving", "pulling_image"] {
        h.advance(16_000); // past the memory: each answer is confirmed again
        h.command(Command::RefreshActiveSessionRuntimeAccess);
        answer_resolve(&mut h, "s-1", ready_with_presence("s-1", phase));
        answer_confirm(&mut h, "s-1", 200);
        assert_eq!(
            h.snapshot().active_runtime_presence.unwrap().phase.clone(),
            {
                let v: PresencePhase = match phase {
                    "idle" => PresencePhase::Idle,
                    "failed" => PresencePhase::Failed,
                    "not_deployed" => PresencePhase::NotDeployed,
                    "serving" => PresencePhase::Serving,
                    _ => PresencePhase::PullingImage,
                };
                v
            }
        );
        assert!(admitted(&h), "{phase}");
        assert_eq!(interaction(&h).notice, None, "{phase}");
    }
    let mut h = Harness::hydrated("s-1");
    answer_resolve(
        &mut h,
        "s-1",
        transient_with_presence("waking", "provisioning"),
    );
    let notice = interaction(&h).notice;
    for phase in ["serving", "idle", "failed", "starting"] {
        h.advance(2000);
        answer_resolve(&mut h, "s-1", transient_with_presence("waking", phase));
        assert_eq!(interaction(&h).notice, notice, "{phase}");
        assert!(!admitted(&h), "{phase}");
        assert!(starting(&h), "{phase}");
    }
    // A presence that reports a wake past its deadline changes nothing either.
    h.advance(2000);
    let mut v = transient_with_presence("waking", "starting");
    v["runtime_presence"]["wake"] = json!({"operation_uid": "op-1", "state": "expired",
        "requested_at": "2020-01-01T00:00:00Z", "deadline_at": "2020-01-01T00:05:00Z"});
    answer_resolve(&mut h, "s-1", v);
    assert_eq!(interaction(&h).notice, notice);
    assert!(!admitted(&h));
}

/// FAIL-14: a transient decision (the platform's or the engine's own waking one) changes
/// neither activeSessionReadiness nor defaultSessionStatus and emits no notify.
#[test]
fn fail_14_transient_is_not_a_failure() {
    let mut h = Harness::default_state();
    let id = h.get_or_create_request();
    h.reply(id, 200, handle_record("s-def", AGENT, ENV, HANDLE, 1));
    h.answer_detail("s-def", handle_record("s-def", AGENT, ENV, HANDLE, 1));
    h.answer_history("s-def");
    let before = h.snapshot();
    assert_eq!(before.default_session_status, DefaultSessionStatus::Ready);
    assert_eq!(
        before.active_session_readiness.status,
        ReadinessStatus::Ready
    );
    answer_resolve(&mut h, "s-def", runtime_transient("waking", Some(1000)));
    let s = h.snapshot();
    assert!(s.is_assistant_runtime_starting);
    assert_eq!(s.default_session_status, DefaultSessionStatus::Ready);
    assert_eq!(s.default_session_error, None);
    assert_eq!(s.active_session_readiness, before.active_session_readiness);
    assert_eq!(s.session_notice, None);
    h.advance(1000);
    answer_resolve(&mut h, "s-def", runtime_ready("s-def"));
    answer_confirm(&mut h, "s-def", 503);
    let s = h.snapshot();
    assert_eq!(
        s.active_runtime_interaction.unwrap().state,
        InteractionState::Waking
    );
    assert_eq!(s.default_session_status, DefaultSessionStatus::Ready);
    assert_eq!(s.active_session_readiness, before.active_session_readiness);
    assert_eq!(s.session_notice, None);
    h.advance(3000);
    let id = h.runtime_request("s-def");
    h.fail(id);
    assert_eq!(
        h.snapshot().active_session_readiness,
        before.active_session_readiness
    );
    no_notify(&h);
}

/// INV-11: runtime access belongs to one session: s-2's confirmation goes to s-2's rpc_url with
/// s-2's token, and s-1's access is never used for s-2.
#[test]
fn inv_11_access_used_only_for_its_session() {
    let mut h = confirmed("s-1");
    h.advance(1000);
    h.requested(Some("s-2"));
    h.hydrate("s-2", AGENT);
    let mut v = runtime_ready("s-2");
    v["token"] = json!("rt-token-for-s2");
    answer_resolve(&mut h, "s-2", v);
    let id = h.confirm_request("s-2");
    let req = &h.request(id).request;
    assert_eq!(req.url(), "https://rt.test/agents/s-2/api/chat");
    assert_eq!(req.header("Authorization"), Some("Bearer rt-token-for-s2"));
    h.reply_raw(id, 200, None, b"", None);
    for s in h.sent() {
        if let ApiCall::ConfirmAgent {
            session_uid,
            rpc_url: url,
        } = &s.call
        {
            assert_eq!(url, &rpc_url(session_uid), "{s:?}");
            let expected = if session_uid == "s-2" {
                "Bearer rt-token-for-s2".to_owned()
            } else {
                format!("Bearer {RUNTIME_TOKEN}")
            };
            assert_eq!(s.request.header("Authorization"), Some(expected.as_str()));
        }
    }
    // s-1's check in flight when s-2 is selected is aborted, and its answer is not used.
    let mut h = Harness::hydrated("s-1");
    let s1 = h.runtime_request("s-1");
    h.requested(Some("s-2"));
    assert!(h.was_aborted(s1));
    h.reply(s1, 200, runtime_ready("s-1"));
    assert_eq!(h.count(is_confirm), 0);
    assert_silent_checking(&h);
}

// ---------------------------------------------------------------------------------------------
// ENV-3 (runtime half)
// ---------------------------------------------------------------------------------------------

/// ENV-3: an Environment change clears the decision (interaction and presence absent, not
/// starting), aborts the check in flight and stops scheduled polls.
#[test]
fn env_3_environment_change_clears_runtime_state() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("waking", Some(2000)));
    h.advance(500);
    h.env(Some(ENV2));
    let s = h.snapshot();
    assert_eq!(s.active_runtime_interaction, None);
    assert_eq!(s.active_runtime_presence, None);
    assert!(!s.is_assistant_runtime_starting);
    assert!(!s.composer_admission);
    let mark = h.mark();
    h.advance(120_000);
    assert_eq!(runtime_since(&h, mark), 0, "scheduled polls stop");
    assert_eq!(h.engine().poll_timeout(), None);

    // A check in flight is aborted; its late answer changes nothing.
    let mut h = Harness::hydrated("s-1");
    let id = h.runtime_request("s-1");
    h.person("user-2");
    assert!(h.was_aborted(id));
    h.reply(id, 200, runtime_ready("s-1"));
    assert_eq!(h.snapshot().active_runtime_interaction, None);
    assert_eq!(h.count(is_confirm), 0);
}

/// ENV-3, OI-9: after a change of Environment (and back) the old decision is gone, so the
/// session is checked afresh, while the 15 s memory of its chat URL survives: the ready answer
/// takes effect without a confirmation.
#[test]
fn env_3_decision_dropped_memory_kept() {
    let mut h = confirmed("s-1");
    h.advance(1000);
    h.env(Some(ENV2));
    h.advance(1000);
    h.env(Some(ENV));
    h.requested(None);
    let mark = h.mark();
    h.requested(Some("s-1"));
    assert_eq!(
        resolves_since(&h, mark, "s-1"),
        1,
        "the young decision was dropped"
    );
    assert_silent_checking(&h);
    h.hydrate("s-1", AGENT);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert_eq!(
        confirms_since(&h, mark),
        0,
        "the chat URL is still remembered"
    );
    assert!(admitted(&h));
}

/// ENV-3: a person change clears the decision of the shown session the same way, and the
/// confirmation memory survives it (here for a session of the new person).
#[test]
fn env_3_person_change_clears_decision() {
    let mut h = confirmed("s-1");
    h.advance(2000);
    h.person("user-2");
    assert_eq!(h.snapshot().active_runtime_interaction, None);
    assert_eq!(h.snapshot().active_runtime_presence, None);
    h.requested(None);
    h.requested(Some("s-9"));
    h.hydrate("s-9", AGENT);
    let mark = h.mark();
    let mut v = runtime_ready("s-9");
    v["rpc_url"] = json!(rpc_url("s-1"));
    answer_resolve(&mut h, "s-9", v);
    assert_eq!(confirms_since(&h, mark), 0);
    assert!(admitted(&h));
    // Past 15 s from the serving answer, the same URL is asked again.
    h.advance(13_000);
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    let mut v = runtime_ready("s-9");
    v["rpc_url"] = json!(rpc_url("s-1"));
    answer_resolve(&mut h, "s-9", v);
    assert_eq!(confirms_since(&h, mark), 1);
}

// ---------------------------------------------------------------------------------------------
// Combinations
// ---------------------------------------------------------------------------------------------

/// RTA-21, OI-8: the round of a session coming back into view with a stale decision honours the
/// 15 s memory: a chat URL confirmed 10 s earlier (for another session) is not asked again.
#[test]
fn rta_21_recheck_honours_the_memory() {
    let mut h = confirmed("s-1");
    h.advance(50_000);
    h.requested(Some("s-2"));
    h.hydrate("s-2", AGENT);
    let mut v = runtime_ready("s-2");
    v["rpc_url"] = json!(rpc_url("s-1"));
    answer_resolve(&mut h, "s-2", v);
    answer_confirm(&mut h, "s-2", 200); // s-1's chat URL serving at 50 000
    h.advance(10_000);
    let mark = h.mark();
    h.requested(Some("s-1")); // s-1's decision is 60 000 ms old
    assert_silent_checking(&h);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    assert_eq!(confirms_since(&h, mark), 0, "remembered for 10 000 ms");
    assert_eq!(state(&h), InteractionState::Ready);
}

/// RTA-22, RTA-10: a transient decision whose poll fell due during a long hide gets exactly one
/// request when the page is shown (the poll and the page-return check are one round).
#[test]
fn rta_22_page_return_with_due_poll_sends_one_request() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_transient("waking", Some(2000)));
    h.input(Input::PageVisible(false));
    h.advance(90_000);
    let mark = h.mark();
    h.input(Input::PageVisible(true));
    assert_eq!(runtime_since(&h, mark), 1);
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
}

/// RTA-10, RTA-17: a confirmation running when the page is hidden still gives up after 3 s; the
/// engine's waking decision is then not polled until the page is shown.
#[test]
fn rta_10_confirmation_limit_while_hidden() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    h.input(Input::PageVisible(false));
    h.advance(3000);
    assert_client_waking(&h, Some("Ledger Helper"));
    let mark = h.mark();
    h.advance(30_000);
    assert_eq!(runtime_since(&h, mark), 0);
    h.input(Input::PageVisible(true));
    assert_eq!(resolves_since(&h, mark, "s-1"), 1);
}

/// RTA-12, OI-1: a failure during the engine's own wake backs off from its 3 s interval (6 s),
/// keeping the waking decision.
#[test]
fn rta_12_failure_while_waking_backs_off_from_three_seconds() {
    let mut h = Harness::hydrated("s-1");
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    answer_confirm(&mut h, "s-1", 502);
    expect_poll_after(&mut h, "s-1", 3000);
    let id = h.runtime_request("s-1");
    h.reply(id, 500, json!({}));
    assert_client_waking(&h, Some("Ledger Helper"));
    expect_poll_after(&mut h, "s-1", 6000);
    let id = h.runtime_request("s-1");
    h.fail(id);
    expect_poll_after(&mut h, "s-1", 12_000);
}

// ---------------------------------------------------------------------------------------------
// Transcripts
// ---------------------------------------------------------------------------------------------

/// RTA-1, RTA-14, RTA-19, RTA-6, OI-9 (transcript): first check answered ready, silent checking
/// until the Agent answers, then ready; a refresh within 15 s reuses the memory.
#[test]
fn rta_transcript_ready_and_memory() {
    let mut h = Harness::hydrated("s-1");
    h.runtime_ready("s-1", 200);
    h.advance(5000);
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    insta::assert_snapshot!(h.transcript());
}

/// RTA-17, RTA-18, OI-5 (transcript): a cold Agent: the confirmation gives up after 3 s, the
/// engine's waking decision, a round 3 s later whose confirmation the Agent answers.
#[test]
fn rta_transcript_cold_agent_wakes() {
    let mut h = hydrated_with_wall_clock("s-1");
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    h.advance(3000);
    h.advance(3000);
    answer_resolve(&mut h, "s-1", runtime_ready("s-1"));
    h.advance(1500);
    answer_confirm(&mut h, "s-1", 200);
    insta::assert_snapshot!(h.transcript());
}

/// RTA-20, RTA-12, RTA-9 (transcript): a failing first check with its notice and backoff, then a
/// transient answer polled at its interval, then ready.
#[test]
fn rta_transcript_failing_first_check_then_starting() {
    let mut h = Harness::hydrated("s-1");
    let id = h.runtime_request("s-1");
    h.reply(id, 503, json!({"detail": "Service unavailable."}));
    h.advance(2000);
    let id = h.runtime_request("s-1");
    h.fail(id);
    h.advance(4000);
    answer_resolve(&mut h, "s-1", runtime_transient("starting", Some(1500)));
    h.advance(1500);
    h.runtime_ready("s-1", 200);
    insta::assert_snapshot!(h.transcript());
}

// ---------------------------------------------------------------------------------------------
// Review regressions
// ---------------------------------------------------------------------------------------------

/// RTA-16: the confirmation is decided by its status line alone: a 200 whose body is still on the
/// way (or never ends) confirms the Agent at once, the rest of the body is dropped (an abort), and
/// the 3 s limit does not turn it into waking later.
#[test]
fn rta_16_confirmation_decided_on_its_head() {
    let mut h = Harness::hydrated("s-1");
    let id = h.runtime_request("s-1");
    h.reply(id, 200, runtime_ready("s-1"));
    let confirm = h.confirm_request("s-1");
    h.advance(100);
    h.head(confirm, 200);
    assert!(
        h.was_aborted(confirm),
        "the body of a confirmation is not read"
    );
    let s = h.snapshot();
    assert!(s.composer_admission);
    h.advance(5_000);
    let s = h.snapshot();
    let i = s.active_runtime_interaction.unwrap();
    assert_eq!(i.state, InteractionState::Ready);
    assert!(s.composer_admission);
    assert!(
        h.pending(|c| matches!(c, ApiCall::ResolveRuntimeAccess { .. }))
            .is_none()
    );
}

/// RTA-10, OI-1: the silent first check of a session that comes into view while the page is
/// hidden waits for the page, then goes out at once.
#[test]
fn rta_10_first_check_waits_for_a_hidden_page() {
    let mut h = Harness::visible_in_env();
    h.input(Input::PageVisible(false));
    h.requested(Some("s-1"));
    let s = h.snapshot();
    assert_eq!(
        s.active_runtime_interaction.unwrap().state,
        InteractionState::Checking
    );
    assert_eq!(
        h.count(|c| matches!(c, ApiCall::ResolveRuntimeAccess { .. })),
        0
    );
    assert_eq!(
        h.engine().poll_timeout(),
        None,
        "no poll timer while the page is hidden"
    );
    h.advance(30_000);
    assert_eq!(
        h.count(|c| matches!(c, ApiCall::ResolveRuntimeAccess { .. })),
        0
    );
    let mark = h.mark();
    h.input(Input::PageVisible(true));
    let sent: Vec<_> = h.sent_since(mark).iter().map(|s| s.call.clone()).collect();
    assert!(sent.contains(&ApiCall::ResolveRuntimeAccess {
        session_uid: "s-1".into()
    }));
}

/// RTA-12, RTA-20, OI-3: a token that cannot go into a header (a control character) makes the
/// answer malformed: no confirmation, the still-checking notice, the backoff.
#[test]
fn rta_12_token_with_control_characters_is_malformed() {
    let mut h = Harness::hydrated("s-1");
    let id = h.runtime_request("s-1");
    let mut answer = runtime_ready("s-1");
    answer["token"] = Value::String("rt\u{7}tok".into());
    h.reply(id, 200, answer);
    assert_eq!(h.count(|c| matches!(c, ApiCall::ConfirmAgent { .. })), 0);
    let i = h.snapshot().active_runtime_interaction.unwrap();
    assert_eq!(i.state, InteractionState::Checking);
    assert_eq!(i.notice.map(|n| n.title), Some("Still checking".to_owned()));
    h.advance(1_999);
    assert!(
        h.pending(|c| matches!(c, ApiCall::ResolveRuntimeAccess { .. }))
            .is_none()
    );
    h.advance(1);
    h.runtime_request("s-1");
}

//! RU-38, RU-39: `composerState`, what a composer shows and what a submit does. The reference's
//! seven pinned rows (conditions, flags and texts, with the fixture's Agent "Ledger Helper" for
//! its "Analyst") and this engine's own choices for the rest (`docs/interpretations.md`, "The
//! composer state"); every state checked against what `SendMessage` then does.

use engine_core::{ApiCall, Command, ComposerState, ComposerStatus};
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::fixtures::{AGENT, ENV, catalog, record, runtime_transient};
use spec_tests::models::{is_catalog, refuse};
use spec_tests::turns::post_on;

const S1: &str = "s-1";

fn state(h: &Harness) -> ComposerState {
    h.snapshot().composer_state
}

/// (status, canSend, queues, canWrite, reason).
fn row(h: &Harness) -> (ComposerStatus, bool, bool, bool, Option<String>) {
    let c = state(h);
    (c.status, c.can_send, c.queues, c.can_write, c.reason)
}

/// S1 selected and hydrated, its runtime access answered with `answer`.
fn access_answered(answer: Value) -> Harness {
    let mut h = Harness::selected(S1);
    h.hydrate(S1, AGENT);
    let id = h.runtime_request(S1);
    h.reply(id, 200, answer);
    h
}

/// `answer` with RU-44's error notice.
fn with_error_notice(mut answer: Value, code: &str, title: &str) -> Value {
    answer["runtime_interaction"]["notice"] = json!({
        "code": code, "severity": "error",
        "title": title, "message": "The agent could not be started. Try again."
    });
    answer
}

fn sends(h: &Harness) -> usize {
    h.count(|c| matches!(c, ApiCall::SendMessage { .. }))
}

/// RU-38 `ready`: a submit sends now; in JSON the reference's names.
#[test]
fn ru_38_ready_sends_now() {
    let mut h = Harness::talking(S1);
    assert_eq!(row(&h), (ComposerStatus::Ready, true, false, true, None));
    assert_eq!(
        serde_json::to_value(state(&h)).unwrap(),
        json!({"status": "ready", "canSend": true, "queues": false, "canWrite": true, "reason": null})
    );
    let before = sends(&h);
    post_on(&mut h, S1, "Hello");
    assert_eq!(
        sends(&h),
        before + 1,
        "Enter sends the draft as one message"
    );
    assert!(h.snapshot().message_queue.is_empty());
}

/// RU-38 `working`: while the Agent works a submit is queued and nothing is sent.
#[test]
fn ru_38_working_queues() {
    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "Hello");
    h.stream_head(id);
    assert_eq!(
        row(&h),
        (
            ComposerStatus::Working,
            false,
            true,
            true,
            Some("Ledger Helper is working. Your message will send when it finishes.".into())
        )
    );
    assert_eq!(
        serde_json::to_value(state(&h)).unwrap()["status"],
        json!("working")
    );
    let before = sends(&h);
    h.send("Next");
    assert_eq!(sends(&h), before, "nothing is sent");
    assert_eq!(h.snapshot().message_queue.len(), 1);
}

/// RU-38 `waking` (no full stop, RU-39): the runtime starts; the draft is not editable.
#[test]
fn ru_38_waking() {
    let h = access_answered(runtime_transient("waking", Some(2_000)));
    assert!(h.snapshot().is_assistant_runtime_starting);
    assert_eq!(
        row(&h),
        (
            ComposerStatus::Waking,
            false,
            false,
            false,
            Some("Ledger Helper is waking up".into())
        )
    );
}

/// RU-38 `no-session`: readiness idle with no session id (an empty list, nothing on its way).
#[test]
fn ru_38_no_session() {
    let mut h = Harness::visible_in_env();
    h.answer_list(&[]);
    let s = h.snapshot();
    assert_eq!(s.current_session_id, None);
    assert_eq!(
        row(&h),
        (
            ComposerStatus::NoSession,
            false,
            false,
            false,
            Some("Select or start a session to continue.".into())
        )
    );
}

/// RU-38 `loading`: the session loads; before the list answers the session to show is on its
/// way and reads the same (this engine's choice).
#[test]
fn ru_38_loading() {
    let loading = (
        ComposerStatus::Loading,
        false,
        false,
        false,
        Some("Loading session...".to_owned()),
    );
    let mut h = Harness::visible_in_env();
    assert!(h.snapshot().is_loading_latest_sessions);
    assert_eq!(row(&h), loading);
    h.answer_list(&[record(S1, AGENT, ENV, 0)]);
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some(S1));
    assert_eq!(row(&h), loading);
}

/// RU-38 `choosing-model`: a model is needed before the session can start.
#[test]
fn ru_38_choosing_model() {
    let mut h = Harness::default_state();
    h.answer_list(&[]);
    let id = h.expect_pending("catalog", is_catalog);
    h.reply(id, 200, catalog());
    let id = h.get_or_create_request();
    refuse(&mut h, id);
    assert!(h.snapshot().session_model_selection_request.is_some());
    assert_eq!(
        row(&h),
        (
            ComposerStatus::ChoosingModel,
            false,
            false,
            false,
            Some("A model is needed to start this session. Choose one to continue.".into())
        )
    );
}

/// RU-39 (this engine's choice) `unavailable`: a session that cannot load, or a runtime that
/// refuses, keeps the draft editable and says why; nothing is sent.
#[test]
fn ru_39_unavailable_says_why() {
    let mut h = Harness::selected(S1);
    let id = h.detail_request(S1);
    h.reply(id, 404, json!({"detail": "Not found."}));
    let c = state(&h);
    assert_eq!(c.status, ComposerStatus::Unavailable);
    assert_eq!((c.can_send, c.queues, c.can_write), (false, false, true));
    let readiness_error = h.snapshot().active_session_readiness.error;
    assert!(readiness_error.is_some());
    assert_eq!(c.reason, readiness_error);

    let mut blocked = runtime_transient("unavailable", None);
    blocked["runtime_interaction"]["state"] = json!("unavailable");
    let mut h = access_answered(with_error_notice(
        blocked,
        "agent_unavailable",
        "Unavailable",
    ));
    let c = state(&h);
    assert_eq!(c.status, ComposerStatus::Unavailable, "{c:?}");
    assert_eq!(
        c.reason.as_deref(),
        Some("The agent could not be started. Try again.")
    );
    let before = sends(&h);
    h.send("Hello");
    assert_eq!(sends(&h), before);
}

/// RU-39 (this engine's choice) `stopping`: a stop's cancel is under way; the draft stays
/// editable, and `canSend` says what a submit does (the engine sends while a cancel runs, and
/// queues while the Agent still works).
#[test]
fn ru_39_stopping() {
    let mut h = Harness::talking(S1);
    let id = post_on(&mut h, S1, "Hello");
    h.stream_head(id);
    h.command(Command::CancelActiveSession);
    let c = state(&h);
    assert_eq!(c.status, ComposerStatus::Stopping);
    assert_eq!(c.reason.as_deref(), Some("Stopping Ledger Helper..."));
    assert!(c.can_write && !c.queues);
    assert_eq!(c.can_send, h.snapshot().composer_admission);
    let cancel = h.cancel_request(S1);
    h.reply(cancel, 200, json!({}));
    assert_eq!(state(&h).status, ComposerStatus::Ready);
}

/// RU-39 (this engine's choice) `busy`: not yet, for a reason the host must settle (here: the
/// chat is hidden); no reason for the person (`sendReadiness` tells the host). While access is
/// first checked the decision is transient, so the reference's `waking` row applies
/// (`isAssistantRuntimeStarting`).
#[test]
fn ru_39_busy_while_hidden() {
    let mut h = Harness::talking(S1);
    h.visible(false);
    let c = state(&h);
    assert_eq!(c.status, ComposerStatus::Busy, "{c:?}");
    assert_eq!((c.can_send, c.queues, c.can_write), (false, false, true));
    assert_eq!(c.reason, None);

    let mut h = Harness::selected(S1);
    h.hydrate(S1, AGENT);
    let _pending = h.runtime_request(S1);
    assert!(h.snapshot().is_assistant_runtime_starting);
    assert_eq!(state(&h).status, ComposerStatus::Waking);
}

/// RU-38: `canSend` holds exactly when a submit would start a turn now: never beside
/// `queues`, and only with `composerAdmission` (checked at every step of these scenarios by
/// the harness, and here once more on a whole conversation).
#[test]
fn ru_38_can_send_follows_admission() {
    let mut h = Harness::talking(S1);
    let first = post_on(&mut h, S1, "One");
    h.stream_head(first);
    h.send("Two");
    h.end(first);
    for _ in 0..2 {
        let c = state(&h);
        assert!(!(c.can_send && c.queues));
        let s = h.snapshot();
        assert_eq!(c.can_send, s.composer_admission && !s.is_agent_working);
        h.advance(1_000);
    }
}

/// RU-44: `unavailable` with the error notice "The agent could not be started. Try again." and
/// a failed operation with support reference "op-3" shows the message and "op-3", sending
/// disabled, the draft kept; a `waking` decision with an `info` notice and "op-9" shows no
/// support reference.
#[test]
fn ru_44_the_support_reference_only_beside_an_error() {
    let failed = spec_tests::fixtures::runtime_terminal(Some("op-3"));
    let h = access_answered(with_error_notice(
        failed,
        "agent_start_failed",
        "Not started",
    ));
    let c = state(&h);
    assert_eq!(c.status, ComposerStatus::Unavailable, "{c:?}");
    assert_eq!(
        c.reason.as_deref(),
        Some("The agent could not be started. Try again.")
    );
    assert_eq!(c.support_reference.as_deref(), Some("op-3"));
    assert_eq!((c.can_send, c.can_write), (false, true));
    assert_eq!(
        serde_json::to_value(&c).unwrap()["supportReference"],
        "op-3"
    );

    let mut waking = runtime_transient("waking", Some(2_000));
    waking["runtime_interaction"]["operation"] = json!({
        "uid": "op-9", "status": "running", "created_at": "2026-10-02T08:00:00Z",
        "started_at": null, "finished_at": null, "support_reference": "op-9"
    });
    let h = access_answered(waking);
    let s = h.snapshot();
    let interaction = s.active_runtime_interaction.clone().unwrap();
    assert_eq!(interaction.support_reference.as_deref(), Some("op-9"));
    let c = s.composer_state;
    assert_eq!(c.status, ComposerStatus::Waking);
    assert_eq!(c.support_reference, None);
    assert!(
        serde_json::to_value(&c)
            .unwrap()
            .get("supportReference")
            .is_none()
    );
}

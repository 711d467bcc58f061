#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! FAIL: how failures of the session reads and of session creation surface.
//!
//! The runtime failure rule (FAIL-14) is covered with runtime access in rta.rs; the catalog
//! failure rules wait for the model catalog.

use std::time::Duration;

use bytes::Bytes;
use engine_core::{
    AgentRecord, ApiCall, Command, Config, DefaultSessionStatus, DetailStatus, Engine, Event,
    Input, Intent, Notice, NoticeVariant, Origin, Person, ReadinessStatus, RequestId, Secret,
    Snapshot, Time, TransportFailure,
};
use serde_json::{Value, json};
use spec_tests::fixtures::{AGENT, AGENT2, ENV, ENV2, USER, page, record};
use spec_tests::{BASE, Harness};

const HISTORY_NOTICE: &str = "Failed to rehydrate the selected AgentSession. Interaction is disabled until session history loads.";

// ---------------------------------------------------------------------------------------------
// Helpers

fn start_new_pending(h: &Harness) -> RequestId {
    h.expect_pending("start-new-session", |c| {
        matches!(c, ApiCall::StartNewSession { .. })
    })
}

/// An engine driven directly, for failures the harness cannot express (a transport failure whose
/// message is empty, i.e. an error that carries no message).
struct Direct {
    engine: Engine,
    epoch: Time,
    now_ms: u64,
    sent: Vec<(RequestId, ApiCall)>,
    events: Vec<Event>,
}

impl Direct {
    /// A visible chat for USER in ENV.
    fn visible_in_env() -> Direct {
        let epoch = Time::from_millis(42_000); // any origin
        let engine = Engine::new(Config::new(BASE).unwrap().with_seed(1), epoch);
        let mut d = Direct {
            engine,
            epoch,
            now_ms: 0,
            sent: Vec::new(),
            events: Vec::new(),
        };
        d.input(Input::Person(Person::new(
            USER.to_owned(),
            Secret::new("platform-token-secret"),
        )));
        d.input(Input::EnvironmentUid(Some(ENV.to_owned())));
        d.input(Input::IsVisible(true));
        d
    }

    fn at(&mut self) -> Time {
        self.now_ms += 1;
        self.epoch + Duration::from_millis(self.now_ms)
    }

    fn drain(&mut self) {
        while let Some(intent) = self.engine.poll_intent() {
            if let Intent::Http { id, call, .. } = intent {
                self.sent.push((id, call));
            }
        }
        while let Some(event) = self.engine.poll_event() {
            self.events.push(event);
        }
    }

    fn input(&mut self, input: Input) {
        let at = self.at();
        self.engine.handle_input(input, at);
        self.drain();
    }

    /// The newest request matching `pred`.
    fn find(&self, pred: impl Fn(&ApiCall) -> bool) -> RequestId {
        self.sent
            .iter()
            .rev()
            .find(|(_, c)| pred(c))
            .map(|(id, _)| *id)
            .expect("a matching request")
    }

    fn reply(&mut self, id: RequestId, status: u16, body: &Value) {
        let at = self.at();
        self.engine.handle_response(
            id,
            spec_tests::response_head(status, Some("application/json")),
            at,
        );
        self.engine
            .handle_body_chunk(id, Bytes::from(body.to_string()), at);
        self.engine.handle_body_end(id, at);
        self.drain();
    }

    /// No answer, and a transport that gives no message.
    fn fail_without_message(&mut self, id: RequestId) {
        let at = self.at();
        self.engine
            .handle_failure(id, TransportFailure::no_answer(""), at);
        self.drain();
    }

    fn snapshot(&self) -> Snapshot {
        self.engine.snapshot()
    }

    /// The list answers with one session `uid`, whose detail loads; history stays open.
    fn select_and_load_detail(&mut self, uid: &str) {
        let list = self.find(|c| matches!(c, ApiCall::ListSessions { .. }));
        self.reply(list, 200, &page(&[record(uid, AGENT, ENV, 0)]));
        let detail = self.find(|c| matches!(c, ApiCall::GetSessionDetail { .. }));
        self.reply(detail, 200, &record(uid, AGENT, ENV, 0));
    }
}

// ---------------------------------------------------------------------------------------------
// FAIL-6

/// FAIL-6: a failed latest-sessions request (HTTP 500) sets latestSessionsError, which carries the
/// platform's message.
#[test]
fn fail_6_list_http_error_sets_latest_sessions_error() {
    let mut h = Harness::visible_in_env();
    assert_eq!(h.snapshot().latest_sessions_error, None);
    let id = h.list_request();
    h.reply(id, 500, json!({"detail": "Database unavailable."}));
    let error = h
        .snapshot()
        .latest_sessions_error
        .expect("latestSessionsError");
    assert!(error.contains("Database unavailable."), "{error}");
    assert!(!h.snapshot().is_loading_latest_sessions);
}

/// FAIL-6: a latest-sessions request with no answer sets latestSessionsError to the transport's
/// message.
#[test]
fn fail_6_list_without_answer_sets_latest_sessions_error() {
    let mut h = Harness::visible_in_env();
    let id = h.list_request();
    h.fail(id);
    let error = h
        .snapshot()
        .latest_sessions_error
        .expect("latestSessionsError");
    assert!(error.contains("connection refused"), "{error}");
}

/// FAIL-6: a 200 whose body is not JSON is a failed read too.
#[test]
fn fail_6_list_malformed_answer_sets_latest_sessions_error() {
    let mut h = Harness::visible_in_env();
    let id = h.list_request();
    h.reply_raw(id, 200, Some("application/json"), b"{\"results\": [", None);
    let error = h
        .snapshot()
        .latest_sessions_error
        .expect("latestSessionsError");
    assert!(!error.trim().is_empty());
    assert!(h.snapshot().agent_sessions.is_empty());
}

/// FAIL-6: when the error carries no message, latestSessionsError is the OI-6 fallback.
#[test]
fn fail_6_list_failure_without_message_uses_fallback_text() {
    let mut d = Direct::visible_in_env();
    let id = d.find(|c| matches!(c, ApiCall::ListSessions { .. }));
    d.fail_without_message(id);
    assert_eq!(
        d.snapshot().latest_sessions_error.as_deref(),
        Some("Latest agent sessions request failed.")
    );
}

// ---------------------------------------------------------------------------------------------
// FAIL-7

/// FAIL-7: the list was needed to choose a session (implicit selection allowed, nothing else
/// selecting) and it failed: readiness is error.
#[test]
fn fail_7_list_failure_with_nothing_selected_is_a_readiness_error() {
    let mut h = Harness::visible_in_env();
    assert_eq!(h.readiness(), ReadinessStatus::Loading);
    let id = h.list_request();
    h.reply(id, 503, json!({"detail": "Try later."}));
    let s = h.snapshot();
    assert_eq!(s.current_session_id, None);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Error);
    assert!(
        s.active_session_readiness
            .error
            .as_deref()
            .is_some_and(|e| !e.trim().is_empty())
    );
    assert!(h.notices().is_empty(), "{:?}", h.events());
}

/// FAIL-7: with nothing selected on purpose (avoidImplicitSessionSelection) a failed list leaves
/// readiness idle.
#[test]
fn fail_7_list_failure_with_implicit_selection_avoided_stays_idle() {
    let mut h = Harness::new();
    h.avoid_implicit(true);
    h.person(USER);
    h.env(Some(ENV));
    h.visible(true);
    let id = h.list_request();
    h.reply(id, 500, json!({"detail": "Boom."}));
    let s = h.snapshot();
    assert!(s.latest_sessions_error.is_some());
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Idle);
    assert_eq!(s.active_session_readiness.error, None);
}

/// FAIL-7: in the default-session state (nothing selected on purpose while the default session
/// resolves) a failed list leaves readiness idle.
#[test]
fn fail_7_list_failure_in_the_default_session_state_stays_idle() {
    let mut h = Harness::visible_in_env();
    h.shows_default(true);
    h.default_session(Some(AGENT));
    assert!(
        h.pending(|c| matches!(c, ApiCall::GetOrCreateSession { .. }))
            .is_some()
    );
    let id = h.list_request();
    h.fail(id);
    let s = h.snapshot();
    assert!(s.latest_sessions_error.is_some());
    assert_eq!(s.current_session_id, None);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Idle);
}

// ---------------------------------------------------------------------------------------------
// FAIL-8

/// FAIL-8: a list failure while a session is selected (requested) leaves readiness following that
/// session's hydration: loading while it hydrates, ready once it has.
#[test]
fn fail_8_list_failure_while_selected_follows_hydration() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-1"));
    let list = h.list_request();
    h.reply(list, 500, json!({"detail": "Boom."}));
    let s = h.snapshot();
    assert!(s.latest_sessions_error.is_some());
    assert_eq!(s.current_session_id.as_deref(), Some("s-1"));
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Loading);
    h.hydrate("s-1", AGENT);
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
    assert!(h.snapshot().latest_sessions_error.is_some());
}

/// FAIL-8: a list failure after the selected session is ready leaves it ready.
#[test]
fn fail_8_list_failure_after_ready_keeps_ready() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("s-1"));
    h.hydrate("s-1", AGENT);
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
    let list = h.list_request();
    h.fail(list);
    let s = h.snapshot();
    assert!(s.latest_sessions_error.is_some());
    assert_eq!(s.current_session_id.as_deref(), Some("s-1"));
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Ready);
}

// ---------------------------------------------------------------------------------------------
// FAIL-9, FAIL-10

/// FAIL-9: a 404 to the selected session's detail makes readiness not_found (and the detail
/// snapshot not_found), with no notify.
#[test]
fn fail_9_detail_404_is_not_found() {
    let mut h = Harness::selected("s-1");
    let id = h.detail_request("s-1");
    h.reply(id, 404, json!({"detail": "Not found."}));
    let s = h.snapshot();
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::NotFound);
    assert!(s.active_session_readiness.error.is_some());
    assert_eq!(
        s.active_session_detail.unwrap().status,
        DetailStatus::NotFound
    );
    // Still not_found after the history loads.
    h.answer_history("s-1");
    assert_eq!(h.readiness(), ReadinessStatus::NotFound);
    assert!(h.notices().is_empty());
}

/// FAIL-10: every other failure of the detail read (HTTP errors other than 404, no answer, a
/// malformed body, a record without or from another Environment) makes readiness error, and no
/// notify is emitted for it.
#[test]
fn fail_10_other_detail_failures_are_readiness_errors_without_notify() {
    type Answer = Box<dyn Fn(&mut Harness, RequestId)>;
    let answers: Vec<(&str, Answer)> = vec![
        (
            "500",
            Box::new(|h, id| {
                h.reply(id, 500, json!({"detail": "Boom."}));
            }),
        ),
        (
            "403",
            Box::new(|h, id| {
                h.reply(id, 403, json!({"detail": "Forbidden."}));
            }),
        ),
        (
            "400",
            Box::new(|h, id| {
                h.reply(id, 400, json!({"organization_environment_uid": ["Bad."]}));
            }),
        ),
        (
            "no answer",
            Box::new(|h, id| {
                h.fail(id);
            }),
        ),
        (
            "not JSON",
            Box::new(|h, id| {
                h.reply_raw(id, 200, Some("text/plain"), b"ok", None);
            }),
        ),
        (
            "no uid",
            Box::new(|h, id| {
                h.reply(id, 200, json!({"organization_environment_uid": ENV}));
            }),
        ),
        (
            "another Environment",
            Box::new(|h, id| {
                h.reply(id, 200, record("s-1", AGENT, ENV2, 0));
            }),
        ),
        (
            "no Environment",
            Box::new(|h, id| {
                let mut r = record("s-1", AGENT, ENV, 0);
                r.as_object_mut()
                    .unwrap()
                    .remove("organization_environment_uid");
                h.reply(id, 200, r);
            }),
        ),
    ];
    for (name, answer) in answers {
        let mut h = Harness::selected("s-1");
        h.answer_history("s-1");
        let id = h.detail_request("s-1");
        answer(&mut h, id);
        let s = h.snapshot();
        assert_eq!(
            s.active_session_readiness.status,
            ReadinessStatus::Error,
            "{name}"
        );
        assert!(
            s.active_session_readiness
                .error
                .as_deref()
                .is_some_and(|e| !e.trim().is_empty()),
            "{name}"
        );
        assert_eq!(
            s.active_session_detail.unwrap().status,
            DetailStatus::Error,
            "{name}"
        );
        assert!(h.events().is_empty(), "{name}: {:?}", h.events());
    }
}

/// FAIL-10: the readiness error of a record from another Environment names both Environments
/// (platform-api section 1).
#[test]
fn fail_10_wrong_environment_error_text() {
    let mut h = Harness::selected("s-1");
    let id = h.detail_request("s-1");
    h.reply(id, 200, record("s-1", AGENT, ENV2, 0));
    assert_eq!(
        h.snapshot().active_session_readiness.error.as_deref(),
        Some("The session belongs to Organization Environment env-2, not env-1.")
    );
}

// ---------------------------------------------------------------------------------------------
// FAIL-11

/// FAIL-11: a history failure other than 404 (HTTP 500, 401, no answer, a body that is not an
/// object) makes readiness error and sets sessionNotice to the specification's text.
#[test]
fn fail_11_history_failure_is_an_error_with_the_rehydrate_notice() {
    type Answer = Box<dyn Fn(&mut Harness, RequestId)>;
    let answers: Vec<(&str, Answer)> = vec![
        (
            "500",
            Box::new(|h, id| {
                h.reply(id, 500, json!({"detail": "History store down."}));
            }),
        ),
        (
            "401",
            Box::new(|h, id| {
                h.reply(id, 401, json!({"detail": "Expired."}));
            }),
        ),
        (
            "no answer",
            Box::new(|h, id| {
                h.fail(id);
            }),
        ),
        (
            "array body",
            Box::new(|h, id| {
                h.reply(id, 200, json!([{"role": "user"}]));
            }),
        ),
        (
            "truncated",
            Box::new(|h, id| {
                h.reply_raw(id, 200, Some("application/json"), b"{\"messages\": [", None);
            }),
        ),
    ];
    for (name, answer) in answers {
        let mut h = Harness::selected("s-1");
        h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
        let id = h.history_request("s-1");
        answer(&mut h, id);
        let s = h.snapshot();
        assert_eq!(
            s.active_session_readiness.status,
            ReadinessStatus::Error,
            "{name}"
        );
        assert_eq!(s.session_notice.as_deref(), Some(HISTORY_NOTICE), "{name}");
        assert!(s.thread.is_empty(), "{name}");
        assert!(h.notices().is_empty(), "{name}: {:?}", h.events());
    }
}

/// FAIL-11: the notice is also set when the detail has not answered yet, and readiness stays error
/// once the detail loads.
#[test]
fn fail_11_history_failure_before_the_detail() {
    let mut h = Harness::selected("s-1");
    let id = h.history_request("s-1");
    h.reply(id, 502, json!({"detail": "Bad gateway."}));
    assert_eq!(h.readiness(), ReadinessStatus::Error);
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    let s = h.snapshot();
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Error);
    assert_eq!(s.session_notice.as_deref(), Some(HISTORY_NOTICE));
}

/// FAIL-11: a history failure whose error carries no message still sets the notice; readiness's
/// error is the OI-6 fallback "Session history request failed.".
#[test]
fn fail_11_history_failure_without_message() {
    let mut d = Direct::visible_in_env();
    d.select_and_load_detail("s-1");
    let id = d.find(|c| matches!(c, ApiCall::GetSessionHistory { .. }));
    d.fail_without_message(id);
    let s = d.snapshot();
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Error);
    assert_eq!(s.session_notice.as_deref(), Some(HISTORY_NOTICE));
    assert_eq!(
        s.active_session_readiness.error.as_deref(),
        Some("Session history request failed.")
    );
}

// ---------------------------------------------------------------------------------------------
// FAIL-12

/// FAIL-12: an insights failure is recorded as insightsError on the detail snapshot and leaves a
/// ready session ready.
#[test]
fn fail_12_insights_failure_sets_insights_error_and_keeps_ready() {
    let mut h = Harness::selected("s-1");
    h.hydrate("s-1", AGENT);
    let before = h.snapshot().active_session_readiness;
    let id = h.insights_request("s-1");
    h.reply(id, 500, json!({"detail": "Insights exploded."}));
    let s = h.snapshot();
    let detail = s.active_session_detail.unwrap();
    let error = detail.insights_error.expect("insightsError");
    assert!(error.contains("Insights exploded."), "{error}");
    assert_eq!(detail.status, DetailStatus::Ready);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Ready);
    assert_eq!(s.active_session_readiness.error, None);
    assert_eq!(s.active_session_readiness.status, before.status);
    assert_eq!(s.session_notice, None);
    assert!(h.events().is_empty());
}

/// FAIL-12: an insights failure while the history is still pending leaves readiness loading, and
/// the session still becomes ready when the history loads.
#[test]
fn fail_12_insights_failure_while_loading_keeps_loading() {
    let mut h = Harness::selected("s-1");
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    let id = h.insights_request("s-1");
    h.fail(id);
    let s = h.snapshot();
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Loading);
    let error = s.active_session_detail.unwrap().insights_error.unwrap();
    assert!(error.contains("connection refused"), "{error}");
    h.answer_history("s-1");
    assert_eq!(h.readiness(), ReadinessStatus::Ready);
    assert!(
        h.snapshot()
            .active_session_detail
            .unwrap()
            .insights_error
            .is_some()
    );
}

/// FAIL-12: an insights failure without a message records the OI-6 fallback text.
#[test]
fn fail_12_insights_failure_without_message_uses_fallback_text() {
    let mut d = Direct::visible_in_env();
    d.select_and_load_detail("s-1");
    let id = d.find(|c| matches!(c, ApiCall::GetSessionInsights { .. }));
    d.fail_without_message(id);
    let s = d.snapshot();
    assert_eq!(
        s.active_session_detail.unwrap().insights_error.as_deref(),
        Some("Session insights request failed.")
    );
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Loading);
}

// ---------------------------------------------------------------------------------------------
// FAIL-13

fn assert_created_failure_notify(h: &Harness, contains: &str) {
    let n = h.notices();
    assert_eq!(n.len(), 1, "{n:?}");
    assert_eq!(n[0].variant, NoticeVariant::Error);
    assert_eq!(n[0].title, "Agent session not created");
    let d = n[0].description.as_deref().unwrap_or_default();
    assert!(d.contains(contains), "description {d:?}");
}

/// The selection a ready session `s-1` had before a failed creation is untouched.
fn assert_still_on_s1(h: &Harness) {
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("s-1"));
    assert_eq!(s.selection_origin, Some(Origin::Newest));
    assert!(!s.is_direct_launch_session);
    assert_eq!(s.active_session_readiness.status, ReadinessStatus::Ready);
    assert!(!s.is_creating_agent_session);
}

/// FAIL-13: startAgentSessionById whose start-new-session answers 500 calls notify (error, "Agent
/// session not created", the platform's message) and leaves the selection unchanged.
#[test]
fn fail_13_start_by_id_failure_notifies_and_keeps_selection() {
    let mut h = Harness::ready("s-1");
    h.command(Command::StartAgentSessionById {
        agent_id: AGENT2.to_owned(),
        label: None,
    });
    assert!(h.snapshot().is_creating_agent_session);
    let id = start_new_pending(&h);
    h.reply(id, 500, json!({"detail": "Agent is disabled."}));
    assert_created_failure_notify(&h, "Agent is disabled.");
    assert_still_on_s1(&h);
    assert!(
        !h.events()
            .iter()
            .any(|e| matches!(e, Event::RequestVisible))
    );
}

/// FAIL-13: startAgentSession(agent) with no answer notifies with the transport's message.
#[test]
fn fail_13_start_agent_session_no_answer_notifies() {
    let mut h = Harness::ready("s-1");
    h.command(Command::StartAgentSession {
        agent: AgentRecord {
            id: None,
            uid: Some(AGENT2.to_owned()),
            name: Some("Other".to_owned()),
        },
    });
    let id = start_new_pending(&h);
    h.fail(id);
    assert_created_failure_notify(&h, "connection refused");
    assert_still_on_s1(&h);
}

/// FAIL-13: createAgentSession() whose answer has no session uid notifies with the creation error
/// ("... no AgentSession uid was returned.").
#[test]
fn fail_13_create_agent_session_without_uid_notifies() {
    let mut h = Harness::ready("s-1");
    h.command(Command::CreateAgentSession);
    let id = start_new_pending(&h);
    assert!(matches!(
        &h.request(id).call,
        ApiCall::StartNewSession { agent, .. } if agent == AGENT
    ));
    h.reply(id, 201, json!({"thread_id": "t-1"}));
    assert_created_failure_notify(
        &h,
        "Session creation succeeded but no AgentSession uid was returned.",
    );
    assert_still_on_s1(&h);
}

/// FAIL-13: when the error carries no message the description is "Unable to create a new agent
/// session.".
#[test]
fn fail_13_failure_without_message_uses_fallback_description() {
    let mut d = Direct::visible_in_env();
    d.input(Input::Command(Command::StartAgentSessionById {
        agent_id: AGENT2.to_owned(),
        label: None,
    }));
    let id = d.find(|c| matches!(c, ApiCall::StartNewSession { .. }));
    d.fail_without_message(id);
    let n: Vec<&Notice> = d
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Notify(n) => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(n.len(), 1, "{n:?}");
    assert_eq!(n[0].title, "Agent session not created");
    assert_eq!(
        n[0].description.as_deref(),
        Some("Unable to create a new agent session.")
    );
    assert_eq!(n[0].variant, NoticeVariant::Error);
    assert_eq!(d.snapshot().current_session_id, None);
}

/// FAIL-13: openLatestOrStartAgentSessionById failures notify with its own texts ("Agent session not
/// opened"; fallback "Unable to open the code repository agent session.").
#[test]
fn fail_13_open_latest_failure_texts() {
    // The lookup fails.
    let mut h = Harness::ready("s-1");
    h.command(Command::OpenLatestOrStartAgentSessionById {
        agent_id: AGENT2.to_owned(),
        label: None,
    });
    let lookup = h.expect_pending("agent lookup", |c| {
        matches!(c, ApiCall::ListSessions { agent: Some(_), .. })
    });
    h.reply(lookup, 500, json!({"detail": "Lookup broke."}));
    let n = h.notices();
    assert_eq!(n.len(), 1, "{n:?}");
    assert_eq!(n[0].title, "Agent session not opened");
    assert_eq!(n[0].variant, NoticeVariant::Error);
    assert!(
        n[0].description
            .as_deref()
            .unwrap()
            .contains("Lookup broke.")
    );
    assert_still_on_s1(&h);

    // The lookup finds nothing and the creation fails without a message.
    let mut d = Direct::visible_in_env();
    d.input(Input::Command(Command::OpenLatestOrStartAgentSessionById {
        agent_id: AGENT2.to_owned(),
        label: None,
    }));
    let lookup = d.find(|c| matches!(c, ApiCall::ListSessions { agent: Some(_), .. }));
    d.reply(lookup, 200, &page(&[]));
    let id = d.find(|c| matches!(c, ApiCall::StartNewSession { .. }));
    d.fail_without_message(id);
    let n: Vec<&Notice> = d
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Notify(n) => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(n.len(), 1, "{n:?}");
    assert_eq!(n[0].title, "Agent session not opened");
    assert_eq!(
        n[0].description.as_deref(),
        Some("Unable to open the code repository agent session.")
    );
}

/// FAIL-13: a launch target whose creation fails notifies (variant error) and selects nothing new.
#[test]
fn fail_13_launch_creation_failure_notifies() {
    let mut h = Harness::ready("s-1");
    h.launch(AGENT2, 1);
    let lookup = h.expect_pending("agent lookup", |c| {
        matches!(c, ApiCall::ListSessions { agent: Some(_), .. })
    });
    h.reply(lookup, 200, page(&[]));
    let id = start_new_pending(&h);
    h.reply(id, 503, json!({"detail": "No capacity."}));
    let n = h.notices();
    assert_eq!(n.len(), 1, "{n:?}");
    assert_eq!(n[0].variant, NoticeVariant::Error);
    assert!(
        n[0].description
            .as_deref()
            .unwrap()
            .contains("No capacity.")
    );
    assert_still_on_s1(&h);
}

/// FAIL-13: a failure of the default session's get-or-create is reported through
/// defaultSessionStatus and defaultSessionError, not through notify.
#[test]
fn fail_13_default_session_failure_does_not_notify() {
    let mut h = Harness::visible_in_env();
    h.shows_default(true);
    h.default_session(Some(AGENT));
    let id = h.get_or_create_request();
    h.reply(id, 500, json!({"detail": "Handle store down."}));
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Error);
    assert_eq!(
        s.default_session_error.as_deref(),
        Some("Handle store down.")
    );
    assert_eq!(s.current_session_id, None);
    assert!(h.notices().is_empty(), "{:?}", h.events());
}

// ---------------------------------------------------------------------------------------------
// Transcripts

/// FAIL-6, FAIL-7: the latest-sessions list fails with nothing selected.
#[test]
fn fail_transcript_list_failure_with_nothing_selected() {
    let mut h = Harness::visible_in_env();
    let id = h.list_request();
    h.reply(id, 500, json!({"detail": "Database unavailable."}));
    insta::assert_snapshot!(h.transcript());
}

/// FAIL-11, FAIL-12: history fails and insights fail for the selected session.
#[test]
fn fail_transcript_history_and_insights_failures() {
    let mut h = Harness::selected("s-1");
    h.answer_detail("s-1", record("s-1", AGENT, ENV, 0));
    let id = h.history_request("s-1");
    h.reply(id, 500, json!({"detail": "History store down."}));
    let id = h.insights_request("s-1");
    h.reply(id, 500, json!({"detail": "Insights exploded."}));
    insta::assert_snapshot!(h.transcript());
}

/// FAIL-13: a failed startAgentSessionById next to a ready session.
#[test]
fn fail_transcript_start_by_id_failure() {
    let mut h = Harness::ready("s-1");
    h.command(Command::StartAgentSessionById {
        agent_id: AGENT2.to_owned(),
        label: None,
    });
    let id = start_new_pending(&h);
    h.reply(id, 500, json!({"detail": "Agent is disabled."}));
    insta::assert_snapshot!(h.transcript());
}

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Local Agents (ADR 099, adr-notes section 5; issue 14, `docs/local-agents.md`): with a local
//! source the engine makes no platform request at all, and admission comes from the runtime's
//! `GET /ready` (`ok: true`), `GET /health` (no other mode than `local`) and the `GET
//! /api/chat` probe; a runtime that does not pass is `unavailable`, never `waking`, and is
//! looked for again every 5 s while the chat is visible. No credential is sent to it.

use engine_core::api::local::LocalRoute;
use engine_core::api::{InteractionState, Severity};
use engine_core::{
    ApiCall, Capabilities, Command, Input, LocalSource, Method, Origin, StorageRequest, Target,
};
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::fixtures::{ENV, USER};
use spec_tests::local::*;

/// ADR 099, adr-notes 5: with a local source no platform request leaves, whatever the person
/// and Environment inputs (the platform's list, catalog and icons included); the checks go to
/// the local base in order, each a `GET` with no credential; passing them all shows `ready`
/// with `can_submit`, and the local capabilities.
#[test]
fn adr_099_checks_in_order_and_no_platform_request() {
    let mut h = Harness::new();
    h.input(Input::Source(Some(source())));
    let mark = h.mark();
    h.person(USER).env(Some(ENV)).visible(true);
    let sent: Vec<_> = h.sent_since(mark).to_vec();
    assert_eq!(sent.len(), 1, "{sent:#?}");
    let r = &sent[0].request;
    assert_eq!(
        (r.method, r.url().as_str()),
        (Method::Get, "http://127.0.0.1:8787/ready")
    );
    assert_eq!(r.target, Target::Local);
    assert_eq!(r.header("Authorization"), None);
    assert_eq!(interaction(&h).state, InteractionState::Checking);
    assert!(!interaction(&h).can_submit);

    pass_checks(&mut h);
    let urls: Vec<String> = h.sent_since(mark).iter().map(|s| s.request.url()).collect();
    assert_eq!(
        urls,
        [
            "http://127.0.0.1:8787/ready",
            "http://127.0.0.1:8787/health",
            "http://127.0.0.1:8787/api/chat",
            "http://127.0.0.1:8787/api/local/v1/agent",
            "http://127.0.0.1:8787/api/local/v1/chat-sessions?limit=50",
            "http://127.0.0.1:8787/api/chat/model-providers"
        ],
        "the Agent, the conversations and the catalog are read once the runtime is ready"
    );
    assert!(
        h.sent()
            .iter()
            .all(|s| s.request.target == Target::Local
                && s.request.header("Authorization").is_none()),
        "only local requests, never a credential"
    );
    let i = interaction(&h);
    assert_eq!(
        (i.state, i.can_submit, i.notice),
        (InteractionState::Ready, true, None)
    );
    let s = h.snapshot();
    assert_eq!(s.capabilities, Capabilities::local(true));
    assert_eq!(s.active_runtime_presence, None);
    assert!(!s.is_assistant_runtime_starting);
    // Ready is not checked again on its own.
    let id = pending(&h, LocalRoute::Sessions);
    h.reply(id, 200, json!({"sessions": [], "nextCursor": null}));
    let mark = h.mark();
    h.advance(120_000);
    assert!(h.sent_since(mark).is_empty());
    assert_eq!(h.engine().poll_timeout(), None);
}

/// adr-notes 5: a runtime that is not ready is `unavailable` (never `waking`) with notice
/// `local_agent_unavailable`, "{Agent} is not running" and the runtime's detail, and
/// `retryAfterMs` 5000; it is looked for again 5 s later while visible, not while hidden, and
/// at once when the chat comes back.
#[test]
fn adr_099_a_runtime_not_ready_is_unavailable_and_looked_for_every_5_s() {
    let mut h = local();
    let id = pending(&h, LocalRoute::Ready);
    h.reply(
        id,
        503,
        json!({"ok": false, "detail": "Loading the model."}),
    );
    let i = interaction(&h);
    assert_eq!(
        (i.state, i.can_submit),
        (InteractionState::Unavailable, false)
    );
    assert_eq!(i.retry_after_ms, Some(5000));
    let notice = i.notice.expect("a notice");
    assert_eq!(notice.code, "local_agent_unavailable");
    assert_eq!(notice.severity, Severity::Error);
    assert_eq!(notice.title, "Ledger Helper is not running");
    assert_eq!(notice.message, "Loading the model.");
    assert!(!h.snapshot().is_assistant_runtime_starting);

    let mark = h.mark();
    h.advance(4_999);
    assert!(h.sent_since(mark).is_empty(), "not before 5 s");
    h.advance(1);
    let again: Vec<_> = h.sent_since(mark).iter().map(|s| s.call.clone()).collect();
    assert_eq!(
        again,
        [ApiCall::Local {
            route: LocalRoute::Ready
        }]
    );
    // While the re-check runs the unavailable decision stays on screen.
    assert_eq!(interaction(&h).state, InteractionState::Unavailable);
    let id = pending(&h, LocalRoute::Ready);
    h.reply(id, 200, json!({"ok": false}));
    assert_eq!(
        interaction(&h).notice.unwrap().message,
        "The local Agent is not ready yet."
    );

    // Hidden: no re-check; visible again: the due one goes out.
    h.visible(false);
    let mark = h.mark();
    h.advance(60_000);
    assert!(h.sent_since(mark).is_empty());
    assert_eq!(h.engine().poll_timeout(), None);
    h.visible(true);
    assert_eq!(h.sent_since(mark).len(), 1);
    pass_checks(&mut h);
    assert_eq!(interaction(&h).state, InteractionState::Ready);
}

/// `platform-api.md` section 8: `/health` naming a mode other than `local` refuses the runtime
/// ("This Agent runs in managed mode. Only a runtime started in local mode can be used
/// directly."); a probe that is not 2xx and a runtime that does not answer at all are
/// unavailable with their own texts; a `/health` that is missing lets the runtime through.
#[test]
fn adr_099_managed_mode_a_silent_probe_and_no_answer() {
    let mut h = local();
    let id = pending(&h, LocalRoute::Ready);
    h.reply(id, 200, json!({"ok": true}));
    let id = pending(&h, LocalRoute::Health);
    h.reply(id, 200, json!({"ok": true, "mode": "managed"}));
    assert_eq!(
        interaction(&h).notice.unwrap().message,
        "This Agent runs in managed mode. Only a runtime started in local mode can be used directly."
    );
    assert!(h.pending(|c| is_local(c, &LocalRoute::ChatCheck)).is_none());

    h.command(Command::RefreshActiveSessionRuntimeAccess);
    let id = pending(&h, LocalRoute::Ready);
    h.reply(id, 200, json!({"ok": true}));
    let id = pending(&h, LocalRoute::Health);
    h.reply(id, 404, Value::Null);
    let id = pending(&h, LocalRoute::ChatCheck);
    h.reply(id, 502, json!({"detail": "Bad gateway."}));
    assert_eq!(
        interaction(&h).notice.unwrap().message,
        "The local Agent at http://127.0.0.1:8787 does not answer its chat route."
    );

    h.command(Command::RefreshActiveSessionRuntimeAccess);
    let id = pending(&h, LocalRoute::Ready);
    h.fail(id);
    let i = interaction(&h);
    assert_eq!(i.state, InteractionState::Unavailable);
    assert_eq!(
        i.notice.unwrap().message,
        "Local Agent readiness: the local Agent did not answer."
    );
}

/// ADR 099, ENV-2: a path source is joined to the platform base's origin (the host serves and
/// forwards it); going back to the platform source is a change of scope: the platform is read
/// again, with the person's credential, and nothing more goes to the local runtime.
#[test]
fn adr_099_a_path_source_and_back_to_the_platform() {
    let mut h = Harness::visible_in_env();
    let path = LocalSource::new("/__agent__/", "Ledger Helper").unwrap();
    h.input(Input::Source(Some(path)));
    let id = pending(&h, LocalRoute::Ready);
    assert_eq!(
        h.request(id).request.url(),
        "https://platform.test/__agent__/ready"
    );
    assert!(h.request(id).request.root_relative);

    let mark = h.mark();
    h.input(Input::Source(None));
    assert!(h.was_aborted(id), "the local check in flight is dropped");
    let sent = h.sent_since(mark);
    assert!(
        sent.iter()
            .any(|s| matches!(s.call, ApiCall::ListSessions { .. })),
        "{sent:#?}"
    );
    assert!(sent.iter().all(|s| s.request.target == Target::Platform));
    assert_eq!(h.snapshot().capabilities, Capabilities::PLATFORM);
}

/// ADR 099: no platform request leaves with a local source, whatever the host asks: creating,
/// archiving, refreshing, the catalog, a launch target or a requested session. A message typed
/// meanwhile is handed back (nothing written is lost), never sent anywhere.
#[test]
fn adr_099_no_command_reaches_the_platform() {
    let mut h = local();
    pass_checks(&mut h);
    let mark = h.mark();
    for command in [
        Command::RefreshSessionDetail,
        Command::RequestAvailableModels,
        Command::ArchiveAgentSession {
            session_uid: "s-1".into(),
        },
        Command::DeleteAgentSession {
            session_uid: "s-1".into(),
        },
        Command::SendMessage {
            text: "Hello".into(),
        },
        Command::EnqueueMessage {
            text: "Later".into(),
        },
    ] {
        h.command(command);
    }
    h.requested(Some("s-1"));
    h.advance(60_000);
    let sent = h.sent_since(mark);
    assert!(
        sent.iter().all(|s| s.request.target == Target::Local),
        "{sent:#?}"
    );
    let handed_back: Vec<&str> = h
        .events()
        .iter()
        .filter_map(|e| match e {
            engine_core::Event::MessageNotSent { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(handed_back.contains(&"Hello"), "{:?}", h.events());
}

/// The conversation shown and its origin.
fn shown(h: &Harness) -> (Option<String>, Option<Origin>) {
    let s = h.snapshot();
    (s.current_session_id, s.selection_origin)
}

/// The selection writes since `mark`.
fn saved(h: &Harness, mark: usize) -> Vec<String> {
    h.storage()[mark..]
        .iter()
        .filter_map(|r| match r {
            StorageRequest::SaveSelection { key, session_uid } if key == KEY => {
                Some(session_uid.clone())
            }
            _ => None,
        })
        .collect()
}

/// adr-notes 5: the conversation shown is the one stored under
/// `ms.command-center-ai.local-session:{baseUrl}` (origin `restored`), else the runtime's
/// `default` ("Conversation"), and every change is written back; an answer for another key is
/// ignored. No newest conversation is picked implicitly.
#[test]
fn adr_099_the_stored_conversation_else_default() {
    let mut h = local();
    assert_eq!(
        h.storage().last(),
        Some(&StorageRequest::LoadSelection {
            key: KEY.to_owned()
        })
    );
    assert_eq!(shown(&h), (None, None), "nothing before storage answers");
    let mark = h.storage().len();
    stored(
        &mut h,
        "ms.command-center-ai.local-session:/other",
        Some("local-9"),
    );
    assert_eq!(shown(&h), (None, None));
    stored(&mut h, KEY, Some("local-7"));
    assert_eq!(shown(&h), (Some("local-7".into()), Some(Origin::Restored)));
    assert_eq!(saved(&h, mark), ["local-7"]);
    assert!(!h.snapshot().is_default_session);

    let mut h = local();
    stored(&mut h, KEY, None);
    assert_eq!(shown(&h), (Some("default".into()), Some(Origin::Restored)));
    let s = h.snapshot();
    assert_eq!(s.agent_sessions.len(), 1);
    assert_eq!(s.agent_sessions[0].title, "Conversation");
    // `isDefaultSession`: the runtime's default conversation is shown; no platform default.
    assert!(s.is_default_session);
    assert_eq!(
        s.default_session_status,
        engine_core::DefaultSessionStatus::Idle
    );
    assert_eq!(
        s.agent_sessions[0].agent_name.as_deref(),
        Some("Ledger Helper")
    );
    // The list, once read, does not move the selection.
    pass_checks(&mut h);
    let id = pending(&h, LocalRoute::Sessions);
    h.reply(
        id,
        200,
        json!({"sessions": [{"sessionUid": "local-1", "updatedAt": "2026-10-02T08:00:00Z"}]}),
    );
    assert_eq!(shown(&h).0.as_deref(), Some("default"));
}

/// adr-notes 5: `requestedSessionId` wins over what storage kept, before and after it answers,
/// and is written back.
#[test]
fn adr_099_a_requested_conversation_wins() {
    let mut h = Harness::visible_in_env();
    h.requested(Some("local-3"));
    let mark = h.storage().len();
    h.input(Input::Source(Some(source())));
    assert_eq!(shown(&h), (Some("local-3".into()), Some(Origin::Requested)));
    stored(&mut h, KEY, Some("local-7"));
    assert_eq!(shown(&h).0.as_deref(), Some("local-3"));
    h.requested(Some("local-4"));
    assert_eq!(shown(&h), (Some("local-4".into()), Some(Origin::Requested)));
    assert_eq!(saved(&h, mark), ["local-3", "local-4"]);
}

/// `platform-api.md` section 8: the list is read once the runtime is ready (`limit=50`), shown
/// newest first with the runtime's titles (else the latest message, else "New conversation")
/// and the Agent's name; read again on `refreshSessionDetail()`; a failure is
/// `latestSessionsError` ("Local chat sessions: {detail}"); a 404 or 405 means the runtime
/// cannot list: no error, and `capabilities.sessionHistory` false.
#[test]
fn adr_099_the_conversation_list() {
    let mut h = local();
    stored(&mut h, KEY, Some("local-2"));
    pass_checks(&mut h);
    let id = pending(&h, LocalRoute::Sessions);
    assert!(h.snapshot().is_loading_latest_sessions);
    h.reply(
        id,
        200,
        json!({"sessions": [
            {"sessionUid": "local-1", "title": "Budget", "updatedAt": "2026-10-02T08:00:00Z", "messageCount": 2},
            {"sessionUid": "local-2", "latestMessagePreview": "Done.", "updatedAt": "2026-10-02T09:00:00Z"},
            {"sessionUid": "local-3", "createdAt": "2026-10-01T09:00:00Z", "working": true}
        ], "nextCursor": null}),
    );
    let s = h.snapshot();
    assert!(!s.is_loading_latest_sessions);
    let rows: Vec<(&str, &str)> = s
        .agent_sessions
        .iter()
        .map(|r| (r.uid.as_str(), r.title.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            ("local-2", "Done."),
            ("local-1", "Budget"),
            ("local-3", "New conversation")
        ]
    );
    assert!(
        s.agent_sessions
            .iter()
            .all(|r| r.agent_name.as_deref() == Some("Ledger Helper"))
    );
    assert_eq!(s.latest_sessions_error, None);
    assert_eq!(s.capabilities, Capabilities::local(true));

    h.command(Command::RefreshSessionDetail);
    let id = pending(&h, LocalRoute::Sessions);
    h.reply(id, 500, json!({"detail": "Disk full."}));
    let s = h.snapshot();
    assert_eq!(
        s.latest_sessions_error.as_deref(),
        Some("Local chat sessions: Disk full.")
    );
    assert_eq!(s.agent_sessions.len(), 3, "the last list stays");

    h.command(Command::RefreshSessionDetail);
    let id = pending(&h, LocalRoute::Sessions);
    h.reply(id, 405, Value::Null);
    let s = h.snapshot();
    assert_eq!(s.latest_sessions_error, None);
    assert_eq!(s.capabilities, Capabilities::local(false));
    assert_eq!(
        s.agent_sessions
            .iter()
            .map(|r| r.uid.as_str())
            .collect::<Vec<_>>(),
        ["local-2"],
        "the conversation shown stays listed"
    );
}

/// `platform-api.md` section 8: the shown conversation's transcript is read once the runtime is
/// ready (the P9 shape) and becomes the thread; readiness is `loading` until then and `ready`
/// after; another conversation gets its own read, the one in flight is dropped.
#[test]
fn adr_099_the_transcript_is_read_for_the_shown_conversation() {
    let mut h = showing("local-2");
    let id = pending(&h, history_route("local-2"));
    assert_eq!(
        h.request(id).request.url(),
        "http://127.0.0.1:8787/api/local/v1/chat-sessions/local-2/history"
    );
    let r = h.snapshot().active_session_readiness;
    assert_eq!(
        (r.status, r.history_ready),
        (engine_core::ReadinessStatus::Loading, false)
    );
    h.reply(id, 200, spec_tests::fixtures::history("local-2"));
    let s = h.snapshot();
    assert_eq!(s.thread.len(), 2);
    assert_eq!(
        s.active_session_readiness.status,
        engine_core::ReadinessStatus::Ready
    );
    assert!(s.active_session_readiness.history_ready);
    assert_eq!(s.session_notice, None);

    h.requested(Some("local-3"));
    let first = pending(&h, history_route("local-3"));
    assert!(
        h.snapshot().thread.is_empty(),
        "another conversation starts empty"
    );
    h.requested(Some("local-4"));
    assert!(h.was_aborted(first));
    let id = pending(&h, history_route("local-4"));
    h.reply(id, 200, spec_tests::fixtures::history("local-4"));
    assert_eq!(h.snapshot().thread.len(), 2);
    // Read once per selection.
    let mark = h.mark();
    h.advance(60_000);
    assert!(h.sent_since(mark).is_empty());
}

/// A runtime that cannot reload conversations (404/405) shows an empty thread with "Earlier
/// messages are not shown: this local Agent cannot reload a conversation yet.", ready; a failed
/// read is readiness `error` with "Local chat session history: {detail}".
#[test]
fn adr_099_a_live_only_transcript_and_a_failed_one() {
    let mut h = showing("local-2");
    let id = pending(&h, history_route("local-2"));
    h.reply(id, 404, json!({"detail": "Not found."}));
    let s = h.snapshot();
    assert!(s.thread.is_empty());
    assert_eq!(
        s.session_notice.as_deref(),
        Some("Earlier messages are not shown: this local Agent cannot reload a conversation yet.")
    );
    assert_eq!(
        s.active_session_readiness.status,
        engine_core::ReadinessStatus::Ready
    );

    let mut h = showing("local-2");
    let id = pending(&h, history_route("local-2"));
    h.reply(id, 500, json!({"detail": "Disk full."}));
    let r = h.snapshot().active_session_readiness;
    assert_eq!(r.status, engine_core::ReadinessStatus::Error);
    assert_eq!(
        r.error.as_deref(),
        Some("Local chat session history: Disk full.")
    );
}

/// adr-notes 5: while the runtime is unavailable readiness is `ready` (the decision locks the
/// composer) and no transcript is read; it is read once the runtime passes its checks.
#[test]
fn adr_099_no_transcript_while_the_runtime_is_unavailable() {
    let mut h = local();
    stored(&mut h, KEY, Some("local-2"));
    assert_eq!(
        h.snapshot().active_session_readiness.status,
        engine_core::ReadinessStatus::Loading
    );
    let id = pending(&h, LocalRoute::Ready);
    h.reply(id, 503, json!({"ok": false}));
    assert_eq!(
        h.snapshot().active_session_readiness.status,
        engine_core::ReadinessStatus::Ready
    );
    assert!(!h.snapshot().composer_admission);
    assert!(
        h.pending(|c| is_local(c, &history_route("local-2")))
            .is_none()
    );
    h.advance(5_000);
    pass_checks(&mut h);
    assert!(
        h.pending(|c| is_local(c, &history_route("local-2")))
            .is_some()
    );
}

/// ADR 099, adr-notes 5: a message goes to `POST {base}/api/chat` at once (no access, no
/// confirmation), with the R2 body without `session`: the newest user message, `tools`,
/// `runConfig`, `user_uid`, and the conversation's id as `threadId` and `runtime_session_uid`;
/// no credential. The answer streams into the thread; after the turn the list is read again.
#[test]
fn adr_099_a_message_goes_to_the_local_runtime() {
    let mut h = talking("local-2");
    let mark = h.mark();
    h.send("Hello");
    let sent = h.sent_since(mark);
    assert_eq!(sent.len(), 1, "{sent:#?}");
    let r = &sent[0].request;
    assert_eq!(
        (r.method, r.url().as_str()),
        (Method::Post, "http://127.0.0.1:8787/api/chat")
    );
    assert_eq!(r.header("Authorization"), None);
    let body: Value = serde_json::from_slice(r.body.as_ref().unwrap()).unwrap();
    assert_eq!(
        body,
        json!({
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}],
            "tools": {},
            "runConfig": {},
            "user_uid": USER,
            "threadId": "local-2",
            "runtime_session_uid": "local-2"
        })
    );
    let id = sent[0].id;
    h.stream_head(id)
        .chunk(id, &spec_tests::fixtures::answer("m-9", "Hi there."))
        .end(id);
    let s = h.snapshot();
    assert_eq!(s.run_status, engine_core::RunStatus::Complete);
    let messages: Vec<String> = s
        .thread
        .iter()
        .map(|m| serde_json::to_string(m.as_ref()).unwrap())
        .collect();
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert!(messages[2].contains("\"Hello\""), "{messages:?}");
    assert!(messages[3].contains("Hi there."), "{messages:?}");
    assert!(
        h.pending(|c| is_local(c, &LocalRoute::Sessions)).is_some(),
        "read again"
    );
}

/// A turn refused by the local runtime fails as R2 does (RU-16, RU-19: "Source: Sending to the
/// Agent. Agent chat stream request failed. Status: HTTP 500 Internal Server Error. Call: POST
/// {base}/api/chat. Server response: {message}", `agent_http_error`) and the runtime is checked
/// again; a runtime that has not passed its checks takes no message: it is handed back with its
/// message, labelled as the send guard's (`runtime_unavailable`), and nothing is sent.
#[test]
fn adr_099_a_refused_turn_and_an_unavailable_runtime() {
    let mut h = talking("local-2");
    h.send("Hello");
    let id = h.expect_pending("local turn", is_local_turn);
    h.reply(id, 500, json!({"detail": "Model crashed."}));
    let s = h.snapshot();
    assert_eq!(s.run_status, engine_core::RunStatus::Error);
    let failure = s.run_failure.unwrap();
    assert_eq!(failure.code, engine_core::FailureCode::AgentHttpError);
    assert_eq!(
        failure.message,
        "Source: Sending to the Agent. Agent chat stream request failed. Status: HTTP 500 Internal Server Error. Call: POST http://127.0.0.1:8787/api/chat. Server response: Model crashed."
    );
    let id = pending(&h, LocalRoute::Ready);
    h.reply(id, 503, json!({"ok": false, "detail": "Restarting."}));
    assert!(!h.snapshot().composer_admission);

    let mark = h.mark();
    h.send("Again");
    assert!(h.sent_since(mark).iter().all(|s| !is_local_turn(&s.call)));
    let handed_back: Vec<_> = h
        .events()
        .iter()
        .filter_map(|e| match e {
            engine_core::Event::MessageNotSent {
                text, reason, code, ..
            } => Some((text.clone(), reason.clone(), *code)),
            _ => None,
        })
        .collect();
    assert_eq!(
        handed_back,
        [(
            "Again".to_owned(),
            "Source: Request was never sent. Restarting.".to_owned(),
            engine_core::FailureCode::RuntimeUnavailable
        )]
    );
}

/// adr-notes 5: `cancelActiveSession()` stops the run and sends `POST
/// {base}/api/chat/session/cancel` with `{"sessionUid", "message": "user_requested"}`, no
/// access and no credential; the run shows "Run cancelled." and keeps it after the 2xx answer
/// (the reference's local engine has no "Run cancellation requested."). A runtime that does
/// not know the conversation (404: a new one not yet named) has nothing to stop: no failure.
/// A conversation the runtime lists as working (a turn from before a reload) can be stopped.
#[test]
fn adr_099_a_stop_goes_to_the_local_cancel_route() {
    let mut h = talking("local-2");
    h.send("Hello");
    let id = h.expect_pending("local turn", is_local_turn);
    h.stream_head(id);
    h.command(Command::CancelActiveSession);
    assert!(h.was_aborted(id));
    let cancel = pending(
        &h,
        LocalRoute::Cancel {
            session_uid: "local-2".into(),
        },
    );
    let r = &h.request(cancel).request;
    assert_eq!(r.url(), "http://127.0.0.1:8787/api/chat/session/cancel");
    assert_eq!(r.header("Authorization"), None);
    let body: Value = serde_json::from_slice(r.body.as_ref().unwrap()).unwrap();
    assert_eq!(
        body,
        json!({"sessionUid": "local-2", "message": "user_requested"})
    );
    assert_eq!(
        h.snapshot().run_status_detail.as_deref(),
        Some("Run cancelled.")
    );
    h.reply(cancel, 200, json!({"status": "cancelled"}));
    let s = h.snapshot();
    assert_eq!(s.run_status_detail.as_deref(), Some("Run cancelled."));
    assert!(!s.is_cancelling_session);

    // A new conversation stopped before the runtime named it.
    let (mut h, client) = new_conversation();
    h.send("Hello");
    h.expect_pending("local turn", is_local_turn);
    h.command(Command::CancelActiveSession);
    let cancel = pending(
        &h,
        LocalRoute::Cancel {
            session_uid: client.clone(),
        },
    );
    h.reply(cancel, 404, json!({"detail": "No such conversation."}));
    let s = h.snapshot();
    assert_eq!(s.run_status, engine_core::RunStatus::Idle);
    assert_eq!(s.run_status_detail.as_deref(), Some("Run cancelled."));
    assert_eq!(s.session_notice, None);

    // A conversation the runtime lists as working.
    let mut h = local();
    stored(&mut h, KEY, Some("local-2"));
    pass_checks(&mut h);
    let id = pending(&h, LocalRoute::Sessions);
    h.reply(
        id,
        200,
        json!({"sessions": [{"sessionUid": "local-2", "working": true}]}),
    );
    h.command(Command::CancelActiveSession);
    let cancel = pending(
        &h,
        LocalRoute::Cancel {
            session_uid: "local-2".into(),
        },
    );
    assert!(
        h.notices().is_empty(),
        "no 'There is no running work to stop.': {:?}",
        h.notices()
    );
    assert!(h.snapshot().is_cancelling_session);
    h.reply(cancel, 200, json!({"status": "cancelled"}));
    let s = h.snapshot();
    assert!(!s.is_cancelling_session);
    assert_ne!(
        s.run_status_detail.as_deref(),
        Some("Cancelling session..."),
        "the reference's local engine has no such text"
    );
    assert_eq!(s.run_status, engine_core::RunStatus::Idle);
    // The list says whether it still works.
    let again = pending(&h, LocalRoute::Sessions);
    h.reply(again, 200, json!({"sessions": [{"sessionUid": "local-2"}]}));
    h.command(Command::CancelActiveSession);
    assert_eq!(
        h.notices().pop().and_then(|n| n.description).as_deref(),
        Some("There is no running work to stop.")
    );
}

/// Issue 14, adr-notes 2 and 5: `createAgentSession()` with a local source starts a new
/// conversation under a client id (origin `created`, "New conversation", no transcript read),
/// ready to write; its first message goes out under that id; the runtime's id
/// (`X-Agent-Session-Uid`) then replaces it everywhere: the selection and its stored copy, the
/// thread, the run, the queue and its storage key. The next turn goes under the runtime's id.
#[test]
fn issue_14_a_new_conversation_takes_the_runtimes_id() {
    let (mut h, client) = new_conversation();
    let s = h.snapshot();
    assert_ne!(client, "default");
    assert_eq!(s.selection_origin, Some(Origin::Created));
    assert!(
        s.agent_sessions
            .iter()
            .any(|r| r.uid == client && r.title == "New conversation")
    );
    assert!(
        h.pending(|c| is_local(c, &history_route(&client)))
            .is_none()
    );
    assert!(s.composer_admission);

    h.send("Hello");
    let turn = h.expect_pending("local turn", is_local_turn);
    let body = turn_body_of(&h, turn);
    assert_eq!(
        (
            body["runtime_session_uid"].as_str(),
            body["threadId"].as_str()
        ),
        (Some(client.as_str()), Some(client.as_str()))
    );
    assert!(body.get("session").is_none() && body.get("newChat").is_none());
    h.send("Queued while it answers");
    let mark = h.storage().len();
    h.head_with(turn, named_head(Some("local-9")));
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("local-9"));
    assert_eq!(s.selection_origin, Some(Origin::Created));
    assert_eq!(
        s.message_queue.len(),
        1,
        "the queue moved with the conversation"
    );
    assert!(s.thread.iter().any(|m| {
        serde_json::to_string(m.as_ref())
            .unwrap()
            .contains("\"Hello\"")
    }));
    let writes: Vec<String> = h.storage()[mark..]
        .iter()
        .map(|r| match r {
            StorageRequest::SaveSelection { session_uid, .. } => format!("selection {session_uid}"),
            StorageRequest::RemoveQueue { key } => format!("remove {key}"),
            StorageRequest::SaveQueue { key, .. } => format!("save {key}"),
            StorageRequest::LoadQueue { key } => format!("load {key}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        writes,
        [
            format!("remove main_sequence_ai.message_queue.{client}"),
            "selection local-9".to_owned(),
            // ADR 087: read once when it first comes on screen (an older copy would be kept).
            "load main_sequence_ai.message_queue.local-9".to_owned(),
            "save main_sequence_ai.message_queue.local-9".to_owned(),
        ]
    );
    h.chunk(turn, &spec_tests::fixtures::answer("m-1", "Hi."))
        .end(turn);
    // The queued row goes next, under the runtime's id (not held: the conversation was
    // re-keyed, not left).
    assert_eq!(
        h.snapshot().run_status_detail.as_deref(),
        Some("Sending queued message 1 of 1")
    );
    let next = h.expect_pending("local turn", is_local_turn);
    assert_eq!(turn_body_of(&h, next)["runtime_session_uid"], "local-9");
    assert!(
        h.pending(|c| is_local(c, &history_route("local-9")))
            .is_none(),
        "the thread stays"
    );
}

/// adr-notes 2 and 8: a new conversation whose first turn finishes without the runtime naming
/// a session shows "Source: Request was never sent. The agent did not start a session for this
/// conversation." (RU-16: a failure without a source of its own) and
/// `sessionNotice` "This new conversation did not get a session. Send the message again before
/// continuing.", and holds the queue `failed`; a `new_session` frame names it as the header
/// would.
#[test]
fn issue_14_a_new_conversation_without_a_session_and_the_frame() {
    let (mut h, _) = new_conversation();
    h.send("Hello");
    let turn = h.expect_pending("local turn", is_local_turn);
    h.send("Later");
    h.head_with(turn, named_head(None));
    h.chunk(turn, &spec_tests::fixtures::answer("m-1", "Hi."))
        .end(turn);
    let s = h.snapshot();
    assert_eq!(s.run_status, engine_core::RunStatus::Error);
    assert_eq!(
        s.run_status_detail.as_deref(),
        Some(
            "Source: Request was never sent. The agent did not start a session for this conversation."
        )
    );
    assert_eq!(
        s.run_failure.unwrap().code,
        engine_core::FailureCode::NewChatWithoutSession
    );
    assert_eq!(
        s.session_notice.as_deref(),
        Some(
            "This new conversation did not get a session. Send the message again before continuing."
        )
    );
    assert_eq!(
        s.message_queue_hold.map(|h| h.reason),
        Some(engine_core::HoldReason::Failed)
    );

    let (mut h, _) = new_conversation();
    h.send("Hello");
    let turn = h.expect_pending("local turn", is_local_turn);
    h.head_with(turn, named_head(None));
    let frames = spec_tests::fixtures::sse(&[
        json!({"type": "new_session", "new_session": {"runtime_session_uid": "local-5"}}),
        json!({"type": "start", "messageId": "m-1"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "Hi."}),
        json!({"type": "text-end", "id": "t"}),
        json!({"type": "finish"}),
    ]);
    h.chunk(turn, &frames).end(turn);
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("local-5"));
    assert_eq!(s.run_status, engine_core::RunStatus::Complete);

    // The frame is taken when it comes: a stop right after it keeps the runtime's id.
    let (mut h, _) = new_conversation();
    h.send("Hello");
    let turn = h.expect_pending("local turn", is_local_turn);
    h.head_with(turn, named_head(None));
    let frame = spec_tests::fixtures::sse(&[
        json!({"type": "new_session", "new_session": {"runtime_session_uid": "local-6"}}),
    ]);
    h.chunk(turn, &frame);
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some("local-6"));
    h.command(Command::CancelActiveSession);
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("local-6"));
    assert_ne!(s.run_status, engine_core::RunStatus::Error);
}

/// adr-notes 5: once the runtime is ready it names its Agent (`GET /api/local/v1/agent`,
/// `displayName`, else `name`); that name replaces the source's in the conversations, the
/// queue's texts and the unavailable notice. A failed read keeps the source's name.
#[test]
fn adr_099_the_runtime_names_its_agent() {
    let mut h = local();
    stored(&mut h, KEY, Some("local-2"));
    pass_checks(&mut h);
    let id = pending(&h, LocalRoute::Agent);
    h.reply(
        id,
        200,
        json!({"name": "ledger", "displayName": "Ledger Books"}),
    );
    let s = h.snapshot();
    assert_eq!(
        s.agent_sessions[0].agent_name.as_deref(),
        Some("Ledger Books")
    );
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    let id = pending(&h, LocalRoute::Ready);
    h.reply(id, 503, json!({"ok": false}));
    assert_eq!(
        interaction(&h).notice.unwrap().title,
        "Ledger Books is not running"
    );

    let mut h = local();
    stored(&mut h, KEY, Some("local-2"));
    pass_checks(&mut h);
    let id = pending(&h, LocalRoute::Agent);
    h.reply(id, 404, json!({"detail": "Not found."}));
    let s = h.snapshot();
    assert_eq!(
        s.agent_sessions[0].agent_name.as_deref(),
        Some("Ledger Helper")
    );
    assert_eq!(
        interaction(&h).state,
        InteractionState::Ready,
        "the runtime stays ready"
    );
}

/// OI-19 with a local source: a stop whose cancel gets no answer is given up after 10 s (the
/// engine's timer says when, and why: `CancelGiveUp`), with "Session cancellation request failed.".
#[test]
fn adr_099_a_local_cancel_is_given_up_after_10_s() {
    let mut h = talking("local-2");
    h.send("Hello");
    let id = h.expect_pending("local turn", is_local_turn);
    h.stream_head(id);
    h.command(Command::CancelActiveSession);
    let cancel = pending(
        &h,
        LocalRoute::Cancel {
            session_uid: "local-2".into(),
        },
    );
    let due = h.engine().poll_timeout().expect("the give-up is a timer");
    assert_eq!(
        h.engine().timeout_reason(),
        Some(engine_core::TimeoutReason::CancelGiveUp)
    );
    assert_eq!(
        due.saturating_duration_since(spec_tests::ORIGIN)
            .as_millis() as u64,
        h.now_ms() + 10_000
    );
    h.advance(10_000);
    assert!(h.was_aborted(cancel));
    assert_eq!(
        h.snapshot().run_status_detail.as_deref(),
        Some("Session cancellation request failed.")
    );
}

/// ENV-2 with a local source (review): a change of person clears the shared selection, and the
/// local conversation is shown again at once (the same one); the runtime's checks stand.
#[test]
fn adr_099_a_person_change_keeps_the_local_conversation() {
    let mut h = Harness::new();
    h.input(Input::Source(Some(source())));
    stored(&mut h, KEY, Some("local-2"));
    h.person(USER).visible(true);
    assert_eq!(shown(&h).0.as_deref(), Some("local-2"));
    h.person("user-2");
    assert_eq!(shown(&h).0.as_deref(), Some("local-2"));
}

/// HYD-4 with a local source (review): a transcript read again when the conversation is shown
/// again replaces this page's finished turns (they are in it): nothing shows twice.
#[test]
fn adr_099_a_transcript_read_again_shows_nothing_twice() {
    let mut h = talking("local-2");
    h.send("Hello");
    let id = h.expect_pending("local turn", is_local_turn);
    h.stream_head(id)
        .chunk(id, &spec_tests::fixtures::answer("m-9", "Hi."))
        .end(id);
    assert_eq!(h.snapshot().thread.len(), 4);
    h.requested(Some("local-3"));
    let id = pending(&h, history_route("local-3"));
    h.reply(id, 200, spec_tests::fixtures::history("local-3"));
    h.requested(Some("local-2"));
    let id = pending(&h, history_route("local-2"));
    h.reply(id, 200, spec_tests::fixtures::history("local-2"));
    assert_eq!(h.snapshot().thread.len(), 2, "the transcript alone");
}

/// Issue 14 (review): a runtime that keeps the client's id and names it once makes the
/// conversation known: its next turn is an ordinary one, not a new conversation's.
#[test]
fn issue_14_a_runtime_that_keeps_the_clients_id() {
    let (mut h, client) = new_conversation();
    h.send("Hello");
    let turn = h.expect_pending("local turn", is_local_turn);
    h.head_with(turn, named_head(Some(&client)));
    h.chunk(turn, &spec_tests::fixtures::answer("m-1", "Hi."))
        .end(turn);
    assert_eq!(h.snapshot().run_status, engine_core::RunStatus::Complete);
    h.send("Again");
    let turn = h.expect_pending("local turn", is_local_turn);
    h.head_with(turn, named_head(None));
    h.chunk(turn, &spec_tests::fixtures::answer("m-2", "Again."))
        .end(turn);
    let s = h.snapshot();
    assert_eq!(
        s.run_status,
        engine_core::RunStatus::Complete,
        "{:?}",
        s.run_status_detail
    );
    assert_eq!(s.current_session_id.as_deref(), Some(client.as_str()));
}

/// Review: a new display name for the same runtime is not a change of scope (no new checks,
/// a running turn goes on); the chat coming back into view checks the runtime again.
#[test]
fn adr_099_a_new_display_name_and_coming_back_into_view() {
    let mut h = talking("local-2");
    h.send("Hello");
    let turn = h.expect_pending("local turn", is_local_turn);
    h.stream_head(turn);
    let mark = h.mark();
    h.input(Input::Source(Some(
        LocalSource::new(BASE, "Ledger Books").unwrap(),
    )));
    assert!(h.sent_since(mark).is_empty(), "{:#?}", h.sent_since(mark));
    assert!(!h.was_aborted(turn));
    h.chunk(turn, &spec_tests::fixtures::answer("m-9", "Hi."))
        .end(turn);
    assert_eq!(h.snapshot().run_status, engine_core::RunStatus::Complete);
    h.visible(false);
    let mark = h.mark();
    h.visible(true);
    let again: Vec<_> = h.sent_since(mark).iter().map(|s| s.call.clone()).collect();
    assert!(
        again.contains(&ApiCall::Local {
            route: LocalRoute::Ready
        }),
        "{again:?}"
    );
}

/// adr-notes 5, the reference's local engine: `revalidateStaleRuntimeAccess()` (the composer's
/// focus) checks the runtime again when it is unavailable, or when its last check is more than
/// 60 s old (strictly); otherwise it sends nothing.
#[test]
fn adr_099_a_stale_decision_is_checked_again_on_focus() {
    let mut h = local();
    pass_checks(&mut h);
    let mark = h.mark();
    h.command(Command::RevalidateStaleRuntimeAccess);
    h.advance(60_000);
    h.command(Command::RevalidateStaleRuntimeAccess);
    assert!(
        h.sent_since(mark)
            .iter()
            .all(|s| !is_local(&s.call, &LocalRoute::Ready)),
        "60 s is not stale yet"
    );
    h.advance(1);
    h.command(Command::RevalidateStaleRuntimeAccess);
    let id = pending(&h, LocalRoute::Ready);
    assert_eq!(
        interaction(&h).state,
        InteractionState::Ready,
        "the decision stays on screen while the check runs"
    );
    h.reply(id, 503, json!({"ok": false}));
    assert_eq!(interaction(&h).state, InteractionState::Unavailable);
    // Unavailable: checked again at once, before the 5 s.
    h.command(Command::RevalidateStaleRuntimeAccess);
    pending(&h, LocalRoute::Ready);
}

/// A transcript that failed to load is read again on `refreshSessionDetail()` (with the list),
/// and a loaded one is not.
#[test]
fn adr_099_a_failed_transcript_is_read_again_on_refresh() {
    let mut h = showing("local-2");
    let id = pending(&h, history_route("local-2"));
    h.reply(id, 500, json!({"detail": "Disk full."}));
    assert_eq!(
        h.snapshot().active_session_readiness.status,
        engine_core::ReadinessStatus::Error
    );
    h.command(Command::RefreshSessionDetail);
    let again = pending(&h, history_route("local-2"));
    h.reply(again, 200, spec_tests::fixtures::history("local-2"));
    let s = h.snapshot();
    assert_eq!(
        s.active_session_readiness.status,
        engine_core::ReadinessStatus::Ready
    );
    assert_eq!(s.thread.len(), 2);
    let mark = h.mark();
    h.command(Command::RefreshSessionDetail);
    assert!(
        h.sent_since(mark)
            .iter()
            .all(|s| !is_local(&s.call, &history_route("local-2")))
    );
}

/// Issue 14, ADR 087: the runtime names a new conversation after one that already holds rows
/// here (read back from storage): the queues are merged under the runtime's id, the older rows
/// first and their hold kept, so nothing goes out without the person's word and nothing is
/// lost; the client's stored copy is removed.
#[test]
fn issue_14_a_rekey_onto_a_conversation_with_rows_merges_the_queues() {
    let mut h = showing("local-5");
    h.input(Input::StoredQueueLoaded {
        key: "main_sequence_ai.message_queue.local-5".into(),
        rows: Some(json!([{"id": "q-1", "text": "Older", "createdAt": "2026-10-02T08:00:00Z"}])),
    });
    assert_eq!(h.snapshot().message_queue.len(), 1);
    h.command(Command::CreateAgentSession);
    let client = h.snapshot().current_session_id.unwrap();
    h.send("Hello");
    let turn = h.expect_pending("local turn", is_local_turn);
    h.send("Newer");
    let mark = h.storage().len();
    h.head_with(turn, named_head(Some("local-5")));
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("local-5"));
    let texts: Vec<_> = s.message_queue.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(texts, ["Older", "Newer"]);
    let writes: Vec<String> = h.storage()[mark..]
        .iter()
        .map(|r| match r {
            StorageRequest::SaveSelection { session_uid, .. } => format!("selection {session_uid}"),
            StorageRequest::RemoveQueue { key } => format!("remove {key}"),
            StorageRequest::SaveQueue { key, rows } => format!("save {key} {}", rows.len()),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        writes,
        [
            format!("remove main_sequence_ai.message_queue.{client}"),
            "selection local-5".to_owned(),
            "save main_sequence_ai.message_queue.local-5 2".to_owned(),
        ]
    );
    assert_eq!(
        s.message_queue_hold.map(|h| h.reason),
        Some(engine_core::HoldReason::Away)
    );
    h.chunk(turn, &spec_tests::fixtures::answer("m-1", "Hi."))
        .end(turn);
    assert!(
        h.pending(is_local_turn).is_none(),
        "a held queue waits for the person"
    );
    assert_eq!(h.snapshot().message_queue.len(), 2);
}

/// Issue 14: the runtime names a new conversation after one with a turn of its own here (its
/// answer still streaming): nothing moves, the new conversation keeps the client's id, its
/// turn finishes there, and the other conversation's run is untouched.
#[test]
fn issue_14_a_rekey_onto_a_running_conversation_keeps_the_clients_id() {
    let mut h = talking("local-5");
    h.send("First");
    let first = h.expect_pending("local turn", is_local_turn);
    h.stream_head(first);
    h.command(Command::CreateAgentSession);
    let client = h.snapshot().current_session_id.unwrap();
    h.send("Second");
    let second = h
        .pending(|c| {
            matches!(c, engine_core::ApiCall::Local { route: LocalRoute::SendMessage { session_uid, .. } } if *session_uid == client)
        })
        .expect("the second turn");
    h.head_with(second, named_head(Some("local-5")));
    h.chunk(second, &spec_tests::fixtures::answer("m-2", "Hi."))
        .end(second);
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some(client.as_str()));
    assert_eq!(s.run_status, engine_core::RunStatus::Complete);
    assert_eq!(s.session_notice, None);
    h.requested(Some("local-5"));
    let s = h.snapshot();
    assert!(s.has_active_chat_stream, "the first run still streams");
    h.chunk(first, &spec_tests::fixtures::answer("m-1", "Done."))
        .end(first);
    assert_eq!(h.snapshot().run_status, engine_core::RunStatus::Complete);
}

/// The reference's local engine: archiving, deleting and unarchiving a local conversation are
/// not available ("{Archiving} is not available for a local Agent", info) and send nothing;
/// `startAgentSession` and `startAgentSessionById` start a new conversation as
/// `createAgentSession()` does; `openLatestOrStartAgentSessionById` does nothing;
/// `retryDefaultSession()` checks the runtime again.
#[test]
fn adr_099_session_actions_with_a_local_source() {
    let mut h = showing("local-2");
    let mark = h.mark();
    for command in [
        Command::ArchiveAgentSession {
            session_uid: "local-2".into(),
        },
        Command::DeleteAgentSession {
            session_uid: "local-2".into(),
        },
        Command::UnarchiveAgentSession {
            session_uid: "local-2".into(),
        },
        Command::OpenLatestOrStartAgentSessionById {
            agent_id: "a-1".into(),
            label: None,
        },
    ] {
        h.command(command);
    }
    assert!(h.sent_since(mark).is_empty(), "{:?}", h.sent_since(mark));
    let notices: Vec<_> = h
        .notices()
        .into_iter()
        .map(|n| (n.title, n.description, n.variant))
        .collect();
    let info = |what: &str| {
        (
            format!("{what} is not available for a local Agent"),
            None,
            engine_core::NoticeVariant::Info,
        )
    };
    assert_eq!(
        notices,
        [info("Archiving"), info("Deleting"), info("Unarchiving")]
    );
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some("local-2"));

    h.command(Command::StartAgentSessionById {
        agent_id: "a-1".into(),
        label: Some("Helper".into()),
    });
    let s = h.snapshot();
    let first = s.current_session_id.clone().unwrap();
    assert_ne!(first, "local-2");
    assert_eq!(s.selection_origin, Some(Origin::Created));
    h.command(Command::StartAgentSession {
        agent: engine_core::AgentRecord {
            id: None,
            uid: Some("a-1".into()),
            name: None,
        },
    });
    let second = h.snapshot().current_session_id.unwrap();
    assert_ne!(second, first);
    assert!(
        h.sent_since(mark)
            .iter()
            .all(|s| s.request.target == Target::Local)
    );

    h.command(Command::RetryDefaultSession);
    pending(&h, LocalRoute::Ready);

    // A hidden chat is asked to show itself when a conversation starts (the reference's).
    h.visible(false);
    let before = h.events().len();
    h.command(Command::CreateAgentSession);
    assert!(
        h.events()[before..]
            .iter()
            .any(|e| matches!(e, engine_core::Event::RequestVisible)),
        "{:?}",
        &h.events()[before..]
    );
}

/// The reference's page sessions: the conversations of this page (started here, or that sent a
/// turn from here) stay listed when the runtime does not list them (a live-only runtime lists
/// none), each named by its first message (cut to 80 characters, no ellipsis) and following
/// the re-key, newest first; so the person can go back to them.
#[test]
fn adr_099_this_pages_conversations_stay_listed() {
    let mut h = local();
    stored(&mut h, KEY, None);
    pass_checks(&mut h);
    let id = pending(&h, LocalRoute::Sessions);
    h.reply(id, 404, json!({"detail": "Not found."}));
    let id = pending(&h, history_route("default"));
    h.reply(id, 404, json!({}));
    let long = "x".repeat(100);
    h.send(&long);
    let turn = h.expect_pending("local turn", is_local_turn);
    h.head_with(turn, named_head(Some("local-default")));
    h.chunk(turn, &spec_tests::fixtures::answer("m-1", "Hi."))
        .end(turn);
    h.advance(1_000);
    h.command(Command::CreateAgentSession);
    let client = h.snapshot().current_session_id.unwrap();
    let rows: Vec<(String, String)> = h
        .snapshot()
        .agent_sessions
        .iter()
        .map(|r| (r.uid.clone(), r.title.clone()))
        .collect();
    assert_eq!(
        rows,
        [
            (client.clone(), "New conversation".to_owned()),
            ("local-default".to_owned(), "x".repeat(80)),
        ]
    );
    h.requested(Some("local-default"));
    assert_eq!(
        h.snapshot().current_session_id.as_deref(),
        Some("local-default")
    );
    assert!(
        h.snapshot().agent_sessions.iter().any(|r| r.uid == client),
        "the new conversation stays listed too"
    );
}

/// `capabilities.searchSessions` and `archiveSessions` are false for a local source: a search
/// looks through the conversations listed (their titles, case-insensitive, within the page
/// size) with no request, and the archived list is empty with no error;
/// `restoreDefaultSessionSelection()` shows the runtime's `default` conversation.
#[test]
fn adr_099_search_archived_and_the_default_conversation() {
    let mut h = local();
    stored(&mut h, KEY, Some("local-2"));
    pass_checks(&mut h);
    let id = pending(&h, LocalRoute::Sessions);
    h.reply(
        id,
        200,
        json!({"sessions": [
            {"sessionUid": "local-1", "title": "Ledger totals", "updatedAt": "2026-10-02T08:00:00Z"},
            {"sessionUid": "local-2", "title": "Invoices", "updatedAt": "2026-10-02T09:00:00Z"},
            {"sessionUid": "local-3", "title": "ledger export", "updatedAt": "2026-10-02T07:00:00Z"}
        ]}),
    );
    let mark = h.mark();
    h.command(Command::SearchAgentSessions {
        query: " LEDGER ".into(),
        limit: Some(1),
    });
    h.command(Command::FetchArchivedAgentSessions {
        agent_uid: None,
        limit: None,
    });
    assert!(h.sent_since(mark).is_empty(), "{:?}", h.sent_since(mark));
    let s = h.snapshot();
    assert_eq!(s.session_search_query.as_deref(), Some("LEDGER"));
    let found: Vec<_> = s
        .session_search_results
        .iter()
        .map(|r| r.uid.as_str())
        .collect();
    assert_eq!(found, ["local-1"], "newest first, one per page");
    assert_eq!(s.session_search_error, None);
    assert!(s.archived_sessions.is_empty());
    assert_eq!(s.archived_sessions_error, None);
    h.command(Command::SearchAgentSessions {
        query: "ledger".into(),
        limit: None,
    });
    assert_eq!(h.snapshot().session_search_results.len(), 2);

    h.command(Command::RestoreDefaultSessionSelection);
    assert_eq!(h.snapshot().current_session_id.as_deref(), Some("default"));
}

/// Issue 14: back on the runtime's `default` conversation after its first turn was re-keyed to
/// `local-default`, a turn re-keyed there again joins it (the finished turns this page showed
/// under `local-default` are in its transcript): one conversation, not two.
#[test]
fn issue_14_the_default_conversation_twice_is_one_conversation() {
    let mut h = talking("default");
    h.send("a");
    let turn = h.expect_pending("local turn", is_local_turn);
    h.head_with(turn, named_head(Some("local-default")));
    h.chunk(turn, &spec_tests::fixtures::answer("m-1", "A."))
        .end(turn);
    h.command(Command::RestoreDefaultSessionSelection);
    let id = pending(&h, history_route("default"));
    h.reply(id, 200, spec_tests::fixtures::history("default"));
    h.send("b");
    let turn = h.expect_pending("local turn", is_local_turn);
    h.head_with(turn, named_head(Some("local-default")));
    h.chunk(turn, &spec_tests::fixtures::answer("m-2", "B."))
        .end(turn);
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some("local-default"));
    let rows: Vec<_> = s.agent_sessions.iter().map(|r| r.uid.as_str()).collect();
    assert!(!rows.contains(&"default"), "{rows:?}");
}

/// ADR 087 with a re-key (issue 14): a conversation re-keyed onto an id whose stored queue was
/// never read here (the chat hidden meanwhile) reads that copy before writing over it, so rows
/// stored under it come back (held) instead of being lost.
#[test]
fn issue_14_a_rekey_reads_the_stored_queue_before_writing_it() {
    let (mut h, _) = new_conversation();
    h.send("Hello");
    let turn = h.expect_pending("local turn", is_local_turn);
    h.send("Newer");
    h.visible(false);
    let mark = h.storage().len();
    h.head_with(turn, named_head(Some("local-5")));
    let key = "main_sequence_ai.message_queue.local-5".to_owned();
    let ops: Vec<String> = h.storage()[mark..]
        .iter()
        .filter_map(|r| match r {
            StorageRequest::LoadQueue { key: k } if *k == key => Some("load".to_owned()),
            StorageRequest::SaveQueue { key: k, .. } if *k == key => Some("save".to_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(ops, ["load", "save"], "{:?}", &h.storage()[mark..]);
    h.input(Input::StoredQueueLoaded {
        key,
        rows: Some(json!([{"id": "q-1", "text": "Older", "createdAt": "2026-10-02T08:00:00Z"}])),
    });
    h.visible(true);
    let s = h.snapshot();
    let texts: Vec<_> = s.message_queue.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(texts, ["Older", "Newer"]);
    assert_eq!(
        s.message_queue_hold.map(|h| h.reason),
        Some(engine_core::HoldReason::Away)
    );
}

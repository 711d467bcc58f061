#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::undocumented_unsafe_blocks,
    clippy::indexing_slicing,
    missing_docs
)]
//! Issue 25, point 3 (the C part): `ae_send_readiness` tells a C host whether it can send now
//! and, when it cannot, the cause as views (code, message, HTTP status) with no JSON to read;
//! `ae_send_readiness_json` gives the same as the snapshot's `sendReadiness` JSON, the failing
//! read included. Both refuse null arguments like every entry point, and agree with the
//! snapshot (FAIL-7's `latestSessionsError` text is the cause's message, unchanged).

use agent_engine::*;
use serde_json::{Value, json};

const BASE: &str = "http://127.0.0.1:8787";

struct Engine(*mut AeEngine);

impl Drop for Engine {
    fn drop(&mut self) {
        unsafe { ae_engine_free(self.0) };
    }
}

impl Engine {
    fn new() -> Engine {
        let config = json!({"platformBaseUrl": BASE, "seed": 5}).to_string();
        let mut e = std::ptr::null_mut();
        assert_eq!(
            unsafe { ae_engine_new(config.as_ptr(), config.len(), 0, &mut e) },
            AE_OK
        );
        Engine(e)
    }

    fn input(&self, input: Value) {
        let text = input.to_string();
        assert_eq!(
            unsafe { ae_handle_input(self.0, text.as_ptr(), text.len(), 10) },
            AE_OK
        );
    }

    /// A signed-in person in an Environment, on a visible chat: the engine lists the sessions.
    fn visible_in_env() -> Engine {
        let e = Engine::new();
        e.input(json!({"input": "person", "value": {"userUid": "user-1", "token": "t0ken"}}));
        e.input(json!({"input": "environment_uid", "value": "env-1"}));
        e.input(json!({"input": "is_visible", "value": true}));
        e
    }

    /// Drains the intents; the id of the latest-sessions list request.
    fn list_request(&self) -> u64 {
        let mut found = None;
        let mut iv = unsafe { std::mem::zeroed::<AeIntentView>() };
        while unsafe { ae_poll_intent(self.0, &mut iv) } == AE_OK {
            let url = text(iv.url);
            if iv.kind == AE_INTENT_HTTP && url.contains("created_by_user_uid") {
                found = Some(iv.id);
            }
        }
        found.expect("the engine lists the sessions")
    }

    fn reply(&self, id: u64, status: u16, body: Value) {
        let head = json!({"status": status, "contentType": "application/json"}).to_string();
        let body = body.to_string();
        unsafe {
            assert_eq!(
                ae_handle_response(self.0, id, head.as_ptr(), head.len(), 20),
                AE_OK
            );
            assert_eq!(
                ae_handle_body_chunk(self.0, id, body.as_ptr(), body.len(), 20),
                AE_OK
            );
            assert_eq!(ae_handle_body_end(self.0, id, 20), AE_OK);
        }
    }

    /// `ae_send_readiness`: (state, code, message, status).
    fn readiness(&self) -> (u32, String, String, u16) {
        let (state, code, message, status, _) = self.readiness_with_failure();
        (state, code, message, status)
    }

    /// `ae_send_readiness`: (state, code, message, status, failure).
    fn readiness_with_failure(&self) -> (u32, String, String, u16, String) {
        let mut r = unsafe { std::mem::zeroed::<AeReadiness>() };
        assert_eq!(unsafe { ae_send_readiness(self.0, &mut r) }, AE_OK);
        (
            r.state,
            text(r.code),
            text(r.message),
            r.status,
            text(r.failure),
        )
    }

    fn readiness_json(&self) -> Value {
        json_out(|buf| unsafe { ae_send_readiness_json(self.0, buf) })
    }

    fn snapshot(&self) -> Value {
        json_out(|buf| unsafe { ae_snapshot(self.0, buf) })
    }
}

/// The JSON an entry point wrote into a buffer (then freed).
fn json_out(call: impl FnOnce(&mut AeBuf) -> i32) -> Value {
    let mut buf = AeBuf {
        ptr: std::ptr::null_mut(),
        len: 0,
    };
    assert_eq!(call(&mut buf), AE_OK);
    let value = serde_json::from_slice(bytes(buf.ptr, buf.len)).unwrap();
    unsafe { ae_buf_free(buf) };
    value
}

fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if ptr.is_null() {
        assert_eq!(len, 0, "a null view with a length");
        return &[];
    }
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

fn text(s: AeStr) -> String {
    String::from_utf8(bytes(s.ptr, s.len).to_vec()).unwrap()
}

fn last_error() -> (i32, String) {
    let mut buf = AeBuf {
        ptr: std::ptr::null_mut(),
        len: 0,
    };
    let code = unsafe { ae_last_error(&mut buf) };
    let message = String::from_utf8_lossy(bytes(buf.ptr, buf.len)).into_owned();
    unsafe { ae_buf_free(buf) };
    (code, message)
}

/// Issue 25 point 3: what the host has not given is named (visibility first), then the engine
/// waits for the sessions by itself; views and JSON agree with the snapshot's `sendReadiness`.
#[test]
fn missing_inputs_are_named_then_the_engine_waits() {
    let e = Engine::new();
    let (state, code, message, status) = e.readiness();
    assert_eq!(state, AE_SEND_BLOCKED);
    assert_eq!(code, "not_visible");
    assert_eq!(
        message,
        "The chat is not visible: give the engine Input::IsVisible(true)."
    );
    assert_eq!(status, 0);
    assert_eq!(e.readiness_with_failure().4, "", "no read failed");
    assert_eq!(e.readiness_json()["code"], "not_visible");

    let e = Engine::visible_in_env();
    let (state, code, message, status) = e.readiness();
    assert_eq!(state, AE_SEND_WAITING);
    assert_eq!(code, "sessions");
    assert_eq!(message, "Loading the sessions...");
    assert_eq!(status, 0);
    assert_eq!(
        e.readiness_json(),
        json!({"state": "waiting", "waitingFor": "sessions"})
    );
    assert_eq!(e.readiness_json(), e.snapshot()["sendReadiness"]);
}

/// Issue 25 point 3, FAIL-7: a refused latest-sessions list is the cause, with its HTTP status
/// and the snapshot's own text as the message; the JSON carries the failing read (operation,
/// status, the server's message).
#[test]
fn a_refused_list_is_the_cause_with_its_status() {
    let e = Engine::visible_in_env();
    let id = e.list_request();
    e.reply(id, 401, json!({"detail": "Invalid token."}));
    let (state, code, message, status, failure) = e.readiness_with_failure();
    assert_eq!(state, AE_SEND_BLOCKED);
    assert_eq!(code, "sessions_failed");
    assert_eq!(status, 401);
    // RU-19: the full text names the request (this head gives no reason phrase).
    let text = "Latest agent sessions request failed. Status: HTTP 401. Call: GET http://127.0.0.1:8787/api/v1/agent-sessions/?organization_environment_uid=env-1&created_by_user_uid=user-1&is_archived=false&ordering=-started_at&limit=20. Server response: Invalid token.";
    assert_eq!(failure, text);
    let snapshot = e.snapshot();
    assert_eq!(message, text);
    assert_eq!(snapshot["latestSessionsError"], message.as_str());
    let json = e.readiness_json();
    assert_eq!(json, snapshot["sendReadiness"]);
    assert_eq!(json["state"], "blocked");
    assert_eq!(
        json["failure"],
        json!({"kind": "http", "operation": "session_list", "status": 401,
               "server_message": "Invalid token."})
    );
    assert!(!json.to_string().contains("t0ken"), "no credential: {json}");
}

/// Issue 25 point 3: a transport failure is the cause too, with no HTTP status (0) and the
/// transport's message as the failure (the view's and the JSON's).
#[test]
fn a_transport_failure_is_the_cause_without_a_status() {
    let e = Engine::visible_in_env();
    let id = e.list_request();
    let failure = json!({"kind": "no_answer", "message": "connection refused"}).to_string();
    assert_eq!(
        unsafe { ae_handle_failure(e.0, id, failure.as_ptr(), failure.len(), 30) },
        AE_OK
    );
    let (state, code, message, status, failure) = e.readiness_with_failure();
    assert_eq!(state, AE_SEND_BLOCKED, "{message}");
    assert_eq!(code, "sessions_failed");
    assert_eq!(status, 0);
    assert_eq!(failure, "connection refused");
    let json = e.readiness_json();
    assert_eq!(json["failure"]["kind"], "transport");
    assert_eq!(json["failure"]["message"], "connection refused");
    assert_eq!(json, e.snapshot()["sendReadiness"]);
}

/// The boundary's rules: the views stay valid (and the same) while the engine does not change,
/// and follow it when it does.
#[test]
fn the_views_are_read_again_only_when_the_engine_changed() {
    let e = Engine::new();
    let mut first = unsafe { std::mem::zeroed::<AeReadiness>() };
    let mut second = unsafe { std::mem::zeroed::<AeReadiness>() };
    assert_eq!(unsafe { ae_send_readiness(e.0, &mut first) }, AE_OK);
    assert_eq!(unsafe { ae_send_readiness(e.0, &mut second) }, AE_OK);
    assert_eq!(first.message.ptr, second.message.ptr);
    assert_eq!(text(first.code), "not_visible");
    e.input(json!({"input": "is_visible", "value": true}));
    assert_eq!(e.readiness().1, "no_environment");
}

/// The boundary's rules: null arguments are refused with `AE_ERR_NULL` and a message, never a
/// crash.
#[test]
fn null_arguments_are_refused() {
    let mut r = unsafe { std::mem::zeroed::<AeReadiness>() };
    let mut buf = AeBuf {
        ptr: std::ptr::null_mut(),
        len: 0,
    };
    unsafe {
        assert_eq!(ae_send_readiness(std::ptr::null_mut(), &mut r), AE_ERR_NULL);
        assert_eq!(
            ae_send_readiness_json(std::ptr::null_mut(), &mut buf),
            AE_ERR_NULL
        );
    }
    let e = Engine::new();
    unsafe {
        assert_eq!(ae_send_readiness(e.0, std::ptr::null_mut()), AE_ERR_NULL);
        assert_eq!(last_error(), (AE_ERR_NULL, "The readiness is null.".into()));
        assert_eq!(
            ae_send_readiness_json(e.0, std::ptr::null_mut()),
            AE_ERR_NULL
        );
    }
    assert!(buf.ptr.is_null());
}

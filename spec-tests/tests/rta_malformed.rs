#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! RTA-12, RTA-20, OI-1, OI-3: malformed resolve-runtime-access answers never panic and count as
//! failed requests: the decision is kept (a first check gains the still-checking notice), the
//! next request follows the backoff, and no confirmation is made. The runtime token never shows
//! in Debug output, events, snapshots or any platform request.

use engine_core::api::{InteractionState, Severity};
use engine_core::{ApiCall, Command, Input, ReadinessStatus, Target};
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::fixtures::{ENV2, RUNTIME_TOKEN, runtime_ready, runtime_transient};

type Edit = fn(&mut Value);

fn is_resolve(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ResolveRuntimeAccess { session_uid } if session_uid == "s-1")
}

fn is_confirm(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ConfirmAgent { .. })
}

/// One malformed answer: its status, content type, body and chunk size.
struct Case {
    name: String,
    status: u16,
    content_type: Option<&'static str>,
    body: Vec<u8>,
    chunk: Option<usize>,
}

fn json_case(name: &str, edit: Edit) -> Case {
    let mut v = runtime_ready("s-1");
    edit(&mut v);
    Case {
        name: name.to_owned(),
        status: 200,
        content_type: Some("application/json"),
        body: v.to_string().into_bytes(),
        chunk: None,
    }
}

fn raw_case(name: &str, status: u16, content_type: &'static str, body: &[u8]) -> Case {
    Case {
        name: name.to_owned(),
        status,
        content_type: Some(content_type),
        body: body.to_vec(),
        chunk: None,
    }
}

fn remove(v: &mut Value, key: &str) {
    v.as_object_mut().unwrap().remove(key);
}

/// Every malformed answer the tests feed.
fn cases() -> Vec<Case> {
    let edits: Vec<(&str, Edit)> = vec![
        ("missing runtime_interaction", |v| {
            remove(v, "runtime_interaction")
        }),
        ("null runtime_interaction", |v| {
            v["runtime_interaction"] = Value::Null
        }),
        ("string runtime_interaction", |v| {
            v["runtime_interaction"] = json!("ready")
        }),
        ("list runtime_interaction", |v| {
            v["runtime_interaction"] = json!([{"state": "ready", "can_submit": true}])
        }),
        ("missing runtime_presence", |v| {
            remove(v, "runtime_presence")
        }),
        ("string runtime_presence", |v| {
            v["runtime_presence"] = json!("serving")
        }),
        ("unknown presence phase", |v| {
            v["runtime_presence"]["phase"] = json!("asleep")
        }),
        ("empty presence detail", |v| {
            v["runtime_presence"]["detail"] = json!("")
        }),
        ("unknown state", |v| {
            v["runtime_interaction"]["state"] = json!("sleeping")
        }),
        ("upper-case state", |v| {
            v["runtime_interaction"]["state"] = json!("READY")
        }),
        ("numeric state", |v| {
            v["runtime_interaction"]["state"] = json!(3)
        }),
        ("missing state", |v| {
            v["runtime_interaction"]
                .as_object_mut()
                .unwrap()
                .remove("state");
        }),
        ("string can_submit", |v| {
            v["runtime_interaction"]["can_submit"] = json!("true")
        }),
        ("numeric can_submit", |v| {
            v["runtime_interaction"]["can_submit"] = json!(1)
        }),
        ("null can_submit", |v| {
            v["runtime_interaction"]["can_submit"] = Value::Null
        }),
        ("missing can_submit", |v| {
            v["runtime_interaction"]
                .as_object_mut()
                .unwrap()
                .remove("can_submit");
        }),
        ("rpc_url not a url", |v| v["rpc_url"] = json!("not a url")),
        ("javascript rpc_url", |v| {
            v["rpc_url"] = json!("javascript:alert(1)")
        }),
        ("ftp rpc_url", |v| {
            v["rpc_url"] = json!("ftp://rt.test/agents/s-1")
        }),
        ("rpc_url with query", |v| {
            v["rpc_url"] = json!("https://rt.test/agents/s-1?token=x")
        }),
        ("numeric rpc_url", |v| v["rpc_url"] = json!(8080)),
        ("missing rpc_url", |v| remove(v, "rpc_url")),
        ("empty token", |v| v["token"] = json!("")),
        ("blank token", |v| v["token"] = json!("   ")),
        ("numeric token", |v| v["token"] = json!(12345)),
        ("missing token", |v| remove(v, "token")),
        ("unknown mode with can_submit", |v| {
            v["mode"] = json!("direct")
        }),
        ("missing mode with can_submit", |v| remove(v, "mode")),
    ];
    let mut cases: Vec<Case> = edits
        .into_iter()
        .map(|(name, edit)| json_case(name, edit))
        .collect();
    cases.push(raw_case(
        "HTML 500",
        500,
        "text/html",
        b"<!doctype html><html><body><h1>500 Internal Server Error</h1></body></html>",
    ));
    cases.push(raw_case(
        "HTML 200",
        200,
        "text/html",
        b"<html><body>Login required</body></html>",
    ));
    cases.push(raw_case(
        "invalid JSON",
        200,
        "application/json",
        br#"{"runtime_interaction": {"state": "ready", "can_submit": tr"#,
    ));
    cases.push(raw_case("empty body", 200, "application/json", b""));
    cases.push(raw_case("JSON null", 200, "application/json", b"null"));
    cases.push(raw_case("JSON list", 200, "application/json", b"[]"));
    cases.push(raw_case(
        "JSON string",
        200,
        "application/json",
        br#""ready""#,
    ));
    cases.push(raw_case(
        "not UTF-8",
        200,
        "application/json",
        b"\xff\xfe{\"mode\":\"token\"}",
    ));
    let mut chunked = raw_case(
        "invalid JSON, 1-byte chunks",
        200,
        "application/json",
        br#"{"mode": "token", "runtime_interaction": {"state": "rea"#,
    );
    chunked.chunk = Some(1);
    cases.push(chunked);
    let mut chunked = json_case("unknown state, 1-byte chunks", |v| {
        v["runtime_interaction"]["state"] = json!("dozing")
    });
    chunked.chunk = Some(1);
    cases.push(chunked);
    let mut chunked = raw_case(
        "HTML 502, 1-byte chunks",
        502,
        "text/html",
        b"<html>Bad Gateway</html>",
    );
    chunked.chunk = Some(1);
    cases.push(chunked);
    cases
}

fn feed(h: &mut Harness, case: &Case) {
    let id = h.runtime_request("s-1");
    h.reply_raw(id, case.status, case.content_type, &case.body, case.chunk);
}

/// The runtime token never shows anywhere but the confirmation's Authorization header.
fn assert_token_hidden(h: &Harness, token: &str) {
    let s = h.snapshot();
    assert!(!format!("{s:?}").contains(token), "snapshot Debug");
    assert!(!format!("{s:#?}").contains(token), "snapshot Debug");
    assert!(
        !serde_json::to_string(&s).unwrap().contains(token),
        "snapshot JSON"
    );
    assert!(!format!("{:?}", h.events()).contains(token), "events");
    assert!(
        !serde_json::to_string(h.events()).unwrap().contains(token),
        "events JSON"
    );
    assert!(!format!("{:?}", h.engine()).contains(token), "engine Debug");
    assert!(!h.transcript().contains(token), "transcript");
    for sent in h.sent() {
        assert!(!format!("{sent:?}").contains(token), "{sent:?}");
        assert!(
            !serde_json::to_string(&sent.request)
                .unwrap()
                .contains(token),
            "{sent:?}"
        );
        let r = &sent.request;
        if r.target == Target::Platform {
            assert!(!r.url().contains(token), "{sent:?}");
            assert!(
                r.headers.iter().all(|hd| !hd.value().contains(token)),
                "{sent:?}"
            );
            let body = r
                .body
                .as_ref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            assert!(!body.contains(token), "{sent:?}");
        } else {
            assert!(
                matches!(sent.call, ApiCall::ConfirmAgent { .. }),
                "{sent:?}"
            );
        }
    }
}

/// RTA-20, RTA-12, OI-3, OI-1: every malformed answer to a first check is a failed request: no
/// panic, the decision stays checking and locked with the still-checking notice, no
/// confirmation, the retry exactly 2 s later (not at 1 999 ms), no notify, readiness untouched.
#[test]
fn rta_20_malformed_first_answer_is_a_failed_request() {
    for case in cases() {
        let name = &case.name;
        let mut h = Harness::hydrated("s-1");
        feed(&mut h, &case);
        let s = h.snapshot();
        let i = s.active_runtime_interaction.clone().expect(name);
        assert_eq!(i.state, InteractionState::Checking, "{name}");
        assert!(!i.can_submit, "{name}");
        let n = i.notice.expect(name);
        assert_eq!(n.code, "agent_runtime_client_check_retrying", "{name}");
        assert_eq!(n.severity, Severity::Warning, "{name}");
        assert_eq!(n.title, "Still checking", "{name}");
        assert_eq!(
            n.message, "Could not confirm that Ledger Helper is ready. Trying again.",
            "{name}"
        );
        assert!(!s.composer_admission, "{name}");
        assert!(s.is_assistant_runtime_starting, "{name}");
        assert_eq!(
            s.active_session_readiness.status,
            ReadinessStatus::Ready,
            "{name}"
        );
        assert_eq!(s.session_notice, None, "{name}");
        assert!(h.notices().is_empty(), "{name}: {:?}", h.notices());
        assert_eq!(h.count(is_confirm), 0, "{name}");
        assert_eq!(h.count(is_resolve), 1, "{name}");
        h.advance(1999);
        assert_eq!(h.count(is_resolve), 1, "{name}: no retry at 1 999 ms");
        h.advance(1);
        assert_eq!(h.count(is_resolve), 2, "{name}: retry at 2 000 ms");
        // The second malformed answer backs off 4 s.
        feed(&mut h, &case);
        h.advance(3999);
        assert_eq!(h.count(is_resolve), 2, "{name}: no retry at 3 999 ms");
        h.advance(1);
        assert_eq!(h.count(is_resolve), 3, "{name}: retry at 4 000 ms");
        assert_eq!(h.count(is_confirm), 0, "{name}");
        assert_token_hidden(&h, RUNTIME_TOKEN);
    }
}

/// RTA-12, OI-1: a malformed answer after a transient decision keeps that decision (with the
/// platform's own notice, not the still-checking one) and backs off twice its interval.
#[test]
fn rta_12_malformed_after_transient_keeps_decision() {
    for case in cases() {
        let name = &case.name;
        let mut h = Harness::hydrated("s-1");
        let id = h.runtime_request("s-1");
        h.reply(id, 200, runtime_transient("waking", Some(2500)));
        h.advance(2500);
        feed(&mut h, &case);
        let i = h.snapshot().active_runtime_interaction.unwrap();
        assert_eq!(i.state, InteractionState::Waking, "{name}");
        assert_eq!(i.notice.unwrap().code, "agent_waking", "{name}");
        assert_eq!(i.retry_after_ms, Some(2500), "{name}");
        h.advance(4999);
        assert_eq!(h.count(is_resolve), 2, "{name}: no retry at 4 999 ms");
        h.advance(1);
        assert_eq!(h.count(is_resolve), 3, "{name}: retry at 5 000 ms");
        assert_eq!(h.count(is_confirm), 0, "{name}");
        assert!(h.notices().is_empty(), "{name}");
    }
}

/// RTA-12: a malformed answer while a confirmed ready decision is in force (a refresh) keeps it
/// and admission stays open; no confirmation is made.
#[test]
fn rta_12_malformed_after_ready_keeps_admission() {
    for case in cases() {
        let name = &case.name;
        let mut h = Harness::hydrated("s-1");
        h.runtime_ready("s-1", 200);
        h.advance(20_000);
        h.command(Command::RefreshActiveSessionRuntimeAccess);
        feed(&mut h, &case);
        let s = h.snapshot();
        let i = s.active_runtime_interaction.unwrap();
        assert_eq!(i.state, InteractionState::Ready, "{name}");
        assert_eq!(i.notice, None, "{name}");
        assert!(s.composer_admission, "{name}");
        assert_eq!(h.count(is_confirm), 1, "{name}: only the first one");
        assert!(h.notices().is_empty(), "{name}");
    }
}

/// RTA-14: a well-formed ready answer delivered one byte at a time is read whole and confirmed.
#[test]
fn rta_14_ready_answer_in_one_byte_chunks() {
    let mut h = Harness::hydrated("s-1");
    let id = h.runtime_request("s-1");
    let body = runtime_ready("s-1").to_string();
    h.reply_raw(id, 200, Some("application/json"), body.as_bytes(), Some(1));
    let id = h.confirm_request("s-1");
    assert_eq!(
        h.request(id).request.header("Authorization"),
        Some(format!("Bearer {RUNTIME_TOKEN}").as_str())
    );
    h.reply_raw(id, 200, None, b"{}", Some(1));
    let s = h.snapshot();
    assert_eq!(
        s.active_runtime_interaction.unwrap().state,
        InteractionState::Ready
    );
    assert!(s.composer_admission);
}

/// RTA-14, INV-11: the runtime token is used only in the confirmation's Authorization header:
/// it never shows in Debug output, serialized snapshots or events, the engine's Debug, the
/// transcript, or any platform request, through ready, waking, refresh, focus, page return and
/// an Environment change.
#[test]
fn rta_14_runtime_token_never_shown() {
    let token = "rt-SECRET-7f3a9c";
    let ready = || {
        let mut v = runtime_ready("s-1");
        v["token"] = json!(token);
        v
    };
    let mut h = Harness::hydrated("s-1");
    let id = h.runtime_request("s-1");
    h.reply(id, 200, ready());
    let confirm = h.confirm_request("s-1");
    assert_eq!(
        h.request(confirm).request.header("Authorization"),
        Some(format!("Bearer {token}").as_str()),
        "the token is used where it belongs"
    );
    h.fail(confirm); // the waking decision keeps rpc_url and token
    assert_token_hidden(&h, token);
    h.advance(3000);
    let id = h.runtime_request("s-1");
    h.reply(id, 200, ready());
    let confirm = h.confirm_request("s-1");
    h.reply_raw(confirm, 401, Some("application/json"), b"{}", None);
    assert!(h.snapshot().composer_admission);
    h.advance(60_000);
    h.command(Command::RevalidateStaleRuntimeAccess);
    let id = h.runtime_request("s-1");
    h.reply(id, 200, ready());
    let confirm = h.confirm_request("s-1");
    h.reply_raw(confirm, 200, None, b"", None);
    h.input(Input::PageVisible(false));
    h.advance(60_000);
    h.input(Input::PageVisible(true));
    let id = h.runtime_request("s-1");
    h.reply(id, 200, ready());
    h.command(Command::RefreshActiveSessionRuntimeAccess);
    h.env(Some(ENV2));
    assert_token_hidden(&h, token);
    // Platform requests were made after the token was known (resolves, the list of ENV2).
    assert!(
        h.sent()
            .iter()
            .filter(|s| s.request.target == Target::Platform)
            .count()
            > 5
    );
}

/// RTA-20 (transcript): an HTML 500 and then invalid JSON in one-byte chunks as answers to the
/// first check, each a failed request with its backoff.
#[test]
fn rta_malformed_transcript_html_then_chunked_invalid_json() {
    let mut h = Harness::hydrated("s-1");
    let id = h.runtime_request("s-1");
    h.reply_raw(
        id,
        500,
        Some("text/html"),
        b"<html><body><h1>500 Internal Server Error</h1></body></html>",
        None,
    );
    h.advance(2000);
    let id = h.runtime_request("s-1");
    h.reply_raw(
        id,
        200,
        Some("application/json"),
        br#"{"mode": "token", "runtime_interaction": {"st"#,
        Some(1),
    );
    h.advance(4000);
    insta::assert_snapshot!(h.transcript());
}

/// RTA-12, OI-3 (transcript): after a transient decision, an answer with a non-boolean
/// can_submit and a bad rpc_url is a failed request: the decision is kept, no confirmation.
#[test]
fn rta_malformed_transcript_after_transient() {
    let mut h = Harness::hydrated("s-1");
    let id = h.runtime_request("s-1");
    h.reply(id, 200, runtime_transient("starting", Some(1000)));
    h.advance(1000);
    let mut v = runtime_ready("s-1");
    v["runtime_interaction"]["can_submit"] = json!("yes");
    let id = h.runtime_request("s-1");
    h.reply(id, 200, v);
    h.advance(2000);
    let mut v = runtime_ready("s-1");
    v["rpc_url"] = json!("not a url");
    let id = h.runtime_request("s-1");
    h.reply(id, 200, v);
    h.advance(4000);
    insta::assert_snapshot!(h.transcript());
}

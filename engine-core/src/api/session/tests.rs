use serde_json::json;

use super::*;
use crate::api::error::hostile_bodies;

const DETAIL_EXAMPLE: &str = r#"{
  "uid": "5b0c7e1e-1111-4a6e-9c6f-000000000a01",
  "agent_uid": "7d2f0c4a-2222-4b1f-8e3a-000000000b01",
  "agent_name": "Ledger Helper",
  "organization_environment_uid": "e0e0e0e0-3333-4c2d-9d4e-000000000c01",
  "organization_environment_name": "Staging",
  "name": "Ledger chat",
  "summary": "",
  "harness": "tau",
  "harness_protocol": "tau-session-v1",
  "harness_version": "0.4.2",
  "status": "running",
  "started_at": "2026-10-02T08:15:00Z",
  "ended_at": null,
  "llm_provider": "acme-cloud",
  "llm_model": "acme-large",
  "llm_thinking": "medium",
  "engine_name": "tau",
  "runtime_state": "idle",
  "working": false,
  "created_by_user_uid": "a1a1a1a1-4444-4e5f-8a6b-000000000d01",
  "is_archived": false,
  "archived_at": null,
  "bound_handle": {
    "uid": "b2b2b2b2-5555-4f60-9b7c-000000000e01",
    "handle_unique_id": "ledger_default",
    "owner_user_uid": "a1a1a1a1-4444-4e5f-8a6b-000000000d01",
    "is_locked": false
  }
}"#;

const PAGE_EXAMPLE: &str = r#"{
  "count": 2,
  "next": null,
  "previous": null,
  "results": [
    {"uid": "5b0c7e1e-1111-4a6e-9c6f-000000000a02", "agent_uid": "7d2f0c4a-2222-4b1f-8e3a-000000000b01", "agent_name": "Ledger Helper", "organization_environment_uid": "e0e0e0e0-3333-4c2d-9d4e-000000000c01", "name": null, "status": "completed", "started_at": "2026-10-02T09:00:00Z", "ended_at": "2026-10-02T09:04:10Z", "llm_provider": "acme-cloud", "llm_model": "acme-large", "engine_name": "tau", "is_archived": false, "bound_handle": null},
    {"uid": "5b0c7e1e-1111-4a6e-9c6f-000000000a01", "agent_uid": "7d2f0c4a-2222-4b1f-8e3a-000000000b01", "agent_name": "Ledger Helper", "organization_environment_uid": "e0e0e0e0-3333-4c2d-9d4e-000000000c01", "name": "Ledger chat", "status": "running", "started_at": "2026-10-02T08:15:00Z", "ended_at": null, "llm_provider": "acme-cloud", "llm_model": "acme-large", "engine_name": "tau", "is_archived": false, "bound_handle": {"uid": "b2b2b2b2-5555-4f60-9b7c-000000000e01", "handle_unique_id": "ledger_default", "owner_user_uid": "a1a1a1a1-4444-4e5f-8a6b-000000000d01", "is_locked": false}}
  ]
}"#;

const ARCHIVE_EXAMPLE: &str = r#"{"uid": "5b0c7e1e-1111-4a6e-9c6f-000000000a02", "agent_uid": "7d2f0c4a-2222-4b1f-8e3a-000000000b01", "agent_name": "Ledger Helper", "organization_environment_uid": "e0e0e0e0-3333-4c2d-9d4e-000000000c01", "status": "completed", "started_at": "2026-10-02T09:00:00Z", "ended_at": "2026-10-02T09:04:10Z", "llm_provider": "acme-cloud", "llm_model": "acme-large", "engine_name": "tau", "is_archived": true, "archived_at": "2026-10-03T07:30:00Z"}"#;

fn record(value: Value) -> SessionRecord {
    SessionRecord::from_value(value).unwrap()
}

fn malformed_message(error: ApiError) -> String {
    match error {
        ApiError::Malformed { message } => message,
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[test]
fn detail_example() {
    let session = parse_session_record(DETAIL_EXAMPLE.as_bytes()).unwrap();
    assert_eq!(session.uid, "5b0c7e1e-1111-4a6e-9c6f-000000000a01");
    assert_eq!(
        session.agent_uid.as_deref(),
        Some("7d2f0c4a-2222-4b1f-8e3a-000000000b01")
    );
    assert_eq!(session.agent_name.as_deref(), Some("Ledger Helper"));
    assert_eq!(
        session.environment_uid.as_deref(),
        Some("e0e0e0e0-3333-4c2d-9d4e-000000000c01")
    );
    assert_eq!(session.name.as_deref(), Some("Ledger chat"));
    assert_eq!(session.title, "Ledger chat");
    assert_eq!(session.status.as_deref(), Some("running"));
    assert_eq!(session.started_at.as_deref(), Some("2026-10-02T08:15:00Z"));
    assert_eq!(session.ended_at, None);
    assert_eq!(session.updated_at(), Some("2026-10-02T08:15:00Z"));
    assert_eq!(session.llm_provider.as_deref(), Some("acme-cloud"));
    assert_eq!(session.llm_model.as_deref(), Some("acme-large"));
    assert_eq!(session.llm_thinking.as_deref(), Some("medium"));
    assert!(!session.working);
    assert!(!session.is_archived);
    assert_eq!(session.handle_unique_id.as_deref(), Some("ledger_default"));
    assert_eq!(
        session.created_by_user_uid.as_deref(),
        Some("a1a1a1a1-4444-4e5f-8a6b-000000000d01")
    );
    // Unknown fields survive verbatim.
    let raw: Value = serde_json::from_str(DETAIL_EXAMPLE).unwrap();
    assert_eq!(session.raw, raw);
    assert_eq!(session.raw.value()["harness_protocol"], "tau-session-v1");
    assert!(
        session
            .check_environment("e0e0e0e0-3333-4c2d-9d4e-000000000c01")
            .is_ok()
    );
    assert_eq!(
        session.check_environment("other"),
        Err(ApiError::WrongEnvironment {
            expected: "other".to_owned(),
            actual: Some("e0e0e0e0-3333-4c2d-9d4e-000000000c01".to_owned()),
        })
    );
}

#[test]
fn page_list_example() {
    let sessions = parse_session_list(PAGE_EXAMPLE.as_bytes()).unwrap();
    let uids: Vec<&str> = sessions.iter().map(|s| s.uid.as_str()).collect();
    assert_eq!(
        uids,
        [
            "5b0c7e1e-1111-4a6e-9c6f-000000000a02",
            "5b0c7e1e-1111-4a6e-9c6f-000000000a01"
        ]
    );
    let first = &sessions[0];
    assert_eq!(first.name, None);
    assert_eq!(
        first.title,
        "Agent session 5b0c7e1e-1111-4a6e-9c6f-000000000a02"
    );
    assert_eq!(first.handle_unique_id, None);
    assert_eq!(first.updated_at(), Some("2026-10-02T09:04:10Z"));
    assert_eq!(
        sessions[1].handle_unique_id.as_deref(),
        Some("ledger_default")
    );
}

#[test]
fn archive_example() {
    let session = parse_session_record(ARCHIVE_EXAMPLE.as_bytes()).unwrap();
    assert!(session.is_archived);
    assert_eq!(
        session.title,
        "Agent session 5b0c7e1e-1111-4a6e-9c6f-000000000a02"
    );
}

#[test]
fn list_shapes() {
    let array = r#"[{"uid": "b"}, {"id": 4}, "x", {"uid": "a"}]"#;
    let sessions = parse_session_list(array.as_bytes()).unwrap();
    let uids: Vec<&str> = sessions.iter().map(|s| s.uid.as_str()).collect();
    assert_eq!(uids, ["b", "a"]);

    for other in [
        "{}",
        "null",
        "5",
        r#""x""#,
        r#"{"results": {"uid": "a"}}"#,
        r#"{"results": null}"#,
        r#"{"uid": "a"}"#,
        "[]",
    ] {
        assert_eq!(
            parse_session_list(other.as_bytes()).unwrap(),
            Vec::new(),
            "{other}"
        );
    }
    let error = parse_session_list(b"not json").unwrap_err();
    assert_eq!(
        malformed_message(error),
        "The session list answer is not valid JSON."
    );
}

#[test]
fn uid_fallbacks_in_order() {
    assert_eq!(
        record(json!({"agent_session_uid": "a", "session_uid": "b"})).uid,
        "a"
    );
    assert_eq!(
        record(json!({"uid": "", "session_uid": "b", "runtime_session_uid": "c"})).uid,
        "b"
    );
    assert_eq!(
        record(json!({"uid": 5, "runtime_session_uid": " c "})).uid,
        "c"
    );
    assert_eq!(
        record(json!({"uid": "u", "agent_session_uid": "a"})).uid,
        "u"
    );
}

#[test]
fn numeric_id_is_never_the_uid() {
    for value in [
        json!({"id": 12}),
        json!({"id": "12", "agent_session": 3}),
        json!({"uid": 12}),
        json!({"uid": "  "}),
        json!({}),
    ] {
        let error = SessionRecord::from_value(value).unwrap_err();
        assert_eq!(malformed_message(error), "The session record has no uid.");
    }
}

#[test]
fn not_an_object() {
    for value in [json!([]), json!(null), json!("uid"), json!(3)] {
        let error = SessionRecord::from_value(value).unwrap_err();
        assert_eq!(
            malformed_message(error),
            "The session record is not a JSON object."
        );
    }
    let error = parse_session_record(b"[]").unwrap_err();
    assert_eq!(
        malformed_message(error),
        "The session record is not a JSON object."
    );
    let error = parse_session_record(b"{oops").unwrap_err();
    assert_eq!(
        malformed_message(error),
        "The session detail answer is not valid JSON."
    );
}

#[test]
fn nested_agent_object() {
    let session = record(json!({
        "uid": "s",
        "agent_uid": "flat",
        "agent": {"id": 9, "uid": "nested", "name": "Nested Agent"}
    }));
    assert_eq!(session.agent_uid.as_deref(), Some("nested"));
    assert_eq!(session.agent_name.as_deref(), Some("Nested Agent"));

    let session = record(json!({
        "uid": "s",
        "agent_uid": "flat",
        "agent_name": "Flat Name",
        "agent": {"uid": "", "name": "Nested Agent"}
    }));
    assert_eq!(session.agent_uid.as_deref(), Some("flat"));
    assert_eq!(session.agent_name.as_deref(), Some("Flat Name"));

    // A legacy numeric agent is ignored.
    let session = record(json!({"uid": "s", "agent": 42, "agent_uid": "flat"}));
    assert_eq!(session.agent_uid.as_deref(), Some("flat"));
    assert_eq!(session.agent_name, None);
}

#[test]
fn title_fallbacks() {
    assert_eq!(
        record(json!({"uid": "s", "name": " N ", "title": "T"})).title,
        "N"
    );
    assert_eq!(
        record(json!({"uid": "s", "name": "  ", "title": "T", "summary": "S"})).title,
        "T"
    );
    assert_eq!(
        record(json!({"uid": "s", "name": null, "title": "", "summary": "S"})).title,
        "S"
    );
    assert_eq!(record(json!({"uid": "s"})).title, "Agent session s");
}

#[test]
fn bound_handles_fallback() {
    let session = record(json!({
        "uid": "s",
        "bound_handle": null,
        "bound_handles": [5, {"handle_unique_id": ""}, {"handle_unique_id": "legacy"}, {"handle_unique_id": "later"}]
    }));
    assert_eq!(session.handle_unique_id.as_deref(), Some("legacy"));

    let session = record(json!({
        "uid": "s",
        "bound_handle": {"uid": "h", "handle_unique_id": null},
        "bound_handles": [{"handle_unique_id": "legacy"}]
    }));
    assert_eq!(session.handle_unique_id.as_deref(), Some("legacy"));

    let session = record(json!({
        "uid": "s",
        "bound_handle": {"handle_unique_id": "current"},
        "bound_handles": [{"handle_unique_id": "legacy"}]
    }));
    assert_eq!(session.handle_unique_id.as_deref(), Some("current"));

    let session = record(json!({"uid": "s", "bound_handles": {"handle_unique_id": "x"}}));
    assert_eq!(session.handle_unique_id, None);
}

#[test]
fn wrong_types_read_as_absent() {
    let value = json!({
        "uid": "s",
        "agent_uid": 7,
        "agent_name": ["x"],
        "organization_environment_uid": {"uid": "e"},
        "name": 5,
        "title": true,
        "summary": null,
        "status": 1,
        "started_at": 0,
        "ended_at": false,
        "llm_provider": [],
        "llm_model": {},
        "llm_thinking": 2,
        "working": "true",
        "is_archived": 1,
        "bound_handle": "ledger_default",
        "bound_handles": "ledger_default",
        "created_by_user_uid": 3
    });
    let session = record(value.clone());
    assert_eq!(
        session,
        SessionRecord {
            uid: "s".to_owned(),
            agent_uid: None,
            agent_name: None,
            environment_uid: None,
            name: None,
            title: "Agent session s".to_owned(),
            status: None,
            started_at: None,
            ended_at: None,
            llm_provider: None,
            llm_model: None,
            llm_thinking: None,
            working: false,
            is_archived: false,
            handle_unique_id: None,
            created_by_user_uid: None,
            archived_at: None,
            raw: Json::compact_of(value.clone()),
        }
    );
    assert_eq!(
        session.check_environment("e"),
        Err(ApiError::WrongEnvironment {
            expected: "e".to_owned(),
            actual: None
        })
    );
}

#[test]
fn booleans_and_thinking() {
    let session =
        record(json!({"uid": "s", "working": true, "is_archived": true, "llm_thinking": ""}));
    assert!(session.working);
    assert!(session.is_archived);
    assert_eq!(session.llm_thinking.as_deref(), Some(""));
}

#[test]
fn created_session_plain_and_bare() {
    let session = parse_created_session(DETAIL_EXAMPLE.as_bytes()).unwrap();
    assert_eq!(session.uid, "5b0c7e1e-1111-4a6e-9c6f-000000000a01");
    let session = parse_created_session(br#"{"uid": "bare"}"#).unwrap();
    assert_eq!(session.uid, "bare");
    assert_eq!(session.title, "Agent session bare");
    let session = parse_created_session(br#"{"agent_session_uid": "fallback"}"#).unwrap();
    assert_eq!(session.uid, "fallback");
}

#[test]
fn created_session_wrapped() {
    for key in ["session", "result", "data"] {
        let body = format!(r#"{{"ok": true, "{key}": {{"uid": "w-{key}", "name": "N"}}}}"#);
        let session = parse_created_session(body.as_bytes()).unwrap();
        assert_eq!(session.uid, format!("w-{key}"));
        assert_eq!(session.title, "N");
        assert_eq!(session.raw, json!({"uid": format!("w-{key}"), "name": "N"}));
    }
    // `session` is tried before `result` and `data`; wrappers without a uid are passed over.
    let body = br#"{"data": {"uid": "d"}, "session": {"uid": "s"}}"#;
    assert_eq!(parse_created_session(body).unwrap().uid, "s");
    let body = br#"{"session": {"id": 1}, "result": "x", "data": {"uid": "d"}}"#;
    assert_eq!(parse_created_session(body).unwrap().uid, "d");
}

#[test]
fn created_session_without_uid() {
    for body in [
        r#"{}"#,
        r#"{"id": 4}"#,
        r#"{"session": {"session": {"uid": "too-deep"}}}"#,
        r#"{"session": "uid"}"#,
        r#"[{"uid": "a"}]"#,
        "null",
        "",
        "not json",
    ] {
        let error = parse_created_session(body.as_bytes()).unwrap_err();
        assert_eq!(
            malformed_message(error),
            "Session creation succeeded but no AgentSession uid was returned.",
            "{body}"
        );
    }
}

#[test]
fn get_or_create_needs_an_unwrapped_uid() {
    let session = parse_get_or_create_session(DETAIL_EXAMPLE.as_bytes()).unwrap();
    assert_eq!(session.handle_unique_id.as_deref(), Some("ledger_default"));
    for body in [
        r#"{"session": {"uid": "wrapped"}}"#,
        r#"{"data": {"uid": "wrapped"}}"#,
        r#"{"agent_session_uid": "fallback"}"#,
        r#"{"uid": 3}"#,
        r#"{"uid": ""}"#,
        r#"[{"uid": "a"}]"#,
        "",
        "<html>",
    ] {
        let error = parse_get_or_create_session(body.as_bytes()).unwrap_err();
        assert_eq!(
            malformed_message(error),
            "Session get-or-create succeeded but no AgentSession uid was returned.",
            "{body}"
        );
    }
}

#[test]
fn hostile_bodies_do_not_panic() {
    for body in hostile_bodies() {
        let _ = parse_session_record(&body);
        let _ = parse_session_list(&body);
        let _ = parse_created_session(&body);
        let _ = parse_get_or_create_session(&body);
    }
}

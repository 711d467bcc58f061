use serde_json::json;

use super::*;
use crate::api::error::hostile_bodies;

fn source(base: &str) -> LocalSource {
    LocalSource::new(base, "Ledger Helper").unwrap()
}

#[test]
fn routes_render_without_credentials() {
    let loopback = source("http://127.0.0.1:8787/");
    type Case<'a> = (
        LocalRoute,
        Method,
        &'a str,
        Vec<(&'a str, &'a str)>,
        Option<Value>,
    );
    let cases: Vec<Case<'_>> = vec![
        (LocalRoute::Ready, Method::Get, "/ready", vec![], None),
        (LocalRoute::Health, Method::Get, "/health", vec![], None),
        (
            LocalRoute::ChatCheck,
            Method::Get,
            "/api/chat",
            vec![],
            None,
        ),
        (
            LocalRoute::Agent,
            Method::Get,
            "/api/local/v1/agent",
            vec![],
            None,
        ),
        (
            LocalRoute::Sessions,
            Method::Get,
            "/api/local/v1/chat-sessions",
            vec![("limit", "50")],
            None,
        ),
        (
            LocalRoute::History {
                session_uid: "local-a/b".into(),
            },
            Method::Get,
            "/api/local/v1/chat-sessions/local-a%2Fb/history",
            vec![],
            None,
        ),
        (
            LocalRoute::ModelProviders,
            Method::Get,
            "/api/chat/model-providers",
            vec![],
            None,
        ),
        (
            LocalRoute::SessionModel {
                session_uid: "local-1".into(),
            },
            Method::Get,
            "/api/chat/session-model",
            vec![("sessionUid", "local-1")],
            None,
        ),
        (
            LocalRoute::SetSessionModel {
                session_uid: "local-1".into(),
                provider: "acme".into(),
                model: "large".into(),
                thinking_level: None,
            },
            Method::Put,
            "/api/chat/session-model",
            vec![],
            Some(
                json!({"sessionUid": "local-1", "provider": "acme", "model": "large", "thinkingLevel": null}),
            ),
        ),
        (
            LocalRoute::Cancel {
                session_uid: "local-1".into(),
            },
            Method::Post,
            "/api/chat/session/cancel",
            vec![],
            Some(json!({"sessionUid": "local-1", "message": "user_requested"})),
        ),
    ];
    for (route, method, path, query, body) in cases {
        let r = route.render(&loopback, "https://platform.test").unwrap();
        assert_eq!((r.method, r.path.as_str()), (method, path), "{route:?}");
        assert_eq!(r.base, "http://127.0.0.1:8787");
        assert_eq!(r.target, Target::Local);
        assert!(!r.root_relative);
        let q: Vec<(&str, &str)> = r
            .query
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(q, query);
        let sent: Option<Value> = r.body.as_ref().map(|b| serde_json::from_slice(b).unwrap());
        assert_eq!(sent, body);
        assert_eq!(r.header("Authorization"), None, "no credential, ever");
        assert_eq!(r.header("Accept"), Some("application/json"));
        assert_eq!(r.body_mode, BodyMode::Buffered);
    }
    let send = LocalRoute::SendMessage {
        session_uid: "default".into(),
        body: json!({"messages": []}),
    };
    let r = send.render(&loopback, "https://platform.test").unwrap();
    assert_eq!((r.method, r.path.as_str()), (Method::Post, "/api/chat"));
    assert_eq!(r.body_mode, BodyMode::Streamed);
    assert_eq!(r.header("Accept"), Some("text/event-stream"));
    assert_eq!(r.header("Content-Type"), Some("application/json"));
}

#[test]
fn a_path_source_joins_the_platform_origin() {
    let r = LocalRoute::Ready
        .render(&source("/__agent__/"), "https://app.example.com/platform/")
        .unwrap();
    assert_eq!(r.url(), "https://app.example.com/__agent__/ready");
    assert!(r.root_relative);
    let r = LocalRoute::Ready
        .render(&source("/"), "http://127.0.0.1:9000")
        .unwrap();
    assert_eq!(r.url(), "http://127.0.0.1:9000/ready");
}

#[test]
fn unusable_ids_render_nothing() {
    for bad in ["", " ", "null", "undefined", ".", ".."] {
        let route = LocalRoute::History {
            session_uid: bad.into(),
        };
        assert!(
            route.render(&source("/a"), "https://p.test").is_err(),
            "{bad:?}"
        );
    }
}

#[test]
fn readiness_needs_ok_true() {
    assert_eq!(read_ready(200, br#"{"ok": true}"#), Readiness::Ready);
    assert_eq!(
        read_ready(200, br#"{"ok": "true"}"#),
        Readiness::NotReady(NOT_READY_TEXT.into())
    );
    assert_eq!(
        read_ready(503, br#"{"ok": true, "detail": "Loading the model."}"#),
        Readiness::NotReady("Loading the model.".into())
    );
    assert_eq!(
        read_ready(200, b"<html>"),
        Readiness::NotReady(NOT_READY_TEXT.into())
    );
}

#[test]
fn health_refuses_a_managed_runtime_only() {
    assert_eq!(
        read_health(200, br#"{"mode": "managed"}"#),
        Some(MANAGED_MODE_TEXT)
    );
    assert_eq!(read_health(200, br#"{"mode": "local"}"#), None);
    assert_eq!(read_health(200, br#"{"mode": " "}"#), None);
    assert_eq!(read_health(200, br#"{}"#), None);
    assert_eq!(read_health(404, br#"{"mode": "managed"}"#), None);
    assert_eq!(read_health(200, b"not json"), None);
}

#[test]
fn session_rows_are_read_and_checked() {
    let body = json!({"sessions": [
        {"sessionUid": " local-1 ", "title": "Budget", "messageCount": 4,
         "latestMessagePreview": "Done.", "createdAt": "2026-10-02T08:00:00Z",
         "updatedAt": "2026-10-02T08:05:00Z", "working": true},
        {"sessionUid": "local-2", "messageCount": -1, "working": "yes"},
        {"sessionUid": ""}, {"title": "no id"}, {"sessionUid": 7}, {"sessionUid": ".."}
    ], "nextCursor": null});
    let rows = parse_local_sessions(body.to_string().as_bytes()).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(
        rows[0],
        LocalSession {
            session_uid: "local-1".into(),
            title: Some("Budget".into()),
            message_count: 4,
            latest_message_preview: Some("Done.".into()),
            created_at: Some("2026-10-02T08:00:00Z".into()),
            updated_at: Some("2026-10-02T08:05:00Z".into()),
            working: true,
        }
    );
    assert_eq!((rows[1].message_count, rows[1].working), (0, false));
    let many: Vec<Value> = (0..2000)
        .map(|i| json!({"sessionUid": format!("s-{i}")}))
        .collect();
    let rows = parse_local_sessions(json!({"sessions": many}).to_string().as_bytes()).unwrap();
    assert_eq!(rows.len(), MAX_LOCAL_SESSIONS);
    for bad in [&b"[]"[..], b"{}", br#"{"sessions": {}}"#, b"nope"] {
        assert!(parse_local_sessions(bad).is_err());
    }
}

#[test]
fn agent_and_session_model_answers() {
    assert_eq!(
        parse_local_agent(br#"{"name": "ledger", "displayName": "Ledger Helper"}"#).as_deref(),
        Some("Ledger Helper")
    );
    assert_eq!(
        parse_local_agent(br#"{"name": "ledger", "displayName": ""}"#).as_deref(),
        Some("ledger")
    );
    assert_eq!(parse_local_agent(b"{}"), None);
    let answer = br#"{"sessionUid": "local-1", "model": {"provider": "acme", "model": "large", "thinkingLevel": "high"}}"#;
    assert_eq!(
        parse_session_model(answer),
        Some(LocalSessionModel {
            session_uid: Some("local-1".into()),
            provider: "acme".into(),
            model: "large".into(),
            thinking_level: Some("high".into()),
        })
    );
    assert_eq!(
        parse_session_model(br#"{"model": {"provider": "acme"}}"#),
        None
    );
    assert_eq!(parse_session_model(br#"{"model": null}"#), None);
}

#[test]
fn the_runtime_id_header() {
    assert_eq!(
        runtime_session_uid(Some(" local-7 ")).as_deref(),
        Some("local-7")
    );
    for bad in [
        None,
        Some(""),
        Some("  "),
        Some("null"),
        Some(".."),
        Some("a\u{7}b"),
    ] {
        assert_eq!(runtime_session_uid(bad), None, "{bad:?}");
    }
    assert_eq!(
        runtime_session_uid(Some(&"x".repeat(MAX_FIELD_BYTES + 1))),
        None
    );
}

#[test]
fn failure_texts() {
    let route = LocalRoute::Sessions;
    assert_eq!(
        local_failure_text(&route, Some(500), br#"{"detail": "Disk full."}"#),
        "Local chat sessions: Disk full."
    );
    assert_eq!(
        local_failure_text(&route, Some(502), b""),
        "Local chat sessions: Status 502"
    );
    assert_eq!(
        local_failure_text(&LocalRoute::Ready, None, b""),
        "Local Agent readiness: the local Agent did not answer."
    );
}

#[test]
fn hostile_bodies_never_panic() {
    for body in hostile_bodies() {
        let _ = read_ready(200, &body);
        let _ = read_health(200, &body);
        let _ = parse_local_sessions(&body);
        let _ = parse_local_agent(&body);
        let _ = parse_session_model(&body);
        let _ = local_failure_text(&LocalRoute::Sessions, Some(500), &body);
    }
}

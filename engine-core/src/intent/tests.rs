use super::*;

fn render(call: &ApiCall) -> Result<HttpRequest, InvalidId> {
    call.render(
        "https://p.test/",
        Auth::Platform(Some(Credential {
            token_type: "Bearer",
            token: "tok-secret",
        })),
    )
}

#[test]
fn ids_are_one_percent_encoded_segment() {
    let r = render(&ApiCall::GetSessionHistory {
        session_uid: "a/b?c#d%e f".into(),
    })
    .unwrap();
    assert_eq!(
        r.path,
        "/api/v1/agent-sessions/a%2Fb%3Fc%23d%25e%20f/history/"
    );
    assert_eq!(
        r.url(),
        "https://p.test/api/v1/agent-sessions/a%2Fb%3Fc%23d%25e%20f/history/"
    );
    let r = render(&ApiCall::GetSessionDetail {
        session_uid: "ü✓".into(),
        environment_uid: "e&1=2".into(),
    })
    .unwrap();
    assert_eq!(
        r.url(),
        "https://p.test/api/v1/agent-sessions/%C3%BC%E2%9C%93/?organization_environment_uid=e%261%3D2"
    );
}

#[test]
fn refuses_empty_undefined_null_and_dot_ids() {
    for bad in ["", "  ", "undefined", " NULL ", "Undefined", ".", ".."] {
        assert!(check_id("session", bad).is_err(), "{bad:?}");
        assert!(
            render(&ApiCall::ArchiveSession {
                session_uid: bad.into()
            })
            .is_err()
        );
    }
    for good in ["s-1", "nullable", "a.b", "42"] {
        assert!(check_id("session", good).is_ok(), "{good:?}");
    }
    let body = GetOrCreateBody {
        handle_unique_id: "null".into(),
        name: None,
        llm_provider: None,
        llm_model: None,
        llm_thinking: None,
    };
    assert!(
        render(&ApiCall::GetOrCreateSession {
            agent_uid: "a".into(),
            body
        })
        .is_err()
    );
}

#[test]
fn credentials_never_show_in_debug_or_serialized_form() {
    let r = render(&ApiCall::DeleteSession {
        session_uid: "s".into(),
    })
    .unwrap();
    assert_eq!(r.header("authorization"), Some("Bearer tok-secret"));
    assert!(!format!("{r:?}").contains("tok-secret"));
    assert!(!serde_json::to_string(&r).unwrap().contains("tok-secret"));
    assert_eq!(r.method, Method::Delete);
}

#[test]
fn bodies_and_list_query() {
    let r = render(&ApiCall::StartNewSession {
        agent: "7".into(),
        thread_id: "t-1".into(),
    })
    .unwrap();
    assert_eq!(r.path, "/api/v1/agents/7/start-new-session/");
    assert_eq!(r.body.as_deref(), Some(&br#"{"thread_id":"t-1"}"#[..]));
    assert_eq!(r.header("content-type"), Some("application/json"));
    let r = render(&ApiCall::ListSessions {
        environment_uid: "e".into(),
        created_by_user_uid: None,
        agent: Some(AgentFilter::for_agent("42")),
    })
    .unwrap();
    assert_eq!(
        r.url(),
        "https://p.test/api/v1/agent-sessions/?organization_environment_uid=e&is_archived=false&ordering=-started_at&limit=20&agent_id=42"
    );
    assert_eq!(
        AgentFilter::for_agent("a-1"),
        AgentFilter::Uid("a-1".into())
    );
}

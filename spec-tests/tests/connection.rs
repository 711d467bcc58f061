//! The chat backend connection (`reference-update.md`, section 9: RU-45 to RU-49): the
//! platform base URL a host gives the engine, and the host's URL rewrite.

use std::sync::{Arc, Mutex};

use engine_core::{
    Config, ConfigError, HostConfig, Input, Intent, Person, Secret, Target, Time,
    rewrite_on_platform,
};
use serde_json::json;
use spec_tests::fixtures;
use spec_tests::{BASE, Harness};

const S1: &str = "s-1";

/// RU-45: the reference's text for a refused base URL.
const REFUSED: &str =
    "The chat backend connection requires an absolute http(s) platform API base URL.";

/// RU-45: the base, trimmed, must be an absolute `http` or `https` URL; `""`, `"/api"` and
/// `"ftp://platform.test"` are refused with the reference's text (its tests pin "absolute
/// http(s)"), and `" https://api.platform.test "` is taken as `https://api.platform.test`.
#[test]
fn ru_45_the_base_url_must_be_absolute_http_or_https() {
    let refused = [
        "",
        "/api",
        "ftp://platform.test",
        "   ",
        "platform.test",
        "https://",
        // Every platform path is appended to the base: a query or a fragment would break them.
        "https://platform.test?x=1",
        "https://platform.test/#top",
    ];
    for base in refused {
        let err = Config::new(base).expect_err(base);
        assert_eq!(err.to_string(), REFUSED, "{base:?}");
        assert!(err.to_string().contains("absolute http(s)"));
        assert_eq!(err.code(), "config_base_url");
        assert_eq!(
            err,
            ConfigError::BaseUrl(base.to_owned()),
            "the value refused is kept"
        );
    }
    let config = Config::new(" https://api.platform.test ").unwrap();
    assert_eq!(config.platform_base_url, "https://api.platform.test");
    let config = Config::new("http://127.0.0.1:8080/").unwrap();
    assert_eq!(config.platform_base_url, "http://127.0.0.1:8080");
}

/// RU-45: hosts outside Rust (the C ABI, the Python package) start an engine from a
/// `HostConfig`: the same refusal and the same text (the C ABI gives it as it is; the Python
/// package after "The configuration: ").
#[test]
fn ru_45_a_host_configuration_is_refused_alike() {
    for base in ["/api", "ftp://platform.test"] {
        let form = serde_json::json!({ "platformBaseUrl": base }).to_string();
        let form: HostConfig = serde_json::from_str(&form).unwrap();
        let err = form.engine(Time::ZERO).expect_err("refused");
        assert_eq!(err.to_string(), REFUSED);
        assert_eq!(err.code(), "config_base_url");
    }
    let form: HostConfig =
        serde_json::from_str(r#"{"platformBaseUrl": " https://api.platform.test "}"#).unwrap();
    assert!(form.engine(Time::ZERO).is_ok());
}

/// The addresses a rewrite was given, with their targets.
type Seen = Arc<Mutex<Vec<(String, Target)>>>;

/// RU-46's rewrite, as the reference's tests write it: a platform address to
/// `/__platform__{path}{query}`, a runtime one to `/__agent__/{host}{path}{query}`. Every
/// address it is given is recorded with its target.
fn proxy(seen: &Seen) -> impl Fn(&str, Target) -> String + Send + Sync + 'static {
    let seen = Arc::clone(seen);
    move |url: &str, target: Target| {
        seen.lock().unwrap().push((url.to_owned(), target));
        let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
        let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        match target {
            Target::Platform => format!("/__platform__{path}"),
            _ => format!("/__agent__/{host}{path}"),
        }
    }
}

/// RU-46: platform paths resolve on the base; without a rewrite every address is requested as
/// built; a rewrite gets the full address with its query, and the target. With the reference's
/// rewrite and `rpc_url` `https://agent.test/rpc`, a send requests first
/// `/__platform__/api/v1/agent-sessions/{S}/resolve-runtime-access/`, then
/// `/__agent__/agent.test/rpc/api/chat`, which the shells resolve on the platform's origin.
/// (`HttpRequest::request_url` is what both shells call once per request they carry out.)
#[test]
fn ru_46_the_rewrite_gets_the_full_address_and_its_target() {
    let mut h = Harness::ready(S1);
    let seen = Seen::default();
    let rewrite = proxy(&seen);
    for sent in h.sent() {
        assert_eq!(sent.request.request_url(None), sent.request.url());
        assert!(
            sent.request.url().starts_with(BASE),
            "{}",
            sent.request.url()
        );
    }
    let list = h
        .sent()
        .iter()
        .find(|s| s.request.path == "/api/v1/agent-sessions/")
        .expect("the list read");
    assert_eq!(
        list.request.request_url(Some(&rewrite)),
        format!(
            "/__platform__/api/v1/agent-sessions/?{}",
            query(&list.request)
        )
    );
    assert_eq!(
        seen.lock().unwrap().last(),
        Some(&(list.request.url(), Target::Platform)),
        "the full address, query included"
    );

    let mark = h.mark();
    let (access, confirm) = send_on(&mut h, "https://agent.test/rpc");
    h.reply(confirm, 200, json!({"status": "ready"}));
    let message = h.message_request(S1);
    let addresses: Vec<String> = h
        .sent_since(mark)
        .iter()
        .filter(|s| s.id == access || s.id == message)
        .map(|s| s.request.request_url(Some(&rewrite)))
        .collect();
    assert_eq!(
        addresses,
        [
            format!("/__platform__/api/v1/agent-sessions/{S1}/resolve-runtime-access/"),
            "/__agent__/agent.test/rpc/api/chat".to_owned(),
        ]
    );
    assert_eq!(
        seen.lock().unwrap().last(),
        Some(&(
            "https://agent.test/rpc/api/chat".to_owned(),
            Target::AgentRuntime
        ))
    );
    // The shells resolve such a root-relative result on the platform's origin, which stands
    // in for the reference's page (`rewrite_on_platform`).
    let on_platform = rewrite_on_platform(Arc::new(proxy(&seen)), BASE);
    let requested: Vec<String> = h
        .sent_since(mark)
        .iter()
        .filter(|s| s.id == access || s.id == message)
        .map(|s| s.request.request_url(Some(&*on_platform)))
        .collect();
    assert_eq!(
        requested,
        [
            format!("{BASE}/__platform__/api/v1/agent-sessions/{S1}/resolve-runtime-access/"),
            format!("{BASE}/__agent__/agent.test/rpc/api/chat"),
        ]
    );
}

/// RU-46: an address that came root-relative (an `rpc_url` starting with `/`) never reaches
/// the rewrite; it is requested on the platform's origin, which stands in for the reference's
/// page.
#[test]
fn ru_46_a_root_relative_address_never_reaches_the_rewrite() {
    let mut h = Harness::ready(S1);
    let (_, confirm) = send_on(&mut h, "/rt/agents/s-1");
    let seen = Seen::default();
    let rewrite = proxy(&seen);
    let request = &h.sent().iter().find(|s| s.id == confirm).unwrap().request;
    assert!(request.root_relative);
    assert_eq!(
        request.request_url(Some(&rewrite)),
        format!("{BASE}/rt/agents/s-1/api/chat")
    );
    assert!(seen.lock().unwrap().is_empty(), "not given to the rewrite");
}

/// A send whose runtime access answers ready with this `rpc_url`: the access request's id and
/// the confirmation's, still open.
fn send_on(h: &mut Harness, rpc_url: &str) -> (engine_core::RequestId, engine_core::RequestId) {
    h.send("Hello");
    let access = h.runtime_request(S1);
    let mut answer = fixtures::runtime_ready(S1);
    answer["rpc_url"] = json!(rpc_url);
    h.reply(access, 200, answer);
    (access, h.confirm_request(S1))
}

/// The query of a request as it is sent (`url()` after its `?`).
fn query(request: &engine_core::HttpRequest) -> String {
    let url = request.url();
    url.split_once('?')
        .map(|(_, q)| q.to_owned())
        .unwrap_or_default()
}

/// RU-46, as the shells apply a rewrite (`rewrite_on_platform`): a root-relative result is
/// resolved on the platform's origin (a base's own path does not count: the origin stands in
/// for the reference's page), `//host/...` takes the platform's scheme, and an absolute
/// result is requested as returned.
#[test]
fn ru_46_a_rewrites_result_is_resolved_as_a_page_would() {
    let result = |to: &'static str| {
        let rewrite: Arc<engine_core::UrlRewrite> = Arc::new(move |_: &str, _: Target| to.into());
        rewrite_on_platform(rewrite, "https://platform.test:8443/sub")
    };
    let url = "https://platform.test:8443/sub/api/v1/model-providers/";
    assert_eq!(
        result("/__platform__/api/v1/model-providers/")(url, Target::Platform),
        "https://platform.test:8443/__platform__/api/v1/model-providers/"
    );
    assert_eq!(
        result("//proxy.test/p")(url, Target::Platform),
        "https://proxy.test/p"
    );
    assert_eq!(
        result("http://proxy.test/p?q=1")(url, Target::AgentRuntime),
        "http://proxy.test/p?q=1"
    );
}

/// An engine whose platform requests go to the application's own sender (RU-47).
fn with_sender() -> Config {
    let mut config = Config::new(BASE).unwrap();
    config.platform_sender = true;
    config
}

/// RU-47, RU-49: with the application's sender, every platform request goes without the
/// engine's `Authorization` header though the person has a token (the sender authenticates
/// it); the runtime's requests keep the runtime token. Without a sender, platform requests
/// carry `Authorization: {tokenType} {token}`.
#[test]
fn ru_47_platform_requests_go_to_the_sender_without_authorization() {
    let mut h = Harness::with_config(with_sender()).into_talking(S1);
    h.send("Hello");
    let access = h.runtime_request(S1);
    h.reply(access, 200, fixtures::runtime_ready(S1));
    if let Some(confirm) = h.pending(|c| matches!(c, engine_core::ApiCall::ConfirmAgent { .. })) {
        h.reply(confirm, 200, json!({"status": "ready"}));
    }
    let message = h.message_request(S1);
    let sent = h.sent();
    assert!(sent.iter().any(|s| s.request.target == Target::Platform));
    for s in sent {
        let authorization = s.request.header("authorization");
        match s.request.target {
            Target::Platform => assert_eq!(authorization, None, "{:?}", s.call),
            _ => assert_eq!(
                authorization,
                Some(format!("Bearer {}", fixtures::RUNTIME_TOKEN).as_str()),
                "{:?}",
                s.call
            ),
        }
    }
    assert_eq!(h.request(message).request.target, Target::AgentRuntime);

    let h = Harness::talking(S1);
    let platform: Vec<_> = h
        .sent()
        .iter()
        .filter(|s| s.request.target == Target::Platform)
        .collect();
    assert!(!platform.is_empty());
    for s in platform {
        assert_eq!(
            s.request.header("authorization"),
            Some("Bearer platform-token-secret")
        );
    }
}

/// RU-48: the sender's answer is final: a 401 to a platform request is that request's answer,
/// never repeated by the engine (renewal belongs to the sender). Here the runtime access of a
/// send: one request, and the send fails with the refusal.
#[test]
fn ru_48_a_401_from_the_sender_is_final() {
    let mut h = Harness::with_config(with_sender()).into_talking(S1);
    let accesses = h.count(|c| matches!(c, engine_core::ApiCall::ResolveRuntimeAccess { .. }));
    h.jump(20 * 60_000);
    h.send("Hello");
    let access = h.runtime_request(S1);
    h.reply(
        access,
        401,
        json!({"detail": "Authentication credentials were not provided."}),
    );
    h.advance(120_000);
    assert_eq!(
        h.count(|c| matches!(c, engine_core::ApiCall::ResolveRuntimeAccess { .. })),
        accesses + 1,
        "called once, not repeated"
    );
    // The send fails with the refusal, RU-19's text naming the request.
    let failure = h.snapshot().run_failure.expect("the send failed");
    assert_eq!(failure.code, engine_core::FailureCode::RuntimeAccessFailed);
    assert!(
        failure.message.contains(
            "Runtime access request failed. Status: HTTP 401 Unauthorized. Call: POST "
        ) && failure.message.ends_with(
            "/resolve-runtime-access/. Server response: Authentication credentials were not provided."
        ),
        "{}",
        failure.message
    );
    assert!(
        h.pending(|c| matches!(c, engine_core::ApiCall::ResolveRuntimeAccess { .. }))
            .is_none(),
        "nothing in flight"
    );
}

/// RU-47: hosts outside Rust ask for the sender in their configuration form
/// (`"platformSender": true`); a trace records it, so a replay renders the same requests.
#[test]
fn ru_47_the_host_form_and_the_trace_carry_the_sender() {
    let form: HostConfig = serde_json::from_value(json!({
        "platformBaseUrl": BASE,
        "platformSender": true
    }))
    .unwrap();
    // The engine it starts renders platform requests without the person's token.
    let mut engine = form.engine(Time::ZERO).unwrap();
    for input in [
        Input::Person(Person::new(fixtures::USER, Secret::new("t-secret"))),
        Input::EnvironmentUid(Some(fixtures::ENV.into())),
        Input::IsVisible(true),
    ] {
        engine.handle_input(input, Time::ZERO);
    }
    let mut platform = 0;
    while let Some(intent) = engine.poll_intent() {
        if let Intent::Http { request, .. } = intent {
            assert_eq!(request.target, Target::Platform);
            assert_eq!(request.header("authorization"), None);
            platform += 1;
        }
    }
    assert!(platform > 0, "the list and the catalog went out");
    let config = engine_core::trace::TraceConfig::from_config(&with_sender());
    let value = serde_json::to_value(&config).unwrap();
    assert_eq!(value["platformSender"], true);
    assert!(config.to_config().unwrap().platform_sender);
    let plain = serde_json::to_value(engine_core::trace::TraceConfig::from_config(
        &Config::new(BASE).unwrap(),
    ))
    .unwrap();
    assert!(
        plain.get("platformSender").is_none(),
        "old traces read the same"
    );
}

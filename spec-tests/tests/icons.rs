#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The rest of the reference's surface (adr-notes 6): `capabilities` (adr-notes 5 and 6), the
//! Agent icons of ADR 090 (P13, the projection of an Environment, fresh for five minutes per
//! adr-notes 7; P14, the icon bytes with `Accept: */*`), and the URL rewrite's inputs: every
//! request carries its original address, and a root-relative one is marked so the shells do not
//! rewrite it (`platform-api.md` section 1, `connection.rewriteRequestUrl`).

use engine_core::{
    ApiCall, Capabilities, Command, IconStatus, Input, Method, Person, RequestId, ResponseHead,
    Secret, Target,
};
use serde_json::{Value, json};
use spec_tests::fixtures::{AGENT, AGENT2, ENV, ENV2, RUNTIME_TOKEN, runtime_ready};
use spec_tests::{BASE, Harness};

const SVG: &[u8] = br#"<svg xmlns="http://www.w3.org/2000/svg"><circle r="4"/></svg>"#;
const ICON1: &str = "https://platform.test/api/v1/command-center/agents/agent-1/icon/";
const ICON2: &str = "/api/v1/command-center/agents/agent-2/icon/";
const FIVE_MIN: u64 = 300_000;

fn is_projection(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ListAgentIcons { .. })
}

fn is_icon(c: &ApiCall) -> bool {
    matches!(c, ApiCall::GetAgentIcon { .. })
}

fn icon_of(agent: &'static str) -> impl Fn(&ApiCall) -> bool {
    move |c| matches!(c, ApiCall::GetAgentIcon { agent_uid, .. } if agent_uid == agent)
}

/// The P13 body: AGENT with an absolute icon url, AGENT2 with a root-relative one.
fn projection() -> Value {
    json!([
        {"agentUid": AGENT, "commandCenterIcon": {"rendering": "mask", "url": ICON1}},
        {"agent_uid": AGENT2, "command_center_icon": {"rendering": "color", "url": ICON2}},
        {"agentUid": "agent-3", "commandCenterIcon": null}
    ])
}

fn ask(h: &mut Harness, agents: &[&str]) {
    h.command(Command::RequestAgentIcons {
        agent_uids: agents.iter().map(|a| (*a).to_owned()).collect(),
    });
}

fn projection_request(h: &Harness) -> RequestId {
    h.expect_pending("agent icons", is_projection)
}

/// A visible chat in ENV with the projection read and answered, AGENT's icon asked for.
fn with_projection() -> Harness {
    let mut h = Harness::visible_in_env();
    ask(&mut h, &[AGENT]);
    let id = projection_request(&h);
    h.reply(id, 200, projection());
    h
}

fn answer_icon(h: &mut Harness, agent: &'static str) {
    let id = h.expect_pending("agent icon", icon_of(agent));
    h.reply_raw(id, 200, Some("image/svg+xml"), SVG, None);
}

fn image_of(h: &Harness, agent: &str) -> Option<Vec<u8>> {
    let icons = h.snapshot().agent_icons;
    icons[agent].image.as_ref().map(|i| i.bytes.to_vec())
}

/// adr-notes 5, adr-notes 6: `capabilities` are all true for the platform source, under the
/// reference's names.
#[test]
fn capabilities_are_all_true_for_the_platform() {
    let h = Harness::visible_in_env();
    let caps = h.snapshot().capabilities;
    assert_eq!(caps, Capabilities::PLATFORM);
    assert!(
        caps.archive_sessions
            && caps.search_sessions
            && caps.session_history
            && caps.session_insights
            && caps.model_provider_settings
    );
    let value = serde_json::to_value(h.snapshot()).unwrap();
    assert_eq!(
        value["capabilities"],
        json!({"archiveSessions": true, "searchSessions": true, "sessionHistory": true,
               "sessionInsights": true, "modelProviderSettings": true})
    );
}

/// P13, ENV-6, INV-9: the projection is read when the host asks for icons, never before, as
/// `GET /api/v1/command-center/agents/?organization_environment_uid={env}` with the person's
/// credential and `Accept: application/json`.
#[test]
fn p13_is_read_on_request_with_the_environment() {
    let mut h = Harness::visible_in_env();
    assert_eq!(h.count(is_projection), 0, "icons are read on demand only");
    h.advance(10_000);
    assert_eq!(h.count(is_projection), 0);
    let mark = h.mark();
    ask(&mut h, &[]);
    let sent = h.sent_since(mark);
    assert_eq!(sent.len(), 1, "exactly the projection read");
    let r = &sent[0].request;
    assert_eq!(r.method, Method::Get);
    assert_eq!(r.target, Target::Platform);
    assert_eq!(r.base, BASE);
    assert_eq!(r.path, "/api/v1/command-center/agents/");
    assert_eq!(
        r.query,
        vec![("organization_environment_uid".to_owned(), ENV.to_owned())]
    );
    assert_eq!(
        r.header("authorization"),
        Some("Bearer platform-token-secret")
    );
    assert_eq!(r.header("accept"), Some("application/json"));
    assert!(r.body.is_none());
    assert!(!r.root_relative);
    // A request while the read runs joins it.
    ask(&mut h, &[AGENT]);
    assert_eq!(h.count(is_projection), 1);
}

/// adr-notes 6, P13: without an Environment, or without a platform credential, nothing is read
/// (the reference reads icons only for a signed-in person in an Environment).
#[test]
fn no_icon_request_without_environment_or_credential() {
    let mut h = Harness::new();
    h.person("user-1");
    ask(&mut h, &[AGENT]);
    assert_eq!(h.count(is_projection), 0, "no Environment");
    h.input(Input::Person(Person::local(Some("user-1".into()))));
    h.env(Some(ENV));
    ask(&mut h, &[AGENT]);
    assert_eq!(h.count(is_projection), 0, "no credential");
    assert!(h.snapshot().agent_icons.is_empty());
}

/// RU-33, P13, P14: the projection is exposed keyed by Agent uid (rows without an icon skipped, both
/// spellings read); the bytes are fetched only for the Agents asked for, as `GET {url}` with
/// `Accept: */*` and the person's credential, and exposed with their content type.
#[test]
fn projection_by_agent_uid_and_p14_for_the_agents_asked_for() {
    let mut h = with_projection();
    let icons = h.snapshot().agent_icons;
    assert_eq!(icons.keys().collect::<Vec<_>>(), [AGENT, AGENT2]);
    assert_eq!(icons[AGENT].url, ICON1);
    assert_eq!(icons[AGENT2].url, ICON2);
    let value = serde_json::to_value(&icons).unwrap();
    assert_eq!(value[AGENT]["rendering"], "mask");
    assert_eq!(value[AGENT2]["rendering"], "color");
    assert!(icons[AGENT].image.is_none(), "not loaded yet");

    assert_eq!(h.count(is_icon), 1, "only the Agent asked for");
    let id = h.expect_pending("agent icon", icon_of(AGENT));
    let r = &h.request(id).request;
    assert_eq!(r.method, Method::Get);
    assert_eq!(r.target, Target::Platform);
    assert_eq!(r.url(), ICON1);
    assert_eq!(r.header("accept"), Some("*/*"));
    assert_eq!(
        r.header("authorization"),
        Some("Bearer platform-token-secret")
    );
    assert!(r.body.is_none());
    assert!(!r.root_relative);

    answer_icon(&mut h, AGENT);
    let icons = h.snapshot().agent_icons;
    let image = icons[AGENT].image.as_ref().expect("loaded");
    assert_eq!(image.bytes.as_ref(), SVG);
    assert_eq!(image.content_type.as_deref(), Some("image/svg+xml"));
    assert!(icons[AGENT2].image.is_none());
    // Serialized, the bytes are base64.
    let value = serde_json::to_value(&icons).unwrap();
    assert_eq!(
        value[AGENT]["image"]["bytes"].as_str().unwrap().len(),
        SVG.len().div_ceil(3) * 4
    );
    assert!(h.notices().is_empty(), "no notice");
}

/// P14, `platform-api.md` section 1: a root-relative icon url is requested on the platform's
/// origin and marked root-relative, so the shells do not give it to the URL rewrite.
#[test]
fn root_relative_icon_url_is_joined_to_the_platform_origin_and_marked() {
    let mut h = with_projection();
    ask(&mut h, &[AGENT2]);
    let id = h.expect_pending("agent icon", icon_of(AGENT2));
    let r = h.request(id).request.clone();
    assert_eq!(r.url(), format!("{BASE}{ICON2}"));
    assert!(r.root_relative);
    let rewrite = |url: &str, _: Target| url.replace(BASE, "http://proxy.test/p");
    assert_eq!(r.request_url(Some(&rewrite)), format!("{BASE}{ICON2}"));
    // An absolute one goes through the rewrite, once.
    let id = h
        .sent()
        .iter()
        .find(|s| icon_of(AGENT)(&s.call))
        .unwrap()
        .id;
    let r = &h.request(id).request;
    assert_eq!(
        r.request_url(Some(&rewrite)),
        "http://proxy.test/p/api/v1/command-center/agents/agent-1/icon/"
    );
}

/// adr-notes 7, P13: the projection is trusted while younger than five minutes; a request at
/// five minutes reads it again, and the held one stays in use meanwhile.
#[test]
fn projection_is_fresh_for_five_minutes() {
    let mut h = with_projection();
    answer_icon(&mut h, AGENT);
    h.advance(FIVE_MIN - 1);
    ask(&mut h, &[AGENT, AGENT2]);
    assert_eq!(h.count(is_projection), 1, "fresh at 4:59.999");
    // AGENT2 is served from the held projection; AGENT's bytes are fresh too.
    assert_eq!(h.count(icon_of(AGENT2)), 1);
    assert_eq!(h.count(icon_of(AGENT)), 1);
    h.advance(1);
    ask(&mut h, &[AGENT]);
    assert_eq!(h.count(is_projection), 2, "stale at 5:00");
    assert_eq!(h.snapshot().agent_icons.len(), 2, "held while it is read");
    assert!(image_of(&h, AGENT).is_some());
}

/// RU-32, P13 failures: one retry at once, then nothing (no notice, no error value: a missing icon
/// is never a failure a person sees); a later request reads again.
#[test]
fn failed_projection_is_retried_once_then_left() {
    let mut h = Harness::visible_in_env();
    ask(&mut h, &[AGENT]);
    let first = projection_request(&h);
    h.reply(first, 500, json!({"detail": "boom"}));
    let second = projection_request(&h);
    assert_ne!(first, second);
    assert_eq!(h.request(second).at_ms, h.request(first).at_ms, "at once");
    h.fail(second);
    assert_eq!(h.count(is_projection), 2, "one retry only");
    h.advance(60_000);
    assert_eq!(h.count(is_projection), 2);
    assert!(h.snapshot().agent_icons.is_empty());
    assert!(h.notices().is_empty());
    ask(&mut h, &[AGENT]);
    assert_eq!(h.count(is_projection), 3);
    // Not JSON is a failure too; a JSON value that is not a list is an empty projection.
    let id = projection_request(&h);
    h.reply_raw(id, 200, Some("text/html"), b"<html>", None);
    let id = projection_request(&h);
    h.reply(id, 200, json!({"results": []}));
    assert_eq!(h.count(is_projection), 4);
    assert!(h.snapshot().agent_icons.is_empty());
    ask(&mut h, &[AGENT]);
    assert_eq!(h.count(is_projection), 4, "the empty projection is fresh");
}

/// ENV-2, INV-10: an Environment change drops the old Environment's projection and bytes and
/// aborts their requests; their late answers change nothing; the new Environment is read only
/// when asked.
#[test]
fn environment_change_drops_what_belongs_to_the_old_one() {
    let mut h = with_projection();
    let icon = h.expect_pending("agent icon", icon_of(AGENT));
    h.env(Some(ENV2));
    assert!(h.snapshot().agent_icons.is_empty());
    assert!(h.was_aborted(icon));
    h.reply_raw(icon, 200, Some("image/svg+xml"), SVG, None);
    assert!(h.snapshot().agent_icons.is_empty());
    assert_eq!(h.count(is_projection), 1);

    ask(&mut h, &[AGENT]);
    let id = projection_request(&h);
    assert_eq!(
        h.request(id).request.query,
        vec![("organization_environment_uid".to_owned(), ENV2.to_owned())]
    );
    // A read in flight at a change is aborted; its answer is ignored.
    h.env(Some(ENV));
    assert!(h.was_aborted(id));
    h.reply(id, 200, projection());
    assert!(h.snapshot().agent_icons.is_empty());
}

/// ENV-2, RU-36: a person change, and a credential that goes (sign-out), drop the icons and
/// every image held.
#[test]
fn person_change_and_sign_out_drop_the_icons() {
    let mut h = with_projection();
    answer_icon(&mut h, AGENT);
    h.person("user-2");
    assert!(h.snapshot().agent_icons.is_empty());
    ask(&mut h, &[AGENT]);
    let id = projection_request(&h);
    h.reply(id, 200, projection());
    answer_icon(&mut h, AGENT);
    assert!(image_of(&h, AGENT).is_some());
    h.input(Input::Person(Person::local(Some("user-2".into()))));
    assert!(h.snapshot().agent_icons.is_empty());
    // A new token alone (same person) keeps them.
    h.input(Input::Person(Person::new("user-2", Secret::new("t-1"))));
    ask(&mut h, &[AGENT]);
    let id = projection_request(&h);
    h.reply(id, 200, projection());
    answer_icon(&mut h, AGENT);
    h.input(Input::Person(
        Person::new("user-2", Secret::new("t-2")).with_token_type("Token"),
    ));
    assert!(image_of(&h, AGENT).is_some());
}

/// RU-36, RU-37, P14 hostile answers: bytes over 512 KiB (ADR 090's cap) (the request is aborted), a non-image type, an
/// empty body and an error status leave the fallback; a failed first load is tried again only
/// after a minute.
#[test]
fn icon_bytes_are_bounded_and_checked() {
    let cases: Vec<(u16, Option<&str>, Vec<u8>)> = vec![
        (200, Some("image/png"), vec![0_u8; 512 * 1024 + 1]),
        (200, Some("text/html"), b"<html>login</html>".to_vec()),
        (200, Some("image/png"), Vec::new()),
        (
            404,
            Some("application/json"),
            br#"{"detail":"Not found."}"#.to_vec(),
        ),
    ];
    for (status, content_type, body) in cases {
        let mut h = with_projection();
        let id = h.expect_pending("agent icon", icon_of(AGENT));
        h.reply_raw(id, status, content_type, &body, Some(64 * 1024));
        assert!(image_of(&h, AGENT).is_none(), "{status} {content_type:?}");
        if body.len() > 512 * 1024 {
            assert!(h.was_aborted(id), "an oversized body is dropped");
        }
        h.advance(59_999);
        ask(&mut h, &[AGENT]);
        assert_eq!(h.count(icon_of(AGENT)), 1, "not before a minute");
        h.advance(1);
        ask(&mut h, &[AGENT]);
        assert_eq!(h.count(icon_of(AGENT)), 2, "after a minute");
        answer_icon(&mut h, AGENT);
        assert_eq!(image_of(&h, AGENT).as_deref(), Some(SVG));
    }
    // Exactly 512 KiB is accepted.
    let mut h = with_projection();
    let id = h.expect_pending("agent icon", icon_of(AGENT));
    let body = vec![7_u8; 512 * 1024];
    h.reply_raw(id, 200, Some("image/png"), &body, Some(64 * 1024));
    assert_eq!(image_of(&h, AGENT).map(|b| b.len()), Some(512 * 1024));
}

/// RU-35, P14: held bytes are fetched again when asked for at five minutes (not before); a failed
/// refresh keeps them, new bytes replace them.
#[test]
fn held_bytes_refresh_after_five_minutes_and_survive_a_failed_refresh() {
    let mut h = with_projection();
    answer_icon(&mut h, AGENT);
    h.advance(FIVE_MIN - 1);
    ask(&mut h, &[AGENT]);
    assert_eq!(h.count(icon_of(AGENT)), 1);
    h.advance(1);
    ask(&mut h, &[AGENT]);
    let id = projection_request(&h);
    h.reply(id, 200, projection());
    let id = h.expect_pending("agent icon", icon_of(AGENT));
    h.reply(id, 503, json!({"detail": "busy"}));
    assert_eq!(image_of(&h, AGENT).as_deref(), Some(SVG), "kept");
    h.advance(FIVE_MIN);
    ask(&mut h, &[AGENT]);
    let id = projection_request(&h);
    h.reply(id, 200, projection());
    let id = h.expect_pending("agent icon", icon_of(AGENT));
    h.reply_raw(id, 200, Some("image/png"), b"\x89PNG", None);
    assert_eq!(image_of(&h, AGENT).as_deref(), Some(&b"\x89PNG"[..]));
}

/// P14: the credential goes only to the platform's origin: rows whose icon url is elsewhere
/// (another host, scheme or port, protocol-relative, not http) are skipped and never requested.
#[test]
fn icon_urls_off_the_platform_origin_are_skipped() {
    let mut h = Harness::visible_in_env();
    ask(&mut h, &[AGENT, AGENT2, "a3", "a4", "a5"]);
    let id = projection_request(&h);
    let row = |agent: &str, url: &str| json!({"agentUid": agent, "commandCenterIcon": {"rendering": "mask", "url": url}});
    h.reply(
        id,
        200,
        json!([
            row(
                AGENT,
                "https://evil.test/api/v1/command-center/agents/agent-1/icon/"
            ),
            row(AGENT2, "http://platform.test/icon/"),
            row("a3", "//platform.test/icon/"),
            row("a4", "javascript:alert(1)"),
            row("a5", "https://platform.test:444/icon/"),
        ]),
    );
    assert!(h.snapshot().agent_icons.is_empty());
    assert_eq!(h.count(is_icon), 0);
}

/// `platform-api.md` section 1 (adr-notes 6 `connection`): a root-relative `rpc_url` is joined
/// to the platform's origin and its runtime requests are marked root-relative (not rewritten);
/// an absolute one is rewritten once by `request_url`.
#[test]
fn root_relative_rpc_url_marks_runtime_requests() {
    for (rpc_url, root_relative) in [
        ("/rt/agents/s-1", true),
        ("https://rt.test/agents/s-1", false),
    ] {
        let mut h = Harness::hydrated("s-1");
        let id = h.runtime_request("s-1");
        let mut body = runtime_ready("s-1");
        body["rpc_url"] = json!(rpc_url);
        h.reply(id, 200, body);
        let id = h.confirm_request("s-1");
        let r = h.request(id).request.clone();
        assert_eq!(r.root_relative, root_relative, "{rpc_url}");
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {RUNTIME_TOKEN}").as_str())
        );
        let rewrite = |url: &str, target: Target| {
            assert_eq!(target, Target::AgentRuntime);
            format!("http://proxy.test/agent?to={url}")
        };
        let expected = if root_relative {
            "https://platform.test/rt/agents/s-1/api/chat".to_owned()
        } else {
            "http://proxy.test/agent?to=https://rt.test/agents/s-1/api/chat".to_owned()
        };
        assert_eq!(r.request_url(Some(&rewrite)), expected);
        assert_eq!(r.request_url(None), r.url());
        // The engine's platform requests are never root-relative.
        assert!(
            h.sent()
                .iter()
                .all(|s| s.request.target == Target::AgentRuntime || !s.request.root_relative)
        );
    }
}

fn status_of(h: &Harness, agent: &str) -> IconStatus {
    h.snapshot().agent_icons[agent].status
}

fn handle_of(h: &Harness, agent: &str) -> Option<u64> {
    h.snapshot().agent_icons[agent]
        .image
        .as_ref()
        .map(|i| i.handle)
}

/// Answers a P14 request with an image, with or without an `ETag`.
fn answer_image(h: &mut Harness, id: RequestId, etag: Option<&str>, bytes: &[u8]) {
    let head = ResponseHead::new(200, Some("image/svg+xml".into())).with_etag(etag.map(Into::into));
    h.head_with(id, head).chunk(id, bytes).end(id);
}

/// After five minutes and a millisecond: the projection read again (it is stale too) and
/// AGENT's icon revalidated; returns the P14 request.
fn revalidate(h: &mut Harness) -> RequestId {
    h.advance(FIVE_MIN + 1);
    ask(h, &[AGENT]);
    let id = projection_request(h);
    h.reply(id, 200, projection());
    h.expect_pending("agent icon", icon_of(AGENT))
}

/// RU-32: the reference's rows, through the engine. A row counts only when it is an object with
/// a non-empty `agentUid` (or `agent_uid`) and an icon object whose `rendering` is `mask` or
/// `color` and whose `url` is not blank; a non-list answer gives none.
#[test]
fn ru_32_the_rows_that_count() {
    let mut h = Harness::visible_in_env();
    ask(&mut h, &["a1", "a5"]);
    let id = projection_request(&h);
    h.reply(
        id,
        200,
        json!([
            {"agentUid": "a1", "commandCenterIcon": {"rendering": "mask", "url": "/api/v1/command-center/agents/a1/icon/"}},
            {"agentUid": "a2", "commandCenterIcon": null},
            {"agentUid": "a3", "commandCenterIcon": "sparkle"},
            {"agentUid": "a3b", "commandCenterIcon": {"rendering": "sparkle", "url": "/x/"}},
            {"agentUid": "a4", "commandCenterIcon": {"rendering": "color", "url": "  "}},
            {"agentUid": "", "commandCenterIcon": {"rendering": "color", "url": "/x/"}},
            {"agent_uid": "a5", "command_center_icon": {"rendering": "color", "url": "/api/v1/command-center/agents/a5/icon/"}},
            "junk"
        ]),
    );
    let icons = h.snapshot().agent_icons;
    assert_eq!(icons.keys().collect::<Vec<_>>(), ["a1", "a5"]);
    assert_eq!(
        h.count(is_icon),
        2,
        "the bytes of both, and of nothing else"
    );
    assert!(h.notices().is_empty(), "a failure never blocks the chat");

    let mut h = Harness::visible_in_env();
    ask(&mut h, &[AGENT]);
    let id = projection_request(&h);
    h.reply(
        id,
        200,
        json!({"agentUid": AGENT, "commandCenterIcon": {"rendering": "mask", "url": ICON1}}),
    );
    assert!(
        h.snapshot().agent_icons.is_empty(),
        "a non-list answer gives none"
    );
    assert_eq!(h.count(is_icon), 0);
}

/// RU-34: one entry per icon url. Simultaneous asks share one request (two asks for one Agent,
/// and two Agents whose icons share a url); the entry goes `idle`, `loading`, then `ready` with
/// one handle; an ask while it is fresh sends nothing.
#[test]
fn ru_34_one_entry_per_icon_url() {
    let shared = "/api/v1/command-center/agents/shared/icon/";
    let mut h = Harness::visible_in_env();
    ask(&mut h, &[]);
    let id = projection_request(&h);
    h.reply(
        id,
        200,
        json!([
            {"agentUid": AGENT, "commandCenterIcon": {"rendering": "mask", "url": shared}},
            {"agentUid": AGENT2, "commandCenterIcon": {"rendering": "color", "url": shared}}
        ]),
    );
    assert_eq!(status_of(&h, AGENT), IconStatus::Idle, "not asked for yet");
    assert_eq!(h.count(is_icon), 0);
    ask(&mut h, &[AGENT]);
    ask(&mut h, &[AGENT, AGENT2]);
    assert_eq!(h.count(is_icon), 1, "one request for the url");
    assert_eq!(status_of(&h, AGENT), IconStatus::Loading);
    assert_eq!(status_of(&h, AGENT2), IconStatus::Loading, "the same entry");
    assert_eq!(handle_of(&h, AGENT), None);
    let id = h.expect_pending("agent icon", is_icon);
    answer_image(&mut h, id, None, SVG);
    assert_eq!(status_of(&h, AGENT), IconStatus::Ready);
    let handle = handle_of(&h, AGENT).expect("a handle");
    assert_eq!(
        handle_of(&h, AGENT2),
        Some(handle),
        "one handle for the url"
    );
    h.advance(FIVE_MIN - 1);
    ask(&mut h, &[AGENT, AGENT2]);
    assert_eq!(h.count(is_icon), 1, "fresh: nothing sent");
    let value = serde_json::to_value(&h.snapshot().agent_icons).unwrap();
    assert_eq!(value[AGENT]["status"], "ready");
    assert_eq!(value[AGENT]["image"]["handle"], handle);
    assert_eq!(value[AGENT]["image"]["etag"], Value::Null);
}

/// RU-35: an entry older than five minutes (5 min + 1 ms) is revalidated once, staying `ready`
/// meanwhile; its handle changes only when the fingerprint does: the same ETag `"one"` keeps it
/// (and the image held), ETag `"two"` with new bytes replaces it, no ETag with the same bytes
/// keeps it, no ETag with other bytes replaces it.
#[test]
fn ru_35_revalidation_by_fingerprint() {
    let png: &[u8] = b"\x89PNG new";
    let mut h = with_projection();
    let id = h.expect_pending("agent icon", icon_of(AGENT));
    answer_image(&mut h, id, Some("\"one\""), SVG);
    let first = handle_of(&h, AGENT).unwrap();

    let id = revalidate(&mut h);
    assert_eq!(
        status_of(&h, AGENT),
        IconStatus::Ready,
        "ready while revalidated"
    );
    assert_eq!(handle_of(&h, AGENT), Some(first));
    answer_image(&mut h, id, Some("\"one\""), png);
    assert_eq!(handle_of(&h, AGENT), Some(first), "same ETag: kept");
    assert_eq!(
        image_of(&h, AGENT).as_deref(),
        Some(SVG),
        "the image held stays"
    );
    ask(&mut h, &[AGENT]);
    assert_eq!(h.count(icon_of(AGENT)), 2, "revalidated once");

    let id = revalidate(&mut h);
    answer_image(&mut h, id, Some("\"two\""), png);
    let second = handle_of(&h, AGENT).unwrap();
    assert_ne!(second, first, "new ETag: replaced");
    assert_eq!(image_of(&h, AGENT).as_deref(), Some(png));
    let icons = h.snapshot().agent_icons;
    assert_eq!(
        icons[AGENT].image.as_ref().unwrap().etag.as_deref(),
        Some("\"two\"")
    );

    // Without ETags: the bytes decide (the reference's SHA-256 of them).
    let id = revalidate(&mut h);
    answer_image(&mut h, id, None, png);
    let third = handle_of(&h, AGENT).unwrap();
    assert_ne!(third, second, "an ETag gone is a new fingerprint");
    let id = revalidate(&mut h);
    answer_image(&mut h, id, None, png);
    assert_eq!(
        handle_of(&h, AGENT),
        Some(third),
        "no ETag, same bytes: kept"
    );
    let id = revalidate(&mut h);
    answer_image(&mut h, id, None, SVG);
    assert_ne!(
        handle_of(&h, AGENT),
        Some(third),
        "no ETag, other bytes: replaced"
    );
    assert_eq!(image_of(&h, AGENT).as_deref(), Some(SVG));
}

/// RU-36: a failed first load (404) leaves the entry `error` without a handle, not requested
/// again for one minute; a failed revalidation (503) keeps the icon `ready` with its handle;
/// sign-out clears the cache.
#[test]
fn ru_36_failures_and_sign_out() {
    let mut h = with_projection();
    let id = h.expect_pending("agent icon", icon_of(AGENT));
    h.reply(id, 404, json!({"detail": "Not found."}));
    assert_eq!(status_of(&h, AGENT), IconStatus::Error);
    assert_eq!(handle_of(&h, AGENT), None);
    h.advance(59_999);
    ask(&mut h, &[AGENT]);
    assert_eq!(h.count(icon_of(AGENT)), 1, "not within the minute");
    assert_eq!(status_of(&h, AGENT), IconStatus::Error);
    h.advance(1);
    ask(&mut h, &[AGENT]);
    assert_eq!(
        status_of(&h, AGENT),
        IconStatus::Loading,
        "tried again after it"
    );
    let id = h.expect_pending("agent icon", icon_of(AGENT));
    answer_image(&mut h, id, Some("\"one\""), SVG);
    let handle = handle_of(&h, AGENT).unwrap();

    let id = revalidate(&mut h);
    h.reply(id, 503, json!({"detail": "busy"}));
    assert_eq!(
        status_of(&h, AGENT),
        IconStatus::Ready,
        "a failed revalidation keeps it"
    );
    assert_eq!(handle_of(&h, AGENT), Some(handle));
    assert!(h.notices().is_empty());

    h.input(Input::Person(Person::local(Some("user-1".into()))));
    assert!(
        h.snapshot().agent_icons.is_empty(),
        "sign-out clears the cache"
    );
    h.input(Input::Person(Person::new("user-1", Secret::new("t-1"))));
    ask(&mut h, &[AGENT]);
    let id = projection_request(&h);
    h.reply(id, 200, projection());
    assert_eq!(
        status_of(&h, AGENT),
        IconStatus::Loading,
        "nothing held after sign-out"
    );
}

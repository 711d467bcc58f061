#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! MOD: when the Agent has no default model (rules.md, "MOD: When the Agent has no default
//! model"), with SHR-6 (the selection request is set exactly while a creation waits) and FAIL-16
//! (a failed catalog disables choosing a model, not sending), read through OI-6, OI-12, OI-21,
//! OI-23, OI-27, OI-28 and OI-29.

use engine_core::api::{
    ModelChoice, error_message, parse_catalog, pick_default_session_model, resolve_selection,
};
use engine_core::{
    AgentRecord, ApiCall, Command, Config, DefaultSessionStatus, Event, GetOrCreateBody, Input,
    NoticeVariant, Origin, Person, RequestId, Secret, SessionModelSelectionRequest, Target,
};
use serde_json::{Value, json};
use spec_tests::fixtures::{
    AGENT, AGENT2, ENV, ENV2, HANDLE, USER, catalog, catalog_model, catalog_of, catalog_provider,
    handle_record, model_required, page, record, runtime_ready, with_model,
};
use spec_tests::models::{
    body_of, is_catalog, is_goc, is_patch, is_start_new, json_body, picker, refuse, values,
};
use spec_tests::{BASE, Harness, Sent};

const S1: &str = "s-1";
const S_NEW: &str = "s-new";
const S_DEF: &str = "s-def";
const GOC_DEFAULT: &str = "/api/v1/agents/agent-1/sessions/get-or-create-session/";
const NEEDED: &str = "A model is needed to start this session. Choose one to continue.";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn is_creation(c: &ApiCall) -> bool {
    is_goc(c) || is_start_new(c)
}

fn is_runtime(c: &ApiCall) -> bool {
    matches!(
        c,
        ApiCall::ResolveRuntimeAccess { .. }
            | ApiCall::ConfirmAgent { .. }
            | ApiCall::SendMessage { .. }
            | ApiCall::CancelRun { .. }
    )
}

fn gocs(h: &Harness) -> Vec<&Sent> {
    h.sent().iter().filter(|s| is_goc(&s.call)).collect()
}

fn goc_body(s: &Sent) -> &GetOrCreateBody {
    match &s.call {
        ApiCall::GetOrCreateSession { body, .. } => body,
        other => panic!("not a get-or-create: {other:?}"),
    }
}

fn choice(provider: &str, model: &str, thinking: Option<&str>) -> ModelChoice {
    ModelChoice {
        provider: provider.to_owned(),
        model: model.to_owned(),
        thinking: thinking.map(str::to_owned),
    }
}

fn resolve(h: &mut Harness, provider: &str, model: &str, thinking: Option<&str>) {
    h.command(Command::ResolveSessionModelSelection {
        choice: choice(provider, model, thinking),
    });
}

fn request_of(h: &Harness) -> Option<SessionModelSelectionRequest> {
    h.snapshot().session_model_selection_request
}

/// Answers the open catalog request with `body`.
fn answer_catalog_with(h: &mut Harness, body: Value) {
    let id = h.expect_pending("catalog", is_catalog);
    h.reply(id, 200, body);
}

/// Answers the open catalog request with the P12 example.
fn answer_catalog(h: &mut Harness) {
    answer_catalog_with(h, catalog());
}

/// Fails the open catalog request and both retries (1 s, then 2 s later): the failure is final.
fn fail_catalog_three_times(h: &mut Harness) {
    let id = h.expect_pending("catalog", is_catalog);
    h.reply(id, 500, json!({}));
    h.advance(1_000);
    let id = h.expect_pending("catalog retry 1", is_catalog);
    h.reply(id, 500, json!({}));
    h.advance(2_000);
    let id = h.expect_pending("catalog retry 2", is_catalog);
    h.reply(id, 500, json!({}));
}

fn notifies(h: &Harness) -> usize {
    h.events()
        .iter()
        .filter(|e| matches!(e, Event::Notify(_)))
        .count()
}

fn request_visible_count(h: &Harness) -> usize {
    h.events()
        .iter()
        .filter(|e| matches!(e, Event::RequestVisible))
        .count()
}

/// A visible default-session state whose list (empty) and catalog (the P12 example) have loaded
/// and whose get-or-create was refused for want of a model: the choice waits.
fn default_waiting() -> Harness {
    let mut h = Harness::default_state();
    h.answer_list(&[]);
    answer_catalog(&mut h);
    let id = h.get_or_create_request();
    refuse(&mut h, id);
    assert!(request_of(&h).is_some(), "{}", h.transcript());
    h
}

/// The paths other than the default session that create a session (MOD-3, OI-16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    Launch,
    StartById,
    OpenLatest,
    StartAgent,
    Create,
}

const PATHS: [Path; 5] = [
    Path::Launch,
    Path::StartById,
    Path::OpenLatest,
    Path::StartAgent,
    Path::Create,
];

impl Path {
    /// The Agent the path creates for: the selected session's (AGENT) for createAgentSession,
    /// AGENT2 for the others.
    fn agent(self) -> &'static str {
        match self {
            Path::Create => AGENT,
            _ => AGENT2,
        }
    }

    fn launched(self) -> bool {
        matches!(self, Path::Launch | Path::StartById | Path::OpenLatest)
    }
}

/// Starts `path` on `h` (answering its Agent lookup empty when it has one) and returns the open
/// start-new-session request.
fn begin(h: &mut Harness, path: Path, key: u64) -> RequestId {
    let lookup = |h: &Harness| {
        h.expect_pending("Agent lookup", |c| {
            matches!(c, ApiCall::ListSessions { agent: Some(_), .. })
        })
    };
    match path {
        Path::Launch => {
            h.launch(AGENT2, key);
            let id = lookup(h);
            h.reply(id, 200, page(&[]));
        }
        Path::StartById => {
            h.command(Command::StartAgentSessionById {
                agent_id: AGENT2.into(),
                label: Some("Ops Helper".into()),
            });
        }
        Path::OpenLatest => {
            h.command(Command::OpenLatestOrStartAgentSessionById {
                agent_id: AGENT2.into(),
                label: Some("Ops Helper".into()),
            });
            let id = lookup(h);
            h.reply(id, 200, page(&[]));
        }
        Path::StartAgent => {
            h.command(Command::StartAgentSession {
                agent: AgentRecord {
                    id: None,
                    uid: Some(AGENT2.into()),
                    name: Some("Ops Helper".into()),
                },
            });
        }
        Path::Create => {
            h.command(Command::CreateAgentSession);
        }
    }
    h.expect_pending("start-new-session", is_start_new)
}

/// S1 ready and visible, its catalog (the P12 example) loaded.
fn ready_with_catalog() -> Harness {
    let mut h = Harness::ready(S1);
    answer_catalog(&mut h);
    h
}

/// [`ready_with_catalog`], then `path` refused for want of a model: the choice waits.
fn action_waiting(path: Path) -> Harness {
    let mut h = ready_with_catalog();
    let id = begin(&mut h, path, 1);
    refuse(&mut h, id);
    assert!(request_of(&h).is_some(), "{path:?}\n{}", h.transcript());
    h
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap()
}

/// OI-28: `cc-session-{base36 ms}-{6 base36 chars}`, all lower case; returns the ms part.
fn assert_fresh_handle_form(handle: &str) -> String {
    let rest = handle
        .strip_prefix("cc-session-")
        .unwrap_or_else(|| panic!("not a fresh handle: {handle:?}"));
    let (ms, draw) = rest
        .split_once('-')
        .unwrap_or_else(|| panic!("no draw part: {handle:?}"));
    let base36_lower = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    };
    assert!(base36_lower(ms), "{handle:?}");
    assert!(base36_lower(draw) && draw.len() == 6, "{handle:?}");
    ms.to_owned()
}

// ---------------------------------------------------------------------------------------------
// MOD-1, MOD-2, MOD-4, OI-12: what counts as the model-required refusal
// ---------------------------------------------------------------------------------------------

/// MOD-1, MOD-4, OI-12: a 400 whose JSON object reports llm_provider and/or llm_model as
/// "required" (string or list, any letter case) sets sessionModelSelectionRequest for the
/// default session; the creating path selects nothing and nothing is notified.
#[test]
fn mod_1_4_model_required_bodies_set_the_request() {
    let bodies = [
        model_required(),
        json!({"llm_model": ["This field is required."]}),
        json!({"llm_provider": "REQUIRED"}),
        json!({"llm_provider": ["Unknown provider.", "This field is Required."], "name": ["ok"]}),
        json!({"llm_model": "required", "detail": "Choose a model."}),
    ];
    for body in bodies {
        let mut h = Harness::default_state();
        let id = h.get_or_create_request();
        h.reply(id, 400, body.clone());
        let s = h.snapshot();
        let request = s
            .session_model_selection_request
            .unwrap_or_else(|| panic!("no request for {body}"));
        assert_eq!(request.agent_uid.as_deref(), Some(AGENT), "{body}");
        // MOD-4: nothing selected, nothing notified; the choice keeps the status opening (OI-23).
        assert_eq!(s.current_session_id, None, "{body}");
        assert_eq!(s.default_session_status, DefaultSessionStatus::Opening);
        assert_eq!(s.default_session_error, None);
        assert_eq!(notifies(&h), 0, "{body}");
    }
}

/// MOD-1, MOD-4, OI-12: the same refusal of a start-new-session (startAgentSessionById) sets
/// the request too, naming the Agent and the action's label; the selection stays where it was
/// and no notify is emitted.
#[test]
fn mod_1_4_start_new_session_refusal_sets_the_request() {
    let h = action_waiting(Path::StartById);
    let s = h.snapshot();
    let request = s.session_model_selection_request.clone().unwrap();
    assert_eq!(request.agent_uid.as_deref(), Some(AGENT2));
    assert_eq!(request.agent_label.as_deref(), Some("Ops Helper"));
    assert_eq!(s.current_session_id.as_deref(), Some(S1));
    assert!(!s.is_direct_launch_session);
    assert!(!s.agent_sessions.iter().any(|x| x.uid == S_NEW));
    assert_eq!(notifies(&h), 0);
}

/// MOD-2, OI-12: every other creation failure stays a plain error: a 400 that reports the model
/// fields as invalid rather than required, a 400 about another field, a 500 or 401 with the
/// model-required body, a list or text body, a nested value, an empty body, and no answer. For
/// the default session it becomes defaultSessionStatus error; sessionModelSelectionRequest is
/// never set.
#[test]
fn mod_2_other_default_failures_are_plain_errors() {
    let cases: Vec<(u16, Option<Vec<u8>>)> = vec![
        (400, Some(br#"{"llm_model": ["Unknown model."]}"#.to_vec())),
        (
            400,
            Some(br#"{"name": ["This field is required."]}"#.to_vec()),
        ),
        (500, Some(model_required().to_string().into_bytes())),
        (401, Some(model_required().to_string().into_bytes())),
        (
            400,
            Some(br#"[{"llm_model": ["This field is required."]}]"#.to_vec()),
        ),
        (400, Some(b"llm_model: This field is required.".to_vec())),
        (
            400,
            Some(br#"{"llm_model": [["This field is required."]]}"#.to_vec()),
        ),
        (400, Some(br#"{"llm_model": {"x": "required"}}"#.to_vec())),
        (400, Some(Vec::new())),
        (0, None),
    ];
    for (status, body) in cases {
        let mut h = Harness::default_state();
        let id = h.get_or_create_request();
        match &body {
            Some(b) => {
                h.reply_raw(id, status, Some("application/json"), b, None);
            }
            None => {
                h.fail(id);
            }
        }
        let s = h.snapshot();
        let shown = body
            .as_ref()
            .map(|b| String::from_utf8_lossy(b).into_owned());
        assert_eq!(
            s.session_model_selection_request, None,
            "{status} {shown:?}"
        );
        assert_eq!(
            s.default_session_status,
            DefaultSessionStatus::Error,
            "{status} {shown:?}"
        );
        assert!(s.default_session_error.is_some());
        assert_ne!(s.default_session_error.as_deref(), Some(NEEDED));
        assert_eq!(request_visible_count(&h), 0);
    }
}

/// MOD-2, FAIL-13: a plain refusal of an action's start-new-session (400 "Unknown model.") is
/// notified and sets no request.
#[test]
fn mod_2_other_action_failures_are_plain_errors() {
    let mut h = ready_with_catalog();
    let id = begin(&mut h, Path::StartById, 1);
    h.reply(id, 400, json!({"llm_model": ["Unknown model."]}));
    assert_eq!(request_of(&h), None);
    let n = h.notices();
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].title, "Agent session not created");
    assert_eq!(n[0].variant, NoticeVariant::Error);
    assert_eq!(h.current().as_deref(), Some(S1));
    assert_eq!(h.count(is_goc), 0, "a plain failure is not retried");
}

// ---------------------------------------------------------------------------------------------
// MOD-3, MOD-11, MOD-12: every creating path, the fresh-handle retry and its selection
// ---------------------------------------------------------------------------------------------

/// MOD-3, MOD-11, MOD-12, OI-16: every non-default path first tries its normal request (the
/// plain start-new-session, body {"thread_id"} only, no model fields); after the refusal and a
/// choice the retry is a get-or-create for the same Agent with a fresh handle and the chosen
/// model, never the start-new-session again; its success clears the request and selects the
/// session as the path would (launched for launchTarget, startAgentSessionById and
/// openLatestOrStartAgentSessionById, ordinary for startAgentSession and createAgentSession).
#[test]
fn mod_3_11_12_every_path_falls_back_through_get_or_create() {
    for path in PATHS {
        let mut h = ready_with_catalog();
        let id = begin(&mut h, path, 1);
        // MOD-3: the first attempt carries no model fields.
        let first = h.request(id);
        assert_eq!(first.request.method.as_str(), "POST", "{path:?}");
        assert_eq!(
            first.request.path,
            format!("/api/v1/agents/{}/start-new-session/", path.agent()),
            "{path:?}"
        );
        let b = json_body(first);
        assert_eq!(b.as_object().unwrap().len(), 1, "{path:?} {b}");
        assert!(b["thread_id"].is_string(), "{path:?} {b}");
        assert_eq!(h.count(is_goc), 0, "{path:?}");

        refuse(&mut h, id);
        assert!(request_of(&h).is_some(), "{path:?}");
        // MOD-4: the path selects nothing yet and notifies nothing.
        assert_eq!(h.current().as_deref(), Some(S1), "{path:?}");
        assert!(!h.snapshot().is_direct_launch_session, "{path:?}");
        assert_eq!(notifies(&h), 0, "{path:?}");
        let starts = h.count(is_start_new);
        let mark = h.mark();
        resolve(&mut h, "team-models", "tm-1", Some("high"));
        // MOD-11: one get-or-create, for the same Agent, fresh handle, the choice's fields.
        let retried: Vec<&Sent> = h
            .sent_since(mark)
            .iter()
            .filter(|s| is_creation(&s.call))
            .collect();
        assert_eq!(retried.len(), 1, "{path:?}");
        let goc = retried[0];
        assert_eq!(
            goc.request.path,
            format!(
                "/api/v1/agents/{}/sessions/get-or-create-session/",
                path.agent()
            ),
            "{path:?}"
        );
        let b = json_body(goc);
        let handle = b["handle_unique_id"].as_str().unwrap().to_owned();
        assert_fresh_handle_form(&handle);
        assert_ne!(handle, HANDLE);
        assert_eq!(b["llm_provider"], "team-models", "{path:?}");
        assert_eq!(b["llm_model"], "tm-1", "{path:?}");
        assert_eq!(b["llm_thinking"], "high", "{path:?}");
        assert_eq!(
            h.count(is_start_new),
            starts,
            "{path:?}: no start-new-session retry"
        );
        // SHR-6: the creation no longer waits for a choice.
        assert_eq!(request_of(&h), None, "{path:?}");

        // MOD-12: the created session is selected the way the path selects.
        let created = with_model(
            handle_record(S_NEW, path.agent(), ENV, &handle, 40),
            "team-models",
            "tm-1",
            Some("high"),
        );
        h.reply(goc.id, 200, created);
        let s = h.snapshot();
        assert_eq!(s.current_session_id.as_deref(), Some(S_NEW), "{path:?}");
        assert_eq!(s.is_direct_launch_session, path.launched(), "{path:?}");
        let origin = if path.launched() {
            Origin::Launched
        } else {
            Origin::Created
        };
        assert_eq!(s.selection_origin, Some(origin), "{path:?}");
        assert_eq!(s.session_model_selection_request, None);
        assert_eq!(h.count(is_creation), starts + 1, "{path:?}");
        assert_eq!(notifies(&h), 0, "{path:?}");
    }
}

/// MOD-3: the default session's first get-or-create carries exactly handle_unique_id and name,
/// no model fields.
#[test]
fn mod_3_default_first_attempt_has_no_model_fields() {
    let h = Harness::default_state();
    let all = gocs(&h);
    assert_eq!(all.len(), 1);
    assert_eq!(
        json_body(all[0]),
        json!({"handle_unique_id": HANDLE, "name": "Ledger chat"})
    );
}

/// MOD-11, OI-28, OI-32: the fresh handle is "cc-session-", the wall-clock ms in base 36, a
/// hyphen and six base-36 characters; each one differs from the default handle and from every
/// handle issued before, even within the same millisecond.
#[test]
fn mod_11_fresh_handles_are_well_formed_and_unique() {
    let mut config = Config::new(BASE).unwrap().with_seed(7);
    let start = 1_790_000_000_000_u64;
    config.start_unix_ms = start;
    let mut h = Harness::with_config(config);
    h.person(USER);
    h.env(Some(ENV));
    h.visible(true);
    h.answer_list(&[]);
    answer_catalog(&mut h);
    h.advance(1_234);
    let mut handles = vec![HANDLE.to_owned()];
    for round in 0..4 {
        let id = begin(&mut h, Path::StartById, 0);
        refuse(&mut h, id);
        resolve(&mut h, "acme-cloud", "acme-small", None);
        let goc = *gocs(&h).last().unwrap();
        let handle = goc_body(goc).handle_unique_id.clone();
        let ms = assert_fresh_handle_form(&handle);
        assert_eq!(ms, base36(start + h.now_ms()), "round {round}: {handle}");
        assert!(!handles.contains(&handle), "round {round}: {handle} reused");
        handles.push(handle.clone());
        let uid = format!("s-new-{round}");
        h.reply(
            goc.id,
            200,
            handle_record(&uid, AGENT2, ENV, &handle, 40 + round),
        );
        assert_eq!(h.current().as_deref(), Some(uid.as_str()));
    }
}

/// MOD-11, OI-27: a default choice replaced by an action's choice is retried on the action's
/// terms: a fresh handle, never the default handle.
#[test]
fn mod_11_replaced_default_choice_uses_a_fresh_handle() {
    let mut h = default_waiting();
    let id = begin(&mut h, Path::StartById, 0);
    refuse(&mut h, id);
    resolve(&mut h, "team-models", "tm-1", None);
    let goc = *gocs(&h).last().unwrap();
    let b = goc_body(goc);
    assert_ne!(b.handle_unique_id, HANDLE);
    assert_fresh_handle_form(&b.handle_unique_id);
    assert_eq!(
        goc.request.path,
        "/api/v1/agents/agent-2/sessions/get-or-create-session/"
    );
    assert_eq!(b.name, None);
}

// ---------------------------------------------------------------------------------------------
// MOD-5, MOD-6, OI-29: the "choose a model" state and its first offer
// ---------------------------------------------------------------------------------------------

/// MOD-5: while the request is set, the engine offers the composer's own picker: the catalog's
/// providers and models, the offered choice and its thinking levels.
#[test]
fn mod_5_choice_state_offers_the_composer_picker() {
    let h = default_waiting();
    let s = h.snapshot();
    assert!(s.session_model_selection_request.is_some());
    let providers: Vec<&str> = s
        .available_providers
        .iter()
        .map(|p| p.value.as_str())
        .collect();
    assert_eq!(providers, ["acme-cloud", "team-models"]);
    let models: Vec<&str> = s.available_models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        models,
        [
            "acme-cloud::acme-large",
            "acme-cloud::acme-small",
            "team-models::tm-1"
        ]
    );
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
    );
    let efforts: Vec<&str> = s
        .available_reasoning_efforts
        .iter()
        .map(|e| e.value.as_str())
        .collect();
    assert_eq!(efforts, ["low", "medium", "high"]);
}

/// Runs the default flow with the latest-sessions list `listed` and catalog `cat`; returns the
/// harness with the choice waiting.
fn default_waiting_with(listed: &[Value], cat: Value) -> Harness {
    let mut h = Harness::default_state();
    h.answer_list(listed);
    answer_catalog_with(&mut h, cat);
    let id = h.get_or_create_request();
    refuse(&mut h, id);
    assert!(request_of(&h).is_some());
    h
}

/// MOD-6, OI-29: the first offer is the model of the most recent listed session whose provider
/// and model the catalog can still run, with that model's default level (tm-1: "off").
#[test]
fn mod_6_first_offer_follows_the_most_recent_usable_session() {
    let listed = [
        with_model(record("s-a", AGENT, ENV, 50), "team-models", "tm-1", None),
        record("s-b", AGENT, ENV, 10),
    ];
    let h = default_waiting_with(&listed, catalog());
    let s = h.snapshot();
    let last_used: Vec<(String, String)> = s
        .session_model_last_used
        .iter()
        .map(|e| (e.provider.clone(), e.model.clone()))
        .collect();
    assert_eq!(
        last_used,
        [
            ("team-models".to_owned(), "tm-1".to_owned()),
            ("acme-cloud".to_owned(), "acme-large".to_owned())
        ]
    );
    assert_eq!(
        picker(&h),
        values("team-models", "team-models::tm-1", Some("off"))
    );
    // The same result as the shared function over the same inputs (MOD-19).
    let parsed = parse_catalog(catalog().to_string().as_bytes()).unwrap();
    assert_eq!(
        pick_default_session_model(&parsed, &last_used),
        Some(choice("team-models", "tm-1", Some("off")))
    );
}

/// MOD-6, OI-29: entries the catalog cannot run are passed over: a model it lacks, and a model
/// whose provider requires a sign-in it lacks; the first entry that can run wins, matched by
/// label and ignoring letter case.
#[test]
fn mod_6_entries_the_catalog_cannot_run_are_skipped() {
    let mut cat = catalog();
    // acme-cloud needs a sign-in it lacks: its models cannot run.
    cat["providers"][0]["authenticated"] = json!(false);
    let listed = [
        with_model(
            record("s-a", AGENT, ENV, 50),
            "acme-cloud",
            "acme-large",
            None,
        ),
        with_model(
            record("s-b", AGENT, ENV, 40),
            "team-models",
            "retired",
            None,
        ),
        with_model(record("s-c", AGENT, ENV, 30), "Team-Models", "tm 1", None),
    ];
    let h = default_waiting_with(&listed, cat);
    assert_eq!(
        picker(&h),
        values("team-models", "team-models::tm-1", Some("off"))
    );
}

/// MOD-6, OI-29: with no entry that can run, the first usable model in catalog order is offered
/// (an enabled provider without models and a disabled provider are passed over); with no usable
/// model at all nothing is offered.
#[test]
fn mod_6_no_usable_entry_offers_first_usable_or_nothing() {
    let cat = catalog_of(&[
        catalog_provider("empty", &[]),
        {
            let mut p = catalog_provider("off", &[catalog_model("o1", &["low"])]);
            p["enabled"] = json!(false);
            p
        },
        catalog_provider(
            "second",
            &[
                catalog_model("s1", &["minimal", "max"]),
                catalog_model("s2", &[]),
            ],
        ),
    ]);
    let listed = [with_model(record("s-a", AGENT, ENV, 50), "off", "o1", None)];
    let h = default_waiting_with(&listed, cat);
    assert_eq!(picker(&h), values("second", "second::s1", Some("minimal")));

    let mut none = catalog_of(&[catalog_provider("empty", &[])]);
    none["providers"][0]["models"] = json!([]);
    let h = default_waiting_with(&listed, none);
    assert_eq!(picker(&h), (None, None, None));
}

/// MOD-6, OI-29: before the catalog has loaded nothing is offered; the offer appears when it
/// loads.
#[test]
fn mod_6_nothing_offered_before_the_catalog_loads() {
    let mut h = Harness::default_state();
    h.answer_list(&[]);
    let id = h.get_or_create_request();
    refuse(&mut h, id);
    assert!(request_of(&h).is_some());
    assert_eq!(picker(&h), (None, None, None));
    assert!(h.snapshot().available_models.is_empty());
    answer_catalog(&mut h);
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
    );
}

// ---------------------------------------------------------------------------------------------
// MOD-7, MOD-8: onRequestVisible and the catalog while hidden
// ---------------------------------------------------------------------------------------------

/// A hidden chat for USER in ENV, in the default-session state (its get-or-create open).
fn hidden_default_state() -> Harness {
    let mut h = Harness::new();
    h.person(USER);
    h.env(Some(ENV));
    h.default_session(Some(AGENT));
    h.shows_default(true);
    h
}

/// MOD-7, MOD-8, CAT-4: with the chat hidden, a refused default get-or-create calls
/// onRequestVisible exactly once and the catalog is read although the chat is hidden and
/// nothing is hydrated; before the refusal no catalog request went out.
#[test]
fn mod_7_8_hidden_choice_requests_visibility_once_and_reads_the_catalog() {
    let mut h = hidden_default_state();
    assert_eq!(h.count(is_catalog), 0, "CAT-4: hidden, no choice pending");
    assert!(!h.snapshot().has_requested_available_models);
    let id = h.get_or_create_request();
    refuse(&mut h, id);
    assert!(request_of(&h).is_some());
    assert_eq!(request_visible_count(&h), 1);
    // MOD-8: the catalog is read while hidden, nothing being hydrated.
    assert_eq!(h.count(is_catalog), 1);
    assert!(h.snapshot().has_requested_available_models);
    assert_eq!(
        h.count(|c| matches!(
            c,
            ApiCall::GetSessionDetail { .. } | ApiCall::GetSessionHistory { .. }
        )),
        0
    );
    answer_catalog(&mut h);
    h.advance(10_000);
    // Still once: later steps do not call it again.
    assert_eq!(request_visible_count(&h), 1);
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
    );
}

/// MOD-7: with the chat visible, onRequestVisible is not called for the choice.
#[test]
fn mod_7_visible_choice_does_not_request_visibility() {
    let h = default_waiting();
    assert_eq!(request_visible_count(&h), 0);
    let h = action_waiting(Path::StartById);
    assert_eq!(request_visible_count(&h), 0);
}

/// MOD-7: a hidden action path (startAgentSessionById) refused for want of a model calls
/// onRequestVisible once, before any session is selected.
#[test]
fn mod_7_hidden_action_choice_requests_visibility_once() {
    let mut h = Harness::new();
    h.person(USER);
    h.env(Some(ENV));
    let id = begin(&mut h, Path::StartById, 0);
    assert_eq!(request_visible_count(&h), 0);
    refuse(&mut h, id);
    assert_eq!(request_visible_count(&h), 1);
    assert_eq!(h.current(), None);
    assert_eq!(h.count(is_catalog), 1, "MOD-8");
    answer_catalog(&mut h);
    assert_eq!(request_visible_count(&h), 1);
}

// ---------------------------------------------------------------------------------------------
// MOD-9, MOD-19: picker changes in the "choose a model" state
// ---------------------------------------------------------------------------------------------

/// MOD-9: picker changes while a choice waits never PATCH, and the open session's stored model
/// (its detail record, and the session later message requests carry) stays as it was.
#[test]
fn mod_9_choice_state_edits_never_patch() {
    let mut h = Harness::talking(S1);
    answer_catalog(&mut h);
    let record_before = h.snapshot().active_session_detail.unwrap().record;
    let id = begin(&mut h, Path::StartById, 0);
    refuse(&mut h, id);
    assert!(request_of(&h).is_some());
    h.command(Command::SetSelectedProviderValue {
        value: Some("team-models".into()),
    });
    assert_eq!(
        picker(&h),
        values("team-models", "team-models::tm-1", Some("off"))
    );
    h.command(Command::SetSelectedModelValue {
        value: Some("acme-cloud::acme-small".into()),
    });
    h.command(Command::SetSelectedModelValue {
        value: Some("acme-cloud::acme-large".into()),
    });
    h.command(Command::SetSelectedReasoningEffortValue {
        value: Some("high".into()),
    });
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("high"))
    );
    assert_eq!(h.count(is_patch), 0);
    assert!(!h.snapshot().is_updating_session_model);
    assert_eq!(
        h.snapshot().active_session_detail.unwrap().record,
        record_before
    );
    h.command(Command::CancelSessionModelSelection);
    assert_eq!(h.count(is_patch), 0);
    assert_eq!(
        h.snapshot().active_session_detail.unwrap().record,
        record_before
    );
    // A later message request carries the session as stored.
    h.send("Still there?");
    let rid = h.runtime_request(S1);
    h.reply(rid, 200, runtime_ready(S1));
    let mid = h.message_request(S1);
    let b = body_of(&h, mid);
    assert_eq!(b["session"]["llm_provider"], "acme-cloud");
    assert_eq!(b["session"]["llm_model"], "acme-large");
}

/// MOD-9: after the choice is cancelled, the open session's model settings are as before the
/// choice: its composer picker shows its stored model again (acme-cloud / acme-large, level
/// medium), a later turn carries that level in runConfig, and a later level edit on that
/// session PATCHes its own provider and model, not the ones picked in the "choose a model"
/// state.
#[test]
fn mod_9_cancelled_choice_leaves_the_open_session_picker_unchanged() {
    let mut h = Harness::talking(S1);
    answer_catalog(&mut h);
    let before = picker(&h);
    assert_eq!(
        before,
        values("acme-cloud", "acme-cloud::acme-large", Some("medium"))
    );
    let id = begin(&mut h, Path::StartById, 0);
    refuse(&mut h, id);
    h.command(Command::SetSelectedProviderValue {
        value: Some("team-models".into()),
    });
    h.command(Command::SetSelectedReasoningEffortValue {
        value: Some("high".into()),
    });
    h.command(Command::CancelSessionModelSelection);
    assert_eq!(h.current().as_deref(), Some(S1));
    assert_eq!(h.count(is_patch), 0);
    assert_eq!(picker(&h), before, "{}", h.transcript());
    // A later level edit on S1 must not carry the abandoned choice's provider and model.
    h.command(Command::SetSelectedReasoningEffortValue {
        value: Some("low".into()),
    });
    let id = h.expect_pending("PATCH", is_patch);
    assert_eq!(
        body_of(&h, id),
        json!({"llm_provider": "acme-cloud", "llm_model": "acme-large", "llm_thinking": "low"}),
        "{}",
        h.transcript()
    );
    h.reply(id, 409, json!({"detail": "Busy."}));
    assert_eq!(picker(&h), before);
    h.send("Still there?");
    let rid = h.runtime_request(S1);
    h.reply(rid, 200, runtime_ready(S1));
    let mid = h.message_request(S1);
    assert_eq!(
        body_of(&h, mid)["runConfig"],
        json!({"reasoning_effort": "medium"})
    );
}

/// MOD-19: the composer's picker on a ready session and the "choose a model" state resolve the
/// same input against the same catalog to the same provider, model and thinking, which is what
/// the shared resolver gives.
#[test]
fn mod_19_one_resolver_for_composer_and_choice_state() {
    let parsed = parse_catalog(catalog().to_string().as_bytes()).unwrap();
    let edits = [
        Command::SetSelectedProviderValue {
            value: Some("team-models".into()),
        },
        Command::SetSelectedModelValue {
            value: Some("acme-cloud::acme-small".into()),
        },
        Command::SetSelectedModelValue {
            value: Some("acme-cloud::acme-large".into()),
        },
        Command::SetSelectedReasoningEffortValue {
            value: Some("low".into()),
        },
        Command::SetSelectedProviderValue {
            value: Some("Team-Models".into()),
        },
    ];
    // The composer of a ready session (each PATCH answered with the stored values).
    let mut composer = ready_with_catalog();
    // The "choose a model" state (its first offer equals the composer's starting values).
    let mut chooser = default_waiting();
    assert_eq!(picker(&composer), picker(&chooser));
    let mut expected = {
        let r = resolve_selection(&parsed, Some("acme-cloud"), Some("acme-large"), None);
        (r.provider, r.model, r.thinking)
    };
    for edit in edits {
        let (p, m, t) = expected.clone();
        expected = match &edit {
            Command::SetSelectedProviderValue { value } => {
                let r = resolve_selection(&parsed, value.as_deref(), None, t.as_deref());
                (r.provider, r.model, r.thinking)
            }
            Command::SetSelectedModelValue { value } => {
                let (vp, vm) = value.as_deref().unwrap().split_once("::").unwrap();
                let r = resolve_selection(&parsed, Some(vp), Some(vm), t.as_deref());
                (r.provider, r.model, r.thinking)
            }
            Command::SetSelectedReasoningEffortValue { value } => (p, m, value.clone()),
            _ => unreachable!(),
        };
        let want = (
            expected.0.clone(),
            expected
                .0
                .as_ref()
                .zip(expected.1.as_ref())
                .map(|(p, m)| format!("{p}::{m}")),
            expected.2.clone(),
        );
        composer.command(edit.clone());
        chooser.command(edit.clone());
        assert_eq!(picker(&composer), want, "{edit:?}");
        assert_eq!(picker(&chooser), want, "{edit:?}");
        // The composer's PATCH carries the same resolution.
        let id = composer.expect_pending("PATCH", is_patch);
        assert_eq!(
            body_of(&composer, id),
            json!({
                "llm_provider": want.0.clone().unwrap(),
                "llm_model": expected.1.clone().unwrap(),
                "llm_thinking": want.2.clone().unwrap_or_default(),
            })
        );
        let stored = with_model(
            record(S1, AGENT, ENV, 0),
            want.0.as_deref().unwrap(),
            expected.1.as_deref().unwrap(),
            Some(want.2.as_deref().unwrap_or("")),
        );
        composer.reply(id, 200, stored);
        assert_eq!(picker(&composer), want, "{edit:?} after the PATCH");
    }
    assert_eq!(chooser.count(is_patch), 0);
}

/// MOD-19: a thinking level is taken only when the selected model itself offers it. With
/// acme-cloud / acme-small (no levels) picked, "high", which the same provider's acme-large
/// offers, is refused: the picker keeps its values, in the composer (no PATCH) and in the
/// "choose a model" state alike.
#[test]
fn mod_19_a_level_must_be_offered_by_the_selected_model_itself() {
    let small = Command::SetSelectedModelValue {
        value: Some("acme-cloud::acme-small".into()),
    };
    let high = Command::SetSelectedReasoningEffortValue {
        value: Some("high".into()),
    };
    // The composer of a ready session: the model edit PATCHes, answered with the stored values.
    let mut composer = ready_with_catalog();
    composer.command(small.clone());
    let (p, m, t) = picker(&composer);
    assert_eq!(m.as_deref(), Some("acme-cloud::acme-small"));
    let id = composer.expect_pending("PATCH", is_patch);
    let stored = with_model(
        record(S1, AGENT, ENV, 0),
        "acme-cloud",
        "acme-small",
        Some(t.as_deref().unwrap_or("")),
    );
    composer.reply(id, 200, stored);
    assert_eq!(picker(&composer), (p.clone(), m.clone(), t.clone()));
    let patches = composer.count(is_patch);
    composer.command(high.clone());
    assert_eq!(picker(&composer), (p, m, t), "{}", composer.transcript());
    assert_eq!(
        composer.count(is_patch),
        patches,
        "a refused level PATCHes nothing"
    );
    // The "choose a model" state.
    let mut chooser = default_waiting();
    chooser.command(small);
    let before = picker(&chooser);
    assert_eq!(before.1.as_deref(), Some("acme-cloud::acme-small"));
    chooser.command(high);
    assert_eq!(picker(&chooser), before);
}

// ---------------------------------------------------------------------------------------------
// MOD-10, MOD-12, MOD-13: the default session's retry and the session it opens
// ---------------------------------------------------------------------------------------------

/// MOD-10: for the default session the retry is the get-or-create again with the same handle
/// and name, plus llm_provider, llm_model and llm_thinking from the choice.
#[test]
fn mod_10_default_retry_keeps_handle_and_name() {
    let mut h = default_waiting();
    resolve(&mut h, "team-models", "tm-1", Some("high"));
    let all = gocs(&h);
    assert_eq!(all.len(), 2);
    let retry = all[1];
    assert_eq!(retry.request.method.as_str(), "POST");
    assert_eq!(retry.request.path, GOC_DEFAULT);
    assert_eq!(retry.request.target, Target::Platform);
    assert_eq!(
        json_body(retry),
        json!({"handle_unique_id": HANDLE, "name": "Ledger chat",
            "llm_provider": "team-models", "llm_model": "tm-1", "llm_thinking": "high"})
    );
    assert_eq!(h.count(is_start_new), 0);
}

/// MOD-12, MOD-13, SHR-6: the default retry's success clears the request, selects the default
/// session (defaultSessionStatus ready), and the picker shows the stored choice, its level
/// included (high, not tm-1's default off), through hydration and an identical catalog reload,
/// with no PATCH at any point.
#[test]
fn mod_12_13_default_session_opens_with_the_chosen_model() {
    let mut h = default_waiting();
    resolve(&mut h, "team-models", "tm-1", Some("high"));
    assert_eq!(request_of(&h), None, "SHR-6: the retry no longer waits");
    assert_eq!(
        h.snapshot().default_session_status,
        DefaultSessionStatus::Opening
    );
    let stored = with_model(
        handle_record(S_DEF, AGENT, ENV, HANDLE, 1),
        "team-models",
        "tm-1",
        Some("high"),
    );
    let id = h.get_or_create_request();
    h.reply(id, 200, stored.clone());
    let s = h.snapshot();
    assert_eq!(s.current_session_id.as_deref(), Some(S_DEF));
    assert!(s.is_default_session);
    assert_eq!(s.selection_origin, Some(Origin::Default));
    assert_eq!(s.default_session_status, DefaultSessionStatus::Ready);
    assert_eq!(s.default_session_error, None);
    assert_eq!(s.session_model_selection_request, None);
    h.answer_detail(S_DEF, stored);
    h.answer_history(S_DEF);
    assert_eq!(
        picker(&h),
        values("team-models", "team-models::tm-1", Some("high"))
    );
    h.command(Command::RequestAvailableModels);
    answer_catalog(&mut h);
    h.advance(5_000);
    assert_eq!(
        picker(&h),
        values("team-models", "team-models::tm-1", Some("high"))
    );
    assert_eq!(h.count(is_patch), 0);
    assert_eq!(h.count(is_goc), 2);
    assert_eq!(notifies(&h), 0);
}

/// MOD-13: for a launched session created with a chosen model (acme-large, level low) the
/// picker shows the choice once it opens, and no PATCH follows.
#[test]
fn mod_13_launched_session_opens_with_the_chosen_model() {
    let mut h = action_waiting(Path::StartById);
    resolve(&mut h, "acme-cloud", "acme-large", Some("low"));
    let goc = *gocs(&h).last().unwrap();
    let handle = goc_body(goc).handle_unique_id.clone();
    let stored = with_model(
        handle_record(S_NEW, AGENT2, ENV, &handle, 40),
        "acme-cloud",
        "acme-large",
        Some("low"),
    );
    h.reply(goc.id, 200, stored.clone());
    assert_eq!(h.current().as_deref(), Some(S_NEW));
    h.answer_detail(S_NEW, stored);
    h.answer_history(S_NEW);
    assert_eq!(
        picker(&h),
        values("acme-cloud", "acme-cloud::acme-large", Some("low"))
    );
    h.advance(2_000);
    assert_eq!(h.count(is_patch), 0);
}

// ---------------------------------------------------------------------------------------------
// MOD-14, OI-27: the second refusal
// ---------------------------------------------------------------------------------------------

/// MOD-14, OI-27, FAIL-3: a second model-required refusal of the default session's retry is not
/// retried and sets no new request; defaultSessionStatus is error and defaultSessionError holds
/// that failure's message, not SESSION_MODEL_NEEDED_MESSAGE; nothing is notified.
#[test]
fn mod_14_default_second_refusal_is_a_plain_failure() {
    let mut h = default_waiting();
    resolve(&mut h, "team-models", "tm-1", None);
    let id = h.get_or_create_request();
    refuse(&mut h, id);
    h.advance(30_000);
    let s = h.snapshot();
    assert_eq!(h.count(is_creation), 2, "no third creation request");
    assert_eq!(s.session_model_selection_request, None);
    assert_eq!(s.default_session_status, DefaultSessionStatus::Error);
    let expected = error_message(model_required().to_string().as_bytes()).unwrap();
    assert_eq!(s.default_session_error.as_deref(), Some(expected.as_str()));
    assert_ne!(s.default_session_error.as_deref(), Some(NEEDED));
    assert_eq!(s.current_session_id, None);
    assert_eq!(notifies(&h), 0);
    assert_eq!(request_visible_count(&h), 0);
}

/// MOD-14, OI-27, FAIL-13: a second refusal of an action's retry is a plain creation failure:
/// one notify (error, "Agent session not created", the error's message), no further creation
/// request, no new request, the selection unchanged.
#[test]
fn mod_14_action_second_refusal_is_notified_once() {
    let mut h = action_waiting(Path::StartById);
    resolve(&mut h, "team-models", "tm-1", None);
    let goc = *gocs(&h).last().unwrap();
    let gid = goc.id;
    refuse(&mut h, gid);
    h.advance(30_000);
    assert_eq!(h.count(is_creation), 2, "no third creation request");
    assert_eq!(request_of(&h), None);
    assert_eq!(h.current().as_deref(), Some(S1));
    let n = h.notices();
    assert_eq!(n.len(), 1, "{n:?}");
    assert_eq!(n[0].variant, NoticeVariant::Error);
    assert_eq!(n[0].title, "Agent session not created");
    let server = error_message(model_required().to_string().as_bytes()).unwrap();
    let description = n[0].description.clone().unwrap();
    assert!(description.contains(&server), "{description}");
}

/// MOD-14, OI-6: openLatestOrStartAgentSessionById's second refusal uses its own title.
#[test]
fn mod_14_open_latest_second_refusal_title() {
    let mut h = action_waiting(Path::OpenLatest);
    resolve(&mut h, "team-models", "tm-1", None);
    let gid = gocs(&h).last().unwrap().id;
    refuse(&mut h, gid);
    let n = h.notices();
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].title, "Agent session not opened");
    assert_eq!(h.count(is_creation), 2);
}

// ---------------------------------------------------------------------------------------------
// MOD-15, MOD-16, MOD-17: cancelling, and retrying the default session
// ---------------------------------------------------------------------------------------------

/// MOD-15, SHR-6: cancelling an action's choice clears the request and emits no request, no
/// notify and no sessionNotice.
#[test]
fn mod_15_cancel_is_silent() {
    for path in PATHS {
        let mut h = action_waiting(path);
        let events = h.events().len();
        let mark = h.mark();
        h.command(Command::CancelSessionModelSelection);
        h.advance(10_000);
        let s = h.snapshot();
        assert_eq!(s.session_model_selection_request, None, "{path:?}");
        assert!(
            !h.sent_since(mark).iter().any(|x| is_creation(&x.call)),
            "{path:?}"
        );
        assert!(
            !h.events()[events..]
                .iter()
                .any(|e| matches!(e, Event::Notify(_))),
            "{path:?}"
        );
        assert_eq!(s.session_notice, None, "{path:?}");
        assert_eq!(s.current_session_id.as_deref(), Some(S1), "{path:?}");
        // Nothing waits any more: a resolve now creates nothing.
        resolve(&mut h, "team-models", "tm-1", None);
        assert!(
            !h.sent_since(mark).iter().any(|x| is_creation(&x.call)),
            "{path:?}"
        );
    }
}

/// MOD-16, OI-23, OI-6: while the default session's choice waits, defaultSessionStatus is
/// opening with no error; after cancelSessionModelSelection() it is error with
/// SESSION_MODEL_NEEDED_MESSAGE; no request, notify or sessionNotice.
#[test]
fn mod_16_cancelled_default_choice_shows_the_needed_message() {
    let mut h = default_waiting();
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Opening);
    assert_eq!(s.default_session_error, None);
    let mark = h.mark();
    h.command(Command::CancelSessionModelSelection);
    h.advance(10_000);
    let s = h.snapshot();
    assert_eq!(s.session_model_selection_request, None);
    assert_eq!(s.default_session_status, DefaultSessionStatus::Error);
    assert_eq!(s.default_session_error.as_deref(), Some(NEEDED));
    assert_eq!(s.session_notice, None);
    assert!(!h.sent_since(mark).iter().any(|x| is_creation(&x.call)));
    assert_eq!(notifies(&h), 0);
}

/// MOD-17: after a cancel, retryDefaultSession() emits a new get-or-create without model fields,
/// which restarts the flow: a new refusal sets a new request (another id).
#[test]
fn mod_17_retry_after_cancel_restarts_the_flow() {
    let mut h = default_waiting();
    let first = request_of(&h).unwrap();
    h.command(Command::CancelSessionModelSelection);
    h.command(Command::RetryDefaultSession);
    let all = gocs(&h);
    assert_eq!(all.len(), 2);
    assert_eq!(
        json_body(all[1]),
        json!({"handle_unique_id": HANDLE, "name": "Ledger chat"})
    );
    assert_eq!(
        h.snapshot().default_session_status,
        DefaultSessionStatus::Opening
    );
    assert_eq!(h.snapshot().default_session_error, None);
    let id = all[1].id;
    refuse(&mut h, id);
    let second = request_of(&h).unwrap();
    assert_ne!(second.id, first.id);
    resolve(&mut h, "acme-cloud", "acme-large", Some("medium"));
    assert_eq!(
        json_body(gocs(&h).last().unwrap()),
        json!({"handle_unique_id": HANDLE, "name": "Ledger chat",
            "llm_provider": "acme-cloud", "llm_model": "acme-large", "llm_thinking": "medium"})
    );
}

// ---------------------------------------------------------------------------------------------
// MOD-18: the only callbacks
// ---------------------------------------------------------------------------------------------

/// MOD-18: across hidden and visible flows, cancels, successes and second refusals, the only
/// callbacks are onRequestVisible and (after a plain failure) notify, and no request goes to the
/// model-provider settings (sign-in or custom-provider endpoints).
#[test]
fn mod_18_only_request_visible_and_notify() {
    // Hidden default: refused, chosen, refused again.
    let mut h = hidden_default_state();
    let id = h.get_or_create_request();
    refuse(&mut h, id);
    answer_catalog(&mut h);
    resolve(&mut h, "team-models", "tm-1", None);
    let id = h.get_or_create_request();
    refuse(&mut h, id);
    let mut all = vec![h];
    // Visible actions: cancelled, chosen and opened, chosen and refused again.
    let mut h = action_waiting(Path::StartAgent);
    h.command(Command::CancelSessionModelSelection);
    all.push(h);
    let mut h = action_waiting(Path::Launch);
    resolve(&mut h, "acme-cloud", "acme-small", None);
    let goc = *gocs(&h).last().unwrap();
    let handle = goc_body(goc).handle_unique_id.clone();
    h.reply(goc.id, 200, handle_record(S_NEW, AGENT2, ENV, &handle, 9));
    all.push(h);
    let mut h = action_waiting(Path::Create);
    resolve(&mut h, "acme-cloud", "acme-small", None);
    let gid = gocs(&h).last().unwrap().id;
    refuse(&mut h, gid);
    all.push(h);
    for h in &all {
        for e in h.events() {
            assert!(
                matches!(e, Event::RequestVisible | Event::Notify(_)),
                "unexpected callback {e:?}"
            );
        }
        for s in h.sent() {
            assert!(
                !s.request.path.contains("sign-in") && !s.request.path.contains("custom-model"),
                "{}",
                s.request.path
            );
        }
    }
    // The notify only after the plain failure (the last flow).
    assert_eq!(notifies(&all[0]), 0);
    assert_eq!(notifies(&all[1]), 0);
    assert_eq!(notifies(&all[2]), 0);
    assert_eq!(notifies(&all[3]), 1);
}

// ---------------------------------------------------------------------------------------------
// SHR-6, OI-27: exactly while a creation waits
// ---------------------------------------------------------------------------------------------

/// SHR-6: sessionModelSelectionRequest is unset before the refusal, set while the choice waits
/// (across unrelated steps: catalog reloads, time, visibility), unset while the retry runs, and
/// unset after it succeeds.
#[test]
fn shr_6_request_set_exactly_while_waiting() {
    let mut h = Harness::default_state();
    h.answer_list(&[]);
    assert_eq!(request_of(&h), None);
    answer_catalog(&mut h);
    assert_eq!(request_of(&h), None);
    let id = h.get_or_create_request();
    assert_eq!(request_of(&h), None, "the get-or-create is still in flight");
    refuse(&mut h, id);
    let waiting = request_of(&h).unwrap();
    h.advance(60_000);
    h.command(Command::RequestAvailableModels);
    answer_catalog(&mut h);
    h.visible(false);
    h.visible(true);
    assert_eq!(
        request_of(&h),
        Some(waiting.clone()),
        "still the same request"
    );
    resolve(&mut h, "acme-cloud", "acme-small", None);
    assert_eq!(request_of(&h), None);
    let id = h.get_or_create_request();
    h.reply(id, 200, handle_record(S_DEF, AGENT, ENV, HANDLE, 1));
    assert_eq!(request_of(&h), None);
}

/// SHR-6: a change of Environment ends the wait (the creation no longer waits): the request is
/// unset, and a resolve afterwards creates nothing.
#[test]
fn shr_6_environment_change_ends_the_wait() {
    let mut h = action_waiting(Path::StartById);
    h.env(Some(ENV2));
    assert_eq!(request_of(&h), None);
    let mark = h.mark();
    resolve(&mut h, "team-models", "tm-1", None);
    assert!(!h.sent_since(mark).iter().any(|s| is_creation(&s.call)));

    let mut h = default_waiting();
    h.env(Some(ENV2));
    assert_eq!(request_of(&h), None);
}

/// SHR-6, MOD-1: a default-session wait that a change of Environment ended is not a refusal:
/// the default session is asked for again (a get-or-create without model fields) in the new
/// Environment and again when the first one comes back, never left on the abandoned choice.
#[test]
fn shr_6_default_wait_ended_by_environment_change_asks_again() {
    let mut h = default_waiting();
    for env in [ENV2, ENV] {
        let before = gocs(&h).len();
        h.env(Some(env));
        let asked: Vec<&Sent> = gocs(&h).into_iter().skip(before).collect();
        assert_eq!(asked.len(), 1, "{env}\n{}", h.transcript());
        let body = goc_body(asked[0]);
        assert_eq!(body.handle_unique_id, HANDLE);
        assert!(body.llm_provider.is_none() && body.llm_model.is_none());
        assert_eq!(request_of(&h), None);
    }
}

/// SHR-6: a change of person ends the wait as well.
#[test]
fn shr_6_person_change_ends_the_wait() {
    let mut h = default_waiting();
    h.input(Input::Person(Person::new(
        "user-2",
        Secret::new("other-token"),
    )));
    assert_eq!(request_of(&h), None);
}

/// OI-27, SHR-6: only one request exists: a newer creation that needs a model replaces the
/// pending default one (a new id, the new Agent), which ends as cancelled: no notify,
/// defaultSessionStatus error with SESSION_MODEL_NEEDED_MESSAGE.
#[test]
fn oi_27_newer_choice_replaces_the_pending_one() {
    let mut h = default_waiting();
    let first = request_of(&h).unwrap();
    let id = begin(&mut h, Path::StartById, 0);
    refuse(&mut h, id);
    let second = request_of(&h).unwrap();
    assert_ne!(second.id, first.id);
    assert_eq!(second.agent_uid.as_deref(), Some(AGENT2));
    assert_eq!(notifies(&h), 0);
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Error);
    assert_eq!(s.default_session_error.as_deref(), Some(NEEDED));
}

// ---------------------------------------------------------------------------------------------
// FAIL-16, OI-21: a failed catalog disables choosing a model, not sending
// ---------------------------------------------------------------------------------------------

/// FAIL-16, OI-21: with the catalog failed and no data held, the picker offers nothing and its
/// edits emit no PATCH, while an ordinary message still goes out (admission unchanged) and its
/// runConfig carries no reasoning level of the engine's own.
#[test]
fn fail_16_failed_catalog_blocks_choosing_not_sending() {
    let mut h = Harness::talking(S1);
    fail_catalog_three_times(&mut h);
    let s = h.snapshot();
    assert!(s.available_models_error.is_some());
    assert!(s.available_providers.is_empty());
    assert!(s.available_models.is_empty());
    assert!(s.available_reasoning_efforts.is_empty());
    assert_eq!(s.selected_model_value, None);
    assert!(s.composer_admission);
    h.command(Command::SetSelectedProviderValue {
        value: Some("acme-cloud".into()),
    });
    h.command(Command::SetSelectedModelValue {
        value: Some("acme-cloud::acme-large".into()),
    });
    assert_eq!(h.count(is_patch), 0);
    assert_eq!(h.snapshot().selected_model_value, None);
    h.send("Total for Q4?");
    let rid = h.runtime_request(S1);
    h.reply(rid, 200, runtime_ready(S1));
    let mid = h.message_request(S1);
    let b = body_of(&h, mid);
    assert!(b["runConfig"].get("reasoning_effort").is_none(), "{b}");
    assert_eq!(b["session"]["llm_model"], "acme-large");
}

/// FAIL-16, OI-21: with the catalog failed while a model choice waits, the "choose a model"
/// state offers nothing and resolveSessionModelSelection() is refused with no creation
/// request; the choice keeps waiting. Once the catalog loads, the same resolve goes out.
#[test]
fn fail_16_resolve_refused_without_catalog_data() {
    let mut h = Harness::default_state();
    h.answer_list(&[]);
    let id = h.get_or_create_request();
    refuse(&mut h, id);
    fail_catalog_three_times(&mut h);
    let s = h.snapshot();
    assert!(s.available_models_error.is_some());
    assert!(s.available_models.is_empty());
    assert_eq!(s.selected_model_value, None);
    let mark = h.mark();
    resolve(&mut h, "acme-cloud", "acme-large", Some("medium"));
    assert!(!h.sent_since(mark).iter().any(|s| is_creation(&s.call)));
    assert!(request_of(&h).is_some());
    assert_eq!(notifies(&h), 0);
    h.command(Command::RequestAvailableModels);
    answer_catalog(&mut h);
    assert_eq!(h.snapshot().available_models_error, None);
    resolve(&mut h, "acme-cloud", "acme-large", Some("medium"));
    assert_eq!(h.count(is_goc), 2);
}

// ---------------------------------------------------------------------------------------------
// Transcript
// ---------------------------------------------------------------------------------------------

/// MOD-1, MOD-4, MOD-6, MOD-10, MOD-12, MOD-13, SHR-6: the default session's whole flow: the
/// model-required refusal, the offer, the choice, the retry on the same handle, and the session
/// opening with the chosen model.
#[test]
fn mod_transcript_default_model_required_chosen_opened() {
    let mut h = Harness::default_state();
    h.answer_list(&[]);
    answer_catalog(&mut h);
    let id = h.get_or_create_request();
    refuse(&mut h, id);
    resolve(&mut h, "team-models", "tm-1", Some("high"));
    let stored = with_model(
        handle_record(S_DEF, AGENT, ENV, HANDLE, 1),
        "team-models",
        "tm-1",
        Some("high"),
    );
    let id = h.get_or_create_request();
    h.reply(id, 200, stored.clone());
    h.answer_detail(S_DEF, stored);
    h.answer_history(S_DEF);
    assert_eq!(h.count(is_patch), 0);
    assert!(h.sent().iter().all(|s| !is_runtime(&s.call) || {
        matches!(&s.call, ApiCall::ResolveRuntimeAccess { session_uid } if session_uid == S_DEF)
    }));
    insta::assert_snapshot!(h.transcript());
}

/// MOD-6, MOD-9: only the first offer comes from pickDefaultSessionModel: an edit made in the
/// "choose a model" state survives a catalog reload with the same content.
#[test]
fn mod_6_edit_in_choice_state_survives_identical_reload() {
    let mut h = default_waiting();
    h.command(Command::SetSelectedModelValue {
        value: Some("team-models::tm-1".into()),
    });
    let edited = values("team-models", "team-models::tm-1", Some("off"));
    assert_eq!(picker(&h), edited);
    h.command(Command::RequestAvailableModels);
    answer_catalog(&mut h);
    h.advance(1_000);
    assert_eq!(picker(&h), edited);
    assert_eq!(h.count(is_patch), 0);
}

/// MOD-14, FAIL-3, FAIL-4: any other failure of the default session's retry is a plain failure
/// too: its message, or the unavailable text when it has none; no further creation request.
#[test]
fn mod_14_default_retry_other_failures() {
    let mut h = default_waiting();
    resolve(&mut h, "team-models", "tm-1", None);
    let id = h.get_or_create_request();
    h.reply(id, 500, json!({"detail": "Platform busy."}));
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Error);
    assert_eq!(s.default_session_error.as_deref(), Some("Platform busy."));
    assert_eq!(s.session_model_selection_request, None);

    let mut h = default_waiting();
    resolve(&mut h, "team-models", "tm-1", None);
    let id = h.get_or_create_request();
    h.fail(id);
    h.advance(30_000);
    let s = h.snapshot();
    assert_eq!(s.default_session_status, DefaultSessionStatus::Error);
    assert_eq!(
        s.default_session_error.as_deref(),
        Some("The Agent's session could not be opened. Try again.")
    );
    assert_eq!(h.count(is_creation), 2);
}

/// OI-27: a newer action needing a model replaces an older action's pending choice, which ends
/// silently; the resolve creates for the newer path's Agent only.
#[test]
fn oi_27_newer_action_choice_replaces_an_older_one() {
    let mut h = action_waiting(Path::StartById);
    let first = request_of(&h).unwrap();
    let id = begin(&mut h, Path::Create, 0);
    h.reply(id, 400, model_required());
    let second = request_of(&h).unwrap();
    assert_ne!(first.id, second.id);
    assert_eq!(second.agent_uid.as_deref(), Some(AGENT));
    assert_eq!(notifies(&h), 0);
    resolve(&mut h, "acme-cloud", "acme-small", None);
    let all = gocs(&h);
    assert_eq!(all.len(), 1);
    assert_eq!(
        all[0].request.path,
        "/api/v1/agents/agent-1/sessions/get-or-create-session/"
    );
}

/// MOD-9, MOD-13, MOD-14: when the retry with the chosen model fails, no session was created
/// and the open session stays selected with its stored model in the composer's picker: the
/// choice's values belong to the created session only (OI-22's "when it selects the created
/// session").
#[test]
fn mod_9_14_failed_retry_leaves_the_open_session_picker_unchanged() {
    let mut h = Harness::talking(S1);
    answer_catalog(&mut h);
    let before = picker(&h);
    let id = begin(&mut h, Path::StartById, 0);
    refuse(&mut h, id);
    resolve(&mut h, "team-models", "tm-1", Some("high"));
    let gid = gocs(&h).last().unwrap().id;
    refuse(&mut h, gid);
    assert_eq!(h.current().as_deref(), Some(S1));
    assert_eq!(h.notices().len(), 1);
    assert_eq!(picker(&h), before, "{}", h.transcript());
}

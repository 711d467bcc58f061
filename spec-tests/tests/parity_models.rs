#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Reference parity of the model-required flow (issue 11, points 7 and 8): which fields the
//! refusal named (MOD-1, OI-12), `sessionModelSelectionRequest.agentLabel` on every creating path
//! (adr-notes 6, MOD-3, OI-27), and a retry that invents no thinking level (MOD-10, MOD-11,
//! MOD-19, OI-29).

use engine_core::{
    AgentRecord, ApiCall, Command, Input, LaunchTarget, RequestId, SessionModelSelectionRequest,
};
use serde_json::{Value, json};
use spec_tests::Harness;
use spec_tests::fixtures::{AGENT, AGENT2, ENV, HANDLE, catalog, handle_record, page, record};
use spec_tests::models::{is_catalog, is_goc, is_patch, is_start_new, json_body, picker, refuse};

const S1: &str = "s-1";
const S2: &str = "s-2";
const S_NEW: &str = "s-new";

fn request_of(h: &Harness) -> SessionModelSelectionRequest {
    h.snapshot()
        .session_model_selection_request
        .unwrap_or_else(|| panic!("no model choice waits\n{}", h.transcript()))
}

/// The open catalog read answered with the P12 example (acme-large offers low, medium and high,
/// medium its default; acme-small offers none; tm-1 offers off and high).
fn load_catalog(h: &mut Harness) {
    let id = h.expect_pending("catalog", is_catalog);
    h.reply(id, 200, catalog());
}

/// S1 (of AGENT) ready and visible, the catalog loaded.
fn ready() -> Harness {
    let mut h = Harness::ready(S1);
    load_catalog(&mut h);
    h
}

/// The default-session state with an empty list and the catalog loaded; its get-or-create open.
fn default_state() -> (Harness, RequestId) {
    let mut h = Harness::default_state();
    h.answer_list(&[]);
    load_catalog(&mut h);
    let id = h.get_or_create_request();
    (h, id)
}

fn launch_target(agent: &str, label: Option<&str>, key: u64) -> Input {
    Input::LaunchTarget(Some(LaunchTarget {
        agent_id: agent.to_owned(),
        label: label.map(str::to_owned),
        launch_key: key,
    }))
}

/// Answers the open Agent lookup (launch target, openLatest) with `records`.
fn answer_lookup(h: &mut Harness, records: &[Value]) {
    let id = h.expect_pending("Agent lookup", |c| {
        matches!(c, ApiCall::ListSessions { agent: Some(_), .. })
    });
    h.reply(id, 200, page(records));
}

fn start_new(h: &Harness) -> RequestId {
    h.expect_pending("start-new-session", is_start_new)
}

/// Refuses the open start-new-session for want of a model: the choice waits.
fn refuse_start(h: &mut Harness) -> SessionModelSelectionRequest {
    let id = start_new(h);
    refuse(h, id);
    request_of(h)
}

/// [`ready`], then startAgentSessionById(AGENT2, `label`) refused for want of a model.
fn start_by_id_refused(label: Option<&str>) -> Harness {
    let mut h = ready();
    h.command(Command::StartAgentSessionById {
        agent_id: AGENT2.into(),
        label: label.map(str::to_owned),
    });
    refuse_start(&mut h);
    h
}

fn resolve(h: &mut Harness, provider: &str, model: &str, thinking: Option<&str>) {
    h.command(Command::ResolveSessionModelSelection {
        choice: engine_core::api::ModelChoice {
            provider: provider.to_owned(),
            model: model.to_owned(),
            thinking: thinking.map(str::to_owned),
        },
    });
}

/// The last get-or-create's body, and its request id.
fn last_goc(h: &Harness) -> (RequestId, Value) {
    let sent = h.sent().iter().rev().find(|s| is_goc(&s.call)).unwrap();
    (sent.id, json_body(sent))
}

/// The body without its fresh handle, which must have the OI-28 form.
fn without_fresh_handle(mut body: Value) -> Value {
    let handle = body
        .as_object_mut()
        .unwrap()
        .remove("handle_unique_id")
        .unwrap();
    let handle = handle.as_str().unwrap();
    assert!(handle.starts_with("cc-session-"), "{handle}");
    body
}

// ---------------------------------------------------------------------------------------------
// Point 7: the fields the refusal named (MOD-1, OI-12)
// ---------------------------------------------------------------------------------------------

/// MOD-1, OI-12: the request says which of `llm_provider` and `llm_model` the refusal named,
/// for the default session's get-or-create and for a start-new-session alike; in the snapshot
/// it reads `missing: {provider, model}`, the reference error's names.
#[test]
fn mod_1_request_names_the_missing_fields() {
    let cases = [
        (
            json!({"llm_provider": ["This field is required."], "llm_model": ["This field is required."]}),
            (true, true),
        ),
        (json!({"llm_provider": "REQUIRED"}), (true, false)),
        (
            json!({"llm_model": ["Unknown.", "This field is required."], "llm_provider": ["Unknown provider."]}),
            (false, true),
        ),
    ];
    for (body, (provider, model)) in cases {
        let (mut h, id) = default_state();
        h.reply(id, 400, body.clone());
        let request = request_of(&h);
        let missing = &request.missing;
        assert_eq!(
            (missing.provider, missing.model),
            (provider, model),
            "default: {body}"
        );
        assert_eq!(
            serde_json::to_value(&request).unwrap()["missing"],
            json!({"provider": provider, "model": model}),
            "{body}"
        );

        let mut h = ready();
        h.command(Command::StartAgentSessionById {
            agent_id: AGENT2.into(),
            label: None,
        });
        let id = start_new(&h);
        h.reply(id, 400, body.clone());
        let missing = request_of(&h).missing;
        assert_eq!(
            (missing.provider, missing.model),
            (provider, model),
            "start-new-session: {body}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Point 7: agentLabel on every creating path (adr-notes 6, MOD-3)
// ---------------------------------------------------------------------------------------------

/// adr-notes 6, MOD-3: `agentLabel` is the label the creation was asked with: the action's
/// label (startAgentSessionById, openLatestOrStartAgentSessionById), the launch target's, the
/// Agent record's name (startAgentSession); `agentUid` the Agent created for.
#[test]
fn adr6_agent_label_is_the_actions_label() {
    // startAgentSessionById
    let r = request_of(&start_by_id_refused(Some("Ops Helper")));
    assert_eq!(
        (r.agent_label.as_deref(), r.agent_uid.as_deref()),
        (Some("Ops Helper"), Some(AGENT2))
    );

    // openLatestOrStartAgentSessionById, the Agent having no session yet
    let mut h = ready();
    h.command(Command::OpenLatestOrStartAgentSessionById {
        agent_id: AGENT2.into(),
        label: Some("Ops Latest".into()),
    });
    answer_lookup(&mut h, &[]);
    assert_eq!(
        refuse_start(&mut h).agent_label.as_deref(),
        Some("Ops Latest")
    );

    // the launch target
    let mut h = ready();
    h.input(launch_target(AGENT2, Some("Ops Launch"), 1));
    answer_lookup(&mut h, &[]);
    let r = refuse_start(&mut h);
    assert_eq!(
        (r.agent_label.as_deref(), r.agent_uid.as_deref()),
        (Some("Ops Launch"), Some(AGENT2))
    );

    // startAgentSession(agent): the record's name
    let mut h = ready();
    h.command(Command::StartAgentSession {
        agent: AgentRecord {
            id: None,
            uid: Some(AGENT2.into()),
            name: Some("Ops Record".into()),
        },
    });
    assert_eq!(
        refuse_start(&mut h).agent_label.as_deref(),
        Some("Ops Record")
    );
}

/// adr-notes 6: a label is trimmed and a blank one is null; an action without a label (or an
/// Agent record without a name) gives null, never a name found elsewhere.
#[test]
fn adr6_agent_label_trimmed_blank_or_absent_is_null() {
    for (label, expected) in [
        (Some("  Ops Helper  "), Some("Ops Helper")),
        (Some("   "), None),
        (None, None),
    ] {
        let h = start_by_id_refused(label);
        assert_eq!(request_of(&h).agent_label.as_deref(), expected, "{label:?}");
    }
    let mut h = ready();
    h.command(Command::StartAgentSession {
        agent: AgentRecord {
            id: None,
            uid: Some(AGENT2.into()),
            name: None,
        },
    });
    assert_eq!(refuse_start(&mut h).agent_label, None);
}

/// adr-notes 6: the default session's creation has no Agent label: null, not the default
/// session's name ("Ledger chat"); the Agent is the default session's.
#[test]
fn adr6_default_session_agent_label_is_null() {
    let (mut h, id) = default_state();
    refuse(&mut h, id);
    let r = request_of(&h);
    assert_eq!(r.agent_label, None);
    assert_eq!(r.agent_uid.as_deref(), Some(AGENT));
    assert_eq!(
        serde_json::to_value(&r).unwrap()["agentLabel"],
        Value::Null,
        "serialized as null"
    );
}

/// adr-notes 6: createAgentSession() names no label: with no launch target the label is null,
/// never the selected session's name nor its Agent's name ("Ledger Helper" in the record).
#[test]
fn adr6_create_agent_session_without_launch_target_has_no_label() {
    let mut h = ready();
    h.command(Command::CreateAgentSession);
    let r = refuse_start(&mut h);
    assert_eq!(r.agent_label, None);
    assert_eq!(r.agent_uid.as_deref(), Some(AGENT));
}

/// adr-notes 6: createAgentSession() from the launched session takes the launch target's label
/// (as the reference does); from a session of another Agent the launch target's label is not
/// that Agent's, so the label is null.
#[test]
fn adr6_create_agent_session_takes_the_launch_targets_label_for_its_agent() {
    // The launched session (of AGENT2) is selected: the label is the launch target's.
    let mut h = ready();
    h.input(launch_target(AGENT2, Some("Ops Launch"), 1));
    answer_lookup(&mut h, &[record(S2, AGENT2, ENV, 30)]);
    assert_eq!(h.current().as_deref(), Some(S2));
    h.command(Command::CreateAgentSession);
    let id = start_new(&h);
    assert_eq!(
        h.request(id).request.path,
        format!("/api/v1/agents/{AGENT2}/start-new-session/")
    );
    refuse(&mut h, id);
    let r = request_of(&h);
    assert_eq!(
        (r.agent_label.as_deref(), r.agent_uid.as_deref()),
        (Some("Ops Launch"), Some(AGENT2))
    );

    // S1 (of AGENT) is selected again: the launch target's label is not AGENT's.
    let mut h = ready();
    h.input(launch_target(AGENT2, Some("Ops Launch"), 1));
    answer_lookup(&mut h, &[record(S2, AGENT2, ENV, 30)]);
    h.requested(Some(S1));
    assert_eq!(h.current().as_deref(), Some(S1), "{}", h.transcript());
    h.command(Command::CreateAgentSession);
    let r = refuse_start(&mut h);
    assert_eq!(
        (r.agent_label.as_deref(), r.agent_uid.as_deref()),
        (None, Some(AGENT))
    );
}

// ---------------------------------------------------------------------------------------------
// Point 8: no invented thinking level (MOD-10, MOD-11)
// ---------------------------------------------------------------------------------------------

/// MOD-11: a choice naming no level sends no `llm_thinking`, even for a model that offers levels
/// (acme-large, default medium) and for one that offers none (acme-small): the body is exactly
/// the fresh handle, provider and model.
#[test]
fn mod_11_choice_without_level_sends_no_llm_thinking() {
    for model in ["acme-large", "acme-small"] {
        let mut h = start_by_id_refused(None);
        resolve(&mut h, "acme-cloud", model, None);
        let (_, body) = last_goc(&h);
        assert_eq!(
            without_fresh_handle(body),
            json!({"llm_provider": "acme-cloud", "llm_model": model}),
            "{model}"
        );
    }
}

/// MOD-10: the default session's retry with a choice naming no level: the same handle and name,
/// the provider and model, no `llm_thinking`.
#[test]
fn mod_10_default_retry_without_level_sends_no_llm_thinking() {
    for model in ["acme-large", "acme-small"] {
        let (mut h, id) = default_state();
        refuse(&mut h, id);
        resolve(&mut h, "acme-cloud", model, None);
        let (_, body) = last_goc(&h);
        assert_eq!(
            body,
            json!({"handle_unique_id": HANDLE, "name": "Ledger chat",
                "llm_provider": "acme-cloud", "llm_model": model}),
            "{model}"
        );
    }
}

/// MOD-10, MOD-11, MOD-19: a named level is sent, settled by the one resolver (an offered level
/// as given, with the catalog's letter case; a level the model does not offer becomes its
/// default); `""` is sent as `""` (a string, "no level").
#[test]
fn mod_10_11_named_levels_are_sent() {
    let cases = [
        ("acme-large", Some("high"), json!("high")),
        ("acme-large", Some("HIGH"), json!("high")),
        ("acme-large", Some("max"), json!("medium")),
        ("acme-large", Some(""), json!("")),
        ("acme-small", Some(""), json!("")),
    ];
    for (model, level, sent) in cases {
        let (mut h, id) = default_state();
        refuse(&mut h, id);
        resolve(&mut h, "acme-cloud", model, level);
        let (_, body) = last_goc(&h);
        assert_eq!(
            body,
            json!({"handle_unique_id": HANDLE, "name": "Ledger chat",
                "llm_provider": "acme-cloud", "llm_model": model, "llm_thinking": sent}),
            "{model} {level:?}"
        );
    }
}

/// MOD-11, MOD-13: a session created from a choice without a level opens with no PATCH; the
/// picker shows the chosen model with the level it offers by default (reconciliation, OI-22),
/// while nothing was sent for it.
#[test]
fn mod_13_created_without_level_opens_without_patch() {
    let mut h = start_by_id_refused(Some("Ops Helper"));
    resolve(&mut h, "acme-cloud", "acme-large", None);
    let (goc, body) = last_goc(&h);
    assert!(body.get("llm_thinking").is_none(), "{body}");
    let handle = body["handle_unique_id"].as_str().unwrap().to_owned();
    let mut created = handle_record(S_NEW, AGENT2, ENV, &handle, 40);
    let o = created.as_object_mut().unwrap();
    o.insert("llm_provider".into(), json!("acme-cloud"));
    o.insert("llm_model".into(), json!("acme-large"));
    h.reply(goc, 200, created.clone());
    assert_eq!(h.current().as_deref(), Some(S_NEW));
    h.answer_detail(S_NEW, created);
    h.answer_history(S_NEW);
    assert_eq!(
        picker(&h),
        (
            Some("acme-cloud".into()),
            Some("acme-cloud::acme-large".into()),
            Some("medium".into())
        )
    );
    assert_eq!(h.count(is_patch), 0, "{}", h.transcript());
    assert_eq!(h.snapshot().session_model_selection_request, None);
}

//! The platform routes, P1 to P14 of `platform-api.md`.

use axum::http::Method;
use axum::response::Response;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value, json};

use crate::server::{
    Req, Shared, UNAUTHENTICATED, decode, empty, error, json_response, lock, no_route, not_allowed,
};
use crate::state::{AccessKind, AgentState, NewSession, Session, State, is_digits};
use crate::types::RuntimeBehaviour;
use crate::wire::{self, FieldError, iso, now_ms};

/// What a query value or path segment keeps unencoded.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Percent-encodes a path segment or query value.
pub(crate) fn encode(text: &str) -> String {
    utf8_percent_encode(text, UNRESERVED).to_string()
}

/// The runtime base the platform hands out for an Agent.
pub(crate) fn rpc_url(base: &str, agent_uid: &str) -> String {
    format!("{base}/runtime/{}", encode(agent_uid))
}

const NOT_FOUND: &str = "Not found.";

/// The platform endpoints.
enum Endpoint {
    List,
    Session(String),
    Archive(String),
    Unarchive(String),
    History(String),
    Insights(String),
    Access(String),
    StartNew(String),
    GetOrCreate(String),
    Catalog,
    Icons,
    Icon(String),
}

/// The `ETag` of [`AGENT_ICON_SVG`] (RU-35: the icon's fingerprint).
pub const AGENT_ICON_ETAG: &str = "\"sim-icon-1\"";

/// The icon every simulated Agent has (a `mask` rendering).
pub const AGENT_ICON_SVG: &str = r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><rect x="5" y="8" width="14" height="11" rx="2"/><circle cx="12" cy="4" r="2"/></svg>"#;

fn endpoint(path: &str) -> Option<Endpoint> {
    let rest = path.strip_prefix("/api/v1/")?.strip_suffix('/')?;
    let segments: Vec<String> = rest.split('/').map(decode).collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let id = |s: &&str| (!s.is_empty()).then(|| (*s).to_owned());
    Some(match segments.as_slice() {
        ["agent-sessions"] => Endpoint::List,
        ["agent-sessions", uid] => Endpoint::Session(id(uid)?),
        ["agent-sessions", uid, "archive"] => Endpoint::Archive(id(uid)?),
        ["agent-sessions", uid, "unarchive"] => Endpoint::Unarchive(id(uid)?),
        ["agent-sessions", uid, "history"] => Endpoint::History(id(uid)?),
        ["agent-sessions", uid, "insights"] => Endpoint::Insights(id(uid)?),
        ["agent-sessions", uid, "resolve-runtime-access"] => Endpoint::Access(id(uid)?),
        ["agents", agent, "start-new-session"] => Endpoint::StartNew(id(agent)?),
        ["agents", agent, "sessions", "get-or-create-session"] => Endpoint::GetOrCreate(id(agent)?),
        ["model-providers"] => Endpoint::Catalog,
        ["command-center", "agents"] => Endpoint::Icons,
        ["command-center", "agents", agent, "icon"] => Endpoint::Icon(id(agent)?),
        _ => return None,
    })
}

/// Whether `endpoint` takes `method`.
fn allows(endpoint: &Endpoint, method: &Method) -> bool {
    let takes: &[Method] = match endpoint {
        Endpoint::Session(_) => &[Method::GET, Method::PATCH, Method::DELETE],
        Endpoint::List
        | Endpoint::History(_)
        | Endpoint::Insights(_)
        | Endpoint::Catalog
        | Endpoint::Icons
        | Endpoint::Icon(_) => &[Method::GET],
        Endpoint::Archive(_)
        | Endpoint::Unarchive(_)
        | Endpoint::Access(_)
        | Endpoint::StartNew(_)
        | Endpoint::GetOrCreate(_) => &[Method::POST],
    };
    takes.contains(method)
}

/// Handles a platform request as the reference's stand-in does (RU-50): the route first (404
/// without one, 405 for another method), then the credential (401), then the endpoint.
pub(crate) fn handle(shared: &Shared, req: &Req, path: &str, authorized: bool) -> Response {
    let m = &req.method;
    let Some(endpoint) = endpoint(path) else {
        return no_route(m, path);
    };
    if !allows(&endpoint, m) {
        return not_allowed(m);
    }
    if !authorized {
        return error(401, UNAUTHENTICATED);
    }
    match endpoint {
        Endpoint::List if m == Method::GET => list(shared, req),
        Endpoint::Session(uid) if m == Method::GET => detail(shared, req, &uid),
        Endpoint::Session(uid) if m == Method::PATCH => patch(shared, req, &uid),
        Endpoint::Session(uid) if m == Method::DELETE => delete(shared, &uid),
        Endpoint::Archive(uid) if m == Method::POST => archive(shared, &uid, true),
        Endpoint::Unarchive(uid) if m == Method::POST => archive(shared, &uid, false),
        Endpoint::History(uid) if m == Method::GET => history(shared, &uid),
        Endpoint::Insights(uid) if m == Method::GET => insights(shared, &uid),
        Endpoint::Access(uid) if m == Method::POST => access(shared, &uid),
        Endpoint::StartNew(agent) if m == Method::POST => start_new(shared, req, &agent),
        Endpoint::GetOrCreate(agent) if m == Method::POST => get_or_create(shared, req, &agent),
        Endpoint::Catalog if m == Method::GET => json_response(200, &shared.config.catalog),
        Endpoint::Icons if m == Method::GET => icons(shared, req),
        Endpoint::Icon(agent) if m == Method::GET => icon(shared, req, &agent),
        _ => not_allowed(m),
    }
}

/// P13: every Agent of the Environment with its icon, at the simulator's own (unprefixed)
/// address; another Environment has none.
fn icons(shared: &Shared, req: &Req) -> Response {
    let Some(env) = req.param("organization_environment_uid") else {
        return field_errors(&[("organization_environment_uid", "This field is required.")]);
    };
    if env != shared.config.environment_uid {
        return json_response(200, &json!([]));
    }
    let rows: Vec<Value> = shared
        .config
        .agents
        .iter()
        .map(|agent| {
            let url = format!(
                "{}/api/v1/command-center/agents/{}/icon/",
                shared.url,
                encode(&agent.uid)
            );
            json!({"agentUid": agent.uid, "commandCenterIcon": {"rendering": "mask", "url": url}})
        })
        .collect();
    json_response(200, &Value::Array(rows))
}

/// P14: the Agent's icon as SVG with its `ETag` ([`AGENT_ICON_ETAG`]); 406 to an image-only
/// `Accept` (as the platform's route does).
fn icon(shared: &Shared, req: &Req, agent: &str) -> Response {
    if !shared.config.agents.iter().any(|a| a.uid == agent) {
        return error(404, NOT_FOUND);
    }
    let accept = req
        .headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("*/*");
    let image_only = accept
        .split(',')
        .map(|t| t.split(';').next().unwrap_or_default().trim())
        .all(|t| t.starts_with("image/"));
    if image_only {
        return error(406, "Could not satisfy the request Accept header.");
    }
    let mut response = Response::new(axum::body::Body::from(AGENT_ICON_SVG));
    let headers = response.headers_mut();
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("image/svg+xml"),
    );
    headers.insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("private, no-cache"),
    );
    headers.insert(
        axum::http::header::ETAG,
        axum::http::HeaderValue::from_static(AGENT_ICON_ETAG),
    );
    response
}

/// A 400 field-error map.
fn field_errors(fields: &[(&str, &str)]) -> Response {
    let map: Map<String, Value> = fields
        .iter()
        .map(|(field, message)| ((*field).to_owned(), json!([message])))
        .collect();
    json_response(400, &Value::Object(map))
}

fn field_error((field, message): FieldError) -> Response {
    field_errors(&[(field, message)])
}

const REQUIRED: &str = "This field is required.";

/// The body as a JSON object (an empty body reads as `{}`).
fn body_object(req: &Req) -> Result<Map<String, Value>, Response> {
    match req.json()? {
        None => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(_) => Err(field_errors(&[(
            "non_field_errors",
            "Invalid data. Expected a dictionary.",
        )])),
    }
}

/// A non-blank string at `key`.
fn text<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

fn record_response(shared: &Shared, state: &State, uid: &str, status: u16) -> Response {
    match state.session(uid) {
        Some(session) => json_response(status, &state.record(session, &shared.config)),
        None => error(404, NOT_FOUND),
    }
}

// P1 ------------------------------------------------------------------------------------------

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

fn list(shared: &Shared, req: &Req) -> Response {
    let Some(environment) = req
        .param("organization_environment_uid")
        .map(str::trim)
        .filter(|e| !e.is_empty())
    else {
        return field_errors(&[("organization_environment_uid", REQUIRED)]);
    };
    let limit = match req.param("limit").map(|l| l.trim().parse::<u64>()) {
        None => 20,
        Some(Ok(limit)) => limit.clamp(1, 100),
        Some(Err(_)) => return field_errors(&[("limit", "A valid integer is required.")]),
    };
    let offset = match req.param("offset").map(|o| o.trim().parse::<u64>()) {
        None => 0,
        Some(Ok(offset)) => offset,
        Some(Err(_)) => return field_errors(&[("offset", "A valid integer is required.")]),
    };
    let archived = match req.param("is_archived").map(parse_bool) {
        None => None,
        Some(Some(flag)) => Some(flag),
        Some(None) => return field_errors(&[("is_archived", "Must be a valid boolean.")]),
    };
    let state = lock(&shared.state);
    let mut rows: Vec<&Session> = if environment == shared.config.environment_uid {
        state.sessions.iter().collect()
    } else {
        Vec::new()
    };
    if let Some(user) = req.param("created_by_user_uid") {
        rows.retain(|s| s.created_by == user);
    }
    if let Some(flag) = archived {
        rows.retain(|s| s.archived.is_some() == flag);
    }
    if let Some(agent) = req.param("agent_uid") {
        rows.retain(|s| s.agent_uid == agent);
    }
    if let Some(id) = req.param("agent_id") {
        let agent = is_digits(id)
            .then(|| state.agent(id).map(|a| a.spec.uid.clone()))
            .flatten();
        rows.retain(|s| Some(&s.agent_uid) == agent.as_ref());
    }
    if let Some(q) = req
        .param("q")
        .map(|q| q.trim().to_lowercase())
        .filter(|q| !q.is_empty())
    {
        rows.retain(|s| {
            let agent_name = state
                .agent(&s.agent_uid)
                .map(|a| a.spec.name.to_lowercase())
                .unwrap_or_default();
            // The title the client shows (`name`, else "Agent session {uid}"), the handle, the
            // Agent's name and the transcript.
            let title = s
                .name
                .clone()
                .filter(|n| !n.trim().is_empty())
                .unwrap_or_else(|| format!("Agent session {}", s.uid));
            let handle = s.handle.as_ref().map(|(_, h)| h.to_lowercase());
            title.to_lowercase().contains(&q)
                || handle.is_some_and(|h| h.contains(&q))
                || agent_name.contains(&q)
                || s.transcript_text().to_lowercase().contains(&q)
        });
    }
    match req.param("ordering").map(str::trim) {
        Some("started_at") => rows.sort_by_key(|s| s.seq),
        Some("-archived_at") => {
            rows.sort_by_key(|s| std::cmp::Reverse((s.archived.map(|(_, seq)| seq), s.seq)));
        }
        Some("archived_at") => rows.sort_by_key(|s| (s.archived.map(|(_, seq)| seq), s.seq)),
        _ => rows.sort_by_key(|s| std::cmp::Reverse(s.seq)),
    }
    let count = rows.len() as u64;
    let results: Vec<Value> = rows
        .iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .map(|s| state.record(s, &shared.config))
        .collect();
    let page_url = |at: u64| {
        let mut pairs: Vec<String> = req
            .query
            .iter()
            .filter(|(k, _)| k != "offset")
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect();
        pairs.push(format!("offset={at}"));
        json!(format!(
            "{}/api/v1/agent-sessions/?{}",
            shared.url,
            pairs.join("&")
        ))
    };
    let next = if offset.saturating_add(limit) < count {
        page_url(offset.saturating_add(limit))
    } else {
        Value::Null
    };
    let previous = if offset > 0 {
        page_url(offset.saturating_sub(limit))
    } else {
        Value::Null
    };
    json_response(
        200,
        &json!({"count": count, "next": next, "previous": previous, "results": results}),
    )
}

// P2 to P6 ------------------------------------------------------------------------------------

fn detail(shared: &Shared, req: &Req, uid: &str) -> Response {
    if let Some(environment) = req.param("organization_environment_uid")
        && environment != shared.config.environment_uid
    {
        return error(404, NOT_FOUND);
    }
    record_response(shared, &lock(&shared.state), uid, 200)
}

fn patch(shared: &Shared, req: &Req, uid: &str) -> Response {
    let body = match body_object(req) {
        Ok(body) => body,
        Err(response) => return response,
    };
    // RU-51: provider and model are required; a thinking level left out is the model's default.
    let keys = ["llm_provider", "llm_model"];
    let missing: Vec<(&str, &str)> = keys
        .iter()
        .filter(|k| !body.get(**k).is_some_and(Value::is_string))
        .map(|k| (*k, REQUIRED))
        .collect();
    let mut state = lock(&shared.state);
    let Some(session) = state.session_mut(uid) else {
        return error(404, NOT_FOUND);
    };
    if !missing.is_empty() {
        return field_errors(&missing);
    }
    if session.working() {
        return json_response(
            409,
            &json!({
                "detail": "Model selection cannot change while a turn is working or persisting.",
                "error_code": "agent_session_selection_runtime_active",
            }),
        );
    }
    let value = |key: &str| body.get(key).and_then(Value::as_str).map(str::trim);
    let provider = value("llm_provider").unwrap_or_default();
    let model = value("llm_model").unwrap_or_default();
    let (pick, thinking) = match wire::check_choice(
        &shared.config.catalog,
        Some(provider),
        Some(model),
        value("llm_thinking"),
    ) {
        Ok(choice) => choice,
        Err(e) => return field_error(e),
    };
    session.llm_provider = pick.provider;
    session.llm_model = pick.model;
    session.llm_thinking = thinking;
    session.updated_ms = now_ms();
    record_response(shared, &state, uid, 200)
}

fn delete(shared: &Shared, uid: &str) -> Response {
    let mut state = lock(&shared.state);
    let Some(index) = state.sessions.iter().position(|s| s.uid == uid) else {
        return error(404, NOT_FOUND);
    };
    let session = state.sessions.remove(index);
    if let Some(turn) = &session.turn {
        turn.cancel.send_replace(true);
    }
    empty(204)
}

fn archive(shared: &Shared, uid: &str, archived: bool) -> Response {
    let mut state = lock(&shared.state);
    let seq = state.next_seq();
    let Some(session) = state.session_mut(uid) else {
        return error(404, NOT_FOUND);
    };
    session.archived = archived.then(|| (now_ms(), seq));
    record_response(shared, &state, uid, 200)
}

// P7, P8 --------------------------------------------------------------------------------------

fn model_required(fields: &[&'static str]) -> Response {
    let fields: Vec<(&str, &str)> = fields.iter().map(|f| (*f, REQUIRED)).collect();
    field_errors(&fields)
}

fn start_new(shared: &Shared, req: &Req, agent: &str) -> Response {
    let body = match body_object(req) {
        Ok(body) => body,
        Err(response) => return response,
    };
    let mut state = lock(&shared.state);
    let Some(agent) = state.agent(agent) else {
        return error(404, "Agent not found.");
    };
    if agent.spec.needs_model {
        return model_required(&["llm_provider", "llm_model"]);
    }
    let model = match wire::check_choice(&shared.config.catalog, None, None, None) {
        Ok(model) => model,
        Err(e) => return field_error(e),
    };
    let new = NewSession {
        agent_uid: agent.spec.uid.clone(),
        thread_id: text(&body, "thread_id").map(str::to_owned),
        handle_unique_id: None,
        name: None,
        parent_session_uid: None,
        model,
    };
    let uid = state.create_session(new, &shared.config.person_uid);
    record_response(shared, &state, &uid, 201)
}

fn get_or_create(shared: &Shared, req: &Req, agent: &str) -> Response {
    let body = match body_object(req) {
        Ok(body) => body,
        Err(response) => return response,
    };
    let present = |key: &str| body.get(key).is_some_and(|v| !v.is_null());
    if present("handle_unique_id") == present("session_uid") {
        return field_errors(&[(
            "non_field_errors",
            "Send exactly one of session_uid or handle_unique_id.",
        )]);
    }
    let mut state = lock(&shared.state);
    let Some(agent) = state.agent(agent).cloned() else {
        return error(404, "Agent not found.");
    };
    let person = shared.config.person_uid.as_str();

    if present("session_uid") {
        let Some(uid) = text(&body, "session_uid") else {
            return field_errors(&[("session_uid", "This field may not be blank.")]);
        };
        return match state.session(uid) {
            Some(s) if s.agent_uid == agent.spec.uid => record_response(shared, &state, uid, 200),
            _ => error(404, NOT_FOUND),
        };
    }

    let Some(handle) = text(&body, "handle_unique_id") else {
        return field_errors(&[("handle_unique_id", "This field may not be blank.")]);
    };
    if let Some(existing) = state.sessions.iter().find(|s| {
        s.agent_uid == agent.spec.uid
            && s.created_by == person
            && s.handle.as_ref().is_some_and(|(_, h)| h == handle)
    }) {
        let uid = existing.uid.clone();
        return record_response(shared, &state, &uid, 200);
    }
    let model = match new_session_model(shared, &agent, &body) {
        Ok(model) => model,
        Err(response) => return response,
    };
    let new = NewSession {
        agent_uid: agent.spec.uid.clone(),
        thread_id: None,
        handle_unique_id: Some(handle.to_owned()),
        name: text(&body, "name").map(str::to_owned),
        parent_session_uid: text(&body, "parent_session_uid").map(str::to_owned),
        model,
    };
    let uid = state.create_session(new, person);
    record_response(shared, &state, &uid, 201)
}

/// The model a get-or-create gives a new session: the body's, else the Agent's default; an Agent
/// without a default model needs both `llm_provider` and `llm_model`.
fn new_session_model(
    shared: &Shared,
    agent: &AgentState,
    body: &Map<String, Value>,
) -> Result<(wire::ModelPick, String), Response> {
    let provider = text(body, "llm_provider");
    let model = text(body, "llm_model");
    if agent.spec.needs_model {
        let missing: Vec<&'static str> = [("llm_provider", provider), ("llm_model", model)]
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| *k)
            .collect();
        if !missing.is_empty() {
            return Err(model_required(&missing));
        }
    }
    let thinking = body
        .get("llm_thinking")
        .and_then(Value::as_str)
        .map(str::trim);
    wire::check_choice(&shared.config.catalog, provider, model, thinking).map_err(field_error)
}

// P9, P10 -------------------------------------------------------------------------------------

fn history(shared: &Shared, uid: &str) -> Response {
    let state = lock(&shared.state);
    let Some(session) = state.session(uid) else {
        return error(404, NOT_FOUND);
    };
    match state.history(session) {
        Some(history) => json_response(200, &history),
        None => error(404, "This session has no history yet."),
    }
}

fn insights(shared: &Shared, uid: &str) -> Response {
    let state = lock(&shared.state);
    let Some(session) = state.session(uid) else {
        return error(404, NOT_FOUND);
    };
    match state.insights(session, &shared.config) {
        Some(insights) => json_response(200, &insights),
        None => error(404, "No insights have been computed for this session yet."),
    }
}

// P11 -----------------------------------------------------------------------------------------

fn access(shared: &Shared, uid: &str) -> Response {
    let mut state = lock(&shared.state);
    let Some(session) = state.session(uid) else {
        return error(404, NOT_FOUND);
    };
    let agent_uid = session.agent_uid.clone();
    let token = session.runtime_token.clone();
    let Some(agent) = state.agent_mut(&agent_uid) else {
        return error(404, "Agent not found.");
    };
    let now = now_ms();
    let body = match agent.access_check() {
        AccessKind::Ready => json!({
            "session_uid": uid,
            "mode": "token",
            "rpc_url": rpc_url(&shared.url, &agent_uid),
            "token": token,
            "expires_at": iso(now.saturating_add(3_600_000)),
            "is_ready": true,
            "runtime_interaction": {"state": "ready", "can_submit": true, "notice": null, "operation": null, "retry_after_ms": null},
            "runtime_presence": {"phase": "serving", "replicas": {"desired": 1, "actual": 1}, "detail": "The Agent is running.", "observed_at": iso(now), "wake": null},
        }),
        AccessKind::Waking => {
            let name = agent.spec.name.clone();
            let requested = agent.wake_started_ms.unwrap_or(now);
            json!({
                "session_uid": uid,
                "mode": "unavailable",
                "rpc_url": null,
                "token": null,
                "is_ready": false,
                "detail": "Starting.",
                "runtime_interaction": {
                    "state": "waking",
                    "can_submit": false,
                    "notice": {"code": "agent_waking", "severity": "info", "title": format!("Starting {name}"), "message": format!("{name} is starting.")},
                    "operation": null,
                    "retry_after_ms": 1000,
                },
                "runtime_presence": {
                    "phase": "starting",
                    "replicas": {"desired": 1, "actual": 0},
                    "detail": "Waking up.",
                    "observed_at": iso(now),
                    "wake": {"operation_uid": format!("wake-{agent_uid}"), "state": "in_progress", "requested_at": iso(requested), "deadline_at": iso(requested.saturating_add(600_000))},
                },
            })
        }
        AccessKind::Terminal => {
            let (message, reference) = match &agent.spec.runtime {
                RuntimeBehaviour::Terminal {
                    message,
                    support_reference,
                } => (message.clone(), support_reference.clone()),
                _ => (String::new(), String::new()),
            };
            json!({
                "session_uid": uid,
                "mode": "unavailable",
                "rpc_url": null,
                "token": null,
                "is_ready": false,
                "detail": "Update failed.",
                "runtime_interaction": {
                    "state": "update_failed",
                    "can_submit": false,
                    "notice": {"code": "agent_update_failed", "severity": "error", "title": "Update failed", "message": message},
                    "operation": {"uid": format!("op-{agent_uid}"), "status": "failed", "created_at": iso(now), "started_at": iso(now), "finished_at": iso(now), "support_reference": reference},
                    "retry_after_ms": null,
                },
                "runtime_presence": {"phase": "failed", "replicas": {"desired": 1, "actual": 0}, "detail": "Update failed.", "observed_at": iso(now), "wake": null},
            })
        }
    };
    json_response(200, &body)
}

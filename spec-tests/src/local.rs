//! Helpers for the local-source tests (ADR 099, issue 14): a local chat in each state a test
//! starts from, and the routes it asks.

use engine_core::api::local::LocalRoute;
use engine_core::{ApiCall, Command, Input, LocalSource};
use serde_json::{Value, json};

use crate::Harness;

/// The local runtime's base.
pub const BASE: &str = "http://127.0.0.1:8787";
/// The storage key of the conversation shown for [`BASE`].
pub const KEY: &str = "ms.command-center-ai.local-session:http://127.0.0.1:8787";

/// The local source at [`BASE`], named "Ledger Helper".
pub fn source() -> LocalSource {
    LocalSource::new(BASE, "Ledger Helper").unwrap()
}

/// A visible chat for a signed-in person in an Environment, switched to the local source.
pub fn local() -> Harness {
    let mut h = Harness::visible_in_env();
    h.input(Input::Source(Some(source())));
    h
}

/// `call` is this local route.
pub fn is_local(call: &ApiCall, wanted: &LocalRoute) -> bool {
    matches!(call, ApiCall::Local { route } if route == wanted)
}

/// The open request for this local route.
pub fn pending(h: &Harness, route: LocalRoute) -> engine_core::RequestId {
    h.expect_pending(route.operation_name(), move |c| is_local(c, &route))
}

/// Answers the three checks: ready, local mode, probe 200.
pub fn pass_checks(h: &mut Harness) {
    let id = pending(h, LocalRoute::Ready);
    h.reply(id, 200, json!({"ok": true}));
    let id = pending(h, LocalRoute::Health);
    h.reply(id, 200, json!({"ok": true, "mode": "local"}));
    let id = pending(h, LocalRoute::ChatCheck);
    h.reply(id, 200, json!({"status": "ready"}));
}

/// The runtime decision shown.
pub fn interaction(h: &Harness) -> engine_core::api::RuntimeInteraction {
    h.snapshot().active_runtime_interaction.expect("a decision")
}

/// The storage port answers the shown-conversation read for `key`.
pub fn stored(h: &mut Harness, key: &str, uid: Option<&str>) {
    h.input(Input::StoredSelectionLoaded {
        key: key.to_owned(),
        session_uid: uid.map(str::to_owned),
    });
}

/// A visible local chat showing `uid` (stored), its runtime ready and its list read empty.
pub fn showing(uid: &str) -> Harness {
    let mut h = local();
    stored(&mut h, KEY, Some(uid));
    pass_checks(&mut h);
    let id = pending(&h, LocalRoute::Sessions);
    h.reply(id, 200, json!({"sessions": []}));
    h
}

/// The transcript route of `uid`.
pub fn history_route(uid: &str) -> LocalRoute {
    LocalRoute::History {
        session_uid: uid.to_owned(),
    }
}

/// `showing(uid)` with its transcript loaded: the composer admits.
pub fn talking(uid: &str) -> Harness {
    let mut h = showing(uid);
    let id = pending(&h, history_route(uid));
    h.reply(id, 200, crate::fixtures::history(uid));
    assert!(h.snapshot().composer_admission);
    h
}

/// `call` is a local turn (`POST /api/chat`).
pub fn is_local_turn(call: &ApiCall) -> bool {
    matches!(
        call,
        ApiCall::Local {
            route: LocalRoute::SendMessage { .. }
        }
    )
}

/// A streamed head naming the conversation (`X-Agent-Session-Uid`).
pub fn named_head(uid: Option<&str>) -> engine_core::ResponseHead {
    engine_core::ResponseHead::new(200, Some("text/event-stream".into()))
        .with_agent_session_uid(uid.map(str::to_owned))
}

/// The JSON body of request `id`.
pub fn turn_body_of(h: &Harness, id: engine_core::RequestId) -> Value {
    serde_json::from_slice(h.request(id).request.body.as_ref().unwrap()).unwrap()
}

/// A visible local chat, runtime ready, showing a new conversation.
pub fn new_conversation() -> (Harness, String) {
    let mut h = local();
    stored(&mut h, KEY, None);
    pass_checks(&mut h);
    let id = pending(&h, LocalRoute::Sessions);
    h.reply(id, 200, json!({"sessions": []}));
    h.command(Command::CreateAgentSession);
    let client = h.snapshot().current_session_id.unwrap();
    (h, client)
}

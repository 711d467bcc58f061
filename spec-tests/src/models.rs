//! Helpers for tests about models: call predicates, bodies, the picker's values.

use engine_core::{ApiCall, RequestId};
use serde_json::Value;

use crate::fixtures::model_required;
use crate::harness::{Harness, Sent};

/// A catalog read (P12).
pub fn is_catalog(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ListModelProviders)
}

/// A model change (P3).
pub fn is_patch(c: &ApiCall) -> bool {
    matches!(c, ApiCall::UpdateSessionModel { .. })
}

/// The JSON body of a sent request.
pub fn json_body(s: &Sent) -> Value {
    serde_json::from_slice(s.request.body.as_ref().expect("a body")).expect("a JSON body")
}

/// The JSON body of request `id`.
pub fn body_of(h: &Harness, id: RequestId) -> Value {
    json_body(h.request(id))
}

/// The picker's provider, model id and thinking level.
pub fn picker(h: &Harness) -> (Option<String>, Option<String>, Option<String>) {
    let s = h.snapshot();
    (
        s.selected_provider_value,
        s.selected_model_value,
        s.selected_reasoning_effort_value,
    )
}

/// Expected picker values.
pub fn values(
    provider: &str,
    model_id: &str,
    thinking: Option<&str>,
) -> (Option<String>, Option<String>, Option<String>) {
    (
        Some(provider.to_owned()),
        Some(model_id.to_owned()),
        thinking.map(str::to_owned),
    )
}

/// A get-or-create-session (P8).
pub fn is_goc(c: &ApiCall) -> bool {
    matches!(c, ApiCall::GetOrCreateSession { .. })
}

/// A start-new-session (P7).
pub fn is_start_new(c: &ApiCall) -> bool {
    matches!(c, ApiCall::StartNewSession { .. })
}

/// The model-required refusal (MOD-1).
pub fn refuse(h: &mut Harness, id: RequestId) {
    h.reply(id, 400, model_required());
}

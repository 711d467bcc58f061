//! The one resolve -> confirm -> decision sub-flow that runtime access (RTA-14 to RTA-17), a
//! turn (SND-4, SND-5, SND-15) and a cancel share: a ready decision's Agent is confirmed unless
//! a serving answer is remembered (OI-9), and its answer, or its silence, makes the decision
//! (the engine's own waking one, on the chat URL's wake clock, OI-5).

use std::time::Duration;

use crate::api::{
    ApiError, InteractionState, PresencePhase, RuntimeAccess, RuntimeEndpoint, RuntimeInteraction,
    RuntimeNotice, RuntimePresence, Severity, Wake, parse_runtime_access,
};
use crate::concerns::ctx::Context;
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Owner};
use crate::time::Time;
use crate::timestamp::iso_from_unix_ms;

use super::runtime_access::{Decision, agent_or_default};

/// The interval of the engine's own waking decision (OI-5).
const CLIENT_WAKING_RETRY_MS: u64 = 3_000;
/// The deadline of the engine's own wake, after its first failed confirmation (OI-5).
const CLIENT_WAKE_DEADLINE_MS: u64 = 300_000;

/// A resolve-runtime-access answer read (RTA-1): its decision's inputs, or why there are none
/// (`platform` resolves a root-relative `rpc_url`).
pub(crate) fn access_of(answer: &Answer, platform: &str) -> Result<RuntimeAccess, ApiError> {
    answer
        .ok_body()
        .and_then(|body| parse_runtime_access(body, platform))
}

/// What confirming an endpoint's Agent started.
pub(crate) enum Confirm {
    /// A serving answer from it is remembered (RTA-14, SND-4, OI-9): no request.
    Remembered,
    /// The confirmation request went; its answer is due by `deadline` (the endpoint's limit).
    Sent { pending: RequestId, deadline: Time },
    /// The request could not be made.
    Refused(ApiError),
}

/// Confirms the Agent behind `endpoint` for `session_uid` (a request owned by `owner`), unless
/// a serving answer is remembered.
pub(crate) fn confirm(
    context: &mut impl Context,
    owner: Owner,
    session_uid: &str,
    endpoint: &RuntimeEndpoint,
) -> Confirm {
    let now = context.now();
    if context.memory().confirmations.remembered(endpoint, now) {
        return Confirm::Remembered;
    }
    let limit = context.memory().confirmations.limit(endpoint);
    let call = ApiCall::ConfirmAgent {
        session_uid: session_uid.to_owned(),
        rpc_url: endpoint.rpc_url.clone(),
    };
    match context.send_runtime(owner, call, endpoint.token.expose()) {
        Ok(pending) => Confirm::Sent {
            pending,
            deadline: now + limit,
        },
        Err(e) => Confirm::Refused(e),
    }
}

/// The decision once the confirmation of `candidate` is over: the Agent served (RTA-16: it is
/// remembered and the candidate takes effect now) or did not (RTA-17: the engine's waking
/// decision). `agent` names the Agent in the waking notice.
pub(crate) fn confirmed(
    context: &mut impl Context,
    agent: Option<&str>,
    serving: bool,
    candidate: &Decision,
) -> Decision {
    if !serving {
        return client_waking(context, agent, candidate);
    }
    let now = context.now();
    if let Some(endpoint) = &candidate.endpoint {
        context.memory().confirmations.serving(endpoint, now);
    }
    let mut decision = candidate.clone();
    decision.at = now;
    decision
}

/// RTA-17, OI-5: the decision the engine builds when the Agent of `candidate` did not serve:
/// waking, retried every 3 s, on the chat URL's wake clock (opened now if none runs).
fn client_waking(
    context: &mut impl Context,
    agent: Option<&str>,
    candidate: &Decision,
) -> Decision {
    let now = context.now();
    let wall = context.io().wall_ms(now);
    let requested_ms = match &candidate.endpoint {
        Some(endpoint) => context.memory().confirmations.not_serving(endpoint, wall),
        None => wall,
    };
    let title = match agent.map(str::trim).filter(|n| !n.is_empty()) {
        Some(name) => format!("Starting {name}"),
        None => "Starting the agent".to_owned(),
    };
    let message = format!(
        "{} was idle and is starting now. You can write as soon as it is ready.",
        agent_or_default(agent, true)
    );
    Decision {
        interaction: RuntimeInteraction {
            state: InteractionState::Waking,
            can_submit: false,
            notice: Some(RuntimeNotice {
                code: "agent_runtime_client_waking".into(),
                severity: Severity::Info,
                title,
                message: message.clone(),
            }),
            support_reference: None,
            retry_after_ms: Some(CLIENT_WAKING_RETRY_MS),
        },
        presence: Some(RuntimePresence {
            phase: PresencePhase::Starting,
            detail: message,
            desired_replicas: None,
            actual_replicas: None,
            observed_at: None,
            wake: Some(Wake {
                operation_uid: format!("client-wake-{requested_ms}"),
                state: "in_progress".into(),
                requested_at: iso_from_unix_ms(requested_ms),
                deadline_at: iso_from_unix_ms(requested_ms.saturating_add(CLIENT_WAKE_DEADLINE_MS)),
            }),
        }),
        endpoint: candidate.endpoint.clone(),
        at: now,
        next_round: Some(now + Duration::from_millis(CLIENT_WAKING_RETRY_MS)),
        delay_ms: CLIENT_WAKING_RETRY_MS,
        unanswered: false,
    }
}

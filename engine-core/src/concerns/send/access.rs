//! How a turn reaches the Agent: access resolved (SND-3) and confirmed (SND-4, SND-5), held
//! through a wake (SND-9, OI-4), the message request (SND-1, SND-6, SND-7) and the re-check
//! after no answer (SND-15).

use super::*;

impl Run {
    /// SND-3: a new resolve-runtime-access. With a local source (ADR 099) there is none: the
    /// runtime's admission was checked before the turn, and the message goes out at once.
    pub(super) fn resolve(&mut self, context: &mut WorkCtx<'_>, turn: &Turn) -> Outcome<State> {
        if let Reach::Local(source) = context.reach {
            let endpoint = RuntimeEndpoint {
                rpc_url: source.base_url().to_owned(),
                token: crate::Secret::new(String::new()),
            };
            return self.post(context, turn, &endpoint);
        }
        let call = ApiCall::ResolveRuntimeAccess {
            session_uid: self.session_uid.clone(),
        };
        match context.send(Owner::Send, call) {
            Ok(pending) => Transition(State::resolving(pending, Box::new(turn.clone()))),
            Err(e) => self.end(
                context,
                turn,
                failed(
                    FailureCode::RequestRefused,
                    FailureSource::NOT_SENT,
                    &e.to_string(),
                ),
                false,
            ),
        }
    }

    pub(super) fn on_access(
        &mut self,
        context: &mut WorkCtx<'_>,
        turn: &Turn,
        a: &Answer,
    ) -> Outcome<State> {
        let access = access_of(a, &context.io.base);
        let access = match access {
            Ok(access) => access,
            Err(e) => {
                let end = failed(
                    FailureCode::RuntimeAccessFailed,
                    FailureSource::CONNECTING,
                    &e.to_string(),
                );
                return self.end(context, turn, end, false);
            }
        };
        let unavailable = match &access.mode {
            AccessMode::Unavailable { detail } => Some(detail.clone()),
            _ => None,
        };
        let decision = Decision::from_access(access, context.now);
        // RTA-3, RTA-14: a ready decision becomes the session's only once confirmed.
        if !decision.interaction.can_submit || decision.endpoint.is_none() {
            self.publish(context, &decision);
        }
        if !decision.interaction.can_submit {
            if decision.is_starting() {
                return self.hold(context, turn, &decision);
            }
            // SND-11: terminal; after a hold, "not sent" (OI-6).
            let notice = decision
                .interaction
                .notice
                .as_ref()
                .map(|n| n.message.clone());
            let failure = if turn.hold_deadline_ms.is_some() {
                not_sent(notice.as_deref())
            } else {
                let text = notice.as_deref().unwrap_or(BLOCKED_TEXT);
                RunFailure::from_source(
                    FailureCode::RuntimeInteractionBlocked,
                    FailureSource::GUARD,
                    text,
                )
            };
            return self.end(context, turn, RunEnd::Blocked { notice, failure }, false);
        }
        let Some(endpoint) = decision.endpoint.clone() else {
            let text = unavailable
                .flatten()
                .unwrap_or_else(|| UNAVAILABLE_TEXT.to_owned());
            return self.end(
                context,
                turn,
                failed(
                    FailureCode::RuntimeUnavailable,
                    FailureSource::CONNECTING,
                    &text,
                ),
                false,
            );
        };
        match confirm(context, Owner::Send, &self.session_uid, &endpoint) {
            // SND-4: confirmed by the memory.
            Confirm::Remembered => {
                self.publish(context, &decision);
                self.post(context, turn, &endpoint)
            }
            Confirm::Sent { pending, deadline } => Transition(State::confirming(
                pending,
                deadline,
                Box::new(decision),
                Box::new(turn.clone()),
            )),
            Confirm::Refused(_) => self.confirmed(context, turn, false, &decision),
        }
    }

    /// SND-5, RTA-17: the confirmation is over. The Agent served: the ready decision is the
    /// session's, and the message goes. It did not: the engine's waking decision, and the turn
    /// holds.
    pub(super) fn confirmed(
        &mut self,
        context: &mut WorkCtx<'_>,
        turn: &Turn,
        serving: bool,
        candidate: &Decision,
    ) -> Outcome<State> {
        let endpoint = candidate.endpoint.clone().filter(|_| serving);
        let (agent, served) = (self.agent_name.clone(), endpoint.is_some());
        let decision = confirmed(context, agent.as_deref(), served, candidate);
        self.publish(context, &decision);
        match endpoint {
            Some(endpoint) => self.post(context, turn, &endpoint),
            None => self.hold(context, turn, &decision),
        }
    }

    /// SND-9, OI-4: hold the turn under one deadline fixed at its first hold.
    pub(super) fn hold(
        &mut self,
        context: &mut WorkCtx<'_>,
        turn: &Turn,
        decision: &Decision,
    ) -> Outcome<State> {
        let mut turn = turn.clone();
        if turn.hold_deadline_ms.is_none() {
            let wake_deadline = decision
                .presence
                .as_ref()
                .and_then(|p| p.wake.as_ref())
                .and_then(|w| unix_ms(&w.deadline_at))
                .and_then(|ms| u64::try_from(ms).ok());
            let wall = context.io.wall_ms(context.now);
            turn.hold_deadline_ms = Some(match wake_deadline {
                Some(ms) => ms.saturating_add(HOLD_GRACE_MS),
                None => wall.saturating_add(HOLD_FALLBACK_MS),
            });
        }
        Transition(State::held(context.now + HOLD_SETTLE, Box::new(turn)))
    }

    /// SND-1, SND-6, SND-7: the message request.
    pub(super) fn post(
        &mut self,
        context: &mut WorkCtx<'_>,
        turn: &Turn,
        endpoint: &RuntimeEndpoint,
    ) -> Outcome<State> {
        let body = turn_body(&self.session_uid, &turn.text, &self.facts);
        let sent = if let Reach::Local(_) = context.reach {
            // ADR 099: the same body, without `session` (no detail record is held), and no
            // credential.
            let route = crate::api::local::LocalRoute::SendMessage {
                session_uid: self.session_uid.clone(),
                body,
            };
            let call = ApiCall::Local { route };
            context.send_local(Owner::Send, call)
        } else {
            let call = ApiCall::SendMessage {
                session_uid: self.session_uid.clone(),
                rpc_url: endpoint.rpc_url.clone(),
                body,
            };
            context.send_runtime(Owner::Send, call, endpoint.token.expose())
        };
        match sent {
            Ok(pending) => {
                self.mark_user(turn, MessageStatus::Complete);
                Transition(State::posting(
                    pending,
                    endpoint.clone(),
                    Box::new(turn.clone()),
                ))
            }
            Err(e) => {
                let end = failed(
                    FailureCode::RequestRefused,
                    FailureSource::NOT_SENT,
                    &e.to_string(),
                );
                self.end(context, turn, end, false)
            }
        }
    }

    /// SND-15: a new resolve-runtime-access for the session.
    pub(super) fn recheck(&mut self, context: &mut WorkCtx<'_>) -> Outcome<State> {
        let call = ApiCall::ResolveRuntimeAccess {
            session_uid: self.session_uid.clone(),
        };
        match context.send(Owner::Send, call) {
            Ok(pending) => Transition(State::rechecking(pending, None)),
            Err(_) => Transition(State::idle()),
        }
    }

    /// SND-15: the re-check's answer; a ready one is confirmed again.
    pub(super) fn recheck_access(
        &mut self,
        context: &mut WorkCtx<'_>,
        a: &Answer,
    ) -> Outcome<State> {
        let access = access_of(a, &context.io.base);
        let Ok(access) = access else {
            return Transition(State::idle());
        };
        let decision = Decision::from_access(access, context.now);
        let endpoint = decision
            .endpoint
            .clone()
            .filter(|_| decision.interaction.can_submit);
        let Some(endpoint) = endpoint else {
            self.publish(context, &decision);
            return Transition(State::idle());
        };
        match confirm(context, Owner::Send, &self.session_uid, &endpoint) {
            Confirm::Remembered => {
                self.publish(context, &decision);
                Transition(State::idle())
            }
            Confirm::Sent { pending, .. } => {
                Transition(State::rechecking(pending, Some(Box::new(decision))))
            }
            Confirm::Refused(_) => Transition(State::idle()),
        }
    }

    /// SND-9: the decision a send met is the session's decision. A launched session follows
    /// every RTA rule from its first decision on (RTA-25, OI-17).
    pub(super) fn publish(&mut self, context: &mut WorkCtx<'_>, decision: &Decision) {
        self.has_sent = true;
        context.memory.signals.push_back(Signal::Publish {
            session_uid: self.session_uid.clone(),
            decision: Box::new(decision.clone()),
        });
    }
}

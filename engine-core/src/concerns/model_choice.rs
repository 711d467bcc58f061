//! MOD: a session creation the platform refused for want of a model waits for the person's
//! choice (`sessionModelSelectionRequest`), then is retried once with it: the default session on
//! its own handle (MOD-10), every other path through get-or-create with a fresh handle (MOD-11).

use litemap::LiteMap;

use statig::prelude::*;

use super::Signal;
use super::opening::{self, OpenOp};
use crate::api::{ModelChoice, parse_get_or_create_session};
use crate::concerns::ctx::Ctx;
use crate::event::Event;
use crate::input::SessionSummary;
use crate::inputs::{DefaultKey, non_blank};
use crate::intent::{ApiCall, GetOrCreateBody, RequestId};
use crate::io::{Answer, Owner};
use crate::snapshot::MissingModelFields;

/// OI-6: the default session's error after a cancelled choice (MOD-16).
pub(crate) const SESSION_MODEL_NEEDED_MESSAGE: &str =
    "A model is needed to start this session. Choose one to continue.";

/// Which creation waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The default session's get-or-create for this combination.
    Default {
        key: DefaultKey,
        name: Option<String>,
    },
    /// An action or the launch target.
    Open(OpenOp),
}

/// `sessionModelSelectionRequest` and what it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChoiceRequest {
    pub id: u64,
    pub origin: Origin,
    pub agent_uid: String,
    pub agent_label: Option<String>,
    pub missing: MissingModelFields,
}

/// A creation retried with a chosen model, in flight.
#[derive(Debug, Clone)]
struct Retry {
    request: ChoiceRequest,
    choice: ModelChoice,
}

/// Shared storage.
#[derive(Debug, Default)]
pub(crate) struct ModelChoiceMachine {
    last_id: u64,
    /// Retries in flight. They are not choices (SHR-6): a newer refusal never cancels one
    /// (OI-27 replaces only a pending choice).
    retries: LiteMap<RequestId, Retry>,
}

pub(crate) enum ChoiceEvent<'a> {
    /// A creation got the model-required refusal (MOD-1, MOD-4).
    Required {
        origin: &'a Origin,
        agent_uid: &'a str,
        agent_label: Option<&'a str>,
        missing: MissingModelFields,
    },
    /// `resolveSessionModelSelection(choice)`.
    Resolve(&'a ModelChoice),
    /// `cancelSessionModelSelection()`.
    Cancel,
    /// The current default-session combination: a choice for another one is dropped (ENV-4).
    Evaluate {
        default_key: Option<&'a DefaultKey>,
    },
    /// `retryDefaultSession()` asks the combination again: its pending choice ends, silently.
    DefaultAskedAgain(&'a DefaultKey),
    /// The person or Environment changed.
    Reset,
    Answer(&'a Answer),
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl ModelChoiceMachine {
    #[superstate]
    fn any(&mut self, context: &mut Ctx<'_>, event: &ChoiceEvent<'_>) -> Outcome<State> {
        match event {
            ChoiceEvent::Required {
                origin,
                agent_uid,
                agent_label,
                missing,
            } => {
                self.last_id += 1;
                // adr-notes 6: the label trimmed, a blank one none.
                let request = ChoiceRequest {
                    id: self.last_id,
                    origin: (*origin).clone(),
                    agent_uid: (*agent_uid).to_owned(),
                    agent_label: non_blank(*agent_label),
                    missing: *missing,
                };
                // MOD-7: the application is asked to show the chat once, when it is hidden.
                if !context.inputs.visible {
                    context.emit(Event::RequestVisible);
                }
                Transition(State::waiting(Box::new(request)))
            }
            ChoiceEvent::Answer(a) => {
                if let Some(retry) = self.retries.remove(&a.id) {
                    answered(context, &retry, a);
                }
                Handled
            }
            ChoiceEvent::Evaluate { default_key } => {
                self.drop_stale_retries(context, *default_key);
                Handled
            }
            ChoiceEvent::Reset => {
                for (id, retry) in std::mem::take(&mut self.retries) {
                    context.io.abort(id);
                    abandoned(context, &retry.request);
                }
                Transition(State::idle())
            }
            _ => Handled,
        }
    }

    #[state(superstate = "any")]
    fn idle(event: &ChoiceEvent<'_>) -> Outcome<State> {
        let _ = event;
        Super
    }

    /// The choice is awaited (SHR-6).
    #[state(superstate = "any")]
    #[allow(clippy::borrowed_box)] // statig hands state-local fields by reference
    fn waiting(
        &mut self,
        request: &Box<ChoiceRequest>,
        context: &mut Ctx<'_>,
        event: &ChoiceEvent<'_>,
    ) -> Outcome<State> {
        match event {
            ChoiceEvent::Required { origin, .. } => {
                // OI-27: a newer request replaces this one, which ends as cancelled; a newer
                // request for the same default combination keeps it opening (MOD-16 is about
                // the person's cancel).
                let same_default = matches!((&request.origin, origin),
                    (Origin::Default { key: a, .. }, Origin::Default { key: b, .. }) if a == b);
                if !same_default {
                    cancelled(context, request);
                }
                Super
            }
            ChoiceEvent::Resolve(choice) => self.retry(context, request, choice),
            ChoiceEvent::Cancel => {
                cancelled(context, request);
                Transition(State::idle())
            }
            ChoiceEvent::DefaultAskedAgain(asked) => match &request.origin {
                Origin::Default { key, .. } if key == *asked => Transition(State::idle()),
                _ => Handled,
            },
            ChoiceEvent::Evaluate { default_key } => {
                self.drop_stale_retries(context, *default_key);
                abandon_if_changed(context, request, *default_key)
            }
            ChoiceEvent::Reset => {
                abandoned(context, request);
                Super
            }
            _ => Super,
        }
    }
}

impl ModelChoiceMachine {
    /// MOD-10, MOD-11: the one retry, with the chosen model.
    fn retry(
        &mut self,
        context: &mut Ctx<'_>,
        request: &ChoiceRequest,
        choice: &ModelChoice,
    ) -> Outcome<State> {
        let (handle, name) = match &request.origin {
            Origin::Default { key, name } => (key.handle.clone(), name.clone()),
            Origin::Open(_) => (fresh_handle(context), None),
        };
        let call = ApiCall::GetOrCreateSession {
            agent_uid: request.agent_uid.clone(),
            body: GetOrCreateBody {
                handle_unique_id: handle,
                name,
                llm_provider: Some(choice.provider.clone()),
                llm_model: Some(choice.model.clone()),
                // MOD-10, MOD-11: a choice that names no level sends no `llm_thinking`.
                llm_thinking: choice.thinking.clone(),
            },
        };
        match context.send(Owner::ModelChoice, call) {
            Ok(pending) => {
                let retry = Retry {
                    request: request.clone(),
                    choice: choice.clone(),
                };
                self.retries.insert(pending, retry);
            }
            Err(e) => failed(context, request, e.to_string()),
        }
        Transition(State::idle())
    }

    /// ENV-4: a default retry for a combination that is no longer current is dropped.
    fn drop_stale_retries(&mut self, context: &mut Ctx<'_>, current: Option<&DefaultKey>) {
        let stale: Vec<RequestId> = self
            .retries
            .iter()
            .filter(|(_, r)| {
                matches!(&r.request.origin, Origin::Default { key, .. } if Some(key) != current)
            })
            .map(|(id, _)| *id)
            .collect();
        for id in stale {
            if let Some(retry) = self.retries.remove(&id) {
                context.io.abort(id);
                abandoned(context, &retry.request);
            }
        }
    }

    /// A default-session retry is under way for `key` (OI-23: still opening).
    pub(crate) fn retrying_default(&self, key: &DefaultKey) -> bool {
        self.retries
            .values()
            .any(|r| matches!(&r.request.origin, Origin::Default { key: k, .. } if k == key))
    }
}

/// The retry's answer: the session opens as its path would open it (MOD-12), with the chosen
/// model in the picker once it is selected (MOD-13); any failure is a plain one (MOD-14).
fn answered(context: &mut Ctx<'_>, retry: &Retry, a: &Answer) {
    let env = context.inputs.environment_uid.clone().unwrap_or_default();
    let created = a
        .ok_body()
        .and_then(parse_get_or_create_session)
        .and_then(|r| r.check_created_in(&env).map(|()| r));
    match created {
        Ok(record) => {
            let mut choice = retry.choice.clone();
            choice.thinking = choice.thinking.filter(|level| !level.trim().is_empty());
            context.memory.signals.push_back(Signal::PickerChoice {
                session_uid: record.uid.clone(),
                choice,
            });
            match &retry.request.origin {
                Origin::Default { key, .. } => {
                    context.memory.signals.push_back(Signal::DefaultCreated {
                        key: key.clone(),
                        session: SessionSummary::from(&record),
                        listed: !record.is_archived,
                    });
                }
                Origin::Open(op) => opening::opened(context, op, &record),
            }
        }
        Err(e) => {
            let message = match &retry.request.origin {
                Origin::Default { .. } => e
                    .server_message()
                    .map(str::to_owned)
                    .unwrap_or_else(|| super::default_session::unavailable_of(context)),
                Origin::Open(_) => e.to_string(),
            };
            failed(context, &retry.request, message);
        }
    }
}

/// MOD-14: a plain creation failure: the default session's error, or the notify of the path.
fn failed(context: &mut Ctx<'_>, request: &ChoiceRequest, message: String) {
    match &request.origin {
        Origin::Default { key, .. } => {
            context.memory.signals.push_back(Signal::DefaultFailed {
                key: key.clone(),
                message,
            });
        }
        Origin::Open(op) => opening::notify_failure(context, op.kind, Some(message)),
    }
}

/// ENV-4: a default-session choice whose combination is no longer current is dropped.
fn abandon_if_changed(
    context: &mut Ctx<'_>,
    request: &ChoiceRequest,
    current: Option<&DefaultKey>,
) -> Outcome<State> {
    match &request.origin {
        Origin::Default { key, .. } if current != Some(key) => {
            abandoned(context, request);
            Transition(State::idle())
        }
        _ => Handled,
    }
}

/// A dropped default-session choice was never answered: its combination is asked again when it
/// comes back.
fn abandoned(context: &mut Ctx<'_>, request: &ChoiceRequest) {
    if let Origin::Default { key, .. } = &request.origin {
        context
            .memory
            .signals
            .push_back(Signal::DefaultAbandoned { key: key.clone() });
    }
}

/// MOD-15, MOD-16: cancelling is silent; the default session shows the model-needed message.
fn cancelled(context: &mut Ctx<'_>, request: &ChoiceRequest) {
    if let Origin::Default { key, .. } = &request.origin {
        context.memory.signals.push_back(Signal::DefaultFailed {
            key: key.clone(),
            message: SESSION_MODEL_NEEDED_MESSAGE.to_owned(),
        });
    }
}

/// OI-28: `cc-session-{base36 ms}-{6 base36 chars}`, from the wall clock and the seeded
/// generator, so it differs from every handle issued before.
fn fresh_handle(context: &mut Ctx<'_>) -> String {
    let ms = context.io.wall_ms(context.now);
    let draw = context.io.rng.next_u64() % 36u64.pow(6);
    format!("cc-session-{}-{:0>6}", base36(ms), base36(draw))
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        let d = usize::try_from(n % 36).unwrap_or(0);
        out.push(DIGITS.get(d).copied().unwrap_or(b'0'));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// The request waiting for a choice (SHR-6).
pub(crate) fn pending(state: &State) -> Option<&ChoiceRequest> {
    match state {
        State::Waiting { request } => Some(request),
        State::Idle {} => None,
    }
}

super::count_transitions!(ModelChoiceMachine);

impl crate::io::Outcome {
    /// The model-required refusal of a creation (MOD-1, `platform-api.md`): exactly a 400 whose
    /// JSON body names `llm_provider` and/or `llm_model` as required; the fields it named.
    pub(crate) fn model_required(&self) -> Option<crate::snapshot::MissingModelFields> {
        let crate::io::Outcome::Http { status, body } = self else {
            return None;
        };
        let fields = crate::api::model_required_fields(*status, body)?;
        Some(crate::snapshot::MissingModelFields {
            provider: fields.iter().any(|f| f == "llm_provider"),
            model: fields.iter().any(|f| f == "llm_model"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::base36;

    #[test]
    fn base36_digits() {
        assert_eq!(base36(0), "0");
        assert_eq!(base36(35), "z");
        assert_eq!(base36(36), "10");
        assert_eq!(base36(36u64.pow(6) - 1), "zzzzzz");
    }
}

//! CAT-12 to CAT-19, MOD-6, MOD-9, MOD-13: the composer's provider, model and thinking picker.
//! It follows the selected session's stored model once per combination of session, stored
//! choice and catalog (never with a PATCH), and turns a person's change on a ready session into
//! a PATCH that is shown at once and undone when refused.

use litemap::LiteMap;
use statig::prelude::*;

use super::Signal;
use crate::api::{
    Catalog, ModelChoice, SessionRecord, catalog_signature, missing_model_notice,
    parse_session_record, pick_default_session_model, resolve_selection,
};
use crate::concerns::ctx::Ctx;
use crate::event::{Event, Notice, NoticeVariant};
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Owner};

/// The picker's three values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PickerValues {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub thinking: Option<String>,
}

/// A person's change (`setSelectedProviderValue`, `setSelectedModelValue`,
/// `setSelectedReasoningEffortValue`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PickerEdit {
    Provider(Option<String>),
    /// `"{provider}::{model}"`.
    Model(Option<String>),
    Thinking(Option<String>),
}

/// Shared storage.
#[derive(Debug, Default)]
pub(crate) struct Picker {
    /// Read freely; written through [`Picker::set_values`], which counts changes.
    pub values: PickerValues,
    /// Changes of `values` (the settle loop's fixed point).
    pub values_revision: u64,
    /// The combination last applied (CAT-12, OI-22).
    applied: Option<String>,
    /// The combinations already notified about a missing model (CAT-14).
    notified: LiteMap<String, ()>,
    /// The model-choice request and catalog its first offer was made for (MOD-6).
    offered: Option<(u64, String)>,
    /// The composer's values while a model choice borrows the picker; they come back when the
    /// choice ends without a created session (MOD-9).
    saved: Option<PickerValues>,
    /// A created session's chosen model, applied once that session is selected (MOD-13).
    chosen: Option<(String, ModelChoice)>,
}

pub(crate) enum PickerEvent<'a> {
    /// The level facts.
    Reconcile {
        /// The selected session.
        selected: Option<&'a str>,
        /// The selected session with its loaded record.
        record: Option<&'a SessionRecord>,
        catalog: Option<&'a Catalog>,
        /// A model choice waits: its id and `sessionModelLastUsed` (MOD-6).
        choice: Option<(u64, &'a [(String, String)])>,
    },
    Edit {
        edit: &'a PickerEdit,
        /// The selected session, when its readiness is `ready` (CAT-15).
        ready_session: Option<&'a SessionRecord>,
        catalog: Option<&'a Catalog>,
        /// The "choose a model" state is shown: edits never PATCH (MOD-9).
        choosing: bool,
    },
    /// The choice a creation was retried with, and the session it created (MOD-13).
    Choice {
        session_uid: &'a str,
        choice: &'a ModelChoice,
    },
    Answer(&'a Answer),
    /// The person or Environment changed.
    Reset,
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl Picker {
    #[superstate]
    fn any(&mut self, context: &mut Ctx<'_>, event: &PickerEvent<'_>) -> Outcome<State> {
        match event {
            PickerEvent::Reconcile {
                selected,
                record,
                catalog,
                choice,
            } => {
                self.reconcile(context, *selected, *record, *catalog, *choice);
                Handled
            }
            PickerEvent::Edit {
                edit,
                ready_session,
                catalog,
                choosing,
            } => {
                let next = apply(&self.values, edit, *catalog);
                if next == self.values {
                    return Handled;
                }
                if *choosing {
                    self.set_values(next);
                    return Handled;
                }
                let Some(record) = ready_session else {
                    // CAT-15: not ready: no PATCH, the picker unchanged.
                    return Handled;
                };
                if catalog.is_none() {
                    // FAIL-16, OI-21: no catalog data, no PATCH; a level still goes out in
                    // runConfig.
                    self.set_values(next);
                    return Handled;
                }
                let previous = self.values.clone();
                self.set_values(next);
                self.patch(context, record, previous)
            }
            PickerEvent::Choice {
                session_uid,
                choice,
            } => {
                self.chosen = Some(((*session_uid).to_owned(), (*choice).clone()));
                Handled
            }
            PickerEvent::Reset => {
                *self = Picker::default();
                Transition(State::idle())
            }
            PickerEvent::Answer(_) => Handled,
        }
    }

    #[state(superstate = "any")]
    fn idle(event: &PickerEvent<'_>) -> Outcome<State> {
        let _ = event;
        Super
    }

    /// A PATCH for `session` is in flight; `previous` is what a refusal restores (CAT-17).
    #[state(superstate = "any", exit_action = "abort_pending")]
    #[allow(clippy::borrowed_box)] // statig hands state-local fields by reference
    fn patching(
        &mut self,
        pending: &RequestId,
        session: &String,
        previous: &Box<PickerValues>,
        context: &mut Ctx<'_>,
        event: &PickerEvent<'_>,
    ) -> Outcome<State> {
        match event {
            PickerEvent::Answer(a) if a.id == *pending => {
                let stored = a.ok_body().and_then(parse_session_record).and_then(|r| {
                    if r.uid == *session {
                        Ok(r)
                    } else {
                        Err(crate::api::ApiError::Malformed {
                            message: "The model change answer names another session.".into(),
                        })
                    }
                });
                match stored {
                    // CAT-18: later requests carry the stored record.
                    Ok(record) => {
                        context
                            .memory
                            .signals
                            .push_back(Signal::RecordUpdated(Box::new(record)));
                    }
                    // CAT-17, OI-22: back to the previous values, and the picker follows the
                    // record again (an older change may have been aborted), with the notice.
                    Err(e) => {
                        // While a model choice borrows the picker, the composer's values are
                        // the saved ones (MOD-9).
                        match self.saved.as_mut() {
                            Some(saved) => *saved = (**previous).clone(),
                            None => self.set_values((**previous).clone()),
                        }
                        self.applied = None;
                        let message = match &e {
                            crate::api::ApiError::Http { server_message, .. } => {
                                server_message.clone()
                            }
                            other => Some(other.to_string()),
                        }
                        .filter(|m| !m.trim().is_empty());
                        let text = match message {
                            Some(m) => format!("Failed to update session model: {m}"),
                            None => "Failed to update session model.".to_owned(),
                        };
                        context.memory.signals.push_back(Signal::Notice {
                            session_uid: session.clone(),
                            text,
                        });
                    }
                }
                Transition(State::idle())
            }
            // A PATCH for a session no longer selected is dropped (INV-10).
            PickerEvent::Reconcile { record, .. } if record.is_none_or(|r| r.uid != *session) => {
                self.set_values((**previous).clone());
                self.reconcile_from_superstate();
                Transition(State::idle())
            }
            _ => Super,
        }
    }

    #[action]
    fn abort_pending(pending: &RequestId, context: &mut Ctx<'_>) {
        context.io.abort(*pending);
    }
}

impl Picker {
    /// Sets the values, counting a change.
    fn set_values(&mut self, values: PickerValues) {
        if self.values != values {
            self.values = values;
            self.values_revision = self.values_revision.wrapping_add(1);
        }
    }

    /// The composer's values: the saved ones while a model choice borrows the picker.
    pub(crate) fn composer_values(&self) -> &PickerValues {
        self.saved.as_ref().unwrap_or(&self.values)
    }

    /// CAT-12 to CAT-14, MOD-6: follow the session's stored model once per combination, or
    /// offer the first choice of a waiting model choice. Never a PATCH (MOD-9, CAT-13).
    fn reconcile(
        &mut self,
        context: &mut Ctx<'_>,
        selected: Option<&str>,
        record: Option<&SessionRecord>,
        catalog: Option<&Catalog>,
        choice: Option<(u64, &[(String, String)])>,
    ) {
        if choice.is_some() && self.saved.is_none() {
            self.saved = Some(self.values.clone());
        }
        if choice.is_none()
            && let Some(saved) = self.saved.take()
        {
            // MOD-9: the choice ended: the composer's values come back.
            self.set_values(saved);
        }
        // MOD-13: the created session shows the chosen model once it is the selected one.
        if choice.is_none()
            && let Some((uid, chosen)) = self.chosen.take()
        {
            if selected == Some(uid.as_str()) {
                self.set_values(PickerValues {
                    provider: Some(chosen.provider),
                    model: Some(chosen.model),
                    thinking: chosen.thinking,
                });
            } else if selected.is_some() || record.is_some() {
                // Another session is on screen: the choice is not its model.
            } else {
                self.chosen = Some((uid, chosen));
            }
        }
        let Some(catalog) = catalog else {
            return;
        };
        if let Some((id, last_used)) = choice {
            // The first offer once per request and catalog content (OI-22 compares content).
            let key = (id, catalog_signature("", None, None, catalog));
            if self.offered.as_ref() != Some(&key) {
                self.offered = Some(key);
                let offer = pick_default_session_model(catalog, last_used);
                self.set_values(PickerValues {
                    provider: offer.as_ref().map(|c| c.provider.clone()),
                    model: offer.as_ref().map(|c| c.model.clone()),
                    thinking: offer.and_then(|c| c.thinking),
                });
            }
            return;
        }
        let Some(record) = record else {
            return;
        };
        let (provider, model) = (record.llm_provider.as_deref(), record.llm_model.as_deref());
        let signature = catalog_signature(&record.uid, provider, model, catalog);
        if self.applied.as_ref() == Some(&signature) {
            return;
        }
        let resolved = resolve_selection(catalog, provider, model, self.values.thinking.as_deref());
        self.set_values(PickerValues {
            provider: resolved.provider,
            model: resolved.model,
            thinking: resolved.thinking,
        });
        if resolved.model_missing && self.notified.insert(signature.clone(), ()).is_none() {
            let (title, description) = missing_model_notice(provider, model);
            context.emit(Event::Notify(Notice {
                title,
                description: Some(description),
                variant: NoticeVariant::Info,
            }));
        }
        self.applied = Some(signature);
    }

    /// After a dropped PATCH the next reconcile applies the new session's values.
    fn reconcile_from_superstate(&mut self) {
        self.applied = None;
    }

    /// CAT-15, CAT-19: PATCH all three values; a newer PATCH aborts an older one (the exit
    /// action of `patching`).
    fn patch(
        &mut self,
        context: &mut Ctx<'_>,
        record: &SessionRecord,
        previous: PickerValues,
    ) -> Outcome<State> {
        let (Some(provider), Some(model)) =
            (self.values.provider.clone(), self.values.model.clone())
        else {
            return Handled;
        };
        let call = ApiCall::UpdateSessionModel {
            session_uid: record.uid.clone(),
            llm_provider: provider,
            llm_model: model,
            llm_thinking: self.values.thinking.clone().unwrap_or_default(),
        };
        match context.send(Owner::Picker, call) {
            Ok(pending) => Transition(State::patching(
                pending,
                record.uid.clone(),
                Box::new(previous),
            )),
            Err(_) => {
                self.set_values(previous);
                Handled
            }
        }
    }
}

/// A person's change applied through the one resolver (MOD-19): a provider keeps the current
/// model when it lists it, else takes its first model (RU-26); a new model keeps the level when
/// it offers it; a level must be offered by the model (any level is taken while no catalog is
/// held).
fn apply(values: &PickerValues, edit: &PickerEdit, catalog: Option<&Catalog>) -> PickerValues {
    let thinking = values.thinking.as_deref();
    match (edit, catalog) {
        (PickerEdit::Provider(Some(p)), Some(catalog)) => {
            let current = values.model.as_deref();
            let r = resolve_selection(catalog, Some(p), current, thinking);
            PickerValues {
                provider: r.provider,
                model: r.model,
                thinking: r.thinking,
            }
        }
        (PickerEdit::Model(Some(id)), Some(catalog)) => {
            let Some((p, m)) = id.split_once("::") else {
                return values.clone();
            };
            let r = resolve_selection(catalog, Some(p), Some(m), thinking);
            if r.model_missing {
                return values.clone();
            }
            PickerValues {
                provider: r.provider,
                model: r.model,
                thinking: r.thinking,
            }
        }
        (PickerEdit::Thinking(level), Some(catalog)) => {
            let offered = catalog
                .model_options()
                .into_iter()
                .find(|m| {
                    Some(m.provider.as_str()) == values.provider.as_deref()
                        && Some(m.model.as_str()) == values.model.as_deref()
                })
                .is_some_and(|m| match level {
                    Some(l) => m.reasoning_options.iter().any(|o| o.value == *l),
                    None => m.reasoning_options.is_empty(),
                });
            if offered || values.model.is_none() {
                PickerValues {
                    thinking: level.clone(),
                    ..values.clone()
                }
            } else {
                values.clone()
            }
        }
        (PickerEdit::Thinking(level), None) => PickerValues {
            thinking: level.clone(),
            ..values.clone()
        },
        _ => values.clone(),
    }
}

/// A PATCH is in flight (`isUpdatingSessionModel`).
pub(crate) fn is_updating(state: &State) -> bool {
    matches!(state, State::Patching { .. })
}

super::count_transitions!(Picker);

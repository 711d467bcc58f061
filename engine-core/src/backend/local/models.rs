//! The model picker with a local Agent source (ADR 099: "the first message of a new local
//! conversation runs on the runtime's configured model and the picker applies from the next";
//! `platform-api.md` section 8): the model the runtime holds for the conversation shown (`GET
//! /api/chat/session-model`), read on every change of conversation and after every turn while
//! no turn runs; a person's choice is `PUT` for a conversation the runtime knows, and kept for
//! one it does not know yet (a new conversation), to be `PUT` once the runtime names a model
//! for it. The configured option (`local::configured`) stands for the runtime's own model.

use litemap::LiteMap;

use statig::prelude::*;

use crate::api::local::{LocalRoute, LocalSessionModel, local_failure_text, parse_session_model};
use crate::api::{Catalog, ModelOption, ProviderOption};
use crate::concerns::ctx::Ctx;
use crate::concerns::picker::PickerValues;
use crate::event::{Event, Notice, NoticeVariant};
use crate::inputs::non_blank;
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Owner};

/// The provider of the configured option.
pub(crate) const CONFIGURED_PROVIDER: &str = "local";
/// The model of the configured option (`local::configured`).
pub(crate) const CONFIGURED_MODEL: &str = "configured";
/// The configured option's label.
const CONFIGURED_LABEL: &str = "Configured by the local Agent";
/// The configured provider's label.
const LOCAL_PROVIDER_LABEL: &str = "Local Agent";
/// A refused model change.
const NOT_CHANGED_TITLE: &str = "The model did not change";
/// A choice for a conversation the runtime does not know yet (said once per engine).
const FIRST_MESSAGE_TITLE: &str = "The first message uses the local Agent's model";
const FIRST_MESSAGE_TEXT: &str = "A new local conversation starts with the model the Agent was \
                                  started with. Your choice applies from the next message.";

/// The picker's values for the configured option.
pub(crate) fn configured_values() -> PickerValues {
    PickerValues {
        provider: Some(CONFIGURED_PROVIDER.to_owned()),
        model: Some(CONFIGURED_MODEL.to_owned()),
        thinking: None,
    }
}

/// `availableProviders` with a local source: the local Agent first, then the catalog's.
pub(crate) fn provider_options(catalog: Option<&Catalog>) -> Vec<ProviderOption> {
    let mut out = vec![ProviderOption {
        label: LOCAL_PROVIDER_LABEL.to_owned(),
        value: CONFIGURED_PROVIDER.to_owned(),
    }];
    out.extend(catalog.map(Catalog::provider_options).unwrap_or_default());
    out
}

/// `availableModels` with a local source: the configured option first, then the catalog's.
pub(crate) fn model_options(catalog: Option<&Catalog>) -> Vec<ModelOption> {
    let mut out = vec![ModelOption {
        id: format!("{CONFIGURED_PROVIDER}::{CONFIGURED_MODEL}"),
        provider: CONFIGURED_PROVIDER.to_owned(),
        model: CONFIGURED_MODEL.to_owned(),
        label: CONFIGURED_LABEL.to_owned(),
        selectable: true,
        needs_sign_in: false,
        reasoning_options: Vec::new(),
        default_reasoning: None,
    }];
    out.extend(catalog.map(Catalog::model_options).unwrap_or_default());
    out
}

/// A model change on its way (`PUT /api/chat/session-model`).
#[derive(Debug, Clone)]
struct Put {
    session: String,
    /// What a refusal shows, when its conversation is on screen: the values before the
    /// change, or for a kept choice the model the runtime holds.
    fallback: PickerValues,
    /// A kept choice: its answer is what the picker shows.
    kept: bool,
}

/// The session model and the picker with a local source.
#[derive(Debug, Default)]
pub(crate) struct LocalModel {
    /// The picker's values: the conversation shown's (none until its model is read).
    pub values: PickerValues,
    /// The conversation the values are for.
    shown: Option<String>,
    /// Conversations the runtime knows (it named a model for them, listed or reloaded them, or
    /// named them in an answer); a choice for one is `PUT` at once.
    known: LiteMap<String, ()>,
    /// Choices kept for conversations the runtime does not know yet.
    pending: LiteMap<String, PickerValues>,
    /// Changes on their way, each for its own conversation (another conversation shown
    /// meanwhile is read at once).
    puts: LiteMap<RequestId, Put>,
    /// The conversation and turn count last read for: read again after every turn.
    read_for: Option<(String, u64)>,
    /// Turns ended so far.
    turns: u64,
    /// "The first message uses the local Agent's model" was said.
    told: bool,
}

/// A person's picker change.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Edit<'a> {
    Provider(Option<&'a str>),
    /// `"{provider}::{model}"`.
    Model(Option<&'a str>),
    Thinking(Option<&'a str>),
}

pub(crate) enum ModelEvent<'a> {
    /// The level rules: the conversation shown, whether the runtime can be asked (visible and
    /// ready), and whether a turn of it runs.
    Evaluate {
        selected: Option<&'a str>,
        may_read: bool,
        running: bool,
    },
    /// A person's change, for the conversation shown; `listed` when the runtime lists it;
    /// `catalog` settles the level a chosen model offers.
    Edit {
        edit: Edit<'a>,
        selected: Option<&'a str>,
        listed: bool,
        catalog: Option<&'a Catalog>,
    },
    /// The runtime knows this conversation now.
    Known(&'a str),
    /// A turn ended: the model is read again.
    TurnEnded,
    /// The runtime named the conversation `from` ran in `to`.
    Rekey {
        from: &'a str,
        to: &'a str,
    },
    Answer(&'a Answer),
    Reset,
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl LocalModel {
    #[superstate]
    fn any(&mut self, context: &mut Ctx<'_>, event: &ModelEvent<'_>) -> Outcome<State> {
        match event {
            ModelEvent::Edit {
                edit,
                selected,
                listed,
                catalog,
            } => {
                self.edit(context, *edit, *selected, *listed, *catalog);
                Handled
            }
            ModelEvent::Known(uid) => {
                self.known.insert((*uid).to_owned(), ());
                Handled
            }
            ModelEvent::TurnEnded => {
                self.turns = self.turns.wrapping_add(1);
                Handled
            }
            ModelEvent::Rekey { from, to } => {
                self.known.insert((*to).to_owned(), ());
                if let Some(choice) = self.pending.remove(*from) {
                    self.pending.insert((*to).to_owned(), choice);
                }
                for (_, put) in self.puts.iter_mut().filter(|(_, p)| p.session == *from) {
                    put.session = (*to).to_owned();
                }
                if let Some((uid, _)) = self.read_for.as_mut()
                    && uid == from
                {
                    *uid = (*to).to_owned();
                }
                if self.shown.as_deref() == Some(*from) {
                    self.shown = Some((*to).to_owned());
                }
                Handled
            }
            ModelEvent::Answer(a) => {
                if let Some(put) = self.puts.remove(&a.id) {
                    self.put_answered(context, &put, a);
                }
                Handled
            }
            ModelEvent::Reset => {
                for (id, _) in std::mem::take(&mut self.puts) {
                    context.io.abort(id);
                }
                *self = LocalModel::default();
                Transition(State::idle())
            }
            ModelEvent::Evaluate { .. } => Handled,
        }
    }

    #[state(superstate = "any")]
    fn idle(&mut self, context: &mut Ctx<'_>, event: &ModelEvent<'_>) -> Outcome<State> {
        let ModelEvent::Evaluate {
            selected,
            may_read,
            running,
        } = event
        else {
            return Super;
        };
        self.follow(*selected);
        let Some(uid) = selected.filter(|_| *may_read && !*running) else {
            return Handled;
        };
        let key = (uid.to_owned(), self.turns);
        if self.read_for.as_ref() == Some(&key) {
            return Handled;
        }
        self.read_for = Some(key);
        let route = LocalRoute::SessionModel {
            session_uid: uid.to_owned(),
        };
        match context.send_local(Owner::LocalModels, ApiCall::Local { route }) {
            Ok(pending) => Transition(State::reading(pending, uid.to_owned())),
            Err(_) => Handled,
        }
    }

    /// The model held for `session` is being read.
    #[state(superstate = "any", exit_action = "abort_pending")]
    fn reading(
        &mut self,
        pending: &RequestId,
        session: &String,
        context: &mut Ctx<'_>,
        event: &ModelEvent<'_>,
    ) -> Outcome<State> {
        match event {
            ModelEvent::Answer(a) if a.id == *pending => {
                let held = match held_model(a, session) {
                    Ok(held) => held,
                    // No answer at all: the picker stays as it is (the reference's).
                    Err(()) => return Transition(State::idle()),
                };
                if held.is_some() {
                    self.known.insert(session.clone(), ());
                }
                match (held, self.pending.remove(session)) {
                    // A kept choice goes out now; a refusal falls back to the runtime's.
                    (Some(held), Some(choice)) => {
                        self.values = values_of(&held);
                        self.put(context, session, &choice, values_of(&held), true);
                    }
                    (Some(held), None) => self.values = values_of(&held),
                    (None, Some(choice)) => {
                        self.pending.insert(session.clone(), choice);
                        self.values = configured_values();
                    }
                    // The runtime's own model (the read is always for the conversation shown).
                    (None, None) => self.values = configured_values(),
                }
                Transition(State::idle())
            }
            // The person chose while the model was being read: the read, from before the
            // choice, must not show over it (the exit action drops it).
            ModelEvent::Edit {
                edit,
                selected,
                listed,
                catalog,
            } if *selected == Some(session.as_str()) => {
                self.edit(context, *edit, *selected, *listed, *catalog);
                Transition(State::idle())
            }
            // Another conversation: its own read (the exit action drops this one).
            ModelEvent::Evaluate { selected, .. } if *selected != Some(session.as_str()) => {
                self.follow(*selected);
                self.read_for = None;
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

impl LocalModel {
    /// Another conversation is shown: the picker shows nothing of the last one until its own
    /// model is read.
    fn follow(&mut self, selected: Option<&str>) {
        if self.shown.as_deref() != selected {
            self.shown = selected.map(str::to_owned);
            self.values = PickerValues::default();
        }
    }

    /// `setSelectedModelValue` sets the provider and model and applies them with a level the
    /// model offers (the current one, else its default; none for a model without levels);
    /// `setSelectedReasoningEffortValue` applies the current model with the new level;
    /// `setSelectedProviderValue` only sets the provider. Blank values are none. No readiness
    /// gate (the reference's).
    fn edit(
        &mut self,
        context: &mut Ctx<'_>,
        edit: Edit<'_>,
        selected: Option<&str>,
        listed: bool,
        catalog: Option<&Catalog>,
    ) {
        let previous = self.values.clone();
        let model_id = match edit {
            Edit::Provider(p) => {
                self.values.provider = non_blank(p);
                return;
            }
            Edit::Model(id) => Some(id.and_then(split_model_id)),
            Edit::Thinking(level) => {
                self.values.thinking = non_blank(level);
                None
            }
        };
        match model_id {
            Some(Some((provider, model))) => {
                self.values.thinking =
                    offered_level(catalog, &provider, &model, self.values.thinking.take());
                self.values.provider = Some(provider);
                self.values.model = Some(model);
            }
            // Not a model id: nothing to send.
            Some(None) => {
                self.values.model = edit_text(edit);
                if let Some(uid) = selected {
                    self.pending.remove(uid);
                }
                return;
            }
            None => {}
        }
        let Some(uid) = selected else {
            return;
        };
        let choice = self.values.clone();
        let known = listed || self.known.contains_key(uid);
        let configured = choice.provider.as_deref() == Some(CONFIGURED_PROVIDER)
            && choice.model.as_deref() == Some(CONFIGURED_MODEL);
        if configured || choice.provider.is_none() || choice.model.is_none() {
            // Nothing to send: the runtime's own model (a kept choice is dropped); for a
            // conversation it knows, the model it holds is read again to show it.
            self.pending.remove(uid);
            if configured && known {
                self.read_for = None;
            }
            return;
        }
        if !known {
            self.pending.insert(uid.to_owned(), choice);
            if !self.told {
                self.told = true;
                context.emit(Event::Notify(Notice {
                    title: FIRST_MESSAGE_TITLE.to_owned(),
                    description: Some(FIRST_MESSAGE_TEXT.to_owned()),
                    variant: NoticeVariant::Info,
                }));
            }
            return;
        }
        self.pending.remove(uid);
        self.put(context, uid, &choice, previous, false);
    }

    /// Sends a change; an earlier one for the same conversation is replaced (aborted).
    fn put(
        &mut self,
        context: &mut Ctx<'_>,
        uid: &str,
        choice: &PickerValues,
        fallback: PickerValues,
        kept: bool,
    ) {
        let (Some(provider), Some(model)) = (choice.provider.clone(), choice.model.clone()) else {
            return;
        };
        let older: Vec<RequestId> = self
            .puts
            .iter()
            .filter(|(_, p)| p.session == uid)
            .map(|(id, _)| *id)
            .collect();
        for id in older {
            self.puts.remove(&id);
            context.io.abort(id);
        }
        let route = LocalRoute::SetSessionModel {
            session_uid: uid.to_owned(),
            provider,
            model,
            thinking_level: choice.thinking.clone(),
        };
        if let Ok(id) = context.send_local(Owner::LocalModels, ApiCall::Local { route }) {
            let put = Put {
                session: uid.to_owned(),
                fallback,
                kept,
            };
            self.puts.insert(id, put);
        }
    }

    /// A change was answered: a kept choice shows what the runtime now holds; a refusal is
    /// said, and its conversation, when shown, goes back to what the runtime holds (as the
    /// platform's picker, CAT-17) and reads it again.
    fn put_answered(&mut self, context: &mut Ctx<'_>, put: &Put, answer: &Answer) {
        let route = LocalRoute::SetSessionModel {
            session_uid: put.session.clone(),
            provider: String::new(),
            model: String::new(),
            thinking_level: None,
        };
        let on_screen = self.shown.as_deref() == Some(put.session.as_str());
        let refused = match answer.outcome.local(&route) {
            Ok((200..=299, body)) => {
                if put.kept
                    && on_screen
                    && let Some(held) = parse_session_model(body)
                {
                    self.values = values_of(&held);
                }
                None
            }
            Ok((status, body)) => Some(local_failure_text(&route, Some(status), body)),
            Err(text) => Some(text),
        };
        if let Some(text) = refused {
            if on_screen {
                self.values = put.fallback.clone();
                self.read_for = None;
            }
            context.emit(Event::Notify(Notice {
                title: NOT_CHANGED_TITLE.to_owned(),
                description: Some(text),
                variant: NoticeVariant::Error,
            }));
        }
    }

    /// A model change is in flight for the conversation shown (`isUpdatingSessionModel`).
    pub(crate) fn is_updating(&self) -> bool {
        self.puts
            .values()
            .any(|p| Some(p.session.as_str()) == self.shown.as_deref())
    }
}

/// `"{provider}::{model}"`, both parts non-blank and trimmed.
fn split_model_id(id: &str) -> Option<(String, String)> {
    let (p, m) = id.trim().split_once("::")?;
    Some((non_blank(Some(p))?, non_blank(Some(m))?))
}

/// The text of a model edit that names no model id, trimmed; blank is none.
fn edit_text(edit: Edit<'_>) -> Option<String> {
    match edit {
        Edit::Model(id) => non_blank(id),
        _ => None,
    }
}

/// The level a chosen model is applied with: the current one when the catalog says the model
/// offers it, else the model's default (none for a model without levels); a model the catalog
/// does not list keeps the current level.
fn offered_level(
    catalog: Option<&Catalog>,
    provider: &str,
    model: &str,
    current: Option<String>,
) -> Option<String> {
    let options = model_options(catalog);
    let Some(option) = options
        .iter()
        .find(|o| o.provider == provider && o.model == model)
    else {
        return current;
    };
    match current {
        Some(level) if option.reasoning_options.iter().any(|o| o.value == level) => Some(level),
        _ => option.default_reasoning.clone(),
    }
}

/// The model a session-model answer names: none for a refusal or an answer without a model;
/// `Err` when no answer came. The answer may name the runtime's own id for the conversation
/// (`default`, or a client's id, maps to one of its own): the request's id says whose it is.
fn held_model(a: &Answer, session: &str) -> Result<Option<LocalSessionModel>, ()> {
    let route = LocalRoute::SessionModel {
        session_uid: session.to_owned(),
    };
    match a.outcome.local(&route) {
        Ok((200..=299, body)) => Ok(parse_session_model(body)),
        Ok(_) => Ok(None),
        Err(_) => Err(()),
    }
}

fn values_of(held: &LocalSessionModel) -> PickerValues {
    PickerValues {
        provider: Some(held.provider.clone()),
        model: Some(held.model.clone()),
        thinking: held.thinking_level.clone(),
    }
}

crate::concerns::count_transitions!(LocalModel);

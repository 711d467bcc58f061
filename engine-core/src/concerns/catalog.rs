//! CAT-1 to CAT-11, OI-10: the model-provider catalog store. One entry per person, fresh for
//! five minutes, read on demand while the catalog is wanted (the chat visible, or a model choice
//! pending), one request in flight shared by every reader, two retries after 1 s and 2 s.

use crate::deadline::{Deadline, TimeoutReason};
use litemap::LiteMap;
use std::sync::Arc;
use std::time::Duration;

use crate::time::Time;

use statig::prelude::*;

use crate::api::{ApiError, Catalog, parse_catalog};
use crate::concerns::ctx::Ctx;
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Owner};

/// An entry is fresh while younger than this (CAT-6, CAT-7).
pub(crate) const FRESH: Duration = Duration::from_millis(300_000);
/// The waits before the second and the third attempt (CAT-8, OI-10).
const RETRY_DELAYS: [Duration; 2] = [Duration::from_millis(1_000), Duration::from_millis(2_000)];
/// OI-6: the fallback text of a failed catalog read.
const FAILED: &str = "Available models request failed.";
/// P12: the catalog is read only for a public person uid.
const NUMERIC_UID: &str =
    "The model catalog requires the public user uid, not the legacy numeric user id.";

/// One person's catalog.
#[derive(Debug, Clone)]
struct Entry {
    catalog: Arc<Catalog>,
    loaded_at: Time,
}

/// What makes a new demand: a change of any of these while the catalog is wanted (CAT-6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Demand {
    pub person: String,
    pub environment: Option<String>,
    pub selected: Option<String>,
    pub choice_pending: bool,
}

/// Shared storage.
#[derive(Debug, Default)]
pub(crate) struct CatalogStore {
    entries: LiteMap<String, Entry>,
    /// `availableModelsError` per person: a final failure with no data held (OI-10).
    errors: LiteMap<String, String>,
    /// The demand last served; `None` while the catalog is not wanted.
    last_demand: Option<Demand>,
}

pub(crate) enum CatalogEvent<'a> {
    /// The level facts: the person, and the demand when the catalog is wanted now (CAT-2, CAT-4,
    /// MOD-8).
    Evaluate {
        person: Option<&'a str>,
        demand: Option<&'a Demand>,
    },
    /// `requestAvailableModels()` (CAT-11).
    Request {
        demand: Option<&'a Demand>,
    },
    /// `invalidateModelProviderCatalog()` (CAT-10).
    Invalidate {
        demand: Option<&'a Demand>,
    },
    Answer(&'a Answer),
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl CatalogStore {
    #[superstate]
    fn any(&mut self, context: &mut Ctx<'_>, event: &CatalogEvent<'_>) -> Outcome<State> {
        match event {
            CatalogEvent::Invalidate { demand } => {
                // CAT-10: every entry goes, in-flight results are discarded (the exit action
                // aborts), and a wanted catalog is read again at once.
                self.entries.clear();
                self.errors.clear();
                self.last_demand = demand.cloned();
                match demand {
                    Some(d) => self.load(context, &d.person, 1),
                    None => Transition(State::idle()),
                }
            }
            _ => Handled,
        }
    }

    #[state(superstate = "any")]
    fn idle(&mut self, context: &mut Ctx<'_>, event: &CatalogEvent<'_>) -> Outcome<State> {
        match event {
            CatalogEvent::Evaluate { demand, .. } => {
                let Some(demand) = demand else {
                    self.last_demand = None;
                    return Handled;
                };
                if self.last_demand.as_ref() == Some(*demand) {
                    return Handled;
                }
                self.last_demand = Some((*demand).clone());
                if self.is_fresh(&demand.person, context.now) {
                    Handled
                } else {
                    self.load(context, &demand.person, 1)
                }
            }
            CatalogEvent::Request { demand: Some(d) } => self.load(context, &d.person, 1),
            _ => Super,
        }
    }

    /// A read is in flight for `person` (attempt 1 to 3).
    #[state(superstate = "any", exit_action = "abort_pending")]
    fn loading(
        &mut self,
        person: &String,
        pending: &RequestId,
        attempt: &u8,
        context: &mut Ctx<'_>,
        event: &CatalogEvent<'_>,
    ) -> Outcome<State> {
        match event {
            CatalogEvent::Answer(a) if a.id == *pending => {
                let read = a.ok_body().and_then(parse_catalog);
                match read {
                    Ok(catalog) => {
                        let entry = Entry {
                            catalog: Arc::new(catalog),
                            loaded_at: context.now,
                        };
                        self.entries.insert(person.clone(), entry);
                        self.errors.remove(person);
                        Transition(State::idle())
                    }
                    Err(e) => self.failed(context, person, *attempt, &e),
                }
            }
            // A read for another person is dropped (CAT-5).
            CatalogEvent::Evaluate {
                person: current, ..
            } if *current != Some(person.as_str()) => {
                self.last_demand = None;
                Transition(State::idle())
            }
            CatalogEvent::Evaluate { demand, .. } => self.follow(context, person, *demand),
            // CAT-11, OI-10: a demand while a read runs joins it.
            CatalogEvent::Request { .. } => Handled,
            _ => Super,
        }
    }

    /// Waiting to try again (CAT-8).
    #[state(superstate = "any")]
    fn retrying(
        &mut self,
        person: &String,
        attempt: &u8,
        at: &Time,
        context: &mut Ctx<'_>,
        event: &CatalogEvent<'_>,
    ) -> Outcome<State> {
        match event {
            CatalogEvent::Evaluate { demand, .. } => {
                if demand.is_none() {
                    // CAT-4: no retry while the catalog is not wanted.
                    self.last_demand = None;
                    return Transition(State::idle());
                }
                if demand.is_some_and(|d| d.person == *person) && context.now >= *at {
                    return self.load(context, person, *attempt);
                }
                self.follow(context, person, *demand)
            }
            CatalogEvent::Request { demand: Some(d) } => self.load(context, &d.person, 1),
            _ => Super,
        }
    }

    #[action]
    fn abort_pending(pending: &RequestId, context: &mut Ctx<'_>) {
        context.io.abort(*pending);
    }
}

impl CatalogStore {
    fn is_fresh(&self, person: &str, now: Time) -> bool {
        self.entries
            .get(person)
            .is_some_and(|e| now.saturating_duration_since(e.loaded_at) < FRESH)
    }

    /// A read for `person` goes on while the catalog is wanted for that person, and also when it
    /// stops being wanted (its answer is still of use; CAT-4 only forbids new requests); a
    /// waiting retry is dropped then. It moves to a new person at once (CAT-5).
    fn follow(
        &mut self,
        context: &mut Ctx<'_>,
        person: &str,
        demand: Option<&Demand>,
    ) -> Outcome<State> {
        match demand {
            None => {
                self.last_demand = None;
                Handled
            }
            Some(d) if d.person != person => {
                self.last_demand = Some(d.clone());
                if self.is_fresh(&d.person, context.now) {
                    Transition(State::idle())
                } else {
                    self.load(context, &d.person, 1)
                }
            }
            Some(d) => {
                self.last_demand = Some(d.clone());
                Handled
            }
        }
    }

    fn load(&mut self, context: &mut Ctx<'_>, person: &str, attempt: u8) -> Outcome<State> {
        if !person.is_empty() && person.bytes().all(|b| b.is_ascii_digit()) {
            self.errors
                .insert(person.to_owned(), NUMERIC_UID.to_owned());
            return Transition(State::idle());
        }
        match context.send(Owner::Catalog, ApiCall::ListModelProviders) {
            Ok(pending) => Transition(State::loading(person.to_owned(), pending, attempt)),
            Err(e) => self.failed(context, person, 3, &e),
        }
    }

    /// CAT-8, OI-10: retry after 1 s, then 2 s; then report, unless older data is held.
    fn failed(
        &mut self,
        context: &mut Ctx<'_>,
        person: &str,
        attempt: u8,
        error: &ApiError,
    ) -> Outcome<State> {
        let delay = RETRY_DELAYS.get(usize::from(attempt.saturating_sub(1)));
        if let Some(delay) = delay {
            let at = context.now + *delay;
            return Transition(State::retrying(person.to_owned(), attempt + 1, at));
        }
        if !self.entries.contains_key(person) {
            let message = match error {
                ApiError::Http { server_message, .. } => server_message.clone(),
                other => Some(other.to_string()),
            }
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| FAILED.to_owned());
            self.errors.insert(person.to_owned(), message);
        }
        Transition(State::idle())
    }

    /// The catalog held for `person` (fresh or not: older data stays in use, OI-10).
    pub(crate) fn catalog(&self, person: &str) -> Option<&Arc<Catalog>> {
        self.entries.get(person).map(|e| &e.catalog)
    }

    /// `availableModelsError` for `person`.
    pub(crate) fn error(&self, person: &str) -> Option<&str> {
        self.errors.get(person).map(String::as_str)
    }
}

/// A read is under way (`isLoadingAvailableModels`).
pub(crate) fn is_loading(state: &State) -> bool {
    !matches!(state, State::Idle {})
}

/// The store's next deadline: a retry.
pub(crate) fn deadline(state: &State) -> Option<Deadline> {
    match state {
        State::Retrying { at, .. } => Some(Deadline::new(*at, TimeoutReason::CatalogRetry)),
        _ => None,
    }
}

super::count_transitions!(CatalogStore);

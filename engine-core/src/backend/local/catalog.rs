//! The model catalog with a local Agent source (ADR 099; `platform-api.md` section 8): `GET
//! /api/chat/model-providers` (the P12 shape), read once the chat is visible and the runtime
//! ready, and again on `requestAvailableModels()` or `invalidateModelProviderCatalog()`. A
//! failure is not shown: the configured option stays offered alone.

use std::sync::Arc;

use statig::prelude::*;

use crate::api::local::LocalRoute;
use crate::api::{Catalog, parse_catalog};
use crate::concerns::ctx::Ctx;
use crate::intent::{ApiCall, RequestId};
use crate::io::{Answer, Owner};

/// The catalog a local runtime offers.
#[derive(Debug, Default)]
pub(crate) struct LocalCatalog {
    pub catalog: Option<Arc<Catalog>>,
    /// A read was asked for (the first, `requestAvailableModels()`, an invalidation).
    wanted: bool,
    /// A read was ever asked for (`hasRequestedAvailableModels`).
    pub requested: bool,
}

pub(crate) enum CatalogEvent<'a> {
    /// The level rules: the chat is visible and the runtime ready.
    Evaluate {
        may_read: bool,
    },
    /// Read again (`requestAvailableModels()`); `drop` forgets the one held first.
    Request {
        drop: bool,
    },
    Answer(&'a Answer),
    Reset,
}

#[state_machine(
    initial = "State::idle()",
    state(derive(Debug, Clone, PartialEq, Eq)),
    after_transition = "Self::after_transition"
)]
impl LocalCatalog {
    #[superstate]
    fn any(&mut self, event: &CatalogEvent<'_>) -> Outcome<State> {
        match event {
            CatalogEvent::Request { drop } => {
                if *drop {
                    self.catalog = None;
                }
                self.wanted = true;
                Handled
            }
            CatalogEvent::Reset => {
                *self = LocalCatalog::fresh();
                Transition(State::idle())
            }
            _ => Handled,
        }
    }

    #[state(superstate = "any")]
    fn idle(&mut self, context: &mut Ctx<'_>, event: &CatalogEvent<'_>) -> Outcome<State> {
        match event {
            CatalogEvent::Evaluate { may_read: true } if self.wanted => {
                self.wanted = false;
                self.requested = true;
                let call = ApiCall::Local {
                    route: LocalRoute::ModelProviders,
                };
                match context.send_local(Owner::LocalModels, call) {
                    Ok(pending) => Transition(State::reading(pending)),
                    Err(_) => Handled,
                }
            }
            _ => Super,
        }
    }

    #[state(superstate = "any", exit_action = "abort_pending")]
    fn reading(&mut self, pending: &RequestId, event: &CatalogEvent<'_>) -> Outcome<State> {
        match event {
            CatalogEvent::Answer(a) if a.id == *pending => {
                // A failure is not shown: the configured option stays offered alone.
                if let Ok((200..=299, body)) = a.outcome.local(&LocalRoute::ModelProviders)
                    && let Ok(catalog) = parse_catalog(body)
                {
                    self.catalog = Some(Arc::new(catalog));
                }
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

impl LocalCatalog {
    /// Nothing read yet: the first read is wanted.
    pub(crate) fn fresh() -> LocalCatalog {
        LocalCatalog {
            wanted: true,
            ..LocalCatalog::default()
        }
    }
}

crate::concerns::count_transitions!(LocalCatalog);

/// A read is in flight (`isLoadingAvailableModels`).
pub(crate) fn catalog_loading(state: &State) -> bool {
    matches!(state, State::Reading { .. })
}

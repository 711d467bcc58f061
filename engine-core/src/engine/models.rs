//! The engine's side of models: the catalog demand, the picker's edits, the last-used models and
//! the model rules evaluated after every input (CAT, MOD).

use crate::time::Time;

use super::Engine;
use crate::concerns::catalog::{CatalogEvent, Demand};
use crate::concerns::model_choice::{self, ChoiceEvent};
use crate::concerns::picker::{PickerEdit, PickerEvent};
use crate::concerns::selection;
use crate::inputs::non_blank;

impl Engine {
    /// The person's catalog, when one is held (OI-10: older data stays in use).
    pub(crate) fn person_catalog(&self) -> Option<std::sync::Arc<crate::api::Catalog>> {
        let person = self.inputs.scope().person?;
        self.backend
            .platform
            .catalog
            .inner()
            .catalog(&person)
            .cloned()
    }

    /// The catalog is wanted (the chat visible, or a model choice pending), with what makes a
    /// new demand (CAT-2, CAT-4, CAT-6, MOD-8).
    pub(crate) fn catalog_demand(&self) -> Option<Demand> {
        let person = self.inputs.scope().person?;
        let choice_pending = model_choice::pending(self.backend.platform.choice.state()).is_some();
        (self.inputs.visible || choice_pending).then(|| Demand {
            person,
            environment: self.inputs.environment_uid.clone(),
            selected: self.selected_uid(),
            choice_pending,
        })
    }

    /// A person's picker change: PATCHed on a ready session (CAT-15), never while a model choice
    /// waits (MOD-9).
    pub(super) fn edit_picker(&mut self, edit: &PickerEdit, now: Time) {
        let ready = self.current_readiness().status == crate::snapshot::ReadinessStatus::Ready;
        let catalog = self.person_catalog();
        let choosing = model_choice::pending(self.backend.platform.choice.state()).is_some();
        let (mut ctx, p) = self.ctx(now);
        let record = p.hydration.inner().detail.value().filter(|_| ready);
        let event = PickerEvent::Edit {
            edit,
            ready_session: record,
            catalog: catalog.as_deref(),
            choosing,
        };
        p.picker.handle_with_context(&event, &mut ctx);
    }

    /// `sessionModelLastUsed`: the listed sessions' models, most recent first, without repeats.
    pub(crate) fn session_model_last_used(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for s in self.backend.platform.env.inner().sessions() {
            if let (Some(p), Some(m)) = (
                non_blank(s.llm_provider.as_deref()),
                non_blank(s.llm_model.as_deref()),
            ) && !out.iter().any(|(op, om)| *op == p && *om == m)
            {
                out.push((p, m));
            }
        }
        out
    }

    /// The catalog store, a waiting model choice and the picker (CAT, MOD).
    pub(super) fn evaluate_models(&mut self, now: Time) {
        // A status flicker of the source keeps a pending choice (DEF-12): the combination, not
        // the ready key.
        let key = self.inputs.default_combination();
        let demand = self.catalog_demand();
        let catalog = self.person_catalog();
        let last_used = self.session_model_last_used();
        let person = self.inputs.scope().person;
        let (mut ctx, p) = self.ctx(now);
        p.choice.handle_with_context(
            &ChoiceEvent::Evaluate {
                default_key: key.as_ref(),
            },
            &mut ctx,
        );
        let event = CatalogEvent::Evaluate {
            person: person.as_deref(),
            demand: demand.as_ref(),
        };
        p.catalog.handle_with_context(&event, &mut ctx);
        let selected = selection::selected(p.selection.state()).map(|(uid, _)| uid);
        let record = p
            .hydration
            .inner()
            .detail
            .value()
            .filter(|r| Some(r.uid.as_str()) == selected);
        let choice = model_choice::pending(p.choice.state()).map(|r| (r.id, last_used.as_slice()));
        let event = PickerEvent::Reconcile {
            selected,
            record,
            catalog: catalog.as_deref(),
            choice,
        };
        p.picker.handle_with_context(&event, &mut ctx);
    }
}

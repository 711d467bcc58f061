//! A finished answer goes to the concern that owns its request.

use crate::concerns::cancel::CancelEvent;
use crate::concerns::catalog::CatalogEvent;
use crate::concerns::default_session::DefaultEvent;
use crate::concerns::environment::EnvEvent;
use crate::concerns::explorer::{ExplorerEvent, ReadKind};
use crate::concerns::hydration::HydEvent;
use crate::concerns::model_choice::ChoiceEvent;
use crate::concerns::opening::OpenEvent;
use crate::concerns::picker::PickerEvent;
use crate::concerns::runtime_access::RtaEvent;
use crate::concerns::send::RunEvent;
use crate::io::{Answer, Owner};
use crate::time::Time;

use super::Engine;

impl Engine {
    /// Hands a finished request to its owner.
    pub(super) fn route(&mut self, answer: &Answer, now: Time) {
        // Every finished runtime-access answer, before its owner reads it (a stale one too).
        self.memory.note_answer(answer, &self.io.base);
        match answer.owner {
            Owner::Archive | Owner::Unarchive => self.removal_answered(answer, now),
            Owner::Icons => self.icons_answered(answer, now),
            Owner::ArchivedSessions => {
                self.explore(ReadKind::Archived, &ExplorerEvent::Answer(answer), now);
            }
            Owner::SessionSearch => {
                self.explore(ReadKind::Search, &ExplorerEvent::Answer(answer), now);
            }
            Owner::LocalAdmission
            | Owner::LocalSessions
            | Owner::LocalHistory
            | Owner::LocalModels => {
                let (backend, mut lent) = self.lend(now);
                backend.local_answer(answer, &mut lent);
            }
            owner => {
                let (mut ctx, p) = self.ctx(now);
                match owner {
                    Owner::LatestSessions => p
                        .env
                        .handle_with_context(&EnvEvent::Answer(answer), &mut ctx),
                    Owner::DefaultSession => {
                        p.default
                            .handle_with_context(&DefaultEvent::Answer(answer), &mut ctx);
                    }
                    Owner::Opening => p
                        .opening
                        .handle_with_context(&OpenEvent::Answer(answer), &mut ctx),
                    Owner::Hydration => p
                        .hydration
                        .handle_with_context(&HydEvent::Answer(answer), &mut ctx),
                    Owner::RuntimeAccess => {
                        p.runtime
                            .handle_with_context(&RtaEvent::Answer(answer), &mut ctx);
                    }
                    Owner::Send => p.works.each_run(&mut ctx, &RunEvent::Answer(answer)),
                    Owner::Catalog => p
                        .catalog
                        .handle_with_context(&CatalogEvent::Answer(answer), &mut ctx),
                    Owner::ModelChoice => p
                        .choice
                        .handle_with_context(&ChoiceEvent::Answer(answer), &mut ctx),
                    Owner::Picker => p
                        .picker
                        .handle_with_context(&PickerEvent::Answer(answer), &mut ctx),
                    Owner::Cancel => p.works.each_cancel(&mut ctx, &CancelEvent::Answer(answer)),
                    Owner::LocalAdmission
                    | Owner::LocalSessions
                    | Owner::LocalHistory
                    | Owner::LocalModels => {}
                    // Finished above, before the context was borrowed.
                    Owner::Archive
                    | Owner::Unarchive
                    | Owner::ArchivedSessions
                    | Owner::SessionSearch
                    | Owner::Icons => {}
                }
            }
        }
    }
}

//! A host command handed to the concerns it concerns.

use super::*;
use explorer::RemovalOp;

impl Engine {
    pub(super) fn command(&mut self, command: Command, now: Time) {
        // ADR 099: with a local source some commands mean something else
        // (`backend/local/wiring.rs`).
        let (backend, mut lent) = self.lend(now);
        let Some(command) = backend.command(command, &mut lent) else {
            return;
        };
        match command {
            Command::RetryDefaultSession => {
                let key = self.inputs.default_combination();
                let (mut ctx, p) = self.ctx(now);
                if let Some(k) = key.as_ref() {
                    p.choice
                        .handle_with_context(&ChoiceEvent::DefaultAskedAgain(k), &mut ctx);
                }
                p.default
                    .handle_with_context(&DefaultEvent::Retry(key.as_ref()), &mut ctx);
                p.selection.handle(&SelEvent::Notice(None));
                p.env.handle_with_context(&EnvEvent::Reread, &mut ctx);
            }
            Command::RestoreDefaultSessionSelection => {
                if launched_now(&self.selection) {
                    // DEF-17: leave the launched session; the settle loop selects the default.
                    self.selection.handle(&SelEvent::Clear);
                }
            }
            Command::StartAgentSession { agent } => {
                let id = non_blank(agent.uid.as_deref())
                    .or_else(|| agent.id.filter(|n| *n > 0).map(|n| n.to_string()));
                if let Some(id) = &id {
                    let (mut ctx, p) = self.ctx(now);
                    p.env.handle_with_context(
                        &EnvEvent::NarrowToAgent(crate::intent::AgentFilter::for_agent(id)),
                        &mut ctx,
                    );
                }
                self.open(OpenKind::StartAgent, id, agent.name.clone(), now);
            }
            Command::StartAgentSessionById { agent_id, label } => {
                self.open(OpenKind::StartById, non_blank(Some(&agent_id)), label, now);
            }
            Command::OpenLatestOrStartAgentSessionById { agent_id, label } => {
                self.open(OpenKind::OpenLatest, non_blank(Some(&agent_id)), label, now);
            }
            Command::CreateAgentSession => {
                let agent = self.selected_agent();
                // adr-notes 6: the action names no label; the launch target's label stands in
                // when it is for the same Agent (never the session's or its record's names).
                let label = self
                    .inputs
                    .launch_target
                    .as_ref()
                    .filter(|t| agent.as_deref() == Some(t.agent_id.trim()))
                    .and_then(|t| t.label.clone());
                self.open(OpenKind::Create, agent, label, now);
            }
            Command::ArchiveAgentSession { session_uid } => {
                self.removal_command(session_uid, RemovalOp::Archive, now);
            }
            Command::DeleteAgentSession { session_uid } => {
                self.removal_command(session_uid, RemovalOp::Delete, now);
            }
            Command::UnarchiveAgentSession { session_uid } => {
                self.removal_command(session_uid, RemovalOp::Unarchive, now);
            }
            Command::RefreshSessionDetail => {
                let (mut ctx, p) = self.ctx(now);
                p.hydration
                    .handle_with_context(&HydEvent::RefreshDetail, &mut ctx);
            }
            Command::RefreshActiveSessionRuntimeAccess => {
                let (mut ctx, p) = self.ctx(now);
                p.runtime.handle_with_context(&RtaEvent::Refresh, &mut ctx);
            }
            Command::RevalidateStaleRuntimeAccess => {
                let (mut ctx, p) = self.ctx(now);
                p.runtime
                    .handle_with_context(&RtaEvent::Revalidate, &mut ctx);
            }
            Command::SendMessage { text } => self.send_message(&text, now),
            Command::EnqueueMessage { text } => match self.selected_uid() {
                Some(uid) => self.enqueue(&uid, &text, now),
                // Nothing written is lost: with nothing selected the text comes back.
                None if !text.trim().is_empty() => {
                    self.io.events.push_back(Event::MessageNotSent {
                        session_uid: None,
                        text: text.trim().to_owned(),
                        reason: NO_SESSION_TEXT.to_owned(),
                        code: crate::FailureCode::NoSessionSelected,
                    });
                }
                None => {}
            },
            Command::CancelActiveSession => self.cancel_active(now),
            Command::RemoveQueuedMessage { id } => {
                if let Some(work) = self.selected_work() {
                    work.queue.remove(&id);
                }
            }
            Command::EditQueuedMessage { id } => {
                let uid = self.selected_uid();
                let text = self.selected_work().and_then(|w| w.queue.remove(&id));
                if let (Some(session_uid), Some(text)) = (uid, text) {
                    let event = Event::QueuedMessageReturned {
                        session_uid,
                        id,
                        text,
                    };
                    self.io.events.push_back(event);
                }
            }
            Command::ReorderQueuedMessage { id, to_index } => {
                if let Some(work) = self.selected_work() {
                    work.queue.reorder(&id, to_index);
                }
            }
            Command::ClearMessageQueue => {
                if let Some(work) = self.selected_work() {
                    work.queue.clear();
                }
            }
            Command::SendNextQueuedMessage => {
                // SND-22: release the hold; the first row leaves once the thread is idle.
                if let Some(work) = self.selected_work()
                    && !work.queue.rows.is_empty()
                {
                    work.queue.hold = None;
                    work.queue.armed = true;
                }
            }
            Command::SetSelectedReasoningEffortValue { value } => {
                self.edit_picker(&PickerEdit::Thinking(non_blank(value.as_deref())), now);
            }
            Command::SetSelectedProviderValue { value } => {
                self.edit_picker(&PickerEdit::Provider(non_blank(value.as_deref())), now);
            }
            Command::SetSelectedModelValue { value } => {
                self.edit_picker(&PickerEdit::Model(non_blank(value.as_deref())), now);
            }
            Command::ResolveSessionModelSelection { choice } => {
                // OI-21: with no catalog data nothing can be chosen; no creation request.
                if let Some(catalog) = self.person_catalog() {
                    // MOD-19: the one resolver settles a named level (and the ids' letter
                    // case). A choice naming no level keeps none, and `""` stays "none":
                    // the engine invents no level (MOD-11, as the reference sends the choice).
                    let r = crate::api::resolve_selection(
                        &catalog,
                        Some(&choice.provider),
                        Some(&choice.model),
                        choice.thinking.as_deref(),
                    );
                    let thinking = match choice.thinking.as_deref() {
                        Some(level) if !level.trim().is_empty() => r.thinking,
                        _ => choice.thinking.clone(),
                    };
                    let choice = match (r.provider, r.model) {
                        (Some(provider), Some(model)) if !r.model_missing => {
                            crate::api::ModelChoice {
                                provider,
                                model,
                                thinking,
                            }
                        }
                        _ => choice,
                    };
                    let (mut ctx, p) = self.ctx(now);
                    p.choice
                        .handle_with_context(&ChoiceEvent::Resolve(&choice), &mut ctx);
                }
            }
            Command::CancelSessionModelSelection => {
                let (mut ctx, p) = self.ctx(now);
                p.choice.handle_with_context(&ChoiceEvent::Cancel, &mut ctx);
            }
            Command::RequestAvailableModels => {
                let demand = self.catalog_demand();
                let (mut ctx, p) = self.ctx(now);
                let event = CatalogEvent::Request {
                    demand: demand.as_ref(),
                };
                p.catalog.handle_with_context(&event, &mut ctx);
            }
            Command::ClearThread => self.clear_thread(now),
            Command::InvalidateModelProviderCatalog => {
                let demand = self.catalog_demand();
                let (mut ctx, p) = self.ctx(now);
                let event = CatalogEvent::Invalidate {
                    demand: demand.as_ref(),
                };
                p.catalog.handle_with_context(&event, &mut ctx);
            }
            Command::FetchArchivedAgentSessions { agent_uid, limit } => {
                self.fetch_archived(agent_uid.as_deref(), limit, now);
            }
            Command::SearchAgentSessions { query, limit } => self.search(&query, limit, now),
            Command::RefreshLatestSessions => {
                let (mut ctx, p) = self.ctx(now);
                p.env.handle_with_context(&EnvEvent::Reread, &mut ctx);
            }
            Command::ClearArchivedSessions => {
                self.explore(ReadKind::Archived, &ExplorerEvent::Clear, now);
            }
            Command::RequestAgentIcons { agent_uids } => {
                self.request_agent_icons(&agent_uids, now);
            }
        }
    }
}

//! The local parts' wiring (ADR 099; `docs/local-agents.md`): the commands that mean something
//! else with a local source, the answers of the local runtime, the level round of the local
//! machines, a conversation started or re-keyed here, and the conversation shown. The engine
//! reaches these through [`crate::backend::Backend`]'s methods, with a machine context and,
//! where they need them, the selection and the works both backends share ([`Lent`]).

use super::Local;
use super::admission::AdmissionEvent;
use super::catalog::CatalogEvent;
use super::history::HistoryEvent;
use super::models::{Edit, ModelEvent};
use super::selection::LocalSelEvent;
use super::sessions::SessionsEvent;
use crate::backend::Lent;
use crate::concerns::ctx::Ctx;
use crate::concerns::selection::{self, SelEvent};
use crate::input::Command;
use crate::io::{Answer, Owner};
use crate::model::Origin;

impl Local {
    /// A command with a local source: the ones that mean something else here are carried out
    /// (and `None` returned); every other goes back to the engine's own handling.
    pub(crate) fn command(&mut self, command: Command, lent: &mut Lent<'_>) -> Option<Command> {
        let ctx = &mut lent.ctx;
        match command {
            // The reference's local engine: every way to start a session starts a new
            // conversation; there is no "latest" to open.
            Command::CreateAgentSession
            | Command::StartAgentSession { .. }
            | Command::StartAgentSessionById { .. } => self.new_conversation(lent),
            Command::OpenLatestOrStartAgentSessionById { .. } => {}
            Command::RefreshSessionDetail | Command::RefreshLatestSessions => {
                // The conversations are read again, and a transcript that failed to load is
                // tried again.
                self.sessions
                    .handle_with_context(&SessionsEvent::Reread, ctx);
                self.history.handle_with_context(&HistoryEvent::Retry, ctx);
            }
            Command::RefreshActiveSessionRuntimeAccess | Command::RetryDefaultSession => {
                self.recheck(ctx);
            }
            // A local runtime's conversations are never removed (`archiveSessions` false).
            Command::ArchiveAgentSession { .. } => not_available(ctx, "Archiving"),
            Command::DeleteAgentSession { .. } => not_available(ctx, "Deleting"),
            Command::UnarchiveAgentSession { .. } => not_available(ctx, "Unarchiving"),
            // Nothing is archived; the search looks through the conversations listed.
            Command::FetchArchivedAgentSessions { .. } | Command::ClearArchivedSessions => {}
            Command::SearchAgentSessions { query, limit } => {
                let limit = crate::concerns::explorer::clamp_limit(limit);
                self.search = crate::inputs::non_blank(Some(&query)).map(|q| (q, limit));
            }
            // The runtime's default conversation.
            Command::RestoreDefaultSessionSelection => {
                let event = LocalSelEvent::Requested(crate::source::DEFAULT_CONVERSATION);
                self.select(&event, lent);
            }
            // An unavailable runtime, or one last checked more than 60 s ago, is checked again.
            Command::RevalidateStaleRuntimeAccess => self
                .admission
                .handle_with_context(&AdmissionEvent::Revalidate, ctx),
            Command::SetSelectedReasoningEffortValue { value } => {
                self.edit_model(Edit::Thinking(value.as_deref()), lent);
            }
            Command::SetSelectedProviderValue { value } => {
                self.edit_model(Edit::Provider(value.as_deref()), lent);
            }
            Command::SetSelectedModelValue { value } => {
                self.edit_model(Edit::Model(value.as_deref()), lent);
            }
            // `requestAvailableModels()` (or, dropping the one held,
            // `invalidateModelProviderCatalog()`): the catalog is read again once the runtime
            // can be asked.
            Command::RequestAvailableModels => self
                .catalog
                .handle_with_context(&CatalogEvent::Request { drop: false }, ctx),
            Command::InvalidateModelProviderCatalog => self
                .catalog
                .handle_with_context(&CatalogEvent::Request { drop: true }, ctx),
            other => return Some(other),
        }
        None
    }

    /// Hands an event to the local selection, then shows its conversation.
    pub(crate) fn select(&mut self, event: &LocalSelEvent<'_>, lent: &mut Lent<'_>) {
        self.selection.handle_with_context(event, &mut lent.ctx);
        self.show_selection(lent);
    }

    /// The shared selection shows the local selection's conversation.
    fn show_selection(&self, lent: &mut Lent<'_>) {
        let chosen = self.selection.inner();
        let Some(uid) = chosen.current.as_deref() else {
            return;
        };
        let origin = chosen.origin.unwrap_or(Origin::Restored);
        if selection::selected(lent.selection.state()) != Some((uid, origin)) {
            lent.selection.handle(&SelEvent::Choose {
                session_uid: uid,
                origin,
            });
        }
    }

    /// The level rules with a local source: the runtime is checked while the chat is visible
    /// (and again every 5 s while it is unavailable); the conversations, the transcript and
    /// the models are read once it is ready. The runs' clocks and the queue rules follow, as on
    /// the platform (the engine's settle round).
    pub(crate) fn evaluate(&mut self, lent: &mut Lent<'_>) {
        // A change of person or Environment clears the shown selection (ENV-2); the local
        // conversation shown stays the same one.
        self.show_selection(lent);
        let selected = selection::selected(lent.selection.state()).map(|s| s.0);
        let running = selected.is_some_and(|s| lent.works.is_running(s));
        let ctx = &mut lent.ctx;
        let visible = ctx.inputs.visible;
        self.admission
            .handle_with_context(&AdmissionEvent::Evaluate { visible }, ctx);
        let may_read = visible && self.admission.inner().ready;
        self.sessions
            .handle_with_context(&SessionsEvent::Evaluate { may_read }, ctx);
        let fresh = selected.is_some_and(|s| self.selection.inner().fresh.contains_key(s));
        let event = HistoryEvent::Evaluate {
            selected,
            may_read,
            fresh,
        };
        self.history.handle_with_context(&event, ctx);
        self.catalog
            .handle_with_context(&CatalogEvent::Evaluate { may_read }, ctx);
        let event = ModelEvent::Evaluate {
            selected,
            may_read,
            running,
        };
        self.model.handle_with_context(&event, ctx);
    }

    /// An answer to a request of a local machine.
    pub(crate) fn answer(&mut self, answer: &Answer, lent: &mut Lent<'_>) {
        let agent = self.name(&lent.ctx);
        let ctx = &mut lent.ctx;
        let applied = match answer.owner {
            Owner::LocalSessions => {
                let event = SessionsEvent::Answer {
                    answer,
                    agent: &agent,
                };
                self.sessions.handle_with_context(&event, ctx);
                None
            }
            Owner::LocalHistory => {
                self.history
                    .handle_with_context(&HistoryEvent::Answer(answer), ctx);
                let history = self.history.inner();
                // A reloaded conversation with a message in it is one the runtime knows.
                if let Some(uid) = history.session_uid.as_deref()
                    && !history.thread.is_empty()
                {
                    self.model.handle_with_context(&ModelEvent::Known(uid), ctx);
                }
                history
                    .session_uid
                    .clone()
                    .filter(|_| history.loaded && !history.live_only)
            }
            Owner::LocalModels => {
                self.catalog
                    .handle_with_context(&CatalogEvent::Answer(answer), ctx);
                self.model
                    .handle_with_context(&ModelEvent::Answer(answer), ctx);
                None
            }
            _ => {
                self.admission
                    .handle_with_context(&AdmissionEvent::Answer(answer), ctx);
                None
            }
        };
        // HYD-4 as on the platform: a loaded transcript replaces this page's finished turns of
        // the conversation (they are in it now), and shows again after `clearThread()`. A
        // live-only runtime has none: this page's turns stay.
        if let Some(uid) = applied {
            let work = lent.works.entry(&mut lent.ctx, &uid);
            work.thread_cleared = false;
            work.run.handle_with_context(
                &crate::concerns::send::RunEvent::HistoryApplied,
                &mut lent.ctx.work(),
            );
        }
    }

    /// A person's picker change with a local source.
    fn edit_model(&mut self, edit: Edit<'_>, lent: &mut Lent<'_>) {
        let selected = selection::selected(lent.selection.state()).map(|s| s.0);
        let listed =
            selected.is_some_and(|s| self.sessions.inner().sessions.iter().any(|r| r.uid == s));
        let catalog = self.catalog.inner().catalog.clone();
        let event = ModelEvent::Edit {
            edit,
            selected,
            listed,
            catalog: catalog.as_deref(),
        };
        self.model.handle_with_context(&event, &mut lent.ctx);
    }

    /// A turn of a local conversation ended: the list and the model are read again, and after
    /// a failure the runtime is checked again (the reference's `onError`).
    pub(crate) fn turn_ended(&mut self, failed: bool, ctx: &mut Ctx<'_>) {
        self.sessions
            .handle_with_context(&SessionsEvent::Reread, ctx);
        self.model.handle_with_context(&ModelEvent::TurnEnded, ctx);
        if failed {
            self.recheck(ctx);
        }
    }

    /// `createAgentSession()` with a local source: a new conversation under a client id (a
    /// UUID from the engine's seeded generator, so runs reproduce), shown at once, with no
    /// transcript to read; its first message goes out under that id (issue 14).
    fn new_conversation(&mut self, lent: &mut Lent<'_>) {
        let ctx = &mut lent.ctx;
        let id = ctx.io.rng.uuid_v4();
        // The reference asks at once for the chat to be shown.
        if !ctx.inputs.visible {
            ctx.io.events.push_back(crate::Event::RequestVisible);
        }
        self.page(&id, None, ctx);
        self.select(&LocalSelEvent::Created(&id), lent);
    }

    /// A conversation of this page (started here, or a turn of it starts with `text`): listed
    /// even when the runtime does not list it.
    pub(crate) fn page(&mut self, uid: &str, text: Option<&str>, ctx: &mut Ctx<'_>) {
        let agent = self.name(ctx);
        let at = crate::timestamp::iso_from_unix_ms(ctx.io.wall_ms(ctx.now));
        let event = SessionsEvent::Page {
            uid,
            text,
            at,
            agent: &agent,
        };
        self.sessions.handle_with_context(&event, ctx);
    }

    /// ADR 099: the runtime named the conversation `from` ran in `to` (the works have moved
    /// it already): the transcript, the model, the list and the shown conversation follow.
    pub(crate) fn rekey(&mut self, from: &str, to: &str, lent: &mut Lent<'_>) {
        let ctx = &mut lent.ctx;
        self.history
            .handle_with_context(&HistoryEvent::Rekey { from, to }, ctx);
        self.model
            .handle_with_context(&ModelEvent::Rekey { from, to }, ctx);
        self.sessions
            .handle_with_context(&SessionsEvent::Rekey { from, to }, ctx);
        self.select(&LocalSelEvent::Rekey { from, to }, lent);
    }

    /// `refreshActiveSessionRuntimeAccess()` with a local source, the chat coming back into
    /// view, or a failed turn: check the runtime now.
    pub(crate) fn recheck(&mut self, ctx: &mut Ctx<'_>) {
        self.admission
            .handle_with_context(&AdmissionEvent::Recheck, ctx);
    }

    /// The Agent's name: the source's, until the runtime names it.
    fn name(&self, ctx: &Ctx<'_>) -> String {
        self.agent_name(ctx.reach.source().map_or("", |s| s.display_name()))
    }
}

/// "{What} is not available for a local Agent" (info).
fn not_available(ctx: &mut Ctx<'_>, what: &str) {
    ctx.io.events.push_back(crate::Event::Notify(crate::Notice {
        title: format!("{what} is not available for a local Agent"),
        description: None,
        variant: crate::NoticeVariant::Info,
    }));
}

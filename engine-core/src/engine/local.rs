//! The engine's wiring with a local Agent source (ADR 099; `docs/local-agents.md`): no platform
//! request at all (`Io::send` refuses them, and the platform's level rules do not run); the
//! commands, answers and level rules of the local runtime's admission, its conversations, the
//! one shown and its transcript, and its models. The local parts (`backend/local/`, with what
//! the snapshot shows of them) exist only while a local source is set: a platform engine
//! carries none of them.

use super::Engine;

/// The context for a local machine, borrowing the engine's inputs and I/O only (so that its
/// machines can be borrowed beside it).
macro_rules! io_ctx {
    ($engine:ident, $now:expr) => {
        crate::backend::ctx($now, &$engine.inputs, &mut $engine.io, &mut $engine.memory)
    };
}
use crate::backend::local::admission::AdmissionEvent;
use crate::backend::local::catalog::CatalogEvent;
use crate::backend::local::history::HistoryEvent;
use crate::backend::local::models::{Edit, ModelEvent};
use crate::backend::local::selection::LocalSelEvent;
use crate::backend::local::sessions::SessionsEvent;
use crate::concerns::selection::{self, SelEvent};
use crate::input::Command;
use crate::io::{Answer, Owner};
use crate::model::Origin;
use crate::time::Time;
use crate::work::Rekeyed;

/// The local machines and a context beside them, or return (no local source).
macro_rules! local_ctx {
    ($engine:ident, $now:expr) => {{
        let Some(local) = $engine.backend.local.as_deref_mut() else {
            return;
        };
        (
            local,
            crate::backend::ctx($now, &$engine.inputs, &mut $engine.io, &mut $engine.memory),
        )
    }};
}

impl Engine {
    /// The Agent's name: the source's, until the runtime names it.
    pub(crate) fn local_agent_name(&self) -> String {
        self.backend.local_agent_name(&self.inputs)
    }

    /// The local runtime lists the conversation as working (a turn this engine did not start,
    /// such as one from before a reload): a stop sends its cancel.
    pub(super) fn local_listed_working(&self, uid: &str) -> bool {
        self.backend
            .local
            .as_deref()
            .is_some_and(|l| l.listed_working(uid))
    }

    /// A command with a local source: the ones that mean something else here are carried out
    /// (and `None` returned); every other goes back to the engine's own handling.
    pub(super) fn local_command(&mut self, command: Command, now: Time) -> Option<Command> {
        if self.backend.local.is_none() {
            return Some(command);
        }
        match command {
            // The reference's local engine: every way to start a session starts a new
            // conversation; there is no "latest" to open.
            Command::CreateAgentSession
            | Command::StartAgentSession { .. }
            | Command::StartAgentSessionById { .. } => self.new_local_conversation(now),
            Command::OpenLatestOrStartAgentSessionById { .. } => {}
            Command::RefreshSessionDetail | Command::RefreshLatestSessions => {
                self.refresh_local(now);
            }
            Command::RefreshActiveSessionRuntimeAccess | Command::RetryDefaultSession => {
                self.recheck_local(now);
            }
            // A local runtime's conversations are never removed (`archiveSessions` false).
            Command::ArchiveAgentSession { .. } => self.not_available("Archiving"),
            Command::DeleteAgentSession { .. } => self.not_available("Deleting"),
            Command::UnarchiveAgentSession { .. } => self.not_available("Unarchiving"),
            // Nothing is archived; the search looks through the conversations listed.
            Command::FetchArchivedAgentSessions { .. } | Command::ClearArchivedSessions => {}
            Command::SearchAgentSessions { query, limit } => {
                if let Some(local) = self.backend.local.as_deref_mut() {
                    let limit = crate::concerns::explorer::clamp_limit(limit);
                    local.search = crate::inputs::non_blank(Some(&query)).map(|q| (q, limit));
                }
            }
            // The runtime's default conversation.
            Command::RestoreDefaultSessionSelection => {
                self.local_requested(crate::source::DEFAULT_CONVERSATION, now);
            }
            Command::RevalidateStaleRuntimeAccess => self.revalidate_local(now),
            Command::SetSelectedReasoningEffortValue { value } => {
                self.edit_local_model(Edit::Thinking(value.as_deref()), now);
            }
            Command::SetSelectedProviderValue { value } => {
                self.edit_local_model(Edit::Provider(value.as_deref()), now);
            }
            Command::SetSelectedModelValue { value } => {
                self.edit_local_model(Edit::Model(value.as_deref()), now);
            }
            Command::RequestAvailableModels => self.request_local_catalog(false, now),
            Command::InvalidateModelProviderCatalog => self.request_local_catalog(true, now),
            other => return Some(other),
        }
        None
    }

    /// "{What} is not available for a local Agent" (info).
    fn not_available(&mut self, what: &str) {
        self.io
            .events
            .push_back(crate::Event::Notify(crate::Notice {
                title: format!("{what} is not available for a local Agent"),
                description: None,
                variant: crate::NoticeVariant::Info,
            }));
    }

    /// A new source, or none: a change of scope (ENV-2); the local machines of the old
    /// source close and, with a new one, start over.
    pub(super) fn source_changed(&mut self, now: Time) {
        let mut ctx = io_ctx!(self, now);
        self.backend.reopen(&mut ctx);
        self.scope_changed(now);
        self.local_selection(now, &LocalSelEvent::Start);
    }

    /// `requestedSessionId` with a local source: that conversation is shown.
    pub(super) fn local_requested(&mut self, id: &str, now: Time) {
        self.local_selection(now, &LocalSelEvent::Requested(id));
    }

    /// The storage port's answer for the shown conversation.
    pub(super) fn local_stored_selection(&mut self, key: &str, uid: Option<&str>, now: Time) {
        let event = LocalSelEvent::Stored {
            key,
            session_uid: uid,
        };
        self.local_selection(now, &event);
    }

    /// Hands an event to the local selection, then shows its conversation.
    fn local_selection(&mut self, now: Time, event: &LocalSelEvent<'_>) {
        let (local, mut ctx) = local_ctx!(self, now);
        local.selection.handle_with_context(event, &mut ctx);
        self.show_local_selection();
    }

    /// The shared selection shows the local selection's conversation.
    fn show_local_selection(&mut self) {
        let Some(local) = self.backend.local.as_deref() else {
            return;
        };
        let chosen = local.selection.inner();
        let Some(uid) = chosen.current.clone() else {
            return;
        };
        let origin = chosen.origin.unwrap_or(Origin::Restored);
        let shown = selection::selected(self.selection.state());
        if shown != Some((uid.as_str(), origin)) {
            self.selection.handle(&SelEvent::Choose {
                session_uid: &uid,
                origin,
            });
        }
    }

    /// The level rules with a local source: the runtime is checked while the chat is visible
    /// (and again every 5 s while it is unavailable); the conversations, the transcript and
    /// the models are read once it is ready.
    pub(super) fn evaluate_local(&mut self, now: Time) {
        // A change of person or Environment clears the shown selection (ENV-2); the local
        // conversation shown stays the same one.
        self.show_local_selection();
        let selected = selection::selected(self.selection.state()).map(|s| s.0.to_owned());
        let selected = selected.as_deref();
        let running = selected.is_some_and(|s| self.works.is_running(s));
        {
            let (local, mut ctx) = local_ctx!(self, now);
            let visible = ctx.inputs.visible;
            local
                .admission
                .handle_with_context(&AdmissionEvent::Evaluate { visible }, &mut ctx);
            let may_read = visible && local.admission.inner().ready;
            local
                .sessions
                .handle_with_context(&SessionsEvent::Evaluate { may_read }, &mut ctx);
            let fresh = selected.is_some_and(|s| local.selection.inner().fresh.contains(s));
            let event = HistoryEvent::Evaluate {
                selected,
                may_read,
                fresh,
            };
            local.history.handle_with_context(&event, &mut ctx);
            local
                .catalog
                .handle_with_context(&CatalogEvent::Evaluate { may_read }, &mut ctx);
            let event = ModelEvent::Evaluate {
                selected,
                may_read,
                running,
            };
            local.model.handle_with_context(&event, &mut ctx);
        }
        // The runs' clocks and the queue rules, as on the platform.
        self.evaluate_work(now);
    }

    /// An answer to a request of a local machine.
    pub(super) fn local_answer(&mut self, answer: &Answer, now: Time) {
        let agent = self.local_agent_name();
        let applied = {
            let (local, mut ctx) = local_ctx!(self, now);
            match answer.owner {
                Owner::LocalSessions => {
                    let event = SessionsEvent::Answer {
                        answer,
                        agent: &agent,
                    };
                    local.sessions.handle_with_context(&event, &mut ctx);
                    None
                }
                Owner::LocalHistory => {
                    local
                        .history
                        .handle_with_context(&HistoryEvent::Answer(answer), &mut ctx);
                    let history = local.history.inner();
                    // A reloaded conversation with a message in it is one the runtime knows.
                    if let Some(uid) = history.session_uid.as_deref()
                        && !history.thread.is_empty()
                    {
                        local
                            .model
                            .handle_with_context(&ModelEvent::Known(uid), &mut ctx);
                    }
                    history
                        .session_uid
                        .clone()
                        .filter(|_| history.loaded && !history.live_only)
                }
                Owner::LocalModels => {
                    local
                        .catalog
                        .handle_with_context(&CatalogEvent::Answer(answer), &mut ctx);
                    local
                        .model
                        .handle_with_context(&ModelEvent::Answer(answer), &mut ctx);
                    None
                }
                _ => {
                    local
                        .admission
                        .handle_with_context(&AdmissionEvent::Answer(answer), &mut ctx);
                    None
                }
            }
        };
        // HYD-4 as on the platform: a loaded transcript replaces this page's finished turns of
        // the conversation (they are in it now), and shows again after `clearThread()`. A
        // live-only runtime has none: this page's turns stay.
        if let Some(uid) = applied {
            let (mut ctx, p) = self.ctx(now);
            let work = p.works.entry(&mut ctx, &uid);
            work.thread_cleared = false;
            work.run.handle_with_context(
                &crate::concerns::send::RunEvent::HistoryApplied,
                &mut ctx.work(),
            );
        }
    }

    /// A person's picker change with a local source.
    fn edit_local_model(&mut self, edit: Edit<'_>, now: Time) {
        let selected = selection::selected(self.selection.state()).map(|s| s.0.to_owned());
        let selected = selected.as_deref();
        let (local, mut ctx) = local_ctx!(self, now);
        let listed =
            selected.is_some_and(|s| local.sessions.inner().sessions.iter().any(|r| r.uid == s));
        let catalog = local.catalog.inner().catalog.clone();
        let event = ModelEvent::Edit {
            edit,
            selected,
            listed,
            catalog: catalog.as_deref(),
        };
        local.model.handle_with_context(&event, &mut ctx);
    }

    /// `requestAvailableModels()` (or, with `drop`, `invalidateModelProviderCatalog()`) with a
    /// local source: the catalog is read again once the runtime can be asked.
    fn request_local_catalog(&mut self, drop: bool, now: Time) {
        let (local, mut ctx) = local_ctx!(self, now);
        local
            .catalog
            .handle_with_context(&CatalogEvent::Request { drop }, &mut ctx);
    }

    /// A turn of a local conversation ended: the list and the model are read again, and after
    /// a failure the runtime is checked again (the reference's `onError`).
    pub(super) fn local_turn_ended(&mut self, failed: bool, now: Time) {
        let (local, mut ctx) = local_ctx!(self, now);
        local
            .sessions
            .handle_with_context(&SessionsEvent::Reread, &mut ctx);
        local
            .model
            .handle_with_context(&ModelEvent::TurnEnded, &mut ctx);
        if failed {
            local
                .admission
                .handle_with_context(&AdmissionEvent::Recheck, &mut ctx);
        }
    }

    /// `createAgentSession()` with a local source: a new conversation under a client id (a
    /// UUID from the engine's seeded generator, so runs reproduce), shown at once, with no
    /// transcript to read; its first message goes out under that id (issue 14).
    fn new_local_conversation(&mut self, now: Time) {
        let id = self.io.rng.uuid_v4();
        // The reference asks at once for the chat to be shown.
        if !self.inputs.visible {
            self.io.events.push_back(crate::Event::RequestVisible);
        }
        self.local_page(&id, None, now);
        self.local_selection(now, &LocalSelEvent::Created(&id));
    }

    /// A conversation of this page (started here, or a turn of it starts with `text`): listed
    /// even when the runtime does not list it.
    pub(super) fn local_page(&mut self, uid: &str, text: Option<&str>, now: Time) {
        if self.backend.local.is_none() {
            return;
        }
        let agent = self.local_agent_name();
        let at = crate::timestamp::iso_from_unix_ms(self.io.wall_ms(now));
        let (local, mut ctx) = local_ctx!(self, now);
        let event = SessionsEvent::Page {
            uid,
            text,
            at,
            agent: &agent,
        };
        local.sessions.handle_with_context(&event, &mut ctx);
    }

    /// A first turn of a conversation started here: the runtime must name it.
    pub(super) fn is_new_local_conversation(&self, uid: &str) -> bool {
        self.backend
            .local
            .as_deref()
            .is_some_and(|l| l.selection.inner().fresh.contains(uid))
    }

    /// ADR 099, adr-notes 2: the runtime named the conversation `from` ran in `to`; the new
    /// id replaces the client's everywhere: the selection and its stored copy, the thread, the
    /// run, the queue and its storage key. When the runtime's id already has a turn of its own
    /// here, nothing moves: the conversation keeps the client's id (`Works::rekey`).
    pub(super) fn local_rekey(&mut self, from: &str, to: &str, now: Time) {
        let (mut ctx, p) = self.ctx(now);
        match p.works.rekey(&mut ctx, from, to) {
            Rekeyed::Kept => return,
            Rekeyed::Moved { forget_old: true } => {
                let key = crate::queue::storage_key(from);
                let request = crate::intent::StorageRequest::RemoveQueue { key };
                ctx.io
                    .outbox
                    .push_back(crate::intent::Intent::Storage(request));
            }
            Rekeyed::Moved { forget_old: false } => {}
        }
        {
            let (local, mut ctx) = local_ctx!(self, now);
            local
                .history
                .handle_with_context(&HistoryEvent::Rekey { from, to }, &mut ctx);
            local
                .model
                .handle_with_context(&ModelEvent::Rekey { from, to }, &mut ctx);
            local
                .sessions
                .handle_with_context(&SessionsEvent::Rekey { from, to }, &mut ctx);
        }
        self.local_selection(now, &LocalSelEvent::Rekey { from, to });
    }

    /// `refreshActiveSessionRuntimeAccess()` with a local source, or the chat coming back into
    /// view: check the runtime now.
    pub(super) fn recheck_local(&mut self, now: Time) {
        let (local, mut ctx) = local_ctx!(self, now);
        local
            .admission
            .handle_with_context(&AdmissionEvent::Recheck, &mut ctx);
    }

    /// `refreshSessionDetail()` with a local source: the conversations are read again, and a
    /// transcript that failed to load is tried again.
    fn refresh_local(&mut self, now: Time) {
        let (local, mut ctx) = local_ctx!(self, now);
        local
            .sessions
            .handle_with_context(&SessionsEvent::Reread, &mut ctx);
        local
            .history
            .handle_with_context(&HistoryEvent::Retry, &mut ctx);
    }

    /// `revalidateStaleRuntimeAccess()` with a local source: an unavailable runtime, or one
    /// last checked more than 60 s ago, is checked again.
    fn revalidate_local(&mut self, now: Time) {
        let (local, mut ctx) = local_ctx!(self, now);
        local
            .admission
            .handle_with_context(&AdmissionEvent::Revalidate, &mut ctx);
    }
}

//! What differs between the two ways of reaching an Agent's runtime: through the platform, or
//! a local runtime reached straight (ADR 099). The local Agent's machines live in [`local`].

pub(crate) mod local;
pub(crate) mod platform;

use platform::PlatformParts;

use crate::concerns::ctx::{Ctx, Memory, Reach};
use crate::concerns::environment::EnvEvent;
use crate::concerns::selection::Selection;
use crate::concerns::{catalog, runtime_access};
use crate::deadline::Deadline;
use crate::input::Command;
use crate::inputs::Inputs;
use crate::io::Answer;
use crate::io::Io;
use crate::work::{Rekeyed, Works};
use local::selection::LocalSelEvent;
use statig::blocking::InitializedStateMachine;
use std::sync::Arc;

use crate::failure::{FailureCode, FailureSource, RunFailure};
use crate::message::Message;
use crate::snapshot::ready::Failures;
use crate::snapshot::{Readiness, ReadinessStatus, Snapshot};
use crate::source::LocalSource;
use crate::time::Time;
use local::view::Shown;

/// The two ways of reaching a runtime, side by side: the platform's parts always, the local
/// Agent's while a local source is set.
pub(crate) struct Backend {
    /// The platform-only concerns.
    pub(crate) platform: PlatformParts,
    /// The local Agent's machines (ADR 099), there only while a local source is set.
    pub(crate) local: Option<Box<local::Local>>,
}

impl Backend {
    /// The earliest timer of the backend in use, given the works' (`works`: runs, cancels and
    /// the writer watch, on either backend) and OI-4's "taking longer" (`overdue`, read only
    /// for the platform).
    pub(crate) fn deadline(
        &self,
        inputs: &Inputs,
        works: Option<Deadline>,
        overdue: impl FnOnce() -> Option<Deadline>,
    ) -> Option<Deadline> {
        // The local parts exist exactly while a local source is set (`set_source`, then
        // `reopen`); every drain ends here, so the tests check it at every step.
        debug_assert_eq!(self.local.is_some(), inputs.source.is_some());
        match reach(inputs) {
            // ADR 099: the local runtime's re-check while the chat is visible.
            Reach::Local(_) => {
                let recheck = self
                    .local
                    .as_deref()
                    .and_then(|local| local.admission.inner().deadline())
                    .filter(|_| inputs.visible);
                [recheck, works].into_iter().flatten().min()
            }
            Reach::Platform => {
                let platform = &self.platform;
                let runtime = runtime_access::deadline(
                    platform.runtime.inner(),
                    platform.runtime.state(),
                    inputs.page_hidden,
                );
                let catalog = catalog::deadline(platform.catalog.state());
                [runtime, catalog, works, overdue()]
                    .into_iter()
                    .flatten()
                    .min()
            }
        }
    }
}

impl Backend {
    /// The snapshot as the backend in use shows it: the platform's view as it stands, or the
    /// local parts filling it (`selected`: the conversation shown; `opened_ms`: when the engine
    /// started, on the wall clock).
    pub(crate) fn fill(
        &self,
        inputs: &Inputs,
        selected: Option<&str>,
        opened_ms: i64,
        snapshot: Snapshot,
    ) -> Snapshot {
        match (reach(inputs), self.local.as_deref()) {
            (Reach::Local(source), Some(local)) => {
                let shown = Shown {
                    display_name: source.display_name(),
                    visible: inputs.visible,
                    selected,
                    opened_ms,
                };
                local.fill(&shown, snapshot)
            }
            _ => snapshot,
        }
    }

    /// `activeSessionReadiness` with a local source (the send guard reads it, SND-2); `None`
    /// on the platform, whose view computes it.
    pub(crate) fn local_readiness(
        &self,
        inputs: &Inputs,
        selected: Option<&str>,
    ) -> Option<Readiness> {
        let Reach::Local(_) = reach(inputs) else {
            return None;
        };
        let readiness = match self.local.as_deref() {
            Some(local) => local.readiness(inputs.visible, selected),
            None => Readiness {
                session_id: None,
                status: ReadinessStatus::Idle,
                detail_ready: false,
                history_ready: false,
                insights_ready: false,
                error: None,
            },
        };
        Some(readiness)
    }

    /// The transcript the backend in use has read for the session shown, and its revision:
    /// the platform's history, or the local conversation's.
    pub(crate) fn history(&self, inputs: &Inputs) -> (&[Arc<Message>], u64) {
        match reach(inputs) {
            Reach::Local(_) => self.local.as_deref().map_or((&[], 0), |l| {
                let history = l.history.inner();
                (history.thread.as_slice(), history.thread_revision)
            }),
            Reach::Platform => {
                let hydration = self.platform.hydration.inner();
                (hydration.thread.as_slice(), hydration.thread_revision)
            }
        }
    }

    /// The typed failures behind `sendReadiness`: the platform view's (`platform`), or, with a
    /// local source, none but that no Environment is needed.
    pub(crate) fn failures<'a>(
        &self,
        inputs: &Inputs,
        platform: impl FnOnce() -> Failures<'a>,
    ) -> Failures<'a> {
        match reach(inputs) {
            Reach::Local(_) => Failures {
                local: true,
                ..Default::default()
            },
            Reach::Platform => platform(),
        }
    }

    /// The send guard's last word, once the session is ready (SND-2): a local runtime that has
    /// not passed its checks takes no message; on the platform, the session's detail must have
    /// loaded (a local conversation has no detail record).
    pub(crate) fn refusal(&self, inputs: &Inputs, session_uid: &str) -> Option<RunFailure> {
        match reach(inputs) {
            Reach::Local(_) => self.local.as_deref()?.refusal(),
            Reach::Platform => {
                let hydration = self.platform.hydration.inner();
                let loaded = hydration.session_uid.as_deref() == Some(session_uid)
                    && hydration.detail.value().is_some();
                (!loaded).then(|| {
                    RunFailure::from_source(
                        FailureCode::SessionDetailMissing,
                        FailureSource::GUARD,
                        "The session details are not loaded yet. Wait for them before sending.",
                    )
                })
            }
        }
    }

    /// The reasoning effort a turn's body carries: the picker's on the platform; none for a
    /// local runtime, which gets its level with the session's model (`PUT
    /// /api/chat/session-model`) while the turn's `runConfig` stays the chat runtime's own.
    pub(crate) fn turn_effort(&self, inputs: &Inputs) -> Option<String> {
        match reach(inputs) {
            Reach::Local(_) => None,
            Reach::Platform => self
                .platform
                .picker
                .inner()
                .composer_values()
                .thinking
                .clone(),
        }
    }

    /// The Agent name of a session, for notices (OI-6): the local Agent's, or on the platform
    /// the session's record's, else its list row's.
    pub(crate) fn agent_name_of(&self, inputs: &Inputs, session_uid: &str) -> Option<String> {
        if let Reach::Local(_) = reach(inputs) {
            return Some(self.local_agent_name(inputs));
        }
        let from_detail = self
            .platform
            .hydration
            .inner()
            .detail
            .value()
            .filter(|r| r.uid == session_uid)
            .and_then(|r| r.agent_name.clone());
        from_detail.or_else(|| {
            self.platform
                .env
                .inner()
                .sessions()
                .iter()
                .find(|s| s.uid == session_uid)
                .and_then(|s| s.agent_name.clone())
        })
    }

    /// Another runtime is reached: the old local parts close (each machine's exit aborts its
    /// requests) and, for a local source, new ones open.
    pub(crate) fn reopen(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(old) = self.local.as_deref_mut() {
            old.close(ctx);
        }
        self.local = ctx
            .reach
            .source()
            .is_some()
            .then(|| Box::new(local::Local::new(ctx)));
    }

    /// The local Agent's name: the source's, until the runtime names it.
    pub(crate) fn local_agent_name(&self, inputs: &Inputs) -> String {
        let display_name = reach(inputs).source().map_or("", |s| s.display_name());
        self.local
            .as_deref()
            .map_or_else(|| display_name.to_owned(), |l| l.agent_name(display_name))
    }
}

/// What the engine lends the backend beside its own parts: a machine context, and the two
/// concerns both backends share (the session selected, and the sessions' work).
pub(crate) struct Lent<'a> {
    pub(crate) ctx: Ctx<'a>,
    pub(crate) selection: &'a mut InitializedStateMachine<Selection>,
    pub(crate) works: &'a mut Works,
}

/// The engine's inputs, commands and answers, handed to the backend in use.
impl Backend {
    /// A command: the local parts carry out the ones that mean something else with a local
    /// source (`None` back); every other (all of them on the platform) goes back to the
    /// engine's own handling.
    pub(crate) fn command(&mut self, command: Command, lent: &mut Lent<'_>) -> Option<Command> {
        match self.local.as_deref_mut() {
            Some(local) => local.command(command, lent),
            None => Some(command),
        }
    }

    /// The runtime reached has changed and the scope with it (ENV-2, after
    /// [`Backend::reopen`]): a local source's parts start choosing the conversation shown.
    pub(crate) fn opened(&mut self, lent: &mut Lent<'_>) {
        if let Some(local) = self.local.as_deref_mut() {
            local.select(&LocalSelEvent::Start, lent);
        }
    }

    /// The chat came back into view: a local runtime is checked again (adr-notes 5); on the
    /// platform the latest-sessions list is read again (OI-26, OI-7; not for a launched
    /// session: the settle loop does not want the read then).
    pub(crate) fn came_into_view(&mut self, ctx: &mut Ctx<'_>) {
        match self.local.as_deref_mut() {
            Some(local) => local.recheck(ctx),
            None => self
                .platform
                .env
                .handle_with_context(&EnvEvent::Reread, ctx),
        }
    }

    /// A new `requestedSessionId`: with a local source that conversation is shown; on the
    /// platform, OI-14's rules choose it.
    pub(crate) fn requested(&mut self, id: &str, lent: &mut Lent<'_>) {
        match self.local.as_deref_mut() {
            Some(local) => local.select(&LocalSelEvent::Requested(id), lent),
            None => self.platform.choose_requested(id, lent),
        }
    }

    /// The storage port's answer for the local conversation shown (nothing on the platform).
    pub(crate) fn stored_selection(&mut self, key: &str, uid: Option<&str>, lent: &mut Lent<'_>) {
        if let Some(local) = self.local.as_deref_mut() {
            let event = LocalSelEvent::Stored {
                key,
                session_uid: uid,
            };
            local.select(&event, lent);
        }
    }

    /// One settle round of the local parts' level rules, instead of the platform's (ADR 099):
    /// false when the runtime is reached through the platform, whose rules the engine runs.
    pub(crate) fn local_round(&mut self, lent: &mut Lent<'_>) -> bool {
        let Some(local) = self.local.as_deref_mut() else {
            return false;
        };
        local.evaluate(lent);
        true
    }

    /// An answer to a request of a local machine (dropped when the local parts have closed).
    pub(crate) fn local_answer(&mut self, answer: &Answer, lent: &mut Lent<'_>) {
        if let Some(local) = self.local.as_deref_mut() {
            local.answer(answer, lent);
        }
    }

    /// A turn or a stop ended: the local parts read the runtime's conversations again (ADR
    /// 099); the platform has nothing to do here.
    pub(crate) fn turn_ended(&mut self, failed: bool, ctx: &mut Ctx<'_>) {
        if let Some(local) = self.local.as_deref_mut() {
            local.turn_ended(failed, ctx);
        }
    }

    /// ADR 099, adr-notes 2: the runtime named the conversation `from` ran in `to`; the new
    /// id replaces the client's everywhere: the selection and its stored copy, the thread, the
    /// run, the queue and its storage key. When the runtime's id already has a turn of its own
    /// here, nothing moves: the conversation keeps the client's id (`Works::rekey`).
    pub(crate) fn rekey(&mut self, from: &str, to: &str, lent: &mut Lent<'_>) {
        match lent.works.rekey(&mut lent.ctx, from, to) {
            Rekeyed::Kept => return,
            Rekeyed::Moved { forget_old: true } => {
                let key = crate::queue::storage_key(from);
                let request = crate::intent::StorageRequest::RemoveQueue { key };
                let intent = crate::intent::Intent::Storage(request);
                lent.ctx.io.outbox.push_back(intent);
            }
            Rekeyed::Moved { forget_old: false } => {}
        }
        if let Some(local) = self.local.as_deref_mut() {
            local.rekey(from, to, lent);
        }
    }

    /// A conversation of this page (a turn of it starts with `text`): a local runtime's list
    /// shows it even when the runtime does not (no-op on the platform).
    pub(crate) fn page(&mut self, uid: &str, text: Option<&str>, ctx: &mut Ctx<'_>) {
        if let Some(local) = self.local.as_deref_mut() {
            local.page(uid, text, ctx);
        }
    }

    /// A first turn of a local conversation started here: the runtime must name it.
    pub(crate) fn is_new_conversation(&self, uid: &str) -> bool {
        self.local
            .as_deref()
            .is_some_and(|l| l.selection.inner().fresh.contains_key(uid))
    }

    /// The local runtime lists the conversation as working (a turn this engine did not start,
    /// such as one from before a reload): a stop sends its cancel.
    pub(crate) fn listed_working(&self, uid: &str) -> bool {
        self.local.as_deref().is_some_and(|l| l.listed_working(uid))
    }
}

/// `Input::Source`: the source is set; true when another runtime is reached (another base,
/// or a source set or cleared: a new scope), false when only its display name changed. When
/// true, the caller must [`Backend::reopen`] before anything reads the local parts.
pub(crate) fn set_source(inputs: &mut Inputs, source: Option<LocalSource>) -> bool {
    let moved = source.as_ref().map(LocalSource::base_url)
        != inputs.source.as_ref().map(LocalSource::base_url);
    inputs.source = source;
    moved
}

/// How the runtime is reached for these inputs: the one place that reads the source.
pub(crate) fn reach(inputs: &Inputs) -> Reach<'_> {
    match &inputs.source {
        Some(source) => Reach::Local(source),
        None => Reach::Platform,
    }
}

/// A machine's context, with how the runtime is reached read off the inputs here.
pub(crate) fn ctx<'a>(
    now: Time,
    inputs: &'a Inputs,
    io: &'a mut Io,
    memory: &'a mut Memory,
) -> Ctx<'a> {
    Ctx {
        now,
        inputs,
        io,
        memory,
        reach: reach(inputs),
    }
}

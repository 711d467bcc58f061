//! What differs between the two ways of reaching an Agent's runtime: through the platform, or
//! a local runtime reached straight (ADR 099). The local Agent's machines live in [`local`].

pub(crate) mod local;
pub(crate) mod platform;

use platform::PlatformParts;

use crate::concerns::ctx::{Ctx, Memory, Reach};
use crate::concerns::{catalog, runtime_access};
use crate::deadline::Deadline;
use crate::inputs::Inputs;
use crate::io::Io;
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

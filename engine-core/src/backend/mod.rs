//! What differs between the two ways of reaching an Agent's runtime: through the platform, or
//! a local runtime reached straight (ADR 099). The local Agent's machines live in [`local`].

pub(crate) mod local;
pub(crate) mod platform;

use platform::PlatformParts;

use crate::deadline::Deadline;
use crate::inputs::Inputs;
use crate::io::Io;
use crate::machines::ctx::{Ctx, Memory, Reach};
use crate::machines::{catalog, runtime_access};
use crate::time::Time;

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

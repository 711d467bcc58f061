//! What differs between the two ways of reaching an Agent's runtime: through the platform, or
//! a local runtime reached straight (ADR 099). The local Agent's machines live in [`local`].

pub(crate) mod local;
pub(crate) mod platform;

use platform::PlatformParts;

/// The two ways of reaching a runtime, side by side: the platform's parts always, the local
/// Agent's while a local source is set.
pub(crate) struct Backend {
    /// The platform-only concerns.
    pub(crate) platform: PlatformParts,
    /// The local Agent's machines (ADR 099), there only while a local source is set.
    pub(crate) local: Option<Box<local::Local>>,
}

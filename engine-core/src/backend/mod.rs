//! What differs between the two ways of reaching an Agent's runtime: through the platform, or
//! a local runtime reached straight (ADR 099). The local Agent's machines live in [`local`].

pub(crate) mod local;

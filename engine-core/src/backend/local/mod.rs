//! The local Agent's parts (ADR 099; `docs/local-agents.md`): one machine per concern of a
//! runtime reached straight, without the platform: whether it can take a message
//! ([`admission`]), its conversations ([`sessions`]), the one shown ([`selection`]) and its
//! transcript ([`history`]), its model catalog ([`catalog`]) and the model it holds
//! ([`models`]).

pub(crate) mod admission;
pub(crate) mod catalog;
pub(crate) mod history;
pub(crate) mod models;
pub(crate) mod selection;
pub(crate) mod sessions;

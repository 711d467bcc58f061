//! engine-core: a sans-IO engine for agent chat sessions.
pub mod api;
pub mod message;

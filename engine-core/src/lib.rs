#![doc = include_str!("../README.md")]

pub mod api;
mod config;
mod engine;
mod event;
mod input;
mod inputs;
mod intent;
mod io;
mod machines;
pub mod message;
mod response;
mod rng;
mod snapshot;
mod timestamp;
mod view;

pub use config::{Config, ConfigError};
pub use engine::Engine;
pub use event::{Event, Notice, NoticeVariant};
pub use input::{
    AgentRecord, Command, DefaultSession, Input, LaunchTarget, Person, Secret, SessionSummary,
    SourceStatus,
};
pub use intent::{
    AgentFilter, ApiCall, BodyMode, GetOrCreateBody, Header, HttpRequest, Intent, InvalidId,
    Method, RequestId, StorageRequest, Target, check_id, segment,
};
pub use machines::selection::Origin;
pub use response::{FailureKind, ResponseHead, TransportFailure};
pub use snapshot::{
    DefaultSessionStatus, DetailSnapshot, DetailStatus, Readiness, ReadinessStatus, Snapshot,
};

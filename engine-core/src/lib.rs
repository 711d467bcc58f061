#![doc = include_str!("../README.md")]

pub mod api;
mod appended;
mod backend;
mod concerns;
mod config;
mod deadline;
mod engine;
mod event;
mod failure;
mod http;
mod input;
mod inputs;
mod intent;
mod io;
mod json;
pub mod message;
mod model;
mod queue;
mod queue_storage;
mod response;
mod revision;
mod rng;
mod snapshot;
mod source;
pub mod stream;
mod time;
mod timestamp;
pub mod trace;
mod view;
mod work;

pub use appended::{AppendKind, AppendMerger, AppendedText, Merged};
pub use config::{Config, ConfigError, HostConfig, json_error_text};
pub use deadline::TimeoutReason;
pub use engine::Engine;
pub use event::{Event, Notice, NoticeVariant};
pub use failure::{FailureCode, FailureSource, RunFailure, is_labelled, labelled};
pub use http::{
    BodyMode, Header, HttpRequest, InvalidId, Method, Target, UrlRewrite, check_id,
    rewrite_on_platform, segment,
};
pub use input::{
    AgentRecord, Command, DefaultSession, Input, LaunchTarget, Person, SessionSummary, SourceStatus,
};
pub use intent::{AgentFilter, ApiCall, GetOrCreateBody, Intent, RequestId, StorageRequest};
pub use json::Json;
pub use model::{Origin, Secret};
pub use queue::{
    Hold, HoldReason, QUEUE_LIMIT, QueueRow, QueueRowStatus, QueueTexts, QueuedMessage,
};
pub use response::{FailureKind, ResponseHead, TransportFailure};
pub use revision::{Revisions, ThreadView};
pub use snapshot::composer::{ComposerState, ComposerStatus};
pub use snapshot::ready::{NotReady, NotReadyCode, SendReadiness, Waiting};
pub use snapshot::{
    AgentIcon, ArchivedSession, Capabilities, DefaultSessionStatus, DetailSnapshot, DetailStatus,
    IconImage, IconStatus, LastUsedModel, MissingModelFields, Readiness, ReadinessStatus,
    RunStatus, RunStatusView, SessionModelSelectionRequest, Snapshot,
};
pub use source::{LocalSource, SourceError};
pub use stream::{AnswerStream, StreamDelta, StreamOutcome, StreamStats};
pub use time::{InstantClock, Time};

/// `docs/own-loop.md`, whose Rust snippet ("Linking the core into your own loop") is
/// compiled and run with the crate's doc tests, so it cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../../docs/own-loop.md")]
pub struct OwnLoopGuide;

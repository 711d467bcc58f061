//! One statig machine per concern (`removal` is a plain struct: its requests have no states).
//! Machines never call each other: they talk through [`Signal`]s that the `Engine` relays until
//! nothing changes.

pub(crate) mod cancel;
pub(crate) mod catalog;
pub(crate) mod confirm;
pub(crate) mod ctx;
pub(crate) mod default_session;
pub(crate) mod environment;
pub(crate) mod explorer;
pub(crate) mod hydration;
pub(crate) mod icons;
pub(crate) mod model_choice;
pub(crate) mod opening;
pub(crate) mod picker;
pub(crate) mod removal;
pub(crate) mod runtime_access;
pub(crate) mod selection;
pub(crate) mod send;

use crate::api::ApiError;
use crate::input::SessionSummary;

/// A fact one machine tells the others, relayed by the engine's settle loop.
#[derive(Debug, Clone)]
pub(crate) enum Signal {
    /// Put this session into the current list (a created, opened or loaded session; REQ-3).
    Upsert(SessionSummary),
    /// A session was opened or created for an action or the launch target.
    Opened {
        session: SessionSummary,
        launched: bool,
        listed: bool,
    },
    /// The selected session's detail loaded.
    DetailLoaded { session_uid: String },
    /// The selected session's detail read failed.
    DetailFailed {
        session_uid: String,
        error: ApiError,
    },
    /// Set `sessionNotice` about this session; dropped when it is no longer selected (SHR-7).
    Notice { session_uid: String, text: String },
    /// A local runtime named the conversation a turn ran in (ADR 099): `to` replaces `from`
    /// everywhere (selection, thread, run, queue and its storage).
    Rekey { from: String, to: String },
    /// A session was archived or deleted through the engine.
    Removed { session_uid: String, archived: bool },
    /// A send met this decision: it is the session's decision now (SND-9).
    Publish {
        session_uid: String,
        decision: Box<runtime_access::Decision>,
    },
    /// A turn ended (OI-20: the queue follows).
    RunEnded(Box<send::TurnEnded>),
    /// The run cancel was accepted (OI-19).
    CancelAccepted { session_uid: String },
    /// The run cancel failed (OI-19).
    CancelFailed { session_uid: String, text: String },
    /// A loaded history replaced the selected session's thread (HYD-4).
    HistoryApplied { session_uid: String },
    /// A creation got the model-required refusal (MOD-4).
    ModelRequired {
        origin: model_choice::Origin,
        agent_uid: String,
        agent_label: Option<String>,
        missing: crate::snapshot::MissingModelFields,
    },
    /// The default session was created with a chosen model (MOD-12).
    DefaultCreated {
        key: crate::inputs::DefaultKey,
        session: SessionSummary,
        listed: bool,
    },
    /// The default session's creation failed after a model choice, or the choice was
    /// cancelled (MOD-14, MOD-16).
    DefaultFailed {
        key: crate::inputs::DefaultKey,
        message: String,
    },
    /// A default-session model choice was dropped unanswered (a change of combination).
    DefaultAbandoned { key: crate::inputs::DefaultKey },
    /// The picker takes this choice once this created session is selected (MOD-13).
    PickerChoice {
        session_uid: String,
        choice: crate::api::ModelChoice,
    },
    /// A model change was stored: the session's canonical record is this one now (CAT-18).
    RecordUpdated(Box<crate::api::SessionRecord>),
}

/// statig's `after_transition` hook for a machine driven with a [`ctx::Ctx`] (or with the context
/// named second: [`ctx::WorkCtx`] for a session's run and cancel), named in its
/// `#[state_machine(after_transition = "Self::after_transition")]`: a transition that changed
/// the state counts as a change (the settle loop's fixed point, [`crate::Revisions`]).
macro_rules! count_transitions {
    ($machine:ty) => {
        crate::concerns::count_transitions!($machine, Ctx);
    };
    ($machine:ty, $context:ident) => {
        impl $machine {
            fn after_transition(
                &mut self,
                source: &State,
                target: &State,
                context: &mut crate::concerns::ctx::$context<'_>,
            ) {
                context.transitioned(source, target);
            }
        }
    };
}
pub(crate) use count_transitions;

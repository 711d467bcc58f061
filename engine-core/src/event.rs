//! Edge-triggered facts for the host (the spec's callbacks). Level state is in the snapshot.

use serde::Serialize;

use crate::failure::{FailureCode, RunFailure};
use crate::stream::StreamDelta;

/// The variant of a `notify` notice (OI-30).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NoticeVariant {
    /// Information.
    Info,
    /// Success.
    Success,
    /// An error.
    Error,
}

/// A short notice for `notify`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Notice {
    /// The title.
    pub title: String,
    /// The description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The variant.
    pub variant: NoticeVariant,
}

/// An edge-triggered fact. Drain with [`crate::Engine::poll_event`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// `notify(notice)`.
    Notify(Notice),
    /// `onRequestVisible()`: the application should show the chat.
    RequestVisible,
    /// `onRequestedSessionRemoved(sessionUid)`: the requested session was archived.
    RequestedSessionRemoved {
        /// The archived session.
        session_uid: String,
    },
    /// A piece of a streamed answer, in order; the whole message is in the snapshot's thread.
    Answer {
        /// The session whose answer it is.
        session_uid: String,
        /// What changed.
        delta: StreamDelta,
    },
    /// A message the person wrote did not go out: put its text back (nothing written is lost).
    MessageNotSent {
        /// The session it was for, when one was selected.
        session_uid: Option<String>,
        /// The text.
        text: String,
        /// Why, as shown to the person (OI-6).
        reason: String,
        /// Why, as a stable code.
        code: FailureCode,
    },
    /// A turn failed: its code and text, as the snapshot's `runFailure` shows them for the
    /// session on screen. `sent` tells whether its message request had gone out.
    RunFailed {
        /// The session whose turn it was.
        session_uid: String,
        /// The code and the text.
        failure: RunFailure,
        /// The message request went out (the Agent may have the message).
        sent: bool,
    },
    /// `editQueuedMessage(id)`: the row left the queue; its text is handed back.
    QueuedMessageReturned {
        /// The session.
        session_uid: String,
        /// The row.
        id: String,
        /// Its text.
        text: String,
    },
}

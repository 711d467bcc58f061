//! What the driver thread receives (from the host, from the transport's requests), in a module
//! of its own so the driver and the transport both use it without using each other.

use bytes::Bytes;
use engine_core::{Input, RequestId, ResponseHead, TransportFailure};

/// What the driver receives: host input, request completions, and the stop request.
#[derive(Debug)]
pub(crate) enum Msg {
    /// A host input or command.
    Input(Input),
    /// The head of request `id`.
    Head(RequestId, ResponseHead),
    /// A piece of the body of request `id`.
    Chunk(RequestId, Bytes),
    /// The end of the body of request `id`.
    End(RequestId),
    /// Request `id` failed below HTTP.
    Failure(RequestId, TransportFailure),
    /// The recorded trace, when recording.
    Trace(std::sync::mpsc::Sender<Option<String>>),
    /// Answered once every earlier message was taken and its snapshot published.
    Sync(std::sync::mpsc::Sender<()>),
    /// Stop the driver.
    Shutdown,
}

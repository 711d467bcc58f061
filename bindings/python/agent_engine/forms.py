"""The forms of the values the engine hands over as JSON: ``OtherEvent.data`` (an event other
than a text, reasoning or tool-input delta) and ``StorageIntent.request`` (a request to the
host's storage port). They are the trace format's (``spec-tests/TRACES.md``), with serde's
names; ``engine-core/src/event.rs`` and ``engine-core/src/intent.rs`` are their source, and
``tests/test_forms.py`` fails when the two drift apart.

Each event's ``event`` key, and each storage request's ``op`` key, tells which form it is::

    for event in engine.drain_events():
        if isinstance(event, OtherEvent) and event.data["event"] == "message_not_sent":
            composer.text = event.data["text"]  # put it back: nothing written is lost
"""

from __future__ import annotations

from typing import Any, Literal, Optional, TypedDict, Union

__all__ = [
    "AnswerEvent",
    "EventData",
    "FailureData",
    "LoadQueueRequest",
    "LoadSelectionRequest",
    "LoadSessionsRequest",
    "MessageNotSentEvent",
    "NotifyEvent",
    "QueuedMessageReturnedEvent",
    "RemoveQueueRequest",
    "RequestVisibleEvent",
    "RequestedSessionRemovedEvent",
    "RunFailedEvent",
    "SaveQueueRequest",
    "SaveSelectionRequest",
    "SaveSessionsRequest",
    "StorageRequest",
]


class _NotifyRequired(TypedDict):
    event: Literal["notify"]
    #: The notice's title.
    title: str
    #: ``info``, ``success`` or ``error``.
    variant: Literal["info", "success", "error"]


class NotifyEvent(_NotifyRequired, total=False):
    """The spec's ``notify(notice)``: a short notice to show."""

    #: The notice's description, when it has one.
    description: str


class RequestVisibleEvent(TypedDict):
    """``onRequestVisible()``: the application should show the chat."""

    event: Literal["request_visible"]


class RequestedSessionRemovedEvent(TypedDict):
    """``onRequestedSessionRemoved(sessionUid)``: the requested session was archived."""

    event: Literal["requested_session_removed"]
    session_uid: str


class AnswerEvent(TypedDict):
    """A piece of a streamed answer other than a text, reasoning or tool-input delta (those
    are ``AnswerDelta``): the message id, a part opened or changed whole, the metadata...
    ``delta["type"]`` names it; the whole message is in the snapshot's thread."""

    event: Literal["answer"]
    session_uid: str
    delta: dict[str, Any]


class MessageNotSentEvent(TypedDict):
    """A message the person wrote did not go out: put ``text`` back in the composer."""

    event: Literal["message_not_sent"]
    #: The session it was for, when one was selected.
    session_uid: Optional[str]
    text: str
    #: Why, as shown to the person.
    reason: str
    #: Why, as a stable code (``docs/interpretations.md``, "Failure codes").
    code: str


class _FailureRequired(TypedDict):
    #: The stable code (``agent_http_error``, ...).
    code: str
    #: The text, as ``runStatusDetail`` shows it: "Source: {label}. {message}" when it has a
    #: source.
    message: str


class FailureData(_FailureRequired, total=False):
    """A turn's failure: its stable code, its text (as ``runStatusDetail`` shows it) and where
    it comes from."""

    #: The source key (``assistant_backend_http``, an Agent's own ``error_source``, ...);
    #: absent for a stop.
    source: str


class RunFailedEvent(TypedDict):
    """A turn failed; ``sent`` tells whether its message request had gone out."""

    event: Literal["run_failed"]
    session_uid: str
    failure: FailureData
    sent: bool


class QueuedMessageReturnedEvent(TypedDict):
    """``editQueuedMessage(id)``: the row left the queue; its text is handed back."""

    event: Literal["queued_message_returned"]
    session_uid: str
    id: str
    text: str


#: What ``OtherEvent.data`` holds.
EventData = Union[
    NotifyEvent,
    RequestVisibleEvent,
    RequestedSessionRemovedEvent,
    AnswerEvent,
    MessageNotSentEvent,
    RunFailedEvent,
    QueuedMessageReturnedEvent,
]


class LoadSessionsRequest(TypedDict):
    """Read the session list stored under ``key``; answer with the input
    ``{"input": "stored_sessions_loaded", "value": {"key": key, "sessions": ...}}``."""

    op: Literal["load"]
    key: str


class SaveSessionsRequest(TypedDict):
    """Store this session list under ``key`` (replacing what was there)."""

    op: Literal["save"]
    key: str
    #: Session summaries (camelCase keys: ``uid``, ``agentUid``, ...).
    sessions: list[dict[str, Any]]


class LoadQueueRequest(TypedDict):
    """Read a session's stored message queue; answer with the input
    ``{"input": "stored_queue_loaded", "value": {"key": key, "rows": ...}}``."""

    op: Literal["load_queue"]
    key: str


class SaveQueueRequest(TypedDict):
    """Store a session's message queue (replacing what was there)."""

    op: Literal["save_queue"]
    key: str
    #: The rows, first to leave first (``id``, ``text``, ``createdAt``).
    rows: list[dict[str, Any]]


class RemoveQueueRequest(TypedDict):
    """The session's queue emptied: remove its stored copy."""

    op: Literal["remove_queue"]
    key: str


class LoadSelectionRequest(TypedDict):
    """Read the conversation a local source showed last; answer with the input
    ``{"input": "stored_selection_loaded", "value": {"key": key, "session_uid": ...}}``."""

    op: Literal["load_selection"]
    key: str


class SaveSelectionRequest(TypedDict):
    """Store the conversation a local source shows (replacing what was there)."""

    op: Literal["save_selection"]
    key: str
    session_uid: str


#: What ``StorageIntent.request`` holds.
StorageRequest = Union[
    LoadSessionsRequest,
    SaveSessionsRequest,
    LoadQueueRequest,
    SaveQueueRequest,
    RemoveQueueRequest,
    LoadSelectionRequest,
    SaveSelectionRequest,
]

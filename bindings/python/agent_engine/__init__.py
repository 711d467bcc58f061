"""The agent chat engine for Python hosts.

``Engine`` is the deterministic core (Rust, through PyO3): hand it inputs, commands, the
answers of the requests it asks for and timer ticks, each with the host's time in
microseconds; take its intents, events and timeout; read its snapshot. It does no I/O.
``agent_engine.shell.Shell`` is an asyncio host on httpx that carries the intents out.

The drive contract: after every ``handle_*`` call, drain ``poll_intent()`` and
``poll_event()`` until they return ``None``, then read ``poll_timeout()``.

Inputs and commands are the trace format's JSON (``spec-tests/TRACES.md``), as dicts::

    engine.handle_input({"input": "is_visible", "value": True}, now_us)
    engine.command({"command": "send_message", "text": "Hello"}, now_us)
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Optional, Union

from ._native import AnswerDelta, EngineError, EnginePoisoned, NativeEngine, __version__
from .forms import EventData, StorageRequest
from .snapshot import Snapshot

__all__ = [
    "AbortIntent",
    "AnswerDelta",
    "Engine",
    "EngineError",
    "EnginePoisoned",
    "EventData",
    "HttpIntent",
    "NotReadyError",
    "NotReadyTimeout",
    "Intent",
    "OtherEvent",
    "Event",
    "Revisions",
    "Snapshot",
    "StorageIntent",
    "StorageRequest",
    "__version__",
]


#: ``sendReadiness.waitingFor``'s texts, as the engine gives them (``Waiting::text`` in
#: ``engine-core/src/snapshot/ready.rs``; ``tests/test_ready.py`` checks they are the same).
WAITING_TEXTS: dict[str, str] = {
    "sessions": "Loading the sessions...",
    "default_session": "Opening the default session...",
    "session": "Loading the session...",
    "runtime_access": "Checking that the Agent is ready...",
    "runtime_start": "The Agent's runtime is starting...",
}


class NotReadyError(Exception):
    """No message can be sent, and why: what ``Shell.wait_ready`` raises.

    ``code`` is the snapshot's ``sendReadiness.code`` (``sessions_failed``,
    ``default_session_failed``, ``no_session``, ``not_visible``, ...; the shell's own
    ``timed_out`` and ``closed``), ``message`` the text to show (``str(error)`` too),
    ``failure`` the failing read as a dict (``{"kind": "http", "operation": "session_list",
    "status": 401, "server_message": "..."}``, or ``{"kind": "transport", "message": ...}`` for
    a closed port), ``status`` its HTTP status, and ``notice_code`` the runtime notice's code."""

    def __init__(
        self,
        code: str,
        message: str,
        failure: Optional[dict[str, Any]] = None,
        notice_code: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.failure = failure
        self.notice_code = notice_code
        status = failure.get("status") if isinstance(failure, dict) else None
        #: The HTTP status of the failing read, when it had one.
        self.status: Optional[int] = status if isinstance(status, int) else None

    @classmethod
    def of(cls, readiness: dict[str, Any]) -> "NotReadyError":
        """The cause a ``sendReadiness`` of state ``blocked`` gives."""
        return cls(
            str(readiness.get("code")),
            str(readiness.get("message", "")),
            readiness.get("failure"),
            readiness.get("noticeCode"),
        )


# asyncio's own TimeoutError is the builtin's from Python 3.11 on, another class before.
_TIMEOUTS = tuple(dict.fromkeys((TimeoutError, asyncio.TimeoutError)))


class NotReadyTimeout(NotReadyError, *_TIMEOUTS):  # type: ignore[misc]
    """A wait that ran out (``code`` ``timed_out``), its message naming what the engine still
    waited for. Also a ``TimeoutError`` (and ``asyncio.TimeoutError``): code that caught the
    timeout of ``wait_for`` catches this one too."""


@dataclass(frozen=True)
class HttpIntent:
    """Send this request; feed its answer back under ``id``."""

    id: int
    method: str
    #: The absolute address with its query.
    url: str
    #: The headers to send, credentials included (send them; never log them: they are left
    #: out of ``repr``).
    headers: list[tuple[str, str]] = field(repr=False)
    #: The body, when there is one (JSON bytes).
    body: Optional[bytes]
    #: The answer streams: feed its body pieces as they come.
    streamed: bool
    #: Where it goes: ``"platform"``, ``"agent_runtime"`` or ``"local"`` (a local runtime).
    target: str = "platform"


@dataclass(frozen=True)
class AbortIntent:
    """Drop request ``id`` if it still runs (a late answer is ignored anyway)."""

    id: int


@dataclass(frozen=True)
class StorageIntent:
    """A request to the host's storage, to carry out in the order given: ``request["op"]`` is
    ``load``, ``save``, ``load_queue``, ``save_queue``, ``remove_queue``, ``load_selection`` or
    ``save_selection`` (``agent_engine.forms`` types each); a load is answered with an input
    (``stored_sessions_loaded``, ``stored_queue_loaded``, ``stored_selection_loaded``)."""

    request: StorageRequest


Intent = Union[HttpIntent, AbortIntent, StorageIntent]


@dataclass(frozen=True)
class OtherEvent:
    """Any other event, as JSON: ``data["event"]`` is ``notify``, ``request_visible``,
    ``requested_session_removed``, ``message_not_sent``, ``run_failed``,
    ``queued_message_returned`` or ``answer`` (a delta other than text, reasoning and tool
    input); ``agent_engine.forms`` types each."""

    data: EventData


Event = Union[AnswerDelta, OtherEvent]


@dataclass(frozen=True)
class Revisions:
    """Counters that move when their part of the snapshot changes."""

    #: Every snapshot value not covered by the other counters.
    state: int
    #: The run-status channel.
    run: int
    #: The thread's finished messages, and whether an answer streams.
    thread: int
    #: The streaming answer's content.
    streaming: int


class Engine:
    """One engine. Use it from one thread (the event loop's). A value it refuses raises
    ``EngineError`` (a body piece that is not bytes, ``TypeError``); a panic inside it (a
    defect) raises ``EnginePoisoned``, which is not an ``EngineError``, and the engine takes
    no more calls."""

    def __init__(
        self,
        platform_base_url: str,
        now_us: int,
        *,
        seed: int = 0,
        start_unix_ms: int = 0,
        record: bool = False,
        max_body_bytes: Optional[int] = None,
        max_answer_bytes: Optional[int] = None,
        max_event_bytes: Optional[int] = None,
        platform_sender: bool = False,
    ) -> None:
        config: dict[str, Any] = {
            "platformBaseUrl": platform_base_url,
            "seed": seed,
            "startUnixMs": start_unix_ms,
            "record": record,
            "platformSender": platform_sender,
        }
        for key, value in (
            ("maxBodyBytes", max_body_bytes),
            ("maxAnswerBytes", max_answer_bytes),
            ("maxEventBytes", max_event_bytes),
        ):
            if value is not None:
                config[key] = value
        self._native = NativeEngine(json.dumps(config), now_us)

    def handle_input(self, input: dict[str, Any], now_us: int) -> None:
        """A host input, as the trace format writes it (``{"input": ..., "value": ...}``)."""
        self._native.handle_input(json.dumps(input), now_us)

    def command(self, command: dict[str, Any], now_us: int) -> None:
        """A command (``{"command": "send_message", "text": "Hi"}``)."""
        self.handle_input({"input": "command", "value": command}, now_us)

    def handle_response(
        self,
        id: int,
        status: int,
        content_type: Optional[str],
        now_us: int,
        agent_session_uid: Optional[str] = None,
        reason: Optional[str] = None,
        etag: Optional[str] = None,
    ) -> None:
        """The head of the answer to request ``id`` (``agent_session_uid``: its
        ``X-Agent-Session-Uid`` header; ``reason``: the status line's reason phrase, which the
        text of a refused message or cancel request quotes; ``etag``: its ``ETag`` header, an
        Agent icon's fingerprint)."""
        self._native.handle_response(
            id, status, content_type, agent_session_uid, now_us, reason, etag
        )

    def handle_body_chunk(self, id: int, chunk: bytes, now_us: int) -> None:
        """A piece of the body of the answer to request ``id``, as it came."""
        self._native.handle_body_chunk(id, chunk, now_us)

    def feed_body_chunk(self, id: int, chunk: bytes, now_us: int) -> list[Event]:
        """``handle_body_chunk`` then ``drain_events`` in one call into the engine: the hot
        path of a streamed answer. The intents still follow with ``poll_intent``."""
        return [
            raw if type(raw) is AnswerDelta else OtherEvent(json.loads(raw))
            for raw in self._native.feed_body_chunk(id, chunk, now_us)
        ]

    def feed_body_chunks(
        self, id: int, pieces: Union[bytes, Iterable[bytes]], now_us: int
    ) -> list[Event]:
        """Several pieces of the body of the answer to request ``id`` (or one, as bytes), in
        order, and every event they gave, in one call into the engine: the hot path for a host
        that has several pieces at hand, or pieces with many deltas each. Text, reasoning and
        tool-input deltas that follow one another in the same part of the same answer come
        merged into one ``AnswerDelta`` (its text is theirs, in order); any other event ends a
        merge. Every piece is checked (and a generator consumed) before any is fed: a call
        refused with ``TypeError`` changes nothing. The intents still follow with
        ``poll_intent``."""
        return [
            raw if type(raw) is AnswerDelta else OtherEvent(json.loads(raw))
            for raw in self._native.feed_body_chunks(id, pieces, now_us)
        ]

    def handle_body_end(self, id: int, now_us: int) -> None:
        """The body of the answer to request ``id`` is complete."""
        self._native.handle_body_end(id, now_us)

    def handle_failure(
        self, id: int, kind: Literal["no_answer", "broken"], message: str, now_us: int
    ) -> None:
        """Request ``id`` got no answer (``no_answer``) or broke off after its head."""
        self._native.handle_failure(id, kind, message, now_us)

    def handle_timeout(self, now_us: int) -> None:
        """The time ``poll_timeout()`` named has come."""
        self._native.handle_timeout(now_us)

    def poll_intent(self) -> Optional[Intent]:
        """The next intent, or None."""
        raw = self._native.poll_intent()
        if raw is None:
            return None
        if raw[0] == "http":
            _, id, method, url, headers, body, streamed, target = raw
            return HttpIntent(id, method, url, list(headers), body, streamed, target)
        if raw[0] == "abort":
            return AbortIntent(raw[1])
        return StorageIntent(json.loads(raw[1]))

    def intent_json(self) -> dict[str, Any]:
        """The intent last polled, as the trace format writes it (credentials redacted)."""
        return json.loads(self._native.intent_json())

    def poll_event(self) -> Optional[Event]:
        """The next event, or None. An answer's text, reasoning or tool-input delta is an
        ``AnswerDelta`` (``kind``, ``index``, ``session_uid``, ``text``), made by the engine
        itself; anything else an ``OtherEvent``."""
        raw = self._native.poll_event()
        if raw is None or type(raw) is AnswerDelta:
            return raw
        return OtherEvent(json.loads(raw))

    def drain_events(self) -> list[Event]:
        """Every event waiting, in order, in one call into the engine."""
        return [
            raw if type(raw) is AnswerDelta else OtherEvent(json.loads(raw))
            for raw in self._native.drain_events()
        ]

    def poll_timeout(self) -> Optional[int]:
        """When to call ``handle_timeout`` next (microseconds, the host's clock), or None."""
        return self._native.poll_timeout()

    def snapshot(self) -> Snapshot:
        """The snapshot, with the spec's camelCase names (``Snapshot`` lists its fields)."""
        return json.loads(self._native.snapshot())

    def thread(self) -> list[dict[str, Any]]:
        """The thread alone (what to read again when ``revisions().thread`` or
        ``.streaming`` moved), cheaper than the whole snapshot."""
        return json.loads(self._native.thread())

    def run_status(self) -> dict[str, Any]:
        """The run-status channel alone (cheaper than the snapshot)."""
        return json.loads(self._native.run_status())

    def revisions(self) -> Revisions:
        """What changed: compare with the counters last seen."""
        return Revisions(*self._native.revisions())

    @property
    def poisoned(self) -> bool:
        """The engine panicked in a call (a defect): every call now raises
        ``EnginePoisoned``; make a new engine."""
        return self._native.poisoned

    def trace(self) -> Optional[str]:
        """The recorded trace (JSON Lines, credentials redacted), when made with
        ``record=True``."""
        return self._native.trace()

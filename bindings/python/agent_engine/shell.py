"""An asyncio host for ``agent_engine.Engine`` on httpx: the Python counterpart of the Rust
``engine-io-tokio`` shell. It carries the engine's intents out (HTTP with httpx, streamed where
the engine says so; aborts; an in-memory storage port), runs its timer, and gives the host
snapshots and events.

Everything that touches the engine runs on the event loop's thread, in one task: requests
run in tasks of their own and hand their heads, body pieces, ends and failures back through a
queue, so the engine sees one input at a time, in order.

Against ``platform-sim --port 8080`` (its demo values), as ``README.md`` and
``examples/hello.py`` run it::

    async with Shell("http://127.0.0.1:8080", token="sim-platform-token",
                     user_uid="user-demo") as shell:
        shell.input({"input": "environment_uid", "value": "env-demo"})
        shell.input({"input": "default_session", "value": {
            "agentUid": "agent-demo", "handleUniqueId": "my-bot", "name": "my bot",
            "status": "ready", "unavailableMessage": None}})
        shell.input({"input": "shows_default_session", "value": True})
        shell.input({"input": "is_visible", "value": True})
        await shell.wait_ready(timeout=30)  # or NotReadyError: code, message, status
        shell.command({"command": "send_message", "text": "Hello"})
        async for event in shell.events():
            ...

An application that reaches the platform through its own client (a session cookie, a proxy,
a token it renews itself) passes ``platform_sender``: an async function that takes the
``httpx.Request`` as the engine built it, without any ``Authorization`` header, and returns its
``httpx.Response`` (RU-47). Every platform request goes to it; its answer is final (a 401 is not
repeated: RU-48); the Agent runtime's requests still go directly with the runtime token (RU-49).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any, AsyncIterator, Awaitable, Callable, Mapping, Optional

import httpx

from . import (
    WAITING_TEXTS,
    AbortIntent,
    Engine,
    EngineError,
    Event,
    HttpIntent,
    NotReadyError,
    NotReadyTimeout,
    Revisions,
    OtherEvent,
    StorageIntent,
)

#: The application's own sender of platform requests (RU-47): the request as built, without
#: ``Authorization``, in; its answer out.
PlatformSender = Callable[[httpx.Request], Awaitable[httpx.Response]]

#: The shell's logger: a frame the engine skipped in an answer is logged here (issue 24).
logger = logging.getLogger("agent_engine.shell")


def log_event(event: Event) -> None:
    """Logs what the shell logs of an event before handing it on, as the Rust shells do: a frame
    the engine skipped in an answer (``frameSkipped``, the first of each type per answer) at
    ``WARNING`` when it was invalid (a bad field, or not a frame), at ``DEBUG`` when its type is
    unknown, with the session's uid and the frame's type; never the frame's content."""
    if not isinstance(event, OtherEvent) or event.data.get("event") != "answer":
        return
    delta = event.data.get("delta") or {}
    if delta.get("type") != "frameSkipped":
        return
    frame_type = delta.get("frameType") or "(not a frame)"
    reason = delta.get("reason") or {}
    session_uid = event.data.get("session_uid")
    if reason.get("kind") == "unknownType":
        logger.debug(
            "answer frame of an unknown type skipped: session_uid=%s frame_type=%s",
            session_uid,
            frame_type,
        )
        return
    why = (
        f"invalid field {reason.get('field')}"
        if reason.get("kind") == "invalidField"
        else "not a frame"
    )
    logger.warning(
        "answer frame skipped: session_uid=%s frame_type=%s why=%s", session_uid, frame_type, why
    )

__all__ = ["MemoryStorage", "Shell"]


class MemoryStorage:
    """The storage port in memory: keys to JSON values."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def load(self, key: str) -> Any:
        return self.values.get(key)

    def save(self, key: str, value: Any) -> None:
        self.values[key] = value

    def remove(self, key: str) -> None:
        self.values.pop(key, None)


class Shell:
    """Runs one engine against the network until closed."""

    def __init__(
        self,
        platform_base_url: str,
        *,
        token: Optional[str] = None,
        user_uid: Optional[str] = None,
        seed: int = 0,
        record: bool = False,
        storage: Optional[MemoryStorage] = None,
        client: Optional[httpx.AsyncClient] = None,
        idle_timeout_s: float = 60.0,
        platform_sender: Optional[PlatformSender] = None,
    ) -> None:
        self._origin = time.monotonic_ns()
        self.engine = Engine(
            platform_base_url,
            self._now(),
            seed=seed,
            start_unix_ms=int(time.time() * 1000),
            record=record,
            platform_sender=platform_sender is not None,
        )
        self._sender = platform_sender
        self.storage = storage or MemoryStorage()
        self._client = client
        self._own_client = client is None
        self._idle_timeout_s = idle_timeout_s
        self._inbox: asyncio.Queue[Callable[[], None]] = asyncio.Queue()
        self._requests: dict[int, asyncio.Task[None]] = {}
        self._snapshot: dict[str, Any] = {}
        self._seen: Optional[Revisions] = None
        self._changed = asyncio.Event()
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self._runner: Optional[asyncio.Task[None]] = None
        #: Inputs the engine refused (malformed values from the host), in order.
        self.errors: list[Exception] = []
        #: What stopped the loop, if something did (then ``wait_for`` and ``events`` raise).
        self.failure: Optional[BaseException] = None
        self._dead = asyncio.Event()
        if token is not None or user_uid is not None:
            self.input(
                {
                    "input": "person",
                    "value": {"userUid": user_uid, "token": token, "tokenType": None},
                }
            )

    def _now(self) -> int:
        return (time.monotonic_ns() - self._origin) // 1000

    async def __aenter__(self) -> "Shell":
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(self._idle_timeout_s))
        self._runner = asyncio.create_task(self._run())
        self._post(lambda: None)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Stops the loop first (so that it starts no request), then the requests."""
        try:
            if self._runner is not None:
                self._runner.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._runner
                self._runner = None
            requests = list(self._requests.values())
            for task in requests:
                task.cancel()
            await asyncio.gather(*requests, return_exceptions=True)
            self._requests.clear()
        finally:
            if self._own_client and self._client is not None:
                await self._client.aclose()
                self._client = None

    # The host's side.

    def input(self, input: dict[str, Any]) -> None:
        """A host input (the trace format's JSON)."""
        self._post(lambda: self.engine.handle_input(input, self._now()))

    def command(self, command: dict[str, Any]) -> None:
        """A command (``{"command": "send_message", "text": "Hi"}``)."""
        self.input({"input": "command", "value": command})

    def snapshot(self) -> dict[str, Any]:
        """The snapshot after the last input the engine took (made again only when the
        engine's revisions moved)."""
        revisions = self.engine.revisions()
        if revisions != self._seen:
            self._seen = revisions
            self._snapshot = self.engine.snapshot()
        return self._snapshot

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10.0
    ) -> dict[str, Any]:
        """Waits until the snapshot satisfies ``predicate``; returns it."""

        async def wait() -> dict[str, Any]:
            while True:
                self._check_alive()
                snapshot = self.snapshot()
                if predicate(snapshot):
                    return snapshot
                self._changed.clear()
                await self._changed.wait()

        return await _within(wait(), timeout)

    async def wait_ready(self, timeout: float = 30.0) -> dict[str, Any]:
        """Waits until a message can be sent (``sendReadiness`` is ``ready``) and returns that
        snapshot, reading only snapshots that follow the inputs given before the call.

        Raises ``NotReadyError`` as soon as the engine is blocked, without waiting out
        ``timeout``: a refused or unanswered read (``failure``, ``status``: a wrong token is
        ``sessions_failed`` or ``default_session_failed`` with status 401, a closed port the
        transport's failure), or something the host must give (``not_visible``,
        ``no_environment``, ``no_session``, ...). After ``timeout`` seconds,
        ``NotReadyTimeout`` (code ``timed_out``, also a ``TimeoutError``) naming what the engine
        still waited for ("Not ready after 30 s: Loading the sessions..."); when the shell's loop
        is not running, code ``closed``."""

        async def wait() -> dict[str, Any]:
            # The inputs posted before this call are taken first (the loop takes its inbox in
            # order): the snapshot at hand may be older than they are.
            taken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            # Taking it wakes this wait like any step does (``_changed``).
            self._post(lambda: taken.done() or taken.set_result(None))
            while True:
                self._check_ready_alive()
                if taken.done():
                    snapshot = self.snapshot()
                    readiness = snapshot["sendReadiness"]
                    if readiness.get("state") == "ready":
                        return snapshot
                    if readiness.get("state") == "blocked":
                        raise NotReadyError.of(readiness)
                self._changed.clear()
                await self._changed.wait()

        try:
            return await _within(wait(), timeout)
        except asyncio.TimeoutError:
            waiting = self.snapshot().get("sendReadiness", {}).get("waitingFor")
            after = f"{int(timeout)} s" if timeout == int(timeout) else f"{round(timeout * 1000)} ms"
            text = WAITING_TEXTS.get(waiting) if isinstance(waiting, str) else None
            message = f"Not ready after {after}: {text}" if text else f"Not ready after {after}."
            raise NotReadyTimeout("timed_out", message) from None

    def _check_ready_alive(self) -> None:
        if self.failure is not None:
            raise NotReadyError("closed", "The shell's loop stopped.") from self.failure
        if self._runner is None or self._runner.done():
            raise NotReadyError("closed", "The shell is not running: use it in `async with`.")

    async def events(self) -> AsyncIterator[Event]:
        """The engine's events, as they come (raises when the loop has died)."""
        while True:
            self._check_alive()
            getter = asyncio.ensure_future(self._events.get())
            dead = asyncio.ensure_future(self._dead.wait())
            done, _ = await asyncio.wait({getter, dead}, return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                dead.cancel()
                yield getter.result()
            else:
                getter.cancel()
                self._check_alive()

    def _check_alive(self) -> None:
        if self.failure is not None:
            raise RuntimeError("the shell's loop stopped") from self.failure

    def drain_events(self) -> list[Event]:
        """The events received and not taken yet."""
        out = []
        while not self._events.empty():
            out.append(self._events.get_nowait())
        return out

    # The loop.

    def _post(self, step: Callable[[], None]) -> None:
        self._inbox.put_nowait(step)

    async def _run(self) -> None:
        try:
            await self._loop()
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # noqa: BLE001 - the host is told, never left waiting
            self.failure = e
            self._dead.set()
            self._changed.set()
            raise

    async def _loop(self) -> None:
        while True:
            deadline = self.engine.poll_timeout()
            wait = None
            if deadline is not None:
                wait = max(0.0, (deadline - self._now()) / 1_000_000)
            try:
                step = await _within(self._inbox.get(), wait)
            except asyncio.TimeoutError:
                self.engine.handle_timeout(self._now())
            else:
                # The drive contract: drain after every input.
                self._take(step)
                self._drain()
                while not self._inbox.empty():
                    self._take(self._inbox.get_nowait())
                    self._drain()
                continue
            self._drain()

    def _take(self, step: Callable[[], None]) -> None:
        """One input; one the engine refuses (a malformed value from the host) is kept in
        ``errors`` and the loop goes on. ``EnginePoisoned`` (not an ``EngineError``) stops the
        loop: the host is told through ``failure``."""
        try:
            step()
        except (EngineError, TypeError, ValueError) as e:
            self.errors.append(e)

    def _feed(self, id: int, chunk: bytes) -> None:
        """A body piece, in the one call that also takes its events: a piece read from a fast
        stream holds many deltas, and they come merged (``Engine.feed_body_chunks``)."""
        for event in self.engine.feed_body_chunks(id, chunk, self._now()):
            log_event(event)
            self._events.put_nowait(event)

    def _drain(self) -> None:
        engine = self.engine
        while (intent := engine.poll_intent()) is not None:
            if isinstance(intent, HttpIntent):
                self._requests[intent.id] = asyncio.create_task(self._request(intent))
            elif isinstance(intent, AbortIntent):
                task = self._requests.pop(intent.id, None)
                if task is not None:
                    task.cancel()
            elif isinstance(intent, StorageIntent):
                self._storage(intent.request)
        while (event := engine.poll_event()) is not None:
            log_event(event)
            self._events.put_nowait(event)
        self._changed.set()

    def _storage(self, request: Mapping[str, Any]) -> None:
        """Carries a storage request out now, in the order the engine gave them (a read sees
        what was there before a later write); a read's answer is the engine's next input."""
        op, key = request["op"], request.get("key", "")
        if op == "load":
            sessions = self.storage.load(key)
            self._post(
                lambda: self.engine.handle_input(
                    {
                        "input": "stored_sessions_loaded",
                        "value": {"key": key, "sessions": sessions},
                    },
                    self._now(),
                )
            )
        elif op == "load_queue":
            rows = self.storage.load(key)
            self._post(
                lambda: self.engine.handle_input(
                    {
                        "input": "stored_queue_loaded",
                        "value": {"key": key, "rows": rows},
                    },
                    self._now(),
                )
            )
        elif op == "load_selection":
            stored = self.storage.load(key)
            self._post(
                lambda: self.engine.handle_input(
                    {
                        "input": "stored_selection_loaded",
                        "value": {
                            "key": key,
                            "session_uid": stored if isinstance(stored, str) else None,
                        },
                    },
                    self._now(),
                )
            )
        elif op == "save":
            self.storage.save(key, request["sessions"])
        elif op == "save_queue":
            self.storage.save(key, request["rows"])
        elif op == "remove_queue":
            self.storage.remove(key)
        elif op == "save_selection":
            self.storage.save(key, request["session_uid"])

    async def _request(self, intent: HttpIntent) -> None:
        id = intent.id
        secrets = [value for _, value in intent.headers if value.strip()]

        def scrub(e: BaseException) -> str:
            # An HTTP library refusing a header can quote its value: never pass one on.
            message = str(e) or type(e).__name__
            for secret in secrets:
                message = message.replace(secret, "[redacted]")
                message = message.replace(secret.strip(), "[redacted]")
            return message

        if self._client is None:
            return
        try:
            request = self._client.build_request(
                intent.method, intent.url, headers=intent.headers, content=intent.body
            )
            if self._sender is not None and intent.target == "platform":
                # RU-47, RU-48: the application's sender, its answer final (read whole).
                request.headers.pop("authorization", None)
                response = await self._sender(request)
            else:
                response = await self._client.send(request, stream=True)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - every transport failure is the engine's input
            message = scrub(e)
            self._post(lambda: self.engine.handle_failure(id, "no_answer", message, self._now()))
            self._requests.pop(id, None)
            return
        try:
            status = response.status_code
            content_type = response.headers.get("content-type")
            session = response.headers.get("x-agent-session-uid")
            reason = response.reason_phrase or None
            etag = response.headers.get("etag")
            self._post(
                lambda: self.engine.handle_response(
                    id,
                    status,
                    content_type,
                    self._now(),
                    agent_session_uid=session,
                    reason=reason,
                    etag=etag,
                )
            )
            try:
                # Decoded bytes: httpx asks for gzip and deflate, and undoes them here.
                async for chunk in response.aiter_bytes():
                    self._post(lambda chunk=chunk: self._feed(id, chunk))
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001
                message = scrub(e)
                self._post(lambda: self.engine.handle_failure(id, "broken", message, self._now()))
                return
            self._post(lambda: self.engine.handle_body_end(id, self._now()))
        finally:
            await response.aclose()
            self._requests.pop(id, None)


async def _within(awaitable: Any, timeout: Optional[float]) -> Any:
    """``asyncio.wait_for`` without its flaw before Python 3.12 (cpython issue 86296): there a
    cancellation that arrives as the awaited work completes is swallowed and its result
    returned, so a task cancelled at that moment runs on. Here the cancellation always wins,
    and the work is cancelled and finished before the caller hears of it (as with
    ``wait_for``). ``None`` waits without a limit (a plain await); after ``timeout`` seconds
    (at once when it is not positive, without starting the work) ``asyncio.TimeoutError``."""
    if timeout is None:
        return await awaitable
    if timeout <= 0:
        if asyncio.iscoroutine(awaitable):
            awaitable.close()
        raise asyncio.TimeoutError
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.wait({task})
        raise
    if not done:
        task.cancel()
        await asyncio.wait({task})
        raise asyncio.TimeoutError
    return task.result()


def _debug(value: Any) -> str:  # pragma: no cover - a helper for hosts printing snapshots
    return json.dumps(value, indent=2, sort_keys=True)

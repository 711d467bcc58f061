"""The asyncio shell against `platform-sim` (issue 15): the default session, a waking Agent, a
streamed answer, stop and a queued message, each on a simulator the test starts on loopback."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from agent_engine import AnswerDelta, OtherEvent
from agent_engine.shell import Shell

from conftest import Sim


def open_default(sim: Sim) -> Shell:
    shell = Shell(sim.url, token=sim.token, user_uid=sim.person, seed=1)
    shell.input({"input": "environment_uid", "value": sim.environment})
    shell.input(
        {
            "input": "default_session",
            "value": {
                "agentUid": sim.agent,
                "handleUniqueId": "python-shell",
                "name": "python shell",
                "status": "ready",
                "unavailableMessage": None,
            },
        }
    )
    shell.input({"input": "shows_default_session", "value": True})
    shell.input({"input": "is_visible", "value": True})
    return shell


def answered(s: dict[str, Any]) -> bool:
    return not s["isAgentWorking"] and s["runStatus"] in ("complete", "error")


def thread_text(s: dict[str, Any]) -> list[str]:
    out = []
    for message in s["thread"]:
        for part in message.get("parts", []):
            if part.get("type") == "text":
                out.append(part.get("text", ""))
    return out


def streamed(shell: Shell) -> str:
    return "".join(
        e.text for e in shell.drain_events() if isinstance(e, AnswerDelta) and e.kind == "text"
    )


def test_the_default_session_and_a_streamed_answer(start_sim) -> None:
    sim = start_sim()

    async def run() -> None:
        async with open_default(sim) as shell:
            s = await shell.wait_for(lambda s: s["composerAdmission"])
            assert s["isDefaultSession"]
            assert s["defaultSessionStatus"] == "ready"
            shell.command({"command": "send_message", "text": "hello from python"})
            s = await shell.wait_for(answered)
            assert s["runStatus"] == "complete", s["runStatusDetail"]
            assert "You said: hello from python" in streamed(shell)
            assert any("You said: hello from python" in t for t in thread_text(s))
            assert not shell.errors
            # A malformed input is kept, not fatal: the shell goes on.
            shell.input({"input": "no_such_input"})
            shell.input({"input": "is_visible", "value": b"not json"})
            shell.command({"command": "send_message", "text": "again"})
            s = await shell.wait_for(
                lambda s: answered(s) and any("You said: again" in t for t in thread_text(s))
            )
            assert len(shell.errors) == 2, shell.errors
            assert shell.failure is None

    asyncio.run(run())


def test_a_waking_agent_holds_the_message_then_answers_once(start_sim) -> None:
    sim = start_sim("--waking-checks", "2")

    async def run() -> None:
        async with open_default(sim) as shell:
            await shell.wait_for(
                lambda s: s["activeSessionReadiness"]["status"] == "ready", timeout=20
            )
            shell.command({"command": "send_message", "text": "wake up"})
            s = await shell.wait_for(answered, timeout=30)
            assert s["runStatus"] == "complete", s["runStatusDetail"]
            answers = [t for t in thread_text(s) if "You said: wake up" in t]
            assert len(answers) == 1, thread_text(s)
            assert not shell.errors and shell.failure is None

    asyncio.run(run())


def test_stop_ends_the_run_and_a_queued_message_goes_next(start_sim) -> None:
    sim = start_sim("--answer-delay-ms", "150")

    async def run() -> None:
        async with open_default(sim) as shell:
            await shell.wait_for(lambda s: s["composerAdmission"])
            shell.command({"command": "send_message", "text": "a long one"})
            await shell.wait_for(lambda s: s["hasActiveChatStream"], timeout=20)
            shell.command({"command": "cancel_active_session"})
            s = await shell.wait_for(
                lambda s: not s["isAgentWorking"] and not s["isCancellingSession"], timeout=20
            )
            assert s["runStatus"] == "idle", (s["runStatus"], s["runStatusDetail"])
            assert not any("You said: a long one" in t for t in thread_text(s))

            shell.command({"command": "send_message", "text": "first"})
            await shell.wait_for(lambda s: s["isAgentWorking"], timeout=20)
            shell.command({"command": "send_message", "text": "second"})
            s = await shell.wait_for(lambda s: len(s["messageQueue"]) == 1)
            assert s["messageQueue"][0]["text"] == "second"
            s = await shell.wait_for(
                lambda s: answered(s)
                and not s["messageQueue"]
                and any("You said: second" in t for t in thread_text(s)),
                timeout=30,
            )
            texts = thread_text(s)
            first = next(i for i, t in enumerate(texts) if "You said: first" in t)
            second = next(i for i, t in enumerate(texts) if "You said: second" in t)
            assert first < second, texts
            assert not shell.errors and shell.failure is None
            notices = [
                e.data for e in shell.drain_events() if isinstance(e, OtherEvent)
            ]
            assert all(n.get("event") != "message_not_sent" for n in notices), notices

    asyncio.run(run())



def test_a_piece_with_many_deltas_reaches_the_host_as_one_delta() -> None:
    """Issue 15 (the crossing's cost): each body piece goes into the engine in the call that
    takes its events, and the deltas a piece holds (a read from a fast stream holds many) come
    merged, so the host handles one object per piece, not per delta; the answer is whole and
    read once. A local Agent played by httpx's MockTransport (no network) sends 200 deltas in
    4 pieces."""
    import httpx

    base = "http://127.0.0.1:9"
    words = [f"w{i} " for i in range(200)]
    events = ['{"type":"start","messageId":"m-1"}', '{"type":"text-start","id":"t"}']
    events += [f'{{"type":"text-delta","id":"t","delta":"{w}"}}' for w in words]
    events += ['{"type":"text-end","id":"t"}', '{"type":"finish"}', "[DONE]"]
    body = "".join(f"data: {e}\n\n" for e in events).encode()
    # Four pieces, cut inside events: the decoder carries the partial event across.
    cuts = [0, len(body) // 4 + 3, len(body) // 2 + 7, 3 * len(body) // 4 + 11, len(body)]
    pieces = [body[a:b] for a, b in zip(cuts, cuts[1:])]
    posts = []

    async def stream():
        for piece in pieces:
            yield piece

    def runtime(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method == "POST" and path == "/api/chat":
            posts.append(request)
            return httpx.Response(
                200,
                headers={"content-type": "text/event-stream", "x-agent-session-uid": "local-1"},
                content=stream(),
            )
        if path in ("/ready", "/health") or (path == "/api/chat" and request.method == "GET"):
            return httpx.Response(200, json={"ok": True, "mode": "local"})
        return httpx.Response(404, json={})

    async def run() -> None:
        client = httpx.AsyncClient(transport=httpx.MockTransport(runtime))
        async with Shell(base, seed=1, client=client) as shell:
            shell.input({"input": "source", "value": {"baseUrl": base, "displayName": "A"}})
            shell.input({"input": "is_visible", "value": True})
            await shell.wait_for(lambda s: s["composerAdmission"])
            shell.command({"command": "send_message", "text": "go"})
            s = await shell.wait_for(answered)
            deltas = [e for e in shell.drain_events() if isinstance(e, AnswerDelta)]
            assert not shell.errors and shell.failure is None
        await client.aclose()
        assert s["runStatus"] == "complete", s["runStatusDetail"]
        assert len(posts) == 1
        assert "".join(e.text for e in deltas) == "".join(words)
        assert 1 <= len(deltas) <= len(pieces), [e.text for e in deltas]
        assert thread_text(s)[-1] == "".join(words)

    asyncio.run(run())


def test_a_poisoned_engine_stops_the_loop_and_the_host_is_told() -> None:
    """A panic inside the engine (a defect) is not a refused input: the loop stops, `failure`
    holds the EnginePoisoned, and a host waiting is woken with an error, not left hanging."""
    import httpx

    from agent_engine import EnginePoisoned

    async def run() -> None:
        client = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(404)))
        async with Shell("http://127.0.0.1:9", client=client) as shell:
            shell.input({"input": "is_visible", "value": True})
            await shell.wait_for(lambda s: s["isVisible"])
            shell._post(shell.engine._native._panic_for_test)
            try:
                await shell.wait_for(lambda s: False, timeout=10)
            except RuntimeError as e:
                assert isinstance(e.__cause__, EnginePoisoned)
            else:
                raise AssertionError("wait_for returned")
            assert isinstance(shell.failure, EnginePoisoned)
            assert shell.errors == []
        await client.aclose()

    asyncio.run(run())


def test_close_ends_the_loop_when_a_step_arrives_as_it_closes() -> None:
    """A step (an answer's piece, a response) that reaches the inbox in the same turn of the
    event loop as ``close()`` must not keep the loop running: before Python 3.12,
    ``asyncio.wait_for`` returned that step and swallowed the cancellation, and ``close()``
    waited for ever (the hang that stopped CI). Also: a host task cancelled while it waits for a
    snapshot that arrives at that moment is cancelled, not given the snapshot."""
    import httpx

    class Deadline:
        """The engine, with a timer always pending (the loop then waits with a timeout)."""

        def __init__(self, shell: Shell) -> None:
            self.inner, self.shell = shell.engine, shell

        def poll_timeout(self) -> int:
            return self.shell._now() + 10_000_000

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    async def run() -> None:
        client = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(404)))
        shell = Shell("http://127.0.0.1:9", client=client)
        shell.engine = Deadline(shell)  # type: ignore[assignment]
        await shell.__aenter__()
        await asyncio.sleep(0.01)
        shell._post(lambda: None)
        closing = asyncio.ensure_future(shell.close())
        done, _ = await asyncio.wait({closing}, timeout=5)
        assert done, "close() did not finish"
        closing.result()
        # Nothing of the shell is left running once close() returned.
        assert asyncio.all_tasks() == {asyncio.current_task()}

        shell = Shell("http://127.0.0.1:9", client=client)
        async with shell:
            waiting = asyncio.ensure_future(shell.wait_for(lambda s: s.get("isVisible")))
            await asyncio.sleep(0.01)
            shell.input({"input": "is_visible", "value": True})
            await asyncio.sleep(0)
            waiting.cancel()
            await asyncio.wait({waiting})
            assert waiting.cancelled()
        await client.aclose()

    asyncio.run(run())


def test_skipped_frames_are_logged_by_kind(caplog) -> None:
    """Issue 24, point 5: the shell logs a frame the engine skipped with the session and the
    frame's type, at WARNING when invalid (a bad field, not a frame), at DEBUG when unknown; other
    events are not logged."""
    import logging

    from agent_engine.shell import log_event

    def skipped(frame_type, reason):
        delta = {"type": "frameSkipped", "reason": reason}
        if frame_type is not None:
            delta["frameType"] = frame_type
        return OtherEvent({"event": "answer", "session_uid": "sess-1", "delta": delta})

    with caplog.at_level(logging.DEBUG, logger="agent_engine.shell"):
        log_event(skipped("x-future", {"kind": "unknownType"}))
        log_event(skipped("text-delta", {"kind": "invalidField", "field": "id"}))
        log_event(skipped(None, {"kind": "notAFrame"}))
        log_event(OtherEvent({"event": "request_visible"}))
    records = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert records == [
        ("DEBUG", "answer frame of an unknown type skipped: session_uid=sess-1 frame_type=x-future"),
        ("WARNING", "answer frame skipped: session_uid=sess-1 frame_type=text-delta why=invalid field id"),
        ("WARNING", "answer frame skipped: session_uid=sess-1 frame_type=(not a frame) why=not a frame"),
    ]


def test_platform_requests_go_to_the_applications_sender(start_sim) -> None:
    """RU-47 to RU-49: every platform request goes to ``platform_sender`` without the engine's
    ``Authorization`` (the sender adds its own); the runtime's requests go directly; the sender's
    401 is final (called once per request, never repeated)."""
    sim = start_sim()
    seen: list[httpx.Request] = []

    def sender_with(credential: str) -> Any:
        client = httpx.AsyncClient()

        async def send(request: httpx.Request) -> httpx.Response:
            assert "authorization" not in request.headers, "the engine adds none"
            seen.append(request)
            request.headers["authorization"] = credential
            response = await client.send(request)
            await response.aread()
            return response

        return send, client

    async def run() -> None:
        send, client = sender_with(f"Bearer {sim.token}")
        shell = Shell(sim.url, token=sim.token, user_uid=sim.person, seed=1, platform_sender=send)
        async with shell:
            for name, value in default_inputs(sim):
                shell.input({"input": name, "value": value})
            await shell.wait_for(lambda s: s["composerAdmission"])
            shell.command({"command": "send_message", "text": "through the sender"})
            s = await shell.wait_for(answered)
            assert s["runStatus"] == "complete", s["runStatusDetail"]
        await client.aclose()
        urls = [str(r.url) for r in seen]
        assert urls and all(u.startswith(f"{sim.url}/api/v1/") for u in urls), urls
        assert any(u.endswith("/resolve-runtime-access/") for u in urls), urls
        assert not any("/runtime/" in u for u in urls), "the runtime never goes to the sender"

        seen.clear()
        send, client = sender_with("Bearer expired")
        shell = Shell(sim.url, token=sim.token, user_uid=sim.person, seed=1, platform_sender=send)
        async with shell:
            for name, value in default_inputs(sim):
                shell.input({"input": name, "value": value})
            s = await shell.wait_for(lambda s: s["latestSessionsError"] is not None)
            assert "401" in s["latestSessionsError"]
        await client.aclose()
        lists = [r for r in seen if "/api/v1/agent-sessions/?" in str(r.url)]
        assert len(lists) == 1, "called once, never repeated"

    asyncio.run(run())


def default_inputs(sim: Sim) -> list[tuple[str, Any]]:
    return [
        ("environment_uid", sim.environment),
        (
            "default_session",
            {
                "agentUid": sim.agent,
                "handleUniqueId": "python-sender",
                "name": "python sender",
                "status": "ready",
                "unavailableMessage": None,
            },
        ),
        ("shows_default_session", True),
        ("is_visible", True),
    ]

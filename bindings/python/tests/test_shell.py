"""The asyncio shell against `platform-sim` (issue 15): the default session, a waking Agent, a
streamed answer, stop and a queued message, each on a simulator the test starts on loopback."""

from __future__ import annotations

import asyncio
from typing import Any

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

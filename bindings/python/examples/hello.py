"""A complete host on the asyncio shell: it opens the Agent's default session, waits until a
message can be sent (or prints why not), sends one and prints the answer as it streams.

    python bindings/python/examples/hello.py

With ``AGENT_PLATFORM_URL`` unset it starts platform-sim on loopback (the binary named by
``AE_PLATFORM_SIM``, else ``platform-sim`` on the PATH: ``cargo build -p platform-sim``);
``AGENT_CHAT_TOKEN``, ``AGENT_USER``, ``AGENT_ENVIRONMENT`` and ``AGENT_UID`` default to the
simulator's demo values. Not ready: the cause, and exit status 1.
"""

import asyncio
import os
import subprocess
import sys

from agent_engine import AnswerDelta, NotReadyError, OtherEvent
from agent_engine.shell import Shell


def start_simulator() -> tuple[subprocess.Popen, str]:
    """platform-sim on a free loopback port, and its address."""
    binary = os.environ.get("AE_PLATFORM_SIM", "platform-sim")
    sim = subprocess.Popen([binary, "--port", "0"], stdout=subprocess.PIPE, text=True)
    for line in sim.stdout:
        if line.startswith("platform-sim listening on "):
            return sim, line.split()[-1]
    raise RuntimeError("platform-sim did not start")


async def hello(url: str) -> int:
    env = os.environ.get
    token, user = env("AGENT_CHAT_TOKEN", "sim-platform-token"), env("AGENT_USER", "user-demo")
    async with Shell(url, token=token, user_uid=user) as shell:
        shell.input({"input": "environment_uid", "value": env("AGENT_ENVIRONMENT", "env-demo")})
        # The session to write to: this host's default session with the Agent.
        shell.input({"input": "default_session", "value": {
            "agentUid": env("AGENT_UID", "agent-demo"), "handleUniqueId": "hello-example",
            "name": "Hello", "status": "ready", "unavailableMessage": None}})
        shell.input({"input": "shows_default_session", "value": True})
        shell.input({"input": "is_visible", "value": True})
        try:  # ready, or the cause as soon as there is one: a wrong token, a closed port...
            await shell.wait_ready(timeout=30)
        except NotReadyError as e:
            status = f", HTTP {e.status}" if e.status else ""
            print(f"not ready: {e.message} (code {e.code}{status})", file=sys.stderr)
            if e.failure and e.failure.get("message"):  # the transport's words, for a closed port
                print(f"the failing read: {e.failure['message']}", file=sys.stderr)
            return 1
        shell.command({"command": "send_message", "text": "Hello"})
        async for event in shell.events():
            if isinstance(event, AnswerDelta) and event.kind == "text":
                print(event.text, end="", flush=True)
            elif isinstance(event, OtherEvent) and event.data["event"] == "run_failed":
                print(f"the answer failed: {event.data['failure']}", file=sys.stderr)
                return 1
            elif isinstance(event, OtherEvent) and event.data.get("delta", {}).get("type") == "ended":
                print()
                return 0
    return 1


if __name__ == "__main__":
    sim, url = None, os.environ.get("AGENT_PLATFORM_URL")
    if url is None:
        sim, url = start_simulator()
    try:
        sys.exit(asyncio.run(hello(url)))
    finally:
        if sim is not None:
            sim.terminate()

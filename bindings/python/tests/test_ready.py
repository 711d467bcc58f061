"""``Shell.wait_ready`` and the examples that work as written (issue 25, points 2 and 3), each
against a ``platform-sim`` the test starts on loopback: the hello-world answers; a wrong token
and a closed port raise ``NotReadyError`` with the cause at once, not a bare timeout; a wait
that runs out is a ``NotReadyTimeout`` that is also a ``TimeoutError``."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agent_engine import WAITING_TEXTS, NotReadyError, NotReadyTimeout
from agent_engine.shell import Shell

from conftest import ROOT, Sim
from test_shell import open_default

PACKAGE = Path(__file__).resolve().parents[1]


def closed_port() -> int:
    """A loopback port nothing listens on: bound here, then closed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def not_ready(shell: Shell, timeout: float = 30) -> NotReadyError:
    async def run() -> NotReadyError:
        async with shell:
            try:
                await shell.wait_ready(timeout=timeout)
            except NotReadyError as e:
                return e
        raise AssertionError("ready")

    return asyncio.run(run())


def test_the_default_session_becomes_ready(start_sim) -> None:
    """Issue 25 point 2: with a default session, the wait returns the ready snapshot."""
    sim = start_sim()

    async def run() -> None:
        async with open_default(sim) as shell:
            s = await shell.wait_ready(timeout=30)
            assert s["sendReadiness"] == {"state": "ready"}
            assert s["composerAdmission"]

    asyncio.run(run())


def test_without_a_session_the_cause_comes_at_once(start_sim) -> None:
    """Issue 25 point 3: the issue's hello-world without a default session is told at once, in
    the reference's words, that nothing will be selected by itself (and not from the snapshot
    before its inputs, which said "not visible")."""
    sim = start_sim()
    shell = Shell(sim.url, token=sim.token, user_uid=sim.person)
    shell.input({"input": "environment_uid", "value": sim.environment})
    shell.input({"input": "is_visible", "value": True})
    e = not_ready(shell)
    assert (e.code, e.message) == ("no_session", "Choose or start a session before writing.")
    assert e.status is None and e.failure is None
    assert not isinstance(e, TimeoutError)


def test_a_wrong_token_is_the_refused_read_with_its_status(start_sim) -> None:
    """Issue 25 point 3: a wrong token is the refused read, its status 401 and the server's
    message, for the hello-world with and without a default session."""
    sim = start_sim()
    wrong = Sim(sim.url, sim.environment, sim.person, sim.agent, "not-the-token")
    e = not_ready(open_default(wrong))
    assert (e.code, e.status) == ("default_session_failed", 401), (e.code, e.message)
    assert e.message == "Authentication credentials were not provided or are not valid."
    assert e.failure == {
        "kind": "http",
        "operation": "get_or_create_session",
        "status": 401,
        "server_message": "Authentication credentials were not provided or are not valid.",
    }
    shell = Shell(sim.url, token="not-the-token", user_uid=sim.person)
    shell.input({"input": "environment_uid", "value": sim.environment})
    shell.input({"input": "is_visible", "value": True})
    e = not_ready(shell)
    assert (e.code, e.status) == ("sessions_failed", 401)
    # RU-19: the full text names the request; the server message ends it.
    assert e.message.startswith(
        "Latest agent sessions request failed. Status: HTTP 401 Unauthorized. Call: GET "
        f"{sim.url}/api/v1/agent-sessions/?"
    ), e.message
    assert e.message.endswith(
        ". Server response: Authentication credentials were not provided or are not valid."
    ), e.message
    assert str(e) == e.message


def test_a_closed_port_is_the_transport_failure() -> None:
    """Issue 25 point 3: nothing listening is the transport's failure, with no status."""
    url = f"http://127.0.0.1:{closed_port()}"
    sim = Sim(url, "env-demo", "user-demo", "agent-demo", "sim-platform-token")
    e = not_ready(open_default(sim))
    assert e.code == "default_session_failed", (e.code, e.message)
    assert e.status is None
    assert e.failure is not None and e.failure["kind"] == "transport", e.failure
    assert e.failure["message"], e.failure


def test_a_wait_that_runs_out_is_a_timeout_naming_what_it_waited_for() -> None:
    """Issue 25 point 3: a wait that runs out (the platform never answers) is a
    NotReadyTimeout, code timed_out, naming what the engine still waited for; existing
    `except TimeoutError` code catches it."""
    # A platform that accepts the connection and never answers.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    url = f"http://127.0.0.1:{silent.getsockname()[1]}"
    try:
        e = not_ready(open_default(Sim(url, "env-demo", "user-demo", "agent-demo", "t")), 0.3)
    finally:
        silent.close()
    assert isinstance(e, NotReadyTimeout)
    assert isinstance(e, TimeoutError) and isinstance(e, asyncio.TimeoutError)
    assert e.code == "timed_out"
    assert e.message == "Not ready after 300 ms: Opening the default session..."


def test_a_shell_that_is_not_running_is_closed() -> None:
    """Issue 25 point 3: waiting on a shell outside `async with` is `closed`, at once."""

    async def run() -> NotReadyError:
        shell = Shell("http://127.0.0.1:9", token="t", user_uid="u")
        with pytest.raises(NotReadyError) as info:
            await shell.wait_ready(timeout=30)
        return info.value

    e = asyncio.run(run())
    assert e.code == "closed" and not isinstance(e, TimeoutError)


def test_the_waiting_texts_are_the_engines() -> None:
    """WAITING_TEXTS is `Waiting::text` of engine-core/src/snapshot/ready.rs, case for case."""
    source = (ROOT / "engine-core" / "src" / "snapshot" / "ready.rs").read_text()
    rust = {
        re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower(): text
        for name, text in re.findall(r'Waiting::(\w+) => "([^"]+)"', source)
    }
    assert rust and rust == WAITING_TEXTS


def run_example(sim_binary: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_")}
    return subprocess.run(
        [sys.executable, str(PACKAGE / "examples" / "hello.py")],
        env={**clean, "AE_PLATFORM_SIM": str(sim_binary), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_hello_example_answers(sim_binary) -> None:
    """Issue 25 point 2: examples/hello.py starts the simulator itself and prints its answer."""
    out = run_example(sim_binary)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "You said: Hello"


def test_the_hello_example_names_a_wrong_token_and_a_closed_port(sim_binary) -> None:
    """Issue 25 point 3: examples/hello.py prints the cause and exits with status 1."""
    out = run_example(sim_binary, AGENT_CHAT_TOKEN="not-the-token")
    assert out.returncode == 1, out.stderr
    assert "not ready: Authentication credentials were not provided or are not valid. (code default_session_failed, HTTP 401)" in out.stderr
    assert "not-the-token" not in out.stderr + out.stdout
    out = run_example(sim_binary, AGENT_PLATFORM_URL=f"http://127.0.0.1:{closed_port()}")
    assert out.returncode == 1, out.stderr
    assert "(code default_session_failed)\n" in out.stderr
    assert "the failing read: " in out.stderr
    assert "You said" not in out.stdout


def test_the_readme_example_works_as_written(sim_binary) -> None:
    """Issue 25 point 2: the README's shell example, run as written against platform-sim
    (its address the only change: the README's simulator listens on port 8080), answers."""
    readme = (PACKAGE / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", readme, re.S)
    assert code and "http://127.0.0.1:8080" in code.group(1)
    sim = subprocess.Popen(
        [str(sim_binary), "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert sim.stdout is not None
        url = next(
            line.split()[-1] for line in sim.stdout if line.startswith("platform-sim listening on ")
        )
        script = code.group(1).replace("http://127.0.0.1:8080", url)
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
        )
    finally:
        sim.terminate()
        sim.wait(timeout=10)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "You said: Hello"

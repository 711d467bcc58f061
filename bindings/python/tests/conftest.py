"""The simulator for the shell tests: `platform-sim` (the workspace's), started by each test on
loopback (port 0) and stopped after it. `AE_PLATFORM_SIM` names a built binary; otherwise it is
built once with cargo."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "py-shell-token"


@dataclass
class Sim:
    url: str
    environment: str
    person: str
    agent: str
    token: str


def _binary() -> Path:
    named = os.environ.get("AE_PLATFORM_SIM")
    if named:
        return Path(named)
    subprocess.run(
        ["cargo", "build", "-q", "-p", "platform-sim"], cwd=ROOT, check=True
    )
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "debug" / "platform-sim"


@pytest.fixture(scope="session")
def sim_binary() -> Path:
    return _binary()


@pytest.fixture
def start_sim(sim_binary: Path) -> Iterator[Callable[..., Sim]]:
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> Sim:
        env = dict(os.environ, PLATFORM_SIM_TOKEN=TOKEN)
        proc = subprocess.Popen(
            [str(sim_binary), "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=sys.stderr,
            text=True,
            env=env,
        )
        started.append(proc)
        assert proc.stdout is not None
        url = environment = person = agent = None
        for line in proc.stdout:
            if m := re.match(r"platform-sim listening on (\S+)", line):
                url = m.group(1)
            elif m := re.match(r"environment: (\S+)\s+person: (\S+)", line):
                environment, person = m.group(1), m.group(2)
            elif m := re.match(r"agent: (\S+)", line):
                agent = agent or m.group(1)
            elif line.startswith("press Ctrl-C"):
                break
        assert url and environment and person and agent, "the simulator did not start"
        assert url.startswith("http://127.0.0.1:")
        return Sim(url, environment, person, agent, TOKEN)

    yield start
    for proc in started:
        proc.terminate()
        proc.wait(timeout=10)

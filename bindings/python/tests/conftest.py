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

import typing

import pytest

import agent_engine
from agent_engine import OtherEvent, StorageIntent, forms

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


def typed_forms(union: object, tag: str) -> dict[str, tuple[set[str], set[str]]]:
    """A union of tagged TypedDicts: tag value -> (required keys, optional keys)."""
    out = {}
    for form in typing.get_args(union):
        (value,) = typing.get_args(typing.get_type_hints(form)[tag])
        out[value] = (set(form.__required_keys__), set(form.__optional_keys__))
    return out


def conforms(value: typing.Mapping, union: object, tag: str) -> None:
    """`value` has exactly the keys of the form its tag names."""
    required, optional = typed_forms(union, tag)[value[tag]]
    assert required <= set(value) <= required | optional, (value, required, optional)


@pytest.fixture(autouse=True)
def every_event_and_storage_request_has_its_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """In every test, each OtherEvent and StorageIntent the engine gives has the keys of its
    form in agent_engine.forms (the shell tests give many kinds)."""

    def check(value: object) -> None:
        if isinstance(value, OtherEvent):
            conforms(value.data, forms.EventData, "event")
        elif isinstance(value, StorageIntent):
            conforms(value.request, forms.StorageRequest, "op")

    for name in ("poll_intent", "poll_event", "drain_events", "feed_body_chunk", "feed_body_chunks"):
        original = getattr(agent_engine.Engine, name)

        def checked(self, *args, _original=original, **kwargs):  # type: ignore[no-untyped-def]
            result = _original(self, *args, **kwargs)
            for value in result if isinstance(result, list) else [result]:
                check(value)
            return result

        monkeypatch.setattr(agent_engine.Engine, name, checked)

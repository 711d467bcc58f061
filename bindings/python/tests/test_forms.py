"""The typed forms of the values handed over as JSON (issue 15: typed, documented Python
values): ``agent_engine.forms`` against their Rust source (a variant or field added there and
not here fails), and real events and storage requests against the forms."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest

from agent_engine import Engine, EnginePoisoned, HttpIntent, OtherEvent, StorageIntent, forms

SRC = Path(__file__).resolve().parents[3] / "engine-core" / "src"
BASE = "http://127.0.0.1:8787"


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def block(source: str, opening: str) -> str:
    start = source.index(opening)
    return source[start : source.index("\n}\n", start)]


def struct_keys(source: str, name: str) -> tuple[set[str], set[str]]:
    """A struct's serialized keys: (always there, left out when None)."""
    body = block(source, f"pub struct {name} {{")
    required, optional = set(), set()
    skip = False
    for line in body.splitlines()[1:]:
        if "skip_serializing_if" in line:
            skip = True
        elif m := re.match(r"    pub (\w+):", line):
            (optional if skip else required).add(m.group(1))
            skip = False
    return required, optional


def enum_forms(source: str, name: str, tag: str) -> dict[str, tuple[set[str], set[str]]]:
    """An internally tagged enum's forms: tag value -> (keys always there, keys left out when
    None), as serde writes them (variant names in snake_case)."""
    out: dict[str, tuple[set[str], set[str]]] = {}
    current = None
    for line in block(source, f"pub enum {name} {{").splitlines()[1:]:
        if m := re.match(r"    ([A-Z]\w*)(\((\w+)\))?", line):
            current = snake(m.group(1))
            inner = m.group(3)
            out[current] = struct_keys(source, inner) if inner else (set(), set())
            out[current][0].add(tag)
        elif (m := re.match(r"        (\w+):", line)) and current is not None:
            out[current][0].add(m.group(1))
    return out


def typed_forms(union: object, tag: str) -> dict[str, tuple[set[str], set[str]]]:
    out = {}
    for form in typing.get_args(union):
        (value,) = typing.get_args(typing.get_type_hints(form)[tag])
        out[value] = (set(form.__required_keys__), set(form.__optional_keys__))
    return out


def test_the_event_forms_are_the_engines() -> None:
    rust = enum_forms((SRC / "event.rs").read_text(), "Event", "event")
    assert "notify" in rust and "description" in rust["notify"][1]
    python = typed_forms(forms.EventData, "event")
    assert python == rust


def test_the_storage_forms_are_the_engines() -> None:
    rust = enum_forms((SRC / "intent.rs").read_text(), "StorageRequest", "op")
    assert rust["save_selection"][0] == {"op", "key", "session_uid"}
    assert typed_forms(forms.StorageRequest, "op") == rust


def conforms(value: dict, union: object, tag: str) -> None:
    required, optional = typed_forms(union, tag)[value[tag]]
    assert required <= set(value) <= required | optional, (value, required, optional)


def test_real_events_and_storage_requests_have_their_forms() -> None:
    """A message refused before any session (message_not_sent) and a platform engine's
    storage reads, as the engine gives them."""
    engine = Engine(BASE, 0, seed=3)
    engine.handle_input(
        {"input": "person", "value": {"userUid": "u-1", "token": "t", "tokenType": None}}, 1
    )
    engine.handle_input({"input": "environment_uid", "value": "env-1"}, 1)
    engine.handle_input({"input": "is_visible", "value": True}, 1)
    engine.command({"command": "send_message", "text": "kept"}, 2)
    ops = []
    while (intent := engine.poll_intent()) is not None:
        if isinstance(intent, StorageIntent):
            conforms(intent.request, forms.StorageRequest, "op")
            ops.append(intent.request["op"])
        else:
            assert isinstance(intent, HttpIntent)
    events = [e.data for e in engine.drain_events() if isinstance(e, OtherEvent)]
    for data in events:
        conforms(data, forms.EventData, "event")
    assert ops, "no storage request to check"
    not_sent = [e for e in events if e["event"] == "message_not_sent"]
    assert len(not_sent) == 1 and not_sent[0]["text"] == "kept", events
    assert not_sent[0]["code"] == "no_session_selected"


def test_a_panic_poisons_the_engine() -> None:
    """As the C ABI's AE_ERR_POISONED: the call that panicked raises EnginePoisoned (an
    EngineError), and so does every later call; another engine is not touched."""
    engine = Engine(BASE, 0)
    other = Engine(BASE, 0)
    assert not engine.poisoned
    with pytest.raises(EnginePoisoned, match="panicked; it is poisoned"):
        engine._native._panic_for_test()
    assert engine.poisoned
    for call in (
        lambda: engine.handle_input({"input": "is_visible", "value": True}, 1),
        lambda: engine.handle_timeout(2),
        lambda: engine.poll_intent(),
        lambda: engine.poll_event(),
        lambda: engine.feed_body_chunks(1, [b"data: x\n\n"], 3),
        lambda: engine.snapshot(),
        lambda: engine.revisions(),
        lambda: engine.trace(),
    ):
        with pytest.raises(EnginePoisoned, match="earlier call"):
            call()
    other.handle_input({"input": "is_visible", "value": True}, 1)
    assert other.snapshot()["isVisible"] is True and not other.poisoned

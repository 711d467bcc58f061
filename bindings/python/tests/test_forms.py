"""The typed forms of the values handed over as JSON (issue 15: typed, documented Python
values): ``agent_engine.forms`` against their Rust source (a variant or field added there and
not here fails), and real events and storage requests against the forms."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from agent_engine import Engine, HttpIntent, OtherEvent, StorageIntent, forms
from conftest import conforms, typed_forms

SRC = Path(__file__).resolve().parents[3] / "engine-core" / "src"
BASE = "http://127.0.0.1:8787"


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def block(source: str, opening: str) -> str:
    """The item that opens with `opening`, up to its closing brace. It must use no serde
    attribute this reader does not model (a rename, a skip, a flatten...), nor a struct variant
    on one line: the reader would misread it, so it refuses it."""
    start = source.index(opening)
    end = source.index("\n}\n", start)
    before = source.rfind("\n\n", 0, start)
    attributes = source[before:start]
    assert re.findall(r"#\[serde\(([^)]*)\)\]", attributes) in (
        [],
        ['tag = "event", rename_all = "snake_case"'],
        ['tag = "op", rename_all = "snake_case"'],
    ), attributes
    body = source[start:end]
    for line in body.splitlines():
        if "#[serde(" in line:
            assert re.fullmatch(r'\s*#\[serde\(skip_serializing_if = "Option::is_none"\)\]', line), line
        assert not re.match(r"    [A-Z]\w* \{.*\}", line), line
    return body


def struct_keys(source: str, name: str) -> tuple[set[str], set[str]]:
    """A struct's serialized keys: (always there, left out when None)."""
    body = block(source, f"pub struct {name} {{")
    assert "#[serde(" not in source[source.rfind("\n\n", 0, source.index(f"pub struct {name} {{")) : source.index(f"pub struct {name} {{")]
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


def test_the_event_forms_are_the_engines() -> None:
    source = (SRC / "event.rs").read_text()
    rust = enum_forms(source, "Event", "event")
    assert "notify" in rust and "description" in rust["notify"][1]
    python = typed_forms(forms.EventData, "event")
    assert python == rust
    # The failure a run_failed event carries.
    failure = struct_keys((SRC / "failure.rs").read_text(), "RunFailure")
    assert failure == (
        set(forms.FailureData.__required_keys__),
        set(forms.FailureData.__optional_keys__),
    )
    assert typing.get_type_hints(forms.RunFailedEvent)["failure"] is forms.FailureData


def test_the_storage_forms_are_the_engines() -> None:
    rust = enum_forms((SRC / "intent.rs").read_text(), "StorageRequest", "op")
    assert rust["save_selection"][0] == {"op", "key", "session_uid"}
    assert typed_forms(forms.StorageRequest, "op") == rust


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

"""The engine from Python with no network (issue 15): typed values, refused input as
EngineError, and determinism (the same inputs give the same intents, INV-12)."""

from __future__ import annotations

import json

import pytest

import agent_engine
from agent_engine import AbortIntent, Engine, EngineError, HttpIntent, StorageIntent

BASE = "http://127.0.0.1:8787"


def scripted(seed: int) -> list[dict]:
    """A local conversation up to its first message; the intents as the trace writes them."""
    engine = Engine(BASE, 0, seed=seed)
    now = 1
    engine.handle_input(
        {"input": "source", "value": {"baseUrl": BASE, "displayName": "Ledger Helper"}}, now
    )
    engine.handle_input({"input": "is_visible", "value": True}, now)
    seen: list[dict] = []
    sent = False
    for _ in range(40):
        now += 1000
        answers = []
        while (intent := engine.poll_intent()) is not None:
            seen.append(engine.intent_json())
            if isinstance(intent, StorageIntent) and intent.request["op"] == "load_selection":
                answers.append(("selection", intent.request["key"]))
            elif isinstance(intent, HttpIntent):
                assert all(name != "Authorization" for name, _ in intent.headers)
                answers.append(("http", intent))
            else:
                assert isinstance(intent, (StorageIntent, AbortIntent))
        while engine.poll_event() is not None:
            pass
        if not answers:
            if sent:
                break
            engine.command({"command": "create_agent_session"}, now)
            engine.command({"command": "send_message", "text": "Hi"}, now)
            sent = True
            continue
        for kind, value in answers:
            if kind == "selection":
                engine.handle_input(
                    {"input": "stored_selection_loaded", "value": {"key": value, "session_uid": None}},
                    now,
                )
                continue
            url = value.url
            ok = url.endswith("/ready") or url.endswith("/health") or (
                url.endswith("/api/chat") and value.method == "GET"
            )
            if url.endswith("/api/chat") and value.method == "POST":
                continue
            engine.handle_response(value.id, 200 if ok else 404, "application/json", now)
            body = b'{"ok": true, "mode": "local"}' if ok else b"{}"
            engine.handle_body_chunk(value.id, body, now)
            engine.handle_body_end(value.id, now)
    assert sent
    return seen


def test_the_same_inputs_give_the_same_intents() -> None:
    first = scripted(seed=5)
    assert any(i.get("intent") == "http" for i in first)
    assert first == scripted(seed=5)
    # The seed names the new conversation's id: another seed, another id.
    assert first != scripted(seed=6)


def test_refused_values_raise_engine_error() -> None:
    with pytest.raises(EngineError):
        Engine("not a url", 0)
    engine = Engine(BASE, 0)
    with pytest.raises(EngineError):
        engine.handle_input({"input": "no_such_input"}, 1)
    with pytest.raises(EngineError):
        engine.intent_json()
    assert engine.poll_intent() is None
    assert engine.poll_event() is None
    assert engine.poll_timeout() is None
    assert engine.revisions().state >= 0
    assert engine.snapshot()["isVisible"] is False
    assert agent_engine.__version__ == "0.1.0"


def streaming_turn(engine: Engine) -> HttpIntent:
    """Drives a fresh engine with a local source to its first message's streamed POST, answers
    that POST's head, and returns it."""
    engine.handle_input({"input": "source", "value": {"baseUrl": BASE, "displayName": "A"}}, 1)
    engine.handle_input({"input": "is_visible", "value": True}, 1)
    engine.handle_input(
        {
            "input": "stored_selection_loaded",
            "value": {"key": f"ms.command-center-ai.local-session:{BASE}", "session_uid": None},
        },
        1,
    )
    turn = None
    for step in range(30):
        now = 10 + step
        intents = []
        while (intent := engine.poll_intent()) is not None:
            intents.append(intent)
        while engine.poll_event() is not None:
            pass
        https = [i for i in intents if isinstance(i, HttpIntent)]
        posts = [i for i in https if i.method == "POST"]
        if posts:
            turn = posts[0]
            break
        if not https and engine.snapshot()["composerAdmission"]:
            engine.command({"command": "send_message", "text": "go"}, now)
            continue
        for i in https:
            ok = i.url.endswith(("/ready", "/health")) or (
                i.url.endswith("/api/chat") and i.method == "GET"
            )
            engine.handle_response(i.id, 200 if ok else 404, "application/json", now)
            engine.handle_body_chunk(i.id, b'{"ok": true, "mode": "local"}' if ok else b"{}", now)
            engine.handle_body_end(i.id, now)
    assert turn is not None and turn.streamed
    engine.handle_response(turn.id, 200, "text/event-stream", 100, agent_session_uid="local-1")
    return turn


def test_a_streamed_answer_comes_as_text_deltas() -> None:
    engine = Engine(BASE, 0, seed=1, record=True)
    turn = streaming_turn(engine)
    frames = [
        b'data: {"type":"start","messageId":"m-1"}\n\n',
        b'data: {"type":"text-start","id":"t"}\n\n',
        b'data: {"type":"text-delta","id":"t","delta":"Hello"}\n\n',
        b'data: {"type":"text-delta","id":"t","delta":" there"}\n\n',
        b'data: {"type":"text-end","id":"t"}\n\n',
        b'data: {"type":"finish"}\n\n',
        b"data: [DONE]\n\n",
    ]
    text = ""
    for n, frame in enumerate(frames):
        # Half the pieces one call each way: handle then poll, or feed (both drain the same).
        if n % 2:
            events = engine.feed_body_chunk(turn.id, frame, 101)
        else:
            engine.handle_body_chunk(turn.id, frame, 101)
            events = []
            while (event := engine.poll_event()) is not None:
                events.append(event)
        for event in events:
            if isinstance(event, agent_engine.AnswerDelta) and event.kind == "text":
                assert event.session_uid == "local-1"
                assert repr(event).startswith("AnswerDelta(kind=")
                text += event.text
    engine.handle_body_end(turn.id, 102)
    assert text == "Hello there"
    assert engine.snapshot()["runStatus"] == "complete"
    thread = engine.thread()
    assert thread == engine.snapshot()["thread"]
    assert "Hello there" in str(thread[-1])
    trace = engine.trace()
    assert trace is not None and '"input":"source"' in trace


def test_the_snapshot_has_exactly_the_typed_fields() -> None:
    """agent_engine.Snapshot is generated from engine-core's Snapshot: a field added there and
    not regenerated here (tools/gen_snapshot.py) fails this test."""
    typed = set(agent_engine.Snapshot.__annotations__)
    keys = set(Engine(BASE, 0).snapshot())
    assert keys == typed, keys ^ typed


def test_no_credential_in_json_traces_snapshots_or_reprs() -> None:
    """The platform token is sent (in the intent's headers) and nowhere else: not in the
    intent's JSON or repr, nor in the trace or snapshot after a failure whose message quotes
    it (an HTTP library refusing a header value does), nor in an error message."""
    token = "tok-0123456789"
    engine = Engine("https://platform.example.test", 0, record=True)
    engine.handle_input(
        {"input": "person", "value": {"userUid": "user-1", "token": token, "tokenType": None}}, 1
    )
    engine.handle_input({"input": "environment_uid", "value": "env-1"}, 1)
    engine.handle_input({"input": "requested_session_id", "value": "s-1"}, 1)
    engine.handle_input({"input": "is_visible", "value": True}, 1)
    sent = []
    while (intent := engine.poll_intent()) is not None:
        if isinstance(intent, HttpIntent):
            sent.append(intent)
            assert token not in json.dumps(engine.intent_json())
            assert token not in repr(intent)
    assert sent and any(value.endswith(token) for _, value in sent[0].headers)
    engine.handle_failure(sent[0].id, "no_answer", f"Illegal header value b'Bearer {token} '", 2)
    while engine.poll_intent() is not None:
        pass
    while engine.poll_event() is not None:
        pass
    assert token not in json.dumps(engine.snapshot())
    assert token not in (engine.trace() or "")
    with pytest.raises(EngineError) as refused:
        engine.handle_input({"input": "person", "value": f"Bearer {token}"}, 3)
    assert token not in str(refused.value)


def sse(*events: str) -> list[bytes]:
    return [f"data: {e}\n\n".encode() for e in events]


#: An answer with two text parts and a reasoning part between them: every kind of boundary a
#: merge must respect.
ANSWER = sse(
    '{"type":"start","messageId":"m-1"}',
    '{"type":"text-start","id":"a"}',
    '{"type":"text-delta","id":"a","delta":"Hel"}',
    '{"type":"text-delta","id":"a","delta":"lo"}',
    '{"type":"reasoning-start","id":"r"}',
    '{"type":"reasoning-delta","id":"r","delta":"thinking "}',
    '{"type":"reasoning-delta","id":"r","delta":"hard"}',
    '{"type":"reasoning-end","id":"r"}',
    '{"type":"text-delta","id":"a","delta":", "}',
    '{"type":"text-delta","id":"a","delta":"world"}',
    '{"type":"text-end","id":"a"}',
    '{"type":"text-start","id":"b"}',
    '{"type":"text-delta","id":"b","delta":"P.S."}',
    '{"type":"text-end","id":"b"}',
    '{"type":"finish"}',
) + [b"data: [DONE]\n\n"]


def deltas(events: list) -> list[tuple[str, int, str]]:
    return [(e.kind, e.index, e.text) for e in events if isinstance(e, agent_engine.AnswerDelta)]


def per_part(seen: list[tuple[str, int, str]]) -> dict[tuple[str, int], str]:
    out: dict[tuple[str, int], str] = {}
    for kind, index, text in seen:
        out[(kind, index)] = out.get((kind, index), "") + text
    return out


def test_feed_body_chunks_merges_the_deltas_of_one_part_and_nothing_else() -> None:
    """Issue 15 (the crossing's cost): several pieces in one call, their adjacent deltas of one
    part merged; a delta of another part or another kind ends the merge, in order."""
    one_by_one = Engine(BASE, 0, seed=1)
    turn = streaming_turn(one_by_one)
    separate = []
    for piece in ANSWER:
        separate += one_by_one.feed_body_chunk(turn.id, piece, 101)
    assert len(deltas(separate)) == 7

    merged = Engine(BASE, 0, seed=1)
    turn = streaming_turn(merged)
    events = merged.feed_body_chunks(turn.id, ANSWER, 101)
    reasoning = deltas(events)[1][1]
    assert deltas(events) == [
        ("text", 0, "Hello"),
        ("reasoning", reasoning, "thinking hard"),
        ("text", 0, ", world"),
        ("text", deltas(events)[3][1], "P.S."),
    ]
    assert deltas(events)[3][1] not in (0, reasoning)
    assert all(e.session_uid == "local-1" for e in events if isinstance(e, agent_engine.AnswerDelta))
    # The events that are not deltas come through, in the same places.
    others = lambda evs: [e.data for e in evs if isinstance(e, agent_engine.OtherEvent)]  # noqa: E731
    assert others(events) == others(separate)
    assert per_part(deltas(events)) == per_part(deltas(separate))
    merged.handle_body_end(turn.id, 102)
    one_by_one.handle_body_end(turn.id, 102)
    assert merged.thread() == one_by_one.thread()
    assert merged.snapshot()["runStatus"] == "complete"


def test_feed_body_chunks_gives_the_same_answer_for_any_split_and_batching() -> None:
    """The pieces' boundaries (inside an event, between events) and how many go in a call change
    nothing but the number of deltas: the text of every part and the thread are the same.
    Seeded, so every run checks the same 40 splits."""
    import random

    body = b"".join(ANSWER)
    reference = Engine(BASE, 0, seed=1)
    turn = streaming_turn(reference)
    expected = per_part(deltas(reference.feed_body_chunks(turn.id, [body], 101)))
    reference.handle_body_end(turn.id, 102)
    rng = random.Random(15)
    for _ in range(40):
        cuts = sorted(rng.sample(range(1, len(body)), rng.randint(1, 30)))
        pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)])]
        engine = Engine(BASE, 0, seed=1)
        turn = streaming_turn(engine)
        seen: list[tuple[str, int, str]] = []
        at = 0
        while at < len(pieces):
            n = rng.randint(1, 5)
            batch = pieces[at : at + n] if n > 1 else pieces[at]  # one piece may go as bytes
            seen += deltas(engine.feed_body_chunks(turn.id, batch, 101))
            at += n
        engine.handle_body_end(turn.id, 102)
        assert per_part(seen) == expected, cuts
        assert engine.thread() == reference.thread()


def test_feed_body_chunks_refuses_a_piece_that_is_not_bytes_and_feeds_none() -> None:
    """A refused call changes nothing: the good pieces before the bad one are not fed either,
    so feeding them again gives each delta once."""
    engine = Engine(BASE, 0, seed=1)
    turn = streaming_turn(engine)
    for bad in ([ANSWER[0], "text-delta"], [ANSWER[0], None], 42):
        with pytest.raises((EngineError, TypeError)):
            engine.feed_body_chunks(turn.id, bad, 101)
    assert engine.poll_event() is None
    events = engine.feed_body_chunks(turn.id, tuple(ANSWER), 101)
    assert per_part(deltas(events))[("text", 0)] == "Hello, world"

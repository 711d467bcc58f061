"""The engine from Python with no network (issue 15): typed values, refused input as
EngineError, and determinism (the same inputs give the same intents, INV-12)."""

from __future__ import annotations

import json

import pytest

import agent_engine
from agent_engine import AbortIntent, Engine, EngineError, EnginePoisoned, HttpIntent, StorageIntent

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
    # RU-45: a refused base URL gives the reference's text and the stable code.
    with pytest.raises(EngineError) as refused:
        Engine("not a url", 0)
    assert refused.value.code == "config_base_url"
    assert str(refused.value) == (
        "The configuration: The chat backend connection requires an absolute http(s) platform "
        "API base URL."
    )
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


#: An answer with every boundary a merge must respect: a text part and a reasoning part whose
#: deltas alternate, two tool calls whose input deltas alternate, a data part and message
#: metadata between two deltas of one part, a second text part.
ANSWER = sse(
    '{"type":"start","messageId":"m-1"}',
    '{"type":"text-start","id":"a"}',
    '{"type":"text-delta","id":"a","delta":"Hel"}',
    '{"type":"text-delta","id":"a","delta":"lo"}',
    '{"type":"reasoning-start","id":"r"}',
    '{"type":"reasoning-delta","id":"r","delta":"thinking "}',
    '{"type":"text-delta","id":"a","delta":", "}',
    '{"type":"reasoning-delta","id":"r","delta":"hard"}',
    '{"type":"reasoning-delta","id":"r","delta":"er"}',
    '{"type":"text-delta","id":"a","delta":"world"}',
    '{"type":"data-weather","data":{"t":1}}',
    '{"type":"text-delta","id":"a","delta":"!"}',
    '{"type":"message-metadata","messageMetadata":{"k":1}}',
    '{"type":"text-delta","id":"a","delta":"!"}',
    '{"type":"reasoning-end","id":"r"}',
    '{"type":"text-end","id":"a"}',
    '{"type":"tool-input-start","toolCallId":"c1","toolName":"f"}',
    '{"type":"tool-input-start","toolCallId":"c2","toolName":"g"}',
    '{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"{\\"a\\":"}',
    '{"type":"tool-input-delta","toolCallId":"c2","inputTextDelta":"{\\"b\\":"}',
    '{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"1}"}',
    '{"type":"tool-input-delta","toolCallId":"c2","inputTextDelta":"2"}',
    '{"type":"tool-input-delta","toolCallId":"c2","inputTextDelta":"}"}',
    '{"type":"text-start","id":"b"}',
    '{"type":"text-delta","id":"b","delta":"P."}',
    '{"type":"text-delta","id":"b","delta":"S."}',
    '{"type":"text-end","id":"b"}',
    '{"type":"finish"}',
) + [b"data: [DONE]\n\n"]


def seq(events: list) -> list[tuple]:
    """Events as comparable values, in order: deltas by (kind, index, session, text)."""
    return [
        ("delta", e.kind, e.index, e.session_uid, e.text)
        if isinstance(e, agent_engine.AnswerDelta)
        else ("other", e.data)
        for e in events
    ]


def merged(events: list[tuple]) -> list[tuple]:
    """The reference: deltas that follow one another with the same kind, part and session
    joined; nothing else moves."""
    out: list[tuple] = []
    for e in events:
        if e[0] == "delta" and out and out[-1][:4] == e[:4]:
            out[-1] = (*e[:4], out[-1][4] + e[4])
        else:
            out.append(e)
    return out


def deltas(events: list) -> list[tuple[str, int, str]]:
    return [(e.kind, e.index, e.text) for e in events if isinstance(e, agent_engine.AnswerDelta)]


def in_lockstep(pieces_per_call: list[list[bytes]]) -> tuple[Engine, Engine, list, list]:
    """Two engines fed the same pieces: one with `feed_body_chunks` a call at a time, the other
    piece by piece with `feed_body_chunk`; the first's events, and the reference made from the
    second's (merged within each call)."""
    got_engine, ref_engine = Engine(BASE, 0, seed=1), Engine(BASE, 0, seed=1)
    got_turn, ref_turn = streaming_turn(got_engine), streaming_turn(ref_engine)
    got: list = []
    want: list = []
    for call in pieces_per_call:
        out = got_engine.feed_body_chunks(got_turn.id, call if len(call) != 1 else call[0], 101)
        # No two deltas side by side in one call's result could have been merged.
        assert merged(seq(out)) == seq(out)
        got += seq(out)
        separate: list = []
        for piece in call:
            separate += seq(ref_engine.feed_body_chunk(ref_turn.id, piece, 101))
        want += merged(separate)
    got_engine.handle_body_end(got_turn.id, 102)
    ref_engine.handle_body_end(ref_turn.id, 102)
    assert got_engine.thread() == ref_engine.thread()
    return got_engine, ref_engine, got, want


def test_feed_body_chunks_merges_the_deltas_of_one_part_and_nothing_else() -> None:
    """Issue 15 (the crossing's cost): several pieces in one call, the deltas that follow one
    another in one part merged; a delta of another part or kind, or any other event, ends the
    merge, and every event keeps its place."""
    engine, _, got, want = in_lockstep([ANSWER])
    assert got == want
    text = [(kind, text) for _, kind, _, _, text in (e for e in got if e[0] == "delta")]
    assert text == [
        ("text", "Hello"),
        ("reasoning", "thinking "),
        ("text", ", "),
        ("reasoning", "harder"),
        ("text", "world"),
        ("text", "!"),
        ("text", "!"),
        ("tool_input", '{"a":'),
        ("tool_input", '{"b":'),
        ("tool_input", "1}"),
        ("tool_input", "2}"),
        ("text", "P.S."),
    ], text
    assert all(e[3] == "local-1" for e in got if e[0] == "delta")
    # The two "!" are apart: the data part and the metadata stand between them, in place.
    between = got[[e[0] == "delta" and e[4] == "!" for e in got].index(True) + 1]
    assert between[0] == "other", between
    # One piece alone as bytes merges within the piece too.
    _, _, got, want = in_lockstep([[b"".join(ANSWER)]])
    assert got == want and len([e for e in got if e[0] == "delta"]) == 12
    assert engine.snapshot()["runStatus"] == "complete"


def test_feed_body_chunks_gives_the_same_answer_for_any_split_and_batching() -> None:
    """The pieces' boundaries (inside an event, between events) and how many go in a call
    change nothing but where merges stop: each call's events are exactly the piece-by-piece
    events with that call's adjacent deltas merged, and the thread is the same. Seeded, so
    every run checks the same 60 splits."""
    import random

    body = b"".join(ANSWER)
    rng = random.Random(15)
    for _ in range(60):
        cuts = sorted(rng.sample(range(1, len(body)), rng.randint(1, 40)))
        pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)])]
        calls = []
        while pieces:
            n = rng.randint(1, 5)
            calls.append(pieces[:n])
            pieces = pieces[n:]
        _, _, got, want = in_lockstep(calls)
        assert got == want, cuts


def test_feed_body_chunks_refuses_what_is_not_bytes_and_feeds_none() -> None:
    """A refused call changes nothing: the good pieces before the bad one (deltas among them)
    are not fed either, so feeding them again gives each delta once; with no piece, the events
    waiting still come out."""
    engine = Engine(BASE, 0, seed=1)
    turn = streaming_turn(engine)
    before = (engine.revisions(), engine.thread())

    def broken():
        yield ANSWER[0]
        yield ANSWER[2]
        raise ValueError("the source broke")

    for bad, error in (
        ([*ANSWER[:4], "text-delta"], TypeError),
        ([*ANSWER[:4], None], TypeError),
        ([*ANSWER[:4], bytearray(b"x")], TypeError),
        (bytearray(ANSWER[2]), TypeError),
        (memoryview(ANSWER[2]), TypeError),
        ("data: x\n\n", TypeError),
        (42, TypeError),
        (broken(), ValueError),
    ):
        with pytest.raises(error):
            engine.feed_body_chunks(turn.id, bad, 101)
    assert (engine.revisions(), engine.thread()) == before
    assert engine.poll_event() is None
    events = engine.feed_body_chunks(turn.id, tuple(ANSWER), 101)
    assert [t for k, i, t in deltas(events) if k == "text" and i == 0] == ["Hello", ", ", "world", "!", "!"]
    engine.handle_body_chunk(turn.id, b"", 102)
    engine.handle_body_end(turn.id, 102)
    waiting = engine.feed_body_chunks(turn.id, [], 103)
    assert waiting and all(isinstance(e, agent_engine.OtherEvent) for e in waiting), waiting
    assert engine.poll_event() is None


def test_a_panic_poisons_the_engine_for_every_later_call() -> None:
    """As the C ABI (AE_ERR_PANIC, then AE_ERR_POISONED): the call that panicked raises
    EnginePoisoned, and so does every later call of every method, even one whose arguments are
    malformed; EnginePoisoned is not an EngineError; another engine is not touched."""
    import inspect

    from agent_engine import NativeEngine

    engine = Engine(BASE, 0)
    other = Engine(BASE, 0)
    assert not engine.poisoned
    assert not issubclass(EnginePoisoned, EngineError)
    with pytest.raises(EnginePoisoned, match="panicked; it is poisoned"):
        engine._native._panic_for_test()
    assert engine.poisoned
    arguments = {
        "handle_input": ("not json", 1),
        "handle_response": (1, 200, None, None, 1),
        "handle_body_chunk": (1, b"x", 1),
        "handle_body_end": (1, 1),
        "handle_failure": (1, "no_such_kind", "m", 1),
        "handle_timeout": (1,),
        "feed_body_chunk": (1, b"x", 1),
        "feed_body_chunks": (1, ["not bytes"], 1),
        "_panic_for_test": (),
    }
    methods = [
        name
        for name, _ in inspect.getmembers(NativeEngine, callable)
        if not name.startswith("__")
    ]
    assert len(methods) >= 18, methods
    for name in methods:
        with pytest.raises(EnginePoisoned, match="earlier call"):
            getattr(engine._native, name)(*arguments.get(name, ()))
    other.handle_input({"input": "is_visible", "value": True}, 1)
    assert other.snapshot()["isVisible"] is True and not other.poisoned

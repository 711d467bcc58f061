"""What crossing into Python costs (issue 15): a 100k-delta answer decoded and assembled by the
engine, fed from Python and drained from Python after every piece (each text delta read as a
Python str), next to the same work in Rust (`engine-ffi/benches/boundary.rs`, run here as its
baseline). Best of 5 each way.

    cargo bench -p engine-ffi --bench boundary --no-run
    python bindings/python/bench/boundary.py [--rust target/release/deps/boundary-HASH]

Instruction counts (repeatable, whatever else the machine runs): `bench/callgrind.sh`.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import time

from agent_engine import AnswerDelta, Engine, HttpIntent, StorageIntent

BASE = "http://127.0.0.1:8787"
DELTAS = 100_000
WORDS = ["the ", "quick", " fox", " jumps", " over", " a", " lazy", " dog."]


def body(per_event: bool) -> list[bytes]:
    events = [
        'data: {"type":"start","messageId":"m-1"}\n\n',
        'data: {"type":"text-start","id":"t"}\n\n',
    ]
    events += [
        f'data: {{"type":"text-delta","id":"t","delta":"{WORDS[i % 8]}"}}\n\n' for i in range(DELTAS)
    ]
    events += ['data: {"type":"text-end","id":"t"}\n\n', 'data: {"type":"finish"}\n\n', "data: [DONE]\n\n"]
    if per_event:
        return [e.encode() for e in events]
    whole = "".join(events).encode()
    return [whole[i : i + 16384] for i in range(0, len(whole), 16384)]


def to_streaming() -> tuple[Engine, int]:
    engine = Engine(BASE, 0, seed=1)
    now = 1
    engine.handle_input({"input": "source", "value": {"baseUrl": BASE, "displayName": "A"}}, now)
    engine.handle_input({"input": "is_visible", "value": True}, now)
    sent = False
    for _ in range(50):
        now += 1
        intents = []
        while (i := engine.poll_intent()) is not None:
            intents.append(i)
        while engine.poll_event() is not None:
            pass
        for i in intents:
            if isinstance(i, StorageIntent) and i.request["op"] == "load_selection":
                engine.handle_input(
                    {"input": "stored_selection_loaded", "value": {"key": i.request["key"], "session_uid": None}},
                    now,
                )
        https = [i for i in intents if isinstance(i, HttpIntent)]
        for i in https:
            if i.method == "POST" and i.url.endswith("/api/chat"):
                engine.handle_response(i.id, 200, "text/event-stream", now, agent_session_uid="local-default")
                return engine, i.id
            ok = i.url.endswith(("/ready", "/health")) or (i.url.endswith("/api/chat") and i.method == "GET")
            engine.handle_response(i.id, 200 if ok else 404, "application/json", now)
            engine.handle_body_chunk(i.id, b'{"ok": true, "mode": "local"}' if ok else b"{}", now)
            engine.handle_body_end(i.id, now)
        if not intents and not sent:
            engine.command({"command": "send_message", "text": "go"}, now)
            sent = True
    raise SystemExit("the turn never went out")


def stream(pieces: list[bytes], batch: int = 0) -> float:
    """``feed_body_chunks`` (the shell's path) with ``batch`` pieces a call (one goes as
    bytes), adjacent deltas of a part merged; or, with ``batch=0``, ``feed_body_chunk``: one
    call per piece, every delta its own ``AnswerDelta``."""
    engine, id = to_streaming()
    native = engine._native  # the drain a host writes: no JSON
    text = 0
    start = time.perf_counter()
    now = 1_000_000
    if batch == 0:
        feed, inputs = native.feed_body_chunk, pieces
    else:
        feed = native.feed_body_chunks
        inputs = pieces if batch == 1 else [pieces[at : at + batch] for at in range(0, len(pieces), batch)]
    for piece_or_pieces in inputs:
        now += 10
        for event in feed(id, piece_or_pieces, now):
            if type(event) is AnswerDelta:
                text += len(event.text)
        while native.poll_intent() is not None:
            pass
    native.handle_body_end(id, now)
    native.drain_events()
    took = time.perf_counter() - start
    assert text >= DELTAS * 2, text
    return took


def stream_typed(pieces: list[bytes]) -> float:
    """The same through the typed wrapper, one event per poll."""
    engine, id = to_streaming()
    text = 0
    start = time.perf_counter()
    now = 1_000_000
    for piece in pieces:
        now += 10
        engine.handle_body_chunk(id, piece, now)
        while engine.poll_intent() is not None:
            pass
        while (event := engine.poll_event()) is not None:
            if type(event) is AnswerDelta:
                text += len(event.text)
    engine.handle_body_end(id, now)
    took = time.perf_counter() - start
    assert text >= DELTAS * 2, text
    return took


def rust_baseline(binary: str, mode: str) -> float:
    best = None
    for _ in range(5):
        out = subprocess.run(
            [binary], env=dict(os.environ, BOUNDARY_ONLY=f"rust:{mode}"), capture_output=True, text=True, check=True
        ).stdout
        m = re.search(r": ([\d.]+)(ms|µs|s)", out)
        assert m, out
        value = float(m.group(1)) * {"s": 1.0, "ms": 1e-3, "µs": 1e-6}[m.group(2)]
        best = value if best is None else min(best, value)
    assert best is not None
    return best


def one_case(case: str) -> None:
    """``BOUNDARY_CASE=<feed|typed|merged-N>:<slices|events>[:setup]`` runs one case once, for
    callgrind; ``:setup`` stops before the answer streams (subtract it to count the stream)."""
    way, mode, *setup = case.split(":")
    pieces = body(mode == "events")
    if setup:
        to_streaming()
    elif way == "feed":
        stream(pieces)
    elif way == "typed":
        stream_typed(pieces)
    else:
        stream(pieces, int(way.removeprefix("merged-")))


def main() -> None:
    if case := os.environ.get("BOUNDARY_CASE"):
        one_case(case)
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--rust", help="the engine-ffi boundary bench binary (release)")
    args = parser.parse_args()
    binary = args.rust
    if binary is None:
        found = sorted(
            (p for p in glob.glob("target/release/deps/boundary-*") if not p.endswith(".d")),
            key=os.path.getmtime,
        )
        binary = found[-1] if found else None
    print(f"decode + assemble of a {DELTAS}-delta answer, best of 5 (ns per delta, and / rust)")
    for label, mode, per_event in (("16 KiB slices", "slices", False), ("one event per chunk", "events", True)):
        pieces = body(per_event)
        cases = {
            "feed_body_chunks": min(stream(pieces, 1) for _ in range(5)),
            "feed_body_chunks x4": min(stream(pieces, 4) for _ in range(5)),
            "feed_body_chunk": min(stream(pieces) for _ in range(5)),
            "typed": min(stream_typed(pieces) for _ in range(5)),
        }
        rust = rust_baseline(binary, mode) if binary else None
        print(f"{label}:" + (f" rust {rust / DELTAS * 1e9:.1f}" if rust else ""))
        for name, took in cases.items():
            ratio = f"  {took / rust:.2f}x" if rust else ""
            print(f"    {name:>20} {took / DELTAS * 1e9:7.1f}{ratio}")

if __name__ == "__main__":
    main()

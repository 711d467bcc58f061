// The store against the engine on a long answer cut into pieces of every size (issue 28,
// point 4; the chunking invariance of ui-message-stream.md): a seeded answer with reasoning,
// text, tool inputs streamed in small pieces, outputs, data parts and metadata, served by a
// local runtime in memory in seeded random slices. At every step the store's thread is the
// engine's; at the end it is the same whatever the slicing, and deltas were applied in place.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ChatStore, Engine, MemoryStorage, Shell } from "../dist/index.js";
import { localRuntime } from "./support/runtime.mjs";

/** mulberry32: the anchor harness's seeded generator. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ["the ", "quick ", "brown ", "fox ", "jumps ", "over ", "a ", "lazy ", "dog; ", "é ", "日本 ", "🙂 "];

function answer(rand) {
  const pick = () => WORDS[Math.floor(rand() * WORDS.length)];
  const chunks = [{ type: "start", messageId: "m-1", messageMetadata: { model: "bench" } }];
  for (let step = 0; step < 6; step++) {
    chunks.push({ type: "start-step" });
    chunks.push({ type: "reasoning-start", id: `r${step}` });
    for (let i = 0; i < 30; i++) chunks.push({ type: "reasoning-delta", id: `r${step}`, delta: pick() });
    chunks.push({ type: "reasoning-end", id: `r${step}` });
    chunks.push({ type: "text-start", id: `t${step}` });
    for (let i = 0; i < 60; i++) chunks.push({ type: "text-delta", id: `t${step}`, delta: pick() });
    chunks.push({ type: "text-end", id: `t${step}` });
    const toolCallId = `call-${step}`;
    const input = { path: `src/${step}.rs`, content: Array.from({ length: 40 }, pick).join("") };
    chunks.push({ type: "tool-input-start", toolCallId, toolName: "write_file" });
    const json = JSON.stringify(input);
    for (let i = 0; i < json.length; i += 4) {
      chunks.push({ type: "tool-input-delta", toolCallId, inputTextDelta: json.slice(i, i + 4) });
    }
    chunks.push({ type: "tool-input-available", toolCallId, toolName: "write_file", input });
    chunks.push({ type: "data-status", id: "status", data: { step } });
    chunks.push({ type: "tool-output-available", toolCallId, output: { written: json.length } });
    chunks.push({ type: "message-metadata", messageMetadata: { usage: { step } } });
    chunks.push({ type: "finish-step" });
  }
  chunks.push({ type: "finish", finishReason: "stop" });
  const body = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
  return new TextEncoder().encode(body);
}

const BASE = "http://127.0.0.1:8787";

const plain = (value) => JSON.parse(JSON.stringify(value));

/** A shell on a local runtime in memory that answers with `bytes` in slices `sizes()` long. */
function localShell(bytes, sizes) {
  return new Shell({
    platformBaseUrl: BASE,
    storage: new MemoryStorage(),
    fetch: localRuntime(bytes, { sizes }),
    crossTab: false,
    seed: 7,
    startUnixMs: 1_767_225_600_000,
  });
}

/** One turn: ready, sent, answered; resolves with the last snapshot. */
async function turn(shell) {
  shell.input({ input: "source", value: { baseUrl: BASE, displayName: "Local" } });
  shell.input({ input: "is_visible", value: true });
  await shell.waitReady(10_000);
  shell.command({ command: "send_message", text: "go" });
  return shell.waitFor((s) => s.runStatus === "complete" || s.runStatus === "error", 20_000);
}

async function run(bytes, sizes) {
  const shell = localShell(bytes, sizes);
  const failures = [];
  let steps = 0;
  shell.subscribe(() => {
    try {
      assert.deepEqual(plain(shell.store.getSnapshot().thread), plain(shell.engine.thread()));
      steps++;
    } catch (e) {
      failures.push(e);
    }
  });
  const done = await turn(shell);
  const stats = { ...shell.store.stats };
  shell.close();
  assert.deepEqual(failures, []);
  return { answer: plain(done.thread.at(-1)), steps, stats };
}

test("any slicing gives the same message, the store agreeing with the engine at every step", async () => {
  const bytes = answer(random(1));
  const whole = await run(bytes, () => bytes.length);
  assert.equal(whole.answer.status, "complete");
  // The ended answer was kept as the deltas built it, not read again (ThreadView::settled).
  assert.equal(whole.stats.answersKept, 1, JSON.stringify(whole.stats));
  assert.equal(whole.answer.parts.filter((p) => p.type === "dynamic-tool" || p.type.startsWith("tool-")).length, 6);
  for (const seed of [2, 3, 4, 5]) {
    const rand = random(seed);
    // Pieces of 1 to 64 bytes: UTF-8 sequences and frames cut anywhere.
    const cut = await run(bytes, () => 1 + Math.floor(rand() * 64));
    assert.deepEqual(cut.answer, whole.answer, `seed ${seed}`);
    assert.ok(cut.steps > 100, `seed ${seed}: ${cut.steps} steps`);
    assert.ok(cut.stats.deltasApplied > 10 * cut.stats.threadReads, JSON.stringify(cut.stats));
    assert.equal(cut.stats.answersKept, 1, JSON.stringify(cut.stats));
  }
});

test("a store made by a listener in the middle of a step applies none of that step's deltas twice", async () => {
  const bytes = answer(random(9));
  const shell = localShell(bytes, () => 700);
  let late;
  const failures = [];
  // Made on the first text delta: the constructor reads the thread with the whole step in it,
  // and the listener set hands it the rest of that step's events.
  let checked = 0;
  shell.onEvent((event) => {
    if (late !== undefined || event.type !== "delta" || event.kind !== "text") return;
    late = new ChatStore(shell);
    // Checked when the late store has taken each step (its listeners run at the step's end).
    late.subscribe(() => {
      try {
        assert.deepEqual(plain(late.getSnapshot().thread), plain(shell.engine.thread()));
        checked++;
      } catch (e) {
        failures.push(e);
      }
    });
  });
  await turn(shell);
  assert.ok(late !== undefined, "the late store was made");
  assert.deepEqual(plain(late.getSnapshot().thread), plain(shell.engine.thread()));
  shell.close();
  late.close();
  assert.deepEqual(failures, []);
  assert.ok(checked > 5, `${checked} steps checked`);
});

/** An engine driven by hand (no shell) against a local runtime that is ready at once, until
 *  its turn's message request is out: `{ engine, post, tick }`. */
function localTurn(config) {
  let now = 1_000;
  const tick = () => (now += 1_000);
  const engine = new Engine({ platformBaseUrl: "http://127.0.0.1:9", ...config }, tick());
  const ready = new TextEncoder().encode(JSON.stringify({ ok: true, mode: "local" }));
  engine.handleInput({ input: "source", value: { baseUrl: "http://127.0.0.1:8787", displayName: "L" } }, tick());
  engine.handleInput({ input: "is_visible", value: true }, tick());
  let sent = false;
  for (let round = 0; round < 200; round++) {
    const intents = [];
    for (let intent; (intent = engine.pollIntent()) !== undefined; ) intents.push(intent);
    while (engine.pollEvent() !== undefined);
    for (const intent of intents) {
      if (intent.kind === "http") {
        if (intent.method === "POST" && new URL(intent.url).pathname === "/api/chat") {
          return { engine, post: intent.id, tick };
        }
        engine.handleResponse(intent.id, { status: 200, contentType: "application/json" }, tick());
        engine.feedBodyChunks(intent.id, ready, tick());
        engine.handleBodyEnd(intent.id, tick());
      } else if (intent.op === "load") {
        engine.handleInput({ input: "stored_sessions_loaded", value: { key: intent.key, sessions: null } }, tick());
      } else if (intent.op === "load_queue") {
        engine.handleInput({ input: "stored_queue_loaded", value: { key: intent.key, rows: null } }, tick());
      } else if (intent.op === "load_selection") {
        engine.handleInput({ input: "stored_selection_loaded", value: { key: intent.key, session_uid: null } }, tick());
      }
    }
    if (!sent && engine.snapshot().sendReadiness.state === "ready") {
      engine.command({ command: "send_message", text: "go" }, tick());
      sent = true;
    } else if (intents.length === 0) {
      const at = engine.pollTimeout();
      assert.notEqual(at, undefined, "the turn is stuck");
      now = Math.max(now, at);
      engine.handleTimeout(now);
    }
  }
  assert.fail("no message request");
}

const frames = (...chunks) => new TextEncoder().encode(chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join(""));

// SND-7 (the answer's size cap), issue 28: `feedBodyChunks` hands each piece of an array to the
// engine as it came, so the cap counts pieces as they came: the pieces that fit are kept (the
// failed answer keeps what fit), and the deltas one piece appends to a part come as one.
test("feedBodyChunks: an array's pieces go in as they came, the cap keeps what fit", () => {
  const { engine, post, tick } = localTurn({ maxAnswerBytes: 200 });
  assert.deepEqual(engine.feedBodyChunks(post, [], tick()), [], "no piece, no event");
  engine.handleResponse(post, { status: 200, contentType: "text/event-stream", agentSessionUid: "local-1" }, tick());
  const fits = frames(
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "hel" },
    { type: "text-delta", id: "t", delta: "lo" },
  );
  assert.ok(fits.length <= 200);
  const over = frames({ type: "text-delta", id: "t", delta: "x".repeat(200) });
  const events = engine.feedBodyChunks(post, [fits, over], tick());
  const deltas = events.filter((e) => e.type === "delta").map((e) => e.text);
  assert.deepEqual(deltas, ["hello"], "one delta for the piece's two frames, none from the piece over the cap");
  const s = engine.snapshot();
  assert.equal(s.runFailure?.code, "stream_too_large");
  const answer = s.thread.at(-1);
  assert.equal(answer.parts.find((p) => p.type === "text")?.text, "hello");
  engine.close();
});

// The shell against platform-sim on loopback (issue 28, point 3): ready, a streamed answer, a
// refused token, nothing listening. Rule IDs as in spec-tests/rules.txt.

import assert from "node:assert/strict";
import { test } from "node:test";

import { MemoryStorage, NotReadyError } from "../dist/index.js";
import { openDefault, shellFor, startSim } from "./support/sim.mjs";


test("a message sent streams its answer in, deltas and thread agreeing (DEF-1, SHR-1)", async (t) => {
  const sim = await startSim(t);
  const shell = shellFor(sim);
  t.after(() => shell.close());
  const deltas = [];
  shell.onEvent((e) => {
    if (e.type === "delta" && e.kind === "text") deltas.push(e.text);
  });
  openDefault(shell, sim);
  const ready = await shell.waitReady(30_000);
  assert.equal(ready.sendReadiness.state, "ready");
  assert.ok(ready.currentSessionId);
  shell.command({ command: "send_message", text: "Hello" });
  const done = await shell.waitFor(
    (s) => s.runStatus === "complete",
    30_000,
  );
  const answer = done.thread.findLast((m) => m.role === "assistant");
  const text = answer.parts
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("");
  assert.ok(text.length > 0, "the answer has text");
  assert.equal(deltas.join(""), text, "the deltas add up to the answer's text");
  assert.deepEqual(
    done.thread.filter((m) => m.role === "user").map((m) => m.parts[0].text),
    ["Hello"],
  );
  assert.deepEqual(shell.errors, []);
});

test("a wrong token is named at once, with the platform's message (FAIL-3, RU-50)", async (t) => {
  const sim = await startSim(t);
  const shell = shellFor(sim, { token: "not-the-token" });
  t.after(() => shell.close());
  openDefault(shell, sim);
  await assert.rejects(shell.waitReady(30_000), (e) => {
    assert.ok(e instanceof NotReadyError);
    assert.equal(e.code, "default_session_failed");
    assert.equal(e.status, 401);
    assert.equal(e.message, "Authentication credentials were not provided or are not valid.");
    assert.equal(e.failure.operation, "get_or_create_session");
    return true;
  });
  assert.equal(shell.snapshot().currentSessionId, null);
});

test("nothing listening is a transport failure, with the transport's words (FAIL-3)", async (t) => {
  const sim = await startSim(t);
  await sim.stop();
  const shell = shellFor(sim);
  t.after(() => shell.close());
  openDefault(shell, sim);
  await assert.rejects(shell.waitReady(30_000), (e) => {
    assert.ok(e instanceof NotReadyError);
    assert.equal(e.code, "default_session_failed");
    assert.equal(e.status, undefined);
    assert.equal(e.failure.kind, "transport");
    assert.match(e.failure.message, /^fetch failed: .*ECONNREFUSED/);
    return true;
  });
});

test("a transport's error that quotes the credential is passed on redacted", async (t) => {
  const sim = await startSim(t);
  const token = "secret-token-123";
  const shell = shellFor(sim, {
    token,
    // A transport that quotes the header it refused, as some do.
    fetch: async (_url, init) => {
      const header = new Headers(init.headers).get("authorization");
      throw new TypeError(`refused header: ${header}; bare: ${token}; type: application/json`);
    },
  });
  t.after(() => shell.close());
  openDefault(shell, sim);
  await assert.rejects(shell.waitReady(30_000), (e) => {
    assert.equal(e.failure.kind, "transport");
    assert.equal(
      e.failure.message,
      "refused header: [redacted]; bare: [redacted]; type: application/json",
    );
    return true;
  });
  assert.ok(!JSON.stringify(shell.snapshot()).includes(token));
});

test("a listener that throws does not break the turn; what it threw is reported", async (t) => {
  const sim = await startSim(t);
  const reported = [];
  const saved = globalThis.reportError;
  globalThis.reportError = (e) => reported.push(e);
  t.after(() => {
    globalThis.reportError = saved;
  });
  const shell = shellFor(sim);
  t.after(() => shell.close());
  let thrown = false;
  let again = false;
  shell.onEvent((e) => {
    if (e.type === "delta" && !thrown) {
      thrown = true;
      throw new Error("a host's defect");
    }
  });
  shell.subscribe(() => {
    if (thrown && !again) {
      again = true;
      throw new Error("another");
    }
  });
  openDefault(shell, sim);
  await shell.waitReady(30_000);
  shell.command({ command: "send_message", text: "Hello" });
  const done = await shell.waitFor((s) => s.runStatus !== "thinking" && s.runStatus !== "responding" && s.runStatus !== "queued" && s.thread.length === 2, 30_000);
  assert.equal(done.runStatus, "complete");
  const text = done.thread[1].parts.filter((p) => p.type === "text").map((p) => p.text).join("");
  assert.equal(text, "You said: Hello");
  assert.ok(reported.some((e) => e.message === "a host's defect"));
  assert.ok(reported.some((e) => e.message === "another"));
});

test("a turn goes out when the page's locks refuse (a sandboxed frame)", async (t) => {
  const sim = await startSim(t);
  const had = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", {
    configurable: true,
    value: { locks: { request: async () => Promise.reject(new DOMException("no locks", "SecurityError")) } },
  });
  t.after(() => {
    if (had) Object.defineProperty(globalThis, "navigator", had);
    else delete globalThis.navigator;
  });
  // What the other tabs hear: the turn's start and its end.
  const heard = [];
  const channel = new BroadcastChannel(`agent-chat-engine:${new URL(sim.url).origin}:turns`);
  const ended = new Promise((resolve) => {
    channel.onmessage = (e) => {
      heard.push(e.data.phase);
      if (e.data.phase === "ended") resolve();
    };
  });
  t.after(() => channel.close());
  const shell = shellFor(sim);
  t.after(() => shell.close());
  openDefault(shell, sim);
  await shell.waitReady(30_000);
  shell.command({ command: "send_message", text: "Hello" });
  const done = await shell.waitFor((s) => s.runStatus === "complete", 30_000);
  assert.equal(done.thread.length, 2);
  await ended; // the channel delivers on a later task
  assert.deepEqual(heard, ["started", "ended"]);
});

test("a storage port that closes the shell mid-step: the call returns, nothing throws", async (t) => {
  const sim = await startSim(t);
  let shell;
  const storage = new MemoryStorage();
  const load = storage.load.bind(storage);
  storage.load = (key) => {
    shell.close();
    return load(key);
  };
  shell = shellFor(sim, { storage });
  openDefault(shell, sim);
  assert.equal(shell.closed, true);
  assert.deepEqual(shell.errors, []);
});

test("the timer drives the wake: an idle Agent is checked again until it serves (RTA-9, RTA-11, SHR-5)", async (t) => {
  const sim = await startSim(t, "--waking-checks", "2");
  const shell = shellFor(sim);
  t.after(() => shell.close());
  openDefault(shell, sim);
  // The snapshot says the Agent is waking before it is ready: the re-checks are the timer's.
  const waking = await shell.waitFor((s) => s.composerState.status === "waking", 30_000);
  assert.equal(waking.composerState.reason, "Demo Agent is waking up");
  assert.equal(waking.isAssistantRuntimeStarting, true);
  const ready = await shell.waitReady(60_000);
  assert.equal(ready.isAssistantRuntimeStarting, false);
});

test("a stored queue is read back through the storage port, held as away (SND-22, ADR 087)", async (t) => {
  const sim = await startSim(t);
  // Learn the default session's uid first, then start a shell whose storage holds a row.
  const first = shellFor(sim);
  openDefault(first, sim);
  const { currentSessionId: session } = await first.waitReady(30_000);
  first.close();
  const storage = new MemoryStorage();
  storage.save(`main_sequence_ai.message_queue.${session}`, [
    { id: "row-1", text: "written before the reload", createdAt: "2026-12-04T10:00:00Z" },
  ]);
  const shell = shellFor(sim, { storage });
  t.after(() => shell.close());
  openDefault(shell, sim);
  const held = await shell.waitFor((s) => s.messageQueue.length === 1, 30_000);
  assert.equal(held.messageQueue[0].text, "written before the reload");
  assert.equal(held.messageQueue[0].status, "held");
  assert.equal(held.messageQueue[0].holdMessage, "Held while you were away.");
  // Released by the person, it is sent once and leaves the queue and the storage.
  await shell.waitReady(30_000);
  shell.command({ command: "send_next_queued_message" });
  const sent = await shell.waitFor((s) => s.runStatus === "complete" && s.messageQueue.length === 0, 30_000);
  assert.deepEqual(
    sent.thread.filter((m) => m.role === "user").map((m) => m.parts[0].text),
    ["written before the reload"],
  );
  assert.equal(storage.load(`main_sequence_ai.message_queue.${session}`), undefined);
});

test("close() aborts the requests in flight and the engine takes nothing after", async (t) => {
  const sim = await startSim(t);
  const signals = [];
  const shell = shellFor(sim, {
    // Every request hangs until it is aborted.
    fetch: (_url, init) =>
      new Promise((_, reject) => {
        signals.push(init.signal);
        init.signal.addEventListener("abort", () => reject(init.signal.reason));
      }),
  });
  openDefault(shell, sim);
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(signals.length > 0, "requests went out");
  assert.ok(signals.every((s) => !s.aborted));
  shell.close();
  assert.ok(signals.every((s) => s.aborted), "every request aborted");
  assert.equal(shell.closed, true);
  // Inputs after close are dropped, not thrown.
  shell.command({ command: "send_message", text: "too late" });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(shell.errors, []);
});

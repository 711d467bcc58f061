// The shell against platform-sim on loopback (issue 28, point 3): ready, a streamed answer, a
// refused token, nothing listening. Rule IDs as in spec-tests/rules.txt.

import assert from "node:assert/strict";
import { test } from "node:test";

import { MemoryStorage, NotReadyError, Shell } from "../dist/index.js";
import { openDefault, startSim } from "./support/sim.mjs";

function shellFor(sim, options = {}) {
  return new Shell({
    platformBaseUrl: sim.url,
    token: sim.token,
    userUid: sim.person,
    seed: 1,
    storage: new MemoryStorage(),
    ...options,
  });
}

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
  sim.stop();
  await new Promise((r) => setTimeout(r, 100));
  const shell = shellFor(sim);
  t.after(() => shell.close());
  openDefault(shell, sim);
  await assert.rejects(shell.waitReady(30_000), (e) => {
    assert.ok(e instanceof NotReadyError);
    assert.equal(e.code, "default_session_failed");
    assert.equal(e.status, undefined);
    assert.equal(e.failure.kind, "transport");
    assert.match(e.failure.message, /^fetch failed: .*ECONNREFUSED/);
    assert.ok(!e.failure.message.includes(sim.token), "no credential in the text");
    return true;
  });
});

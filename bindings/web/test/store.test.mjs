// The store against platform-sim: at every step its thread is the engine's (deltas applied one
// by one agree with what the engine assembled), and what did not change keeps its identity.
// Issue 28, point 4; the answer's assembly as ui-message-stream.md and RU-1..RU-12 define it.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ChatStore, ThreadCursor, share } from "../dist/index.js";
import { openDefault, shellFor, startSim } from "./support/sim.mjs";

const plain = (value) => JSON.parse(JSON.stringify(value));

for (const dialect of ["runtime", "ai-sdk"]) {
  test(`the store's thread is the engine's at every step (${dialect} dialect)`, async (t) => {
    const sim = await startSim(t, "--dialect", dialect);
    const shell = shellFor(sim);
    t.after(() => shell.close());
    // The shell's own store, and a second one following the same shell.
    const stores = [shell.store, new ChatStore(shell)];
    const store = stores[1];
    let checked = 0;
    let streamingSteps = 0;
    let previous = store.getSnapshot();
    const failures = [];
    // Checked after every step of the shell (its listeners run after the stores'), failures
    // collected and asserted at the end.
    shell.subscribe(() => {
      try {
        const state = store.getSnapshot();
        const engine = plain(shell.engine.thread());
        for (const s of stores) assert.deepEqual(plain(s.getSnapshot().thread), engine);
        if (state.thread.at(-1)?.status === "running") streamingSteps++;
        // Messages before the last keep their identity while the last one streams.
        if (previous.thread.length === state.thread.length && state.thread.length > 1) {
          for (let i = 0; i < state.thread.length - 1; i++) {
            assert.equal(state.thread[i], previous.thread[i], `message ${i} kept its identity`);
          }
        }
        previous = state;
        checked++;
      } catch (e) {
        failures.push(e);
      }
    });
    openDefault(shell, sim);
    await shell.waitReady(30_000);
    shell.command({ command: "send_message", text: "Hello there" });
    await shell.waitFor((s) => s.runStatus === "complete", 30_000);
    shell.command({ command: "send_message", text: "Once more" });
    await shell.waitFor(
      (s) => s.runStatus === "complete" && s.thread.filter((m) => m.role === "user").length === 2,
      30_000,
    );
    assert.deepEqual(failures, []);
    assert.ok(checked > 10, `checked ${checked} steps`);
    assert.ok(streamingSteps > 3, `${streamingSteps} steps while an answer streamed`);
    // Deltas were applied in place; the thread was read whole only when it changed otherwise.
    assert.ok(
      store.stats.deltasApplied > store.stats.threadReads,
      JSON.stringify(store.stats),
    );
    const state = store.getSnapshot();
    assert.equal(state.currentSessionId, shell.snapshot().currentSessionId);
    assert.equal(state.sendReadiness.state, "ready");
    store.close();
  });
}

test("a thread read gives only the messages that changed since the cursor's last read", async (t) => {
  const sim = await startSim(t);
  const shell = shellFor(sim);
  t.after(() => shell.close());
  openDefault(shell, sim);
  await shell.waitReady(30_000);
  shell.command({ command: "send_message", text: "one" });
  await shell.waitFor((s) => s.runStatus === "complete", 30_000);
  const cursor = new ThreadCursor();
  t.after(() => cursor.close());
  const first = shell.engine.threadChanges(cursor);
  assert.ok(first.length >= 2, `${first.length} messages`);
  assert.deepEqual(plain(first), plain(shell.engine.thread()));
  // Nothing changed: no message is written again.
  assert.deepEqual(shell.engine.threadChanges(cursor), first.map(() => null));
  shell.command({ command: "send_message", text: "two" });
  await shell.waitFor(
    (s) => s.runStatus === "complete" && s.thread.filter((m) => m.role === "user").length === 2,
    30_000,
  );
  const next = shell.engine.threadChanges(cursor);
  const thread = plain(shell.engine.thread());
  assert.equal(next.length, thread.length);
  // The first turn's messages are the ones the cursor has; the second turn's are given.
  assert.deepEqual(next.slice(0, first.length), first.map(() => null));
  assert.deepEqual(plain(next.slice(first.length)), thread.slice(first.length));
  assert.ok(next.length > first.length);
  // Another reader's cursor is its own: it is given everything.
  const other = new ThreadCursor();
  assert.deepEqual(plain(shell.engine.threadChanges(other)), thread);
  other.close();
});

test("share keeps what is deep-equal and replaces what is not", () => {
  const a = { x: [1, { y: 2 }], z: { w: "v" } };
  const b = { x: [1, { y: 2 }], z: { w: "changed" } };
  const s = share(a, b);
  assert.equal(s.x, a.x);
  assert.notEqual(s.z, a.z);
  assert.deepEqual(s, b);
  assert.equal(share(a, plain(a)), a);
  const short = [1, 2];
  const longer = share(short, [1, 2, 3]);
  assert.notEqual(longer, short);
  assert.deepEqual(longer, [1, 2, 3]);
  assert.deepEqual(share({ a: 1, b: 2 }, { a: 1 }), { a: 1 });
});

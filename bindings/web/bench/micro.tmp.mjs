import { readFileSync } from "node:fs";
import { Engine } from "agent-chat-engine";
const BASE = "http://127.0.0.1:8787";
const file = process.argv[2];
const bytes = new Uint8Array(readFileSync(file));
function toStreaming() {
  const engine = new Engine({ platformBaseUrl: BASE, seed: 1 }, 0);
  let now = 1;
  engine.handleInput({ input: "source", value: { baseUrl: BASE, displayName: "A" } }, now);
  engine.handleInput({ input: "is_visible", value: true }, now);
  let sent = false;
  for (let k = 0; k < 50; k++) {
    now++;
    const intents = [];
    for (let i = engine.pollIntent(); i; i = engine.pollIntent()) intents.push(i);
    engine.drainEvents();
    for (const i of intents) if (i.kind === "storage" && i.op === "load_selection") engine.handleInput({ input: "stored_selection_loaded", value: { key: i.key, session_uid: null } }, now);
    for (const i of intents.filter((i) => i.kind === "http")) {
      if (i.method === "POST" && i.url.endsWith("/api/chat")) { engine.handleResponse(i.id, { status: 200, contentType: "text/event-stream", agentSessionUid: "local-default" }, now); return [engine, i.id]; }
      const ok = i.url.endsWith("/ready") || i.url.endsWith("/health") || (i.url.endsWith("/api/chat") && i.method === "GET");
      engine.handleResponse(i.id, { status: ok ? 200 : 404, contentType: "application/json" }, now);
      engine.handleBodyChunk(i.id, new TextEncoder().encode(ok ? '{"ok": true, "mode": "local"}' : "{}"), now);
      engine.handleBodyEnd(i.id, now);
    }
    if (intents.length === 0 && !sent) { engine.command({ command: "send_message", text: "go" }, now); sent = true; }
  }
  throw new Error("never sent");
}
for (let run = 0; run < 6; run++) {
  const [engine, id] = toStreaming();
  const t0 = performance.now();
  let n = 0;
  for (let o = 0; o < bytes.length; o += 16384) {
    n += engine.feedBodyChunks(id, bytes.subarray(o, o + 16384), 5).length;
    engine.revisions(); engine.runStatus();
    while (engine.pollIntent()) {}
  }
  engine.handleBodyEnd(id, 6);
  const t1 = performance.now();
  console.log(`feed ${(t1 - t0).toFixed(2)} ms, ${n} events out`);
  engine.close();
}

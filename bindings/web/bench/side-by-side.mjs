// The package's answer pipeline side by side with the reference's and the AI SDK's, in one Node
// process, on the anchor harness's streams (../../../../shared/bench, `node gen.mjs`):
//
//   engine          agent-chat-engine: a Shell (fetch with a streamed body, the WebAssembly
//                   engine decoding and assembling) and its store (`shell.store`, what the
//                   React provider reads) applying every delta to
//                   the message a view reads
//   assistant-stream  the reference's decoder + accumulator (0.3.57): UIMessageStreamDecoder
//                   piped into AssistantMessageAccumulator, to its last message
//   aisdk           the AI SDK's client pipeline (`ai` 7): DefaultChatTransport's parse, then
//                   readUIMessageStream to its last message
//
// Each gets the body as a ReadableStream of 16 KiB slices held in memory. Shapes: `tokens`
// (tokens-10k: 10k text deltas), `agent` (mixed-10k: a 40-step agent answer in the AI SDK's
// names), `runtime` (the same answer in the runtime dialect real Agents send: `textDelta`,
// `tool-call-*`, `tool-result`, no `start`). assistant-stream reads the runtime dialect (it is
// what it was built for), so it runs on the runtime form of each shape; the AI SDK on the AI
// SDK form. One warm-up, then RUNS timed runs each after a forced GC, interleaved; medians.
//
//   node --expose-gc side-by-side.mjs DATA_DIR [runs=5]
//
// Per-event flatness: the time of each slice is charged to the events that start in it; the
// cost per event of the last tenth of the events over the first tenth.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { readdirSync, statSync } from "node:fs";

import { build } from "esbuild";
import { MemoryStorage, Shell } from "agent-chat-engine";
import { localRuntime, sliced } from "../test/support/runtime.mjs";
import { AssistantMessageAccumulator, UIMessageStreamDecoder } from "assistant-stream";
import { DefaultChatTransport, readUIMessageStream } from "ai";

const SLICE = 16 * 1024;
const [dataDir, runsArg = "5"] = process.argv.slice(2);
if (!dataDir) {
  console.error("usage: node --expose-gc side-by-side.mjs DATA_DIR [runs]");
  process.exit(2);
}
const RUNS = Number(runsArg);
const gc = globalThis.gc ?? (() => undefined);
const encoder = new TextEncoder();

// --- the streams -------------------------------------------------------------------------

function chunksOf(text) {
  const out = [];
  for (const event of text.split("\n\n")) {
    if (!event.startsWith("data: ")) continue;
    const data = event.slice(6);
    if (data !== "[DONE]") out.push(JSON.parse(data));
  }
  return out;
}

/** The runtime dialect's frames for an AI SDK answer, as the platform's Agents (ms-tau-sdk)
 *  write them: no `start`, text in `textDelta`, a tool call as `tool-call-start`, one
 *  `tool-call-delta` with the whole arguments as compact JSON, `tool-call-end`, then
 *  `tool-result`; no `message-metadata`. */
function toRuntime(chunks) {
  const out = [];
  for (const chunk of chunks) {
    switch (chunk.type) {
      case "start":
      case "message-metadata":
      case "tool-input-delta":
        break;
      case "text-delta":
        out.push({ type: "text-delta", id: chunk.id, textDelta: chunk.delta });
        break;
      case "tool-input-start":
        out.push({ type: "tool-call-start", toolCallId: chunk.toolCallId, toolName: chunk.toolName });
        break;
      case "tool-input-available":
        out.push({ type: "tool-call-delta", toolCallId: chunk.toolCallId, argsText: JSON.stringify(chunk.input) });
        out.push({ type: "tool-call-end", toolCallId: chunk.toolCallId });
        break;
      case "tool-output-available":
        out.push({ type: "tool-result", toolCallId: chunk.toolCallId, result: chunk.output, isError: false });
        break;
      default:
        out.push(chunk);
    }
  }
  return out;
}

/** `json.dumps(frame, separators=(",", ":"))`: every non-ASCII character escaped. */
const pyJson = (value) =>
  JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

function sse(chunks, write = JSON.stringify) {
  return encoder.encode(chunks.map((c) => `data: ${write(c)}\n\n`).join("") + "data: [DONE]\n\n");
}

function load(name) {
  const text = readFileSync(join(dataDir, `${name}.sse`), "utf8");
  return chunksOf(text);
}

const tokens = load("tokens-10k");
const agent = load("mixed-10k");
const shapes = {
  tokens: { aisdk: sse(tokens), runtime: sse(toRuntime(tokens), pyJson) },
  agent: { aisdk: sse(agent), runtime: sse(toRuntime(agent), pyJson) },
};
shapes.runtime = { aisdk: null, runtime: shapes.agent.runtime };

/** Where each event of a body starts (byte offsets). */
function eventStarts(bytes) {
  const starts = [];
  for (let i = 0; i < bytes.length; ) {
    starts.push(i);
    const next = bytes.indexOf(10, bytes.indexOf(10, i) + 1);
    if (next < 0) break;
    i = next + 1;
  }
  return starts;
}

/** A body of 16 KiB slices; `marks` gets the time each slice was asked for. */
const body = (bytes, marks) => sliced(bytes, () => SLICE, marks);

// --- the pipelines -----------------------------------------------------------------------

const BASE = "http://127.0.0.1:8787";

/** The package: a shell on a local runtime, ready, then one turn answered by `bytes`;
 *  resolves with the store's last assistant message once the run is over. */
async function engine(bytes, marks) {
  const shell = new Shell({
    platformBaseUrl: BASE,
    storage: new MemoryStorage(),
    fetch: localRuntime(bytes, { sizes: () => SLICE, marks, sessionUid: "local-default" }),
  });
  const store = shell.store;
  shell.input({ input: "source", value: { baseUrl: BASE, displayName: "Bench" } });
  shell.input({ input: "is_visible", value: true });
  await shell.waitReady(10_000);
  marks?.splice(0);
  const t0 = performance.now();
  shell.command({ command: "send_message", text: "go" });
  await new Promise((resolve) => {
    const stop = store.subscribe(() => {
      const s = store.getSnapshot();
      if (s.runStatus === "complete" || s.runStatus === "failed") {
        stop();
        resolve();
      }
    });
  });
  const ms = performance.now() - t0;
  const message = store.getSnapshot().thread.at(-1);
  const stats = store.stats;
  shell.close();
  return { ms, message, stats };
}

async function assistantStream(bytes, marks) {
  const t0 = performance.now();
  const stream = body(bytes, marks)
    .pipeThrough(new UIMessageStreamDecoder())
    .pipeThrough(new AssistantMessageAccumulator());
  let message;
  for await (const m of stream) message = m;
  return { ms: performance.now() - t0, message };
}

const transport = new DefaultChatTransport();
async function aisdk(bytes, marks) {
  const t0 = performance.now();
  let message;
  for await (const m of readUIMessageStream({ stream: transport.processResponseStream(body(bytes, marks)) })) {
    message = m;
  }
  return { ms: performance.now() - t0, message };
}

// --- checks ------------------------------------------------------------------------------

function textOf(message) {
  return (message?.parts ?? [])
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("");
}

function expectedText(chunks) {
  return chunks
    .filter((c) => c.type === "text-delta")
    .map((c) => c.delta)
    .join("");
}

// --- measure -----------------------------------------------------------------------------

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Cost per event, last tenth over first tenth of the events. */
function flatness(bytes, marks) {
  const starts = eventStarts(bytes);
  const slices = marks.length - 1;
  const perSlice = new Array(slices).fill(0);
  for (const s of starts) perSlice[Math.min(slices - 1, Math.floor(s / SLICE))]++;
  // slice i was handed out at marks[i]; its work ends when slice i + 1 is asked for
  const durations = perSlice.map((_, i) => marks[i + 1] - marks[i]);
  const tenth = starts.length / 10;
  let seen = 0;
  const first = { t: 0, n: 0 };
  const last = { t: 0, n: 0 };
  for (let i = 0; i < slices; i++) {
    const n = perSlice[i];
    if (seen < tenth) {
      first.t += durations[i];
      first.n += n;
    } else if (seen + n > starts.length - tenth) {
      last.t += durations[i];
      last.n += n;
    }
    seen += n;
  }
  return last.t / last.n / (first.t / first.n);
}

const impls = { engine, "assistant-stream": assistantStream, aisdk };
const results = {};
for (const [shape, forms] of Object.entries(shapes)) {
  const plan = [
    ["engine", shape === "tokens" || shape === "agent" ? forms.aisdk : forms.runtime],
    ["assistant-stream", forms.runtime],
  ];
  if (forms.aisdk !== null) plan.push(["aisdk", forms.aisdk]);
  if (shape !== "runtime") plan.push(["engine (runtime form)", forms.runtime]);
  const expected = expectedText(shape === "tokens" ? tokens : agent);
  const times = Object.fromEntries(plan.map(([name]) => [name, []]));
  const flat = Object.fromEntries(plan.map(([name]) => [name, []]));
  for (let run = -1; run < RUNS; run++) {
    for (const [name, bytes] of plan) {
      const impl = impls[name.split(" ")[0]];
      gc();
      const marks = [];
      const { ms, message } = await impl(bytes, marks);
      if (run < 0) {
        const text = textOf(message);
        if (text !== expected) {
          throw new Error(`${name} on ${shape}: ${text.length} text characters, expected ${expected.length}`);
        }
        continue;
      }
      times[name].push(ms);
      flat[name].push(flatness(bytes, marks));
    }
  }
  results[shape] = Object.fromEntries(
    plan.map(([name, bytes]) => [
      name,
      {
        bytes: bytes.length,
        events: eventStarts(bytes).length,
        median_ms: +median(times[name]).toFixed(2),
        times_ms: times[name].map((t) => +t.toFixed(2)),
        flatness: +median(flat[name]).toFixed(2),
      },
    ]),
  );
  const e = results[shape]["engine"].median_ms;
  for (const name of Object.keys(results[shape])) {
    results[shape][name].ratio_to_engine = +(results[shape][name].median_ms / e).toFixed(1);
  }
}

// The package's size. `files`: every JS and wasm file of the package as installed, each
// gzipped (-9) on its own. `page`: what a page that uses the engine, shell and store downloads
// once a bundler has done its work: the main entry bundled and minified by esbuild, and the
// wasm, each gzipped.
const pkg = fileURLToPath(new URL("../", import.meta.url));
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (/\.(js|wasm)$/.test(name)) files.push(path);
  }
};
walk(join(pkg, "dist"));
walk(join(pkg, "wasm"));
const gz = (bytes) => gzipSync(bytes, { level: 9 }).length;
const size = { files: { count: files.length, raw: 0, gzip: 0 } };
for (const file of files) {
  const bytes = readFileSync(file);
  size.files.raw += bytes.length;
  size.files.gzip += gz(bytes);
}
size.files.gzip_kib = +(size.files.gzip / 1024).toFixed(1);
const bundle = await build({
  entryPoints: [join(pkg, "dist/index.js")],
  bundle: true,
  minify: true,
  format: "esm",
  write: false,
  logLevel: "silent",
});
const js = bundle.outputFiles[0].contents;
const wasm = readFileSync(join(pkg, "wasm/agent_engine_web_bg.wasm"));
size.page = { js_gzip: gz(js), wasm_gzip: gz(wasm), gzip: gz(js) + gz(wasm) };
size.page.gzip_kib = +(size.page.gzip / 1024).toFixed(1);

console.log(JSON.stringify({ node: process.version, runs: RUNS, results, size }, null, 2));

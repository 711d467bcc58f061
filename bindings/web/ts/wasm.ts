// Loads the WebAssembly module once, where this file runs: from its URL in a browser (or a
// bundler's asset), from the file beside this one in Node, which has no fetch for `file:`.

import init, { ThreadCursor, WasmEngine, parsePartialJson, version } from "../wasm/agent_engine_web.js";

const url = new URL("../wasm/agent_engine_web_bg.wasm", import.meta.url);

async function bytesOf(file: URL): Promise<Uint8Array> {
  // Built at run time so that a bundler for the browser leaves Node's module alone.
  const fs = "node:fs/promises";
  const { readFile } = (await import(/* @vite-ignore */ fs)) as typeof import("node:fs/promises");
  return readFile(file);
}

await init({ module_or_path: url.protocol === "file:" ? await bytesOf(url) : url });

export { ThreadCursor, WasmEngine, parsePartialJson, version };

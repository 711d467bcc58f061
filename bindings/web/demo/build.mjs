// Builds the demo page: app.jsx bundled with React and the package (build/app.js), and the
// engine's WebAssembly beside it (wasm/, where the package's loader looks for it). Run after
// the package's own build (`npm run build`); `npm run build:demo` does both.

import { copyFileSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

await build({
  entryPoints: [here("./app.jsx")],
  bundle: true,
  format: "esm",
  target: "es2022",
  outfile: here("./build/app.js"),
  jsx: "automatic",
  define: { "process.env.NODE_ENV": '"production"' },
  minify: true,
  logLevel: "warning",
});
mkdirSync(here("./wasm"), { recursive: true });
copyFileSync(here("../wasm/agent_engine_web_bg.wasm"), here("./wasm/agent_engine_web_bg.wasm"));

// The package as a user gets it (issue 28, "Done when"): packed, installed into a fresh Node
// project, and the README's example run there against platform-sim; the README shows the
// example file as it is; the generated Snapshot type is current and has exactly the fields of
// a real snapshot.

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

import { build } from "esbuild";

import { Engine, SNAPSHOT_FIELDS } from "../dist/index.js";
import { generate } from "../tools/gen-snapshot.mjs";
import { MemoryStorage, Shell } from "../dist/index.js";
import { launch, missing } from "./support/browser.mjs";
import { openDefault, startSim } from "./support/sim.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

test("the README shows examples/hello.mjs as it is", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const example = readFileSync(join(root, "examples/hello.mjs"), "utf8");
  const m = /<!-- example: examples\/hello\.mjs -->\n```js\n([\s\S]*?)```/.exec(readme);
  assert.ok(m, "the README has the example's block");
  assert.equal(m[1], example);
  assert.ok(example.trim().split("\n").length <= 14, "about ten lines");
});

test("ts/snapshot.ts is what tools/gen-snapshot.mjs writes from snapshot/mod.rs", () => {
  assert.equal(readFileSync(join(root, "ts/snapshot.ts"), "utf8"), generate());
});

test("real snapshots type-check against the generated Snapshot and its nested types", async (t) => {
  const sim = await startSim(t);
  const snapshots = [];
  // Blocked (a refused token): sendReadiness with its code, message and failure.
  const refused = new Shell({ platformBaseUrl: sim.url, token: "wrong", userUid: sim.person, storage: new MemoryStorage() });
  openDefault(refused, sim);
  await refused.waitFor((s) => s.sendReadiness.state === "blocked", 30_000);
  snapshots.push(refused.engine.snapshot());
  refused.close();
  // After a turn, with a queued row, the picker's catalog and an Agent's icon.
  const shell = new Shell({ platformBaseUrl: sim.url, token: sim.token, userUid: sim.person, storage: new MemoryStorage() });
  t.after(() => shell.close());
  openDefault(shell, sim);
  await shell.waitReady(30_000);
  shell.command({ command: "send_message", text: "Hello" });
  await shell.waitFor((s) => s.runStatus === "complete", 30_000);
  shell.command({ command: "enqueue_message", text: "later" });
  shell.command({ command: "request_agent_icons", agent_uids: [sim.agent] });
  await shell.waitFor((s) => s.agentIcons[sim.agent]?.status === "ready" && s.availableModels.length > 0, 30_000);
  snapshots.push(shell.engine.snapshot());
  const values = snapshots.map((s) => JSON.stringify(s)).join(",\n");
  // Object literals: TypeScript refuses a field the types do not name, and a missing one.
  const dir = mkdtempSync(join(root, "test-artifacts-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "check.ts");
  writeFileSync(
    file,
    `import type { Snapshot } from "../ts/snapshot.js";\nexport const checked: Snapshot[] = [\n${values}\n];\n`,
  );
  const tsc = join(root, "node_modules/typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "--skipLibCheck", file], { cwd: root, encoding: "utf8" });
  for (const key of ["activeSessionDetail", "activeRuntimeInteraction", "agentIcons", "messageQueue", "availableModels"]) {
    assert.notEqual(JSON.stringify(snapshots[1][key]), "null", `${key} was filled in the checked snapshot`);
  }
});

test("a real snapshot has exactly the generated fields, in order", () => {
  const engine = new Engine({ platformBaseUrl: "https://platform.example.test" }, 0);
  assert.deepEqual(Object.keys(engine.snapshot()), [...SNAPSHOT_FIELDS]);
  engine.close();
});

test("npm pack, npm install into a fresh project: the README's example answers in Node and in a page", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "agent-chat-engine-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const tarball = execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], {
    cwd: root,
    encoding: "utf8",
  }).trim().split("\n").at(-1);
  const project = join(dir, "fresh");
  execFileSync("mkdir", ["-p", project]);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "fresh", private: true, type: "module" }));
  execFileSync("npm", ["install", "--silent", "--no-audit", "--no-fund", join(dir, tarball)], {
    cwd: project,
  });
  writeFileSync(join(project, "hello.mjs"), readFileSync(join(root, "examples/hello.mjs")));
  const sim = await startSim(t);
  const child = spawn(process.execPath, ["hello.mjs"], {
    cwd: project,
    env: {
      ...process.env,
      AGENT_PLATFORM_URL: sim.url,
      AGENT_CHAT_TOKEN: sim.token,
      AGENT_USER: sim.person,
      AGENT_ENVIRONMENT: sim.environment,
      AGENT_UID: sim.agent,
    },
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const code = await new Promise((resolve) => child.on("close", resolve));
  assert.equal(code, 0, err);
  assert.equal(out, "You said: Hello");

  // The page: the installed package as plain ES modules, no bundler, served by platform-sim
  // from the project's folder on the platform's origin.
  const why = missing();
  if (why) return t.skip(why);
  writeFileSync(join(project, "hello.html"), readFileSync(join(root, "examples/hello.html")));
  const site = await startSim(t, "--web", project);
  const browser = await launch();
  t.after(() => browser.close());
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${site.url}/demo/hello.html`);
  await page.waitForFunction(() => document.getElementById("out")?.textContent === "You said: Hello", null, {
    timeout: 30_000,
  });
  assert.deepEqual(errors, []);
});

test("the page example is the README's, and is about ten lines", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const example = readFileSync(join(root, "examples/hello.html"), "utf8");
  const m = /<!-- example: examples\/hello\.html -->\n```html\n([\s\S]*?)```/.exec(readme);
  assert.ok(m, "the README has the page example's block");
  assert.equal(m[1], example);
  assert.ok(example.trim().split("\n").length <= 16);
});

test("what a page downloads stays within 350 KiB gzipped (issue 28, point 7)", async () => {
  // The main entry bundled and minified, and the wasm, each gzipped at level 9: the figure
  // docs/benchmarks.md gives ("The WebAssembly package").
  const bundle = await build({
    entryPoints: [join(root, "dist/index.js")],
    bundle: true,
    minify: true,
    format: "esm",
    write: false,
    logLevel: "silent",
  });
  const js = gzipSync(bundle.outputFiles[0].contents, { level: 9 }).length;
  const wasm = gzipSync(readFileSync(join(root, "wasm/agent_engine_web_bg.wasm")), { level: 9 }).length;
  assert.ok(js + wasm <= 350 * 1024, `${js} B of JS + ${wasm} B of wasm = ${js + wasm} B`);
});

// The simulator for the package's tests: `platform-sim` (the workspace's), started by each test
// on loopback (port 0) and stopped after it. `AE_PLATFORM_SIM` names a built binary; otherwise
// `target/debug/platform-sim` of the checkout (`cargo build -p platform-sim`).

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

import { MemoryStorage, Shell } from "../../dist/index.js";

export const TOKEN = "web-shell-token";

export function simBinary() {
  const named = process.env.AE_PLATFORM_SIM;
  if (named) return named;
  const built = fileURLToPath(new URL("../../../../target/debug/platform-sim", import.meta.url));
  if (!existsSync(built)) {
    throw new Error(`no platform-sim at ${built}: cargo build -p platform-sim, or set AE_PLATFORM_SIM`);
  }
  return built;
}

/** A shell on the simulator's platform, as its person, with storage in memory. */
export function shellFor(sim, options = {}) {
  return new Shell({
    platformBaseUrl: sim.url,
    token: sim.token,
    userUid: sim.person,
    seed: 1,
    storage: new MemoryStorage(),
    ...options,
  });
}

/** Starts the simulator with `args`; resolves with its demo values and `stop()`. */
export async function startSim(t, ...args) {
  const child = spawn(simBinary(), ["--port", "0", ...args], {
    env: { ...process.env, PLATFORM_SIM_TOKEN: TOKEN },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  // stop() resolves once the process is gone (its port closed).
  const sim = { token: TOKEN, stop: () => (child.kill(), exited) };
  t?.after(() => child.kill());
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) {
    let m;
    if ((m = /^platform-sim listening on (\S+)/.exec(line))) sim.url = m[1];
    else if ((m = /^environment: (\S+)\s+person: (\S+)/.exec(line))) {
      sim.environment = m[1];
      sim.person = m[2];
    } else if ((m = /^agent: (\S+)/.exec(line)) && sim.agent === undefined) sim.agent = m[1];
    else if (line.startsWith("press Ctrl-C")) break;
  }
  if (sim.url === undefined) throw new Error("platform-sim did not start");
  // Keep draining its output so that it never blocks on a full pipe.
  lines.on("line", () => undefined);
  return sim;
}

/** The inputs that open the Agent's default session. */
export function openDefault(shell, sim, handle = "web-test") {
  shell.input({ input: "environment_uid", value: sim.environment });
  shell.input({
    input: "default_session",
    value: {
      agentUid: sim.agent,
      handleUniqueId: handle,
      name: "Web test",
      status: "ready",
      unavailableMessage: null,
    },
  });
  shell.input({ input: "shows_default_session", value: true });
  shell.input({ input: "is_visible", value: true });
}

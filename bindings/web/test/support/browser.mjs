// Debian's Chromium for the page tests, driven by playwright-core. Without it (or without the
// built demo page) the page tests are skipped, except under CI, where that is a failure.

import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { chromium } from "playwright-core";

export const CHROMIUM = process.env.AE_CHROMIUM ?? "/usr/bin/chromium";
export const DEMO = fileURLToPath(new URL("../../demo", import.meta.url));

/** Why the page tests cannot run here, or undefined. */
export function missing({ demo = false } = {}) {
  const why = !existsSync(CHROMIUM)
    ? `no Chromium at ${CHROMIUM} (apt-get install chromium, or set AE_CHROMIUM)`
    : demo && !existsSync(`${DEMO}/build/app.js`)
      ? "the demo page is not built (npm run build:demo)"
      : undefined;
  if (why && process.env.CI) throw new Error(why);
  return why;
}

/** A headless Chromium. As the machine's notes say: no sandbox as root, and no background
 *  connections (the closed network refuses them). */
export function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

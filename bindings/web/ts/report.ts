// A host's listener runs guarded: what it throws is reported (`reportError`, else an uncaught
// error on a later task) and never reaches the engine's loop or the listeners after it.

/** Runs `listener`; reports what it throws. */
export function guarded(listener: () => void): void {
  try {
    listener();
  } catch (e) {
    const report = (globalThis as { reportError?: (e: unknown) => void }).reportError;
    if (report !== undefined) report(e);
    else
      setTimeout(() => {
        throw e;
      });
  }
}

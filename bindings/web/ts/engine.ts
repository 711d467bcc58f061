// The engine's drive contract, typed: hand it inputs, commands, the answers of the requests it
// asks for and timer ticks, each with the host's time in microseconds; take its intents, events
// and timeout; read its snapshot. It does no I/O.
//
// After every `handle*` call, drain `pollIntent()` and `pollEvent()` (or `drainEvents()`)
// until they give `undefined`, then read `pollTimeout()`.

import { ThreadCursor as WasmThreadCursor, WasmEngine, parsePartialJson as wasmParsePartialJson } from "./wasm.js";
import type { Snapshot } from "./snapshot.js";
import type {
  Command,
  EngineConfig,
  Event,
  Input,
  Intent,
  Message,
  Revisions,
} from "./types.js";

/** A value the engine refused: malformed JSON, a bad configuration, no current intent. `code`
 *  is a stable code where one is defined (`config_base_url`). */
export class EngineError extends Error {
  readonly code: string | undefined;
  constructor(message: string, code?: string) {
    super(message);
    this.name = "EngineError";
    this.code = code;
  }
}

/** The engine trapped (a defect in it): every later call of every engine of this module
 *  throws this. Not an `EngineError`: a host that logs refused values and goes on must not go
 *  on with a poisoned engine. Load the page (or start the process) again. */
export class EnginePoisoned extends Error {
  constructor(cause: unknown) {
    super("The engine panicked; it is poisoned and takes no more calls.", { cause });
    this.name = "EnginePoisoned";
  }
}

let poisoned: unknown = undefined;

/** Runs a call into the module; a refusal becomes an `EngineError`, a trap poisons the
 *  module. */
function call<T>(f: () => T): T {
  if (poisoned !== undefined) throw new EnginePoisoned(poisoned);
  try {
    return f();
  } catch (e) {
    if (e instanceof Error && e.name === "EngineError") {
      throw new EngineError(e.message, (e as { code?: string }).code);
    }
    if (e instanceof WebAssembly.RuntimeError) {
      poisoned = e;
      throw new EnginePoisoned(e);
    }
    throw e;
  }
}

function toEvent(raw: unknown): Event {
  return typeof raw === "string" ? (JSON.parse(raw) as Event) : (raw as Event);
}

function toEvents(raw: unknown[]): Event[] {
  for (let i = 0; i < raw.length; i++) {
    const value = raw[i];
    if (typeof value === "string") raw[i] = JSON.parse(value);
  }
  return raw as Event[];
}

/** The head of an answer. */
export interface ResponseHead {
  status: number;
  contentType?: string | null;
  /** `X-Agent-Session-Uid`. */
  agentSessionUid?: string | null;
  /** The status line's reason phrase (`statusText`). */
  reason?: string | null;
  /** `ETag`: an Agent icon's fingerprint. */
  etag?: string | null;
}

/** One engine. Use it from one thread; `close()` (or `using`) frees it. */
export class Engine {
  #native: WasmEngine | undefined;

  constructor(config: EngineConfig, nowUs: number) {
    const form = { seed: 0, startUnixMs: 0, record: false, platformSender: false, ...config };
    this.#native = call(() => new WasmEngine(JSON.stringify(form), nowUs));
  }

  get #engine(): WasmEngine {
    if (this.#native === undefined) throw new EngineError("The engine is closed.");
    return this.#native;
  }

  /** A host input, as the trace format writes it. */
  handleInput(input: Input, nowUs: number): void {
    const json = JSON.stringify(input);
    call(() => this.#engine.handleInput(json, nowUs));
  }

  /** A command (`{command: "send_message", text: "Hi"}`). */
  command(command: Command, nowUs: number): void {
    this.handleInput({ input: "command", value: command }, nowUs);
  }

  /** The head of the answer to request `id`. */
  handleResponse(id: number, head: ResponseHead, nowUs: number): void {
    call(() =>
      this.#engine.handleResponse(
        id,
        head.status,
        head.contentType ?? undefined,
        head.agentSessionUid ?? undefined,
        head.reason || undefined,
        head.etag ?? undefined,
        nowUs,
      ),
    );
  }

  /** A piece of the body of the answer to request `id`, as it came. */
  handleBodyChunk(id: number, chunk: Uint8Array, nowUs: number): void {
    call(() => this.#engine.handleBodyChunk(id, chunk, nowUs));
  }

  /** Pieces of the body of the answer to request `id` (one, or several, each as it came),
   *  then every event they gave, in one call: the hot path of a streamed answer. The text,
   *  reasoning and tool-input deltas one piece appends to one part, frame after frame, come
   *  as one `AnswerDelta`. The intents still follow with `pollIntent`. */
  feedBodyChunks(id: number, pieces: Uint8Array | Uint8Array[], nowUs: number): Event[] {
    return toEvents(call(() => this.#engine.feedBodyChunks(id, pieces, nowUs)));
  }

  /** The body of the answer to request `id` is complete. */
  handleBodyEnd(id: number, nowUs: number): void {
    call(() => this.#engine.handleBodyEnd(id, nowUs));
  }

  /** Request `id` got no answer (`no_answer`) or broke off after its head (`broken`). */
  handleFailure(id: number, kind: "no_answer" | "broken", message: string, nowUs: number): void {
    call(() => this.#engine.handleFailure(id, kind, message, nowUs));
  }

  /** The time `pollTimeout()` named has come. */
  handleTimeout(nowUs: number): void {
    call(() => this.#engine.handleTimeout(nowUs));
  }

  /** The next intent, or `undefined`. */
  pollIntent(): Intent | undefined {
    const raw = call(() => this.#engine.pollIntent()) as unknown;
    if (raw === undefined) return undefined;
    return typeof raw === "string" ? (JSON.parse(raw) as Intent) : (raw as Intent);
  }

  /** The intent last polled, as the trace format writes it (credentials redacted). */
  intentJson(): unknown {
    return JSON.parse(call(() => this.#engine.intentJson()));
  }

  /** The next event, or `undefined`. */
  pollEvent(): Event | undefined {
    const raw = call(() => this.#engine.pollEvent()) as unknown;
    return raw === undefined ? undefined : toEvent(raw);
  }

  /** Every event waiting, in order. */
  drainEvents(): Event[] {
    return toEvents(call(() => this.#engine.drainEvents()));
  }

  /** When to call `handleTimeout` next (microseconds on the host's clock), or `undefined`. */
  pollTimeout(): number | undefined {
    return call(() => this.#engine.pollTimeout());
  }

  /** The snapshot, with the spec's camelCase names. */
  snapshot(): Snapshot {
    return JSON.parse(call(() => this.#engine.snapshot())) as Snapshot;
  }

  /** The snapshot with an empty `thread` (read the thread by its own counters). */
  snapshotWithoutThread(): Snapshot {
    return JSON.parse(call(() => this.#engine.snapshotWithoutThread())) as Snapshot;
  }

  /** The thread alone (every message read; `threadChanges` reads only what changed). */
  thread(): Message[] {
    const cursor = new ThreadCursor();
    try {
      return this.threadChanges(cursor) as Message[];
    } finally {
      cursor.close();
    }
  }

  /** The thread as it changed since `cursor` was last given it: one entry per message, `null`
   *  for a finished message that is the one the cursor's reader got at the same place last
   *  time (keep that object); `"mirrored"` for the answer that was streaming at that place
   *  then and ended exactly as it streamed, when `mirrored` says the reader applied every
   *  answer delta since (its mirror of the answer is the message: keep it); else the message.
   *  The streaming message is always given. The work is the JSON of the messages that
   *  changed, not of the whole thread. */
  threadChanges(cursor: ThreadCursor, mirrored = false): ThreadChange[] {
    const raw = call(() => this.#engine.threadChanges(cursor.native, mirrored)) as (string | null | true)[];
    const out = raw as unknown as ThreadChange[];
    for (let i = 0; i < raw.length; i++) {
      const item = raw[i];
      if (typeof item === "string") out[i] = JSON.parse(item) as Message;
      else if (item === true) out[i] = "mirrored";
    }
    return out;
  }

  /** The run-status channel alone (cheaper than the snapshot). */
  runStatus(): Record<string, unknown> {
    return JSON.parse(call(() => this.#engine.runStatus())) as Record<string, unknown>;
  }

  /** What changed: compare with the counters last seen. */
  revisions(): Revisions {
    const r = call(() => this.#engine.revisions());
    return { state: r[0] ?? 0, run: r[1] ?? 0, thread: r[2] ?? 0, streaming: r[3] ?? 0 };
  }

  /** The recorded trace (JSON Lines, credentials redacted), when made with `record: true`. */
  trace(): string | undefined {
    return call(() => this.#engine.trace());
  }

  /** Frees the engine's memory; later calls throw. */
  close(): void {
    this.#native?.free();
    this.#native = undefined;
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/** One message of `Engine.threadChanges`: the message, `null` (the one the reader was given
 *  at this place last time), or `"mirrored"` (the answer the reader mirrored from its deltas). */
export type ThreadChange = Message | null | "mirrored";

/** What one reader of the thread was last given by `Engine.threadChanges`. One per reader
 *  (a store); `close()` (or `using`) lets go of the messages it holds. */
export class ThreadCursor {
  #native: WasmThreadCursor | undefined = new WasmThreadCursor();

  /** @internal */
  get native(): WasmThreadCursor {
    if (this.#native === undefined) throw new EngineError("The thread cursor is closed.");
    return this.#native;
  }

  close(): void {
    this.#native?.free();
    this.#native = undefined;
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/** The best-effort parse of a streamed tool input's raw text (what its `input` is while it
 *  grows), or `undefined` when nothing parses yet. */
export function parsePartialJson(text: string): unknown {
  const json = call(() => wasmParsePartialJson(text));
  return json === undefined ? undefined : JSON.parse(json);
}

/** The engine module was poisoned by a trap. */
export function isPoisoned(): boolean {
  return poisoned !== undefined;
}

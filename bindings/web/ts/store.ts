// A framework-free store over a shell: `subscribe` / `getSnapshot`, as React's
// `useSyncExternalStore` (or any other view layer) wants them. The value keeps the identity of
// everything that did not change: a message whose parts did not change is the same object, and
// so is a part, a list, any value of the snapshot equal to the last one. A streamed answer is
// applied delta by delta to the one part it changes (a new part, a new message holding it, a
// new thread array: work proportional to the change, never a copy of the texts or a re-read of
// the thread); the thread is read again only when the engine says it changed.

import { parsePartialJson } from "./engine.js";
import type { Shell } from "./shell.js";
import type { Snapshot } from "./snapshot.js";
import type { AnswerDelta, Event, Message, Part, Revisions, StreamDelta } from "./types.js";

/** What the store gives: the snapshot, its thread mirrored with stable identities. */
export type ChatState = Snapshot;

/** `next` with every part deep-equal to `prev` replaced by `prev`'s (so identities hold). */
export function share<T>(prev: unknown, next: T): T {
  if (prev === next) return next;
  if (typeof prev !== "object" || typeof next !== "object" || prev === null || next === null) {
    return next;
  }
  if (Array.isArray(next)) {
    if (!Array.isArray(prev)) return next;
    let same = prev.length === next.length;
    const out = next.map((value, i) => {
      const shared = share(prev[i], value);
      if (shared !== prev[i]) same = false;
      return shared;
    });
    return (same ? prev : out) as T;
  }
  if (Array.isArray(prev)) return next;
  const p = prev as Record<string, unknown>;
  const n = next as Record<string, unknown>;
  const keys = Object.keys(n);
  let same = keys.length === Object.keys(p).length;
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const shared = share(p[key], n[key]);
    if (!(key in p) || shared !== p[key]) same = false;
    out[key] = shared;
  }
  return (same ? prev : out) as T;
}

const RUN_FIELDS = [
  "runStatus",
  "runStatusDetail",
  "runFailure",
  "thinkingSummary",
  "hasVisibleAssistantOutput",
  "isAgentWorking",
  "hasActiveChatStream",
  "isCancellingSession",
] as const;

/** A tool part whose `input` is the parse of `rawInput`, made when first read (a part grows
 *  by many deltas and is read once per render). */
function toolPart(prev: Record<string, unknown>, raw: string, isText: boolean): Part {
  const part: Record<string, unknown> = {};
  for (const key of Object.keys(prev)) {
    if (key !== "input") part[key] = prev[key];
  }
  part["rawInput"] = raw;
  let parsed: { value: unknown } | undefined;
  Object.defineProperty(part, "input", {
    enumerable: true,
    get() {
      parsed ??= { value: isText ? raw : parsePartialJson(raw) };
      return parsed.value;
    },
  });
  return part as Part;
}

/** The store of one shell. */
export class ChatStore {
  readonly shell: Shell;
  /** How often the thread was read whole, and how many deltas were applied to it in place
   *  (the tests check that a streamed answer is applied, not read again). */
  readonly stats = { threadReads: 0, deltasApplied: 0 };
  #state: ChatState;
  #thread: Message[];
  #seen: Revisions;
  #reload = false;
  #index = new Map<string, number>();
  #indexed: readonly Message[] | undefined;
  #changed = false;
  readonly #listeners = new Set<() => void>();
  readonly #stop: (() => void)[];

  constructor(shell: Shell) {
    this.shell = shell;
    const engine = shell.engine;
    this.#seen = engine.revisions();
    this.#thread = engine.thread();
    this.#state = { ...engine.snapshotWithoutThread(), thread: this.#thread };
    this.#stop = [
      shell.onEvent((event) => this.#event(event)),
      shell.subscribe(() => this.#step()),
    ];
  }

  /** Calls `listener` whenever `getSnapshot()` changed; returns the function that stops it. */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  };

  /** The state now: the same object until something in it changed. */
  readonly getSnapshot = (): ChatState => this.#state;

  /** The message with this id in the state now (by an index kept with the thread: no scan). */
  messageById(id: string): Message | undefined {
    const thread = this.#state.thread;
    const at = this.#index.get(id);
    const found = at === undefined ? undefined : thread[at];
    if (found?.id === id) return found;
    // The messages moved (a read of the thread, a new id): index them again, once.
    if (this.#indexed === thread) return undefined;
    this.#index = new Map(thread.map((m, i) => [m.id, i]));
    this.#indexed = thread;
    const again = this.#index.get(id);
    return again === undefined ? undefined : thread[again];
  }

  /** Stops following the shell. */
  close(): void {
    for (const stop of this.#stop) stop();
    this.#listeners.clear();
  }

  #event(event: Event): void {
    if ("type" in event && event.type === "delta") {
      this.#delta(event);
    } else if ("event" in event && event.event === "answer") {
      if (event.session_uid === this.#state.currentSessionId) this.#answer(event.delta);
    }
  }

  /** The message an answer's deltas change: the thread's last, while it runs. */
  #streaming(): number {
    const last = this.#thread.length - 1;
    const message = this.#thread[last];
    return message !== undefined && message.role === "assistant" && message.status === "running"
      ? last
      : -1;
  }

  #replacePart(at: number, index: number, part: Part | undefined, truncate?: number): void {
    const message = this.#thread[at];
    if (message === undefined) return;
    const parts = message.parts.slice(0, truncate ?? message.parts.length);
    if (part !== undefined) parts[index] = part;
    const thread = this.#thread.slice();
    thread[at] = { ...message, parts };
    this.#thread = thread;
    this.#changed = true;
  }

  #delta(delta: AnswerDelta): void {
    if (delta.sessionUid !== this.#state.currentSessionId) return;
    const at = this.#streaming();
    const part = this.#thread[at]?.parts[delta.index] as Record<string, unknown> | undefined;
    if (part === undefined) {
      this.#reload = true;
      return;
    }
    this.stats.deltasApplied++;
    if (delta.kind === "text" || delta.kind === "reasoning") {
      this.#replacePart(at, delta.index, { ...part, text: `${part["text"] ?? ""}${delta.text}` } as Part);
    } else {
      const raw = `${typeof part["rawInput"] === "string" ? part["rawInput"] : ""}${delta.text}`;
      this.#replacePart(at, delta.index, toolPart(part, raw, delta.kind === "tool_input_text"));
    }
  }

  #answer(delta: StreamDelta): void {
    const at = this.#streaming();
    switch (delta.type) {
      case "partAdded":
      case "partUpdated":
        if (at < 0) this.#reload = true;
        else this.#replacePart(at, delta.index, delta.part);
        return;
      case "partsRemoved":
        if (at < 0) this.#reload = true;
        else this.#replacePart(at, 0, undefined, delta.from);
        return;
      case "started":
      case "metadata":
        if (at < 0) this.#reload = true;
        else this.#replaceMessage(at, delta.type === "started" ? { id: delta.messageId } : { metadata: delta.metadata });
        return;
      case "ended":
        // The end settles the message's parts and status: read it once, as the engine has it.
        this.#reload = true;
        return;
      default:
        // Nothing of the message changes (a tool's status line, a skipped frame, transient
        // data, the Agent's id, a new session), or the thread's next read shows it.
        return;
    }
  }

  #replaceMessage(at: number, fields: Partial<Message>): void {
    const message = this.#thread[at];
    if (message === undefined) return;
    const thread = this.#thread.slice();
    thread[at] = { ...message, ...fields };
    this.#thread = thread;
    this.#changed = true;
  }

  /** After every step of the shell: read what the revisions say moved. */
  #step(): void {
    const engine = this.shell.engine;
    if (this.shell.closed) return;
    const now = engine.revisions();
    const seen = this.#seen;
    this.#seen = now;
    let state = this.#state;
    if (now.state !== seen.state) {
      const next = engine.snapshotWithoutThread() as unknown as Record<string, unknown>;
      delete next["thread"];
      const shared = share(state, { ...next, thread: state.thread } as ChatState);
      state = shared;
    } else if (now.run !== seen.run) {
      const run = engine.runStatus();
      let changed = false;
      const next = { ...state } as Record<string, unknown>;
      for (const field of RUN_FIELDS) {
        const value = share(next[field], run[field]);
        if (value !== next[field]) {
          next[field] = value;
          changed = true;
        }
      }
      if (changed) state = next as unknown as ChatState;
    }
    if (now.thread !== seen.thread || this.#reload) {
      this.#reload = false;
      this.#thread = share(this.#thread, engine.thread());
      this.stats.threadReads++;
      this.#changed = true;
    }
    if (this.#changed || state.thread !== this.#thread) {
      this.#changed = false;
      state = { ...state, thread: this.#thread };
    }
    if (state !== this.#state) {
      this.#state = state;
      for (const listener of [...this.#listeners]) listener();
    }
  }
}

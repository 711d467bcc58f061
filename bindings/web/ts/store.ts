// A framework-free store over a shell: `subscribe` / `getSnapshot`, as React's
// `useSyncExternalStore` (or any other view layer) wants them. The value keeps the identity of
// everything that did not change: a message whose parts did not change is the same object, and
// so is a part, a list, any value of the snapshot equal to the last one.
//
// A streamed answer is applied delta by delta to the parts it changes: the events of one step of
// the shell are gathered, then applied at its end, with one new thread array, one new message
// and one new parts array for the message they change, and a new object for each part they
// change (work proportional to the change: never a copy of the texts, never a re-read of the
// thread). The thread is read again when the engine's `thread` revision moved (a message added,
// an answer started or ended), and whenever the deltas of a step cannot be applied as they are
// (a part the mirror lacks, an answer of another session, the `streaming` revision moving with
// no answer event seen): the mirror is never left behind. A read costs the JSON of the messages
// that changed (`Engine.threadChanges`, by the store's own cursor), not of the whole thread.

import { ThreadCursor, parsePartialJson } from "./engine.js";
import { guarded } from "./report.js";
import type { Shell } from "./shell.js";
import type { Snapshot } from "./snapshot.js";
import type { Event, Message, Part, Revisions, StreamDelta } from "./types.js";

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

/** An answer event of one step, kept until the step ends. */
type Pending = { session: string; event: Event };

/** The store of one shell. `shell.store` is the shell's own; another one can follow the same
 *  shell. */
export class ChatStore {
  readonly shell: Shell;
  /** How often the thread was read, how many deltas were applied to it in place, and how many
   *  ended answers were kept as the deltas built them instead of being read again (the tests
   *  check that a streamed answer is applied, not read again). */
  readonly stats = { threadReads: 0, deltasApplied: 0, answersKept: 0 };
  #state: ChatState;
  #seen: Revisions;
  readonly #cursor = new ThreadCursor();
  /** The messages as the last read of the thread gave them (what `null` in a read refers to:
   *  the deltas applied since change only the streaming message, which a read always gives). */
  #given: Message[] = [];
  /** The session shown at the last read. */
  #readSession: string | null = null;
  #pending: Pending[] = [];
  #index = new Map<string, number>();
  #indexed: readonly Message[] | undefined;
  readonly #listeners = new Set<() => void>();
  readonly #stop: (() => void)[];

  constructor(shell: Shell) {
    this.shell = shell;
    const engine = shell.engine;
    this.#seen = engine.revisions();
    this.#state = { ...engine.snapshotWithoutThread(), thread: [] };
    this.#state = { ...this.#state, thread: this.#read([], this.#state.currentSessionId) };
    this.#stop = [
      shell.onEvent((event) => {
        if ("type" in event && event.type === "delta") {
          this.#pending.push({ session: event.sessionUid, event });
        } else if ("event" in event && event.event === "answer") {
          this.#pending.push({ session: event.session_uid, event });
        }
      }),
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
    this.#cursor.close();
  }

  /** The thread read again: the messages that changed since the last read; the others as the
   *  last read gave them, and an answer that ended as its deltas built it (`mirrored`: every
   *  delta since the last read was applied to `thread`) as `thread` has it. */
  #read(thread: readonly Message[], shown: string | null, mirrored = false): Message[] {
    const changes = this.shell.engine.threadChanges(this.#cursor, mirrored);
    this.#readSession = shown;
    this.stats.threadReads++;
    const given = this.#given;
    const next = changes.map((m, i) => {
      if (m === null) return given[i] as Message;
      if (m === "mirrored") {
        this.stats.answersKept++;
        return thread[i] as Message;
      }
      return share(thread[i], m);
    });
    this.#given = next;
    const same = next.length === thread.length && next.every((m, i) => m === thread[i]);
    return same ? (thread as Message[]) : next;
  }

  /** After every step of the shell: read what the revisions say moved, apply the step's
   *  answer events, tell the listeners when something changed. */
  #step(): void {
    const engine = this.shell.engine;
    const pending = this.#pending;
    this.#pending = [];
    if (this.shell.closed) return;
    const now = engine.revisions();
    const seen = this.#seen;
    this.#seen = now;
    let state = this.#state;
    if (now.state !== seen.state) {
      const next = engine.snapshotWithoutThread();
      state = share(state, { ...next, thread: state.thread });
    } else if (now.run !== seen.run) {
      const run = engine.runStatus();
      let next: Record<string, unknown> | undefined;
      for (const field of RUN_FIELDS) {
        const value = share(state[field], run[field]);
        if (value !== state[field]) {
          next ??= { ...state };
          next[field] = value;
        }
      }
      if (next !== undefined) state = next as unknown as ChatState;
    }
    let thread = state.thread;
    const shown = state.currentSessionId;
    let answers = pending.filter((p) => p.session === shown);
    // Answers of another session are a background run's, unless the session on screen
    // changed in this step (a re-keyed session): then the thread is read.
    const dropped = answers.length < pending.length && now.state !== seen.state;
    let reload = now.thread !== seen.thread || dropped;
    if (!reload && now.streaming !== seen.streaming && answers.length === 0) reload = true;
    // Answer events with no move of `streaming` since the store last looked were already in
    // what it read (a store made in the middle of a step, by a listener of that step's events):
    // they are not applied again; the thread is read.
    if (answers.length > 0 && now.streaming === seen.streaming) {
      answers = [];
      reload = true;
    }
    // The step's deltas are applied first, also when the thread is read after them: the read
    // then need not give again an answer that ended as the deltas built it.
    let mirrored = false;
    if (!dropped && answers.length > 0) {
      const applied = this.#apply(thread, answers);
      if (applied === undefined) reload = true;
      else {
        thread = applied;
        // Every delta since the last read went to the message that read gave, of the same
        // session.
        mirrored = shown === this.#readSession;
      }
    }
    if (reload) thread = this.#read(thread, shown, mirrored);
    if (thread !== state.thread) state = { ...state, thread };
    if (state !== this.#state) {
      this.#state = state;
      for (const listener of [...this.#listeners]) guarded(listener);
    }
  }

  /** The thread with the step's answer events applied to its streaming message, or
   *  `undefined` when they cannot be applied as they are (the thread is then read whole). */
  #apply(thread: readonly Message[], answers: Pending[]): Message[] | undefined {
    const at = thread.length - 1;
    const message = thread[at];
    if (message === undefined || message.role !== "assistant" || message.status !== "running") {
      return undefined;
    }
    // One copy of the message and of its parts for the whole step.
    const draft: Message = { ...message, parts: message.parts.slice() };
    const parts = draft.parts;
    let deltas = 0;
    for (const { event } of answers) {
      if ("type" in event && event.type === "delta") {
        const part = parts[event.index] as Record<string, unknown> | undefined;
        if (part === undefined) return undefined;
        deltas++;
        if (event.kind === "text" || event.kind === "reasoning") {
          parts[event.index] = { ...part, text: `${part["text"] ?? ""}${event.text}` } as Part;
        } else {
          const raw = `${typeof part["rawInput"] === "string" ? part["rawInput"] : ""}${event.text}`;
          parts[event.index] = toolPart(part, raw, event.kind === "tool_input_text");
        }
      } else if ("event" in event && event.event === "answer") {
        if (!this.#answer(draft, event.delta)) return undefined;
      }
    }
    const next = thread.slice();
    next[at] = draft;
    this.stats.deltasApplied += deltas;
    return next;
  }

  /** Applies one change of the answer to the draft; false when the thread must be read. */
  #answer(draft: Message, delta: StreamDelta): boolean {
    const parts = draft.parts;
    switch (delta.type) {
      case "partAdded":
      case "partUpdated":
        // An index past the end would leave a hole: the engine appends there.
        if (delta.index > parts.length) return false;
        parts[delta.index] = delta.part;
        return true;
      case "partsRemoved":
        parts.length = Math.min(parts.length, delta.from);
        return true;
      case "started":
        draft.id = delta.messageId;
        return true;
      case "metadata":
        draft.metadata = delta.metadata;
        return true;
      case "ended":
        // The status the stream ended with. Whatever the engine settles after (a stop, a
        // failure) comes with the read of the thread that follows the end.
        draft.status = delta.status.status;
        if (delta.status.error === undefined) delete draft.error;
        else draft.error = delta.status.error;
        return true;
      default:
        // Nothing of the message changes: a tool's status line, a skipped frame, transient
        // data, the Agent's id, a new session, an error or finish reported in the stream.
        return true;
    }
  }
}

// A shell on web standards only: it carries the engine's intents out (`fetch` with streamed
// bodies and `AbortController`; the storage port), runs its one timer, follows the page's
// visibility, and hands the host snapshots and events. It runs unchanged in browsers and in
// Node 20 and later.
//
// Every call into the engine happens in `#step`, which drains the intents and events after it
// (the drive contract) and sets the timer again; JavaScript runs one callback at a time, so
// the engine sees one input at a time, in order.

import { Engine, EngineError } from "./engine.js";
import type { Snapshot } from "./snapshot.js";
import { BrowserStorage, type StoragePort } from "./storage.js";
import { guarded } from "./report.js";
import { ChatStore } from "./store.js";
import { Tabs } from "./tabs.js";
import type {
  Command,
  EngineConfig,
  Event,
  HttpIntent,
  Input,
  StorageRequest,
  Target,
} from "./types.js";

/** The host's URL rewrite (the reference's `connection.rewriteRequestUrl`, RU-46): a request's
 *  absolute address and target in, the address to request out (absolute, or root-relative
 *  to resolve on the page's origin). Root-relative addresses of the engine never reach it. */
export type UrlRewrite = (url: string, target: Target) => string;

/** The application's own sender of platform requests (RU-47): the request as built, without
 *  `Authorization`, in; its answer out. Its answer is final: a 401 is not repeated (RU-48). */
export type PlatformSender = (request: Request) => Promise<Response>;

/** What a `Shell` is made with. */
export interface ShellOptions extends Partial<Omit<EngineConfig, "platformSender">> {
  /** The platform's base URL. */
  platformBaseUrl: string;
  /** The person's platform token (sent as `Bearer`), when the shell sends platform requests. */
  token?: string | null;
  /** The person's uid. */
  userUid?: string | null;
  /** Where the engine's stored values live (default: `BrowserStorage`). */
  storage?: StoragePort;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /** The URL rewrite, applied once to every request carried out. */
  rewriteRequestUrl?: UrlRewrite;
  /** The application's request sender for platform requests. */
  platformSender?: PlatformSender;
  /** Follow `document.visibilityState` as the page-visibility input (default: where there is
   *  a `document`). */
  followPageVisibility?: boolean;
  /** The host's clock in microseconds (default: `performance.now() * 1000`). Tests pass their
   *  own. */
  nowUs?: () => number;
  /** Keep turns of one session apart across tabs (a Web Lock per session, a BroadcastChannel
   *  telling the other tabs; `tabs.ts`). Default true. */
  crossTab?: boolean;
}

/** `sendReadiness.waitingFor`'s texts, as the engine gives them. */
export const WAITING_TEXTS: Record<string, string> = {
  sessions: "Loading the sessions...",
  default_session: "Opening the default session...",
  session: "Loading the session...",
  runtime_access: "Checking that the Agent is ready...",
  runtime_start: "The Agent's runtime is starting...",
};

/** No message can be sent, and why: what `Shell.waitReady` throws. `code` is the snapshot's
 *  `sendReadiness.code` (`sessions_failed`, `no_session`, `not_visible`, ...) or the shell's
 *  own `timed_out` and `closed`; `failure` the failing read, `status` its HTTP status. */
export class NotReadyError extends Error {
  readonly code: string;
  readonly failure: Record<string, unknown> | undefined;
  readonly noticeCode: string | undefined;
  readonly status: number | undefined;
  constructor(
    code: string,
    message: string,
    failure?: Record<string, unknown>,
    noticeCode?: string,
  ) {
    super(message);
    this.name = "NotReadyError";
    this.code = code;
    this.failure = failure;
    this.noticeCode = noticeCode;
    const status = failure?.["status"];
    this.status = typeof status === "number" ? status : undefined;
  }
}

type Listener = () => void;
type EventListener = (event: Event) => void;

/** Runs one engine against the network until closed. */
export class Shell {
  /** The engine (read its parts; drive it only through the shell). */
  readonly engine: Engine;
  /** The storage port. */
  readonly storage: StoragePort;
  /** Inputs the engine refused (malformed values from the host), in order. */
  readonly errors: Error[] = [];
  /** The snapshot, followed step by step (`ChatStore`): `subscribe` / `getSnapshot` for a
   *  view layer. */
  readonly store: ChatStore;

  readonly #fetch: typeof fetch;
  readonly #rewrite: UrlRewrite | undefined;
  readonly #sender: PlatformSender | undefined;
  readonly #now: () => number;
  readonly #requests = new Map<number, AbortController>();
  readonly #listeners = new Set<Listener>();
  readonly #eventListeners = new Set<EventListener>();
  readonly #platformOrigin: string;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt: number | undefined;
  #closed = false;
  #stepping = false;
  readonly #later: (() => void)[] = [];
  #visibility: (() => void) | undefined;
  readonly #tabs: Tabs | undefined;

  constructor(options: ShellOptions) {
    const origin = performance.now();
    this.#now = options.nowUs ?? (() => Math.round((performance.now() - origin) * 1000));
    const {
      token,
      userUid,
      storage,
      fetch: fetchFn,
      rewriteRequestUrl,
      platformSender,
      followPageVisibility,
      nowUs: _,
      crossTab,
      ...config
    } = options;
    this.engine = new Engine(
      {
        ...config,
        startUnixMs: config.startUnixMs ?? Date.now(),
        platformSender: platformSender !== undefined,
      },
      this.#now(),
    );
    this.store = new ChatStore(this);
    this.storage = storage ?? new BrowserStorage();
    this.#fetch = fetchFn ?? globalThis.fetch.bind(globalThis);
    this.#rewrite = rewriteRequestUrl;
    this.#sender = platformSender;
    this.#platformOrigin = new URL(options.platformBaseUrl.trim()).origin;
    this.#tabs =
      crossTab === false
        ? undefined
        : new Tabs(this.#platformOrigin, (notice) => {
            // Another tab's turn of the session on screen started or ended: read its detail
            // again (it reports the session working, then idle).
            if (!this.#closed && notice.session === this.snapshot().currentSessionId) {
              this.command({ command: "refresh_session_detail" });
            }
          });
    if (token !== undefined || userUid !== undefined) {
      this.input({
        input: "person",
        value: { userUid: userUid ?? null, token: token ?? null, tokenType: null },
      });
    }
    const doc = (globalThis as { document?: Document }).document;
    if ((followPageVisibility ?? doc !== undefined) && doc !== undefined) {
      const follow = () =>
        this.input({ input: "page_visible", value: doc.visibilityState !== "hidden" });
      doc.addEventListener("visibilitychange", follow);
      this.#visibility = () => doc.removeEventListener("visibilitychange", follow);
      follow();
    }
    this.#step(() => undefined);
  }

  // The host's side.

  /** A host input (the trace format's JSON). */
  input(input: Input): void {
    this.#step(() => this.engine.handleInput(input, this.#now()));
  }

  /** A command (`{command: "send_message", text: "Hi"}`). */
  command(command: Command): void {
    this.input({ input: "command", value: command });
  }

  /** The snapshot as of the end of the last step (the shell's `store`: parts read again only
   *  when their revisions moved, a streamed answer applied delta by delta). Inside an event
   *  listener, while a step runs, it is the value before that step; the engine's own
   *  `engine.snapshot()` is always current. */
  snapshot(): Snapshot {
    return this.store.getSnapshot();
  }

  /** Calls `listener` after every step that may have changed the snapshot; returns the
   *  function that stops it. */
  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Calls `listener` with every event, as it comes; returns the function that stops it. */
  onEvent(listener: EventListener): () => void {
    this.#eventListeners.add(listener);
    return () => this.#eventListeners.delete(listener);
  }

  /** Waits until the snapshot satisfies `predicate`; resolves with it. */
  waitFor(predicate: (snapshot: Snapshot) => boolean, timeoutMs = 10_000): Promise<Snapshot> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        if (this.#closed) {
          finish();
          reject(new NotReadyError("closed", "The shell is closed."));
          return true;
        }
        const snapshot = this.snapshot();
        if (!predicate(snapshot)) return false;
        finish();
        resolve(snapshot);
        return true;
      };
      const stop = this.subscribe(() => void check());
      const timer = setTimeout(() => {
        finish();
        reject(new NotReadyError("timed_out", `No matching snapshot after ${timeoutMs} ms.`));
      }, timeoutMs);
      const finish = () => {
        stop();
        clearTimeout(timer);
      };
      check();
    });
  }

  /** Waits until a message can be sent (`sendReadiness` is `ready`) and resolves with that
   *  snapshot. Rejects with `NotReadyError` as soon as the engine is blocked (a refused or
   *  unanswered read: `failure`, `status`; or something the host must give: `not_visible`,
   *  `no_environment`, `no_session`, ...), and after `timeoutMs` with code `timed_out`, naming
   *  what the engine still waited for. */
  async waitReady(timeoutMs = 30_000): Promise<Snapshot> {
    let snapshot: Snapshot;
    try {
      snapshot = await this.waitFor((s) => {
        const state = (s.sendReadiness as Record<string, unknown>)["state"];
        return state === "ready" || state === "blocked";
      }, timeoutMs);
    } catch (e) {
      if (e instanceof NotReadyError && e.code === "timed_out") {
        const waiting = (this.snapshot().sendReadiness as Record<string, unknown>)["waitingFor"];
        const text = typeof waiting === "string" ? WAITING_TEXTS[waiting] : undefined;
        const after = timeoutMs % 1000 === 0 ? `${timeoutMs / 1000} s` : `${timeoutMs} ms`;
        throw new NotReadyError(
          "timed_out",
          text ? `Not ready after ${after}: ${text}` : `Not ready after ${after}.`,
        );
      }
      throw e;
    }
    const readiness = snapshot.sendReadiness as Record<string, unknown>;
    if (readiness["state"] === "blocked") {
      throw new NotReadyError(
        String(readiness["code"]),
        String(readiness["message"] ?? ""),
        readiness["failure"] as Record<string, unknown> | undefined,
        readiness["noticeCode"] as string | undefined,
      );
    }
    return snapshot;
  }

  /** Stops the timer and every request; the engine takes no more inputs. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const controller of this.#requests.values()) controller.abort();
    this.#requests.clear();
    this.#visibility?.();
    this.#tabs?.close();
    for (const listener of [...this.#listeners]) guarded(listener);
    this.store.close();
    this.engine.close();
  }

  get closed(): boolean {
    return this.#closed;
  }

  // The loop.

  /** One input, then the drive contract: drain the intents and events, set the timer, tell
   *  the listeners. A step asked for while one runs (a storage read's answer) runs after it. */
  #step(input: () => void | Event[]): void {
    if (this.#closed) return;
    if (this.#stepping) {
      this.#later.push(() => this.#step(input));
      return;
    }
    this.#stepping = true;
    try {
      let events: void | Event[] = undefined;
      try {
        events = input();
      } catch (e) {
        if (!(e instanceof EngineError)) throw e;
        this.errors.push(e);
      }
      if (events) for (const event of events) this.#emit(event);
      if (!this.#closed) this.#drain();
    } finally {
      this.#stepping = false;
    }
    const next = this.#later.shift();
    if (next !== undefined) next();
    else this.#notify();
  }

  #drain(): void {
    const engine = this.engine;
    // Host code runs inside this loop (storage, fetch, the rewrite, the sender): it may close
    // the shell, after which the engine takes no more calls.
    while (!this.#closed) {
      const intent = engine.pollIntent();
      if (intent === undefined) break;
      if (intent.kind === "http") this.#request(intent);
      else if (intent.kind === "abort") {
        this.#requests.get(intent.id)?.abort();
        this.#requests.delete(intent.id);
      } else this.#storage(intent);
    }
    while (!this.#closed) {
      const event = engine.pollEvent();
      if (event === undefined) break;
      this.#emit(event);
    }
    if (!this.#closed) this.#setTimer();
  }

  #emit(event: Event): void {
    for (const listener of this.#eventListeners) guarded(() => listener(event));
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) guarded(listener);
  }

  #setTimer(): void {
    const at = this.engine.pollTimeout();
    if (at === this.#timerAt) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = at;
    if (at === undefined) return;
    // setTimeout takes at most 2^31 - 1 ms; a later deadline is waited for in steps (a tick
    // before the deadline changes nothing).
    const wait = Math.min(2 ** 31 - 1, Math.max(0, (at - this.#now()) / 1000));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = undefined;
      this.#step(() => this.engine.handleTimeout(this.#now()));
    }, wait);
  }

  /** Carries a storage request out now, in the order given (a read sees what was there before
   *  a later write); a read's answer is the engine's next input. */
  #storage(request: StorageRequest): void {
    const { key } = request;
    switch (request.op) {
      case "load": {
        const sessions = this.storage.load(key) ?? null;
        this.#later.push(() =>
          this.input({ input: "stored_sessions_loaded", value: { key, sessions } }),
        );
        break;
      }
      case "load_queue": {
        const rows = this.storage.load(key) ?? null;
        this.#later.push(() => this.input({ input: "stored_queue_loaded", value: { key, rows } }));
        break;
      }
      case "load_selection": {
        const stored = this.storage.load(key);
        const session_uid = typeof stored === "string" ? stored : null;
        this.#later.push(() =>
          this.input({ input: "stored_selection_loaded", value: { key, session_uid } }),
        );
        break;
      }
      case "save":
        this.storage.save(key, request.sessions);
        break;
      case "save_queue":
        this.storage.save(key, request.rows);
        break;
      case "remove_queue":
        this.storage.remove(key);
        break;
      case "save_selection":
        if (request.session_uid === null) this.storage.remove(key);
        else this.storage.save(key, request.session_uid);
        break;
    }
  }

  /** The address to request: the rewrite's, resolved on the page (or the platform's origin
   *  where there is no page). */
  #address(intent: HttpIntent): string {
    if (this.#rewrite === undefined || intent.rootRelative) return intent.url;
    const address = this.#rewrite(intent.url, intent.target);
    const page = (globalThis as { location?: Location }).location?.href;
    return new URL(address, page ?? this.#platformOrigin).href;
  }

  #request(intent: HttpIntent): void {
    const { id } = intent;
    const controller = new AbortController();
    this.#requests.set(id, controller);
    const live = () => !this.#closed && this.#requests.get(id) === controller;
    // A turn (the runtime's streamed POST) of the session on screen: other tabs wait for it
    // and hear of it (tabs.ts).
    const tabs = this.#tabs;
    // The session on screen now, read from the engine (the store's value is as of the last
    // step's end): once per turn.
    const turn =
      tabs !== undefined && intent.method === "POST" && intent.streamed && intent.target !== "platform"
        ? (this.engine.snapshotWithoutThread().currentSessionId ?? undefined)
        : undefined;
    void (async () => {
      let release: (() => void) | undefined;
      try {
        if (tabs !== undefined && turn !== undefined) {
          try {
            release = await tabs.acquire(turn, controller.signal);
          } catch {
            // Aborted while another tab's turn ran: nothing to send. Refused (a sandboxed
            // frame has no locks): the turn goes without one, and its end is still told.
            if (controller.signal.aborted) return;
            release = () => undefined;
          }
          if (!live()) return;
        }
        // Told once the runtime took the turn (its answer's head): a tab that reads the
        // session's detail then sees it working.
        await this.#carry(intent, controller, live, () => {
          if (turn !== undefined) tabs?.announce({ session: turn, phase: "started" });
        });
      } finally {
        if (release !== undefined && turn !== undefined) {
          release();
          tabs?.announce({ session: turn, phase: "ended" });
        }
      }
    })();
  }

  /** Sends the request and hands its head, pieces, end or failure to the engine. */
  async #carry(
    intent: HttpIntent,
    controller: AbortController,
    live: () => boolean,
    onHead: () => void,
  ): Promise<void> {
    const { id } = intent;
    // The credential, whole and without its scheme (`Bearer ...`).
    const secrets = intent.headers
      .filter(([name]) => name.toLowerCase() === "authorization")
      .flatMap(([, value]) => [value.trim(), value.trim().split(/\s+/).slice(1).join(" ")])
      .filter((v) => v !== "")
      .sort((a, b) => b.length - a.length);
    const scrub = (e: unknown): string => {
      // A transport's message can quote a header: never pass a credential on.
      let message = describe(e);
      for (const secret of secrets) message = message.split(secret).join("[redacted]");
      return message;
    };
    // The request failed below HTTP (no answer, or its body broke off): told once, while live.
    const fail = (kind: "no_answer" | "broken", e: unknown): void => {
      if (!live()) return;
      const message = scrub(e);
      this.#requests.delete(id);
      this.#step(() => this.engine.handleFailure(id, kind, message, this.#now()));
    };
    let response: Response;
    try {
      const headers = new Headers(intent.headers);
      const init: RequestInit = {
        method: intent.method,
        headers,
        signal: controller.signal,
        ...(intent.body !== null ? { body: intent.body as BodyInit } : {}),
      };
      if (this.#sender !== undefined && intent.target === "platform") {
        // RU-47, RU-48: the application's sender; its answer is final.
        headers.delete("authorization");
        response = await this.#sender(new Request(this.#address(intent), init));
      } else {
        response = await this.#fetch(this.#address(intent), init);
      }
    } catch (e) {
      fail("no_answer", e);
      return;
    }
    if (!live()) {
      void response.body?.cancel().catch(() => undefined);
      return;
    }
    this.#step(() =>
      this.engine.handleResponse(
        id,
        {
          status: response.status,
          contentType: response.headers.get("content-type"),
          agentSessionUid: response.headers.get("x-agent-session-uid"),
          reason: response.statusText,
          etag: response.headers.get("etag"),
        },
        this.#now(),
      ),
    );
    if (response.ok) onHead();
    const reader = response.body?.getReader();
    while (reader !== undefined) {
      let piece: ReadableStreamReadResult<Uint8Array>;
      try {
        piece = await reader.read();
      } catch (e) {
        fail("broken", e);
        return;
      }
      if (piece.done || !live()) break;
      const chunk = piece.value;
      this.#step(() => this.engine.feedBodyChunks(id, chunk, this.#now()));
    }
    if (live()) {
      this.#requests.delete(id);
      this.#step(() => this.engine.handleBodyEnd(id, this.#now()));
    } else {
      void reader?.cancel().catch(() => undefined);
    }
  }
}

/** A transport failure's text, with its cause (Node's `fetch failed` says why only there). */
function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as { cause?: unknown }).cause;
  const why = cause instanceof Error ? cause.message : undefined;
  return why && !e.message.includes(why) ? `${e.message}: ${why}` : e.message || e.name;
}

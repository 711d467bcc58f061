// The engine's storage port. In a page it is the reference's: the session list and a local
// runtime's selection in `localStorage`, each session's queue in `sessionStorage` (one tab's
// own); elsewhere (Node, a worker, storage refused) an in-memory map. A failed read or write is
// ignored: the engine's state in memory is authoritative (rules.md, stored lists).

/** Where the engine's stored values live. Values are JSON values; `undefined` is "nothing". */
export interface StoragePort {
  load(key: string): unknown;
  save(key: string, value: unknown): void;
  remove(key: string): void;
}

/** The queue's key prefix (`main_sequence_ai.message_queue.{sessionId}`, ADR 087). */
export const QUEUE_KEY_PREFIX = "main_sequence_ai.message_queue.";
/** The stored session list's key prefix
 *  (`ms.main-sequence-ai.agent-sessions:{user}:{environment}`). */
export const SESSIONS_KEY_PREFIX = "ms.main-sequence-ai.agent-sessions:";
/** A local runtime's selection key prefix (`ms.command-center-ai.local-session:{baseUrl}`). */
export const LOCAL_SESSION_KEY_PREFIX = "ms.command-center-ai.local-session:";

/** Keys to values, in memory. */
export class MemoryStorage implements StoragePort {
  readonly values = new Map<string, unknown>();
  load(key: string): unknown {
    return this.values.get(key);
  }
  save(key: string, value: unknown): void {
    this.values.set(key, value);
  }
  remove(key: string): void {
    this.values.delete(key);
  }
}

/** A `Storage` (web storage) as a port: values as JSON text, failures ignored. */
class WebStoragePort implements StoragePort {
  constructor(private readonly storage: Storage) {}
  load(key: string): unknown {
    try {
      const text = this.storage.getItem(key);
      return text === null ? undefined : JSON.parse(text);
    } catch {
      return undefined;
    }
  }
  save(key: string, value: unknown): void {
    try {
      this.storage.setItem(key, JSON.stringify(value));
    } catch {
      // Full or refused: memory is authoritative.
    }
  }
  remove(key: string): void {
    try {
      this.storage.removeItem(key);
    } catch {
      // Refused: nothing to do.
    }
  }
}

function webStorageOf(name: "localStorage" | "sessionStorage"): Storage | undefined {
  try {
    const storage = (globalThis as Record<string, unknown>)[name] as Storage | undefined;
    // Reading it can throw (storage disabled); so can touching it.
    storage?.getItem("");
    return storage;
  } catch {
    return undefined;
  }
}

/** The reference's storage: queues in `sessionStorage`, everything else in `localStorage`;
 *  an in-memory map for either where the page has none (Node). */
export class BrowserStorage implements StoragePort {
  readonly #local: StoragePort;
  readonly #session: StoragePort;

  constructor() {
    const local = webStorageOf("localStorage");
    const session = webStorageOf("sessionStorage");
    this.#local = local ? new WebStoragePort(local) : new MemoryStorage();
    this.#session = session ? new WebStoragePort(session) : new MemoryStorage();
  }

  #of(key: string): StoragePort {
    return key.startsWith(QUEUE_KEY_PREFIX) ? this.#session : this.#local;
  }
  load(key: string): unknown {
    return this.#of(key).load(key);
  }
  save(key: string, value: unknown): void {
    this.#of(key).save(key, value);
  }
  remove(key: string): void {
    this.#of(key).remove(key);
  }
}

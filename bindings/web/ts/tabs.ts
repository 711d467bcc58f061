// Tabs of one origin showing one session (issue 28, point 6). Each tab's queue is its own
// (sessionStorage, as the reference), so no tab ever sends another's rows. What tabs share is
// the session: a turn started in one tab, while another tab's turn runs, is refused by the
// runtime (409, "already answering"). Two things keep them apart:
//
// - a Web Lock per session (`navigator.locks`) held for the whole of a turn's request, so that
//   a tab's turn waits for the other tab's to end instead of colliding with it;
// - a BroadcastChannel on which a tab says when a turn of a session starts and ends, so that
//   another tab showing that session reads its detail again at once: it sees the session
//   working (another writer, SND-25) and queues what the person writes, then sees it idle
//   and sends the queue, without waiting for its 10 s poll.
//
// Where either is missing (Node 20 has BroadcastChannel but no Web Locks), that part is off.

/** A turn of `session` started or ended in another tab (or another shell of this process). */
export interface TurnNotice {
  session: string;
  phase: "started" | "ended";
}

interface LockManagerLike {
  request(
    name: string,
    options: { signal?: AbortSignal },
    callback: () => Promise<void>,
  ): Promise<void>;
}

/** The turn lock and the turn notices of one shell. */
export class Tabs {
  readonly #channel: BroadcastChannel | undefined;
  readonly #locks: LockManagerLike | undefined;
  readonly #prefix: string;

  constructor(origin: string, onNotice: (notice: TurnNotice) => void) {
    this.#prefix = `agent-chat-engine:${origin}:`;
    const Channel = (globalThis as { BroadcastChannel?: typeof BroadcastChannel }).BroadcastChannel;
    if (Channel !== undefined) {
      const channel = new Channel(`${this.#prefix}turns`);
      channel.onmessage = (e: MessageEvent) => {
        const data = e.data as Partial<TurnNotice> | null;
        if (typeof data?.session === "string" && (data.phase === "started" || data.phase === "ended")) {
          onNotice({ session: data.session, phase: data.phase });
        }
      };
      // Node: an open channel must not keep the process alive.
      (channel as { unref?: () => void }).unref?.();
      this.#channel = channel;
    }
    this.#locks = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;
  }

  /** Waits until no other tab runs a turn of `session`, then holds that until the returned
   *  function is called. Rejects when `signal` aborts first. */
  async acquire(session: string, signal: AbortSignal): Promise<() => void> {
    const locks = this.#locks;
    if (locks === undefined) return () => undefined;
    return new Promise((resolve, reject) => {
      locks
        .request(`${this.#prefix}turn:${session}`, { signal }, () => new Promise<void>((release) => resolve(release)))
        .catch(reject);
    });
  }

  /** Tells the other tabs. */
  announce(notice: TurnNotice): void {
    try {
      this.#channel?.postMessage(notice);
    } catch {
      // A closed channel: nobody to tell.
    }
  }

  close(): void {
    this.#channel?.close();
  }
}

// A local Agent runtime in memory, as a `fetch` for a Shell: ready (/ready, /health, the chat
// probe), and answering a turn's POST /api/chat with a body held in memory, in slices. Used by
// the chunking test and the side-by-side bench, so that a turn needs no platform and no socket.

/** A ReadableStream of `bytes` in slices `sizes()` long; `marks` (optional) gets the time each
 *  slice was asked for. */
export function sliced(bytes, sizes, marks) {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      marks?.push(performance.now());
      if (offset >= bytes.length) return controller.close();
      const end = Math.min(bytes.length, offset + sizes());
      controller.enqueue(bytes.subarray(offset, end));
      offset = end;
    },
  });
}

/** The runtime's `fetch`: a turn is answered with `bytes` (see `sliced`) under the session
 *  uid `sessionUid`. */
export function localRuntime(bytes, { sizes = () => bytes.length, marks, sessionUid = "local-1" } = {}) {
  const json = (value, status = 200) =>
    new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });
  return async (url, init) => {
    const path = new URL(url).pathname;
    const method = init?.method ?? "GET";
    if (path === "/ready" || path === "/health") return json({ ok: true, mode: "local" });
    if (path === "/api/chat" && method === "GET") return json({ ok: true });
    if (path === "/api/chat" && method === "POST") {
      return new Response(sliced(bytes, sizes, marks), {
        headers: { "content-type": "text/event-stream", "x-agent-session-uid": sessionUid },
      });
    }
    return json({ detail: "Not found." }, 404);
  };
}

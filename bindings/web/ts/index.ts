// agent-chat-engine: the deterministic agent chat engine (Rust, compiled to WebAssembly), a
// shell on web standards (`fetch`, `AbortController`, web storage, page visibility) and a
// framework-free store. Runs in browsers and in Node 20 and later.

export { Engine, EngineError, EnginePoisoned, ThreadCursor, isPoisoned, parsePartialJson } from "./engine.js";
export type { ResponseHead, ThreadChange } from "./engine.js";
export { Shell, NotReadyError, WAITING_TEXTS } from "./shell.js";
export type { ShellOptions, UrlRewrite, PlatformSender } from "./shell.js";
export {
  BrowserStorage,
  MemoryStorage,
  QUEUE_KEY_PREFIX,
  SESSIONS_KEY_PREFIX,
  LOCAL_SESSION_KEY_PREFIX,
} from "./storage.js";
export type { StoragePort } from "./storage.js";
export { SNAPSHOT_FIELDS } from "./snapshot.js";
export type { Snapshot } from "./snapshot.js";
export type * from "./types.js";
export { version } from "./wasm.js";
export { ChatStore, share } from "./store.js";
export type { ChatState } from "./store.js";

// The values that cross the engine's boundary, typed: inputs and commands (the trace format's
// JSON, `spec-tests/TRACES.md`), intents, events, storage requests and the thread's messages.
// The snapshot's fields are generated (`snapshot.ts`).

/** The engine's configuration (`HostConfig`). */
export interface EngineConfig {
  /** The platform's base URL (`https://...`; `http://` on loopback). */
  platformBaseUrl: string;
  /** Seeds the engine's only random draws (fresh handles, jitter): same seed, same run. */
  seed?: number;
  /** The wall clock at the engine's start, in Unix milliseconds (for "updated at" texts). */
  startUnixMs?: number;
  /** Record a trace (credentials redacted): `Engine.trace()`. */
  record?: boolean;
  /** Platform requests go to the application's own sender, without `Authorization` (RU-47). */
  platformSender?: boolean;
  /** The largest buffered answer body, in bytes. */
  maxBodyBytes?: number;
  /** The largest streamed answer, in bytes. */
  maxAnswerBytes?: number;
  /** The largest single event of a streamed answer, in bytes. */
  maxEventBytes?: number;
}

/** The signed-in person (the spec's `auth`). */
export interface Person {
  userUid: string | null;
  /** The platform token: requests carry `Authorization: {tokenType} {token}`. */
  token: string | null;
  tokenType?: string | null;
}

/** The default session's descriptor (`defaultSession`). */
export interface DefaultSession {
  agentUid: string | null;
  handleUniqueId: string;
  name: string;
  status?: "loading" | "ready" | "error";
  unavailableMessage: string | null;
}

/** A launch target (`launchTarget`). */
export interface LaunchTarget {
  agentId: string;
  label: string | null;
  launchKey: number;
}

/** A local Agent runtime (ADR 099). */
export interface LocalSource {
  /** A same-origin path (`/__agent__`) or a loopback address. */
  baseUrl: string;
  displayName: string;
}

/** A host input: a level value the engine diffs. */
export type Input =
  | { input: "person"; value: Person }
  | { input: "environment_uid"; value: string | null }
  | { input: "is_visible"; value: boolean }
  | { input: "page_visible"; value: boolean }
  | { input: "requested_session_id"; value: string | null }
  | { input: "default_session"; value: DefaultSession | null }
  | { input: "shows_default_session"; value: boolean }
  | { input: "launch_target"; value: LaunchTarget | null }
  | { input: "avoid_implicit_session_selection"; value: boolean }
  | { input: "view_context"; value: unknown }
  | { input: "stored_sessions_loaded"; value: { key: string; sessions: unknown } }
  | { input: "stored_queue_loaded"; value: { key: string; rows: unknown } }
  | { input: "stored_selection_loaded"; value: { key: string; session_uid: string | null } }
  | { input: "source"; value: LocalSource | null }
  | { input: "command"; value: Command };

/** An Agent reference for `start_agent_session`. */
export interface AgentRecord {
  id?: number | null;
  uid?: string | null;
  name?: string | null;
}

/** A model choice for `resolve_session_model_selection`. */
export interface ModelChoice {
  provider: string;
  model: string;
  /** The thinking level. */
  thinking?: string | null;
}

/** The spec's actions. */
export type Command =
  | { command: "retry_default_session" }
  | { command: "restore_default_session_selection" }
  | { command: "start_agent_session"; agent: AgentRecord }
  | { command: "start_agent_session_by_id"; agent_id: string; label?: string | null }
  | { command: "open_latest_or_start_agent_session_by_id"; agent_id: string; label?: string | null }
  | { command: "create_agent_session" }
  | { command: "archive_agent_session"; session_uid: string }
  | { command: "unarchive_agent_session"; session_uid: string }
  | { command: "delete_agent_session"; session_uid: string }
  | { command: "refresh_session_detail" }
  | { command: "refresh_active_session_runtime_access" }
  | { command: "revalidate_stale_runtime_access" }
  | { command: "send_message"; text: string }
  | { command: "cancel_active_session" }
  | { command: "enqueue_message"; text: string }
  | { command: "remove_queued_message"; id: string }
  | { command: "edit_queued_message"; id: string }
  | { command: "reorder_queued_message"; id: string; to_index: number }
  | { command: "clear_message_queue" }
  | { command: "send_next_queued_message" }
  | { command: "set_selected_reasoning_effort_value"; value: string | null }
  | { command: "set_selected_provider_value"; value: string | null }
  | { command: "set_selected_model_value"; value: string | null }
  | { command: "resolve_session_model_selection"; choice: ModelChoice }
  | { command: "cancel_session_model_selection" }
  | { command: "request_available_models" }
  | { command: "invalidate_model_provider_catalog" }
  | { command: "clear_thread" }
  | { command: "fetch_archived_agent_sessions"; agent_uid?: string | null; limit?: number | null }
  | { command: "search_agent_sessions"; query: string; limit?: number | null }
  | { command: "refresh_latest_sessions" }
  | { command: "clear_archived_sessions" }
  | { command: "request_agent_icons"; agent_uids: string[] };

/** Where a request goes. */
export type Target = "platform" | "agent_runtime" | "local";

/** Send this request; feed its answer back under `id`. */
export interface HttpIntent {
  kind: "http";
  id: number;
  method: string;
  /** The absolute address with its query. */
  url: string;
  /** The headers, credentials included: send them, never log them. */
  headers: [string, string][];
  /** The body (JSON bytes), when there is one. */
  body: Uint8Array | null;
  /** The answer streams: feed its body pieces as they come. */
  streamed: boolean;
  target: Target;
  /** The address came root-relative (resolved on the platform's origin): a URL rewrite does
   *  not see it (RU-46). */
  rootRelative: boolean;
}

/** Drop request `id` if it still runs (a late answer is ignored anyway). */
export interface AbortIntent {
  kind: "abort";
  id: number;
}

/** A request to the host's storage, carried out in the order given; a load is answered with
 *  the matching `stored_*_loaded` input. */
export type StorageRequest =
  | { op: "load"; key: string }
  | { op: "save"; key: string; sessions: unknown[] }
  | { op: "load_queue"; key: string }
  | { op: "save_queue"; key: string; rows: QueueRowStored[] }
  | { op: "remove_queue"; key: string }
  | { op: "load_selection"; key: string }
  | { op: "save_selection"; key: string; session_uid: string | null };

/** A queued message as stored (`main_sequence_ai.message_queue.{sessionId}`). */
export interface QueueRowStored {
  id: string;
  text: string;
  createdAt: number | string;
}

export type StorageIntent = { kind: "storage" } & StorageRequest;

export type Intent = HttpIntent | AbortIntent | StorageIntent;

/** A piece of a streamed answer: `text` appended to part `index` of the answer in
 *  `sessionUid`. `tool_input` appends to a tool call's `rawInput` (its `input` the parse of
 *  it); `tool_input_text` too, its `input` the text itself. */
export interface AnswerDelta {
  type: "delta";
  kind: "text" | "reasoning" | "tool_input" | "tool_input_text";
  index: number;
  sessionUid: string;
  text: string;
}

/** The variant of a notice. */
export type NoticeVariant = "info" | "success" | "error";

/** A turn's failure: its stable code and its text. */
export interface RunFailure {
  code: string;
  message: string;
  source?: string;
}

/** Any other change of a streamed answer (`StreamDelta`): a part added or changed whole, the
 *  metadata, the end... */
export type StreamDelta =
  | { type: "started"; messageId: string }
  | { type: "partAdded"; index: number; part: Part }
  | { type: "partUpdated"; index: number; part: Part }
  | { type: "partsRemoved"; from: number }
  | { type: "metadata"; metadata: unknown }
  | { type: "transientData"; dataType: string; id: string | null; data: unknown }
  | { type: "error"; errorText: string }
  | { type: "finished"; finishReason: string | null }
  | { type: "aborted"; reason: string | null }
  | { type: "ended"; outcome: unknown; status: { status: Message["status"]; error?: string } }
  | { type: "agentId"; agentId: string }
  | { type: "newSession"; [key: string]: unknown }
  | { type: "toolStatus"; line: string | null }
  | { type: "frameSkipped"; frameType: string | null; reason: { kind: string; field?: string } }
  | { type: "textDelta"; index: number; delta: string }
  | { type: "reasoningDelta"; index: number; delta: string }
  | { type: "toolInputDelta"; index: number; delta: string; inputIsText: boolean };

/** An edge-triggered fact other than a text, reasoning or tool-input delta. */
export type EngineEvent =
  | { event: "notify"; title: string; description?: string; variant: NoticeVariant }
  | { event: "request_visible" }
  | { event: "requested_session_removed"; session_uid: string }
  | { event: "answer"; session_uid: string; delta: StreamDelta }
  | { event: "message_not_sent"; session_uid: string | null; text: string; reason: string; code: string }
  | { event: "run_failed"; session_uid: string; failure: RunFailure; sent: boolean }
  | { event: "queued_message_returned"; session_uid: string; id: string; text: string };

/** What the engine hands out: a delta, or another event. */
export type Event = AnswerDelta | EngineEvent;

/** Revision counters, one per part of the snapshot: a counter that did not move means the
 *  part did not change. */
export interface Revisions {
  state: number;
  run: number;
  thread: number;
  streaming: number;
}

/** A part of a message. */
export type Part =
  | { type: "text"; text: string; state?: "streaming" | "done"; [key: string]: unknown }
  | { type: "reasoning"; text: string; state?: "streaming" | "done"; [key: string]: unknown }
  | { type: "step-start" }
  | ToolPart
  | { type: string; [key: string]: unknown };

/** A tool call (`tool-{name}` or `dynamic-tool`). */
export interface ToolPart {
  type: string;
  toolCallId: string;
  state: string;
  input?: unknown;
  output?: unknown;
  errorText?: string;
  rawInput?: unknown;
  title?: string;
  [key: string]: unknown;
}

/** A message of the thread. */
export interface Message {
  id: string;
  role: "user" | "assistant" | "system";
  parts: Part[];
  status: "complete" | "running" | "failed" | "cancelled";
  error?: string;
  metadata?: unknown;
  createdAt?: string;
  provenance?: unknown;
}

// The snapshot's nested values (the Rust types of the same names, as serde writes them).
// `test/package.test.mjs` type-checks a real snapshot against them.

/** `activeSessionReadiness`. */
export interface Readiness {
  sessionId: string | null;
  status: "idle" | "loading" | "ready" | "error" | "not_found";
  detailReady: boolean;
  historyReady: boolean;
  insightsReady: boolean;
  error: string | null;
}

/** `activeSessionDetail`. */
export interface DetailSnapshot {
  sessionId: string;
  status: "idle" | "loading" | "ready" | "error" | "not_found";
  error: string | null;
  /** The session's record, as the platform gives it. */
  record: Record<string, unknown> | null;
  /** The insights, normalized (RU-30). */
  insights: Record<string, unknown> | null;
  insightsLoading: boolean;
  insightsError: string | null;
}

/** A session of a list (`agentSessions`, `sessionSearchResults`). */
export interface SessionSummary {
  uid: string;
  agentUid: string | null;
  agentName: string | null;
  title: string;
  status: string | null;
  startedAt: string | null;
  endedAt: string | null;
  handleUniqueId: string | null;
  llmProvider: string | null;
  llmModel: string | null;
}

/** A row of `archivedSessions`. */
export interface ArchivedSession {
  session: SessionSummary;
  archivedAt: string | null;
}

/** A runtime notice. */
export interface RuntimeNotice {
  code: string;
  severity: string;
  title: string;
  message: string;
}

/** `activeRuntimeInteraction`: the admission decision. */
export interface RuntimeInteraction {
  state: string;
  canSubmit: boolean;
  notice: RuntimeNotice | null;
  supportReference: string | null;
  retryAfterMs: number | null;
}

/** `activeRuntimePresence`: diagnostic progress. */
export interface RuntimePresence {
  phase: string;
  detail: string;
  desiredReplicas: number | null;
  actualReplicas: number | null;
  observedAt: string | null;
  wake: Record<string, unknown> | null;
}

/** `sendReadiness`: whether a message can be sent now, else what the engine waits for or why
 *  it cannot. */
export type SendReadiness =
  | { state: "ready" }
  | { state: "waiting"; waitingFor: string }
  | {
      state: "blocked";
      code: string;
      message: string;
      failure?: Record<string, unknown> | null;
      noticeCode?: string | null;
    };

/** `composerState` (RU-38). */
export interface ComposerState {
  status: string;
  canSend: boolean;
  queues: boolean;
  canWrite: boolean;
  reason: string | null;
  supportReference?: string;
}

/** A row of `messageQueue`. */
export interface QueueRow {
  id: string;
  text: string;
  createdAt: string;
  status: "queued" | "held";
  holdReason?: string;
  holdMessage?: string;
}

/** `messageQueueHold`. */
export interface Hold {
  reason: string;
  message?: string;
}

/** `messageQueueTexts`: the strip's and the composer's texts (ADR 087). */
export interface QueueTexts {
  summary: string | null;
  hold: string | null;
  composerPlaceholder: string | null;
  composerAction: string | null;
}

/** A provider of the picker. */
export interface ProviderOption {
  label: string;
  value: string;
}

/** A thinking level of the picker. */
export interface EffortOption {
  label: string;
  value: string;
}

/** A model of the picker (`id` is `"{provider}::{model}"`). */
export interface ModelOption {
  id: string;
  provider: string;
  model: string;
  label: string;
  selectable: boolean;
  needsSignIn: boolean;
  reasoningOptions: EffortOption[];
  defaultReasoning?: string | null;
}

/** `sessionModelSelectionRequest`: a creation waits for a model choice. */
export interface SessionModelSelectionRequest {
  id: number;
  agentLabel: string | null;
  agentUid: string | null;
  missing: { provider: boolean; model: boolean };
}

/** An entry of `sessionModelLastUsed`. */
export interface LastUsedModel {
  provider: string;
  model: string;
}

/** `capabilities` (ADR 099): all true for the platform. */
export interface Capabilities {
  archiveSessions: boolean;
  searchSessions: boolean;
  sessionHistory: boolean;
  sessionInsights: boolean;
  modelProviderSettings: boolean;
}

/** An Agent's icon (`agentIcons`, RU-32 to RU-37). */
export interface AgentIcon {
  rendering: string;
  url: string;
  status: "idle" | "loading" | "ready" | "error";
  image: { handle: number; contentType: string | null; etag: string | null; bytes: string } | null;
}

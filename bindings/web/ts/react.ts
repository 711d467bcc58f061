// React bindings (`agent-chat-engine/react`): a provider that runs one shell and passes the
// reference's inputs to it as props, and hooks that read its store with
// `useSyncExternalStore`. The value's names follow the reference's engine value (adr-notes,
// section 6): `currentSessionId`, `activeSessionReadiness`, `activeRuntimeInteraction`, the
// queue, the picker, ... and its actions (`sendMessage`, `cancelActiveSession`, ...).
//
// A component re-renders only when what it reads changed: `useChatSelector` compares the
// selected value by identity, and the store keeps the identity of every message and part
// that did not change (`useMessage`, `usePart`).

import {
  createContext,
  createElement,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
  useSyncExternalStore,
  type ReactNode,
} from "react";

import { Shell, type PlatformSender, type ShellOptions, type UrlRewrite } from "./shell.js";
import type { ChatStore, ChatState } from "./store.js";
import type {
  AgentRecord,
  Command,
  DefaultSession,
  Event,
  Input,
  LaunchTarget,
  LocalSource,
  Message,
  ModelChoice,
  NoticeVariant,
  Part,
} from "./types.js";

/** The reference's `connection`. */
export interface Connection {
  apiBaseUrl: string;
  rewriteRequestUrl?: UrlRewrite;
  sendPlatformRequest?: PlatformSender;
}

/** The reference's `auth`. */
export interface Auth {
  userUid: string | null;
  token?: string | null;
  tokenType?: string;
}

/** A short notice (`notify`). */
export interface Notice {
  title: string;
  description?: string;
  variant?: NoticeVariant;
}

/** The provider's props: the reference's inputs. `connection` is read once (a new connection
 *  needs a new provider: give it a `key`); every other input is passed on when it changes. */
export interface ChatEngineProviderProps {
  connection: Connection;
  auth: Auth;
  environmentUid: string | null;
  isVisible: boolean;
  notify?: (notice: Notice) => void;
  viewContext?: unknown;
  requestedSessionId?: string | null;
  avoidImplicitSessionSelection?: boolean;
  defaultSession?: DefaultSession | null;
  showsDefaultSession?: boolean;
  launchTarget?: LaunchTarget | null;
  onRequestVisible?: () => void;
  onRequestedSessionRemoved?: (sessionUid: string) => void;
  source?: LocalSource | null;
  /** Called with every event (answer deltas included). */
  onEvent?: (event: Event) => void;
  /** More shell options (storage, fetch, seed, ...). */
  shellOptions?: Partial<ShellOptions>;
  children?: ReactNode;
}

/** The actions, as the reference names them. Each is a command; what the reference returns
 *  (a boolean, a text) comes as the snapshot's change or an event (`queued_message_returned`). */
export interface ChatEngineActions {
  sendMessage(text: string): void;
  cancelActiveSession(): void;
  retryDefaultSession(): void;
  restoreDefaultSessionSelection(): void;
  createAgentSession(): void;
  startAgentSession(agent: AgentRecord): void;
  startAgentSessionById(target: { agentId: string; label?: string | null }): void;
  openLatestOrStartAgentSessionById(target: { agentId: string; label?: string | null }): void;
  archiveAgentSession(id: string): void;
  unarchiveAgentSession(uid: string): void;
  deleteAgentSession(id: string): void;
  resolveSessionModelSelection(choice: ModelChoice): void;
  cancelSessionModelSelection(): void;
  setSelectedProviderValue(value: string | null): void;
  setSelectedModelValue(value: string | null): void;
  setSelectedReasoningEffortValue(value: string | null): void;
  requestAvailableModels(): void;
  refreshSessionDetail(): void;
  refreshActiveSessionRuntimeAccess(): void;
  revalidateStaleRuntimeAccess(): void;
  clearThread(): void;
  enqueueMessage(text: string): void;
  removeQueuedMessage(id: string): void;
  editQueuedMessage(id: string): void;
  reorderQueuedMessage(id: string, toIndex: number): void;
  clearMessageQueue(): void;
  sendNextQueuedMessage(): void;
  requestAgentIcons(agentUids: string[]): void;
}

/** The engine's value: the state and the actions. */
export type ChatEngineValue = ChatState & ChatEngineActions;

function actionsOf(shell: Shell): ChatEngineActions {
  const run = (command: Command) => shell.command(command);
  return {
    sendMessage: (text) => run({ command: "send_message", text }),
    cancelActiveSession: () => run({ command: "cancel_active_session" }),
    retryDefaultSession: () => run({ command: "retry_default_session" }),
    restoreDefaultSessionSelection: () => run({ command: "restore_default_session_selection" }),
    createAgentSession: () => run({ command: "create_agent_session" }),
    startAgentSession: (agent) => run({ command: "start_agent_session", agent }),
    startAgentSessionById: ({ agentId, label }) =>
      run({ command: "start_agent_session_by_id", agent_id: agentId, label: label ?? null }),
    openLatestOrStartAgentSessionById: ({ agentId, label }) =>
      run({
        command: "open_latest_or_start_agent_session_by_id",
        agent_id: agentId,
        label: label ?? null,
      }),
    archiveAgentSession: (id) => run({ command: "archive_agent_session", session_uid: id }),
    unarchiveAgentSession: (uid) => run({ command: "unarchive_agent_session", session_uid: uid }),
    deleteAgentSession: (id) => run({ command: "delete_agent_session", session_uid: id }),
    resolveSessionModelSelection: (choice) =>
      run({ command: "resolve_session_model_selection", choice }),
    cancelSessionModelSelection: () => run({ command: "cancel_session_model_selection" }),
    setSelectedProviderValue: (value) => run({ command: "set_selected_provider_value", value }),
    setSelectedModelValue: (value) => run({ command: "set_selected_model_value", value }),
    setSelectedReasoningEffortValue: (value) =>
      run({ command: "set_selected_reasoning_effort_value", value }),
    requestAvailableModels: () => run({ command: "request_available_models" }),
    refreshSessionDetail: () => run({ command: "refresh_session_detail" }),
    refreshActiveSessionRuntimeAccess: () =>
      run({ command: "refresh_active_session_runtime_access" }),
    revalidateStaleRuntimeAccess: () => run({ command: "revalidate_stale_runtime_access" }),
    clearThread: () => run({ command: "clear_thread" }),
    enqueueMessage: (text) => run({ command: "enqueue_message", text }),
    removeQueuedMessage: (id) => run({ command: "remove_queued_message", id }),
    editQueuedMessage: (id) => run({ command: "edit_queued_message", id }),
    reorderQueuedMessage: (id, toIndex) =>
      run({ command: "reorder_queued_message", id, to_index: toIndex }),
    clearMessageQueue: () => run({ command: "clear_message_queue" }),
    sendNextQueuedMessage: () => run({ command: "send_next_queued_message" }),
    requestAgentIcons: (agentUids) => run({ command: "request_agent_icons", agent_uids: agentUids }),
  };
}

interface Context {
  shell: Shell;
  store: ChatStore;
  actions: ChatEngineActions;
}

const ChatEngineContext = createContext<Context | null>(null);

/** Passes a level input on when its JSON changed (the engine diffs values; this keeps a
 *  re-render from sending an unchanged one). */
function useInput(shell: Shell | undefined, input: Input): void {
  const json = JSON.stringify(input.value ?? null);
  useEffect(() => {
    shell?.input(input);
    // `json` stands for the value: an equal value is not sent again.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shell, input.input, json]);
}

/** The level inputs the props give, in the order the engine takes them (the person first). */
function inputsOf(props: ChatEngineProviderProps): Input[] {
  const { auth } = props;
  return [
    {
      input: "person",
      value: { userUid: auth.userUid, token: auth.token ?? null, tokenType: auth.tokenType ?? null },
    },
    { input: "source", value: props.source ?? null },
    { input: "environment_uid", value: props.environmentUid },
    { input: "view_context", value: props.viewContext ?? null },
    { input: "requested_session_id", value: props.requestedSessionId ?? null },
    { input: "avoid_implicit_session_selection", value: props.avoidImplicitSessionSelection ?? false },
    { input: "default_session", value: props.defaultSession ?? null },
    { input: "shows_default_session", value: props.showsDefaultSession ?? false },
    { input: "launch_target", value: props.launchTarget ?? null },
    { input: "is_visible", value: props.isVisible },
  ];
}

/** Runs one shell for its children, with the reference's inputs as props. */
export function ChatEngineProvider(props: ChatEngineProviderProps): ReactNode {
  const [context, setContext] = useState<Context | null>(null);
  const callbacks = useRef(props);
  callbacks.current = props;
  const { connection } = props;
  useEffect(() => {
    const shell = new Shell({
      ...props.shellOptions,
      platformBaseUrl: connection.apiBaseUrl,
      ...(connection.rewriteRequestUrl ? { rewriteRequestUrl: connection.rewriteRequestUrl } : {}),
      ...(connection.sendPlatformRequest ? { platformSender: connection.sendPlatformRequest } : {}),
    });
    const stop = shell.onEvent((event) => {
      const p = callbacks.current;
      p.onEvent?.(event);
      if (!("event" in event)) return;
      if (event.event === "notify") {
        p.notify?.({
          title: event.title,
          variant: event.variant,
          ...(event.description !== undefined ? { description: event.description } : {}),
        });
      } else if (event.event === "request_visible") p.onRequestVisible?.();
      else if (event.event === "requested_session_removed") {
        p.onRequestedSessionRemoved?.(event.session_uid);
      }
    });
    // The inputs as they are now, before any child's effect can send a command (React runs
    // the children's effects first in the commit that renders them).
    for (const input of inputsOf(callbacks.current)) shell.input(input);
    setContext({ shell, store: shell.store, actions: actionsOf(shell) });
    return () => {
      stop();
      shell.close();
      setContext(null);
    };
    // One shell per connection: give the provider a new `key` for another.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const shell = context?.shell;
  for (const input of inputsOf(props)) {
    // One hook per input, always in the same order (the list has a fixed length).
    // eslint-disable-next-line react-hooks/rules-of-hooks
    useInput(shell, input);
  }
  if (context === null) return null;
  return createElement(ChatEngineContext.Provider, { value: context }, props.children);
}

function useContextValue(): Context {
  const context = useContext(ChatEngineContext);
  if (context === null) throw new Error("useChatEngine needs a ChatEngineProvider above it.");
  return context;
}

/** What `selector` picks from the state; the component re-renders only when it changes
 *  (by identity). */
export function useChatSelector<T>(selector: (state: ChatState) => T): T {
  const { store } = useContextValue();
  return useSyncExternalStore(
    store.subscribe,
    () => selector(store.getSnapshot()),
    () => selector(store.getSnapshot()),
  );
}

/** The whole value: the state and the actions (re-renders on every change; prefer
 *  `useChatSelector` and `useChatActions` in components that read one part). */
export function useChatEngine(): ChatEngineValue {
  const { store, actions } = useContextValue();
  const state = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
  return useMemo(() => ({ ...state, ...actions }), [state, actions]);
}

/** The actions alone: they never change, so a component that only acts never re-renders. */
export function useChatActions(): ChatEngineActions {
  return useContextValue().actions;
}

/** The shell (for what the hooks do not cover: its engine, its storage). */
export function useChatShell(): Shell {
  return useContextValue().shell;
}

/** The thread's messages. */
export function useMessages(): readonly Message[] {
  return useChatSelector((state) => state.thread);
}

/** One message by id (the same object until it changes), or undefined. */
export function useMessage(id: string): Message | undefined {
  const { store } = useContextValue();
  return useChatSelector(() => store.messageById(id));
}

/** One part of one message (the same object until it changes), or undefined. */
export function usePart(messageId: string, index: number): Part | undefined {
  const { store } = useContextValue();
  return useChatSelector(() => store.messageById(messageId)?.parts[index]);
}

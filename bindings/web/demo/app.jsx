// The demo page: the package's React provider and hooks against platform-sim on the same
// origin (`platform-sim --web bindings/web/demo`). Sessions, the default session, a streamed
// answer with reasoning and a tool call, stop, the queue, the model picker, wake. Every part
// counts its renders in `window.__renders` (the browser test reads them).

import { memo, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";

import {
  ChatEngineProvider,
  useChatActions,
  useChatSelector,
  useChatShell,
  useMessages,
  usePart,
} from "../dist/react.js";

window.__renders = {};
window.__notices = [];

const PartView = memo(function PartView({ messageId, index }) {
  const part = usePart(messageId, index);
  const key = `${messageId}/${index}`;
  window.__renders[key] = (window.__renders[key] ?? 0) + 1;
  if (part === undefined) return null;
  if (part.type === "text") return <p data-testid="part-text">{part.text}</p>;
  if (part.type === "reasoning") {
    return (
      <p className="part-reasoning" data-testid="part-reasoning">
        {part.text}
      </p>
    );
  }
  if (part.type === "dynamic-tool" || part.type.startsWith("tool-")) {
    return (
      <div className="part-tool" data-testid="part-tool">
        {part.toolName ?? part.type} · {part.state} · {JSON.stringify(part.input ?? null)}
        {part.output !== undefined ? ` → ${JSON.stringify(part.output)}` : ""}
      </div>
    );
  }
  return null;
});

// Memoized: a message that did not change (the same object) does not render again.
const MessageView = memo(function MessageView({ message }) {
  return (
    <div className={`message ${message.role}`} data-testid={`message-${message.role}`}>
      {message.parts.map((_, i) => (
        <PartView key={i} messageId={message.id} index={i} />
      ))}
      {message.status === "failed" ? <p className="notice">{message.error}</p> : null}
    </div>
  );
});

function Thread() {
  const messages = useMessages();
  return (
    <div className="thread" data-testid="thread">
      {messages.map((m) => (
        <MessageView key={m.id} message={m} />
      ))}
    </div>
  );
}

function Sessions({ onPick }) {
  const sessions = useChatSelector((s) => s.agentSessions);
  const current = useChatSelector((s) => s.currentSessionId);
  const counts = useChatSelector((s) => s.queuedMessageCountBySessionId);
  const { createAgentSession } = useChatActions();
  const shell = useChatShell();
  const newSession = () => {
    // The surface leaves the default session first (while it shows it, it stays selected:
    // DEF-1), then asks for a new one, which the engine selects.
    onPick(undefined);
    shell.input({ input: "shows_default_session", value: false });
    createAgentSession();
  };
  return (
    <aside>
      <button data-testid="default-session" onClick={() => onPick(null)}>
        Default session
      </button>{" "}
      <button data-testid="new-session" onClick={newSession}>
        New session
      </button>
      <h4>Sessions</h4>
      {sessions.map((s) => (
        <button
          key={s.uid}
          className={`session ${s.uid === current ? "selected" : ""}`}
          data-testid={`session-${s.uid}`}
          onClick={() => onPick(s.uid)}
        >
          {s.title || s.uid}
          {counts[s.uid] ? ` (${counts[s.uid]} queued)` : ""}
        </button>
      ))}
    </aside>
  );
}

function Header() {
  const current = useChatSelector((s) => s.currentSessionId);
  const run = useChatSelector((s) => s.runStatus);
  const detail = useChatSelector((s) => s.runStatusDetail);
  const composer = useChatSelector((s) => s.composerState);
  const providers = useChatSelector((s) => s.availableProviders);
  const models = useChatSelector((s) => s.availableModels);
  const provider = useChatSelector((s) => s.selectedProviderValue);
  const model = useChatSelector((s) => s.selectedModelValue);
  const actions = useChatActions();
  return (
    <header>
      <span>
        session <b data-testid="current-session">{current ?? "none"}</b>
      </span>
      <span>
        run <b data-testid="run-status">{run}</b> <span data-testid="run-detail">{detail}</span>
      </span>
      <span data-testid="composer-reason">{composer.reason ?? ""}</span>
      <select
        data-testid="provider"
        value={provider ?? ""}
        onChange={(e) => actions.setSelectedProviderValue(e.target.value)}
      >
        {providers.map((p) => (
          <option key={p.value} value={p.value}>
            {p.label}
          </option>
        ))}
      </select>
      <select
        data-testid="model"
        value={model ?? ""}
        onChange={(e) => actions.setSelectedModelValue(e.target.value)}
      >
        {models.map((m) => (
          <option key={m.id} value={m.id} disabled={!m.selectable}>
            {m.label}
          </option>
        ))}
      </select>
      <button data-testid="check-again" onClick={actions.refreshActiveSessionRuntimeAccess}>
        Check again
      </button>
    </header>
  );
}

function Queue() {
  const rows = useChatSelector((s) => s.messageQueue);
  const texts = useChatSelector((s) => s.messageQueueTexts);
  const { sendNextQueuedMessage, removeQueuedMessage } = useChatActions();
  if (rows.length === 0) return null;
  return (
    <div className="queue" data-testid="queue">
      <div data-testid="queue-summary">{texts.summary}</div>
      {texts.hold ? <div data-testid="queue-hold">{texts.hold}</div> : null}
      {rows.map((r) => (
        <div key={r.id} data-testid="queue-row">
          {r.text} <button onClick={() => removeQueuedMessage(r.id)}>remove</button>
        </div>
      ))}
      <button data-testid="send-next" onClick={sendNextQueuedMessage}>
        Send next
      </button>
    </div>
  );
}

function Composer() {
  const composer = useChatSelector((s) => s.composerState);
  const working = useChatSelector((s) => s.isAgentWorking);
  const placeholder = useChatSelector((s) => s.messageQueueTexts.composerPlaceholder);
  const action = useChatSelector((s) => s.messageQueueTexts.composerAction);
  const { sendMessage, cancelActiveSession } = useChatActions();
  const [text, setText] = useState("");
  const submit = () => {
    if (text.trim() === "") return;
    sendMessage(text);
    setText("");
  };
  return (
    <footer>
      <textarea
        data-testid="composer"
        value={text}
        placeholder={placeholder ?? "Write a message"}
        disabled={!composer.canWrite}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            submit();
          }
        }}
      />
      <button data-testid="send" disabled={!composer.canSend && !composer.queues} onClick={submit}>
        {action ?? "Send"}
      </button>
      <button data-testid="stop" disabled={!working} onClick={cancelActiveSession}>
        Stop
      </button>
    </footer>
  );
}

// The shell, for a test or a console to read (`window.__shell.snapshot()`).
function ExposeShell() {
  const shell = useChatShell();
  useEffect(() => {
    window.__shell = shell;
  }, [shell]);
  return null;
}

function Notices() {
  const [notices, setNotices] = useState([]);
  useEffect(() => {
    window.__pushNotice = (n) => setNotices((all) => [...all.slice(-2), n]);
  }, []);
  return (
    <div data-testid="notices">
      {notices.map((n, i) => (
        <div key={i} className="notice">
          {n.title}
          {n.description ? `: ${n.description}` : ""}
        </div>
      ))}
    </div>
  );
}

// `?probe=1`: a child that sends a command as soon as it mounts (the browser test checks, in the
// recorded trace, that the provider's inputs reached the engine first).
const params = new URLSearchParams(location.search);
function ProbeOnMount() {
  const { requestAvailableModels } = useChatActions();
  useEffect(() => {
    requestAvailableModels();
  }, [requestAvailableModels]);
  return null;
}

function App({ config }) {
  // null: the default session; a uid: that session; undefined: whatever the engine selects.
  const [requested, setRequested] = useState(null);
  const agent = config.agents[0];
  return (
    <ChatEngineProvider
      connection={{ apiBaseUrl: location.origin }}
      auth={{ userUid: config.personUid, token: config.token }}
      environmentUid={config.environmentUid}
      isVisible={true}
      defaultSession={{
        agentUid: agent.uid,
        handleUniqueId: "demo-page",
        name: "Demo page",
        status: "ready",
        unavailableMessage: null,
      }}
      showsDefaultSession={requested === null}
      requestedSessionId={requested ?? null}
      notify={(n) => {
        window.__notices.push(n);
        window.__pushNotice?.(n);
      }}
      shellOptions={{ record: params.has("record") }}
    >
      {params.has("probe") ? <ProbeOnMount /> : null}
      <Sessions onPick={setRequested} />
      <main>
        <ExposeShell />
        <Header />
        <Notices />
        <Thread />
        <Queue />
        <Composer />
      </main>
    </ChatEngineProvider>
  );
}

const config = await (await fetch("./config.json")).json();
createRoot(document.getElementById("root")).render(<App config={config} />);

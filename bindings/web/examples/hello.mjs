import { Shell } from "agent-chat-engine";

const env = process.env;
const shell = new Shell({ platformBaseUrl: env.AGENT_PLATFORM_URL, token: env.AGENT_CHAT_TOKEN, userUid: env.AGENT_USER });
shell.input({ input: "environment_uid", value: env.AGENT_ENVIRONMENT });
shell.input({ input: "default_session", value: { agentUid: env.AGENT_UID, handleUniqueId: "hello", name: "Hello", status: "ready", unavailableMessage: null } });
shell.input({ input: "shows_default_session", value: true });
shell.input({ input: "is_visible", value: true });
await shell.waitReady(); // or a NotReadyError: code, message, status (a wrong token: 401)
shell.onEvent((e) => e.type === "delta" && e.kind === "text" && process.stdout.write(e.text));
shell.command({ command: "send_message", text: "Hello" });
await shell.waitFor((s) => s.runStatus === "complete" || s.runStatus === "failed", 60_000);
shell.close();

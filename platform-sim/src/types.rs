//! The public configuration, fault and log types.

use serde::Serialize;
use serde_json::{Value, json};

/// The platform bearer token a default [`SimConfig`] accepts. Hosts read it from here (or from
/// their own config); the simulator never prints it.
pub const DEFAULT_PLATFORM_TOKEN: &str = "sim-platform-token";

/// The uid of the default configuration's one Agent.
pub const DEFAULT_AGENT_UID: &str = "agent-demo";

/// How the simulated organization behaves. Its `Debug` output hides the platform token.
#[derive(Clone)]
pub struct SimConfig {
    /// The one Organization Environment every session lives in (default `env-demo`).
    pub environment_uid: String,
    /// The person every request acts for (default `user-demo`): the owner of the sessions
    /// created through the platform routes.
    pub person_uid: String,
    /// The bearer the platform accepts (default [`DEFAULT_PLATFORM_TOKEN`]); platform requests
    /// without it get 401. Never logged or printed.
    pub platform_token: String,
    /// The Agents deployed in the Environment.
    pub agents: Vec<AgentSpec>,
    /// The P12 body (`GET /api/v1/model-providers/`), served verbatim; default: a valid
    /// 2-provider catalog ([`default_catalog`]). Session models are checked against it.
    pub catalog: Value,
    /// The pause between two streamed answer chunks, in milliseconds (default 15).
    pub answer_delay_ms: u64,
    /// How the Agents spell their answers (default [`Dialect::Runtime`], as the platform's real
    /// Agents do); see [`SimConfig::with_dialect`].
    pub dialect: Dialect,
    /// Serve everything under this path prefix only (e.g. `/proxy`), as a reverse proxy a host's
    /// URL rewrite points at would: the prefix is stripped once from every request path, and a
    /// request without it gets 404. The addresses the simulator hands out (`rpc_url`, icon urls)
    /// stay unprefixed, as the platform's own. Default none.
    pub path_prefix: Option<String>,
    /// Also play a local Agent runtime at the root (ADR 099, `platform-api.md` section 8; its
    /// conversations belong to the first Agent). Default none.
    pub local: Option<LocalRuntime>,
    /// Serve the files of this folder under `/demo/` (a page on the platform's origin), with
    /// `/demo/config.json` giving the page the demo values (the platform token included:
    /// a development value on loopback). Default none.
    pub web: Option<std::path::PathBuf>,
}

/// How the simulated local Agent runtime behaves ([`SimConfig::local`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalRuntime {
    /// The `mode` `/health` reports: `local`, or another (a managed runtime the engine refuses).
    pub mode: String,
    /// `/ready` answers `ok: false` (503) to this many checks, then `ok: true`; the chat probe
    /// and turns answer 503 until then.
    pub ready_after: u32,
    /// The runtime lists its conversations and serves their history; false: both answer 404
    /// (a live-only runtime).
    pub lists_sessions: bool,
    /// The Agent's name at `/api/local/v1/agent`.
    pub display_name: String,
}

impl Default for LocalRuntime {
    /// A ready local runtime in local mode that lists its conversations, "Local Agent".
    fn default() -> LocalRuntime {
        LocalRuntime {
            mode: "local".to_owned(),
            ready_after: 0,
            lists_sessions: true,
            display_name: "Local Agent".to_owned(),
        }
    }
}

impl std::fmt::Debug for SimConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimConfig")
            .field("environment_uid", &self.environment_uid)
            .field("person_uid", &self.person_uid)
            .field("platform_token", &"[redacted]")
            .field("agents", &self.agents)
            .field("catalog", &self.catalog)
            .field("answer_delay_ms", &self.answer_delay_ms)
            .field("dialect", &self.dialect)
            .field("path_prefix", &self.path_prefix)
            .field("local", &self.local)
            .field("web", &self.web)
            .finish()
    }
}

impl Default for SimConfig {
    /// One ready Agent `agent-demo` ("Demo Agent") with the catalog's default model, echoing.
    fn default() -> SimConfig {
        SimConfig {
            environment_uid: "env-demo".to_owned(),
            person_uid: "user-demo".to_owned(),
            platform_token: DEFAULT_PLATFORM_TOKEN.to_owned(),
            agents: vec![AgentSpec::new(DEFAULT_AGENT_UID, "Demo Agent")],
            catalog: default_catalog(),
            answer_delay_ms: 15,
            dialect: Dialect::Runtime,
            path_prefix: None,
            local: None,
            web: None,
        }
    }
}

impl SimConfig {
    /// The same configuration with its Agents answering in `dialect` (the fault answers that
    /// write a body of their own included).
    pub fn with_dialect(mut self, dialect: Dialect) -> SimConfig {
        self.dialect = dialect;
        self
    }

    /// The host inputs that open the default session of the first Agent behind `handle`, for
    /// the simulated person (with the platform token) in the simulated Environment, on a visible
    /// chat.
    pub fn default_session_inputs(&self, handle: &str) -> Vec<engine_core::Input> {
        use engine_core::{DefaultSession, Input, Person, Secret, SourceStatus};
        vec![
            Input::Person(Person::new(
                self.person_uid.clone(),
                Secret::new(self.platform_token.clone()),
            )),
            Input::EnvironmentUid(Some(self.environment_uid.clone())),
            Input::DefaultSession(Some(DefaultSession {
                agent_uid: self.agents.first().map(|a| a.uid.clone()),
                handle_unique_id: handle.to_owned(),
                name: handle.to_owned(),
                status: SourceStatus::Ready,
                unavailable_message: None,
            })),
            Input::ShowsDefaultSession(true),
            Input::IsVisible(true),
        ]
    }
}

/// One Agent of the simulated Environment.
#[derive(Debug, Clone)]
pub struct AgentSpec {
    /// The Agent uid (also its runtime path segment: `{url}/runtime/{uid}`).
    pub uid: String,
    /// The display name (`agent_name` of its sessions).
    pub name: String,
    /// How its runtime answers readiness checks and runtime-access reads.
    pub runtime: RuntimeBehaviour,
    /// The Agent has no default model: creating a session without `llm_provider` and
    /// `llm_model` gets the model-required 400 (P7 always, P8 unless the body names both).
    pub needs_model: bool,
    /// What its runtime answers to a chat turn.
    pub answer: AnswerStyle,
}

impl AgentSpec {
    /// A ready, echoing Agent with a default model.
    pub fn new(uid: impl Into<String>, name: impl Into<String>) -> AgentSpec {
        AgentSpec {
            uid: uid.into(),
            name: name.into(),
            runtime: RuntimeBehaviour::Ready,
            needs_model: false,
            answer: AnswerStyle::Echo,
        }
    }
}

/// How an Agent's runtime comes to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeBehaviour {
    /// Serving: resolve-runtime-access answers ready (mode `token`) and `GET {rpc}/api/chat`
    /// answers 200.
    Ready,
    /// Idle until checked. resolve-runtime-access answers ready (the platform reports every
    /// deployed Agent ready) until the first `GET {rpc}/api/chat` check; that check wakes the
    /// Agent. While it wakes, resolve-runtime-access answers state `waking` (can_submit false,
    /// retry_after_ms 1000) and `GET {rpc}/api/chat` answers 503, until `checks` checks have been
    /// received (each readiness GET and each runtime-access read during the wake counts); then
    /// it is ready. The first `checks` readiness GETs answer 503, the next one 200.
    Waking {
        /// How many checks the wake takes (0: ready at once).
        checks: u32,
    },
    /// Blocked for good: can_submit false, state `update_failed`, with this notice message and
    /// `operation.support_reference`; the runtime answers 503.
    Terminal {
        /// `runtime_interaction.notice.message`.
        message: String,
        /// `runtime_interaction.operation.support_reference`.
        support_reference: String,
    },
}

/// How an Agent spells its answers on the wire (issue 24). Both carry the same answer: the
/// same reasoning, tool call, text and ending, so a test can run in either and expect the same
/// message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, clap::ValueEnum)]
pub enum Dialect {
    /// The platform's real Agent runtime (`ms-tau-sdk`'s assistant-ui encoder; RU-1 of
    /// `reference-update.md`): no `start` frame; `start-step` / `finish-step` with
    /// `finishReason`; a `data-runtime-lifecycle` frame; `reasoning-*` (`delta`);
    /// `tool-call-start`, one `tool-call-delta` with the whole arguments (`argsText`),
    /// `tool-call-end`, then `tool-result` (`result`, `isError`); `text-*` with `textDelta`
    /// (ids `text-{n}`); `finish`, or a terminal `error` instead when the run fails. Every
    /// frame is written as Python's `json.dumps(frame, separators=(",", ":"))` writes it:
    /// every non-ASCII character a `\uXXXX` escape (surrogate pairs past U+FFFF).
    #[default]
    Runtime,
    /// The AI SDK's ui-message-stream names (`ui-message-stream.md`): `start` with the message
    /// id, `reasoning-*`, `tool-input-start` / `-delta` / `-available` then
    /// `tool-output-available` (or `tool-output-error`), `text-*` with `delta`, `finish` (or an
    /// `error`), written by serde_json (non-ASCII as UTF-8).
    AiSdk,
}

impl Dialect {
    /// Both dialects, the default first.
    pub const ALL: [Dialect; 2] = [Dialect::Runtime, Dialect::AiSdk];

    /// Its name on the command line: `runtime` or `ai-sdk`.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Runtime => "runtime",
            Dialect::AiSdk => "ai-sdk",
        }
    }

    /// How many frames an [`AnswerStyle::Echo`] or [`AnswerStyle::Fixed`] answer sends before
    /// its first text delta (a turn that creates its session sends a `new_session` frame
    /// before them too): with [`FaultKind::DropMidStream`], `after_chunks` of this plus `n`
    /// cuts the answer after its first `n` words.
    pub fn frames_before_text(self) -> usize {
        crate::answer::frames_before_text(self)
    }
}

/// The tool an [`AnswerStyle::Echo`] (or `Fixed`, `FailingTool`) answer calls before its text.
pub const SIM_TOOL: &str = "count_words";

/// What an Agent answers to a turn, as answer-stream chunks (in the simulator's
/// [`Dialect`]) followed by `data: [DONE]`.
#[derive(Debug, Clone, PartialEq)]
pub enum AnswerStyle {
    /// What a real Agent's answer holds: a step with a `data-runtime-lifecycle` frame (runtime
    /// dialect only), reasoning in two deltas and a call of the tool [`SIM_TOOL`] with the
    /// person's text as its arguments and a result (the step ends "tool-calls"), then a second
    /// step with "You said: {text}" streamed word by word, `finish`, `[DONE]`.
    Echo,
    /// This text, streamed word by word after the same reasoning and tool call as
    /// [`AnswerStyle::Echo`].
    Fixed(String),
    /// Like [`AnswerStyle::Echo`], but the tool call fails with this error text (`isError`
    /// true in the runtime dialect, `tool-output-error` in the AI SDK's); the answer's text
    /// follows as usual.
    FailingTool(String),
    /// A run that fails: "You said: {text}" streamed, then the step ends "error" and a
    /// terminal `error` frame with this text comes instead of `finish`, then `[DONE]`.
    FailedRun(String),
    /// A turn refused before it starts, as the reference's stand-in answers one (RU-53): 200
    /// with `start` and an `error` frame with this text, then `[DONE]`; the transcript keeps
    /// only the person's message. [`REFUSED_TURN_TEXT`] is the stand-in's default text; the
    /// simulator refuses this way by itself a turn on a model not in the catalog or of a
    /// provider the person has not signed in to.
    RefusedTurn(String),
    /// These raw chunks, one SSE event each (objects are written as compact JSON, a string is
    /// written verbatim as the event's data), then `data: [DONE]` unless the script holds the
    /// string `"[DONE]"` itself.
    Script(Vec<Value>),
}

/// RU-53: the text of a turn the reference's stand-in fails when scripted to.
pub const REFUSED_TURN_TEXT: &str = "The model provider refused the request.";

/// One request the simulator received, as logged before any fault applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoggedRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path as received (percent-encoded).
    pub path: String,
    /// The raw query string without `?` (empty when none).
    pub query: String,
    /// The body: its JSON, or a JSON string holding its text when it is not JSON; `None` when
    /// empty. Any token in it is replaced by `[redacted]`.
    pub body: Option<Value>,
    /// Whether the request carried the credential its target accepts (the platform token for
    /// platform paths, a runtime token of that Agent for runtime paths; for the local runtime's
    /// routes, that it carried no credential at all). The token itself is never stored.
    pub authorized: bool,
    /// Milliseconds since the simulator started.
    pub at_ms: u64,
}

impl LoggedRequest {
    /// Whether this is `method` on a path containing `path_contains`.
    pub fn is(&self, method: &str, path_contains: &str) -> bool {
        self.method.eq_ignore_ascii_case(method) && self.path.contains(path_contains)
    }
}

/// A queued fault: the next `times` requests matching it get `kind` instead of (or before) their
/// normal answer, then it expires. Requests are logged before a fault applies.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// Only requests of this method (case-insensitive); `None` matches every method.
    pub method: Option<String>,
    /// Only requests whose path contains this text (`""` matches every path).
    pub path_contains: String,
    /// How many matching requests it applies to (0: none; it is dropped when queued).
    pub times: u32,
    /// What happens to them.
    pub kind: FaultKind,
}

impl Fault {
    /// A one-shot fault for `method` requests on paths containing `path_contains`.
    pub fn once(method: &str, path_contains: impl Into<String>, kind: FaultKind) -> Fault {
        Fault {
            method: Some(method.to_owned()),
            path_contains: path_contains.into(),
            times: 1,
            kind,
        }
    }

    /// A one-shot fault for requests of any method on paths containing `path_contains`.
    pub fn any_method(path_contains: impl Into<String>, kind: FaultKind) -> Fault {
        Fault {
            method: None,
            path_contains: path_contains.into(),
            times: 1,
            kind,
        }
    }

    /// The same fault for the next `times` matching requests.
    pub fn repeat(mut self, times: u32) -> Fault {
        self.times = times;
        self
    }

    /// Whether a request matches.
    pub(crate) fn matches(&self, method: &str, path: &str) -> bool {
        self.method
            .as_deref()
            .is_none_or(|m| m.eq_ignore_ascii_case(method))
            && path.contains(&self.path_contains)
    }
}

/// What a fault does to a request.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultKind {
    /// Answer this status with this JSON body (`Value::Null`: an empty body), without handling
    /// the request.
    Status(u16, Value),
    /// Wait this many milliseconds, then handle the request normally.
    Delay(u64),
    /// Handle the request, then cut the connection mid-answer: for `POST .../api/chat`, after
    /// this many SSE events (the turn then ends where it was cut); for any other route, after
    /// half of the body (`after_chunks` is ignored).
    DropMidStream {
        /// SSE events sent before the cut.
        after_chunks: usize,
    },
    /// Answer 200 with `Content-Type: application/json` and a truncated JSON body, without
    /// handling the request.
    MalformedJson,
    /// Close the connection without sending any response, without handling the request.
    CloseWithoutAnswer,
    /// Answer `status` (a redirect such as 307) with `Location: location` and no body, without
    /// handling the request. The simulator serves nothing at `location` of its own.
    Redirect {
        /// The status (301, 302, 303, 307 or 308).
        status: u16,
        /// The `Location` header, e.g. `/elsewhere/api/chat`.
        location: String,
    },
    /// Handle the request, then write its answer's body `bytes` bytes at a time with
    /// `pause_ms` between two writes: a slow drip. The bytes and their order are unchanged.
    Drip {
        /// Bytes per write (at least 1).
        bytes: usize,
        /// The pause between two writes, in milliseconds.
        pause_ms: u64,
    },
    /// Answer 200 with a finished answer (in the simulator's dialect) whose one text delta
    /// holds invalid UTF-8 (`caf\xC3(` and a lone `\xFF`), without handling the request; decoded lossily it
    /// reads [`crate::INVALID_UTF8_TEXT`].
    InvalidUtf8,
    /// Answer 200 with a finished answer (in the simulator's dialect) holding one `text-delta`
    /// event whose `data:` line is `bytes` long (written in 64 KiB pieces as it is read), then a short delta
    /// [`crate::AFTER_HUGE_LINE`], without handling the request.
    HugeLine {
        /// The length of the long line, `data: ` and its JSON, without its newline.
        bytes: usize,
    },
    /// Answer 200 with a valid, finished answer (in the simulator's dialect) of at least
    /// `bytes` bytes (text deltas of 1 KiB), produced as it is read, without handling the request. The bytes
    /// it produced are counted in `fault_bytes()` of the simulator.
    LargeAnswer {
        /// The size of the answer's text deltas in all.
        bytes: usize,
    },
    /// Answer a history read (P9, `GET .../history/`) with a completed transcript of
    /// `messages` short text messages (user and assistant in turn, texts
    /// [`crate::history_text`]) for the session of the path, without handling the request.
    LargeHistory {
        /// How many messages.
        messages: usize,
    },
}

/// The default P12 catalog: two enabled providers (`acme-cloud`, default model `acme-large` with
/// levels low/medium/high, and `acme-small` without levels; `team-models` with `tm-1`, levels
/// off/high), as in `platform-api.md`. It passes `engine_core::api::parse_catalog`.
pub fn default_catalog() -> Value {
    json!({
        "schema_version": 1,
        "catalog_digest": "sha256:4f2a9c0b8e7d6a5f4c3b2a1908f7e6d5c4b3a29180f7e6d5c4b3a2918f7e6d5c",
        "providers": [
            {
                "provider": "acme-cloud",
                "display_name": "Acme Cloud",
                "auth_methods": ["oauth"],
                "sign_in_available": true,
                "known": true,
                "enabled": true,
                "authenticated": true,
                "credential_status": "active",
                "default_model": "acme-large",
                "models": [
                    {"model": "acme-large", "display_name": "Acme Large", "api": "openai-responses", "input": ["text", "image"], "reasoning": true, "thinking_levels": ["low", "medium", "high"], "context_window": 200000, "max_tokens": 32000},
                    {"model": "acme-small", "display_name": "Acme Small", "api": "openai-responses", "input": ["text"], "reasoning": false, "thinking_levels": [], "context_window": 64000, "max_tokens": 8000}
                ]
            },
            {
                "provider": "team-models",
                "display_name": "Team Models",
                "auth_methods": [],
                "sign_in_available": false,
                "known": false,
                "enabled": true,
                "authenticated": true,
                "credential_status": "active",
                "default_model": "tm-1",
                "models": [
                    {"model": "tm-1", "display_name": "TM 1", "api": "openai-completions", "input": ["text"], "reasoning": true, "thinking_levels": ["off", "high"], "context_window": 128000, "max_tokens": 16000}
                ]
            }
        ]
    })
}

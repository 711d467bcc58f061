//! The simulated organization: Agents, sessions, transcripts and running turns.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

use serde_json::{Map, Value, json};
use tokio::sync::watch;

use crate::types::{AgentSpec, RuntimeBehaviour, SimConfig};
use crate::wire::{self, AnswerBuilder, ModelPick, iso, now_ms};

/// What a runtime-access read decides for an Agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccessKind {
    /// Serving (or reported serving): mode token.
    Ready,
    /// A platform-reported wake.
    Waking,
    /// Blocked for good.
    Terminal,
}

/// One Agent and where its wake stands.
#[derive(Debug, Clone)]
pub(crate) struct AgentState {
    pub spec: AgentSpec,
    /// Its legacy numeric id (position + 1), for `agent_id` filters and P7 paths.
    pub numeric_id: u64,
    /// Checks received since it went idle.
    pub checks: u32,
    /// When its wake began (wall-clock ms).
    pub wake_started_ms: Option<u64>,
}

impl AgentState {
    /// Whether the runtime serves now.
    pub(crate) fn serving(&self) -> bool {
        match &self.spec.runtime {
            RuntimeBehaviour::Ready => true,
            RuntimeBehaviour::Waking { checks } => self.checks >= *checks,
            RuntimeBehaviour::Terminal { .. } => false,
        }
    }

    /// A readiness check (R1) arrived: true when the runtime serves. A check of a runtime that
    /// does not serve yet counts toward its wake (and starts it).
    pub(crate) fn readiness_check(&mut self) -> bool {
        if self.serving() {
            return true;
        }
        if matches!(self.spec.runtime, RuntimeBehaviour::Waking { .. }) {
            if self.checks == 0 {
                self.wake_started_ms = Some(now_ms());
            }
            self.checks = self.checks.saturating_add(1);
        }
        false
    }

    /// A runtime-access read (P11): ready while serving or idle (not yet checked); during a
    /// wake, the read counts as a check and answers waking until the wake completes.
    pub(crate) fn access_check(&mut self) -> AccessKind {
        match &self.spec.runtime {
            RuntimeBehaviour::Ready => AccessKind::Ready,
            RuntimeBehaviour::Terminal { .. } => AccessKind::Terminal,
            RuntimeBehaviour::Waking { checks } => {
                let needed = *checks;
                if self.checks >= needed || self.checks == 0 {
                    return AccessKind::Ready;
                }
                self.checks = self.checks.saturating_add(1);
                if self.checks >= needed {
                    AccessKind::Ready
                } else {
                    AccessKind::Waking
                }
            }
        }
    }
}

/// A turn the runtime is answering.
#[derive(Debug)]
pub(crate) struct Turn {
    pub id: u64,
    /// The assistant message id (`start.messageId`).
    pub message_id: String,
    /// The user message, in the history shape.
    pub user_message: Value,
    /// The answer so far.
    pub builder: AnswerBuilder,
    /// Set to true to stop the answer; dropped when the turn leaves the session.
    pub cancel: watch::Sender<bool>,
    pub started_ms: u64,
}

/// One AgentSession.
#[derive(Debug)]
pub(crate) struct Session {
    pub seq: u64,
    pub uid: String,
    pub agent_uid: String,
    pub thread_id: String,
    /// `(handle uid, handle_unique_id)` of a default session.
    pub handle: Option<(String, String)>,
    pub name: Option<String>,
    pub created_by: String,
    pub parent_session_uid: Option<String>,
    /// The runtime bearer issued for this session (never logged).
    pub runtime_token: String,
    pub started_ms: u64,
    pub updated_ms: u64,
    pub llm_provider: String,
    pub llm_model: String,
    pub llm_thinking: String,
    /// The model the runtime last ran with.
    pub active: Option<(String, String, String)>,
    /// When it was archived, with the archive's sequence number (for `-archived_at`).
    pub archived: Option<(u64, u64)>,
    /// Completed messages, in the history shape.
    pub messages: Vec<Value>,
    pub turn: Option<Turn>,
    /// The error of the last turn, if it reported one.
    pub last_error: Option<String>,
}

impl Session {
    /// Ends the running turn, if it is `turn_id` (any turn when `None`): the user message and
    /// the answer so far join the transcript and the session stops working. False when there was
    /// no such turn.
    pub(crate) fn end_turn(&mut self, turn_id: Option<u64>) -> bool {
        if turn_id.is_some_and(|id| self.turn.as_ref().is_none_or(|t| t.id != id)) {
            return false;
        }
        let Some(turn) = self.turn.take() else {
            return false;
        };
        let now = now_ms();
        self.messages.push(turn.user_message);
        let content = turn.builder.content();
        if !content.is_empty() {
            self.messages.push(assistant_message(
                &turn.message_id,
                now,
                content,
                &self.agent_uid,
            ));
        }
        self.last_error = turn.builder.error.clone();
        self.active = Some((
            self.llm_provider.clone(),
            self.llm_model.clone(),
            self.llm_thinking.clone(),
        ));
        self.updated_ms = now;
        true
    }

    /// Whether a turn is running.
    pub(crate) fn working(&self) -> bool {
        self.turn.is_some()
    }

    /// Every text of the transcript (for search).
    pub(crate) fn transcript_text(&self) -> String {
        let mut text = String::new();
        for message in &self.messages {
            for part in message
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(t) = part.get("text").and_then(Value::as_str) {
                    text.push_str(t);
                    text.push('\n');
                }
            }
        }
        text
    }
}

/// An assistant message in the history shape.
pub(crate) fn assistant_message(id: &str, at_ms: u64, content: Vec<Value>, agent: &str) -> Value {
    json!({
        "id": id,
        "role": "assistant",
        "createdAt": iso(at_ms),
        "content": content,
        "provenance": {"origin": "user", "targetAgentUid": agent},
    })
}

/// What a new session is made of.
#[derive(Debug, Clone)]
pub(crate) struct NewSession {
    pub agent_uid: String,
    pub thread_id: Option<String>,
    pub handle_unique_id: Option<String>,
    pub name: Option<String>,
    pub parent_session_uid: Option<String>,
    pub model: (ModelPick, String),
}

/// Everything the simulator holds.
#[derive(Debug)]
pub(crate) struct State {
    pub agents: Vec<AgentState>,
    /// In creation order.
    pub sessions: Vec<Session>,
    /// `/ready` checks the local runtime received ([`crate::LocalRuntime::ready_after`]).
    pub local_checks: u32,
    seq: u64,
    random: RandomState,
}

impl State {
    pub(crate) fn new(config: &SimConfig) -> State {
        State {
            agents: config
                .agents
                .iter()
                .zip(1u64..)
                .map(|(spec, numeric_id)| AgentState {
                    spec: spec.clone(),
                    numeric_id,
                    checks: 0,
                    wake_started_ms: None,
                })
                .collect(),
            sessions: Vec::new(),
            local_checks: 0,
            seq: 0,
            random: RandomState::new(),
        }
    }

    /// The next sequence number.
    pub(crate) fn next_seq(&mut self) -> u64 {
        self.seq = self.seq.saturating_add(1);
        self.seq
    }

    /// The Agent named by uid, or by its numeric id when `key` is all digits.
    pub(crate) fn agent(&self, key: &str) -> Option<&AgentState> {
        self.agents
            .iter()
            .find(|a| a.spec.uid == key || (is_digits(key) && a.numeric_id.to_string() == key))
    }

    pub(crate) fn agent_mut(&mut self, key: &str) -> Option<&mut AgentState> {
        self.agents
            .iter_mut()
            .find(|a| a.spec.uid == key || (is_digits(key) && a.numeric_id.to_string() == key))
    }

    pub(crate) fn session(&self, uid: &str) -> Option<&Session> {
        self.sessions.iter().find(|s| s.uid == uid)
    }

    pub(crate) fn session_mut(&mut self, uid: &str) -> Option<&mut Session> {
        self.sessions.iter_mut().find(|s| s.uid == uid)
    }

    /// A fresh, unguessable runtime token.
    fn new_token(&mut self) -> String {
        let seq = self.next_seq();
        let mut words = [0u64; 2];
        for (i, word) in (0u64..).zip(words.iter_mut()) {
            let mut h = self.random.build_hasher();
            h.write_u64(seq);
            h.write_u64(i);
            h.write_u64(now_ms());
            *word = h.finish();
        }
        let [a, b] = words;
        format!("simrt_{a:016x}{b:016x}")
    }

    /// Creates a session owned by `person` and returns its uid.
    pub(crate) fn create_session(&mut self, new: NewSession, person: &str) -> String {
        self.create_session_as(None, new, person)
    }

    /// [`State::create_session`] under a given uid (a local runtime's conversation ids).
    pub(crate) fn create_session_as(
        &mut self,
        uid: Option<String>,
        new: NewSession,
        person: &str,
    ) -> String {
        let seq = self.next_seq();
        let uid = uid.unwrap_or_else(|| format!("sess-{seq:04}"));
        let token = self.new_token();
        let now = now_ms();
        let (pick, thinking) = new.model;
        let handle = new
            .handle_unique_id
            .map(|handle| (format!("handle-{seq:04}"), handle));
        self.sessions.push(Session {
            seq,
            thread_id: new.thread_id.unwrap_or_else(|| uid.clone()),
            uid: uid.clone(),
            agent_uid: new.agent_uid,
            handle,
            name: new.name,
            created_by: person.to_owned(),
            parent_session_uid: new.parent_session_uid,
            runtime_token: token,
            started_ms: now,
            updated_ms: now,
            llm_provider: pick.provider,
            llm_model: pick.model,
            llm_thinking: thinking,
            active: None,
            archived: None,
            messages: Vec::new(),
            turn: None,
            last_error: None,
        });
        uid
    }

    /// Whether `token` is a runtime token issued for a session of `agent_uid`.
    pub(crate) fn runtime_token_valid(&self, agent_uid: &str, token: &str) -> bool {
        !token.is_empty()
            && self
                .sessions
                .iter()
                .any(|s| s.agent_uid == agent_uid && s.runtime_token == token)
    }

    /// Every runtime token issued (for redaction).
    pub(crate) fn runtime_tokens(&self) -> Vec<String> {
        self.sessions
            .iter()
            .map(|s| s.runtime_token.clone())
            .collect()
    }

    /// The canonical record of a session (section 5).
    pub(crate) fn record(&self, session: &Session, config: &SimConfig) -> Value {
        let agent_name = self
            .agent(&session.agent_uid)
            .map(|a| a.spec.name.clone())
            .unwrap_or_default();
        let working = session.working();
        let (active_provider, active_model, active_thinking) = match &session.active {
            Some((p, m, t)) => (json!(p), json!(m), json!(t)),
            None => (Value::Null, Value::Null, Value::Null),
        };
        let bound_handle = match &session.handle {
            Some((handle_uid, handle)) => json!({
                "uid": handle_uid,
                "handle_unique_id": handle,
                "owner_user_uid": session.created_by,
                "is_locked": false,
            }),
            None => Value::Null,
        };
        let mut record = Map::new();
        let mut put = |key: &str, value: Value| {
            record.insert(key.to_owned(), value);
        };
        put("uid", json!(session.uid));
        put("agent_uid", json!(session.agent_uid));
        put("agent_name", json!(agent_name));
        put(
            "organization_environment_uid",
            json!(config.environment_uid),
        );
        put(
            "organization_environment_name",
            json!("Simulated Environment"),
        );
        put("name", json!(session.name));
        put("summary", json!(""));
        put("harness", json!("tau"));
        put("harness_protocol", json!("tau-session-v1"));
        put("harness_version", json!("0.0.0-sim"));
        put("status", json!("running"));
        put("started_at", json!(iso(session.started_ms)));
        put("ended_at", Value::Null);
        put("llm_provider", json!(session.llm_provider));
        put("llm_model", json!(session.llm_model));
        put("llm_thinking", json!(session.llm_thinking));
        put("active_provider", active_provider);
        put("active_model", active_model);
        put("active_thinking", active_thinking);
        put("engine_name", json!("tau"));
        put(
            "runtime_state",
            json!(if working { "working" } else { "idle" }),
        );
        put("working", json!(working));
        put("catalog_digest", wire::catalog_digest(&config.catalog));
        put("created_by_user_uid", json!(session.created_by));
        put("is_archived", json!(session.archived.is_some()));
        put(
            "archived_at",
            session
                .archived
                .map_or(Value::Null, |(ms, _)| json!(iso(ms))),
        );
        put("bound_handle", bound_handle);
        put("parent_session_uid", json!(session.parent_session_uid));
        put("metadata", json!({}));
        put("observability", Value::Null);
        Value::Object(record)
    }

    /// The P9 snapshot, or `None` when nothing has been written.
    pub(crate) fn history(&self, session: &Session) -> Option<Value> {
        if session.messages.is_empty() && session.turn.is_none() {
            return None;
        }
        let agent_name = self
            .agent(&session.agent_uid)
            .map(|a| a.spec.name.clone())
            .unwrap_or_default();
        let mut messages = session.messages.clone();
        let in_progress = match &session.turn {
            Some(turn) => {
                messages.push(turn.user_message.clone());
                assistant_message(
                    &turn.message_id,
                    turn.started_ms,
                    turn.builder.content(),
                    &session.agent_uid,
                )
            }
            None => Value::Null,
        };
        let status = if session.turn.is_some() {
            "running"
        } else if session.last_error.is_some() {
            "error"
        } else {
            "completed"
        };
        Some(json!({
            "version": 1,
            "session": {
                "sessionId": session.uid,
                "threadId": session.thread_id,
                "agentUid": session.agent_uid,
                "agentSessionUid": session.uid,
                "agentName": agent_name,
                "status": status,
                "startedAt": iso(session.started_ms),
                "updatedAt": iso(session.updated_ms),
                "error": session.last_error,
            },
            "messages": messages,
            "inProgressMessage": in_progress,
        }))
    }

    /// The P10 answer, or `None` when nothing has been written.
    pub(crate) fn insights(&self, session: &Session, config: &SimConfig) -> Option<Value> {
        if session.messages.is_empty() {
            return None;
        }
        let role_count = |role: &str| {
            session
                .messages
                .iter()
                .filter(|m| m.get("role").and_then(Value::as_str) == Some(role))
                .count()
        };
        let users = role_count("user");
        let assistants = role_count("assistant");
        let tool_calls = session
            .messages
            .iter()
            .flat_map(|m| {
                m.get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("tool-call"))
            .count();
        // A rough estimate: one token per word.
        let count_words = |role: &str| -> usize {
            session
                .messages
                .iter()
                .filter(|m| m.get("role").and_then(Value::as_str) == Some(role))
                .flat_map(|m| {
                    m.get("content")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                })
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .map(|t| t.split_whitespace().count())
                .sum()
        };
        let input = count_words("user");
        let output = count_words("assistant");
        let total = input.saturating_add(output);
        let pick = wire::find_model(&config.catalog, &session.llm_provider, &session.llm_model);
        let window = pick.as_ref().and_then(|p| p.context_window);
        let percent = window
            .filter(|w| *w > 0)
            .map_or(0.0, |w| (total as f64) * 100.0 / (w as f64));
        let entries = session.messages.len();
        Some(json!({
            "agent_session_uid": session.uid,
            "harness": "tau",
            "harness_protocol": "tau-session-v1",
            "harness_version": "0.0.0-sim",
            "computed_at": wire::iso_now(),
            "reason": "turn_completed",
            "updated_at": iso(session.updated_ms),
            "has_insights": true,
            "entry_count": entries,
            "last_sequence": entries,
            "active_branch_entry_count": entries,
            "entry_type_counts": {"message": entries},
            "title": session.name.clone().unwrap_or_else(|| format!("Agent session {}", session.uid)),
            "insights": {
                "version": 1,
                "model": {
                    "provider": session.llm_provider,
                    "model": session.llm_model,
                    "reasoningEffort": session.llm_thinking,
                    "contextWindow": window,
                    "maxOutputTokens": pick.as_ref().and_then(|p| p.max_tokens),
                },
                "session": {"status": if session.working() { "running" } else { "completed" }},
                "usage": {
                    "totalMessages": entries,
                    "userMessages": users,
                    "assistantMessages": assistants,
                    "assistantTurns": assistants,
                    "toolCalls": tool_calls,
                    "toolResults": tool_calls,
                    "estimatedCostUsd": 0.0,
                    "tokens": {"input": input, "output": output, "cacheRead": 0, "cacheWrite": 0, "total": total},
                },
                "context": {
                    "source": "runtime",
                    "status": "measured",
                    "tokens": total,
                    "contextWindow": window,
                    "percentOfContextWindow": percent,
                    "latestCompaction": null,
                },
            },
        }))
    }
}

/// Whether `text` is non-empty and all ASCII digits.
pub(crate) fn is_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

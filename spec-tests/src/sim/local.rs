//! The simulator's local Agent runtime (ADR 099; `platform-api.md` section 8; issue 26, step 0):
//! a runtime on the person's machine that loads before it serves, answers in local or managed
//! mode, lists and reloads its conversations or cannot (live-only), and re-keys a client's new
//! conversation to an id of its own (`X-Agent-Session-Uid`), as `platform-sim`'s local runtime
//! does. Faults come from the simulator's common fault table, as for the platform.

use std::collections::BTreeMap;
use std::time::Duration;

use engine_core::api::local::LocalRoute;
use engine_core::{LocalSource, Time};
use platform_sim::{AnswerStyle, Dialect, answer_body, runtime_uid};
use serde_json::{Value, json};

use super::Rng;

/// The local runtime's address.
pub const BASE: &str = "http://127.0.0.1:8787";

/// The local source the simulated host switches to.
pub fn source() -> LocalSource {
    LocalSource::new(BASE, "Sim Local")
        .unwrap_or_else(|_| unreachable!("a loopback address and a name"))
}

/// One conversation the runtime holds.
struct Conversation {
    /// `(role, text)` in order.
    history: Vec<(&'static str, String)>,
    /// Its place in the list: later is newer.
    updated: u64,
}

/// The runtime and its conversations.
pub(super) struct LocalRuntime {
    conversations: BTreeMap<String, Conversation>,
    /// When it serves (`None`: not checked yet; it loads from its first check for a seeded
    /// time).
    ready_at: Option<Time>,
    /// Whether it lists and reloads conversations (`false`: live-only, 404).
    lists: bool,
    /// Whether it runs in managed mode (its health says so; the engine refuses it).
    managed: bool,
    clock: u64,
    dialect: Dialect,
}

impl LocalRuntime {
    /// A runtime of `rng`'s drawing: live-only one time in three, managed one in ten, with
    /// two conversations of its own and the default one.
    pub(super) fn new(rng: &mut Rng, dialect: Dialect) -> LocalRuntime {
        let lists = !rng.one_in(3);
        let managed = rng.one_in(10);
        let mut runtime = LocalRuntime {
            conversations: BTreeMap::new(),
            ready_at: None,
            lists,
            managed,
            clock: 0,
            dialect,
        };
        for uid in ["local-default", "local-a", "local-b"] {
            runtime
                .touch(uid)
                .history
                .push(("user", format!("Hello {uid}")));
        }
        runtime
    }

    /// The conversation the runtime knows as `uid`, created (and made newest) if new.
    fn touch(&mut self, uid: &str) -> &mut Conversation {
        self.clock += 1;
        let clock = self.clock;
        let c = self
            .conversations
            .entry(uid.to_owned())
            .or_insert_with(|| Conversation {
                history: Vec::new(),
                updated: clock,
            });
        c.updated = clock;
        c
    }

    /// Whether the runtime runs in managed mode (the engine must never send it a turn).
    pub(super) fn managed(&self) -> bool {
        self.managed
    }

    /// The ids a host may ask for: the runtime's own and its default's name.
    pub(super) fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.conversations.keys().cloned().collect();
        ids.push("default".to_owned());
        ids
    }

    fn serving(&mut self, now: Time, rng: &mut Rng) -> bool {
        let at = *self.ready_at.get_or_insert_with(|| {
            now.checked_add(Duration::from_millis(rng.below(6000)))
                .unwrap_or(now)
        });
        now >= at
    }

    fn history(&self, uid: &str) -> Value {
        let history = self.conversations.get(uid).map(|c| c.history.as_slice());
        let messages = super::history_messages(uid, history.unwrap_or_default());
        json!({"version": 1,
            "session": {"sessionId": uid, "threadId": uid, "status": "completed"},
            "messages": messages, "inProgressMessage": null})
    }

    fn list(&self) -> Value {
        let mut rows: Vec<(&String, &Conversation)> = self.conversations.iter().collect();
        rows.sort_by_key(|(_, c)| std::cmp::Reverse(c.updated));
        let rows: Vec<Value> = rows
            .into_iter()
            .take(50)
            .map(|(uid, c)| {
                let title = c.history.iter().find(|(r, _)| *r == "user").map(|(_, t)| t);
                json!({"sessionUid": uid, "title": title, "messageCount": c.history.len(),
                    "latestMessagePreview": c.history.last().map(|(_, t)| t),
                    "createdAt": "2026-10-02T08:00:00Z",
                    "updatedAt": format!("2026-10-02T09:{:02}:00Z", c.updated % 60),
                    "working": false})
            })
            .collect();
        json!({"sessions": rows, "nextCursor": null})
    }

    /// The well-behaved answer to `route` at `now`: status, body, and the conversation a turn
    /// ran in (the `X-Agent-Session-Uid` header).
    pub(super) fn answer(
        &mut self,
        route: &LocalRoute,
        now: Time,
        rng: &mut Rng,
    ) -> (u16, Vec<u8>, Option<String>) {
        let json = |status: u16, v: Value| (status, v.to_string().into_bytes(), None);
        let not_found = || json(404, json!({"detail": "Not found."}));
        let starting = || {
            json(
                503,
                json!({"ok": false, "detail": "The local Agent is loading."}),
            )
        };
        match route {
            LocalRoute::Ready => {
                if self.serving(now, rng) {
                    json(200, json!({"ok": true}))
                } else {
                    starting()
                }
            }
            LocalRoute::Health => {
                let mode = if self.managed { "managed" } else { "local" };
                json(200, json!({"ok": true, "mode": mode}))
            }
            LocalRoute::ChatCheck => {
                if self.serving(now, rng) {
                    json(
                        200,
                        json!({"status": "ready", "protocol": "ui-message-stream"}),
                    )
                } else {
                    starting()
                }
            }
            LocalRoute::Agent => json(
                200,
                json!({"name": "local-agent", "displayName": "Sim Local"}),
            ),
            LocalRoute::Sessions if self.lists => json(200, self.list()),
            LocalRoute::History { session_uid } if self.lists => {
                json(200, self.history(&runtime_uid(session_uid)))
            }
            LocalRoute::Sessions | LocalRoute::History { .. } => not_found(),
            LocalRoute::ModelProviders => json(200, crate::fixtures::catalog()),
            LocalRoute::SessionModel { session_uid }
            | LocalRoute::SetSessionModel { session_uid, .. } => {
                let uid = runtime_uid(session_uid);
                if self.conversations.contains_key(&uid) {
                    let model = json!({"provider": "acme-cloud", "model": "acme-large", "thinkingLevel": null});
                    json(200, json!({"sessionUid": uid, "model": model}))
                } else {
                    not_found()
                }
            }
            LocalRoute::SendMessage { session_uid, body } => {
                if !self.serving(now, rng) {
                    return starting();
                }
                let uid = runtime_uid(session_uid);
                let text = body
                    .pointer("/messages/0/content/0/text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let message_id = format!("m-{}", rng.below(1 << 20));
                let answer = answer_body(self.dialect, &AnswerStyle::Echo, &text, &message_id);
                let conversation = self.touch(&uid);
                conversation.history.push(("user", text.clone()));
                conversation
                    .history
                    .push(("assistant", format!("You said: {text}")));
                (200, answer, Some(uid))
            }
            LocalRoute::Cancel { session_uid } => {
                let uid = runtime_uid(session_uid);
                if self.conversations.contains_key(&uid) {
                    json(200, json!({"sessionUid": uid, "status": "cancelled"}))
                } else {
                    not_found()
                }
            }
            // A route this runtime does not serve (`LocalRoute` is non-exhaustive).
            _ => not_found(),
        }
    }
}

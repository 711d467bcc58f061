//! ADR 087: messages written while the Agent works wait in a per-session queue (SND-18 to
//! SND-25, OI-20).
//!
//! The queue is plain data; the engine decides when its first row leaves (after a clean finish,
//! when another writer stops, or on `sendNextQueuedMessage()`).

use std::collections::VecDeque;

use serde::Serialize;

/// At most this many rows wait per session (SND-24).
pub const QUEUE_LIMIT: usize = 10;

/// Why a queue is held (OI-20): nothing leaves it until `sendNextQueuedMessage()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HoldReason {
    /// The person stopped the run of the session on screen.
    Stopped,
    /// A run ended in an error.
    Failed,
    /// The person moved to another session, or a run ended while another was on screen.
    Away,
    /// A terminal runtime decision blocked sending.
    Blocked,
    /// A queued row could not start.
    Unavailable,
}

/// A held queue's reason and message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Hold {
    /// Why.
    pub reason: HoldReason,
    /// The message that goes with it (the error or the decision's notice), when any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// One waiting message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct QueuedMessage {
    /// The row id (from the engine's seeded generator).
    pub id: String,
    /// The trimmed text.
    pub text: String,
    /// When it was queued (ISO-8601, wall clock).
    pub created_at: String,
}

/// Where a queued row stands (ADR 087).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum QueueRowStatus {
    /// Waits for its turn.
    Queued,
    /// On its way out as its own turn.
    Sending,
    /// The queue is held: nothing leaves until `sendNextQueuedMessage()`.
    Held,
}

/// A row as a surface renders it: `{id, text, createdAt, status, holdReason?, holdMessage?}`
/// (ADR 087). The hold belongs to the queue; every held row carries its reason and message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct QueueRow {
    /// The row id.
    pub id: String,
    /// The trimmed text.
    pub text: String,
    /// When it was queued (ISO-8601, wall clock).
    pub created_at: String,
    /// Queued, sending or held.
    pub status: QueueRowStatus,
    /// Why it is held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold_reason: Option<HoldReason>,
    /// The hold's message (the error, the decision's notice, or "Held while you were away.").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold_message: Option<String>,
}

impl QueueRow {
    pub(crate) fn new(
        row: &QueuedMessage,
        status: QueueRowStatus,
        hold: Option<&Hold>,
    ) -> QueueRow {
        QueueRow {
            id: row.id.clone(),
            text: row.text.clone(),
            created_at: row.created_at.clone(),
            status,
            hold_reason: hold.map(|h| h.reason),
            hold_message: hold.and_then(|h| h.message.clone()),
        }
    }
}

/// The texts of the queue strip and the composer (ADR 087), ready to render.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct QueueTexts {
    /// "{n} queued · will send when {Agent} finishes", while rows wait.
    pub summary: Option<String>,
    /// Why the queue is held ("Held after you stopped {Agent}.", ...), while it is.
    pub hold: Option<String>,
    /// The composer's placeholder while the Agent works: "{Agent} is working. Your message will
    /// send when it finishes."
    pub composer_placeholder: Option<String>,
    /// The composer's primary control while the Agent works: "Add to queue".
    pub composer_action: Option<String>,
}

impl QueueTexts {
    /// The texts for `rows` waiting rows, a hold, and whether the Agent works; `agent` is the
    /// Agent's name, when known ("the agent" otherwise).
    pub(crate) fn new(
        rows: usize,
        hold: Option<&Hold>,
        working: bool,
        agent: Option<&str>,
    ) -> QueueTexts {
        let name = agent.map(str::trim).filter(|n| !n.is_empty());
        let agent = name.unwrap_or("the agent");
        QueueTexts {
            summary: (rows > 0).then(|| format!("{rows} queued · will send when {agent} finishes")),
            hold: hold.filter(|_| rows > 0).map(|h| hold_text(h, agent)),
            composer_placeholder: working.then(|| {
                let subject = name.unwrap_or("The agent");
                format!("{subject} is working. Your message will send when it finishes.")
            }),
            composer_action: working.then(|| "Add to queue".to_owned()),
        }
    }
}

/// ADR 087: a hold in the person's words.
pub(crate) fn hold_text(hold: &Hold, agent: &str) -> String {
    let message = hold
        .message
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty());
    match (hold.reason, message) {
        (HoldReason::Stopped, _) => format!("Held after you stopped {agent}."),
        (HoldReason::Failed, _) => "Held because the last answer failed.".to_owned(),
        (HoldReason::Away, Some(m)) => m.to_owned(),
        (HoldReason::Away, None) => "Held while you were in another session.".to_owned(),
        (HoldReason::Blocked | HoldReason::Unavailable, Some(m)) => format!("Held: {m}"),
        (HoldReason::Blocked | HoldReason::Unavailable, None) => {
            format!("Held until {agent} can take messages.")
        }
    }
}

/// The storage key of a session's queue (ADR 087).
pub(crate) fn storage_key(session_uid: &str) -> String {
    format!("main_sequence_ai.message_queue.{session_uid}")
}

/// The message of rows read back from storage (ADR 087).
pub(crate) const AWAY_MESSAGE: &str = "Held while you were away.";

/// Rows read back from storage: objects with a string `id`, a text that is not blank and a
/// string `createdAt`; invalid rows are dropped, at most [`QUEUE_LIMIT`] are read (ADR 087).
pub(crate) fn stored_rows(value: &serde_json::Value) -> Vec<QueuedMessage> {
    let Some(items) = value.as_array() else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let id = item.get("id")?.as_str()?.trim();
            let text = item.get("text")?.as_str()?.trim();
            let created_at = item.get("createdAt")?.as_str()?;
            (!id.is_empty() && !text.is_empty()).then(|| QueuedMessage {
                id: id.to_owned(),
                text: text.to_owned(),
                created_at: created_at.to_owned(),
            })
        })
        .take(QUEUE_LIMIT)
        .collect()
}

/// Why a message was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Empty once trimmed: refused silently.
    Empty,
    /// Ten rows already wait (SND-24).
    Full,
}

/// One session's queue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Queue {
    pub rows: VecDeque<QueuedMessage>,
    pub hold: Option<Hold>,
    /// A drain is due: the first row leaves as soon as the thread is idle (SND-19, SND-22).
    pub armed: bool,
    /// Rows sent in the current burst, for "Sending queued message {n} of {N}" (OI-20).
    pub sent_in_burst: usize,
    /// A row taken for sending whose turn has not ended: it still counts against the limit
    /// (ADR 087 keeps it in the queue as `sending`).
    pub sending: bool,
}

impl Queue {
    /// Adds a row (SND-24): trimmed, refused when empty or when ten already wait.
    pub(crate) fn push(&mut self, row: QueuedMessage) -> Result<(), Refusal> {
        if row.text.is_empty() {
            return Err(Refusal::Empty);
        }
        if self.rows.len() + usize::from(self.sending) >= QUEUE_LIMIT {
            return Err(Refusal::Full);
        }
        self.rows.push_back(row);
        Ok(())
    }

    /// Holds the queue when messages wait in it; an empty queue carries no hold.
    pub(crate) fn hold(&mut self, reason: HoldReason, message: Option<String>) {
        self.armed = false;
        // A held queue ends the burst: the next release counts from one again.
        self.sent_in_burst = 0;
        if !self.rows.is_empty() {
            self.hold = Some(Hold { reason, message });
        }
    }

    /// Takes the first row for sending, with its "n of N" position in the burst.
    pub(crate) fn take_first(&mut self) -> Option<(QueuedMessage, usize, usize)> {
        let row = self.rows.pop_front()?;
        self.sending = true;
        self.sent_in_burst += 1;
        let n = self.sent_in_burst;
        Some((row, n, n + self.rows.len()))
    }

    /// A row that could not go out returns to the front.
    pub(crate) fn put_back(&mut self, row: QueuedMessage) {
        self.rows.push_front(row);
        self.sent_in_burst = self.sent_in_burst.saturating_sub(1);
    }

    /// Removes a row; its text when it was there.
    pub(crate) fn remove(&mut self, id: &str) -> Option<String> {
        let index = self.rows.iter().position(|r| r.id == id)?;
        let row = self.rows.remove(index)?;
        self.settle_empty();
        Some(row.text)
    }

    /// Moves a row to `to` (clamped to the ends).
    pub(crate) fn reorder(&mut self, id: &str, to: usize) {
        let Some(from) = self.rows.iter().position(|r| r.id == id) else {
            return;
        };
        if let Some(row) = self.rows.remove(from) {
            let to = to.min(self.rows.len());
            self.rows.insert(to, row);
        }
    }

    /// Rows read back from storage go first, held `away` (ADR 087); the limit still holds.
    pub(crate) fn restore(&mut self, stored: Vec<QueuedMessage>) {
        let known: Vec<String> = self.rows.iter().map(|r| r.id.clone()).collect();
        let mut rows: VecDeque<QueuedMessage> = stored
            .into_iter()
            .filter(|r| !known.contains(&r.id))
            .collect();
        if rows.is_empty() {
            return;
        }
        rows.extend(self.rows.drain(..));
        rows.truncate(QUEUE_LIMIT);
        self.rows = rows;
        self.armed = false;
        self.hold = Some(Hold {
            reason: HoldReason::Away,
            message: Some(AWAY_MESSAGE.to_owned()),
        });
    }

    /// Removes every row and hands them over.
    pub(crate) fn take_all(&mut self) -> VecDeque<QueuedMessage> {
        let rows = std::mem::take(&mut self.rows);
        self.settle_empty();
        rows
    }

    /// Removes every row.
    pub(crate) fn clear(&mut self) {
        self.rows.clear();
        self.settle_empty();
    }

    /// An emptied queue forgets its hold, drain and burst.
    pub(crate) fn settle_empty(&mut self) {
        if self.rows.is_empty() {
            self.hold = None;
            self.armed = false;
            self.sent_in_burst = 0;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn row(id: &str) -> QueuedMessage {
        QueuedMessage {
            id: id.into(),
            text: format!("text {id}"),
            created_at: String::new(),
        }
    }

    #[test]
    fn limit_order_and_burst_positions() {
        let mut q = Queue::default();
        for i in 0..QUEUE_LIMIT {
            q.push(row(&i.to_string())).unwrap();
        }
        assert_eq!(q.push(row("x")), Err(Refusal::Full));
        q.reorder("9", 0);
        assert_eq!(q.rows.front().unwrap().id, "9");
        q.reorder("9", 99);
        assert_eq!(q.rows.back().unwrap().id, "9");
        let (first, n, total) = q.take_first().unwrap();
        assert_eq!((first.id.as_str(), n, total), ("0", 1, 10));
        let (_, n, total) = q.take_first().unwrap();
        assert_eq!((n, total), (2, 10));
        assert_eq!(q.remove("5").as_deref(), Some("text 5"));
        q.clear();
        assert!(q.rows.is_empty() && q.sent_in_burst == 0);
    }

    /// RU-41: the reference's pinned hold lines (adr-notes 2).
    #[test]
    fn ru_41_hold_lines() {
        let hold = |reason, message: Option<&str>| Hold {
            reason,
            message: message.map(str::to_owned),
        };
        assert_eq!(
            hold_text(&hold(HoldReason::Unavailable, None), "Analyst"),
            "Held until Analyst can take messages."
        );
        let busy = "The agent cannot take a new message right now.";
        assert_eq!(
            hold_text(&hold(HoldReason::Blocked, Some(busy)), "Analyst"),
            "Held: The agent cannot take a new message right now."
        );
        assert_eq!(
            hold_text(&hold(HoldReason::Unavailable, Some("  ")), "Analyst"),
            "Held until Analyst can take messages.",
            "a blank message is none"
        );
    }

    #[test]
    fn an_empty_queue_carries_no_hold() {
        let mut q = Queue::default();
        q.hold(HoldReason::Failed, None);
        assert_eq!(q.hold, None);
        q.push(row("a")).unwrap();
        q.hold(HoldReason::Blocked, Some("No.".into()));
        assert_eq!(q.hold.as_ref().unwrap().reason, HoldReason::Blocked);
        q.remove("a");
        assert_eq!(q.hold, None);
    }
}

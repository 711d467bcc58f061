//! The chat's slash commands (`/help` lists them), each printing what it did, or a word when
//! it had nothing to do.

use std::time::Duration;

use engine_core::message::{Part, Role};
use engine_core::{Command, IconStatus, Input, ReadinessStatus, Snapshot};
use engine_io_tokio::Handle;

use crate::screen::Screen;
use crate::stage::{self, Stage};
use crate::text::one_line as line;

/// What `/help` prints.
const HELP: &str = "\
Commands:
  /sessions          list the sessions
  /agents            list the Agents of the sessions, with their icons
  /refresh           read the session list again
  /search TEXT       search your conversations
  /switch N          show session N of /sessions or /search
  /archive N         archive session N of the last /sessions or /search
  /archived [LIMIT]  list this Agent's archived sessions
  /unarchive N       restore session N of /archived
  /default           back to the default session
  /new               start a new session with this Agent
  /models            list the models
  /model ID          use model ID (provider::model) for this session
  /effort LEVEL      set the reasoning effort
  /choose ID [LEVEL] create the waiting session with model ID
  /cancel, /stop     stop the Agent's current run
  /clear             stop a running answer here and clear the thread (the session stays)
  /check             check the Agent again
  /next              release a held queue: its first message goes next
  /retry             open the default session again
  /quit              leave (also Ctrl-D; Ctrl-C stops a running answer, a second one leaves)
Anything else is sent as a message.";

/// What the last listing commands showed, by number, and where the chat stands.
#[derive(Default)]
pub struct Listed {
    /// `/sessions` or `/search`, for `/switch N`.
    sessions: Vec<String>,
    /// `/archived`, for `/unarchive N`.
    archived: Vec<String>,
    /// The default session, as first shown.
    home: Option<String>,
    /// `/switch` or `/new` left the default session.
    away: bool,
}

/// How long `/search` and `/archived` wait for their answer.
const EXPLORER_WAIT: Duration = Duration::from_secs(10);

/// Asks `clear`, waits until it shows (`cleared`), then asks `read` and waits until its answer
/// (or refusal) shows (`answered`): the snapshot found is the read's own, never an older one.
async fn explore(
    handle: &Handle,
    clear: Command,
    read: Command,
    cleared: impl Fn(&Snapshot) -> bool,
    answered: impl Fn(&Snapshot) -> bool,
) -> Option<Snapshot> {
    handle.command(clear).ok()?;
    handle.wait_for(cleared, EXPLORER_WAIT).await?;
    handle.command(read).ok()?;
    handle.wait_for(answered, EXPLORER_WAIT).await
}

/// Prints numbered session rows.
fn print_rows<'a>(
    screen: &Screen,
    rows: impl Iterator<Item = (&'a str, &'a str, Option<&'a str>)>,
) -> Vec<String> {
    let mut uids = Vec::new();
    for (i, (title, uid, note)) in rows.enumerate() {
        let note = note.map(|n| format!("  ({n})")).unwrap_or_default();
        screen.say(&format!(" {:>3}  {}{note}", i + 1, named(title, uid)));
        uids.push(uid.to_owned());
    }
    uids
}

/// How long `/agents` waits for the icons (ADR 090) before it lists what it has.
const ICONS_WAIT: Duration = Duration::from_secs(3);

/// `/agents`: the Agents of the listed sessions (and of the one shown), each with what a
/// terminal can show of its icon (ADR 090, RU-34): its rendering, type and size once loaded,
/// "loading" or "could not be loaded", or none.
async fn agents(handle: &Handle, screen: &Screen) {
    let s = handle.snapshots().borrow().clone();
    let mut names: std::collections::BTreeMap<String, Option<String>> = Default::default();
    for row in &s.agent_sessions {
        if let Some(uid) = &row.agent_uid {
            let entry = names.entry(uid.clone()).or_default();
            if entry.is_none() {
                entry.clone_from(&row.agent_name);
            }
        }
    }
    if let Some(record) = s
        .active_session_detail
        .as_ref()
        .and_then(|d| d.record.as_ref())
    {
        let record = record.value();
        if let Some(uid) = record.get("agent_uid").and_then(|v| v.as_str()) {
            let name = record.get("agent_name").and_then(|v| v.as_str());
            names
                .entry(uid.to_owned())
                .or_insert_with(|| name.map(str::to_owned));
        }
    }
    if names.is_empty() {
        screen.say("(no Agents yet: the sessions name none)");
        return;
    }
    let _ = handle.command(Command::RequestAgentIcons {
        agent_uids: names.keys().cloned().collect(),
    });
    let settled = |s: &Snapshot| {
        !s.agent_icons.is_empty()
            && names.keys().all(|uid| {
                s.agent_icons
                    .get(uid)
                    .is_none_or(|i| !matches!(i.status, IconStatus::Idle | IconStatus::Loading))
            })
    };
    let s = match handle.wait_for(settled, ICONS_WAIT).await {
        Some(s) => s,
        None => handle.snapshots().borrow().clone(),
    };
    for (uid, name) in &names {
        let icon = match s.agent_icons.get(uid) {
            None => "no icon".to_owned(),
            Some(icon) => {
                let rendering = serde_json::to_value(icon.rendering)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                match (&icon.image, icon.status) {
                    (Some(image), _) => format!(
                        "icon: {rendering}, {}, {} bytes",
                        image.content_type.as_deref().unwrap_or("no type"),
                        image.bytes.len()
                    ),
                    (None, IconStatus::Error) => {
                        format!("icon: {rendering}, could not be loaded")
                    }
                    (None, _) => format!("icon: {rendering}, loading"),
                }
            }
        };
        let name = name.as_deref().unwrap_or(uid);
        screen.say(&format!("  {}  {icon}", named(name, uid)));
    }
}

/// A session as a listing shows it: its title, then its uid unless the title already names it
/// (an unnamed session's title is "Agent session {uid}", the reference's own).
fn named(title: &str, uid: &str) -> String {
    let (title, uid) = (line(title), line(uid));
    if title.contains(&uid) {
        title
    } else {
        format!("{title}  {uid}")
    }
}

/// An `archived_at` as the person reads it: "archived 2026-10-02 08:16 UTC" (the offset as
/// given when it is not UTC); a value of another shape is shown as it is.
fn archived_on(at: &str) -> String {
    let at = line(at);
    let (date, rest) = at.split_at_checked(10).unwrap_or((&at, ""));
    let (sep, time) = rest.split_at_checked(1).unwrap_or(("", ""));
    let clock = time.get(..5).filter(|c| {
        c.len() == 5
            && c.chars().enumerate().all(|(i, ch)| {
                if i == 2 {
                    ch == ':'
                } else {
                    ch.is_ascii_digit()
                }
            })
    });
    let date_ok = date.len() == 10
        && date.chars().enumerate().all(|(i, ch)| {
            if i == 4 || i == 7 {
                ch == '-'
            } else {
                ch.is_ascii_digit()
            }
        });
    let (Some(clock), true, true) = (clock, date_ok, matches!(sep, "T" | "t" | " ")) else {
        return format!("archived {at}");
    };
    let zone = match time
        .find(['Z', 'z', '+', '-'])
        .map(|i| time.get(i..).unwrap_or_default())
    {
        Some("Z" | "z" | "+00:00" | "-00:00") | None => "UTC".to_owned(),
        Some(offset) => offset.to_owned(),
    };
    format!("archived {date} {clock} {zone}")
}

/// What `/effort` without a level it knows says: the levels offered, or that there are none.
fn effort_offer(offered: &[String]) -> String {
    if offered.is_empty() {
        "This model offers no reasoning effort levels.".to_owned()
    } else {
        format!(
            "Use /effort LEVEL; this model offers: {}.",
            line(&offered.join(", "))
        )
    }
}

/// Entry N (counted from 1) of the listing `list` made by `lister`, or what to say instead:
/// how to use `usage` when `rest` is no number or nothing is listed, else that there is no N.
fn pick(rest: &str, list: &[String], lister: &str, usage: &str) -> Result<String, String> {
    let how = format!("Use {lister}, then {usage} N.");
    let Ok(n) = rest.parse::<usize>() else {
        return Err(how);
    };
    if list.is_empty() {
        return Err(how);
    }
    match n.checked_sub(1).and_then(|i| list.get(i)) {
        Some(uid) => Ok(uid.clone()),
        None => Err(format!(
            "No session {n} in the last list (1 to {}).",
            list.len()
        )),
    }
}

/// `/search TEXT`: the platform's search of the person's active sessions.
async fn search(handle: &Handle, screen: &Screen, text: &str, listed: &mut Listed) {
    let query = text.trim().to_owned();
    if query.is_empty() {
        screen.say("Use /search TEXT.");
        return;
    }
    let blank = Command::SearchAgentSessions {
        query: String::new(),
        limit: None,
    };
    let read = Command::SearchAgentSessions {
        query: query.clone(),
        limit: None,
    };
    let cleared = |s: &Snapshot| s.session_search_query.is_none() && !s.is_searching_sessions;
    let answered = |s: &Snapshot| {
        s.session_search_query.as_deref() == Some(query.as_str()) && !s.is_searching_sessions
    };
    let Some(s) = explore(handle, blank, read, cleared, answered).await else {
        screen.say("The search did not answer in time.");
        return;
    };
    if let Some(e) = &s.session_search_error {
        screen.say(&format!("The search failed: {e}"));
    } else if s.session_search_results.is_empty() {
        screen.say("No conversations found.");
    } else {
        let rows = s
            .session_search_results
            .iter()
            .map(|x| (x.title.as_str(), x.uid.as_str(), None));
        listed.sessions = print_rows(screen, rows);
    }
}

/// `/archived [LIMIT]`: the archived sessions of the shown session's Agent.
async fn archived(handle: &Handle, screen: &Screen, rest: &str, listed: &mut Listed) {
    let limit = match rest {
        "" => None,
        n => match n.parse::<u32>() {
            Ok(n) => Some(n),
            Err(_) => {
                screen.say("Use /archived [LIMIT].");
                return;
            }
        },
    };
    let read = Command::FetchArchivedAgentSessions {
        agent_uid: None,
        limit,
    };
    let cleared = |s: &Snapshot| {
        s.archived_sessions_agent_uid.is_none()
            && s.archived_sessions_error.is_none()
            && !s.is_loading_archived_sessions
    };
    let answered = |s: &Snapshot| !cleared(s) && !s.is_loading_archived_sessions;
    let clear = Command::ClearArchivedSessions;
    let Some(s) = explore(handle, clear, read, cleared, answered).await else {
        screen.say("The archived sessions did not answer in time.");
        return;
    };
    if let Some(e) = &s.archived_sessions_error {
        screen.say(&format!("The archived sessions could not be loaded: {e}"));
    } else if s.archived_sessions.is_empty() {
        screen.say("No archived sessions.");
    } else {
        let rows: Vec<(&str, &str, Option<String>)> = s
            .archived_sessions
            .iter()
            .map(|x| {
                let at = x.archived_at.as_deref().map(archived_on);
                (x.session.title.as_str(), x.session.uid.as_str(), at)
            })
            .collect();
        let rows = rows.iter().map(|(t, u, a)| (*t, *u, a.as_deref()));
        listed.archived = print_rows(screen, rows);
    }
}

/// What a line did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Done {
    /// A command ran (or said why it did not).
    Command,
    /// The line went to the engine as a message.
    Sent,
    /// The line was a message the chat could not take: not sent.
    NotSent,
    /// `/quit`.
    Quit,
}

/// Carries out one line.
pub async fn command(handle: &Handle, screen: &Screen, text: &str, listed: &mut Listed) -> Done {
    let (word, rest) = text.split_once(' ').unwrap_or((text, ""));
    let rest = rest.trim();
    let send = |c: Command| {
        let _ = handle.command(c);
    };
    let snapshot = || handle.snapshots().borrow().clone();
    if listed.home.is_none() && !listed.away {
        listed.home = snapshot().current_session_id;
    }
    match word {
        "/quit" | "/exit" => return Done::Quit,
        "/help" => screen.say(HELP),
        "/sessions" => {
            let s = snapshot();
            listed.sessions = s.agent_sessions.iter().map(|x| x.uid.clone()).collect();
            if s.agent_sessions.is_empty() {
                screen.say("(no sessions yet: /new starts one)");
            }
            for (i, x) in s.agent_sessions.iter().enumerate() {
                let mark = if Some(&x.uid) == s.current_session_id.as_ref() {
                    "*"
                } else {
                    " "
                };
                screen.say(&format!("{mark}{:>3}  {}", i + 1, named(&x.title, &x.uid)));
            }
        }
        "/switch" => match pick(rest, &listed.sessions, "/sessions or /search", "/switch") {
            Ok(uid) => {
                // From now on the screen shows this session's answers only: the one that
                // streams elsewhere goes on out of view.
                screen.switch_view(Some(&uid), &format!("(switching to {})", line(&uid)));
                listed.away = listed.home.as_ref() != Some(&uid);
                let _ = handle.input(Input::ShowsDefaultSession(false));
                let _ = handle.input(Input::RequestedSessionId(Some(uid.clone())));
                show_history(handle, screen, &uid).await;
            }
            Err(why) => screen.say(&why),
        },
        "/refresh" => {
            send(Command::RefreshLatestSessions);
            screen.say("(reading the sessions again)");
        }
        "/search" => search(handle, screen, rest, listed).await,
        "/archived" => archived(handle, screen, rest, listed).await,
        "/archive" => match pick(rest, &listed.sessions, "/sessions or /search", "/archive") {
            Ok(session_uid) => {
                screen.say(&format!("(archiving {})", line(&session_uid)));
                send(Command::ArchiveAgentSession { session_uid });
            }
            Err(why) => screen.say(&why),
        },
        "/unarchive" => match pick(rest, &listed.archived, "/archived", "/unarchive") {
            Ok(session_uid) => {
                screen.say(&format!("(restoring {})", line(&session_uid)));
                send(Command::UnarchiveAgentSession { session_uid });
            }
            Err(why) => screen.say(&why),
        },
        "/default" => {
            if listed.away {
                screen.switch_view(listed.home.as_deref(), "(back to the default session)");
                listed.away = false;
            } else {
                screen.say("(back to the default session)");
            }
            let _ = handle.input(Input::RequestedSessionId(None));
            let _ = handle.input(Input::ShowsDefaultSession(true));
        }
        "/new" => {
            screen.switch_view(None, "(starting a new session)");
            listed.away = true;
            // The default-session surface shows only the default session: leave it first.
            let _ = handle.input(Input::RequestedSessionId(None));
            let _ = handle.input(Input::ShowsDefaultSession(false));
            send(Command::CreateAgentSession);
        }
        "/agents" => agents(handle, screen).await,
        "/models" => {
            let s = snapshot();
            if let Some(e) = &s.available_models_error {
                screen.say(&format!("The models could not be loaded: {}", line(e)));
            } else if !s.available_models.iter().any(|m| m.selectable) {
                screen.say("(no models to choose from)");
            }
            for m in s.available_models.iter().filter(|m| m.selectable) {
                let mark = if Some(&m.id) == s.selected_model_value.as_ref() {
                    "*"
                } else {
                    " "
                };
                let levels: Vec<&str> = m
                    .reasoning_options
                    .iter()
                    .map(|o| o.value.as_str())
                    .collect();
                let effort = if levels.is_empty() {
                    String::new()
                } else {
                    format!("  (reasoning effort: {})", line(&levels.join(", ")))
                };
                screen.say(&format!(
                    "{mark} {}  {}{effort}",
                    line(&m.id),
                    line(&m.label)
                ));
            }
        }
        "/model" => {
            let known = snapshot().available_models.iter().any(|m| m.id == rest);
            if known {
                send(Command::SetSelectedModelValue {
                    value: Some(rest.into()),
                });
                screen.say(&format!("(model: {rest})"));
            } else {
                screen.say(&format!("Unknown model {rest:?}; /models lists them."));
            }
        }
        "/effort" => {
            let offered: Vec<String> = snapshot()
                .available_reasoning_efforts
                .iter()
                .map(|o| o.value.clone())
                .collect();
            if offered.iter().any(|v| v == rest) {
                send(Command::SetSelectedReasoningEffortValue {
                    value: Some(rest.into()),
                });
                screen.say(&format!("(reasoning effort: {rest})"));
            } else {
                screen.say(&effort_offer(&offered));
            }
        }
        "/choose" => {
            let mut parts = rest.split_whitespace();
            let id = parts.next().unwrap_or_default();
            let thinking = parts.next().map(str::to_owned);
            match id.split_once("::") {
                _ if snapshot().session_model_selection_request.is_none() => {
                    screen.say("(no session is waiting for a model: /model ID changes this one's)");
                }
                Some((provider, model)) => {
                    send(Command::ResolveSessionModelSelection {
                        choice: engine_core::api::ModelChoice {
                            provider: provider.into(),
                            model: model.into(),
                            thinking,
                        },
                    });
                    screen.say(&format!("(creating the session with {})", line(id)));
                }
                None => screen.say("Use /choose provider::model [level]."),
            }
        }
        // A session selected always gets its cancel request (RU-22: "Run cancelled.", then "Run
        // cancellation requested."); with none the engine says so ("Unable to stop session").
        "/cancel" | "/stop" => send(Command::CancelActiveSession),
        "/clear" => {
            send(Command::ClearThread);
            screen.notice("(thread cleared: its answer, if one ran, is stopped here)");
        }
        "/check" => {
            send(Command::RefreshActiveSessionRuntimeAccess);
            screen.say("(checking again)");
        }
        "/next" => {
            let waiting = snapshot().message_queue.len();
            if waiting == 0 {
                screen.say("(nothing is queued)");
            } else {
                send(Command::SendNextQueuedMessage);
                screen.say(&format!(
                    "(the first of {waiting} queued message(s) goes once the agent is idle)"
                ));
            }
        }
        "/retry" => {
            if snapshot().default_session_status == engine_core::DefaultSessionStatus::Error {
                send(Command::RetryDefaultSession);
                screen.say("(opening the default session again)");
            } else {
                screen.say("(nothing to retry: the default session is not in error)");
            }
        }
        w if w.starts_with('/') => screen.say(&format!("Unknown command {w}. /help lists them.")),
        _ => {
            let s = snapshot();
            if let Some(why) = cannot_take(&s) {
                // Sent, it would only come back with the engine's guard text ("Choose or start
                // a session before writing."): the reason and the way out instead.
                screen.notice(&format!("(not sent: {why})"));
                return Done::NotSent;
            }
            // RU-38: the composer says whether a submit queues, and why.
            if s.composer_state.queues {
                let why =
                    s.composer_state.reason.as_deref().unwrap_or(
                        "the Agent is working. Your message will send when it finishes.",
                    );
                screen.notice(&format!("(queued: {why})"));
            }
            send(Command::SendMessage { text: text.into() });
            return Done::Sent;
        }
    }
    Done::Command
}

/// Why a message cannot be sent at all now (the session failed to open, is gone, or waits for a
/// model), with what to try; `None` when the engine takes it (to send, to hold through a wake, or to queue).
fn cannot_take(s: &Snapshot) -> Option<String> {
    use engine_core::DefaultSessionStatus;
    let failed_default = matches!(
        s.default_session_status,
        DefaultSessionStatus::Error | DefaultSessionStatus::Missing
    );
    let failed_session = matches!(
        s.active_session_readiness.status,
        ReadinessStatus::Error | ReadinessStatus::NotFound
    );
    // A session that waits for a model (SHR-5): the engine would refuse the message with its
    // guard text; the person is told what to type instead.
    let needs_model = s.session_model_selection_request.is_some();
    if !failed_default && !failed_session && !needs_model {
        return None;
    }
    let stage = stage::of(s);
    let Stage::Blocked(text) = &stage else {
        return None;
    };
    let hint = stage
        .hint(s)
        .unwrap_or("Type /default, /sessions or /new to choose a session.");
    Some(format!("{text} {hint}"))
}

/// How long `/switch` waits for the session's history.
const HISTORY_WAIT: Duration = Duration::from_secs(10);

/// After `/switch`: the session's history, once it is loaded (or why it is not).
async fn show_history(handle: &Handle, screen: &Screen, uid: &str) {
    let loaded = |s: &Snapshot| {
        s.current_session_id.as_deref() == Some(uid)
            && matches!(
                s.active_session_readiness.status,
                ReadinessStatus::Ready | ReadinessStatus::Error | ReadinessStatus::NotFound
            )
    };
    let Some(s) = handle.wait_for(loaded, HISTORY_WAIT).await else {
        screen.say("(the session's history did not load in time)");
        return;
    };
    if s.active_session_readiness.status != ReadinessStatus::Ready {
        if let Stage::Blocked(text) = stage::of(&s) {
            screen.notice(&format!("· {text}"));
        }
        return;
    }
    if s.thread.is_empty() {
        screen.say("(no messages in this session yet)");
        return;
    }
    for message in &s.thread {
        let who = match message.role {
            Role::User => "you",
            Role::Assistant => "agent",
            Role::System => "system",
            _ => "other",
        };
        let text: String = message
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("");
        let text = crate::text::clean(text.trim());
        if text.is_empty() {
            continue;
        }
        let mut lines = text.lines();
        screen.say(&format!("{who}: {}", lines.next().unwrap_or_default()));
        for more in lines {
            screen.say(&format!("  {more}"));
        }
    }
    screen.say("(end of the history)");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 25, point 1: a session whose title names its uid ("Agent session {uid}", the
    /// reference's title of an unnamed session) is shown once; a named one with its uid.
    #[test]
    fn sessions_are_named_once() {
        assert_eq!(
            named("Agent session sess-7", "sess-7"),
            "Agent session sess-7"
        );
        assert_eq!(named("agent-chat", "sess-1"), "agent-chat  sess-1");
    }

    /// Issue 25, point 1: `archived_at` reads as a date and a time, with its zone.
    #[test]
    fn archived_times_read_well() {
        assert_eq!(
            archived_on("2026-10-02T08:16:30.123Z"),
            "archived 2026-10-02 08:16 UTC"
        );
        assert_eq!(
            archived_on("2026-10-02T08:16:30+02:00"),
            "archived 2026-10-02 08:16 +02:00"
        );
        assert_eq!(
            archived_on("2026-10-02 08:16"),
            "archived 2026-10-02 08:16 UTC"
        );
        assert_eq!(archived_on("yesterday"), "archived yesterday");
        assert_eq!(
            archived_on("2026-1x-02T08:16Z"),
            "archived 2026-1x-02T08:16Z"
        );
    }

    /// Issue 25, point 1: `/switch 9` past the list says so; no number, or no list, gives the
    /// usage; `/effort` names the levels, or says there are none (never "[]").
    #[test]
    fn picks_and_offers_say_what_is_wrong() {
        let list = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(pick("2", &list, "/sessions", "/switch"), Ok("b".to_owned()));
        assert_eq!(
            pick("9", &list, "/sessions", "/switch"),
            Err("No session 9 in the last list (1 to 2).".to_owned())
        );
        assert_eq!(
            pick("0", &list, "/sessions", "/switch"),
            Err("No session 0 in the last list (1 to 2).".to_owned())
        );
        let usage = Err("Use /sessions, then /switch N.".to_owned());
        assert_eq!(pick("x", &list, "/sessions", "/switch"), usage);
        assert_eq!(pick("1", &[], "/sessions", "/switch"), usage);
        assert_eq!(
            effort_offer(&[]),
            "This model offers no reasoning effort levels."
        );
        assert_eq!(
            effort_offer(&["low".to_owned(), "high".to_owned()]),
            "Use /effort LEVEL; this model offers: low, high."
        );
    }
}

//! The chat itself: the engine on the tokio shell, the person's lines in, the answers out.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use engine_core::message::MessageStatus;
use engine_core::stream::{StreamDelta, StreamOutcome};
use engine_core::{
    Command, Config, DefaultSession, Event, Input, Person, RunStatus, Snapshot, SourceStatus,
};
use engine_io_tokio::{Handle, ShellConfig, spawn};
use tokio::sync::broadcast;

use crate::stage::{self, Stage};
use crate::target::Target;

/// The default session's handle for this client.
const HANDLE: &str = "agent-chat";

/// Starts the engine for `target` and gives it the person, the Environment and the default
/// session to show.
fn open(target: &Target, record: bool) -> Result<Handle, String> {
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let config = Config::new(&target.base)
        .map_err(|e| e.to_string())?
        .with_seed(seed);
    let mut shell = ShellConfig::new(config);
    shell.record_trace = record;
    let (handle, _task) = spawn(shell);
    if let Some(source) = &target.local {
        // ADR 099: the local runtime's default conversation (or the one it kept).
        let user = Some(target.user.clone()).filter(|u| !u.trim().is_empty());
        let inputs = [
            Input::Source(Some(source.clone())),
            Input::Person(Person::local(user)),
            Input::IsVisible(true),
        ];
        for input in inputs {
            handle.input(input).map_err(|e| e.to_string())?;
        }
        return Ok(handle);
    }
    let inputs = [
        Input::Person(Person::new(target.user.clone(), target.token.clone())),
        Input::EnvironmentUid(Some(target.environment.clone())),
        Input::DefaultSession(Some(DefaultSession {
            agent_uid: Some(target.agent.clone()),
            handle_unique_id: HANDLE.into(),
            name: "agent-chat".into(),
            status: SourceStatus::Ready,
            unavailable_message: None,
        })),
        Input::ShowsDefaultSession(true),
        Input::IsVisible(true),
    ];
    for input in inputs {
        handle.input(input).map_err(|e| e.to_string())?;
    }
    Ok(handle)
}

/// Waits until the session can take a message (or cannot, for a reason to show).
/// Waits until the chat is ready or blocked; on time out, the last thing it waited for. A
/// local runtime that is not running is waited for only when `for_local` (a one-shot send); the
/// interactive chat takes commands meanwhile.
async fn until_settled(
    handle: &Handle,
    timeout: Duration,
    for_local: bool,
) -> Result<Stage, String> {
    let mut rx = handle.snapshots();
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let snapshot = rx.borrow_and_update();
        let stage = stage::of(&snapshot);
        let Stage::Waiting(waiting) = stage else {
            return Ok(stage);
        };
        if !for_local && stage::local_unavailable(&snapshot) {
            return Ok(Stage::Waiting(waiting));
        }
        drop(snapshot);
        match tokio::time::timeout_at(deadline, rx.changed()).await {
            Ok(Ok(())) => {}
            _ => return Err(waiting),
        }
    }
}

/// How one turn ended.
enum TurnEnd {
    Answered,
    Failed(String),
    TimedOut,
}

/// Sends `text` and prints the answer as it streams, until the turn is over.
async fn turn(
    handle: &Handle,
    events: &mut broadcast::Receiver<Event>,
    text: &str,
    timeout: Duration,
) -> TurnEnd {
    let mut rx = handle.snapshots();
    let working_before = rx.borrow().is_agent_working;
    let thread_before = rx.borrow().thread.len();
    if handle
        .command(Command::SendMessage { text: text.into() })
        .is_err()
    {
        return TurnEnd::Failed("the engine has stopped".into());
    }
    if working_before {
        eprintln!("(queued: the agent is working; it goes when it finishes)");
        return TurnEnd::Answered;
    }
    let deadline = tokio::time::Instant::now() + timeout;
    let mut started = false;
    let mut out = std::io::stdout();
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Ok(Event::Answer { delta: StreamDelta::TextDelta { delta, .. }, .. }) => {
                    print!("{delta}");
                    let _ = out.flush();
                }
                Ok(Event::MessageNotSent { reason, code, .. }) => {
                    return TurnEnd::Failed(format!("[{code}] {reason}"));
                }
                Ok(Event::Notify(n)) => {
                    eprintln!("[{}] {}", n.title, n.description.unwrap_or_default());
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => {
                    return TurnEnd::Failed("the engine has stopped".into());
                }
            },
            changed = rx.changed() => {
                if changed.is_err() {
                    return TurnEnd::Failed("the engine has stopped".into());
                }
                let s: Snapshot = rx.borrow_and_update().clone();
                // A whole turn may land between two published snapshots: its message and
                // answer in the thread tell that it ran.
                let ran = s.thread.len() >= thread_before + 2
                    && matches!(s.run_status, RunStatus::Complete | RunStatus::Error);
                started |= s.is_agent_working || ran;
                if started && !s.is_agent_working {
                    println!();
                    return match s.run_status {
                        RunStatus::Error => TurnEnd::Failed(failure_line(&s)),
                        _ => TurnEnd::Answered,
                    };
                }
            }
            _ = tokio::time::sleep_until(deadline) => return TurnEnd::TimedOut,
        }
    }
}

/// `agent-chat send "text"`: 0 answered, 1 failed or refused, 2 bad usage (an empty message), 3 timed out.
pub async fn send_once(
    target: &Target,
    text: &str,
    timeout_s: u64,
    record: Option<&Path>,
) -> ExitCode {
    if text.trim().is_empty() {
        // The engine ignores a blank message: there is nothing to wait for.
        eprintln!("agent-chat: the message is empty");
        return ExitCode::from(2);
    }
    let timeout = Duration::from_secs(timeout_s);
    let handle = match open(target, record.is_some()) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("agent-chat: {e}");
            return ExitCode::from(2);
        }
    };
    let mut events = handle.subscribe();
    let code = match until_settled(&handle, timeout, true).await {
        Err(waiting) => {
            eprintln!("agent-chat: timed out waiting for the session ({waiting})");
            ExitCode::from(3)
        }
        Ok(Stage::Blocked(reason)) => {
            eprintln!("agent-chat: {reason}");
            ExitCode::from(1)
        }
        Ok(_) => match turn(&handle, &mut events, text, timeout).await {
            TurnEnd::Answered => ExitCode::SUCCESS,
            TurnEnd::Failed(reason) => {
                eprintln!("agent-chat: {reason}");
                ExitCode::from(1)
            }
            TurnEnd::TimedOut => {
                eprintln!("agent-chat: timed out waiting for the answer");
                ExitCode::from(3)
            }
        },
    };
    save_trace(&handle, record).await;
    handle.shutdown().await;
    code
}

/// Writes the recorded trace, when asked to record.
async fn save_trace(handle: &Handle, record: Option<&Path>) {
    let Some(path) = record else {
        return;
    };
    match handle.trace().await {
        Some(trace) => {
            if let Err(e) = std::fs::write(path, trace) {
                eprintln!("agent-chat: cannot write the trace {}: {e}", path.display());
            }
        }
        None => eprintln!("agent-chat: no trace was recorded"),
    }
}

const HELP: &str = "\
Commands:
  /sessions          list the sessions
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
  /quit              leave
Anything else is sent as a message.";

/// The interactive chat. Lines are read on their own thread, so a command (`/cancel`, `/quit`)
/// works while an answer streams; answers are printed as they arrive, whatever the person types.
pub async fn interactive(target: &Target, timeout_s: u64, record: Option<&Path>) -> ExitCode {
    let timeout = Duration::from_secs(timeout_s);
    let handle = match open(target, record.is_some()) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("agent-chat: {e}");
            return ExitCode::from(2);
        }
    };
    if target.is_embedded() {
        eprintln!("(embedded platform simulator at {})", target.base);
    }
    let mid_line = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let printer = tokio::spawn(print_answers(handle.clone(), mid_line.clone()));
    let spinner = tokio::spawn(spin(handle.clone()));
    let mut lines = read_lines();
    let _ = until_settled(&handle, timeout, false).await;
    let mut listed = Listed::default();
    let mut quit = false;
    // The thread's length before the last message: its turn is over once the thread grew, no
    // message runs, nothing waits in the queue and the Agent is idle.
    let mut last_sent: Option<usize> = None;
    while let Some(line) = lines.recv().await {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if !line.starts_with('/') {
            last_sent = Some(handle.snapshots().borrow().thread.len());
        }
        if !command(&handle, line, &mut listed).await {
            quit = true;
            break;
        }
    }
    if !quit && let Some(before) = last_sent {
        // The input ended (a pipe): let the last answer come before leaving.
        // A held queue sends nothing on its own: it does not keep the chat waiting.
        let over = |s: &Snapshot| {
            s.thread.len() > before
                && !s.is_agent_working
                && (s.message_queue.is_empty() || s.message_queue_hold.is_some())
                && s.thread.iter().all(|m| m.status != MessageStatus::Running)
        };
        let _ = handle.wait_for(over, timeout).await;
        let held = handle.snapshots().borrow().message_queue.len();
        if held > 0 {
            eprintln!("({held} queued message(s) not sent: the queue is held)");
        }
    }

    spinner.abort();
    printer.abort();
    // Stopped for sure before looking at what it left on the line.
    let _ = printer.await;
    if mid_line.load(std::sync::atomic::Ordering::Acquire) {
        println!();
    }
    save_trace(&handle, record).await;
    handle.shutdown().await;
    ExitCode::SUCCESS
}

/// The person's lines, read on a thread of their own.
fn read_lines() -> tokio::sync::mpsc::UnboundedReceiver<String> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// What the last listing commands showed, by number.
#[derive(Default)]
struct Listed {
    /// `/sessions` or `/search`, for `/switch N`.
    sessions: Vec<String>,
    /// `/archived`, for `/unarchive N`.
    archived: Vec<String>,
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
fn print_rows<'a>(rows: impl Iterator<Item = (&'a str, &'a str, Option<&'a str>)>) -> Vec<String> {
    let mut uids = Vec::new();
    for (i, (title, uid, note)) in rows.enumerate() {
        let note = note.map(|n| format!("  ({n})")).unwrap_or_default();
        println!(" {:>3}  {title}  {uid}{note}", i + 1);
        uids.push(uid.to_owned());
    }
    uids
}

/// `/search TEXT`: the platform's search of the person's active sessions.
async fn search(handle: &Handle, text: &str, listed: &mut Listed) {
    let query = text.trim().to_owned();
    if query.is_empty() {
        println!("Use /search TEXT.");
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
        println!("The search did not answer in time.");
        return;
    };
    if let Some(e) = &s.session_search_error {
        println!("The search failed: {e}");
    } else if s.session_search_results.is_empty() {
        println!("No conversations found.");
    } else {
        let rows = s
            .session_search_results
            .iter()
            .map(|x| (x.title.as_str(), x.uid.as_str(), None));
        listed.sessions = print_rows(rows);
    }
}

/// `/archived [LIMIT]`: the archived sessions of the shown session's Agent.
async fn archived(handle: &Handle, rest: &str, listed: &mut Listed) {
    let limit = match rest {
        "" => None,
        n => match n.parse::<u32>() {
            Ok(n) => Some(n),
            Err(_) => {
                println!("Use /archived [LIMIT].");
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
        println!("The archived sessions did not answer in time.");
        return;
    };
    if let Some(e) = &s.archived_sessions_error {
        println!("The archived sessions could not be loaded: {e}");
    } else if s.archived_sessions.is_empty() {
        println!("No archived sessions.");
    } else {
        let rows = s.archived_sessions.iter().map(|x| {
            let at = x.archived_at.as_deref();
            (x.session.title.as_str(), x.session.uid.as_str(), at)
        });
        listed.archived = print_rows(rows);
    }
}

/// Entry N (counted from 1) of a listing.
fn nth(rest: &str, list: &[String]) -> Option<String> {
    let n = rest.parse::<usize>().ok()?;
    list.get(n.checked_sub(1)?).cloned()
}

/// Carries out one line; false for `/quit`.
async fn command(handle: &Handle, line: &str, listed: &mut Listed) -> bool {
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    let rest = rest.trim();
    let send = |c: Command| {
        let _ = handle.command(c);
    };
    let snapshot = || handle.snapshots().borrow().clone();
    match word {
        "/quit" | "/exit" => return false,
        "/help" => println!("{HELP}"),
        "/sessions" => {
            let s = snapshot();
            listed.sessions = s.agent_sessions.iter().map(|x| x.uid.clone()).collect();
            for (i, x) in s.agent_sessions.iter().enumerate() {
                let mark = if Some(&x.uid) == s.current_session_id.as_ref() {
                    "*"
                } else {
                    " "
                };
                println!("{mark}{:>3}  {}  {}", i + 1, x.title, x.uid);
            }
        }
        "/switch" => match nth(rest, &listed.sessions) {
            Some(uid) => {
                let _ = handle.input(Input::ShowsDefaultSession(false));
                let _ = handle.input(Input::RequestedSessionId(Some(uid.clone())));
                println!("(switching to {uid})");
            }
            None => println!("Use /sessions or /search, then /switch N."),
        },
        "/refresh" => {
            send(Command::RefreshLatestSessions);
            println!("(reading the sessions again)");
        }
        "/search" => search(handle, rest, listed).await,
        "/archived" => archived(handle, rest, listed).await,
        "/archive" => match nth(rest, &listed.sessions) {
            Some(session_uid) => {
                println!("(archiving {session_uid})");
                send(Command::ArchiveAgentSession { session_uid });
            }
            None => println!("Use /sessions (or /search), then /archive N."),
        },
        "/unarchive" => match nth(rest, &listed.archived) {
            Some(session_uid) => {
                println!("(restoring {session_uid})");
                send(Command::UnarchiveAgentSession { session_uid });
            }
            None => println!("Use /archived, then /unarchive N."),
        },
        "/default" => {
            let _ = handle.input(Input::RequestedSessionId(None));
            let _ = handle.input(Input::ShowsDefaultSession(true));
            println!("(back to the default session)");
        }
        "/new" => {
            // The default-session surface shows only the default session: leave it first.
            let _ = handle.input(Input::RequestedSessionId(None));
            let _ = handle.input(Input::ShowsDefaultSession(false));
            send(Command::CreateAgentSession);
            println!("(starting a new session)");
        }
        "/models" => {
            let s = snapshot();
            if let Some(e) = &s.available_models_error {
                println!("The models could not be loaded: {e}");
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
                println!("{mark} {}  {}  [{}]", m.id, m.label, levels.join(", "));
            }
        }
        "/model" => {
            let known = snapshot().available_models.iter().any(|m| m.id == rest);
            if known {
                send(Command::SetSelectedModelValue {
                    value: Some(rest.into()),
                });
                println!("(model: {rest})");
            } else {
                println!("Unknown model {rest:?}; /models lists them.");
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
                println!("(reasoning effort: {rest})");
            } else {
                println!("This model offers: [{}].", offered.join(", "));
            }
        }
        "/choose" => {
            let mut parts = rest.split_whitespace();
            let id = parts.next().unwrap_or_default();
            let thinking = parts.next().map(str::to_owned);
            match id.split_once("::") {
                Some((provider, model)) => send(Command::ResolveSessionModelSelection {
                    choice: engine_core::api::ModelChoice {
                        provider: provider.into(),
                        model: model.into(),
                        thinking,
                    },
                }),
                None => println!("Use /choose provider::model [level]."),
            }
        }
        "/cancel" | "/stop" => send(Command::CancelActiveSession),
        "/clear" => {
            send(Command::ClearThread);
            eprintln!("(thread cleared: its answer, if one ran, is stopped here)");
        }
        "/check" => {
            send(Command::RefreshActiveSessionRuntimeAccess);
            println!("(checking again)");
        }
        "/next" => {
            let waiting = snapshot().message_queue.len();
            if waiting == 0 {
                println!("(nothing is queued)");
            } else {
                send(Command::SendNextQueuedMessage);
                println!("(the first of {waiting} queued message(s) goes once the agent is idle)");
            }
        }
        "/retry" => send(Command::RetryDefaultSession),
        w if w.starts_with('/') => println!("Unknown command {w}. /help lists them."),
        _ => {
            if snapshot().is_agent_working {
                eprintln!("(queued: it goes when the agent finishes)");
            }
            send(Command::SendMessage { text: line.into() });
        }
    }
    true
}

/// Prints answers as they stream, and how each run ends.
async fn print_answers(handle: Handle, mid_line: std::sync::Arc<std::sync::atomic::AtomicBool>) {
    use std::sync::atomic::Ordering;
    let mut events = handle.subscribe();
    let mut rx = handle.snapshots();
    // What was last shown of the run status and of the queue's hold.
    let mut status_line = rx.borrow().run_status_detail.clone();
    let mut hold_line = rx.borrow().message_queue_texts.hold.clone();
    let mut out = std::io::stdout();
    let end_line = |out: &mut std::io::Stdout| {
        if mid_line.swap(false, Ordering::AcqRel) {
            println!();
            let _ = out.flush();
        }
    };
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Ok(Event::Answer { delta: StreamDelta::TextDelta { delta, .. }, .. }) => {
                    print!("{delta}");
                    let _ = out.flush();
                    mid_line.store(true, Ordering::Release);
                }
                // Each answer ends on its own line, with its own ending: events are not
                // coalesced, so a queued turn that starts at once still shows the one before.
                Ok(Event::Answer { delta: StreamDelta::Ended { outcome, .. }, .. }) => {
                    end_line(&mut out);
                    if matches!(
                        outcome,
                        StreamOutcome::Finished { .. } | StreamOutcome::Aborted { .. }
                    ) {
                        eprintln!("· Run completed.");
                    }
                }
                Ok(Event::RunFailed { failure, .. }) => {
                    end_line(&mut out);
                    eprintln!("(failed [{}] {})", failure.code, failure.message);
                }
                Ok(Event::MessageNotSent { reason, code, .. }) => {
                    end_line(&mut out);
                    eprintln!("(not sent [{code}]: {reason})");
                }
                Ok(Event::Notify(n)) => {
                    end_line(&mut out);
                    eprintln!("[{}] {}", n.title, n.description.unwrap_or_default());
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            },
            changed = rx.changed() => {
                if changed.is_err() {
                    return;
                }
                let s = rx.borrow_and_update().clone();
                // adr-notes 8: the run status line, as it changes between answer texts. The
                // ends of runs come from the events above ("Run completed.", failures).
                if s.run_status_detail != status_line
                    && !matches!(s.run_status, RunStatus::Complete | RunStatus::Error)
                    && let Some(detail) = &s.run_status_detail
                {
                    if s.run_status == RunStatus::Idle {
                        end_line(&mut out);
                    }
                    if !mid_line.load(Ordering::Acquire) {
                        eprintln!("· {detail}");
                    }
                }
                status_line = s.run_status_detail.clone();
                // ADR 087: a held queue says so, and how to release it.
                if s.message_queue_texts.hold != hold_line {
                    if let Some(hold) = &s.message_queue_texts.hold {
                        end_line(&mut out);
                        let n = s.message_queue.len();
                        eprintln!("· {hold} ({n} waiting; /next sends the first)");
                    }
                    hold_line = s.message_queue_texts.hold.clone();
                }
            }
        }
    }
}

/// Shows where the chat stands whenever it changes; a spinner while waiting, on a terminal.
async fn spin(handle: Handle) {
    let terminal = std::io::stderr().is_terminal();
    let mut rx = handle.snapshots();
    let frames = ['|', '/', '-', '\\'];
    let mut last: Option<Stage> = None;
    let mut i = 0usize;
    loop {
        let snapshot = rx.borrow_and_update().clone();
        let stage = stage::of(&snapshot);
        let streaming = snapshot.has_active_chat_stream;
        if last.as_ref() != Some(&stage) {
            if terminal {
                eprint!("\r\x1b[2K");
            }
            if !matches!(stage, Stage::Waiting(_)) || !terminal {
                eprintln!("{}", stage.text());
            }
            if let Some(hint) = stage.hint(&snapshot) {
                eprintln!("{hint}");
            }
            last = Some(stage.clone());
        }
        if terminal
            && !streaming
            && let Stage::Waiting(text) = &stage
        {
            let frame = frames.get(i % frames.len()).copied().unwrap_or('|');
            eprint!("\r{frame} {text}");
            i = i.wrapping_add(1);
        }
        let tick = tokio::time::sleep(Duration::from_millis(120));
        tokio::select! {
            changed = rx.changed() => if changed.is_err() { return },
            _ = tick => {}
        }
    }
}

/// A failed turn as the person reads it: its stable code, then its text.
fn failure_line(s: &Snapshot) -> String {
    let detail = s
        .run_status_detail
        .clone()
        .unwrap_or_else(|| "The answer failed.".into());
    match &s.run_failure {
        Some(f) => format!("[{}] {detail}", f.code),
        None => detail,
    }
}

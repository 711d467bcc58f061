//! The chat itself: the engine on the tokio shell, the person's lines in, the answers out.

use std::collections::{BTreeMap, VecDeque};
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use engine_core::message::MessageStatus;
use engine_core::stream::StreamDelta;
use engine_core::{
    Command, Config, DefaultSession, Event, Input, Person, RunStatus, Snapshot, SourceStatus,
};
use engine_io_tokio::{Handle, ShellConfig, spawn};
use tokio::sync::broadcast;

use crate::answer::Follower;
use crate::commands::{self, Done, Listed};
use crate::record::Record;
use crate::screen::Screen;
use crate::stage::{self, Stage};
use crate::target::Target;
use crate::terminal::{self, Typed};
use crate::text::one_line;

/// The exit status of a command the person interrupted (Ctrl-C): 128 + SIGINT, as shells do.
pub const INTERRUPTED: u8 = 130;

/// The exit status of `send` when its stdout closed before the answer was printed whole (its
/// reader went away, as `| head` does): 128 + SIGPIPE, as a process ended by the signal gives.
pub const CLOSED: u8 = 141;

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
    let mut said = false;
    loop {
        let snapshot = rx.borrow_and_update();
        let stage = stage::of(&snapshot);
        let Stage::Waiting(waiting) = stage else {
            return Ok(stage);
        };
        if stage::local_unavailable(&snapshot) {
            if !for_local {
                return Ok(Stage::Waiting(waiting));
            }
            // Waited for, but never silently: why, once (a runtime that answers, but not as
            // a local Agent does, says so here; nothing listening was said before).
            if !said && !says_only_no_answer(&waiting) {
                terminal::error_line(&format!("agent-chat: {waiting}"));
            }
            said = true;
        }
        drop(snapshot);
        match tokio::time::timeout_at(deadline, rx.changed()).await {
            Ok(Ok(())) => {}
            _ => return Err(waiting),
        }
    }
}

/// Whether a local runtime's notice only says that nothing answered (said already, with the
/// address and the refusal, before the engine started).
fn says_only_no_answer(waiting: &str) -> bool {
    waiting.contains("did not answer")
}

/// How one turn ended.
enum TurnEnd {
    Answered,
    Failed(String),
    TimedOut,
    Interrupted,
    /// stdout was closed (its reader went away): the answer was stopped.
    Closed,
}

/// Asks the engine to stop the running answer, and waits (at most a moment) until the stop
/// went out, before the engine is shut down.
async fn stop_answer(handle: &Handle) {
    let _ = handle.command(Command::CancelActiveSession);
    let stopped = |s: &Snapshot| !s.is_agent_working && !s.has_active_chat_stream;
    let _ = handle.wait_for(stopped, Duration::from_secs(2)).await;
}

/// Sends `text` and prints the answer as it streams on `screen` (control characters stripped),
/// until the turn is over; Ctrl-C stops it, and so does a closed stdout.
async fn turn(
    handle: &Handle,
    screen: &Screen,
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
        screen.notice("(queued: the agent is working; it goes when it finishes)");
        return TurnEnd::Answered;
    }
    let deadline = tokio::time::Instant::now() + timeout;
    let mut started = false;
    // Tool lines and the note of an answer that showed nothing (issue 24).
    let mut follower = Follower::default();
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Ok(Event::Answer { session_uid, delta }) => {
                    show(screen, &mut follower, &session_uid, &delta);
                    if screen.stdout_closed() {
                        stop_answer(handle).await;
                        return TurnEnd::Closed;
                    }
                }
                Ok(Event::MessageNotSent { reason, code, .. }) => {
                    screen.end_answer();
                    return TurnEnd::Failed(format!("[{code}] {}", one_line(&reason)));
                }
                // The turn failed. Snapshots are coalesced (a fast failure's working and
                // failed snapshots may reach here as one, with no working one seen), events
                // are not: the failure is taken from its event. Its answer's pieces came first.
                Ok(Event::RunFailed { failure, sent, .. }) => {
                    // An answer that was under way ends its line; a message that never went
                    // out had none (as its `MessageNotSent`, which follows, would say).
                    if sent {
                        screen.answer_done();
                    } else {
                        screen.end_answer();
                    }
                    if screen.stdout_closed() {
                        return TurnEnd::Closed;
                    }
                    return TurnEnd::Failed(format!("[{}] {}", failure.code, one_line(&failure.message)));
                }
                Ok(Event::Notify(n)) => {
                    screen.notice(&format!("[{}] {}", one_line(&n.title), one_line(&n.description.unwrap_or_default())));
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => {
                    screen.end_answer();
                    return TurnEnd::Failed("the engine has stopped".into());
                }
            },
            changed = rx.changed() => {
                if changed.is_err() {
                    screen.end_answer();
                    return TurnEnd::Failed("the engine has stopped".into());
                }
                let s: Snapshot = rx.borrow_and_update().clone();
                // A whole turn may land between two published snapshots: its message and
                // answer in the thread tell that it ran.
                let ran = s.thread.len() >= thread_before + 2
                    && matches!(s.run_status, RunStatus::Complete | RunStatus::Error);
                started |= s.is_agent_working || ran;
                if started && !s.is_agent_working {
                    // The answer's last pieces may still wait in the event channel (events and
                    // snapshots travel apart): printed first.
                    while let Ok(event) = events.try_recv() {
                        if let Event::Answer { session_uid, delta } = event {
                            show(screen, &mut follower, &session_uid, &delta);
                        }
                    }
                    // Every answer ends its line, an empty one included.
                    screen.answer_done();
                    if screen.stdout_closed() {
                        return TurnEnd::Closed;
                    }
                    return match s.run_status {
                        RunStatus::Error => TurnEnd::Failed(failure_line(&s)),
                        _ => TurnEnd::Answered,
                    };
                }
            }
            _ = &mut interrupted => {
                screen.end_answer();
                stop_answer(handle).await;
                return TurnEnd::Interrupted;
            }
            _ = tokio::time::sleep_until(deadline) => {
                screen.end_answer();
                return TurnEnd::TimedOut;
            }
        }
    }
}

/// Shows one delta of `session`'s answer: its text (control characters stripped), and the
/// lines [`Follower`] makes of it (a tool call's outcome, ...) as the answer's own notices.
fn show(screen: &Screen, follower: &mut Follower, session: &str, delta: &StreamDelta) {
    for line in follower.lines(delta) {
        screen.answer_line(session, &line);
    }
    if let StreamDelta::TextDelta { delta, .. } = delta {
        screen.answer(session, delta);
    }
}

/// `agent-chat send "text"`: 0 answered, 1 failed or refused, 2 bad usage (an empty message), 3
/// timed out, 130 interrupted (Ctrl-C stops the answer; the trace is written all the same),
/// 141 stdout closed (the answer is stopped, quietly; the trace is written).
pub async fn send_once(
    target: &Target,
    text: &str,
    timeout_s: u64,
    record: Option<&mut Record>,
) -> ExitCode {
    if text.trim().is_empty() {
        // The engine ignores a blank message: there is nothing to wait for.
        terminal::error_line("agent-chat: the message is empty");
        return ExitCode::from(2);
    }
    let timeout = Duration::from_secs(timeout_s);
    let handle = match open(target, record.is_some()) {
        Ok(h) => h,
        Err(e) => {
            terminal::error_line(&format!("agent-chat: {e}"));
            return ExitCode::from(2);
        }
    };
    let mut events = handle.subscribe();
    let settled = tokio::select! {
        settled = until_settled(&handle, timeout, true) => Some(settled),
        _ = tokio::signal::ctrl_c() => None,
    };
    let code = match settled {
        None => {
            terminal::error_line("agent-chat: interrupted");
            ExitCode::from(INTERRUPTED)
        }
        Some(Err(waiting)) => {
            let at = target
                .local_address()
                .map(|a| format!(" at {a}"))
                .unwrap_or_default();
            terminal::error_line(&format!(
                "agent-chat: timed out after {timeout_s} s waiting for the session{at} ({waiting})"
            ));
            ExitCode::from(3)
        }
        Some(Ok(Stage::Blocked(reason))) => {
            terminal::error_line(&format!("agent-chat: {reason}"));
            ExitCode::from(1)
        }
        Some(Ok(_)) => match turn(&handle, &Screen::direct(), &mut events, text, timeout).await {
            TurnEnd::Answered => ExitCode::SUCCESS,
            // The reader went away (`| head`): nothing more to say to it.
            TurnEnd::Closed => ExitCode::from(CLOSED),
            TurnEnd::Failed(reason) => {
                terminal::error_line(&format!("agent-chat: {reason}"));
                ExitCode::from(1)
            }
            TurnEnd::TimedOut => {
                terminal::error_line("agent-chat: timed out waiting for the answer");
                ExitCode::from(3)
            }
            TurnEnd::Interrupted => {
                terminal::error_line("agent-chat: interrupted: the answer was stopped");
                ExitCode::from(INTERRUPTED)
            }
        },
    };
    let saved = save_trace(&handle, record).await;
    handle.shutdown().await;
    unless_unsaved(code, saved)
}

/// Writes the recorded trace, when asked to record; false (said on stderr) when it could not be.
async fn save_trace(handle: &Handle, record: Option<&mut Record>) -> bool {
    let Some(record) = record else {
        return true;
    };
    match handle.trace().await {
        Some(trace) => match record.write(&trace) {
            Ok(()) => true,
            Err(e) => {
                terminal::error_line(&format!("agent-chat: {e}"));
                false
            }
        },
        None => {
            terminal::error_line("agent-chat: no trace was recorded");
            false
        }
    }
}

/// The exit status of a run whose trace could not be written: 1 instead of a success.
fn unless_unsaved(code: ExitCode, saved: bool) -> ExitCode {
    if !saved && code == ExitCode::SUCCESS {
        ExitCode::from(1)
    } else {
        code
    }
}

/// The interactive chat. On a terminal (stdin and stdout both), a line editor with a prompt and
/// history, everything else drawn above the prompt ([`Screen`]); from a pipe, plain lines. Commands
/// (`/cancel`, `/quit`) work while an answer streams. Ctrl-C stops the running answer, a second
/// one leaves (the first one, before the chat ever connected); the answer's line is closed and
/// the trace written however the chat ends.
///
/// Exit status: 0 when the chat ended after it connected, 1 when it never connected (the last
/// thing it said is repeated), 130 when it was interrupted before it connected; 143 (SIGTERM)
/// or 129 (SIGHUP) when a signal ended it, which ends it like a second Ctrl-C (the answer's
/// line closed, the terminal's mode put back, the trace written).
pub async fn interactive(target: &Target, timeout_s: u64, record: Option<&mut Record>) -> ExitCode {
    let timeout = Duration::from_secs(timeout_s);
    let handle = match open(target, record.is_some()) {
        Ok(h) => h,
        Err(e) => {
            terminal::error_line(&format!("agent-chat: {e}"));
            return ExitCode::from(2);
        }
    };
    let on_terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let screen = Arc::new(Screen::direct());
    let (tx, mut typed) = tokio::sync::mpsc::unbounded_channel::<Typed>();
    terminal::forward_interrupts(tx.clone());
    if !on_terminal {
        terminal::read_pipe(tx.clone());
    }
    if target.is_embedded() {
        screen.notice(&format!("(embedded platform simulator at {})", target.base));
    }
    let connected = Arc::new(AtomicBool::new(false));
    let printer = tokio::spawn(print_answers(handle.clone(), screen.clone()));
    // The stages' spinner on stderr: only when stdin is a pipe and the output goes to a
    // terminal (on a terminal the chat's own screen shows the run's status; into a pipe, no
    // escape sequence is written).
    let spinner =
        !on_terminal && std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    // Whether the stage line of a ready (or blocked) chat has been printed.
    let (settled_tx, mut settled_shown) = tokio::sync::watch::channel(false);
    let stages = tokio::spawn(show_stages(
        handle.clone(),
        screen.clone(),
        Shown {
            connected: connected.clone(),
            settled: settled_tx,
        },
        spinner,
    ));

    // Until the chat is ready (or blocked): lines from a pipe wait, Ctrl-C leaves.
    let mut pending: VecDeque<String> = VecDeque::new();
    let mut ended = false;
    let mut quit = false;
    // The exit status of a signal that ended the chat (SIGTERM, SIGHUP).
    let mut signalled: Option<u8> = None;
    {
        let settled = until_settled(&handle, timeout, false);
        tokio::pin!(settled);
        loop {
            tokio::select! {
                _ = &mut settled => break,
                from = typed.recv(), if !ended => match from {
                    Some(Typed::Line(line)) => pending.push_back(line),
                    Some(Typed::Interrupt) => {
                        quit = true;
                        break;
                    }
                    Some(Typed::Leave(code)) => {
                        quit = true;
                        signalled = Some(code);
                        break;
                    }
                    Some(Typed::End) | None => ended = true,
                },
            }
        }
    }
    if !quit {
        // "Connected to ..." before the first answer or prompt (the stage line comes from its
        // own task); not worth waiting long for.
        let shown = settled_shown.wait_for(|shown| *shown);
        let _ = tokio::time::timeout(Duration::from_secs(1), shown).await;
    }

    let mode = terminal::TerminalMode::save();
    let mut spinner_ticks = None;
    if on_terminal && !quit {
        if mode.raw() {
            screen.take_terminal();
            terminal::read_keys(screen.clone(), tx.clone());
            spinner_ticks = Some(tokio::spawn(tick(screen.clone())));
        } else {
            screen.notice("agent-chat: no line editor (the terminal's mode could not be set); reading plain lines");
            terminal::read_pipe(tx.clone());
        }
    }

    let mut listed = Listed::default();
    // Ctrl-C since the last line: the second one leaves.
    let mut interrupts = 0u32;
    // The thread's length before the last message: its turn is over once the thread grew, no
    // message runs, nothing waits in the queue and the Agent is idle.
    let mut last_sent: Option<(usize, Option<String>)> = None;
    while !quit {
        let typed_now = match pending.pop_front() {
            Some(line) => Typed::Line(line),
            None if ended => break,
            None => match typed.recv().await {
                Some(typed) => typed,
                None => break,
            },
        };
        match typed_now {
            Typed::Line(line) => {
                let line = line.trim();
                if !line.is_empty() {
                    interrupts = 0;
                    let (before, shown) = {
                        let s = handle.snapshots();
                        let s = s.borrow();
                        (s.thread.len(), s.current_session_id.clone())
                    };
                    match commands::command(&handle, &screen, line, &mut listed).await {
                        Done::Sent => last_sent = Some((before, shown)),
                        Done::Quit => quit = true,
                        Done::Command | Done::NotSent => {}
                    }
                }
            }
            Typed::Interrupt => {
                let s = handle.snapshots().borrow().clone();
                let running = s.is_agent_working || s.has_active_chat_stream;
                // Before the chat ever connected there is nothing to stop or lose: leave.
                if interrupts > 0 || !connected.load(Ordering::Acquire) {
                    quit = true;
                } else if running {
                    // The stop shows as the run status ("Run cancelled."); a held queue says so.
                    // Like every notice, this one waits for the answer that streams to end: it
                    // comes after the part of the answer it stopped, before the engine's notices.
                    screen.notice("(stopping the answer: Ctrl-C again leaves)");
                    let _ = handle.command(Command::CancelActiveSession);
                } else {
                    screen.notice("(nothing is running: Ctrl-C again, Ctrl-D or /quit leaves)");
                }
                interrupts += 1;
            }
            Typed::Leave(code) => {
                quit = true;
                signalled = Some(code);
            }
            Typed::End => ended = true,
        }
    }

    if !quit && let Some((before, sent_to)) = last_sent {
        // The input ended (a pipe, Ctrl-D): let the last answer come before leaving, unless
        // Ctrl-C says not to. A held queue sends nothing on its own: it does not keep the chat
        // waiting, and neither does an answer in a session no longer shown (`/new`, `/switch`:
        // it is in that session's history).
        let over = |s: &Snapshot| {
            s.current_session_id != sent_to
                || s.thread.len() > before
                    && !s.is_agent_working
                    && (s.message_queue.is_empty() || s.message_queue_hold.is_some())
                    && s.thread.iter().all(|m| m.status != MessageStatus::Running)
        };
        // Ctrl-C, or a signal that ends the chat (its exit status).
        let interrupted = async {
            loop {
                match typed.recv().await {
                    Some(Typed::Leave(code)) => return Some(code),
                    Some(Typed::Interrupt) | None => return None,
                    Some(_) => {}
                }
            }
        };
        tokio::select! {
            _ = handle.wait_for(over, timeout) => {}
            code = interrupted => signalled = code,
        }
        let held = handle.snapshots().borrow().message_queue.len();
        if held > 0 {
            screen.notice(&format!(
                "({held} queued message(s) not sent: the queue is held)"
            ));
        }
    }

    stages.abort();
    let _ = stages.await;
    if spinner {
        terminal::raw_err("\r\x1b[2K");
    }
    let saved = save_trace(&handle, record).await;
    let last = stage::of(&handle.snapshots().borrow());
    handle.shutdown().await;
    // The engine has stopped: the printer prints the events still in its channel (the end of
    // the last answer, "Run completed.") and ends at the channel's end; then the line is
    // closed.
    let mut printer = printer;
    if tokio::time::timeout(Duration::from_secs(2), &mut printer)
        .await
        .is_err()
    {
        printer.abort();
        let _ = printer.await;
    }
    if let Some(ticks) = spinner_ticks {
        ticks.abort();
        let _ = ticks.await;
    }
    // The answer's line ended, the prompt and the status taken away.
    screen.leave();
    if on_terminal {
        // The key reader may still be reading, the terminal in its raw mode: the mode is put
        // back (unchanged otherwise).
        mode.restore();
    }
    if let Some(code) = signalled {
        return unless_unsaved(ExitCode::from(code), saved);
    }
    if connected.load(Ordering::Acquire) {
        unless_unsaved(ExitCode::SUCCESS, saved)
    } else if quit && !matches!(last, Stage::Blocked(_)) {
        terminal::error_line(&format!(
            "agent-chat: interrupted before the chat was ready ({})",
            last.text()
        ));
        ExitCode::from(INTERRUPTED)
    } else {
        terminal::error_line(&format!(
            "agent-chat: the chat never connected: {}",
            last.text()
        ));
        ExitCode::from(1)
    }
}

/// Prints answers as they stream, the run's status (in place, on a terminal) and how each run
/// ends. Events and snapshots travel apart, the events of a change first: before a snapshot is
/// read, the events already sent are printed, so an answer's last pieces come before the
/// status lines that follow them.
async fn print_answers(handle: Handle, screen: Arc<Screen>) {
    let mut events = handle.subscribe();
    let mut rx = handle.snapshots();
    let mut printer = Printer {
        screen,
        followers: BTreeMap::new(),
        not_sent_shown: None,
        status_line: rx.borrow().run_status_detail.clone(),
        hold_line: rx.borrow().message_queue_texts.hold.clone(),
        held_stop: None,
    };
    let mut snapshots_open = true;
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Ok(event) => printer.event(event),
                Err(broadcast::error::RecvError::Lagged(_)) => printer.not_sent_shown = None,
                Err(broadcast::error::RecvError::Closed) => return,
            },
            changed = rx.changed(), if snapshots_open => {
                if changed.is_err() {
                    // The engine stopped: the events left are still printed.
                    snapshots_open = false;
                    continue;
                }
                loop {
                    match events.try_recv() {
                        Ok(event) => printer.event(event),
                        Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                        Err(_) => break,
                    }
                }
                let s = rx.borrow_and_update().clone();
                printer.snapshot(&s);
            }
        }
    }
}

/// What [`print_answers`] keeps between events.
struct Printer {
    screen: Arc<Screen>,
    /// Tool lines and the note of an answer that showed nothing (issue 24), by session.
    followers: BTreeMap<String, Follower>,
    /// The code of a run failure whose message did not go out, just shown: the engine follows
    /// it with a "message not sent" event of the same code and text, which is not shown again.
    not_sent_shown: Option<String>,
    /// What was last seen of the run status and of the queue's hold.
    status_line: Option<String>,
    hold_line: Option<String>,
    /// What a stop did here ("Run cancelled."), held while its request is out: it is printed
    /// after what the request ends with ("Run cancellation requested."), in the order things
    /// happened (the stop asked, then done).
    held_stop: Option<String>,
}

impl Printer {
    fn event(&mut self, event: Event) {
        match event {
            Event::Answer { session_uid, delta } => {
                self.not_sent_shown = None;
                let follower = self.followers.entry(session_uid.clone()).or_default();
                show(&self.screen, follower, &session_uid, &delta);
                if matches!(delta, StreamDelta::Ended { .. }) {
                    // Each answer ends on its own line.
                    self.followers.remove(&session_uid);
                    self.screen.answer_ended(&session_uid);
                }
            }
            Event::RunFailed {
                session_uid,
                failure,
                sent,
            } => {
                let whose = self.whose(&session_uid);
                let code = failure.code.to_string();
                let message = one_line(&failure.message);
                if sent {
                    self.not_sent_shown = None;
                    self.screen
                        .notice(&format!("(failed{whose} [{code}] {message})"));
                } else {
                    self.screen
                        .notice(&format!("(not sent{whose} [{code}]: {message})"));
                    self.not_sent_shown = Some(code);
                }
            }
            Event::MessageNotSent {
                session_uid,
                reason,
                code,
                ..
            } => {
                let code = code.to_string();
                if self.not_sent_shown.take().as_deref() != Some(code.as_str()) {
                    let whose = session_uid.map(|s| self.whose(&s)).unwrap_or_default();
                    self.screen.notice(&format!(
                        "(not sent{whose} [{code}]: {})",
                        one_line(&reason)
                    ));
                }
            }
            Event::Notify(n) => {
                self.not_sent_shown = None;
                self.screen.notice(&format!(
                    "[{}] {}",
                    one_line(&n.title),
                    one_line(&n.description.unwrap_or_default())
                ));
            }
            _ => self.not_sent_shown = None,
        }
    }

    /// " in session UID" for a session that is not shown, else nothing.
    fn whose(&self, session: &str) -> String {
        if self.screen.shows(session) {
            String::new()
        } else {
            format!(" in session {}", one_line(session))
        }
    }

    fn snapshot(&mut self, s: &Snapshot) {
        // adr-notes 8: the run status, in place while the Agent is queued or thinking (a
        // terminal only); the answer's text takes its place once it streams.
        let waiting = matches!(s.run_status, RunStatus::Queued | RunStatus::Thinking);
        self.screen
            .status(s.run_status_detail.as_deref().filter(|_| waiting));
        let over = !s.is_agent_working && !s.has_active_chat_stream;
        if over {
            // The run is over: its answer's line is ended (its end may not have come as an
            // event), and what waited for it is printed.
            self.screen.end_answer();
        }
        // A stopped run's status ("Run cancelled.", "Run cancellation requested.", a failed
        // cancel request) goes on the record, in the order it came; a clean end does not (the
        // answer's line ends).
        let new_stop_line = (s.run_status_detail != self.status_line
            && s.run_status == RunStatus::Idle)
            .then_some(s.run_status_detail.as_deref())
            .flatten()
            .map(|detail| format!("· {}", one_line(detail)));
        if !s.is_cancelling_session
            && let Some(held) = self.held_stop.take()
        {
            self.screen.notice(&held);
        }
        if let Some(line) = new_stop_line {
            if s.is_cancelling_session {
                self.held_stop = Some(line);
            } else {
                self.screen.notice(&line);
            }
        }
        self.status_line = s.run_status_detail.clone();
        // ADR 087: a held queue says so, and how to release it.
        if s.message_queue_texts.hold != self.hold_line {
            if let Some(hold) = &s.message_queue_texts.hold {
                let n = s.message_queue.len();
                self.screen.notice(&format!(
                    "· {} ({n} waiting; /next sends the first)",
                    one_line(hold)
                ));
            }
            self.hold_line = s.message_queue_texts.hold.clone();
        }
    }
}

/// Turns the spinner while the chat runs on a terminal.
async fn tick(screen: Arc<Screen>) {
    let mut ticks = tokio::time::interval(Duration::from_millis(120));
    loop {
        ticks.tick().await;
        screen.tick();
    }
}

/// What [`show_stages`] tells the chat.
struct Shown {
    /// Set once the person could write.
    connected: Arc<AtomicBool>,
    /// True once a stage that is not a wait was printed.
    settled: tokio::sync::watch::Sender<bool>,
}

/// Shows where the chat stands whenever it changes (a spinner while waiting, when asked: stderr
/// is a terminal but the chat reads a pipe).
async fn show_stages(handle: Handle, screen: Arc<Screen>, shown: Shown, spinner: bool) {
    let mut rx = handle.snapshots();
    let frames = ['|', '/', '-', '\\'];
    let mut last: Option<Stage> = None;
    let mut i = 0usize;
    loop {
        let snapshot = rx.borrow_and_update().clone();
        let stage = stage::of(&snapshot);
        if matches!(stage, Stage::Ready(_)) {
            shown.connected.store(true, Ordering::Release);
        }
        let streaming = snapshot.has_active_chat_stream;
        if last.as_ref() != Some(&stage) {
            if spinner {
                terminal::raw_err("\r\x1b[2K");
            }
            if !matches!(stage, Stage::Waiting(_)) || !spinner {
                screen.notice(&one_line(stage.text()));
            }
            if let Some(hint) = stage.hint(&snapshot) {
                screen.notice(hint);
            }
            if !matches!(stage, Stage::Waiting(_)) {
                shown.settled.send_replace(true);
            }
            last = Some(stage.clone());
        }
        if spinner
            && !streaming
            && let Stage::Waiting(text) = &stage
        {
            let frame = frames.get(i % frames.len()).copied().unwrap_or('|');
            terminal::raw_err(&format!("\r{frame} {}", one_line(text)));
            i = i.wrapping_add(1);
        }
        let tick = tokio::time::sleep(Duration::from_millis(120));
        tokio::select! {
            changed = rx.changed() => if changed.is_err() { return },
            _ = tick, if spinner => {}
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

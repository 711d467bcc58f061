//! The person's side of the chat: what they type (a line editor on a terminal, plain lines from
//! a pipe, Ctrl-C) and what they read (answers, notices and command output).
//!
//! On a terminal the prompt stays at the bottom and everything else is printed above it, a whole
//! line at a time (the line editor redraws the prompt after each line): an answer is shown as it
//! streams, line by line, long lines broken at a word near [`WRAP`] columns. From a pipe,
//! answers go to stdout piece by piece and notices to stderr, with no prompt.

use std::io::Write;
use std::sync::Mutex;

use rustyline::ExternalPrinter;
use rustyline::error::ReadlineError;
use tokio::sync::mpsc;

use crate::text::{Stripper, clean, one_line};

/// The prompt of the line editor.
pub const PROMPT: &str = "> ";

/// On a terminal, an answer line longer than this many characters is printed in pieces broken
/// at a space (the prompt below it can only be redrawn after a whole line).
pub const WRAP: usize = 80;

/// Moves the cursor up one row, to its start, and clears that row.
pub const ERASE_LINE_ABOVE: &str = "\x1b[1A\r\x1b[2K";

/// Something the person did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typed {
    /// A line (a message or a command).
    Line(String),
    /// Ctrl-C.
    Interrupt,
    /// The input ended: Ctrl-D on an empty line, or the end of a pipe.
    End,
    /// A signal that ends the chat at once (SIGTERM, SIGHUP), with the exit status it gives
    /// (128 + the signal's number, as shells do).
    Leave(u8),
}

/// What the person did, and whether the line editor waits to be told to go on.
#[derive(Debug)]
pub struct FromPerson {
    /// What.
    pub typed: Typed,
    /// From the line editor: it reads no more until [`Editor::go_on`] or [`Editor::stop`].
    pub from_editor: bool,
}

/// The sender every input source uses.
pub type Sender = mpsc::UnboundedSender<FromPerson>;

/// Sends what came from outside the line editor (a pipe, a signal); false once the chat is gone.
fn outside(tx: &Sender, typed: Typed) -> bool {
    tx.send(FromPerson {
        typed,
        from_editor: false,
    })
    .is_ok()
}

/// Reads lines from a pipe on a thread of its own; [`Typed::End`] at its end.
pub fn read_pipe(tx: Sender) {
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if !outside(&tx, Typed::Line(line)) {
                return;
            }
        }
        outside(&tx, Typed::End);
    });
}

/// Forwards every Ctrl-C that arrives as a signal (from a pipe, or on a terminal while the line
/// editor is not reading) as [`Typed::Interrupt`], and SIGTERM and SIGHUP (Unix) as
/// [`Typed::Leave`].
pub fn forward_interrupts(tx: Sender) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        for (kind, code) in [(SignalKind::terminate(), 143), (SignalKind::hangup(), 129)] {
            // A signal that cannot be listened to keeps its default action.
            let Ok(mut signals) = signal(kind) else {
                continue;
            };
            let tx = tx.clone();
            tokio::spawn(async move {
                while signals.recv().await.is_some() {
                    if !outside(&tx, Typed::Leave(code)) {
                        return;
                    }
                }
            });
        }
    }
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if !outside(&tx, Typed::Interrupt) {
                return;
            }
        }
    });
}

/// The line editor, reading on a thread of its own: one line (or Ctrl-C, or Ctrl-D) at a time,
/// then it waits to be told to read the next, so the terminal is in its ordinary mode while the
/// chat carries out what was typed, and is handed back in it when the chat ends.
pub struct Editor {
    go_on: std::sync::mpsc::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Prints above the prompt.
type Printer = Box<dyn ExternalPrinter + Send>;

impl Editor {
    /// Starts the line editor (history kept for this run only: messages can be private, so
    /// nothing is written to disk), and the printer that prints above its prompt. It shows its
    /// first prompt on the first [`Editor::go_on`].
    pub fn start(tx: Sender) -> Result<(Editor, Screen), String> {
        let (go_on, wait) = std::sync::mpsc::channel::<bool>();
        let (ready_tx, ready) = std::sync::mpsc::channel::<Result<Printer, String>>();
        let thread = std::thread::spawn(move || {
            let config = rustyline::Config::builder()
                .max_history_size(1000)
                .map(|b| b.build())
                .unwrap_or_default();
            let mut editor = match rustyline::DefaultEditor::with_config(config) {
                Ok(e) => e,
                Err(e) => {
                    let _ = ready_tx.send(Err(e.to_string()));
                    return;
                }
            };
            match editor.create_external_printer() {
                Ok(p) => {
                    let _ = ready_tx.send(Ok(Box::new(p)));
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e.to_string()));
                    return;
                }
            }
            // The first prompt only once everything is printed above it (the screen has
            // taken over the printer): a line printed straight to the terminal after the
            // prompt would leave the person without one.
            if !matches!(wait.recv(), Ok(true)) {
                return;
            }
            loop {
                let typed = match editor.readline(PROMPT) {
                    Ok(line) => {
                        if !line.trim().is_empty() {
                            let _ = editor.add_history_entry(line.as_str());
                        }
                        Typed::Line(line)
                    }
                    Err(ReadlineError::Interrupted) => {
                        // rustyline ends the prompt's line, which would stay behind as a
                        // stray "> " above what the chat prints next: it is erased (cursor up
                        // one row, to its start, the row cleared). What was typed on it is
                        // dropped, as Ctrl-C does.
                        let mut out = std::io::stdout().lock();
                        let _ = out.write_all(ERASE_LINE_ABOVE.as_bytes());
                        let _ = out.flush();
                        Typed::Interrupt
                    }
                    Err(_) => Typed::End,
                };
                let from_editor = true;
                if tx.send(FromPerson { typed, from_editor }).is_err() {
                    return;
                }
                // Read on only when told to.
                if !matches!(wait.recv(), Ok(true)) {
                    return;
                }
            }
        });
        let printer = ready
            .recv()
            .map_err(|_| "the line editor did not start".to_owned())??;
        let editor = Editor {
            go_on,
            thread: Some(thread),
        };
        Ok((editor, Screen::new(Sink::Editor(printer))))
    }

    /// Lets the editor read the next line.
    pub fn go_on(&self) {
        let _ = self.go_on.send(true);
    }

    /// Ends the editor. `waiting`: it is waiting to be told to go on (the chat ends on what it
    /// read), so its thread ends at once and is waited for: the terminal is back in its
    /// ordinary mode. Otherwise it is still reading a line (the chat ends for another reason,
    /// such as a SIGINT sent by another process) and its thread is left to end with the process.
    pub fn stop(mut self, waiting: bool) {
        let _ = self.go_on.send(false);
        if let Some(thread) = self.thread.take()
            && waiting
        {
            let _ = thread.join();
        }
    }
}

/// Where the text goes.
enum Sink {
    /// stdout for answers and command output, stderr for notices: from a pipe, and on a
    /// terminal before the line editor starts.
    Direct,
    /// Above the line editor's prompt.
    Editor(Printer),
}

/// What the person reads. Shared by the answer printer and the commands.
pub struct Screen {
    inner: Mutex<Inner>,
}

struct Inner {
    sink: Sink,
    /// The answer line being written (editor only: printed once whole).
    partial: String,
    /// Direct: the answer's last line has no newline yet.
    mid_line: bool,
    /// Direct: stdout is closed (its reader went away, as `| head` does): nothing more is
    /// written to it.
    closed: bool,
    stripper: Stripper,
}

impl Screen {
    /// Prints straight to stdout and stderr.
    pub fn direct() -> Screen {
        Screen::new(Sink::Direct)
    }

    fn new(sink: Sink) -> Screen {
        Screen {
            inner: Mutex::new(Inner {
                sink,
                partial: String::new(),
                mid_line: false,
                closed: false,
                stripper: Stripper::default(),
            }),
        }
    }

    /// Prints from now on where `other` prints (the line editor's screen).
    pub fn take_over(&self, other: Screen) {
        let Ok(other) = other.inner.into_inner() else {
            return;
        };
        self.with(|inner| {
            inner.end_answer();
            inner.sink = other.sink;
        });
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        let mut guard = match self.inner.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }

    /// A piece of the Agent's answer, control characters stripped.
    pub fn answer(&self, piece: &str) {
        self.with(|inner| {
            let clean = inner.stripper.clean(piece);
            if clean.is_empty() {
                return;
            }
            match &mut inner.sink {
                Sink::Direct => {
                    inner.out(&clean);
                    inner.mid_line = !clean.ends_with('\n');
                }
                Sink::Editor(printer) => {
                    inner.partial.push_str(&clean);
                    for line in whole_lines(&mut inner.partial) {
                        let _ = printer.print(line);
                    }
                }
            }
        });
    }

    /// Ends the answer's line, if it is open.
    pub fn end_answer(&self) {
        self.with(Inner::end_answer);
    }

    /// Ends a whole answer (direct, `agent-chat send`): a newline, even after an empty answer.
    pub fn answer_done(&self) {
        self.with(|inner| {
            inner.stripper = Stripper::default();
            inner.mid_line = false;
            inner.out("\n");
        });
    }

    /// Whether stdout is closed (direct): its reader went away.
    pub fn stdout_closed(&self) -> bool {
        self.with(|inner| inner.closed)
    }

    /// A notice (a stop, a hold, a failure), on its own line. From a pipe it goes to stderr, and
    /// the answer's line on stdout is ended first; above the prompt, an answer line not yet
    /// printed stays whole (it is printed below the notice once it is). Control characters
    /// are stripped (it may carry a text from outside).
    pub fn notice(&self, line: &str) {
        self.with(|inner| inner.notice(line));
    }

    /// A run status line (adr-notes 8: "Working on your request.", "Run cancelled." ...).
    /// `ends`: it ends the answer (a stop), whose line is closed first. From a pipe, a status
    /// that does not end the answer is left out while the answer's line is open (it would cut
    /// the line in two).
    pub fn status(&self, line: &str, ends: bool) {
        self.with(|inner| {
            if ends {
                inner.end_answer();
            } else if inner.mid_line {
                return;
            }
            inner.notice(line);
        });
    }

    /// A command's output, on its own line (control characters stripped, newlines kept).
    pub fn say(&self, line: &str) {
        let line = clean(line);
        self.with(|inner| match &mut inner.sink {
            Sink::Direct => {
                if std::mem::take(&mut inner.mid_line) {
                    inner.out("\n");
                }
                inner.out(&format!("{line}\n"));
            }
            Sink::Editor(printer) => {
                let _ = printer.print(format!("{line}\n"));
            }
        });
    }
}

impl Inner {
    fn notice(&mut self, line: &str) {
        let line = clean(line);
        match &mut self.sink {
            Sink::Direct => {
                if std::mem::take(&mut self.mid_line) {
                    self.out("\n");
                }
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "{line}");
            }
            Sink::Editor(printer) => {
                let _ = printer.print(format!("{line}\n"));
            }
        }
    }

    /// Writes to stdout and flushes it; a closed stdout is remembered, and nothing more is
    /// written to it (no panic, as `println!` would).
    fn out(&mut self, text: &str) {
        if self.closed {
            return;
        }
        let mut out = std::io::stdout().lock();
        if out
            .write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            self.closed = true;
        }
    }

    fn end_answer(&mut self) {
        self.stripper = Stripper::default();
        match &mut self.sink {
            Sink::Direct => {
                if std::mem::take(&mut self.mid_line) {
                    self.out("\n");
                }
            }
            Sink::Editor(printer) => {
                if !self.partial.is_empty() {
                    let line = format!("{}\n", std::mem::take(&mut self.partial));
                    let _ = printer.print(line);
                }
            }
        }
    }
}

/// One line for the person on stderr, outside the screen (`agent-chat: ...`): control
/// characters and escape sequences stripped, newlines turned into spaces (it may carry a text
/// from the platform or the Agent); a closed stderr is ignored.
pub fn error_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", one_line(text));
}

/// Writes `text` as it is to stderr (the spinner's own sequences), ignoring a closed stderr.
pub fn raw_err(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// The terminal's mode (Unix: its termios) as it was before the line editor started, put back
/// when the chat ends: a signal may end the chat while the editor reads, in its raw mode, and
/// its thread then never gets to put the mode back itself.
pub struct TerminalMode {
    #[cfg(unix)]
    saved: Option<nix::sys::termios::Termios>,
}

impl TerminalMode {
    /// The mode of stdin's terminal now (nothing when it is not one).
    pub fn save() -> TerminalMode {
        TerminalMode {
            #[cfg(unix)]
            saved: nix::sys::termios::tcgetattr(std::io::stdin()).ok(),
        }
    }

    /// Puts the saved mode back.
    pub fn restore(&self) {
        #[cfg(unix)]
        if let Some(saved) = &self.saved {
            let _ = nix::sys::termios::tcsetattr(
                std::io::stdin(),
                nix::sys::termios::SetArg::TCSADRAIN,
                saved,
            );
        }
    }
}

/// Takes the whole lines out of `partial` (each with its newline), and pieces of a line longer
/// than [`WRAP`] broken after a space (or at [`WRAP`] when it has none).
fn whole_lines(partial: &mut String) -> Vec<String> {
    let mut lines = Vec::new();
    loop {
        if let Some(at) = partial.find('\n') {
            let rest = partial.split_off(at + 1);
            lines.push(std::mem::replace(partial, rest));
            continue;
        }
        if partial.chars().count() <= WRAP {
            return lines;
        }
        // The byte offset just past the WRAP-th character, and the last space before it.
        let limit = partial
            .char_indices()
            .nth(WRAP)
            .map(|(i, _)| i)
            .unwrap_or(partial.len());
        let head = partial.get(..limit).unwrap_or_default();
        let cut = head.rfind(' ').map(|i| i + 1).unwrap_or(limit);
        let rest = partial.split_off(cut);
        let line = std::mem::replace(partial, rest);
        lines.push(format!("{}\n", line.trim_end()));
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn whole_lines_are_taken_and_long_ones_broken_at_a_space() {
        let mut partial = "one\ntwo\nthr".to_owned();
        assert_eq!(whole_lines(&mut partial), ["one\n", "two\n"]);
        assert_eq!(partial, "thr");
        let mut partial = format!("{}tail", "word ".repeat(20));
        let lines = whole_lines(&mut partial);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].len() <= WRAP + 1, "{lines:?}");
        assert!(lines[0].ends_with("word\n"), "{lines:?}");
        assert_eq!(partial, "word word word word tail");
        let mut partial = "x".repeat(WRAP + 5);
        assert_eq!(
            whole_lines(&mut partial),
            [format!("{}\n", "x".repeat(WRAP))]
        );
        assert_eq!(partial, "xxxxx");
    }
}

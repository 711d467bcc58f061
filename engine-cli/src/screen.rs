//! What the person reads: answers, notices and command output, on a terminal or into pipes.
//!
//! One rule keeps it clean: an answer is never split. While an answer of the shown session
//! streams, every other line (a notice, a command's output, the line the person just sent)
//! waits, and is printed, in order, once the answer has ended; only the answer's own lines (a
//! tool call's outcome, its failure) are printed at once. Answers of a session that is not
//! shown are not printed: their end is noted with the session's name.
//!
//! From a pipe, answers go to stdout as they stream and everything else to stderr, with no
//! escape sequence. On a terminal the screen is drawn directly: the answer flows at the
//! terminal's width as it streams (the terminal wraps it), and below what was printed sits a
//! bottom block, redrawn after every write: the run's status in place (a spinner, while the
//! Agent is queued or thinking) and the prompt with what the person is typing.

use std::collections::BTreeSet;
use std::io::Write;
use std::sync::Mutex;

use unicode_width::UnicodeWidthChar;

use crate::line::{Edit, Key, Line};
use crate::terminal::{Typed, columns};
use crate::text::{Stripper, clean, one_line};

/// The prompt.
pub const PROMPT: &str = "> ";

/// The spinner's frames.
const FRAMES: [char; 4] = ['|', '/', '-', '\\'];

/// A line that waits for the answer to end.
enum Later {
    /// A notice: stderr from a pipe.
    Notice(String),
    /// A command's output: stdout from a pipe.
    Said(String),
}

/// The bottom block of a terminal: the status line and the prompt.
#[derive(Default)]
struct Block {
    /// The prompt is offered (the line editor reads).
    prompt: bool,
    /// What is typed.
    line: Line,
    /// The run's status, shown in place (with the spinner's frame).
    status: Option<String>,
    frame: usize,
    /// The block is drawn, and how many rows its first row is above the cursor.
    drawn: Option<usize>,
}

/// Where the text goes.
enum Sink {
    /// stdout for answers and command output, stderr for notices.
    Pipes,
    /// A terminal, drawn directly.
    Terminal(Block),
}

/// What the person reads. Shared by the answer printer, the commands and the line editor.
pub struct Screen {
    inner: Mutex<Inner>,
}

struct Inner {
    sink: Sink,
    stripper: Stripper,
    /// The session whose answer is being shown (it streams): other lines wait.
    answering: Option<String>,
    /// The answer's last line is open. On a terminal: the column its last row reached
    /// (`1..=columns`), the bottom block being drawn on the row below it.
    open: Option<usize>,
    /// Lines waiting for the answer to end, in order.
    waiting: Vec<Later>,
    /// The session a command chose to show (`/switch`): answers of others are not shown.
    view: Option<String>,
    /// Sessions whose answers are not shown (left while they answered).
    hidden: BTreeSet<String>,
    /// stdout is closed (its reader went away): nothing more is written to it.
    closed: bool,
}

impl Screen {
    /// Prints into stdout and stderr (a pipe; a terminal before the line editor starts).
    pub fn direct() -> Screen {
        Screen {
            inner: Mutex::new(Inner {
                sink: Sink::Pipes,
                stripper: Stripper::default(),
                answering: None,
                open: None,
                waiting: Vec::new(),
                view: None,
                hidden: BTreeSet::new(),
                closed: false,
            }),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        let mut guard = match self.inner.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }

    /// Draws on the terminal from now on, with the prompt offered.
    pub fn take_terminal(&self) {
        self.with(|inner| {
            inner.close_line();
            inner.sink = Sink::Terminal(Block {
                prompt: true,
                ..Block::default()
            });
            inner.put_up();
        });
    }

    /// Whether answers of `session` are shown.
    pub fn shows(&self, session: &str) -> bool {
        self.with(|inner| inner.shows(session))
    }

    /// A piece of `session`'s answer, control characters stripped; nothing when the session is
    /// not shown.
    pub fn answer(&self, session: &str, piece: &str) {
        self.with(|inner| {
            if !inner.shows(session) {
                return;
            }
            let clean = inner.stripper.clean(piece);
            if clean.is_empty() {
                return;
            }
            inner.answering = Some(session.to_owned());
            inner.write_answer(&clean);
        });
    }

    /// A line of `session`'s answer besides its text (a tool call's outcome, a note at its
    /// end): it ends the answer's open line and is printed at once, as a notice.
    pub fn answer_line(&self, session: &str, line: &str) {
        self.with(|inner| {
            if inner.shows(session) {
                inner.print(Later::Notice(clean(line)));
            }
        });
    }

    /// `session`'s answer ended: its line is ended and the lines that waited are printed. The
    /// end of an answer that was not shown is noted, naming its session.
    pub fn answer_ended(&self, session: &str) {
        self.with(|inner| {
            if inner.shows(session) {
                inner.end_answer();
            } else {
                inner.later(Later::Notice(format!(
                    "(session {} answered out of view: /switch to it to read it)",
                    one_line(session)
                )));
            }
        });
    }

    /// Ends the answer's line, if it is open, and prints the lines that waited.
    pub fn end_answer(&self) {
        self.with(Inner::end_answer);
    }

    /// Ends a whole answer (`agent-chat send`): a newline, even after an empty answer.
    pub fn answer_done(&self) {
        self.with(|inner| {
            inner.open = Some(1);
            inner.end_answer();
        });
    }

    /// Whether stdout is closed: its reader went away.
    pub fn stdout_closed(&self) -> bool {
        self.with(|inner| inner.closed)
    }

    /// A notice (a stop, a hold, a failure), on its own line: it waits while an answer streams.
    /// From a pipe it goes to stderr. Control characters are stripped (it may carry a text
    /// from outside).
    pub fn notice(&self, line: &str) {
        self.with(|inner| inner.later(Later::Notice(clean(line))));
    }

    /// A command's output (control characters stripped, newlines kept): it waits while an
    /// answer streams. From a pipe it goes to stdout.
    pub fn say(&self, text: &str) {
        self.with(|inner| inner.later(Later::Said(clean(text))));
    }

    /// The screen shows another session from now on (`to`, when known): the answer being
    /// shown, unless it is `to`'s, is not shown any more (its line is ended), and `line` says
    /// so.
    pub fn switch_view(&self, to: Option<&str>, line: &str) {
        self.with(|inner| {
            if let Some(left) = inner.answering.take()
                && Some(left.as_str()) != to
            {
                inner.hidden.insert(left);
            }
            if let Some(to) = to {
                inner.hidden.remove(to);
            }
            inner.view = to.map(str::to_owned);
            inner.end_answer();
            inner.print(Later::Said(clean(line)));
        });
    }

    /// The run's status shown in place (a terminal only; `None`: none).
    pub fn status(&self, status: Option<&str>) {
        self.with(|inner| {
            let status = status.map(one_line);
            if let Sink::Terminal(block) = &inner.sink
                && block.status == status
            {
                return;
            }
            inner.redraw(|block| block.status = status);
        });
    }

    /// The spinner's next frame, when a status is shown.
    pub fn tick(&self) {
        self.with(|inner| {
            if let Sink::Terminal(block) = &inner.sink
                && block.status.is_some()
            {
                inner.redraw(|block| block.frame = block.frame.wrapping_add(1));
            }
        });
    }

    /// A key the person pressed: the prompt's line is edited and redrawn; what the key did for
    /// the chat, if anything. A line sent is kept above the prompt (after the answer that
    /// streams, if one does); Ctrl-D on an empty line takes the prompt away.
    pub fn key(&self, key: &Key) -> Option<Typed> {
        self.with(|inner| {
            let Sink::Terminal(block) = &mut inner.sink else {
                return None;
            };
            match block.line.apply(key) {
                Edit::Changed => {
                    inner.redraw(|_| {});
                    None
                }
                Edit::Submitted(line) => {
                    inner.redraw(|_| {});
                    inner.later(Later::Said(format!("{PROMPT}{}", clean(&line))));
                    Some(Typed::Line(line))
                }
                Edit::Interrupted => {
                    inner.redraw(|_| {});
                    Some(Typed::Interrupt)
                }
                Edit::Ended => {
                    inner.redraw(|block| block.prompt = false);
                    Some(Typed::End)
                }
            }
        })
    }

    /// The chat ends: the bottom block is taken away, the answer's line ended.
    pub fn leave(&self) {
        self.with(|inner| {
            inner.end_answer();
            inner.redraw(|block| {
                block.prompt = false;
                block.status = None;
            });
        });
    }
}

impl Inner {
    fn shows(&self, session: &str) -> bool {
        !self.hidden.contains(session) && self.view.as_deref().is_none_or(|v| v == session)
    }

    /// `line` now, or once the answer that streams has ended.
    fn later(&mut self, line: Later) {
        if self.answering.is_some() {
            self.waiting.push(line);
        } else {
            self.print(line);
        }
    }

    fn end_answer(&mut self) {
        self.stripper = Stripper::default();
        self.answering = None;
        self.close_line();
        for line in std::mem::take(&mut self.waiting) {
            self.print(line);
        }
    }

    /// Ends the answer's open line.
    fn close_line(&mut self) {
        if self.open.take().is_some() && matches!(self.sink, Sink::Pipes) {
            self.out("\n");
        }
        // On a terminal the bottom block is already on the row below the answer's line.
    }

    /// Prints a whole line (or lines) on its own, the answer's open line ended first.
    fn print(&mut self, line: Later) {
        self.close_line();
        match (&self.sink, line) {
            (Sink::Pipes, Later::Notice(line)) => {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "{line}");
            }
            (Sink::Pipes, Later::Said(text)) => self.out(&format!("{text}\n")),
            (Sink::Terminal(_), Later::Notice(text) | Later::Said(text)) => {
                self.take_down();
                self.out(&format!("{text}\n"));
                self.put_up();
            }
        }
    }

    /// Writes a cleaned piece of the answer where its line stands.
    fn write_answer(&mut self, text: &str) {
        if matches!(self.sink, Sink::Pipes) {
            self.out(text);
            self.open = (!text.ends_with('\n')).then_some(1);
            return;
        }
        let cols = columns();
        self.take_down();
        let mut col = 0;
        if let Some(open) = self.open {
            col = open;
            if open < cols {
                // Back to the end of the answer's last row.
                self.out(&format!("\x1b[1A\r\x1b[{open}C"));
            }
        }
        let mut flowed = String::with_capacity(text.len());
        for c in text.chars() {
            match c {
                '\n' => {
                    flowed.push('\n');
                    col = 0;
                }
                '\t' => {
                    // A tab as spaces to the next stop: the cursor's column stays known.
                    for _ in 0..(8 - col % 8) {
                        flowed.push(' ');
                        col = if col >= cols { 1 } else { col + 1 };
                    }
                }
                c => {
                    let width = c.width().unwrap_or(0);
                    col = if width > 0 && col + width > cols {
                        width
                    } else {
                        col + width
                    };
                    flowed.push(c);
                }
            }
        }
        self.out(&flowed);
        if col > 0 {
            // The bottom block goes on the row below.
            self.out("\r\n");
            self.open = Some(col);
        } else {
            self.open = None;
        }
        self.put_up();
    }

    /// Changes the bottom block and draws it again (a terminal only).
    fn redraw(&mut self, change: impl FnOnce(&mut Block)) {
        if !matches!(self.sink, Sink::Terminal(_)) {
            return;
        }
        self.take_down();
        if let Sink::Terminal(block) = &mut self.sink {
            change(block);
        }
        self.put_up();
    }

    /// Erases the bottom block: the cursor is left at the start of its first row.
    fn take_down(&mut self) {
        let Sink::Terminal(block) = &mut self.sink else {
            return;
        };
        let Some(rows) = block.drawn.take() else {
            return;
        };
        let up = if rows > 0 {
            format!("\x1b[{rows}A")
        } else {
            String::new()
        };
        self.out(&format!("{up}\r\x1b[J"));
    }

    /// Draws the bottom block: the status (with the spinner's frame) while there is one,
    /// then the prompt and what is typed, the cursor where the person edits.
    fn put_up(&mut self) {
        let cols = columns();
        let Sink::Terminal(block) = &mut self.sink else {
            return;
        };
        if block.drawn.is_some() || (block.status.is_none() && !block.prompt) {
            return;
        }
        let mut drawn = String::new();
        let mut rows = 0;
        if let Some(status) = &block.status {
            let frame = FRAMES.get(block.frame % FRAMES.len()).unwrap_or(&'|');
            // One row, never wrapped: its height is known.
            drawn.push_str(&fit(&format!("{frame} {status}"), cols.saturating_sub(1)));
            drawn.push_str("\r\n");
            rows += 1;
        }
        if block.prompt {
            let text = block.line.text();
            let before = width(PROMPT) + width(&block.line.before_cursor());
            let total = width(PROMPT) + width(&text);
            drawn.push_str(PROMPT);
            drawn.push_str(&text);
            if total.is_multiple_of(cols) {
                // The last row is full: the cursor goes on to the next one.
                drawn.push_str("\r\n");
            }
            let (end_row, row, col) = (total / cols, before / cols, before % cols);
            if end_row > row {
                drawn.push_str(&format!("\x1b[{}A", end_row - row));
            }
            drawn.push('\r');
            if col > 0 {
                drawn.push_str(&format!("\x1b[{col}C"));
            }
            rows += row;
        }
        block.drawn = Some(rows);
        self.out(&drawn);
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
}

/// The columns `text` takes on a terminal.
fn width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `text` cut to `cols` columns.
fn fit(text: &str, cols: usize) -> String {
    let mut used = 0;
    text.chars()
        .take_while(|c| {
            used += c.width().unwrap_or(0);
            used <= cols
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_fitting() {
        assert_eq!(width("ab✓日本"), 7);
        assert_eq!(fit("abcdef", 4), "abcd");
        assert_eq!(fit("日本語", 5), "日本");
    }
}

//! The person's side of the chat: what they type (keys on a terminal, plain lines from a pipe,
//! Ctrl-C and signals), and the terminal itself (its mode and its width). What they read is
//! drawn by [`crate::screen::Screen`].

use std::io::{Read, Write};
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::line::Decoder;
use crate::screen::Screen;
use crate::text::one_line;

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

/// The sender every input source uses.
pub type Sender = mpsc::UnboundedSender<Typed>;

/// Sends what the person did; false once the chat is gone.
fn outside(tx: &Sender, typed: Typed) -> bool {
    tx.send(typed).is_ok()
}

/// Reads the terminal's keys on a thread of its own (the terminal in [`TerminalMode::raw`]):
/// each key goes to the screen, which edits and redraws the prompt's line; what the keys did
/// for the chat (a line, Ctrl-C, Ctrl-D) is sent on. The thread ends with the input, or with
/// the process.
pub fn read_keys(screen: Arc<Screen>, tx: Sender) {
    std::thread::spawn(move || {
        let mut decoder = Decoder::default();
        let mut bytes = [0u8; 1024];
        let mut stdin = std::io::stdin();
        loop {
            let n = match stdin.read(&mut bytes) {
                Ok(0) => 0,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => 0,
            };
            if n == 0 {
                outside(&tx, Typed::End);
                return;
            }
            for key in decoder.keys(bytes.get(..n).unwrap_or_default()) {
                if let Some(typed) = screen.key(&key)
                    && !outside(&tx, typed)
                {
                    return;
                }
            }
        }
    });
}

/// The terminal's width in columns (stdout's; 80 when it cannot be read).
pub fn columns() -> usize {
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(width, _)| usize::from(width.0))
        .filter(|cols| *cols > 0)
        .unwrap_or(80)
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

/// Forwards every SIGINT (Ctrl-C from a pipe, or a signal another process sends; on a terminal
/// Ctrl-C is a key the line editor reads) as [`Typed::Interrupt`], and SIGTERM and SIGHUP (Unix)
/// as [`Typed::Leave`].
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
/// when the chat ends, however it ends (a signal included).
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

    /// Puts the terminal in the line editor's mode: keys come one at a time, unechoed (the
    /// screen draws them), and Ctrl-C, Ctrl-D, Ctrl-Z and Ctrl-S are keys, not signals or flow
    /// control; output is processed as usual. False when the mode could not be set.
    pub fn raw(&self) -> bool {
        #[cfg(unix)]
        {
            use nix::sys::termios::{InputFlags, LocalFlags, SetArg, SpecialCharacterIndices};
            let Some(saved) = &self.saved else {
                return false;
            };
            let mut raw = saved.clone();
            raw.local_flags.remove(
                LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::ISIG | LocalFlags::IEXTEN,
            );
            raw.input_flags.remove(InputFlags::IXON | InputFlags::ICRNL);
            for (at, value) in [
                (SpecialCharacterIndices::VMIN, 1),
                (SpecialCharacterIndices::VTIME, 0),
            ] {
                if let Some(c) = raw.control_chars.get_mut(at as usize) {
                    *c = value;
                }
            }
            nix::sys::termios::tcsetattr(std::io::stdin(), SetArg::TCSADRAIN, &raw).is_ok()
        }
        #[cfg(not(unix))]
        false
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

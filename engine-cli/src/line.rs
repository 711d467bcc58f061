//! The line the person types on a terminal: the keys read from the terminal's bytes, and the
//! text being edited with its cursor and the history of this run (never written to disk:
//! messages can be private).

/// The most lines the history keeps.
const HISTORY: usize = 1000;

/// A key the line editor acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// A character to insert.
    Char(char),
    /// Enter.
    Enter,
    /// Backspace: the character before the cursor.
    Backspace,
    /// Delete: the character under the cursor.
    Delete,
    /// Left arrow, Ctrl-B.
    Left,
    /// Right arrow, Ctrl-F.
    Right,
    /// Home, Ctrl-A.
    Home,
    /// End, Ctrl-E.
    End,
    /// Up arrow, Ctrl-P: the line before in the history.
    Up,
    /// Down arrow, Ctrl-N: the line after in the history.
    Down,
    /// Ctrl-U: everything before the cursor.
    KillLine,
    /// Ctrl-W: the word before the cursor.
    KillWord,
    /// Ctrl-C.
    Interrupt,
    /// Ctrl-D.
    EndOfInput,
}

/// Turns the terminal's bytes into keys; a character or an escape sequence split between two
/// reads is kept until it is whole. Sequences it does not know are dropped.
#[derive(Debug, Default)]
pub struct Decoder {
    pending: Vec<u8>,
}

impl Decoder {
    /// The keys `bytes` completes.
    pub fn keys(&mut self, bytes: &[u8]) -> Vec<Key> {
        self.pending.extend_from_slice(bytes);
        let mut keys = Vec::new();
        let mut at = 0;
        while let Some(&byte) = self.pending.get(at) {
            let rest = self.pending.get(at..).unwrap_or_default();
            let (used, key) = match byte {
                0x1b => match escape(rest) {
                    Some(found) => found,
                    None => break,
                },
                b'\r' | b'\n' => (1, Some(Key::Enter)),
                0x7f | 0x08 => (1, Some(Key::Backspace)),
                0x01 => (1, Some(Key::Home)),
                0x02 => (1, Some(Key::Left)),
                0x03 => (1, Some(Key::Interrupt)),
                0x04 => (1, Some(Key::EndOfInput)),
                0x05 => (1, Some(Key::End)),
                0x06 => (1, Some(Key::Right)),
                0x0e => (1, Some(Key::Down)),
                0x10 => (1, Some(Key::Up)),
                0x15 => (1, Some(Key::KillLine)),
                0x17 => (1, Some(Key::KillWord)),
                b'\t' => (1, Some(Key::Char(' '))),
                b if b < 0x20 => (1, None),
                _ => match utf8(rest) {
                    Some(found) => found,
                    None => break,
                },
            };
            keys.extend(key);
            at += used;
        }
        self.pending.drain(..at.min(self.pending.len()));
        keys
    }
}

/// The key of the escape sequence `bytes` starts with, and its length; `None` while it is
/// incomplete.
fn escape(bytes: &[u8]) -> Option<(usize, Option<Key>)> {
    match bytes.get(1)? {
        b'[' => {
            // CSI: parameters, intermediates, then a final byte.
            let end = bytes
                .iter()
                .skip(2)
                .position(|b| (0x40..=0x7e).contains(b))?
                + 2;
            let params = bytes.get(2..end).unwrap_or_default();
            let key = match (bytes.get(end)?, params) {
                (b'A', _) => Some(Key::Up),
                (b'B', _) => Some(Key::Down),
                (b'C', _) => Some(Key::Right),
                (b'D', _) => Some(Key::Left),
                (b'H', _) | (b'~', b"1" | b"7") => Some(Key::Home),
                (b'F', _) | (b'~', b"4" | b"8") => Some(Key::End),
                (b'~', b"3") => Some(Key::Delete),
                _ => None,
            };
            Some((end + 1, key))
        }
        b'O' => {
            let key = match bytes.get(2)? {
                b'A' => Some(Key::Up),
                b'B' => Some(Key::Down),
                b'C' => Some(Key::Right),
                b'D' => Some(Key::Left),
                b'H' => Some(Key::Home),
                b'F' => Some(Key::End),
                _ => None,
            };
            Some((3, key))
        }
        // Alt and another key: dropped.
        _ => Some((2, None)),
    }
}

/// The character `bytes` starts with (UTF-8) and its length; `None` while it is incomplete. A
/// byte that starts no character is dropped.
fn utf8(bytes: &[u8]) -> Option<(usize, Option<Key>)> {
    let first = *bytes.first()?;
    let len = match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return Some((1, None)),
    };
    let Some(whole) = bytes.get(..len) else {
        // Incomplete, unless a byte already seen cannot continue it.
        if bytes.iter().skip(1).any(|b| b & 0xc0 != 0x80) {
            return Some((1, None));
        }
        return None;
    };
    match std::str::from_utf8(whole)
        .ok()
        .and_then(|s| s.chars().next())
    {
        Some(c) => Some((len, Some(Key::Char(c)))),
        None => Some((1, None)),
    }
}

/// What a key did to the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// The line changed (or the cursor moved), or nothing happened: redraw it.
    Changed,
    /// Enter: the line, now out of the editor.
    Submitted(String),
    /// Ctrl-C: what was typed is dropped.
    Interrupted,
    /// Ctrl-D on an empty line: the input ended.
    Ended,
}

/// The text being typed, its cursor, and the history of this run.
#[derive(Debug, Default)]
pub struct Line {
    text: Vec<char>,
    cursor: usize,
    history: Vec<String>,
    /// The history entry shown (Up/Down), and the line typed before browsing.
    browsing: Option<(usize, Vec<char>)>,
}

impl Line {
    /// Applies one key.
    pub fn apply(&mut self, key: &Key) -> Edit {
        match key {
            Key::Char(c) => {
                self.text.insert(self.cursor, *c);
                self.cursor += 1;
            }
            Key::Enter => {
                let line: String = std::mem::take(&mut self.text).into_iter().collect();
                self.cursor = 0;
                self.browsing = None;
                if !line.trim().is_empty() && self.history.last() != Some(&line) {
                    if self.history.len() == HISTORY {
                        self.history.remove(0);
                    }
                    self.history.push(line.clone());
                }
                return Edit::Submitted(line);
            }
            Key::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                self.text.remove(self.cursor);
            }
            Key::Delete if self.cursor < self.text.len() => {
                self.text.remove(self.cursor);
            }
            Key::Left => self.cursor = self.cursor.saturating_sub(1),
            Key::Right => self.cursor = (self.cursor + 1).min(self.text.len()),
            Key::Home => self.cursor = 0,
            Key::End => self.cursor = self.text.len(),
            Key::Up => self.browse(true),
            Key::Down => self.browse(false),
            Key::KillLine => {
                self.text.drain(..self.cursor);
                self.cursor = 0;
            }
            Key::KillWord => {
                let mut from = self.cursor;
                while from > 0 && self.text.get(from - 1) == Some(&' ') {
                    from -= 1;
                }
                while from > 0 && self.text.get(from - 1).is_some_and(|c| *c != ' ') {
                    from -= 1;
                }
                self.text.drain(from..self.cursor);
                self.cursor = from;
            }
            Key::Interrupt => {
                self.text.clear();
                self.cursor = 0;
                self.browsing = None;
                return Edit::Interrupted;
            }
            Key::EndOfInput if self.text.is_empty() => return Edit::Ended,
            Key::EndOfInput => return self.apply(&Key::Delete),
            Key::Backspace | Key::Delete => {}
        }
        Edit::Changed
    }

    /// Up (`back`) or Down through the history.
    fn browse(&mut self, back: bool) {
        let at = match (&self.browsing, back) {
            (None, true) if !self.history.is_empty() => self.history.len() - 1,
            (Some((at, _)), true) if *at > 0 => at - 1,
            (Some((at, _)), false) if at + 1 < self.history.len() => at + 1,
            (Some(_), false) => {
                // Past the newest entry: the line typed before browsing.
                if let Some((_, typed)) = self.browsing.take() {
                    self.text = typed;
                }
                self.cursor = self.text.len();
                return;
            }
            _ => return,
        };
        if self.browsing.is_none() {
            self.browsing = Some((at, self.text.clone()));
        }
        if let Some((shown, _)) = &mut self.browsing {
            *shown = at;
        }
        self.text = self
            .history
            .get(at)
            .map(|l| l.chars().collect())
            .unwrap_or_default();
        self.cursor = self.text.len();
    }

    /// The text typed.
    pub fn text(&self) -> String {
        self.text.iter().collect()
    }

    /// The text before the cursor.
    pub fn before_cursor(&self) -> String {
        self.text.iter().take(self.cursor).collect()
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_read_across_reads() {
        let mut d = Decoder::default();
        assert_eq!(d.keys(b"a\x1b"), [Key::Char('a')]);
        assert_eq!(
            d.keys(b"[A\x1bOB\x1b[3~"),
            [Key::Up, Key::Down, Key::Delete]
        );
        assert_eq!(d.keys(&[0xc3]), []);
        assert_eq!(d.keys(&[0xa9]), [Key::Char('é')]);
        assert_eq!(
            d.keys(b"\x03\x04\r\x7f\x1b[200~\x1bx"),
            [Key::Interrupt, Key::EndOfInput, Key::Enter, Key::Backspace]
        );
        // A byte that starts no character, and one that breaks a character, are dropped.
        assert_eq!(d.keys(b"\xff\xc3a"), [Key::Char('a')]);
    }

    #[test]
    fn editing_and_history() {
        let mut line = Line::default();
        for c in "hello wrld".chars() {
            line.apply(&Key::Char(c));
        }
        for key in [Key::Left, Key::Left, Key::Left, Key::Char('o')] {
            line.apply(&key);
        }
        assert_eq!(line.text(), "hello world");
        assert_eq!(line.before_cursor(), "hello wo");
        assert_eq!(
            line.apply(&Key::Enter),
            Edit::Submitted("hello world".into())
        );
        assert_eq!(line.text(), "");
        line.apply(&Key::Char('x'));
        line.apply(&Key::Up);
        assert_eq!(line.text(), "hello world");
        line.apply(&Key::Down);
        assert_eq!(line.text(), "x");
        line.apply(&Key::KillWord);
        assert_eq!(line.apply(&Key::EndOfInput), Edit::Ended);
        line.apply(&Key::Char('y'));
        assert_eq!(line.apply(&Key::Interrupt), Edit::Interrupted);
        assert_eq!(line.text(), "");
    }
}

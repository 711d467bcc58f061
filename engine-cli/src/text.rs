//! Text from outside (the Agent's answers, the platform's titles and messages) made safe for a
//! terminal: control characters and escape sequences are dropped, so an answer cannot move the
//! cursor, change colours, retitle the window or clear the screen.

/// Where the stripper stands inside an escape sequence; kept between the pieces of a streamed
/// answer, whose sequences may be split anywhere.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Plain text.
    #[default]
    Text,
    /// Just after ESC.
    Escape,
    /// Inside a control sequence (`ESC [` ... final byte `@` to `~`).
    Csi,
    /// Inside a string sequence (`ESC ]`, `ESC P`, `ESC X`, `ESC ^`, `ESC _`), which ends with BEL
    /// or `ESC \`.
    Str,
    /// ESC inside a string sequence: `\` ends it.
    StrEscape,
}

/// Strips control characters and escape sequences from a text that arrives in pieces. Keeps
/// newlines and tabs; drops carriage returns (an answer's `\r\n` prints as `\n`).
#[derive(Debug, Default, Clone)]
pub struct Stripper {
    state: State,
}

impl Stripper {
    /// The printable part of `piece`, given the pieces before it.
    pub fn clean(&mut self, piece: &str) -> String {
        let mut out = String::with_capacity(piece.len());
        for c in piece.chars() {
            self.state = match (self.state, c) {
                (State::Text, '\u{1b}') => State::Escape,
                (State::Text, '\n' | '\t') => {
                    out.push(c);
                    State::Text
                }
                (State::Text, c) if is_control(c) => State::Text,
                (State::Text, c) => {
                    out.push(c);
                    State::Text
                }
                (State::Escape, '[') => State::Csi,
                (State::Escape, ']' | 'P' | 'X' | '^' | '_') => State::Str,
                // A two-character sequence (`ESC c`, `ESC 7`, ...): dropped whole.
                (State::Escape, _) => State::Text,
                (State::Csi, '\u{40}'..='\u{7e}') => State::Text,
                (State::Csi, _) => State::Csi,
                (State::Str, '\u{7}') => State::Text,
                (State::Str, '\u{1b}') => State::StrEscape,
                (State::Str, _) => State::Str,
                (State::StrEscape, '\\') => State::Text,
                (State::StrEscape, _) => State::Str,
            };
        }
        out
    }
}

/// A C0 or C1 control character, DEL included.
fn is_control(c: char) -> bool {
    c.is_control()
}

/// `text` without control characters or escape sequences, newlines kept.
pub fn clean(text: &str) -> String {
    Stripper::default().clean(text)
}

/// `text` as one line: [`clean`], with newlines and tabs turned into spaces (for titles, notices
/// and failure texts).
pub fn one_line(text: &str) -> String {
    clean(text).replace(['\n', '\t'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_sequences_are_dropped() {
        assert_eq!(clean("a\u{1b}[31mred\u{1b}[0m b"), "ared b");
        assert_eq!(clean("bell\u{7} cr\r\n"), "bell cr\n");
        assert_eq!(clean("\u{1b}]0;title\u{7}after"), "after");
        assert_eq!(clean("\u{1b}]8;;http://x\u{1b}\\link"), "link");
        assert_eq!(clean("x\u{9b}y\u{7f}z"), "xyz");
        assert_eq!(clean("tab\there ü ✓"), "tab\there ü ✓");
        assert_eq!(one_line("a\nb\tc"), "a b c");
    }

    #[test]
    fn a_sequence_split_between_pieces_is_still_dropped() {
        let mut s = Stripper::default();
        let joined: String = [
            "one \u{1b}",
            "[1",
            ";31",
            "mtwo",
            "\u{1b}]0;t",
            "itle\u{7} three",
        ]
        .iter()
        .map(|p| s.clean(p))
        .collect();
        assert_eq!(joined, "one two three");
    }
}

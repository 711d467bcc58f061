//! Streaming redaction of `"token"` string values in a JSON body, chunk by chunk.
//!
//! The runtime token travels in the body of a resolve-runtime-access answer. The redactor reads
//! the body as JSON tokens, across chunk boundaries, and replaces the contents of every string
//! that follows a `"token"` key with `[redacted]`; every other byte is kept as it was, so chunk
//! boundaries, formatting and the rest of the answer stay intact. It works on bodies that are
//! cut short or are not JSON at all (nothing is then recognized as a token, nothing changes but
//! a `"token": "…"` pair).

/// The key whose string value is a credential.
const KEY: &[u8] = b"token";
/// What a redacted value reads.
pub(crate) const REDACTED: &str = "[redacted]";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between tokens.
    Outside,
    /// Inside a string; `matched` bytes of it equal the start of [`KEY`] (`None` once it cannot
    /// be the key any more); `escaped` once it held an escape (such a key may spell `token`,
    /// `"\u0074oken"`, so its value is redacted too: better too much than a leak).
    InString {
        matched: Option<usize>,
        escape: bool,
        escaped: bool,
    },
    /// After a string reading `token`: a `:` makes it a key.
    AfterKey,
    /// After `"token":`: a string here is the secret.
    AfterColon,
    /// Inside the secret string: its bytes are held back until its end.
    InSecret { escape: bool },
}

/// Redacts one body, fed chunk by chunk.
#[derive(Debug, Clone)]
pub(crate) struct Redactor {
    state: State,
    /// The secret being read (never written out unless it could not be a token at all).
    secret: Vec<u8>,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor {
            state: State::Outside,
            secret: Vec::new(),
        }
    }
}

impl Redactor {
    /// The chunk as it may be recorded.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(chunk.len());
        for &b in chunk {
            self.byte(b, &mut out);
        }
        out
    }

    fn byte(&mut self, b: u8, out: &mut Vec<u8>) {
        match self.state {
            State::Outside => {
                if b == b'"' {
                    self.state = State::InString {
                        matched: Some(0),
                        escape: false,
                        escaped: false,
                    };
                }
                out.push(b);
            }
            State::InString {
                matched,
                escape,
                escaped,
            } => {
                out.push(b);
                self.state = if escape {
                    State::InString {
                        matched: None,
                        escape: false,
                        escaped: true,
                    }
                } else if b == b'\\' {
                    State::InString {
                        matched: None,
                        escape: true,
                        escaped: true,
                    }
                } else if b == b'"' {
                    if matched == Some(KEY.len()) || escaped {
                        State::AfterKey
                    } else {
                        State::Outside
                    }
                } else {
                    let matched = matched.filter(|&m| KEY.get(m) == Some(&b)).map(|m| m + 1);
                    State::InString {
                        matched,
                        escape: false,
                        escaped,
                    }
                };
            }
            State::AfterKey => {
                if b.is_ascii_whitespace() {
                    out.push(b);
                } else if b == b':' {
                    out.push(b);
                    self.state = State::AfterColon;
                } else {
                    self.state = State::Outside;
                    self.byte(b, out);
                }
            }
            State::AfterColon => {
                if b.is_ascii_whitespace() {
                    out.push(b);
                } else if b == b'"' {
                    out.push(b);
                    self.secret.clear();
                    self.state = State::InSecret { escape: false };
                } else {
                    self.state = State::Outside;
                    self.byte(b, out);
                }
            }
            State::InSecret { escape } => {
                if escape {
                    self.secret.push(b);
                    self.state = State::InSecret { escape: false };
                } else if b == b'\\' {
                    self.secret.push(b);
                    self.state = State::InSecret { escape: true };
                } else if b == b'"' {
                    out.extend_from_slice(&placeholder(&self.secret));
                    self.secret.clear();
                    out.push(b);
                    self.state = State::Outside;
                } else {
                    self.secret.push(b);
                }
            }
        }
    }
}

/// What replaces a secret's JSON string contents: a value the engine would refuse as a token
/// (blank, or with a control character) is refused again on replay, so it is kept blank or
/// replaced by a placeholder the engine refuses too; any other value becomes [`REDACTED`].
fn placeholder(raw: &[u8]) -> Vec<u8> {
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    match serde_json::from_slice::<String>(&quoted) {
        Ok(text) if text.trim().is_empty() => raw.to_vec(),
        Ok(text) if text.chars().any(char::is_control) => format!("{REDACTED}\\u0000").into_bytes(),
        _ => REDACTED.as_bytes().to_vec(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn redact_in(body: &str, size: usize) -> String {
        let mut r = Redactor::default();
        let mut out = Vec::new();
        for piece in body.as_bytes().chunks(size) {
            out.extend(r.feed(piece));
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn replaces_token_values_in_any_chunking() {
        let body = r#"{"mode": "token", "rpc_url":"https://rt","token" : "rt-se\"cret","x":{"token":"b"},"n":["token","token"],"token":null}"#;
        let expected = r#"{"mode": "token", "rpc_url":"https://rt","token" : "[redacted]","x":{"token":"[redacted]"},"n":["token","token"],"token":null}"#;
        for size in 1..body.len() {
            assert_eq!(redact_in(body, size), expected, "chunks of {size}");
        }
    }

    #[test]
    fn leaves_lookalikes_and_cut_bodies() {
        assert_eq!(
            redact_in(r#"{"tokens":"a","tok":"c","token ":"d"}"#, 3),
            r#"{"tokens":"a","tok":"c","token ":"d"}"#
        );
        // A key with an escape may spell `token`: its value goes, to be safe.
        assert_eq!(
            redact_in(r#"{"\u0074oken":"rt-secret","\"token":"b"}"#, 3),
            r#"{"\u0074oken":"[redacted]","\"token":"[redacted]"}"#
        );
        // A body cut inside the secret never shows it.
        assert_eq!(redact_in(r#"{"token":"rt-sec"#, 4), r#"{"token":""#);
        // Values the engine refuses as tokens are refused again on replay.
        assert_eq!(redact_in(r#"{"token":"  "}"#, 2), r#"{"token":"  "}"#);
        assert_eq!(
            redact_in(r#"{"token":"rt\nx"}"#, 2),
            r#"{"token":"[redacted]\u0000"}"#
        );
        assert_eq!(redact_in("<html>token</html>", 5), "<html>token</html>");
    }
}

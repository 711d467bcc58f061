//! Incremental Server-Sent Events decoding (ui-message-stream §3).
//!
//! Bytes may arrive in any slicing: mid-line, mid-event, in the middle of a UTF-8 sequence.
//! Lines end with LF, CRLF or CR (a CR ending one slice and an LF starting the next are one line
//! end); one leading byte-order mark is dropped; lines starting with `:` are comments; a
//! `field:value` line loses one space after the colon; the `data` lines of an event are joined
//! with `\n`; an empty line dispatches the event when it had a `data` line. Other fields
//! (`event`, `id`, `retry`, unknown ones) are ignored, as the AI SDK client ignores them. The data
//! `[DONE]` is reported as a terminator. An event not followed by an empty line when the body
//! ends is discarded.
//!
//! Bounds: an event whose data grows past `max_event_bytes` is dropped (its data is released at
//! once and the rest of it is skipped) and reported as [`SseEvent::Oversized`] when it ends; a
//! line is never buffered past `max_event_bytes` plus a small allowance for its field name.
//! Invalid UTF-8 is decoded lossily (U+FFFD), per line, as the AI SDK client's text decoder does.
//! Every byte is looked at a bounded number of times: the work is linear in the bytes fed.

/// The bytes a line may hold beyond `max_event_bytes` (for its field name and separator).
const LINE_ALLOWANCE: usize = 64;

/// The capacity of the event buffer kept between events.
const DATA_KEPT: usize = 64 * 1024;

/// The UTF-8 byte-order mark.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// One decoded event, lent to the caller of [`SseDecoder::feed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SseEvent<'a> {
    /// The event's data (its `data` lines joined with `\n`).
    Data(&'a str),
    /// The data was exactly `[DONE]`: the stream's terminator.
    Done,
    /// The event's data exceeded the size cap; it was dropped.
    Oversized {
        /// The data bytes seen before the event ended (its `data` values, lines joined).
        bytes: usize,
    },
}

/// The data of the current event while it is a single line lying whole in the slice being
/// scanned: its byte range there, not copied yet.
type Held = Option<std::ops::Range<usize>>;

/// Whether the leading byte-order mark has been dealt with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bom {
    /// This many leading bytes matched the mark so far.
    Pending(usize),
    /// Dropped, or the body does not start with one.
    Settled,
}

/// An incremental SSE decoder.
#[derive(Debug, Clone)]
pub struct SseDecoder {
    max_event_bytes: usize,
    bom: Bom,
    /// The bytes of the current, unterminated line (at most the line cap).
    line: Vec<u8>,
    /// The current line went past the cap; its further bytes are skipped.
    line_overlong: bool,
    /// The full length of the current line, counted even past the cap.
    line_len: usize,
    /// The last byte seen was a CR: an LF right after it belongs to the same line end.
    after_cr: bool,
    /// The current event's data.
    data: String,
    /// The current event had a `data` line.
    has_data: bool,
    /// The current event went past the cap: its data is dropped.
    oversized: bool,
    /// Data bytes of the current event, counted even once it is oversized.
    event_bytes: usize,
    /// Lines that were not valid UTF-8 (decoded lossily).
    invalid_utf8_lines: u64,
}

impl SseDecoder {
    /// A decoder that drops events whose data exceeds `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> SseDecoder {
        SseDecoder {
            max_event_bytes,
            bom: Bom::Pending(0),
            line: Vec::new(),
            line_overlong: false,
            line_len: 0,
            after_cr: false,
            data: String::new(),
            has_data: false,
            oversized: false,
            event_bytes: 0,
            invalid_utf8_lines: 0,
        }
    }

    /// How many lines were not valid UTF-8 so far (each was decoded lossily).
    pub fn invalid_utf8_lines(&self) -> u64 {
        self.invalid_utf8_lines
    }

    /// Decodes the next slice of the body, handing each event it completes to `on_event`.
    pub fn feed(&mut self, mut bytes: &[u8], mut on_event: impl FnMut(SseEvent<'_>)) {
        while let Bom::Pending(matched) = self.bom {
            let Some((&first, rest)) = bytes.split_first() else {
                return;
            };
            if BOM.get(matched) == Some(&first) {
                bytes = rest;
                self.bom = if matched + 1 == BOM.len() {
                    Bom::Settled
                } else {
                    Bom::Pending(matched + 1)
                };
            } else {
                // Not a mark after all: the bytes held back are ordinary content.
                self.bom = Bom::Settled;
                self.scan(BOM.get(..matched).unwrap_or_default(), &mut on_event);
            }
        }
        self.scan(bytes, &mut on_event);
    }

    /// The body ended. Returns whether an unfinished event (or line) was discarded.
    pub fn finish(&mut self) -> bool {
        let discarded = !self.line.is_empty()
            || self.line_overlong
            || self.has_data
            || matches!(self.bom, Bom::Pending(matched) if matched > 0);
        self.line = Vec::new();
        self.line_overlong = false;
        self.line_len = 0;
        self.after_cr = false;
        self.reset_event();
        self.bom = Bom::Settled;
        discarded
    }

    /// Splits `input` into lines, finding line ends with `memchr`. A line lying whole in
    /// `input` is read in place; only a line cut by the end of the slice is buffered.
    fn scan(&mut self, input: &[u8], on_event: &mut impl FnMut(SseEvent<'_>)) {
        let mut at = 0;
        if self.after_cr {
            if input.first() == Some(&b'\n') {
                at = 1;
                self.after_cr = false;
            } else if !input.is_empty() {
                self.after_cr = false;
            }
        }
        let mut held: Held = None;
        while let Some(rest) = input.get(at..).filter(|rest| !rest.is_empty()) {
            let Some(offset) = memchr::memchr2(b'\n', b'\r', rest) else {
                self.release(input, &mut held);
                self.push_line_bytes(rest);
                return;
            };
            let end = at + offset;
            let mut next = end + 1;
            if input.get(end) == Some(&b'\r') {
                match input.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    // The LF of a CRLF may start the next slice.
                    None => self.after_cr = true,
                }
            }
            let segment = rest.get(..offset).unwrap_or_default();
            let unbuffered = self.line.is_empty() && !self.line_overlong && self.line_len == 0;
            if unbuffered && segment.len() <= self.line_cap() {
                self.complete_line(segment, Some(at), input, &mut held, on_event);
            } else {
                self.push_line_bytes(segment);
                self.end_buffered_line(input, &mut held, on_event);
            }
            at = next;
        }
        self.release(input, &mut held);
    }

    /// The most bytes a line is buffered to.
    fn line_cap(&self) -> usize {
        self.max_event_bytes.saturating_add(LINE_ALLOWANCE)
    }

    fn push_line_bytes(&mut self, segment: &[u8]) {
        self.line_len = self.line_len.saturating_add(segment.len());
        if self.line_overlong || segment.is_empty() {
            return;
        }
        let room = self.line_cap().saturating_sub(self.line.len());
        if segment.len() > room {
            // Keep the start (enough to tell the field), skip the rest of the line.
            let keep = room.min(LINE_ALLOWANCE);
            self.line
                .extend_from_slice(segment.get(..keep).unwrap_or_default());
            self.line_overlong = true;
        } else {
            self.line.extend_from_slice(segment);
        }
    }

    /// The buffered line is complete.
    fn end_buffered_line(
        &mut self,
        input: &[u8],
        held: &mut Held,
        on_event: &mut impl FnMut(SseEvent<'_>),
    ) {
        let line = std::mem::take(&mut self.line);
        let line_len = std::mem::take(&mut self.line_len);
        if std::mem::take(&mut self.line_overlong) {
            // A line too long to hold: as data, it makes its event oversized; anything else is
            // ignored.
            let (field, value) = split_field(&line);
            if field == b"data" {
                self.release(input, held);
                let prefix = line.len() - value.len();
                let separator = usize::from(self.has_data);
                self.has_data = true;
                self.event_bytes = self
                    .event_bytes
                    .saturating_add(separator)
                    .saturating_add(line_len.saturating_sub(prefix));
                self.drop_data();
            }
        } else {
            self.complete_line(&line, None, input, held, on_event);
        }
        // Reuse the line's buffer unless it grew large.
        if line.capacity() <= 4 * LINE_ALLOWANCE.max(1024) {
            self.line = line;
            self.line.clear();
        }
    }

    /// A complete line (at most the line cap). `start` is where it begins in `input` when it
    /// lies there whole: the data line of a single-line event is then held, not copied.
    fn complete_line(
        &mut self,
        line: &[u8],
        start: Option<usize>,
        input: &[u8],
        held: &mut Held,
        on_event: &mut impl FnMut(SseEvent<'_>),
    ) {
        if line.is_empty() {
            self.dispatch(input, held, on_event);
            return;
        }
        if line.first() == Some(&b':') {
            return;
        }
        let (field, value) = split_field(line);
        if field != b"data" {
            return;
        }
        match start {
            Some(start)
                if !self.has_data && !self.oversized && value.len() <= self.max_event_bytes =>
            {
                let from = start + (line.len() - value.len());
                self.has_data = true;
                self.event_bytes = value.len();
                *held = Some(from..from + value.len());
            }
            _ => {
                self.release(input, held);
                self.push_data(value);
            }
        }
    }

    /// A line's bytes as text: invalid UTF-8 replaced (U+FFFD) and counted. Valid text (the
    /// rule) is checked by `from_utf8`'s word-at-a-time pass, not the replacing one.
    fn text<'b>(&mut self, bytes: &'b [u8]) -> std::borrow::Cow<'b, str> {
        match std::str::from_utf8(bytes) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => {
                self.invalid_utf8_lines += 1;
                String::from_utf8_lossy(bytes)
            }
        }
    }

    /// Copies the held data into the event's buffer: the slice it lies in is going away, or
    /// another line joins it.
    fn release(&mut self, input: &[u8], held: &mut Held) {
        let Some(range) = held.take() else {
            return;
        };
        let text = self.text(input.get(range).unwrap_or_default());
        if text.len() > self.max_event_bytes {
            self.drop_data();
        } else {
            self.data.push_str(&text);
        }
    }

    fn push_data(&mut self, value: &[u8]) {
        let separator = usize::from(self.has_data);
        self.has_data = true;
        self.event_bytes = self
            .event_bytes
            .saturating_add(separator)
            .saturating_add(value.len());
        if self.oversized {
            return;
        }
        let text = self.text(value);
        if self.data.len() + separator + text.len() > self.max_event_bytes {
            self.drop_data();
            return;
        }
        if separator == 1 {
            self.data.push('\n');
        }
        self.data.push_str(&text);
    }

    /// Marks the current event oversized and releases its data.
    fn drop_data(&mut self) {
        self.oversized = true;
        self.data = String::new();
    }

    fn dispatch(&mut self, input: &[u8], held: &mut Held, on_event: &mut impl FnMut(SseEvent<'_>)) {
        if let Some(range) = held.take() {
            // A single-line event lying whole in the slice: lent from there, never copied.
            let text = self.text(input.get(range).unwrap_or_default());
            if text.len() > self.max_event_bytes {
                on_event(SseEvent::Oversized {
                    bytes: self.event_bytes,
                });
            } else if text == "[DONE]" {
                on_event(SseEvent::Done);
            } else {
                on_event(SseEvent::Data(&text));
            }
        } else if self.oversized {
            on_event(SseEvent::Oversized {
                bytes: self.event_bytes,
            });
        } else if self.has_data {
            if self.data == "[DONE]" {
                on_event(SseEvent::Done);
            } else {
                on_event(SseEvent::Data(&self.data));
            }
        }
        self.reset_event();
    }

    fn reset_event(&mut self) {
        // The buffer is kept for the next event unless one large event grew it.
        if self.data.capacity() > DATA_KEPT {
            self.data = String::new();
        } else {
            self.data.clear();
        }
        self.has_data = false;
        self.oversized = false;
        self.event_bytes = 0;
    }
}

/// A line's field name and value (one space after the colon stripped); a line without a colon
/// is a field with an empty value.
fn split_field(line: &[u8]) -> (&[u8], &[u8]) {
    match memchr::memchr(b':', line) {
        Some(colon) => {
            let field = line.get(..colon).unwrap_or_default();
            let value = line.get(colon + 1..).unwrap_or_default();
            (field, value.strip_prefix(b" ").unwrap_or(value))
        }
        None => (line, &[]),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests;

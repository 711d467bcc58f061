use super::*;

/// An event, owned.
#[derive(Debug, PartialEq)]
enum Ev {
    Data(String),
    Done,
    Oversized { bytes: usize },
}

fn collect(decoder: &mut SseDecoder, bytes: &[u8], out: &mut Vec<Ev>) {
    decoder.feed(bytes, |event| {
        out.push(match event {
            SseEvent::Data(data) => Ev::Data(data.to_owned()),
            SseEvent::Done => Ev::Done,
            SseEvent::Oversized { bytes } => Ev::Oversized { bytes },
        })
    });
}

fn decode_slices(slices: &[&[u8]], max: usize) -> (Vec<Ev>, bool) {
    let mut decoder = SseDecoder::new(max);
    let mut out = Vec::new();
    for slice in slices {
        collect(&mut decoder, slice, &mut out);
    }
    let discarded = decoder.finish();
    (out, discarded)
}

fn data(text: &str) -> Ev {
    Ev::Data(text.to_owned())
}

#[test]
fn line_ends_and_fields() {
    let body = b"data: a\r\n\r\ndata:b\rdata:  c\r\rid: 1\nevent: x\nretry: 5\ndata\nfoo: bar\n\n: comment\n\ndata: [DONE]\n\n";
    let (events, discarded) = decode_slices(&[body], 1024);
    assert_eq!(events, [data("a"), data("b\n c"), data(""), Ev::Done]);
    assert!(!discarded);
}

#[test]
fn every_cut_gives_the_events_of_the_whole_body() {
    let body: &[u8] =
        b"data: a\n\ndata: b\r\ndata: c\r\n\r\n: x\ndata: [DONE]\n\ndata: \xFFz\n\ndata: 0123456789abc\n\ndata:  e\rdata\r\r";
    let whole = decode_slices(&[body], 12);
    assert_eq!(whole.0.len(), 6, "{whole:?}");
    for first in 0..=body.len() {
        for second in first..=body.len() {
            let slices = [&body[..first], &body[first..second], &body[second..]];
            assert_eq!(
                decode_slices(&slices, 12),
                whole,
                "cut at {first}, {second}"
            );
        }
    }
}

#[test]
fn cr_then_lf_across_slices_is_one_line_end() {
    let (events, _) = decode_slices(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"], 64);
    assert_eq!(events, [data("a\nb")]);
    let (events, _) = decode_slices(&[b"data: a\r", b"\r", b"data: b\n\n"], 64);
    assert_eq!(events, [data("a"), data("b")]);
}

#[test]
fn bom_is_dropped_once() {
    let bom_body = [&BOM[..], b"data: a\n\n"].concat();
    for split in 0..bom_body.len() {
        let (head, tail) = bom_body.split_at(split);
        let (events, _) = decode_slices(&[head, tail], 64);
        assert_eq!(events, [data("a")], "split at {split}");
    }
    let twice = [&BOM[..], &BOM[..], b"data: a\n\n"].concat();
    let (events, _) = decode_slices(&[&twice], 64);
    // The second mark is part of the first line's field name: not `data`.
    assert_eq!(events, []);
    // A partial mark is content.
    let (events, _) = decode_slices(&[&[0xEF], b"\n\ndata: x\n\n"], 64);
    assert_eq!(events, [data("x")]);
}

#[test]
fn split_utf8_and_invalid_bytes() {
    let body = "data: 🌍ü\n\n".as_bytes();
    let slices: Vec<&[u8]> = body.chunks(1).collect();
    let (events, _) = decode_slices(&slices, 64);
    assert_eq!(events, [data("🌍ü")]);
    let mut decoder = SseDecoder::new(64);
    let mut out = Vec::new();
    collect(&mut decoder, b"data: a\xFFb\n\n", &mut out);
    assert_eq!(out, [data("a\u{FFFD}b")]);
    assert_eq!(decoder.invalid_utf8_lines(), 1);
}

#[test]
fn unterminated_event_is_discarded() {
    assert_eq!(decode_slices(&[b"data: a\n"], 64), (vec![], true));
    assert_eq!(decode_slices(&[b"data: a"], 64), (vec![], true));
    assert_eq!(
        decode_slices(&[b"data: a\n\n"], 64),
        (vec![data("a")], false)
    );
}

#[test]
fn oversized_events_are_dropped_and_reported() {
    let big = format!("data: {}\n\ndata: ok\n\n", "x".repeat(100));
    let (events, _) = decode_slices(&[big.as_bytes()], 10);
    assert_eq!(events, [Ev::Oversized { bytes: 100 }, data("ok")]);
    // Many data lines, each small.
    let many = format!("{}\ndata: ok\n\n", "data: 12345\n".repeat(10));
    let (events, _) = decode_slices(&[many.as_bytes()], 20);
    assert_eq!(events, [Ev::Oversized { bytes: 59 }, data("ok")]);
    // An overlong comment or other field is skipped without harm.
    let comment = format!(
        ":{}\nevent: {}\ndata: ok\n\n",
        "c".repeat(500),
        "e".repeat(500)
    );
    let (events, _) = decode_slices(&[comment.as_bytes()], 10);
    assert_eq!(events, [data("ok")]);
}

#[test]
fn an_unterminated_line_is_not_buffered_past_the_cap() {
    let mut decoder = SseDecoder::new(100);
    let mut out = Vec::new();
    for _ in 0..1000 {
        collect(&mut decoder, &[b'x'; 1000], &mut out);
    }
    assert!(decoder.line.len() <= 100 + LINE_ALLOWANCE);
    assert!(decoder.finish());
}

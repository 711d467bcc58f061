use serde_json::json;

use super::*;

#[test]
fn repairs_incomplete_ends() {
    let cases = [
        (r#"{"city":""#, Some(json!({"city": ""}))),
        (r#"{"city":"Ber"#, Some(json!({"city": "Ber"}))),
        (
            r#"{"city":"Berlin","unit""#,
            Some(json!({"city": "Berlin"})),
        ),
        (
            r#"{"city":"Berlin","unit":"#,
            Some(json!({"city": "Berlin"})),
        ),
        (r#"{"city":"Berlin","#, Some(json!({"city": "Berlin"}))),
        (r#"{"city":"Berlin","un"#, Some(json!({"city": "Berlin"}))),
        (
            r#"{"city":"Berlin","unit":"c"}"#,
            Some(json!({"city": "Berlin", "unit": "c"})),
        ),
        ("{", Some(json!({}))),
        ("[", Some(json!([]))),
        ("[1,", Some(json!([1]))),
        ("[1, 2", Some(json!([1, 2]))),
        ("[1.", Some(json!([1]))),
        ("[-", Some(json!([]))),
        ("[1e", Some(json!([1]))),
        (r#"{"a":-"#, Some(json!({}))),
        (r#"{"a":tr"#, Some(json!({"a": true}))),
        (r#"{"a":nul"#, Some(json!({"a": null}))),
        (r#"{"a":[true,fa"#, Some(json!({"a": [true, false]}))),
        (
            r#"{"a":{"b":[{"c":"d"#,
            Some(json!({"a": {"b": [{"c": "d"}]}})),
        ),
        (r#"{"a":"x\"#, Some(json!({"a": "x"}))),
        (r#"{"a":"x\u00"#, Some(json!({"a": "x"}))),
        (r#"{"a":"x\u00e9"#, Some(json!({"a": "xé"}))),
        (r#"{"a":"\ud83c"#, Some(json!({"a": ""}))),
        (r#"{"a":"\ud83c\udf0d"#, Some(json!({"a": "🌍"}))),
        (r#"{"a":"ümlaut 🌍"#, Some(json!({"a": "ümlaut 🌍"}))),
        (r#""abc"#, Some(json!("abc"))),
        ("12", Some(json!(12))),
        ("", None),
        ("   ", None),
        ("-", None),
        ("x", None),
        ("{x", None),
        (r#"{"a" 1"#, None),
        (r#"{"a":1}}"#, None),
        ("[1]x", None),
        ("tx", None),
        (r#"{"a":trux"#, None),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_partial_json(text), expected, "{text}");
    }
}

/// `PartialJson` fed a text in pieces gives `parse_partial_json` of every prefix.
fn assert_incremental(text: &str, step: usize) -> PartialJson {
    let mut parser = PartialJson::default();
    let mut value = None;
    let mut end = 0;
    while end < text.len() {
        end = (end + step).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let prefix = &text[..end];
        parser.update(prefix, &mut value);
        assert_eq!(
            value,
            parse_partial_json(prefix),
            "{prefix:?} (step {step})"
        );
    }
    parser
}

#[test]
fn incremental_parse_matches_the_whole_parse_on_every_prefix() {
    let texts = [
        r#"{"a": [1, -2.5e+3, true, null, "s\"\\\u00e9\ud83c\udf0d\n\/"], "b": {"c": {}}, "d": []}"#,
        r#"{"path":"src/x.rs","content":"line \"one\"\nline two\t\u0041 🌍 ü","n":120000}"#,
        r#"{"b":0,"a":1,"b":[2,{"b":3}],"b":"x"}"#,
        r#"[[[]],[{}],{"k":[true,false,null]},-0,0.5,1E9,12]"#,
        r#"  {"q" : "a" , "r":[ 1 ,2 ] }  "#,
        r#""top\u00e9""#,
        "123",
        "tru",
        "-",
        r#"{"a":"\ud83c"}"#,
        r#"{"a":"\ud83c\u0041"}"#,
        r#"{"a":"\udc00"}"#,
        r#"{"a":"x\qy"}"#,
        r#"{"a":"\u+abc"}"#,
        "{\"a\":\"tab\there\"}",
        "[1]\u{c}",
        "{\u{c}\"a\":1}",
        r#"{"a":01}"#,
        r#"[1-2,3]"#,
        r#"[-]"#,
        r#"[1.]"#,
        r#"{"a" 1}"#,
        r#"{"a":1}}"#,
        "[1]x",
        r#"{"a":trux}"#,
        r#"{"a":nulll}"#,
        r#"{} {}"#,
        r#"1,"#,
        r#"[1e400]"#,
    ];
    for text in texts {
        for step in [1, 2, 3, 5, 7, 64] {
            _ = assert_incremental(text, step);
        }
    }
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    _ = assert_incremental(&deep, 3);
}

/// A seeded linear congruential generator for the random documents.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// A random JSON document: nested arrays and objects, strings with escapes, non-ASCII text
/// and surrogate pairs, numbers and literals, compact or spaced.
fn random_document(rng: &mut Lcg, depth: usize, out: &mut String) {
    let space = if rng.below(4) == 0 { " " } else { "" };
    let kind = if depth > 3 {
        2 + rng.below(4)
    } else {
        rng.below(6)
    };
    match kind {
        0 | 1 => {
            let object = kind == 1;
            out.push(if object { '{' } else { '[' });
            for i in 0..rng.below(4) {
                if i > 0 {
                    out.push(',');
                    out.push_str(space);
                }
                if object {
                    out.push_str(["\"a\"", "\"b\"", "\"k\\u00e9y\"", "\"a\""][i as usize % 4]);
                    out.push(':');
                    out.push_str(space);
                }
                random_document(rng, depth + 1, out);
            }
            out.push(if object { '}' } else { ']' });
        }
        2 | 3 => {
            out.push('"');
            for _ in 0..rng.below(12) {
                let piece = [
                    "a",
                    "ü",
                    "🌍",
                    "\\\"",
                    "\\\\",
                    "\\n",
                    "\\u00e9",
                    "\\ud83d\\ude80",
                    " ",
                    "\\/",
                    "\\t",
                    "日本",
                ];
                out.push_str(piece[rng.below(piece.len() as u64) as usize]);
            }
            out.push('"');
        }
        4 => {
            let numbers = ["0", "-1", "12.5", "-0.25e-3", "1E9", "123456789", "7"];
            out.push_str(numbers[rng.below(numbers.len() as u64) as usize]);
        }
        _ => out.push_str(["true", "false", "null"][rng.below(3) as usize]),
    }
}

#[test]
fn incremental_parse_matches_on_random_documents() {
    let mut rng = Lcg(12);
    for _ in 0..300 {
        let mut text = String::new();
        random_document(&mut rng, 0, &mut text);
        let step = 1 + rng.below(7) as usize;
        // A valid document never leaves the incremental path.
        assert!(!assert_incremental(&text, step).fallback, "{text}");
        assert_eq!(
            parse_partial_json(&text),
            Some(serde_json::from_str(&text).unwrap()),
            "{text}"
        );
    }
}

#[test]
fn every_prefix_of_a_document_parses_without_panic() {
    let text =
        r#"{"a": [1, -2.5e+3, true, null, "s\"\\\u00e9\ud83c\udf0d"], "b": {"c": {}}, "d": []}"#;
    for end in 0..=text.len() {
        if let Some(prefix) = text.get(..end) {
            let parsed = parse_partial_json(prefix);
            if end > 0 {
                assert!(parsed.is_some(), "{prefix}");
            }
        }
    }
    assert_eq!(
        parse_partial_json(text),
        Some(serde_json::from_str(text).unwrap())
    );
}

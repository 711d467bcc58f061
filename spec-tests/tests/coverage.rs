//! The rule IDs listed in `rules.txt` are each cited by at least one test, and every rule ID a
//! test cites is listed there, so the list is the project's honest statement of coverage.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::BTreeSet;
use std::path::Path;

const SECTIONS: &[&str] = &[
    "SEL", "REQ", "DEF", "MOD", "HYD", "RTA", "SND", "SHR", "CAT", "ENV", "FAIL", "INV",
];

/// Every `SECTION-N` token in `text`.
fn rule_ids(text: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let bytes = text.as_bytes();
    for section in SECTIONS {
        let pattern = format!("{section}-");
        let mut from = 0;
        while let Some(pos) = text[from..].find(&pattern) {
            let start = from + pos;
            let before_ok = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
            let digits: String = text[start + pattern.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if before_ok && !digits.is_empty() {
                ids.insert(format!("{pattern}{digits}"));
            }
            from = start + pattern.len();
        }
    }
    ids
}

fn listed() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules.txt");
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().next().unwrap().to_owned())
        .collect()
}

fn cited() -> BTreeSet<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut ids = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("coverage.rs") {
            ids.extend(rule_ids(&std::fs::read_to_string(&path).unwrap()));
        }
    }
    ids
}

#[test]
fn every_listed_rule_is_cited_by_a_test() {
    let missing: Vec<String> = listed().difference(&cited()).cloned().collect();
    assert!(
        missing.is_empty(),
        "listed in rules.txt but cited by no test: {missing:?}"
    );
}

#[test]
fn every_cited_rule_is_listed() {
    let unlisted: Vec<String> = cited().difference(&listed()).cloned().collect();
    assert!(
        unlisted.is_empty(),
        "cited by tests but missing from rules.txt: {unlisted:?}"
    );
}

#[test]
fn rule_id_scanner_finds_ids_and_ignores_lookalikes() {
    let ids = rule_ids("/// DEF-10, DEF-12: x; fn sel_1() {} XSEL-3 REQ- FAIL-13");
    let expected: BTreeSet<String> = ["DEF-10", "DEF-12", "FAIL-13"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(ids, expected);
}

/// Every test file is compiled: a module of the suite's binary (`tests/spec.rs`) or a test
/// target of its own in `Cargo.toml` (`autotests` is off, so a file named by neither would
/// still count here as citing its rules while never running).
#[test]
fn every_test_file_is_compiled() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = std::fs::read_to_string(root.join("tests/spec.rs")).unwrap();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root.join("tests")).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path
            .extension()
            .is_some_and(|e| e == "rs")
            .then(|| path.file_stem().unwrap().to_string_lossy().into_owned())
        else {
            continue;
        };
        let module = spec.lines().any(|l| l.trim() == format!("mod {stem};"));
        let target = manifest.contains(&format!("path = \"tests/{stem}.rs\""));
        if !module && !target {
            missing.push(stem);
        }
    }
    assert!(
        missing.is_empty(),
        "test files compiled by nothing: {missing:?}"
    );
}

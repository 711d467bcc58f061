#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! Issue 25, points 2 and 4: the README's examples are the files CI runs. Each code block that
//! follows an `<!-- example: PATH -->` line must be an excerpt of PATH: its lines, in order,
//! each the next line of the file, except that a line holding only an elision (`// ...`,
//! `# ...`, `/* ...`, with or without words after them) lets the excerpt skip ahead. Lines are compared without their
//! indentation (an excerpt from inside a function is shown dedented).

use std::path::Path;

const MARKER: &str = "<!-- example: ";

/// The (path, code lines) of every marked block of `readme`.
fn marked_blocks(readme: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.trim().strip_prefix(MARKER) else {
            continue;
        };
        let path = rest.trim_end_matches("-->").trim().to_owned();
        let fence = lines.next().unwrap_or_default();
        assert!(
            fence.starts_with("```"),
            "{path}: the marker must be followed by a code block, not {fence:?}"
        );
        let code = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .map(|l| l.trim().to_owned())
            .collect();
        out.push((path, code));
    }
    out
}

fn is_elision(line: &str) -> bool {
    let line = line.trim();
    ["// ...", "# ...", "/* ..."]
        .iter()
        .any(|e| line.starts_with(e))
}

/// Where `excerpt` is not an excerpt of `file`: the first line of the first run (the lines
/// between elisions) that is not found whole, in order, after the run before it.
fn mismatch(excerpt: &[String], file: &str) -> Option<String> {
    let file: Vec<&str> = file.lines().map(str::trim).collect();
    let mut at = 0;
    for run in excerpt.split(|l| is_elision(l)) {
        if run.is_empty() {
            continue;
        }
        let found = (at..file.len().saturating_sub(run.len() - 1)).find(|&p| {
            run.iter()
                .zip(&file[p..])
                .all(|(want, have)| want.as_str() == *have)
        });
        match found {
            Some(p) => at = p + run.len(),
            None => return Some(run[0].clone()),
        }
    }
    None
}

/// Issue 25, points 2 and 4: every marked README block is an excerpt of its example file, and
/// the README marks one example per host (Rust async and blocking, C, Python, JavaScript).
#[test]
fn readme_examples_are_the_files_ci_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let blocks = marked_blocks(&readme);
    let paths: Vec<&str> = blocks.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "engine-io-tokio/examples/hello.rs",
            "engine-io-blocking/examples/hello.rs",
            "engine-ffi/examples/c/hello.c",
            "bindings/python/examples/hello.py",
            "bindings/web/examples/hello.mjs",
        ]
    );
    for (path, code) in &blocks {
        let file =
            std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(
            code.iter().filter(|l| !is_elision(l)).count() >= 5,
            "{path}: the README's block is nearly empty"
        );
        if let Some(line) = mismatch(code, &file) {
            panic!("README.md's block from {path} differs from the file at: {line:?}");
        }
    }
}

/// The check itself can fail: a changed line, lines out of order, a skip without an elision.
#[test]
fn the_excerpt_check_can_fail() {
    let file = "a\nb\nc\nd\n";
    let lines = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(mismatch(&lines(&["b", "c"]), file), None);
    assert_eq!(mismatch(&lines(&["a", "// ... more", "d"]), file), None);
    assert_eq!(mismatch(&lines(&["a", "d"]), file), Some("a".into()));
    assert_eq!(
        mismatch(&lines(&["c", "# ...", "b"]), file),
        Some("b".into())
    );
    assert_eq!(mismatch(&lines(&["b", "x"]), file), Some("b".into()));
}

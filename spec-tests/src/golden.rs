//! Golden transcripts (issue 26, oracle (a)): every [`crate::Harness`] a test drives leaves its
//! whole transcript (every intent, event, storage request and snapshot change, step by step)
//! in `spec-tests/golden/<test binary>/<test>.txt`, and a later run that writes any other line
//! fails, even where the test's own assertions pass. It is what keeps a reshaping of the engine
//! behaviour-neutral.
//!
//! - A test's harnesses are numbered in the order they are dropped. The first
//!   [`FULL_TRANSCRIPTS`] are kept as text (reviewable in a diff) when within [`FULL_BYTES`];
//!   later ones, which property tests make by the hundred, and longer ones, as their line
//!   count and a digest of their text.
//! - `SPEC_GOLDEN=update cargo test -p spec-tests` writes the files instead of checking them
//!   (review the diff before committing it). A missing file fails the test with that command.
//! - Only harnesses dropped on a test's own thread take part (the thread's name is the test's
//!   path); a harness dropped while its test is already failing is not checked.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Harnesses per test kept as whole text; the rest are kept as digests.
pub const FULL_TRANSCRIPTS: usize = 8;

/// A transcript longer than this is kept as a digest too (one icon test streams 700 KB of
/// bytes through its snapshots).
pub const FULL_BYTES: usize = 64 * 1024;

/// What one test's thread has seen so far.
struct TestGolden {
    /// The golden file.
    path: PathBuf,
    /// Its entries, as committed (`None`: the file does not exist).
    expected: Option<Vec<String>>,
    /// The entries of this run so far.
    seen: Vec<String>,
}

thread_local! {
    static CURRENT: RefCell<Option<TestGolden>> = const { RefCell::new(None) };
    /// This thread panicked once (its test fails on its own; the count is not checked).
    static PANICKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs, once, a panic hook that notes a panic on the thread (before the previous hook).
fn note_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let _ = PANICKED.try_with(|p| p.set(true));
            previous(info);
        }));
    });
}

/// Whether `SPEC_GOLDEN=update` asks for the files to be written.
fn updating() -> bool {
    std::env::var("SPEC_GOLDEN").is_ok_and(|v| v == "update")
}

/// The golden file of the test running on this thread, if it is a test's thread (libtest names
/// it after the test's path; `main`, a tokio worker and other threads take no part).
fn golden_path() -> Option<PathBuf> {
    let thread = std::thread::current();
    let is_path = |n: &&str| {
        n.split("::").all(|part| {
            !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let test = thread.name().filter(|n| *n != "main").filter(is_path)?;
    let exe = std::env::current_exe().ok()?;
    let stem = exe.file_stem()?.to_str()?;
    // `cargo test` names a test binary `<target>-<hash>`.
    let binary = stem.rsplit_once('-').map_or(stem, |(name, _)| name);
    // The suite's binary, `spec`, holds one module per section file: the file names the
    // directory, as when each file was a binary of its own.
    let (dir, test) = match test.split_once("::") {
        Some((module, rest)) if binary == "spec" => (module, rest),
        _ => (binary, test),
    };
    let file = test.replace("::", "__");
    Some(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("golden")
            .join(dir)
            .join(format!("{file}.txt")),
    )
}

/// The header line every entry starts with.
fn header(index: usize) -> String {
    format!("=== harness {index}")
}

/// FNV-1a over the text: stable across runs and platforms.
fn digest(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The entry for harness `index` with this transcript.
fn entry(index: usize, transcript: &str) -> String {
    let mut out = header(index);
    if index < FULL_TRANSCRIPTS && transcript.len() <= FULL_BYTES {
        out.push('\n');
        out.push_str(transcript);
    } else {
        let lines = transcript.lines().count();
        let _ = write!(out, ": {lines} lines, digest {:016x}", digest(transcript));
    }
    out
}

/// Splits a golden file into its entries.
fn entries(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with("=== harness ") {
            out.push(line.to_owned());
        } else if let Some(last) = out.last_mut() {
            last.push('\n');
            last.push_str(line);
        }
    }
    out
}

/// The first line where `expected` and `actual` differ, for the failure message.
fn first_difference(expected: &str, actual: &str) -> String {
    let (mut e, mut a) = (expected.lines(), actual.lines());
    for n in 1.. {
        match (e.next(), a.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => {
                return format!(
                    "line {n}:\n  golden: {}\n  now:    {}",
                    x.unwrap_or("(nothing)"),
                    y.unwrap_or("(nothing)")
                );
            }
        }
    }
    String::new()
}

/// A harness's transcript, one block per step: checked when the harness is dropped.
#[derive(Default)]
pub(crate) struct Golden(pub(crate) Vec<String>);

impl Drop for Golden {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        if let Some(path) = golden_path() {
            check(path, &self.0.join("\n"));
        }
    }
}

/// A test that ends having dropped fewer harnesses than its golden file keeps fails too: when
/// its thread ends (a thread-local's destructor, where a panic aborts the process, so the
/// reason is printed first).
impl Drop for TestGolden {
    fn drop(&mut self) {
        let expected = self.expected.as_ref().map_or(0, Vec::len);
        let panicked = std::thread::panicking() || PANICKED.try_with(|p| p.get()).unwrap_or(true);
        if !updating() && !panicked && self.seen.len() < expected {
            eprintln!(
                "golden: the test ended after {} of the {expected} harnesses {} keeps (if on purpose: `SPEC_GOLDEN=update cargo test -p spec-tests`)",
                self.seen.len(),
                self.path.display()
            );
            std::process::abort();
        }
    }
}

/// Checks (or, under `SPEC_GOLDEN=update`, records) the transcript of a harness being dropped.
fn check(path: PathBuf, transcript: &str) {
    note_panics();
    CURRENT.with(|current| {
        let mut current = current.borrow_mut();
        if current.as_ref().is_none_or(|g| g.path != path) {
            let expected = std::fs::read_to_string(&path).ok().map(|t| entries(&t));
            *current = Some(TestGolden {
                path: path.clone(),
                expected,
                seen: Vec::new(),
            });
        }
        let Some(golden) = current.as_mut() else {
            return;
        };
        let index = golden.seen.len();
        let now = entry(index, transcript);
        golden.seen.push(now.clone());
        if updating() {
            if let Some(dir) = golden.path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let mut text = golden.seen.join("\n");
            text.push('\n');
            if let Err(e) = std::fs::write(&golden.path, text) {
                panic!("golden: cannot write {}: {e}", golden.path.display());
            }
            return;
        }
        let update = "SPEC_GOLDEN=update cargo test -p spec-tests";
        let Some(expected) = &golden.expected else {
            panic!(
                "golden: no transcript file {} (write it with `{update}` and review it)",
                golden.path.display()
            );
        };
        match expected.get(index) {
            Some(want) if *want == now => {}
            Some(want) => panic!(
                "golden: harness {index}'s transcript changed ({}), {}\n(if on purpose: `{update}`, and say why in the commit)",
                golden.path.display(),
                first_difference(want, &now)
            ),
            None => panic!(
                "golden: harness {index} is not in {} (if on purpose: `{update}`)",
                golden.path.display()
            ),
        }
    });
}

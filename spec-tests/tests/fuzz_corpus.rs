#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The fuzz targets' checks (`spec_tests::fuzz`, issue 13 point 2) on stable Rust, in every
//! `cargo test`: each target's seeds (`fuzz/seeds/<target>/`, plus the answer vectors and the
//! recorded traces with the prefix byte each target reads), every input a fuzz run kept as a
//! crash (`fuzz/regressions/<target>/`), and inputs from a seeded generator. Standards ("bad
//! input never panics"), ui-message-stream §2-5 (the message does not depend on where the bytes
//! are split), INV-12 (traces replay).

use std::path::{Path, PathBuf};

use spec_tests::fuzz;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The files of `dir` (none when it does not exist), in name order.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(String, Vec<u8>)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// Seeds and kept crashes of `target` (`fuzz/seeds/<target>`, `fuzz/regressions/<target>`).
fn kept(target: &str) -> Vec<(String, Vec<u8>)> {
    let mut all = files(&repo().join("fuzz/seeds").join(target));
    all.extend(files(&repo().join("fuzz/regressions").join(target)));
    all
}

/// A seeded generator (xorshift64*), for inputs the corpus does not hold.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn with_prefix(prefix: &[u8], body: &[u8]) -> Vec<u8> {
    let mut input = prefix.to_vec();
    input.extend_from_slice(body);
    input
}

/// ui-message-stream §2-5: every answer vector, whole and cut at chosen points (twenty cut
/// sets each from the generator, and the kept inputs), gives one message.
#[test]
fn answer_vectors_do_not_depend_on_their_cuts() {
    let mut rng = Rng(0x5eed_0001);
    let mut vectors = files(&repo().join("spec-tests/vectors/ui-stream"));
    assert!(vectors.len() >= 10, "the answer vectors are missing");
    // The runtime's dialect (issue 24): its bodies, not the JSON beside them.
    let runtime = files(&repo().join("spec-tests/vectors/assistant-stream"));
    let runtime: Vec<_> = runtime
        .into_iter()
        .filter(|(n, _)| n.ends_with(".sse"))
        .collect();
    assert_eq!(runtime.len(), 14, "the runtime's vectors are missing");
    vectors.extend(runtime);
    for (name, body) in &vectors {
        fuzz::answer_stream_split(&with_prefix(&[0], body));
        for _ in 0..20 {
            let mut prefix = vec![7_u8];
            prefix.extend(rng.bytes(14));
            fuzz::answer_stream_split(&with_prefix(&prefix, body));
        }
        // Every prefix of the body, cut in the middle.
        for end in (0..body.len()).step_by(37) {
            let cut = (end / 2) as u16;
            let [a, b] = cut.to_le_bytes();
            fuzz::answer_stream_split(&with_prefix(&[1, a, b], &body[..end]));
        }
        let _ = name;
    }
    for (_, input) in kept("answer_stream_split") {
        fuzz::answer_stream_split(&input);
    }
}

/// Every platform payload reader on every kept body and on the fixtures' bodies, whole and
/// truncated at every 13th byte.
#[test]
fn payload_readers_take_any_body() {
    use spec_tests::fixtures;
    let bodies: Vec<serde_json::Value> = vec![
        fixtures::page(&[fixtures::record("s-1", fixtures::AGENT, fixtures::ENV, 1)]),
        fixtures::record("s-1", fixtures::AGENT, fixtures::ENV, 1),
        fixtures::history("s-1"),
        fixtures::insights("s-1"),
        fixtures::runtime_ready("s-1"),
        fixtures::runtime_transient("waking", Some(500)),
        fixtures::runtime_terminal(Some("ref")),
        fixtures::catalog(),
        fixtures::model_required(),
    ];
    for body in &bodies {
        let text = body.to_string();
        for reader in 0..39_u8 {
            fuzz::payload_readers(&with_prefix(&[reader], text.as_bytes()));
            for end in (0..text.len()).step_by(13) {
                fuzz::payload_readers(&with_prefix(&[reader], &text.as_bytes()[..end]));
            }
        }
    }
    let seeds = kept("payload_readers");
    assert!(!seeds.is_empty(), "fuzz/seeds/payload_readers is missing");
    for (_, input) in seeds {
        fuzz::payload_readers(&input);
    }
}

/// INV-12: every recorded trace replays in every mode, whole and cut at every 211th byte.
#[test]
fn traces_replay_in_every_mode_whole_and_cut() {
    let traces = files(&repo().join("spec-tests/traces"));
    assert!(traces.len() >= 5, "the recorded traces are missing");
    for (_, trace) in &traces {
        for mode in 0..3_u8 {
            fuzz::trace_replay(&with_prefix(&[mode], trace));
            for end in (0..trace.len()).step_by(211) {
                fuzz::trace_replay(&with_prefix(&[mode], &trace[..end]));
            }
        }
    }
    for (_, input) in kept("trace_replay") {
        fuzz::trace_replay(&input);
    }
}

/// The whole engine on 150 generated inputs of 0.5-2 KB and the kept ones: no panic, the
/// snapshot serializes after every step, every request path is one of the table's.
#[test]
fn the_engine_takes_any_sequence_of_inputs_answers_and_time() {
    let mut rng = Rng(0x5eed_0002);
    let mut reached = fuzz::Reached::default();
    for _ in 0..150 {
        let n = 512 + (rng.next() % 1536) as usize;
        let run = fuzz::engine_inputs(&rng.bytes(n));
        reached.steps += run.steps;
        reached.requests += run.requests;
        reached.turns += run.turns;
    }
    println!("FUZZ engine_inputs reached {reached:?}");
    // The driver gets deep enough to matter: requests of every run, turns of many.
    assert!(reached.requests > 150 * 3, "{reached:?}");
    assert!(reached.turns > 20, "{reached:?}");
    for (_, input) in kept("engine_inputs") {
        fuzz::engine_inputs(&input);
    }
}

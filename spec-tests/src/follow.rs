//! The change-following check every harness step makes (issue 12, point 1): a host that reads
//! only the parts whose [`Revisions`] counter moved sees exactly what full snapshots show.

use engine_core::{Engine, Revisions, Snapshot};
use serde_json::Value;

/// The snapshot fields of the run-status channel ([`Revisions::run`]).
pub const RUN_FIELDS: [&str; 8] = [
    "runStatus",
    "runStatusDetail",
    "runFailure",
    "thinkingSummary",
    "hasVisibleAssistantOutput",
    "isAgentWorking",
    "hasActiveChatStream",
    "isCancellingSession",
];

/// Checks one step: every part whose counter did not move between `before` and `after` is
/// unchanged, and the engine's own accessors agree with the snapshot. Panics with the part
/// and the field that changed unannounced.
pub fn check(
    engine: &Engine,
    (before, seen): (&Snapshot, &Revisions),
    (after, now): (&Snapshot, &Revisions),
) {
    // The accessors a following host reads are the snapshot's own values.
    assert_eq!(
        engine.thread().to_vec(),
        after.thread,
        "Engine::thread() differs from the snapshot"
    );
    let run = serde_json::to_value(engine.run_status()).unwrap_or(Value::Null);
    let (b, a) = (
        serde_json::to_value(before).unwrap_or(Value::Null),
        serde_json::to_value(after).unwrap_or(Value::Null),
    );
    for field in RUN_FIELDS {
        assert_eq!(
            run.get(field),
            a.get(field),
            "Engine::run_status().{field} differs from the snapshot"
        );
    }
    assert!(
        now.state >= seen.state && now.run >= seen.run,
        "revisions only grow"
    );
    if now.run == seen.run {
        for field in RUN_FIELDS {
            assert_eq!(
                b.get(field),
                a.get(field),
                "{field} changed but revisions.run did not move"
            );
        }
    }
    if now.state == seen.state {
        let (Value::Object(b), Value::Object(a)) = (&b, &a) else {
            return;
        };
        for (key, value) in a {
            if key == "thread" || RUN_FIELDS.contains(&key.as_str()) {
                continue;
            }
            assert_eq!(
                b.get(key),
                Some(value),
                "{key} changed but revisions.state did not move"
            );
        }
    }
    if now.thread == seen.thread {
        // The finished messages and whether an answer streams are as they were.
        assert_eq!(
            before.thread.len(),
            after.thread.len(),
            "thread length changed but revisions.thread did not move"
        );
        let finished = after
            .thread
            .len()
            .saturating_sub(usize::from(engine.thread().streaming.is_some()));
        assert_eq!(
            before.thread[..finished],
            after.thread[..finished],
            "a finished message changed but revisions.thread did not move"
        );
        if now.streaming == seen.streaming {
            assert_eq!(
                before.thread, after.thread,
                "the streaming answer changed but revisions.streaming did not move"
            );
        }
    }
}

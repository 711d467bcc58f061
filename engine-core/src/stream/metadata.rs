//! Message metadata merging (ui-message-stream §5, "Identity and metadata").

use serde_json::Value;

/// Deep-merges `patch` into `target`: nested objects merge key by key; arrays, scalars and
/// `null` replace the old value. Work is proportional to `patch`.
pub fn deep_merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                match target.get_mut(&key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        deep_merge(existing, value);
                    }
                    _ => {
                        target.insert(key, value);
                    }
                }
            }
        }
        (target, patch) => *target = patch,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn objects_merge_and_everything_else_replaces() {
        let mut target = json!({"a": {"b": 1, "c": [1, 2]}, "d": 1, "e": {"f": 1}});
        deep_merge(
            &mut target,
            json!({"a": {"c": [3], "g": null}, "d": {"x": 1}, "e": null}),
        );
        assert_eq!(
            target,
            json!({"a": {"b": 1, "c": [3], "g": null}, "d": {"x": 1}, "e": null})
        );
        let mut scalar = json!(5);
        deep_merge(&mut scalar, json!({"a": 1}));
        assert_eq!(scalar, json!({"a": 1}));
    }
}

//! The storage port: where the engine's session lists and message queues are kept between runs.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

/// The host's key-value store for the engine's storage intents
/// ([`engine_core::StorageRequest`]).
///
/// The shell calls it on the engine's task, between two engine inputs, so every call should be
/// quick (memory, or a small local file). Failures are the store's business: a load that fails
/// returns `None`, a save that fails is dropped; the engine's state in memory stays
/// authoritative.
pub trait Storage: Send + 'static {
    /// The value stored under `key`, if any.
    fn load(&mut self, key: &str) -> Option<Value>;
    /// Stores `value` under `key`, replacing what was there.
    fn save(&mut self, key: &str, value: Value);
    /// Removes what is stored under `key` (a no-op when nothing is).
    fn remove(&mut self, key: &str);
}

/// A [`Storage`] in memory. Clones share the same map, so a host (or a test) can keep a clone to
/// look inside while the shell owns the other.
///
/// ```
/// use engine_io_tokio::{MemoryStorage, Storage};
///
/// let mut storage = MemoryStorage::default();
/// let view = storage.clone();
/// storage.save("k", serde_json::json!([1, 2]));
/// assert_eq!(view.get("k"), Some(serde_json::json!([1, 2])));
/// storage.remove("k");
/// assert!(view.keys().is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct MemoryStorage {
    map: Arc<Mutex<BTreeMap<String, Value>>>,
}

impl MemoryStorage {
    /// A copy of the value stored under `key`.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.with(|map| map.get(key).cloned())
    }

    /// The stored keys, in order.
    pub fn keys(&self) -> Vec<String> {
        self.with(|map| map.keys().cloned().collect())
    }

    fn with<R>(&self, f: impl FnOnce(&mut BTreeMap<String, Value>) -> R) -> R {
        // A panic while the lock was held cannot leave the map half-written (each operation is
        // one map call), so a poisoned lock is still usable.
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut map)
    }
}

impl Storage for MemoryStorage {
    fn load(&mut self, key: &str) -> Option<Value> {
        self.get(key)
    }

    fn save(&mut self, key: &str, value: Value) {
        self.with(|map| map.insert(key.to_owned(), value));
    }

    fn remove(&mut self, key: &str) {
        self.with(|map| map.remove(key));
    }
}

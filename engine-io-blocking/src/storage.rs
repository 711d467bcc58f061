//! The host's storage port: where the engine's session lists and message queues are kept.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;

/// Key-value storage for the engine's storage intents (`Intent::Storage`).
///
/// The driver thread calls it synchronously while it executes intents, so an implementation
/// should be quick (a slow one delays the engine). Failures are the implementation's to swallow:
/// `load` answers `None` and the engine carries on with its state in memory.
pub trait Storage: Send + 'static {
    /// The value stored under `key`, if any.
    fn load(&mut self, key: &str) -> Option<Value>;
    /// Stores `value` under `key`, replacing what was there.
    fn save(&mut self, key: &str, value: Value);
    /// Removes what is stored under `key`.
    fn remove(&mut self, key: &str);
}

/// In-memory [`Storage`], the default.
///
/// Clones share the same entries, so a host can keep one clone to look inside (or to pre-seed
/// it) after handing another to [`crate::ShellConfig::storage`].
#[derive(Debug, Clone, Default)]
pub struct MemoryStorage {
    entries: Arc<Mutex<BTreeMap<String, Value>>>,
}

impl MemoryStorage {
    /// An empty storage.
    pub fn new() -> MemoryStorage {
        MemoryStorage::default()
    }

    /// A copy of the value stored under `key`.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.lock().get(key).cloned()
    }

    /// Stores `value` under `key` (to seed what the engine will load).
    pub fn insert(&self, key: impl Into<String>, value: Value) {
        self.lock().insert(key.into(), value);
    }

    /// The stored keys, in order.
    pub fn keys(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Value>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Storage for MemoryStorage {
    fn load(&mut self, key: &str) -> Option<Value> {
        self.get(key)
    }

    fn save(&mut self, key: &str, value: Value) {
        self.insert(key, value);
    }

    fn remove(&mut self, key: &str) {
        self.lock().remove(key);
    }
}

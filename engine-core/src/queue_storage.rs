//! ADR 087: what the storage port holds of each session's queue, and who may touch it.
//!
//! The storage key names the session alone (`main_sequence_ai.message_queue.{uid}`), while
//! the engine keeps a separate work per person and Environment (ENV-2, INV-10). The stored
//! copy of a uid therefore belongs to the scope that first read or wrote it: no other person
//! or Environment reads, writes or removes it. A session shown under another Environment (a
//! link kept across a switch) has an empty work there; without an owner that work would
//! remove the rows queued in the session's own Environment (issue 13, found by the
//! simulator). Rows another scope queues for that uid stay in its work, in memory.

use litemap::LiteMap;

use crate::inputs::ScopeKey;
use crate::queue::QueuedMessage;

/// Where the read of one uid's stored copy stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    NotAsked,
    Pending,
    Done,
}

/// One uid's stored copy.
#[derive(Debug)]
struct Stored {
    owner: Option<ScopeKey>,
    /// The owner's read (asked once per engine, while the owner is current).
    read: Read,
    /// The owner wrote the copy: `rows` is what storage holds, read or not.
    wrote: bool,
    /// What storage holds as far as this engine knows: the rows last written or read back.
    rows: Vec<QueuedMessage>,
}

impl Stored {
    fn new(owner: Option<&ScopeKey>, read: Read) -> Stored {
        Stored {
            owner: owner.cloned(),
            read,
            wrote: false,
            rows: Vec::new(),
        }
    }

    /// Storage is known to hold nothing for the uid: another scope may take the copy.
    fn known_empty(&self) -> bool {
        self.rows.is_empty() && (self.read == Read::Done || self.wrote)
    }
}

/// Every stored copy this engine knows of, by session uid (a sorted vector, as the engine's
/// other small maps: issue 12).
#[derive(Debug, Default)]
pub(crate) struct QueueStorage {
    by_session: LiteMap<String, Stored>,
}

impl QueueStorage {
    /// ADR 087: the stored queue is read once, when the session first comes on screen; true
    /// when `scope` should ask for it now (it owns the copy, or nobody does yet).
    pub(crate) fn ask(&mut self, scope: Option<&ScopeKey>, uid: &str) -> bool {
        match self.by_session.get_mut(uid) {
            None => {
                let stored = Stored::new(scope, Read::Pending);
                self.by_session.insert(uid.to_owned(), stored);
                true
            }
            Some(s) if s.owner.as_ref() == scope && s.read == Read::NotAsked => {
                s.read = Read::Pending;
                true
            }
            Some(_) => false,
        }
    }

    /// A read came back: true when `scope` asked for it and is current. A read that comes
    /// back after its scope was left is asked for again when that scope shows the session.
    pub(crate) fn answered(&mut self, scope: Option<&ScopeKey>, uid: &str) -> bool {
        match self.by_session.get_mut(uid) {
            Some(s) if s.read == Read::Pending && s.owner.as_ref() == scope => {
                s.read = Read::Done;
                true
            }
            Some(s) if s.read == Read::Pending => {
                s.read = Read::NotAsked;
                false
            }
            _ => false,
        }
    }

    /// Storage now holds `rows` for `uid` (read back and restored).
    pub(crate) fn set(&mut self, uid: &str, rows: Vec<QueuedMessage>) {
        if let Some(s) = self.by_session.get_mut(uid) {
            s.rows = rows;
        }
    }

    /// A write that comes before any read of the uid's copy (a queue that changed while its
    /// session was never on screen here, or a conversation re-keyed onto it, ADR 099): the copy
    /// is read first, so that what storage held comes back (held) instead of being overwritten.
    /// True when the read must be asked for now, before the write.
    pub(crate) fn read_before_write(&mut self, uid: &str) -> bool {
        match self.by_session.get_mut(uid) {
            Some(s) if s.read == Read::NotAsked && !s.wrote => {
                s.read = Read::Pending;
                true
            }
            _ => false,
        }
    }

    /// `scope` wrote `rows` for `uid`, after [`QueueStorage::needs_write`] said so.
    pub(crate) fn written(&mut self, uid: &str, rows: Vec<QueuedMessage>) {
        if let Some(s) = self.by_session.get_mut(uid) {
            s.rows = rows;
            s.wrote = true;
        }
    }

    /// Forgets `scope`'s copy of `uid` (its conversation was re-keyed, ADR 099); true when
    /// storage may hold rows under it, which must then be removed.
    pub(crate) fn forget(&mut self, scope: Option<&ScopeKey>, uid: &str) -> bool {
        match self.by_session.get(uid) {
            Some(s) if s.owner.as_ref() == scope => {
                let held = !s.known_empty();
                self.by_session.remove(uid);
                held
            }
            _ => false,
        }
    }

    /// Whether rows `scope` queues for `uid` can be stored: it owns the copy, nobody does, or
    /// storage is known to hold nothing for the uid.
    pub(crate) fn can_store(&self, scope: Option<&ScopeKey>, uid: &str) -> bool {
        self.by_session
            .get(uid)
            .is_none_or(|s| s.owner.as_ref() == scope || s.known_empty())
    }

    /// Whether `scope`'s rows for `uid` must be written: the rows differ from what storage
    /// holds, and `scope` owns the copy, or takes it (nobody owns it, or storage is known to
    /// hold nothing for the uid). Compared in place: nothing is copied.
    pub(crate) fn needs_write<'a>(
        &mut self,
        scope: Option<&ScopeKey>,
        uid: &str,
        rows: impl ExactSizeIterator<Item = &'a QueuedMessage>,
    ) -> bool {
        let empty = rows.len() == 0;
        match self.by_session.get_mut(uid) {
            Some(s) if s.owner.as_ref() == scope => !s.rows.iter().eq(rows),
            Some(s) if !empty && s.known_empty() => {
                s.owner = scope.cloned();
                true
            }
            Some(_) => false,
            None if empty => false,
            None => {
                let stored = Stored::new(scope, Read::NotAsked);
                self.by_session.insert(uid.to_owned(), stored);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests;

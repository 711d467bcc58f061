//! `--record FILE`: the trace file, opened when the command starts (so a path that cannot be
//! written is known at once) and written when it ends. An existing file is left as it is until
//! the trace is written over it; one this run created is removed again when no trace is
//! written (the run failed before the chat started).

use std::fs::{File, OpenOptions};
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

/// The open trace file.
pub struct Record {
    path: PathBuf,
    file: File,
    /// This run created the file (it did not exist).
    created: bool,
    /// The trace was written.
    written: bool,
}

impl Record {
    /// Opens the file for writing without emptying it (creating it when it does not exist).
    pub fn create(path: &Path) -> Result<Record, String> {
        let cannot =
            |e: std::io::Error| format!("cannot write the trace file {}: {e}", path.display());
        let (file, created) = match OpenOptions::new().write(true).create_new(true).open(path) {
            Ok(file) => (file, true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let file = OpenOptions::new().write(true).open(path).map_err(cannot)?;
                (file, false)
            }
            Err(e) => return Err(cannot(e)),
        };
        Ok(Record {
            path: path.to_owned(),
            file,
            created,
            written: false,
        })
    }

    /// Writes the whole trace (replacing what the file held).
    pub fn write(&mut self, trace: &str) -> Result<(), String> {
        // Kept even if the write fails part way: what was written may help.
        self.written = true;
        let file = &mut self.file;
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(trace.as_bytes()))
            .and_then(|()| file.flush())
            .map_err(|e| format!("cannot write the trace {}: {e}", self.path.display()))
    }
}

impl Drop for Record {
    /// A file this run created and never wrote is removed: the run left no trace.
    fn drop(&mut self) {
        if self.created && !self.written {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

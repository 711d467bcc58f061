//! `--record FILE`: the trace file, created when the command starts and written when it ends.

use std::fs::File;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

/// The open trace file.
pub struct Record {
    path: PathBuf,
    file: File,
}

impl Record {
    /// Creates (or empties) the file now, so a path that cannot be written is known at once.
    pub fn create(path: &Path) -> Result<Record, String> {
        let file = File::create(path)
            .map_err(|e| format!("cannot write the trace file {}: {e}", path.display()))?;
        Ok(Record {
            path: path.to_owned(),
            file,
        })
    }

    /// Writes the whole trace (replacing anything written before).
    pub fn write(&mut self, trace: &str) -> Result<(), String> {
        let file = &mut self.file;
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(trace.as_bytes()))
            .and_then(|()| file.flush())
            .map_err(|e| format!("cannot write the trace {}: {e}", self.path.display()))
    }
}

//! A call's stdout, spooled to an unlinked file rather than memory, so
//! what it costs is what its longest line costs when judged.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

/// The most of a call's stdout spooled; past it the call is stopped and
/// its output is too long to judge (docs/contract.md §1.4: a check says so, it does
/// not judge a cut it made itself).
pub const MAX_SPOOL: u64 = 256 << 20;

/// A call's stdout, in an unlinked file of its own.
#[derive(Default)]
pub struct Spool {
    pub(super) file: Option<File>,
    /// The output itself, once `hold` has read it.
    held: Option<Vec<u8>>,
    pub len: u64,
    /// More than [`MAX_SPOOL`] came: the call was stopped.
    pub overflowed: bool,
}

impl Spool {
    /// The output from its start.
    pub fn reader(&self) -> io::Result<Box<dyn Read>> {
        match &self.file {
            None => Ok(Box::new(io::empty())),
            Some(f) => {
                let mut f = f.try_clone()?;
                f.seek(SeekFrom::Start(0))?;
                Ok(Box::new(f))
            }
        }
    }

    /// Keep the output in memory when it is at most `max` bytes, and
    /// give the file back either way (a discovery call's output is read
    /// again; its spool need not live as long).
    pub fn hold(&mut self, max: u64) {
        self.held = self.bytes(max);
        self.file = None;
    }

    /// Give the file back once the output is judged: what the checks
    /// read of it is kept beside, and a spool per call held to the end
    /// would cost the disk each call's output.
    pub fn release(&mut self) {
        self.file = None;
    }

    /// The whole output, when it is at most `max` bytes.
    pub fn bytes(&self, max: u64) -> Option<Vec<u8>> {
        if self.len > max {
            return None;
        }
        if let Some(held) = &self.held {
            return Some(held.clone());
        }
        let mut out = Vec::with_capacity(self.len as usize);
        self.reader().ok()?.read_to_end(&mut out).ok()?;
        Some(out)
    }
}

/// Spool `chunk`; false when the spool is full (the call must stop).
pub(super) fn spool(s: &mut Spool, chunk: &[u8]) -> bool {
    if s.len + chunk.len() as u64 > MAX_SPOOL {
        s.overflowed = true;
        return false;
    }
    let written = s.file.as_mut().is_some_and(|f| f.write_all(chunk).is_ok());
    s.len += chunk.len() as u64;
    if !written {
        // A spool that cannot be written (a full disk) cannot be judged.
        s.overflowed = true;
    }
    written
}

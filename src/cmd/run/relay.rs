//! Where each attempt's relayed stream goes, so that stdout and `--save
//! FILE` carry one conforming stream, the final attempt's (docs/contract.md §13,
//! §20): relaying to stdout with `--retries` (not `--live`), each attempt
//! is held in an unlinked file until no retry follows it; with `--save
//! FILE`, the attempt before a retry is moved beside it, to
//! `FILE.attempt-N`. With `--redact` the lines are written here, once
//! judged.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, Write};
use std::path::Path;

use crate::check::Decision;
use crate::input::scan::Line;
use crate::input::source::{self, RelayError};
use crate::output::relay::Redacted;

/// The relay of `run`'s attempts.
pub struct Relay {
    /// With `--redact`: the writer the pass relays each judged line to.
    redacted: Option<Redacted>,
    /// Whether each attempt's relayed stream is held until its end decides
    /// that no retry follows: `--retries` relaying to stdout, not `--live`.
    /// So `run --retries N -- CMD > out.jsonl` leaves one stream to verify,
    /// the final attempt's (docs/contract.md §20).
    holds: bool,
    /// The attempt's relayed stream, in an unlinked file.
    held: Option<File>,
}

impl Relay {
    pub fn new(redacted: Option<Redacted>, holds: bool) -> Relay {
        Relay {
            redacted,
            holds,
            held: None,
        }
    }

    /// An attempt is about to begin, after attempt `retried` when it is a
    /// retry: the file to relay its stream into, unless `--redact` writes
    /// it (`None` too when the loop relays as it would without retries).
    pub fn begin(&mut self, save: Option<&Path>, retried: Option<u32>) -> io::Result<Option<File>> {
        let mut relay = None;
        if let Some(attempt) = retried {
            // Retried: its stream is not the one stdout carries.
            self.held = None;
            relay = self.keep_attempt(save, attempt)?;
        }
        if self.holds {
            relay = self.hold()?;
        }
        Ok(relay)
    }

    /// Relay `line`, just judged, when `--redact` writes the stream.
    pub fn line(&mut self, line: &Line<'_>, decided: &Decision<'_>) -> io::Result<()> {
        match &mut self.redacted {
            Some(r) => r.line(line, decided),
            None => Ok(()),
        }
    }

    pub fn flush(&mut self) -> io::Result<()> {
        match &mut self.redacted {
            Some(r) => r.flush(),
            None => Ok(()),
        }
    }

    /// A retry is about to begin: `--save FILE` holds the final attempt's
    /// stream only, one conforming stream (docs/contract.md §13), so the attempt
    /// before is moved beside it, to `FILE.attempt-N`, and FILE begins
    /// anew; the new FILE to relay into, unless `--redact` writes it.
    /// A FILE that is not a regular file (`/dev/null`, a FIFO) cannot be
    /// moved: every attempt goes to it. A link is followed.
    fn keep_attempt(&mut self, save: Option<&Path>, attempt: u32) -> io::Result<Option<File>> {
        let Some(save) = save else {
            return Ok(None);
        };
        let path = match std::fs::canonicalize(save) {
            Ok(p) if std::fs::metadata(&p).is_ok_and(|m| m.is_file()) => p,
            _ => return Ok(None),
        };
        let mut kept = path.clone().into_os_string();
        kept.push(format!(".attempt-{attempt}"));
        let kept = std::path::PathBuf::from(kept);
        // (The attempt's lines were flushed when its reading ended.)
        std::fs::rename(&path, &kept).map_err(|e| {
            let why = format!("cannot keep attempt {attempt} as {}: {e}", kept.display());
            io::Error::new(e.kind(), why)
        })?;
        let file = File::create(&path).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
        })?;
        if let Some(r) = &mut self.redacted {
            *r = Redacted::new(BufWriter::with_capacity(256 * 1024, file));
            return Ok(None);
        }
        Ok(Some(file))
    }

    /// The attempt about to begin relays into an unlinked file of its own
    /// (for `--redact`, through the redacting writer): the file to relay
    /// into, unless `--redact` writes it.
    fn hold(&mut self) -> io::Result<Option<File>> {
        let file = tempfile::tempfile().map_err(|e| {
            io::Error::new(e.kind(), format!("cannot hold the attempt's stream: {e}"))
        })?;
        self.held = Some(file.try_clone()?);
        if let Some(r) = &mut self.redacted {
            *r = Redacted::new(BufWriter::with_capacity(256 * 1024, file));
            return Ok(None);
        }
        Ok(Some(file))
    }

    /// No retry follows the attempt held: its stream goes to stdout, whole.
    /// A write that fails is the relay's, as when relaying as it comes
    /// (a closed downstream stays 141).
    pub fn release(&mut self) -> io::Result<()> {
        let Some(mut held) = self.held.take() else {
            return Ok(());
        };
        if let Some(r) = &mut self.redacted {
            r.flush()?;
        }
        held.rewind()?;
        let mut out = source::stdout_file()?;
        let mut buf = vec![0; 64 * 1024];
        loop {
            let n = held.read(&mut buf)?;
            if n == 0 {
                return Ok(());
            }
            out.write_all(&buf[..n])
                .map_err(|e| io::Error::new(e.kind(), RelayError(e)))?;
        }
    }
}

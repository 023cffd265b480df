//! Where each attempt's relayed stream goes, so that stdout and `--save
//! FILE` carry one conforming stream, the final attempt's (docs/contract.md §3.3,
//! §3.4): relaying to stdout with `--retries` (not `--live`), each attempt
//! is held in an unlinked file until no retry follows it; with `--save
//! FILE`, the attempt before a retry is moved beside it, to
//! `FILE.attempt-N`. With `--redact` (or `--upgrade`) the lines are
//! written here, once judged: redacted, or as one AOI 1.0 stream per
//! attempt (`cmd::upgrade`), its summary written when the attempt ends.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, Write};
use std::path::Path;

use crate::check::{Decision, Finding, OpenRun, RunVerdict};
use crate::cmd::upgrade::Upgrader;
use crate::exit::Exit;
use crate::input::scan::Line;
use crate::input::source::{self, RelayError};
use crate::output::relay::Redacted;

/// What writes the relayed lines, when the loop does not copy the bytes.
pub enum Rewrite {
    Redacted(Redacted),
    /// `--upgrade`: the attempt's upgraded stream, and the verdicts of
    /// runs whose line is not written yet.
    Upgraded {
        up: Box<Upgrader>,
        out: BufWriter<File>,
        held: Vec<RunVerdict>,
        made: Upgrading,
    },
}

/// How each attempt's upgrader is made (`Upgrader::new`'s arguments).
#[derive(Clone)]
pub struct Upgrading {
    pub multi_run: bool,
    pub type_field: String,
    pub origin: String,
}

impl Rewrite {
    /// The same writer, begun anew on `file` (an attempt's own).
    fn anew(&self, file: File) -> Rewrite {
        let out = BufWriter::with_capacity(256 * 1024, file);
        match self {
            Rewrite::Redacted(_) => Rewrite::Redacted(Redacted::new(out)),
            Rewrite::Upgraded { made, .. } => Rewrite::upgraded(made.clone(), out),
        }
    }

    /// An upgraded stream on `out`; its meta is written as each attempt
    /// begins (`Relay::begin`).
    pub fn upgraded(made: Upgrading, out: BufWriter<File>) -> Rewrite {
        let up = Upgrader::new(made.multi_run, &made.type_field, Some(made.origin.clone()));
        Rewrite::Upgraded {
            up: Box::new(up),
            out,
            held: vec![],
            made,
        }
    }
}

/// A write error of the relay, named as the relay's (`RelayError`).
fn relay_failed(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), RelayError(e))
}

/// The relay of `run`'s attempts.
pub struct Relay {
    /// With `--redact` or `--upgrade`: the writer the pass relays each
    /// judged line to.
    rewrite: Option<Rewrite>,
    /// Whether each attempt's relayed stream is held until its end decides
    /// that no retry follows: `--retries` relaying to stdout, not `--live`.
    /// So `run --retries N -- CMD > out.jsonl` leaves one stream to verify,
    /// the final attempt's (docs/contract.md §3.4).
    holds: bool,
    /// The attempt's relayed stream, in an unlinked file.
    held: Option<File>,
}

impl Relay {
    pub fn new(rewrite: Option<Rewrite>, holds: bool) -> Relay {
        Relay {
            rewrite,
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
        if let Some(Rewrite::Upgraded { up, out, .. }) = &mut self.rewrite {
            up.begin(out).map_err(relay_failed)?;
        }
        Ok(relay)
    }

    /// Relay `line`, just judged, when `--redact` or `--upgrade` writes
    /// the stream; then the verdicts it brought.
    pub fn line(&mut self, line: &Line<'_>, decided: &Decision<'_>) -> io::Result<()> {
        match &mut self.rewrite {
            Some(Rewrite::Redacted(r)) => r.line(line, decided),
            Some(Rewrite::Upgraded { up, out, held, .. }) => {
                up.judged_line(out, line, decided, held)
                    .map_err(relay_failed)?;
                held.clear();
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// A finding, for the upgraded stream's summary.
    pub fn finding(&mut self, f: &Finding) {
        if let Some(Rewrite::Upgraded { up, .. }) = &mut self.rewrite {
            up.finding(f);
        }
    }

    /// A run judged: its summary waits for the line that ended it.
    pub fn verdict(&mut self, r: &RunVerdict) {
        if let Some(Rewrite::Upgraded { held, .. }) = &mut self.rewrite {
            held.push(r.clone());
        }
    }

    /// The verdicts held, written as the summaries of their runs.
    pub fn judged(&mut self) -> io::Result<()> {
        if let Some(Rewrite::Upgraded { up, out, held, .. }) = &mut self.rewrite {
            for r in held.drain(..) {
                up.verdict(out, &r).map_err(relay_failed)?;
            }
        }
        Ok(())
    }

    /// The attempt is over with `exit` (`timed_out`: stopped at
    /// `--timeout`): its upgraded stream ends.
    pub fn attempt_over(&mut self, exit: Exit, timed_out: bool) -> io::Result<()> {
        self.judged()?;
        if let Some(Rewrite::Upgraded { up, out, .. }) = &mut self.rewrite {
            up.end_as(out, exit, timed_out).map_err(relay_failed)?;
            out.flush().map_err(relay_failed)?;
        }
        Ok(())
    }

    /// Runs left open by a signal or `--timeout`: what they said of their
    /// upstream, for the summary.
    pub fn left_open(&mut self, open: &[OpenRun]) {
        if let Some(Rewrite::Upgraded { up, .. }) = &mut self.rewrite {
            up.left_open(open);
        }
    }

    /// The attempt's command could not start (`exit`, 126 or 127): its
    /// upgraded stream ends on aoitap's own error, whole.
    pub fn not_started(&mut self, exit: Exit, why: &str) -> io::Result<()> {
        if let Some(Rewrite::Upgraded { up, out, .. }) = &mut self.rewrite {
            up.not_started(out, exit, why).map_err(relay_failed)?;
            out.flush().map_err(relay_failed)?;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        match &mut self.rewrite {
            Some(Rewrite::Redacted(r)) => r.flush(),
            Some(Rewrite::Upgraded { out, .. }) => out.flush().map_err(relay_failed),
            None => Ok(()),
        }
    }

    /// A retry is about to begin: `--save FILE` holds the final attempt's
    /// stream only, one conforming stream (docs/contract.md §3.3), so the attempt
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
        if let Some(r) = &mut self.rewrite {
            *r = r.anew(file);
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
        if let Some(r) = &mut self.rewrite {
            *r = r.anew(file);
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
        self.flush()?;
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

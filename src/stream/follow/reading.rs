//! One look at a followed name: what came to its files since the last
//! look, read and judged, through a rotation (the old file drained, then
//! the new one) or a cut in place (read again from its start).

use std::collections::HashMap;
use std::fs;
use std::io::{self, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, Instant};

use super::super::consumer::{Consumer, judge_lines};
use super::super::report::{Halt, Report};
use super::names::{Name, Open, Released, Upto, open_regular};
use crate::config::StreamOptions;
use crate::exit::Exit;
use crate::input::file_id::FileId;
use crate::input::lines::Lines;
use crate::input::scan::Batch;
use crate::output::progress::Progress;
use crate::signal::Caught;

/// How long a rotated or removed file is still read.
const DRAIN: Duration = Duration::from_secs(5);
/// The most batches read of one file in one look at it.
const PER_LOOK: usize = 64;

/// What is shared by every name's reading: the report, and one batch and
/// one parser (`Lines`).
pub(super) struct Reading<'a, 'o> {
    pub opts: &'o StreamOptions,
    pub consumer: &'a mut dyn Consumer,
    pub report: &'a mut Report,
    pub progress: &'a mut Option<Progress>,
    pub lines: Lines,
    /// A signal stops a long read between batches.
    pub caught: Caught,
    /// The files some name reads now (`None`) or read and let go (how
    /// far): a name that comes to point at one (a rotation renamed it to
    /// another followed name) does not read it again.
    pub taken: HashMap<FileId, Option<Released>>,
    /// Writing `--state` failed, and was said.
    pub state_failed: bool,
}

/// How far one look at a file read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Read {
    Nothing,
    Lines,
    /// Lines, and it has more: read on at the next look, before any file
    /// that follows it under the same name.
    More,
}

impl Read {
    fn moved(self) -> bool {
        self != Read::Nothing
    }
}

impl Reading<'_, '_> {
    /// How writing `--state` went: a failure is said once (74).
    pub(super) fn state_written(
        &mut self,
        path: &Path,
        written: io::Result<()>,
    ) -> Result<(), Halt> {
        if let Err(e) = written
            && !self.state_failed
        {
            self.state_failed = true;
            self.report
                .state_unwritten(path, &e)
                .map_err(Halt::writing)?;
        }
        Ok(())
    }

    /// Read what `n` has now, through a rotation or truncation; whether
    /// any line came.
    pub(super) fn pump(&mut self, n: &mut Name<'_>) -> Result<bool, Halt> {
        if n.failed {
            return Ok(false);
        }
        // While an old file drains, the name's other files are read only as
        // far as they went before it was read (see `Upto`); a file not
        // seen yet is read at the next look.
        let before = lengths_now(n);
        let drained = self.drain(n)?;
        let mut moved = drained.moved();
        if drained == Read::More {
            return Ok(moved);
        }
        // A rotation reads the old file to its end, then the new one: at
        // most twice round for one look.
        for _ in 0..2 {
            if n.open.is_none() && !self.open_name(n)? {
                return Ok(moved);
            }
            // Cut and written again since the last look: from its start.
            moved |= self.restart_if_cut(n)?;
            if let Some(open) = n.open.as_mut() {
                let end = before.iter().find(|b| b.0 == open.id).map_or(0, |b| b.1);
                open.cutter.reader().end = n.draining.is_some().then_some(end);
            }
            let read = self.read(n)?;
            moved |= read.moved();
            // The rest of this file comes first, whatever the name is now.
            if read == Read::More {
                return Ok(moved);
            }
            let Some(open) = n.open.as_mut() else {
                return Ok(moved);
            };
            let named = fs::metadata(&n.path).ok().map(|m| FileId::of(&m));
            if named.is_none_or(|id| id != open.id) {
                // Rotated or removed: the old file, read to its end just
                // now, is drained a while (a draining one before it ends).
                moved |= self.end_drain(n)?;
                n.draining = n.open.take().map(|mut o| {
                    o.cutter.reader().end = None;
                    (o, Instant::now())
                });
                n.drain_pos = n.pos;
                if named.is_none() {
                    return Ok(moved);
                }
                continue;
            }
            if self.restart_if_cut(n)? {
                moved = true;
                continue;
            }
            break;
        }
        Ok(moved)
    }

    /// Open the file `n` names, when it has none open; whether it is open
    /// now (else it is looked at again).
    fn open_name(&mut self, n: &mut Name<'_>) -> Result<bool, Halt> {
        // Not there yet, or not a regular file (yet): looked at
        // again; one that is there but no file is said once.
        match fs::metadata(&n.path) {
            Ok(m) if m.is_file() => {}
            Ok(m) => {
                if n.unopened != Some(io::ErrorKind::InvalidInput) {
                    n.unopened = Some(io::ErrorKind::InvalidInput);
                    self.report.out.file = n.label.clone();
                    self.report.not_a_file(m.is_dir()).map_err(Halt::writing)?;
                }
                return Ok(false);
            }
            Err(e) => {
                self.unopened(n, &e)?;
                return Ok(false);
            }
        }
        let (file, meta) = match open_regular(&n.path) {
            Ok(o) => o,
            // No longer a regular file: looked at again.
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => return Ok(false),
            Err(e) => {
                // Unreadable, or no descriptor left: said once, as
                // a read that failed (74), and looked at again.
                if n.unopened != Some(e.kind()) {
                    n.unopened = Some(e.kind());
                    self.report.out.file = n.label.clone();
                    self.report.read_failed(&e).map_err(Halt::writing)?;
                }
                return Ok(false);
            }
        };
        n.unopened = None;
        n.seen = true;
        let id = FileId::of(&meta);
        let read = match self.taken.get(&id) {
            // Another name reads it now: looked at again once it
            // lets go.
            Some(None) => return Ok(false),
            Some(Some(read)) => Some(read.clone()),
            None => None,
        };
        n.open = Some(Open::new(file, id, self.opts.max_line_bytes));
        n.pos = 0;
        n.silent_until = 0;
        if let Some(read) = read {
            n.skip_to(&read);
        }
        Ok(true)
    }

    /// `n`'s name could not be looked at (`e`): said once per reason, and
    /// looked at again. Not there before it was ever opened is waited for,
    /// as `tail -F` does, and said so (docs/contract.md §3.4); any other reason (a
    /// symlink loop, no permission on its directory) is said as `verify`
    /// says an input it cannot open, 66.
    fn unopened(&mut self, n: &mut Name<'_>, e: &io::Error) -> Result<(), Halt> {
        let missing = e.kind() == io::ErrorKind::NotFound;
        if n.unopened == Some(e.kind()) || (missing && n.seen) {
            return Ok(());
        }
        n.unopened = Some(e.kind());
        self.report.out.file = n.label.clone();
        if missing {
            self.report.waiting_for().map_err(Halt::writing)?;
        } else {
            self.report
                .unopened(e, Exit::NoInput)
                .map_err(Halt::writing)?;
        }
        Ok(())
    }

    /// When `n`'s file was cut (copytruncate): shorter than what was read,
    /// or longer but no longer starting as it did. Then what was held is
    /// judged, and the file is read again from its start.
    fn restart_if_cut(&mut self, n: &mut Name<'_>) -> Result<bool, Halt> {
        let Some(open) = n.open.as_mut() else {
            return Ok(false);
        };
        if !open.cut() {
            return Ok(false);
        }
        open.cutter.end_tail();
        self.judge_rest(n)?;
        let Some(open) = n.open.as_mut() else {
            return Ok(true);
        };
        let file = &mut open.cutter.reader().file;
        if file.seek(SeekFrom::Start(0)).is_err() {
            n.open = None;
            return Ok(true);
        }
        let file = file.try_clone().map_err(Halt::writing)?;
        open.cutter.restart(Upto::new(file));
        n.pos = 0;
        n.silent_until = 0;
        Ok(true)
    }

    /// Read what came to the file `n` is draining; end the drain after
    /// `DRAIN`.
    fn drain(&mut self, n: &mut Name<'_>) -> Result<Read, Halt> {
        let Some(since) = n.draining.as_ref().map(|d| d.1) else {
            return Ok(Read::Nothing);
        };
        let read = self.read_draining(n)?;
        if read != Read::More && since.elapsed() >= DRAIN {
            return Ok(if self.end_drain(n)? {
                Read::Lines
            } else {
                read
            });
        }
        Ok(read)
    }

    /// Read and judge what the file `n` is draining has now.
    fn read_draining(&mut self, n: &mut Name<'_>) -> Result<Read, Halt> {
        let Some((old, since)) = n.draining.take() else {
            return Ok(Read::Nothing);
        };
        let new = n.open.replace(old);
        let kept = (n.pos, n.silent_until);
        (n.pos, n.silent_until) = (n.drain_pos, n.drain_silent);
        let read = self.read(n)?;
        n.drain_pos = n.pos;
        (n.pos, n.silent_until) = kept;
        let old = std::mem::replace(&mut n.open, new);
        n.draining = old.map(|o| (o, since));
        Ok(read)
    }

    /// The drain of `n`'s old file ends: it is read to its end (what came
    /// since the last look was written, run by run, before anything past
    /// what was read of the newer file), its line in progress, if any, is
    /// cut there, and a glob may find the file under its new name.
    fn end_drain(&mut self, n: &mut Name<'_>) -> Result<bool, Halt> {
        let mut moved = false;
        loop {
            let read = self.read_draining(n)?;
            moved |= read.moved();
            if read != Read::More || self.caught.caught().is_some() {
                break;
            }
        }
        let Some((mut old, _)) = n.draining.take() else {
            return Ok(moved);
        };
        old.cutter.end_tail();
        let new = n.open.replace(old);
        let kept = (n.pos, n.silent_until);
        (n.pos, n.silent_until) = (n.drain_pos, n.drain_silent);
        moved |= self.judge_rest(n)?;
        if let Some(o) = &n.open {
            n.read_before.push(Released {
                id: o.id,
                pos: n.pos,
                head: o.head().to_vec(),
            });
        }
        (n.pos, n.silent_until) = kept;
        n.drain_silent = 0;
        n.open = new;
        Ok(moved)
    }

    /// Read and judge the whole lines `n`'s open file has now.
    fn read(&mut self, n: &mut Name<'_>) -> Result<Read, Halt> {
        let mut read = Read::Nothing;
        // At most this many batches a look, so a file that grows faster
        // than it is read cannot starve the others.
        for _ in 0..PER_LOOK {
            let Some(open) = n.open.as_mut() else {
                return Ok(read);
            };
            let schema = self.opts.check.schema.as_deref();
            let batch = match self.lines.next(&mut open.cutter, schema.map(|s| s as _)) {
                Ok(Some(batch)) => batch,
                Ok(None) => {
                    open.cutter.idle();
                    return Ok(read);
                }
                Err(e) => {
                    self.report.out.file = n.label.clone();
                    self.report.read_failed(&e).map_err(Halt::writing)?;
                    n.failed = true;
                    return Ok(read);
                }
            };
            if judge(
                batch,
                n,
                self.consumer,
                self.report,
                self.progress,
                self.opts,
            )? {
                read = Read::Lines;
            }
            if self.caught.caught().is_some() {
                return Ok(read);
            }
        }
        Ok(if read.moved() { Read::More } else { read })
    }

    /// `n`'s open file ends here: its line in progress, if any, is cut
    /// there and judged, as a drained file's is (`end_drain`).
    pub(super) fn end(&mut self, n: &mut Name<'_>) -> Result<bool, Halt> {
        if let Some(open) = n.open.as_mut() {
            open.cutter.end_tail();
        }
        self.judge_rest(n)
    }

    /// Judge what the cutter handed out after its tail was ended.
    fn judge_rest(&mut self, n: &mut Name<'_>) -> Result<bool, Halt> {
        let Some(open) = n.open.as_mut() else {
            return Ok(false);
        };
        let schema = self.opts.check.schema.as_deref();
        let Some(batch) = self.lines.rest(&mut open.cutter, schema.map(|s| s as _)) else {
            return Ok(false);
        };
        judge(
            batch,
            n,
            self.consumer,
            self.report,
            self.progress,
            self.opts,
        )
    }
}

/// Judge `batch`, lines of `n`'s open file; whether it held any. Lines
/// that end where the file held them already are judged for their state
/// only (`--from-end`, `--state`: docs/contract.md §2.3).
fn judge(
    batch: &Batch,
    n: &mut Name<'_>,
    consumer: &mut dyn Consumer,
    report: &mut Report,
    progress: &mut Option<Progress>,
    opts: &StreamOptions,
) -> Result<bool, Halt> {
    if batch.is_empty() {
        return Ok(false);
    }
    report.out.file = n.label.clone();
    let (pos, silent_until) = (&mut n.pos, n.silent_until);
    let silent = |bytes| {
        *pos += bytes;
        *pos <= silent_until
    };
    judge_lines(
        batch,
        consumer,
        &mut n.check,
        report,
        progress,
        opts,
        silent,
    )?;
    Ok(true)
}

/// The lengths of the files of `n` now, while an old file drains (none
/// otherwise): the newer first, as each file's length must be from no
/// later than the older one's.
fn lengths_now(n: &mut Name<'_>) -> Vec<(FileId, u64)> {
    if n.draining.is_none() {
        return vec![];
    }
    let named = fs::metadata(&n.path).ok();
    let open = n
        .open
        .as_mut()
        .and_then(|o| o.cutter.reader().file.metadata().ok());
    [open, named]
        .into_iter()
        .flatten()
        .map(|m| (FileId::of(&m), m.len()))
        .collect()
}

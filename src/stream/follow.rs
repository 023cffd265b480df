//! `--follow` (DESIGN §17): FILE operands followed by name, as `tail -F`
//! follows them, on one thread. Each name has its own checker, so the
//! line numbers in its findings are its own and its runs are its own.
//!
//! - Appended lines are judged as they come; a line without its newline
//!   waits for the rest (it is never an event before its newline).
//! - A name that comes to point at another file (rotated: renamed, then
//!   created again) has its old file read to the end, then the new one from
//!   its start; a file cut shorter than what was read (copytruncate) is
//!   read again from its start. Either way its runs go on: a producer
//!   writes on through a rotation.
//! - A quoted glob is looked at again about every second; a file that
//!   comes to match it is followed from its start.
//! - inotify wakes the reader when a watched directory changes; without
//!   it, the files are looked at four times a second.
//! - `--from-end` and `--state` judge what was in a file already only for
//!   the state it leaves (findings unsaid), so a run under way is judged
//!   whole and no line is reported twice.
//!
//! Reading ends only by a signal: the open runs are named, not judged, and
//! the exit status is the signal's (130 for Ctrl-C). A run with no summary
//! is therefore never a pass.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::inotify;

use super::consumer::{Consumer, judge_lines, left_open, pause};
use super::report::{Halt, Report};
use crate::check::{Checker, Stalls};
use crate::config::{Follow, Input, StreamOptions};
use crate::exit::Exit;
use crate::input::file_id::{FileId, stdout_is};
use crate::input::glob::glob_match;
use crate::input::line_check::LineCheck;
use crate::input::scan::{Batch, Cutter};
use crate::json::Parser;
use crate::output::progress::Progress;
use crate::signal::{Caught, Signals};

/// How often a quoted glob is listed again.
const RESCAN: Duration = Duration::from_secs(1);
/// How long the reader sleeps when nothing wakes it: a signal and inotify
/// do, so this bounds only a glob's listing and `--run-idle-timeout`.
const NAP_WATCHED: Duration = Duration::from_millis(1000);
/// Without inotify, how often the files are looked at.
const NAP_POLLED: Duration = Duration::from_millis(250);
/// How long a rotated or removed file is still read.
const DRAIN: Duration = Duration::from_secs(5);
/// The most batches read of one file in one look at it.
const PER_LOOK: usize = 64;
/// How often `--state` is written while lines come (and at the end).
const STATE_EVERY: Duration = Duration::from_secs(1);

/// One followed name.
struct Name<'o> {
    label: String,
    path: PathBuf,
    check: Checker<'o>,
    open: Option<Open>,
    stalls: Stalls,
    /// The offset in the open file just past the last line judged.
    pos: u64,
    /// Lines that end at or before this offset were there already: judged
    /// for their state only.
    silent_until: u64,
    /// Reading it failed: said once, and it is no longer read.
    failed: bool,
    /// The files it read and let go (rotated away), and how far: a glob
    /// may find one again under its new name.
    read_before: Vec<Released>,
    /// A file the name no longer points at (rotated, removed), still read
    /// for `DRAIN` since then: a producer writes on to the file it has
    /// open until it opens the new one. Then closed, so a removed file
    /// holds no descriptor.
    draining: Option<(Open, Instant)>,
    drain_pos: u64,
    /// What the draining file held already (`--state`: it was rotated
    /// while aoitap was stopped): judged for its state only.
    drain_silent: u64,
    /// Why the name could not be opened, once said (said again when the
    /// reason changes).
    unopened: Option<io::ErrorKind>,
    /// A file was opened under the name: one missing since is rotated or
    /// removed, not waited for as a name never seen.
    seen: bool,
}

struct Open {
    cutter: Cutter<Upto>,
    id: FileId,
    /// The file's first bytes as read: a copytruncate followed by more
    /// bytes than were read before the next look leaves the file longer,
    /// not shorter, and only its start tells it was written anew.
    head: Vec<u8>,
    /// The bytes just before where reading had got to at the last look,
    /// and where they end: lines that start alike (a long run id first)
    /// leave the head as it was, but rarely these.
    mark: (u64, Vec<u8>),
}

/// A file a name read and let go: which, how far, and its first bytes (a
/// removed file's inode number is given to the next file created, which
/// must not be taken for it).
#[derive(Clone)]
struct Released {
    id: FileId,
    pos: u64,
    head: Vec<u8>,
}

/// How many of a file's first bytes tell it was written anew.
const HEAD: usize = 64;

/// A followed file, read no further than `end` when it is set. While a
/// name's old file drains, its new file is read only as far as it went
/// before the old one was read: a producer writes its last lines to the
/// old file while another already writes to the new one, and a run's lines
/// must come in the order they were written, whichever file holds them.
struct Upto {
    file: File,
    end: Option<u64>,
}

impl io::Read for Upto {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(end) = self.end else {
            return self.file.read(buf);
        };
        let room = end.saturating_sub(self.file.stream_position()?);
        let room = room.min(buf.len() as u64) as usize;
        if room == 0 {
            return Ok(0);
        }
        self.file.read(&mut buf[..room])
    }
}

impl Open {
    fn new(file: File, id: FileId, max_line: usize) -> Open {
        Open {
            cutter: Cutter::holding_tail(Upto { file, end: None }, max_line),
            id,
            head: vec![],
            mark: (0, vec![]),
        }
    }

    /// Whether the file no longer holds the bytes it held where it was
    /// read, at its start or just before where reading had got to (then it
    /// was cut and written again since the last look); both are learnt as
    /// the file is read, up to `HEAD` bytes each.
    fn rewritten(&mut self) -> bool {
        let file = &mut self.cutter.reader().file;
        let read_to = file.stream_position().unwrap_or(0);
        let now = bytes_at(file, 0, (read_to as usize).min(HEAD));
        let known = self.head.len().min(now.len());
        if now[..known] != self.head[..known] {
            return true;
        }
        if now.len() > self.head.len() {
            self.head = now;
        }
        let (at, ref was) = self.mark;
        let from = at - was.len() as u64;
        if !was.is_empty() && bytes_at(file, from, was.len()) != *was {
            return true;
        }
        if read_to != at {
            let from = read_to.saturating_sub(HEAD as u64);
            self.mark = (read_to, bytes_at(file, from, (read_to - from) as usize));
        }
        false
    }
}

/// Up to `len` bytes of `file` from `at` (fewer where it ends).
fn bytes_at(file: &File, at: u64, len: usize) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let mut out = vec![0; len];
    let mut got = 0;
    while got < len {
        match file.read_at(&mut out[got..], at + got as u64) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    out.truncate(got);
    out
}

/// `DIR/PATTERN`: the files of DIR whose names match PATTERN.
struct Glob {
    dir: PathBuf,
    pattern: Vec<u8>,
    /// As the operand was written, for the names it gives.
    shown: PathBuf,
}

/// What is shared by every name's reading: one batch and one parser.
struct Reading<'a, 'o> {
    opts: &'o StreamOptions,
    consumer: &'a mut dyn Consumer,
    report: &'a mut Report,
    progress: &'a mut Option<Progress>,
    batch: Batch,
    parser: Parser,
    /// A signal stops a long read between batches.
    caught: Caught,
    /// The files some name reads now (`None`) or read and let go (how
    /// far): a name that comes to point at one (a rotation renamed it to
    /// another followed name) does not read it again.
    taken: HashMap<FileId, Option<Released>>,
    /// Writing `--state` failed, and was said.
    state_failed: bool,
}

/// Follow the FILE operands until a signal; trouble reading one (66, 74)
/// goes to the report's tally, as `each_input`'s does.
pub(super) fn follow(
    opts: &StreamOptions,
    how: &Follow,
    consumer: &mut dyn Consumer,
    signals: &Signals,
    report: &mut Report,
    progress: &mut Option<Progress>,
) -> Result<(), Halt> {
    raise_fd_limit();
    let mut globs = vec![];
    let mut names: Vec<Name<'_>> = vec![];
    let mut known: HashSet<PathBuf> = HashSet::new();
    let state = how.state.as_deref().map(State::load).unwrap_or_default();
    for input in &opts.inputs {
        let Input::Path(p) = input else { continue };
        match glob_of(p) {
            Some(g) => globs.push(g),
            None => {
                if known.insert(p.clone()) {
                    add(&mut names, Name::new(opts, p.clone(), how.from_end, &state));
                }
            }
        }
    }
    let watch = Watch::new();
    for n in &names {
        watch.add(&n.path);
    }
    let mut r = Reading {
        opts,
        consumer,
        report,
        progress,
        batch: Batch::default(),
        parser: Parser::default(),
        caught: signals.flags(),
        taken: HashMap::new(),
        state_failed: false,
    };
    let mut listed: Option<Instant> = None;
    let mut state_written = Instant::now();
    let mut dirty = false;
    while signals.caught().is_none() {
        if listed.is_none_or(|t| t.elapsed() >= RESCAN) {
            // The files that match when following starts are existing
            // files (--from-end applies); later ones are new, read whole.
            let at_start = listed.is_none();
            for g in &globs {
                for p in g.matches() {
                    // What aoitap writes is never read back: its report
                    // (stdout redirected into the directory too) or state.
                    if known.contains(&p) || how.writes(&p) || stdout_is(&p) {
                        continue;
                    }
                    // A name for a file followed already (a rotation to a
                    // name the glob matches): its lines were read under the
                    // old name, so the new name judges them for their state
                    // only, and reads what came after.
                    let id = fs::metadata(&p).ok().map(|m| FileId::of(&m));
                    // Still read under its old name: looked at again at
                    // the next listing, once the drain is over.
                    if id.is_some()
                        && names.iter().any(|n| {
                            n.draining.as_ref().map(|d| d.0.id) == id
                                || n.open.as_ref().map(|o| o.id) == id
                        })
                    {
                        continue;
                    }
                    // Read before under another name (rotated, perhaps
                    // more than once: agent.log -> .1 -> .2): what was read
                    // is skipped, not judged again, and its runs stay with
                    // the name that read them.
                    let before = id.and_then(|id| {
                        names
                            .iter()
                            .flat_map(|n| &n.read_before)
                            .find(|r| r.id == id)
                            .cloned()
                    });
                    known.insert(p.clone());
                    watch.add(&p);
                    let mut name = Name::new(opts, p, how.from_end && at_start, &state);
                    if let Some(read) = before {
                        name.skip_to(&read);
                    }
                    add(&mut names, name);
                }
            }
            listed = Some(Instant::now());
        }
        let mut moved = false;
        r.taken = taken(&names);
        for n in &mut names {
            moved |= r.pump(n)?;
        }
        if let Some(after) = how.run_idle {
            let now = Instant::now();
            for n in &mut names {
                r.report.out.file = n.label.clone();
                n.check
                    .stalled(r.report, &mut n.stalls, now, after)
                    .map_err(Halt::writing)?;
            }
        }
        // The state is written a second after lines came, or as soon as
        // they stop: a kill loses at most a second of it.
        dirty |= moved;
        if let Some(path) = &how.state
            && dirty
            && (!moved || state_written.elapsed() >= STATE_EVERY)
        {
            let written = State::write(path, &names);
            r.state_written(path, written)?;
            state_written = Instant::now();
            dirty = false;
        }
        pause(r.consumer, r.report, r.progress)?;
        if !moved {
            let nap = if watch.fd.is_some() {
                NAP_WATCHED
            } else {
                NAP_POLLED
            };
            let nap = how
                .run_idle
                .map_or(nap, |d| nap.min(d / 4).max(Duration::from_millis(50)));
            watch.wait(signals, nap);
        }
    }
    if let Some(path) = &how.state {
        let written = State::write(path, &names);
        r.state_written(path, written)?;
    }
    // Stopped by a signal: each name's open runs are named, not judged.
    for n in &mut names {
        r.report.out.file = n.label.clone();
        left_open(r.consumer, &mut n.check, r.report, r.progress, true)?;
    }
    Ok(())
}

impl<'o> Name<'o> {
    fn new(opts: &'o StreamOptions, path: PathBuf, from_end: bool, state: &State) -> Name<'o> {
        let label = path.to_string_lossy().into_owned();
        let mut name = Name {
            label,
            path,
            check: Checker::new(&opts.check),
            open: None,
            stalls: Stalls::default(),
            pos: 0,
            silent_until: 0,
            failed: false,
            read_before: vec![],
            draining: None,
            drain_pos: 0,
            drain_silent: 0,
            unopened: None,
            seen: false,
        };
        if let Ok((file, meta)) = open_regular(&name.path) {
            let id = FileId::of(&meta);
            // Resumed: what was read before the stop was reported then,
            // if the file still starts as it did (else it was cut and
            // written again while aoitap was stopped: read from its start).
            let resumed = state.offset_of(id).filter(|f| f.holds(&file));
            name.silent_until = match resumed {
                Some(f) if f.offset <= meta.len() => f.offset,
                _ if from_end => meta.len(),
                _ => 0,
            };
            name.open = Some(Open::new(file, id, opts.max_line_bytes));
        }
        // Rotated while aoitap was stopped: the file it was reading, found
        // beside it under its new name, is read on from where it stopped
        // (its runs restored from what it held), then the new file.
        let now = name.open.as_ref().map(|o| o.id);
        if let Some((old, at)) = state.files_of(&name.label).find(|f| Some(f.0) != now)
            && let Some(file) = find_file(&name.path, old)
        {
            name.draining = Some((Open::new(file, old, opts.max_line_bytes), Instant::now()));
            name.drain_silent = at;
        }
        name
    }
}

/// Open `path` if it is a regular file. Opened without blocking, then
/// looked at: a name that became a FIFO between a look and the open would
/// otherwise block every file until a writer came.
fn open_regular(path: &Path) -> io::Result<(File, fs::Metadata)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok((file, meta))
}

/// What `Reading::taken` holds for `names`.
fn taken(names: &[Name<'_>]) -> HashMap<FileId, Option<Released>> {
    let mut taken = HashMap::new();
    for n in names {
        for r in &n.read_before {
            taken.insert(r.id, Some(r.clone()));
        }
    }
    for n in names {
        let reading = n.open.iter().chain(n.draining.iter().map(|d| &d.0));
        for o in reading {
            taken.insert(o.id, None);
        }
    }
    taken
}

/// Whether `file` starts with `head`.
fn starts_with(file: &File, head: &[u8]) -> bool {
    bytes_at(file, 0, head.len()) == head
}

/// The bytes a state's `head` spells in hex.
fn unhex(s: &str) -> Option<Vec<u8>> {
    s.len().is_multiple_of(2).then_some(())?;
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Follow `name` too. A file it would drain that another name reads
/// already (a glob listed the rotated file first) is left to that name:
/// no line is read twice.
fn add<'o>(names: &mut Vec<Name<'o>>, mut name: Name<'o>) {
    let drains = name.draining.as_ref().map(|d| d.0.id);
    if drains.is_some()
        && names
            .iter()
            .any(|n| n.open.as_ref().map(|o| o.id) == drains)
    {
        name.draining = None;
        name.drain_silent = 0;
    }
    names.push(name);
}

impl Name<'_> {
    /// Start reading the open file where `read` stopped (a line's start):
    /// what is before was read and judged under another name. Unless the
    /// file no longer starts as that one did: then it is another file
    /// that was given its inode number, read from its start.
    fn skip_to(&mut self, read: &Released) {
        let Some(open) = &mut self.open else { return };
        let file = &mut open.cutter.reader().file;
        if starts_with(file, &read.head) && file.seek(SeekFrom::Start(read.pos)).is_ok() {
            self.pos = read.pos;
            self.silent_until = 0;
        }
    }
}

/// The file `id` in the directory `path` is in, if it is there.
fn find_file(path: &Path, id: FileId) -> Option<File> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| {
            e.metadata()
                .is_ok_and(|m| m.is_file() && FileId::of(&m) == id)
        })
        .find_map(|e| File::open(e.path()).ok())
}

/// How far one look at a file read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
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
    fn state_written(&mut self, path: &Path, written: io::Result<()>) -> Result<(), Halt> {
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
    fn pump(&mut self, n: &mut Name<'_>) -> Result<bool, Halt> {
        if n.failed {
            return Ok(false);
        }
        // While an old file drains, the name's other files are read only as
        // far as they went before it was read (see `Upto`); a file not
        // seen yet is read at the next look.
        let mut before = vec![];
        if n.draining.is_some() {
            // The newer first: each file's length must be from no later
            // than the older one's.
            let named = fs::metadata(&n.path).ok();
            let open = n
                .open
                .as_mut()
                .and_then(|o| o.cutter.reader().file.metadata().ok());
            before.extend(
                [open, named]
                    .into_iter()
                    .flatten()
                    .map(|m| (FileId::of(&m), m.len())),
            );
        }
        let drained = self.drain(n)?;
        let mut moved = drained.moved();
        if drained == Read::More {
            return Ok(moved);
        }
        // A rotation reads the old file to its end, then the new one: at
        // most twice round for one look.
        for _ in 0..2 {
            if n.open.is_none() {
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
                        return Ok(moved);
                    }
                    Err(e) => {
                        self.unopened(n, &e)?;
                        return Ok(moved);
                    }
                }
                let (file, meta) = match open_regular(&n.path) {
                    Ok(o) => o,
                    // No longer a regular file: looked at again.
                    Err(e) if e.kind() == io::ErrorKind::InvalidInput => return Ok(moved),
                    Err(e) => {
                        // Unreadable, or no descriptor left: said once, as
                        // a read that failed (74), and looked at again.
                        if n.unopened != Some(e.kind()) {
                            n.unopened = Some(e.kind());
                            self.report.out.file = n.label.clone();
                            self.report.read_failed(&e).map_err(Halt::writing)?;
                        }
                        return Ok(moved);
                    }
                };
                n.unopened = None;
                n.seen = true;
                let id = FileId::of(&meta);
                let read = match self.taken.get(&id) {
                    // Another name reads it now: looked at again once it
                    // lets go.
                    Some(None) => return Ok(moved),
                    Some(Some(read)) => Some(read.clone()),
                    None => None,
                };
                n.open = Some(Open::new(file, id, self.opts.max_line_bytes));
                n.pos = 0;
                n.silent_until = 0;
                if let Some(read) = read {
                    n.skip_to(&read);
                }
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

    /// `n`'s name could not be looked at (`e`): said once per reason, and
    /// looked at again. Not there before it was ever opened is waited for,
    /// as `tail -F` does, and said so (DESIGN §20); any other reason (a
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
        let file = &mut open.cutter.reader().file;
        let read_to = file.stream_position().unwrap_or(0);
        let len = file.metadata().map_or(read_to, |m| m.len());
        if !(len < read_to || open.rewritten()) {
            return Ok(false);
        }
        open.cutter.end_tail();
        self.judge_batch(n)?;
        let Some(open) = n.open.as_mut() else {
            return Ok(true);
        };
        let file = &mut open.cutter.reader().file;
        if file.seek(SeekFrom::Start(0)).is_err() {
            n.open = None;
            return Ok(true);
        }
        let file = file.try_clone().map_err(Halt::writing)?;
        open.cutter.restart(Upto { file, end: None });
        open.head.clear();
        open.mark = (0, vec![]);
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
        moved |= self.judge_batch(n)?;
        if let Some(o) = &n.open {
            n.read_before.push(Released {
                id: o.id,
                pos: n.pos,
                head: o.head.clone(),
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
            match open.cutter.next_batch_in(&mut self.batch) {
                Ok(true) => {}
                Ok(false) => return Ok(read),
                Err(e) => {
                    self.report.out.file = n.label.clone();
                    self.report.read_failed(&e).map_err(Halt::writing)?;
                    n.failed = true;
                    return Ok(read);
                }
            }
            if self.judge_parsed(n)? {
                read = Read::Lines;
            }
            if self.caught.caught().is_some() {
                return Ok(read);
            }
        }
        Ok(if read.moved() { Read::More } else { read })
    }

    /// Judge what the cutter handed out after its tail was ended.
    fn judge_batch(&mut self, n: &mut Name<'_>) -> Result<bool, Halt> {
        let Some(open) = n.open.as_mut() else {
            return Ok(false);
        };
        self.batch = open.cutter.take(std::mem::take(&mut self.batch));
        self.judge_parsed(n)
    }

    fn judge_parsed(&mut self, n: &mut Name<'_>) -> Result<bool, Halt> {
        if self.batch.is_empty() {
            return Ok(false);
        }
        let schema = self
            .opts
            .check
            .schema
            .as_deref()
            .map(|s| s as &dyn LineCheck);
        self.batch.parse(&mut self.parser, schema);
        self.report.out.file = n.label.clone();
        let (pos, silent_until) = (&mut n.pos, n.silent_until);
        let silent = |bytes| {
            *pos += bytes;
            *pos <= silent_until
        };
        judge_lines(
            &self.batch,
            self.consumer,
            &mut n.check,
            self.report,
            self.progress,
            self.opts,
            silent,
        )?;
        self.batch.release();
        Ok(true)
    }
}

/// A followed file holds a descriptor while it is followed, and a glob
/// over a log directory can match thousands: the soft limit (often 1,024)
/// is raised to the hard one, as a follower of many logs needs. Past it, a
/// name that cannot be opened is said (74).
fn raise_fd_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        limit.current = limit.maximum;
        let _ = setrlimit(Resource::Nofile, limit);
    }
}

/// The glob an operand is, when its file name holds `*`, `?` or `[` and
/// no file has that name.
fn glob_of(p: &Path) -> Option<Glob> {
    let name = p.file_name()?.as_encoded_bytes();
    if !name.iter().any(|b| matches!(b, b'*' | b'?' | b'[')) || p.exists() {
        return None;
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Some(Glob {
        dir,
        pattern: name.to_vec(),
        shown: p.parent().map(Path::to_path_buf).unwrap_or_default(),
    })
}

impl Glob {
    /// The regular files that match now, sorted.
    fn matches(&self) -> Vec<PathBuf> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return vec![];
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            // Regular files only (a link to one too): a FIFO would block the
            // open, and a device never ends. An entry that cannot be looked
            // at (a symlink loop, a dangling link) is kept, to be said.
            .filter(|e| fs::metadata(e.path()).map_or(true, |m| m.is_file()))
            .filter(|e| glob_match(&self.pattern, e.file_name().as_encoded_bytes()))
            .map(|e| self.shown.join(e.file_name()))
            .collect();
        found.sort();
        found
    }
}

/// inotify on the directories of the followed files, when the system has
/// it: a change there wakes the reader at once.
struct Watch {
    fd: Option<OwnedFd>,
}

impl Watch {
    fn new() -> Watch {
        let flags = inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK;
        Watch {
            fd: inotify::init(flags).ok(),
        }
    }

    /// Watch the directory `path` is in (a rename, a creation and a write
    /// there are all seen; watching it twice is one watch).
    fn add(&self, path: &Path) {
        let Some(fd) = &self.fd else { return };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        use inotify::WatchFlags as W;
        let what = W::MODIFY | W::CREATE | W::MOVED_TO | W::MOVED_FROM | W::DELETE | W::ATTRIB;
        // Not watched (a directory not there yet): the nap still looks.
        let _ = inotify::add_watch(fd, dir, what);
    }

    /// Sleep until a watched directory changes, a signal comes, or `nap`
    /// passes.
    fn wait(&self, signals: &Signals, nap: Duration) {
        let Ok(wake) = signals.wake_fd() else {
            std::thread::sleep(nap);
            return;
        };
        let mut fds = vec![rustix::event::PollFd::new(
            &wake,
            rustix::event::PollFlags::IN,
        )];
        if let Some(fd) = &self.fd {
            fds.push(rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN));
        }
        let timeout = rustix::event::Timespec {
            tv_sec: nap.as_secs() as i64,
            tv_nsec: i64::from(nap.subsec_nanos()),
        };
        let _ = rustix::event::poll(&mut fds, Some(&timeout));
        // What woke us is read and dropped: every file is looked at anyway.
        if let Some(fd) = &self.fd {
            let mut buf = [0u8; 4096];
            while rustix::io::read(fd.as_fd(), &mut buf).is_ok_and(|n| n > 0) {}
        }
    }
}

/// `--state FILE`: for each followed file, which file it was (device and
/// inode) and the offset just past the last line judged.
#[derive(Default)]
struct State {
    files: Vec<Saved>,
}

/// One file of a state: its name, which file, where reading stopped, and
/// the bytes that tell it is still the file read (its first ones, and
/// those just before where reading stopped: lines that start alike leave
/// the first ones as they were when the file is cut and written again).
struct Saved {
    label: String,
    id: FileId,
    offset: u64,
    head: Vec<u8>,
    mark: Vec<u8>,
}

impl Saved {
    /// Whether `file` still holds what was read of it.
    fn holds(&self, file: &File) -> bool {
        let from = self.offset.saturating_sub(self.mark.len() as u64);
        starts_with(file, &self.head) && bytes_at(file, from, self.mark.len()) == self.mark
    }
}

impl State {
    /// The state kept in `path`; none when there is none yet, or it cannot
    /// be read (then every file is read from its start).
    fn load(path: &Path) -> State {
        let Ok(text) = fs::read(path) else {
            return State::default();
        };
        let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&text) else {
            return State::default();
        };
        let files = doc["files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| {
                let id = FileId {
                    dev: f["dev"].as_u64()?,
                    ino: f["ino"].as_u64()?,
                };
                let hex = |k: &str| f[k].as_str().and_then(unhex).unwrap_or_default();
                Some(Saved {
                    label: f["path"].as_str()?.to_string(),
                    id,
                    offset: f["offset"].as_u64()?,
                    head: hex("head"),
                    mark: hex("mark"),
                })
            })
            .collect();
        State { files }
    }

    /// Where reading stopped in the file `id`, under whichever name it
    /// was read (a rotation may have renamed it since).
    fn offset_of(&self, id: FileId) -> Option<&Saved> {
        self.files.iter().find(|f| f.id == id)
    }

    /// The files read under `label` when reading stopped (the one it
    /// names, and one rotated away and still drained), and where each
    /// stopped.
    fn files_of<'s>(&'s self, label: &'s str) -> impl Iterator<Item = (FileId, u64)> + 's {
        self.files
            .iter()
            .filter(move |f| f.label == label)
            .map(|f| (f.id, f.offset))
    }

    /// Write the state of `names` to `path`, whole or not at all (a file
    /// beside it, renamed over it). A state that cannot be written only
    /// costs the resume: reading goes on.
    fn write(path: &Path, names: &[Name<'_>]) -> io::Result<()> {
        let files: Vec<serde_json::Value> = names
            .iter()
            .flat_map(|n| {
                let open = n.open.as_ref().map(|o| (o, n.pos));
                let draining = n.draining.as_ref().map(|d| (&d.0, n.drain_pos));
                open.into_iter().chain(draining).map(|(o, offset)| {
                    let hex = |b: &[u8]| b.iter().map(|b| format!("{b:02x}")).collect::<String>();
                    let from = offset.saturating_sub(HEAD as u64);
                    let mark = bytes_at(&o.cutter.get_ref().file, from, (offset - from) as usize);
                    serde_json::json!({
                        "path": n.label,
                        "dev": o.id.dev,
                        "ino": o.id.ino,
                        "offset": offset,
                        "head": hex(&o.head),
                        "mark": hex(&mark),
                    })
                })
            })
            .collect();
        let doc = serde_json::json!({ "aoitap_follow_state": 1, "files": files });
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        // Its directory is made, as a cache's is (`~/.cache` may not be
        // there yet on a new machine).
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = fs::create_dir_all(dir);
        }
        let written = fs::write(&tmp, format!("{doc}\n")).and_then(|()| fs::rename(&tmp, path));
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written
    }
}

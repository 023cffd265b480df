//! `aoitap split-by-run --dir DIR`: de-interleave merged streams, one file
//! per run, each holding that run's lines byte for byte and in order,
//! written as they arrive (docs/contract.md §1.2).
//!
//! File names never leave DIR and never collide. A run id becomes
//! `run-ID.jsonl`, where ID is the id (decoded from JSON) with every byte
//! outside `A-Z a-z 0-9 . _ -` written `%XX`, a leading `.` written `%2E`,
//! and cut to 120 bytes. When two ids would give names equal but for case
//! (case-insensitive file systems), or equal after the cut, the later one
//! gets `~2`, `~3`, ... before `.jsonl`. A run without an id, opened by an
//! `aoi:meta` at line N, goes to `run-from-line-N.jsonl`; lines that no run
//! claims go to `unattributed.jsonl`. None of these can be `.`, `..`, or
//! hold `/` or NUL.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::hash::BuildHasher;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use crate::check::{
    Checker, Exposure, Finding, Hint, LineKind, Run, RunKey, RunRef, RunVerdict, Sink, redact,
    redaction,
};
use crate::config::{FileId, ReportTo, SplitOptions};
use crate::exit::{Error, Exit, Result};
use crate::input::scan::Line;
use crate::stream::{self, Consumer, Report};

mod open_files;
mod writer;

use open_files::OpenFiles;
use writer::{RunFile, Writer};

/// The longest encoded id kept in a file name.
const NAME_BYTES: usize = 120;

pub fn run(opts: &SplitOptions) -> Result<Exit> {
    if let Err(e) = fs::create_dir_all(&opts.dir) {
        return Err(Error::CantCreate(format!(
            "cannot create the directory {}: {e}",
            opts.dir.display()
        )));
    }
    let mut consumer = Split {
        files: Files::new(opts, opts.max_open.unwrap_or_else(max_open))?,
        redact: opts.stream.redact,
        buf: vec![],
        scratch: vec![],
    };
    stream::run(
        &opts.stream,
        "split-by-run",
        ReportTo::Stdout,
        &mut consumer,
    )
}

/// Run files kept open at most, by default: each holds a buffer of its own.
const MAX_OPEN: usize = 1024;

/// How many run files may be open: the soft open-file limit raised to the
/// hard one first (docs/contract.md §2.2), less room for aoitap's own descriptors
/// and the files the writer may still hold, up to `MAX_OPEN`. A log of more interleaved runs than this closes and
/// reopens files, least recently used first.
fn max_open() -> usize {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        limit.current = limit.maximum;
        // Refused: the soft limit stands.
        let _ = setrlimit(Resource::Nofile, limit);
    }
    let soft = getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX);
    let room = 64 + writer::CLOSED_WAITING as u64;
    (soft.saturating_sub(room).max(1)).min(MAX_OPEN as u64) as usize
}

struct Split {
    files: Files,
    /// `--redact`: exposed secrets are written as "***".
    redact: bool,
    buf: Vec<u8>,
    scratch: Vec<Exposure>,
}

/// The file name (without `.jsonl`) a run's lines go to.
fn base_name(key: &RunKey) -> String {
    match key {
        Run::Id(id) => format!("run-{}", encode(id)),
        Run::FromLine(n) => format!("run-from-line-{n}"),
        Run::Nowhere => "unattributed".to_string(),
    }
}

/// `A-Za-z0-9._-` kept, the rest `%XX`, a leading `.` too; cut to
/// `NAME_BYTES` without splitting an escape.
fn encode(id: &[u8]) -> String {
    let mut out = String::new();
    for (i, &b) in id.iter().enumerate() {
        let piece = if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (b == b'.' && i > 0) {
            (b as char).to_string()
        } else {
            format!("%{b:02X}")
        };
        if out.len() + piece.len() > NAME_BYTES {
            break;
        }
        out.push_str(&piece);
    }
    out
}

/// The run files: names given once, at most `max_open` open at a time.
///
/// What is kept per run is a few digests, not ids or names, so a million
/// runs cost tens of MB, not hundreds (docs/contract.md §3.2: state bounded in bytes).
/// A name is its run's base name (`base_name`) and the suffix it was
/// given; two 64-bit digests colliding among a million runs has odds
/// near 1 in 10^7. The digests are keyed afresh in every process
/// (`keys`): with fixed keys a pair of ids whose digests collide can be
/// searched for (in minutes on two cores), and put two runs in one file
/// or pass the no-overwrite check.
struct Files {
    dir: PathBuf,
    force: bool,
    /// The inputs: never written over.
    inputs: Vec<FileId>,
    /// What the digests are keyed with: random, this process's own.
    keys: std::hash::RandomState,
    /// The suffix each run's name was given (1: none), by digest of its key.
    names: HashMap<u64, u32>,
    /// Names given, lower-cased, by digest: no two may differ only in case.
    taken: HashSet<u64>,
    /// Files this run created, by digest of the name: reopened for
    /// appending after eviction.
    created: HashSet<u64>,
    /// The name last asked for: most lines go to the run before's file.
    last: Option<(RunKey, String)>,
    open: OpenFiles,
    /// Files closed while their last buffer still waits for the writer:
    /// each holds a descriptor beyond `--max-open`, so past
    /// `writer::CLOSED_WAITING` the writer is waited for.
    closed_waiting: usize,
    writer: Writer,
}

impl Drop for Files {
    /// Whatever ends the command (a failed report, a closed downstream),
    /// every line already read reaches its run's file (docs/contract.md §8.1).
    fn drop(&mut self) {
        let _ = self.close_all();
    }
}

impl Files {
    fn new(opts: &SplitOptions, max_open: usize) -> Result<Files> {
        let writer = Writer::start()
            .map_err(|e| Error::io("starting the thread that writes run files".to_string(), e))?;
        Ok(Files {
            dir: opts.dir.clone(),
            force: opts.force,
            keys: std::hash::RandomState::new(),
            inputs: opts.inputs.clone(),
            names: HashMap::new(),
            taken: HashSet::new(),
            created: HashSet::new(),
            last: None,
            open: OpenFiles::new(max_open),
            closed_waiting: 0,
            writer,
        })
    }

    fn name(&mut self, key: &RunKey) -> &str {
        if self.last.as_ref().is_none_or(|(k, _)| k != key) {
            let base = base_name(key);
            let named = |n: u32| match n {
                1 => format!("{base}.jsonl"),
                n => format!("{base}~{n}.jsonl"),
            };
            let of_key = self.keys.hash_one(key);
            let n = match self.names.get(&of_key) {
                Some(&n) => n,
                None => {
                    let mut n = 1;
                    while !self
                        .taken
                        .insert(self.keys.hash_one(named(n).to_lowercase()))
                    {
                        n += 1;
                    }
                    self.names.insert(of_key, n);
                    n
                }
            };
            self.last = Some((key.clone(), named(n)));
        }
        &self.last.as_ref().expect("set above").1
    }

    fn created(&self, name: &str) -> bool {
        self.created.contains(&self.keys.hash_one(name))
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Append one line to the file of `key`, opening (or creating) it.
    /// `hint`: the checker's slot of the run (`Decision::slot`).
    fn write(&mut self, run: RunRef<'_>, hint: Option<Hint>, line: &[u8]) -> Result<()> {
        // Found by the run's digest, so a line costs no allocation: the
        // name is made only when the file is opened.
        let slot = match self.open.find(run, hint) {
            Some(slot) => slot,
            None => {
                let key = run.to_key();
                let name = self.name(&key).to_string();
                let file = self.open_file(&name)?;
                if let Some((_, w)) = self.open.evict() {
                    self.writer
                        .close(w)
                        .map_err(|(name, e)| self.failed(&name, e))?;
                    self.closed_waiting += 1;
                    if self.closed_waiting >= writer::CLOSED_WAITING {
                        self.writer
                            .sync()
                            .map_err(|(name, e)| self.failed(&name, e))?;
                        self.closed_waiting = 0;
                    }
                }
                self.open
                    .insert(key, name.clone(), RunFile::new(file, name), hint)
            }
        };
        let (_, w) = self.open.at(slot);
        self.writer
            .line(w, line)
            .map_err(|(name, e)| self.failed(&name, e))
    }

    /// The first open creates the file (refusing to overwrite one that is
    /// there, unless --force); later opens append. Links are never followed.
    fn open_file(&mut self, name: &str) -> Result<File> {
        let path = self.path(name);
        let mut oo = OpenOptions::new();
        oo.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
        if self.created(name) {
            return oo
                .append(true)
                .open(&path)
                .map_err(|e| Error::io(format!("reopening {}", path.display()), e));
        }
        if self.force
            && let Ok(own) = fs::symlink_metadata(&path)
            && !own.is_dir()
        {
            // An input is never written over (docs/contract.md §3.3): cli::usage refused
            // one in DIR before anything was written; this holds should
            // one have been linked there since.
            let target = own.is_symlink().then(|| fs::metadata(&path).ok()).flatten();
            if std::iter::once(&own)
                .chain(&target)
                .any(|m| self.inputs.contains(&FileId::of(m)))
            {
                return Err(Error::Usage(format!(
                    "{} is an input: split-by-run never writes over an input (--force or not)",
                    path.display()
                )));
            }
            // Removes a link itself, never what it points to.
            fs::remove_file(&path).map_err(|e| self.failed(name, e))?;
        }
        match oo.write(true).create_new(true).open(&path) {
            Ok(f) => {
                self.created.insert(self.keys.hash_one(name));
                Ok(f)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(Error::CantCreate(format!(
                "{} exists; refusing to overwrite it (use --force)",
                path.display()
            ))),
            Err(e) => Err(Error::CantCreate(format!(
                "cannot create {}: {e}",
                path.display()
            ))),
        }
    }

    fn failed(&self, name: &str, e: io::Error) -> Error {
        Error::io(format!("writing {}", self.path(name).display()), e)
    }

    /// Write out and close every open file: the input they came from is
    /// over.
    fn close_all(&mut self) -> Result<()> {
        let closed = self
            .open
            .drain()
            .try_for_each(|(_, w)| self.writer.close(w));
        closed
            .and_then(|()| self.writer.sync())
            .map_err(|(name, e)| self.failed(&name, e))
    }

    /// Write out what every open file holds, and wait until it is written.
    fn flush(&mut self) -> Result<()> {
        let handed = (self.open.iter_mut()).try_for_each(|(_, w)| self.writer.hand_over(w));
        handed
            .and_then(|()| self.writer.sync())
            .map_err(|(name, e)| self.failed(&name, e))
    }
}

/// The report, with each verdict naming the file that holds the run.
struct WithPaths<'a> {
    report: &'a mut Report,
    files: &'a mut Files,
}

impl Sink for WithPaths<'_> {
    fn finding(&mut self, f: &Finding) -> io::Result<()> {
        self.report.finding(f)
    }

    fn run(&mut self, r: RunVerdict) -> io::Result<()> {
        let r = &r;
        let key = RunRef::of_report(r).to_key();
        let name = self.files.name(&key).to_string();
        // A run whose every line was over-long (never held, so never
        // written) has no file to name.
        let path = self
            .files
            .created(&name)
            .then(|| self.files.path(&name).display().to_string());
        self.report.run_at(r, path.as_deref())
    }
}

impl Consumer for Split {
    fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        report: &mut Report,
    ) -> Result<LineKind> {
        let decided = check.judge(
            line,
            &mut WithPaths {
                report,
                files: &mut self.files,
            },
        )?;
        let seen = decided.kind;
        // Only whole lines are written: a line over --max-line-bytes was
        // never held, and a cut last line is not an event (docs/contract.md
        // §2.1), unless it ends a one-document input, whose final newline
        // is optional (docs/contract.md §6.3).
        let bytes = match *line {
            Line::Complete { bytes, .. } => bytes,
            Line::Unterminated {
                bytes: Some(bytes), ..
            } if decided.closed_a_document() => bytes,
            _ => return Ok(seen),
        };
        let (run, hint) = decided.went();
        if !self.redact {
            return self.files.write(run, hint, bytes).map(|()| seen);
        }
        // --redact: a line that cannot be parsed and holds a secret-looking
        // key is replaced by a placeholder line (docs/contract.md §3.3, as verify
        // --relay --redact), so the run's file keeps its lines one for one.
        match redaction::relay(line, decided.withheld, decided.exposures, &mut self.scratch) {
            redaction::Relay::Withholding(why) => {
                self.files.write(run, hint, &why.placeholder())?
            }
            redaction::Relay::Bytes(bytes, []) => self.files.write(run, hint, bytes)?,
            redaction::Relay::Bytes(bytes, exposures) => {
                self.buf.clear();
                redact(bytes, (0, bytes.len()), None, exposures, &mut self.buf)?;
                self.files.write(run, hint, &self.buf)?;
            }
        }
        Ok(seen)
    }

    fn end_input(&mut self, check: Checker, report: &mut Report) -> Result<()> {
        check.finish(&mut WithPaths {
            report,
            files: &mut self.files,
        })?;
        // Each FILE is a stream of its own: a run id met again in the next
        // one is another run, and gets a file of its own (`run-R~2.jsonl`).
        self.files.names.clear();
        self.files.last = None;
        self.files.close_all()?;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.files.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cli::usage refuses an input among the names split-by-run may write.
    #[test]
    fn every_name_given_is_one_split_may_write() {
        for key in [
            Run::Id(b"R".to_vec().into()),
            Run::Id(b"../x".to_vec().into()),
            Run::FromLine(7),
            Run::Nowhere,
        ] {
            let base = base_name(&key);
            for name in [format!("{base}.jsonl"), format!("{base}~2.jsonl")] {
                assert!(SplitOptions::may_write(name.as_ref()), "{name}");
            }
        }
        assert!(SplitOptions::may_write("RUN-r.JSONL".as_ref()));
        assert!(!SplitOptions::may_write("merged.jsonl".as_ref()));
    }

    #[test]
    fn encoding_keeps_names_inside_the_directory() {
        assert_eq!(encode(b"01JZQ7X4TQ9"), "01JZQ7X4TQ9");
        assert_eq!(encode(b"../../etc/passwd"), "%2E.%2F..%2Fetc%2Fpasswd");
        assert_eq!(encode(b"/abs"), "%2Fabs");
        assert_eq!(encode(b"a\0b\n"), "a%00b%0A");
        assert_eq!(encode(b"."), "%2E");
        assert!(encode(&[b'x'; 10_000]).len() <= NAME_BYTES);
        assert!(encode(&[b'/'; 10_000]).len() <= NAME_BYTES);
    }
}

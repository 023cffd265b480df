//! The followed names: each with its own checker (so the line numbers in
//! its findings and its runs are its own), the file it has open, and the
//! file it drains after a rotation; how a file is told to be another, or
//! the same file written anew.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::state::{HEAD, Saved, State, bytes_at, starts_with};
use crate::check::{Checker, Config, Stalls};
use crate::input::file_id::FileId;
use crate::input::scan::Cutter;

/// One followed name.
pub(super) struct Name<'o> {
    pub label: String,
    pub path: PathBuf,
    pub check: Checker<'o>,
    pub open: Option<Open>,
    pub stalls: Stalls,
    /// The offset in the open file just past the last line judged.
    pub pos: u64,
    /// Lines that end at or before this offset were there already: judged
    /// for their state only.
    pub silent_until: u64,
    /// Reading it failed: said once, and it is no longer read.
    pub failed: bool,
    /// The files it read and let go (rotated away), and how far: a glob
    /// may find one again under its new name.
    pub read_before: Vec<Released>,
    /// A file the name no longer points at (rotated, removed), still read
    /// for `DRAIN` since then: a producer writes on to the file it has
    /// open until it opens the new one. Then closed, so a removed file
    /// holds no descriptor.
    pub draining: Option<(Open, Instant)>,
    pub drain_pos: u64,
    /// What the draining file held already (`--state`: it was rotated
    /// while aoitap was stopped): judged for its state only.
    pub drain_silent: u64,
    /// Why the name could not be opened, once said (said again when the
    /// reason changes).
    pub unopened: Option<io::ErrorKind>,
    /// A file was opened under the name: one missing since is rotated or
    /// removed, not waited for as a name never seen.
    pub seen: bool,
}

pub(super) struct Open {
    pub cutter: Cutter<Upto>,
    pub id: FileId,
}

/// A file a name read and let go: which, how far, and its first bytes (a
/// removed file's inode number is given to the next file created, which
/// must not be taken for it).
#[derive(Clone)]
pub(super) struct Released {
    pub id: FileId,
    pub pos: u64,
    pub head: Vec<u8>,
}

/// A followed file, read no further than `end` when it is set. While a
/// name's old file drains, its new file is read only as far as it went
/// before the old one was read: a producer writes its last lines to the
/// old file while another already writes to the new one, and a run's lines
/// must come in the order they were written, whichever file holds them.
pub(super) struct Upto {
    pub file: File,
    pub end: Option<u64>,
    /// What was read of the file, learnt as it is read.
    pub seen: Seen,
}

/// The bytes a file held where it was read, up to `HEAD` of each: its
/// first bytes (a copytruncate followed by more bytes than were read
/// before the next look leaves the file longer, not shorter, and only its
/// start tells it was written anew), and those just before where reading
/// has got to, with where they end (lines that start alike, a long run id
/// first, leave the head as it was, but rarely these). Both are taken from
/// the bytes as they are read, never read again for it: the file may be
/// written anew between a read and a later look, and what is there then
/// is not what was read.
#[derive(Default)]
pub(super) struct Seen {
    pub head: Vec<u8>,
    pub mark: (u64, Vec<u8>),
}

impl Seen {
    /// Learn `got`, read from `at`.
    fn learn(&mut self, at: u64, got: &[u8]) {
        if self.head.len() as u64 == at && self.head.len() < HEAD {
            let more = (HEAD - self.head.len()).min(got.len());
            self.head.extend_from_slice(&got[..more]);
        }
        let (end, mark) = &mut self.mark;
        if *end != at {
            mark.clear();
        }
        let keep = HEAD.saturating_sub(got.len()).min(mark.len());
        mark.drain(..mark.len() - keep);
        mark.extend_from_slice(&got[got.len().saturating_sub(HEAD)..]);
        *end = at + got.len() as u64;
    }

    /// Whether `file` no longer holds these bytes where they were read
    /// (then it was cut and written again since).
    fn rewritten(&self, file: &File) -> bool {
        let now = bytes_at(file, 0, self.head.len());
        let known = now.len();
        if now[..] != self.head[..known] {
            return true;
        }
        !self.still_before(file, self.mark.0)
    }

    /// Whether `file` still holds, just before `at`, the bytes read there
    /// (when they are known).
    fn still_before(&self, file: &File, at: u64) -> bool {
        let (end, ref was) = self.mark;
        end != at || was.is_empty() || bytes_at(file, end - was.len() as u64, was.len()) == *was
    }
}

impl Upto {
    pub(super) fn new(file: File) -> Upto {
        Upto {
            file,
            end: None,
            seen: Seen::default(),
        }
    }
}

impl io::Read for Upto {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let at = self.file.stream_position()?;
        let room = match self.end {
            Some(end) => end.saturating_sub(at).min(buf.len() as u64) as usize,
            None => buf.len(),
        };
        if room == 0 {
            return Ok(0);
        }
        let got = self.file.read(&mut buf[..room])?;
        // Cut and written anew between the last look and this read: what
        // was read is the new file's, from the wrong place. Not taken; the
        // next look finds the cut and reads from the start.
        if got > 0 && !self.seen.still_before(&self.file, at) {
            self.file.seek(SeekFrom::Start(at))?;
            return Ok(0);
        }
        self.seen.learn(at, &buf[..got]);
        Ok(got)
    }
}

impl Open {
    pub(super) fn new(file: File, id: FileId, max_line: usize) -> Open {
        Open {
            cutter: Cutter::holding_tail(Upto::new(file), max_line),
            id,
        }
    }

    /// Whether the file was cut since it was read (copytruncate): it is
    /// shorter than what was read, or no longer holds the bytes it held
    /// where it was read, at its start or just before where reading had
    /// got to (cut and written longer since).
    pub(super) fn cut(&mut self) -> bool {
        let upto = self.cutter.reader();
        let read_to = upto.file.stream_position().unwrap_or(0);
        let len = upto.file.metadata().map_or(read_to, |m| m.len());
        len < read_to || upto.seen.rewritten(&upto.file)
    }

    /// The file's first bytes as read.
    pub(super) fn head(&self) -> &[u8] {
        &self.cutter.get_ref().seen.head
    }
}

impl<'o> Name<'o> {
    /// Follow `path`, judged by `check`'s rules, its lines cut at
    /// `max_line`; `from_end` and `state` say where reading starts.
    pub(super) fn new(
        check: &'o Config,
        max_line: usize,
        path: PathBuf,
        from_end: bool,
        state: &State,
    ) -> Name<'o> {
        let label = path.to_string_lossy().into_owned();
        let mut name = Name {
            label,
            path,
            check: Checker::new(check),
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
            name.open = Some(Open::new(file, id, max_line));
            name.seen = true;
        }
        // Rotated while aoitap was stopped: the file it was reading, found
        // beside it under its new name, is read on from where it stopped
        // (its runs restored from what it held), then the new file.
        let now = name.open.as_ref().map(|o| o.id);
        // Only a file that still holds what was read of it: a removed
        // file's inode number is given to the next file made.
        if let Some(f) = state.files_of(&name.label).find(|f| Some(f.id) != now)
            && let Some(file) = find_file(&name.path, f.id).filter(|file| f.holds(file))
        {
            let (old, at) = (f.id, f.offset);
            name.draining = Some((Open::new(file, old, max_line), Instant::now()));
            name.drain_silent = at;
        }
        name
    }
}

/// Open `path` if it is a regular file. Opened without blocking, then
/// looked at: a name that became a FIFO between a look and the open would
/// otherwise block every file until a writer came.
pub(super) fn open_regular(path: &Path) -> io::Result<(File, fs::Metadata)> {
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

/// What `Reading::taken` holds for `names`: the files some name reads
/// now (`None`) or read and let go (how far).
pub(super) fn taken(names: &[Name<'_>]) -> HashMap<FileId, Option<Released>> {
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

/// Follow `name` too. A file it would drain that another name reads
/// already (a glob listed the rotated file first) is left to that name:
/// no line is read twice.
pub(super) fn add<'o>(names: &mut Vec<Name<'o>>, mut name: Name<'o>) {
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
    pub(super) fn skip_to(&mut self, read: &Released) {
        let Some(open) = &mut self.open else { return };
        let upto = open.cutter.reader();
        if starts_with(&upto.file, &read.head) && upto.file.seek(SeekFrom::Start(read.pos)).is_ok()
        {
            upto.seen.head = read.head.clone();
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

/// What `--state` keeps of `names`: each open file and each draining one,
/// and where reading stopped in it.
pub(super) fn saved(names: &[Name<'_>]) -> Vec<Saved> {
    names
        .iter()
        .flat_map(|n| {
            let open = n.open.as_ref().map(|o| (o, n.pos));
            let draining = n.draining.as_ref().map(|d| (&d.0, n.drain_pos));
            open.into_iter().chain(draining).map(|(o, offset)| {
                let from = offset.saturating_sub(HEAD as u64);
                let mark = bytes_at(&o.cutter.get_ref().file, from, (offset - from) as usize);
                Saved {
                    label: n.label.clone(),
                    id: o.id,
                    offset,
                    head: o.head().to_vec(),
                    mark,
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::lines::Lines;
    use std::io::Write;

    /// Read what `open` has now, as a look does; the lines' count.
    fn look(open: &mut Open, lines: &mut Lines) -> usize {
        let mut n = 0;
        while let Some(b) = lines.next(&mut open.cutter, None).unwrap() {
            n += b.lines().count();
        }
        n
    }

    fn opened(path: &Path) -> Open {
        let (file, meta) = open_regular(path).unwrap();
        Open::new(file, FileId::of(&meta), 1 << 20)
    }

    #[test]
    fn a_file_cut_and_written_again_is_told_from_one_that_grew() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.log");
        fs::write(&path, "{\"type\":\"aoi:meta\",\"a\":1}\n{\"e\":1}\n").unwrap();
        let mut open = opened(&path);
        let mut lines = Lines::default();
        assert_eq!(look(&mut open, &mut lines), 2);
        assert!(!open.cut());
        // Appended to: the same file, read on.
        fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"e\":2}\n")
            .unwrap();
        assert!(!open.cut());
        assert_eq!(look(&mut open, &mut lines), 1);
        assert!(!open.cut());
        // copytruncate, then a new stream longer than what was read: the
        // length alone cannot tell, the bytes can.
        let f = fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(0).unwrap();
        use std::os::unix::fs::FileExt;
        f.write_all_at(
            b"{\"type\":\"aoi:meta\",\"b\":2}\n{\"f\":1}\n{\"f\":2}\n{\"f\":3}\n",
            0,
        )
        .unwrap();
        assert!(open.cut());
    }

    #[test]
    fn a_file_written_anew_after_it_was_read_is_told_by_the_bytes_read() {
        // The first HEAD bytes are alike; the file is cut and written
        // longer before any second look: only bytes kept as they were read
        // (not read again at the next look) can tell.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.log");
        let id = "S-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let first = format!("{{\"run\":\"{id}-1\",\"n\":1}}\n");
        fs::write(&path, &first).unwrap();
        let mut open = opened(&path);
        let mut lines = Lines::default();
        assert_eq!(look(&mut open, &mut lines), 1);
        let f = fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(0).unwrap();
        use std::os::unix::fs::FileExt;
        let again = format!("{{\"run\":\"{id}-2\",\"n\":1}}\n").repeat(3);
        f.write_all_at(again.as_bytes(), 0).unwrap();
        // Read on from where reading got to, the new bytes there are not
        // taken for the old file's.
        assert_eq!(look(&mut open, &mut lines), 0);
        assert!(open.cut());
    }

    #[test]
    fn a_file_is_read_no_further_than_its_end_mark() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"abcdefgh").unwrap();
        f.rewind().unwrap();
        let mut upto = Upto::new(f);
        upto.end = Some(5);
        let mut out = String::new();
        io::Read::read_to_string(&mut upto, &mut out).unwrap();
        assert_eq!(out, "abcde");
        upto.end = None;
        io::Read::read_to_string(&mut upto, &mut out).unwrap();
        assert_eq!(out, "abcdefgh");
    }

    #[test]
    fn a_rotation_while_stopped_drains_the_old_file_from_where_it_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.log");
        let old = "{\"type\":\"aoi:meta\"}\n{\"e\":1}\n";
        fs::write(&path, old).unwrap();
        let id = FileId::of(&fs::metadata(&path).unwrap());
        let state_path = dir.path().join("state");
        let saved = Saved {
            label: path.to_string_lossy().into_owned(),
            id,
            offset: 20,
            head: old.as_bytes().to_vec(),
            mark: old.as_bytes()[..20].to_vec(),
        };
        State::write(&state_path, &[saved]).unwrap();
        // Rotated while aoitap was stopped: renamed, a new file made.
        fs::rename(&path, dir.path().join("agent.log.1")).unwrap();
        fs::write(&path, "{\"type\":\"aoi:meta\"}\n").unwrap();
        let cfg = Config::default();
        let state = State::load(&state_path);
        let name = Name::new(&cfg, 1 << 20, path.clone(), false, &state);
        let (draining, _) = name.draining.as_ref().expect("the rotated file is drained");
        assert_eq!(draining.id, id);
        assert_eq!(
            name.drain_silent, 20,
            "what was read before the stop is not said again"
        );
        assert_ne!(name.open.as_ref().unwrap().id, id);
        assert_eq!(name.silent_until, 0, "the new file is read from its start");
        // Another name that reads the rotated file already keeps it.
        let mut names = vec![];
        let mut other = Name::new(
            &cfg,
            1 << 20,
            dir.path().join("agent.log.1"),
            false,
            &State::default(),
        );
        other.label = "agent.log.1".into();
        add(&mut names, other);
        add(&mut names, name);
        assert!(names[1].draining.is_none());
        assert_eq!(taken(&names).len(), 2);
    }

    #[test]
    fn a_file_given_a_released_inode_is_read_from_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.log");
        fs::write(&path, "{\"n\":1}\n{\"n\":2}\n").unwrap();
        let cfg = Config::default();
        let mut name = Name::new(&cfg, 1 << 20, path.clone(), false, &State::default());
        let id = name.open.as_ref().unwrap().id;
        name.skip_to(&Released {
            id,
            pos: 8,
            head: b"{\"n\":1}".to_vec(),
        });
        assert_eq!(
            name.pos, 8,
            "the same file: read on from where it was let go"
        );
        let mut name = Name::new(&cfg, 1 << 20, path, false, &State::default());
        name.skip_to(&Released {
            id,
            pos: 8,
            head: b"{\"other\"".to_vec(),
        });
        assert_eq!(name.pos, 0, "another file: from its start");
    }
}

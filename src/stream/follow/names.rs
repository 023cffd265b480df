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
    /// The file's first bytes as read: a copytruncate followed by more
    /// bytes than were read before the next look leaves the file longer,
    /// not shorter, and only its start tells it was written anew.
    pub head: Vec<u8>,
    /// The bytes just before where reading had got to at the last look,
    /// and where they end: lines that start alike (a long run id first)
    /// leave the head as it was, but rarely these.
    pub mark: (u64, Vec<u8>),
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
    pub(super) fn new(file: File, id: FileId, max_line: usize) -> Open {
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
    pub(super) fn rewritten(&mut self) -> bool {
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
                    head: o.head.clone(),
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
        assert!(!open.rewritten());
        // Appended to: the same file, read on.
        fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"e\":2}\n")
            .unwrap();
        assert!(!open.rewritten());
        assert_eq!(look(&mut open, &mut lines), 1);
        assert!(!open.rewritten());
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
        assert!(open.rewritten());
    }

    #[test]
    fn a_file_is_read_no_further_than_its_end_mark() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"abcdefgh").unwrap();
        f.rewind().unwrap();
        let mut upto = Upto {
            file: f,
            end: Some(5),
        };
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

//! `--state FILE` (docs/contract.md §2.3): for each followed file, which
//! file it was (device and inode), the offset just past the last line
//! judged, and the bytes that tell it is still the file read. Written
//! whole or not at all; a state that cannot be read is no state (every
//! file is read from its start), an entry that cannot be read is left out.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::input::file_id::FileId;

/// How many of a file's first bytes tell it was written anew.
pub(super) const HEAD: usize = 64;

/// The state as read at the start.
#[derive(Default, Debug, PartialEq)]
pub(super) struct State {
    files: Vec<Saved>,
}

/// One file of a state: its name, which file, where reading stopped, and
/// the bytes that tell it is still the file read (its first ones, and
/// those just before where reading stopped: lines that start alike leave
/// the first ones as they were when the file is cut and written again).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Saved {
    pub label: String,
    pub id: FileId,
    pub offset: u64,
    pub head: Vec<u8>,
    pub mark: Vec<u8>,
}

/// The file as written: `{"aoitap_follow_state":1,"files":[...]}`, its
/// members in the order they have always been written (sorted).
#[derive(Serialize, Deserialize)]
struct Document {
    #[serde(default)]
    aoitap_follow_state: u32,
    files: Vec<Entry>,
}

/// An entry of `files`; one of another shape is passed over, not the
/// whole state.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Entry {
    File(FileEntry),
    #[serde(skip_serializing)]
    Other(serde::de::IgnoredAny),
}

#[derive(Serialize, Deserialize)]
struct FileEntry {
    dev: u64,
    /// The first bytes, in hex (lower case).
    #[serde(default)]
    head: String,
    ino: u64,
    /// The bytes just before `offset`, in hex.
    #[serde(default)]
    mark: String,
    offset: u64,
    path: String,
}

impl Saved {
    /// Whether `file` still holds what was read of it.
    pub(super) fn holds(&self, file: &File) -> bool {
        let from = self.offset.saturating_sub(self.mark.len() as u64);
        starts_with(file, &self.head) && bytes_at(file, from, self.mark.len()) == self.mark
    }
}

impl State {
    /// The state kept in `path`; none when there is none yet, or it cannot
    /// be read (then every file is read from its start).
    pub(super) fn load(path: &Path) -> State {
        let Ok(text) = fs::read(path) else {
            return State::default();
        };
        State::parse(&text)
    }

    fn parse(text: &[u8]) -> State {
        let Ok(doc) = serde_json::from_slice::<Document>(text) else {
            return State::default();
        };
        let files = doc
            .files
            .into_iter()
            .filter_map(|e| match e {
                Entry::File(f) => Some(Saved {
                    label: f.path,
                    id: FileId {
                        dev: f.dev,
                        ino: f.ino,
                    },
                    offset: f.offset,
                    head: unhex(&f.head).unwrap_or_default(),
                    mark: unhex(&f.mark).unwrap_or_default(),
                }),
                Entry::Other(_) => None,
            })
            .collect();
        State { files }
    }

    /// Where reading stopped in the file `id`, under whichever name it
    /// was read (a rotation may have renamed it since).
    pub(super) fn offset_of(&self, id: FileId) -> Option<&Saved> {
        self.files.iter().find(|f| f.id == id)
    }

    /// The files read under `label` when reading stopped (the one it
    /// names, and one rotated away and still drained), and where each
    /// stopped.
    pub(super) fn files_of<'s>(&'s self, label: &'s str) -> impl Iterator<Item = &'s Saved> + 's {
        self.files.iter().filter(move |f| f.label == label)
    }

    /// The state's text for `files`.
    fn text(files: &[Saved]) -> String {
        let hex = |b: &[u8]| b.iter().map(|b| format!("{b:02x}")).collect::<String>();
        let doc = Document {
            aoitap_follow_state: 1,
            files: files
                .iter()
                .map(|f| {
                    Entry::File(FileEntry {
                        dev: f.id.dev,
                        head: hex(&f.head),
                        ino: f.id.ino,
                        mark: hex(&f.mark),
                        offset: f.offset,
                        path: f.label.clone(),
                    })
                })
                .collect(),
        };
        // Serializing plain strings and numbers cannot fail.
        let mut text = serde_json::to_string(&doc).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Write `files` to `path`, whole or not at all: a new file beside it,
    /// made with a random name and `O_EXCL` (a link planted beside the
    /// state cannot redirect the write), renamed over it. A link at `path`
    /// is followed: its target is the state. A state that cannot be
    /// written only costs the resume: reading goes on.
    pub(super) fn write(path: &Path, files: &[Saved]) -> io::Result<()> {
        let path = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        // Its directory is made, as a cache's is (`~/.cache` may not be
        // there yet on a new machine).
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let _ = fs::create_dir_all(dir);
        let mut tmp = tempfile::Builder::new()
            .prefix(".aoitap-state")
            .tempfile_in(dir)?;
        tmp.write_all(State::text(files).as_bytes())?;
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// Up to `len` bytes of `file` from `at` (fewer where it ends).
pub(super) fn bytes_at(file: &File, at: u64, len: usize) -> Vec<u8> {
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

/// Whether `file` starts with `head`.
pub(super) fn starts_with(file: &File, head: &[u8]) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn saved(label: &str, ino: u64, offset: u64) -> Saved {
        Saved {
            label: label.to_string(),
            id: FileId { dev: 7, ino },
            offset,
            head: b"{\"type\":\"aoi:meta\"".to_vec(),
            mark: vec![0, 0xff, b'\n'],
        }
    }

    #[test]
    fn a_state_written_reads_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache/aoitap.state");
        let files = vec![saved("agent.log", 11, 4096), saved("agent.log", 12, 17)];
        State::write(&path, &files).unwrap();
        let back = State::load(&path);
        assert_eq!(back, State { files });
        assert_eq!(
            back.offset_of(FileId { dev: 7, ino: 12 }).unwrap().offset,
            17
        );
        let of: Vec<_> = back.files_of("agent.log").collect();
        assert_eq!(of.len(), 2);
        let left: Vec<_> = fs::read_dir(dir.path().join("cache")).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left beside the state");
    }

    #[test]
    fn a_link_planted_beside_the_state_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let precious = dir.path().join("precious.txt");
        fs::write(&precious, "precious\n").unwrap();
        let state = dir.path().join("st");
        std::os::unix::fs::symlink(&precious, dir.path().join("st.tmp")).unwrap();
        State::write(&state, &[saved("log", 1, 2)]).unwrap();
        assert_eq!(fs::read_to_string(&precious).unwrap(), "precious\n");
        assert_eq!(State::load(&state).files.len(), 1);
        // A link at the state's own name is followed: its target is the state.
        let target = dir.path().join("real.state");
        let link = dir.path().join("link.state");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        State::write(&target, &[]).unwrap();
        State::write(&link, &[saved("log", 1, 9)]).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(State::load(&target).files[0].offset, 9);
    }

    #[test]
    fn the_text_is_as_it_has_always_been_written() {
        let text = State::text(&[saved("a b.log", 3, 9)]);
        assert_eq!(
            text,
            "{\"aoitap_follow_state\":1,\"files\":[{\"dev\":7,\
             \"head\":\"7b2274797065223a22616f693a6d65746122\",\"ino\":3,\
             \"mark\":\"00ff0a\",\"offset\":9,\"path\":\"a b.log\"}]}\n"
        );
    }

    #[test]
    fn a_broken_state_is_no_state_and_a_broken_entry_is_left_out() {
        assert_eq!(State::parse(b"not json"), State::default());
        assert_eq!(State::parse(b"{\"files\":3}"), State::default());
        let one = State::parse(
            b"{\"aoitap_follow_state\":1,\"files\":[{\"dev\":1},\
              {\"dev\":1,\"ino\":2,\"offset\":5,\"path\":\"x\",\"head\":\"zz\"}]}",
        );
        assert_eq!(one.files.len(), 1);
        assert_eq!(one.files[0].offset, 5);
        assert!(one.files[0].head.is_empty());
    }

    #[test]
    fn a_file_holds_what_was_read_until_it_is_written_anew() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"{\"type\":\"aoi:meta\"}\n{\"a\":1}\n")
            .unwrap();
        let s = Saved {
            label: "x".into(),
            id: FileId { dev: 0, ino: 0 },
            offset: 28,
            head: b"{\"type\":\"aoi:meta\"}".to_vec(),
            mark: b"{\"a\":1}\n".to_vec(),
        };
        assert!(s.holds(&f));
        use std::os::unix::fs::FileExt;
        f.write_all_at(b"{\"type\":\"aoi:meta\"}\n{\"b\":2}\n", 0)
            .unwrap();
        assert!(!s.holds(&f), "same head, other bytes before the offset");
    }
}

//! Files as the system knows them (device and inode), so that a link, or
//! another spelling of a path, is the same file: how a command makes sure
//! it never writes over what it reads (docs/contract.md §3.2, §3.3).

use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A file as the system knows it: a link to it, or another spelling of its
/// path, is the same file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

impl FileId {
    pub fn of(m: &std::fs::Metadata) -> FileId {
        FileId {
            dev: m.dev(),
            ino: m.ino(),
        }
    }
}

/// The same file, as the system sees it (a link or another spelling of the
/// path included).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Is standard input the file at `path` (`--report F < F`)?
/// Is `path` the file standard output writes to? A command that read it
/// would read what it writes, without end.
pub fn stdout_is(path: &Path) -> bool {
    let Ok(file) = std::fs::metadata(path) else {
        return false;
    };
    rustix::fs::fstat(std::io::stdout())
        .is_ok_and(|st| st.st_dev == file.dev() && st.st_ino == file.ino())
}

pub fn stdin_is(path: &Path) -> bool {
    let Ok(file) = std::fs::metadata(path) else {
        return false;
    };
    rustix::fs::fstat(std::io::stdin())
        .is_ok_and(|st| st.st_dev == file.dev() && st.st_ino == file.ino())
}

/// The inputs that are files, as the system knows them, and how to name
/// each: standard input too, when it is read (`< F`).
pub fn input_files(files: &[PathBuf]) -> Vec<(FileId, String)> {
    let mut out: Vec<(FileId, String)> = files
        .iter()
        .filter(|f| f.as_os_str() != "-")
        .filter_map(|f| {
            Some((
                FileId::of(&std::fs::metadata(f).ok()?),
                f.display().to_string(),
            ))
        })
        .collect();
    if (files.is_empty() || files.iter().any(|f| f.as_os_str() == "-"))
        && let Ok(st) = rustix::fs::fstat(std::io::stdin())
        && rustix::fs::FileType::from_raw_mode(st.st_mode).is_file()
    {
        let id = FileId {
            dev: st.st_dev,
            ino: st.st_ino,
        };
        out.push((id, "standard input".to_string()));
    }
    out
}

/// The first file in `dir` whose name `may_write` accepts and that is one
/// of `inputs`, by itself, by a hard link or behind a symbolic link either
/// way: its path and the input's name. Which names a writer gives can
/// depend on input not read yet, so the question is asked of every name it
/// may give, before anything is written (split-by-run, docs/contract.md §3.3).
pub fn input_in_dir<'a>(
    dir: &Path,
    inputs: &'a [(FileId, String)],
    may_write: impl Fn(&OsStr) -> bool,
) -> Option<(PathBuf, &'a str)> {
    if inputs.is_empty() {
        return None;
    }
    // A DIR that is not there yet holds no input.
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        if !may_write(&entry.file_name()) {
            continue;
        }
        let path = entry.path();
        let Ok(own) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let target = own
            .file_type()
            .is_symlink()
            .then(|| std::fs::metadata(&path).ok())
            .flatten();
        for m in std::iter::once(own).chain(target) {
            if let Some((_, name)) = inputs.iter().find(|(id, _)| *id == FileId::of(&m)) {
                return Some((path, name));
            }
        }
    }
    None
}

//! Directory operands (docs/contract.md §2.2): a directory stands for the `*.jsonl`
//! and `*.ndjson` entries below it, recursively, sorted by path, as a
//! shell glob would list them. Links to directories are not followed (no
//! walk can loop). A subdirectory that cannot be read, and a dangling
//! link with those names, is an operand of its own, so opening it says
//! what is wrong. A FIFO, socket or device with those names is passed
//! over, as ripgrep passes over them: opening one waits for a writer
//! that an archive never has (a walk hung on one).

use std::fs;
use std::path::{Path, PathBuf};

/// `operands` with each directory replaced by the stream files below it.
/// A directory that cannot be read, or holds no stream file, stays as it
/// is, so opening it says why (66).
pub fn expand(operands: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut out = Vec::with_capacity(operands.len());
    for p in operands {
        if p.as_os_str() == "-" || !fs::metadata(&p).is_ok_and(|m| m.is_dir()) {
            out.push(p);
            continue;
        }
        let mut found = vec![];
        let _ = walk(&p, &mut found);
        if found.is_empty() {
            out.push(p);
        } else {
            found.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
            out.extend(found);
        }
    }
    out
}

/// The stream entries below `dir`; `false` when `dir` itself cannot be
/// read.
fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> bool {
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    for entry in entries {
        let Ok(entry) = entry else {
            // The listing broke off: the directory is said to be unread.
            found.push(dir.to_path_buf());
            return true;
        };
        let path = entry.path();
        match entry.file_type() {
            // A subdirectory that cannot be read is an operand of its own.
            Ok(kind) if kind.is_dir() && !walk(&path, found) => found.push(path),
            Ok(kind) if kind.is_dir() => {}
            Ok(kind) if is_stream(&path) && !special(kind, &path) => found.push(path),
            Err(_) if is_stream(&path) => found.push(path),
            _ => {}
        }
    }
    true
}

/// A FIFO, socket or device, itself or through a link. The listing's own
/// type is used; only a link costs a `stat` (a walk of 5,000 files made
/// one each).
fn special(kind: fs::FileType, path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let is =
        |t: fs::FileType| t.is_fifo() || t.is_socket() || t.is_block_device() || t.is_char_device();
    if kind.is_symlink() {
        return fs::metadata(path).is_ok_and(|m| is(m.file_type()));
    }
    is(kind)
}

fn is_stream(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e == "jsonl" || e == "ndjson")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_its_stream_files_sorted_and_recursive() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::create_dir_all(d.join("b/deep")).unwrap();
        for f in [
            "z.jsonl",
            "a.ndjson",
            "notes.txt",
            "b/deep/c.jsonl",
            "b/a.jsonl",
        ] {
            fs::write(d.join(f), b"").unwrap();
        }
        std::os::unix::fs::symlink(d.join("b"), d.join("loop")).unwrap();
        // A FIFO is passed over, itself or through a link: opening it
        // would wait for a writer.
        let fifo = d.join("b/pipe.jsonl");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        std::os::unix::fs::symlink(&fifo, d.join("to-pipe.jsonl")).unwrap();
        // A dangling link is an operand, so opening it says what is wrong.
        std::os::unix::fs::symlink(d.join("gone"), d.join("y.jsonl")).unwrap();
        let got = expand(vec![d.to_path_buf(), PathBuf::from("-")]);
        let want: Vec<PathBuf> = [
            "a.ndjson",
            "b/a.jsonl",
            "b/deep/c.jsonl",
            "y.jsonl",
            "z.jsonl",
        ]
        .iter()
        .map(|f| d.join(f))
        .chain([PathBuf::from("-")])
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_file_or_an_empty_directory_stays_as_given() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x.txt");
        fs::write(&f, b"").unwrap();
        let empty = dir.path().join("empty");
        fs::create_dir(&empty).unwrap();
        assert_eq!(expand(vec![f.clone(), empty.clone()]), [f, empty]);
    }
}

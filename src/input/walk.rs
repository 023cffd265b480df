//! Directory operands (DESIGN §14): a directory stands for the `*.jsonl`
//! and `*.ndjson` files below it, recursively, sorted by path, as a shell
//! glob would list them. Links to directories are not followed (no walk
//! can loop); a link to a file is a file.

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
        walk(&p, &mut found);
        if found.is_empty() {
            out.push(p);
        } else {
            found.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
            out.extend(found);
        }
    }
    out
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(&path, found);
        } else if is_stream(&path) && (kind.is_file() || path.is_file()) {
            found.push(path);
        }
    }
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
        let got = expand(vec![d.to_path_buf(), PathBuf::from("-")]);
        let want: Vec<PathBuf> = ["a.ndjson", "b/a.jsonl", "b/deep/c.jsonl", "z.jsonl"]
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

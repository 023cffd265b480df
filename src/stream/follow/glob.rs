//! A quoted glob operand of `--follow`: listed again about every second,
//! so a file that comes to match it is followed from its start.

use std::fs;
use std::path::{Path, PathBuf};

use crate::input::glob::glob_match;

/// `DIR/PATTERN`: the files of DIR whose names match PATTERN.
pub(super) struct Glob {
    dir: PathBuf,
    pattern: Vec<u8>,
    /// As the operand was written, for the names it gives.
    shown: PathBuf,
}

/// The glob an operand is, when its file name holds `*`, `?` or `[` and
/// no file has that name.
pub(super) fn glob_of(p: &Path) -> Option<Glob> {
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
    /// Whether a file named `name` in any directory would match.
    pub(super) fn matches_name(&self, name: &std::ffi::OsStr) -> bool {
        glob_match(&self.pattern, name.as_encoded_bytes())
    }

    /// The regular files that match now, sorted.
    pub(super) fn matches(&self) -> Vec<PathBuf> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_matches_regular_files_only_and_a_real_name_is_no_glob() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in ["b.log", "a.log", "c.txt", "[x].log"] {
            fs::write(d.join(f), "").unwrap();
        }
        fs::create_dir(d.join("sub.log")).unwrap();
        let g = glob_of(&d.join("*.log")).unwrap();
        let names: Vec<_> = g
            .matches()
            .into_iter()
            .map(|p| p.strip_prefix(d).unwrap().to_path_buf())
            .collect();
        assert_eq!(
            names,
            [Path::new("[x].log"), Path::new("a.log"), Path::new("b.log")]
        );
        // A file whose name holds `[` is that file, not a pattern.
        assert!(glob_of(&d.join("[x].log")).is_none());
        assert!(glob_of(&d.join("plain.log")).is_none());
        // Files created later are found at the next listing.
        fs::write(d.join("later.log"), "").unwrap();
        assert_eq!(g.matches().len(), 4);
    }

    #[test]
    fn a_bare_pattern_lists_the_working_directory_and_names_files_as_written() {
        let g = glob_of(Path::new("*.nothing-here")).unwrap();
        assert_eq!(g.dir, Path::new("."));
        assert_eq!(g.shown, Path::new(""));
    }
}

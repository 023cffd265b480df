//! A call's HOME: fresh, empty, and removed with all it holds.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// A fresh HOME: a directory of a random name made with O_EXCL, so a
/// planted directory or link cannot block or redirect it; removed with
/// all it holds when dropped.
pub struct Home(tempfile::TempDir);

impl Home {
    pub fn new() -> io::Result<Home> {
        tempfile::Builder::new()
            .prefix("aoitap-lint-home-")
            .tempdir()
            .map(Home)
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Home {
    /// A directory the tool made unreadable or unwritable (mode 000)
    /// would stop its removal: each one is opened up first (links are
    /// not followed), and the `TempDir` removes the tree after.
    fn drop(&mut self) {
        fn open_up(dir: &Path, depth: usize) {
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for e in entries.flatten() {
                if depth < 64 && e.file_type().is_ok_and(|t| t.is_dir()) {
                    open_up(&e.path(), depth + 1);
                }
            }
        }
        open_up(self.path(), 0);
    }
}

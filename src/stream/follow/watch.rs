//! How the follower waits: inotify on the directories of the followed
//! files wakes it at once when one changes, a signal wakes it, and a nap
//! bounds the wait where neither can.

use std::ffi::OsStr;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};
use rustix::fs::inotify;

use crate::signal::Signals;

/// A followed file holds a descriptor while it is followed, and a glob
/// over a log directory can match thousands: the soft limit (often 1,024)
/// is raised to the hard one, as a follower of many logs needs. Past it, a
/// name that cannot be opened is said (74).
pub(super) fn raise_fd_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        limit.current = limit.maximum;
        let _ = setrlimit(Resource::Nofile, limit);
    }
}

/// inotify on the followed files and their directories, when the system
/// has it: a change to one wakes the reader at once. A directory is
/// watched for names coming and going (a rotation, a file a glob comes to
/// match), a file for what is written to it: another program's writes in
/// the same directory wake no one.
pub(super) struct Watch {
    pub fd: Option<OwnedFd>,
    /// A followed file could not be watched (the system's limit on
    /// watches): it is looked at on the short nap instead.
    pub missed: std::cell::Cell<bool>,
}

impl Watch {
    pub(super) fn new() -> Watch {
        let flags = inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK;
        Watch {
            fd: inotify::init(flags).ok(),
            missed: std::cell::Cell::new(false),
        }
    }

    /// Watch the directory `path` is in for names that come and go
    /// (watching it twice is one watch), and `path` itself, if it is there,
    /// for writes.
    pub(super) fn add(&self, path: &Path) {
        let Some(fd) = &self.fd else { return };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        use inotify::WatchFlags as W;
        let what = W::CREATE | W::MOVED_TO | W::MOVED_FROM | W::DELETE;
        // Not watched (a directory not there yet): the nap still looks.
        let _ = inotify::add_watch(fd, dir, what);
        self.add_file(path);
    }

    /// Watch the file now at `path` for writes, a cut and a change of its
    /// attributes (a watch is of the file, not the name: a rotated file
    /// draining under its new name is still watched).
    pub(super) fn add_file(&self, path: &Path) {
        let Some(fd) = &self.fd else { return };
        use inotify::WatchFlags as W;
        match inotify::add_watch(fd, path, W::MODIFY | W::ATTRIB) {
            Ok(_) => {}
            Err(e) if e == rustix::io::Errno::NOENT => {}
            Err(_) => self.missed.set(true),
        }
    }

    /// Sleep until a change in a watched directory that `relevant` says
    /// is one (by the name of the file it is about), a signal comes, or
    /// `nap` passes. Another program's writes beside the followed files (a
    /// busy log in the same directory) are read and let go without a look
    /// at any file: 1,500 such writes a second cost the follower under 1%
    /// of a core, where looking at every followed file at each cost 17%
    /// (docs/contract.md §8.2, `benches/follow.sh`).
    pub(super) fn wait(&self, signals: &Signals, nap: Duration, relevant: &dyn Fn(&OsStr) -> bool) {
        let Ok(wake) = signals.wake_fd() else {
            std::thread::sleep(nap);
            return;
        };
        let deadline = Instant::now() + nap;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            let mut fds = vec![PollFd::new(&wake, PollFlags::IN)];
            if let Some(fd) = &self.fd {
                fds.push(PollFd::new(fd, PollFlags::IN));
            }
            let timeout = rustix::event::Timespec {
                tv_sec: left.as_secs() as i64,
                tv_nsec: i64::from(left.subsec_nanos()),
            };
            let _ = rustix::event::poll(&mut fds, Some(&timeout));
            let changed = fds.get(1).is_some_and(|f| !f.revents().is_empty());
            // A signal, the nap's end, or no inotify to tell changes apart.
            if !fds[0].revents().is_empty() || !changed {
                return;
            }
            if self.relevant_change(relevant) {
                return;
            }
        }
    }

    /// Read every event waiting; whether one is about a file `relevant`
    /// names (or the events overflowed, or a watched directory went: then
    /// every file is looked at).
    fn relevant_change(&self, relevant: &dyn Fn(&OsStr) -> bool) -> bool {
        let Some(fd) = &self.fd else { return true };
        let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
        let mut events = inotify::Reader::new(fd, &mut buf);
        let mut any = false;
        while let Ok(e) = events.next() {
            let whole = inotify::ReadFlags::QUEUE_OVERFLOW | inotify::ReadFlags::IGNORED;
            any |= e.events().intersects(whole)
                || e.file_name()
                    .is_none_or(|n| relevant(OsStr::from_bytes(n.to_bytes())));
        }
        any
    }
}

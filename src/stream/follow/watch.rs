//! How the follower waits: inotify on the directories of the followed
//! files wakes it at once when one changes, a signal wakes it, and a nap
//! bounds the wait where neither can.

use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::time::Duration;

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

/// inotify on the directories of the followed files, when the system has
/// it: a change there wakes the reader at once.
pub(super) struct Watch {
    pub fd: Option<OwnedFd>,
}

impl Watch {
    pub(super) fn new() -> Watch {
        let flags = inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK;
        Watch {
            fd: inotify::init(flags).ok(),
        }
    }

    /// Watch the directory `path` is in (a rename, a creation and a write
    /// there are all seen; watching it twice is one watch).
    pub(super) fn add(&self, path: &Path) {
        let Some(fd) = &self.fd else { return };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        use inotify::WatchFlags as W;
        let what = W::MODIFY | W::CREATE | W::MOVED_TO | W::MOVED_FROM | W::DELETE | W::ATTRIB;
        // Not watched (a directory not there yet): the nap still looks.
        let _ = inotify::add_watch(fd, dir, what);
    }

    /// Sleep until a watched directory changes, a signal comes, or `nap`
    /// passes.
    pub(super) fn wait(&self, signals: &Signals, nap: Duration) {
        let Ok(wake) = signals.wake_fd() else {
            std::thread::sleep(nap);
            return;
        };
        let mut fds = vec![rustix::event::PollFd::new(
            &wake,
            rustix::event::PollFlags::IN,
        )];
        if let Some(fd) = &self.fd {
            fds.push(rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN));
        }
        let timeout = rustix::event::Timespec {
            tv_sec: nap.as_secs() as i64,
            tv_nsec: i64::from(nap.subsec_nanos()),
        };
        let _ = rustix::event::poll(&mut fds, Some(&timeout));
        // What woke us is read and dropped: every file is looked at anyway.
        if let Some(fd) = &self.fd {
            let mut buf = [0u8; 4096];
            while rustix::io::read(fd.as_fd(), &mut buf).is_ok_and(|n| n > 0) {}
        }
    }
}

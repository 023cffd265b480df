//! SIGINT and SIGTERM (spec §7): the first stops reading, so the run so far
//! is reported and a `reason:"cancelled"` summary is written; a second
//! request exits at once with the conventional status. `run` catches SIGHUP
//! the same way (docs/contract.md §3.3): a closed terminal must not leave CMD running.
//!
//! A signal delivered twice is one request (docs/contract.md §3.4): GNU `timeout`
//! signals its child and then its own process group, which holds the
//! child, and a terminal's Ctrl-C reaches every process of a pipeline that
//! shares the group. The same signal again within `SAME_REQUEST` of the
//! first is that request again and changes nothing; only the same signal
//! later, or another one of those caught, is a second request.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::{flag, low_level::pipe};

use crate::exit::Exit;

/// Set by the first SIGINT, SIGTERM or SIGHUP caught, for code that has
/// no `Signals` at hand: a filter program busy on one event looks at it at
/// each step of its loops, and ends there (docs/contract.md §3.4).
static REQUESTED: LazyLock<Arc<AtomicBool>> = LazyLock::new(Arc::default);

/// Whether a signal to stop has come.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

pub struct Signals {
    flags: Caught,
    /// Readable once a signal came: lets a blocked poll wake up.
    wake: UnixStream,
}

impl Signals {
    /// `second_exits`: a second request ends the process at once, with the
    /// conventional status (off for `run` and `lint`, which must stop
    /// their command's group first). `hangup`: SIGHUP is caught too, else
    /// it keeps its default action.
    pub fn install(second_exits: bool, hangup: bool) -> io::Result<Signals> {
        let (wake, notify) = UnixStream::pair()?;
        notify.set_nonblocking(true)?;
        let flags = Caught {
            int: Arc::default(),
            term: Arc::default(),
            hup: Arc::default(),
            requests: Arc::default(),
        };
        let mut caught = vec![
            (SIGINT, Exit::Interrupted, &flags.int),
            (SIGTERM, Exit::Terminated, &flags.term),
        ];
        if hangup {
            caught.push((SIGHUP, Exit::HungUp, &flags.hup));
        }
        let mut watched = Vec::with_capacity(caught.len());
        for (sig, status, seen) in caught {
            flag::register(sig, Arc::clone(seen))?;
            flag::register(sig, Arc::clone(&REQUESTED))?;
            pipe::register(sig, notify.try_clone()?)?;
            // A socket of its own per signal, so the watcher knows which
            // one came, and when.
            let (rx, tx) = UnixStream::pair()?;
            tx.set_nonblocking(true)?;
            rx.set_nonblocking(true)?;
            pipe::register(sig, tx)?;
            watched.push((rx, status));
        }
        let watcher = Watcher {
            flags: flags.clone(),
            watched,
            second_exits,
        };
        std::thread::Builder::new()
            .name("signal-watch".into())
            .spawn(move || watcher.watch())?;
        Ok(Signals { flags, wake })
    }

    /// The exit status for a signal received, if any.
    pub fn caught(&self) -> Option<Exit> {
        self.flags.caught()
    }

    /// Catch these too, as SIGTERM (`lint`: any signal that would end it
    /// must first stop its call, so nothing it started is left running).
    pub fn also_as_term(&self, sigs: &[i32]) -> io::Result<()> {
        for &sig in sigs {
            flag::register(sig, Arc::clone(&self.flags.term))?;
            flag::register(sig, Arc::clone(&REQUESTED))?;
        }
        Ok(())
    }

    /// The flags alone, to look at from anywhere (`run` waits with them).
    pub fn flags(&self) -> Caught {
        self.flags.clone()
    }

    /// Sleep for `d`, or until a signal comes; true if one came.
    pub fn sleep(&self, d: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + d;
        while self.caught().is_none() {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return false;
            }
            let ms = left.as_millis().clamp(1, 1000) as i32;
            let mut fds = [rustix::event::PollFd::new(
                &self.wake,
                rustix::event::PollFlags::IN,
            )];
            let timeout = rustix::event::Timespec {
                tv_sec: i64::from(ms / 1000),
                tv_nsec: i64::from(ms % 1000) * 1_000_000,
            };
            let _ = rustix::event::poll(&mut fds, Some(&timeout));
        }
        true
    }

    /// A descriptor that becomes readable when a signal comes.
    pub fn wake_fd(&self) -> io::Result<OwnedFd> {
        self.wake.as_fd().try_clone_to_owned()
    }
}

/// Which signal came, readable without the `Signals` it came from. The
/// default is set by no handler, so none ever comes: for judging in
/// process, where the signals are the process's own (`stream::paths`).
#[derive(Clone, Default)]
pub struct Caught {
    int: Arc<AtomicBool>,
    term: Arc<AtomicBool>,
    hup: Arc<AtomicBool>,
    /// Requests made so far: deliveries, less those that repeated the
    /// first within `SAME_REQUEST`.
    requests: Arc<AtomicUsize>,
}

impl Caught {
    /// The exit status for a signal received, if any.
    pub fn caught(&self) -> Option<Exit> {
        if self.int.load(Ordering::Relaxed) {
            Some(Exit::Interrupted)
        } else if self.term.load(Ordering::Relaxed) {
            Some(Exit::Terminated)
        } else if self.hup.load(Ordering::Relaxed) {
            Some(Exit::HungUp)
        } else {
            None
        }
    }

    /// How many requests to stop have come (`run`: a second one while CMD
    /// is awaited kills its group at once).
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::Acquire)
    }
}

/// The same signal again within this long of the first is the same
/// request (docs/contract.md §3.4): `timeout`'s second delivery follows its first at
/// once, and a person who means "now" presses Ctrl-C again later than this.
const SAME_REQUEST: Duration = Duration::from_secs(1);

/// How long the first request's orderly stop may take before aoitap exits
/// without it.
const GRACE: Duration = Duration::from_secs(2);

/// The thread that tells one request from two, and that ends the process
/// on a second request or when the first one's stop takes too long.
struct Watcher {
    flags: Caught,
    /// A socket per caught signal, readable when it came, and the status
    /// that ends the process for it.
    watched: Vec<(UnixStream, Exit)>,
    second_exits: bool,
}

impl Watcher {
    fn watch(self) {
        // The first request: which signal made it, and when.
        let mut first: Option<(usize, Instant)> = None;
        loop {
            let deadline = first
                .filter(|_| self.second_exits)
                .map(|(_, at)| at + GRACE);
            if !self.wait(deadline) {
                // The first request's stop took longer than GRACE: a
                // write to a reader that stopped reading, or a validation
                // that will not end, blocks where no flag is looked at. A
                // signal is never ignored; nothing is written then, as the
                // output that blocked would block again.
                let exit = self.flags.caught().unwrap_or(Exit::Terminated);
                std::process::exit(exit.code().into());
            }
            let now = Instant::now();
            for (k, (rx, status)) in self.watched.iter().enumerate() {
                for _ in 0..drain(rx) {
                    match first {
                        None => first = Some((k, now)),
                        Some((sig, at)) if sig == k && now - at <= SAME_REQUEST => continue,
                        Some(_) => {
                            if self.second_exits {
                                std::process::exit(status.code().into());
                            }
                        }
                    }
                    self.flags.requests.fetch_add(1, Ordering::AcqRel);
                }
            }
        }
    }

    /// Wait until a signal comes (true) or `deadline` passes (false).
    fn wait(&self, deadline: Option<Instant>) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        loop {
            let timeout = deadline.map(|d| {
                let left = d.saturating_duration_since(Instant::now());
                Timespec {
                    tv_sec: left.as_secs() as i64,
                    tv_nsec: i64::from(left.subsec_nanos()),
                }
            });
            if timeout.is_some_and(|t| t.tv_sec == 0 && t.tv_nsec == 0) {
                return false;
            }
            let mut fds: Vec<PollFd> = self
                .watched
                .iter()
                .map(|(rx, _)| PollFd::new(rx, PollFlags::IN))
                .collect();
            match poll(&mut fds, timeout.as_ref()) {
                Ok(0) => return false,
                Ok(_) => return true,
                // EINTR: the signal itself interrupted the poll; look again.
                Err(_) => continue,
            }
        }
    }
}

/// Read what a signal's socket holds: one byte per delivery (the pipe
/// handler writes one, or none when the socket is full, which only a
/// flood of one signal can do, and a flood is still one signal).
fn drain(rx: &UnixStream) -> usize {
    use std::io::Read as _;
    let mut n = 0;
    let mut buf = [0u8; 64];
    while let Ok(got) = (&*rx).read(&mut buf) {
        if got == 0 {
            break;
        }
        n += got;
    }
    n
}

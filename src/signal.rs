//! SIGINT and SIGTERM (spec §7): the first stops reading, so the run so far
//! is reported and a `reason:"cancelled"` summary is written; a second one
//! exits at once with the conventional status. `run` catches SIGHUP the
//! same way (DESIGN §13): a closed terminal must not leave CMD running.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::{flag, low_level::pipe};

use crate::exit::Exit;

pub struct Signals {
    flags: Caught,
    /// Readable once a signal came: lets a blocked poll wake up.
    wake: UnixStream,
}

impl Signals {
    /// `second_exits`: a second signal ends the process at once, with the
    /// conventional status (off for `run`, which must stop its command's
    /// group first). `hangup`: SIGHUP is caught too (run), else it keeps
    /// its default action.
    pub fn install(second_exits: bool, hangup: bool) -> io::Result<Signals> {
        let (wake, notify) = UnixStream::pair()?;
        notify.set_nonblocking(true)?;
        let any = Arc::new(AtomicBool::new(false));
        let int = Arc::new(AtomicBool::new(false));
        let term = Arc::new(AtomicBool::new(false));
        let hup = Arc::new(AtomicBool::new(false));
        let mut caught = vec![
            (SIGINT, Exit::Interrupted, &int),
            (SIGTERM, Exit::Terminated, &term),
        ];
        if hangup {
            caught.push((SIGHUP, Exit::HungUp, &hup));
        }
        let sigs: Vec<i32> = caught.iter().map(|c| c.0).collect();
        for (sig, status, seen) in caught {
            // Registered first, so it sees `any` as it was before this
            // signal: only a second signal exits here.
            if second_exits {
                flag::register_conditional_shutdown(sig, status.code().into(), Arc::clone(&any))?;
            }
            flag::register(sig, Arc::clone(&any))?;
            flag::register(sig, Arc::clone(seen))?;
            pipe::register(sig, notify.try_clone()?)?;
        }
        let flags = Caught { int, term, hup };
        if second_exits {
            watchdog(flags.clone(), &sigs)?;
        }
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

/// Which signal came, readable without the `Signals` it came from.
#[derive(Clone)]
pub struct Caught {
    int: Arc<AtomicBool>,
    term: Arc<AtomicBool>,
    hup: Arc<AtomicBool>,
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
}

/// How long the first signal's orderly stop may take before aoitap exits
/// without it.
const GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// The first signal stops reading and ends the report; but a write to a
/// reader that has stopped reading (or a schema validation that will not
/// end) blocks where no flag is looked at. A thread of its own waits for
/// the first signal and, `GRACE` later, ends the process with the signal's
/// status: a signal is never ignored. Nothing is written then: the output
/// that blocked would block again.
fn watchdog(flags: Caught, sigs: &[i32]) -> io::Result<()> {
    use std::io::Read as _;
    let (mut rx, tx) = UnixStream::pair()?;
    tx.set_nonblocking(true)?;
    for &sig in sigs {
        pipe::register(sig, tx.try_clone()?)?;
    }
    std::thread::Builder::new()
        .name("signal-watchdog".into())
        .spawn(move || {
            let mut byte = [0u8; 1];
            if rx.read(&mut byte).is_ok_and(|n| n == 1) {
                std::thread::sleep(GRACE);
                let exit = flags.caught().unwrap_or(Exit::Terminated);
                std::process::exit(exit.code().into());
            }
        })?;
    Ok(())
}

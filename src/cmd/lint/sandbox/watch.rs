//! A call watched while it runs: both outputs read with `poll` until they
//! close, `then` done once the first line has come, and the deadline and
//! lint's signals kept.

use std::fs::File;
use std::io::{self, Read};
use std::process::{Child, ChildStderr};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Pid, Signal, kill_process_group};

use super::call::{Call, Ran, Then, keep_stderr};
use super::reaper::interrupted;
use super::spool::spool;

/// How long a command's outputs are read after it has exited.
const EXIT_GRACE: Duration = Duration::from_millis(250);

/// Read both outputs until they close and the command has exited, or the
/// deadline passes, or lint is interrupted (then the group is killed).
pub(super) fn watch(
    child: &mut Child,
    group: Pid,
    mut out: Option<File>,
    mut err: Option<ChildStderr>,
    c: &Call<'_>,
    ran: &mut Ran,
) {
    let deadline = Instant::now() + c.timeout;
    let mut then = c.then;
    let mut buf = vec![0u8; 64 * 1024];
    let needle = c.watch_for.unwrap_or_default();
    // The end of the last read of each, so a needle cut by a read is seen.
    let (mut out_carry, mut err_carry) = (vec![], vec![]);
    let mut line_seen = false;
    // When the command has exited, what it started may hold its outputs
    // open for ever (a daemon): they are read for a grace period more.
    let mut exited: Option<Instant> = None;
    let stop = |ran: &mut Ran, why_timeout: bool| {
        if why_timeout {
            ran.timed_out = true;
        } else {
            ran.cancelled = true;
        }
        let _ = kill_process_group(group, Signal::KILL);
    };
    while out.is_some() || err.is_some() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            stop(ran, true);
            break;
        }
        if interrupted() {
            stop(ran, false);
            break;
        }
        match exited {
            Some(at) if at.elapsed() > EXIT_GRACE => break,
            None if matches!(child.try_wait(), Ok(Some(_))) => exited = Some(Instant::now()),
            _ => {}
        }
        let mut fds = vec![];
        if let Some(o) = &out {
            fds.push(PollFd::new(o, PollFlags::IN));
        }
        if let Some(e) = &err {
            fds.push(PollFd::new(e, PollFlags::IN));
        }
        let wait = Timespec::try_from(left.min(Duration::from_millis(100))).ok();
        if poll(&mut fds, wait.as_ref()).is_err() {
            continue;
        }
        let ready: Vec<bool> = fds.iter().map(|f| !f.revents().is_empty()).collect();
        drop(fds);
        let mut k = 0;
        if out.is_some() {
            if ready[k] {
                match out.as_mut().map(|o| o.read(&mut buf)) {
                    Some(Ok(n)) if n > 0 => {
                        let chunk = &buf[..n];
                        ran.seen_on_stdout |= seen(&mut out_carry, chunk, needle);
                        if !spool(&mut ran.stdout, chunk) {
                            let _ = kill_process_group(group, Signal::KILL);
                            break;
                        }
                        if !line_seen && memchr::memchr(b'\n', chunk).is_some() {
                            line_seen = true;
                            if then != Then::Nothing {
                                ran.acted = matches!(child.try_wait(), Ok(None));
                                match then {
                                    Then::Close => out = None,
                                    Then::Signal(s) => {
                                        let _ = kill_process_group(group, s);
                                    }
                                    Then::Nothing => {}
                                }
                                then = Then::Nothing;
                            }
                        }
                    }
                    Some(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                    _ => out = None,
                }
            }
            k += 1;
        }
        if err.is_some() && ready[k] {
            match err.as_mut().map(|e| e.read(&mut buf)) {
                Some(Ok(n)) if n > 0 => {
                    let chunk = &buf[..n];
                    ran.seen_on_stderr |= seen(&mut err_carry, chunk, needle);
                    ran.stderr_bytes += n as u64;
                    keep_stderr(ran, chunk);
                }
                Some(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                _ => err = None,
            }
        }
    }
    // The outputs are closed (or given up on): wait for the exit, within
    // what is left of the deadline.
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                ran.status = Some(status);
                return;
            }
            Ok(None) if ran.timed_out || ran.cancelled || ran.stdout.overflowed => {
                let _ = kill_process_group(group, Signal::KILL);
                let _ = child.wait();
                return;
            }
            Ok(None) if Instant::now() >= deadline => stop(ran, true),
            Ok(None) if interrupted() => stop(ran, false),
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => return,
        }
    }
}

/// Whether `needle` ends in `chunk`, or across the carry and `chunk`;
/// the carry becomes the chunk's last `needle.len() - 1` bytes.
fn seen(carry: &mut Vec<u8>, chunk: &[u8], needle: &[u8]) -> bool {
    if needle.is_empty() {
        return false;
    }
    carry.extend_from_slice(chunk);
    let found = memchr::memmem::find(carry, needle).is_some();
    let keep = needle.len() - 1;
    let cut = carry.len().saturating_sub(keep);
    carry.drain(..cut);
    found
}

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
    while out.is_some() || err.is_some() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            stop(ran, group, true);
            break;
        }
        if interrupted() {
            stop(ran, group, false);
            break;
        }
        match exited {
            Some(at) if at.elapsed() > EXIT_GRACE => break,
            None if matches!(child.try_wait(), Ok(Some(_))) => exited = Some(Instant::now()),
            _ => {}
        }
        let Some((out_ready, err_ready)) = ready(out.as_ref(), err.as_ref(), left) else {
            continue;
        };
        if out_ready {
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
                        if act(then, child, group, ran) {
                            out = None;
                        }
                        then = Then::Nothing;
                    }
                }
                Some(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                _ => out = None,
            }
        }
        if err_ready {
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
    reap(child, group, ran, deadline);
}

/// Kill the group: its deadline passed (`timed_out`), or lint was
/// interrupted.
fn stop(ran: &mut Ran, group: Pid, timed_out: bool) {
    if timed_out {
        ran.timed_out = true;
    } else {
        ran.cancelled = true;
    }
    let _ = kill_process_group(group, Signal::KILL);
}

/// Which of the outputs still open can be read, waiting at most `left`
/// (and a tenth of a second, so the deadline and signals are looked at);
/// `None` when `poll` failed, to be tried again.
fn ready(out: Option<&File>, err: Option<&ChildStderr>, left: Duration) -> Option<(bool, bool)> {
    let mut fds = vec![];
    if let Some(o) = out {
        fds.push(PollFd::new(o, PollFlags::IN));
    }
    if let Some(e) = err {
        fds.push(PollFd::new(e, PollFlags::IN));
    }
    let wait = Timespec::try_from(left.min(Duration::from_millis(100))).ok();
    poll(&mut fds, wait.as_ref()).ok()?;
    let mut ready = fds.iter().map(|f| !f.revents().is_empty());
    let out_ready = out.is_some() && ready.next() == Some(true);
    let err_ready = err.is_some() && ready.next() == Some(true);
    Some((out_ready, err_ready))
}

/// The first line has come: do `then`, noting whether the command still
/// ran to see it. Whether stdout is to be closed.
fn act(then: Then, child: &mut Child, group: Pid, ran: &mut Ran) -> bool {
    if then == Then::Nothing {
        return false;
    }
    ran.acted = matches!(child.try_wait(), Ok(None));
    match then {
        Then::Close => true,
        Then::Signal(s) => {
            let _ = kill_process_group(group, s);
            false
        }
        Then::Nothing => false,
    }
}

/// The outputs are closed (or given up on): wait for the exit, within
/// what is left of the deadline.
fn reap(child: &mut Child, group: Pid, ran: &mut Ran, deadline: Instant) {
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
            Ok(None) if Instant::now() >= deadline => stop(ran, group, true),
            Ok(None) if interrupted() => stop(ran, group, false),
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

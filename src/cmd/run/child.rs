//! CMD as a child: started in a process group of its own, and watched by
//! a thread that owns it, which stops the whole group at `--timeout` or
//! on a signal aoitap got (SIGTERM, then SIGKILL after `--kill-after`), so
//! no grandchild outlives it, and says how CMD ended.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};

use crate::check::Captured;
use crate::exit::Exit;
use crate::signal::{Caught, Signals};

/// CMD, running.
pub struct Running {
    group: Pid,
    /// Tells the watcher that reading ended, and how.
    told: Sender<Told>,
    /// The watcher's answer: how CMD ended.
    ended: Receiver<Status>,
    /// What CMD writes on stderr, when it is kept (`tee_stderr`), and
    /// word that it ended.
    stderr: Option<(Arc<Mutex<Captured>>, Receiver<()>)>,
}

/// What the reading side tells the watcher once CMD's output stops.
enum Told {
    /// Its stdout ended (EOF, or the watcher stopped the reading).
    Read,
    /// aoitap got a signal: pass it on.
    Cancel(Signal),
    /// aoitap got a second one: no more waiting.
    Kill,
}

/// How CMD ended, as its watcher saw it.
pub struct Status {
    pub status: std::process::ExitStatus,
    /// The start of its stderr, when it was kept.
    pub stderr: Option<Captured>,
    pub timed_out: bool,
    /// CMD exited, and something it left kept its stdout open past
    /// `--kill-after`: the rest was not read.
    pub held_open: bool,
    pub elapsed_ms: u64,
}

impl Status {
    /// The watcher vanished (it cannot): reported as a kill.
    fn lost() -> Status {
        Status {
            status: std::process::ExitStatus::from_raw(9),
            stderr: None,
            timed_out: false,
            held_open: false,
            elapsed_ms: 0,
        }
    }
}

impl Running {
    /// How CMD ended, from its watcher, once reading has stopped: on a
    /// signal to aoitap, the watcher passes it on to the group first.
    pub fn end(
        self,
        caught: Option<Exit>,
        flags: Option<&Caught>,
        signals: &mut SignalCount,
    ) -> Status {
        let told = match caught {
            Some(exit) => Told::Cancel(signal_for(exit)),
            None => Told::Read,
        };
        let mut passed_on = matches!(told, Told::Cancel(_));
        let _ = self.told.send(told);
        loop {
            match self.ended.recv_timeout(Duration::from_millis(20)) {
                Ok(mut status) => {
                    // CMD is gone, and with it (unless it left something
                    // holding stderr) the last writer: the keeper ends.
                    status.stderr = self.stderr.map(|(kept, done)| {
                        let _ = done.recv_timeout(STDERR_GRACE);
                        std::mem::take(&mut *kept.lock().unwrap_or_else(|e| e.into_inner()))
                    });
                    return status;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // The watcher cannot be gone without an answer; if it
                    // is, nothing of the group may stay.
                    let _ = kill_process_group(self.group, Signal::KILL);
                    return Status::lost();
                }
                Err(RecvTimeoutError::Timeout) => {
                    // A signal while waiting (after EOF): pass it on; a
                    // second one: kill the group now.
                    let now = flags.and_then(Caught::caught);
                    if caught.is_none()
                        && !passed_on
                        && let Some(exit) = now
                    {
                        let _ = self.told.send(Told::Cancel(signal_for(exit)));
                        passed_on = true;
                    }
                    if signals.seen() >= 2 {
                        let _ = self.told.send(Told::Kill);
                    }
                }
            }
        }
    }

    /// aoitap is ending: the watcher, told nothing more, kills the group
    /// and reaps it; wait for it, so nothing of ours is left running.
    pub fn stop(self) {
        drop(self.told);
        let _ = self.ended.recv();
    }
}

/// How long, once CMD has ended, its stderr may stay open (held by
/// something it left) before what was kept of it is taken as all.
const STDERR_GRACE: Duration = Duration::from_millis(500);

/// Start CMD in a process group of its own, its stdout piped, and its
/// watcher (`watch`); returns it, its stdout, and the reader's end of the
/// socket the watcher wakes it with. With `keep_stderr`, CMD's stderr is
/// passed through as ever, and its first `keep_stderr` bytes are kept.
pub fn spawn(
    command: &[OsString],
    limits: Limits,
    keep_stderr: Option<usize>,
    flags: Option<Caught>,
) -> io::Result<(Running, File, OwnedFd)> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no command"))?;
    let mut cmd = Command::new(program);
    cmd.args(args).stdout(Stdio::piped()).process_group(0);
    if keep_stderr.is_some() {
        cmd.stderr(Stdio::piped());
    }
    let mut child = cmd.spawn()?;
    let group = Pid::from_child(&child);
    let stdout = child.stdout.take().expect("stdout was piped");
    let stderr = match (keep_stderr, child.stderr.take()) {
        (Some(limit), Some(pipe)) => {
            let kept = Arc::new(Mutex::new(Captured::default()));
            let (ends, done) = channel();
            let keeper = Arc::clone(&kept);
            std::thread::spawn(move || {
                tee_stderr(pipe, limit, &keeper);
                let _ = ends.send(());
            });
            Some((kept, done))
        }
        _ => None,
    };
    let (told, hear) = channel();
    let (answer, ended) = channel();
    let (wake, woken) = UnixStream::pair()?;
    std::thread::spawn(move || watch(child, group, limits, flags, &hear, &wake, &answer));
    let running = Running {
        group,
        told,
        ended,
        stderr,
    };
    Ok((
        running,
        File::from(OwnedFd::from(stdout)),
        OwnedFd::from(woken),
    ))
}

/// CMD's stderr, passed on to aoitap's as it comes, its first `limit`
/// bytes kept. It is read to its end whatever becomes of aoitap's stderr,
/// so CMD never blocks on a full pipe.
fn tee_stderr(mut pipe: impl Read, limit: usize, kept: &Mutex<Captured>) {
    let mut passing = true;
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        {
            let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
            let room = limit.saturating_sub(kept.head.len()).min(n);
            kept.head.extend_from_slice(&buf[..room]);
            kept.total += n as u64;
        }
        passing = passing && io::stderr().write_all(&buf[..n]).is_ok();
    }
}

/// The requests to stop aoitap has had (a signal delivered twice at once
/// is one request: docs/contract.md §3.4).
#[derive(Default)]
pub struct SignalCount {
    flags: Option<Caught>,
}

impl SignalCount {
    /// Count `signals`' requests.
    pub fn watch(&mut self, signals: &Signals) {
        if self.flags.is_none() {
            self.flags = Some(signals.flags());
        }
    }

    /// Requests aoitap has had.
    pub fn seen(&mut self) -> usize {
        self.flags.as_ref().map_or(0, Caught::requests)
    }
}

/// How long an attempt may take.
#[derive(Clone, Copy)]
pub struct Limits {
    pub timeout: Option<Duration>,
    pub kill_after: Duration,
}

/// One attempt's watcher: it owns CMD. It stops the group at
/// `--timeout` (SIGTERM, SIGKILL after `--kill-after`); passes on a
/// signal aoitap got as soon as it comes (`flags`), while CMD's stdout
/// is still read, so a tool that ends its stream on it (a cancelled
/// summary) is heard whole and never meets a closed pipe (then SIGKILL
/// after `--kill-after`, to whatever of the group is left, the leader
/// gone or not; at once on a second request); and once CMD has exited,
/// waits at most `--kill-after` for its output to end, then wakes the
/// reader (`wake`): a process that CMD left behind holding its stdout
/// (a daemon) does not hold aoitap.
fn watch(
    mut child: Child,
    group: Pid,
    limits: Limits,
    flags: Option<Caught>,
    told: &Receiver<Told>,
    wake: &UnixStream,
    answer: &Sender<Status>,
) {
    let started = Instant::now();
    let mut timed_out = false;
    let mut group = Group::new(group, limits.kill_after);
    let mut read_done = false;
    let mut exited: Option<(std::process::ExitStatus, Duration)> = None;
    let mut drain_until: Option<Instant> = None;
    loop {
        let heard = told.recv_timeout(Duration::from_millis(10));
        group.pass_on(&heard, flags.as_ref());
        match heard {
            Ok(Told::Read | Told::Cancel(_)) => read_done = true,
            Ok(Told::Kill) => {
                read_done = true;
                group.cancelled = true;
                group.kill();
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                // aoitap is ending: leave nothing behind.
                group.signal(Signal::KILL);
                let _ = child.wait();
                return;
            }
        }
        if exited.is_none()
            && let Ok(Some(status)) = child.try_wait()
        {
            exited = Some((status, started.elapsed()));
            drain_until = Some(Instant::now() + limits.kill_after);
        }
        if let Some(limit) = limits.timeout
            && !timed_out
            && exited.is_none()
            && started.elapsed() >= limit
        {
            timed_out = true;
            group.ask(Signal::TERM);
        }
        if group.kill_at.is_some_and(|at| Instant::now() >= at) {
            // The leader gone or not, whatever is left of the group goes.
            group.kill();
        }
        let group_gone = test_kill_process_group(group.pid).is_err();
        if let Some((status, took)) = exited {
            let drained = read_done || drain_until.is_some_and(|t| Instant::now() >= t);
            // Stopped by us: the group must be gone (or killed) before
            // the answer, so no orphan outlives the report.
            let settled = !(timed_out || group.cancelled) || group_gone || group.kill_at.is_none();
            if !read_done && drained {
                let _ = (&*wake).write_all(b"x");
            }
            if drained && settled && read_done {
                let _ = answer.send(Status {
                    status,
                    stderr: None,
                    timed_out,
                    held_open: drain_until.is_some_and(|t| Instant::now() >= t),
                    elapsed_ms: took.as_millis() as u64,
                });
                return;
            }
        }
    }
}

/// CMD's process group, and how far the watcher has asked it to stop.
struct Group {
    pid: Pid,
    kill_after: Duration,
    /// When the group was last asked to stop, and when it will be killed.
    kill_at: Option<Instant>,
    /// A signal was passed on, or the reader asked for the group to go.
    cancelled: bool,
    /// A second request from the user killed it.
    killed: bool,
}

impl Group {
    fn new(pid: Pid, kill_after: Duration) -> Group {
        Group {
            pid,
            kill_after,
            kill_at: None,
            cancelled: false,
            killed: false,
        }
    }

    fn signal(&self, sig: Signal) {
        let _ = kill_process_group(self.pid, sig);
    }

    /// Ask the group to stop with `sig`; SIGKILL follows `--kill-after`
    /// later.
    fn ask(&mut self, sig: Signal) {
        self.signal(sig);
        self.kill_at = Some(Instant::now() + self.kill_after);
    }

    fn kill(&mut self) {
        self.signal(Signal::KILL);
        self.kill_at = None;
    }

    /// A signal aoitap got, passed on while the reading goes on (or, told
    /// by the reader, once it has stopped): once; and a second request
    /// from the user kills the group at once.
    fn pass_on(&mut self, heard: &Result<Told, RecvTimeoutError>, flags: Option<&Caught>) {
        let request = flags.and_then(|f| Some((f.caught()?, f.requests())));
        let pass = match (heard, request) {
            (Ok(Told::Cancel(sig)), _) => Some(*sig),
            (_, Some((exit, _))) => Some(signal_for(exit)),
            _ => None,
        };
        if let Some(sig) = pass.filter(|_| !self.cancelled) {
            self.cancelled = true;
            self.ask(sig);
        } else if request.is_some_and(|(_, n)| n >= 2) && !self.killed {
            self.killed = true;
            self.kill();
        }
    }
}

/// The signal CMD's group is sent for one aoitap got: SIGINT as it came;
/// SIGTERM for SIGTERM and for SIGHUP, which `run` handles as SIGTERM
/// (docs/contract.md §3.3: a tool may take SIGHUP as "reload", not "stop").
fn signal_for(exit: Exit) -> Signal {
    if exit == Exit::Interrupted {
        Signal::INT
    } else {
        Signal::TERM
    }
}

//! `aoitap run -- CMD [ARG ...]`: the harness wrapper (DESIGN §12).
//!
//! CMD runs in a process group of its own, its stdout read through the same
//! loop as every stream command (so relayed byte for byte, or saved), its
//! stderr passed through. Once its stdout ends, aoitap waits for it and
//! holds its exit status against its stream (spec §4.1, §6:
//! `exit.disagrees`). `--timeout` and SIGINT/SIGTERM reach the whole group
//! (SIGTERM, then SIGKILL after `--kill-after`), so no grandchild outlives
//! it; their runs are not judged, as the producer did not cut them.
//! `--retries` runs CMD again while it fails retryably, waiting the
//! producer's `retry_after_ms` plus full jitter over exponential backoff,
//! never exactly `retry_after_ms` (spec §9.3: a minimum with jitter applied;
//! DESIGN §12, §13). Each attempt is its own input in the report; the exit
//! status is the last attempt's.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};

use crate::check::{Checker, Finding, RunVerdict, Seen, Sink, Verdict};
use crate::config::{Input, ReportTo, RunOptions};
use crate::exit::{Error, Exit, Result};
use crate::input::scan::Line;
use crate::input::source;
use crate::output::Attempt;
use crate::output::relay::Redacted;
use crate::signal::{Caught, Signals};
use crate::stream::{self, Consumer, Opened, Report};

pub fn run(opts: &RunOptions) -> Result<Exit> {
    let stream = &opts.stream;
    let to = if stream.relay && stream.save.is_none() {
        ReportTo::Stderr
    } else {
        ReportTo::Stdout
    };
    // With --redact the lines are relayed by the pass, once judged.
    let redacted = if stream.relay && stream.redact {
        let out = match &stream.save {
            Some(path) => match File::create(path) {
                Ok(f) => f,
                Err(e) => {
                    return Err(Error::CantCreate(format!(
                        "cannot create {}: {e}",
                        path.display()
                    )));
                }
            },
            None => source::stdout_file()?,
        };
        Some(Redacted::new(BufWriter::with_capacity(256 * 1024, out)))
    } else {
        None
    };
    let name = opts
        .command
        .first()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut consumer = Attempts {
        opts,
        name,
        redacted,
        running: None,
        flags: None,
        attempt: 0,
        last: None,
        wait: None,
        before: Counts::default(),
        retry_after_ms: None,
        ended: None,
        wake: None,
        signal_wake: None,
        signal_count: 0,
        todo_pending: false,
        rng: Jitter::seeded(),
    };
    let exit = stream::run(stream, "run", to, &mut consumer);
    // Whatever happened, nothing of ours is left running.
    // (Its watcher, told nothing more, kills the group and reaps it.)
    if let Some(Running { told, ended, .. }) = consumer.running.take() {
        drop(told);
        let _ = ended.recv();
    }
    exit
}

/// The attempts of one `run`, as the loop's source of inputs.
struct Attempts<'o> {
    opts: &'o RunOptions,
    /// CMD's name, as findings and attempts name it.
    name: String,
    redacted: Option<Redacted>,
    running: Option<Running>,
    flags: Option<Caught>,
    /// The attempt under way, from 1.
    attempt: u32,
    /// The last finished attempt's verdict.
    last: Option<Exit>,
    /// Decided when an attempt ends: how long to wait before the next.
    wait: Option<Duration>,
    /// The report's counts when the attempt began, to find its own verdict.
    before: Counts,
    /// The longest `retry_after_ms` of the attempt's retryable runs.
    retry_after_ms: Option<u64>,
    ended: Option<Ended>,
    /// The attempt's watcher's end of the reader's wake socket.
    wake: Option<OwnedFd>,
    /// aoitap's signal socket, to count signals (`signals_seen`).
    signal_wake: Option<UnixStream>,
    signal_count: usize,
    /// TAP: the last attempt's points are held until the retry begins.
    todo_pending: bool,
    rng: Jitter,
}

/// CMD, running.
struct Running {
    group: Pid,
    /// Tells the watcher that reading ended, and how.
    told: Sender<Told>,
    /// The watcher's answer: how CMD ended.
    ended: Receiver<Status>,
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

/// What the report had counted (`Tally::counts`): the difference is an
/// attempt's verdict.
#[derive(Default, Clone, Copy)]
struct Counts([u64; 3]);

impl Counts {
    fn of(report: &Report) -> Counts {
        Counts(report.tally.counts())
    }

    fn since(self, before: Counts) -> Exit {
        let [e, f, r] = std::array::from_fn(|i| self.0[i] - before.0[i]);
        Exit::verdict(e, f, r)
    }
}

impl Consumer for Attempts<'_> {
    fn next_input(&mut self, _k: usize, _inputs: &[Input], signals: &Signals) -> Option<Opened> {
        self.flags = Some(signals.flags());
        if self.signal_wake.is_none() {
            self.signal_wake = signals
                .wake_fd()
                .ok()
                .map(UnixStream::from)
                .filter(|w| w.set_nonblocking(true).is_ok());
        }
        let mut relay = None;
        if self.attempt > 0 {
            let wait = self.wait.take()?;
            if signals.sleep(wait) {
                return None;
            }
            match self.keep_attempt() {
                Ok(file) => relay = file,
                Err(e) => {
                    // Nothing is run that could not be saved.
                    return Some(Opened {
                        label: self.name.clone(),
                        file: Err(e),
                        unopened: Exit::CantCreate,
                        wake: None,
                        relay: None,
                    });
                }
            }
        }
        self.attempt += 1;
        self.retry_after_ms = None;
        let label = if self.opts.retries > 0 {
            format!(
                "{} (attempt {} of {})",
                self.name,
                self.attempt,
                self.attempts()
            )
        } else {
            self.name.clone()
        };
        let (file, unopened) = match self.spawn() {
            Ok(f) => (Ok(f), Exit::Pass),
            Err(e) => {
                // 127 and 126, as a shell says them (POSIX 2.8.2).
                let status = match e.kind() {
                    io::ErrorKind::NotFound => Exit::CommandNotFound,
                    _ => Exit::CannotExecute,
                };
                let why = match e.kind() {
                    io::ErrorKind::NotFound => "command not found".to_string(),
                    io::ErrorKind::PermissionDenied => "permission denied".to_string(),
                    _ => e.to_string(),
                };
                (Err(io::Error::new(e.kind(), why)), status)
            }
        };
        Some(Opened {
            label,
            file,
            unopened,
            wake: self.wake.take(),
            relay,
        })
    }

    fn line(&mut self, check: &mut Checker, line: &Line<'_>, report: &mut Report) -> Result<Seen> {
        self.retried(report)?;
        let mut watch = Watch {
            report,
            retry_after_ms: &mut self.retry_after_ms,
        };
        let seen = check.judge(line, &mut watch)?;
        if let Some(r) = &mut self.redacted {
            r.line(check, line, &seen)?;
        }
        Ok(seen)
    }

    fn input_read(
        &mut self,
        check: &mut Checker,
        report: &mut Report,
        cancelled: bool,
    ) -> Result<Option<&'static str>> {
        if let Some(r) = &mut self.redacted {
            r.flush()?;
        }
        self.retried(report)?;
        let Some(running) = self.running.take() else {
            return Ok(cancelled.then_some("cancelled"));
        };
        let caught = self.flags.as_ref().and_then(Caught::caught);
        let status = self.end(running, caught);
        let (success, ended, code, signal) = describe(&status.status);
        if status.timed_out || caught.is_some() {
            // A signal wins over a timeout: aoitap ends with the signal's
            // status, and its report says the same.
            let (ended, why, exit) = match caught {
                Some(exit) => {
                    report.out.reason = None;
                    (format!("cancelled, {ended}"), "cancelled", exit)
                }
                None => {
                    let limit = self.opts.timeout.unwrap_or_default();
                    let ended = format!("timed out (--timeout {}), {ended}", human(limit));
                    report.out.reason = Some("timeout");
                    (ended, "timed out", Exit::Retryable)
                }
            };
            // A run that had written its summary is complete: judged, so
            // only what was really cut is reported as not judged.
            report.out.tap_hold();
            let mut watch = Watch {
                report,
                retry_after_ms: &mut self.retry_after_ms,
            };
            check.finish_complete(&mut watch)?;
            self.last = Some(exit);
            let retry = status.timed_out && caught.is_none();
            let (retry_in_ms, note) = if retry { self.plan(None) } else { (None, None) };
            report.out.attempt(&Attempt {
                attempt: self.attempt,
                attempts: self.attempts(),
                command: &self.name,
                ended: &ended,
                exit_status: code,
                signal: signal.as_deref(),
                timed_out: status.timed_out && caught.is_none(),
                cancelled: caught.is_some(),
                elapsed_ms: status.elapsed_ms,
                exit,
                retry_in_ms,
                note,
            })?;
            // The timeout decides the verdict only when no retry follows.
            if retry && retry_in_ms.is_none() {
                report.out.timed_out(&format!("{}: {ended}", self.name))?;
            }
            self.attempt_over(report, retry_in_ms.is_some())?;
            return Ok(Some(why));
        }
        self.ended = Some(Ended {
            code,
            signal,
            elapsed_ms: status.elapsed_ms,
            text: ended.clone(),
            held_open: status.held_open,
        });
        check.exited(report, success, &ended)?;
        Ok(None)
    }

    fn end_input(&mut self, check: Checker, report: &mut Report) -> Result<()> {
        report.out.tap_hold();
        let mut watch = Watch {
            report,
            retry_after_ms: &mut self.retry_after_ms,
        };
        check.finish(&mut watch)?;
        let exit = Counts::of(report).since(self.before);
        self.last = Some(exit);
        report.out.reason = None;
        let (retry_in_ms, note) = if exit == Exit::Retryable {
            self.plan(self.retry_after_ms)
        } else {
            (None, None)
        };
        let ended = self.ended.take().unwrap_or_default();
        let held = ended.held_open.then(|| {
            format!(
                "something it left held its stdout open past --kill-after {}; the rest was not read",
                human(self.opts.kill_after)
            )
        });
        let note = note.or(held.as_deref());
        report.out.attempt(&Attempt {
            attempt: self.attempt,
            attempts: self.attempts(),
            command: &self.name,
            ended: &ended.text,
            exit_status: ended.code,
            signal: ended.signal.as_deref(),
            timed_out: false,
            cancelled: false,
            elapsed_ms: ended.elapsed_ms,
            exit,
            retry_in_ms,
            note,
        })?;
        self.attempt_over(report, retry_in_ms.is_some())?;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if let Some(r) = &mut self.redacted {
            r.flush()?;
        }
        Ok(())
    }

    fn exit(&self, verdict: Exit) -> Exit {
        self.last.unwrap_or(verdict)
    }

    fn second_signal_exits(&self) -> bool {
        false
    }

    fn catches_hangup(&self) -> bool {
        true
    }
}

/// How an attempt's command ended, kept from `input_read` (when it is
/// known) to `end_input` (when the run's verdict is).
#[derive(Default)]
struct Ended {
    code: Option<i32>,
    signal: Option<String>,
    elapsed_ms: u64,
    text: String,
    held_open: bool,
}

struct Status {
    status: std::process::ExitStatus,
    timed_out: bool,
    /// CMD exited, and something it left kept its stdout open past
    /// `--kill-after`: the rest was not read.
    held_open: bool,
    elapsed_ms: u64,
}

impl Status {
    /// The watcher vanished (it cannot): reported as a kill.
    fn lost() -> Status {
        Status {
            status: std::process::ExitStatus::from_raw(9),
            timed_out: false,
            held_open: false,
            elapsed_ms: 0,
        }
    }
}

impl Attempts<'_> {
    fn spawn(&mut self) -> io::Result<File> {
        let (program, args) = self
            .opts
            .command
            .split_first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no command"))?;
        let mut child = Command::new(program)
            .args(args)
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()?;
        let group = Pid::from_child(&child);
        let stdout = child.stdout.take().expect("stdout was piped");
        let (told, hear) = channel();
        let (answer, ended) = channel();
        let (wake, woken) = UnixStream::pair()?;
        let limits = Limits {
            timeout: self.opts.timeout,
            kill_after: self.opts.kill_after,
        };
        std::thread::spawn(move || watch(child, group, limits, &hear, &wake, &answer));
        self.running = Some(Running { group, told, ended });
        self.wake = Some(OwnedFd::from(woken));
        Ok(File::from(OwnedFd::from(stdout)))
    }

    /// How CMD ended, from its watcher, once reading has stopped: on a
    /// signal to aoitap, the watcher passes it on to the group first.
    fn end(&mut self, running: Running, caught: Option<Exit>) -> Status {
        let told = match caught {
            Some(exit) => Told::Cancel(signal_for(exit)),
            None => Told::Read,
        };
        let mut passed_on = matches!(told, Told::Cancel(_));
        let _ = running.told.send(told);
        loop {
            match running.ended.recv_timeout(Duration::from_millis(20)) {
                Ok(status) => return status,
                Err(RecvTimeoutError::Disconnected) => {
                    // The watcher cannot be gone without an answer; if it
                    // is, nothing of the group may stay.
                    let _ = kill_process_group(running.group, Signal::KILL);
                    return Status::lost();
                }
                Err(RecvTimeoutError::Timeout) => {
                    // A signal while waiting (after EOF): pass it on; a
                    // second one: kill the group now.
                    let now = self.flags.as_ref().and_then(Caught::caught);
                    if caught.is_none()
                        && !passed_on
                        && let Some(exit) = now
                    {
                        let _ = running.told.send(Told::Cancel(signal_for(exit)));
                        passed_on = true;
                    }
                    if self.signals_seen() >= 2 {
                        let _ = running.told.send(Told::Kill);
                    }
                }
            }
        }
    }

    /// A retry is about to begin: `--save FILE` holds the final attempt's
    /// stream only, one conforming stream (DESIGN §13), so the attempt
    /// before is moved beside it, to `FILE.attempt-N`, and FILE begins
    /// anew; the new FILE to relay into, unless `--redact` writes it.
    /// A FILE that is not a regular file (`/dev/null`, a FIFO) cannot be
    /// moved: every attempt goes to it. A link is followed.
    fn keep_attempt(&mut self) -> io::Result<Option<File>> {
        let Some(save) = &self.opts.stream.save else {
            return Ok(None);
        };
        let path = match std::fs::canonicalize(save) {
            Ok(p) if std::fs::metadata(&p).is_ok_and(|m| m.is_file()) => p,
            _ => return Ok(None),
        };
        let mut kept = path.clone().into_os_string();
        kept.push(format!(".attempt-{}", self.attempt));
        let kept = std::path::PathBuf::from(kept);
        // (The attempt's lines were flushed when its reading ended.)
        std::fs::rename(&path, &kept).map_err(|e| {
            let why = format!(
                "cannot keep attempt {} as {}: {e}",
                self.attempt,
                kept.display()
            );
            io::Error::new(e.kind(), why)
        })?;
        let file = File::create(&path).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
        })?;
        if let Some(r) = &mut self.redacted {
            *r = Redacted::new(BufWriter::with_capacity(256 * 1024, file));
            return Ok(None);
        }
        Ok(Some(file))
    }

    /// How many times CMD may run: once, and once per retry.
    fn attempts(&self) -> u32 {
        self.opts.retries.saturating_add(1)
    }

    /// An attempt has been reported: the next one's verdict counts from
    /// here. TAP: its points wait until its retry begins, so only a
    /// failure that really was retried is `# TODO retried`; without a
    /// retry they go out as they are (at the report's end if a signal
    /// stops the wait).
    fn attempt_over(&mut self, report: &mut Report, retrying: bool) -> io::Result<()> {
        self.before = Counts::of(report);
        self.todo_pending = retrying;
        if retrying {
            Ok(())
        } else {
            report.out.tap_release(None)
        }
    }

    /// The retry has begun: the last attempt's held points go out.
    fn retried(&mut self, report: &mut Report) -> io::Result<()> {
        if std::mem::take(&mut self.todo_pending) {
            report.out.tap_release(Some("retried"))?;
        }
        Ok(())
    }

    /// Signals aoitap has had (each writes a byte to the wake socket).
    fn signals_seen(&mut self) -> usize {
        if let Some(w) = &self.signal_wake {
            let mut buf = [0u8; 16];
            while let Ok(n) = (&*w).read(&mut buf) {
                if n == 0 {
                    break;
                }
                self.signal_count += n;
            }
        }
        self.signal_count
    }

    /// Whether to run again after a retryable failure, and when: see
    /// `retry_wait`.
    fn plan(&mut self, retry_after_ms: Option<u64>) -> (Option<u64>, Option<&'static str>) {
        self.wait = None;
        if self.attempt > self.opts.retries {
            let note = (self.opts.retries > 0).then_some("no retries left");
            return (None, note);
        }
        let max = self.opts.max_wait;
        if let Some(ms) = retry_after_ms
            && Duration::from_millis(ms) > max
        {
            return (
                None,
                Some("not retried: the producer asks for a longer wait than --max-wait"),
            );
        }
        let doubling = 2u32.saturating_pow(self.attempt - 1);
        let backoff = self.opts.backoff.saturating_mul(doubling);
        let floor = Duration::from_millis(retry_after_ms.unwrap_or(0));
        let wait = retry_wait(floor, backoff, max, &mut self.rng);
        self.wait = Some(wait);
        (Some(wait.as_millis() as u64), None)
    }
}

/// How long an attempt may take.
#[derive(Clone, Copy)]
struct Limits {
    timeout: Option<Duration>,
    kill_after: Duration,
}

/// One attempt's watcher: it owns CMD. It stops the group at
/// `--timeout` (SIGTERM, SIGKILL after `--kill-after`); passes on a
/// signal aoitap got (then SIGKILL after `--kill-after`, to whatever of
/// the group is left, the leader gone or not); and once CMD has exited,
/// waits at most `--kill-after` for its output to end, then wakes the
/// reader (`wake`): a process that CMD left behind holding its stdout
/// (a daemon) does not hold aoitap.
fn watch(
    mut child: Child,
    group: Pid,
    limits: Limits,
    told: &Receiver<Told>,
    wake: &UnixStream,
    answer: &Sender<Status>,
) {
    let started = Instant::now();
    let mut timed_out = false;
    // When the group was last asked to stop, and when it will be killed.
    let mut kill_at: Option<Instant> = None;
    let mut cancelled = false;
    let mut read_done = false;
    let mut exited: Option<(std::process::ExitStatus, Duration)> = None;
    let mut drain_until: Option<Instant> = None;
    let stop = |sig: Signal| {
        let _ = kill_process_group(group, sig);
    };
    loop {
        match told.recv_timeout(Duration::from_millis(10)) {
            Ok(Told::Read) => read_done = true,
            Ok(Told::Cancel(sig)) if !cancelled => {
                read_done = true;
                cancelled = true;
                stop(sig);
                kill_at = Some(Instant::now() + limits.kill_after);
            }
            Ok(Told::Kill) => {
                read_done = true;
                cancelled = true;
                stop(Signal::KILL);
                kill_at = None;
            }
            Ok(Told::Cancel(_)) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                // aoitap is ending: leave nothing behind.
                stop(Signal::KILL);
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
            stop(Signal::TERM);
            kill_at = Some(Instant::now() + limits.kill_after);
        }
        if kill_at.is_some_and(|at| Instant::now() >= at) {
            // The leader gone or not, whatever is left of the group goes.
            stop(Signal::KILL);
            kill_at = None;
        }
        let group_gone = test_kill_process_group(group).is_err();
        if let Some((status, took)) = exited {
            let drained = read_done || drain_until.is_some_and(|t| Instant::now() >= t);
            // Stopped by us: the group must be gone (or killed) before
            // the answer, so no orphan outlives the report.
            let settled = !(timed_out || cancelled) || group_gone || kill_at.is_none();
            if !read_done && drained {
                let _ = (&*wake).write_all(b"x");
            }
            if drained && settled && read_done {
                let _ = answer.send(Status {
                    status,
                    timed_out,
                    held_open: drain_until.is_some_and(|t| Instant::now() >= t),
                    elapsed_ms: took.as_millis() as u64,
                });
                return;
            }
        }
    }
}

/// A sink that passes everything to the report and keeps what a retry
/// needs: the longest wait a retryable run asked for.
struct Watch<'a> {
    report: &'a mut Report,
    retry_after_ms: &'a mut Option<u64>,
}

impl Sink for Watch<'_> {
    fn finding(&mut self, f: &Finding) -> io::Result<()> {
        self.report.finding(f)
    }

    fn run(&mut self, r: &RunVerdict) -> io::Result<()> {
        if r.verdict == Verdict::Retryable
            && let Some(ms) = r.cause.as_ref().and_then(|c| c.retry_after_ms)
        {
            *self.retry_after_ms = Some(self.retry_after_ms.map_or(ms, |m| m.max(ms)));
        }
        self.report.run(r)
    }
}

/// The signal CMD's group is sent for one aoitap got: SIGINT as it came;
/// SIGTERM for SIGTERM and for SIGHUP, which `run` handles as SIGTERM
/// (DESIGN §13: a tool may take SIGHUP as "reload", not "stop").
fn signal_for(exit: Exit) -> Signal {
    if exit == Exit::Interrupted {
        Signal::INT
    } else {
        Signal::TERM
    }
}

/// (success, "exited 3" / "was killed by SIGKILL", code, signal name).
fn describe(status: &std::process::ExitStatus) -> (bool, String, Option<i32>, Option<String>) {
    if let Some(code) = status.code() {
        return (code == 0, format!("exited {code}"), Some(code), None);
    }
    let sig = status.signal().unwrap_or(0);
    let name = signal_name(sig);
    (false, format!("was killed by {name}"), None, Some(name))
}

fn signal_name(sig: i32) -> String {
    let name = match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

/// A duration as it was given: `500ms`, `2s`, `1.5s`.
fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if !ms.is_multiple_of(1000) || ms == 0 {
        format!("{ms}ms")
    } else {
        format!("{}s", ms / 1000)
    }
}

/// The wait before a retry: the producer's `retry_after_ms` (`floor`)
/// plus full jitter, a random 1 ms to `backoff` above it, all of it
/// capped by `--max-wait`. Never exactly `floor` while `--max-wait` leaves
/// room: clients told the same `retry_after_ms` must not come back in
/// lockstep (DESIGN §12, §13; spec §9.3). A producer asking for more than
/// `--max-wait` is not retried at all (`plan`).
fn retry_wait(floor: Duration, backoff: Duration, max: Duration, rng: &mut Jitter) -> Duration {
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let room = ms(max).saturating_sub(ms(floor));
    // At least a millisecond of spread, even with --backoff 0.
    let spread = ms(backoff).max(1).min(room);
    let jitter = if spread == 0 {
        0
    } else {
        1 + rng.below(spread)
    };
    Duration::from_millis(ms(floor).saturating_add(jitter))
}

/// xorshift64: only spread matters for a retry wait, not secrecy, so no
/// crate is needed for it.
struct Jitter(u64);

impl Jitter {
    /// Seeded from the clock and the pid, so two clients started together
    /// still draw apart.
    fn seeded() -> Jitter {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Jitter::new(t ^ u64::from(std::process::id()).rotate_left(32))
    }

    fn new(seed: u64) -> Jitter {
        // Mixed first (splitmix64), so nearby seeds (pids one apart, the
        // same clock) start far apart; xorshift must not start at 0.
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Jitter((z ^ (z >> 31)).max(1))
    }

    /// A number in `0..n` (`n` > 0); the modulo bias is immaterial here.
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn a_wait_is_full_jitter_above_retry_after_never_exactly_it() {
        let mut rng = Jitter::new(42);
        let waits: Vec<Duration> = (0..2000)
            .map(|_| retry_wait(MS(400), MS(1000), MS(60_000), &mut rng))
            .collect();
        for w in &waits {
            assert!(*w > MS(400) && *w <= MS(1400), "{w:?}");
        }
        // Spread over the whole range: clients do not retry in lockstep.
        let distinct: std::collections::HashSet<_> = waits.iter().collect();
        assert!(distinct.len() > 800, "{} distinct waits", distinct.len());
        assert!(waits.iter().any(|w| *w < MS(500)));
        assert!(waits.iter().any(|w| *w > MS(1300)));
    }

    #[test]
    fn a_backoff_smaller_than_retry_after_still_spreads_above_it() {
        // The case that retried in lockstep: the wait was retry_after_ms.
        let mut rng = Jitter::new(7);
        for _ in 0..1000 {
            let w = retry_wait(MS(400), MS(10), MS(60_000), &mut rng);
            assert!(w > MS(400) && w <= MS(410), "{w:?}");
        }
        let w = retry_wait(MS(400), Duration::ZERO, MS(60_000), &mut rng);
        assert_eq!(w, MS(401), "--backoff 0: one millisecond above");
    }

    #[test]
    fn max_wait_caps_the_wait() {
        let mut rng = Jitter::new(3);
        for _ in 0..1000 {
            let w = retry_wait(MS(400), MS(10_000), MS(1000), &mut rng);
            assert!(w > MS(400) && w <= MS(1000), "{w:?}");
            let w = retry_wait(Duration::ZERO, MS(10_000), MS(1000), &mut rng);
            assert!(w > Duration::ZERO && w <= MS(1000), "{w:?}");
        }
        // No room left above the producer's wait: exactly --max-wait.
        assert_eq!(retry_wait(MS(1000), MS(50), MS(1000), &mut rng), MS(1000));
    }

    #[test]
    fn clients_seeded_apart_wait_apart() {
        let wait = |seed| retry_wait(MS(400), MS(1000), MS(60_000), &mut Jitter::new(seed));
        let waits: std::collections::HashSet<_> = (1..=100).map(wait).collect();
        assert!(waits.len() > 80, "{} distinct first waits", waits.len());
    }
}

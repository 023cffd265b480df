//! `aoitap run -- CMD [ARG ...]`: the harness wrapper (DESIGN §12).
//!
//! CMD runs in a process group of its own, its stdout read through the same
//! loop as every stream command (so relayed byte for byte, or saved), its
//! stderr passed through. Once its stdout ends, aoitap waits for it and
//! holds its exit status against its stream (spec §4.1, §6:
//! `exit.disagrees`). `--timeout` and SIGINT/SIGTERM reach the whole group
//! (SIGTERM, then SIGKILL after `--kill-after`), so no grandchild outlives
//! it; their runs are not judged, as the producer did not cut them.
//! `--retries` runs CMD again while it fails retryably, waiting full-jitter
//! exponential backoff, never less than the producer's `retry_after_ms`
//! (§9.3). Each attempt is its own input in the report; the exit status is
//! the last attempt's.

use std::fs::File;
use std::io::{self, BufWriter};
use std::os::fd::OwnedFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use anyhow::Result;
use rustix::process::{Pid, Signal, kill_process_group};

use super::verify::Redacted;
use super::{Input, Opened, Pass, Report, ReportTo, run_stream};
use crate::check::{Checker, Finding, RunReport, Seen, Sink, Verdict};
use crate::cli::RunOptions;
use crate::emit::Attempt;
use crate::exit::Exit;
use crate::scan::Line;
use crate::signal::{Caught, Signals};
use crate::source;

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
                    crate::say!("aoitap: cannot create {}: {e}", path.display());
                    return Ok(Exit::CantCreate);
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
    let mut pass = Attempts {
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
        rng: seed(),
    };
    let exit = run_stream(stream, "run", to, &mut pass);
    // Whatever happened, nothing of ours is left running.
    if let Some(r) = pass.running.take() {
        r.kill(Signal::KILL);
        r.reap();
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
    rng: u64,
}

/// CMD, running.
struct Running {
    child: Child,
    group: Pid,
    started: Instant,
    timed_out: Arc<AtomicBool>,
    /// Dropped when the attempt ends, which stops its timer.
    _timer: Option<Sender<()>>,
}

/// What the report had counted: the difference is an attempt's verdict.
#[derive(Default, Clone, Copy)]
struct Counts {
    errors: u64,
    failed: u64,
    retryable: u64,
}

impl Counts {
    fn of(report: &Report) -> Counts {
        let t = &report.tally;
        Counts {
            errors: t.findings[crate::rules::Severity::Error as usize],
            failed: t.runs[Verdict::Failed as usize],
            retryable: t.runs[Verdict::Retryable as usize],
        }
    }

    fn since(self, before: Counts) -> Exit {
        Exit::verdict(
            self.errors - before.errors,
            self.failed - before.failed,
            self.retryable - before.retryable,
        )
    }
}

impl Pass for Attempts<'_> {
    fn next_input(&mut self, _k: usize, _inputs: &[Input], signals: &Signals) -> Option<Opened> {
        self.flags = Some(signals.flags());
        if self.attempt > 0 {
            let wait = self.wait.take()?;
            if signals.sleep(wait) {
                return None;
            }
        }
        self.attempt += 1;
        self.retry_after_ms = None;
        let label = if self.opts.retries > 0 {
            format!(
                "{} (attempt {} of {})",
                self.name,
                self.attempt,
                self.opts.retries + 1
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
        })
    }

    fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        report: &mut Report,
    ) -> io::Result<Seen> {
        let mut watch = Watch {
            report,
            retry_after_ms: &mut self.retry_after_ms,
        };
        match &mut self.redacted {
            Some(r) => r.line(check, line, &mut watch),
            None => check.judge(line, &mut watch),
        }
    }

    fn input_read(
        &mut self,
        check: &mut Checker,
        report: &mut Report,
        cancelled: bool,
    ) -> io::Result<Option<&'static str>> {
        if let Some(r) = &mut self.redacted {
            r.flush()?;
        }
        let Some(running) = self.running.take() else {
            return Ok(cancelled.then_some("cancelled"));
        };
        let caught = self.flags.as_ref().and_then(Caught::caught);
        let status = self.end(running, caught);
        let (success, ended, code, signal) = describe(&status.status);
        if status.timed_out || caught.is_some() {
            let (ended, why, exit) = if status.timed_out {
                let limit = self.opts.timeout.unwrap_or_default();
                let ended = format!("timed out (--timeout {}), {ended}", human(limit));
                report.reason = Some("timeout");
                (ended, "timed out", Exit::Retryable)
            } else {
                (
                    format!("cancelled, {ended}"),
                    "cancelled",
                    caught.unwrap_or(Exit::Interrupted),
                )
            };
            self.last = Some(exit);
            let retry = status.timed_out && caught.is_none();
            let (retry_in_ms, note) = if retry { self.plan(None) } else { (None, None) };
            report.attempt(&Attempt {
                attempt: self.attempt,
                attempts: self.opts.retries + 1,
                command: &self.name,
                ended: &ended,
                exit_status: code,
                signal: signal.as_deref(),
                timed_out: status.timed_out,
                cancelled: !status.timed_out,
                elapsed_ms: status.elapsed_ms,
                exit,
                retry_in_ms,
                note,
            })?;
            self.before = Counts::of(report);
            return Ok(Some(why));
        }
        self.ended = Some(Ended {
            code,
            signal,
            elapsed_ms: status.elapsed_ms,
            text: ended.clone(),
        });
        check.exited(report, success, &ended)?;
        Ok(None)
    }

    fn end_input(&mut self, check: Checker, report: &mut Report) -> io::Result<()> {
        report.tap_hold();
        let mut watch = Watch {
            report,
            retry_after_ms: &mut self.retry_after_ms,
        };
        check.finish(&mut watch)?;
        let exit = Counts::of(report).since(self.before);
        self.last = Some(exit);
        report.reason = None;
        let (retry_in_ms, note) = if exit == Exit::Retryable {
            self.plan(self.retry_after_ms)
        } else {
            (None, None)
        };
        report.tap_release(retry_in_ms.map(|_| "retried"))?;
        let ended = self.ended.take().unwrap_or_default();
        report.attempt(&Attempt {
            attempt: self.attempt,
            attempts: self.opts.retries + 1,
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
        self.before = Counts::of(report);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.redacted {
            Some(r) => r.flush(),
            None => Ok(()),
        }
    }

    fn exit(&self, verdict: Exit) -> Exit {
        self.last.unwrap_or(verdict)
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
}

struct Status {
    status: std::process::ExitStatus,
    timed_out: bool,
    elapsed_ms: u64,
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
        let timed_out = Arc::new(AtomicBool::new(false));
        let timer = self
            .opts
            .timeout
            .map(|limit| start_timer(group, limit, self.opts.kill_after, &timed_out));
        self.running = Some(Running {
            child,
            group,
            started: Instant::now(),
            timed_out,
            _timer: timer,
        });
        Ok(File::from(OwnedFd::from(stdout)))
    }

    /// Wait for CMD once its stdout has ended. On a signal to aoitap, the
    /// group gets it too, then SIGKILL after `--kill-after`.
    fn end(&mut self, mut running: Running, caught: Option<Exit>) -> Status {
        let mut forwarded = None;
        let status = loop {
            if let Ok(Some(status)) = running.child.try_wait() {
                break status;
            }
            let now = self.flags.as_ref().and_then(Caught::caught).or(caught);
            if let Some(exit) = now
                && forwarded.is_none()
            {
                let sig = if exit == Exit::Terminated {
                    Signal::TERM
                } else {
                    Signal::INT
                };
                running.kill(sig);
                forwarded = Some(Instant::now());
            }
            if forwarded.is_some_and(|at| at.elapsed() >= self.opts.kill_after) {
                running.kill(Signal::KILL);
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        // Anything the command left in its group goes with it when it was
        // stopped (timeout, signal): no orphans.
        let timed_out = running.timed_out.load(Ordering::Acquire);
        if timed_out || forwarded.is_some() {
            running.kill(Signal::KILL);
        }
        Status {
            status,
            timed_out,
            elapsed_ms: running.started.elapsed().as_millis() as u64,
        }
    }

    /// Whether to run again after a retryable failure, and when: full
    /// jitter over `--backoff` doubled per attempt (capped by
    /// `--max-wait`), never sooner than the producer asked (§9.3).
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
        let ceiling = self.opts.backoff.saturating_mul(doubling).min(max);
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let jitter = ceiling.mul_f64((self.rng >> 11) as f64 / (1u64 << 53) as f64);
        let floor = Duration::from_millis(retry_after_ms.unwrap_or(0));
        let wait = jitter.max(floor).min(max);
        self.wait = Some(wait);
        (Some(wait.as_millis() as u64), None)
    }
}

impl Running {
    fn kill(&self, sig: Signal) {
        // The group may be gone already: nothing to do then.
        let _ = kill_process_group(self.group, sig);
    }

    fn reap(mut self) {
        let _ = self.child.wait();
    }
}

/// After `limit`, SIGTERM to the group; after `kill_after` more, SIGKILL.
/// Dropping the returned sender (the attempt ended) stops it.
fn start_timer(
    group: Pid,
    limit: Duration,
    kill_after: Duration,
    flag: &Arc<AtomicBool>,
) -> Sender<()> {
    let (tx, rx) = channel::<()>();
    let flag = Arc::clone(flag);
    std::thread::spawn(move || {
        if rx.recv_timeout(limit) != Err(RecvTimeoutError::Timeout) {
            return;
        }
        flag.store(true, Ordering::Release);
        let _ = kill_process_group(group, Signal::TERM);
        if rx.recv_timeout(kill_after) == Err(RecvTimeoutError::Timeout) {
            let _ = kill_process_group(group, Signal::KILL);
        }
    });
    tx
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

    fn run(&mut self, r: &RunReport) -> io::Result<()> {
        if r.verdict == Verdict::Retryable
            && let Some(ms) = r.cause.as_ref().and_then(|c| c.retry_after_ms)
        {
            *self.retry_after_ms = Some(self.retry_after_ms.map_or(ms, |m| m.max(ms)));
        }
        self.report.run(r)
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

/// A jitter seed: only spread matters, not secrecy.
fn seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (t ^ u64::from(std::process::id()).rotate_left(32)) | 1
}

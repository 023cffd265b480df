//! `aoitap run -- CMD [ARG ...]`: the harness wrapper (docs/contract.md §1.3).
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
//! docs/contract.md §1.3, §3.3). Each attempt is its own input in the report; the exit
//! status is the last attempt's; stdout carries the final attempt's stream
//! alone unless `--live` (docs/contract.md §3.4). The parts: `child.rs` (CMD, its group and
//! its watcher), `retry.rs` (when to run again), `report.rs` (what an
//! attempt says), `relay.rs` (where each attempt's stream goes).

use std::fs::File;
use std::io::{self, BufWriter};
use std::os::fd::OwnedFd;
use std::time::Duration;

use crate::check::{Checker, Exited, LineKind};
use crate::config::{Input, ReportTo, RunOptions};
use crate::exit::{Error, Exit, Result};
use crate::input::scan::Line;
use crate::input::source;
use crate::output::Attempt;
use crate::output::relay::Redacted;
use crate::signal::{Caught, Signals};
use crate::stream::{self, Consumer, OpenInput, Report};

mod child;
mod relay;
mod report;
mod retry;

use child::{Limits, Running, SignalCount, Status};
use relay::{Relay, Rewrite, Upgrading};
use report::{Counts, Ended, Watch, describe, human};
use retry::Jitter;

pub fn run(opts: &RunOptions) -> Result<Exit> {
    let stream = &opts.stream;
    let to = if stream.relay && stream.save.is_none() {
        ReportTo::Stderr
    } else {
        ReportTo::Stdout
    };
    let name = opts
        .command
        .first()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default();
    // With --redact the lines are relayed by the pass, once judged; with
    // --upgrade, as aoitap upgrade writes them, each attempt a run of
    // aoitap's whose errors, when the stream names no tool, are CMD's
    // (docs/contract.md §1.6).
    let rewrite = if stream.relay && (stream.redact || stream.upgrade) {
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
        let out = BufWriter::with_capacity(256 * 1024, out);
        Some(match stream.upgrade {
            true => Rewrite::upgraded(
                Upgrading {
                    multi_run: stream.check.multi_run,
                    type_field: stream.check.type_field.clone(),
                    origin: name.clone(),
                },
                out,
            ),
            false => Rewrite::Redacted(Redacted::new(out)),
        })
    } else {
        None
    };
    let holds = opts.retries > 0 && !opts.live && stream.relay && stream.save.is_none();
    let mut consumer = Attempts {
        opts,
        name,
        relay: Relay::new(rewrite, holds),
        running: None,
        flags: None,
        attempt: 0,
        last: None,
        wait: None,
        before: Counts::default(),
        retry_after_ms: None,
        ended: None,
        wake: None,
        signals: SignalCount::default(),
        todo_pending: false,
        rng: Jitter::seeded(),
    };
    let exit = stream::run(stream, "run", to, &mut consumer);
    // Whatever happened, nothing of ours is left running.
    if let Some(running) = consumer.running.take() {
        running.stop();
    }
    exit
}

/// The attempts of one `run`, as the loop's source of inputs.
struct Attempts<'o> {
    opts: &'o RunOptions,
    /// CMD's name, as findings and attempts name it.
    name: String,
    relay: Relay,
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
    /// The signals aoitap has had: a second one while CMD is awaited
    /// kills its group.
    signals: SignalCount,
    /// TAP: the last attempt's points are held until the retry begins.
    todo_pending: bool,
    rng: Jitter,
}

impl Consumer for Attempts<'_> {
    fn next_input(&mut self, _k: usize, _inputs: &[Input], signals: &Signals) -> Option<OpenInput> {
        self.flags = Some(signals.flags());
        self.signals.watch(signals);
        if self.attempt > 0 {
            let wait = self.wait.take()?;
            if signals.sleep(wait) {
                // The attempt held is the final one: `end_all` releases it.
                return None;
            }
        }
        let save = self.opts.stream.save.as_deref();
        let retried = (self.attempt > 0).then_some(self.attempt);
        let relay = match self.relay.begin(save, retried) {
            Ok(file) => file,
            Err(e) => {
                // Nothing is run that could not be saved.
                return Some(OpenInput {
                    label: self.name.clone(),
                    file: Err(e),
                    unopened: Exit::CantCreate,
                    wake: None,
                    relay: None,
                    to_its_end: false,
                });
            }
        };
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
                // --upgrade: its stream ends whole, failed on this.
                let said = format!("{}: {why}", self.name);
                if let Err(e) = self.relay.not_started(status, &said) {
                    return Some(OpenInput {
                        label,
                        file: Err(e),
                        unopened: Exit::Io,
                        wake: None,
                        relay,
                        to_its_end: false,
                    });
                }
                (Err(io::Error::new(e.kind(), why)), status)
            }
        };
        Some(OpenInput {
            label,
            file,
            unopened,
            wake: self.wake.take(),
            relay,
            // The watcher passes a signal on to CMD, whose stream then
            // ends: read to its end (docs/contract.md §1.3).
            to_its_end: true,
        })
    }

    fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        report: &mut Report,
    ) -> Result<LineKind> {
        self.retried(report)?;
        let mut watch = Watch {
            report,
            retry_after_ms: &mut self.retry_after_ms,
            relay: &mut self.relay,
        };
        let decided = check.judge(line, &mut watch)?;
        self.relay.line(line, &decided)?;
        Ok(decided.kind)
    }

    fn input_read(
        &mut self,
        check: &mut Checker,
        report: &mut Report,
        cancelled: bool,
    ) -> Result<Option<&'static str>> {
        self.relay.flush()?;
        self.retried(report)?;
        let Some(running) = self.running.take() else {
            return Ok(cancelled.then_some("cancelled"));
        };
        let caught = self.flags.as_ref().and_then(Caught::caught);
        let status = running.end(caught, self.flags.as_ref(), &mut self.signals);
        if status.timed_out || caught.is_some() {
            return self.stopped(check, report, &status, caught).map(Some);
        }
        let (_, ended, code, signal) = describe(&status.status);
        self.ended = Some(Ended {
            code,
            signal,
            elapsed_ms: status.elapsed_ms,
            text: ended.clone(),
            held_open: status.held_open,
        });
        let exited = Exited {
            code,
            how: &ended,
            stderr: status.stderr,
        };
        check.exited(report, &exited)?;
        Ok(None)
    }

    fn end_input(&mut self, check: Checker, report: &mut Report) -> Result<()> {
        report.out.hold()?;
        let mut watch = Watch {
            report,
            retry_after_ms: &mut self.retry_after_ms,
            relay: &mut self.relay,
        };
        check.finish(&mut watch)?;
        let exit = Counts::of(report).since(self.before);
        self.relay.attempt_over(exit, false)?;
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
        if retry_in_ms.is_none() {
            self.relay.release()?;
        }
        self.attempt_over(report, retry_in_ms.is_some())?;
        Ok(())
    }

    fn end_all(&mut self, _report: &mut Report) -> Result<()> {
        // A signal in the wait before a retry: the attempt that ran last
        // is the final one.
        Ok(self.relay.release()?)
    }

    fn flush(&mut self) -> Result<()> {
        Ok(self.relay.flush()?)
    }

    fn exit(&self, verdict: Exit) -> Exit {
        self.last.unwrap_or(verdict)
    }

    fn second_signal_exits(&self) -> bool {
        false
    }
}

impl Attempts<'_> {
    /// CMD was stopped, at --timeout or on a signal aoitap got; the word
    /// for how its attempt ended. A signal wins over a timeout: aoitap
    /// ends with the signal's status, and its report says the same. The
    /// runs it completed are judged, and a timed-out attempt is retried
    /// while retries are left.
    fn stopped(
        &mut self,
        check: &mut Checker,
        report: &mut Report,
        status: &Status,
        caught: Option<Exit>,
    ) -> Result<&'static str> {
        let (_, ended, code, signal) = describe(&status.status);
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
        report.out.hold()?;
        let mut watch = Watch {
            report,
            retry_after_ms: &mut self.retry_after_ms,
            relay: &mut self.relay,
        };
        check.finish_complete(&mut watch)?;
        self.relay.left_open(&check.open_runs());
        self.relay
            .attempt_over(exit, status.timed_out && caught.is_none())?;
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
        if retry_in_ms.is_none() {
            self.relay.release()?;
        }
        // The timeout decides the verdict only when no retry follows.
        if retry && retry_in_ms.is_none() {
            report.out.timed_out(&format!("{}: {ended}", self.name))?;
        }
        self.attempt_over(report, retry_in_ms.is_some())?;
        Ok(why)
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
            report.out.release(None)
        }
    }

    /// The retry has begun: the last attempt's held points go out.
    fn retried(&mut self, report: &mut Report) -> io::Result<()> {
        if std::mem::take(&mut self.todo_pending) {
            report.out.release(Some("retried"))?;
        }
        Ok(())
    }

    /// Whether to run again after a retryable failure, and when
    /// (`retry::plan`): the wait in ms, or why there is none.
    fn plan(&mut self, retry_after_ms: Option<u64>) -> (Option<u64>, Option<&'static str>) {
        let plan = retry::plan(self.opts, self.attempt, retry_after_ms, &mut self.rng);
        self.wait = plan.ok();
        match plan {
            Ok(wait) => (Some(wait.as_millis() as u64), None),
            Err(note) => (None, note),
        }
    }

    /// Start the attempt's CMD.
    fn spawn(&mut self) -> io::Result<File> {
        let limits = Limits {
            timeout: self.opts.timeout,
            kill_after: self.opts.kill_after,
        };
        // An OKF command's error envelope is on its stderr (docs/contract.md
        // §6.2), and a profile's producer says there why it failed (§6.3).
        let keep_stderr = self
            .opts
            .stream
            .check
            .protocol
            .and_then(|p| p.stderr_read());
        let flags = self.flags.clone();
        let (running, stdout, wake) = child::spawn(&self.opts.command, limits, keep_stderr, flags)?;
        self.running = Some(running);
        self.wake = Some(wake);
        Ok(stdout)
    }
}

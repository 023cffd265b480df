//! FILE operands judged by a pool of workers (`-j N`, docs/contract.md §2.2), each
//! judging whole files, as ripgrep searches them; the report still comes
//! out in operand order, byte for byte what one worker would write.
//!
//! The operands are cut into jobs of consecutive files. A worker judges a
//! job's files into a sink of its own that tells the report thread what
//! was said (findings, verdicts, read errors) in order, a chunk at a time
//! over the job's own bounded channel. The report thread says it to the
//! one `Report` job by job, so --limit, --failures-only, aoitap's own seq
//! numbers and the tally see exactly the serial sequence. At most `AHEAD`
//! jobs per worker are in flight and each channel holds `CHUNKS` chunks: a
//! worker far ahead of the report waits, and memory is bounded whatever
//! the number of files or findings.

use std::collections::VecDeque;
use std::io;
use std::ops::Range;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Mutex, PoisonError};
use std::thread;

use crate::check::{Checker, Finding, OpenRun, RunVerdict, Sink};
use crate::config::{Input, StreamOptions};
use crate::exit::{Error, Exit};
use crate::input::scan::Batch;
use crate::output::progress::Progress;
use crate::signal::Caught;

use super::judge::{Judging, Reader};
use super::report::{Halt, Report};

/// What a worker says, in the order the serial engine would say it.
enum Said {
    /// What follows is of the `k`th input.
    Input(usize),
    Finding(Finding),
    /// Boxed: a verdict is several times a finding's size, and there is one
    /// per run, against any number of findings.
    Run(Box<RunVerdict>),
    /// Bytes judged, for the progress line.
    Judged(u64),
    Unopened(io::Error),
    ReadFailed(io::Error),
    /// A signal stopped reading with these runs open.
    Cancelled(Vec<OpenRun>),
}

/// Things said per chunk sent, and chunks a job's channel holds.
const CHUNK: usize = 256;
const CHUNKS: usize = 2;
/// Jobs in flight per worker: enough that none waits for the next.
const AHEAD: usize = 2;
/// A job is consecutive files holding at least `JOB_BYTES`, or up to
/// `JOB_FILES` files (fewer when there are few, so every worker has
/// several jobs): handing a worker each file of 1 KB on its own cost more
/// in wake-ups than judging it (5,000 such files took 2.4x as long with
/// two workers as with one).
const JOB_BYTES: u64 = 1 << 20;
const JOB_FILES: usize = 64;
/// Workers at most, whatever `-j` asks: each holds a reader and a thread.
const MAX_WORKERS: usize = 256;

/// Where the report thread says what the workers told, in operand order:
/// the command's `Report`, or a test's record that passes it on
/// (`stream::paths::pooled`).
pub trait Listener: Sink {
    /// What follows is of the input `label`.
    fn input(&mut self, label: String);
    /// The input could not be opened (66).
    fn not_opened(&mut self, e: &io::Error) -> io::Result<()>;
    /// Reading the input failed part way (74).
    fn not_read(&mut self, e: &io::Error) -> io::Result<()>;
    /// A signal stopped the reading with `runs` open: named, not judged.
    fn cancelled(&mut self, runs: Vec<OpenRun>) -> io::Result<()>;
}

impl Listener for Report {
    fn input(&mut self, label: String) {
        self.out.file = label;
    }

    fn not_opened(&mut self, e: &io::Error) -> io::Result<()> {
        self.unopened(e, Exit::NoInput)
    }

    fn not_read(&mut self, e: &io::Error) -> io::Result<()> {
        self.read_failed(e)
    }

    fn cancelled(&mut self, runs: Vec<OpenRun>) -> io::Result<()> {
        self.not_judged(runs, "cancelled")
    }
}

/// One job's judging, as the report thread receives it.
type Told = Receiver<Vec<Said>>;

/// A job for a worker: consecutive inputs, and where to tell of them.
type Job = (Range<usize>, SyncSender<Vec<Said>>);

/// How the inputs are shared out: by how many workers, in which jobs.
pub(super) struct Plan {
    workers: usize,
    jobs: Vec<Range<usize>>,
}

/// The plan for these options' inputs (`sizes`: each one's length, when
/// a regular file), when a pool pays and keeps every promise of the
/// serial engine: two or more files, each a regular file or one that
/// cannot be opened (a pipe or terminal waits for its producer, which a
/// worker must not do out of order), and nothing asked line by line (a
/// relay, --line-buffered, --idle-timeout-ms).
pub(super) fn plan(opts: &StreamOptions, sizes: &[Option<u64>]) -> Option<Plan> {
    let plain = !opts.relay && !opts.line_buffered && opts.idle_timeout_ms.is_none();
    if !plain || opts.jobs < 2 || opts.inputs.len() < 2 {
        return None;
    }
    let per_job = (opts.inputs.len() / (opts.jobs * AHEAD * 2)).clamp(1, JOB_FILES);
    let mut jobs = vec![];
    let (mut start, mut bytes) = (0, 0);
    for (k, (input, size)) in opts.inputs.iter().zip(sizes).enumerate() {
        let size = match (input, size) {
            (_, Some(n)) => *n,
            (Input::Path(p), None) if std::fs::metadata(p).is_err() => 0,
            _ => return None,
        };
        bytes += size;
        if bytes >= JOB_BYTES || k + 1 - start >= per_job {
            jobs.push(start..k + 1);
            (start, bytes) = (k + 1, 0);
        }
    }
    if start < opts.inputs.len() {
        jobs.push(start..opts.inputs.len());
    }
    let workers = opts.jobs.min(jobs.len()).min(MAX_WORKERS);
    (workers > 1).then_some(Plan { workers, jobs })
}

/// Judge every input as `plan` shares them out, saying all to `report`
/// in operand order; trouble reading (66, 74) goes to the report's tally,
/// as the serial engine's does.
pub(super) fn judge(
    opts: &StreamOptions,
    plan: Plan,
    signals: &Caught,
    report: &mut dyn Listener,
    progress: &mut Option<Progress>,
) -> Result<(), Halt> {
    let (jobs, queue) = mpsc::channel::<Job>();
    let queue = Mutex::new(queue);
    thread::scope(|scope| {
        // As many workers as the system will start (a process limit may
        // refuse some): one is enough to go on with.
        let started = (0..plan.workers)
            .map_while(|_| {
                thread::Builder::new()
                    .spawn_scoped(scope, || work(opts, signals, &queue))
                    .ok()
            })
            .count();
        if started == 0 {
            let e = io::Error::other("no worker thread could be started");
            return Err(Halt::Writing(Error::io("judging the files".to_string(), e)));
        }
        // `jobs` is moved in, so any return drops it and lets every
        // worker end; one blocked on a channel whose receiver is gone (an
        // early return) ends at once.
        let jobs = jobs;
        let mut ahead = VecDeque::new();
        let mut next = plan.jobs.into_iter();
        loop {
            while ahead.len() < started * AHEAD {
                let Some(range) = next.next() else { break };
                let (to, told) = mpsc::sync_channel(CHUNKS);
                if jobs.send((range, to)).is_err() {
                    break;
                }
                ahead.push_back(told);
            }
            let Some(told) = ahead.pop_front() else {
                return Ok(());
            };
            if say(opts, &told, report, progress)? {
                return Ok(());
            }
        }
    })
}

/// Say to `report` what was told of one job; returns whether a signal
/// stopped it.
fn say(
    opts: &StreamOptions,
    told: &Told,
    report: &mut dyn Listener,
    progress: &mut Option<Progress>,
) -> Result<bool, Halt> {
    for chunk in told {
        for said in chunk {
            match said {
                Said::Input(k) => report.input(opts.inputs[k].label()),
                Said::Finding(f) => report.finding(&f).map_err(Halt::judging)?,
                Said::Run(r) => report.run(*r).map_err(Halt::judging)?,
                Said::Judged(n) => {
                    if let Some(p) = progress {
                        p.add(n);
                    }
                }
                Said::Unopened(e) => report.not_opened(&e).map_err(Halt::writing)?,
                Said::ReadFailed(e) => report.not_read(&e).map_err(Halt::writing)?,
                Said::Cancelled(runs) => {
                    if let Some(p) = progress {
                        p.clear();
                    }
                    report.cancelled(runs).map_err(Halt::writing)?;
                    return Ok(true);
                }
            }
        }
    }
    Ok(false)
}

/// A worker: judge the jobs it is given until there are no more, or the
/// report thread has stopped listening.
fn work(opts: &StreamOptions, signals: &Caught, queue: &Mutex<Receiver<Job>>) {
    let mut reader = Reader::default();
    loop {
        let job = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok((range, to)) = job else { return };
        let mut teller = Teller { said: vec![], to };
        for k in range {
            // After a signal the next file is still begun: its first
            // batch is judged and its runs said to be cancelled, as the
            // serial engine does, so the report stops there (ending the
            // job quietly let the report go on to the next job's files,
            // leaving out this job's rest).
            let judged = teller.tell(Said::Input(k)).and_then(|()| {
                judge_file(&opts.inputs[k], opts, signals, &mut reader, &mut teller)
            });
            match judged {
                Err(_) => return,
                Ok(Ended::Cancelled) => break,
                Ok(Ended::Judged) => {}
            }
        }
        if teller.send().is_err() {
            return;
        }
    }
}

/// How judging one file ended.
enum Ended {
    Judged,
    /// A signal came: its runs were said to be cancelled.
    Cancelled,
}

/// Judge one file as the serial engine does, telling what is said.
/// Err: the report thread has gone.
fn judge_file(
    input: &Input,
    opts: &StreamOptions,
    signals: &Caught,
    reader: &mut Reader,
    teller: &mut Teller,
) -> io::Result<Ended> {
    let file = match input.open() {
        Ok(f) => f,
        Err(e) => return teller.tell(Said::Unopened(e)).map(|()| Ended::Judged),
    };
    match reader.judge(file, opts, signals, teller) {
        Ok(false) => Ok(Ended::Judged),
        Ok(true) => Ok(Ended::Cancelled),
        Err(_) => Err(gone()),
    }
}

/// The error of a teller whose report thread has stopped listening.
fn gone() -> io::Error {
    io::Error::other("the report has ended")
}

/// A sink that tells one file's channel what is said, a chunk at a time.
struct Teller {
    said: Vec<Said>,
    to: SyncSender<Vec<Said>>,
}

impl Teller {
    fn tell(&mut self, said: Said) -> io::Result<()> {
        self.said.push(said);
        if self.said.len() >= CHUNK {
            self.send()?;
        }
        Ok(())
    }

    /// Send what is held (waiting while the channel is full).
    fn send(&mut self) -> io::Result<()> {
        if self.said.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::take(&mut self.said);
        self.to.send(chunk).map_err(|_| gone())
    }
}

impl Judging for Teller {
    fn batch(&mut self, check: &mut Checker, batch: &Batch) -> Result<(), Halt> {
        let mut judged = 0;
        for line in batch.lines() {
            check.judge(&line, self).map_err(Halt::judging)?;
            judged += line.input_bytes();
        }
        self.tell(Said::Judged(judged)).map_err(Halt::judging)
    }

    fn read_failed(&mut self, e: io::Error) -> Result<(), Halt> {
        self.tell(Said::ReadFailed(e)).map_err(Halt::judging)
    }

    fn end(&mut self, check: Checker, cancelled: bool) -> Result<bool, Halt> {
        if cancelled {
            self.tell(Said::Cancelled(check.open_runs()))
                .map_err(Halt::judging)?;
            return Ok(true);
        }
        check.finish(self).map_err(Halt::judging)?;
        Ok(false)
    }
}

impl Sink for Teller {
    fn finding(&mut self, f: &Finding) -> io::Result<()> {
        self.tell(Said::Finding(f.clone()))
    }

    fn run(&mut self, r: RunVerdict) -> io::Result<()> {
        self.tell(Said::Run(Box::new(r)))
    }
}

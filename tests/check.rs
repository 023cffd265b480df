//! The `check` harness: one stream judged in process through every way
//! the engine reads (`aoitap::stream::paths`), after ripgrep's
//! `SearcherTester` (grep-searcher's src/testutil.rs: one input, every
//! configuration, all must agree). The paths: the stream as a small file
//! read whole on the judging thread; written into a pipe in three pieces,
//! each after the reader has paused on the empty pipe, and read by the
//! pipeline's threads, as standard input is; as three files shared out
//! to the pool's two workers (each file a stream of its own); and as a
//! file followed while it is written in three pieces, a look after each
//! (docs/contract.md §2.2, §2.3). The pieces are cut at a third and two
//! thirds of the bytes, inside a line mostly. They must agree on every finding
//! (its rule, line, severity and the rest of it), every run's verdict and
//! the exit status (docs/contract.md §3.1, §4.1); a case fails naming the
//! paths that disagree, and on what.
//!
//! The options are the binary's: `verify --output jsonl ARGS` parsed and
//! loaded as `main` does it (`cli::parse_from`, `cmd::load`). What is
//! found is taken from the checker on its way to the report, by a sink
//! that keeps it and passes it on (`Tee`), so the report's tally, and so
//! the exit status, is the engine's own; the report's printer writes to
//! nothing. No binary is spawned: the rule table of tests/verify.rs runs
//! through all four paths in well under a second.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::sync::mpsc;
use std::time::Duration;

use aoitap::check::{Checker, Finding, LineKind, OpenRun, RunVerdict, Sink, Tally};
use aoitap::config::{Input, Invocation, StreamOptions};
use aoitap::input::scan::Line;
use aoitap::output::Emitter;
use aoitap::stream::paths::{self, Alone};
use aoitap::stream::{Consumer, Listener, Report};

/// The ways the engine reads a stream, in the order a disagreement is
/// told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReadPath {
    Whole,
    Piped,
    Pool,
    Follow,
}

const READ_PATHS: [ReadPath; 4] = [
    ReadPath::Whole,
    ReadPath::Piped,
    ReadPath::Pool,
    ReadPath::Follow,
];

/// The pool's copies of the stream: more files than workers, so a worker
/// takes a second job while the report waits on the first.
const COPIES: usize = 3;

impl ReadPath {
    fn name(self) -> &'static str {
        match self {
            ReadPath::Whole => "whole",
            ReadPath::Piped => "piped",
            ReadPath::Pool => "pool",
            ReadPath::Follow => "follow",
        }
    }
}

/// A finding as the paths are held to it: all the checker says of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub rule: &'static str,
    pub line: u64,
    pub severity: &'static str,
    pub run: Option<String>,
    pub run_line: Option<u64>,
    pub seq: Option<u64>,
    pub column: Option<usize>,
    /// `seq.gap`: the first and last missing, and how many.
    pub missing: Option<(u64, u64, u64)>,
    pub lost: bool,
    pub message: String,
}

impl Found {
    fn of(f: &Finding) -> Found {
        Found {
            rule: f.rule.id(),
            line: f.line,
            severity: f.severity.name(),
            run: f.run.clone(),
            run_line: f.run_line,
            seq: f.seq,
            column: f.column,
            missing: f.missing,
            lost: f.lost,
            message: f.message.clone(),
        }
    }
}

/// A run's verdict as the paths are held to it (all but how long the run
/// took, and the checker's slot for it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged {
    pub run: Option<String>,
    pub first_line: u64,
    pub lines: u64,
    pub verdict: &'static str,
    pub message: String,
    pub retry_after_ms: Option<u64>,
    pub domain_events: u64,
    pub warnings: u64,
    pub errors: u64,
    pub missing: u64,
    pub repeats: u64,
    pub error_findings: u64,
    pub lost: Option<String>,
}

impl Judged {
    fn of(r: &RunVerdict) -> Judged {
        Judged {
            run: r.run.clone(),
            first_line: r.first_line,
            lines: r.lines,
            verdict: r.verdict.name(),
            message: r.message.clone(),
            retry_after_ms: r.cause.as_ref().and_then(|c| c.retry_after_ms),
            domain_events: r.domain_events,
            warnings: r.warnings,
            errors: r.errors,
            missing: r.missing,
            repeats: r.repeats,
            error_findings: r.error_findings,
            lost: r.lost.clone(),
        }
    }
}

/// What judging one stream came to: its findings and run verdicts in the
/// order said, and the exit status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    pub findings: Vec<Found>,
    pub runs: Vec<Judged>,
    pub exit: i32,
}

impl Outcome {
    /// The rules of the findings, in order.
    pub fn rules(&self) -> Vec<&'static str> {
        self.findings.iter().map(|f| f.rule).collect()
    }

    pub fn has_rule(&self, rule: &str) -> bool {
        self.findings.iter().any(|f| f.rule == rule)
    }

    /// The verdicts of the runs, in order.
    pub fn verdicts(&self) -> Vec<&'static str> {
        self.runs.iter().map(|r| r.verdict).collect()
    }

    /// One line for each thing said, to tell two outcomes apart by.
    fn told(&self) -> Vec<String> {
        let mut out = vec![format!("exit {}", self.exit)];
        out.extend(self.findings.iter().map(|f| format!("{f:?}")));
        out.extend(self.runs.iter().map(|r| format!("{r:?}")));
        out
    }
}

/// `verify --output jsonl ARGS` on `input`, judged through every reading
/// path: what they found, once they agree. A panic names the paths that
/// disagree, and on what.
pub fn judge(args: &[&str], input: &[u8]) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let heard: Vec<(String, Outcome)> = READ_PATHS
        .iter()
        .flat_map(|&path| through(path, args, input, dir.path()))
        .collect();
    agree(args, input, &heard)
}

/// The rule table's assertion (tests/verify.rs, `fires!`): the paths
/// agree, and the findings are exactly `want`, each (rule, line) as many
/// times as listed (line 0: a finding about the whole input).
pub fn fires(want: &[(&str, u64)], input: &[u8], args: &[&str]) {
    let out = judge(args, input);
    let mut got: Vec<(&str, u64)> = out.findings.iter().map(|f| (f.rule, f.line)).collect();
    let mut want = want.to_vec();
    got.sort();
    want.sort();
    assert_eq!(
        got,
        want,
        "findings (exit {}) differ; input:\n{}",
        out.exit,
        String::from_utf8_lossy(input)
    );
}

/// Every outcome the same, or a panic that names who said what.
fn agree(args: &[&str], input: &[u8], heard: &[(String, Outcome)]) -> Outcome {
    let mut groups: Vec<(Vec<&str>, &Outcome)> = vec![];
    for (name, outcome) in heard {
        match groups.iter_mut().find(|(_, o)| *o == outcome) {
            Some((names, _)) => names.push(name.as_str()),
            None => groups.push((vec![name.as_str()], outcome)),
        }
    }
    let (names, first) = &groups[0];
    if groups.len() == 1 {
        return (*first).clone();
    }
    let mut said = format!(
        "the reading paths disagree on `{}`:\n",
        ["verify --output jsonl", &args.join(" ")]
            .join(" ")
            .trim_end()
    );
    let ours = first.told();
    for (others, other) in &groups[1..] {
        said += &format!("{} against {}:\n", others.join(", "), names.join(", "));
        let theirs = other.told();
        for line in ours.iter().filter(|l| !theirs.contains(l)) {
            said += &format!("  only {}: {line}\n", names.join(", "));
        }
        for line in theirs.iter().filter(|l| !ours.contains(l)) {
            said += &format!("  only {}: {line}\n", others.join(", "));
        }
        if ours.iter().all(|l| theirs.contains(l)) && theirs.iter().all(|l| ours.contains(l)) {
            said += "  the same things, in another order\n";
        }
    }
    let text = String::from_utf8_lossy(input);
    let cut: String = text.chars().take(2000).collect();
    panic!("{said}input:\n{cut}");
}

/// `verify --output jsonl ARGS` on `input` read `path`'s way: an outcome
/// for the stream (one for each of the pool's copies), named for the path.
fn through(
    path: ReadPath,
    args: &[&str],
    input: &[u8],
    dir: &std::path::Path,
) -> Vec<(String, Outcome)> {
    let mut opts = options(args, path == ReadPath::Pool);
    let nowhere: Box<dyn Write> = Box::new(io::sink());
    let mut report = Report {
        tally: Tally::default(),
        out: Emitter::new(BufWriter::new(nowhere), opts.style, "verify"),
    };
    let mut record = Record::default();
    let judged = match path {
        ReadPath::Whole => {
            let file = dir.join("whole.jsonl");
            fs::write(&file, input).unwrap();
            paths::alone(
                Alone::Whole,
                File::open(&file).unwrap(),
                &opts,
                &mut record,
                &mut report,
            )
        }
        ReadPath::Piped => {
            let (from, to) = rustix::pipe::pipe().unwrap();
            let pieces: Vec<Vec<u8>> = pieces(input).map(<[u8]>::to_vec).collect();
            let (paused, pause) = mpsc::channel();
            record.paused = Some(paused);
            let writer = std::thread::spawn(move || {
                let mut to = File::from(to);
                for (k, piece) in pieces.iter().enumerate() {
                    // Each piece after the first once the reader has
                    // found the pipe empty and paused, as a live pipe's
                    // reader does between a producer's writes (never
                    // waiting long: a pause is a help, not a need).
                    if k > 0 {
                        let _ = pause.recv_timeout(Duration::from_secs(5));
                    }
                    // A reader that stopped early closed the pipe: its
                    // outcome says so.
                    if to.write_all(piece).is_err() {
                        return;
                    }
                }
            });
            let judged = paths::alone(
                Alone::Piped,
                File::from(from),
                &opts,
                &mut record,
                &mut report,
            );
            record.paused = None;
            writer.join().unwrap();
            judged
        }
        ReadPath::Pool => {
            opts.inputs = (1..=COPIES)
                .map(|k| {
                    let file = dir.join(format!("pool-{k}.jsonl"));
                    fs::write(&file, input).unwrap();
                    Input::Path(file)
                })
                .collect();
            let mut tee = Tee {
                record: &mut record,
                report: &mut report,
            };
            paths::pooled(&opts, &mut tee)
        }
        ReadPath::Follow => {
            let file = dir.join("follow.jsonl");
            fs::write(&file, b"").unwrap();
            let mut pieces = pieces(input);
            let mut grow = || {
                let Some(piece) = pieces.next() else {
                    return false;
                };
                let mut f = OpenOptions::new().append(true).open(&file).unwrap();
                f.write_all(piece).unwrap();
                true
            };
            paths::followed(&opts, &file, &mut record, &mut report, &mut grow)
        }
    };
    if let Err(e) = judged {
        panic!("{}: judging failed: {e}", path.name());
    }
    // Everything the report counted came through the tee: else the exit
    // status would rest on findings no outcome shows.
    let (counted, kept) = (&report.tally, &record.tally);
    assert!(
        (counted.findings, counted.runs) == (kept.findings, kept.runs),
        "{}: the report counted findings {:?} and verdicts {:?}, the checker said {:?} and {:?} to the harness",
        path.name(),
        counted.findings,
        counted.runs,
        kept.findings,
        kept.runs
    );
    let exit = i32::from(report.tally.decide(None, |v| v).code());
    let outcome = |said: Option<&Said>| {
        let said = said.cloned().unwrap_or_default();
        Outcome {
            findings: said.findings,
            runs: said.runs,
            exit,
        }
    };
    match path {
        ReadPath::Pool => opts
            .inputs
            .iter()
            .enumerate()
            .map(|(k, i)| {
                let said = record.inputs.iter().find(|(l, _)| *l == i.label());
                (format!("pool[{}]", k + 1), outcome(said.map(|(_, s)| s)))
            })
            .collect(),
        _ => vec![(
            path.name().to_string(),
            outcome(record.inputs.first().map(|(_, s)| s)),
        )],
    }
}

/// The options `aoitap verify --output jsonl ARGS` runs with (the pool's
/// with `-j 2`), standard input their one input.
fn options(args: &[&str], pool: bool) -> StreamOptions {
    let mut argv: Vec<OsString> = ["aoitap", "verify", "--output", "jsonl"]
        .iter()
        .map(OsString::from)
        .collect();
    if pool {
        argv.extend(["-j", "2"].iter().map(OsString::from));
    }
    argv.extend(args.iter().map(OsString::from));
    match aoitap::cli::parse_from(argv).and_then(aoitap::cmd::load) {
        Ok(Invocation::Verify(opts)) => opts,
        Ok(_) => unreachable!("verify's command line is verify's"),
        Err(e) => panic!("verify {}: refused: {e}", args.join(" ")),
    }
}

/// `input` in up to three pieces, cut at a third and two thirds of its
/// bytes (inside a line, mostly): what a producer hands a pipe or a
/// followed file a write at a time.
fn pieces(input: &[u8]) -> impl Iterator<Item = &[u8]> {
    let n = input.len();
    [0..n / 3, n / 3..2 * n / 3, 2 * n / 3..n]
        .into_iter()
        .map(move |r| &input[r])
        .filter(|p| !p.is_empty())
}

/// What was said of one input, in order.
#[derive(Clone, Default)]
struct Said {
    findings: Vec<Found>,
    runs: Vec<Judged>,
}

/// What one path said, input by input (the serial paths and follow read
/// one, unnamed; the pool names each), and the same counted as the
/// report's tally counts it.
#[derive(Default)]
struct Record {
    inputs: Vec<(String, Said)>,
    tally: Tally,
    /// Told of each pause (the piped path's writer).
    paused: Option<mpsc::Sender<()>>,
}

impl Record {
    fn said(&mut self) -> &mut Said {
        if self.inputs.is_empty() {
            self.inputs.push((String::new(), Said::default()));
        }
        &mut self.inputs.last_mut().unwrap().1
    }
}

/// The sink the checker says things to: each kept in `record`, then passed
/// on to the report.
struct Tee<'a> {
    record: &'a mut Record,
    report: &'a mut Report,
}

impl Sink for Tee<'_> {
    fn finding(&mut self, f: &Finding) -> io::Result<()> {
        self.record.tally.finding(f);
        self.record.said().findings.push(Found::of(f));
        self.report.finding(f)
    }

    fn run(&mut self, r: RunVerdict) -> io::Result<()> {
        self.record.tally.run(&r);
        self.record.said().runs.push(Judged::of(&r));
        self.report.run(r)
    }
}

/// The pool's report thread says what its workers told to the tee.
impl Listener for Tee<'_> {
    fn input(&mut self, label: String) {
        self.record.inputs.push((label.clone(), Said::default()));
        self.report.input(label);
    }

    fn not_opened(&mut self, e: &io::Error) -> io::Result<()> {
        self.report.not_opened(e)
    }

    fn not_read(&mut self, e: &io::Error) -> io::Result<()> {
        self.report.not_read(e)
    }

    fn cancelled(&mut self, runs: Vec<OpenRun>) -> io::Result<()> {
        self.report.cancelled(runs)
    }
}

/// verify's consumer (every line judged, nothing more), judging into the
/// tee: the serial paths and follow.
impl Consumer for Record {
    fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        report: &mut Report,
    ) -> aoitap::exit::Result<LineKind> {
        let mut tee = Tee {
            record: self,
            report,
        };
        Ok(check.judge(line, &mut tee)?.kind)
    }

    fn end_input(&mut self, check: Checker, report: &mut Report) -> aoitap::exit::Result<()> {
        let mut tee = Tee {
            record: self,
            report,
        };
        Ok(check.finish(&mut tee)?)
    }

    /// The input would make the reader wait: the piped path's writer,
    /// told, writes its next piece.
    fn flush(&mut self) -> aoitap::exit::Result<()> {
        if let Some(paused) = &self.paused {
            let _ = paused.send(());
        }
        Ok(())
    }

    fn judges_only(&self) -> bool {
        true
    }
}

/// The harness can fail: two paths that disagree are named, with what
/// each said that the other did not.
#[test]
fn a_path_that_disagrees_is_named() {
    let agreed = Outcome {
        exit: 65,
        ..Outcome::default()
    };
    let heard = vec![
        ("whole".to_string(), agreed.clone()),
        ("piped".to_string(), agreed.clone()),
        ("pool[1]".to_string(), Outcome { exit: 0, ..agreed }),
    ];
    let said = std::panic::catch_unwind(|| agree(&["--strict"], b"{}\n", &heard))
        .expect_err("the paths disagree");
    let said = said.downcast_ref::<String>().unwrap();
    assert!(
        said.contains("pool[1] against whole, piped:")
            && said.contains("only whole, piped: exit 65")
            && said.contains("only pool[1]: exit 0"),
        "{said}"
    );
}

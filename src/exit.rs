//! Exit statuses (docs/contract.md §4.1, spec §6): the only place that knows the numbers.

use std::io;
use std::process::ExitCode;

/// A command's exit status. When it meets two, `Exit::worse` says which
/// stands; the order here is the order help lists them in, nothing more.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Exit {
    /// Every run passed.
    #[default]
    Pass,
    /// Well formed, and the producer reported a failure that is not retryable.
    Failed,
    /// Well formed, and every failed run may succeed if retried.
    Retryable,
    /// The stream violates the contract: wins over `Failed` and `Retryable`.
    Nonconforming,
    /// Bad command line.
    Usage,
    /// An input file could not be opened.
    NoInput,
    /// An output file or directory could not be created.
    CantCreate,
    /// Reading or writing failed.
    Io,
    /// `run`: the command exists but cannot be executed.
    CannotExecute,
    /// `run`: no such command.
    CommandNotFound,
    /// Downstream closed the pipe: a normal ending, without a message.
    BrokenPipe,
    /// SIGHUP, handled as SIGTERM (docs/contract.md §3.3).
    HungUp,
    Interrupted,
    Terminated,
}

impl Exit {
    /// Every status, in the order help and the man page list them.
    pub const ALL: [Exit; 14] = [
        Exit::Pass,
        Exit::Failed,
        Exit::Retryable,
        Exit::Nonconforming,
        Exit::Usage,
        Exit::NoInput,
        Exit::CantCreate,
        Exit::Io,
        Exit::CannotExecute,
        Exit::CommandNotFound,
        Exit::HungUp,
        Exit::Interrupted,
        Exit::Terminated,
        Exit::BrokenPipe,
    ];

    pub fn code(self) -> u8 {
        match self {
            Exit::Pass => 0,
            Exit::Failed => 1,
            Exit::Usage => 64,
            Exit::Nonconforming => 65,
            Exit::NoInput => 66,
            Exit::CantCreate => 73,
            Exit::Io => 74,
            Exit::Retryable => 75,
            Exit::CannotExecute => 126,
            Exit::CommandNotFound => 127,
            Exit::HungUp => 129,
            Exit::Interrupted => 130,
            Exit::BrokenPipe => 141,
            Exit::Terminated => 143,
        }
    }

    /// A few words for `--help`.
    pub fn brief(self) -> &'static str {
        match self {
            Exit::Pass => "pass",
            Exit::Failed => "producer reported failure",
            Exit::Retryable => "failed, retryable",
            Exit::Nonconforming => "not conforming",
            Exit::Usage => "usage",
            Exit::NoInput => "input missing",
            Exit::CantCreate => "cannot create output",
            Exit::Io => "I/O error",
            Exit::CannotExecute => "(run, lint) command not executable",
            Exit::CommandNotFound => "(run, lint) command not found",
            Exit::HungUp => "hung up",
            Exit::Interrupted => "interrupted",
            Exit::Terminated => "terminated",
            Exit::BrokenPipe => "downstream closed",
        }
    }

    /// A sentence for the man page.
    pub fn meaning(self) -> &'static str {
        match self {
            Exit::Pass => "Every run passed: conforming, complete, ok.",
            Exit::Failed => {
                "Well formed, and the producer reported failure; lint: a check failed, or one it needs could not be decided."
            }
            Exit::Retryable => {
                "As 1, and every failed run is retryable; the report gives retry_after_ms."
            }
            Exit::Nonconforming => {
                "The stream violates the contract (any error finding); reconcile: something is \
                 missing or does not reconcile. Wins over 1 and 75."
            }
            Exit::Usage => "Usage error.",
            Exit::NoInput => "An input file is missing.",
            Exit::CantCreate => {
                "An output file cannot be created, or exists (split-by-run without --force)."
            }
            Exit::Io => "I/O error.",
            Exit::CannotExecute => "run, lint: the command cannot be executed.",
            Exit::CommandNotFound => "run, lint: the command is not found.",
            Exit::HungUp => "SIGHUP, handled as SIGTERM.",
            Exit::Interrupted => {
                "SIGINT: what was judged is reported, and in jsonl mode the summary says reason \
                 cancelled."
            }
            Exit::Terminated => "SIGTERM: as SIGINT.",
            Exit::BrokenPipe => "The downstream closed the pipe; aoitap ends quietly.",
        }
    }

    /// The worse of two statuses met by one command: the one that says
    /// more about why it did not pass (docs/contract.md §4.1), by `precedence`.
    pub fn worse(self, other: Exit) -> Exit {
        if other.precedence() > self.precedence() {
            other
        } else {
            self
        }
    }

    /// The worse of two statuses either of which may be missing: a
    /// missing one says nothing, so the other stands.
    pub fn worst(a: Option<Exit>, b: Option<Exit>) -> Option<Exit> {
        match (a, b) {
            (Some(a), Some(b)) => Some(a.worse(b)),
            (a, None) => a,
            (None, b) => b,
        }
    }

    /// Which of two statuses `worse` keeps: the higher. Verdicts on what
    /// was judged are lowest, then what kept the command from judging,
    /// then the ends it cannot go on from.
    fn precedence(self) -> u8 {
        match self {
            // Nothing to say: anything else says more.
            Exit::Pass => 0,
            // The producer's failures (docs/contract.md §4.1). 75 over 1 as the order
            // this table replaced had it; the input's own verdict never
            // merges the two (`verdict`: a plain failure is 1, as 75 says
            // every failed run is retryable).
            Exit::Failed => 1,
            Exit::Retryable => 2,
            // "Wins over 1 and 75" (docs/contract.md §4.1): a stream that breaks the
            // contract cannot be trusted to report its own failure.
            Exit::Nonconforming => 3,
            // What kept the command from judging all its input weighs over
            // any verdict on the part it judged: that verdict is not the
            // input's. Among them the higher sysexits code (docs/contract.md §4.1:
            // 64, 66, 73, 74): a read that failed part way says more than
            // an input that was never there.
            Exit::Usage => 4,
            Exit::NoInput => 5,
            Exit::CantCreate => 6,
            Exit::Io => 7,
            // `run`, `lint`: CMD never ran, so nothing of it was judged.
            Exit::CannotExecute => 8,
            Exit::CommandNotFound => 9,
            // Downstream is gone: nothing more can be said (docs/contract.md §4.1: exit
            // quietly).
            Exit::BrokenPipe => 10,
            // A signal stopped the command: whatever it had met, the
            // report is a cancelled one (docs/contract.md §4.1: 130, 143; §3.3: 129).
            Exit::HungUp => 11,
            Exit::Interrupted => 12,
            Exit::Terminated => 13,
        }
    }

    /// Ended by a signal: the report is a cancelled one.
    pub fn cancelled(self) -> bool {
        matches!(self, Exit::HungUp | Exit::Interrupted | Exit::Terminated)
    }

    /// `Exit status: 0 pass · 1 producer reported failure · …` for help.
    pub fn help() -> String {
        let list: Vec<String> = Exit::ALL
            .iter()
            .map(|e| format!("{} {}", e.code(), e.brief()))
            .collect();
        format!("Exit status: {}", list.join(" · "))
    }

    /// The input's verdict from what was seen: any error finding makes it
    /// nonconforming; else any plain failure is 1; else any retryable
    /// failure is 75 (so 75 means every failed run is retryable).
    pub fn verdict(error_findings: u64, failed: u64, retryable: u64) -> Exit {
        if error_findings > 0 {
            Exit::Nonconforming
        } else if failed > 0 {
            Exit::Failed
        } else if retryable > 0 {
            Exit::Retryable
        } else {
            Exit::Pass
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e.code())
    }
}

/// Why a command could not do its job, as opposed to its verdict on the
/// input. Each kind ends with its own status; `main` prints it once (a
/// closed downstream: not at all, spec §7) and exits. Commands return
/// `Result<Exit>`.
#[derive(Debug)]
pub enum Error {
    /// `--help`, `--version`: not a failure, but clap hands them back as its
    /// errors; printing the text is the whole command (0).
    Help(Help),
    /// A command line refused before any command ran (64).
    Refused(Box<Refusal>),
    /// A bad request found after parsing (`schema --name other`).
    Usage(String),
    /// An input could not be opened.
    NoInput(String),
    /// An output could not be created, or exists and may not be replaced.
    CantCreate(String),
    /// Reading or writing failed; `what` names the file when known.
    Io {
        what: Option<String>,
        source: io::Error,
    },
    /// `lint`: CMD cannot be started (127 not found, 126 not executable).
    NotRun(Exit, String),
    /// A stream command's read or write failed once its report had begun,
    /// and the command ended the report with it. `in_report`: the report
    /// itself says so (jsonl's `aoi:error`, a TAP point); else `message` is
    /// the one line main writes on stderr.
    Ended {
        exit: Exit,
        message: String,
        in_report: bool,
    },
}

pub type Result<T> = std::result::Result<T, Error>;

/// A refused command line and what it takes to say it: once on stderr, the
/// way clap says its own errors, and once more in the machine format
/// `--output` asked for (spec §2, §9: usage; docs/contract.md §3.3).
#[derive(Debug)]
pub struct Refusal {
    pub problem: Problem,
    /// The subcommand named, or "aoitap": aoitap's own meta names it.
    pub command: String,
    /// `--output jsonl` or `--output tap`: the reason goes to stdout too.
    pub machine: Option<Machine>,
}

/// Why a command line is refused.
#[derive(Debug)]
pub enum Problem {
    /// clap's own error (its hints; its colours where clap would paint).
    Clap(Rendered),
    /// A check clap cannot make: the problem, in one line.
    Check(String),
    /// No subcommand: the help, said on stderr, is the answer.
    NoCommand(String),
}

/// Text clap rendered, in plain types (`cli` renders it; nothing here
/// sees clap): `ansi` with clap's styles as escape codes, written the way
/// clap writes its own (painted only where it would paint:
/// `output::style::write_as_clap`), and `plain`, the same without them.
#[derive(Debug)]
pub struct Rendered {
    pub ansi: String,
    pub plain: String,
}

/// The text `--help` or `--version` asked for, to go to stdout.
#[derive(Debug)]
pub enum Help {
    /// clap's help or version text.
    Clap(Rendered),
    /// Help aoitap renders itself (run's), painted or not already.
    Own(String),
}

/// A machine format a usage error is said in besides stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Machine {
    /// aoitap's own failed run, with the problem as its error; on stderr
    /// where the command's report would go there (filter, strip-envelope,
    /// verify --relay), stdout being the data.
    Jsonl { on_stderr: bool },
    /// A TAP bail out with the problem as its reason.
    Tap,
    /// stdout is an upgraded stream (`upgrade`, `run --upgrade`): a whole
    /// one of aoitap's, failed on the problem (docs/contract.md §1.6).
    Upgraded,
}

impl Refusal {
    /// The problem in one line: what the jsonl error and the bail out say.
    pub fn reason(&self) -> String {
        match &self.problem {
            // Whole, the tip too: its first line alone may end at a
            // colon ("were not provided:"), the list below it.
            Problem::Clap(e) => {
                let said: Vec<&str> = e
                    .plain
                    .lines()
                    .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more"))
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect();
                match said.join(" ") {
                    s if s.is_empty() => "usage error".to_string(),
                    s => s.trim_start_matches("error: ").to_string(),
                }
            }
            Problem::Check(problem) => problem.clone(),
            Problem::NoCommand(_) => "no command given".to_string(),
        }
    }
}

impl Error {
    /// A failed read or write of the file `what` names.
    pub fn io(what: String, source: io::Error) -> Error {
        Error::Io {
            what: Some(what),
            source,
        }
    }

    pub fn exit(&self) -> Exit {
        match self {
            Error::Help(_) => Exit::Pass,
            Error::Refused(_) | Error::Usage(_) => Exit::Usage,
            Error::NoInput(_) => Exit::NoInput,
            Error::CantCreate(_) => Exit::CantCreate,
            Error::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe => {
                Exit::BrokenPipe
            }
            Error::Io { .. } => Exit::Io,
            Error::Ended { exit, .. } | Error::NotRun(exit, _) => *exit,
        }
    }

    /// The command had begun a report of its own when this happened, so
    /// main starts no second one (jsonl's error stream, TAP's `Bail out!`).
    /// Every `Io` error counts as one: a stream command reads and writes
    /// once its report has begun, and the few that fail before it (such as
    /// an unreadable `--against` reference) are said on stderr alone.
    pub fn report_begun(&self) -> bool {
        matches!(self, Error::Io { .. } | Error::Ended { .. })
    }

    /// The command's report carries the error: main says nothing more.
    pub fn in_report(&self) -> bool {
        matches!(
            self,
            Error::Ended {
                in_report: true,
                ..
            }
        )
    }
}

impl From<io::Error> for Error {
    fn from(source: io::Error) -> Error {
        Error::Io { what: None, source }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Help(Help::Clap(text)) => f.write_str(&text.plain),
            Error::Help(Help::Own(text)) => f.write_str(text),
            Error::Refused(r) => f.write_str(&r.reason()),
            Error::Usage(m) | Error::NoInput(m) | Error::CantCreate(m) | Error::NotRun(_, m) => {
                f.write_str(m)
            }
            Error::Io {
                what: Some(w),
                source,
            } => write!(f, "{w}: {source}"),
            Error::Io { what: None, source } => write!(f, "{source}"),
            Error::Ended { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

/// Whether a command's own exit status is a usage error by convention:
/// 64 of sysexits, 2 of getopt-style parsers (argparse, clap).
pub fn is_usage_status(code: i32) -> bool {
    matches!(code, 2 | 64)
}

/// What a command's own exit status says by convention, when it says
/// something: a usage error, or a shell's 126 and 127 (POSIX 2.8.2), so
/// `run` and `lint` name it rather than guess at a crash.
pub fn said_by_status(code: i32) -> Option<&'static str> {
    match code {
        c if is_usage_status(c) => Some("a usage error"),
        126 => Some("a command found but not executable"),
        127 => Some("a command not found"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::Exit::{self, *};

    /// Every status, from the one `worse` gives up first to the one it
    /// keeps over all: the declaration order whose derived `Ord` was the
    /// merge before `precedence`, reproduced exactly.
    const LEAST_FIRST: [Exit; 14] = [
        Pass,
        Failed,
        Retryable,
        Nonconforming,
        Usage,
        NoInput,
        CantCreate,
        Io,
        CannotExecute,
        CommandNotFound,
        BrokenPipe,
        HungUp,
        Interrupted,
        Terminated,
    ];

    #[test]
    fn every_pair_keeps_the_later_in_the_order() {
        for (i, &a) in LEAST_FIRST.iter().enumerate() {
            for (j, &b) in LEAST_FIRST.iter().enumerate() {
                let want = if i >= j { a } else { b };
                assert_eq!(a.worse(b), want, "{a:?} worse {b:?}");
            }
        }
    }

    #[test]
    fn the_order_holds_every_status_once() {
        for e in Exit::ALL {
            let n = LEAST_FIRST.iter().filter(|&&x| x == e).count();
            assert_eq!(n, 1, "{e:?}");
        }
    }

    /// The rules docs/contract.md §4.1 states, and the ones the callers lean on.
    #[test]
    fn the_rules() {
        let rules = [
            // 65 wins over 1 and 75.
            (Nonconforming, Failed, Nonconforming),
            (Nonconforming, Retryable, Nonconforming),
            // As the derived order had it.
            (Failed, Retryable, Retryable),
            // Any status over a pass.
            (Pass, Failed, Failed),
            (Pass, Io, Io),
            // Trouble reading over any verdict on what was read.
            (Nonconforming, NoInput, NoInput),
            (Nonconforming, Io, Io),
            (Retryable, Io, Io),
            (Failed, CantCreate, CantCreate),
            // A failed read over a missing file; a failed write of a file
            // run saves CMD's stream to over a missing input.
            (NoInput, Io, Io),
            (NoInput, CantCreate, CantCreate),
            (CantCreate, Io, Io),
            // CMD not run, over the troubles of reading.
            (Io, CannotExecute, CannotExecute),
            (Io, CommandNotFound, CommandNotFound),
            (CannotExecute, CommandNotFound, CommandNotFound),
            // A closed downstream over any trouble; a signal over it.
            (CommandNotFound, BrokenPipe, BrokenPipe),
            (BrokenPipe, HungUp, HungUp),
            (HungUp, Interrupted, Interrupted),
            (Interrupted, Terminated, Terminated),
            (Io, Interrupted, Interrupted),
        ];
        for (a, b, want) in rules {
            assert_eq!(a.worse(b), want, "{a:?} worse {b:?}");
            assert_eq!(b.worse(a), want, "{b:?} worse {a:?}");
        }
    }

    #[test]
    fn a_missing_status_says_nothing() {
        assert_eq!(Exit::worst(None, None), None);
        for e in Exit::ALL {
            assert_eq!(Exit::worst(None, Some(e)), Some(e));
            assert_eq!(Exit::worst(Some(e), None), Some(e));
            assert_eq!(Exit::worst(Some(e), Some(Pass)), Some(e));
        }
    }
}

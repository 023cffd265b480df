//! The plain options every command reads: `cli` turns clap's values
//! into these before any input is read, and nothing past here sees clap
//! (ripgrep's `LowArgs -> HiArgs`). Commands depend on this file, never on
//! `cli`'s clap structs, so the two cannot import each other.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::check::Config;
use crate::exit::Machine;
/// The commands that read `SplitOptions::inputs` find its type here, with
/// the options.
pub use crate::input::file_id::FileId;
use crate::output::style::{Format, Style};

/// What to run, in plain terms.
pub enum Invocation {
    Verify(StreamOptions),
    StripEnvelope(StripOptions),
    Upgrade(UpgradeOptions),
    SplitByRun(SplitOptions),
    Summarize(SummarizeOptions),
    Reconcile(ReconcileOptions),
    Schema(SchemaOptions),
    Capabilities(CapabilitiesOptions),
    /// `aoitap profiles [NAME|FILE]`: all of them, or one as TOML.
    Profiles(Option<crate::check::ProfileRef>),
    Completions(CompletionsOptions),
    /// `aoitap man`: the manual page.
    Man,
    Run(RunOptions),
    Lint(LintOptions),
    Filter(FilterOptions),
}

/// `aoitap lint`.
pub struct LintOptions {
    pub command: Vec<OsString>,
    pub style: Style,
    pub timeout: Duration,
    /// Variables passed from lint's environment to CMD's calls.
    pub env: Vec<(OsString, OsString)>,
    /// The words of CMD that name the tool (`None`: lint decides).
    pub tool_words: Option<usize>,
    /// The checks to make, by id, in catalogue order.
    pub checks: Vec<&'static str>,
    pub secret_flags: Vec<String>,
    /// `--expected-failures FILE`: read by lint before it runs, into
    /// `expected_failures`.
    pub expected_failures_file: Option<PathBuf>,
    /// Ids known to fail.
    pub expected_failures: Vec<String>,
}

impl Invocation {
    /// The machine format a fatal error is said in besides stderr, and the
    /// command that names it: the format of the command's own report.
    /// jsonl goes to stderr where that report does (filter, strip-envelope,
    /// verify --relay: stdout is the data); a TAP bail out goes to stdout.
    pub fn machine(&self) -> Option<(&'static str, Machine)> {
        match self {
            Invocation::Upgrade(_) => return Some(("upgrade", Machine::Upgraded)),
            Invocation::Run(o) if o.stream.upgrade => return Some(("run", Machine::Upgraded)),
            _ => {}
        }
        let jsonl = self.jsonl_command().map(|c| {
            let on_stderr = self.report_on_stderr();
            (c, Machine::Jsonl { on_stderr })
        });
        jsonl.or_else(|| self.tap_command().map(|c| (c, Machine::Tap)))
    }

    /// The command's name, when its report is aoitap's jsonl stream.
    fn jsonl_command(&self) -> Option<&'static str> {
        let (name, stream) = match self {
            Invocation::Verify(o) => ("verify", o),
            Invocation::StripEnvelope(o) => ("strip-envelope", &o.stream),
            Invocation::Filter(o) => ("filter", &o.stream),
            Invocation::SplitByRun(o) => ("split-by-run", &o.stream),
            Invocation::Summarize(o) => ("summarize", &o.stream),
            Invocation::Reconcile(o) => ("reconcile", &o.stream),
            Invocation::Run(o) => ("run", &o.stream),
            Invocation::Lint(o) => {
                return (o.style.format == Format::Jsonl && !o.style.quiet).then_some("lint");
            }
            _ => return None,
        };
        (stream.style.format == Format::Jsonl && !stream.style.quiet).then_some(name)
    }

    /// Whether the report goes to stderr, stdout being the data (filter,
    /// strip-envelope, verify --relay): a JSONL error stream goes there too.
    fn report_on_stderr(&self) -> bool {
        match self {
            Invocation::Verify(o) => o.relay,
            Invocation::StripEnvelope(_) | Invocation::Filter(_) => true,
            _ => false,
        }
    }

    /// The command's name, when stdout is its TAP report (verify, run,
    /// lint: `--output tap`).
    fn tap_command(&self) -> Option<&'static str> {
        let (name, stream) = match self {
            Invocation::Verify(o) => ("verify", o),
            Invocation::Run(o) => ("run", &o.stream),
            Invocation::Lint(o) => {
                return (o.style.format == Format::Tap && !o.style.quiet).then_some("lint");
            }
            _ => return None,
        };
        let tap = stream.style.format == Format::Tap && !stream.style.quiet;
        (tap && stream.report.is_none()).then_some(name)
    }
}

/// The plain form of `StreamArgs`.
pub struct StreamOptions {
    pub inputs: Vec<Input>,
    pub style: Style,
    pub check: Config,
    pub max_line_bytes: usize,
    /// Where the report goes instead of the command's default.
    pub report: Option<PathBuf>,
    pub line_buffered: bool,
    pub idle_timeout_ms: Option<u64>,
    /// verify --relay: the input is copied to stdout.
    pub relay: bool,
    /// `run --upgrade`: the relay is CMD's stream upgraded to AOI 1.0,
    /// written by the command as each line is judged (docs/contract.md §1.6).
    pub upgrade: bool,
    /// Exposed secrets are written as "***" (relay, strip, split).
    pub redact: bool,
    /// run --save: the relay goes to this file instead of stdout.
    pub save: Option<PathBuf>,
    /// verify -j: workers judging FILE operands at once (docs/contract.md §2.2).
    pub jobs: usize,
    /// `--follow`: the FILE operands are followed by name (docs/contract.md §2.3).
    pub follow: Option<Follow>,
    /// `--schema FILE` (verify, run): compiled by the command before it
    /// runs, into `check.schema` (docs/contract.md §3.5).
    pub schema_file: Option<PathBuf>,
}

/// `--follow` (docs/contract.md §2.3).
#[derive(Clone, Debug)]
pub struct Follow {
    /// `--from-end`: what is in the files already is judged, not reported.
    pub from_end: bool,
    /// `--run-idle-timeout`: when an open run is `run.stalled`.
    pub run_idle: Option<Duration>,
    /// `--state FILE`: where reading stopped, to resume there.
    pub state: Option<PathBuf>,
    /// What aoitap writes (`--report`, `--state`, split-by-run's `--dir`):
    /// never a followed file, whatever a glob matches.
    pub written: Vec<PathBuf>,
    pub written_dir: Option<PathBuf>,
}

impl Follow {
    /// Whether `path` is a file aoitap writes, or in the directory it
    /// writes in: a glob's match it must not read back.
    pub fn writes(&self, path: &Path) -> bool {
        let real = |p: &Path| {
            let parent = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            std::fs::canonicalize(parent)
                .ok()
                .map(|d| (d, p.file_name().map(ToOwned::to_owned)))
        };
        let here = real(path);
        self.written
            .iter()
            .any(|w| here.is_some() && real(w) == here)
            || self.written_dir.as_ref().is_some_and(|d| {
                let d = std::fs::canonicalize(d).ok();
                d.is_some() && here.as_ref().map(|h| Some(&h.0)) == Some(d.as_ref())
            })
    }
}

/// `aoitap run`: the stream options, and how to run the command.
pub struct RunOptions {
    pub stream: StreamOptions,
    pub command: Vec<OsString>,
    pub timeout: Option<Duration>,
    pub kill_after: Duration,
    pub retries: u32,
    /// Relay every attempt as it comes (docs/contract.md §3.4).
    pub live: bool,
    pub backoff: Duration,
    pub max_wait: Duration,
}

/// One input stream.
#[derive(Clone, Debug)]
pub enum Input {
    Stdin,
    Path(PathBuf),
}

impl Input {
    /// How findings name this input.
    pub fn label(&self) -> String {
        match self {
            Input::Stdin => "<stdin>".to_string(),
            Input::Path(p) => p.display().to_string(),
        }
    }

    /// The size of a regular file, if it is one.
    pub fn file_size(&self) -> Option<u64> {
        match self {
            Input::Stdin => None,
            Input::Path(p) => std::fs::metadata(p)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len()),
        }
    }

    /// Open for reading. Stdin is read through its own descriptor, so the
    /// scanner's large reads are not split by std's small stdin buffer.
    pub fn open(&self) -> io::Result<File> {
        match self {
            Input::Stdin => Ok(File::from(io::stdin().as_fd().try_clone_to_owned()?)),
            Input::Path(p) => {
                let f = File::open(p)?;
                // A directory opens, and fails only at the first read: say
                // so here, before anything is judged.
                if f.metadata()?.is_dir() {
                    return Err(io::Error::new(
                        io::ErrorKind::IsADirectory,
                        "a directory with no *.jsonl or *.ndjson file in it",
                    ));
                }
                Ok(f)
            }
        }
    }
}

pub struct ReconcileOptions {
    pub stream: StreamOptions,
    pub against: Option<PathBuf>,
}

pub struct SplitOptions {
    pub stream: StreamOptions,
    pub dir: PathBuf,
    pub force: bool,
    /// `--max-open`; `None`: as many as the open-file limit allows, up to
    /// a default.
    pub max_open: Option<usize>,
    /// The inputs as the system knows them: no file split-by-run writes
    /// may be one of them (docs/contract.md §3.3).
    pub inputs: Vec<FileId>,
}

impl SplitOptions {
    /// Could split-by-run write a file of this name in DIR? Every name it
    /// gives (`cmd/split.rs`) is `run-*.jsonl`, `unattributed.jsonl` or
    /// `unattributed~N.jsonl`; compared without case, for a
    /// case-insensitive file system.
    pub fn may_write(name: &std::ffi::OsStr) -> bool {
        let name = name.to_string_lossy().to_ascii_lowercase();
        name.strip_suffix(".jsonl").is_some_and(|base| {
            base.starts_with("run-") || base == "unattributed" || base.starts_with("unattributed~")
        })
    }
}

/// `aoitap filter`.
pub struct FilterOptions {
    pub stream: StreamOptions,
    /// The jq program.
    pub program: String,
    /// `--arg NAME VALUE`, in order.
    pub args: Vec<(String, String)>,
    /// Domain events only.
    pub domain: bool,
    /// `--assert EXPR`.
    pub assert: Option<String>,
    /// `-r`: a string output is written as its text.
    pub raw: bool,
}

pub struct StripOptions {
    pub stream: StreamOptions,
    /// Pass `aoi:*` events too (their envelope still goes).
    pub keep_framework: bool,
    /// Only these domain types (none: all).
    pub types: Vec<String>,
    /// Only this run.
    pub run: Option<String>,
}

/// `aoitap upgrade`.
pub struct UpgradeOptions {
    pub stream: StreamOptions,
}

pub struct SummarizeOptions {
    pub stream: StreamOptions,
}

/// `aoitap schema` (and `--schema`): which schema is asked for.
pub struct SchemaOptions {
    /// `--name`: aoitap has one schema; another name is a usage error.
    pub name: Option<String>,
    /// `--schema-version`: the major version wanted.
    pub major: Option<u64>,
}

/// `aoitap capabilities` (and `--capabilities`): nothing to choose, the
/// manifest has one form (`--output json`).
pub struct CapabilitiesOptions {}

/// `aoitap completions SHELL`.
pub struct CompletionsOptions {
    pub shell: Shell,
}

/// A shell `aoitap completions` writes a script for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Elvish,
    Fish,
    PowerShell,
    Zsh,
}

/// Where a command's report goes when `--report` does not say.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ReportTo {
    Stdout,
    Stderr,
}

//! The command line as clap sees it: the derive structs and nothing else.
//! Their doc comments are the help text; `lower` turns them into
//! `crate::config`, and no other layer sees them.

use crate::check::ProfileRef;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::rules_table;
use super::values;
use crate::check::SchemaPin;
use crate::check::rules::{Rule, Word};
use crate::exit::Exit;

#[derive(Parser, Debug)]
#[command(
    name = "aoitap",
    version,
    about = "Check, relay and inspect AOI-CLI event streams (newline-delimited JSON).",
    long_about = "aoitap checks AOI-CLI event streams: aoi:meta first, domain events, a terminal \
                  aoi:summary, every line carrying aoi.seq and aoi.run. It notices what nothing \
                  else does: a stream cut at the end (no summary) or in the middle (seq gaps).",
    after_help = Exit::help()
)]
pub(super) struct Cli {
    /// Print the JSON Schema of aoitap's events (the same as `aoitap schema --output json`).
    #[arg(long, exclusive = true)]
    pub(super) schema: bool,

    /// Print the capability manifest (the same as `aoitap capabilities --output json`).
    #[arg(long, exclusive = true)]
    pub(super) capabilities: bool,

    #[command(subcommand)]
    pub(super) command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub(super) enum Command {
    /// Pass/fail gate: is this a complete, conforming, successful stream?
    #[command(
        after_help = "Example: tool --output jsonl > out.jsonl; aoitap verify -q out.jsonl || retry"
    )]
    Verify(VerifyArgs),

    /// Plain domain JSONL: drop framework events and each event's `aoi` envelope, bytes otherwise untouched.
    #[command(
        name = "strip-envelope",
        after_help = "Example: set -o pipefail; tool --output jsonl | aoitap strip-envelope --type hit | legacy-tool\n\n\
                      Exit status is the verdict of the stream read (as verify): the stripped output has lost its summary."
    )]
    StripEnvelope(StripArgs),

    /// Any stream aoitap reads (AOI 0.2, AFDATA, aiocs, NDJSON, plain JSON lines, AOI 1.0), written out as one conforming AOI 1.0 stream.
    #[command(
        long_about = "Any stream aoitap reads (AOI 0.2, AFDATA, aiocs, NDJSON, plain JSON lines, AOI 1.0), written out as one conforming AOI 1.0 stream.\n\n\
                      stdout is aoitap's own stream: its aoi:meta first, each upstream domain event with aoitap's envelope \
                      (aoi.seq from 0, its own aoi.run; every other member as it came), upstream errors and warnings forwarded \
                      as AOI 1.0 ones tagged with origin, never an upstream meta or summary, and a terminal aoi:summary \
                      that says the upstream's verdict (ok, reason, caused_by with its retry fields, upstream with its identity). \
                      A cut or non-conforming upstream ends ok:false after an aoi:error (category io when lines were lost). \
                      With --multi-run each upstream run becomes a run of its own (read the result with verify --multi-run). \
                      The findings go to stderr, and only when something is wrong.",
        after_help = "Example: set -o pipefail; legacy-tool --json | aoitap upgrade --protocol jsonl | agent-harness\n         aoitap upgrade old-0.2.jsonl > new.jsonl && aoitap verify new.jsonl\n\n\
                      Exit status is the verdict of the stream read (as verify): 0, 1, 75, 65; 64 on a usage error and 66 \
                      for a FILE that is not there (stdout still a whole stream, ok:false)."
    )]
    Upgrade(UpgradeArgs),

    /// De-interleave: each run's lines to a file of its own in DIR.
    #[command(
        name = "split-by-run",
        after_help = "Example: aoitap split-by-run --dir runs/ merged.jsonl\n\n\
                      Files: run-ID.jsonl, where ID is the run id with every byte outside A-Z a-z 0-9 . _ -\n\
                      written %XX (a leading . too), cut to 120 bytes; ~2, ~3... before .jsonl when two ids\n\
                      would give one name (also equal but for case). A run without an id, opened by an\n\
                      aoi:meta at line N: run-from-line-N.jsonl. Lines no run claims: unattributed.jsonl.\n\n\
                      An input is never written over: one that is a file of those names in DIR (itself, a hard\n\
                      link, or a symbolic link either way) is a usage error (64), --force or not, before anything\n\
                      is written. Other files in DIR are fine: aoitap split-by-run --dir . merged.jsonl"
    )]
    SplitByRun(SplitArgs),

    /// Per run at a glance: identity, counts by type, warnings and errors, outcome, seq coverage, verdict.
    #[command(
        after_help = "Example: aoitap summarize out.jsonl\n         aoitap summarize --protocol ndjson --type-field event --output json daemon.jsonl\n\n\
                      Per run, at most 256 types of each kind (domain, framework) and 256 category/code pairs each\n\
                      of errors and warnings are kept by name, a type by its first 128 bytes; the rest count under\n\
                      (other). A run's first 16 names are its own; past those, all open runs draw on 100,000 names."
    )]
    Summarize(SummarizeArgs),

    /// Account for every event: seq coverage, gaps, repeats, counters, elision markers.
    #[command(
        after_help = "Example: aoitap reconcile transcript.jsonl\n         aoitap reconcile --against producer-tee.jsonl received.jsonl\n\n\
                      Markers recognised: [… N lines omitted …], ... N lines omitted ..., [N lines truncated],\n\
                      <N lines elided> (also skipped, hidden, removed, \"more lines\"); add others with --marker.\n\n\
                      Exit status: the verdict, as verify gives it with --multi-run (0, 1, 75, 65),\n\
                      and 65 where an event does not reconcile (a gap, a marker that disagrees, --against)."
    )]
    Reconcile(ReconcileArgs),

    /// Run CMD, relay its output, and judge it: the stream, and the stream against CMD's exit status.
    #[command(
        after_help = "Example: aoitap run -- tool search \"agent tools\" --output jsonl\n         # TAP, which prove reads:\n         \
                      aoitap run --timeout 2m --retries 3 --output tap -- tool sync --output jsonl\n\n\
                      With --output tap, stdout carries the TAP and nothing else: CMD's stdout goes to\n\
                      --save FILE or is discarded, its stderr to aoitap's stderr, and a usage error is\n\
                      'Bail out!' with the reason (exit 64).\n\n\
                      CMD runs in its own process group; SIGINT and SIGTERM are passed to it, and SIGHUP\n\
                      as SIGTERM. Exit status: the last attempt's verdict (0, 1, 75, 65), 75 on --timeout,\n\
                      127 when CMD is not found, 126 when it cannot be executed, 129/130/143 when cancelled\n\
                      (SIGHUP/SIGINT/SIGTERM).",
        override_usage = "aoitap run [OPTIONS] -- CMD [ARG ...]"
    )]
    Run(RunArgs),

    /// Check a tool against the AOI-CLI conformance checks (spec §18.2): CMD ARGS and its discovery commands, each run in a clean sandbox.
    #[command(
        after_long_help = crate::check::lint_checks::after_help(),
        after_help = "Example: aoitap lint -- tool search \"agent tools\" --output jsonl",
        override_usage = "aoitap lint [OPTIONS] -- CMD [ARG ...]"
    )]
    Lint(LintArgs),

    /// Run a jq program on each event, keeping the stream's verdict in the exit status (jq syntax, through the jaq crates).
    #[command(
        long_about = "Run a jq program on each event, keeping the stream's verdict in the exit status (jq syntax, through the jaq crates).\n\n\
                      Every line is judged as verify judges it. PROG runs on each event (--domain: domain events only), and each output is one line: an output equal to its event is the event's own bytes, any other is compact JSON (-r: a string as its text). \
                      A runtime error on an event is filter.error on its line (65), and the other events are still filtered; so is an output nested deeper than 100000 levels, which is not written. \
                      env and $ENV are {}; halt and halt_error end the output, never the verdict; debug and stderr print on stderr, and are dropped when the report there is JSONL. \
                      A finding quotes nothing of an event that holds a secret-looking value. The report goes to stderr.\n\n\
                      input_filename is the FILE being read (null for stdin) and $__loc__ the program's line, as in jq. A signal stops a program busy on one event at its loop's next step (range, repeat, recurse, while, until), and the report still ends.\n\n\
                      Refused, with status 64: a program that does not compile; a definition that calls itself, directly or through others (a runaway recursion would overflow the stack: use recurse, walk, until, while, limit or reduce); input and inputs (the program runs on one event at a time). \
                      jq's -c is accepted (the output is always compact); there is no -e (the exit status is the verdict: see --assert), -n, -s or --argjson.\n\n\
                      Where it differs from jq (jaq's reading): del and delpaths move an object's last key into the deleted key's place (jq keeps the order); a number passed through keeps its spelling (3.0, 1e2, 1.10, as jq 1.7 writes them; jq 1.6 writes 3, 100, 1.1), and arithmetic on a decimal spelling gives a float (1e2 + 0 is 100.0, jq 100); -0 is read as 0; NaN is written null and an infinity as 1.7976931348623157e+308 with its sign, as jq writes them, but tostring gives \"NaN\" and \"Infinity\".",
        after_help = "Examples:\n  aoitap filter 'select(.type==\"hit\")' out.jsonl | next-tool\n  aoitap filter -r --domain '.path' out.jsonl | xargs wc -l\n  tool --output jsonl | aoitap filter --assert '.aoi.run != null' '.' > checked.jsonl"
    )]
    Filter(FilterArgs),

    /// The producer profiles: the agent CLIs whose own streams --profile judges; one, as TOML to copy and adapt.
    #[command(
        long_about = "The producer profiles: the agent CLIs whose own streams --profile judges (docs/contract.md §6.3).\n\n\
                      Without NAME, one line each: its name, the command that writes such a stream, and the package, version and file its facts were read from. \
                      With NAME (a built-in) or FILE (a path with a / or ending in .toml), the profile as TOML: a built-in to copy and adapt, a file once it reads (a mistake is 64, naming its line and column).",
        after_help = "Examples:\n  aoitap profiles\n  aoitap profiles codex-exec | sed 's/^name = .*/name = \"mine\"/' > mine.toml\n  aoitap verify --profile ./mine.toml out.jsonl"
    )]
    Profiles(ProfilesArgs),

    /// JSON Schema 2020-12 of aoitap's own events: no input, no network, no config.
    #[command(after_help = "Example: aoitap schema --output json > aoitap.schema.json")]
    Schema(SchemaArgs),

    /// The capability manifest (AOI-CLI §17): commands, event types, input modes, schema versions.
    #[command(after_help = "Example: aoitap capabilities --output json | jq '.commands[].name'")]
    Capabilities(CapabilitiesArgs),

    /// Shell completions for bash, zsh, fish, elvish or powershell, on stdout.
    #[command(
        after_help = "Examples (as the README installs them; no bash-completion package needed):\n  \
                      aoitap completions bash > ~/.local/share/aoitap/aoitap.bash &&\n    \
                      echo '. ~/.local/share/aoitap/aoitap.bash' >> ~/.bashrc\n  \
                      aoitap completions zsh > ~/.zfunc/_aoitap    # fpath+=(~/.zfunc) before compinit\n  \
                      aoitap completions fish > ~/.config/fish/completions/aoitap.fish"
    )]
    Completions(CompletionsArgs),

    /// The manual page (roff), on stdout.
    #[command(
        after_help = "Examples (read it, or install it where man finds it, as the README does):\n  \
                      aoitap man | man -l -\n  \
                      aoitap man > \"${CARGO_HOME:-$HOME/.cargo}/share/man/man1/aoitap.1\""
    )]
    Man(ManArgs),
}

#[derive(Args, Debug)]
pub(super) struct ProfilesArgs {
    /// A built-in profile's name, or a profile file, to print as TOML.
    #[arg(value_name = "NAME|FILE", value_parser = values::ProfileArg, num_args = 0..=1)]
    pub(super) profile: Option<ProfileRef>,
}

#[derive(Args, Debug)]
pub(super) struct SchemaArgs {
    /// The format: json (the only one).
    #[arg(long, visible_alias = "format", value_enum, default_value_t = DocFormat::Json, value_name = "FORMAT")]
    pub(super) output: DocFormat,

    /// The schema to print, by schema_name (aoitap has one: dev.aoitap.events).
    #[arg(long, value_name = "NAME")]
    pub(super) name: Option<String>,

    /// The major schema_version wanted (aoitap serves 1).
    #[arg(long, value_name = "MAJOR")]
    pub(super) schema_version: Option<u64>,
}

#[derive(Args, Debug)]
pub(super) struct CapabilitiesArgs {
    /// The format: json (the only one).
    #[arg(long, visible_alias = "format", value_enum, default_value_t = DocFormat::Json, value_name = "FORMAT")]
    pub(super) output: DocFormat,
}

#[derive(Args, Debug)]
pub(super) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    pub(super) shell: ShellArg,
}

// clap_complete's `Shell`, value for value: the same names in the same
// order, and no help of their own (no doc comments), so help, the man page
// and the scripts list them as they did.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ShellArg {
    Bash,
    Elvish,
    Fish,
    #[value(name = "powershell")]
    PowerShell,
    Zsh,
}

#[derive(Args, Debug)]
pub(super) struct ManArgs {}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DocFormat {
    Json,
}

/// `--follow` and what goes with it (docs/contract.md §2.3): verify, summarize,
/// reconcile and split-by-run.
#[derive(Args, Debug, Default)]
pub(super) struct FollowArgs {
    /// Follow each FILE by name, as tail -F does: appended lines as they come, through rotation and truncation; a quoted glob ('logs/*.jsonl') is looked at again every second. Each run is judged as its summary arrives (as with --multi-run, which --follow implies); Ctrl-C ends it (130).
    #[arg(long)]
    pub(super) follow: bool,

    /// With --follow: report only what is written from now on (as tail -n 0 -F); the runs already under way are still judged whole.
    #[arg(long, requires = "follow")]
    pub(super) from_end: bool,

    /// With --follow: a run with no line for DUR (e.g. 500ms, 30s, 5m) is reported (run.stalled), once until it moves again.
    #[arg(long, value_name = "DUR", requires = "follow", value_parser = values::parse_timeout)]
    pub(super) run_idle_timeout: Option<std::time::Duration>,
}

/// `--state`: verify's alone, since resuming is resuming judging, which
/// is all verify does (docs/contract.md §2.3); the other commands that
/// follow neither offer nor take it.
#[derive(Args, Debug, Default)]
pub(super) struct StateArgs {
    /// With --follow: keep where each file was read in FILE, and resume there when started again: runs open at the stop are judged as if there had been none, and no line is reported twice.
    #[arg(long, value_name = "FILE", requires = "follow")]
    pub(super) state: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(super) struct ReconcileArgs {
    #[command(flatten)]
    pub(super) stream: StreamArgs,

    #[command(flatten)]
    pub(super) follow: FollowArgs,

    /// A reference capture of the same stream (e.g. the producer-side tee) to compare with, event by event.
    #[arg(long, value_name = "REF")]
    pub(super) against: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(super) struct SummarizeArgs {
    #[command(flatten)]
    pub(super) stream: StreamArgs,

    #[command(flatten)]
    pub(super) follow: FollowArgs,
}

#[derive(Args, Debug)]
pub(super) struct FilterArgs {
    /// The jq program, run on each event (an output equal to its event is written with the event's own bytes).
    #[arg(value_name = "PROG")]
    pub(super) program: String,

    #[command(flatten)]
    pub(super) stream: StreamArgs,

    /// Run PROG on domain events only (aoi:* events are judged, not filtered).
    #[arg(long)]
    pub(super) domain: bool,

    /// Every event must make EXPR true: at least one value, none false or null, no error; filter.assert otherwise.
    #[arg(long, value_name = "EXPR")]
    pub(super) assert: Option<String>,

    /// Write a string output as its text, not as a JSON string (as jq -r).
    #[arg(short, long)]
    pub(super) raw_output: bool,

    /// Accepted as jq's -c: the output is always compact JSON, one value per line.
    #[arg(short = 'c', long = "compact-output")]
    pub(super) compact_output: bool,

    /// Bind $NAME to the string VALUE (as jq --arg).
    #[arg(long, num_args = 2, value_names = ["NAME", "VALUE"], action = clap::ArgAction::Append)]
    pub(super) arg: Vec<String>,
}

#[derive(Args, Debug)]
pub(super) struct StripArgs {
    #[command(flatten)]
    pub(super) stream: StreamArgs,

    /// Keep aoi:* framework events too (their envelope is still removed).
    #[arg(long)]
    pub(super) keep_framework: bool,

    /// Keep only events of this type (repeatable); an aoi:* type named is kept too (aoitap filter selects by any program).
    #[arg(long = "type", value_name = "TYPE")]
    pub(super) types: Vec<String>,

    /// Keep only the events of this run id.
    #[arg(long, value_name = "RUN")]
    pub(super) run: Option<String>,
    /// Write each exposed secret and sensitive meta.args value as "***" (URL secrets span by span); every other byte as it came.
    #[arg(long)]
    pub(super) redact: bool,
}

/// One stream (docs/contract.md §1.6): one FILE or stdin, and no --follow
/// for --idle-timeout-ms to speak of.
#[derive(Args, Debug)]
#[command(mut_arg("files", |a| a
    .num_args(0..=1)
    .action(clap::ArgAction::Set)
    .help("The stream to upgrade, one FILE; none or \"-\" reads stdin.")))]
#[command(mut_arg("idle_timeout_ms", |a| a
    .help("Report stream.idle when no input arrives for this many milliseconds (a live pipe), then go on.")))]
pub(super) struct UpgradeArgs {
    #[command(flatten)]
    pub(super) stream: StreamArgs,
}

#[derive(Args, Debug)]
pub(super) struct SplitArgs {
    #[command(flatten)]
    pub(super) stream: StreamArgs,

    #[command(flatten)]
    pub(super) follow: FollowArgs,

    /// The directory to write the run files in (created if missing).
    #[arg(long, value_name = "DIR")]
    pub(super) dir: PathBuf,

    /// Replace run files that already exist in DIR (never follows links; never an input).
    #[arg(long)]
    pub(super) force: bool,

    /// Keep at most N run files open at once [default: 1024, fewer when the open-file limit is lower].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub(super) max_open: Option<u64>,
    /// Write each exposed secret and sensitive meta.args value as "***" (URL secrets span by span); every other byte as it came; a line that cannot be parsed but holds a secret-looking key or name, or an args member with a sensitive-looking argument becomes a one-line placeholder.
    #[arg(long)]
    pub(super) redact: bool,
}

#[derive(Args, Debug)]
pub(super) struct VerifyArgs {
    #[command(flatten)]
    pub(super) stream: StreamArgs,

    #[command(flatten)]
    pub(super) follow: FollowArgs,

    #[command(flatten)]
    pub(super) state: StateArgs,

    /// Copy the input to stdout byte for byte while judging it; the report goes to stderr (or --report).
    #[arg(long)]
    pub(super) relay: bool,

    /// With --relay: write each exposed secret and sensitive meta.args value as "***" (URL secrets span by span), every other byte as it came; a line that cannot be parsed but holds a secret-looking key or name, or an args member with a sensitive-looking argument, or is over --max-line-bytes, becomes a one-line placeholder.
    #[arg(long, requires = "relay")]
    pub(super) redact: bool,

    /// Validate every event against this JSON Schema (2020-12 or draft-07; e.g. <(tool schema --output json)); never fetches a $ref.
    #[arg(long, value_name = "FILE")]
    pub(super) schema: Option<PathBuf>,

    /// Human output: only what fails, its error findings and the runs that did not pass; warnings, notes and passing runs are left out, and the result line still counts every run.
    #[arg(long)]
    pub(super) failures_only: bool,

    /// Judge N FILE operands at once (default: the number of cores); the report is in operand order, the same as with -j 1. Used when every operand is a regular file and there is no --relay, --line-buffered or --idle-timeout-ms.
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(super) jobs: Option<u32>,
}

#[derive(Args, Debug)]
pub(super) struct LintArgs {
    /// Report format.
    #[arg(long, value_enum, default_value_t = LintOutputArg::Human, value_name = "FORMAT")]
    pub(super) output: LintOutputArg,

    /// Print no report; the exit status is the answer.
    #[arg(short, long)]
    pub(super) quiet: bool,

    /// Each call's deadline (500ms, 2s, 1m); past it the call's process group is killed.
    #[arg(long, value_name = "DUR", value_parser = values::parse_timeout, default_value = "10s")]
    pub(super) timeout: Duration,

    /// How many words of CMD name the tool, for its `schema` and `capabilities` commands (default 1; 2 when CMD begins with an interpreter, as `python3 tool.py`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub(super) tool_words: Option<u16>,

    /// Only these checks (ids, comma-separated; see below).
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    pub(super) checks: Vec<String>,

    /// All checks but these (ids, comma-separated).
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    pub(super) exclude_checks: Vec<String>,

    /// Pass this variable from lint's environment to CMD ARGS' calls (a token the command needs); the schema and capabilities calls never get it (check 1).
    #[arg(long, value_name = "NAME")]
    pub(super) env: Vec<String>,

    /// A flag that carries a secret (--name), beside those --help and capabilities name (check 9).
    #[arg(long, value_name = "FLAG", allow_hyphen_values = true)]
    pub(super) secret_flag: Vec<String>,

    /// The checks known to fail, one id a line (# comments): reported, not failing; one that passes fails (a stale entry).
    #[arg(long, value_name = "FILE")]
    pub(super) expected_failures: Option<PathBuf>,

    /// The command to check and its arguments, after --.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub(super) command: Vec<OsString>,
}

#[derive(Args, Debug)]
#[command(mut_arg("quiet", |a| a
    .help("Print nothing: no report, and no relay of CMD's stdout (--save still saves; --upgrade's stream is still written); the exit status is the answer.")))]
pub(super) struct RunArgs {
    #[command(flatten)]
    pub(super) stream: StreamArgs,

    /// Validate every event against this JSON Schema, as verify --schema does.
    #[arg(long, value_name = "FILE")]
    pub(super) schema: Option<PathBuf>,

    /// Relay each exposed secret and sensitive meta.args value as "***" (URL secrets span by span), as verify --relay --redact.
    #[arg(long)]
    pub(super) redact: bool,

    /// Relay CMD's stream as one conforming AOI 1.0 stream, as aoitap upgrade writes it (with --protocol jsonl, CMD's exit status decides ok).
    #[arg(long, conflicts_with = "redact")]
    pub(super) upgrade: bool,

    /// Write CMD's stdout to FILE instead of relaying it; the report then goes to stdout. With --retries FILE holds the final attempt's stream, one conforming stream; each earlier attempt N is moved beside it to FILE.attempt-N.
    #[arg(long, value_name = "FILE")]
    pub(super) save: Option<PathBuf>,

    /// Stop CMD after DUR (500ms, 2s, 1m): SIGTERM to its process group, SIGKILL after --kill-after; exit 75, reason timeout.
    #[arg(long, value_name = "DUR", value_parser = values::parse_timeout)]
    pub(super) timeout: Option<Duration>,

    /// How long CMD has to end after SIGTERM (on --timeout or a signal) before SIGKILL.
    #[arg(long, value_name = "DUR", value_parser = values::parse_duration, default_value = "5s")]
    pub(super) kill_after: Duration,

    /// Run CMD again, up to N more times, while it fails retryably (exit 75).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(super) retries: u32,

    /// With --retries, relay every attempt as it comes, for a person watching; without it stdout carries the final attempt alone, one stream that verifies.
    #[arg(long)]
    pub(super) live: bool,

    /// The first backoff before a retry, doubled each time: the wait is the producer's retry_after_ms plus a random part of it (full jitter), never exactly retry_after_ms.
    #[arg(long, value_name = "DUR", value_parser = values::parse_duration, default_value = "1s")]
    pub(super) backoff: Duration,

    /// The longest wait before a retry; a producer asking for longer is not retried.
    #[arg(long, value_name = "DUR", value_parser = values::parse_duration, default_value = "5m")]
    pub(super) max_wait: Duration,

    /// The command to run and its arguments, after --.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub(super) command: Vec<OsString>,
}

/// Options shared by every stream command (docs/contract.md §1.1).
#[derive(Args, Debug)]
pub(super) struct StreamArgs {
    /// Input files, each an independent stream; a directory stands for its *.jsonl and *.ndjson files, recursively, sorted by path; none or "-" reads stdin.
    #[arg(value_name = "FILE")]
    pub(super) files: Vec<PathBuf>,

    /// Report format.
    #[arg(long, visible_alias = "format", value_enum, default_value_t = OutputArg::Human, value_name = "FORMAT")]
    pub(super) output: OutputArg,

    /// The input is a log of many runs, concatenated or interleaved; each is judged on its own.
    #[arg(long)]
    pub(super) multi_run: bool,

    /// Another harness elision marker (line.elided): a regular expression with one capture group for N (repeatable).
    #[arg(long, value_name = "REGEX", value_parser = values::parse_marker)]
    pub(super) marker: Vec<String>,

    /// The contract the input follows; auto decides per run from its first object (aoi:meta of version 0 is aoi-0.2, a kind of result, error, progress or log is afdata, a boolean ok beside a string command, with no type or kind, is aiocs; an object carrying a built-in profile's signature is that agent CLI's stream; else aoi). ndjson and jsonl are never guessed; --profile names a profile in its place.
    #[arg(long, value_enum, default_value_t = ProtocolArg::Auto, value_name = "PROTOCOL")]
    pub(super) protocol: ProtocolArg,

    /// Judge the input as an agent CLI's own stream: a built-in profile (claude-stream, claude-json, codex-exec, gemini-stream, gemini-json, opencode-json, copilot-json; `aoitap profiles` lists them) or a profile file (a path with a / or ending in .toml). Without it, --protocol auto picks a built-in only where a run's first object carries its signature.
    #[arg(long, value_name = "NAME|FILE", value_parser = values::ProfileArg, conflicts_with = "protocol")]
    pub(super) profile: Option<ProfileRef>,

    /// The field that names each line's type in typed NDJSON and plain JSON lines: the discriminator of --protocol ndjson, and what summarize counts them by (AOI lines count by type, AFDATA's by kind).
    #[arg(long, value_name = "NAME", default_value = "type")]
    pub(super) type_field: String,

    /// --protocol ndjson: the type that opens a run (ndjson.first-wrong; with --multi-run it starts the next run).
    #[arg(long, value_name = "TYPE")]
    pub(super) first: Option<String>,

    /// --protocol ndjson: the type that ends a run (ndjson.last-missing at EOF, ndjson.after-last).
    #[arg(long, value_name = "TYPE")]
    pub(super) last: Option<String>,

    /// Naming rules to hold every run to, whatever its protocol: afdata checks each key's unit suffix (latency_ms a number, size_bytes an integer >= 0, _rfc3339 with its offset; afdata.suffix-type). AFDATA runs always are.
    #[arg(long, value_enum, value_name = "CONVENTION")]
    pub(super) names: Option<NamesArg>,

    /// A key whose value is a secret, beside those ending in _secret or _SECRET (exact name, any depth; repeatable).
    #[arg(long, value_name = "NAME")]
    pub(super) secret_name: Vec<String>,

    /// The stream is documented unbounded (spec §4.2): EOF without aoi:summary is not truncation.
    #[arg(long)]
    pub(super) unbounded: bool,

    /// ok:false with partial:true counts as success (spec §4.1).
    #[arg(long)]
    pub(super) accept_partial: bool,

    /// Item-level aoi:error events do not fail the verdict (spec §13).
    #[arg(long)]
    pub(super) continue_on_error: bool,

    /// The version of aoitap's own event schema to write (spec §5): it serves one (`aoitap schema`); another major is refused (64).
    #[arg(long, value_name = "VERSION", value_parser = values::parse_served_version)]
    pub(super) schema_version: Option<String>,

    /// Require this schema_name, and major schema_version if given (spec §5), e.g. com.example.events@1.
    #[arg(long, value_name = "NAME[@MAJOR]", value_parser = values::parse_pin)]
    pub(super) expect_schema: Option<SchemaPin>,

    /// Ignore this rule (repeatable); the rules are listed in `aoitap verify --help` and the man page.
    #[arg(long, value_name = "RULE", value_parser = values::RuleId, hide_possible_values = true)]
    pub(super) allow: Vec<Rule>,

    /// Make this rule an error (repeatable; of --allow R and --deny R, the last one given wins).
    #[arg(long, value_name = "RULE", value_parser = values::RuleId, hide_possible_values = true)]
    pub(super) deny: Vec<Rule>,

    /// --allow and --deny in the order given (clap keeps each list apart).
    #[arg(skip)]
    pub(super) rule_words: Vec<(Rule, Word)>,

    /// Make every warning an error.
    #[arg(long)]
    pub(super) strict: bool,

    /// Report at most N findings; the rest are counted (summary truncated:true). 0 shows all. Without it, human output at a terminal shows 100 per input and counts the rest.
    #[arg(long, value_name = "N")]
    pub(super) limit: Option<u64>,

    /// Longest line accepted, in bytes (suffixes K, M, G, KiB, MiB, GiB); longer lines are a finding.
    #[arg(long, value_name = "BYTES", default_value = "64MiB", value_parser = values::parse_size)]
    pub(super) max_line_bytes: usize,

    /// Write the report to FILE instead of the terminal (never one of the inputs).
    #[arg(long, value_name = "FILE")]
    pub(super) report: Option<PathBuf>,

    /// Flush the report after every line it writes (for a reader watching it live).
    #[arg(long)]
    pub(super) line_buffered: bool,

    /// Report stream.idle when no input arrives for this many milliseconds (a live pipe, or --follow), then go on.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) idle_timeout_ms: Option<u64>,

    /// Print no report; the exit status is the answer.
    #[arg(short, long)]
    pub(super) quiet: bool,

    /// Colour human output: auto (a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto, value_name = "WHEN")]
    pub(super) color: ColorArg,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OutputArg {
    /// For a person: a line per finding and per run, and the result.
    Human,
    /// aoitap's own AOI event stream, which aoitap verify passes.
    Jsonl,
    /// One JSON document.
    Json,
    /// TAP 13: a test point per run (per attempt for run), for prove.
    Tap,
    /// JUnit XML: a testsuite per FILE (or CMD), a testcase per run named by its tool and command (its run id a property), its findings in <failure>; a retried attempt is a rerun.
    Junit,
    /// SARIF 2.1.0: a result per finding with its file and line, the rule catalogue as the tool's rules (GitHub code scanning).
    Sarif,
    /// GitHub Actions workflow commands: ::error title=RULE,file=F,line=N::message per finding.
    Github,
    /// One self-contained HTML page: the verdict, then a sortable table of runs, each with its timeline bar and its findings.
    Html,
}

impl OutputArg {
    /// The report formats `command` writes (docs/contract.md §5.1, §5.2): its --help
    /// lists these, and clap refuses any other.
    pub(super) fn of(command: &str) -> &'static [OutputArg] {
        use OutputArg::*;
        match command {
            "verify" => &[Human, Jsonl, Tap, Junit, Sarif, Github],
            "run" => &[Human, Jsonl, Tap, Junit, Github],
            "summarize" => &[Human, Jsonl, Json, Html],
            "reconcile" => &[Human, Jsonl, Html],
            _ => &[Human, Jsonl],
        }
    }
}

/// lint's report formats: its own, so its help lists only what it takes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LintOutputArg {
    /// A line per check and the result.
    Human,
    /// aoi:check events closed by a summary: an AOI stream verify reads.
    Jsonl,
    /// TAP 13: a point per check, # SKIP for a check not made, # TODO for an expected failure.
    Tap,
    /// JUnit XML: a testcase per check, <skipped> for a check not made or an expected failure.
    Junit,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ProtocolArg {
    Auto,
    Aoi,
    #[value(name = "aoi-0.2")]
    Aoi02,
    Afdata,
    Ndjson,
    /// The aiocs one-shot --json envelope: one document, compact or pretty-printed.
    Aiocs,
    /// An OKF command (okn --error-format json): one JSON document on stdout, and on failure the error envelope on stderr.
    Okf,
    /// Plain JSON lines of a tool that speaks no protocol: every object a domain event, the run ended by the input (or by run's command).
    Jsonl,
}

impl ProtocolArg {
    /// The protocols `command` reads: OKF's error envelope is a command's
    /// stderr, which only run sees (docs/contract.md §6.2).
    pub(super) fn of(command: &str) -> &'static [ProtocolArg] {
        use ProtocolArg::*;
        match command {
            "run" => &[Auto, Aoi, Aoi02, Afdata, Ndjson, Aiocs, Okf, Jsonl],
            _ => &[Auto, Aoi, Aoi02, Afdata, Ndjson, Aiocs, Jsonl],
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NamesArg {
    /// AFDATA Part 1: the unit or format a key's suffix names.
    Afdata,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ColorArg {
    Auto,
    Always,
    Never,
}

/// The clap definition (for help, the man page and completions): the
/// parser's, with run's FILE operand left out, as run reads CMD, never
/// FILE (naming one is refused).
pub fn command() -> clap::Command {
    // (`mut_subcommands` and `mut_args` keep each in its place, where
    // `mut_subcommand` and `mut_arg` move it to the end of the page.)
    with_rules(parser()).mut_subcommands(|sub| match sub.get_name() {
        "run" => sub.mut_args(|a| {
            if a.get_id() == "files" {
                a.hide(true)
            } else {
                a
            }
        }),
        _ => sub,
    })
}

/// verify's long help with the rule table, which costs more to make than
/// a short stream costs to check: made only for a command line that asks
/// for help, and for the man page and completions.
fn with_rules(cmd: clap::Command) -> clap::Command {
    cmd.mut_subcommands(|sub| match sub.get_name() {
        "verify" => sub.after_long_help(rules_table::verify_after_help()),
        _ => sub,
    })
}

/// The parser for the command line `args`.
pub(super) fn parser_for(args: &[OsString]) -> clap::Command {
    let asks_help = args
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--help" || a == "-h" || a == "help");
    if asks_help {
        with_rules(parser())
    } else {
        parser()
    }
}

/// The command line's parser. run's FILE stays visible here: hidden, it
/// would change how clap hands out the words after `--` (run's help comes
/// from `command`).
pub(super) fn parser() -> clap::Command {
    // Each stream command's --output takes only the formats it writes,
    // so its help offers nothing it refuses; --multi-run is always on in
    // split-by-run, summarize and reconcile, so their help leaves it out.
    <Cli as clap::CommandFactory>::command().mut_subcommands(|sub| {
        let name = sub.get_name().to_string();
        let stream = sub.get_arguments().any(|a| a.get_id() == "files");
        let always_multi = matches!(name.as_str(), "split-by-run" | "summarize" | "reconcile");
        sub.mut_args(|a| match a.get_id().as_str() {
            "output" if stream => a.value_parser(only(OutputArg::of(&name))),
            "protocol" if stream => a.value_parser(only(ProtocolArg::of(&name))),
            "multi_run" if always_multi => a.hide(true),
            _ => a,
        })
    })
}

/// A value parser of a `ValueEnum` that takes only `allowed`.
fn only<T: ValueEnum + Clone + Send + Sync + 'static>(
    allowed: &'static [T],
) -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::TypedValueParser;
    let values = allowed.iter().filter_map(ValueEnum::to_possible_value);
    clap::builder::PossibleValuesParser::new(values)
        .map(|v| T::from_str(&v, false).expect("a listed value is the enum's"))
}

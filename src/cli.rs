//! The command line (clap derive), turned into plain options at once:
//! nothing past this file sees clap.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use crate::check::rules::{Levels, Rule, Word};
use crate::check::schema::{EventSchema, load_schema};
use crate::check::{Config, Protocol, SchemaPin};
use crate::config::{
    Input, Invocation, ReconcileOptions, ReportTo, RunOptions, SplitOptions, StreamOptions,
    StripOptions, SummarizeOptions,
};
use crate::exit::Exit;
use crate::input::file_id::{input_files, input_in_dir, same_file, stdin_is};
use crate::output::style::{self, Format, StdStream, Style};

const RULES_HELP: &str = "Rules (id, default severity E/W/I, spec §):";

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
struct Cli {
    /// Print the JSON Schema of aoitap's events (the same as `aoitap schema --output json`).
    #[arg(long, exclusive = true)]
    schema: bool,

    /// Print the capability manifest (the same as `aoitap capabilities --output json`).
    #[arg(long, exclusive = true)]
    capabilities: bool,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Pass/fail gate: is this a complete, conforming, successful stream?
    #[command(
        after_long_help = verify_after_help(),
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
        after_help = "Example: aoitap summarize out.jsonl\n         aoitap summarize --protocol ndjson --type-field event --output json daemon.jsonl"
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
        after_help = "Example: aoitap run -- tool search \"agent tools\"\n         aoitap run --timeout 2m --retries 3 --output tap -- tool sync   # a .t file prove runs\n\n\
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

    /// JSON Schema 2020-12 of aoitap's own events: no input, no network, no config.
    #[command(after_help = "Example: aoitap schema --output json > aoitap.schema.json")]
    Schema(SchemaArgs),

    /// The capability manifest (AOI-CLI §17): commands, event types, input modes, schema versions.
    #[command(after_help = "Example: aoitap capabilities --output json | jq '.commands[].name'")]
    Capabilities(CapabilitiesArgs),

    /// Shell completions for bash, zsh, fish, elvish or powershell, on stdout.
    #[command(after_help = "Example: aoitap completions bash > /etc/bash_completion.d/aoitap")]
    Completions(CompletionsArgs),
}

#[derive(Args, Debug)]
struct SchemaArgs {
    /// The format: json (the only one).
    #[arg(long, visible_alias = "format", value_enum, default_value_t = DocFormat::Json, value_name = "FORMAT")]
    output: DocFormat,

    /// The schema to print, by schema_name (aoitap has one: dev.aoitap.events).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,

    /// The major schema_version wanted (aoitap serves 1).
    #[arg(long, value_name = "MAJOR")]
    schema_version: Option<u64>,
}

#[derive(Args, Debug)]
struct CapabilitiesArgs {
    /// The format: json (the only one).
    #[arg(long, visible_alias = "format", value_enum, default_value_t = DocFormat::Json, value_name = "FORMAT")]
    output: DocFormat,
}

#[derive(Args, Debug)]
struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    shell: clap_complete::Shell,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum DocFormat {
    Json,
}

#[derive(Args, Debug)]
struct ReconcileArgs {
    #[command(flatten)]
    stream: StreamArgs,

    /// A reference capture of the same stream (e.g. the producer-side tee) to compare with, event by event.
    #[arg(long, value_name = "REF")]
    against: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct SummarizeArgs {
    #[command(flatten)]
    stream: StreamArgs,
}

#[derive(Args, Debug)]
struct StripArgs {
    #[command(flatten)]
    stream: StreamArgs,

    /// Keep aoi:* framework events too (their envelope is still removed).
    #[arg(long)]
    keep_framework: bool,

    /// Keep only domain events of this type (repeatable).
    #[arg(long = "type", value_name = "TYPE")]
    types: Vec<String>,

    /// Keep only the events of this run id.
    #[arg(long, value_name = "RUN")]
    run: Option<String>,
    /// Write each exposed secret and sensitive meta.args value as "***" (URL secrets span by span); every other byte as it came.
    #[arg(long)]
    redact: bool,
}

#[derive(Args, Debug)]
struct SplitArgs {
    #[command(flatten)]
    stream: StreamArgs,

    /// The directory to write the run files in (created if missing).
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,

    /// Replace run files that already exist in DIR (never follows links; never an input).
    #[arg(long)]
    force: bool,

    /// Keep at most N run files open at once.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=65536))]
    max_open: u64,
    /// Write each exposed secret and sensitive meta.args value as "***" (URL secrets span by span); every other byte as it came; a line that cannot be parsed but holds a secret-looking key or name, or an args member with a sensitive-looking argument becomes a one-line placeholder.
    #[arg(long)]
    redact: bool,
}

#[derive(Args, Debug)]
struct VerifyArgs {
    #[command(flatten)]
    stream: StreamArgs,

    /// Copy the input to stdout byte for byte while judging it; the report goes to stderr (or --report).
    #[arg(long)]
    relay: bool,

    /// With --relay: write each exposed secret and sensitive meta.args value as "***" (URL secrets span by span), every other byte as it came; a line that cannot be parsed but holds a secret-looking key or name, or an args member with a sensitive-looking argument, or is over --max-line-bytes, becomes a one-line placeholder.
    #[arg(long, requires = "relay")]
    redact: bool,

    /// Validate every event against this JSON Schema (2020-12 or draft-07; e.g. <(tool schema --output json)); never fetches a $ref.
    #[arg(long, value_name = "FILE")]
    schema: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    stream: StreamArgs,

    /// Validate every event against this JSON Schema, as verify --schema does.
    #[arg(long, value_name = "FILE")]
    schema: Option<PathBuf>,

    /// Relay each exposed secret and sensitive meta.args value as "***" (URL secrets span by span), as verify --relay --redact.
    #[arg(long)]
    redact: bool,

    /// Write CMD's stdout to FILE instead of relaying it; the report then goes to stdout. With --retries FILE holds the final attempt's stream, one conforming stream; each earlier attempt N is moved beside it to FILE.attempt-N.
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,

    /// Stop CMD after DUR (500ms, 2s, 1m): SIGTERM to its process group, SIGKILL after --kill-after; exit 75, reason timeout.
    #[arg(long, value_name = "DUR", value_parser = parse_timeout)]
    timeout: Option<Duration>,

    /// How long CMD has to end after SIGTERM (on --timeout or a signal) before SIGKILL.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "5s")]
    kill_after: Duration,

    /// Run CMD again, up to N more times, while it fails retryably (exit 75).
    #[arg(long, value_name = "N", default_value_t = 0)]
    retries: u32,

    /// The first backoff before a retry, doubled each time: the wait is the producer's retry_after_ms plus a random part of it (full jitter), never exactly retry_after_ms.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "1s")]
    backoff: Duration,

    /// The longest wait before a retry; a producer asking for longer is not retried.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "5m")]
    max_wait: Duration,

    /// The command to run and its arguments, after --.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<OsString>,
}

/// `--timeout`: a duration, and not zero (which would stop CMD at once).
fn parse_timeout(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d.is_zero() {
        return Err("a zero timeout would stop the command before it starts".into());
    }
    Ok(d)
}

/// A human duration: `500ms`, `2s`, `1.5m`, `1h`; a bare number is seconds.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a duration: use e.g. 500ms, 2s, 1m"))?;
    let scale = match unit.trim() {
        "ms" => 0.001,
        "" | "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        other => return Err(format!("unknown unit {other:?}: use ms, s, m or h")),
    };
    // A week is longer than any harness waits; past it is a typo.
    let d = Duration::try_from_secs_f64(n * scale).map_err(|_| format!("{s:?} is too long"))?;
    if d > Duration::from_secs(7 * 24 * 3600) {
        return Err(format!("{s:?} is longer than a week"));
    }
    Ok(d)
}

/// Options shared by every stream command (DESIGN §1).
#[derive(Args, Debug)]
struct StreamArgs {
    /// Input files, each an independent stream; none or "-" reads stdin (run reads CMD instead).
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Report format: human, jsonl (aoitap's own AOI event stream), json (summarize: one document), tap (verify and run).
    #[arg(long, visible_alias = "format", value_enum, default_value_t = OutputArg::Human, value_name = "FORMAT")]
    output: OutputArg,

    /// The input is a log of many runs, concatenated or interleaved; each is judged on its own (always on for split-by-run, summarize and reconcile).
    #[arg(long)]
    multi_run: bool,

    /// Another harness elision marker (line.elided): a regular expression with one capture group for N (repeatable).
    #[arg(long, value_name = "REGEX", value_parser = parse_marker)]
    marker: Vec<String>,

    /// The contract the input follows; auto decides per run from its first object (aoi:meta of version 0 is aoi-0.2, a kind of result, error, progress or log is afdata, else aoi). ndjson is never guessed.
    #[arg(long, value_enum, default_value_t = ProtocolArg::Auto, value_name = "PROTOCOL")]
    protocol: ProtocolArg,

    /// The field that names each line's type: the discriminator of --protocol ndjson, and what summarize counts by.
    #[arg(long, value_name = "NAME", default_value = "type")]
    type_field: String,

    /// --protocol ndjson: the type that opens a run (ndjson.first-wrong; with --multi-run it starts the next run).
    #[arg(long, value_name = "TYPE")]
    first: Option<String>,

    /// --protocol ndjson: the type that ends a run (ndjson.last-missing at EOF, ndjson.after-last).
    #[arg(long, value_name = "TYPE")]
    last: Option<String>,

    /// A key whose value is a secret, beside those ending in _secret or _SECRET (exact name, any depth; repeatable).
    #[arg(long, value_name = "NAME")]
    secret_name: Vec<String>,

    /// The stream is documented unbounded (spec §4.2): EOF without aoi:summary is not truncation.
    #[arg(long)]
    unbounded: bool,

    /// ok:false with partial:true counts as success (spec §4.1).
    #[arg(long)]
    accept_partial: bool,

    /// Item-level aoi:error events do not fail the verdict (spec §13).
    #[arg(long)]
    continue_on_error: bool,

    /// Require this schema_name, and major schema_version if given (spec §5), e.g. com.example.events@1.
    #[arg(long, value_name = "NAME[@MAJOR]", value_parser = parse_pin)]
    expect_schema: Option<SchemaPin>,

    /// Ignore this rule (repeatable); the rules are listed in `aoitap verify --help` and the man page.
    #[arg(long, value_name = "RULE", value_parser = parse_rule)]
    allow: Vec<Rule>,

    /// Make this rule an error (repeatable; of --allow R and --deny R, the last one given wins).
    #[arg(long, value_name = "RULE", value_parser = parse_rule)]
    deny: Vec<Rule>,

    /// --allow and --deny in the order given (clap keeps each list apart).
    #[arg(skip)]
    rule_words: Vec<(Rule, Word)>,

    /// Make every warning an error.
    #[arg(long)]
    strict: bool,

    /// Report at most N findings; the rest are counted (summary truncated:true).
    #[arg(long, value_name = "N")]
    limit: Option<u64>,

    /// Longest line accepted, in bytes (suffixes K, M, G, KiB, MiB, GiB); longer lines are a finding.
    #[arg(long, value_name = "BYTES", default_value = "64MiB", value_parser = parse_size)]
    max_line_bytes: usize,

    /// Write the report to FILE instead of the terminal (never one of the inputs).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,

    /// Flush the report after every line it writes (for a reader watching it live).
    #[arg(long)]
    line_buffered: bool,

    /// Report stream.idle when no input arrives for this many milliseconds (follow mode), then go on.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout_ms: Option<u64>,

    /// Print nothing; the exit status is the answer.
    #[arg(short, long)]
    quiet: bool,

    /// Colour human output: auto (a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto, value_name = "WHEN")]
    color: ColorArg,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum OutputArg {
    Human,
    Jsonl,
    /// One JSON document (summarize only).
    Json,
    /// TAP 13 (verify and run only).
    Tap,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ProtocolArg {
    Auto,
    Aoi,
    #[value(name = "aoi-0.2")]
    Aoi02,
    Afdata,
    Ndjson,
}

impl ProtocolArg {
    fn pinned(self) -> Option<Protocol> {
        match self {
            ProtocolArg::Auto => None,
            ProtocolArg::Aoi => Some(Protocol::Aoi),
            ProtocolArg::Aoi02 => Some(Protocol::Aoi02),
            ProtocolArg::Afdata => Some(Protocol::Afdata),
            ProtocolArg::Ndjson => Some(Protocol::Ndjson),
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ColorArg {
    Auto,
    Always,
    Never,
}

/// The clap definition (for the man page and completions).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    // run shares the stream options, but reads CMD, never FILE: its help,
    // usage line and man page leave FILE out (naming one is refused).
    Cli::command().mut_subcommands(|sub| match sub.get_name() {
        "run" => sub.mut_arg("files", |a| a.hide(true)),
        _ => sub,
    })
}

/// Print clap's help or version text. run's help comes from `command()`,
/// which leaves out the FILE operand run refuses: hiding it in the command
/// that parses would also change how clap hands out the words after `--`.
fn help(e: clap::Error) -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if e.kind() != clap::error::ErrorKind::DisplayHelp || command_name(&args) != "run" {
        return e.print();
    }
    let mut cmd = command();
    let run = cmd.find_subcommand_mut("run").expect("run is a subcommand");
    let text = if args.iter().any(|a| a == "--help") {
        run.render_long_help()
    } else {
        run.render_help()
    };
    let mut out = std::io::stdout().lock();
    if style::help_painted() {
        write!(out, "{}", text.ansi())?;
    } else {
        write!(out, "{text}")?;
    }
    out.flush()
}

/// Parse the command line; help and usage errors are printed here and
/// come back as the exit status to end with.
pub fn parse() -> Result<Invocation, Exit> {
    let cli = <Cli as CommandFactory>::command()
        .try_get_matches()
        .and_then(|m| {
            let mut cli = Cli::from_arg_matches(&m)?;
            if let (Some(stream), Some((_, sub))) = (
                cli.command.as_mut().and_then(Command::stream_mut),
                m.subcommand(),
            ) {
                stream.rule_words = rule_words(sub);
            }
            Ok(cli)
        });
    let cli = cli.map_err(|e| {
        if !e.use_stderr() {
            // --help, --version: the text is the answer, so failing to
            // write it is a failure (a closed pipe is a normal ending),
            // said as every other failed write is.
            let printed = help(e);
            return match printed {
                Ok(()) => Exit::Pass,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Exit::BrokenPipe,
                Err(e) => {
                    crate::say!("aoitap: cannot write the help: {e}");
                    Exit::Io
                }
            };
        }
        let _ = e.print();
        // In machine mode the error is also an event (spec §2, §9: usage);
        // for a TAP consumer, a bail out (DESIGN §13).
        let args: Vec<String> = std::env::args().collect();
        let first = e
            .to_string()
            .lines()
            .next()
            .unwrap_or("usage error")
            .trim_start_matches("error: ")
            .to_string();
        if let Some(output) = wants_output(&args) {
            machine_usage(&command_name(&args), &first, output);
        }
        Exit::Usage
    })?;
    if cli.schema {
        return Ok(Invocation::Schema {
            name: None,
            major: None,
        });
    }
    if cli.capabilities {
        return Ok(Invocation::Capabilities);
    }
    let Some(command) = cli.command else {
        crate::say_part!("{}", command().render_help());
        return Err(Exit::Usage);
    };
    match command {
        Command::Schema(a) => {
            let _ = a.output;
            Ok(Invocation::Schema {
                name: a.name,
                major: a.schema_version,
            })
        }
        Command::Capabilities(a) => {
            let _ = a.output;
            Ok(Invocation::Capabilities)
        }
        Command::Completions(a) => Ok(Invocation::Completions(a.shell)),
        Command::Verify(a) => {
            stream_usage(&a.stream, "verify")?;
            let schema = schema(a.schema.as_deref(), &a.stream, "verify")?;
            let to = if a.relay {
                ReportTo::Stderr
            } else {
                ReportTo::Stdout
            };
            let mut opts = a.stream.into_options(to);
            opts.check.schema = schema;
            opts.relay = a.relay;
            opts.redact = a.redact;
            opts.check.redact = a.redact;
            Ok(Invocation::Verify(opts))
        }
        Command::StripEnvelope(a) => {
            stream_usage(&a.stream, "strip-envelope")?;
            let mut stream = a.stream.into_options(ReportTo::Stderr);
            // A filter: its output is the data; the report speaks only
            // when something is wrong.
            stream.style.quiet_pass = true;
            stream.redact = a.redact;
            stream.check.redact = a.redact;
            Ok(Invocation::StripEnvelope(StripOptions {
                stream,
                keep_framework: a.keep_framework,
                types: a.types,
                run: a.run,
            }))
        }
        Command::SplitByRun(a) => {
            stream_usage(&a.stream, "split-by-run")?;
            let inputs = input_files(&a.stream.files);
            if let Some((path, name)) = input_in_dir(&a.dir, &inputs, SplitOptions::may_write) {
                let problem = format!(
                    "{} is the input {name}: split-by-run may write that name, and never writes over an input (--force or not); give another --dir",
                    path.display()
                );
                return Err(usage_error("split-by-run", &problem, a.stream.output));
            }
            let mut stream = a.stream.into_options(ReportTo::Stdout);
            // Splitting is about many runs: each is judged on its own.
            stream.check.multi_run = true;
            stream.redact = a.redact;
            stream.check.redact = a.redact;
            Ok(Invocation::SplitByRun(SplitOptions {
                stream,
                dir: a.dir,
                force: a.force,
                max_open: a.max_open as usize,
                inputs: inputs.into_iter().map(|(id, _)| id).collect(),
            }))
        }
        Command::Reconcile(a) => {
            stream_usage(&a.stream, "reconcile")?;
            if let (Some(report), Some(against)) = (&a.stream.report, &a.against)
                && same_file(report, against)
            {
                let problem = format!(
                    "--report {} is the --against reference: writing the report would destroy it",
                    report.display()
                );
                return Err(usage_error("reconcile", &problem, a.stream.output));
            }
            let mut stream = a.stream.into_options(ReportTo::Stdout);
            stream.check.multi_run = true;
            Ok(Invocation::Reconcile(ReconcileOptions {
                stream,
                against: a.against,
            }))
        }
        Command::Run(a) => {
            stream_usage(&a.stream, "run")?;
            let problem = match (a.stream.files.first(), &a.save, &a.stream.report) {
                (Some(f), _, _) => Some(format!(
                    "run reads CMD's output, not files ({}): give the command after --, as in aoitap run -- tool args",
                    f.display()
                )),
                (None, Some(save), Some(report)) if save == report || same_file(save, report) => {
                    Some(format!(
                        "--save and --report are both {}: the report would overwrite the output",
                        save.display()
                    ))
                }
                _ => None,
            };
            if let Some(problem) = problem {
                return Err(usage_error("run", &problem, a.stream.output));
            }
            let schema = schema(a.schema.as_deref(), &a.stream, "run")?;
            // -q silences the relay and the report; --save still saves.
            // With --output tap stdout is the TAP and nothing else, so
            // `prove` can read it: CMD's stdout is saved or discarded
            // (DESIGN §13).
            let tap = a.stream.output == OutputArg::Tap;
            let relay = !a.stream.quiet && a.save.is_none() && !tap;
            let save = a.save;
            let mut stream = a.stream.into_options(if relay {
                ReportTo::Stderr
            } else {
                ReportTo::Stdout
            });
            stream.check.schema = schema;
            stream.relay = relay || save.is_some();
            stream.save = save;
            stream.redact = a.redact;
            // Only a relay is written redacted.
            stream.check.redact = a.redact && stream.relay;
            Ok(Invocation::Run(RunOptions {
                stream,
                command: a.command,
                timeout: a.timeout,
                kill_after: a.kill_after,
                retries: a.retries,
                backoff: a.backoff,
                max_wait: a.max_wait,
            }))
        }
        Command::Summarize(a) => {
            stream_usage(&a.stream, "summarize")?;
            let json = a.stream.output == OutputArg::Json;
            let mut stream = a.stream.into_options(ReportTo::Stdout);
            if json {
                stream.style.format = Format::Json;
            }
            stream.check.multi_run = true;
            Ok(Invocation::Summarize(SummarizeOptions { stream }))
        }
    }
}

impl StreamArgs {
    /// `to`: where the report goes without --report (for colour).
    fn into_options(self, to: ReportTo) -> StreamOptions {
        let format = match self.output {
            OutputArg::Jsonl => Format::Jsonl,
            OutputArg::Tap => Format::Tap,
            _ => Format::Human,
        };
        let color = match self.color {
            ColorArg::Always => true,
            ColorArg::Never => false,
            ColorArg::Auto => match (&self.report, to) {
                // A --report file is never painted.
                (Some(_), _) => false,
                (None, ReportTo::Stderr) => style::auto_for(StdStream::Stderr),
                (None, ReportTo::Stdout) => style::auto_for(StdStream::Stdout),
            },
        };
        let inputs = if self.files.is_empty() {
            vec![Input::Stdin]
        } else {
            self.files
                .into_iter()
                .map(|p| {
                    if p.as_os_str() == "-" {
                        Input::Stdin
                    } else {
                        Input::Path(p)
                    }
                })
                .collect()
        };
        StreamOptions {
            inputs,
            style: Style {
                format,
                quiet: self.quiet,
                quiet_pass: false,
                color: color && format == Format::Human,
                limit: self.limit,
            },
            check: Config {
                multi_run: self.multi_run,
                unbounded: self.unbounded,
                accept_partial: self.accept_partial,
                continue_on_error: self.continue_on_error,
                expect_schema: self.expect_schema,
                levels: Levels::new(&self.rule_words, self.strict),
                markers: self.marker,
                max_line_bytes: self.max_line_bytes,
                protocol: self.protocol.pinned(),
                type_field: self.type_field,
                first: self.first,
                last: self.last,
                secret_names: self.secret_name,
                redact: false,
                schema: None,
            },
            max_line_bytes: self.max_line_bytes,
            report: self.report,
            line_buffered: self.line_buffered,
            idle_timeout_ms: self.idle_timeout_ms,
            relay: false,
            redact: false,
            save: None,
        }
    }
}

impl Command {
    /// The stream options of a command that reads a stream.
    fn stream_mut(&mut self) -> Option<&mut StreamArgs> {
        match self {
            Command::Verify(a) => Some(&mut a.stream),
            Command::StripEnvelope(a) => Some(&mut a.stream),
            Command::SplitByRun(a) => Some(&mut a.stream),
            Command::Summarize(a) => Some(&mut a.stream),
            Command::Reconcile(a) => Some(&mut a.stream),
            Command::Run(a) => Some(&mut a.stream),
            Command::Schema(_) | Command::Capabilities(_) | Command::Completions(_) => None,
        }
    }
}

/// `--allow` and `--deny` as one list in the order they were given, so the
/// last word on a rule wins (DESIGN §13).
fn rule_words(m: &ArgMatches) -> Vec<(Rule, Word)> {
    let mut words = vec![];
    for (id, word) in [("allow", Word::Allow), ("deny", Word::Deny)] {
        if let (Some(at), Some(rules)) = (m.indices_of(id), m.get_many::<Rule>(id)) {
            words.extend(at.zip(rules).map(|(i, r)| (i, *r, word)));
        }
    }
    words.sort_by_key(|&(i, _, _)| i);
    words.into_iter().map(|(_, r, w)| (r, w)).collect()
}

fn parse_rule(s: &str) -> Result<Rule, String> {
    Rule::from_id(s)
        .ok_or_else(|| format!("unknown rule {s:?}; `aoitap verify --help` lists the rule ids"))
}

/// `--output json` is for the one-object outputs (summarize, schema,
/// capabilities); a stream command refuses it as a usage error.
/// What clap cannot see: a usage error (64) found before anything is
/// opened for writing (DESIGN §8).
fn stream_usage(args: &StreamArgs, command: &str) -> Result<(), Exit> {
    let problem = if args.output == OutputArg::Json && command != "summarize" {
        Some(format!(
            "{command} reports in --output human, jsonl{}, not json",
            if matches!(command, "verify" | "run") {
                " or tap"
            } else {
                ""
            }
        ))
    } else if args.output == OutputArg::Tap && !matches!(command, "verify" | "run") {
        Some(format!(
            "{command} reports in --output human{}; tap is for verify and run",
            if command == "summarize" {
                ", jsonl or json"
            } else {
                " or jsonl"
            }
        ))
    } else if let Some(report) = &args.report
        && let Some(input) = args.files.iter().find(|f| same_file(f, report))
    {
        Some(format!(
            "--report {} is an input: writing the report would destroy it",
            input.display()
        ))
    } else if let Some(report) = &args.report
        && (args.files.is_empty() || args.files.iter().any(|f| f.as_os_str() == "-"))
        && stdin_is(report)
    {
        Some(format!(
            "--report {} is standard input: writing the report would destroy it",
            report.display()
        ))
    } else if (args.first.is_some() || args.last.is_some()) && args.protocol != ProtocolArg::Ndjson
    {
        Some("--first and --last describe typed NDJSON runs: give --protocol ndjson".into())
    } else if args.files.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
        Some("standard input (\"-\") is named more than once: it can be read once".into())
    } else {
        None
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(usage_error(command, &problem, args.output)),
    }
}

/// `--schema FILE`, compiled; a schema that cannot be used is a usage
/// error before anything is read (DESIGN §11).
fn schema(
    path: Option<&std::path::Path>,
    args: &StreamArgs,
    command: &str,
) -> Result<Option<Arc<EventSchema>>, Exit> {
    let output = args.output;
    match path {
        None => Ok(None),
        Some(p)
            if command == "verify"
                && (p.as_os_str() == "-"
                    || (args.files.is_empty()
                        || args.files.iter().any(|f| f.as_os_str() == "-"))
                        && stdin_is(p)) =>
        {
            let problem = "--schema cannot be standard input: that is the stream (use a file or <(tool schema --output json))";
            Err(usage_error(command, problem, output))
        }
        Some(p) => load_schema(Some(p), &args.secret_name)
            .map_err(|problem| usage_error(command, &problem, output)),
    }
}

/// Say a usage error the way clap says its own (and, with `--output
/// jsonl`, as aoitap's own failed run; with `--output tap`, as a bail out
/// on stdout, DESIGN §13): 64.
fn usage_error(command: &str, problem: &str, output: OutputArg) -> Exit {
    let _ = writeln!(
        std::io::stderr(),
        "error: {problem}\n\nFor more information, try 'aoitap {command} --help'."
    );
    machine_usage(command, problem, output);
    Exit::Usage
}

/// A usage error as a machine reads it: with `--output jsonl` aoitap's own
/// failed run (spec §2, §9: usage), with `--output tap` a bail out on
/// stdout (DESIGN §13); nothing more for a person's formats.
fn machine_usage(command: &str, problem: &str, output: OutputArg) {
    match output {
        OutputArg::Jsonl => {
            let usage = crate::exit::Error::Usage(problem.to_string());
            let _ = crate::output::error_stream(command, &usage);
        }
        OutputArg::Tap => {
            let _ = crate::output::tap::bail_out(problem);
        }
        OutputArg::Human | OutputArg::Json => {}
    }
}

/// The `--output` (or `--format`) asked for, read from the words before
/// `--` (after it, they are run's CMD and its arguments); the last wins,
/// as clap reads it.
fn wants_output(args: &[String]) -> Option<OutputArg> {
    let mut asked = None;
    let mut words = args.iter().skip(1).take_while(|a| *a != "--");
    while let Some(a) = words.next() {
        if matches!(a.as_str(), "--output" | "--format") {
            asked = words.next().map(String::as_str);
        } else if let Some(v) = a
            .strip_prefix("--output=")
            .or_else(|| a.strip_prefix("--format="))
        {
            asked = Some(v);
        }
    }
    asked.and_then(|v| OutputArg::from_str(v, false).ok())
}

/// The subcommand named on the command line, for aoitap's own meta.
fn command_name(args: &[String]) -> String {
    let root = command();
    args.iter()
        .skip(1)
        .find(|a| root.find_subcommand(a.as_str()).is_some())
        .cloned()
        .unwrap_or_else(|| "aoitap".to_string())
}

fn parse_marker(s: &str) -> Result<String, String> {
    let re = regex::Regex::new(s).map_err(|e| format!("not a regular expression: {e}"))?;
    if re.captures_len() != 2 {
        return Err("the pattern needs exactly one capture group, for N".into());
    }
    Ok(s.to_string())
}

fn parse_pin(s: &str) -> Result<SchemaPin, String> {
    let (name, major) = match s.rsplit_once('@') {
        Some((n, m)) => {
            let m = m
                .parse()
                .map_err(|_| format!("major version {m:?} is not a whole number"))?;
            (n, Some(m))
        }
        None => (s, None),
    };
    if name.is_empty() {
        return Err("the schema name is empty".into());
    }
    Ok(SchemaPin {
        name: name.to_string(),
        major,
    })
}

/// `65536`, `64K`, `64MiB`, `1G`: binary multiples.
fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..digits]
        .parse()
        .map_err(|_| format!("{s:?} is not a size in bytes"))?;
    let mult: u64 = match t[digits..].to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        other => return Err(format!("unknown size suffix {other:?} (use K, M or G)")),
    };
    let bytes = n
        .checked_mul(mult)
        .ok_or_else(|| format!("{s:?} is too large"))?;
    if bytes == 0 {
        return Err("must be at least 1 byte".into());
    }
    // The line index keeps positions in 32 bits (src/json/mod.rs).
    if bytes > u64::from(u32::MAX) {
        return Err(format!(
            "{s:?} is too large: a line is at most 4 GiB - 1 bytes"
        ));
    }
    usize::try_from(bytes).map_err(|_| format!("{s:?} is too large"))
}

/// verify's help is this wide off a terminal (clap's default), and a
/// rule's description continues at this column.
const HELP_COLUMNS: usize = 100;
const RULE_TEXT_AT: usize = 48;

/// `text` in lines of at most `width` characters, broken between words.
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

fn verify_after_help() -> String {
    let mut s = String::from(RULES_HELP);
    s.push('\n');
    for r in Rule::ALL {
        let sev = match r.default_severity() {
            crate::check::rules::Severity::Error => 'E',
            crate::check::rules::Severity::Warning => 'W',
            crate::check::rules::Severity::Info => 'I',
        };
        let head = format!("  {:<30} {sev}  §{:<10} ", r.id(), r.anchor());
        let mut what = wrap_words(r.what(), HELP_COLUMNS - RULE_TEXT_AT).into_iter();
        if head.chars().count() == RULE_TEXT_AT {
            s.push_str(&head);
            s.push_str(&what.next().unwrap_or_default());
        } else {
            // An anchor wider than its column (`aiocs daemon stream`):
            // the description starts on the next line, in its column.
            s.push_str(head.trim_end());
        }
        s.push('\n');
        // Help is 100 columns wide off a terminal: a description wrapped
        // here keeps to its column, where clap's wrap would not.
        for more in what {
            s.push_str(&format!("{:RULE_TEXT_AT$}{more}\n", ""));
        }
    }
    s.push('\n');
    s.push_str(&Exit::help());
    s.push_str(
        "\n\nExamples:\n  set -o pipefail; tool --output jsonl | tee out.jsonl | aoitap verify -q\n  \
         aoitap verify --output jsonl out.jsonl | jq 'select(.type==\"finding\")'\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert!(parse_size("4G").is_err());
        assert_eq!(parse_size("2k"), Ok(2048));
        assert!(parse_size("0").is_err());
        assert!(parse_size("12X").is_err());
        assert!(parse_size("99999999999G").is_err());
    }

    #[test]
    fn pins() {
        assert_eq!(
            parse_pin("a.b@2"),
            Ok(SchemaPin {
                name: "a.b".into(),
                major: Some(2)
            })
        );
        assert_eq!(
            parse_pin("a.b"),
            Ok(SchemaPin {
                name: "a.b".into(),
                major: None
            })
        );
        assert!(parse_pin("a@x").is_err());
    }
}

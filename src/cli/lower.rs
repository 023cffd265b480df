//! clap's values become `crate::config`'s plain options here, after the
//! checks of `usage`, before any input is read: nothing past `cli` sees
//! clap (ripgrep's `LowArgs -> HiArgs`). A file an option names is read by
//! the command that needs it (`cmd::load`: `--schema`,
//! `--expected-failures`); here it stays a path.

use std::path::{Path, PathBuf};

use super::args::{
    ColorArg, Command, FilterArgs, FollowArgs, LintArgs, LintOutputArg, NamesArg, OutputArg,
    ProtocolArg, ReconcileArgs, RunArgs, ShellArg, SplitArgs, StreamArgs, StripArgs, SummarizeArgs,
    UpgradeArgs, VerifyArgs,
};
use super::usage;
use crate::check::rules::Levels;
use crate::check::{Config, Protocol};
use crate::config::{
    CapabilitiesOptions, CompletionsOptions, FilterOptions, Follow, Input, Invocation, LintOptions,
    ReconcileOptions, ReportTo, RunOptions, SchemaOptions, Shell, SplitOptions, StreamOptions,
    StripOptions, SummarizeOptions, UpgradeOptions,
};
use crate::exit::Error;
use crate::input::file_id::input_files;
use crate::input::walk;
use crate::output::style::{self, Format, StdStream, Style};

/// The plain form of one subcommand, or the usage error that stops it.
pub(super) fn lower(command: Command) -> Result<Invocation, Error> {
    match command {
        // --output has one value (json) for the documents: nothing to lower.
        Command::Schema(a) => Ok(Invocation::Schema(SchemaOptions {
            name: a.name,
            major: a.schema_version,
        })),
        Command::Capabilities(_) => Ok(Invocation::Capabilities(CapabilitiesOptions {})),
        Command::Profiles(a) => Ok(Invocation::Profiles(a.profile)),
        Command::Man(_) => Ok(Invocation::Man),
        Command::Completions(a) => Ok(Invocation::Completions(CompletionsOptions {
            shell: match a.shell {
                ShellArg::Bash => Shell::Bash,
                ShellArg::Elvish => Shell::Elvish,
                ShellArg::Fish => Shell::Fish,
                ShellArg::PowerShell => Shell::PowerShell,
                ShellArg::Zsh => Shell::Zsh,
            },
        })),
        Command::Verify(a) => verify(a).map(Invocation::Verify),
        Command::StripEnvelope(a) => strip(a).map(Invocation::StripEnvelope),
        Command::Upgrade(a) => upgrade(a).map(Invocation::Upgrade),
        Command::SplitByRun(a) => split(a).map(Invocation::SplitByRun),
        Command::Summarize(a) => summarize(a).map(Invocation::Summarize),
        Command::Reconcile(a) => reconcile(a).map(Invocation::Reconcile),
        Command::Run(a) => run(a).map(Invocation::Run),
        Command::Lint(a) => lint(a).map(Invocation::Lint),
        Command::Filter(a) => filter(a).map(Invocation::Filter),
    }
}

/// `--redact`: the command writes lines redacted, and the checker says so
/// of a line it withholds.
fn redacting(opts: &mut StreamOptions, on: bool) {
    opts.redact = on;
    opts.check.redact = on;
}

/// Directory operands as the files they stand for, before any check of
/// the operands, so every check sees the files that will be read.
fn walked(files: &mut Vec<PathBuf>) {
    *files = walk::expand(std::mem::take(files));
}

fn verify(mut a: VerifyArgs) -> Result<StreamOptions, Error> {
    walked(&mut a.stream.files);
    usage::stream(&a.stream, "verify")?;
    usage::schema_file(a.schema.as_deref(), &a.stream)?;
    let to = if a.relay {
        ReportTo::Stderr
    } else {
        ReportTo::Stdout
    };
    let output = a.stream.output;
    let mut opts = a.stream.into_options(to);
    opts.schema_file = a.schema;
    opts.relay = a.relay;
    if a.relay && a.follow.follow {
        return Err(usage::refuse(
            "verify",
            "--follow does not relay: follow the files with tail -n +1 -F FILE | aoitap verify --relay",
            output,
        ));
    }
    redacting(&mut opts, a.redact);
    opts.style.failures_only = a.failures_only;
    opts.jobs = match a.jobs {
        Some(n) => n as usize,
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    followed(&mut opts, a.follow, a.state.state, "verify", output)?;
    Ok(opts)
}

fn strip(mut a: StripArgs) -> Result<StripOptions, Error> {
    walked(&mut a.stream.files);
    usage::stream(&a.stream, "strip-envelope")?;
    let mut stream = a.stream.into_options(ReportTo::Stderr);
    // A filter: its output is the data; the report speaks only when
    // something is wrong.
    stream.style.quiet_pass = true;
    redacting(&mut stream, a.redact);
    Ok(StripOptions {
        stream,
        keep_framework: a.keep_framework,
        types: a.types,
        run: a.run,
    })
}

fn upgrade(mut a: UpgradeArgs) -> Result<UpgradeOptions, Error> {
    walked(&mut a.stream.files);
    usage::stream(&a.stream, "upgrade")?;
    if a.stream.files.len() > 1 {
        let problem = "upgrade reads one stream: give one FILE (or none, for standard input)";
        return Err(usage::refuse("upgrade", problem, a.stream.output));
    }
    let mut stream = a.stream.into_options(ReportTo::Stderr);
    // stdout is the upgraded stream; the report speaks when something is
    // wrong.
    stream.style.quiet_pass = true;
    Ok(UpgradeOptions { stream })
}

fn filter(mut a: FilterArgs) -> Result<FilterOptions, Error> {
    walked(&mut a.stream.files);
    usage::stream(&a.stream, "filter")?;
    let output = a.stream.output;
    let mut stream = a.stream.into_options(ReportTo::Stderr);
    // stdout is the program's output; the report speaks when something
    // is wrong.
    stream.style.quiet_pass = true;
    let args: Vec<(String, String)> = a
        .arg
        .chunks(2)
        .map(|p| (p[0].clone(), p[1].clone()))
        .collect();
    // A name jq can refer to, and never ENV: `env` and `$ENV` stay {}.
    let usable = |n: &str| {
        n.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if let Some((bad, _)) = args.iter().find(|(n, _)| !usable(n) || n == "ENV") {
        return Err(usage::refuse(
            "filter",
            &format!("--arg {bad:?}: name a variable as jq does ([A-Za-z_][A-Za-z0-9_]*), not ENV"),
            output,
        ));
    }
    Ok(FilterOptions {
        stream,
        program: a.program,
        args,
        domain: a.domain,
        assert: a.assert,
        raw: a.raw_output,
    })
}

fn split(mut a: SplitArgs) -> Result<SplitOptions, Error> {
    walked(&mut a.stream.files);
    usage::stream(&a.stream, "split-by-run")?;
    let inputs = input_files(&a.stream.files);
    usage::split(&a.dir, &inputs, a.stream.output)?;
    let output = a.stream.output;
    let mut stream = a.stream.into_options(ReportTo::Stdout);
    // Splitting is about many runs: each is judged on its own.
    stream.check.multi_run = true;
    followed(&mut stream, a.follow, None, "split-by-run", output)?;
    if let Some(f) = &mut stream.follow {
        f.written_dir = Some(a.dir.clone());
    }
    // A followed name in DIR would read back the run files written there.
    if stream.follow.is_some()
        && let Some(p) = stream.inputs.iter().find_map(|i| match i {
            Input::Path(p) if same_dir(p.parent(), &a.dir) => Some(p),
            _ => None,
        })
    {
        return Err(usage::refuse(
            "split-by-run",
            &format!(
                "--follow {} looks in --dir {}: the run files written there would be read back; give another --dir",
                p.display(),
                a.dir.display()
            ),
            output,
        ));
    }
    redacting(&mut stream, a.redact);
    Ok(SplitOptions {
        stream,
        dir: a.dir,
        force: a.force,
        max_open: a.max_open.map(|n| n as usize),
        inputs: inputs.into_iter().map(|(id, _)| id).collect(),
    })
}

fn reconcile(mut a: ReconcileArgs) -> Result<ReconcileOptions, Error> {
    walked(&mut a.stream.files);
    usage::stream(&a.stream, "reconcile")?;
    usage::reconcile(&a)?;
    let output = a.stream.output;
    let mut stream = a.stream.into_options(ReportTo::Stdout);
    stream.check.multi_run = true;
    followed(&mut stream, a.follow, None, "reconcile", output)?;
    Ok(ReconcileOptions {
        stream,
        against: a.against,
    })
}

fn lint(a: LintArgs) -> Result<LintOptions, Error> {
    use crate::check::lint_checks::CHECKS;
    let output = match a.output {
        LintOutputArg::Human => OutputArg::Human,
        LintOutputArg::Jsonl => OutputArg::Jsonl,
        LintOutputArg::Tap => OutputArg::Tap,
        LintOutputArg::Junit => OutputArg::Junit,
    };
    let refuse = |what: &str| usage::refuse("lint", what, output);
    let chosen = lint_checks(&a.checks, "--checks", output)?;
    let excluded = lint_checks(&a.exclude_checks, "--exclude-checks", output)?;
    if let Some(bad) = a.secret_flag.iter().find(|f| {
        f.len() < 3 || !f.starts_with("--") || f.contains(|c: char| c == '=' || c.is_whitespace())
    }) {
        return Err(refuse(&format!(
            "--secret-flag {bad:?}: name a long flag, as --api-key"
        )));
    }
    let env = lint_env(&a.env, output)?;
    if let Some(n) = a.tool_words
        && usize::from(n) > a.command.len()
    {
        return Err(refuse(&format!(
            "--tool-words {n}: CMD has {} words",
            a.command.len()
        )));
    }
    let checks: Vec<&'static str> = CHECKS
        .iter()
        .map(|c| c.id)
        .filter(|id| chosen.is_empty() || chosen.contains(id))
        .filter(|id| !excluded.contains(id))
        .collect();
    if checks.is_empty() {
        return Err(refuse(
            "--checks and --exclude-checks leave no check to make",
        ));
    }
    let format = match a.output {
        LintOutputArg::Jsonl => Format::Jsonl,
        LintOutputArg::Tap => Format::Tap,
        LintOutputArg::Junit => Format::Junit,
        LintOutputArg::Human => Format::Human,
    };
    Ok(LintOptions {
        command: a.command,
        style: Style {
            quiet: a.quiet,
            ..Style::plain(format)
        },
        timeout: a.timeout,
        tool_words: a.tool_words.map(usize::from),
        env,
        checks,
        secret_flags: a.secret_flag,
        expected_failures_file: a.expected_failures,
        expected_failures: vec![],
    })
}

/// The checks `given` to `what` (--checks, --exclude-checks) names: ids
/// as the catalogue spells them, or `lint.06`, or `6`.
fn lint_checks(
    given: &[String],
    what: &str,
    output: OutputArg,
) -> Result<Vec<&'static str>, Error> {
    given
        .iter()
        .map(|g| {
            crate::check::lint_checks::by_name(g)
                .map(|c| c.id)
                .ok_or_else(|| {
                    let msg = format!("{what}: no check {g:?} (aoitap lint --help lists them)");
                    usage::refuse("lint", &msg, output)
                })
        })
        .collect()
}

/// The variables --env passes to CMD's calls, each with its value in
/// lint's own environment: named, and set.
fn lint_env(
    names: &[String],
    output: OutputArg,
) -> Result<Vec<(std::ffi::OsString, std::ffi::OsString)>, Error> {
    let refuse = |what: &str| usage::refuse("lint", what, output);
    let mut env = vec![];
    for name in names {
        if name.is_empty() || name.contains('=') {
            return Err(refuse(&format!(
                "--env {name:?}: name a variable, as API_TOKEN"
            )));
        }
        match std::env::var_os(name) {
            Some(value) => env.push((name.into(), value)),
            None => {
                return Err(refuse(&format!(
                    "--env {name}: not set in lint's environment"
                )));
            }
        }
    }
    Ok(env)
}

fn run(a: RunArgs) -> Result<RunOptions, Error> {
    usage::stream(&a.stream, "run")?;
    usage::run(&a)?;
    // -q silences the relay and the report; --save still saves; the
    // stream --upgrade writes is the product, not a relay, and stays. With
    // --output tap stdout is the TAP and nothing else, so `prove` can read
    // it: CMD's stdout is saved or discarded (docs/contract.md §3.3).
    // So with --output junit: the XML is stdout's alone.
    let tap = matches!(a.stream.output, OutputArg::Tap | OutputArg::Junit);
    let relay = (a.upgrade || !a.stream.quiet) && a.save.is_none() && !tap;
    let save = a.save;
    let mut stream = a.stream.into_options(if relay {
        ReportTo::Stderr
    } else {
        ReportTo::Stdout
    });
    stream.schema_file = a.schema;
    stream.relay = relay || save.is_some();
    stream.save = save;
    stream.redact = a.redact;
    stream.upgrade = a.upgrade;
    // Only a relay is written redacted.
    stream.check.redact = a.redact && stream.relay;
    Ok(RunOptions {
        stream,
        command: a.command,
        timeout: a.timeout,
        kill_after: a.kill_after,
        retries: a.retries,
        live: a.live,
        backoff: a.backoff,
        max_wait: a.max_wait,
    })
}

fn summarize(mut a: SummarizeArgs) -> Result<SummarizeOptions, Error> {
    walked(&mut a.stream.files);
    usage::stream(&a.stream, "summarize")?;
    let json = a.stream.output == OutputArg::Json;
    let output = a.stream.output;
    let mut stream = a.stream.into_options(ReportTo::Stdout);
    if json {
        stream.style.format = Format::Json;
    }
    stream.check.multi_run = true;
    followed(&mut stream, a.follow, None, "summarize", output)?;
    Ok(SummarizeOptions { stream })
}

/// Whether the followed operand `pattern` (a glob, or a name) would match
/// `written` (by the directory and the name's shape).
fn glob_matches_now(pattern: &Path, written: &Path) -> bool {
    let same_dir = same_dir(pattern.parent(), written.parent().unwrap_or(Path::new(".")));
    let (Some(p), Some(w)) = (pattern.file_name(), written.file_name()) else {
        return false;
    };
    same_dir && crate::input::glob::glob_match(p.as_encoded_bytes(), w.as_encoded_bytes())
}

/// Whether `parent` (of a followed name; none or empty: `.`) is `dir`.
fn same_dir(parent: Option<&Path>, dir: &Path) -> bool {
    let parent = match parent {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(parent), std::fs::canonicalize(dir)) {
        (Ok(a), Ok(b)) => a == b,
        // DIR is made later (or is a dangling link): the same place
        // spelled alike, `./out` and `out` included.
        _ => lexical(parent) == lexical(dir),
    }
}

/// `path` made absolute with no `.` parts and no trailing slash.
fn lexical(path: &Path) -> PathBuf {
    let abs = std::env::current_dir().unwrap_or_default().join(path);
    abs.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// `--follow` and its options into `opts` (and verify's `--state`), or the
/// usage error: files are followed by name, so there must be names
/// (docs/contract.md §2.3).
fn followed(
    opts: &mut StreamOptions,
    f: FollowArgs,
    state: Option<PathBuf>,
    command: &str,
    output: OutputArg,
) -> Result<(), Error> {
    if !f.follow {
        return Ok(());
    }
    let refuse = |problem: &str| Err(usage::refuse(command, problem, output));
    if opts.inputs.iter().any(|i| matches!(i, Input::Stdin)) {
        return refuse(
            "--follow follows files by name, and standard input has none: for a pipe, use the \
             shell's tail (tail -n +1 -F FILE | aoitap verify --multi-run --unbounded)",
        );
    }
    // The state is written beside FILE and renamed over it: over a device
    // (/dev/null), a FIFO or a directory that would replace the node
    // itself. A link is followed: its target is the state.
    if let Some(state) = &state
        && std::fs::metadata(state).is_ok_and(|m| !m.is_file())
    {
        return refuse(&format!(
            "--state {} is not a regular file: aoitap replaces the state whole, by renaming a \
             new file over it",
            state.display()
        ));
    }
    if command == "summarize" && opts.style.format == Format::Json {
        return refuse("--follow never ends, and --output json is written at the end: use jsonl");
    }
    if opts.style.format == Format::Html {
        return refuse("--follow never ends, and --output html is a page written whole: use jsonl");
    }
    // A followed log holds one run after another, each judged as its
    // summary arrives (docs/contract.md §2.3): as under --multi-run, given or not.
    opts.check.multi_run = true;
    let written: Vec<PathBuf> = opts.report.iter().chain(&state).cloned().collect();
    let follow = Follow {
        from_end: f.from_end,
        run_idle: f.run_idle_timeout,
        state,
        written,
        written_dir: None,
    };
    // A glob that matches what aoitap writes would read it back, or the
    // report's creation would empty a log it follows.
    if let Some(p) = opts.inputs.iter().find_map(|i| match i {
        Input::Path(p) if follow.writes(p) => Some(p.clone()),
        _ => None,
    }) {
        return refuse(&format!(
            "{} is what aoitap writes (--report or --state): it cannot be followed too",
            p.display()
        ));
    }
    if let Some(w) = follow.written.iter().find(|w| {
        opts.inputs
            .iter()
            .any(|i| matches!(i, Input::Path(p) if glob_matches_now(p, w)))
    }) {
        return refuse(&format!(
            "{} is what aoitap writes (--report or --state), and a followed glob matches it",
            w.display()
        ));
    }
    opts.follow = Some(follow);
    // One reader follows every file; findings go out as they are made.
    opts.jobs = 1;
    Ok(())
}

impl StreamArgs {
    /// `to`: where the report goes without --report (for colour).
    fn into_options(self, to: ReportTo) -> StreamOptions {
        let style = self.style(to);
        let format = style.format;
        // Its parser took only the version aoitap serves, the one it writes.
        let _served = self.schema_version;
        StreamOptions {
            inputs: inputs(self.files),
            style,
            check: Config {
                multi_run: self.multi_run,
                unbounded: self.unbounded,
                accept_partial: self.accept_partial,
                continue_on_error: self.continue_on_error,
                expect_schema: self.expect_schema,
                levels: Levels::new(&self.rule_words, self.strict),
                markers: self.marker,
                max_line_bytes: self.max_line_bytes,
                protocol: self
                    .profile
                    .map(Protocol::Profile)
                    .or(self.protocol.pinned()),
                type_field: self.type_field,
                first: self.first,
                last: self.last,
                typed: Default::default(),
                afdata_names: self.names == Some(NamesArg::Afdata),
                secret_names: self.secret_name,
                redact: false,
                schema: None,
                timed: format == Format::Junit,
            },
            max_line_bytes: self.max_line_bytes,
            report: self.report,
            line_buffered: self.line_buffered,
            idle_timeout_ms: self.idle_timeout_ms,
            relay: false,
            redact: false,
            upgrade: false,
            save: None,
            jobs: 1,
            follow: None,
            schema_file: None,
        }
    }

    /// How the report is written: its format, its colour (never on a
    /// --report file, which is no terminal) and how many findings it
    /// shows.
    fn style(&self, to: ReportTo) -> Style {
        let format = match self.output {
            OutputArg::Jsonl => Format::Jsonl,
            OutputArg::Tap => Format::Tap,
            OutputArg::Junit => Format::Junit,
            OutputArg::Sarif => Format::Sarif,
            OutputArg::Github => Format::Github,
            OutputArg::Html => Format::Html,
            OutputArg::Human | OutputArg::Json => Format::Human,
        };
        // A --report file is never a terminal, and never painted.
        let terminal = match (&self.report, to) {
            (Some(_), _) => false,
            (None, ReportTo::Stderr) => style::is_terminal(StdStream::Stderr),
            (None, ReportTo::Stdout) => style::is_terminal(StdStream::Stdout),
        };
        let color = match self.color {
            ColorArg::Always => true,
            ColorArg::Never => false,
            ColorArg::Auto => style::auto(terminal),
        };
        // `--limit 0` shows every finding, as the terminal's count says.
        let limit = self.limit.filter(|&n| n > 0);
        let per_input = (terminal && format == Format::Human && self.limit.is_none())
            .then_some(style::TERMINAL_FINDINGS);
        Style {
            format,
            quiet: self.quiet,
            quiet_pass: false,
            failures_only: false,
            color: color && format == Format::Human,
            limit,
            per_input,
        }
    }
}

/// The FILEs to read: standard input for `-`, and for none at all.
fn inputs(files: Vec<PathBuf>) -> Vec<Input> {
    if files.is_empty() {
        return vec![Input::Stdin];
    }
    files
        .into_iter()
        .map(|p| {
            if p.as_os_str() == "-" {
                Input::Stdin
            } else {
                Input::Path(p)
            }
        })
        .collect()
}

impl ProtocolArg {
    fn pinned(self) -> Option<Protocol> {
        match self {
            ProtocolArg::Auto => None,
            ProtocolArg::Aoi => Some(Protocol::Aoi),
            ProtocolArg::Aoi02 => Some(Protocol::Aoi02),
            ProtocolArg::Afdata => Some(Protocol::Afdata),
            ProtocolArg::Ndjson => Some(Protocol::Ndjson),
            ProtocolArg::Aiocs => Some(Protocol::Aiocs),
            ProtocolArg::Okf => Some(Protocol::Okf),
            ProtocolArg::Jsonl => Some(Protocol::Jsonl),
        }
    }
}

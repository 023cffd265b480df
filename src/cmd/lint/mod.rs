//! `aoitap lint [OPTIONS] -- CMD [ARG ...]` (docs/contract.md §1.4; spec §18): CMD
//! ARGS and the tool's discovery commands, each called in a clean
//! sandbox, and each §18.2 check decided from what the calls gave.

pub mod advertised;
pub mod behaviour;
pub mod calls;
pub mod checks;
mod expected;
pub mod fed;
pub mod judged;
pub mod sandbox;
pub mod stderr;

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::check::Tally;
use crate::check::lint_checks::{CHECKS, Check};
use crate::config::LintOptions;
use crate::exit::{Error, Exit, Result};
use crate::output;
use crate::output::Emitter;
use crate::signal::Signals;
use calls::{Calls, Conclusion};
pub use expected::expected_failures;

/// Programs whose first operand is the tool (`python3 tool.py search`):
/// the discovery commands are then `python3 tool.py schema ...`.
const INTERPRETERS: &[&str] = &[
    "python", "python3", "node", "deno", "bun", "ruby", "perl", "php", "sh", "bash", "zsh",
];

pub fn run(opts: &LintOptions) -> Result<Exit> {
    let mut command = opts.command.clone();
    // A CMD that cannot run is lint's error, not a report on the tool,
    // with the statuses a shell gives (POSIX 2.8.2).
    match sandbox::resolve(&command[0]) {
        Ok(path) => command[0] = path.into_os_string(),
        Err(e) => {
            let status = if e.kind() == io::ErrorKind::NotFound {
                Exit::CommandNotFound
            } else {
                Exit::CannotExecute
            };
            return Err(Error::NotRun(
                status,
                format!(
                    "lint: cannot run {}: {e}",
                    crate::text::quote(&opts.command[0].to_string_lossy())
                ),
            ));
        }
    }
    sandbox::pass_env(opts.env.clone());
    let signals = Signals::install(false, true)?;
    {
        use signal_hook::consts::*;
        signals.also_as_term(&[
            SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGXCPU, SIGXFSZ, SIGPROF, SIGIO,
            SIGSYS, SIGTRAP,
        ])?;
    }
    sandbox::guard(signals.flags());
    let tool_words = opts
        .tool_words
        .unwrap_or_else(|| default_tool_words(&opts.command));
    let mut calls = Calls::new(command, tool_words, opts.timeout);
    calls.with_schema = opts.checks.contains(&"lint.04-framework-schema");
    if let Some(why) = calls.refused() {
        return Err(Error::Usage(format!(
            "lint: {why}: lint checks a command the tool runs (give CMD ARGS it accepts)"
        )));
    }
    let mut results = vec![];
    for id in &opts.checks {
        if sandbox::interrupted() {
            break;
        }
        let check = CHECKS.iter().find(|c| c.id == *id).expect("checked by cli");
        let r = decide(check, &calls, opts);
        // A check a signal cut short is not reported as decided.
        if !sandbox::interrupted() {
            results.push(r);
        }
    }
    // A name, not a document: a command name longer than this is cut.
    let command_name = calls.command_name().map(|n| {
        let short = crate::text::prefix(&n, 128);
        if short.len() < n.len() {
            format!("{short}...")
        } else {
            n
        }
    });
    report(opts, &results, command_name.as_deref(), signals.caught())
}

/// `--tool-words` unless given: an interpreter, its options and the
/// script or module it runs (`python3 -u tool.py`, `python3 -m pkg`,
/// `node --no-warnings tool.js`), else the program alone.
fn default_tool_words(command: &[OsString]) -> usize {
    let program = Path::new(&command[0])
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let interpreted = INTERPRETERS.contains(&program.as_str()) || program.starts_with("python3.");
    if !interpreted {
        return 1;
    }
    let mut k = 1;
    while let Some(word) = command.get(k).map(|w| w.to_string_lossy()) {
        match word.as_ref() {
            // The module is the tool.
            "-m" => return (k + 2).min(command.len()),
            w if w.starts_with('-') => k += 1,
            _ => return k + 1,
        }
    }
    1
}

/// The checks no command conforms without (docs/contract.md §3.4): its stdout is a
/// stream (2), its exit status tells its summary's `ok` (3), and the
/// stream is whole, one meta first and one summary last (14). Each asked
/// for must be decided and pass for exit 0; `--checks` that leave one out
/// take it out of what exit 0 says.
const NEEDED: [u8; 3] = [2, 3, 14];

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Write the report; the exit status.
fn report(
    opts: &LintOptions,
    results: &[calls::Result],
    command: Option<&str>,
    signal: Option<Exit>,
) -> Result<Exit> {
    let mut out = Emitter::new(
        BufWriter::with_capacity(64 * 1024, Box::new(io::stdout()) as Box<dyn Write>),
        opts.style,
        "lint",
    );
    // The tool linted names the report's suite (JUnit).
    out.file = opts
        .command
        .first()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default();
    out.begin()?;
    let mut made = Made::default();
    for r in results {
        if matches!(r.outcome, Conclusion::Pass | Conclusion::Fail) {
            made.decided += 1;
        } else if NEEDED.contains(&r.check.number) {
            made.undecided.push(r.check.id);
        }
        let listed = opts.expected_failures.iter().any(|e| e == r.check.id);
        let (result, ok, detail) = as_listed(r, listed);
        let counted = !ok && result != "expected-failure";
        if counted {
            made.failed += 1;
        }
        *made.counts.entry(result).or_default() += 1;
        out.check(&output::Check {
            name: r.check.id,
            ok,
            // Not failing, yet not shown either: a warning.
            severity: match (ok, counted) {
                (true, _) if result == "inconclusive" => "warning",
                (true, _) => "info",
                (false, false) => "warning",
                (false, true) => "error",
            },
            detail: &detail,
            properties: output::CheckProperties {
                check: r.check.number,
                factor: r.check.factor,
                result,
                command,
                stderr: r.stderr.iter().map(shown).collect(),
            },
        })?;
    }
    let exit = made.exit(signal);
    out.result = Some(made.result_line(command, exit));
    use crate::output::style::Format;
    let failed = made.failed;
    if failed > 0 && opts.style.format == Format::Jsonl {
        let msg = format!("{failed} of {} checks failed", results.len());
        out.local_error("validation", "LINT_FAILED", &msg)?;
    } else if failed == 0 && exit == Exit::Failed && opts.style.format != Format::Human {
        // No check failed, yet no pass: said as an error, so a TAP or
        // JUnit consumer agrees with exit 1 (the human result line says
        // it already).
        let msg = match made.not_decided() {
            Some(why) if made.decided > 0 => why,
            _ => "no check could be decided".to_string(),
        };
        out.local_error("validation", "LINT_UNDECIDED", &msg)?;
    }
    out.end(exit, &Tally::default())?;
    Ok(exit)
}

/// What the checks made came to, for the report's end.
#[derive(Default)]
struct Made {
    failed: u64,
    decided: u64,
    /// The needed checks asked for and not decided, by id.
    undecided: Vec<&'static str>,
    /// How many checks came to each result.
    counts: std::collections::BTreeMap<&'static str, u64>,
}

impl Made {
    /// lint never passes what it could not decide (docs/contract.md
    /// §3.4): a pass needs a decision, and each needed check asked for
    /// passed.
    fn exit(&self, signal: Option<Exit>) -> Exit {
        match signal {
            Some(s) => s,
            None if self.failed > 0 || self.decided == 0 || !self.undecided.is_empty() => {
                Exit::Failed
            }
            None => Exit::Pass,
        }
    }

    /// Which needed checks could not be decided, when some could not.
    fn not_decided(&self) -> Option<String> {
        let undecided = &self.undecided;
        (!undecided.is_empty()).then(|| {
            format!(
                "{} could not be decided, and a conforming command needs {}",
                and_list(undecided),
                if undecided.len() == 1 { "it" } else { "them" }
            )
        })
    }

    /// The report's last line: `Result for CMD: VERDICT (N pass, M fail;
    /// exit E)`.
    fn result_line(&self, command: Option<&str>, exit: Exit) -> String {
        let verdict = match exit {
            Exit::Pass if self.counts.contains_key("inconclusive") => {
                "CONFORMING for the checks decided (see why the others could not be)".to_string()
            }
            Exit::Pass => "CONFORMING for the checks it claims".to_string(),
            Exit::Failed if self.decided == 0 => {
                "NOT CONFORMING: no check could be decided".to_string()
            }
            // What failed comes first; what could not be decided after.
            Exit::Failed => {
                let mut said = vec![];
                if self.failed > 0 {
                    said.push(format!(
                        "{} failed",
                        crate::text::plural(self.failed, "check")
                    ));
                }
                said.extend(self.not_decided());
                format!("NOT CONFORMING: {}", said.join("; "))
            }
            _ => "INTERRUPTED: the checks after the signal were not made".to_string(),
        };
        let said: Vec<String> = self
            .counts
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        let of = command.map_or(String::new(), |c| format!(" for {}", crate::text::quote(c)));
        let said = if said.is_empty() {
            "no check made".to_string()
        } else {
            said.join(", ")
        };
        format!("Result{of}: {verdict} ({said}; exit {})", exit.code())
    }
}

/// A check's result as the report says it, where `listed` says
/// --expected-failures names it: its word, whether it is ok, its detail.
fn as_listed(r: &calls::Result, listed: bool) -> (&'static str, bool, String) {
    match (r.outcome, listed) {
        (Conclusion::Fail, true) => (
            "expected-failure",
            false,
            format!("{} (listed in --expected-failures)", r.detail),
        ),
        (Conclusion::Fail, false) => ("fail", false, r.detail.clone()),
        // Only a pass makes an entry stale: a check not decided says
        // nothing of whether the failure is gone.
        (Conclusion::Pass, true) => (
            "stale",
            false,
            format!(
                "listed in --expected-failures, but passes: {} (remove the entry)",
                r.detail
            ),
        ),
        (o, true) => (
            o.word(),
            true,
            format!("{} (listed in --expected-failures)", r.detail),
        ),
        (o, false) => (o.word(), true, r.detail.clone()),
    }
}

/// What the report shows of a call's stderr: its last lines, unless
/// they are withheld, and why.
fn shown(s: &stderr::Stderr) -> output::CallStderr<'_> {
    output::CallStderr {
        call: &s.call,
        tail: s.withheld.is_none().then_some(s.tail.as_str()),
        withheld: s.withheld,
        cut: s.cut,
        stack_trace: s.stack_trace,
    }
}

/// One check's result; a failure shows the stderr of the call it failed
/// on (docs/contract.md §1.4).
fn decide(check: &'static Check, c: &Calls, opts: &LintOptions) -> calls::Result {
    let r = judge(check, c, opts);
    // These read CMD ARGS alone; the others name their own calls.
    if matches!(check.number, 3 | 4 | 8 | 14 | 15) {
        return r.on("CMD", c.main().0);
    }
    r
}

fn judge(check: &'static Check, c: &Calls, opts: &LintOptions) -> calls::Result {
    match check.number {
        1 => checks::discoverable(c),
        2 => checks::stdout_jsonl(c),
        3 => checks::exit_matches_summary(c),
        4 => checks::framework_schema(c),
        5 => checks::usage_and_errors(c),
        6 => advertised::safe_destructive(c),
        7 => advertised::idempotent(c),
        8 => advertised::auditable(c),
        9 => behaviour::secrets(c, &opts.secret_flags),
        10 => behaviour::pipe_and_signals(c),
        11 => advertised::limit_and_cursor(c),
        12 => fed::malformed_input(c),
        13 => checks::schema_version(c),
        14 => checks::one_meta_one_summary(c),
        15 => checks::seq_and_count(c),
        _ => fed::transformer(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interpreter_and_its_script_or_module_name_the_tool() {
        let words =
            |s: &str| default_tool_words(&s.split(' ').map(OsString::from).collect::<Vec<_>>());
        assert_eq!(words("tool search q"), 1);
        assert_eq!(words("python3 tool.py search"), 2);
        assert_eq!(words("/usr/bin/python3 -u tool.py search"), 3);
        assert_eq!(words("python3 -m pkg search"), 3);
        assert_eq!(words("node --no-warnings tool.js list"), 3);
    }
}

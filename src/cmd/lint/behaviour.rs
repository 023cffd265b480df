//! The checks that provoke the tool: secrets given to it (spec §18.2
//! check 9), a pipe closed and signals sent under it (check 10).

use std::collections::HashMap;

use super::calls::{Calls, Conclusion, Result, STACK_TRACE, result};
use super::sandbox::{Call, Ran};
use super::stderr::stack_trace;
use crate::check::is_sensitive_name;

/// Flags whose names say they carry a secret (the names meta.args
/// redaction treats as sensitive: one truth), in `text` (a `--help`, a
/// capabilities manifest); each with whether the text shows it taking a
/// value (`--token T`, `--token=<T>`).
pub fn secret_flags(text: &str) -> Vec<(String, bool)> {
    let mut found: Vec<(String, bool)> = vec![];
    let mut names = HashMap::new();
    let mut rest = text;
    while let Some(at) = rest.find("--") {
        let name: String = rest[at + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        rest = &rest[at + 2 + name.len()..];
        if name.is_empty() || !is_sensitive_name(&name) {
            continue;
        }
        let after = rest.strip_prefix([' ', '=']).unwrap_or("");
        let takes_value =
            after.starts_with('<') || after.chars().next().is_some_and(|c| c.is_ascii_uppercase());
        match names.get(&name) {
            None => {
                names.insert(name.clone(), found.len());
                found.push((format!("--{name}"), takes_value));
            }
            Some(&i) => found[i].1 |= takes_value,
        }
    }
    found
}

/// A value no tool has a reason to write: found in its output, it was
/// echoed.
pub const CANARY: &str = "aoitap-lint-canary-7f3a9c";

/// The most secret-looking flags tried (each is a call).
const MAX_FLAGS: usize = 16;

/// Check 9: a canary in each secret-looking flag is never written, and
/// meta.args is redacted.
pub fn secrets(c: &Calls, given: &[String]) -> Result {
    let (_, main) = c.main();
    if let Some(f) = &main.events(9).first_error {
        return result(9, Conclusion::Fail, f.said());
    }
    let mut flags = flags_to_try(c, given);
    if flags.is_empty() {
        return result(
            9,
            Conclusion::Skipped,
            "no secret-looking flag in --help or capabilities (name one with --secret-flag)",
        );
    }
    let untried = flags.len().saturating_sub(MAX_FLAGS);
    // A flag is taken when the call ends as CMD ARGS alone does (a usage
    // error is another status).
    let (main_ran, _) = c.main();
    let usual = main_ran.code();
    // When an unknown flag ends as CMD ARGS do, a refusal cannot be told
    // from a taking, and an echo may be a refusal quoting what it refused.
    let alike = c.unknown_flag().0.code() == usual;
    flags.truncate(MAX_FLAGS);
    let mut tried = vec![];
    let mut refused = vec![];
    for (flag, takes_value) in &flags {
        let ran = canary_given(c, flag, *takes_value, usual);
        // A refused call tests nothing: an error may quote the value it
        // refuses.
        if ran.code() != usual || usual.is_none() {
            refused.push(flag.as_str());
            continue;
        }
        if alike {
            continue;
        }
        if ran.seen_on_stdout || ran.seen_on_stderr {
            let place = if ran.seen_on_stdout {
                "stdout"
            } else {
                "stderr"
            };
            return result(
                9,
                Conclusion::Fail,
                format!("the value given to {flag} is written to {place}"),
            )
            .on(&format!("CMD with a value given to {flag}"), &ran);
        }
        tried.push(flag.as_str());
    }
    concluded(&flags, &tried, &refused, untried, alike)
}

/// The secret-looking flags to try: those --secret-flag names, then those
/// --help and the capabilities manifest show, each once, with whether
/// any shows it taking a value.
fn flags_to_try(c: &Calls, given: &[String]) -> Vec<(String, bool)> {
    let help = c.help();
    let (caps_ran, _) = c.capabilities();
    let mut flags: Vec<(String, bool)> = given.iter().map(|g| (g.clone(), true)).collect();
    let mut at: HashMap<String, usize> = flags
        .iter()
        .enumerate()
        .map(|(i, f)| (f.0.clone(), i))
        .collect();
    for text in [
        help.stdout.bytes(1 << 20).unwrap_or_default(),
        help.stderr_head.clone(),
        caps_ran.stdout.bytes(16 << 20).unwrap_or_default(),
    ] {
        for (f, takes) in secret_flags(&String::from_utf8_lossy(&text)) {
            match at.get(&f) {
                Some(&i) => flags[i].1 |= takes,
                None => {
                    at.insert(f.clone(), flags.len());
                    flags.push((f, takes));
                }
            }
        }
    }
    flags
}

/// CMD ARGS with the canary given to `flag`. `--flag=VALUE` first: a
/// flag that takes no value refuses it, where `--flag VALUE` would make
/// the canary an operand, and an operand may be echoed rightly. The
/// second form only when the first was refused (did not end as `usual`).
fn canary_given(c: &Calls, flag: &str, takes_value: bool, usual: Option<i32>) -> Ran {
    let call = |more: &[&str]| -> Ran {
        super::sandbox::call(&Call {
            watch_for: Some(CANARY.as_bytes()),
            ..Call::new(c.with(more), c.timeout)
        })
    };
    let ran = call(&[&format!("{flag}={CANARY}")]);
    if ran.code() != usual && takes_value {
        return call(&[flag, CANARY]);
    }
    ran
}

/// Check 9's result when no flag echoed its value: a pass for the flags
/// tried, or why nothing could be tested; either way, which flags CMD
/// refused and how many were never tried.
fn concluded(
    flags: &[(String, bool)],
    tried: &[&str],
    refused: &[&str],
    untried: usize,
    alike: bool,
) -> Result {
    let mut more = String::new();
    if !refused.is_empty() && !tried.is_empty() {
        more.push_str(&format!("; refused, so not tested: {}", refused.join(", ")));
    }
    if untried > 0 {
        more.push_str(&format!(" ({untried} more flags not tried)"));
    }
    if tried.is_empty() {
        let names: Vec<&str> = flags.iter().map(|f| f.0.as_str()).collect();
        return result(
            9,
            Conclusion::Inconclusive,
            format!(
                "{} {}{more}: nothing was tested",
                if alike {
                    "an unknown flag ends as CMD does, so lint cannot tell whether CMD took"
                } else {
                    "CMD refused a value in each of"
                },
                names.join(", ")
            ),
        );
    }
    result(
        9,
        Conclusion::Pass,
        format!(
            "no value given to {} is written; meta.args is redacted{more}",
            tried.join(", ")
        ),
    )
}

fn ends_in_summary(j: &super::judged::Judged) -> bool {
    j.last.as_ref().is_some_and(|l| l.ty == "aoi:summary")
}

/// Check 10: a closed pipe and a cancel, each after the first line; each
/// part says pass, fail or why it could not tell.
pub fn pipe_and_signals(c: &Calls) -> Result {
    let (main, _) = c.main();
    // Each part, and the call a failed one failed on.
    let mut parts: Vec<(Conclusion, String)> = vec![];
    let mut failed_on: Vec<(&str, &Ran)> = vec![];
    parts.push(closed_pipe(c, &mut failed_on));
    // A run that writes less than a pipe holds may have finished its work
    // before it saw the signal: its own summary then tells nothing.
    let short = main.stdout.len <= 64 * 1024;
    for (name, call, (ran, j)) in [
        (
            "SIGINT",
            "CMD sent SIGINT after the first line",
            c.interrupted(),
        ),
        (
            "SIGTERM",
            "CMD sent SIGTERM after the first line",
            c.terminated(),
        ),
    ] {
        let part = signalled(name, ran, j, short);
        if part.0 == Conclusion::Fail {
            failed_on.push((call, ran));
        }
        parts.push(part);
    }
    let outcome = [Conclusion::Fail, Conclusion::Inconclusive]
        .into_iter()
        .find(|o| parts.iter().any(|p| p.0 == *o))
        .unwrap_or(Conclusion::Pass);
    let detail: Vec<String> = parts.into_iter().map(|p| p.1).collect();
    failed_on
        .into_iter()
        .fold(result(10, outcome, detail.join("; ")), |r, (what, ran)| {
            r.on(what, ran)
        })
}

/// Check 10's first part: CMD ARGS with stdout closed after the first
/// line end quietly (0 or 141, no stack trace). A pipe holds 64 KiB: a
/// shorter output was written whole before the close, and the close
/// tests nothing. A failure names its call in `failed_on`.
fn closed_pipe<'c>(c: &'c Calls, failed_on: &mut Vec<(&str, &'c Ran)>) -> (Conclusion, String) {
    let (main, _) = c.main();
    let closed = c.closed();
    if main.stdout.len <= 64 * 1024 || !closed.acted {
        return (
            Conclusion::Inconclusive,
            format!(
                "a closed pipe: not tested, the output ({} bytes) does not outrun a pipe (give CMD ARGS that write more)",
                main.stdout.len
            ),
        );
    }
    match closed.code() {
        Some(0 | 141) if !stack_trace(closed) => (
            Conclusion::Pass,
            "stdout closed after the first line ends quietly".to_string(),
        ),
        _ => {
            failed_on.push(("CMD with stdout closed after the first line", closed));
            let trace = if stack_trace(closed) {
                format!(", with {STACK_TRACE}")
            } else {
                String::new()
            };
            (
                Conclusion::Fail,
                format!(
                    "stdout closed after the first line: {}{trace}",
                    closed.ended()
                ),
            )
        }
    }
}

/// Check 10's part for the signal `name`, sent after the first line
/// (`ran`, its run judged `j`; `short` when the run writes less than a
/// pipe holds). Whether the signal came while the tool still ran is a
/// race a short run can win either way: only a cancel tells there. A
/// long run is still writing when it comes: cut off by it, it failed;
/// ended by its own summary, it ignored the signal or won the race.
fn signalled(
    name: &str,
    ran: &Ran,
    j: &super::judged::Judged,
    short: bool,
) -> (Conclusion, String) {
    let cancelled = j
        .last
        .as_ref()
        .is_some_and(|l| l.ty == "aoi:summary" && l.reason.as_deref() == Some("cancelled"));
    if cancelled {
        (
            Conclusion::Pass,
            format!("{name} gives a reason:\"cancelled\" summary"),
        )
    } else if !ran.acted {
        (
            Conclusion::Inconclusive,
            format!("{name}: not tested, the run ended before it could be sent"),
        )
    } else if short {
        (
            Conclusion::Inconclusive,
            format!(
                "{name}: not tested, the run is too short to tell how it takes a signal (give CMD ARGS that write more)"
            ),
        )
    } else if ends_in_summary(j) {
        (
            Conclusion::Inconclusive,
            format!(
                "{name} after the first line: the run ended with its own summary, not a cancelled one (it ignores the signal, or finished first)"
            ),
        )
    } else {
        (
            Conclusion::Fail,
            format!(
                "{name} after the first line: the stream is cut off, with no reason:\"cancelled\" summary ({})",
                ran.ended()
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_flags_are_found_in_help_text() {
        let help = "usage: t search Q [--limit N] [--api-key KEY] [--token=T] [--github-token]\n  --output jsonl --author A";
        assert_eq!(
            secret_flags(help),
            [
                ("--api-key".to_string(), true),
                ("--token".to_string(), true),
                ("--github-token".to_string(), false),
            ]
        );
    }
}

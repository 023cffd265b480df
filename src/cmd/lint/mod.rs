//! `aoitap lint [OPTIONS] -- CMD [ARG ...]` (DESIGN §15; spec §18): CMD
//! ARGS and the tool's discovery commands, each called in a clean
//! sandbox, and each §18.2 check decided from what the calls gave.

pub mod checks;
pub mod judged;
pub mod sandbox;

use std::io::{self, BufWriter, Write};

use crate::check::Tally;
use crate::check::lint_checks::{CHECKS, Check};
use crate::config::LintOptions;
use crate::exit::{Exit, Result};
use crate::output::Emitter;
use crate::output::jsonl;
use checks::{Calls, Outcome};

pub fn run(opts: &LintOptions) -> Result<Exit> {
    let calls = Calls::make(&opts.command, opts.timeout);
    let mut results = vec![];
    for id in &opts.checks {
        let check = CHECKS.iter().find(|c| c.id == *id).expect("checked by cli");
        results.push(decide(check, &calls, opts));
    }
    let mut out = Emitter::new(
        BufWriter::with_capacity(64 * 1024, Box::new(io::stdout()) as Box<dyn Write>),
        opts.style,
        "lint",
    );
    out.begin()?;
    let mut failed = 0;
    let mut counts = [0u64; 5];
    for r in &results {
        let expected = opts.expected_failures.iter().any(|e| e == r.check.id);
        let (result, ok, detail) = match (r.outcome, expected) {
            (Outcome::Fail, true) => (
                "expected-failure",
                true,
                format!("{} (listed in --expected-failures)", r.detail),
            ),
            (Outcome::Fail, false) => ("fail", false, r.detail.clone()),
            (_, true) => (
                "stale",
                false,
                format!(
                    "listed in --expected-failures, but {}: {}",
                    r.outcome.word(),
                    r.detail
                ),
            ),
            (o, false) => (o.word(), true, r.detail.clone()),
        };
        if !ok {
            failed += 1;
        }
        counts[r.outcome as usize] += 1;
        out.check(&jsonl::Check {
            name: r.check.id,
            ok,
            severity: if ok { "info" } else { "error" },
            detail: &detail,
            properties: jsonl::CheckProperties {
                check: r.check.number,
                factor: r.check.factor,
                result,
            },
        })?;
    }
    let exit = if failed == 0 {
        Exit::Pass
    } else {
        Exit::Failed
    };
    let [pass, fail, not_claimed, inconclusive, skipped] = counts;
    out.result = Some(format!(
        "Result: {} ({pass} pass, {fail} fail, {not_claimed} not claimed, {inconclusive} inconclusive, {skipped} skipped; exit {})",
        if failed == 0 {
            "CONFORMING for the checks claimed"
        } else {
            "NOT CONFORMING"
        },
        exit.code()
    ));
    if failed > 0 {
        let msg = format!("{failed} of {} checks failed", results.len());
        out.local_error("validation", "LINT_FAILED", &msg)?;
    }
    out.end(exit, &Tally::default())?;
    Ok(exit)
}

/// One check's result.
fn decide(check: &'static Check, c: &Calls, opts: &LintOptions) -> checks::Result {
    match check.number {
        1 => checks::discoverable(c),
        2 => checks::stdout_jsonl(c),
        3 => checks::exit_matches_summary(c),
        4 => checks::framework_schema(c),
        5 => checks::usage_and_errors(c),
        9 => checks::secrets(c, &opts.command, opts.timeout, &opts.secret_flags),
        10 => checks::pipe_and_signals(c),
        13 => checks::schema_version(c),
        14 => checks::one_meta_one_summary(c),
        15 => checks::seq_and_count(c),
        _ => advertised_only(check, c),
    }
}

/// Checks 6, 7, 8, 11, 12 and 16 need what the capabilities manifest
/// advertises: skipped, with the reason, when it does not. When it does,
/// the check is not made yet, and says so (inconclusive, not a pass).
fn advertised_only(check: &'static Check, c: &Calls) -> checks::Result {
    let caps: serde_json::Value =
        serde_json::from_slice(&c.capabilities.stdout).unwrap_or(serde_json::Value::Null);
    let commands = caps["commands"].as_array().cloned().unwrap_or_default();
    let any = |f: &dyn Fn(&serde_json::Value) -> bool| commands.iter().any(f);
    let (advertised, what) = match check.number {
        6 => (any(&|k| k["destructive"] == true), "destructive command"),
        7 => (
            any(&|k| k["command with supports_idempotency_key"] == true),
            "command with supports_idempotency_key",
        ),
        8 => (
            any(&|k| k["read_only"] == false),
            "mutating command (read_only: false)",
        ),
        11 => (
            any(&|k| k["command with supports_limit"] == true),
            "command with supports_limit",
        ),
        12 | 16 => (
            any(&|k| k["input_format"] == "jsonl"),
            "command with input_format jsonl",
        ),
        _ => (false, "command this check needs"),
    };
    let (outcome, detail) = if advertised {
        (
            Outcome::Inconclusive,
            format!("capabilities advertise a {what}, but this aoitap does not exercise it yet"),
        )
    } else {
        (
            Outcome::Skipped,
            format!("capabilities advertise no {what}"),
        )
    };
    checks::Result {
        check,
        outcome,
        detail,
    }
}

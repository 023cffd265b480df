//! The checks a command earns by what its capabilities entry advertises
//! (spec §18.2 checks 6, 7, 8 and 11 here, 12 and 16 in `fed.rs`; §17
//! names the fields): each is skipped, with the reason, when the entry
//! does not advertise what it needs, and made when it does.

use std::ffi::OsString;
use std::time::SystemTime;

use serde_json::Value;

use super::calls::{Calls, Conclusion, Result, result, unjudged};
use super::judged::Judged;
use super::sandbox::{self, Call, Home, Ran};
use crate::text::plural;

/// The capabilities entry of CMD's command when `wanted` holds of it;
/// else the skipped result saying what is not advertised.
pub(super) fn advertised<'c>(
    c: &'c Calls,
    number: u8,
    what: &str,
    wanted: impl Fn(&Value) -> bool,
) -> std::result::Result<(String, &'c Value), Result> {
    let (ran, caps) = c.capabilities();
    if !caps.is_object() {
        return Err(result(
            number,
            Conclusion::Skipped,
            format!(
                "no capabilities manifest to advertise {what} ({})",
                ran.ended()
            ),
        ));
    }
    let Some((name, entry)) = c.entry() else {
        let name = c
            .command_name()
            .map(super::calls::shown)
            .unwrap_or_default();
        return Err(result(
            number,
            Conclusion::Skipped,
            format!("capabilities list no command {name:?} to advertise {what}"),
        ));
    };
    if !wanted(entry) {
        return Err(result(
            number,
            Conclusion::Skipped,
            format!("capabilities do not advertise {what} for {name:?}"),
        ));
    }
    Ok((name, entry))
}

/// Whether an entry says its command reads JSONL (spec §12.1: an
/// `input_format` of jsonl, or a jsonl input mode).
pub(super) fn reads_jsonl(e: &Value) -> bool {
    e["input_format"] == "jsonl"
        || e["input_modes"].as_array().is_some_and(|ms| {
            ms.iter()
                .any(|m| m.as_str().is_some_and(|s| s.contains("jsonl")))
        })
}

/// The working directory's top level: names, sizes and times, to tell
/// whether a call changed it (at most 10,000 entries).
fn snapshot() -> Vec<(OsString, u64, Option<SystemTime>)> {
    let mut all: Vec<_> = std::fs::read_dir(".")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .take(10_000)
        .map(|e| {
            let m = e.metadata().ok();
            (
                e.file_name(),
                m.as_ref().map_or(0, |m| m.len()),
                m.and_then(|m| m.modified().ok()),
            )
        })
        .collect();
    all.sort();
    all
}

/// CMD ARGS without what confirms a destructive command.
fn unconfirmed(c: &Calls) -> Vec<OsString> {
    let mut out = vec![];
    let mut skip_value = false;
    let mut operands = false;
    for a in &c.command {
        let s = a.to_string_lossy();
        // After `--` every word is an operand, however it is spelled.
        operands |= s == "--";
        if operands {
            out.push(a.clone());
            continue;
        }
        if skip_value {
            skip_value = false;
            continue;
        }
        if s == "--confirm-count" {
            skip_value = true;
            continue;
        }
        let confirms = matches!(s.as_ref(), "--confirm" | "--yes" | "-y" | "--force")
            || s.starts_with("--confirm=")
            || s.starts_with("--confirm-count=");
        if !confirms {
            out.push(a.clone());
        }
    }
    out
}

/// Check 6: a destructive command refuses to run unconfirmed, and its
/// dry run plans and changes nothing.
pub fn safe_destructive(c: &Calls) -> Result {
    let unconfirmed_call = "CMD without --confirm";
    let (name, entry) =
        match advertised(c, 6, "a destructive command", |e| e["destructive"] == true) {
            Ok(x) => x,
            Err(r) => return r,
        };
    let before = snapshot();
    let refused = sandbox::call(&Call::new(unconfirmed(c), c.timeout));
    if refused.code() == Some(0) {
        return result(
            6,
            Conclusion::Fail,
            format!("{name:?} is destructive, but without --confirm it exits 0"),
        )
        .on(unconfirmed_call, &refused);
    }
    if snapshot() != before {
        return result(
            6,
            Conclusion::Fail,
            format!(
                "{name:?} without --confirm refuses ({}), but the working directory changed",
                refused.ended()
            ),
        )
        .on(unconfirmed_call, &refused);
    }
    if entry["supports_dry_run"] != true {
        return result(
            6,
            Conclusion::Pass,
            format!(
                "without --confirm, {name:?} refuses ({}); no dry run advertised",
                refused.ended()
            ),
        );
    }
    let argv = super::calls::with_flags(&unconfirmed(c), c.tool.len(), &["--dry-run"]);
    let (dry, dj) = c.judged(&Call::new(argv, c.timeout));
    if let Some(why) = unjudged("--dry-run", &dry, &dj) {
        return result(6, Conclusion::Inconclusive, why);
    }
    if dry.code() != Some(0) || dj.plans == 0 {
        return result(
            6,
            Conclusion::Fail,
            format!(
                "--dry-run: {} with {} (a dry run plans, and succeeds)",
                dry.ended(),
                plural(dj.plans, "aoi:plan event")
            ),
        )
        .on("CMD --dry-run", &dry);
    }
    if snapshot() != before {
        return result(
            6,
            Conclusion::Fail,
            "--dry-run changed the working directory",
        )
        .on("CMD --dry-run", &dry);
    }
    result(
        6,
        Conclusion::Pass,
        format!(
            "without --confirm, {name:?} refuses ({}); --dry-run writes {} and leaves the working directory as it was",
            refused.ended(),
            plural(dj.plans, "aoi:plan event")
        ),
    )
}

/// Check 7: a replay with the same idempotency key gives the prior
/// result: the same exit, outcome, and domain events by type.
pub fn idempotent(c: &Calls) -> Result {
    let (name, _) = match advertised(c, 7, "supports_idempotency_key", |e| {
        e["supports_idempotency_key"] == true
    }) {
        Ok(x) => x,
        Err(r) => return r,
    };
    // The replay must find what the first call kept: one HOME for both.
    let home = match Home::new() {
        Ok(h) => h,
        Err(e) => {
            return result(
                7,
                Conclusion::Inconclusive,
                format!("no HOME for the calls: {e}"),
            );
        }
    };
    let key = format!("aoitap-lint-{}", std::process::id());
    let call = || {
        c.judged(&Call {
            home: Some(&home),
            ..Call::new(c.with(&["--idempotency-key", &key]), c.timeout)
        })
    };
    let (first, fj) = call();
    let (replay, rj) = call();
    for (what, ran, j) in [
        ("the first call", &first, &fj),
        ("the replay", &replay, &rj),
    ] {
        if let Some(why) = unjudged(what, ran, j) {
            return result(7, Conclusion::Inconclusive, why);
        }
    }
    let outcome = |j: &Judged| j.last.as_ref().and_then(|l| l.ok);
    let differs = if first.code() != replay.code() {
        Some(format!("{} then {}", first.ended(), replay.ended()))
    } else if outcome(&fj) != outcome(&rj) {
        Some(format!("ok:{:?} then ok:{:?}", outcome(&fj), outcome(&rj)))
    } else if (fj.domain, fj.domain_types) != (rj.domain, rj.domain_types) {
        Some(format!(
            "{} then {} (or of other types)",
            plural(fj.domain, "domain event"),
            rj.domain
        ))
    } else {
        None
    };
    match differs {
        Some(d) => result(
            7,
            Conclusion::Fail,
            format!("{name:?} replayed with the same --idempotency-key: {d}"),
        )
        .on("the first call", &first)
        .on("the replay", &replay),
        None => result(
            7,
            Conclusion::Pass,
            format!(
                "{name:?} replayed with the same --idempotency-key gives the prior result ({}, {})",
                first.ended(),
                plural(fj.domain, "domain event")
            ),
        ),
    }
}

/// Check 8: a mutating command's events name what they are about.
pub fn auditable(c: &Calls) -> Result {
    let (name, _) = match advertised(c, 8, "a mutating command (read_only: false)", |e| {
        e["read_only"] == false
    }) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let (ran, j) = c.main();
    if let Some(why) = unjudged("CMD", ran, j) {
        return result(8, Conclusion::Inconclusive, why);
    }
    match j.without_id {
        Some(n) => result(
            8,
            Conclusion::Fail,
            format!(
                "line {n}: a domain event of {name:?} names no id, *_id, path, url, uri or key"
            ),
        ),
        None if j.domain == 0 => result(
            8,
            Conclusion::Inconclusive,
            format!("{name:?} wrote no domain event to carry an id"),
        ),
        None => result(
            8,
            Conclusion::Pass,
            format!(
                "each domain event names what it is about ({})",
                plural(j.domain, "event")
            ),
        ),
    }
}

/// Check 11: `--limit 1` says `truncated`, and truly: a cut is
/// `truncated:true`, with a `next_cursor` when the command has cursors.
pub fn limit_and_cursor(c: &Calls) -> Result {
    let (name, entry) = match advertised(c, 11, "supports_limit", |e| e["supports_limit"] == true) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let (main, mj) = c.main();
    let (ran, lj) = c.judged(&Call::new(c.with(&["--limit", "1"]), c.timeout));
    for (what, r, j) in [("CMD", main, mj), ("CMD --limit 1", &ran, &lj)] {
        if let Some(why) = unjudged(what, r, j) {
            return result(11, Conclusion::Inconclusive, why);
        }
    }
    if mj.last.as_ref().is_none_or(|l| l.ty != "aoi:summary") {
        return result(
            11,
            Conclusion::Inconclusive,
            "CMD ends without an aoi:summary (check 3): there is no truncated to read",
        );
    }
    // A limit is judged on a command that succeeds: an error path (no
    // credentials in the sandbox) has no results to cut.
    if main.code() != Some(0) || !mj.ends_ok() {
        return result(
            11,
            Conclusion::Inconclusive,
            format!(
                "CMD does not succeed here ({}): there are no results for --limit 1 to cut",
                main.ended()
            ),
        );
    }
    if mj.domain <= 1 {
        return result(
            11,
            Conclusion::Inconclusive,
            format!(
                "{name:?} gives {} without a limit: --limit 1 cuts nothing (give CMD ARGS with more)",
                plural(mj.domain, "domain event")
            ),
        );
    }
    limited(entry, mj, &ran, &lj).on("CMD --limit 1", &ran)
}

/// Check 11 once both calls are judged and CMD alone has results to cut:
/// what `--limit 1` (`ran`, `lj`) makes of them.
fn limited(entry: &Value, mj: &Judged, ran: &Ran, lj: &Judged) -> Result {
    if ran.code() != Some(0) {
        return result(
            11,
            Conclusion::Fail,
            format!(
                "--limit 1: {}, though capabilities advertise supports_limit",
                ran.ended()
            ),
        );
    }
    let Some(last) = lj.last.as_ref().filter(|l| l.ty == "aoi:summary") else {
        return result(
            11,
            Conclusion::Fail,
            format!("--limit 1: no aoi:summary ({})", ran.ended()),
        );
    };
    let Some(truncated) = last.truncated else {
        return result(
            11,
            Conclusion::Fail,
            "--limit 1: the summary has no boolean truncated",
        );
    };
    if lj.domain >= mj.domain {
        return result(
            11,
            Conclusion::Fail,
            format!(
                "--limit 1 gives {}, as many as without it",
                plural(lj.domain, "domain event")
            ),
        );
    }
    if !truncated {
        return result(
            11,
            Conclusion::Fail,
            format!(
                "--limit 1 gives {} of {} domain events (results and others), but says truncated:false",
                lj.domain, mj.domain
            ),
        );
    }
    if entry["supports_cursor"] == true && !last.next_cursor {
        return result(
            11,
            Conclusion::Fail,
            "--limit 1 is truncated, and the command has cursors, but the summary has no next_cursor",
        );
    }
    result(
        11,
        Conclusion::Pass,
        format!(
            "--limit 1 gives {} of {} domain events (results and others) and says truncated:true",
            lj.domain, mj.domain
        ),
    )
}

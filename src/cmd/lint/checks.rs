//! The checks that read the tool's stream and its discovery commands
//! (spec §18.2 checks 1-5 and 13-15; docs/contract.md §1.4).

use super::calls::{self, Calls, Conclusion, Result, UNKNOWN_FLAG, result, unjudged};
use super::judged::{Judged, Seen};
use super::sandbox::{self, Call, Ran};
use crate::check::rules::Rule;

/// The first finding against a check, as its detail: an error's, or any
/// (check 2: ANSI and blank lines are warnings of verify's, and each
/// breaks "only JSONL objects").
fn first(seen: &Seen, number: u8) -> Option<String> {
    let f = if number == 2 {
        seen.first.as_ref()
    } else {
        seen.first_error.as_ref()
    };
    f.map(|f| {
        let more = seen.count - 1;
        if more > 0 {
            format!(
                "{} (and {})",
                f.said(),
                crate::text::plural(more, "more finding")
            )
        } else {
            f.said()
        }
    })
}

/// The main call's stream; or, when it did not end within `--timeout`,
/// the failure of a check that needs its end (3, 14, 15: a stream that
/// never ends never gives its summary, docs/contract.md §3.4); or the inconclusive
/// result when it cannot be judged (lint's cut: its spool, its line limit,
/// or a check that reads only what was written).
fn main_stream(c: &Calls, number: u8) -> std::result::Result<&Judged, Result> {
    let (ran, j) = c.main();
    if ran.timed_out && matches!(number, 3 | 14 | 15) {
        return Err(result(
            number,
            Conclusion::Fail,
            format!(
                "CMD did not finish in {} s (--timeout), after {}: no end to judge",
                c.timeout.as_secs_f64(),
                crate::text::plural(j.lines, "line")
            ),
        ));
    }
    if let Some(why) = unjudged("CMD", ran, j) {
        return Err(result(number, Conclusion::Inconclusive, why));
    }
    Ok(j)
}

/// Check 1: schema and capabilities, fetched with nothing but PATH.
pub fn discoverable(c: &Calls) -> Result {
    if let Err(why) = c.tool_schema() {
        return result(1, Conclusion::Fail, why.clone()).on("`schema --output json`", c.schema());
    }
    let (ran, caps) = c.capabilities();
    let alone = if sandbox::no_network() {
        "with no credentials, an empty HOME and no network"
    } else {
        "with no credentials and an empty HOME (the network was not cut: `unshare -rn` is not allowed here)"
    };
    let caps_call = "`capabilities --output json`";
    let r = match ran.code() {
        Some(0) if caps.is_object() => result(
            1,
            Conclusion::Pass,
            format!("schema compiles and capabilities is one JSON object, {alone}"),
        ),
        Some(0) if ran.stdout.len > calls::MAX_DISCOVERY => result(
            1,
            Conclusion::Inconclusive,
            format!(
                "{caps_call} wrote {} bytes, over lint's {} MiB: not read",
                ran.stdout.len,
                calls::MAX_DISCOVERY >> 20
            ),
        ),
        Some(0) => result(
            1,
            Conclusion::Fail,
            format!("{caps_call} exits 0 but is not one JSON object"),
        ),
        // Not offering it is allowed (§18.2: "succeeds if advertised");
        // hanging or crashing is not.
        None if ran.timed_out => {
            result(1, Conclusion::Fail, format!("{caps_call}: {}", ran.ended()))
        }
        None if ran.stdout.overflowed => result(
            1,
            Conclusion::Inconclusive,
            format!("{caps_call}: {}", ran.ended()),
        ),
        // Death by a signal (a 128 + N no shell exit gives) is a crash.
        Some(n)
            if n > 128
                && ran.status.is_some_and(|s| {
                    use std::os::unix::process::ExitStatusExt;
                    s.signal().is_some()
                }) =>
        {
            result(
                1,
                Conclusion::Fail,
                format!("{caps_call} crashes: killed by signal {}", n - 128),
            )
        }
        Some(_) if super::stderr::stack_trace(ran) => result(
            1,
            Conclusion::Fail,
            format!(
                "{caps_call} crashes: {}, with {}",
                ran.ended(),
                calls::STACK_TRACE
            ),
        ),
        _ => result(
            1,
            Conclusion::Pass,
            format!(
                "schema compiles, {alone}; capabilities not offered ({})",
                ran.ended()
            ),
        ),
    };
    r.on(caps_call, ran)
}

/// What check 2 makes of one call: its first finding, lint's own cut of
/// a call it stopped (the unterminated last line) left out; or, with
/// none, why the call cannot be judged.
fn form(what: &str, ran: &Ran, j: &Judged) -> std::result::Result<Option<String>, String> {
    let seen = j.raw(2);
    let stopped = ran.timed_out || ran.cancelled || ran.stdout.overflowed;
    let real = seen
        .first
        .as_ref()
        .filter(|f| !(stopped && f.rule == Rule::LineUnterminated));
    if real.is_some() {
        return Ok(first(seen, 2));
    }
    if let Some(n) = j.tail_escape {
        return Ok(Some(format!(
            "line {n}, unterminated, holds an ANSI escape (lint stopped the call: {})",
            ran.ended()
        )));
    }
    match unjudged(what, ran, j) {
        Some(why) => Err(why),
        None => Ok(None),
    }
}

/// Check 2: stdout is JSONL objects with a type, no ANSI, also when
/// colour is asked for and on a terminal. What a stopped call wrote is
/// still read: ANSI before a hang is a failure, not a pass.
pub fn stdout_jsonl(c: &Calls) -> Result {
    let (ran, j) = c.main();
    match form("CMD", ran, j) {
        Ok(Some(why)) => return result(2, Conclusion::Fail, why).on("CMD", ran),
        Err(why) => return result(2, Conclusion::Inconclusive, why),
        Ok(None) if j.lines == 0 => {
            return result(
                2,
                Conclusion::Inconclusive,
                "CMD wrote nothing on stdout: there is no stream to judge",
            );
        }
        Ok(None) => {}
    }
    let mut untold = vec![];
    for (how, (ran, j)) in [
        ("with TERM and FORCE_COLOR set", c.coloured()),
        ("with stdout a terminal", c.on_terminal()),
    ] {
        match form(&format!("CMD {how}"), ran, j) {
            Ok(Some(why)) => {
                return result(2, Conclusion::Fail, format!("{how}: {why}"))
                    .on(&format!("CMD {how}"), ran);
            }
            Err(why) => untold.push(why),
            Ok(None) => {}
        }
    }
    if !untold.is_empty() {
        return result(2, Conclusion::Inconclusive, untold.join("; "));
    }
    result(
        2,
        Conclusion::Pass,
        "every line a JSON object with a type, no ANSI, also with TERM and FORCE_COLOR set and on a terminal",
    )
}

/// Check 3: exit 0 exactly when the stream ends with ok:true.
pub fn exit_matches_summary(c: &Calls) -> Result {
    let j = match main_stream(c, 3) {
        Ok(j) => j,
        Err(r) => return r,
    };
    if let Some(f) = &j.events(3).first_error {
        // The checker of events alone counts only events: the stream's
        // own length is said here.
        if f.rule == Rule::SummaryMissing {
            return result(
                3,
                Conclusion::Fail,
                format!(
                    "the stream ends after {} without its aoi:summary ({})",
                    crate::text::plural(j.lines, "line"),
                    c.main().0.ended()
                ),
            );
        }
        return result(
            3,
            Conclusion::Fail,
            first(j.events(3), 3).unwrap_or_default(),
        );
    }
    // The terminal summary's word, not the whole stream's verdict: a
    // second summary fails check 14, not also this one.
    let (ran, _) = c.main();
    match (ran.code(), j.ends_ok()) {
        (Some(0), true) => result(3, Conclusion::Pass, "exit 0 with ok:true"),
        (Some(0), false) => result(
            3,
            Conclusion::Fail,
            "exit 0, but the stream does not end in ok:true",
        ),
        (Some(n), false) => result(
            3,
            Conclusion::Pass,
            format!("exit {n}, and the stream does not end in ok:true"),
        ),
        (Some(n), true) => result(
            3,
            Conclusion::Fail,
            format!("exit {n} after a stream ending in ok:true"),
        ),
        (None, _) => result(3, Conclusion::Inconclusive, format!("CMD: {}", ran.ended())),
    }
}

/// Check 4: the framework events against the tool's own schema.
pub fn framework_schema(c: &Calls) -> Result {
    if let Err(why) = c.tool_schema() {
        return result(
            4,
            Conclusion::Skipped,
            format!("no schema to validate against: {why}"),
        );
    }
    let j = match main_stream(c, 4) {
        Ok(j) => j,
        Err(r) => return r,
    };
    match &j.framework_schema {
        Some(f) => result(
            4,
            Conclusion::Fail,
            format!("line {}: {}", f.line, f.message),
        ),
        None if j.events == 0 => result(4, Conclusion::Inconclusive, "CMD wrote no event"),
        None => result(
            4,
            Conclusion::Pass,
            "every framework event validates against the tool's schema",
        ),
    }
}

/// Check 5: malformed usage exits non-zero; errors carry their fields.
pub fn usage_and_errors(c: &Calls) -> Result {
    let (main_ran, main) = c.main();
    let (unknown, unknown_j) = c.unknown_flag();
    let with_flag = "CMD with an unknown flag";
    for (what, ran, j) in [("CMD", main_ran, main), (with_flag, unknown, unknown_j)] {
        if let Some(why) = first(j.events(5), 5) {
            return result(5, Conclusion::Fail, format!("{what}: {why}")).on(what, ran);
        }
        // A stream that says it is AOI 0.2 may still not use what 1.0
        // removed: lint holds a tool to 1.0.
        if let Some((line, category)) = &j.removed_category {
            let msg = format!(
                "{what}: line {line}: category {category:?}, which AOI 1.0 removed (spec §5.2)"
            );
            return result(5, Conclusion::Fail, msg).on(what, ran);
        }
    }
    let r = match unknown.code() {
        Some(0) => result(5, Conclusion::Fail, format!("{UNKNOWN_FLAG} exits 0")),
        Some(n) => result(
            5,
            Conclusion::Pass,
            format!("{UNKNOWN_FLAG} exits {n}; every aoi:error carries its fields"),
        ),
        // When CMD ARGS alone do not end in time, neither tells.
        None if unknown.timed_out && c.main().0.timed_out => result(
            5,
            Conclusion::Inconclusive,
            format!("CMD does not end within --timeout, with or without {UNKNOWN_FLAG}"),
        ),
        None if unknown.timed_out => result(
            5,
            Conclusion::Fail,
            format!("{UNKNOWN_FLAG}: no exit within --timeout (the flag went unrefused)"),
        ),
        None => result(5, Conclusion::Inconclusive, unknown.ended()),
    };
    r.on(with_flag, unknown)
}

/// Check 14: one meta, first; one summary, last.
pub fn one_meta_one_summary(c: &Calls) -> Result {
    let j = match main_stream(c, 14) {
        Ok(j) => j,
        Err(r) => return r,
    };
    match first(j.events(14), 14) {
        Some(why) => result(14, Conclusion::Fail, why),
        None if j.events == 0 => result(14, Conclusion::Inconclusive, "CMD wrote no event"),
        None => result(
            14,
            Conclusion::Pass,
            "at most one aoi:meta, first, and one aoi:summary, last",
        ),
    }
}

/// Check 15: seq contiguous from 0, run beside it, event_count agrees.
pub fn seq_and_count(c: &Calls) -> Result {
    let j = match main_stream(c, 15) {
        Ok(j) => j,
        Err(r) => return r,
    };
    // AOI 0.2 and AFDATA streams have neither: nothing is claimed that a
    // cut in the middle could be found by (docs/contract.md §3.4).
    if j.events > 0 && !j.seq_seen && !j.event_count_seen {
        return result(
            15,
            Conclusion::NotClaimed,
            "no aoi.seq and no event_count (as AOI 0.2 and AFDATA write): a cut in the middle cannot be found",
        );
    }
    let seen = j.events(15);
    let not_claimed = seen
        .first
        .as_ref()
        .is_some_and(|f| f.rule == Rule::VerifiableNotClaimed);
    if not_claimed {
        return result(
            15,
            Conclusion::NotClaimed,
            "no aoi.seq: a cut in the middle cannot be found",
        );
    }
    match first(seen, 15) {
        Some(why) => result(15, Conclusion::Fail, why),
        None if j.events == 0 => result(15, Conclusion::Inconclusive, "CMD wrote no event"),
        None => result(
            15,
            Conclusion::Pass,
            "seq contiguous from 0, and event_count agrees",
        ),
    }
}

/// Check 13: schema_version in meta and summary; when capabilities list
/// schema versions, `--schema-version V` is honoured (meta says V) and an
/// unknown one refused.
pub fn schema_version(c: &Calls) -> Result {
    let j = match main_stream(c, 13) {
        Ok(j) => j,
        Err(r) => return r.on("CMD", c.main().0),
    };
    let found = [
        ("aoi:meta", j.meta.as_ref().map(|m| m.0.is_some())),
        (
            "aoi:summary",
            j.summary_version.as_ref().map(Option::is_some),
        ),
    ];
    for (ty, has) in found {
        match has {
            Some(true) => {}
            Some(false) => {
                return result(13, Conclusion::Fail, format!("{ty} has no schema_version"))
                    .on("CMD", c.main().0);
            }
            // A stream without its summary holds its schema_version in
            // one place of two: no pass (spec §18.2 check 13).
            None => {
                return result(
                    13,
                    Conclusion::Fail,
                    format!("no {ty} to carry schema_version"),
                )
                .on("CMD", c.main().0);
            }
        }
    }
    let (_, caps) = c.capabilities();
    let versions: Vec<&str> = caps["schemas"][0]["versions"]
        .as_array()
        .map(|vs| vs.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let default = caps["schemas"][0]["default"].as_str();
    // A version other than the default shows the flag is read.
    let Some(&asked) = versions
        .iter()
        .find(|v| default != Some(**v))
        .or(versions.first())
    else {
        return result(
            13,
            Conclusion::Pass,
            "schema_version in aoi:meta and aoi:summary (capabilities list no versions to negotiate)",
        );
    };
    let with = |v: &str| c.judged(&Call::new(c.with(&["--schema-version", v]), c.timeout));
    let (honoured, hj) = with(asked);
    let said = hj.meta.as_ref().and_then(|m| m.0.clone());
    if said.as_deref() != Some(asked) {
        return result(
            13,
            Conclusion::Fail,
            format!(
                "--schema-version {asked}: aoi:meta says {} ({})",
                said.map_or("nothing".to_string(), |s| format!("{s:?}")),
                honoured.ended()
            ),
        )
        .on(&format!("CMD --schema-version {asked}"), &honoured);
    }
    let (refused, _) = with("999.999.999");
    if refused.code() == Some(0) {
        return result(13, Conclusion::Fail, "--schema-version 999.999.999 exits 0")
            .on("CMD --schema-version 999.999.999", &refused);
    }
    result(
        13,
        Conclusion::Pass,
        format!(
            "schema_version in aoi:meta and aoi:summary; --schema-version {asked} honoured, an unknown one refused"
        ),
    )
}

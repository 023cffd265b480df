//! The checks a command that advertises JSONL input earns (spec §18.2
//! checks 12 and 16, §12.1): CMD fed a stream on stdin, malformed or
//! failing upstream, and what it must make of it.

use super::advertised::{advertised, reads_jsonl};
use super::calls::{Calls, Conclusion, Result, result, unjudged};
use super::judged::Judged;
use super::sandbox::{Call, Ran};

/// The run every upstream fixture has.
pub const UPSTREAM_RUN: &str = "aoitap-lint-upstream";
const UPSTREAM_SCHEMA: &str = "dev.aoitap.lint.upstream";
const UPSTREAM_ERROR: &str = "LINT_UPSTREAM_RATE_LIMIT";
const UPSTREAM_WARNING: &str = "LINT_UPSTREAM_SLOW";

/// An upstream AOI stream that fails with a retryable error after a
/// warning (check 16): valid in every other way.
pub const UPSTREAM: &str = concat!(
    r#"{"type":"aoi:meta","aoi":{"seq":0,"run":"aoitap-lint-upstream"},"tool":"aoitap-lint-upstream","tool_version":"1.0.0","aoi_version":"1.0-alpha","schema_name":"dev.aoitap.lint.upstream","schema_version":"1.0.0"}"#,
    "\n",
    r#"{"type":"item","aoi":{"seq":1,"run":"aoitap-lint-upstream"},"id":"item-1"}"#,
    "\n",
    r#"{"type":"aoi:warning","aoi":{"seq":2,"run":"aoitap-lint-upstream"},"code":"LINT_UPSTREAM_SLOW","message":"upstream is slow"}"#,
    "\n",
    r#"{"type":"aoi:error","aoi":{"seq":3,"run":"aoitap-lint-upstream"},"scope":"process","category":"rate_limited","code":"LINT_UPSTREAM_RATE_LIMIT","message":"upstream rate limited","retryable":true,"retry_after_ms":7200}"#,
    "\n",
    r#"{"type":"aoi:summary","aoi":{"seq":4,"run":"aoitap-lint-upstream"},"ok":false,"reason":"failed","event_count":5,"count":1,"warning_count":1,"error_count":1,"tool":"aoitap-lint-upstream","tool_version":"1.0.0","aoi_version":"1.0-alpha","schema_name":"dev.aoitap.lint.upstream","schema_version":"1.0.0"}"#,
    "\n",
);

/// An upstream stream with a malformed line among good ones (check 12).
pub const MALFORMED: &str = concat!(
    r#"{"type":"aoi:meta","aoi":{"seq":0,"run":"aoitap-lint-upstream"},"tool":"aoitap-lint-upstream","tool_version":"1.0.0","aoi_version":"1.0-alpha","schema_name":"dev.aoitap.lint.upstream","schema_version":"1.0.0"}"#,
    "\n",
    r#"{"type":"item","aoi":{"seq":1,"run":"aoitap-lint-upstream"},"id":"item-1"}"#,
    "\n",
    r#"{"type":"item","aoi":{"seq":2,"run":"#,
    "\n",
    r#"{"type":"item","aoi":{"seq":3,"run":"aoitap-lint-upstream"},"id":"item-3"}"#,
    "\n",
    r#"{"type":"aoi:summary","aoi":{"seq":4,"run":"aoitap-lint-upstream"},"ok":true,"event_count":5,"count":3,"tool":"aoitap-lint-upstream","tool_version":"1.0.0","aoi_version":"1.0-alpha","schema_name":"dev.aoitap.lint.upstream","schema_version":"1.0.0"}"#,
    "\n",
);

/// CMD ARGS fed `input` on stdin; the inconclusive result when it cannot
/// be judged, or when the output shows the input was not read (the same
/// exit and domain events as with no input).
fn fed(c: &Calls, number: u8, input: &str) -> std::result::Result<(Ran, Judged), Result> {
    let (ran, j) = c.judged(&Call {
        stdin: Some(input.as_bytes()),
        ..Call::new(c.command.clone(), c.timeout)
    });
    if let Some(why) = unjudged("CMD fed a stream", &ran, &j) {
        return Err(result(number, Conclusion::Inconclusive, why));
    }
    let (main, mj) = c.main();
    let same = main.code() == ran.code()
        && (mj.domain, mj.domain_types, mj.domain_said, mj.ends_ok())
            == (j.domain, j.domain_types, j.domain_said, j.ends_ok());
    if same {
        return Err(result(
            number,
            Conclusion::Inconclusive,
            "CMD gives the same output with and without a stream on stdin: give CMD ARGS that read it (`-`, `--input-jsonl -`)",
        ));
    }
    Ok((ran, j))
}

/// Check 12: a malformed input line is not a success: whether the mode is
/// fail-fast or per-line tolerant, the command ends non-zero with
/// `ok:false` (spec §12.2, §19.4), and stdout stays a stream.
pub fn malformed_input(c: &Calls) -> Result {
    if let Err(r) = advertised(
        c,
        12,
        "JSONL input (input_format or input_modes)",
        reads_jsonl,
    ) {
        return r;
    }
    let (ran, j) = match fed(c, 12, MALFORMED) {
        Ok(x) => x,
        Err(r) => return r,
    };
    malformed_judged(&ran, &j).on("CMD fed a stream", &ran)
}

/// Check 12 on what CMD made of the malformed stream it was fed.
fn malformed_judged(ran: &Ran, j: &Judged) -> Result {
    if let Some(f) = &j.raw(2).first {
        return result(
            12,
            Conclusion::Fail,
            format!(
                "fed a malformed line, stdout is no longer a stream: {}",
                f.said()
            ),
        );
    }
    let ok = j
        .last
        .as_ref()
        .filter(|l| l.ty == "aoi:summary")
        .and_then(|l| l.ok);
    match (ran.code(), ok) {
        (Some(n), Some(false)) if n != 0 => result(
            12,
            Conclusion::Pass,
            format!("fed a malformed line (input line 3): exit {n} with ok:false"),
        ),
        _ => result(
            12,
            Conclusion::Fail,
            format!(
                "fed a malformed line (input line 3): {} with {} (not a success in either mode: exit non-zero, ok:false)",
                ran.ended(),
                match ok {
                    Some(b) => format!("ok:{b}"),
                    None => "no summary".to_string(),
                }
            ),
        ),
    }
}

/// Check 16: fed an upstream stream, the command forwards no upstream
/// meta or summary, tags what it forwards with `origin`, and carries the
/// upstream's retry fields in `caused_by` when it fails (spec §13.1).
pub fn transformer(c: &Calls) -> Result {
    if let Err(r) = advertised(
        c,
        16,
        "JSONL input (input_format or input_modes)",
        reads_jsonl,
    ) {
        return r;
    }
    let (ran, j) = match fed(c, 16, UPSTREAM) {
        Ok(x) => x,
        Err(r) => return r,
    };
    transformed(c, &j).on("CMD fed a stream", &ran)
}

/// Check 16 on what CMD made of the failing upstream it was fed.
fn transformed(c: &Calls, j: &Judged) -> Result {
    // The upstream's own run, tool or schema on a meta or summary: it is
    // the upstream's, however re-stamped.
    if j.frame_marks
        .iter()
        .any(|m| m == UPSTREAM_RUN || m == UPSTREAM_SCHEMA)
    {
        return result(
            16,
            Conclusion::Fail,
            "the upstream's aoi:meta or aoi:summary is forwarded",
        );
    }
    if let Some(f) = &j.events(14).first_error {
        return result(
            16,
            Conclusion::Fail,
            format!("fed an upstream stream: {}", f.said()),
        );
    }
    if let Some(code) = j
        .unoriginated
        .iter()
        .find(|k| *k == UPSTREAM_ERROR || *k == UPSTREAM_WARNING)
    {
        return result(
            16,
            Conclusion::Fail,
            format!("the upstream's {code} is forwarded without origin"),
        );
    }
    let Some(last) = j.last.as_ref().filter(|l| l.ty == "aoi:summary") else {
        return result(
            16,
            Conclusion::Fail,
            "fed an upstream stream: no aoi:summary",
        );
    };
    let continues = c.command.iter().any(|a| a == "--continue-on-error");
    match last.ok {
        Some(true) if !continues => result(
            16,
            Conclusion::Fail,
            "ok:true after the upstream's aoi:error (and no --continue-on-error)",
        ),
        None => result(
            16,
            Conclusion::Fail,
            "fed an upstream stream, the summary has no boolean ok",
        ),
        Some(false) if last.caused_by != Some((Some(true), Some(7200))) => result(
            16,
            Conclusion::Fail,
            "ok:false after the upstream's retryable error, but caused_by does not carry its retryable:true and retry_after_ms:7200",
        ),
        _ => result(
            16,
            Conclusion::Pass,
            "no upstream meta or summary forwarded, no forwarded error without origin, the upstream's retry fields in caused_by",
        ),
    }
}

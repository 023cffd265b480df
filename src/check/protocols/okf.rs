//! An OKF command under `aoitap run --protocol okf`
//! (`spec/okf-machine-contracts.md`, "Error envelope"; docs/contract.md §6.2): its
//! stdout is one JSON document (compact or pretty-printed, as the checker
//! joins it), and when it fails, `okn --error-format json` writes one JSON
//! document on stderr,
//! `{"schemaVersion":"1","error":{kind,command,exitCode,message,truncated}}`,
//! of at most 256 KiB, with `kind` `usage` exactly for exit status 2 and
//! `exitCode` the status it really exits with.
//!
//! Verdict: the exit status is the outcome. 0 with its document is a pass;
//! a failure its envelope reports truly is 1 (the command's failure, not
//! its contract's); anything the envelope gets wrong is 65.

use std::io;

use super::contract::{Contract, Exited, Judged, LineKind, Mapping, Ruling};
use crate::check::config::Config;
use crate::check::config::Protocol;
use crate::check::finding::Reporter;
use crate::check::rules::Rule;
use crate::check::run_state::{Cause, Identity, RunState, SummaryClaim};
use crate::check::verdict::End;
use crate::json::{Arena, Event, JsonError, Kind, Parser, Value};
use crate::text::quote_raw;

/// The spec's "maximum diagnostic size".
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// What `run` keeps of an OKF command's stderr: the document, and room for
/// the line break and blanks around it, which are not the document's.
pub const MAX_ERROR_BYTES: usize = MAX_DOCUMENT_BYTES + 64;

/// `cli-error.schema.json`'s members, at each of its two closed objects.
const TOP: [&str; 2] = ["schemaVersion", "error"];
const ERROR: [&str; 5] = ["kind", "command", "exitCode", "message", "truncated"];

pub(in crate::check) struct Okf;

impl Contract for Okf {
    /// A byte more than is kept says the envelope is over its size.
    fn stderr_read(&self) -> Option<usize> {
        Some(MAX_ERROR_BYTES + 1)
    }

    fn run_only(&self) -> bool {
        true
    }

    fn mapping(&'static self) -> Mapping {
        Mapping::Document
    }

    fn event(&self, run: &mut RunState, out: &mut Reporter<'_>, _ev: &Event<'_>) -> Judged {
        run.count_line();
        run.domain += 1;
        if run.domain == 2 {
            let msg = "a second JSON document on stdout: an OKF command writes one".to_string();
            out.report(run, Rule::OkfDocumentExtra, None, msg)?;
        }
        Ok(Ruling::seen(LineKind {
            event: true,
            protocol: Protocol::Okf,
            ..LineKind::default()
        }))
    }

    /// Only its exit says how an OKF command did (`exited`): a run cut
    /// before it (a timeout, a signal) is not judged.
    fn close(&self, _run: &mut RunState, _out: &mut Reporter<'_>) -> io::Result<()> {
        Ok(())
    }

    /// A run judged without its exit (`verify --protocol okf`) is held to
    /// a summary, as in AOI.
    fn end(&self, _run: &RunState, cfg: &Config) -> End {
        End::at_summary("exited 0", cfg)
    }

    fn exited(
        &self,
        run: &mut RunState,
        out: &mut Reporter<'_>,
        ended: &Exited<'_>,
    ) -> io::Result<()> {
        let stderr = ended.stderr.as_ref();
        let mut arena = Arena::default();
        let head = stderr.map_or(&[][..], |s| &s.head[..]);
        let text = head.trim_ascii();
        let too_large = stderr.is_some_and(|s| s.total > MAX_ERROR_BYTES as u64)
            || text.len() > MAX_DOCUMENT_BYTES;
        let parsed =
            (!too_large && !text.is_empty()).then(|| Parser::new().parse(text, &mut arena));
        let envelope = match &parsed {
            Some(Ok(index)) => Some(index.event(text, &arena)),
            _ => None,
        };
        let cause = Cause::default();
        match ended.code {
            // Killed by a signal: nothing could be written, and nothing
            // is asked; the run failed.
            None => {}
            Some(0) => exited_zero(run, out, envelope)?,
            Some(code) => {
                run.errors += 1;
                if too_large {
                    let total = stderr.map_or(0, |s| s.total);
                    let msg = format!(
                        "stderr is {total} bytes, over the error envelope's 256 KiB ({MAX_DOCUMENT_BYTES} bytes)"
                    );
                    out.report(run, Rule::OkfErrorTooLarge, None, msg)?;
                } else {
                    let (rule, msg) = match &parsed {
                        Some(Ok(index)) => {
                            let said = envelope_of(run, out, &index.event(text, &arena), code)?;
                            return self.ended(run, ended, said);
                        }
                        None => (
                            Rule::OkfErrorMissing,
                            format!("the command exited {code} with nothing on stderr"),
                        ),
                        Some(Err(_)) if !text.starts_with(b"{") => (
                            Rule::OkfErrorMissing,
                            format!(
                                "the command exited {code}, and stderr holds text, not a JSON error document (--error-format json)"
                            ),
                        ),
                        Some(Err(
                            JsonError::Syntax { column, .. } | JsonError::Utf8 { column },
                        )) => (
                            Rule::OkfErrorInvalid,
                            format!("stderr is not one JSON document (byte {column} of it)"),
                        ),
                    };
                    out.report(run, rule, None, msg)?;
                }
            }
        }
        self.ended(run, ended, cause)
    }
}

impl Okf {
    /// The exit status is the run's outcome; `cause`, what the envelope
    /// said of a failure.
    fn ended(&self, run: &mut RunState, ended: &Exited<'_>, cause: Cause) -> io::Result<()> {
        run.summary = Some(Box::new(SummaryClaim {
            ok: Some(ended.success()),
            partial: false,
            reason: None,
            caused_by: (!ended.success()).then_some(cause),
            said: None,
            why: None,
        }));
        Ok(())
    }
}

/// A command that exited 0: it wrote its document on stdout, and its
/// stderr holds no error document that says otherwise.
fn exited_zero(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    envelope: Option<Event<'_>>,
) -> io::Result<()> {
    if run.domain == 0 && !run.unreadable {
        let msg = "the command exited 0 with no JSON document on stdout".to_string();
        out.report(run, Rule::OkfDocumentMissing, None, msg)?;
    }
    if let Some(ev) = envelope.filter(|ev| ev.get("error").is_some()) {
        let says =
            ev.get("error")
                .and_then(|e| e.field("exitCode"))
                .map_or("no exitCode".into(), |v| {
                    format!(
                        "exitCode {}",
                        crate::check::secrets::quotable::value(v.raw())
                    )
                });
        let msg = format!("the command exited 0, but stderr holds an error document ({says})");
        out.report(run, Rule::OkfExitDisagrees, None, msg)?;
    }
    Ok(())
}

/// The error document of a command that exited `code`: its shape (the
/// closed `cli-error.schema.json`), then what it says against the real
/// status. The run's cause and identity come from it.
fn envelope_of(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    ev: &Event<'_>,
    code: i32,
) -> io::Result<Cause> {
    let mut wrong = vec![];
    top_misfits(ev, &mut wrong);
    let error = ev.get("error").filter(|e| e.kind() == Kind::Object);
    if ev.is_object() && error.is_none() {
        wrong.push("no error object".to_string());
    }
    let member = |key: &str| error.and_then(|e| e.field(key));
    let text = |key: &str| member(key).and_then(|v| v.as_str()).map(|s| s.into_owned());
    if let Some(e) = error {
        error_misfits(e, &mut wrong);
    }
    let kind = text("kind");
    if let Some(k) = kind
        .as_deref()
        .filter(|k| !matches!(*k, "usage" | "runtime"))
    {
        wrong.push(format!(
            "error.kind is {}, not usage or runtime",
            crate::check::secrets::quotable::quote_or_withhold(&quote_raw(k.as_bytes()))
        ));
    }
    if !wrong.is_empty() {
        let msg = format!(
            "the error document does not fit the envelope: {}",
            wrong.join("; ")
        );
        out.report(run, Rule::OkfErrorInvalid, None, msg)?;
    }
    match kind.as_deref() {
        Some("usage") if code != 2 => {
            let msg = format!("error.kind is usage, but the command exited {code}, not 2");
            out.report(run, Rule::OkfKindDisagrees, None, msg)?;
        }
        Some("runtime") if code == 2 => {
            let msg = "error.kind is runtime, but the command exited 2, which is usage".to_string();
            out.report(run, Rule::OkfKindDisagrees, None, msg)?;
        }
        _ => {}
    }
    if let Some(said) = member("exitCode").as_ref().and_then(exit_code)
        && said != i64::from(code)
    {
        let msg = format!("error.exitCode is {said}, but the command exited {code}");
        out.report(run, Rule::OkfExitDisagrees, None, msg)?;
    }
    // The command it names is the run's identity: summarize shows it.
    run.meta = Some(Identity {
        command: text("command").map(|c| super::framework::identity_text(&c)),
        ..Identity::default()
    });
    Ok(Cause {
        category: kind,
        ..Cause::default()
    })
}

/// Where the document's top level does not fit the envelope: not an
/// object, another `schemaVersion`, a member it does not have, or one
/// twice (a reader that keeps the last of two would read another
/// envelope).
fn top_misfits(ev: &Event<'_>, wrong: &mut Vec<String>) {
    if !ev.is_object() {
        wrong.push("it is not an object".to_string());
        return;
    }
    if ev.get("schemaVersion").and_then(|v| v.as_str()).as_deref() != Some("1") {
        wrong.push(match ev.get("schemaVersion") {
            None => "no schemaVersion".to_string(),
            Some(v) => format!(
                "schemaVersion is {}, not \"1\"",
                crate::check::secrets::quotable::value(v.raw())
            ),
        });
    }
    extra_members(ev.as_value(), &TOP, "", wrong);
    for key in TOP.into_iter().filter(|k| ev.count(k) > 1) {
        wrong.push(format!("{key} appears twice"));
    }
}

/// Where the document's `error` object does not fit the envelope: a
/// member missing, of the wrong type or twice, or one it does not have.
fn error_misfits(e: Value<'_>, wrong: &mut Vec<String>) {
    for key in ERROR {
        let fits = match (key, e.field(key)) {
            (_, None) => false,
            ("exitCode", Some(v)) => v.kind() == Kind::Number && exit_code(&v).is_some(),
            ("truncated", Some(v)) => v.as_bool().is_some(),
            (_, Some(v)) => v.as_str().is_some(),
        };
        if !fits {
            let want = match key {
                "exitCode" => "an integer",
                "truncated" => "a boolean",
                _ => "a string",
            };
            wrong.push(match e.field(key) {
                None => format!("no error.{key}"),
                Some(v) => format!(
                    "error.{key} is {}, not {want}",
                    crate::check::secrets::quotable::value(v.raw())
                ),
            });
        } else if e.count(key) > 1 {
            wrong.push(format!("error.{key} appears twice"));
        }
    }
    extra_members(e, &ERROR, "error.", wrong);
}

/// An integer `exitCode`, in range of any status.
/// An integer `exitCode`, as JSON Schema's `integer` reads one (`2.0` and
/// `2e0` too); one past any status is held at the nearest end, so it
/// still disagrees with the real one.
fn exit_code(v: &Value<'_>) -> Option<i64> {
    let text = std::str::from_utf8(v.raw()).ok()?;
    if let Ok(n) = text.parse() {
        return Some(n);
    }
    let n: f64 = text.parse().ok()?;
    (n.is_finite() && n.fract() == 0.0).then_some(n as i64)
}

/// A member of a closed object the schema does not declare.
fn extra_members(object: Value<'_>, declared: &[&str], at: &str, wrong: &mut Vec<String>) {
    for (key, _) in object.children() {
        if !declared.contains(&&*key) {
            wrong.push(format!(
                "{at}{} is not in the schema",
                quote_raw(key.as_bytes())
            ));
        }
    }
}

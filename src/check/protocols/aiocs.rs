//! The aiocs one-shot `--json` envelope (`spec/aiocs-cli-json-contract.md`,
//! "One-shot command envelope"; docs/contract.md §6.2): the whole output is one JSON
//! object, compact or pretty-printed (the checker joins a document's
//! lines), with a boolean `ok` and a string `command`; `data` when ok,
//! `error.code` and `error.message` strings when not.
//!
//! Verdict: `ok:true` 0; `ok:false` 1 (the producer exits 1, and says why
//! in `error`); a second document, or none, 65.

use std::io;

use super::contract::{Contract, Judged, LineKind, Mapping, Outcomes, Payload, Ruling};
use crate::check::config::Config;
use crate::check::config::Protocol;
use crate::check::finding::Reporter;
use crate::check::rules::Rule;
use crate::check::run_state::{Cause, Identity, RunState, SummaryClaim};
use crate::check::verdict::End;
use crate::json::{Event, Kind};

pub(in crate::check) struct Aiocs;

impl Contract for Aiocs {
    fn outcomes(&'static self) -> Outcomes {
        Outcomes::Envelope
    }

    /// The envelope's payload is its data, bytes as they came.
    fn payload(&self, ev: &Event<'_>, _kinds: &[String]) -> Option<Payload> {
        Some(Payload::Value(ev.get("data")?.span()))
    }

    fn mapping(&'static self) -> Mapping {
        Mapping::Envelope
    }

    fn event(&self, run: &mut RunState, out: &mut Reporter<'_>, ev: &Event<'_>) -> Judged {
        run.count_line();
        let seen = Ruling::seen(LineKind {
            event: true,
            protocol: Protocol::Aiocs,
            ..LineKind::default()
        });
        if run.summary.is_some() {
            let msg =
                "a second document: the one-shot envelope is exactly one JSON object".to_string();
            out.report(run, Rule::AiocsDocumentExtra, None, msg)?;
            return Ok(seen);
        }
        run.domain += 1;
        if let Some(key) = ["ok", "command", "data", "error"]
            .into_iter()
            .find(|k| ev.count(k) > 1)
        {
            let msg = format!("{key} appears twice: parsers disagree about which one wins");
            out.report(run, Rule::VerdictDuplicateKey, None, msg)?;
        }
        let ok = ev.get("ok").and_then(|v| v.as_bool());
        if ok.is_none() {
            let why = "the envelope says whether the command succeeded";
            let msg = not_a(ev, "ok", "a boolean", why);
            out.report(run, Rule::AiocsEnvelopeInvalid, None, msg)?;
        }
        let command = ev.get("command").and_then(|v| v.as_str());
        if command.is_none() {
            let why = "the envelope names the command it answers";
            let msg = not_a(ev, "command", "a string", why);
            out.report(run, Rule::AiocsEnvelopeInvalid, None, msg)?;
        }
        // The command is the run's identity: summarize shows it.
        run.meta = Some(Identity {
            command: command.map(|c| super::framework::identity_text(&c)),
            ..Identity::default()
        });
        let mut cause = None;
        // A success that carries an error payload is no success (docs/contract.md
        // §3.4): E, and the run fails even where the finding is allowed, as
        // `summary.ok-despite-error`. A null error carries nothing.
        if ok == Some(true)
            && let Some(error) = ev.get("error").filter(|e| e.kind() != Kind::Null)
        {
            let msg = "ok:true with an error member: the envelope says success and failure at once"
                .to_string();
            out.report(run, Rule::AiocsOkWithError, None, msg)?;
            run.local_process_error = Some(Cause::coded(&error));
        }
        match ok {
            Some(true) if ev.get("data").is_none() => {
                let msg =
                    "ok without data: a successful command returns its payload in data".to_string();
                out.report(run, Rule::AiocsDataMissing, None, msg)?;
            }
            Some(false) => cause = Some(failure(run, out, ev)?),
            _ => {}
        }
        run.summary = Some(Box::new(SummaryClaim {
            ok,
            partial: false,
            reason: None,
            caused_by: cause,
            said: None,
            why: None,
        }));
        // The envelope ends the output, yet the run is judged at its end
        // (not at once under --multi-run, as summarize reads): a second
        // document is this run's finding, never a run of its own.
        Ok(seen)
    }

    /// No document at all: the command said nothing a harness can read
    /// (a line that could not be read says why already).
    fn close(&self, run: &mut RunState, out: &mut Reporter<'_>) -> io::Result<()> {
        if run.summary.is_none() && !run.unreadable {
            let msg = "no envelope: the input holds no whole JSON document".to_string();
            out.report(run, Rule::AiocsDocumentMissing, None, msg)?;
        }
        Ok(())
    }

    fn end(&self, _run: &RunState, cfg: &Config) -> End {
        End {
            passed: "ok",
            end: "its envelope",
            missing: Rule::AiocsDocumentMissing,
            unbounded: "unbounded stream, no envelope",
            ok_with_error: "the envelope says ok, but carries an error: no success",
            bounded: !cfg.unbounded,
            uses_seq: false,
            unscoped: None,
        }
    }
}

/// An `ok:false` envelope's `error`: its string code and message, and
/// the cause the verdict names (its code; never retryable).
fn failure(run: &mut RunState, out: &mut Reporter<'_>, ev: &Event<'_>) -> io::Result<Cause> {
    let error = ev.get("error").filter(|e| e.kind() == Kind::Object);
    let text = |k: &str| {
        error
            .and_then(|e| e.field(k))
            .and_then(|v| v.as_str())
            .map(|s| s.into_owned())
    };
    let (code, message) = (text("code"), text("message"));
    if code.is_none() || message.is_none() {
        let msg = if error.is_some() {
            "error lacks a string code or message".to_string()
        } else {
            "ok:false without an error object holding code and message".to_string()
        };
        out.report(run, Rule::AiocsErrorFields, None, msg)?;
    }
    run.errors += 1;
    Ok(Cause {
        origin: None,
        category: None,
        code,
        retryable: false,
        retry_after_ms: None,
    })
}

/// Why the envelope's `key` is not `kind`: it is missing (and `why` it
/// must be there), or it holds another value, quoted as a report may.
fn not_a(ev: &Event<'_>, key: &str, kind: &str, why: &str) -> String {
    match ev.get(key) {
        None => format!("no {key}: {why}"),
        Some(v) => format!(
            "{key} is {}, not {kind}",
            crate::check::secrets::quotable::value(v.raw())
        ),
    }
}

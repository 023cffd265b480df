//! `aoitap strip-envelope`: plain domain JSONL for tools that do not speak
//! AOI (docs/contract.md §6). Each passed event loses its top-level `aoi` member and
//! nothing else; the verdict of what was read stays in the exit status.

use std::fs::File;
use std::io::{BufWriter, Write};

use crate::check::{
    Checker, Decision, Exposure, LineKind, Protocol, Run, id_key, redact, redaction,
};
use crate::config::{ReportTo, StripOptions};
use crate::exit::{Exit, Result};
use crate::input::scan::Line;
use crate::input::source;
use crate::json::Event;
use crate::stream::{self, Consumer, Report};

pub fn run(opts: &StripOptions) -> Result<Exit> {
    let out = BufWriter::with_capacity(256 * 1024, source::stdout_file()?);
    let mut consumer = Strip {
        opts,
        out,
        scratch: vec![],
        buf: vec![],
    };
    // stdout carries the stripped events; diagnostics go to stderr.
    stream::run(
        &opts.stream,
        "strip-envelope",
        ReportTo::Stderr,
        &mut consumer,
    )
}

struct Strip<'o> {
    opts: &'o StripOptions,
    out: BufWriter<File>,
    scratch: Vec<Exposure>,
    /// A document's payload, made one line.
    buf: Vec<u8>,
}

impl Strip<'_> {
    fn wanted(&self, decided: &Decision<'_>, ev: &Event<'_>) -> bool {
        let o = self.opts;
        let seen = &decided.kind;
        let named = || ev.ty().is_some_and(|ty| o.types.iter().any(|t| *t == ty));
        // Lines that are not events are findings, never output; a
        // framework event is passed with --keep-framework, or when --type
        // names its type (`--type aoi:summary`).
        if !seen.event || (seen.framework && !o.keep_framework && !named()) {
            return false;
        }
        if seen.protocol == Protocol::Afdata {
            // AFDATA's data is the result payload; `--type` adds kinds.
            let kind = ev.get("kind").and_then(|v| v.as_str());
            if !kind.is_some_and(|k| k == "result" || o.types.iter().any(|t| *t == k)) {
                return false;
            }
        } else if !seen.framework && !o.types.is_empty() && !named() {
            return false;
        }
        match &o.run {
            None => true,
            Some(want) => {
                matches!(decided.run, Run::Id(id) if id == &*id_key(want.as_bytes()))
            }
        }
    }
}

impl Consumer for Strip<'_> {
    fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        report: &mut Report,
    ) -> Result<LineKind> {
        let decided = check.judge(line, report)?;
        let seen = decided.kind;
        // A pretty-printed document is judged, and written, once it closes.
        if let Some(ev) = decided.document.or_else(|| line.event())
            && self.wanted(&decided, &ev)
        {
            let bytes = ev.line();
            let payload = || {
                let kind = ev.get("kind")?.as_str()?;
                ev.get(&kind)
            };
            let (range, cut) = match seen.protocol {
                // The payload value, bytes as they came (docs/contract.md §9).
                Protocol::Afdata => match payload() {
                    Some(v) => (v.span(), None),
                    None => return Ok(seen),
                },
                // The aiocs envelope's payload is its data, bytes as they
                // came (a pretty-printed one's over several lines).
                Protocol::Aiocs => match ev.get("data") {
                    Some(v) => (v.span(), None),
                    None => return Ok(seen),
                },
                // Only AOI 1.x has an envelope to take off.
                Protocol::Aoi => ((0, bytes.len()), ev.aoi_cut()),
                // (An OKF document is `run`'s only.)
                Protocol::Aoi02 | Protocol::Ndjson | Protocol::Okf | Protocol::Jsonl => {
                    ((0, bytes.len()), None)
                }
            };
            let exposures = match (self.opts.stream.redact, decided.document) {
                (false, _) => &[],
                (true, Some(_)) => decided.document_exposures,
                (true, None) => redaction::redactions(&ev, decided.exposures, &mut self.scratch),
            };
            if decided.document.is_some() {
                // A document's line breaks are whitespace between tokens
                // (a string holds none raw): as spaces, its payload is one
                // JSONL line, its bytes otherwise as they came.
                self.buf.clear();
                redact(bytes, range, cut, exposures, &mut self.buf)?;
                for b in &mut self.buf {
                    if matches!(*b, b'\n' | b'\r') {
                        *b = b' ';
                    }
                }
                self.out.write_all(&self.buf)?;
            } else {
                redact(bytes, range, cut, exposures, &mut self.out)?;
            }
            self.out.write_all(b"\n")?;
        }
        Ok(seen)
    }

    fn flush(&mut self) -> Result<()> {
        Ok(self.out.flush()?)
    }
}

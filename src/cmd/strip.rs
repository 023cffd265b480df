//! `aoitap strip-envelope`: plain domain JSONL for tools that do not speak
//! AOI (docs/contract.md §1.2). Each passed event loses its top-level `aoi` member and
//! nothing else; the verdict of what was read stays in the exit status.

use std::fs::File;
use std::io::{BufWriter, Write};

use crate::check::{
    Checker, Decision, Exposure, LineKind, Passed, Payload, Protocol, Run, id_key, redact,
    redaction,
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
        // Where `--type` names kinds (AFDATA's), the payload says which
        // events are data.
        if !seen.protocol.typed_by_kind() && !seen.framework && !o.types.is_empty() && !named() {
            return false;
        }
        match &o.run {
            None => true,
            Some(want) => {
                matches!(decided.run(), Run::Id(id) if id == &*id_key(want.as_bytes()))
            }
        }
    }
}

impl Strip<'_> {
    /// One event's payload, as one line.
    #[inline]
    fn write(&mut self, passed: &Passed<'_>, protocol: Protocol) -> Result<()> {
        let ev = &passed.event;
        let bytes = ev.line();
        // The protocol says what its payload is (docs/contract.md §6.1):
        // AFDATA's result, the aiocs envelope's data, an AOI 1.x event
        // less its envelope, any other event whole.
        let (range, cut) = match protocol.payload(ev, &self.opts.types) {
            Some(Payload::Value(span)) => (span, None),
            Some(Payload::Whole(cut)) => ((0, bytes.len()), cut),
            None => return Ok(()),
        };
        let exposures = match (self.opts.stream.redact, passed.document) {
            (false, _) => &[],
            (true, true) => passed.exposures,
            (true, false) => redaction::redactions(ev, passed.exposures, &mut self.scratch),
        };
        if passed.document {
            self.buf.clear();
            redact(bytes, range, cut, exposures, &mut self.buf)?;
            crate::text::breaks_as_spaces(&mut self.buf);
            self.out.write_all(&self.buf)?;
        } else {
            redact(bytes, range, cut, exposures, &mut self.out)?;
        }
        self.out.write_all(b"\n")?;
        Ok(())
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
        // A pretty-printed document is judged, and written, once it
        // closes; an array document's events one by one.
        decided.each_event(line, |passed| match self.wanted(&decided, &passed.event) {
            true => self.write(passed, seen.protocol),
            false => Ok(()),
        })?;
        Ok(seen)
    }

    fn flush(&mut self) -> Result<()> {
        Ok(self.out.flush()?)
    }
}

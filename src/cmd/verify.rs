//! `aoitap verify`: the pass/fail gate (docs/contract.md §1.1, §4.1), and with `--relay`
//! a judge inside a live pipe (docs/contract.md §5.1).

use std::io::BufWriter;

use crate::check::{Checker, LineKind};
use crate::config::{ReportTo, StreamOptions};
use crate::exit::{Exit, Result};
use crate::input::scan::Line;
use crate::input::source;
use crate::output::relay::Redacted;
use crate::stream::{self, Consumer, Report};

pub fn run(opts: &StreamOptions) -> Result<Exit> {
    // With --relay, stdout carries the stream itself.
    let to = if opts.relay {
        ReportTo::Stderr
    } else {
        ReportTo::Stdout
    };
    if opts.relay && opts.redact {
        let out = BufWriter::with_capacity(256 * 1024, source::stdout_file()?);
        let mut consumer = RelayRedacted(Redacted::new(out));
        return stream::run(opts, "verify", to, &mut consumer);
    }
    stream::run(opts, "verify", to, &mut JudgeOnly)
}

/// The plain gate: every line judged, nothing done beyond.
struct JudgeOnly;

impl Consumer for JudgeOnly {
    fn judges_only(&self) -> bool {
        true
    }
}

/// `--relay --redact`: the relay is written line by line, once each line
/// is judged, by `Redacted`.
struct RelayRedacted(Redacted);

impl Consumer for RelayRedacted {
    fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        report: &mut Report,
    ) -> Result<LineKind> {
        let decided = check.judge(line, report)?;
        self.0.line(line, &decided)?;
        Ok(decided.kind)
    }

    fn flush(&mut self) -> Result<()> {
        Ok(self.0.flush()?)
    }
}

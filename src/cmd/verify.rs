//! `aoitap verify`: the pass/fail gate (DESIGN §1, §4), and with `--relay`
//! a judge inside a live pipe (DESIGN §5).

use std::fs::File;
use std::io::{BufWriter, Write};

use crate::check::{Checker, Seen, Sink, redact};
use crate::cmd::{Consumer, JudgeOnly, Report, run_stream};
use crate::config::{ReportTo, StreamOptions};
use crate::exit::{Exit, Result};
use crate::input::scan::Line;
use crate::input::source;

pub fn run(opts: &StreamOptions) -> Result<Exit> {
    // With --relay, stdout carries the stream itself.
    let to = if opts.relay {
        ReportTo::Stderr
    } else {
        ReportTo::Stdout
    };
    if opts.relay && opts.redact {
        let mut consumer =
            Redacted::new(BufWriter::with_capacity(256 * 1024, source::stdout_file()?));
        return run_stream(opts, "verify", to, &mut consumer);
    }
    run_stream(opts, "verify", to, &mut JudgeOnly)
}

/// `--relay --redact`: each line is relayed once judged, its exposed
/// secrets written as "***" and every other byte as it came (DESIGN §10).
/// Only lines that were read whole are relayed: a cut last line and a
/// line over `--max-line-bytes` could not be searched for secrets, so
/// they are findings and are not passed on.
pub struct Redacted {
    out: BufWriter<File>,
}

impl Redacted {
    pub fn new(out: BufWriter<File>) -> Redacted {
        Redacted { out }
    }

    /// Judge the line (into `sink`), then relay it redacted.
    pub fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        sink: &mut dyn Sink,
    ) -> Result<Seen> {
        let seen = check.judge(line, sink)?;
        if let Line::Complete { bytes, .. } = *line {
            if check.exposures().is_empty() {
                self.out.write_all(bytes)?;
            } else {
                let all = (0, bytes.len());
                redact(bytes, all, None, check.exposures(), &mut self.out)?;
            }
            self.out.write_all(b"\n")?;
        }
        Ok(seen)
    }

    pub fn flush(&mut self) -> Result<()> {
        Ok(self.out.flush()?)
    }
}

impl Consumer for Redacted {
    fn line(&mut self, check: &mut Checker, line: &Line<'_>, report: &mut Report) -> Result<Seen> {
        Redacted::line(self, check, line, report)
    }

    fn flush(&mut self) -> Result<()> {
        Redacted::flush(self)
    }
}

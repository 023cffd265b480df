//! `aoitap verify`: the pass/fail gate (DESIGN §1, §4), and with `--relay`
//! a judge inside a live pipe (DESIGN §5).

use std::fs::File;
use std::io::{BufWriter, Write};

use crate::check::{Checker, Exposure, Seen, Sink, redact};
use crate::config::{ReportTo, StreamOptions};
use crate::exit::{Exit, Result};
use crate::input::scan::Line;
use crate::input::source;
use crate::stream::{self, Consumer, Report};

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
        return stream::run(opts, "verify", to, &mut consumer);
    }
    stream::run(opts, "verify", to, &mut JudgeOnly)
}

/// The plain gate: every line judged, nothing done beyond.
struct JudgeOnly;

impl Consumer for JudgeOnly {}

/// `--relay --redact`: each line is relayed once judged, its exposed
/// secrets written as "***" and every other byte as it came (DESIGN §10),
/// its ending too (a cut last line is relayed cut). A line the checker
/// says to withhold (it cannot be parsed and holds a secret-looking key,
/// or it was over `--max-line-bytes` and never held) is replaced by a
/// placeholder line, so the output keeps the input's lines one for one
/// (DESIGN §13; `Withheld::placeholder` says why).
pub struct Redacted {
    out: BufWriter<File>,
    scratch: Vec<Exposure>,
}

impl Redacted {
    pub fn new(out: BufWriter<File>) -> Redacted {
        Redacted {
            out,
            scratch: vec![],
        }
    }

    /// Judge the line (into `sink`), then relay it redacted.
    pub fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        sink: &mut dyn Sink,
    ) -> Result<Seen> {
        let seen = check.judge(line, sink)?;
        let end: &[u8] = match line {
            Line::Unterminated { .. } => b"",
            _ => b"\n",
        };
        match redact::relay(check, line, &seen, &mut self.scratch) {
            redact::Relay::Withheld(why) => self.out.write_all(&why.placeholder())?,
            redact::Relay::Bytes(bytes, []) => self.out.write_all(bytes)?,
            redact::Relay::Bytes(bytes, exposures) => {
                redact(bytes, (0, bytes.len()), None, exposures, &mut self.out)?;
            }
        }
        self.out.write_all(end)?;
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

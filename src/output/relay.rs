//! The `--redact` relay (verify `--relay`, run): each line is written once
//! judged, its exposed secrets as "***" and every other byte as it came
//! (docs/contract.md §7.1), its ending too (a cut last line is relayed cut). A line
//! the checker says to withhold (it cannot be parsed and holds a
//! secret-looking key, or it was over `--max-line-bytes` and never held) is
//! replaced by a placeholder line, so the output keeps the input's lines
//! one for one (docs/contract.md §3.3; `Withholding::placeholder` says why).

use std::fs::File;
use std::io::{self, BufWriter, Write};

use crate::check::{Decision, Exposure, redact, redaction};
use crate::input::scan::Line;
use crate::input::source::RelayError;

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

    /// Relay `line`, just judged (`decided`). A failed write says it is the
    /// relay's, as the plain relay's does (`RelayError`).
    pub fn line(&mut self, line: &Line<'_>, decided: &Decision<'_>) -> io::Result<()> {
        self.write(line, decided).map_err(relay_failed)
    }

    fn write(&mut self, line: &Line<'_>, decided: &Decision<'_>) -> io::Result<()> {
        let end: &[u8] = match line {
            Line::Unterminated { .. } => b"",
            _ => b"\n",
        };
        match redaction::relay(line, decided.withheld, decided.exposures, &mut self.scratch) {
            redaction::Relay::Withholding(why) => self.out.write_all(&why.placeholder())?,
            redaction::Relay::Bytes(bytes, []) => self.out.write_all(bytes)?,
            redaction::Relay::Bytes(bytes, exposures) => {
                redact(bytes, (0, bytes.len()), None, exposures, &mut self.out)?;
            }
        }
        self.out.write_all(end)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush().map_err(relay_failed)
    }
}

/// A write error of the relay, kept of its kind (a closed downstream is
/// still found as one, docs/contract.md §8.1) and named as the relay's.
fn relay_failed(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), RelayError(e))
}

//! `summarize --output json`: one JSON document for every input, written
//! run by run, so that it holds no more than the other outputs (docs/contract.md
//! §3.3).

use std::io::{self, Write};

use serde::Serialize;

use super::{Summarized, Table};
use crate::check::RunVerdict;
use crate::output::identity::{SCHEMA_NAME, SCHEMA_VERSION, TOOL, TOOL_VERSION};
use crate::output::printer::{At, Printer};
use crate::output::summary::{Counted, RunSummary};

/// The document so far: the runs written once its head is.
pub struct Json<W> {
    out: W,
    runs_written: Option<u64>,
}

impl<W: Write> Json<W> {
    pub fn new(out: W) -> Json<W> {
        Json {
            out,
            runs_written: None,
        }
    }

    /// The document's head, once; the runs written since.
    fn head(&mut self) -> io::Result<u64> {
        if let Some(n) = self.runs_written {
            return Ok(n);
        }
        self.out.write_all(&json_head()?)?;
        self.runs_written = Some(0);
        Ok(0)
    }
}

/// Only summarize writes it: its stream is the document's runs.
impl<W: Write> Printer for Json<W> {
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl<W: Write> Table for Json<W> {
    /// Written as it is judged, not held to the end: the document costs
    /// one run's bytes, whatever the number of runs (docs/contract.md §3.3).
    fn summarized(&mut self, at: &At<'_>, s: &Summarized<'_>) -> io::Result<()> {
        let written = self.head()?;
        let bytes = json_run(at.file, s.run, s.counted, written == 0)?;
        self.runs_written = Some(written + 1);
        self.out.write_all(&bytes)
    }

    fn close(&mut self) -> io::Result<()> {
        self.head()?;
        self.out.write_all(JSON_END)
    }
}

/// `--output json`: the document up to its `runs` array's first element.
fn json_head() -> io::Result<Vec<u8>> {
    let head = Head {
        tool: TOOL,
        tool_version: TOOL_VERSION,
        schema_name: SCHEMA_NAME,
        schema_version: SCHEMA_VERSION,
    };
    let mut bytes = serde_json::to_vec(&head).map_err(io::Error::other)?;
    // `{..}` opened again for the array, the last member.
    bytes.pop();
    bytes.extend_from_slice(br#","runs":["#);
    Ok(bytes)
}

/// `--output json`: one run of the `runs` array, `first` or after others.
/// Through a `Value`, whose members are in name order, as the document's
/// runs have always been.
fn json_run(file: &str, r: &RunVerdict, c: &Counted<'_>, first: bool) -> io::Result<Vec<u8>> {
    let run = serde_json::to_value(RunSummary::of(Some(file), r, c)).map_err(io::Error::other)?;
    let mut bytes = if first { vec![] } else { vec![b','] };
    serde_json::to_writer(&mut bytes, &run).map_err(io::Error::other)?;
    Ok(bytes)
}

/// `--output json`: the end of the `runs` array and of the document.
const JSON_END: &[u8] = b"]}\n";

/// `--output json`: the members of the document before `runs`, the
/// array of every run judged, which comes last and is written run by run.
#[derive(Serialize)]
struct Head {
    tool: &'static str,
    tool_version: &'static str,
    schema_name: &'static str,
    schema_version: &'static str,
}

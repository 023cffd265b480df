//! `aoitap verify`: the pass/fail gate (DESIGN §1, §4).

use std::io::{self, BufWriter, Write};

use anyhow::Result;

use crate::check::Checker;
use crate::cli::StreamOptions;
use crate::emit::Emitter;
use crate::exit::Exit;
use crate::scan::Scanner;

pub fn run(opts: &StreamOptions) -> Result<Exit> {
    let out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    judge(opts, out)
}

/// Judge every input, writing the report to `out`.
pub fn judge<W: Write>(opts: &StreamOptions, out: W) -> Result<Exit> {
    let mut em = Emitter::new(out, opts.style, "verify");
    em.begin()?;
    let mut trouble: Option<Exit> = None;
    for input in &opts.inputs {
        em.file = input.label();
        let file = match input.open() {
            Ok(f) => f,
            Err(e) => {
                let (category, code, exit) = match e.kind() {
                    io::ErrorKind::NotFound => ("not_found", "INPUT_NOT_FOUND", Exit::NoInput),
                    _ => ("io", "INPUT_UNREADABLE", Exit::NoInput),
                };
                em.local_error(category, code, &format!("{}: {e}", em.file))?;
                trouble = trouble.max(Some(exit));
                continue;
            }
        };
        let mut scan = Scanner::new(file, opts.max_line_bytes);
        let mut check = Checker::new(&opts.check);
        loop {
            match scan.next_line() {
                Ok(Some(line)) => check.line(line, &mut em)?,
                Ok(None) => break,
                Err(e) => {
                    em.local_error(
                        "io",
                        "READ_FAILED",
                        &format!("{}: read failed: {e}", em.file),
                    )?;
                    trouble = trouble.max(Some(Exit::Io));
                    break;
                }
            }
        }
        check.finish(&mut em)?;
    }
    let exit = trouble.unwrap_or_else(|| em.tally.exit());
    em.end(exit)?;
    Ok(exit)
}

//! `aoitap filter PROG [FILE ...]` (DESIGN §16): a jq program over an AOI
//! stream that keeps the stream's verdict. Every line is judged as verify
//! judges it; PROG runs on each event (`--domain`: domain events only);
//! an output equal to its event is written with the event's own bytes,
//! any other one as compact JSON; the exit status is the verdict.

mod program;
mod value;

use std::fs::File;
use std::io::{BufWriter, Write};

use crate::check::rules::Rule;
use crate::check::{Checker, LineKind};
use crate::config::{FilterOptions, ReportTo};
use crate::exit::{Error, Exit, Result};
use crate::input::scan::Line;
use crate::input::source;
use crate::stream::{self, Consumer, Report};
use jaq_json::Val;
use program::{Out, Program};

/// The stack the program compiles and runs on: jaq recurses as deep as a
/// program nests and as the values it makes, and an overflow is an abort.
/// Reserved, not used, until a program needs it.
const STACK: usize = 1 << 30;

pub fn run(opts: &FilterOptions) -> Result<Exit> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("filter".into())
            .stack_size(STACK)
            .spawn_scoped(s, || run_here(opts))
            .map_err(|e| Error::io("cannot start the filter's thread".to_string(), e))?
            .join()
            .unwrap_or_else(|_| Err(Error::Usage("filter: the program panicked".to_string())))
    })
}

fn run_here(opts: &FilterOptions) -> Result<Exit> {
    let compile = |code: &str| {
        Program::compile(code, &opts.args).map_err(|e| Error::Usage(format!("filter: {e}")))
    };
    let program = compile(&opts.program)?;
    let assert = opts.assert.as_deref().map(compile).transpose()?;
    let mut consumer = Filter {
        opts,
        program,
        assert,
        halted: false,
        out: BufWriter::with_capacity(256 * 1024, source::stdout_file()?),
        text: vec![],
    };
    // stdout carries the program's output; the report goes to stderr.
    stream::run(&opts.stream, "filter", ReportTo::Stderr, &mut consumer)
}

struct Filter<'o> {
    opts: &'o FilterOptions,
    program: Program,
    assert: Option<Program>,
    /// The program halted: its output is over, the judging goes on.
    halted: bool,
    out: BufWriter<File>,
    text: Vec<u8>,
}

/// Write one output: the event's own bytes when it is the event, a string
/// as its text under `-r`, else compact JSON.
fn write(
    out: &mut BufWriter<File>,
    text: &mut Vec<u8>,
    raw: bool,
    v: &Val,
    input: &Val,
    bytes: &[u8],
) -> std::io::Result<()> {
    if v == input {
        out.write_all(bytes)?;
    } else if let (true, Val::TStr(s)) = (raw, v) {
        out.write_all(s)?;
    } else {
        text.clear();
        write!(text, "{v}")?;
        out.write_all(text)?;
    }
    out.write_all(b"\n")
}

impl Consumer for Filter<'_> {
    fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        report: &mut Report,
    ) -> Result<LineKind> {
        let decided = check.judge(line, report)?;
        let seen = decided.kind;
        let n = decided.line;
        let run = match decided.run {
            crate::check::Run::Id(id) => Some(String::from_utf8_lossy(id).into_owned()),
            _ => None,
        };
        let Some(ev) = line.event() else {
            return Ok(seen);
        };
        // After a halt the program's output is over, but --assert still
        // holds every event to EXPR: a halt never takes the verdict away.
        let skip = !seen.event || (self.opts.domain && seen.framework);
        if skip || (self.halted && self.assert.is_none()) {
            return Ok(seen);
        }
        let Some(input) = value::event_val(&ev) else {
            let msg = format!(
                "the event nests deeper than {} levels: not filtered",
                value::MAX_DEPTH
            );
            check.program_finding(report, n, run, Rule::FilterError, &msg)?;
            return Ok(seen);
        };
        let mut findings: Vec<(Rule, String)> = vec![];
        if let Some(assert) = &self.assert {
            let expr = self.opts.assert.as_deref().unwrap_or_default();
            let mut failed = None;
            assert.run(input.clone(), |out| {
                failed = match out {
                    Out::Value(Val::Bool(true)) => None,
                    Out::Value(v) if v != Val::Null && v != Val::Bool(false) => None,
                    Out::Value(v) => Some(format!("--assert {expr} is {v} for this event")),
                    Out::Error(e) => Some(format!("--assert {expr} gave an error: {e}")),
                    Out::Halt => Some(format!("--assert {expr} halted")),
                };
                failed.is_none()
            });
            if let Some(msg) = failed {
                findings.push((Rule::FilterAssert, msg));
            }
        }
        if self.halted {
            for (rule, msg) in findings {
                check.program_finding(report, n, run.clone(), rule, &msg)?;
            }
            return Ok(seen);
        }
        let bytes = ev.line();
        let mut written = Ok(());
        let mut halted = false;
        // The first error of an event is its finding; the others counted.
        let mut errors = 0u64;
        let raw = self.opts.raw;
        let Filter {
            program, out, text, ..
        } = &mut *self;
        // Each output is written as it comes: a program may give many.
        program.run(input.clone(), |o| {
            match o {
                Out::Value(v) => written = write(out, text, raw, &v, &input, bytes),
                Out::Error(e) => {
                    errors += 1;
                    if errors == 1 {
                        findings.push((Rule::FilterError, e));
                    }
                }
                Out::Halt => halted = true,
            }
            written.is_ok()
        });
        self.halted = halted;
        written?;
        if errors > 1
            && let Some(first) = findings.iter_mut().find(|f| f.0 == Rule::FilterError)
        {
            first
                .1
                .push_str(&format!(" (and {} more on this event)", errors - 1));
        }
        for (rule, msg) in findings {
            check.program_finding(report, n, run.clone(), rule, &msg)?;
        }
        Ok(seen)
    }

    fn flush(&mut self) -> Result<()> {
        Ok(self.out.flush()?)
    }
}

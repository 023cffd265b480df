//! `aoitap filter PROG [FILE ...]` (docs/contract.md §1.5): a jq program over an AOI
//! stream that keeps the stream's verdict. Every line is judged as verify
//! judges it; PROG runs on each event (`--domain`: domain events only);
//! an output equal to its event is written with the event's own bytes,
//! any other one as compact JSON; the exit status is the verdict.

mod plan;
mod program;
mod terms;
mod value;

use std::fs::File;
use std::io::{BufWriter, Write};

use crate::check::rules::Rule;
use crate::check::{Checker, LineKind, Passed};
use crate::config::{FilterOptions, ReportTo};
use crate::exit::{Error, Exit, Result};
use crate::input::scan::Line;
use crate::input::source;
use crate::stream::{self, Consumer, Report};
use jaq_json::{Rc, Val};
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
            .map_err(|e| {
                // Most likely an address-space limit (`ulimit -v`): the
                // stack is reserved whole, used only as deep as a value.
                let why = "cannot start the filter's thread, which reserves 1 GiB of \
                           address space for deep values (is `ulimit -v` lower?)";
                Error::io(why.to_string(), e)
            })?
            .join()
            .unwrap_or_else(|_| Err(Error::Usage("filter: the program panicked".to_string())))
    })
}

/// Make the filter thread's heap room for a deep event's values at once.
/// glibc serves this thread from an arena of its own, grown a page run at
/// a time (1,867 `mprotect` calls and their page faults for one event
/// nested 100,000 deep, most of the time it took). A large block freed
/// raises the threshold below which blocks come from the arena (mallopt(3),
/// the dynamic mmap threshold), so the second one is carved from it and,
/// freed, stays as its room; untouched, it costs no memory. Elsewhere it is
/// two allocations and nothing more.
fn warm_heap() {
    for _ in 0..2 {
        // Tried, not required: under an address-space limit a failed
        // block is no reason to stop (with_capacity would abort).
        let mut room = Vec::<u8>::new();
        let _ = room.try_reserve_exact(WARM);
        drop(std::hint::black_box(room));
    }
}

const WARM: usize = 16 << 20;

/// Where jaq-std's `debug` and `stderr` print, as jq prints them:
/// `["DEBUG:",VALUE]` and a line, and the value's text as it is.
struct Stderr;

impl log::Log for Stderr {
    fn enabled(&self, meta: &log::Metadata<'_>) -> bool {
        meta.target().starts_with("jaq_std")
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let mut err = std::io::stderr().lock();
        // Nowhere to say that stderr is gone: as jq, print and go on.
        let _ = match record.level() {
            log::Level::Debug => writeln!(err, "[\"DEBUG:\",{}]", record.args()),
            _ => write!(err, "{}", record.args()),
        };
    }

    fn flush(&self) {}
}

static STDERR: Stderr = Stderr;

fn run_here(opts: &FilterOptions) -> Result<Exit> {
    warm_heap();
    // A JSONL report owns stderr: a line of the program's there would
    // break it, so `debug` and `stderr` print only beside a human one.
    let jsonl_on_stderr = opts.stream.report.is_none()
        && opts.stream.style.format == crate::output::style::Format::Jsonl;
    if !jsonl_on_stderr && log::set_logger(&STDERR).is_ok() {
        log::set_max_level(log::LevelFilter::Debug);
    }
    let compile = |code: &str| {
        Program::compile(code, &opts.args).map_err(|e| {
            // `aoitap filter out.jsonl`: the file was taken for PROG.
            let hint = if std::path::Path::new(code).exists() {
                " (PROG comes first: aoitap filter PROG [FILE ...])"
            } else {
                ""
            };
            Error::Usage(format!("filter: {e}{hint}"))
        })
    };
    let program = compile(&opts.program)?;
    let assert = opts.assert.as_deref().map(compile).transpose()?;
    let only = projection(&program, assert.as_ref());
    let mut consumer = Filter {
        opts,
        program,
        assert,
        only,
        halted: false,
        out: BufWriter::with_capacity(256 * 1024, source::stdout_file()?),
        text: vec![],
        file: String::new(),
    };
    // stdout carries the program's output; the report goes to stderr.
    stream::run(&opts.stream, "filter", ReportTo::Stderr, &mut consumer)
}

struct Filter<'o> {
    opts: &'o FilterOptions,
    program: Program,
    assert: Option<Program>,
    /// The only top-level keys the programs read, when they say so.
    only: Option<Vec<Vec<u8>>>,
    /// The program halted: its output is over, the judging goes on.
    halted: bool,
    out: BufWriter<File>,
    text: Vec<u8>,
    /// The input being read, as `input_filename` gives it.
    file: String,
}

/// The top-level keys that are all PROG and `--assert` read of an event,
/// when both say so.
fn projection(program: &Program, assert: Option<&Program>) -> Option<Vec<Vec<u8>>> {
    let mut keys = program.keys()?;
    if let Some(a) = assert {
        keys.extend(a.keys()?);
    }
    let mut bytes: Vec<Vec<u8>> = keys
        .iter()
        .filter_map(|k| match k {
            Val::TStr(b) => Some(b.to_vec()),
            _ => None,
        })
        .collect();
    bytes.sort();
    bytes.dedup();
    Some(bytes)
}

/// Whether `v` is the event `input`: the same value, or (when the event
/// was made whole) an equal one.
fn is_input(v: &Val, input: &Val, whole: bool) -> bool {
    match (v, input) {
        (Val::Obj(a), Val::Obj(b)) if Rc::ptr_eq(a, b) => true,
        _ => whole && v == input,
    }
}

/// Write one output: the event's own bytes when it is the event, a string
/// as its text under `-r`, else compact JSON.
fn write(
    out: &mut BufWriter<File>,
    text: &mut Vec<u8>,
    raw: bool,
    (v, input, whole): (&Val, &Val, bool),
    (bytes, document): (&[u8], bool),
) -> std::io::Result<()> {
    if is_input(v, input, whole) && !document {
        out.write_all(bytes)?;
    } else if is_input(v, input, whole) {
        text.clear();
        text.extend_from_slice(bytes);
        crate::text::breaks_as_spaces(text);
        out.write_all(text)?;
    } else if let (true, Val::TStr(s) | Val::BStr(s)) = (raw, v) {
        out.write_all(s)?;
    } else {
        // jaq's writer to bytes: its frames are a small part of what the
        // formatter's are, so a deep output touches less stack.
        text.clear();
        jaq_json::write::write(text, &jaq_json::write::Pp::default(), 0, v)?;
        value::json_numbers(text);
        out.write_all(text)?;
    }
    out.write_all(b"\n")
}

impl Filter<'_> {
    /// Run the program (and `--assert`) on one event: what they found.
    fn event(&mut self, passed: &Passed<'_>) -> Result<Vec<(Rule, String)>> {
        let ev = &passed.event;
        // After a signal no program runs: the stream loop ends at its
        // batch's end with the cancelled report.
        if (self.halted && self.assert.is_none()) || crate::signal::requested() {
            return Ok(vec![]);
        }
        let Some(input) = value::event_val(ev, self.only.as_deref()) else {
            let msg = format!(
                "the event nests deeper than {} levels: not filtered",
                value::MAX_DEPTH
            );
            return Ok(vec![(Rule::FilterError, msg)]);
        };
        let mut findings = self.run_on(passed, &input)?;
        if crate::signal::requested() {
            // The program was stopped in its loop (`__tick`): what it said
            // then is the stop, not a finding about the event.
            findings.clear();
        }
        // The program's errors quote values: never a secret (docs/contract.md §3.3).
        if !findings.is_empty() {
            let secret = value::holds_secret(&input, &self.opts.stream.check.secret_names);
            for (rule, msg) in &mut findings {
                let why = if secret {
                    "the event holds a secret-looking value"
                } else if crate::check::quotable::quotable(msg).is_none() {
                    "it names something secret-looking"
                } else {
                    continue;
                };
                *msg = match rule {
                    Rule::FilterAssert => {
                        format!("--assert did not hold for this event (not quoted: {why})")
                    }
                    _ => format!("the program gave an error on this event (not quoted: {why})"),
                };
            }
        }
        value::dismantle(input);
        Ok(findings)
    }

    /// Run `--assert` and PROG on `input`, the value of `ev`.
    fn run_on(&mut self, passed: &Passed<'_>, input: &Val) -> Result<Vec<(Rule, String)>> {
        let (ev, document) = (&passed.event, passed.document);
        let mut findings: Vec<(Rule, String)> = vec![];
        if let Some(assert) = &mut self.assert {
            let expr = self.opts.assert.as_deref().unwrap_or_default();
            // No value is no yes: as `jq -e` on no output, EXPR fails.
            let mut failed = Some(format!("--assert `{expr}` gave no value for this event"));
            assert.run(input.clone(), |out| {
                failed = match out {
                    Out::Value(Val::Bool(true)) => None,
                    Out::Value(v) if v != Val::Null && v != Val::Bool(false) => None,
                    Out::Value(v) => Some(format!("--assert `{expr}` is {v} for this event")),
                    Out::Error(e) => Some(format!("--assert `{expr}` gave an error: {e}")),
                    Out::Halt => Some(format!("--assert `{expr}` halted")),
                };
                failed.is_none()
            });
            if let Some(msg) = failed {
                findings.push((Rule::FilterAssert, msg));
            }
        }
        if self.halted {
            return Ok(findings);
        }
        let bytes = ev.line();
        let mut written = Ok(());
        let mut halted = false;
        let raw = self.opts.raw;
        let whole = self.only.is_none();
        let Filter {
            program, out, text, ..
        } = &mut *self;
        // Each output is written as it comes: a program may give many.
        program.run(input.clone(), |o| {
            // A signal ends the program at its next output too: one that
            // caught the stop (`try ... catch`) writes nothing after it.
            if crate::signal::requested() {
                return false;
            }
            match o {
                // Past the depth an event may have, an output is not
                // printed: printing recurses as deep as it nests (docs/contract.md
                // §3.4).
                Out::Value(v) if value::deeper_than(&v, value::MAX_DEPTH) => {
                    let msg = format!(
                        "the program's output nests deeper than {} levels: not written",
                        value::MAX_DEPTH
                    );
                    findings.push((Rule::FilterError, msg));
                    value::dismantle(v);
                }
                Out::Value(v) => {
                    written = write(out, text, raw, (&v, input, whole), (bytes, document))
                }
                Out::Error(e) => findings.push((Rule::FilterError, e)),
                Out::Halt => halted = true,
            }
            written.is_ok()
        });
        self.halted = halted;
        written?;
        Ok(findings)
    }
}

impl Consumer for Filter<'_> {
    fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        report: &mut Report,
    ) -> Result<LineKind> {
        if self.file != report.out.file {
            self.file.clone_from(&report.out.file);
            let stdin = self.file == crate::config::Input::Stdin.label();
            program::set_input_filename((!stdin).then_some(self.file.as_str()));
        }
        let decided = check.judge(line, report)?;
        let (seen, n) = (decided.kind, decided.line);
        let mut findings = vec![];
        // After a halt the program's output is over, but --assert still
        // holds every event to EXPR: a halt never takes the verdict away.
        // A document is one event once it closes; an array document's
        // events are each one (docs/contract.md §6.2, §6.3).
        if seen.event && !(self.opts.domain && seen.framework) {
            decided.each_event(line, |passed| {
                let found = self.event(passed)?;
                match findings.is_empty() {
                    true => findings = found,
                    false => findings.extend(found),
                }
                Ok::<(), crate::exit::Error>(())
            })?;
        }
        if findings.is_empty() {
            return Ok(seen);
        }
        // The run id is made a String only for a finding: most lines have none.
        let run = match decided.run() {
            crate::check::Run::Id(id) => Some(String::from_utf8_lossy(id).into_owned()),
            _ => None,
        };
        for (rule, msg) in findings {
            check.program_finding(report, n, run.clone(), rule, &msg)?;
        }
        Ok(seen)
    }

    fn flush(&mut self) -> Result<()> {
        Ok(self.out.flush()?)
    }
}

//! `aoitap summarize`: per run, at a glance — identity, lines and bytes,
//! counts by type, warnings and errors by category and code, outcome, seq
//! coverage and the verdict (docs/contract.md §6).
//!
//! Runs are told apart as with `--multi-run` (docs/contract.md §2). Counts work on
//! any JSONL with a discriminator (`--type-field kind`); identity and
//! outcome come from the AOI framework events when there are any. Per run,
//! at most `MAX_KINDS` types and `MAX_KINDS` category/code pairs are kept
//! by name; the rest are counted under `(other)`. A run's state is let go
//! once its report is written; `--output json`'s one document is written
//! run by run, so it holds no more than the other outputs (docs/contract.md §13).

use std::collections::BTreeMap;
use std::io;

use crate::check::{Checker, LineKind, Protocol, RunKey, RunVerdict};
use crate::config::{ReportTo, SummarizeOptions};
use crate::exit::{Exit, Result};
use crate::input::scan::Line;
use crate::json::{Event, Kind};
use crate::output::summary::{self, Counted, Ending, Problem};
use crate::stream::{self, Consumer, Holder, PerRun, Report};
use crate::text::one_line;

const MAX_KINDS: usize = 256;

/// Names kept over all open runs together (types, and category/code
/// pairs): each costs up to a couple of hundred bytes, and 32,768 open
/// runs of `MAX_KINDS` each would hold gigabytes. Past it, a run's new
/// names count under `(other)` until other runs end (docs/contract.md §8).
const MAX_KEPT: usize = 100_000;

pub fn run(opts: &SummarizeOptions) -> Result<Exit> {
    let mut consumer = Summarize {
        type_field: &opts.stream.check.type_field,
        stats: PerRun::default(),
        width: summary::terminal_width(),
        room: MAX_KEPT,
        names: Names::default(),
        ended: vec![],
    };
    stream::run(&opts.stream, "summarize", ReportTo::Stdout, &mut consumer)
}

/// What is counted of one run: what every line touches, and the rest
/// (`Counts`) apart. Ten thousand interleaved runs' state is not all in
/// the cache; a line costs one miss on its run's few words, not several
/// on all it keeps (docs/contract.md §23).
#[derive(Default)]
struct Stats {
    lines: u64,
    bytes: u64,
    last: Option<Last>,
    counts: Box<Counts>,
}

/// What a run's lines are counted as, by name and kind.
#[derive(Default)]
struct Counts {
    domain: BTreeMap<String, u64>,
    framework: BTreeMap<String, u64>,
    warnings: Vec<Problem>,
    errors: Vec<Problem>,
    summary_identity: bool,
    outcome: Option<Ending>,
    /// Names this run holds against `MAX_KEPT`.
    kept: usize,
    /// The name the last event was counted under (`Last`), and whether
    /// it is a framework type's.
    last_key: Option<(bool, String)>,
}

struct Summarize<'o> {
    type_field: &'o str,
    stats: PerRun<Stats>,
    /// Standard output's width, when it is a terminal.
    width: Option<usize>,
    /// Names that may still be kept (`MAX_KEPT` less those held).
    room: usize,
    names: Names,
    /// Runs a line ended, as the checker gave them: kept empty between
    /// lines.
    ended: Vec<RunVerdict>,
}

/// Type names are counted by at most this many bytes (longer ones by
/// their prefix, marked `…`): with `MAX_KINDS`, the table is bounded in
/// bytes, whatever the input (docs/contract.md §8).
const NAME_BYTES: usize = 128;

/// Count `name` in `map`; returns the key it was counted under when that
/// is its own (perhaps cut) name, not `(other)`.
fn bump(map: &mut BTreeMap<String, u64>, name: &str, room: &mut Room) -> Option<String> {
    let cut;
    let name = if name.len() > NAME_BYTES {
        cut = format!("{}…", crate::text::prefix(name, NAME_BYTES));
        &cut
    } else {
        name
    };
    if let Some(n) = map.get_mut(name) {
        *n += 1;
    } else if map.len() < MAX_KINDS && room.take() {
        map.insert(name.to_string(), 1);
    } else {
        *map.entry("(other)".to_string()).or_default() += 1;
        return None;
    }
    Some(name.to_string())
}

/// The decoded type of the run's last event, counted under its own name
/// (`Counts::last_key`), and the events since that have the same type,
/// not yet added to its count. Most lines repeat the type of the line
/// before: each then costs one compare of decoded bytes, with no UTF-8
/// check and no map lookup. Equal decoded bytes give the same name, so
/// the count is the one `bump` would have kept.
struct Last {
    /// The decoded bytes, as a number in `Names`.
    decoded: u32,
    pending: u64,
}

/// The decoded type names the runs' `Last` stand for, each kept once for
/// all runs: ten thousand interleaved runs compare against a few names
/// that stay in the cache, not against a copy of their own each, which
/// does not. At most `MAX_NAMES`; past them a run keeps no `Last`, and
/// each of its lines is counted by `bump`.
#[derive(Default)]
struct Names {
    list: Vec<Box<[u8]>>,
    numbers: std::collections::HashMap<Box<[u8]>, u32>,
}

const MAX_NAMES: usize = 4096;

impl Names {
    fn is(&self, n: u32, decoded: &[u8]) -> bool {
        *self.list[n as usize] == *decoded
    }

    fn number(&mut self, decoded: &[u8]) -> Option<u32> {
        if let Some(&n) = self.numbers.get(decoded) {
            return Some(n);
        }
        if self.list.len() >= MAX_NAMES || decoded.len() > NAME_BYTES {
            return None;
        }
        let n = self.list.len() as u32;
        self.list.push(decoded.into());
        self.numbers.insert(decoded.into(), n);
        Some(n)
    }
}

/// A run's claim on the names all runs may keep.
struct Room<'a> {
    left: &'a mut usize,
    taken: &'a mut usize,
}

impl Room<'_> {
    fn take(&mut self) -> bool {
        let ok = *self.left > 0;
        if ok {
            *self.left -= 1;
            *self.taken += 1;
        }
        ok
    }
}

impl Stats {
    fn event(
        &mut self,
        ev: &Event<'_>,
        type_field: &str,
        line: u64,
        protocol: Protocol,
        left: &mut usize,
        names: &mut Names,
    ) {
        let counts = &mut self.counts;
        if protocol == Protocol::Afdata {
            counts.afdata(ev, line);
        }
        if protocol == Protocol::Aiocs {
            counts.aiocs(ev, line);
        }
        let aoi_type = ev.ty_bytes();
        // Most streams count by `type`: decoded once for both uses.
        let counted = match type_field {
            "type" => aoi_type.clone(),
            field => ev.get(field).and_then(|v| v.decoded()),
        };
        match (&mut self.last, counted) {
            (Some(last), Some(d)) if names.is(last.decoded, &d) => last.pending += 1,
            (_, counted) => {
                self.flush();
                let own_name = self.counts.count(ev, type_field, left);
                let decoded = counted.and_then(|d| names.number(&d));
                self.last = decoded.filter(|_| own_name).map(|decoded| Last {
                    decoded,
                    pending: 0,
                });
            }
        }
        self.counts
            .framework_event(ev, aoi_type.as_deref(), line, left);
    }

    /// Add the counts `last` holds to its map: before the name changes,
    /// and before the counts are read.
    fn flush(&mut self) {
        if let Some(last) = self.last.as_mut().filter(|l| l.pending > 0) {
            let c = &mut *self.counts;
            if let Some((framework, key)) = &c.last_key {
                let map = if *framework {
                    &mut c.framework
                } else {
                    &mut c.domain
                };
                *map.get_mut(key).expect("counted under its own name") += last.pending;
            }
            last.pending = 0;
        }
    }

    /// What the reports show of the run (`flush` first).
    fn counted(&self) -> Counted<'_> {
        let c = &self.counts;
        Counted {
            lines: self.lines,
            bytes: self.bytes,
            domain: &c.domain,
            framework: &c.framework,
            warnings: &c.warnings,
            errors: &c.errors,
            outcome: c.outcome.as_ref(),
        }
    }
}

impl Counts {
    /// Count the event by its type (or `type_field`); whether it was
    /// counted under its own name, not `(other)`.
    fn count(&mut self, ev: &Event<'_>, type_field: &str, left: &mut usize) -> bool {
        let ty = match type_field {
            "type" => ev.ty(),
            field => ev.get(field).and_then(|v| v.as_str()),
        };
        let name = ty.as_deref().unwrap_or("(none)");
        let framework = name.starts_with("aoi:");
        let map = if framework {
            &mut self.framework
        } else {
            &mut self.domain
        };
        let mut room = Room {
            left,
            taken: &mut self.kept,
        };
        let key = bump(map, name, &mut room);
        self.last_key = key.map(|k| (framework, k));
        self.last_key.is_some()
    }

    /// An `aoi:error` or `aoi:warning` by category and code, and the
    /// summary's outcome.
    fn framework_event(&mut self, ev: &Event<'_>, ty: Option<&[u8]>, line: u64, left: &mut usize) {
        let text = |k: &str| ev.get(k).and_then(|v| v.as_str()).map(|s| s.into_owned());
        let mut room = Room {
            left,
            taken: &mut self.kept,
        };
        match ty {
            Some(t @ (b"aoi:error" | b"aoi:warning")) => {
                let list = if t == b"aoi:error" {
                    &mut self.errors
                } else {
                    &mut self.warnings
                };
                let category = text("category").unwrap_or_else(|| "-".into());
                let code = text("code").unwrap_or_else(|| "-".into());
                if let Some(p) = list
                    .iter_mut()
                    .find(|p| p.category == category && p.code == code)
                {
                    p.count += 1;
                } else if list.len() < MAX_KINDS && room.take() {
                    list.push(Problem {
                        category,
                        code,
                        count: 1,
                        // Bounded, one line (docs/contract.md §8).
                        first_message: one_line(&text("message").unwrap_or_default()),
                        first_line: line,
                    });
                }
            }
            Some(b"aoi:summary") => {
                let flag = |k: &str| ev.get(k).and_then(|v| v.as_bool());
                self.summary_identity = ev.get("tool_version").is_some();
                self.outcome = Some(Ending {
                    ok: flag("ok"),
                    reason: text("reason"),
                    partial: flag("partial"),
                    truncated: flag("truncated"),
                    next_cursor: ev
                        .get("next_cursor")
                        .is_some_and(|v| v.kind() != Kind::Null),
                    elapsed_ms: ev.get("elapsed_ms").and_then(|v| v.uint()),
                });
            }
            _ => {}
        }
    }
}

impl Counts {
    /// The aiocs envelope is the run's outcome; its error is counted by
    /// code.
    fn aiocs(&mut self, ev: &Event<'_>, line: u64) {
        if self.outcome.is_some() {
            return;
        }
        let ok = ev.get("ok").and_then(|v| v.as_bool());
        self.outcome = Some(Ending {
            ok,
            reason: (ok == Some(false)).then(|| "error".into()),
            ..Ending::default()
        });
        if ok == Some(false) {
            self.payload_error(ev, line);
        }
    }

    /// An `error` payload of `code` and `message`, as AFDATA and aiocs
    /// carry it: an error with no category, counted by its code.
    fn payload_error(&mut self, ev: &Event<'_>, line: u64) {
        if self.errors.len() >= MAX_KINDS {
            return;
        }
        let payload = ev.get("error");
        let text = |k: &str| {
            payload
                .and_then(|p| p.field(k))
                .and_then(|v| v.as_str())
                .map(|s| s.into_owned())
        };
        self.errors.push(Problem {
            category: "-".into(),
            code: text("code").unwrap_or_else(|| "-".into()),
            count: 1,
            first_message: one_line(&text("message").unwrap_or_default()),
            first_line: line,
        });
    }

    /// AFDATA's terminal event is the run's outcome; its error payload is
    /// counted as an error by code.
    fn afdata(&mut self, ev: &Event<'_>, line: u64) {
        let kind = ev.get("kind").and_then(|v| v.as_str());
        let (Some(kind), None) = (kind, &self.outcome) else {
            return;
        };
        match &*kind {
            "result" => {
                self.outcome = Some(Ending {
                    ok: Some(true),
                    ..Ending::default()
                });
            }
            "error" => {
                self.outcome = Some(Ending {
                    ok: Some(false),
                    reason: Some("error".into()),
                    ..Ending::default()
                });
                self.payload_error(ev, line);
            }
            _ => {}
        }
    }
}

impl Consumer for Summarize<'_> {
    fn line(
        &mut self,
        check: &mut Checker,
        line: &Line<'_>,
        report: &mut Report,
    ) -> Result<LineKind> {
        let mut held = Holder::counting(report, std::mem::take(&mut self.ended));
        let decided = check.judge(line, &mut held)?;
        let seen = decided.kind;
        let Holder {
            tally,
            runs: mut done,
        } = held;
        let report = tally.expect("given above");
        let number = decided.line;
        let st = self.stats.of(&decided, Stats::default);
        if !matches!(line, Line::Unterminated { .. }) {
            st.lines += 1;
        }
        st.bytes += line.input_bytes();
        if let Some(ev) = line.event().or(decided.document) {
            // Counted by the protocol's discriminator: AFDATA's is `kind`.
            let field = match seen.protocol {
                Protocol::Afdata if self.type_field == "type" => "kind",
                _ => self.type_field,
            };
            st.event(
                &ev,
                field,
                number,
                seen.protocol,
                &mut self.room,
                &mut self.names,
            );
        }
        for r in done.drain(..) {
            self.emit(&r, report)?;
        }
        self.ended = done;
        Ok(seen)
    }

    fn end_input(&mut self, check: Checker, report: &mut Report) -> Result<()> {
        let mut held = Holder::counting(report, vec![]);
        check.finish(&mut held)?;
        let Holder { tally, runs: done } = held;
        let report = tally.expect("given above");
        for r in done {
            self.emit(&r, report)?;
        }
        Ok(())
    }

    /// `--output json` is one document, however many inputs: its end.
    fn end_all(&mut self, report: &mut Report) -> Result<()> {
        report.out.close()?;
        Ok(())
    }
}

impl Summarize<'_> {
    fn emit(&mut self, r: &RunVerdict, report: &mut Report) -> io::Result<()> {
        report.tally.run(r);
        let mut st = self.stats.remove(&RunKey::of_report(r)).unwrap_or_default();
        st.flush();
        self.room += st.counts.kept;
        let counted = st.counted();
        report.out.summarized(r, &counted, self.width)
    }
}

//! `aoitap summarize`: per run, at a glance — identity, lines and bytes,
//! counts by type, warnings and errors by category and code, outcome, seq
//! coverage and the verdict (DESIGN §6).
//!
//! Runs are told apart as with `--multi-run` (DESIGN §2). Counts work on
//! any JSONL with a discriminator (`--type-field kind`); identity and
//! outcome come from the AOI framework events when there are any. Per run,
//! at most `MAX_KINDS` types and `MAX_KINDS` category/code pairs are kept
//! by name; the rest are counted under `(other)`. A run's state is let go
//! once its report is written; `--output json`'s one document is written
//! run by run, so it holds no more than the other outputs (DESIGN §13).

use std::collections::BTreeMap;
use std::io::{self, IsTerminal};

use crate::check::Protocol;
use crate::check::{Checker, Identity, RunKey, RunVerdict, Seen, Verdict};
use serde::Serialize;

use crate::config::{ReportTo, SummarizeOptions};
use crate::exit::{Exit, Result};
use crate::input::scan::Line;
use crate::json::{Event, Kind};
use crate::output::style::Format;
use crate::output::{human, style};
use crate::stream::{self, Consumer, Held, PerRun, Report};
use crate::text::{clean, one_line, plural};

const MAX_KINDS: usize = 256;

/// Names kept over all open runs together (types, and category/code
/// pairs): each costs up to a couple of hundred bytes, and 32,768 open
/// runs of `MAX_KINDS` each would hold gigabytes. Past it, a run's new
/// names count under `(other)` until other runs end (DESIGN §8).
const MAX_KEPT: usize = 100_000;

pub fn run(opts: &SummarizeOptions) -> Result<Exit> {
    let mut consumer = Summarize {
        type_field: &opts.stream.check.type_field,
        stats: PerRun::default(),
        runs_written: None,
        width: terminal_width(),
        room: MAX_KEPT,
    };
    let exit = stream::run(&opts.stream, "summarize", ReportTo::Stdout, &mut consumer)?;
    Ok(exit)
}

/// What is counted of one run.
#[derive(Default)]
struct Stats {
    lines: u64,
    bytes: u64,
    domain: BTreeMap<String, u64>,
    framework: BTreeMap<String, u64>,
    warnings: Vec<Problem>,
    errors: Vec<Problem>,
    summary_identity: bool,
    outcome: Option<Outcome>,
    /// Names this run holds against `MAX_KEPT`.
    kept: usize,
    last: Option<Last>,
}

#[derive(Serialize)]
struct Problem {
    category: String,
    code: String,
    count: u64,
    first_message: String,
    first_line: u64,
}

#[derive(Default, Serialize)]
struct Outcome {
    #[serde(skip_serializing_if = "Option::is_none")]
    ok: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    partial: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<bool>,
    next_cursor: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    elapsed_ms: Option<u64>,
}

struct Summarize<'o> {
    type_field: &'o str,
    stats: PerRun<Stats>,
    /// `--output json`: how many runs of the document's `runs` array are
    /// written (`None` before its head is).
    runs_written: Option<u64>,
    /// Standard output's width, when it is a terminal.
    width: Option<usize>,
    /// Names that may still be kept (`MAX_KEPT` less those held).
    room: usize,
}

/// The width of the terminal on standard output, if it is one.
fn terminal_width() -> Option<usize> {
    let out = io::stdout();
    if !out.is_terminal() {
        return None;
    }
    let cols = rustix::termios::tcgetwinsize(&out).map_or(0, |w| usize::from(w.ws_col));
    Some(if cols > 0 { cols } else { 80 })
}

/// Type names are counted by at most this many bytes (longer ones by
/// their prefix, marked `…`): with `MAX_KINDS`, the table is bounded in
/// bytes, whatever the input (DESIGN §8).
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

/// The name the run's last event was counted under, and the events since
/// that have the same name, not yet added to its count. Most lines repeat
/// the type of the line before: each then costs one compare of decoded
/// bytes, with no UTF-8 check and no map lookup. Equal decoded bytes give
/// the same name, so the count is the one `bump` would have kept.
struct Last {
    decoded: Vec<u8>,
    framework: bool,
    key: String,
    pending: u64,
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
    ) {
        if protocol == Protocol::Afdata {
            self.afdata(ev, line);
        }
        let text = |k: &str| ev.get(k).and_then(|v| v.as_str()).map(|s| s.into_owned());
        let aoi_type = ev.ty_bytes();
        // Most streams count by `type`: decoded once for both uses.
        let counted = match type_field {
            "type" => aoi_type.clone(),
            field => ev.get(field).and_then(|v| v.decoded()),
        };
        match (&mut self.last, counted) {
            (Some(last), Some(d)) if last.decoded == *d => last.pending += 1,
            (_, counted) => {
                self.flush();
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
                self.last = counted.zip(key).map(|(d, key)| Last {
                    decoded: d.into_owned(),
                    framework,
                    key,
                    pending: 0,
                });
            }
        }
        let mut room = Room {
            left,
            taken: &mut self.kept,
        };
        match aoi_type.as_deref() {
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
                        // Bounded, one line (DESIGN §8).
                        first_message: one_line(&text("message").unwrap_or_default()),
                        first_line: line,
                    });
                }
            }
            Some(b"aoi:summary") => {
                let flag = |k: &str| ev.get(k).and_then(|v| v.as_bool());
                self.summary_identity = ev.get("tool_version").is_some();
                self.outcome = Some(Outcome {
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

impl Stats {
    /// Add the counts `last` holds to its map: before the name changes,
    /// and before the counts are read.
    fn flush(&mut self) {
        if let Some(last) = self.last.as_mut().filter(|l| l.pending > 0) {
            let map = if last.framework {
                &mut self.framework
            } else {
                &mut self.domain
            };
            *map.get_mut(&last.key).expect("counted under its own name") += last.pending;
            last.pending = 0;
        }
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
                self.outcome = Some(Outcome {
                    ok: Some(true),
                    ..Outcome::default()
                });
            }
            "error" => {
                self.outcome = Some(Outcome {
                    ok: Some(false),
                    reason: Some("error".into()),
                    ..Outcome::default()
                });
                let payload = ev.get("error");
                let text = |k: &str| {
                    payload
                        .and_then(|p| p.field(k))
                        .and_then(|v| v.as_str())
                        .map(|s| s.into_owned())
                };
                if self.errors.len() < MAX_KINDS {
                    self.errors.push(Problem {
                        category: "-".into(),
                        code: text("code").unwrap_or_else(|| "-".into()),
                        count: 1,
                        first_message: one_line(&text("message").unwrap_or_default()),
                        first_line: line,
                    });
                }
            }
            _ => {}
        }
    }
}

impl Consumer for Summarize<'_> {
    fn line(&mut self, check: &mut Checker, line: &Line<'_>, report: &mut Report) -> Result<Seen> {
        let mut held = Held {
            tally: Some(report),
            runs: vec![],
        };
        let seen = check.judge(line, &mut held)?;
        let Held { tally, runs: done } = held;
        let report = tally.expect("given above");
        let number = check.line_number();
        let st = self.stats.get(check.run_of_last_line(), Stats::default);
        if !matches!(line, Line::Unterminated { .. }) {
            st.lines += 1;
        }
        st.bytes += line.input_bytes();
        if let Some(ev) = line.event() {
            // Counted by the protocol's discriminator: AFDATA's is `kind`.
            let field = match seen.protocol {
                Protocol::Afdata if self.type_field == "type" => "kind",
                _ => self.type_field,
            };
            st.event(&ev, field, number, seen.protocol, &mut self.room);
        }
        for r in done {
            self.emit(&r, report)?;
        }
        Ok(seen)
    }

    fn end_input(&mut self, check: Checker, report: &mut Report) -> Result<()> {
        let mut held = Held {
            tally: Some(report),
            runs: vec![],
        };
        check.finish(&mut held)?;
        let Held { tally, runs: done } = held;
        let report = tally.expect("given above");
        for r in done {
            self.emit(&r, report)?;
        }
        Ok(())
    }

    /// `--output json` is one document, however many inputs: its end.
    fn end_all(&mut self, report: &mut Report) -> Result<()> {
        if report.out.format() == Format::Json {
            self.json_head(report)?;
            report.out.raw(b"]}\n")?;
        }
        Ok(())
    }
}

impl Summarize<'_> {
    fn emit(&mut self, r: &RunVerdict, report: &mut Report) -> io::Result<()> {
        report.tally.run(r);
        let mut st = self.stats.remove(&RunKey::of_report(r)).unwrap_or_default();
        st.flush();
        self.room += st.kept;
        match report.out.format() {
            // Refused on the command line (tap is for verify and run).
            Format::Human | Format::Tap => {
                let block = human_block(r, &st, &report.out.file, report.out.color(), self.width);
                report.out.text(&block)
            }
            Format::Jsonl => report
                .out
                .domain("run_summary", RunSummary::of(None, r, &st)),
            Format::Json => {
                // Written as it is judged, not held to the end: the
                // document costs one run's bytes, whatever the number of
                // runs (DESIGN §13). Through a `Value`, whose members are
                // in name order, as the document's runs have always been.
                let run = RunSummary::of(Some(&report.out.file), r, &st);
                let run = serde_json::to_value(run).map_err(io::Error::other)?;
                let written = self.json_head(report)?;
                let mut bytes = if written > 0 { vec![b','] } else { vec![] };
                serde_json::to_writer(&mut bytes, &run).map_err(io::Error::other)?;
                self.runs_written = Some(written + 1);
                report.out.raw(&bytes)
            }
        }
    }

    /// `--output json`: the document up to its `runs` array's first
    /// element, once; returns the runs written since.
    fn json_head(&mut self, report: &mut Report) -> io::Result<u64> {
        if let Some(n) = self.runs_written {
            return Ok(n);
        }
        let head = Head {
            tool: crate::output::TOOL,
            tool_version: crate::output::TOOL_VERSION,
            schema_name: crate::output::SCHEMA_NAME,
            schema_version: crate::output::SCHEMA_VERSION,
        };
        let mut bytes = serde_json::to_vec(&head).map_err(io::Error::other)?;
        // `{..}` opened again for the array, the last member.
        bytes.pop();
        bytes.extend_from_slice(br#","runs":["#);
        report.out.raw(&bytes)?;
        self.runs_written = Some(0);
        Ok(0)
    }
}

/// `--output json`: the members of the document before `runs`, the
/// array of every run judged, which comes last and is written run by run.
#[derive(Serialize)]
struct Head {
    tool: &'static str,
    tool_version: &'static str,
    schema_name: &'static str,
    schema_version: &'static str,
}

/// A `run_summary` event (also each run of `--output json`, with `file`).
#[derive(Serialize)]
struct RunSummary<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<&'a str>,
    first_line: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    aoi_version: Option<&'a str>,
    lines: u64,
    bytes: u64,
    domain_types: &'a BTreeMap<String, u64>,
    framework_types: &'a BTreeMap<String, u64>,
    warnings: &'a [Problem],
    errors: &'a [Problem],
    #[serde(skip_serializing_if = "Option::is_none")]
    outcome: Option<&'a Outcome>,
    seq: SeqShape,
    protocol: &'a str,
    verdict: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct SeqShape {
    numbered: bool,
    complete: bool,
    missing: u64,
    repeats: u64,
}

impl<'a> RunSummary<'a> {
    fn of(file: Option<&'a str>, r: &'a RunVerdict, st: &'a Stats) -> RunSummary<'a> {
        let id =
            |f: fn(&Identity) -> &Option<String>| r.identity.as_ref().and_then(|i| f(i).as_deref());
        RunSummary {
            file,
            run: r.run.as_deref(),
            first_line: r.first_line,
            tool: id(|i| &i.tool),
            tool_version: id(|i| &i.tool_version),
            command: id(|i| &i.command),
            schema_name: id(|i| &i.schema_name),
            schema_version: id(|i| &i.schema_version),
            aoi_version: id(|i| &i.aoi_version),
            lines: st.lines,
            bytes: st.bytes,
            domain_types: &st.domain,
            framework_types: &st.framework,
            warnings: &st.warnings,
            errors: &st.errors,
            outcome: st.outcome.as_ref(),
            seq: SeqShape {
                numbered: r.uses_seq,
                complete: r.uses_seq && r.missing == 0 && r.repeats == 0,
                missing: r.missing,
                repeats: r.repeats,
            },
            protocol: r.protocol.name(),
            verdict: r.verdict.name(),
            message: &r.message,
        }
    }
}

/// A block per run, cut to `width` columns on a terminal (never in a
/// pipe, where a reader wants every name whole).
fn human_block(
    r: &RunVerdict,
    st: &Stats,
    file: &str,
    color: bool,
    width: Option<usize>,
) -> String {
    let fit = |s: &str, room: usize| match width {
        Some(w) => fit(s, (room + w).saturating_sub(80).max(20)),
        None => s.to_string(),
    };
    let paint = |text: &str, style| style::paint(color, style, text);
    let (word, code) = human::verdict(r.verdict);
    let who = human::run_name(r);
    let place = format!("{who} ({}:{})", clean(file), r.first_line);
    let mut out = format!("{}  {}\n", fit(&place, 62), paint(word, code));
    let mut row = |label: &str, value: String| {
        if !value.is_empty() {
            // Every value may come from the input: no control byte
            // reaches the terminal (DESIGN §8).
            out.push_str(&format!("  {label:<10} {}\n", fit(&clean(&value), 66)));
        }
    };
    let id = r.identity.clone().unwrap_or_default();
    let joined = |parts: &[&Option<String>]| {
        parts
            .iter()
            .filter_map(|p| p.as_deref())
            .collect::<Vec<_>>()
            .join(" ")
    };
    row("tool", joined(&[&id.tool, &id.tool_version, &id.command]));
    let Identity {
        schema_name,
        schema_version,
        aoi_version,
        ..
    } = &id;
    let aoi = aoi_version.as_ref().map(|v| format!("(aoi {v})"));
    row("schema", joined(&[schema_name, schema_version, &aoi]));
    if r.protocol != Protocol::Aoi {
        row("protocol", r.protocol.name().to_string());
    }
    let seq = if !r.uses_seq {
        "no seq: cuts in the middle cannot be seen".to_string()
    } else if r.missing == 0 && r.repeats == 0 {
        "seq complete".to_string()
    } else {
        let mut s = format!("{} missing", plural(r.missing, "event"));
        if r.repeats > 0 {
            s.push_str(&format!(", {} repeated", r.repeats));
        }
        s
    };
    row(
        "lines",
        format!("{} ({}), {seq}", st.lines, bytes_text(st.bytes)),
    );
    let list = |m: &BTreeMap<String, u64>| {
        m.iter()
            .map(|(k, v)| format!("{} {v}", clean(k)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    row("domain", list(&st.domain));
    row("framework", list(&st.framework));
    let problems = |ps: &[Problem]| {
        ps.iter()
            .map(|p| {
                format!(
                    "{}/{} x{} \"{}\" (line {})",
                    p.category,
                    p.code,
                    p.count,
                    clean(&p.first_message),
                    p.first_line
                )
            })
            .collect::<Vec<_>>()
    };
    for (label, items) in [
        ("warnings", problems(&st.warnings)),
        ("errors", problems(&st.errors)),
    ] {
        for (i, item) in items.iter().enumerate() {
            row(if i == 0 { label } else { "" }, clean(item));
        }
    }
    if let Some(o) = &st.outcome {
        let mut parts = vec![];
        match o.ok {
            Some(true) => parts.push("ok".to_string()),
            Some(false) => parts.push(format!(
                "not ok ({})",
                o.reason.as_deref().unwrap_or("no reason")
            )),
            None => parts.push("ok missing".to_string()),
        }
        if o.partial == Some(true) {
            parts.push("partial".into());
        }
        if o.truncated == Some(true) {
            parts.push(
                if o.next_cursor {
                    "truncated, more with cursor"
                } else {
                    "truncated"
                }
                .into(),
            );
        }
        if let Some(ms) = o.elapsed_ms {
            parts.push(format!("{ms} ms"));
        }
        row("outcome", parts.join(", "));
    } else {
        row("outcome", "no aoi:summary".to_string());
    }
    if r.verdict != Verdict::Pass {
        row("verdict", clean(&r.message));
    }
    out.push('\n');
    out
}

fn bytes_text(n: u64) -> String {
    match n {
        0..1024 => plural(n, "byte"),
        1024..1_048_576 => format!("{:.1} KiB", n as f64 / 1024.0),
        _ => format!("{:.1} MiB", n as f64 / 1_048_576.0),
    }
}

/// Cut to `width` characters, with an ellipsis.
fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut t: String = s.chars().take(width - 1).collect();
    t.push('…');
    t
}

//! summarize's report of a run (DESIGN §6): the human block, the
//! `run_summary` event, and `--output json`'s one document, written run by
//! run so that it holds no more than the other outputs (DESIGN §13).

use std::collections::BTreeMap;
use std::io::{self, IsTerminal};

use serde::Serialize;

use crate::check::{Identity, Protocol, RunVerdict, Verdict};
use crate::output::identity::{SCHEMA_NAME, SCHEMA_VERSION, TOOL, TOOL_VERSION};
use crate::output::{human, style};
use crate::text::{clean, plural};

/// What summarize counted of one run, as its reports show it.
pub struct Counted<'a> {
    pub lines: u64,
    pub bytes: u64,
    pub domain: &'a BTreeMap<String, u64>,
    pub framework: &'a BTreeMap<String, u64>,
    pub warnings: &'a [Problem],
    pub errors: &'a [Problem],
    pub outcome: Option<&'a Outcome>,
}

/// A warning or error code of a run: how often, and where first.
#[derive(Serialize)]
pub struct Problem {
    pub category: String,
    pub code: String,
    pub count: u64,
    pub first_message: String,
    pub first_line: u64,
}

/// How the run said it ended: its `aoi:summary`, or AFDATA's terminal
/// event.
#[derive(Default, Serialize)]
pub struct Outcome {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    pub next_cursor: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
}

/// The width of the terminal on standard output, if it is one.
pub fn terminal_width() -> Option<usize> {
    let out = io::stdout();
    if !out.is_terminal() {
        return None;
    }
    let cols = rustix::termios::tcgetwinsize(&out).map_or(0, |w| usize::from(w.ws_col));
    Some(if cols > 0 { cols } else { 80 })
}

/// `--output json`: the document up to its `runs` array's first element.
pub fn json_head() -> io::Result<Vec<u8>> {
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
pub fn json_run(file: &str, r: &RunVerdict, c: &Counted<'_>, first: bool) -> io::Result<Vec<u8>> {
    let run = serde_json::to_value(RunSummary::of(Some(file), r, c)).map_err(io::Error::other)?;
    let mut bytes = if first { vec![] } else { vec![b','] };
    serde_json::to_writer(&mut bytes, &run).map_err(io::Error::other)?;
    Ok(bytes)
}

/// `--output json`: the end of the `runs` array and of the document.
pub const JSON_END: &[u8] = b"]}\n";

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
pub struct RunSummary<'a> {
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
    pub fn of(file: Option<&'a str>, r: &'a RunVerdict, c: &Counted<'a>) -> RunSummary<'a> {
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
            lines: c.lines,
            bytes: c.bytes,
            domain_types: c.domain,
            framework_types: c.framework,
            warnings: c.warnings,
            errors: c.errors,
            outcome: c.outcome,
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
pub fn human_block(
    r: &RunVerdict,
    st: &Counted<'_>,
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
    row("domain", list(st.domain));
    row("framework", list(st.framework));
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
        ("warnings", problems(st.warnings)),
        ("errors", problems(st.errors)),
    ] {
        for (i, item) in items.iter().enumerate() {
            row(if i == 0 { label } else { "" }, clean(item));
        }
    }
    if let Some(o) = st.outcome {
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

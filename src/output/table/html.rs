//! `--output html` (summarize, reconcile; docs/contract.md §5.4): one page a
//! person opens, written run by run as the runs end, so it holds no more
//! than the other outputs. Each input is a table of runs whose last column
//! is the timeline: a run's bar spans its first to its last line, coloured
//! by its verdict, with its gaps and its cut marked where they fall. The
//! overall verdict is written last and shown first (CSS `order`); the
//! timeline's width, each input's last line, is a CSS variable set when
//! its table ends. Every value from the input is cut, made visible
//! (`text::clean`: controls and bidi marks) and escaped; the page loads
//! nothing, and its policy lets run only the one script it carries (which
//! sorts the table), so a value that got through escaping could not run.
//! Rows are written as runs end; the script opens the page on its
//! failures, each verdict's runs in the order they began. Reconcile's
//! tables carry the seq coverage its terminal output draws.

use std::collections::HashMap;
use std::io::{self, Write};

use super::human::{push_outcome, reconciled_word};
use super::{Reconciled, Summarized, Table};
use crate::check::rules::{Rule, Severity};
use crate::check::{Finding, Identity, Tally, Verdict};
use crate::exit::Exit;
use crate::output::human;
use crate::output::printer::{At, Carries, Local, Printer};
use crate::output::reconcile::{Account, BAR_CELLS};
use crate::output::words;
use crate::text::{clean, plural, prefix};

/// Runs drawn, at most; past `MAX_DRAWN_ANY` only runs that did not pass
/// are drawn. The rest are counted by verdict: a page for 100,000 runs
/// stays a few megabytes (docs/contract.md §5.4).
const MAX_DRAWN: u64 = 10_000;
const MAX_DRAWN_ANY: u64 = 5_000;
/// Findings listed under a run; more are counted.
const MAX_LISTED: usize = 10;
/// Findings held for runs not yet reported, over all of them; past it
/// they are counted (docs/contract.md §3.2: state bounded).
const MAX_HELD: usize = 20_000;
/// Runs findings are held for at once (as many as may be open).
const MAX_HOLDING: usize = 32_768;
/// Marks on one run's bar, at most.
const MAX_MARKS: usize = 32;
/// Bytes of rows a page holds, at most: whatever the input's values
/// escape to, the page stays under 20 MB; runs past it are counted as
/// those past `MAX_DRAWN` are.
const MAX_ROW_BYTES: u64 = 16 << 20;
/// Notes (what aoitap said beside the runs), and findings of no open
/// run, kept for the page's head.
const MAX_NOTES: usize = 100;
/// Bytes of any one value shown; a finding's message is shown whole (it
/// is one bounded line already, docs/contract.md §3.2).
const SHOWN: usize = 160;
const MESSAGE: usize = 512;

/// The page's one script: sorts a table by the column whose head is
/// clicked (numbers by `data-v`, text without regard to case; again: the
/// other way), and by `#sort-N` in the address (N from 0), so a sorted
/// view can be linked (and tested); with no `#sort-N`, by verdict, worst
/// first, so failures are read first (docs/contract.md §5.4). Rows alike
/// keep the order their runs began (the timeline's first line): rows are
/// written as runs end, and a cut run ends only with its input. Its
/// SHA-256 is in the policy:
/// changing it means changing `SCRIPT_HASH` (tests/html.rs renders it).
const SCRIPT: &str = r#"document.documentElement.dataset.sorts="1";function aoiSort(th,dir){var t=th.closest("table"),i=th.cellIndex,num=th.hasAttribute("data-num"),d=dir||(th.dataset.dir==="1"?-1:1);Array.prototype.forEach.call(th.parentNode.cells,function(c){delete c.dataset.dir});th.dataset.dir=d===1?"1":"-1";var key=function(e){var c=e.rows[0].cells;return[num?+c[i].dataset.v:c[i].textContent.toLowerCase(),+c[c.length-1].dataset.v]};var b=Array.prototype.slice.call(t.tBodies).map(function(e){return[key(e),e]});b.sort(function(x,y){var p=x[0],q=y[0];return(p[0]<q[0]?-1:p[0]>q[0]?1:0)*d||p[1]-q[1]});b.forEach(function(e){t.appendChild(e[1])})}document.querySelectorAll("table.runs th").forEach(function(th){th.addEventListener("click",function(){aoiSort(th)})});var m=/^#sort-(\d+)$/.exec(location.hash);document.querySelectorAll("table.runs").forEach(function(t){var h=t.tHead.rows[0].cells,th=m?h[+m[1]]:t.tHead.querySelector("th.verdict");if(th)aoiSort(th,m?1:-1)});"#;
const SCRIPT_HASH: &str = "sha256-OZXgpttTqoJ+XDVeDRgMqCvzYEvTdeXcDgKdoo0V0L4=";

const STYLE: &str = "\
:root{color-scheme:light dark;font:14px/1.4 system-ui,sans-serif}\
body{margin:0}main{display:flex;flex-direction:column;gap:12px;padding:12px 16px}\
#verdict{order:-2;padding:8px 16px;border-left:10px solid var(--c);background:#8881}\
#verdict h1{margin:0;font-size:24px;color:var(--c)}#verdict p{margin:4px 0}#notes{order:-1}\
.pass{--c:#1a7f37}.failed,.fail{--c:#cf222e}.retryable,.cancelled,.timeout{--c:#bf8700}.nonconforming{--c:#8250df}\
h2{font-size:16px;margin:8px 0}table.runs{border-collapse:collapse;width:100%;table-layout:fixed}\
th:nth-child(1){width:16%}th:nth-child(2),th:nth-child(3),th:nth-child(6){width:10%}\
th:nth-child(4),th:nth-child(7){width:5%}th:nth-child(5){width:9%}\
th{text-align:left;cursor:pointer;position:sticky;top:0;background:Canvas;border-bottom:2px solid #8888;user-select:none}\
th[data-dir=\"1\"]::before{content:\"\\25B2 \"}th[data-dir=\"-1\"]::before{content:\"\\25BC \"}\
td{padding:2px 6px;border-top:1px solid #8883;vertical-align:top;overflow-wrap:anywhere}\
td.v{color:var(--c);font-weight:600}.track{position:relative;height:18px}\
.bar{height:14px;margin-top:2px;background:var(--c);\
margin-left:min(calc(var(--a)/var(--total)*100%),calc(100% - 8px));\
width:max(8px,calc((var(--b) - var(--a))/var(--total)*100%))}\
table.seq th:nth-child(1){width:12%}table.seq th:nth-child(7){width:7%}table.seq th:nth-child(8){width:16%}\
.seqbar{display:flex;height:10px;margin:4px 0 2px}.seqbar b.p{background:CanvasText}\
.seqbar b.h{background:#8888}.seqbar b.m{background:#8882;outline:1px solid #8886;outline-offset:-1px}\
.track i{position:absolute;top:1px;left:calc(var(--at)/var(--total)*100%);transform:translateX(-50%)}\
i.gap,i.cut{display:inline-block;height:16px;width:3px;vertical-align:middle}i.gap{background:CanvasText}\
i.cut{background:repeating-linear-gradient(0deg,var(--c,GrayText) 0 3px,Canvas 3px 6px);width:6px}.track i.cut{transform:translateX(-100%)}\
.legend span{display:inline-block;width:14px;height:10px;margin:0 4px 0 12px;background:var(--c)}.legend i{margin:0 4px 0 12px}\
tr.findings td{border-top:0;padding-left:24px;font-size:12px}tr.findings ul{margin:0;padding-left:16px}\
code{font-size:12px}.note{font-family:monospace;white-space:pre-wrap;margin:2px 0}";

/// What is held of a run's findings until the run is reported.
#[derive(Default)]
struct Held {
    listed: Vec<Listed>,
    /// Every finding of the run, listed or not.
    count: u64,
    /// Where lines of it were lost (a mark on its bar; whether a seq gap
    /// said so), and whether its end never came.
    marks: Vec<(u64, bool)>,
    cut: bool,
}

struct Listed {
    line: u64,
    rule: Rule,
    severity: Severity,
    message: String,
}

/// A run's findings are held under its id and first line: runs without
/// an id are told apart by the line alone.
type RunOf = (Option<String>, u64);

pub struct Html<W> {
    out: W,
    /// The input whose table is open.
    file: Option<String>,
    tables: u32,
    /// The last line a bar of the open table reaches: its timeline's width.
    extent: u64,
    drawn: u64,
    not_drawn: [u64; 4],
    /// Bytes of rows written.
    row_bytes: u64,
    held: HashMap<RunOf, Held>,
    /// Findings listed in `held`, over all runs.
    holding: usize,
    /// Findings of no open run (a late line's, the input's), the first of
    /// them kept, and their count.
    loose: Vec<Listed>,
    unplaced: u64,
    /// Findings of open runs past the `MAX_HOLDING` whose are held:
    /// counted in the result line only.
    unheld: u64,
    notes: Vec<String>,
    /// Notes past `MAX_NOTES`.
    more_notes: u64,
}

/// One run's row, as summarize and reconcile give it.
struct Row<'a> {
    name: Option<&'a str>,
    first_line: u64,
    last_line: u64,
    identity: Option<&'a Identity>,
    lines: u64,
    verdict: Verdict,
    outcome: String,
    /// Why it did not pass, when it did not.
    why: Option<&'a str>,
    /// Lines after which events are missing, from the command's own
    /// accounting (reconcile's), beside the findings'.
    gaps: Vec<u64>,
    /// Reconcile's seq coverage, as its terminal output draws it: the
    /// bar and what it says, and what the column sorts by.
    seq: Option<(String, f64)>,
}

/// A run's `<tbody>`, opened, and the cells of its row: its name, tool,
/// command, lines, verdict, outcome and how many findings it has, and
/// reconcile's seq coverage when it has one.
fn push_cells(s: &mut String, r: &Row<'_>, held_count: u64) {
    s.push_str("<tbody class=\"run ");
    s.push_str(r.verdict.name());
    s.push_str("\"><tr><td class=\"id\">");
    match r.name {
        Some(n) => esc(s, n),
        None => s.push_str(&format!("(from line {})", r.first_line)),
    }
    let id = r.identity;
    let tool = id.map(|i| {
        [i.tool.as_deref(), i.tool_version.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ")
    });
    s.push_str("</td><td>");
    esc(s, tool.as_deref().unwrap_or(""));
    s.push_str("</td><td>");
    esc(s, id.and_then(|i| i.command.as_deref()).unwrap_or(""));
    let (word, _) = human::verdict(r.verdict);
    s.push_str(&format!(
        "</td><td data-v=\"{lines}\">{lines}</td><td class=\"v\" data-v=\"{}\">{word}</td><td>",
        rank(r.verdict),
        lines = r.lines,
    ));
    esc(s, &r.outcome);
    s.push_str(&format!("</td><td data-v=\"{n}\">{n}", n = held_count));
    if let Some((seq, sorts)) = &r.seq {
        s.push_str(&format!("</td><td data-v=\"{sorts}\">{seq}"));
    }
}

/// A run's track: the bar of its lines within the input's, a mark where
/// lines were lost inside it, and a cut where its end never came.
fn push_track(s: &mut String, r: &Row<'_>, held: &Held, first: u64, last: u64) {
    s.push_str(&format!(
        "</td><td data-v=\"{first}\"><div class=\"track\">\
         <div class=\"bar\" style=\"--a:{first};--b:{last}\" title=\"lines {} to {last}\"></div>",
        first + 1,
    ));
    // A gap lies before the line that found it. Marks a line apart
    // are one (an elision marker and the seq gap it stands for).
    let found = held.marks.iter().map(|m| m.0);
    let mut marks: Vec<u64> = r.gaps.iter().copied().chain(found).collect();
    marks.sort_unstable();
    marks.dedup_by(|b, a| *b <= *a + 1);
    for at in marks.into_iter().take(MAX_MARKS) {
        s.push_str(&format!("<i class=\"gap\" style=\"--at:{at}\"></i>"));
    }
    if held.cut {
        s.push_str(&format!("<i class=\"cut\" style=\"--at:{last}\"></i>"));
    }
    s.push_str("</div></td></tr>");
}

/// The row under a run that did not pass, or has findings: why, and the
/// findings listed, with how many more there were.
fn push_findings(s: &mut String, r: &Row<'_>, held: &Held) {
    let more = held.count - held.listed.len() as u64;
    if r.why.is_some() || held.count > 0 {
        let columns = if r.seq.is_some() { 9 } else { 8 };
        s.push_str(&format!(
            "<tr class=\"findings\"><td colspan=\"{columns}\">"
        ));
        if let Some(why) = r.why {
            esc_message(s, why);
        }
        s.push_str("<ul>");
        for l in &held.listed {
            list(s, l);
        }
        if more > 0 {
            s.push_str(&format!("<li>{} more</li>", plural(more, "finding")));
        }
        s.push_str("</ul></td></tr>");
    }
}

/// Rules that say lines of a run were lost in its middle, marked on its
/// bar where they were found (seq gaps too, for summarize: reconcile
/// marks its own accounting of them).
fn lost_inside(rule: Rule) -> bool {
    matches!(rule, Rule::LineElided | Rule::LineTooLong) || seq_lost(rule)
}

fn seq_lost(rule: Rule) -> bool {
    matches!(rule, Rule::SeqGap | Rule::SeqNotFromZero)
}

/// Rules that say a run's end never came: its bar ends in a cut.
fn cut_at_end(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::SummaryMissing
            | Rule::AfdataTerminalMissing
            | Rule::AiocsDocumentCut
            | Rule::AiocsDocumentMissing
            | Rule::OkfDocumentCut
            | Rule::LineUnterminated
    )
}

/// How bad a verdict is, for sorting by it.
fn rank(v: Verdict) -> u8 {
    match v {
        Verdict::Pass => 0,
        Verdict::Retryable => 1,
        Verdict::Failed => 2,
        Verdict::Nonconforming => 3,
    }
}

impl<W: Write> Html<W> {
    pub fn new(out: W) -> Html<W> {
        Html {
            out,
            file: None,
            tables: 0,
            extent: 0,
            drawn: 0,
            not_drawn: [0; 4],
            row_bytes: 0,
            held: HashMap::new(),
            holding: 0,
            loose: vec![],
            unplaced: 0,
            unheld: 0,
            notes: vec![],
            more_notes: 0,
        }
    }

    /// Write a run's row, or count it past the cap.
    fn row(&mut self, at: &At<'_>, r: Row<'_>) -> io::Result<()> {
        let held = self
            .held
            .remove(&(r.name.map(str::to_string), r.first_line))
            .unwrap_or_default();
        self.holding -= held.listed.len();
        let drawn =
            self.drawn < MAX_DRAWN_ANY || (r.verdict != Verdict::Pass && self.drawn < MAX_DRAWN);
        if !drawn {
            self.not_drawn[r.verdict as usize] += 1;
            return Ok(());
        }
        self.drawn += 1;
        let mut s = String::with_capacity(1024);
        let (first, last) = (r.first_line.max(1) - 1, r.last_line.max(r.first_line));
        push_cells(&mut s, &r, held.count);
        push_track(&mut s, &r, &held, first, last);
        push_findings(&mut s, &r, &held);
        s.push_str("</tbody>\n");
        if self.row_bytes + s.len() as u64 > MAX_ROW_BYTES {
            self.drawn -= 1;
            self.not_drawn[r.verdict as usize] += 1;
            return Ok(());
        }
        self.row_bytes += s.len() as u64;
        if self.file.as_deref() != Some(at.file) {
            let mut table = String::new();
            self.close_table(&mut table);
            self.open_table(&mut table, at.file, r.seq.is_some());
            self.out.write_all(table.as_bytes())?;
        }
        self.extent = self.extent.max(last);
        self.out.write_all(s.as_bytes())
    }

    /// A table's head; reconcile's (`seq`) has a column for the seq
    /// coverage its terminal output draws.
    fn open_table(&mut self, s: &mut String, file: &str, seq: bool) {
        self.tables += 1;
        self.file = Some(file.to_string());
        self.extent = 1;
        s.push_str(&format!(
            "<section class=\"input\" id=\"input-{}\"><h2>",
            self.tables
        ));
        esc(s, file);
        let (class, seq) = match seq {
            true => (" seq", "<th data-num>seq</th>"),
            false => ("", ""),
        };
        s.push_str(&format!(
            "</h2><table class=\"runs{class}\"><thead><tr><th>run</th><th>tool</th><th>command</th>\
             <th data-num>lines</th><th data-num class=\"verdict\">verdict</th><th>outcome</th>\
             <th data-num>findings</th>{seq}<th data-num class=\"tl\">timeline: lines</th></tr></thead>\n",
        ));
    }

    /// End the open table: its timeline's width is now known, and said
    /// in its head.
    fn close_table(&mut self, s: &mut String) {
        if self.file.take().is_some() {
            s.push_str(&format!(
                "</table><style>#input-{n}{{--total:{e}}}#input-{n} th.tl::after{{content:\" 1 to {e}\"}}</style></section>\n",
                n = self.tables,
                e = self.extent
            ));
        }
    }
}

/// Reconcile's seq coverage as its terminal output draws it: its bar's
/// cells (present, missing, partly), drawn as blocks that fill the
/// column, a run of like cells one block, the bar's text in its title;
/// how many of the space are present; and the share present, which the
/// column sorts by (-1: no seq to count).
fn seq_coverage(a: &Account<'_>) -> (String, f64) {
    if !a.seq.started() {
        return ("unverifiable: no seq".to_string(), -1.0);
    }
    let (space, present) = (a.space(), a.present_count());
    let mut bar = String::new();
    a.push_bar(&mut bar, BAR_CELLS);
    let mut cell = format!(
        "<div class=\"seqbar\" title=\"seq 0..{} {bar}\">",
        space.saturating_sub(1)
    );
    let mut cells = bar.chars().peekable();
    while let Some(c) = cells.next() {
        let mut n = 1;
        while cells.next_if_eq(&c).is_some() {
            n += 1;
        }
        let class = match c {
            '█' => "p",
            '░' => "m",
            _ => "h",
        };
        cell.push_str(&format!("<b class=\"{class}\" style=\"flex:{n}\"></b>"));
    }
    cell.push_str(&format!("</div>{present} of {space} present"));
    (cell, present as f64 / space.max(1) as f64)
}

/// A listed finding: its line, severity, rule and message.
fn list(s: &mut String, l: &Listed) {
    s.push_str("<li>");
    if l.line > 0 {
        s.push_str(&format!("line {} ", l.line));
    }
    s.push_str(&format!(
        "{}[<code>{}</code>]: ",
        human::severity(l.severity).0,
        l.rule
    ));
    esc_message(s, &l.message);
    s.push_str("</li>");
}

/// `s` as HTML text or a quoted attribute's value: at most `SHOWN` bytes,
/// controls and bidi marks shown as escapes (so no value reorders the
/// page or hides a character), and the five characters HTML gives a
/// meaning escaped.
pub fn esc(out: &mut String, s: &str) {
    esc_to(out, s, SHOWN);
}

/// A message of aoitap's (which quotes the input): as `esc`, whole.
fn esc_message(out: &mut String, s: &str) {
    esc_to(out, s, MESSAGE);
}

fn esc_to(out: &mut String, s: &str, max: usize) {
    let cut = prefix(s, max);
    for c in clean(cut).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    if cut.len() < s.len() {
        out.push('…');
    }
}

impl<W: Write> Printer for Html<W> {
    fn carries(&self) -> Carries {
        Carries {
            run_findings: true,
            ..Carries::default()
        }
    }

    fn begin(&mut self, at: &At<'_>) -> io::Result<()> {
        let head = format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
             style-src 'unsafe-inline'; script-src '{SCRIPT_HASH}'\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>aoitap {}</title><style>{STYLE}</style></head>\n<body><main>\n",
            at.command
        );
        self.out.write_all(head.as_bytes())
    }

    fn text(&mut self, _at: &At<'_>, text: &str) -> io::Result<()> {
        if self.notes.len() < MAX_NOTES {
            self.notes.push(text.trim_end().to_string());
        } else {
            self.more_notes += 1;
        }
        Ok(())
    }

    /// Noted on the page, and said on stderr as well.
    fn local(&mut self, at: &At<'_>, l: &Local<'_>) -> io::Result<()> {
        self.text(at, &format!("{}: {}", l.code, l.message))
    }

    fn end(&mut self, at: &At<'_>, exit: Exit, tally: &Tally) -> io::Result<()> {
        let mut s = String::with_capacity(4096);
        self.close_table(&mut s);
        let result = words::worded(at, exit, tally);
        let (word, _) = words::word(exit, at.timed_out());
        s.push_str(&format!(
            "<header id=\"verdict\" class=\"{}\"><h1>{word}</h1><p>",
            word.to_ascii_lowercase()
        ));
        esc_message(&mut s, &result);
        s.push_str("</p>");
        let left: u64 = self.not_drawn.iter().sum();
        if left > 0 {
            let by: Vec<String> = [
                Verdict::Pass,
                Verdict::Failed,
                Verdict::Retryable,
                Verdict::Nonconforming,
            ]
            .into_iter()
            .filter(|&v| self.not_drawn[v as usize] > 0)
            .map(|v| format!("{} {}", self.not_drawn[v as usize], v.name()))
            .collect();
            s.push_str(&format!(
                "<p id=\"not-drawn\">{} not drawn ({}): a page draws {MAX_DRAWN} runs at most \
                 (past {MAX_DRAWN_ANY}, only those that did not pass) in {} MiB at most</p>",
                plural(left, "more run"),
                by.join(", "),
                MAX_ROW_BYTES >> 20
            ));
        }
        let dropped = words::dropped(at);
        if !dropped.is_empty() {
            s.push_str("<p>");
            esc_message(&mut s, dropped.trim_end());
            s.push_str("</p>");
        }
        s.push_str(
            "<p class=\"legend\">bars, a run's first line to its last:<span class=\"pass\"></span>passed\
             <span class=\"failed\"></span>failed<span class=\"retryable\"></span>retryable\
             <span class=\"nonconforming\"></span>not conforming<i class=\"gap\"></i>lines lost there\
             <i class=\"cut\"></i>cut: its end never came. A click on a column's head sorts by it.</p>",
        );
        s.push_str("</header>\n");
        if !self.notes.is_empty() || self.unplaced > 0 || self.unheld > 0 {
            s.push_str("<section id=\"notes\">");
            for n in &self.notes {
                s.push_str("<p class=\"note\">");
                esc_message(&mut s, n);
                s.push_str("</p>");
            }
            if self.more_notes > 0 {
                s.push_str(&format!(
                    "<p>{} not shown (the page shows {MAX_NOTES})</p>",
                    plural(self.more_notes, "more note")
                ));
            }
            if self.unheld > 0 {
                s.push_str(&format!(
                    "<p>{} of runs open past the {MAX_HOLDING} whose findings a page holds: \
                     counted in the result line, not under their runs</p>",
                    plural(self.unheld, "finding")
                ));
            }
            if self.unplaced > 0 {
                s.push_str(&format!(
                    "<p>{} of no open run (a run already judged, or none):</p><ul>",
                    plural(self.unplaced, "finding")
                ));
                for l in &self.loose {
                    list(&mut s, l);
                }
                s.push_str("</ul>");
            }
            s.push_str("</section>\n");
        }
        s.push_str(&format!("</main><script>{SCRIPT}</script></body></html>\n"));
        self.out.write_all(s.as_bytes())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl<W: Write> Table for Html<W> {
    fn run_finding(&mut self, f: &Finding, listed: bool) {
        let kept = || Listed {
            line: f.line,
            rule: f.rule,
            severity: f.severity,
            message: prefix(&f.message, MESSAGE).to_string(),
        };
        let Some(line) = f.run_line else {
            self.unplaced += 1;
            if listed && self.loose.len() < MAX_NOTES {
                self.loose.push(kept());
            }
            return;
        };
        let key = (f.run.clone(), line);
        if !self.held.contains_key(&key) && self.held.len() >= MAX_HOLDING {
            self.unheld += 1;
            return;
        }
        let h = self.held.entry(key).or_default();
        h.count += 1;
        // Kept past what is drawn: adjacent ones merge, and reconcile
        // drops the seq gaps it accounts for itself.
        if lost_inside(f.rule) && f.line > 0 && h.marks.len() < 4 * MAX_MARKS {
            h.marks.push((f.line - 1, seq_lost(f.rule)));
        }
        h.cut |= cut_at_end(f.rule);
        if listed && self.holding < MAX_HELD && h.listed.len() < MAX_LISTED {
            self.holding += 1;
            h.listed.push(kept());
        }
    }

    fn summarized(&mut self, at: &At<'_>, s: &Summarized<'_>) -> io::Result<()> {
        let (r, c) = (s.run, s.counted);
        let mut outcome = String::new();
        // Beside a verdict that is not a pass, what the summary claimed is
        // the producer's word, not aoitap's (docs/contract.md §5.4).
        if r.verdict != Verdict::Pass && c.outcome.is_some() {
            outcome.push_str("producer said: ");
        }
        push_outcome(&mut outcome, c.outcome);
        let row = Row {
            name: r.run.as_deref(),
            first_line: r.first_line,
            last_line: c.last_line,
            identity: r.identity.as_ref(),
            lines: c.lines,
            verdict: r.verdict,
            outcome,
            why: (r.verdict != Verdict::Pass).then_some(r.message.as_str()),
            gaps: vec![],
            seq: None,
        };
        self.row(at, row)
    }

    fn reconciled(&mut self, at: &At<'_>, r: &Reconciled<'_>) -> io::Result<()> {
        let a = r.account;
        let mut outcome = reconciled_word(r.ok, r.verdict).to_lowercase();
        if a.missing > 0 {
            outcome.push_str(&format!(", {} missing", a.missing));
        }
        if a.repeats > 0 {
            outcome.push_str(&format!(", {} repeated", a.repeats));
        }
        let judged = r.judged;
        let row = Row {
            name: r.name,
            first_line: judged.map_or(a.first_line, |j| j.first_line),
            last_line: a.last_line,
            identity: judged.and_then(|j| j.identity.as_ref()),
            lines: a.lines,
            verdict: r.verdict,
            outcome,
            why: judged
                .filter(|j| j.verdict != Verdict::Pass)
                .map(|j| j.message.as_str()),
            // The seq gaps as reconcile accounted them; the findings'
            // own are the same gaps.
            gaps: a.gaps.iter().map(|g| g.after_line).collect(),
            seq: Some(seq_coverage(a)),
        };
        // Its findings' seq gaps are the gaps above.
        if let Some(h) = self
            .held
            .get_mut(&(r.name.map(str::to_string), row.first_line))
        {
            h.marks.retain(|m| !m.1);
        }
        self.row(at, row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever a value holds, what `esc` makes of it is text in any
    /// place of the page: no character HTML gives a meaning, every `&`
    /// an entity of ours, no control or bidi mark, and at most `SHOWN`
    /// bytes of the value (each escaped to at most six, a `…` after).
    #[test]
    fn an_escaped_value_is_only_text() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let mut runner = TestRunner::new(Config::with_cases(crate::proptest_cases() * 4));
        let value = prop_oneof![
            any::<String>(),
            proptest::collection::vec(
                prop_oneof![
                    Just("<".to_string()),
                    Just("&".to_string()),
                    Just("\"".to_string()),
                    Just("'".to_string()),
                    Just("\u{202e}".to_string()),
                    Just("\u{61c}".to_string()),
                    Just("\u{1b}[31m".to_string()),
                    Just("é".to_string()),
                    "[a-z]{1,5}",
                ],
                0..100,
            )
            .prop_map(|v| v.concat()),
        ];
        runner
            .run(&value, |s| {
                let mut out = String::new();
                esc(&mut out, &s);
                prop_assert!(!out.contains(['<', '>', '"', '\'']), "{out:?}");
                for (i, _) in out.match_indices('&') {
                    let rest = &out[i..];
                    prop_assert!(
                        ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"]
                            .iter()
                            .any(|e| rest.starts_with(e)),
                        "{out:?}"
                    );
                }
                prop_assert!(
                    !out.chars().any(|c| c.is_control()
                        || c == '\u{61c}'
                        || ('\u{202a}'..='\u{202e}').contains(&c)),
                    "{out:?}"
                );
                // A `\u{..}` escape of `clean` is 8 bytes for a byte or
                // three of input.
                prop_assert!(out.len() <= SHOWN * 8 + '…'.len_utf8());
                Ok(())
            })
            .unwrap();
    }
}

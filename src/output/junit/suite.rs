//! One `<testsuite>` of the JUnit report (docs/contract.md §5.2, §5.3):
//! its cases as XML, its counts, and the names that make each run's case
//! the same test from one build to the next.
//!
//! The counts of a `<testsuite>` come before its cases, so a suite is
//! written once its last case is known; its cases wait as XML text, in
//! memory up to `SPILL` bytes and in an unnamed temporary file past that,
//! so memory stays bounded however many runs a file holds.
//!
//! A run's case is named by what its `aoi:meta` says (tool and command),
//! not by its run id, which is new on every build; the id is a
//! `<property>` of the suite, named as the case is (neither schema lets a
//! testcase hold properties). Runs of the same tool and command are told
//! apart by their place in the order they began (" #2"), which the same
//! log gives again however its runs interleave. Runs end in another
//! order than they begin, so that place is known only once the suite is
//! whole: each run's name is written without it, where it ends noted
//! (`Mark`), and the suffix put in as the suite is written.

use std::fs::File;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{self, Read, Seek, Write};
use std::time::Duration;

/// A suite's cases (and properties) held in memory before they go to a
/// temporary file.
const SPILL: usize = 1 << 20;

pub(super) struct Case {
    pub(super) name: String,
    pub(super) classname: String,
    pub(super) time: Duration,
    pub(super) outcome: CaseResult,
    /// The findings, for the failure's text or `<system-out>`.
    pub(super) text: String,
    pub(super) reruns: Vec<Report>,
    /// The run's id, kept as a property of the suite.
    pub(super) id: Option<String>,
    /// The run's first line, when its name may be another run's too: it
    /// orders runs of one name as they began.
    pub(super) begun: Option<u64>,
}

impl Case {
    /// A case with no findings, reruns or run of its own.
    pub(super) fn new(name: &str, classname: &str, outcome: CaseResult) -> Case {
        Case {
            name: name.to_string(),
            classname: classname.to_string(),
            time: Duration::ZERO,
            outcome,
            text: String::new(),
            reruns: vec![],
            id: None,
            begun: None,
        }
    }
}

pub(super) enum CaseResult {
    Pass,
    Failure(Report),
    Error(Report),
    Skipped(String),
}

/// What a failure element says: its `type`, `message` and text.
#[derive(Clone)]
pub(super) struct Report {
    pub(super) kind: String,
    pub(super) message: String,
    pub(super) text: String,
}

impl Report {
    pub(super) fn new(kind: &str, message: &str, text: &str) -> Report {
        Report {
            kind: kind.to_string(),
            message: message.to_string(),
            text: text.to_string(),
        }
    }
}

/// XML text waiting to be written: in memory, then in a temporary file.
#[derive(Default)]
struct Spool {
    held: Vec<u8>,
    spilled: Option<File>,
    /// Bytes pushed so far, held or spilled.
    len: u64,
}

impl Spool {
    fn push(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.held.extend_from_slice(bytes);
        self.len += bytes.len() as u64;
        if self.held.len() > SPILL {
            if self.spilled.is_none() {
                // No temporary file (TMPDIR missing, /tmp full): the text
                // waits in memory instead, and the report stays whole.
                self.spilled = tempfile::tempfile().ok();
            }
            if let Some(file) = &mut self.spilled {
                file.write_all(&self.held)?;
                self.held.clear();
            }
        }
        Ok(())
    }

    /// The text, with `inserts` (offset, text; in offset order) put in.
    fn write(self, out: &mut dyn Write, inserts: &[(u64, &str)]) -> io::Result<()> {
        let mut text: Box<dyn Read> = match self.spilled {
            Some(mut file) => {
                file.rewind()?;
                Box::new(file.chain(io::Cursor::new(self.held)))
            }
            None => Box::new(io::Cursor::new(self.held)),
        };
        let mut at = 0;
        for &(offset, insert) in inserts {
            io::copy(&mut (&mut text).take(offset - at), out)?;
            out.write_all(insert.as_bytes())?;
            at = offset;
        }
        io::copy(&mut text, out)?;
        Ok(())
    }
}

/// Where a run's case name ends, in the cases and in the properties, and
/// what orders it among the runs of its name.
struct Mark {
    name: u64,
    begun: u64,
    case_at: u64,
    property_at: Option<u64>,
}

/// A suite whose cases are still coming: their XML, and their counts.
pub(super) struct Suite {
    pub(super) name: String,
    tests: u64,
    failures: u64,
    errors: u64,
    skipped: u64,
    time: Duration,
    cases: Spool,
    properties: Spool,
    marks: Vec<Mark>,
}

impl Suite {
    pub(super) fn new(name: &str) -> Suite {
        Suite {
            name: name.to_string(),
            tests: 0,
            failures: 0,
            errors: 0,
            skipped: 0,
            time: Duration::ZERO,
            cases: Spool::default(),
            properties: Spool::default(),
            marks: vec![],
        }
    }

    pub(super) fn add(&mut self, c: &Case) -> io::Result<()> {
        self.tests += 1;
        self.time += c.time;
        match c.outcome {
            CaseResult::Pass => {}
            CaseResult::Failure(_) => self.failures += 1,
            CaseResult::Error(_) => self.errors += 1,
            CaseResult::Skipped(_) => self.skipped += 1,
        }
        let mut x = String::new();
        let name_end = case(&mut x, c);
        let property_at = match &c.id {
            Some(id) => {
                let head = format!("      <property name=\"{}", xml(&c.name));
                let at = self.properties.len + head.len() as u64;
                let tail = format!("\" value=\"{}\"/>\n", xml(id));
                self.properties.push(head.as_bytes())?;
                self.properties.push(tail.as_bytes())?;
                Some(at)
            }
            None => None,
        };
        if let Some(begun) = c.begun {
            let mut hash = DefaultHasher::new();
            c.name.hash(&mut hash);
            self.marks.push(Mark {
                name: hash.finish(),
                begun,
                case_at: self.cases.len + name_end as u64,
                property_at,
            });
        }
        self.cases.push(x.as_bytes())
    }

    /// Each marked case's suffix: " #k" for the k-th run of its name as
    /// runs began, none for the first.
    fn suffixes(&self) -> Vec<Option<String>> {
        let mut order: Vec<usize> = (0..self.marks.len()).collect();
        order.sort_by_key(|&k| (self.marks[k].name, self.marks[k].begun, k));
        let mut out = vec![None; self.marks.len()];
        let mut place = 0;
        for (i, &k) in order.iter().enumerate() {
            let same = i > 0 && self.marks[order[i - 1]].name == self.marks[k].name;
            place = if same { place + 1 } else { 1 };
            if place > 1 {
                out[k] = Some(format!(" #{place}"));
            }
        }
        out
    }

    /// The suite, whole.
    pub(super) fn write(self, out: &mut dyn Write) -> io::Result<()> {
        let head = format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">\n",
            xml(&self.name),
            self.tests,
            self.failures,
            self.errors,
            self.skipped,
            seconds(self.time),
        );
        out.write_all(head.as_bytes())?;
        let suffixes = self.suffixes();
        let placed = || {
            self.marks
                .iter()
                .zip(&suffixes)
                .filter_map(|(m, s)| s.as_deref().map(|s| (m, s)))
        };
        let in_cases: Vec<(u64, &str)> = placed().map(|(m, s)| (m.case_at, s)).collect();
        let in_properties: Vec<(u64, &str)> = placed()
            .filter_map(|(m, s)| m.property_at.map(|at| (at, s)))
            .collect();
        // Surefire's schema puts a suite's properties before its cases.
        if self.properties.len > 0 {
            out.write_all(b"    <properties>\n")?;
            self.properties.write(out, &in_properties)?;
            out.write_all(b"    </properties>\n")?;
        }
        self.cases.write(out, &in_cases)?;
        out.write_all(b"  </testsuite>\n")
    }
}

/// One testcase, its children in the order Surefire's schema gives them:
/// failure, reruns, skipped, error, system-out. Returns where its name
/// ends in `x`.
fn case(x: &mut String, c: &Case) -> usize {
    x.push_str("    <testcase name=\"");
    x.push_str(&xml(&c.name));
    let name_end = x.len();
    x.push_str(&format!(
        "\" classname=\"{}\" time=\"{}\"",
        xml(&c.classname),
        seconds(c.time)
    ));
    let passed = matches!(c.outcome, CaseResult::Pass);
    if passed && c.reruns.is_empty() && c.text.is_empty() {
        x.push_str("/>\n");
        return name_end;
    }
    x.push_str(">\n");
    if let CaseResult::Failure(r) = &c.outcome {
        element(x, "failure", r);
    }
    // nextest's names: a rerun that failed before a pass is flaky.
    let rerun = if passed {
        "flakyFailure"
    } else {
        "rerunFailure"
    };
    for r in &c.reruns {
        let trace = if r.text.is_empty() {
            &r.message
        } else {
            &r.text
        };
        x.push_str(&format!(
            "      <{rerun} type=\"{}\" message=\"{}\">\n        <stackTrace>{}</stackTrace>\n      </{rerun}>\n",
            xml(&r.kind),
            xml(&r.message),
            xml(trace)
        ));
    }
    match &c.outcome {
        CaseResult::Skipped(why) => {
            x.push_str(&format!("      <skipped message=\"{}\"/>\n", xml(why)));
        }
        CaseResult::Error(r) => element(x, "error", r),
        CaseResult::Pass | CaseResult::Failure(_) => {}
    }
    if passed && !c.text.is_empty() {
        x.push_str(&format!(
            "      <system-out>{}</system-out>\n",
            xml(&c.text)
        ));
    }
    x.push_str("    </testcase>\n");
    name_end
}

fn element(x: &mut String, name: &str, r: &Report) {
    x.push_str(&format!(
        "      <{name} type=\"{}\" message=\"{}\">{}</{name}>\n",
        xml(&r.kind),
        xml(&r.message),
        xml(&r.text)
    ));
}

/// A time as Surefire writes it: seconds, to the millisecond.
fn seconds(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
}

/// Text as XML 1.0 holds it, in an attribute or an element: the five
/// markup characters escaped, line breaks and tabs as references (an
/// attribute keeps them so), and the characters XML 1.0 cannot hold at
/// all (other C0 controls, U+FFFE, U+FFFF) as U+FFFD.
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escapes_markup_and_replaces_what_xml_cannot_hold() {
        assert_eq!(
            xml("a<b>&\"c'\n\u{1b}[31m\u{fffe}"),
            "a&lt;b&gt;&amp;&quot;c&apos;&#10;\u{fffd}[31m\u{fffd}"
        );
    }

    fn run(name: &str, begun: u64, id: &str) -> Case {
        Case {
            id: Some(id.to_string()),
            begun: Some(begun),
            ..Case::new(name, "f", CaseResult::Pass)
        }
    }

    /// Runs of one name are numbered as they began, whatever order they
    /// ended in, in their cases and their properties alike; past the
    /// spill the same.
    #[test]
    fn runs_of_one_name_are_numbered_as_they_began() {
        for padding in [0, SPILL] {
            let mut suite = Suite::new("f");
            let mut filler = Case::new("filler", "f", CaseResult::Pass);
            filler.text = "x".repeat(padding);
            suite.add(&filler).unwrap();
            for (name, begun, id) in [("t c", 9, "B"), ("t d", 5, "C"), ("t c", 1, "A")] {
                suite.add(&run(name, begun, id)).unwrap();
            }
            let mut out = vec![];
            suite.write(&mut out).unwrap();
            let out = String::from_utf8(out).unwrap();
            for want in [
                "<property name=\"t c #2\" value=\"B\"/>",
                "<property name=\"t d\" value=\"C\"/>",
                "<property name=\"t c\" value=\"A\"/>",
                "<testcase name=\"t c #2\" classname=\"f\"",
                "<testcase name=\"t d\" classname=\"f\"",
                "<testcase name=\"t c\" classname=\"f\"",
            ] {
                assert!(out.contains(want), "{want}: {}", &out[out.len() - 800..]);
            }
            assert!(out.find("</properties>").unwrap() < out.find("<testcase ").unwrap());
        }
    }
}

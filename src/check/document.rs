//! A JSON document over several lines (a pretty-printed aiocs envelope or
//! OKF document, docs/contract.md §18): which line opens one, its lines
//! held until the object closes, and the one parse of the whole. The
//! checker judges a closed document as one event at the line it opened
//! on, and says what a document never read whole leaves behind.

use crate::check::config::Config;
use crate::check::config::Protocol;
use crate::check::finding::Draft;
use crate::check::profiles::Form;
use crate::check::protocols::{LineKind, SeqPlace};
use crate::check::rules::Rule;
use crate::check::secrets::{Exposure, Suspect};
use crate::json::{Arena, Event, Index, JsonError, Kind, Parser};

/// What a line held in a document is.
pub(super) const HELD: LineKind = LineKind {
    event: false,
    framework: false,
    protocol: Protocol::Aoi,
    late: false,
    seq: SeqPlace::Untracked,
    held: true,
};

/// What a line is to the document being read.
pub(super) enum Joined {
    /// A line of its own.
    Line,
    /// Held in the document.
    Held,
    /// It closed the document.
    Closed(Closed),
    /// Held, and the document can never be read whole: the finding the
    /// line makes, and the secret-looking key the document's lines showed.
    Dropped(Draft, Option<Suspect>),
}

/// A document read whole: its text and its one parse.
pub(super) struct Closed {
    text: Vec<u8>,
    arena: Arena,
    index: Index,
    pub(super) first_line: u64,
    /// Its exposed secrets, placed in `text`.
    pub(super) exposures: Vec<Exposure>,
    /// An array of events (`Closed::split`): each element, parsed once.
    elements: Option<Vec<Element>>,
}

/// An element of an array document.
struct Element {
    /// Its place in the document's text.
    span: (usize, usize),
    /// Its parse, when it is an object: an event.
    parsed: Option<(Arena, Index)>,
    /// Its exposed secrets, placed in its own text.
    exposures: Vec<Exposure>,
}

/// An event a command passes on, as the checker judged it
/// (`Decision::events`).
pub struct Passed<'a> {
    pub event: Event<'a>,
    /// Read from a document (a pretty-printed one, or an element of an
    /// array): its line breaks are whitespace between tokens, and its
    /// `exposures` are placed in its own text.
    pub document: bool,
    /// Its exposed secrets: a line's as the checker found them
    /// (`redaction::redactions` adds a meta's arguments).
    pub exposures: &'a [Exposure],
}

impl Closed {
    /// `bytes` as a whole document, if they are one JSON object or array.
    pub(super) fn whole(bytes: &[u8], line: u64) -> Option<Closed> {
        let text = bytes.to_vec();
        let mut arena = Arena::default();
        let index = Parser::new().parse(&text, &mut arena).ok()?;
        let ev = index.event(&text, &arena);
        let whole = ev.is_object() || ev.as_value().kind() == Kind::Array;
        whole.then_some(Closed {
            text,
            arena,
            index,
            first_line: line,
            exposures: vec![],
            elements: None,
        })
    }

    /// The document as one event.
    pub(super) fn event(&self) -> Event<'_> {
        self.index.event(&self.text, &self.arena)
    }

    /// An array's elements, each parsed once, as the events of a
    /// one-document producer that writes an array (Claude's
    /// `--output-format json --verbose`, docs/contract.md §25): their
    /// number.
    #[cold]
    pub(super) fn split(&mut self) -> usize {
        let text = &self.text;
        let elements: Vec<Element> = self
            .index
            .event(text, &self.arena)
            .as_value()
            .children()
            .map(|(_, v)| {
                let span = v.span();
                let parsed = (v.kind() == Kind::Object).then(|| {
                    let mut arena = Arena::default();
                    let index = Parser::new().parse(&text[span.0..span.1], &mut arena);
                    index.ok().map(|i| (arena, i))
                });
                Element {
                    span,
                    parsed: parsed.flatten(),
                    exposures: vec![],
                }
            })
            .collect();
        let n = elements.len();
        self.elements = Some(elements);
        n
    }

    /// Element `i` as an event, if it is an object.
    pub(super) fn element(&self, i: usize) -> Option<Event<'_>> {
        let e = &self.elements.as_ref()?[i];
        let (arena, index) = e.parsed.as_ref()?;
        Some(index.event(&self.text[e.span.0..e.span.1], arena))
    }

    /// Element `i`'s exposed secrets, placed in its text; returns where
    /// its text begins in the document's.
    pub(super) fn keep_exposures(&mut self, i: usize, found: Vec<Exposure>) -> usize {
        let Some(e) = self.elements.as_mut().and_then(|all| all.get_mut(i)) else {
            return 0;
        };
        e.exposures = found;
        e.span.0
    }

    /// The `next`th event it gives (the document, or its array's
    /// elements one by one, skipping those that are no event).
    pub(super) fn passed(&self, next: &mut usize) -> Option<Passed<'_>> {
        let Some(elements) = &self.elements else {
            let first = *next == 0;
            *next += 1;
            return first.then(|| Passed {
                event: self.event(),
                document: true,
                exposures: &self.exposures,
            });
        };
        while let Some(e) = elements.get(*next) {
            let i = *next;
            *next += 1;
            if let Some(event) = self.element(i) {
                return Some(Passed {
                    event,
                    document: true,
                    exposures: &e.exposures,
                });
            }
        }
        None
    }
}

/// The input ended inside a document.
pub(super) struct Cut {
    /// The finding the cut makes.
    pub(super) finding: Draft,
    /// The protocol a run of nothing but the document is judged by.
    pub(super) protocol: Protocol,
    /// The secret-looking key the document's lines showed.
    pub(super) suspect: Option<Suspect>,
}

/// The document being read, if a line opened one.
#[derive(Default)]
pub(super) struct Reader {
    open: Option<Document>,
}

/// A JSON document over several lines, and the line it opened on.
struct Document {
    text: Vec<u8>,
    first_line: u64,
    /// How deep the text is inside its brackets: it is parsed when it
    /// closes, and while open only each time it has doubled, so a line
    /// that makes it invalid is found soon, and the parses cost time
    /// linear in its length (parsed at every line, a long document took
    /// time quadratic in its lines).
    nesting: Nesting,
    /// The length at which an open document is parsed next.
    next_parse: usize,
    /// The first secret-looking key its lines' bytes hold: said if the
    /// document is never read whole (cut, invalid), as of any line that
    /// does not parse.
    suspect: Option<Suspect>,
}

impl Reader {
    /// A document is being read.
    pub(super) fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// The secret-looking key a held line's bytes showed, kept until the
    /// document is read whole (when the document itself is searched).
    pub(super) fn suspect(&mut self, suspect: Suspect) {
        if let Some(doc) = &mut self.open {
            doc.suspect.get_or_insert(suspect);
        }
    }

    /// What line number `line` (`bytes`, `unparsed` when it does not parse
    /// alone) is to the document. A document opens on a line that is the
    /// start of an object left open: under `--protocol aiocs` or `okf` any
    /// such line, and otherwise only a first line that is `{` alone, so a
    /// cut NDJSON line never swallows the lines after it.
    pub(super) fn join(&mut self, cfg: &Config, line: u64, bytes: &[u8], unparsed: bool) -> Joined {
        let Some(mut doc) = self.open.take() else {
            let trimmed = bytes.trim_ascii();
            let opens = match cfg.protocol {
                Some(Protocol::Aiocs | Protocol::Okf) => {
                    trimmed.starts_with(b"{") && left_open(trimmed)
                }
                // One document of events may be an array (docs/contract.md §25).
                Some(Protocol::Profile(p)) if p.get().form == Form::Json => {
                    (trimmed.starts_with(b"{") || trimmed.starts_with(b"[")) && left_open(trimmed)
                }
                None => line == 1 && trimmed == b"{",
                Some(_) => false,
            };
            if !unparsed || !opens {
                return Joined::Line;
            }
            let mut text = bytes.to_vec();
            text.push(b'\n');
            let mut nesting = Nesting::default();
            nesting.feed(bytes);
            self.open = Some(Document {
                text,
                first_line: line,
                next_parse: 2 * (bytes.len() + 1),
                nesting,
                suspect: None,
            });
            return Joined::Held;
        };
        doc.text.extend_from_slice(bytes);
        doc.text.push(b'\n');
        doc.nesting.feed(bytes);
        if doc.text.len() > cfg.max_line_bytes {
            let msg = format!(
                "the document opened at line {} is over --max-line-bytes {}; skipped",
                doc.first_line, cfg.max_line_bytes
            );
            return Joined::Dropped(Draft::new(Rule::LineTooLong, msg), doc.suspect);
        }
        if doc.nesting.open() && doc.text.len() < doc.next_parse {
            self.open = Some(doc);
            return Joined::Held;
        }
        let mut arena = Arena::default();
        let parsed = Parser::new().parse(&doc.text, &mut arena);
        match parsed {
            Ok(index) => Joined::Closed(Closed {
                text: doc.text,
                arena,
                index,
                first_line: doc.first_line,
                exposures: vec![],
                elements: None,
            }),
            Err(JsonError::Syntax { column, .. }) if column > doc.text.trim_ascii_end().len() => {
                doc.next_parse = 2 * doc.text.len();
                self.open = Some(doc);
                Joined::Held
            }
            Err(e) => {
                let column = match e {
                    JsonError::Syntax { column, .. } | JsonError::Utf8 { column } => column,
                };
                let msg = format!(
                    "invalid JSON in the document opened at line {} (byte {column} of it)",
                    doc.first_line
                );
                Joined::Dropped(Draft::new(Rule::JsonInvalid, msg), doc.suspect)
            }
        }
    }

    /// The input ended: a document still open was cut.
    pub(super) fn cut(&mut self, cfg: &Config) -> Option<Cut> {
        let doc = self.open.take()?;
        let msg = format!(
            "the document opened at line {} never closes: the output was cut",
            doc.first_line
        );
        // Only the aiocs envelope and an OKF document are read as
        // documents.
        let (rule, protocol) = match cfg.protocol {
            Some(Protocol::Okf) => (Rule::OkfDocumentCut, Protocol::Okf),
            Some(p @ Protocol::Profile(_)) => (Rule::JsonInvalid, p),
            _ => (Rule::AiocsDocumentCut, Protocol::Aiocs),
        };
        Some(Cut {
            finding: Draft::new(rule, msg),
            protocol,
            suspect: doc.suspect,
        })
    }
}

/// The bracket depth of JSON text read so far, strings skipped.
#[derive(Default)]
struct Nesting {
    depth: u64,
    in_string: bool,
    escaped: bool,
    /// A closing bracket with none open: the text is no document.
    broken: bool,
}

impl Nesting {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.in_string {
                match b {
                    _ if self.escaped => self.escaped = false,
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => match self.depth.checked_sub(1) {
                    Some(d) => self.depth = d,
                    None => self.broken = true,
                },
                _ => {}
            }
        }
    }

    /// The text may still close: parsing it now would say only "open".
    fn open(&self) -> bool {
        self.depth > 0 && !self.broken
    }
}

/// Whether `line` is JSON that stops before its value closes (parsed
/// alone, it fails at its end).
fn left_open(line: &[u8]) -> bool {
    let mut arena = Arena::default();
    match Parser::new().parse(line, &mut arena) {
        Err(JsonError::Syntax { column, .. }) => column > line.len(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::Nesting;

    fn nesting(lines: &[&str]) -> Nesting {
        let mut n = Nesting::default();
        for l in lines {
            n.feed(l.as_bytes());
        }
        n
    }

    #[test]
    fn a_document_is_open_until_its_brackets_close_strings_aside() {
        assert!(nesting(&["{", r#""a": [1,"#]).open());
        assert!(!nesting(&["{", r#""a": [1,"#, "2]}"]).open());
        // Brackets and an escaped quote inside a string are text.
        assert!(nesting(&["{", r#""a": "}] \" }""#]).open());
        assert!(!nesting(&["{", r#""a": "}] \" }""#, "}"]).open());
        // More closers than openers: no document, so it is parsed (and
        // found invalid) at once.
        assert!(!nesting(&["{", "}}", "{"]).open());
    }
}

//! A JSON document over several lines (a pretty-printed aiocs envelope or
//! OKF document, docs/contract.md §6.2): which line opens one, its lines
//! held until the object closes, and the one parse of the whole. The
//! checker judges a closed document as one event at the line it opened
//! on, and says what a document never read whole leaves behind.

use crate::check::config::Config;
use crate::check::config::Protocol;
use crate::check::finding::Draft;
use crate::check::profiles::Form;
use crate::check::protocols::{LineKind, SeqPlace};
use crate::check::rules::Rule;
use crate::check::secrets::{Exposure, Suspect, Withholding};
use crate::json::{Arena, Event, Index, JsonError, Kind, Nesting, Parser};

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
    /// Its exposed secrets, placed in `text` (an array's elements' too,
    /// in order).
    pub(super) exposures: Vec<Exposure>,
    /// An array of events (a one-document producer's, docs/contract.md
    /// §6.3): its elements are its events.
    pub(super) array: bool,
}

/// An event a command passes on, as the checker judged it
/// (`Decision::each_event`).
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
            array: false,
        })
    }

    /// The document as one event.
    pub(super) fn event(&self) -> Event<'_> {
        self.index.event(&self.text, &self.arena)
    }

    /// Each element of an array document in turn, with its place in the
    /// text: an object parsed as an event (into one arena, reused, so a
    /// document of millions of small elements costs its text and no
    /// more), anything else `None`.
    #[cold]
    pub(super) fn each_element<E>(
        &self,
        mut f: impl FnMut((usize, usize), Option<Event<'_>>) -> Result<(), E>,
    ) -> Result<(), E> {
        let (mut parser, mut arena) = (Parser::new(), Arena::default());
        for (_, v) in self.event().as_value().children() {
            let (a, b) = v.span();
            let element = &self.text[a..b];
            arena.clear();
            let parsed = match v.kind() {
                Kind::Object => parser.parse(element, &mut arena).ok(),
                _ => None,
            };
            f((a, b), parsed.as_ref().map(|i| i.event(element, &arena)))?;
        }
        Ok(())
    }

    /// The events it gives a command: itself, or an array's elements one
    /// by one (those that are objects), each with its exposed secrets
    /// placed in its own text.
    pub(super) fn each_passed<E>(
        &self,
        mut f: impl FnMut(&Passed<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.array {
            return f(&Passed {
                event: self.event(),
                document: true,
                exposures: &self.exposures,
            });
        }
        let (mut next, mut mine) = (0, vec![]);
        self.each_element(|(a, b), event| {
            let Some(event) = event else {
                return Ok(());
            };
            // The exposures are in order: those of this element are next.
            mine.clear();
            while let Some(e) = self.exposures.get(next).filter(|e| e.starts_before(b)) {
                if e.starts_before(a) {
                    next += 1;
                    continue;
                }
                mine.push(e.moved_back(a));
                next += 1;
            }
            f(&Passed {
                event,
                document: true,
                exposures: &mine,
            })
        })
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
    /// A document dropped as over `--max-line-bytes`, read on to its end:
    /// its lines are its one finding's, not one each (docs/contract.md
    /// §6.2).
    skipping: Option<Nesting>,
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

impl Document {
    /// The document that `bytes`, line `line`, opens.
    fn opened_by(line: u64, bytes: &[u8]) -> Document {
        let mut text = bytes.to_vec();
        text.push(b'\n');
        let mut nesting = Nesting::default();
        nesting.feed(bytes);
        Document {
            text,
            first_line: line,
            next_parse: 2 * (bytes.len() + 1),
            nesting,
            suspect: None,
        }
    }
}

/// Whether line `line`, `trimmed`, opens a document: under `--protocol
/// aiocs` or `okf` any line that starts an object left open, and
/// otherwise only a first line that is `{` alone, so a cut NDJSON line
/// never swallows the lines after it.
fn opens(cfg: &Config, line: u64, trimmed: &[u8]) -> bool {
    match cfg.protocol {
        Some(Protocol::Aiocs | Protocol::Okf) => trimmed.starts_with(b"{") && left_open(trimmed),
        // One document of events may be an array (docs/contract.md §6.3).
        Some(Protocol::Profile(p)) if p.get().form == Form::Json => {
            (trimmed.starts_with(b"{") || trimmed.starts_with(b"[")) && left_open(trimmed)
        }
        // Any other object read as a document: one whose first
        // line is its opening brace alone (docs/contract.md §6.2).
        _ => line == 1 && trimmed == b"{",
    }
}

impl Reader {
    /// A document is being read.
    pub(super) fn is_open(&self) -> bool {
        self.open.is_some() || self.skipping.is_some()
    }

    /// The lines now read belong to a document too long to be held: never
    /// searched whole, so a relay under `--redact` withholds them.
    pub(super) fn skipping(&self) -> bool {
        self.skipping.is_some()
    }

    /// How `--redact` writes the document's next line, whatever that line
    /// shows: withheld when an earlier line showed a secret-looking key
    /// (its value may be on this one), or when the document was too long
    /// to be held, and so never searched whole.
    pub(super) fn held_back(&self) -> Option<Withholding> {
        if self.skipping.is_some() {
            Some(Withholding::Unheld)
        } else if self.open.as_ref().is_some_and(|d| d.suspect.is_some()) {
            Some(Withholding::InDocument)
        } else {
            None
        }
    }

    /// The secret-looking key a held line's bytes showed, kept until the
    /// document is read whole (when the document itself is searched).
    pub(super) fn suspect(&mut self, suspect: Suspect) {
        if let Some(doc) = &mut self.open {
            doc.suspect.get_or_insert(suspect);
        }
    }

    /// What line number `line` (`bytes`, `unparsed` when it does not parse
    /// alone) is to the document: a line of its own, one that opens or
    /// goes on with a document (`opens`), or the one that closes it.
    pub(super) fn join(&mut self, cfg: &Config, line: u64, bytes: &[u8], unparsed: bool) -> Joined {
        if let Some(nesting) = &mut self.skipping {
            nesting.feed(bytes);
            if !nesting.open() {
                self.skipping = None;
            }
            return Joined::Held;
        }
        let Some(mut doc) = self.open.take() else {
            if !unparsed || !opens(cfg, line, bytes.trim_ascii()) {
                return Joined::Line;
            }
            self.open = Some(Document::opened_by(line, bytes));
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
            if doc.nesting.open() {
                self.skipping = Some(doc.nesting);
            }
            return Joined::Dropped(Draft::new(Rule::LineTooLong, msg), doc.suspect);
        }
        if doc.nesting.open() && doc.text.len() < doc.next_parse {
            self.open = Some(doc);
            return Joined::Held;
        }
        self.parse(doc)
    }

    /// The document read so far, parsed: closed, still open (its text
    /// ended inside its value), or invalid.
    fn parse(&mut self, mut doc: Document) -> Joined {
        // Its last line break is no part of it: written as one line, it
        // would end in a space.
        let end = doc.text.trim_ascii_end().len();
        let mut arena = Arena::default();
        let parsed = Parser::new().parse(&doc.text[..end], &mut arena);
        match parsed {
            Ok(index) => {
                doc.text.truncate(end);
                Joined::Closed(Closed {
                    text: doc.text,
                    arena,
                    index,
                    first_line: doc.first_line,
                    exposures: vec![],
                    array: false,
                })
            }
            // Its input ended: the document is not closed yet.
            Err(JsonError::Syntax { column, .. }) if column > end => {
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

/// Whether `line` is JSON that stops before its value closes (parsed
/// alone, it fails at its end).
fn left_open(line: &[u8]) -> bool {
    let mut arena = Arena::default();
    match Parser::new().parse(line, &mut arena) {
        Err(JsonError::Syntax { column, .. }) => column > line.len(),
        _ => false,
    }
}

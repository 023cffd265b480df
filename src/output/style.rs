//! How a report is written: its format and style (what config holds and
//! every renderer reads), and colour in human output (anstyle): the few
//! styles aoitap paints with, and when it paints at all. Machine output is
//! never painted.

use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};

use anstream::{AutoStream, ColorChoice};
use anstyle::AnsiColor;
pub use anstyle::Style as Paint;

use crate::exit::Rendered;

pub const BAD: Paint = AnsiColor::Red.on_default().bold();
pub const GOOD: Paint = AnsiColor::Green.on_default().bold();
pub const WARN: Paint = AnsiColor::Yellow.on_default().bold();
pub const NOTE: Paint = AnsiColor::Cyan.on_default().bold();

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Human,
    Jsonl,
    /// One JSON document, written run by run (summarize): see
    /// `table/json.rs`.
    Json,
    /// TAP (verify, run, lint): see `tap.rs`.
    Tap,
    /// JUnit XML (verify, run, lint): see `junit/`.
    Junit,
    /// SARIF 2.1.0 (verify): see `sarif.rs`.
    Sarif,
    /// GitHub Actions workflow commands (verify, run): see `github.rs`.
    Github,
    /// One self-contained page (summarize, reconcile): see
    /// `table/html.rs`.
    Html,
}

/// How the report is written.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    pub format: Format,
    pub quiet: bool,
    /// Human output leaves out notes, passing runs and a passing result
    /// line: a filter (strip-envelope) is silent when all is well.
    pub quiet_pass: bool,
    /// `verify --failures-only`: human output leaves out passing runs and
    /// the findings that never fail one (warnings, notes); the result line
    /// still counts every run (docs/contract.md §2.2).
    pub failures_only: bool,
    pub color: bool,
    /// At most this many findings are written (spec §15); the rest are counted.
    pub limit: Option<u64>,
    /// Human output at a terminal with no `--limit`: at most this many
    /// findings per input, then a count of the rest (docs/contract.md §3.4), so a
    /// binary file given by mistake is a screen, not 15,000 lines.
    pub per_input: Option<u64>,
}

impl Style {
    /// A report in `format` with nothing left out and nothing painted.
    pub fn plain(format: Format) -> Style {
        Style {
            format,
            quiet: false,
            quiet_pass: false,
            failures_only: false,
            color: false,
            limit: None,
            per_input: None,
        }
    }
}

/// The findings a person at a terminal is shown per input, unless
/// `--limit` says otherwise.
pub const TERMINAL_FINDINGS: u64 = 100;

/// `--color auto`: on a terminal, unless `NO_COLOR` is set and not empty
/// (no-color.org).
pub fn auto(terminal: bool) -> bool {
    terminal && !anstyle_query::no_color()
}

/// A standard stream a report may be written to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StdStream {
    Stdout,
    Stderr,
}

/// `--color auto` for a report written to `stream`.
pub fn auto_for(stream: StdStream) -> bool {
    auto(is_terminal(stream))
}

/// Whether `stream` is a terminal: a person reads it.
pub fn is_terminal(stream: StdStream) -> bool {
    match stream {
        StdStream::Stdout => std::io::stdout().is_terminal(),
        StdStream::Stderr => std::io::stderr().is_terminal(),
    }
}

/// Whether help text aoitap renders itself (run's) is painted: on a
/// terminal, unless `NO_COLOR` is set at all, even empty.
pub fn help_painted() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Text clap rendered, written as clap writes its own (with its `color`
/// feature, auto): the styles kept where anstream paints (a terminal
/// that takes colour, unless NO_COLOR or CLICOLOR say otherwise), and
/// left out everywhere else. No flush, as clap does none.
pub fn write_as_clap(text: &Rendered, on_stderr: bool) -> io::Result<()> {
    let bytes = text.ansi.as_bytes();
    if on_stderr {
        AutoStream::new(io::stderr().lock(), ColorChoice::Auto).write_all(bytes)
    } else {
        AutoStream::new(io::stdout().lock(), ColorChoice::Auto).write_all(bytes)
    }
}

/// `text` in `style` when `on`, else as it is (no copy: most reports
/// go to a pipe).
pub fn paint(on: bool, style: Paint, text: &str) -> Cow<'_, str> {
    if on {
        Cow::Owned(format!("{style}{text}{style:#}"))
    } else {
        Cow::Borrowed(text)
    }
}

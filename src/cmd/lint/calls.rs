//! The calls the checks read, each made when a check first needs it and
//! then kept, so `--checks` makes only the calls its checks need; and the
//! words a check's result is made of.

use std::cell::OnceCell;
use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use rustix::process::Signal;
use serde_json::Value;

use super::judged::{self, Judged};
use super::sandbox::{self, Call, Ran, Then};
use super::stderr::{self, Stderr};
use crate::check::lint_checks::{self as catalogue, Check};
use crate::check::schema::EventSchema;

/// What a check came to (docs/contract.md §1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conclusion {
    Pass,
    Fail,
    /// The tool does not claim what the check needs (no seq: Verifiable).
    NotClaimed,
    /// The calls could not tell (a run too short to close a pipe on).
    Inconclusive,
    /// Not run: what it needs is not advertised.
    Skipped,
}

impl Conclusion {
    pub fn word(self) -> &'static str {
        match self {
            Conclusion::Pass => "pass",
            Conclusion::Fail => "fail",
            Conclusion::NotClaimed => "not-claimed",
            Conclusion::Inconclusive => "inconclusive",
            Conclusion::Skipped => "skipped",
        }
    }
}

/// One check's result, and why.
pub struct Result {
    pub check: &'static Check,
    pub outcome: Conclusion,
    pub detail: String,
    /// A failure's calls, each with the last lines of its stderr
    /// (docs/contract.md §1.4).
    pub stderr: Vec<Stderr>,
}

impl Result {
    /// A failure on `call` (`what` names it) shows its stderr's last
    /// lines, and says when they hold a stack trace; any other result
    /// is as it was.
    pub fn on(mut self, what: &str, call: &Ran) -> Result {
        if self.outcome != Conclusion::Fail || self.stderr.iter().any(|s| s.call == what) {
            return self;
        }
        if let Some(said) = stderr::of(what, call) {
            if said.stack_trace && !self.detail.contains(STACK_TRACE) {
                self.detail.push_str(&format!("; {STACK_TRACE} of {what}"));
            }
            self.stderr.push(said);
        }
        self
    }
}

/// What a failure says of a call whose stderr holds a stack trace.
pub const STACK_TRACE: &str = "a stack trace on stderr";

pub fn result(number: u8, outcome: Conclusion, detail: impl Into<String>) -> Result {
    let check = catalogue::CHECKS
        .iter()
        .find(|c| c.number == number)
        .expect("every number is in the catalogue");
    Result {
        check,
        outcome,
        detail: detail.into(),
        stderr: vec![],
    }
}

/// A flag no tool accepts.
pub const UNKNOWN_FLAG: &str = "--aoitap-lint-no-such-flag";

/// The most of a discovery command's output read (a schema, a manifest).
pub const MAX_DISCOVERY: u64 = 16 << 20;

/// The calls every check reads, each made once, when first needed.
pub struct Calls {
    /// CMD ARGS, its program resolved.
    pub command: Vec<OsString>,
    /// The words of CMD that name the tool (`python3 tool.py`).
    pub tool: Vec<OsString>,
    pub timeout: Duration,
    /// Judge the main call against the tool's schema (check 4 is asked).
    pub with_schema: bool,
    main: OnceCell<(Ran, Judged)>,
    schema: OnceCell<Ran>,
    compiled: OnceCell<std::result::Result<Arc<EventSchema>, String>>,
    capabilities: OnceCell<(Ran, Value)>,
    unknown_flag: OnceCell<(Ran, Judged)>,
    coloured: OnceCell<(Ran, Judged)>,
    on_terminal: OnceCell<(Ran, Judged)>,
    closed: OnceCell<Ran>,
    interrupted: OnceCell<(Ran, Judged)>,
    terminated: OnceCell<(Ran, Judged)>,
    help: OnceCell<Ran>,
}

impl Calls {
    pub fn new(command: Vec<OsString>, tool_words: usize, timeout: Duration) -> Calls {
        let tool = command[..tool_words.min(command.len())].to_vec();
        Calls {
            command,
            tool,
            timeout,
            with_schema: false,
            main: OnceCell::new(),
            schema: OnceCell::new(),
            compiled: OnceCell::new(),
            capabilities: OnceCell::new(),
            unknown_flag: OnceCell::new(),
            coloured: OnceCell::new(),
            on_terminal: OnceCell::new(),
            closed: OnceCell::new(),
            interrupted: OnceCell::new(),
            terminated: OnceCell::new(),
            help: OnceCell::new(),
        }
    }

    /// A call of CMD ARGS with `more` after them, and before a `--` in
    /// them: flags after it would be operands.
    pub fn with(&self, more: &[&str]) -> Vec<OsString> {
        with_flags(&self.command, self.tool.len(), more)
    }

    /// Make `call`, and judge its stdout (without the tool's schema).
    pub fn judged(&self, call: &Call<'_>) -> (Ran, Judged) {
        let mut ran = sandbox::call(call);
        let judged = judge(&ran, None);
        ran.stdout.release();
        (ran, judged)
    }

    /// CMD ARGS as given, and its stdout judged (against the tool's own
    /// schema when check 4 is asked for).
    pub fn main(&self) -> (&Ran, &Judged) {
        let (r, j) = self.main.get_or_init(|| {
            let mut ran = sandbox::call(&Call::new(self.command.clone(), self.timeout));
            let schema = self
                .with_schema
                .then(|| self.tool_schema().clone().ok())
                .flatten();
            let judged = judge(&ran, schema);
            ran.stdout.release();
            (ran, judged)
        });
        (r, j)
    }

    fn discovery(&self, what: &str) -> Ran {
        let mut argv = self.tool.clone();
        argv.extend([what, "--output", "json"].map(OsString::from));
        let mut ran = sandbox::call(&Call {
            discovery: true,
            ..Call::new(argv, self.timeout)
        });
        ran.stdout.hold(MAX_DISCOVERY);
        ran
    }

    /// `TOOL schema --output json`.
    pub fn schema(&self) -> &Ran {
        self.schema.get_or_init(|| self.discovery("schema"))
    }

    /// The tool's schema, compiled from the schema call's stdout (in
    /// memory: nothing is written for it); the reason when it cannot be.
    pub fn tool_schema(&self) -> &std::result::Result<Arc<EventSchema>, String> {
        self.compiled.get_or_init(|| {
            let ran = self.schema();
            if ran.code() != Some(0) {
                return Err(format!(
                    "`schema --output json`: {}{}",
                    ran.ended(),
                    stderr_said(ran)
                ));
            }
            let Some(bytes) = ran.stdout.bytes(MAX_DISCOVERY) else {
                return Err(format!(
                    "`schema --output json` wrote {} bytes, over lint's {} MiB",
                    ran.stdout.len,
                    MAX_DISCOVERY >> 20
                ));
            };
            EventSchema::from_bytes(&bytes, "the schema", &[]).map(Arc::new)
        })
    }

    /// `TOOL capabilities --output json`, and the manifest (`Null` when it
    /// is not one JSON value).
    pub fn capabilities(&self) -> (&Ran, &Value) {
        let (r, v) = self.capabilities.get_or_init(|| {
            let ran = self.discovery("capabilities");
            let value = ran
                .stdout
                .bytes(MAX_DISCOVERY)
                .filter(|_| ran.code() == Some(0))
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or(Value::Null);
            (ran, value)
        });
        (r, v)
    }

    /// The name of the command CMD ARGS runs: `aoi:meta.command`, else the
    /// first word after the tool's that is not a flag.
    pub fn command_name(&self) -> Option<String> {
        let (_, j) = self.main();
        if let Some((_, Some(name))) = &j.meta {
            return Some(name.clone());
        }
        self.command[self.tool.len()..]
            .iter()
            .map(|a| a.to_string_lossy())
            .find(|a| !a.starts_with('-'))
            .map(|a| a.into_owned())
    }

    /// Why CMD ARGS are not a command to lint: the tool refuses them as
    /// a usage error (a non-zero exit with an `aoi:error` of category
    /// usage, or exit 2 or 64 with no event at all).
    pub fn refused(&self) -> Option<String> {
        let (ran, j) = self.main();
        let code = ran.code().filter(|&n| n != 0)?;
        let usage = j.usage_errors > 0 || (j.events == 0 && crate::exit::is_usage_status(code));
        usage.then(|| {
            let what = j.usage_message.as_deref().map_or(String::new(), |m| {
                format!(
                    ": {}",
                    crate::check::quotable::quote_or_withhold(crate::text::prefix(m, 200))
                )
            });
            format!("the tool refuses CMD ARGS as a usage error (exit {code}{what})")
        })
    }

    /// The capabilities entry of the command CMD ARGS runs.
    pub fn entry(&self) -> Option<(String, &Value)> {
        let name = self.command_name()?;
        let (_, caps) = self.capabilities();
        let entry = caps["commands"]
            .as_array()?
            .iter()
            .find(|c| c["name"] == name.as_str())?;
        Some((shown(name), entry))
    }

    /// CMD ARGS and a flag no tool has.
    pub fn unknown_flag(&self) -> (&Ran, &Judged) {
        let (r, j) = self
            .unknown_flag
            .get_or_init(|| self.judged(&Call::new(self.with(&[UNKNOWN_FLAG]), self.timeout)));
        (r, j)
    }

    /// CMD ARGS with colour asked for by the environment.
    pub fn coloured(&self) -> (&Ran, &Judged) {
        let (r, j) = self.coloured.get_or_init(|| {
            self.judged(&Call {
                env: vec![
                    ("TERM", "xterm-256color"),
                    ("FORCE_COLOR", "1"),
                    ("CLICOLOR_FORCE", "1"),
                ],
                ..Call::new(self.command.clone(), self.timeout)
            })
        });
        (r, j)
    }

    /// CMD ARGS with stdout a terminal.
    pub fn on_terminal(&self) -> (&Ran, &Judged) {
        let (r, j) = self.on_terminal.get_or_init(|| {
            self.judged(&Call {
                tty: true,
                ..Call::new(self.command.clone(), self.timeout)
            })
        });
        (r, j)
    }

    /// CMD ARGS with stdout closed after the first line.
    pub fn closed(&self) -> &Ran {
        self.closed.get_or_init(|| {
            sandbox::call(&Call {
                then: Then::Close,
                ..Call::new(self.command.clone(), self.timeout)
            })
        })
    }

    fn signalled(&self, s: Signal) -> (Ran, Judged) {
        self.judged(&Call {
            then: Then::Signal(s),
            ..Call::new(self.command.clone(), self.timeout)
        })
    }

    /// CMD ARGS sent SIGINT after the first line.
    pub fn interrupted(&self) -> (&Ran, &Judged) {
        let (r, j) = self.interrupted.get_or_init(|| self.signalled(Signal::INT));
        (r, j)
    }

    /// CMD ARGS sent SIGTERM after the first line.
    pub fn terminated(&self) -> (&Ran, &Judged) {
        let (r, j) = self.terminated.get_or_init(|| self.signalled(Signal::TERM));
        (r, j)
    }

    /// CMD ARGS `--help`: the command's own help names its flags.
    pub fn help(&self) -> &Ran {
        self.help.get_or_init(|| {
            let mut ran = sandbox::call(&Call::new(self.with(&["--help"]), self.timeout));
            ran.stdout.hold(1 << 20);
            ran
        })
    }
}

/// A command's name as a report shows it: a name, not a document, so a
/// longer one is cut.
pub fn shown(name: String) -> String {
    let short = crate::text::prefix(&name, 128);
    if short.len() < name.len() {
        format!("{short}...")
    } else {
        name
    }
}

/// `argv` with `more` put before its first `--` after the tool's words
/// (at its end when it has none).
pub fn with_flags(argv: &[OsString], tool_words: usize, more: &[&str]) -> Vec<OsString> {
    let at = argv
        .iter()
        .skip(tool_words)
        .position(|a| a == "--")
        .map_or(argv.len(), |k| k + tool_words);
    let mut v = argv[..at].to_vec();
    v.extend(more.iter().map(OsString::from));
    v.extend_from_slice(&argv[at..]);
    v
}

/// Judge a call's stdout.
pub fn judge(ran: &Ran, schema: Option<Arc<EventSchema>>) -> Judged {
    match ran.stdout.reader() {
        Ok(r) => judged::judge(r, schema),
        Err(_) => Judged::default(),
    }
}

/// Why a call's stdout cannot be judged, if it cannot: lint stopped it
/// (over its spool, a deadline) or a line is over lint's limit. Such a
/// check is inconclusive: the cut is lint's, not the tool's.
pub fn unjudged(what: &str, ran: &Ran, j: &Judged) -> Option<String> {
    if ran.stdout.overflowed {
        return Some(format!(
            "{what} wrote over {} MiB (or it could not be spooled): not judged",
            sandbox::MAX_SPOOL >> 20
        ));
    }
    if ran.timed_out {
        return Some(format!(
            "{what} did not exit within --timeout: give a finite command, or a longer --timeout"
        ));
    }
    j.too_long.map(|n| {
        format!(
            "{what}: line {n} is over {} MiB, lint's limit: not judged",
            judged::MAX_LINE >> 20
        )
    })
}

/// What a call said on stderr, on one line, short, with secret-looking
/// values redacted: for a detail (never quoted whole).
pub fn stderr_said(ran: &Ran) -> String {
    let text = ran.stderr_text();
    let text = crate::text::one_line(text.trim());
    if text.is_empty() {
        return String::new();
    }
    let mut short: String = text.chars().take(200).collect();
    if short.len() < text.len() {
        short.push_str("...");
    }
    format!(": {}", stderr::quoted(&short))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_go_before_a_double_dash() {
        let argv: Vec<OsString> = ["t", "search", "--", "-q"].map(OsString::from).to_vec();
        assert_eq!(
            with_flags(&argv, 1, &["--limit", "1"]),
            ["t", "search", "--limit", "1", "--", "-q"].map(OsString::from)
        );
        let plain: Vec<OsString> = ["t", "search"].map(OsString::from).to_vec();
        assert_eq!(
            with_flags(&plain, 1, &["-x"]),
            ["t", "search", "-x"].map(OsString::from)
        );
    }
}

//! aoitap's own events (docs/contract.md §5.1) as typed wire structs, fields in the
//! order `aoitap schema` documents them; `tests/conform.rs` holds every
//! event a command writes to that schema. Strings from the input are
//! escaped by serde_json, never spliced.

use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::identity::{AOI_VERSION, SCHEMA_NAME, SCHEMA_VERSION, TOOL, TOOL_VERSION};
use super::printer::{At, Carries, Ended, Item, Local, Printer};
use super::style::{Format, Style};
use crate::check::rules::Severity;
use crate::check::{self, RunVerdict, Tally};
use crate::exit::{self, Exit};
use crate::text::{one_line, plural};

/// The category and code of aoitap's own error for a command that ended
/// with `exit` before it could do its work (spec §9.4's categories): the
/// one table of them, for the failed run of `--output jsonl` and
/// `upgrade`'s stream alike.
pub fn failure_of(exit: Exit) -> (&'static str, &'static str) {
    match exit {
        Exit::Usage => ("usage", "USAGE"),
        Exit::NoInput => ("not_found", "INPUT_NOT_FOUND"),
        Exit::CantCreate => ("conflict", "OUTPUT_FAILED"),
        Exit::CommandNotFound => ("not_found", "COMMAND_NOT_FOUND"),
        Exit::CannotExecute => ("usage", "COMMAND_NOT_EXECUTABLE"),
        _ => ("io", "IO_FAILED"),
    }
}

/// A command that could not start, as a whole AOI stream (meta, the
/// error, the summary), for a reader that asked for jsonl and parses the
/// stream whatever happens. `on_stderr`: the command's report goes there
/// (filter, strip-envelope, verify --relay), and stdout is the data a
/// downstream reads.
pub fn error_stream(command: &str, err: &exit::Error, on_stderr: bool) -> io::Result<()> {
    let style = Style::plain(Format::Jsonl);
    let at = At {
        command,
        file: "",
        style: &style,
        dropped: 0,
        reason: None,
        result: None,
    };
    let exit = err.exit();
    let (category, code) = failure_of(exit);
    let out: Box<dyn Write> = if on_stderr {
        Box::new(io::stderr())
    } else {
        Box::new(io::stdout())
    };
    let mut jsonl = Jsonl::new(out);
    jsonl.begin(&at)?;
    let message = err.to_string();
    let error = Local {
        warning: false,
        category,
        code,
        message: &message,
    };
    jsonl.local(&at, &error)?;
    jsonl.end(&at, exit, &Tally::default())?;
    jsonl.flush()
}

/// aoitap as an AOI producer (docs/contract.md §5.1): one `aoi:meta` first, `seq`
/// contiguous from 0 on one `run`, a terminal `aoi:summary` with
/// `event_count`, the identity triple at both ends, `upstream` for what
/// it read and `caused_by` when failing because of it (spec §13.1).
/// Upstream `aoi:error`/`aoi:warning` are counted, never forwarded.
pub struct Jsonl<W> {
    out: W,
    run_id: String,
    seq: u64,
    /// Domain events written: the summary's `count`.
    domain: u64,
    /// aoitap's own `aoi:error` and `aoi:warning` events.
    errors: u64,
    warnings: u64,
}

impl<W: Write> Jsonl<W> {
    pub fn new(out: W) -> Jsonl<W> {
        Jsonl {
            out,
            run_id: ulid(),
            seq: 0,
            domain: 0,
            errors: 0,
            warnings: 0,
        }
    }

    /// Write one event of aoitap's own stream, envelope filled in; `file`
    /// for events about an input.
    fn event<T: Serialize>(&mut self, ty: &str, file: Option<&str>, body: T) -> io::Result<()> {
        let body = serde_json::to_vec(&body).map_err(io::Error::other)?;
        self.line(ty, file, &body)
    }

    /// The one writer of a line: the envelope, then `body`'s fields (one
    /// JSON object's bytes) in the same object, as `#[serde(flatten)]`
    /// would put them; a command's own events come as bytes, through a
    /// `dyn Printer`.
    fn line(&mut self, ty: &str, file: Option<&str>, body: &[u8]) -> io::Result<()> {
        let head = Head {
            ty,
            aoi: Envelope {
                seq: self.seq,
                run: &self.run_id,
            },
            file,
        };
        let mut buf = Vec::with_capacity(64 + body.len());
        splice(&mut buf, &head, body)?;
        self.seq += 1;
        self.out.write_all(&buf)
    }

    /// A domain event: counted in the summary's `count`.
    pub(super) fn domain<T: Serialize>(
        &mut self,
        ty: &str,
        file: Option<&str>,
        body: T,
    ) -> io::Result<()> {
        self.domain += 1;
        self.event(ty, file, body)
    }

    /// aoitap's own `aoi:error`, about the process (spec §9.2).
    fn error(&mut self, l: &Local<'_>, retryable: bool) -> io::Result<()> {
        self.errors += 1;
        let error = Error {
            category: l.category,
            code: l.code,
            message: &one_line(l.message),
            retryable,
            scope: "process",
        };
        self.event("aoi:error", None, error)
    }

    /// `run`: how one attempt ended.
    fn attempt(&mut self, at: &At<'_>, e: &Ended<'_>) -> io::Result<()> {
        let a = e.attempt;
        let attempt = Attempt {
            command: a.command,
            attempt: a.attempt,
            attempts: a.attempts,
            exit_status: a.exit_status,
            signal: a.signal,
            timed_out: a.timed_out,
            cancelled: a.cancelled,
            elapsed_ms: a.elapsed_ms,
            exit: a.exit.code(),
            retry_in_ms: a.retry_in_ms,
            message: &one_line(e.message),
        };
        self.domain("attempt", Some(at.file), attempt)
    }
}

impl<W: Write> Printer for Jsonl<W> {
    fn carries(&self) -> Carries {
        Carries {
            events: true,
            errors: true,
            warnings: true,
            ..Carries::default()
        }
    }

    fn begin(&mut self, at: &At<'_>) -> io::Result<()> {
        let meta = Meta {
            identity: IDENTITY,
            command: at.command,
        };
        self.event("aoi:meta", None, meta)?;
        // Out at once: a reader can tell "started" from "wedged" (§13.1).
        self.out.flush()
    }

    fn event(&mut self, at: &At<'_>, ty: &str, about_file: bool, body: &[u8]) -> io::Result<()> {
        self.domain += 1;
        self.line(ty, about_file.then_some(at.file), body)
    }

    fn local(&mut self, _at: &At<'_>, l: &Local<'_>) -> io::Result<()> {
        if !l.warning {
            return self.error(l, false);
        }
        self.warnings += 1;
        let warning = Warning {
            category: l.category,
            code: l.code,
            message: l.message,
        };
        self.event("aoi:warning", None, warning)
    }

    fn finding(&mut self, at: &At<'_>, f: &check::Finding) -> io::Result<()> {
        let place = f.place.as_deref();
        let finding = Finding {
            rule: f.rule.id(),
            severity: f.severity.name(),
            file: at.file,
            line_number: (f.line > 0).then_some(f.line),
            run: f.run.as_deref(),
            seq: f.seq,
            column: f.column.map(|c| c as u64),
            missing_from: f.missing.map(|m| m.0),
            missing_to: f.missing.map(|m| m.1),
            missing_count: f.missing.map(|m| m.2),
            instance_path: place.map(|p| p.instance_path.as_str()),
            keyword: place.map(|p| p.keyword.as_str()),
            schema_path: place.map(|p| p.schema_path.as_str()),
            message: &f.message,
        };
        self.domain("finding", None, finding)
    }

    fn open_run(&mut self, at: &At<'_>, run: &check::OpenRun, text: &str) -> io::Result<()> {
        let open = OpenRun {
            run: run.name.as_deref(),
            first_line: run.first_line,
            lines: run.lines,
            message: text.trim_end(),
        };
        self.domain("open_run", Some(at.file), open)
    }

    fn run(&mut self, at: &At<'_>, r: &RunVerdict, path: Option<&str>) -> io::Result<()> {
        let run = Run {
            run: r.run.as_deref(),
            path,
            first_line: r.first_line,
            lines: r.lines,
            tool: (r.identity.as_ref().and_then(|i| i.tool.as_deref())).or(r.protocol.producer()),
            command: r.identity.as_ref().and_then(|i| i.command.as_deref()),
            protocol: r.protocol.name(),
            verdict: r.verdict.name(),
            retry_after_ms: r
                .cause
                .as_ref()
                .filter(|c| c.retryable)
                .and_then(|c| c.retry_after_ms),
            message: &r.message,
        };
        self.domain("run", Some(at.file), run)
    }

    fn item(&mut self, at: &At<'_>, item: Item<'_>) -> io::Result<()> {
        match item {
            // aoi:check is a framework event: the summary's count stays
            // that of domain events (0), as spec §19.3's doctor has it.
            Item::Check(c) => self.event("aoi:check", None, c),
            Item::Attempt(e) => self.attempt(at, e),
            // A local, retryable `aoi:error`, so a second `aoitap verify`
            // of the report finds the same 75 (docs/contract.md §3.3;
            // spec §9.2: `timeout` is retryable).
            Item::TimedOut(message) => {
                let timeout = Local {
                    warning: false,
                    category: "timeout",
                    code: "TIMEOUT",
                    message,
                };
                self.error(&timeout, true)
            }
            Item::Hold | Item::Release(_) => Ok(()),
        }
    }

    /// The terminal `aoi:summary`, whose `ok` is the exit status being 0.
    fn end(&mut self, at: &At<'_>, exit: Exit, t: &Tally) -> io::Result<()> {
        let ok = exit == Exit::Pass;
        if !ok && exit == Exit::Nonconforming && self.errors == 0 {
            let n = t.findings[Severity::Error as usize];
            let msg = if n > 0 {
                format!(
                    "the input does not conform to AOI-CLI: {}",
                    plural(n, "error finding")
                )
            } else {
                "the input is incomplete or does not reconcile".to_string()
            };
            let error = Local {
                warning: false,
                category: "validation",
                code: "STREAM_NONCONFORMING",
                message: &msg,
            };
            self.error(&error, false)?;
        }
        let reason = (!ok).then(|| {
            let cancelled = exit.cancelled();
            at.reason
                .unwrap_or(if cancelled { "cancelled" } else { "failed" })
        });
        // A timeout is aoitap's own doing: its local error is the cause,
        // not what the upstream said before it was stopped.
        let timed_out = at.timed_out();
        // A retryable cause is not this report's when it fails for good (a
        // failed run beside a retryable one is 1, docs/contract.md §4.1): carried, it
        // made a second verify of the report say 75.
        let caused_by = t
            .cause
            .as_ref()
            .filter(|c| exit == Exit::Retryable || (exit == Exit::Failed && !c.retryable))
            .filter(|_| !ok && !timed_out)
            .map(|c| CausedBy {
                origin: c
                    .origin
                    .as_deref()
                    .or_else(|| t.identity.as_ref().and_then(|i| i.tool.as_deref())),
                category: c.category.as_deref(),
                code: c.code.as_deref(),
                retryable: c.retryable,
                retry_after_ms: c.retry_after_ms,
            });
        let upstream = t.identity.as_ref().map(|id| Upstream {
            tool: id.tool.as_deref(),
            tool_version: id.tool_version.as_deref(),
            schema_name: id.schema_name.as_deref(),
            schema_version: id.schema_version.as_deref(),
        });
        let summary = Summary {
            ok,
            reason,
            // This summary is one of the events.
            event_count: self.seq + 1,
            count: self.domain,
            input_count: t.input_domain,
            warning_count: t.upstream_warnings + self.warnings,
            error_count: t.upstream_errors + self.errors,
            partial: false,
            truncated: at.dropped > 0,
            caused_by,
            upstream,
            properties: Some(Properties {
                error_findings: t.findings[Severity::Error as usize],
                warning_findings: t.findings[Severity::Warning as usize],
                info_findings: t.findings[Severity::Info as usize],
                findings_not_shown: at.dropped,
            }),
            identity: IDENTITY,
        };
        self.event("aoi:summary", None, summary)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The head of one line of aoitap's stream: the type, the envelope (spec
/// §8.1), `file` on events about an input; the event's own fields follow
/// (`splice`).
#[derive(Serialize)]
pub struct Head<'a> {
    #[serde(rename = "type")]
    pub ty: &'a str,
    pub aoi: Envelope<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<&'a str>,
}

/// The one splice of a line aoitap writes: `head`'s members, then
/// `body`'s (one JSON object's bytes) in the same object, as
/// `#[serde(flatten)]` would put them, and the line's break. Every
/// event of aoitap's own, `upgrade`'s too, is written by it.
pub fn splice(buf: &mut Vec<u8>, head: &Head<'_>, body: &[u8]) -> io::Result<()> {
    serde_json::to_writer(&mut *buf, head).map_err(io::Error::other)?;
    match body.strip_prefix(b"{") {
        Some(b"}") => {}
        Some(fields) => {
            buf.pop();
            buf.push(b',');
            buf.extend_from_slice(fields);
        }
        None => return Err(io::Error::other("an event's body is not a JSON object")),
    }
    buf.push(b'\n');
    Ok(())
}

#[derive(Serialize)]
pub struct Envelope<'a> {
    pub seq: u64,
    pub run: &'a str,
}

/// The identity aoitap gives at both ends of its stream (spec §5).
#[derive(Serialize)]
pub struct Identity {
    tool: &'static str,
    tool_version: &'static str,
    aoi_version: &'static str,
    schema_name: &'static str,
    schema_version: &'static str,
}

pub const IDENTITY: Identity = Identity {
    tool: TOOL,
    tool_version: TOOL_VERSION,
    aoi_version: AOI_VERSION,
    schema_name: SCHEMA_NAME,
    schema_version: SCHEMA_VERSION,
};

#[derive(Serialize)]
pub struct Meta<'a> {
    #[serde(flatten)]
    pub identity: Identity,
    pub command: &'a str,
}

/// `aoi:warning` (spec §8.3), about aoitap itself: something it goes on
/// despite.
#[derive(Serialize)]
pub struct Warning<'a> {
    pub category: &'a str,
    pub code: &'a str,
    pub message: &'a str,
}

/// `aoi:error` (spec §9), about aoitap itself: always `scope:"process"`.
#[derive(Serialize)]
pub struct Error<'a> {
    pub category: &'a str,
    pub code: &'a str,
    pub message: &'a str,
    pub retryable: bool,
    pub scope: &'static str,
}

/// `aoi:summary` (spec §8.3, §13.1).
#[derive(Serialize)]
pub struct Summary<'a> {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'a str>,
    pub event_count: u64,
    pub count: u64,
    pub input_count: u64,
    pub warning_count: u64,
    pub error_count: u64,
    pub partial: bool,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caused_by: Option<CausedBy<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<Upstream<'a>>,
    /// aoitap's findings about its input; `upgrade`'s stream, which is the
    /// upstream's events under aoitap's envelope, carries none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<Properties>,
    #[serde(flatten)]
    pub identity: Identity,
}

#[derive(Serialize)]
pub struct CausedBy<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'a str>,
    pub retryable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

#[derive(Serialize)]
pub struct Upstream<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_version: Option<&'a str>,
}

#[derive(Serialize)]
pub struct Properties {
    pub error_findings: u64,
    pub warning_findings: u64,
    pub info_findings: u64,
    pub findings_not_shown: u64,
}

/// `finding`: one rule broken at one place.
#[derive(Serialize)]
pub struct Finding<'a> {
    pub rule: &'a str,
    pub severity: &'a str,
    pub file: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_number: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_from: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_to: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyword: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_path: Option<&'a str>,
    pub message: &'a str,
}

/// `open_run`: a run still open when reading stopped (a signal, a time
/// limit): named, never judged, so never a pass (docs/contract.md §2.3).
#[derive(Serialize)]
pub struct OpenRun<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<&'a str>,
    pub first_line: u64,
    pub lines: u64,
    pub message: &'a str,
}

/// `run`: a run's verdict.
#[derive(Serialize)]
pub struct Run<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<&'a str>,
    pub first_line: u64,
    pub lines: u64,
    /// The producer and command its meta (or profile) names: what a
    /// reader of many reports counts runs by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<&'a str>,
    pub protocol: &'a str,
    pub verdict: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    pub message: &'a str,
}

/// `attempt`: how one attempt of `run`'s command ended (docs/contract.md §1.3).
#[derive(Serialize)]
pub struct Attempt<'a> {
    pub command: &'a str,
    pub attempt: u32,
    pub attempts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<&'a str>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub elapsed_ms: u64,
    pub exit: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_in_ms: Option<u64>,
    pub message: &'a str,
}

/// A ULID (spec §8.1 recommends one for `aoi.run`): 48 bits of
/// milliseconds, 80 bits of randomness, Crockford base32.
pub fn ulid() -> String {
    const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut random = [0u8; 10];
    let from_os = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| io::Read::read_exact(&mut f, &mut random));
    if from_os.is_err() {
        // No /dev/urandom: mix the clock and the pid, which is unique
        // enough for a run id that is never a secret.
        let seed = (ms ^ u64::from(std::process::id()).rotate_left(32))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        random[..8].copy_from_slice(&seed.to_le_bytes());
    }
    let mut value = u128::from(ms & 0xffff_ffff_ffff) << 80;
    for (i, b) in random.iter().enumerate() {
        value |= u128::from(*b) << (8 * (9 - i));
    }
    (0..26)
        .rev()
        .map(|i| ALPHABET[((value >> (5 * i)) & 31) as usize] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulids_are_26_crockford_chars_and_differ() {
        let (a, b) = (ulid(), ulid());
        assert_eq!(a.len(), 26);
        assert!(
            a.bytes()
                .all(|c| b"0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(&c))
        );
        assert_ne!(a, b);
    }

    /// aoitap's own stream: `aoi:meta` first, one run, `seq` from 0
    /// without a gap, and a terminal summary that counts its events,
    /// its domain events and its own errors (docs/contract.md §5.1).
    #[test]
    fn the_stream_is_whole_and_its_summary_counts_it() {
        use crate::check::Verdict;
        use crate::output::printer::tests::{at, gap};
        let style = Style::plain(Format::Jsonl);
        let at = at("verify", "a.jsonl", &style);
        let mut jsonl = Jsonl::new(Vec::new());
        jsonl.begin(&at).unwrap();
        jsonl.finding(&at, &gap(2)).unwrap();
        let run = RunVerdict::sample(Some("r1"), Verdict::Nonconforming, "lines were lost");
        jsonl.run(&at, &run, None).unwrap();
        let cut = Local {
            warning: false,
            category: "io",
            code: "IO_FAILED",
            message: "read\nfailed",
        };
        jsonl.local(&at, &cut).unwrap();
        jsonl
            .end(&at, Exit::Nonconforming, &Tally::default())
            .unwrap();
        let lines: Vec<serde_json::Value> = jsonl
            .out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
        assert_eq!(
            types,
            ["aoi:meta", "finding", "run", "aoi:error", "aoi:summary"]
        );
        for (i, l) in lines.iter().enumerate() {
            assert_eq!(l["aoi"]["seq"], i as u64);
            assert_eq!(l["aoi"]["run"], lines[0]["aoi"]["run"]);
        }
        assert_eq!(
            lines[3]["message"], "read\\nfailed",
            "its break shown, on one line"
        );
        let summary = &lines[4];
        assert_eq!(summary["ok"], false);
        assert_eq!(summary["event_count"], 5);
        assert_eq!(summary["count"], 2);
        assert_eq!(summary["error_count"], 1, "its own error, no second");
    }
}

//! The report writer: human findings and verdicts (colour: `style.rs`),
//! aoitap's own AOI stream (DESIGN §5; the wire structs: `jsonl.rs`), TAP
//! (`tap.rs`), or what CI systems read (DESIGN §19): JUnit XML
//! (`junit.rs`), SARIF (`sarif.rs`), GitHub workflow commands
//! (`github.rs`). It writes; it decides nothing: the exit status is made
//! from `check::Tally`, which the writer only reads for the summary.
//!
//! In jsonl mode aoitap is an AOI producer and keeps its own rules: one
//! `aoi:meta` first, `seq` contiguous from 0 on one `run`, a terminal
//! `aoi:summary` with `event_count`, the identity triple at both ends
//! (§5), `upstream` for what it read and `caused_by` when failing because
//! of it (§13.1). Upstream `aoi:error`/`aoi:warning` are counted, never
//! forwarded.

use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::check::rules::Severity;
use crate::check::{Finding, OpenRun, RunVerdict, Tally, Verdict};
use crate::exit::{Error, Exit};
use crate::output::junit::Junit;
use crate::output::sarif::Sarif;
use crate::output::tap::Tap;
use crate::text::{clean, one_line, plural, seconds};
use style::{Format, Style};

pub mod discover;
mod github;
pub mod human;
mod identity;
pub mod jsonl;
pub mod junit;
pub mod progress;
pub mod reconcile;
pub mod relay;
pub mod sarif;
pub mod style;
pub mod summary;
pub mod tap;

pub use identity::{AOI_VERSION, SCHEMA_NAME, SCHEMA_VERSION, TOOL, TOOL_VERSION};

pub struct Emitter<W: Write> {
    out: W,
    style: Style,
    command: String,
    /// The input being read, as findings name it.
    pub file: String,
    run_id: String,
    seq: u64,
    domain_emitted: u64,
    local_errors: u64,
    local_warnings: u64,
    /// Findings written, and those left out because of --limit.
    shown: u64,
    /// `Style::per_input`: the input whose findings are being counted, how
    /// many were shown and how many left out and not yet said.
    capped: (String, u64, u64),
    dropped: u64,
    tap: Tap,
    junit: Junit,
    sarif: Sarif,
    /// The summary's `reason` when it is not the exit's own (`timeout`).
    pub reason: Option<&'static str>,
    /// The human and TAP result line, when the command words its own
    /// (lint), in place of verify's.
    pub result: Option<String>,
}

impl<W: Write> Emitter<W> {
    pub fn new(out: W, style: Style, command: impl Into<String>) -> Emitter<W> {
        Emitter {
            out,
            style,
            command: command.into(),
            file: String::new(),
            run_id: ulid(),
            seq: 0,
            domain_emitted: 0,
            local_errors: 0,
            local_warnings: 0,
            shown: 0,
            capped: (String::new(), 0, 0),
            dropped: 0,
            tap: Tap::default(),
            junit: Junit::default(),
            sarif: Sarif::default(),
            reason: None,
            result: None,
        }
    }

    fn jsonl(&self) -> bool {
        self.style.format == Format::Jsonl && !self.style.quiet
    }

    fn human(&self) -> bool {
        self.style.format == Format::Human && !self.style.quiet
    }

    fn tap(&self) -> bool {
        self.style.format == Format::Tap && !self.style.quiet
    }

    fn junit(&self) -> bool {
        self.style.format == Format::Junit && !self.style.quiet
    }

    fn sarif(&self) -> bool {
        self.style.format == Format::Sarif && !self.style.quiet
    }

    fn github(&self) -> bool {
        self.style.format == Format::Github && !self.style.quiet
    }

    /// Write one event of aoitap's own stream, envelope filled in; `file`
    /// for events about an input.
    fn event<T: Serialize>(&mut self, ty: &str, file: bool, body: T) -> io::Result<()> {
        let line = jsonl::Line {
            ty,
            aoi: jsonl::Envelope {
                seq: self.seq,
                run: &self.run_id,
            },
            file: file.then_some(self.file.as_str()),
            body,
        };
        let mut buf = serde_json::to_vec(&line).map_err(io::Error::other)?;
        buf.push(b'\n');
        self.seq += 1;
        self.out.write_all(&buf)
    }

    /// Write a domain event of a command's own (jsonl mode only).
    pub fn domain<T: Serialize>(&mut self, ty: &str, body: T) -> io::Result<()> {
        if !self.jsonl() {
            return Ok(());
        }
        self.domain_emitted += 1;
        self.event(ty, true, body)
    }

    /// Bytes as they are (the one object of `--output json`).
    pub fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        if !self.style.quiet {
            self.out.write_all(bytes)?;
        }
        Ok(())
    }

    pub fn format(&self) -> Format {
        self.style.format
    }

    /// Write human text (human mode; a comment in TAP; a plain log line
    /// among GitHub's commands).
    pub fn text(&mut self, text: &str) -> io::Result<()> {
        if self.human() || self.github() {
            self.out.write_all(text.as_bytes())?;
        } else if self.tap() {
            self.tap.comment(&mut self.out, text)?;
        }
        Ok(())
    }

    pub fn color(&self) -> bool {
        self.style.color
    }

    /// Start the report: `aoi:meta` in jsonl mode.
    pub fn begin(&mut self) -> io::Result<()> {
        if self.tap() {
            return self.tap.begin(&mut self.out);
        }
        if self.sarif() {
            return self.sarif.begin(&mut self.out);
        }
        if self.junit() {
            return self.junit.begin(&mut self.out, &self.command);
        }
        if !self.jsonl() {
            return Ok(());
        }
        let command = self.command.clone();
        let meta = jsonl::Meta {
            identity: jsonl::IDENTITY,
            command: &command,
        };
        self.event("aoi:meta", false, meta)?;
        // Out at once: a reader can tell "started" from "wedged" (§13.1).
        self.out.flush()
    }

    /// `run`: the command was stopped at `--timeout`. jsonl carries it as
    /// a local, retryable `aoi:error`, so a second `aoitap verify` of the
    /// report finds the same 75 (DESIGN §13; spec §9.2: `timeout` is
    /// retryable); human and TAP reports say it in the attempt.
    pub fn timed_out(&mut self, message: &str) -> io::Result<()> {
        if !self.jsonl() {
            return Ok(());
        }
        self.local_errors += 1;
        let error = jsonl::Error {
            category: "timeout",
            code: "TIMEOUT",
            message: &one_line(message),
            retryable: true,
            scope: "process",
        };
        self.event("aoi:error", false, error)
    }

    /// Whether `local_error` writes into the report (jsonl, TAP, JUnit,
    /// GitHub) rather than on stderr.
    pub fn carries_errors(&self) -> bool {
        self.jsonl() || self.tap() || self.junit() || self.github()
    }

    /// A failure of aoitap itself (unreadable input, I/O): an `aoi:error`
    /// in jsonl mode, a message on stderr otherwise.
    pub fn local_error(&mut self, category: &str, code: &str, message: &str) -> io::Result<()> {
        self.local_errors += 1;
        if self.jsonl() {
            let error = jsonl::Error {
                category,
                code,
                message: &one_line(message),
                retryable: false,
                scope: "process",
            };
            self.event("aoi:error", false, error)
        } else if self.tap() {
            self.tap.local_error(&mut self.out, code, message)
        } else if self.junit() {
            self.junit
                .local_error(&mut self.out, &self.file, code, message)
        } else if self.github() {
            self.out
                .write_all(github::local_error(code, message).as_bytes())
        } else {
            crate::say!("aoitap: {}", one_line(message));
            Ok(())
        }
    }

    /// Something aoitap goes on despite (`--follow` waiting for a name): an
    /// `aoi:warning` in jsonl, counted in the summary's `warning_count`
    /// (spec §8.3); a TAP comment; a GitHub warning; a message on stderr
    /// otherwise. Never the exit status.
    pub fn local_warning(&mut self, category: &str, code: &str, message: &str) -> io::Result<()> {
        self.local_warnings += 1;
        let message = one_line(message);
        if self.jsonl() {
            let warning = jsonl::Warning {
                category,
                code,
                message: &message,
            };
            self.event("aoi:warning", false, warning)
        } else if self.tap() {
            writeln!(self.out, "# {message}")
        } else if self.github() {
            self.out
                .write_all(github::local_warning(code, &message).as_bytes())
        } else {
            crate::say!("aoitap: {message}");
            Ok(())
        }
    }

    /// End the report: the closing line (human) or the terminal
    /// `aoi:summary` (jsonl), whose `ok` is the exit status being 0.
    pub fn end(&mut self, exit: Exit, tally: &Tally) -> io::Result<()> {
        let dropped = self.dropped;
        let worded = |e: &Self| match &e.result {
            Some(r) => r.clone(),
            None => human::result(exit, tally, e.reason == Some("timeout"), false),
        };
        if self.junit() {
            let result = worded(self);
            let command = self.command.clone();
            self.junit
                .end(&mut self.out, &command, exit == Exit::Pass, &result)?;
        }
        if self.sarif() {
            let executed = self.local_errors == 0;
            self.sarif
                .end(&mut self.out, i32::from(exit.code()), executed)?;
        }
        if self.github() {
            let mut line = String::new();
            if dropped > 0 {
                line.push_str(&format!("{dropped} more findings not shown (--limit)\n"));
            }
            line.push_str(&worded(self));
            line.push('\n');
            self.out.write_all(line.as_bytes())?;
        }
        self.say_capped()?;
        if self.human() && !(self.style.quiet_pass && exit == Exit::Pass) {
            let mut line = String::new();
            if dropped > 0 {
                line.push_str(&format!("{dropped} more findings not shown (--limit)\n"));
            }
            match &self.result {
                Some(r) => line.push_str(r),
                None => line.push_str(&human::result(
                    exit,
                    tally,
                    self.reason == Some("timeout"),
                    self.style.color,
                )),
            }
            line.push('\n');
            self.out.write_all(line.as_bytes())?;
        }
        if self.tap() {
            let result = worded(self);
            self.tap.end(&mut self.out, exit == Exit::Pass, &result)?;
        }
        if self.jsonl() {
            let ok = exit == Exit::Pass;
            if !ok && exit == Exit::Nonconforming && self.local_errors == 0 {
                let n = tally.findings[Severity::Error as usize];
                let msg = if n > 0 {
                    format!(
                        "the input does not conform to AOI-CLI: {}",
                        plural(n, "error finding")
                    )
                } else {
                    "the input is incomplete or does not reconcile".to_string()
                };
                self.local_error("validation", "STREAM_NONCONFORMING", &msg)?;
            }
            let t = tally;
            let reason = (!ok).then(|| {
                let cancelled = exit.cancelled();
                self.reason
                    .unwrap_or(if cancelled { "cancelled" } else { "failed" })
            });
            // A timeout is aoitap's own doing: its local error is the
            // cause, not what the upstream said before it was stopped.
            let timed_out = self.reason == Some("timeout");
            // A retryable cause is not this report's when it fails for
            // good (a failed run beside a retryable one is 1, DESIGN §4):
            // carried, it made a second verify of the report say 75.
            let caused_by = t
                .cause
                .as_ref()
                .filter(|c| exit == Exit::Retryable || (exit == Exit::Failed && !c.retryable))
                .filter(|_| !ok && !timed_out)
                .map(|c| jsonl::CausedBy {
                    origin: c
                        .origin
                        .as_deref()
                        .or_else(|| t.identity.as_ref().and_then(|i| i.tool.as_deref())),
                    category: c.category.as_deref(),
                    code: c.code.as_deref(),
                    retryable: c.retryable,
                    retry_after_ms: c.retry_after_ms,
                });
            let upstream = t.identity.as_ref().map(|id| jsonl::Upstream {
                tool: id.tool.as_deref(),
                tool_version: id.tool_version.as_deref(),
                schema_name: id.schema_name.as_deref(),
                schema_version: id.schema_version.as_deref(),
            });
            let summary = jsonl::Summary {
                ok,
                reason,
                // This summary is one of the events.
                event_count: self.seq + 1,
                count: self.domain_emitted,
                input_count: t.input_domain,
                warning_count: t.upstream_warnings + self.local_warnings,
                error_count: t.upstream_errors + self.local_errors,
                partial: false,
                truncated: dropped > 0,
                caused_by,
                upstream,
                properties: jsonl::Properties {
                    error_findings: t.findings[Severity::Error as usize],
                    warning_findings: t.findings[Severity::Warning as usize],
                    info_findings: t.findings[Severity::Info as usize],
                    findings_not_shown: dropped,
                },
                identity: jsonl::IDENTITY,
            };
            self.event("aoi:summary", false, summary)?;
        }
        self.out.flush()
    }

    /// `lint`: one check's result, an `aoi:check` event in jsonl (spec
    /// §8.3), a line in human output, a test point in TAP.
    pub fn check(&mut self, c: &jsonl::Check<'_>) -> io::Result<()> {
        if self.junit() {
            let suite = if self.file.is_empty() {
                self.command.clone()
            } else {
                self.file.clone()
            };
            return self.junit.check(&mut self.out, &suite, c);
        }
        if self.jsonl() {
            // aoi:check is a framework event: the summary's count stays
            // that of domain events (0), as spec §19.3's doctor has it.
            return self.event("aoi:check", false, c);
        }
        if self.tap() {
            let what = format!("{}: {}", c.name, c.detail);
            let directive = match c.properties.result {
                "skipped" | "not-claimed" | "inconclusive" => {
                    Some(format!("SKIP {}", c.properties.result))
                }
                "expected-failure" => Some("TODO expected failure".to_string()),
                _ => None,
            };
            // An expected failure is a failure TAP does not count.
            let ok = c.ok && c.properties.result != "expected-failure";
            return self
                .tap
                .check(&mut self.out, ok, &what, directive.as_deref());
        }
        if self.human() {
            let line = format!(
                "{:<16} {} — {}\n",
                c.properties.result,
                c.name,
                clean(c.detail)
            );
            self.out.write_all(line.as_bytes())?;
        }
        Ok(())
    }

    /// `run`: how one attempt of the command ended (DESIGN §12).
    pub fn attempt(&mut self, a: &Attempt<'_>) -> io::Result<()> {
        // The input's label names the attempt ("tool (attempt 2 of 4)").
        let mut message = format!("{} after {}", a.ended, seconds(a.elapsed_ms));
        if let Some(ms) = a.retry_in_ms {
            message.push_str(&format!("; again in {}", seconds(ms)));
        }
        if let Some(why) = a.note {
            message.push_str(&format!("; {why}"));
        }
        if self.human() || self.github() {
            let text = format!("{}: {}\n", clean(&self.file), clean(&message));
            self.out.write_all(text.as_bytes())?;
        }
        if self.junit() {
            let stopped = match (a.timed_out, a.cancelled) {
                (true, _) => Some("timeout"),
                (_, true) => Some("cancelled"),
                _ => None,
            };
            let retried = a.retry_in_ms.is_some();
            self.junit.attempt(
                &mut self.out,
                a.command,
                a.attempt,
                stopped,
                retried,
                &message,
            )?;
        }
        if self.tap() {
            if a.timed_out || a.cancelled {
                // No run was judged: the attempt is the point.
                let what = format!("{}: {message}", self.file);
                self.tap.other(&mut self.out, false, &what)?;
            } else {
                self.tap.comment(&mut self.out, &message)?;
            }
        }
        if self.jsonl() {
            let attempt = jsonl::Attempt {
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
                message: &one_line(&message),
            };
            self.domain_emitted += 1;
            self.event("attempt", true, attempt)?;
        }
        Ok(())
    }

    /// TAP: hold the points that follow (see `Tap::hold`).
    pub fn tap_hold(&mut self) {
        if self.tap() {
            self.tap.hold();
        }
    }

    /// TAP: write the held points, failures marked `# TODO why`.
    pub fn tap_release(&mut self, todo: Option<&str>) -> io::Result<()> {
        self.tap.release(&mut self.out, todo)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl<W: Write> Emitter<W> {
    /// A finding, unless --limit has been reached (then only counted).
    pub fn finding(&mut self, f: &Finding) -> io::Result<()> {
        if self.human() && self.style.failures_only && f.severity != Severity::Error {
            // Left out, not cut: --limit counts only what could be shown.
            return Ok(());
        }
        if self.style.limit.is_some_and(|n| self.shown >= n) {
            self.dropped += 1;
            return Ok(());
        }
        if let Some(cap) = self.style.per_input {
            if self.capped.0 != self.file {
                self.say_capped()?;
                self.capped = (self.file.clone(), 0, 0);
            }
            if self.capped.1 >= cap {
                self.capped.2 += 1;
                return Ok(());
            }
            self.capped.1 += 1;
        }
        self.shown += 1;
        if self.tap() {
            self.tap.finding(f);
        }
        if self.junit() {
            self.junit.finding(f);
        }
        if self.sarif() {
            self.sarif.finding(&mut self.out, &self.file, f)?;
        }
        if self.github() {
            let file = (self.command != "run").then_some(self.file.as_str());
            self.out.write_all(github::finding(file, f).as_bytes())?;
        }
        if self.human() && !(self.style.quiet_pass && f.severity == Severity::Info) {
            let text = human::finding(&self.file, f, self.style.color);
            self.out.write_all(text.as_bytes())?;
        }
        if self.jsonl() {
            let place = f.place.as_deref();
            // Findings are few: a copy of the name is cheaper than a borrow dance.
            let file = self.file.clone();
            let finding = jsonl::Finding {
                rule: f.rule.id(),
                severity: f.severity.name(),
                file: &file,
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
            self.domain_emitted += 1;
            self.event("finding", false, finding)?;
        }
        Ok(())
    }

    /// The findings `Style::per_input` left out since this was last said:
    /// said before the verdict they led to, or the next input's findings.
    fn say_capped(&mut self) -> io::Result<()> {
        let n = std::mem::take(&mut self.capped.2);
        if n == 0 {
            return Ok(());
        }
        let text = format!(
            "{}: and {} (--limit 0 shows all)\n",
            clean(&self.capped.0),
            plural(n, "more finding")
        );
        self.out.write_all(text.as_bytes())
    }

    /// A run that reading left open: `text` for a person (a comment in TAP),
    /// an `open_run` event for a program.
    pub fn open_run(&mut self, run: &OpenRun, text: &str) -> io::Result<()> {
        self.say_capped()?;
        self.text(text)?;
        if self.junit() {
            let file = self.file.clone();
            self.junit.open_run(
                &mut self.out,
                &file,
                run.name.as_deref(),
                run.first_line,
                text.trim_end(),
            )?;
        }
        if self.jsonl() {
            let open = jsonl::OpenRun {
                run: run.name.as_deref(),
                first_line: run.first_line,
                lines: run.lines,
                message: text.trim_end(),
            };
            self.domain_emitted += 1;
            self.event("open_run", true, open)?;
        }
        Ok(())
    }

    /// A run's verdict, and the file that holds its lines (split-by-run).
    pub fn run_at(&mut self, r: &RunVerdict, path: Option<&str>) -> io::Result<()> {
        self.say_capped()?;
        if self.tap() {
            self.tap.run(&mut self.out, &self.file, r)?;
        }
        if self.junit() {
            self.junit
                .run(&mut self.out, &self.file, r, self.command == "run")?;
        }
        let file = (self.command != "run").then_some(self.file.as_str());
        if let Some(line) = github::run(file, r).filter(|_| self.github()) {
            self.out.write_all(line.as_bytes())?;
        }
        let passed = r.verdict == Verdict::Pass;
        if self.human() && !((self.style.quiet_pass || self.style.failures_only) && passed) {
            let text = human::run(&self.file, r, path, self.style.color);
            self.out.write_all(text.as_bytes())?;
        }
        if self.jsonl() {
            let run = jsonl::Run {
                run: r.run.as_deref(),
                path,
                first_line: r.first_line,
                lines: r.lines,
                protocol: r.protocol.name(),
                verdict: r.verdict.name(),
                retry_after_ms: r
                    .cause
                    .as_ref()
                    .filter(|c| c.retryable)
                    .and_then(|c| c.retry_after_ms),
                message: &r.message,
            };
            self.domain_emitted += 1;
            self.event("run", true, run)?;
        }
        Ok(())
    }
}

/// A command that could not start, as a whole AOI stream on stdout (meta,
/// the error, the summary), for a reader that asked for jsonl and parses
/// stdout whatever happens.
/// `on_stderr`: the command's report goes there (filter, strip-envelope,
/// verify --relay), and stdout is the data a downstream reads.
pub fn error_stream(command: &str, err: &Error, on_stderr: bool) -> io::Result<()> {
    let style = Style {
        format: Format::Jsonl,
        quiet: false,
        quiet_pass: false,
        failures_only: false,
        color: false,
        limit: None,
        per_input: None,
    };
    let exit = err.exit();
    let (category, code) = match exit {
        Exit::Usage => ("usage", "USAGE"),
        Exit::NoInput => ("not_found", "INPUT_NOT_FOUND"),
        Exit::CantCreate => ("conflict", "OUTPUT_FAILED"),
        Exit::CommandNotFound => ("not_found", "COMMAND_NOT_FOUND"),
        Exit::CannotExecute => ("usage", "COMMAND_NOT_EXECUTABLE"),
        _ => ("io", "IO_FAILED"),
    };
    let out: Box<dyn Write> = if on_stderr {
        Box::new(io::stderr())
    } else {
        Box::new(io::stdout())
    };
    let mut em = Emitter::new(out, style, command);
    em.begin()?;
    em.local_error(category, code, &err.to_string())?;
    em.end(exit, &Tally::default())
}

/// How one attempt of `run`'s command ended.
pub struct Attempt<'a> {
    pub attempt: u32,
    pub attempts: u32,
    pub command: &'a str,
    /// "exited 0", "was killed by SIGKILL", "timed out (--timeout 2s)".
    pub ended: &'a str,
    pub exit_status: Option<i32>,
    pub signal: Option<&'a str>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub elapsed_ms: u64,
    /// The attempt's own verdict as an exit status.
    pub exit: Exit,
    pub retry_in_ms: Option<u64>,
    /// Why there is no retry, when one was wanted.
    pub note: Option<&'a str>,
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
}

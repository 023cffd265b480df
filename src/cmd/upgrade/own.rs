//! One run of the upgraded stream, aoitap's own (spec §8.1, §13.1): its
//! meta first, each line's envelope (`aoi.seq` from 0 on one `aoi.run`),
//! and its terminal summary, whose counts are those of the lines it wrote.

use std::io::{self, Write};

use serde::Serialize;

use super::codes::{category_of, category_of_code, code_of};
use crate::check::{Cause, Identity};
use crate::json::{Arena, Parser};
use crate::output::jsonl::{self, CausedBy, Envelope, Head, IDENTITY, Meta, Summary, Upstream};
use crate::text::one_line;

/// How the upstream run ended, as the summary says it (spec §13.1).
pub struct Outcome<'a> {
    pub ok: bool,
    /// `reason` when not ok: failed, cancelled.
    pub reason: &'static str,
    /// The upstream error behind a failure, retry fields and all.
    pub cause: Option<&'a Cause>,
    /// The upstream's verdict is retryable (75): a cause said in its
    /// place must be as retryable as the verdict, or a reader would find
    /// another verdict downstream.
    pub retryable: bool,
    pub identity: Option<&'a Identity>,
    /// Lines were lost upstream: what said so.
    pub lost: Option<&'a str>,
    /// Why the upstream does not conform, when that is why it fails.
    pub nonconforming: Option<&'a str>,
    /// The input could not be opened or read whole.
    pub unread: bool,
    /// `run --timeout` stopped the command.
    pub timed_out: bool,
    /// aoitap's own error that ended the run before the upstream could be
    /// read (a usage error, a command that could not start): category,
    /// code, message.
    pub failure: Option<(&'static str, &'static str, String)>,
    /// Whose error a cause is, when the upstream names no tool.
    pub origin: &'a str,
}

pub struct OwnRun {
    id: String,
    /// The next line's envelope, `"aoi":{"seq":N,"run":"ID"}`, made
    /// once and counted up in its digits (`envelope`).
    next: NextEnvelope,
    seq: u64,
    /// Domain events written: the summary's `count`.
    pub count: u64,
    /// Upstream domain events read: `input_count`.
    pub input: u64,
    /// `aoi:error` and `aoi:warning` lines written, forwarded or aoitap's.
    pub errors: u64,
    pub warnings: u64,
    /// Item-scope `aoi:error` lines forwarded: with domain events written,
    /// the run is partial (spec §8.3, §9.2).
    item_errors: u64,
    /// What the upstream's meta said of it, and its summary's `partial`.
    pub upstream: Option<Identity>,
    pub upstream_partial: Option<bool>,
    /// The upstream's tool, from its meta: the origin of what is
    /// forwarded.
    pub tool: Option<String>,
    /// The most severe error forwarded, as written: what `caused_by`
    /// says when the upstream's verdict names no cause of its own.
    forwarded: Option<Cause>,
}

impl Outcome<'_> {
    /// A run that failed on aoitap's own error, before anything was read.
    pub fn failed(category: &'static str, code: &'static str, message: String) -> Outcome<'static> {
        Outcome {
            ok: false,
            reason: "failed",
            cause: None,
            retryable: false,
            identity: None,
            lost: None,
            nonconforming: None,
            unread: false,
            timed_out: false,
            failure: Some((category, code, message)),
            origin: crate::output::TOOL,
        }
    }
}

impl OwnRun {
    /// A run not yet begun: `begin` writes its meta.
    pub fn new() -> OwnRun {
        let id = jsonl::ulid();
        OwnRun {
            next: NextEnvelope::new(&id),
            id,
            seq: 0,
            count: 0,
            input: 0,
            errors: 0,
            warnings: 0,
            item_errors: 0,
            upstream: None,
            upstream_partial: None,
            tool: None,
            forwarded: None,
        }
    }

    /// An error was forwarded as `line` says it: kept when it is more
    /// severe than the one kept (a final one over a retryable one, else
    /// the longer wait), as the verdict weighs them.
    pub fn forwarded(&mut self, line: &[u8]) {
        let mut arena = Arena::default();
        let Ok(index) = Parser::new().parse(line, &mut arena) else {
            return;
        };
        let ev = index.event(line, &arena);
        let text = |k: &str| ev.get(k).and_then(|v| v.as_str()).map(|s| s.into_owned());
        if text("scope").as_deref() == Some("item") {
            self.item_errors += 1;
        }
        let c = Cause {
            origin: text("origin"),
            category: text("category"),
            code: text("code"),
            retryable: ev.get("retryable").and_then(|v| v.as_bool()) == Some(true),
            retry_after_ms: ev.get("retry_after_ms").and_then(|v| v.uint()),
        };
        if c.outweighs(self.forwarded.as_ref(), !c.retryable) {
            self.forwarded = Some(c);
        }
    }

    /// Whose an upstream error is: its tool, else `unnamed`.
    pub fn origin(&self, unnamed: &str) -> String {
        self.tool.clone().unwrap_or_else(|| unnamed.to_string())
    }

    pub fn begun(&self) -> bool {
        self.seq > 0
    }

    /// Its meta, written at once: a reader can tell "started" from
    /// "wedged" before the upstream says anything (spec §13.1). Once.
    pub fn begin(&mut self, out: &mut dyn Write, command: &str) -> io::Result<()> {
        if self.begun() {
            return Ok(());
        }
        let meta = Meta {
            identity: IDENTITY,
            command,
        };
        self.own_line(out, "aoi:meta", &meta)
    }

    /// `"aoi":{"seq":N,"run":"ID"}`, this line's: the next seq is taken.
    /// (What `Envelope` serializes to, made once and counted up: this is
    /// written on every line.)
    pub fn envelope(&mut self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(self.next.at(self.seq));
        self.seq += 1;
        self.next.count_up();
    }

    /// One event of aoitap's own: its type, its envelope, `body`'s fields.
    fn own_line<T: Serialize>(
        &mut self,
        out: &mut dyn Write,
        ty: &str,
        body: &T,
    ) -> io::Result<()> {
        let body = serde_json::to_vec(body).map_err(io::Error::other)?;
        let head = Head {
            ty,
            aoi: Envelope {
                seq: self.seq,
                run: &self.id,
            },
            file: None,
        };
        let mut line = Vec::with_capacity(64 + body.len());
        jsonl::splice(&mut line, &head, &body)?;
        self.seq += 1;
        out.write_all(&line)
    }

    /// The terminal summary, after aoitap's own `aoi:error` when the
    /// upstream was cut (category `io`, spec §13.1) or does not conform:
    /// `ok` and `reason` are the upstream's verdict, `caused_by` its retry
    /// fields, `upstream` its identity. A run never begun begins here.
    pub fn end(mut self, out: &mut dyn Write, command: &str, o: &Outcome<'_>) -> io::Result<()> {
        if !self.begun() {
            self.begin(out, command)?;
        }
        // aoitap's own error, when it writes one, is why the run fails:
        // never a forwarded retryable one that a cut or broken upstream
        // happens to hold.
        let own_cause = self.own_error(out, o)?;
        // The most severe error forwarded, when the verdict names no
        // cause: as retryable as the verdict is (a retryable item error in
        // a run that failed for good is no reason to retry the run).
        let forwarded = self.forwarded.take().map(|mut c| {
            if c.retryable != o.retryable {
                c.retryable = o.retryable;
                c.retry_after_ms = None;
            }
            c
        });
        let cause = own_cause
            .as_ref()
            .or(o.cause)
            .or(forwarded.as_ref())
            .filter(|_| !o.ok)
            .map(|c| {
                let category = match &c.category {
                    Some(k) => category_of(k),
                    None => category_of_code(c.code.as_deref(), c.retryable),
                };
                (c, category, code_of(c.code.as_deref(), "UPSTREAM_ERROR"))
            });
        let upstream = self.upstream.take();
        let id = o.identity.or(upstream.as_ref());
        let text = |f: fn(&Identity) -> &Option<String>| id.and_then(|i| f(i).as_deref());
        let summary = Summary {
            ok: o.ok,
            reason: (!o.ok).then_some(o.reason),
            // This summary is one of the events.
            event_count: self.seq + 1,
            count: self.count,
            input_count: self.input,
            warning_count: self.warnings,
            error_count: self.errors,
            // The upstream's own word, else as the spec weighs it (item
            // errors beside domain output); never when the run fails on
            // aoitap's own error: lines lost or a broken upstream are no
            // partial success a reader may accept.
            partial: own_cause.is_none()
                && self
                    .upstream_partial
                    .unwrap_or(self.item_errors > 0 && self.count > 0),
            truncated: false,
            // As the forwarded error says them: a 1.0 category and code.
            caused_by: cause.as_ref().map(|(c, category, code)| CausedBy {
                origin: c.origin.as_deref().or(text(|i| &i.tool)).or(Some(o.origin)),
                category: Some(category),
                code: Some(code),
                retryable: c.retryable,
                retry_after_ms: c.retry_after_ms.filter(|_| c.retryable),
            }),
            // Omitted, never nulls, when the upstream said nothing of
            // itself (spec §13.1).
            upstream: id
                .filter(|i| i.tool.is_some() || i.schema_name.is_some())
                .map(|_| Upstream {
                    tool: text(|i| &i.tool),
                    tool_version: text(|i| &i.tool_version),
                    schema_name: text(|i| &i.schema_name),
                    schema_version: text(|i| &i.schema_version),
                }),
            properties: None,
            identity: IDENTITY,
        };
        self.own_line(out, "aoi:summary", &summary)
    }

    /// aoitap's own `aoi:error`, for a run that fails for a reason of
    /// aoitap's (run's --timeout, the upstream cut, not conforming or
    /// unreadable): written, and the cause the summary then names.
    fn own_error(&mut self, out: &mut dyn Write, o: &Outcome<'_>) -> io::Result<Option<Cause>> {
        if o.ok {
            return Ok(None);
        }
        let (category, code, msg) = match (o.lost, o.nonconforming) {
            _ if o.failure.is_some() => o.failure.clone().expect("matched"),
            _ if o.timed_out => (
                "timeout",
                "TIMEOUT",
                "the command was stopped at run's --timeout".to_string(),
            ),
            (Some(why), _) => (
                "io",
                "UPSTREAM_CUT",
                format!("the upstream stream was cut: {why}"),
            ),
            (None, Some(why)) => (
                "validation",
                "UPSTREAM_NONCONFORMING",
                format!("the upstream stream does not conform: {why}"),
            ),
            (None, None) if o.unread => (
                "io",
                "UPSTREAM_UNREADABLE",
                "the upstream stream could not be read whole".to_string(),
            ),
            (None, None) => ("", "", String::new()),
        };
        if code.is_empty() {
            return Ok(None);
        }
        self.errors += 1;
        // A timeout is retryable (spec §9.2); the rest is not.
        let error = jsonl::Error {
            category,
            code,
            message: &one_line(&msg),
            retryable: o.timed_out,
            scope: "process",
        };
        self.own_line(out, "aoi:error", &error)?;
        Ok(Some(Cause {
            origin: Some(crate::output::TOOL.to_string()),
            category: Some(category.to_string()),
            code: Some(code.to_string()),
            retryable: o.timed_out,
            retry_after_ms: None,
        }))
    }
}

/// An envelope kept made, `"aoi":{"seq":N,"run":"ID"}`, for the seq
/// after the last one written: counting up its digits in place costs a
/// byte or two a line, where formatting N again costs a division a digit.
struct NextEnvelope {
    bytes: Vec<u8>,
    /// Where N's digits are in `bytes`.
    digits: std::ops::Range<usize>,
    /// The N they say.
    seq: u64,
    /// `,"run":"ID"}`.
    run_tail: Vec<u8>,
}

impl NextEnvelope {
    fn new(id: &str) -> NextEnvelope {
        let mut run_tail = br#","run":"#.to_vec();
        serde_json::to_writer(&mut run_tail, id).expect("a string");
        run_tail.push(b'}');
        let mut next = NextEnvelope {
            bytes: vec![],
            digits: 0..0,
            seq: 0,
            run_tail,
        };
        next.make(0);
        next
    }

    fn make(&mut self, seq: u64) {
        const HEAD: &[u8] = br#""aoi":{"seq":"#;
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(seq).as_bytes();
        self.bytes.clear();
        self.bytes.extend_from_slice(HEAD);
        self.bytes.extend_from_slice(digits);
        self.bytes.extend_from_slice(&self.run_tail);
        self.digits = HEAD.len()..HEAD.len() + digits.len();
        self.seq = seq;
    }

    /// The envelope of `seq` (made again when a line of aoitap's own took
    /// a seq in between).
    fn at(&mut self, seq: u64) -> &[u8] {
        if self.seq != seq {
            self.make(seq);
        }
        &self.bytes
    }

    /// The envelope of the next seq: its last digit counted up, a carry
    /// moved left; a number that gains a digit is made again.
    fn count_up(&mut self) {
        for i in self.digits.clone().rev() {
            if self.bytes[i] < b'9' {
                self.bytes[i] += 1;
                self.seq += 1;
                return;
            }
            self.bytes[i] = b'0';
        }
        self.make(self.seq + 1);
    }
}

/// `v`'s members after those already in `buf`: `,` and its object's
/// inside, without its braces.
pub fn members<T: Serialize>(buf: &mut Vec<u8>, v: &T) {
    let body = serde_json::to_vec(v).expect("a struct of strings, numbers and booleans");
    if body.len() > 2 {
        buf.push(b',');
        buf.extend_from_slice(&body[1..body.len() - 1]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counted up in its digits, the envelope says what formatting the
    /// seq says, across every carry and every digit gained, and after a
    /// line of aoitap's own took a seq in between.
    #[test]
    fn envelope_counted_up_is_the_one_formatted() {
        let mut own = OwnRun::new();
        let run = serde_json::to_string(&own.id).unwrap();
        let mut buf = vec![];
        for seq in 0..12_345u64 {
            if seq % 1_000 == 999 {
                own.own_line(&mut io::sink(), "aoi:progress", &serde_json::json!({}))
                    .unwrap();
                continue;
            }
            buf.clear();
            own.envelope(&mut buf);
            let want = format!(r#""aoi":{{"seq":{seq},"run":{run}}}"#);
            assert_eq!(String::from_utf8_lossy(&buf), want);
        }
        own.seq = 99_999_999_999;
        for seq in 99_999_999_999..100_000_000_002u64 {
            buf.clear();
            own.envelope(&mut buf);
            let want = format!(r#""aoi":{{"seq":{seq},"run":{run}}}"#);
            assert_eq!(String::from_utf8_lossy(&buf), want);
        }
    }
}

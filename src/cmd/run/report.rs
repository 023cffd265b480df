//! What `run` tells of an attempt: how CMD ended, in words, the attempt's
//! own verdict, and the longest wait its retryable runs asked for.

use std::io;

use super::relay::Relay;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use crate::check::{Finding, RunVerdict, Sink, Verdict};
use crate::exit::Exit;
use crate::stream::Report;

/// What the report had counted (`Tally::counts`): the difference is an
/// attempt's verdict.
#[derive(Default, Clone, Copy)]
pub struct Counts([u64; 3]);

impl Counts {
    pub fn of(report: &Report) -> Counts {
        Counts(report.tally.counts())
    }

    pub fn since(self, before: Counts) -> Exit {
        let [e, f, r] = std::array::from_fn(|i| self.0[i] - before.0[i]);
        Exit::verdict(e, f, r)
    }
}

/// How an attempt's command ended, kept from `input_read` (when it is
/// known) to `end_input` (when the run's verdict is).
#[derive(Default)]
pub struct Ended {
    pub code: Option<i32>,
    pub signal: Option<String>,
    pub elapsed_ms: u64,
    pub text: String,
    pub held_open: bool,
}

/// A sink that passes everything to the report and keeps what a retry
/// needs: the longest wait a retryable run asked for.
pub struct Watch<'a> {
    pub report: &'a mut Report,
    pub retry_after_ms: &'a mut Option<u64>,
    /// `--upgrade`'s stream hears every finding and verdict too.
    pub relay: &'a mut Relay,
}

impl Sink for Watch<'_> {
    fn finding(&mut self, f: &Finding) -> io::Result<()> {
        self.relay.finding(f);
        self.report.finding(f)
    }

    fn run(&mut self, r: RunVerdict) -> io::Result<()> {
        if r.verdict == Verdict::Retryable
            && let Some(ms) = r.cause.as_ref().and_then(|c| c.retry_after_ms)
        {
            *self.retry_after_ms = Some(self.retry_after_ms.map_or(ms, |m| m.max(ms)));
        }
        self.relay.verdict(&r);
        self.report.run(r)
    }
}

/// (success, "exited 3" / "was killed by SIGKILL", code, signal name).
pub fn describe(status: &std::process::ExitStatus) -> (bool, String, Option<i32>, Option<String>) {
    if let Some(code) = status.code() {
        return (code == 0, format!("exited {code}"), Some(code), None);
    }
    let sig = status.signal().unwrap_or(0);
    let name = signal_name(sig);
    (false, format!("was killed by {name}"), None, Some(name))
}

fn signal_name(sig: i32) -> String {
    let name = match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

/// A duration as it was given: `500ms`, `2s`, `1.5s`.
pub fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if !ms.is_multiple_of(1000) || ms == 0 {
        format!("{ms}ms")
    } else {
        format!("{}s", ms / 1000)
    }
}

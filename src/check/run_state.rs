//! What is kept of one run while it is open: what every protocol shares
//! (its counts, what its meta said and how its end ended it, what the
//! verdict weighs), and one part that is its protocol's own. The rules of
//! its protocol fill it in; the verdict reads it once the run is over.

use std::any::Any;
use std::time::Instant;

use super::config::Protocol;

/// The retry-critical fields of the error that decided a failure (§13.1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cause {
    pub origin: Option<String>,
    pub category: Option<String>,
    pub code: Option<String>,
    pub retryable: bool,
    pub retry_after_ms: Option<u64>,
}

impl Cause {
    /// The final cause an error member gives by its `code` alone: what a
    /// one-shot envelope that says success and failure at once failed of.
    pub(in crate::check) fn coded(error: &crate::json::Value<'_>) -> Box<Cause> {
        let code = error.field("code").and_then(|v| v.as_str());
        Box::new(Cause {
            code: code.map(|s| s.into_owned()),
            ..Cause::default()
        })
    }

    /// Whether this cause, of a failure that is `final_` or retryable,
    /// says more than the one `kept`: a final failure's over a retryable
    /// one's, and among retryable ones the longer wait (§13.1).
    pub fn outweighs(&self, kept: Option<&Cause>, final_: bool) -> bool {
        kept.is_none_or(|k| k.retryable && (final_ || self.retry_after_ms > k.retry_after_ms))
    }
}

/// What a stream says it is (spec §5).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    pub tool: Option<String>,
    pub tool_version: Option<String>,
    pub aoi_version: Option<String>,
    pub schema_name: Option<String>,
    pub schema_version: Option<String>,
    pub command: Option<String>,
}

/// The summary's outcome fields, kept until the run is judged.
#[derive(Default)]
pub(super) struct SummaryClaim {
    pub(super) ok: Option<bool>,
    pub(super) partial: bool,
    pub(super) reason: Option<String>,
    pub(super) caused_by: Option<Cause>,
    /// What the producer said of its failure, in its words (a profile's
    /// end message, docs/contract.md §6.3).
    pub(super) said: Option<String>,
    /// Why the run failed, where that is not the producer's own report (a
    /// command that exited before its stream's end).
    pub(super) why: Option<String>,
}

/// A protocol's own part of a run's state. Its type is defined in the
/// protocol's module (AOI 1.x keeps its seq tracks, 0.2 which reading of
/// `count` matched, AFDATA what it said once); the rest of the checker
/// sees it only through this trait, so a protocol's state touches no file
/// but its own.
pub(super) trait Part: Any + Send {
    /// A line of the run that could not be read was counted (in AOI 1.x
    /// it stands for one step of seq, docs/contract.md §3.1).
    fn unreadable(&mut self) {}
}

/// The next run's number: from 1, so no run's is 0.
static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

pub(super) struct RunState {
    pub(super) id: Option<Box<[u8]>>,
    /// The run's number, given once in the process (see `Decision::serial`).
    pub(super) serial: u64,
    pub(super) name: Option<String>,
    pub(super) first_line: u64,
    pub(super) lines: u64,
    /// Multi-run: the last line placed in the run, and the log's last line
    /// when it was judged: a run cut in a merged log is reported where it
    /// stopped, not where the log did (docs/contract.md §2.1).
    pub(super) last_line: u64,
    pub(super) log_line: u64,
    pub(super) meta: Option<Identity>,
    /// Boxed, as `local_process_error` is: most lines ask only whether
    /// there is one, its parts are read when the run is judged. Inline,
    /// the two made a run's state 624 bytes (376 now), and ten thousand
    /// interleaved runs' state outgrew the cache: 8% fewer last-level
    /// misses for verify, 11% for summarize (docs/contract.md §8.2).
    pub(super) summary: Option<Box<SummaryClaim>>,
    /// Judged early: more than `MAX_OPEN_RUNS` runs were open.
    pub(super) evicted: bool,
    /// An event after the run's end was reported (once per run).
    pub(super) not_last_reported: bool,
    pub(super) unreadable: bool,
    pub(super) domain: u64,
    pub(super) warnings: u64,
    pub(super) errors: u64,
    /// What the verdict weighs beside the summary: errors that fail a run
    /// unless `--continue-on-error`, and the process-scope error that
    /// ended it.
    pub(super) item_errors: u64,
    pub(super) forwarded_errors: u64,
    pub(super) local_process_error: Option<Box<Cause>>,
    pub(super) error_findings: u64,
    pub(super) first_error: Option<String>,
    /// The first error finding that says lines were lost (`Rule::loses_lines`).
    pub(super) lost: Option<String>,
    pub(super) unsupported: bool,
    /// Events missing (by seq, or by a count) and seqs repeated.
    pub(super) missing: u64,
    pub(super) repeats: u64,
    /// Decided at the run's first JSON object (`protocols/detect.rs`).
    pub(super) protocol: Option<Protocol>,
    /// The protocol's own part, made by the protocol when it first asks.
    part: Option<Box<dyn Part>>,
    /// When its first line was read, if runs are timed (`Config::timed`).
    pub(super) since: Option<Instant>,
}

impl RunState {
    pub(super) fn new(id: Option<Box<[u8]>>, name: Option<String>, first_line: u64) -> RunState {
        RunState {
            id,
            serial: SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            name,
            first_line,
            lines: 0,
            last_line: 0,
            log_line: 0,
            meta: None,
            summary: None,
            evicted: false,
            not_last_reported: false,
            unreadable: false,
            domain: 0,
            warnings: 0,
            errors: 0,
            item_errors: 0,
            forwarded_errors: 0,
            local_process_error: None,
            error_findings: 0,
            first_error: None,
            lost: None,
            unsupported: false,
            missing: 0,
            repeats: 0,
            protocol: None,
            part: None,
            since: None,
        }
    }

    /// One more line of the run.
    pub(super) fn count_line(&mut self) {
        self.lines += 1;
    }

    /// Where the run's end is reported, the log being at `line`: its own
    /// last line when lines of other runs followed it.
    pub(super) fn ended_at(&self, line: u64) -> u64 {
        if self.last_line == 0 {
            line
        } else {
            self.last_line
        }
    }

    /// A run of a merged log that is not the whole log: the line the log
    /// went on to past the run's last, if it did.
    pub(super) fn within_log(&self) -> Option<Option<u64>> {
        let went_on = self.log_line > self.last_line;
        (self.last_line != 0 && (self.first_line > 1 || went_on))
            .then(|| went_on.then_some(self.log_line))
    }

    /// A line of the run that could not be read: counted, and told to the
    /// protocol's part.
    pub(super) fn unreadable_line(&mut self) {
        self.count_line();
        self.unreadable = true;
        if let Some(part) = &mut self.part {
            part.unreadable();
        }
    }

    /// The protocol's own part, made by `make` from what the run holds
    /// when it has none of type `T` yet.
    pub(super) fn part<T: Part>(&mut self, make: impl FnOnce(&RunState) -> T) -> &mut T {
        if !self
            .part
            .as_deref()
            .is_some_and(|p| (p as &dyn Any).is::<T>())
        {
            let made = Box::new(make(self));
            self.part = Some(made);
        }
        let part: &mut dyn Any = self.part.as_deref_mut().expect("made above");
        part.downcast_mut().expect("made above")
    }

    /// `f` with the protocol's own part beside the rest of the run, for
    /// work that reaches both many times a line: the part's type is
    /// checked once, not at every reach. The part is out of the run while
    /// `f` runs, so `f` must not ask the run for it.
    pub(super) fn with_part<T: Part, R>(
        &mut self,
        make: impl FnOnce(&RunState) -> T,
        f: impl FnOnce(&mut RunState, &mut T) -> R,
    ) -> R {
        let held = self.part.take().map(|p| p as Box<dyn Any>);
        let mut part = match held.map(|p| p.downcast::<T>()) {
            Some(Ok(part)) => part,
            _ => Box::new(make(self)),
        };
        let r = f(self, &mut part);
        self.part = Some(part);
        r
    }

    /// The protocol's own part, if it made one of type `T`.
    pub(super) fn part_of<T: Part>(&self) -> Option<&T> {
        let part: &dyn Any = self.part.as_deref()?;
        part.downcast_ref()
    }
}

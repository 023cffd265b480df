//! How far a long read has got, on stderr, for a person at a terminal.
//!
//! Shown only when stderr is a terminal, the report is human and not
//! `-q`, and the read is long: the inputs are large (more than
//! `PROGRESS_FROM` bytes in files, or that much read from a pipe), or it
//! has taken a second (a slow pipe, which may never be large). A pipeline
//! or a log never sees it. With the sizes known it gives the percent done; it always gives the
//! bytes read and the rate. It is redrawn at most four times a second, on
//! one line that is cleared before any report text is written beside it.
//!
//! Hand-written rather than indicatif: one line of text, updated per batch
//! of lines (not per line), needs none of a progress-bar crate's
//! templates, threads or width handling.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Inputs smaller than this finish before a display would help.
/// `AOITAP_PROGRESS_FROM` (bytes) overrides it (README, man ENVIRONMENT).
const PROGRESS_FROM: u64 = 64 << 20;

/// A read this long is shown whatever its size.
const SLOW: Duration = Duration::from_secs(1);

const EVERY: Duration = Duration::from_millis(250);

pub struct Progress {
    start: Instant,
    last: Option<Instant>,
    /// Total bytes of the inputs, when every one is a file of known size.
    total: Option<u64>,
    from: u64,
    read: u64,
    /// Something is on the line and must be cleared before other text.
    drawn: bool,
    /// What is on it.
    shown: String,
}

impl Progress {
    /// A display beside a report (`for_a_person`: a person reads it) over
    /// `total` bytes (when the inputs' sizes are known), when one is wanted.
    pub fn new(for_a_person: bool, total: Option<u64>) -> Option<Progress> {
        let wanted = for_a_person && std::io::stderr().is_terminal();
        if !wanted {
            return None;
        }
        let from = std::env::var("AOITAP_PROGRESS_FROM")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(PROGRESS_FROM);
        Some(Progress {
            start: Instant::now(),
            last: None,
            total,
            from,
            read: 0,
            drawn: false,
            shown: String::new(),
        })
    }

    /// `bytes` more were judged.
    pub fn add(&mut self, bytes: u64) {
        self.read += bytes;
        let big = match self.total {
            Some(t) => t > self.from,
            None => self.read > self.from,
        } || self.start.elapsed() >= SLOW;
        // Nothing read yet is nothing to say (a quiet producer, a
        // terminal waiting for input).
        if !big || self.read == 0 || self.last.is_some_and(|t| t.elapsed() < EVERY) {
            return;
        }
        self.last = Some(Instant::now());
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        let rate = mib(self.read as f64 / secs);
        let text = match self.total {
            Some(t) if t > 0 => format!(
                "{:3.0}% {} of {} MiB, {rate} MiB/s",
                (self.read as f64 * 100.0 / t as f64).min(100.0),
                mib(self.read as f64),
                mib(t as f64),
            ),
            // A slow pipe's few bytes in KiB, with no rate: "0 MiB read,
            // 0 MiB/s" says nothing.
            _ if self.read < 1 << 20 => format!("{} KiB read", self.read.div_ceil(1024)),
            _ => format!("{} MiB read, {rate} MiB/s", mib(self.read as f64)),
        };
        if self.drawn && self.shown == text {
            return;
        }
        crate::say_part!("\r{text}\x1b[K");
        self.shown = text;
        self.drawn = true;
    }

    /// Take the display off its line, before report text or at the end.
    pub fn clear(&mut self) {
        if self.drawn {
            crate::say_part!("\r\x1b[K");
            self.drawn = false;
        }
    }
}

fn mib(bytes: f64) -> String {
    format!("{:.0}", bytes / 1_048_576.0)
}

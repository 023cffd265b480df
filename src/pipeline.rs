//! Reading and parsing beside the judging, on a machine's second core.
//!
//! A reader thread reads the `Source` (which also writes the relay) into
//! large buffers and cuts them after their last line end: it never looks at
//! a line. Batches go out in order, even ones straight to the judging
//! thread, which finds their lines and parses them itself, odd ones to a
//! parser thread first. So two cores parse, while the rules, which must see
//! lines in order, run on one. Each batch says how the input stood after it
//! (more to come, would wait, silent, ended), so the judging side flushes,
//! reports idleness or stops exactly as a single-threaded loop would.
//!
//! Memory: a line longer than `--max-line-bytes` is counted and dropped as
//! it streams past (never held), and the bytes in flight are capped at
//! `max(--max-line-bytes, 8 MiB)`, so the worst case is about twice the
//! longest accepted line; buffers are reused.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex};

use crate::check::Parsed;
use crate::event::Parser;
use crate::scan::Line;
use crate::source::{Pause, Source};

/// A batch is cut once it holds this many bytes.
const BATCH_BYTES: usize = 256 * 1024;

/// Where a batch left the input.
pub enum End {
    /// More lines follow at once.
    More,
    /// The input had nothing more ready: flush before waiting.
    WouldBlock,
    /// `--idle-timeout-ms` passed without a byte.
    Idle,
    /// A signal came, or reading was stopped.
    Signal,
    Eof,
    /// Reading (or writing the relay) failed.
    Failed(io::Error),
}

enum Item {
    Complete(usize, usize),
    TooLong(u64),
    Unterminated(u64),
}

/// Consecutive lines, their parses (once made), and how the input stood.
pub struct Batch {
    /// Whole lines, each with its `\n`.
    bytes: Vec<u8>,
    /// An over-long line that ended just before `bytes` (its length).
    lead: Option<u64>,
    /// Bytes after the last `\n` at end of input.
    tail: Option<u64>,
    max_line: usize,
    items: Vec<Item>,
    parsed: Vec<Option<Parsed>>,
    pub end: End,
}

impl Batch {
    fn new(bytes: Vec<u8>, max_line: usize) -> Batch {
        Batch {
            bytes,
            lead: None,
            tail: None,
            max_line,
            items: Vec::new(),
            parsed: Vec::new(),
            end: End::More,
        }
    }

    /// Find the lines and parse them.
    fn parse(&mut self, parser: &mut Parser) {
        if let Some(len) = self.lead {
            self.items.push(Item::TooLong(len));
            self.parsed.push(None);
        }
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', &self.bytes) {
            if nl - start > self.max_line {
                self.items.push(Item::TooLong((nl - start) as u64));
                self.parsed.push(None);
            } else {
                self.items.push(Item::Complete(start, nl));
                self.parsed.push(Some(
                    parser.parse(&self.bytes[start..nl]).map(|ev| ev.envelope()),
                ));
            }
            start = nl + 1;
        }
        if let Some(len) = self.tail {
            self.items.push(Item::Unterminated(len));
            self.parsed.push(None);
        }
    }

    /// The lines, each with its parse.
    pub fn lines(&self) -> impl Iterator<Item = (Line<'_>, Option<Parsed>)> {
        self.items.iter().zip(&self.parsed).map(|(item, parsed)| {
            let line = match item {
                Item::Complete(s, e) => Line::Complete(&self.bytes[*s..*e]),
                Item::TooLong(len) => Line::TooLong { len: *len },
                Item::Unterminated(len) => Line::Unterminated { len: *len },
            };
            (line, *parsed)
        })
    }
}

/// Bytes in flight between the threads, capped.
struct Budget {
    used: Mutex<usize>,
    freed: Condvar,
    limit: usize,
}

impl Budget {
    fn take(&self, n: usize) {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        // One batch larger than the cap still goes, alone.
        while *used > 0 && *used + n > self.limit {
            used = self.freed.wait(used).unwrap_or_else(|e| e.into_inner());
        }
        *used += n;
    }

    fn give(&self, n: usize) {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        *used = used.saturating_sub(n);
        self.freed.notify_all();
    }
}

/// The judging side's end of the pipeline for one input.
pub struct Feed {
    direct: Receiver<Batch>,
    parsed: Receiver<Batch>,
    parser: Parser,
    budget: Arc<Budget>,
    /// Judged buffers go back to the reader.
    spare: SyncSender<Vec<u8>>,
    /// Writing to it wakes a reader blocked on a quiet input, so it ends.
    stop: UnixStream,
    count: u64,
}

impl Feed {
    /// Start reading `source`; `stop` must be the other end of a pair whose
    /// first end is among the source's wake descriptors.
    pub fn start(source: Source, max_line: usize, stop: UnixStream) -> Feed {
        let budget = Arc::new(Budget {
            used: Mutex::new(0),
            freed: Condvar::new(),
            limit: max_line.max(8 << 20),
        });
        let (to_direct, direct) = sync_channel(1);
        let (to_parser, for_parser) = sync_channel::<Batch>(1);
        let (to_judge, parsed) = sync_channel(1);
        let (spare, spares) = sync_channel(8);
        let b = Arc::clone(&budget);
        std::thread::spawn(move || {
            Reader {
                source,
                max_line,
                spares,
                budget: &b,
                count: 0,
            }
            .run(&to_direct, &to_parser)
        });
        std::thread::spawn(move || {
            let mut parser = Parser::new();
            for mut batch in for_parser {
                batch.parse(&mut parser);
                if to_judge.send(batch).is_err() {
                    return;
                }
            }
        });
        Feed {
            direct,
            parsed,
            parser: Parser::new(),
            budget,
            spare,
            stop,
            count: 0,
        }
    }

    /// The next batch, parsed, in input order; `None` once reading is over.
    pub fn next_batch(&mut self) -> Option<Batch> {
        let batch = if self.count.is_multiple_of(2) {
            let mut b = self.direct.recv().ok()?;
            b.parse(&mut self.parser);
            b
        } else {
            self.parsed.recv().ok()?
        };
        self.count += 1;
        Some(batch)
    }

    /// The batch has been judged: its bytes no longer count, and its
    /// buffer can be filled again.
    pub fn done(&self, batch: Batch) {
        self.budget.give(batch.bytes.len());
        let _ = self.spare.try_send(batch.bytes);
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        let _ = self.stop.write_all(b"x");
    }
}

struct Reader<'b> {
    source: Source,
    max_line: usize,
    spares: Receiver<Vec<u8>>,
    budget: &'b Budget,
    count: u64,
}

impl Reader<'_> {
    fn buffer(&self) -> Vec<u8> {
        let mut b = self.spares.try_recv().unwrap_or_default();
        b.clear();
        b
    }

    /// Send a batch to whichever side's turn it is; false when nobody
    /// listens any more.
    fn send(
        &mut self,
        batch: Batch,
        direct: &SyncSender<Batch>,
        parser: &SyncSender<Batch>,
    ) -> bool {
        self.budget.take(batch.bytes.len());
        let to = if self.count.is_multiple_of(2) {
            direct
        } else {
            parser
        };
        self.count += 1;
        to.send(batch).is_ok()
    }

    /// Read, cut after the last line end, send; until the input ends.
    fn run(mut self, direct: &SyncSender<Batch>, parser: &SyncSender<Batch>) {
        let mut buf = self.buffer();
        let mut filled = 0;
        // Inside a line over the cap: its bytes so far (none are kept).
        let mut skipped: Option<u64> = None;
        let mut lead = None;
        loop {
            let room = BATCH_BYTES.max(filled + BATCH_BYTES / 4);
            if buf.len() < room {
                buf.resize(room, 0);
            }
            let end = match self.source.read(&mut buf[filled..]) {
                Ok(0) => End::Eof,
                Ok(n) => {
                    let new = filled;
                    filled += n;
                    if let Some(s) = skipped {
                        match memchr::memchr(b'\n', &buf[new..filled]) {
                            Some(i) => {
                                lead = Some(s + (new + i) as u64);
                                buf.copy_within(new + i + 1..filled, 0);
                                filled -= new + i + 1;
                                skipped = None;
                            }
                            None => {
                                skipped = Some(s + filled as u64);
                                filled = 0;
                                continue;
                            }
                        }
                    }
                    if filled < BATCH_BYTES {
                        continue;
                    }
                    End::More
                }
                Err(e) => match Pause::of(&e) {
                    Some(Pause::WouldBlock) => {
                        self.source.arm();
                        End::WouldBlock
                    }
                    Some(Pause::Idle) => End::Idle,
                    Some(Pause::Signal) => End::Signal,
                    None => End::Failed(e),
                },
            };
            let last = matches!(end, End::Eof | End::Signal | End::Failed(_));
            // Cut after the last line end; the rest waits for more bytes.
            let cut = memchr::memrchr(b'\n', &buf[..filled]).map_or(0, |i| i + 1);
            if cut == 0 && !last && matches!(end, End::More) {
                if filled > self.max_line {
                    skipped = Some(filled as u64);
                    filled = 0;
                }
                continue;
            }
            let mut next = self.buffer();
            next.extend_from_slice(&buf[cut..filled]);
            let rest = filled - cut;
            buf.truncate(cut);
            let mut batch = Batch::new(std::mem::replace(&mut buf, next), self.max_line);
            batch.lead = lead.take();
            filled = rest;
            if matches!(end, End::Eof) {
                let tail = rest as u64 + skipped.take().unwrap_or(0);
                batch.tail = (tail > 0).then_some(tail);
            }
            batch.end = end;
            if !self.send(batch, direct, parser) || last {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Scanner;
    use std::io::Seek;

    #[derive(Debug, PartialEq, Eq)]
    enum Owned {
        Complete(Vec<u8>),
        TooLong(u64),
        Unterminated(u64),
    }

    fn own(line: Line<'_>) -> Owned {
        match line {
            Line::Complete(b) => Owned::Complete(b.to_vec()),
            Line::TooLong { len } => Owned::TooLong(len),
            Line::Unterminated { len } => Owned::Unterminated(len),
        }
    }

    fn file_of(data: &[u8]) -> std::fs::File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(data).unwrap();
        f.rewind().unwrap();
        f
    }

    /// The pipeline yields exactly what the one-buffer scanner yields.
    fn same_as_scanner(data: &[u8], max_line: usize) {
        let mut want = vec![];
        let mut scan = Scanner::new(file_of(data), max_line);
        while let Some(line) = scan.next_line().unwrap() {
            want.push(own(line));
        }
        let (a, b) = UnixStream::pair().unwrap();
        let mut feed = Feed::start(
            Source::new(file_of(data), None, vec![a.into()], None),
            max_line,
            b,
        );
        let mut got = vec![];
        while let Some(batch) = feed.next_batch() {
            got.extend(batch.lines().map(|(l, _)| own(l)));
            let end = matches!(batch.end, End::Eof);
            feed.done(batch);
            if end {
                break;
            }
        }
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the pipeline and the scanner disagree");
    }

    #[test]
    fn cuts_lines_as_the_scanner_does() {
        same_as_scanner(b"", 100);
        same_as_scanner(b"a\nbc\n\n", 100);
        same_as_scanner(b"a\r\nbcd", 100);
        // Lines of every length around the batch size and the cap.
        let mut data = vec![];
        let mut n = 7u64;
        while data.len() < 3 << 20 {
            n = n
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = match n >> 60 {
                0 => 5000,
                1 => 1001,
                2 => 1000,
                _ => (n >> 40) as usize % 400,
            };
            data.extend(std::iter::repeat_n(b'x', len));
            data.push(b'\n');
        }
        same_as_scanner(&data, 1000);
        // An over-long line running past a batch, and one cut at the end.
        let mut long = vec![b'y'; 700_000];
        long.extend_from_slice(b"\nz\n");
        long.extend(std::iter::repeat_n(b'w', 600_000));
        same_as_scanner(&long, 1000);
        same_as_scanner(&long, 1 << 20);
    }
}

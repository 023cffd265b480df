//! The line cutter: the only code that knows where lines end.
//!
//! It reads into one buffer and hands out owned [`Batch`]es of whole lines,
//! carrying the partial tail to the next batch's buffer, or, when the tail
//! is the larger part, the whole lines to a buffer of their own (the only
//! copy a byte ever gets, and never of a long line to a second buffer).
//! Each byte is searched for `\n` once, when it is read, so time is linear
//! in the input, however long a line is.
//!
//! A line ends at `\n` (spec §2). Growth is capped: a line longer than the
//! cap is reported as [`Line::TooLong`] and dropped as it streams past,
//! never held, so memory is bounded by the cap whatever the input. Bytes
//! after the last `\n` are [`Line::Unterminated`], never an event (docs/contract.md
//! §2.1).
//! The batch also holds the parse of each line ([`Batch::parse`]), so that
//! every consumer reads the one index of a line the walker made.

use std::io::{self, Read};

use crate::input::line_check::{LineCheck, Validity};
use crate::json::{Arena, Event, Index, JsonError, Parser, Stops};

/// A batch is handed out once it holds this many bytes of whole lines.
pub const BATCH_BYTES: usize = 256 * 1024;

/// The least free room a read is given.
const READ_BYTES: usize = 64 * 1024;

/// One item of input, as every command sees it.
#[derive(Clone, Copy)]
pub enum Line<'a> {
    /// A complete line, without its `\n` (a `\r` before it is kept), with
    /// its parse.
    Complete {
        bytes: &'a [u8],
        json: Result<Event<'a>, JsonError>,
        /// What `--schema` found, if the batch was validated.
        schema: Validation<'a>,
    },
    /// A complete line over the cap; its bytes were discarded as they came.
    TooLong { len: u64 },
    /// Bytes at end of input with no `\n` after them (truncated); the
    /// bytes themselves when they were held (`len` within the cap), so
    /// that `--redact` can search them (docs/contract.md §3.3).
    Unterminated { len: u64, bytes: Option<&'a [u8]> },
}

impl<'a> Line<'a> {
    /// The line as an event: a JSON object.
    pub fn event(&self) -> Option<Event<'a>> {
        match self {
            Line::Complete { json: Ok(ev), .. } if ev.is_object() => Some(*ev),
            _ => None,
        }
    }

    /// The bytes the line occupied in the input, its `\n` included.
    pub fn input_bytes(&self) -> u64 {
        match self {
            Line::Complete { bytes, .. } => bytes.len() as u64 + 1,
            Line::TooLong { len } => len + 1,
            Line::Unterminated { len, .. } => *len,
        }
    }
}

/// A line against `--schema`, as the batch's parse left it.
#[derive(Clone, Copy)]
pub enum Validation<'a> {
    /// Not validated here (no schema, or not an object).
    Unchecked,
    Valid,
    Found(&'a Validity),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Item {
    /// `bytes[start..end]`, and where its parse is.
    Complete {
        start: usize,
        end: usize,
    },
    TooLong(u64),
    /// Its length, and `bytes[start..end]` when it was held.
    Unterminated(u64, Option<(usize, usize)>),
}

/// Consecutive items of input, owned, and their parses once made.
#[derive(Default)]
pub struct Batch {
    /// Whole lines, each with its `\n`, in `buf[..len]`; the rest of
    /// `buf` is room the next read may use (kept, so it is never zeroed
    /// again).
    buf: Vec<u8>,
    len: usize,
    items: Vec<Item>,
    parsed: Vec<Result<Index, JsonError>>,
    arena: Arena,
    /// Where the strings of the batch's lines stop (the wide pass).
    stops: Stops,
    /// With `--schema`: the outcome of each parsed line that is not valid,
    /// by its place in `parsed`, in order.
    checked: Vec<(usize, Validity)>,
    validated: bool,
}

impl Batch {
    /// The bytes of its whole lines.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Walk every complete line once (docs/contract.md §3.2: one parse) and, with
    /// `--schema`, validate each object there too: this runs on whichever
    /// thread claims the batch, so validation shares both cores.
    pub fn parse(&mut self, parser: &mut Parser, schema: Option<&dyn LineCheck>) {
        self.parsed.clear();
        self.arena.clear();
        self.checked.clear();
        self.validated = schema.is_some();
        // The wide pass, once over the batch's bytes; a batch grown past
        // its size for a long line is walked by scanning, so the marks
        // never cost more than a batch's eighth.
        let marked = self.len <= BATCH_BYTES * 2;
        if marked {
            self.stops.mark(&self.buf[..self.len]);
        }
        for item in &self.items {
            if let Item::Complete { start, end } = *item {
                let line = &self.buf[start..end];
                let r = match marked {
                    true => parser.parse_marked(line, start, &self.stops, &mut self.arena),
                    false => parser.parse(line, &mut self.arena),
                };
                if let (Some(schema), Ok(index)) = (schema, &r) {
                    let ev = index.event(line, &self.arena);
                    if ev.is_object() {
                        match schema.check(&ev) {
                            Validity::Valid => {}
                            other => self.checked.push((self.parsed.len(), other)),
                        }
                    }
                }
                self.parsed.push(r);
            }
        }
    }

    /// The items, each complete line with its parse. `parse` must have run.
    pub fn lines(&self) -> impl Iterator<Item = Line<'_>> {
        let mut parsed = self.parsed.iter().enumerate();
        let mut checked = self.checked.iter().peekable();
        self.items.iter().map(move |item| match *item {
            Item::Complete { start, end } => {
                let bytes = &self.buf[start..end];
                let next = parsed.next();
                let schema = match (next, checked.peek()) {
                    (Some((k, _)), Some((at, outcome))) if *at == k => {
                        checked.next();
                        Validation::Found(outcome)
                    }
                    (Some((_, Ok(_))), _) if self.validated => Validation::Valid,
                    _ => Validation::Unchecked,
                };
                let json = match next.map(|(_, r)| r) {
                    Some(Ok(index)) => Ok(index.event(bytes, &self.arena)),
                    Some(Err(e)) => Err(*e),
                    None => Err(JsonError::Syntax {
                        column: 1,
                        expected: "a parsed line",
                    }),
                };
                Line::Complete {
                    bytes,
                    json,
                    schema,
                }
            }
            Item::TooLong(len) => Line::TooLong { len },
            Item::Unterminated(len, held) => Line::Unterminated {
                len,
                bytes: held.map(|(start, end)| &self.buf[start..end]),
            },
        })
    }

    /// The batch is done with: a buffer grown for a long line goes back
    /// to the allocator now, not when the batch is next filled. The
    /// pipeline's pool holds five batches, and each kept its grown
    /// buffer: several 60 MiB lines in a row peaked at five times one.
    pub fn release(&mut self) {
        if self.buf.capacity() > BATCH_BYTES * 8 {
            self.buf = Vec::new();
        }
    }

    fn reset(&mut self) {
        self.len = 0;
        self.items.clear();
        self.parsed.clear();
        self.arena.clear();
        self.checked.clear();
        self.validated = false;
    }
}

/// `buf` grown to `len` bytes with zeros. An empty one is made anew as
/// zeroed memory, which a batch's size gets from the allocator as fresh
/// pages that need no writing, where growing an empty vector writes
/// every zero.
fn zero_to(buf: &mut Vec<u8>, len: usize) {
    match buf.capacity() {
        0 => *buf = vec![0; len],
        _ => buf.resize(len, 0),
    }
}

/// Cuts what `rdr` yields into batches.
pub struct Cutter<R> {
    rdr: R,
    max_line: usize,
    /// The batch being filled: whole lines in `buf[..line_start]`, then
    /// the line in progress up to `filled`.
    batch: Batch,
    line_start: usize,
    filled: usize,
    /// Inside an over-long line: how many of its bytes were dropped so far.
    skipping: Option<u64>,
    eof: bool,
    /// `--follow`: the end of the input is only where it ends for now, and
    /// a line without its newline waits there for the rest (docs/contract.md §2.3).
    hold_tail: bool,
}

impl<R: Read> Cutter<R> {
    /// A cutter that accepts lines of up to `max_line` bytes (without `\n`).
    pub fn new(rdr: R, max_line: usize) -> Cutter<R> {
        Cutter {
            rdr,
            max_line,
            batch: Batch::default(),
            line_start: 0,
            filled: 0,
            skipping: None,
            eof: false,
            hold_tail: false,
        }
    }

    /// A cutter for a file that grows (`--follow`): reading to its end
    /// hands out the whole lines and keeps the line in progress, and a
    /// later read goes on from there; [`Cutter::end_tail`] ends it.
    pub fn holding_tail(rdr: R, max_line: usize) -> Cutter<R> {
        Cutter {
            hold_tail: true,
            ..Cutter::new(rdr, max_line)
        }
    }

    /// The input ends here for good (a followed file rotated or was cut):
    /// the line in progress, if any, is an item, unterminated.
    pub fn end_tail(&mut self) {
        if !self.eof {
            self.ended();
        }
    }

    /// The reader, e.g. to re-arm a live source.
    pub fn reader(&mut self) -> &mut R {
        &mut self.rdr
    }

    /// The reader, to look at.
    pub fn get_ref(&self) -> &R {
        &self.rdr
    }

    /// Enough whole lines are in hand to hand out a batch.
    pub fn full(&self) -> bool {
        self.line_start >= BATCH_BYTES || self.batch.items.len() >= BATCH_BYTES / 64
    }

    /// Read once and cut what came; `Ok(false)` at end of input (the cut
    /// fragment, if any, is then an item). A read error leaves the cutter
    /// as it was, so the caller may read again.
    pub fn read(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        let buf = &mut self.batch.buf;
        if buf.len() - self.filled < READ_BYTES {
            // The room doubles, so a long line costs linear time in copies
            // (glibc moves a large block by `mremap`), but never past what
            // the longest accepted line needs (the line in progress is at
            // most `max_line`, or it is being skipped). Only the next read's
            // room is zeroed: on a 256 MiB line, zeroing the doubled room
            // ahead faulted in 82,000 pages where 66,000 hold the line, and
            // page faults are most of a huge line's time.
            let want = (BATCH_BYTES + READ_BYTES).max(self.filled + READ_BYTES);
            if (1..want).contains(&buf.capacity()) {
                let limit = self.line_start + self.max_line + READ_BYTES + 1;
                let room = (buf.capacity() * 2).min(limit).max(want);
                buf.reserve_exact(room - buf.len());
            }
            zero_to(buf, want);
        }
        let n = loop {
            match self.rdr.read(&mut buf[self.filled..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => break r?,
            }
        };
        if n == 0 {
            if !self.hold_tail {
                self.ended();
            }
            return Ok(false);
        }
        let new = self.filled;
        self.filled += n;
        self.cut(new);
        Ok(true)
    }

    /// End of input: the fragment in progress becomes an item.
    fn ended(&mut self) {
        {
            self.eof = true;
            let skipped = self.skipping.take();
            let rest = (self.filled - self.line_start) as u64 + skipped.unwrap_or(0);
            if rest > 0 {
                // A fragment within the cap is all in the buffer: it stays
                // in the batch, so its bytes can be searched (and relayed
                // by --redact); one being skipped is gone.
                let held = skipped.is_none().then_some((self.line_start, self.filled));
                self.batch.items.push(Item::Unterminated(rest, held));
            }
            if skipped.is_none() {
                self.line_start = self.filled;
            }
            self.filled = self.line_start;
        }
    }

    /// Find the line ends in `buf[from..filled]` (bytes not searched yet).
    fn cut(&mut self, from: usize) {
        let b = &mut self.batch;
        for nl in memchr::memchr_iter(b'\n', &b.buf[from..self.filled]) {
            let end = from + nl;
            let len = end - self.line_start;
            let item = match self.skipping.take() {
                Some(dropped) => Item::TooLong(dropped + len as u64),
                None if len > self.max_line => Item::TooLong(len as u64),
                None => Item::Complete {
                    start: self.line_start,
                    end,
                },
            };
            // An over-long line that came whole in one read stays in the
            // buffer until the batch goes, unreferenced: a read is bounded.
            b.items.push(item);
            self.line_start = end + 1;
        }
        let pending = self.filled - self.line_start;
        if let Some(dropped) = self.skipping.as_mut() {
            *dropped += pending as u64;
            self.filled = self.line_start;
        } else if pending > self.max_line {
            self.skipping = Some(pending as u64);
            self.filled = self.line_start;
        }
    }

    /// Hand out the whole lines in hand (perhaps none); the line in
    /// progress moves to `spare`'s buffer, which the next reads fill, or,
    /// when it is the larger part, to the front of its own.
    pub fn take(&mut self, mut spare: Batch) -> Batch {
        spare.reset();
        if self.batch.items.is_empty() {
            // Nothing to hand out: keep the line in progress where it is.
            return spare;
        }
        let rest = self.filled - self.line_start;
        if rest > self.line_start {
            // A long line in progress behind a few whole lines (handed out
            // because the input paused, so they are fewer than a batch):
            // the whole lines are copied out instead, and the long line
            // stays in the buffer that grew for it. Copying it to the
            // spare held it twice until the batch was judged: a pause 80
            // MiB into a 100 MiB line peaked at 1.7 times the line, as
            // often as a loaded machine's writer paused (docs/contract.md §8.1).
            let whole = self.line_start;
            if spare.buf.len() < whole {
                spare.buf.resize(whole, 0);
            }
            spare.buf[..whole].copy_from_slice(&self.batch.buf[..whole]);
            std::mem::swap(&mut spare.items, &mut self.batch.items);
            spare.len = whole;
            self.batch.buf.copy_within(whole..self.filled, 0);
            self.line_start = 0;
            self.filled = rest;
            return spare;
        }
        if spare.buf.len() < rest + READ_BYTES {
            zero_to(
                &mut spare.buf,
                (rest + READ_BYTES).max(BATCH_BYTES + READ_BYTES),
            );
        }
        spare.buf[..rest].copy_from_slice(&self.batch.buf[self.line_start..self.filled]);
        let mut out = std::mem::replace(&mut self.batch, spare);
        out.len = self.line_start;
        self.line_start = 0;
        self.filled = rest;
        out
    }

    /// Let go of a buffer grown for a long line (`Batch::release`); for
    /// when the input has ended.
    pub fn release(&mut self) {
        self.batch.release();
    }

    /// Let go of the buffer while it holds nothing: a followed file
    /// between looks, of which thousands may wait, holds no batch's room
    /// (the next read makes it again).
    pub fn idle(&mut self) {
        if self.filled == 0 {
            self.batch = Batch::default();
        }
    }

    /// Cut `rdr` from its start, keeping the buffer grown so far.
    pub fn restart(&mut self, rdr: R) {
        self.rdr = rdr;
        self.batch.reset();
        self.line_start = 0;
        self.filled = 0;
        self.skipping = None;
        self.eof = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::lines::Lines;

    /// A reader that hands out at most `step` bytes per read, so lines are
    /// split across reads at every possible place.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    /// A live source that pauses once, when `pause` bytes have been read.
    struct Paused<'a> {
        data: &'a [u8],
        read: usize,
        pause: usize,
    }

    impl Read for Paused<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.read == self.pause {
                self.pause = usize::MAX;
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = out.len().min(self.data.len()).min(self.pause - self.read);
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            self.read += n;
            Ok(n)
        }
    }

    #[derive(Debug, PartialEq, Eq)]
    enum Owned {
        Complete(Vec<u8>),
        TooLong(u64),
        Unterminated(u64),
    }

    fn scan_with(data: &[u8], max_line: usize, step: usize) -> Vec<Owned> {
        let mut cut = Cutter::new(Trickle { data, step }, max_line);
        let mut out = vec![];
        let mut lines = Lines::default();
        while let Some(batch) = lines.next(&mut cut, None).unwrap() {
            assert!(
                cut.batch.buf.capacity() <= max_line + 2 * BATCH_BYTES + READ_BYTES + 1,
                "buffer grew to {}",
                cut.batch.buf.capacity()
            );
            out.extend(batch.lines().map(|line| match line {
                Line::Complete { bytes, .. } => Owned::Complete(bytes.to_vec()),
                Line::TooLong { len } => Owned::TooLong(len),
                Line::Unterminated { len, .. } => Owned::Unterminated(len),
            }));
        }
        out
    }

    fn scan(data: &[u8]) -> Vec<Owned> {
        scan_with(data, 1 << 20, usize::MAX)
    }

    fn c(s: &str) -> Owned {
        Owned::Complete(s.as_bytes().to_vec())
    }

    #[test]
    fn empty_input_has_no_lines() {
        assert_eq!(scan(b""), vec![]);
    }

    #[test]
    fn lines_without_their_newline() {
        assert_eq!(scan(b"a\nbc\n\n"), vec![c("a"), c("bc"), c("")]);
    }

    #[test]
    fn no_final_newline_is_unterminated() {
        assert_eq!(scan(b"a\nbcd"), vec![c("a"), Owned::Unterminated(3)]);
    }

    #[test]
    fn crlf_keeps_the_carriage_return() {
        assert_eq!(scan(b"a\r\nb\r\n"), vec![c("a\r"), c("b\r")]);
    }

    #[test]
    fn nul_bytes_are_ordinary_bytes() {
        assert_eq!(scan(b"a\0b\n\0\n"), vec![c("a\0b"), c("\0")]);
    }

    #[test]
    fn a_line_split_across_reads() {
        let data = b"{\"a\":1}\n{\"bb\":22}\nxyz\n";
        let want = scan(data);
        for step in 1..data.len() {
            assert_eq!(scan_with(data, 100, step), want, "step {step}");
        }
    }

    #[test]
    fn a_line_exactly_the_cap_is_accepted() {
        let mut data = vec![b'x'; 100];
        data.push(b'\n');
        for step in [7, 100, 101, usize::MAX] {
            let got = scan_with(&data, 100, step);
            assert_eq!(got, vec![Owned::Complete(vec![b'x'; 100])], "step {step}");
        }
    }

    #[test]
    fn over_long_line_is_skipped_not_held() {
        let mut data = b"ok\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 300_000));
        data.extend_from_slice(b"\nafter\n");
        for step in [1000, 4096, 65536, usize::MAX] {
            assert_eq!(
                scan_with(&data, 100, step),
                vec![c("ok"), Owned::TooLong(300_000), c("after")],
                "step {step}"
            );
        }
    }

    /// Two over-long lines in a row: the second must not overwrite the
    /// first's pending record, and the line after both is kept.
    #[test]
    fn over_long_lines_in_a_row_lose_nothing() {
        let mut data = vec![];
        for len in [300_000, 200_000, 5, 150, 400_000] {
            data.extend(std::iter::repeat_n(b'y', len));
            data.push(b'\n');
        }
        data.extend_from_slice(b"last\n");
        let want = vec![
            Owned::TooLong(300_000),
            Owned::TooLong(200_000),
            c("yyyyy"),
            Owned::TooLong(150),
            Owned::TooLong(400_000),
            c("last"),
        ];
        for step in [1, 999, 65536, 1 << 20, usize::MAX] {
            assert_eq!(scan_with(&data, 100, step), want, "step {step}");
        }
    }

    #[test]
    fn over_long_unterminated_tail() {
        let data = vec![b'x'; 500];
        assert_eq!(scan_with(&data, 100, 9), vec![Owned::Unterminated(500)]);
    }

    /// The cut fragment's bytes, when the cutter held them.
    fn fragment(data: &[u8], max_line: usize, step: usize) -> Option<Vec<u8>> {
        let mut cut = Cutter::new(Trickle { data, step }, max_line);
        let mut lines = Lines::default();
        let mut found = None;
        while let Some(batch) = lines.next(&mut cut, None).unwrap() {
            for line in batch.lines() {
                if let Line::Unterminated { bytes, .. } = line {
                    found = bytes.map(<[u8]>::to_vec);
                }
            }
        }
        found
    }

    #[test]
    fn a_held_fragment_keeps_its_bytes() {
        for step in [1, 2, 100, usize::MAX] {
            assert_eq!(fragment(b"a\nbcd", 100, step), Some(b"bcd".to_vec()));
            assert_eq!(fragment(&[b'x'; 100], 100, step), Some(vec![b'x'; 100]));
            // Over the cap, it was dropped as it came.
            assert_eq!(fragment(&[b'x'; 101], 100, step), None, "step {step}");
        }
    }

    #[test]
    fn one_over_the_cap_is_too_long() {
        let mut data = vec![b'x'; 101];
        data.push(b'\n');
        assert_eq!(scan_with(&data, 100, 5), vec![Owned::TooLong(101)]);
        assert_eq!(scan_with(&data, 100, usize::MAX), vec![Owned::TooLong(101)]);
    }

    /// The input pauses 8 MiB into a long line, with a short line before
    /// it in hand: the short line is handed out (as the pipeline does on a
    /// pause) in a buffer of its own size, and the long line is held once,
    /// in the buffer it grew, not copied to a second one.
    #[test]
    fn a_pause_in_a_long_line_keeps_one_copy_of_it() {
        let mut data = b"{}\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 12 << 20));
        data.extend_from_slice(b"\nend\n");
        let mut cut = Cutter::new(
            Paused {
                data: &data,
                read: 0,
                pause: 3 + (8 << 20),
            },
            64 << 20,
        );
        while let Ok(true) = cut.read() {}
        let mut parser = Parser::new();
        let mut first = cut.take(Batch::default());
        first.parse(&mut parser, None);
        assert_eq!(first.lines().count(), 1);
        assert_eq!(first.bytes(), b"{}\n");
        assert!(
            first.buf.capacity() < BATCH_BYTES,
            "the line in progress was held twice: {} bytes handed out with {}",
            first.buf.capacity(),
            first.bytes().len()
        );
        let mut rest = vec![];
        let mut lines = Lines::default();
        while let Some(batch) = lines.next(&mut cut, None).unwrap() {
            rest.extend(batch.lines().map(|line| match line {
                Line::Complete { bytes, .. } => Owned::Complete(bytes.to_vec()),
                _ => Owned::TooLong(0),
            }));
        }
        assert_eq!(rest, vec![Owned::Complete(vec![b'x'; 12 << 20]), c("end")]);
    }

    /// Whatever part of the input is handed out at a pause, nothing is
    /// lost or moved.
    #[test]
    fn a_pause_anywhere_loses_nothing() {
        let data = b"a\n{\"long\":\"xxxxxxxxxxxxxxxxxxxx\"}\nbc\n\ndefghijklmnop\nq";
        let want = scan(data);
        for pause in 0..data.len() {
            let mut cut = Cutter::new(
                Paused {
                    data,
                    read: 0,
                    pause,
                },
                100,
            );
            while let Ok(true) = cut.read() {}
            fn own(line: Line<'_>) -> Owned {
                match line {
                    Line::Complete { bytes, .. } => Owned::Complete(bytes.to_vec()),
                    Line::TooLong { len } => Owned::TooLong(len),
                    Line::Unterminated { len, .. } => Owned::Unterminated(len),
                }
            }
            let mut first = cut.take(Batch::default());
            first.parse(&mut Parser::new(), None);
            let mut got: Vec<Owned> = first.lines().map(own).collect();
            let mut lines = Lines::default();
            while let Some(b) = lines.next(&mut cut, None).unwrap() {
                got.extend(b.lines().map(own));
            }
            assert_eq!(got, want, "pause after {pause} bytes");
        }
    }

    #[test]
    fn many_lines_across_batches_come_out_in_order() {
        let mut data = vec![];
        let mut want = vec![];
        for i in 0..100_000u32 {
            let line = format!("{{\"n\":{i}}}");
            data.extend_from_slice(line.as_bytes());
            data.push(b'\n');
            want.push(c(&line));
        }
        assert_eq!(scan_with(&data, 1 << 20, 100_003), want);
    }
}

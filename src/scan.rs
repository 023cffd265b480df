//! The line scanner: one read buffer, complete lines handed out as borrowed
//! slices, the partial tail carried to the front on refill (the only copy).
//!
//! A line ends at `\n` (spec §2). Growth is capped: a line longer than the
//! cap is reported as [`Line::TooLong`] and skipped without being held, so
//! memory is bounded by the cap whatever the input. Bytes after the last
//! `\n` are [`Line::Unterminated`], never an event (§2).

use std::io::{self, Read};

/// What a read asks for at least; also the buffer's starting size.
const CHUNK: usize = 256 * 1024;

/// One item of input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// A complete line, without its `\n` (a `\r` before it is kept).
    Complete(&'a [u8]),
    /// A complete line over the cap; its bytes were discarded as they came.
    TooLong { len: u64 },
    /// Bytes at end of input with no `\n` after them (truncated).
    Unterminated { len: u64 },
}

pub struct Scanner<R> {
    rdr: R,
    buf: Vec<u8>,
    /// First byte not yet handed out.
    start: usize,
    /// End of the bytes read.
    end: usize,
    /// Where the search for the next `\n` resumes (no byte is searched twice).
    search: usize,
    max_line: usize,
    /// The least free room a read is given (the buffer's starting size).
    chunk: usize,
    eof: bool,
    /// Inside an over-long line: how many of its bytes were dropped so far.
    skipped: Option<u64>,
}

impl<R: Read> Scanner<R> {
    /// A scanner that accepts lines of up to `max_line` bytes (without `\n`).
    pub fn new(rdr: R, max_line: usize) -> Scanner<R> {
        Scanner::with_chunk(rdr, max_line, CHUNK)
    }

    /// As `new`, with a chosen starting buffer size (tests use tiny ones to
    /// exercise the refill paths).
    pub fn with_chunk(rdr: R, max_line: usize, chunk: usize) -> Scanner<R> {
        let chunk = chunk.max(1);
        Scanner {
            rdr,
            buf: vec![0; chunk],
            start: 0,
            end: 0,
            search: 0,
            max_line,
            chunk,
            eof: false,
            skipped: None,
        }
    }

    /// The next line, or `None` at end of input. A read error leaves the
    /// scanner as it was, so the caller may call again.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        let (s, e) = loop {
            if let Some(dropped) = self.skipped {
                match memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                    Some(i) => {
                        self.start += i + 1;
                        self.search = self.start;
                        self.skipped = None;
                        return Ok(Some(Line::TooLong {
                            len: dropped + i as u64,
                        }));
                    }
                    None => {
                        self.skipped = Some(dropped + (self.end - self.start) as u64);
                        self.start = 0;
                        self.end = 0;
                        self.search = 0;
                        if self.eof {
                            let len = self.skipped.take().unwrap_or(0);
                            return Ok(Some(Line::Unterminated { len }));
                        }
                        self.fill()?;
                        continue;
                    }
                }
            }
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.search..self.end]) {
                let s = self.start;
                let e = self.search + i;
                self.start = e + 1;
                self.search = self.start;
                if e - s > self.max_line {
                    return Ok(Some(Line::TooLong {
                        len: (e - s) as u64,
                    }));
                }
                break (s, e);
            }
            self.search = self.end;
            let pending = self.end - self.start;
            if self.eof {
                if pending == 0 {
                    return Ok(None);
                }
                self.start = self.end;
                return Ok(Some(Line::Unterminated {
                    len: pending as u64,
                }));
            }
            if pending > self.max_line {
                self.skipped = Some(pending as u64);
                self.start = 0;
                self.end = 0;
                self.search = 0;
            }
            self.fill()?;
        };
        Ok(Some(Line::Complete(&self.buf[s..e])))
    }

    /// Make room (move the partial tail to the front, or grow up to the
    /// cap) and read once.
    fn fill(&mut self) -> io::Result<()> {
        let chunk = self.chunk;
        if self.buf.len() - self.end < chunk {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.search -= self.start;
                self.start = 0;
            }
            if self.buf.len() - self.end < chunk {
                // The line in hand needs more room. The cap plus one read is
                // the most a line of exactly `max_line` bytes ever needs.
                let limit = self.max_line.saturating_add(chunk).saturating_add(1);
                let want = (self.buf.len() * 2).min(limit).max(self.end + chunk);
                self.buf.resize(want, 0);
            }
        }
        loop {
            match self.rdr.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[derive(Debug, PartialEq, Eq)]
    enum Owned {
        Complete(Vec<u8>),
        TooLong(u64),
        Unterminated(u64),
    }

    fn scan_with(data: &[u8], max_line: usize, chunk: usize, step: usize) -> Vec<Owned> {
        let mut scan = Scanner::with_chunk(Trickle { data, step }, max_line, chunk);
        let mut out = vec![];
        while let Some(line) = scan.next_line().unwrap() {
            out.push(match line {
                Line::Complete(b) => Owned::Complete(b.to_vec()),
                Line::TooLong { len } => Owned::TooLong(len),
                Line::Unterminated { len } => Owned::Unterminated(len),
            });
        }
        out
    }

    fn scan(data: &[u8]) -> Vec<Owned> {
        scan_with(data, 1 << 20, CHUNK, usize::MAX)
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
            for chunk in [1, 2, 3, 5, 8, 64] {
                assert_eq!(
                    scan_with(data, 100, chunk, step),
                    want,
                    "step {step} chunk {chunk}"
                );
            }
        }
    }

    #[test]
    fn a_line_exactly_the_buffer_size() {
        let line = vec![b'x'; 64];
        let mut data = line.clone();
        data.push(b'\n');
        data.extend_from_slice(b"next\n");
        let got = scan_with(&data, 1000, 64, 64);
        assert_eq!(got, vec![Owned::Complete(line), c("next")]);
    }

    #[test]
    fn a_line_exactly_the_cap_is_accepted() {
        let mut data = vec![b'x'; 100];
        data.push(b'\n');
        let got = scan_with(&data, 100, 16, 7);
        assert_eq!(got, vec![Owned::Complete(vec![b'x'; 100])]);
    }

    #[test]
    fn over_long_line_is_skipped_not_held() {
        let mut data = b"ok\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 10_000));
        data.extend_from_slice(b"\nafter\n");
        for step in [1, 7, 4096, usize::MAX] {
            let mut scan = Scanner::with_chunk(Trickle { data: &data, step }, 100, 16);
            let mut got = vec![];
            while let Some(line) = scan.next_line().unwrap() {
                got.push(format!("{line:?}"));
                assert!(
                    scan.buf.len() <= 100 + 16 + 1,
                    "buffer grew to {}",
                    scan.buf.len()
                );
            }
            assert_eq!(
                got,
                vec![
                    format!("{:?}", Line::Complete(b"ok")),
                    format!("{:?}", Line::TooLong { len: 10_000 }),
                    format!("{:?}", Line::Complete(b"after")),
                ],
                "step {step}"
            );
        }
    }

    #[test]
    fn over_long_unterminated_tail() {
        let data = vec![b'x'; 500];
        assert_eq!(scan_with(&data, 100, 16, 9), vec![Owned::Unterminated(500)]);
    }

    #[test]
    fn one_over_the_cap_is_too_long() {
        let mut data = vec![b'x'; 101];
        data.push(b'\n');
        assert_eq!(scan_with(&data, 100, 16, 5), vec![Owned::TooLong(101)]);
        assert_eq!(
            scan_with(&data, 100, 4096, usize::MAX),
            vec![Owned::TooLong(101)]
        );
    }
}

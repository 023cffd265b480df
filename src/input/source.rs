//! The input side of a live pipe: what the pipeline's reader thread reads.
//!
//! A `Source` copies every byte it reads to the relay output at once (so a
//! relay never holds back a line, and bulk input leaves in read-sized
//! writes), and on a pipe it says when the next read would block, so the
//! judging side can flush its report first (docs/contract.md §5.1, §8.1). It also
//! notices a silence longer than `--idle-timeout-ms` (spec §4.2), a signal,
//! and a request to stop.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec, poll};

/// Pipe buffers are enlarged to this where the system allows: the default
/// 64 KiB caps `cat | cat` at about a third of what 1 MiB gives.
const PIPE_BYTES: usize = 1 << 20;

/// Errors that are not I/O failures but moments in the stream's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pause {
    /// No byte is ready: flush what is buffered, then `arm` and read again.
    WouldBlock,
    /// `--idle-timeout-ms` passed with no byte.
    Idle,
    /// A signal arrived.
    Signal,
}

impl Pause {
    pub fn of(e: &io::Error) -> Option<Pause> {
        match e.kind() {
            io::ErrorKind::WouldBlock => Some(Pause::WouldBlock),
            io::ErrorKind::TimedOut => Some(Pause::Idle),
            _ => e
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<SignalCame>())
                .map(|_| Pause::Signal),
        }
    }
}

#[derive(Debug)]
struct SignalCame;

impl std::fmt::Display for SignalCame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted by a signal")
    }
}

impl std::error::Error for SignalCame {}

/// A failure to write the relay output (not a read failure).
#[derive(Debug)]
pub struct RelayError(pub io::Error);

impl std::fmt::Display for RelayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "writing the relayed stream: {}", self.0)
    }
}

impl std::error::Error for RelayError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

pub struct Source {
    file: File,
    relay: Option<File>,
    /// Readable when the reading should stop: a signal came, or the
    /// consumer has gone.
    wake: Vec<OwnedFd>,
    idle: Option<Duration>,
    /// A pipe, socket or terminal: reads may block, so poll first.
    live: bool,
    /// The caller has flushed; the next read may block.
    armed: bool,
    /// The current silence was already reported.
    silent: bool,
}

impl Source {
    pub fn new(
        file: File,
        relay: Option<File>,
        wake: Vec<OwnedFd>,
        idle: Option<Duration>,
    ) -> Source {
        let live = file.metadata().is_ok_and(|m| {
            let t = m.file_type();
            t.is_fifo() || t.is_socket() || t.is_char_device()
        });
        if live {
            // A refusal (not a pipe, or over the system's limit) is fine.
            let _ = rustix::pipe::fcntl_setpipe_size(&file, PIPE_BYTES);
        }
        Source {
            file,
            relay,
            wake,
            idle,
            live,
            armed: false,
            silent: false,
        }
    }

    /// The caller flushed its output: the next read may wait for data.
    pub fn arm(&mut self) {
        self.armed = true;
    }

    /// Wait until the input is readable or `timeout` passes; false on timeout.
    fn wait(&self, timeout: Option<Duration>) -> io::Result<bool> {
        let ts = timeout.map(|d| Timespec {
            tv_sec: d.as_secs() as i64,
            tv_nsec: i64::from(d.subsec_nanos()),
        });
        let input = self.file.as_fd();
        loop {
            let mut fds = vec![PollFd::new(&input, PollFlags::IN)];
            fds.extend(self.wake.iter().map(|w| PollFd::new(w, PollFlags::IN)));
            match poll(&mut fds, ts.as_ref()) {
                Ok(0) => return Ok(false),
                Ok(_) => {
                    if fds[1..].iter().any(|w| !w.revents().is_empty()) {
                        return Err(io::Error::other(SignalCame));
                    }
                    return Ok(true);
                }
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.live {
            if !self.armed {
                if !self.wait(Some(Duration::ZERO))? {
                    return Err(io::ErrorKind::WouldBlock.into());
                }
            } else {
                let timeout = if self.silent { None } else { self.idle };
                if !self.wait(timeout)? {
                    self.silent = true;
                    return Err(io::ErrorKind::TimedOut.into());
                }
            }
        }
        self.armed = false;
        let n = loop {
            match self.file.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => break r?,
            }
        };
        if n > 0 {
            self.silent = false;
        }
        if let Some(out) = self.relay.as_mut() {
            out.write_all(&buf[..n])
                .map_err(|e| io::Error::new(e.kind(), RelayError(e)))?;
        }
        Ok(n)
    }
}

/// Standard output as a plain file: no line buffering of its own, so relayed
/// bytes leave in the sizes they came, and its pipe may be enlarged.
///
/// `/dev/null` is a place to discard output however it was opened: Python's
/// `subprocess.DEVNULL` and Node's `stdio: "ignore"` open it read-write, and
/// a closed stdout, which the Rust runtime reopens on `/dev/null`, cannot be
/// told apart from it, so neither is an error (docs/contract.md §3.2).
pub fn stdout_file() -> io::Result<File> {
    let f = File::from(io::stdout().as_fd().try_clone_to_owned()?);
    let _ = rustix::pipe::fcntl_setpipe_size(&f, PIPE_BYTES);
    Ok(f)
}

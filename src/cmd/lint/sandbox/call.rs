//! One call of the tool: what it is to do ([`Call`], [`Then`]) and how it
//! went ([`Ran`]), its stderr kept at its head and tail.

use std::ffi::OsString;
use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use rustix::process::Signal;

use super::home::Home;
use super::spool::{MAX_SPOOL, Spool};

/// What is kept of stderr: its first and its last this many bytes.
pub(super) const STDERR_KEPT: usize = 64 * 1024;

/// What to do once the first line of stdout has come.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Then {
    Nothing,
    /// Close our end of stdout, as `| head -1` does.
    Close,
    /// Send this signal to the group, as a harness cancelling does.
    Signal(Signal),
}

/// One call to make.
pub struct Call<'a> {
    pub argv: Vec<OsString>,
    /// Set in the cleared environment beside PATH and HOME.
    pub env: Vec<(&'static str, &'static str)>,
    pub timeout: Duration,
    pub then: Then,
    /// Fed on stdin (through a file, so a tool that does not read it
    /// cannot block lint); `None`: /dev/null.
    pub stdin: Option<&'a [u8]>,
    /// A HOME shared with other calls (an idempotency key's replay must
    /// find what the first call stored); `None`: a fresh one.
    pub home: Option<&'a Home>,
    /// Bytes whose appearance on stdout or stderr is noted (a canary).
    pub watch_for: Option<&'a [u8]>,
    /// stdout is a terminal (a pty in raw mode, so bytes pass as written):
    /// machine mode must stay plain there too (check 2).
    pub tty: bool,
    /// A discovery call (schema, capabilities): it never gets the
    /// variables `--env` passes, since check 1 asks it to need none.
    pub discovery: bool,
}

impl Call<'_> {
    pub fn new(argv: Vec<OsString>, timeout: Duration) -> Call<'static> {
        Call {
            argv,
            env: vec![],
            timeout,
            then: Then::Nothing,
            stdin: None,
            home: None,
            watch_for: None,
            tty: false,
            discovery: false,
        }
    }
}

/// How the call went.
pub struct Ran {
    /// `None`: it could not be started, or did not end.
    pub status: Option<ExitStatus>,
    /// Why it could not be started.
    pub started: Option<io::Error>,
    pub timed_out: bool,
    /// lint itself was interrupted during the call.
    pub cancelled: bool,
    pub stdout: Spool,
    /// The first and the last [`STDERR_KEPT`] bytes of stderr.
    pub stderr_head: Vec<u8>,
    pub stderr_tail: Vec<u8>,
    pub stderr_bytes: u64,
    /// `then` was done while the command still ran.
    pub acted: bool,
    /// `watch_for` was seen on stdout, on stderr.
    pub seen_on_stdout: bool,
    pub seen_on_stderr: bool,
}

impl Ran {
    pub(super) fn new() -> Ran {
        Ran {
            status: None,
            started: None,
            timed_out: false,
            cancelled: false,
            stdout: Spool::default(),
            stderr_head: vec![],
            stderr_tail: vec![],
            stderr_bytes: 0,
            acted: false,
            seen_on_stdout: false,
            seen_on_stderr: false,
        }
    }

    /// The exit code, or 128 + the signal, as a shell says it; `None`
    /// when the call did not end by itself (a deadline, an interrupt).
    pub fn code(&self) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        // lint's own stop is not the tool's exit status (a 137).
        if self.timed_out || self.cancelled || self.stdout.overflowed {
            return None;
        }
        let s = self.status?;
        s.code().or_else(|| s.signal().map(|n| 128 + n))
    }

    /// How it ended, in words (`exit 3`, `killed at the 10s deadline`).
    pub fn ended(&self) -> String {
        match self.code() {
            Some(n) => format!("exit {n}"),
            None if self.timed_out => "no exit within --timeout (killed)".to_string(),
            None if self.stdout.overflowed => {
                format!("stopped by lint: over {} MiB on stdout", MAX_SPOOL >> 20)
            }
            None if self.started.is_some() => "not started".to_string(),
            None => "no exit (lint was interrupted)".to_string(),
        }
    }

    /// stderr as kept: its head, and its tail when there was more.
    pub fn stderr_text(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.stderr_head).into_owned();
        if !self.stderr_tail.is_empty() {
            s.push_str("\n[...]\n");
            s.push_str(&String::from_utf8_lossy(&self.stderr_tail));
        }
        s
    }
}

/// Keep stderr's first and last [`STDERR_KEPT`] bytes.
pub(super) fn keep_stderr(ran: &mut Ran, chunk: &[u8]) {
    let room = STDERR_KEPT.saturating_sub(ran.stderr_head.len());
    let (head, rest) = chunk.split_at(room.min(chunk.len()));
    ran.stderr_head.extend_from_slice(head);
    ran.stderr_tail.extend_from_slice(rest);
    let over = ran.stderr_tail.len().saturating_sub(STDERR_KEPT);
    ran.stderr_tail.drain(..over);
}

//! One invocation of the tool under test, as an agent would make it
//! (DESIGN §15): a cleared environment but PATH, a fresh empty HOME,
//! stdin from /dev/null (or a fixture), no network where `unshare -rn` is
//! allowed, a process group of its own that is killed whole when the call
//! is over, and a deadline. With [`guard`] on (the lint command), lint is
//! the subreaper of everything a call starts, so a child that leaves the
//! group with `setsid` is found and killed too: nothing outlives lint.
//!
//! stdout goes to an unlinked spool file, never memory, so a call's
//! output costs what its longest line costs when judged, whatever its
//! length; stderr keeps its first and last 64 KiB. Both are read here,
//! with `poll`, so a call can act at a chosen moment: close stdout after
//! the first line, or signal the group then (check 10).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Pid, Signal, WaitOptions, kill_process, kill_process_group};

use crate::signal::Caught;

/// The most of a call's stdout spooled; past it the call is stopped and
/// its output is too long to judge (DESIGN §15: a check says so, it does
/// not judge a cut it made itself).
pub const MAX_SPOOL: u64 = 256 << 20;

/// How long a command's outputs are read after it has exited.
const EXIT_GRACE: Duration = Duration::from_millis(250);

/// What is kept of stderr: its first and its last this many bytes.
const STDERR_KEPT: usize = 64 * 1024;

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
    fn new() -> Ran {
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

/// A call's stdout, in an unlinked file of its own.
#[derive(Default)]
pub struct Spool {
    file: Option<File>,
    /// The output itself, once `hold` has read it.
    held: Option<Vec<u8>>,
    pub len: u64,
    /// More than [`MAX_SPOOL`] came: the call was stopped.
    pub overflowed: bool,
}

impl Spool {
    /// The output from its start.
    pub fn reader(&self) -> io::Result<Box<dyn Read>> {
        match &self.file {
            None => Ok(Box::new(io::empty())),
            Some(f) => {
                let mut f = f.try_clone()?;
                f.seek(SeekFrom::Start(0))?;
                Ok(Box::new(f))
            }
        }
    }

    /// Keep the output in memory when it is at most `max` bytes, and
    /// give the file back either way (a discovery call's output is read
    /// again; its spool need not live as long).
    pub fn hold(&mut self, max: u64) {
        self.held = self.bytes(max);
        self.file = None;
    }

    /// Give the file back once the output is judged: what the checks
    /// read of it is kept beside, and a spool per call held to the end
    /// would cost the disk each call's output.
    pub fn release(&mut self) {
        self.file = None;
    }

    /// The whole output, when it is at most `max` bytes.
    pub fn bytes(&self, max: u64) -> Option<Vec<u8>> {
        if self.len > max {
            return None;
        }
        if let Some(held) = &self.held {
            return Some(held.clone());
        }
        let mut out = Vec::with_capacity(self.len as usize);
        self.reader().ok()?.read_to_end(&mut out).ok()?;
        Some(out)
    }
}

/// A fresh HOME: a directory of a random name made with O_EXCL, so a
/// planted directory or link cannot block or redirect it; removed with
/// all it holds when dropped.
pub struct Home(tempfile::TempDir);

impl Home {
    pub fn new() -> io::Result<Home> {
        tempfile::Builder::new()
            .prefix("aoitap-lint-home-")
            .tempdir()
            .map(Home)
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Home {
    /// A directory the tool made unreadable or unwritable (mode 000)
    /// would stop its removal: each one is opened up first (links are
    /// not followed), and the `TempDir` removes the tree after.
    fn drop(&mut self) {
        fn open_up(dir: &Path, depth: usize) {
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for e in entries.flatten() {
                if depth < 64 && e.file_type().is_ok_and(|t| t.is_dir()) {
                    open_up(&e.path(), depth + 1);
                }
            }
        }
        open_up(self.path(), 0);
    }
}

/// Whether `unshare -rn` works here (a user namespace without network):
/// asked once.
pub fn no_network() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        Command::new("unshare")
            .args(["-rn", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// Variables `--env` passes to every call but the discovery ones.
static PASSED: OnceLock<Vec<(OsString, OsString)>> = OnceLock::new();

/// Pass these variables (name, value) to the calls that are not discovery.
pub fn pass_env(vars: Vec<(OsString, OsString)>) {
    let _ = PASSED.set(vars);
}

/// Set by [`guard`]: lint's signals, looked at between reads.
static STOP: OnceLock<Caught> = OnceLock::new();
/// Set by [`guard`]: lint is the subreaper of what its calls start, and
/// these are the children lint had before any call (its parent's doing,
/// as `sh -c 'job & exec aoitap lint ...'` leaves one): never killed.
static REAPER: OnceLock<Option<Vec<i32>>> = OnceLock::new();

/// Make lint the guard of its calls: the subreaper of all they start
/// (an orphan of a call becomes lint's child, so it can be found and
/// killed), and `signals` stopping the call under way.
pub fn guard(signals: Caught) {
    let _ = STOP.set(signals);
    let pid = rustix::process::getpid();
    let before = children_of(pid.as_raw_nonzero().get())
        .into_iter()
        .map(|(pid, _)| pid)
        .collect();
    let reaper = rustix::process::set_child_subreaper(Some(pid)).is_ok();
    let _ = REAPER.set(reaper.then_some(before));
}

/// Whether lint was interrupted.
pub fn interrupted() -> bool {
    STOP.get().is_some_and(|c| c.caught().is_some())
}

/// Find `program` as `exec` would (a path, or a name on PATH): the error
/// says why it cannot be run, as a shell says it (127 not found, 126
/// found but not executable).
pub fn resolve(program: &OsStr) -> io::Result<PathBuf> {
    let runnable = |p: &Path| -> io::Result<()> {
        let meta = std::fs::metadata(p)?;
        if meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "is a directory",
            ));
        }
        if meta.permissions().mode() & 0o111 == 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "not executable",
            ));
        }
        Ok(())
    };
    if program.is_empty() {
        return Err(io::Error::new(io::ErrorKind::NotFound, "empty command"));
    }
    let given = Path::new(program);
    if program.as_encoded_bytes().contains(&b'/') {
        return runnable(given).map(|()| given.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut denied = None;
    for dir in std::env::split_paths(&path) {
        let p = dir.join(given);
        match runnable(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => denied = Some(e),
            Err(_) => {}
        }
    }
    Err(denied.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "command not found")))
}

/// Make the call.
pub fn call(c: &Call<'_>) -> Ran {
    let mut ran = Ran::new();
    if interrupted() {
        ran.cancelled = true;
        return ran;
    }
    let fresh;
    let home = match c.home {
        Some(h) => h,
        None => match Home::new() {
            Ok(h) => {
                fresh = h;
                &fresh
            }
            Err(e) => {
                ran.started = Some(e);
                return ran;
            }
        },
    };
    match spawn(c, home) {
        Ok((mut child, terminal)) => {
            let group = Pid::from_child(&child);
            let out = terminal.or_else(|| {
                let pipe = child.stdout.take()?;
                Some(File::from(std::os::fd::OwnedFd::from(pipe)))
            });
            let err = child.stderr.take();
            match tempfile::tempfile() {
                Ok(file) => {
                    ran.stdout.file = Some(file);
                    watch(&mut child, group, out, err, c, &mut ran);
                }
                Err(e) => ran.started = Some(e),
            }
            // Whatever it started goes with it (DESIGN §15: nothing
            // outlives lint), before its HOME is removed.
            let _ = kill_process_group(group, Signal::KILL);
            let _ = child.kill();
            let _ = child.wait();
            reap_escapees();
        }
        Err(e) => ran.started = Some(e),
    }
    ran
}

/// A pty for stdout: the slave, raw, for the command, and the master to
/// read it from.
fn terminal() -> io::Result<(File, File)> {
    use rustix::fs::{Mode, OFlags};
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let name = ptsname(&master, Vec::new())?;
    let slave = rustix::fs::open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut mode = rustix::termios::tcgetattr(&slave)?;
    mode.make_raw();
    rustix::termios::tcsetattr(&slave, rustix::termios::OptionalActions::Now, &mode)?;
    Ok((File::from(slave), File::from(master)))
}

/// Start the command: the child, and the pty master its stdout is read
/// from when it is a terminal.
fn spawn(c: &Call<'_>, home: &Home) -> io::Result<(Child, Option<File>)> {
    let (program, args) = c
        .argv
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no command"))?;
    let mut cmd = if no_network() {
        let mut u = Command::new("unshare");
        u.arg("-rn").arg("--").arg(program).args(args);
        u
    } else {
        let mut p = Command::new(program);
        p.args(args);
        p
    };
    let stdin = match c.stdin {
        None => Stdio::null(),
        Some(bytes) => {
            let mut f = tempfile::tempfile()?;
            f.write_all(bytes)?;
            f.seek(SeekFrom::Start(0))?;
            Stdio::from(f)
        }
    };
    let (stdout, master) = if c.tty {
        let (slave, master) = terminal()?;
        (Stdio::from(slave), Some(master))
    } else {
        (Stdio::piped(), None)
    };
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .process_group(0);
    if !c.discovery {
        for (k, v) in PASSED.get().into_iter().flatten() {
            cmd.env(k, v);
        }
    }
    for (k, v) in &c.env {
        cmd.env(k, v);
    }
    // The slave goes with `cmd`: only the command holds it, so the
    // master reads the end when the command is done.
    cmd.spawn().map(|child| (child, master))
}

/// Kill every process a call left behind outside its group: with lint
/// the subreaper, each is now lint's child (lint makes one call at a
/// time, so every child of lint's between calls that it did not have
/// before the first is one). Killing one
/// makes its own children lint's, so this goes on until none is left,
/// for at most two seconds.
fn reap_escapees() {
    let Some(Some(before)) = REAPER.get() else {
        return;
    };
    let me = rustix::process::getpid().as_raw_nonzero().get();
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        let mut live = 0;
        for (pid, zombie) in children_of(me) {
            let Some(p) = Pid::from_raw(pid).filter(|_| !before.contains(&pid)) else {
                continue;
            };
            if zombie {
                // Reaped by its pid: a wait for any child could take the
                // status of one lint did not start.
                let _ = rustix::process::waitpid(Some(p), WaitOptions::NOHANG);
            } else {
                live += 1;
                let _ = kill_process_group(p, Signal::KILL);
                let _ = kill_process(p, Signal::KILL);
            }
        }
        if live == 0 || Instant::now() > until {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The processes whose parent is `parent`, from /proc, each with whether
/// it is a zombie (to be reaped, not killed).
fn children_of(parent: i32) -> Vec<(i32, bool)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    dir.filter_map(|e| {
        let pid: i32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid ...`: comm may hold anything, so the
        // fields are read after its last ')'.
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut fields = rest.split_whitespace();
        let state = fields.next()?;
        let ppid: i32 = fields.next()?.parse().ok()?;
        (ppid == parent).then_some((pid, state == "Z"))
    })
    .collect()
}

/// Read both outputs until they close and the command has exited, or the
/// deadline passes, or lint is interrupted (then the group is killed).
fn watch(
    child: &mut Child,
    group: Pid,
    mut out: Option<File>,
    mut err: Option<ChildStderr>,
    c: &Call<'_>,
    ran: &mut Ran,
) {
    let deadline = Instant::now() + c.timeout;
    let mut then = c.then;
    let mut buf = vec![0u8; 64 * 1024];
    let needle = c.watch_for.unwrap_or_default();
    // The end of the last read of each, so a needle cut by a read is seen.
    let (mut out_carry, mut err_carry) = (vec![], vec![]);
    let mut line_seen = false;
    // When the command has exited, what it started may hold its outputs
    // open for ever (a daemon): they are read for a grace period more.
    let mut exited: Option<Instant> = None;
    let stop = |ran: &mut Ran, why_timeout: bool| {
        if why_timeout {
            ran.timed_out = true;
        } else {
            ran.cancelled = true;
        }
        let _ = kill_process_group(group, Signal::KILL);
    };
    while out.is_some() || err.is_some() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            stop(ran, true);
            break;
        }
        if interrupted() {
            stop(ran, false);
            break;
        }
        match exited {
            Some(at) if at.elapsed() > EXIT_GRACE => break,
            None if matches!(child.try_wait(), Ok(Some(_))) => exited = Some(Instant::now()),
            _ => {}
        }
        let mut fds = vec![];
        if let Some(o) = &out {
            fds.push(PollFd::new(o, PollFlags::IN));
        }
        if let Some(e) = &err {
            fds.push(PollFd::new(e, PollFlags::IN));
        }
        let wait = Timespec::try_from(left.min(Duration::from_millis(100))).ok();
        if poll(&mut fds, wait.as_ref()).is_err() {
            continue;
        }
        let ready: Vec<bool> = fds.iter().map(|f| !f.revents().is_empty()).collect();
        drop(fds);
        let mut k = 0;
        if out.is_some() {
            if ready[k] {
                match out.as_mut().map(|o| o.read(&mut buf)) {
                    Some(Ok(n)) if n > 0 => {
                        let chunk = &buf[..n];
                        ran.seen_on_stdout |= seen(&mut out_carry, chunk, needle);
                        if !spool(&mut ran.stdout, chunk) {
                            let _ = kill_process_group(group, Signal::KILL);
                            break;
                        }
                        if !line_seen && memchr::memchr(b'\n', chunk).is_some() {
                            line_seen = true;
                            if then != Then::Nothing {
                                ran.acted = matches!(child.try_wait(), Ok(None));
                                match then {
                                    Then::Close => out = None,
                                    Then::Signal(s) => {
                                        let _ = kill_process_group(group, s);
                                    }
                                    Then::Nothing => {}
                                }
                                then = Then::Nothing;
                            }
                        }
                    }
                    Some(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                    _ => out = None,
                }
            }
            k += 1;
        }
        if err.is_some() && ready[k] {
            match err.as_mut().map(|e| e.read(&mut buf)) {
                Some(Ok(n)) if n > 0 => {
                    let chunk = &buf[..n];
                    ran.seen_on_stderr |= seen(&mut err_carry, chunk, needle);
                    ran.stderr_bytes += n as u64;
                    keep_stderr(ran, chunk);
                }
                Some(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                _ => err = None,
            }
        }
    }
    // The outputs are closed (or given up on): wait for the exit, within
    // what is left of the deadline.
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                ran.status = Some(status);
                return;
            }
            Ok(None) if ran.timed_out || ran.cancelled || ran.stdout.overflowed => {
                let _ = kill_process_group(group, Signal::KILL);
                let _ = child.wait();
                return;
            }
            Ok(None) if Instant::now() >= deadline => stop(ran, true),
            Ok(None) if interrupted() => stop(ran, false),
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => return,
        }
    }
}

/// Whether `needle` ends in `chunk`, or across the carry and `chunk`;
/// the carry becomes the chunk's last `needle.len() - 1` bytes.
fn seen(carry: &mut Vec<u8>, chunk: &[u8], needle: &[u8]) -> bool {
    if needle.is_empty() {
        return false;
    }
    carry.extend_from_slice(chunk);
    let found = memchr::memmem::find(carry, needle).is_some();
    let keep = needle.len() - 1;
    let cut = carry.len().saturating_sub(keep);
    carry.drain(..cut);
    found
}

/// Spool `chunk`; false when the spool is full (the call must stop).
fn spool(s: &mut Spool, chunk: &[u8]) -> bool {
    if s.len + chunk.len() as u64 > MAX_SPOOL {
        s.overflowed = true;
        return false;
    }
    let written = s.file.as_mut().is_some_and(|f| f.write_all(chunk).is_ok());
    s.len += chunk.len() as u64;
    if !written {
        // A spool that cannot be written (a full disk) cannot be judged.
        s.overflowed = true;
    }
    written
}

/// Keep stderr's first and last [`STDERR_KEPT`] bytes.
fn keep_stderr(ran: &mut Ran, chunk: &[u8]) {
    let room = STDERR_KEPT.saturating_sub(ran.stderr_head.len());
    let (head, rest) = chunk.split_at(room.min(chunk.len()));
    ran.stderr_head.extend_from_slice(head);
    ran.stderr_tail.extend_from_slice(rest);
    let over = ran.stderr_tail.len().saturating_sub(STDERR_KEPT);
    ran.stderr_tail.drain(..over);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, then: Then) -> Ran {
        call(&Call {
            then,
            ..Call::new(
                vec!["sh".into(), "-c".into(), script.into()],
                Duration::from_secs(5),
            )
        })
    }

    fn stdout(ran: &Ran) -> String {
        String::from_utf8(ran.stdout.bytes(1 << 20).unwrap()).unwrap()
    }

    #[test]
    fn the_environment_is_cleared_and_home_is_fresh() {
        let ran = sh(
            "echo \"$HOME|$USER|$(ls -A \"$HOME\" | wc -l)\"",
            Then::Nothing,
        );
        let text = stdout(&ran);
        let (home, rest) = text.trim().split_once('|').unwrap();
        assert!(home.contains("aoitap-lint-home-"), "{text}");
        assert_eq!(rest, "|0", "{text}");
        assert!(!Path::new(home).exists(), "HOME is removed after");
        assert_eq!(ran.code(), Some(0));
    }

    #[test]
    fn a_home_the_tool_locked_is_still_removed() {
        let ran = sh(
            "mkdir -p \"$HOME/a/b\" && touch \"$HOME/a/b/f\" && chmod 000 \"$HOME/a/b\" \"$HOME/a\" && echo \"$HOME\"",
            Then::Nothing,
        );
        let home = stdout(&ran);
        assert!(home.contains("aoitap-lint-home-"), "{home}");
        assert!(!Path::new(home.trim()).exists(), "{home}");
    }

    #[test]
    fn a_deadline_kills_the_group_and_is_no_exit_status() {
        let ran = call(&Call::new(
            vec!["sh".into(), "-c".into(), "sleep 30 & sleep 30".into()],
            Duration::from_millis(200),
        ));
        assert!(ran.timed_out);
        assert_eq!(
            ran.code(),
            None,
            "a kill at the deadline is not the tool's 137"
        );
    }

    #[test]
    fn closing_after_the_first_line_is_a_broken_pipe() {
        let ran = sh("echo one; sleep 0.2; yes | head -c 1000000", Then::Close);
        assert!(ran.acted);
        assert_eq!(stdout(&ran), "one\n");
    }

    #[test]
    fn a_signal_after_the_first_line_reaches_the_command() {
        let ran = sh(
            "trap 'echo cancelled; exit 130' INT; echo one; while :; do sleep 0.05; done",
            Then::Signal(Signal::INT),
        );
        assert!(ran.acted);
        assert_eq!(stdout(&ran), "one\ncancelled\n");
        assert_eq!(ran.code(), Some(130));
    }

    #[test]
    fn stdin_is_the_fixture_and_a_watched_value_is_seen_across_reads() {
        let ran = call(&Call {
            stdin: Some(b"abc-needle\n"),
            watch_for: Some(b"needle"),
            ..Call::new(
                vec![
                    "sh".into(),
                    "-c".into(),
                    "printf 'x%.0s' $(seq 70000); cat; cat >&2 </dev/null".into(),
                ],
                Duration::from_secs(5),
            )
        });
        assert!(ran.seen_on_stdout);
        assert!(!ran.seen_on_stderr);
        assert_eq!(ran.stdout.len, 70000 + 11);
    }

    #[test]
    fn stdout_may_be_a_terminal_and_passes_bytes_as_written() {
        let ran = call(&Call {
            tty: true,
            ..Call::new(
                vec![
                    "sh".into(),
                    "-c".into(),
                    "test -t 1 && printf 'tty\\n'".into(),
                ],
                Duration::from_secs(5),
            )
        });
        assert_eq!(stdout(&ran), "tty\n", "raw: no \\r added");
        assert_eq!(ran.code(), Some(0));
    }

    #[test]
    fn stderr_keeps_its_head_and_tail() {
        let ran = sh(
            "head -c 300000 /dev/zero | tr '\\0' a >&2; echo END >&2",
            Then::Nothing,
        );
        assert_eq!(ran.stderr_bytes, 300_004);
        assert_eq!(ran.stderr_head.len(), STDERR_KEPT);
        assert!(ran.stderr_tail.ends_with(b"END\n"));
        assert_eq!(ran.stderr_tail.len(), STDERR_KEPT);
    }

    #[test]
    fn a_command_is_resolved_as_exec_would() {
        assert!(resolve(OsStr::new("sh")).is_ok());
        let kind = |p: &str| resolve(OsStr::new(p)).unwrap_err().kind();
        assert_eq!(kind("aoitap-no-such-command"), io::ErrorKind::NotFound);
        assert_eq!(kind("/"), io::ErrorKind::PermissionDenied);
        assert_eq!(kind("/etc/passwd"), io::ErrorKind::PermissionDenied);
        assert_eq!(kind(""), io::ErrorKind::NotFound);
    }
}

//! One invocation of the tool under test, as an agent would make it
//! (DESIGN §15): a cleared environment but PATH, a fresh empty HOME,
//! stdin from /dev/null, no network where `unshare -rn` is allowed, a
//! process group of its own that is killed whole when the call is over
//! (so nothing it started outlives lint), and a deadline.
//!
//! stdout and stderr are read here, on the calling thread, with `poll`,
//! so a call can act at a chosen moment: close stdout after the first
//! line, or signal the group then (check 10).

use std::ffi::OsString;
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Pid, Signal, kill_process_group};

/// What is kept of each output stream at most; the rest is read and
/// counted, not kept.
const KEPT_BYTES: usize = 16 << 20;

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
pub struct Call {
    pub argv: Vec<OsString>,
    /// Set in the cleared environment beside PATH and HOME.
    pub env: Vec<(&'static str, &'static str)>,
    pub timeout: Duration,
    pub then: Then,
}

/// How the call went.
pub struct Ran {
    /// `None`: it could not be started.
    pub status: Option<ExitStatus>,
    pub started: Option<io::Error>,
    pub timed_out: bool,
    pub stdout: Vec<u8>,
    pub stdout_bytes: u64,
    pub stderr: Vec<u8>,
    /// `then` was done while the command still ran.
    pub acted: bool,
}

impl Ran {
    /// The exit code, or 128 + the signal, as a shell says it.
    pub fn code(&self) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        let s = self.status?;
        s.code().or_else(|| s.signal().map(|n| 128 + n))
    }

    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Whether `unshare -rn` works here (a user namespace without network):
/// asked once.
fn unshare_works() -> bool {
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

/// Whether calls run without network.
pub fn no_network() -> bool {
    unshare_works()
}

/// A fresh, empty HOME for one call, removed when dropped.
struct Home(PathBuf);

impl Home {
    fn new() -> io::Result<Home> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("aoitap-lint-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir)?;
        Ok(Home(dir))
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Make the call.
pub fn call(c: &Call) -> Ran {
    let mut ran = Ran {
        status: None,
        started: None,
        timed_out: false,
        stdout: vec![],
        stdout_bytes: 0,
        stderr: vec![],
        acted: false,
    };
    let home = match Home::new() {
        Ok(h) => h,
        Err(e) => {
            ran.started = Some(e);
            return ran;
        }
    };
    let (program, args) = match c.argv.split_first() {
        Some(split) => split,
        None => {
            ran.started = Some(io::Error::other("no command"));
            return ran;
        }
    };
    let mut cmd = if unshare_works() {
        let mut u = Command::new("unshare");
        u.arg("-rn").arg("--").arg(program).args(args);
        u
    } else {
        let mut p = Command::new(program);
        p.args(args);
        p
    };
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home.0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, v) in &c.env {
        cmd.env(k, v);
    }
    let mut child = match cmd.spawn() {
        Ok(ch) => ch,
        Err(e) => {
            ran.started = Some(e);
            return ran;
        }
    };
    let group = Pid::from_child(&child);
    let out = child.stdout.take();
    let err = child.stderr.take();
    watch(&mut child, group, out, err, c, &mut ran);
    // Whatever it started goes with it (DESIGN §15: nothing outlives lint).
    let _ = kill_process_group(group, Signal::KILL);
    ran
}

/// Read both outputs until they close and the command has exited, or the
/// deadline passes (then the group is killed).
fn watch(
    child: &mut Child,
    group: Pid,
    mut out: Option<ChildStdout>,
    mut err: Option<ChildStderr>,
    c: &Call,
    ran: &mut Ran,
) {
    let deadline = Instant::now() + c.timeout;
    let mut then = c.then;
    let mut buf = vec![0u8; 64 * 1024];
    while out.is_some() || err.is_some() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            ran.timed_out = true;
            let _ = kill_process_group(group, Signal::KILL);
            break;
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
                let had_line = ran.stdout.contains(&b'\n');
                match out.as_mut().map(|o| o.read(&mut buf)) {
                    Some(Ok(n)) if n > 0 => {
                        ran.stdout_bytes += n as u64;
                        keep(&mut ran.stdout, &buf[..n]);
                    }
                    _ => out = None,
                }
                if !had_line && ran.stdout.contains(&b'\n') && then != Then::Nothing {
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
            k += 1;
        }
        if err.is_some() && ready[k] {
            match err.as_mut().map(|e| e.read(&mut buf)) {
                Some(Ok(n)) if n > 0 => keep(&mut ran.stderr, &buf[..n]),
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
            Ok(None) if Instant::now() < deadline && !ran.timed_out => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(None) => {
                ran.timed_out = true;
                let _ = kill_process_group(group, Signal::KILL);
                ran.status = child.wait().ok();
                return;
            }
            Err(_) => return,
        }
    }
}

/// Keep `bytes`, up to `KEPT_BYTES` in all.
fn keep(kept: &mut Vec<u8>, bytes: &[u8]) {
    let room = KEPT_BYTES.saturating_sub(kept.len());
    kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, then: Then) -> Ran {
        call(&Call {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            env: vec![],
            timeout: Duration::from_secs(5),
            then,
        })
    }

    #[test]
    fn the_environment_is_cleared_and_home_is_fresh() {
        let ran = sh(
            "echo \"$HOME|$USER|$(ls -A \"$HOME\" | wc -l)\"",
            Then::Nothing,
        );
        let text = ran.stdout_text();
        let (home, rest) = text.trim().split_once('|').unwrap();
        assert!(home.contains("aoitap-lint-"), "{text}");
        assert_eq!(rest, "|0", "{text}");
        assert!(
            !std::path::Path::new(home).exists(),
            "HOME is removed after"
        );
        assert_eq!(ran.code(), Some(0));
    }

    #[test]
    fn a_deadline_kills_the_group() {
        let ran = call(&Call {
            argv: vec!["sh".into(), "-c".into(), "sleep 30 & sleep 30".into()],
            env: vec![],
            timeout: Duration::from_millis(200),
            then: Then::Nothing,
        });
        assert!(ran.timed_out);
    }

    #[test]
    fn closing_after_the_first_line_is_a_broken_pipe() {
        let ran = sh("echo one; sleep 0.2; yes | head -c 1000000", Then::Close);
        assert!(ran.acted);
        assert_eq!(ran.stdout_text(), "one\n");
    }

    #[test]
    fn a_signal_after_the_first_line_reaches_the_command() {
        let ran = sh(
            "trap 'echo cancelled; exit 130' INT; echo one; while :; do sleep 0.05; done",
            Then::Signal(Signal::INT),
        );
        assert!(ran.acted);
        assert_eq!(ran.stdout_text(), "one\ncancelled\n");
        assert_eq!(ran.code(), Some(130));
    }
}

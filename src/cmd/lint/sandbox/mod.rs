//! One invocation of the tool under test, as an agent would make it
//! (docs/contract.md §1.4): a cleared environment but PATH, a fresh empty HOME,
//! stdin from /dev/null (or a fixture), no network where `unshare -rn` is
//! allowed, a process group of its own that is killed whole when the call
//! is over, and a deadline. With [`guard`] on (the lint command), lint is
//! the subreaper of everything a call starts, so a child that leaves the
//! group with `setsid` is found and killed too: nothing outlives lint.
//!
//! stdout goes to an unlinked spool file, never memory, so a call's
//! output costs what its longest line costs when judged, whatever its
//! length; stderr keeps its first and last 64 KiB. Both are read with
//! `poll`, so a call can act at a chosen moment: close stdout after the
//! first line, or signal the group then (check 10).
//!
//! Here the call is started; its parts: `call.rs` (what to make and how it
//! went), `spool.rs` (its stdout), `home.rs` (its HOME), `watch.rs` (its
//! outputs read until it ends), `reaper.rs` (what it left behind).

mod call;
mod home;
mod reaper;
mod spool;
mod watch;

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use rustix::process::{Pid, Signal, kill_process_group};

pub use call::{Call, Ran, Then};
pub use home::Home;
use reaper::reap_escapees;
pub use reaper::{guard, interrupted};
pub use spool::{MAX_SPOOL, Spool};
use watch::watch;

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

/// The values `--env` passes, as text: a report never quotes them.
pub fn passed_values() -> Vec<String> {
    PASSED
        .get()
        .into_iter()
        .flatten()
        .map(|(_, v)| v.to_string_lossy().into_owned())
        .collect()
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
            // Whatever it started goes with it (docs/contract.md §1.4: nothing
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::call::STDERR_KEPT;
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
        // What the first read holds past the first line depends on when
        // the watcher ran (under load, it read `y` lines too, and a test
        // that wanted "one\n" alone failed): what is proved is the cut,
        // and the broken pipe the command died of.
        let ran = sh("echo one; yes | head -c 1000000", Then::Close);
        assert!(ran.acted);
        let out = stdout(&ran);
        assert!(out.starts_with("one\n"), "{:?}", &out[..out.len().min(20)]);
        assert!(
            out.len() < 1_000_004,
            "nothing was cut: {} bytes",
            out.len()
        );
        assert_eq!(ran.code(), Some(141), "head dies of the broken pipe");
    }

    #[test]
    fn a_signal_after_the_first_line_reaches_the_command() {
        // lint catches INT itself (`Signals::install`), and exec resets a
        // caught signal to its default but keeps an ignored one ignored:
        // so as lint, or the command would start with INT ignored under a
        // shell that runs this test in the background (`&`).
        let caught = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        signal_hook::flag::register(signal_hook::consts::SIGINT, caught).unwrap();
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

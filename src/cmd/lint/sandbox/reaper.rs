//! lint the guard of its calls: the subreaper of everything they start,
//! so what a call leaves behind outside its group is found and killed,
//! and lint's signals stop the call under way.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitOptions, kill_process, kill_process_group};

use crate::signal::Caught;

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

/// Kill every process a call left behind outside its group: with lint
/// the subreaper, each is now lint's child (lint makes one call at a
/// time, so every child of lint's between calls that it did not have
/// before the first is one). Killing one
/// makes its own children lint's, so this goes on until none is left,
/// for at most two seconds.
pub(super) fn reap_escapees() {
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

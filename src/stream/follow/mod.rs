//! `--follow` (docs/contract.md §2.3): FILE operands followed by name, as `tail -F`
//! follows them, on one thread. Each name has its own checker, so the
//! line numbers in its findings are its own and its runs are its own.
//!
//! - Appended lines are judged as they come; a line without its newline
//!   waits for the rest (it is never an event before its newline).
//! - A name that comes to point at another file (rotated: renamed, then
//!   created again) has its old file read to the end, then the new one from
//!   its start; a file cut shorter than what was read (copytruncate) is
//!   read again from its start. Either way its runs go on: a producer
//!   writes on through a rotation.
//! - A quoted glob is looked at again about every second; a file that
//!   comes to match it is followed from its start.
//! - inotify wakes the reader when a watched directory changes; without
//!   it, the files are looked at four times a second.
//! - `--from-end` and `--state` judge what was in a file already only for
//!   the state it leaves (findings unsaid), so a run under way is judged
//!   whole and no line is reported twice.
//!
//! Reading ends only by a signal: the open runs are named, not judged, and
//! the exit status is the signal's (130 for Ctrl-C). A run with no summary
//! is therefore never a pass.
//!
//! `names.rs` holds each followed name and its files, `reading.rs` reads
//! a name's files through rotations and cuts, `glob.rs` lists a quoted
//! glob, `watch.rs` waits for a change, `state.rs` is `--state`.

mod glob;
mod names;
mod reading;
mod state;
mod watch;

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::consumer::{Consumer, left_open, pause};
use super::report::{Halt, Report};
use crate::config::{Follow, Input, StreamOptions};
use crate::input::file_id::{FileId, stdout_is};
use crate::input::lines::Lines;
use crate::output::progress::Progress;
use crate::signal::{Caught, Signals};

use glob::glob_of;
use names::{Name, add, saved, taken};
use reading::Reading;
use state::State;
use watch::{Watch, raise_fd_limit};

/// How often a quoted glob is listed again.
const RESCAN: Duration = Duration::from_secs(1);
/// How long the reader sleeps when nothing wakes it: a signal and inotify
/// do, so this bounds only a glob's listing and `--run-idle-timeout`.
const NAP_WATCHED: Duration = Duration::from_millis(1000);
/// Without inotify, how often the files are looked at.
const NAP_POLLED: Duration = Duration::from_millis(250);
/// How often `--state` is written while lines come (and at the end).
const STATE_EVERY: Duration = Duration::from_secs(1);

/// Follow the FILE operands until a signal; trouble reading one (66, 74)
/// goes to the report's tally, as `each_input`'s does.
pub(super) fn follow(
    opts: &StreamOptions,
    how: &Follow,
    consumer: &mut dyn Consumer,
    signals: &Signals,
    report: &mut Report,
    progress: &mut Option<Progress>,
) -> Result<(), Halt> {
    raise_fd_limit();
    let state = how.state.as_deref().map(State::load).unwrap_or_default();
    let mut f = Followed::operands(opts, how, &state);
    let mut r = Reading {
        opts,
        consumer,
        report,
        progress,
        lines: Lines::default(),
        caught: signals.flags(),
        taken: HashMap::new(),
        state_failed: false,
    };
    let mut listed: Option<Instant> = None;
    let mut stalls_seen: Option<Instant> = None;
    let mut state_written = Instant::now();
    let mut dirty = false;
    while signals.caught().is_none() {
        if listed.is_none_or(|t| t.elapsed() >= RESCAN) {
            // The files that match when following starts are existing
            // files (--from-end applies); later ones are new, read whole.
            f.list_globs(opts, how, &state, listed.is_none());
            listed = Some(Instant::now());
        }
        let moved = f.pump(&mut r)?;
        // Open runs are looked at for a stall a few times a stall's
        // length, and at most once a second: each look goes over every
        // open run (30,000 of them cost a busy follower 9% of a core when
        // looked at on every change).
        if let Some(after) = how.run_idle
            && stalls_seen.is_none_or(|t: Instant| t.elapsed() >= (after / 4).min(RESCAN))
        {
            let now = Instant::now();
            stalls_seen = Some(now);
            f.stalled(r.report, now, after)?;
        }
        // The state is written a second after lines came, or as soon as
        // they stop: a kill loses at most a second of it.
        dirty |= moved;
        if let Some(path) = &how.state
            && dirty
            && (!moved || state_written.elapsed() >= STATE_EVERY)
        {
            let written = State::write(path, &saved(&f.names));
            r.state_written(path, written)?;
            state_written = Instant::now();
            dirty = false;
        }
        pause(r.consumer, r.report, r.progress)?;
        if !moved {
            f.wait(signals, how);
        }
    }
    if let Some(path) = &how.state {
        let written = State::write(path, &saved(&f.names));
        r.state_written(path, written)?;
    }
    // Stopped by a signal: each name's open runs are named, not judged.
    for n in &mut f.names {
        r.report.out.file = n.label.clone();
        left_open(r.consumer, &mut n.check, r.report, r.progress, true)?;
    }
    Ok(())
}

/// `path` followed alone, as `follow` follows a name, a look at a time,
/// `grow` called before each; once it has nothing more to add and a look
/// finds nothing new, the file ends as a drained one does (`Reading::end`)
/// and its open runs are judged, where a follower would wait on
/// (`stream::paths::followed`).
pub(super) fn to_end(
    opts: &StreamOptions,
    path: &Path,
    consumer: &mut dyn Consumer,
    report: &mut Report,
    grow: &mut dyn FnMut() -> bool,
) -> Result<(), Halt> {
    let mut name = Name::new(
        &opts.check,
        opts.max_line_bytes,
        path.to_path_buf(),
        false,
        &State::default(),
    );
    let mut progress = None;
    let mut r = Reading {
        opts,
        consumer,
        report,
        progress: &mut progress,
        lines: Lines::default(),
        caught: Caught::default(),
        taken: HashMap::new(),
        state_failed: false,
    };
    loop {
        let more = grow();
        r.taken = taken(std::slice::from_ref(&name));
        if !r.pump(&mut name)? && !more {
            break;
        }
    }
    r.end(&mut name)?;
    if !left_open(r.consumer, &mut name.check, r.report, r.progress, false)? {
        r.consumer
            .end_input(name.check, r.report)
            .map_err(Halt::Judging)?;
    }
    Ok(())
}

/// What is followed: each quoted glob, a name for each file, every path
/// known to a name, and the watch on them.
struct Followed<'o> {
    globs: Vec<glob::Glob>,
    names: Vec<Name<'o>>,
    known: HashSet<PathBuf>,
    watch: Watch,
    /// The file under each name whose writes are watched.
    watched: HashMap<PathBuf, FileId>,
}

impl<'o> Followed<'o> {
    /// The FILE operands: each quoted glob, and a name for every other
    /// path, once.
    fn operands(opts: &'o StreamOptions, how: &Follow, state: &State) -> Followed<'o> {
        let mut globs = vec![];
        let mut names: Vec<Name<'_>> = vec![];
        let mut known: HashSet<PathBuf> = HashSet::new();
        for input in &opts.inputs {
            let Input::Path(p) = input else { continue };
            match glob_of(p) {
                Some(g) => globs.push(g),
                None => {
                    if known.insert(p.clone()) {
                        add(
                            &mut names,
                            Name::new(
                                &opts.check,
                                opts.max_line_bytes,
                                p.clone(),
                                how.from_end,
                                state,
                            ),
                        );
                    }
                }
            }
        }
        let watch = Watch::new();
        for n in &names {
            watch.add(&n.path);
        }
        Followed {
            globs,
            names,
            known,
            watch,
            watched: HashMap::new(),
        }
    }

    /// Read what each name has now; whether any line came.
    fn pump(&mut self, r: &mut Reading<'_, '_>) -> Result<bool, Halt> {
        let mut moved = false;
        r.taken = taken(&self.names);
        for n in &mut self.names {
            moved |= r.pump(n)?;
            // A file newly opened under the name (created, rotated in) is
            // watched for its writes.
            if let Some(o) = &n.open
                && self.watched.get(&n.path) != Some(&o.id)
            {
                self.watch.add_file(&n.path);
                self.watched.insert(n.path.clone(), o.id);
            }
        }
        Ok(moved)
    }

    /// `--run-idle-timeout`: each name's open runs that have had no line
    /// for `after` are said to have stalled.
    fn stalled(&mut self, report: &mut Report, now: Instant, after: Duration) -> Result<(), Halt> {
        for n in &mut self.names {
            report.out.file = n.label.clone();
            n.check
                .stalled(report, &mut n.stalls, now, after)
                .map_err(Halt::writing)?;
        }
        Ok(())
    }

    /// The quoted globs listed again: a file that has come to match one
    /// is followed, from its start unless `at_start` (the first listing,
    /// where --from-end applies).
    fn list_globs(&mut self, opts: &'o StreamOptions, how: &Follow, state: &State, at_start: bool) {
        for g in &self.globs {
            for p in g.matches() {
                // What aoitap writes is never read back: its report
                // (stdout redirected into the directory too) or state.
                if self.known.contains(&p) || how.writes(&p) || stdout_is(&p) {
                    continue;
                }
                let Some(before) = to_follow(&p, &self.names) else {
                    continue;
                };
                self.known.insert(p.clone());
                self.watch.add(&p);
                let mut name = Name::new(
                    &opts.check,
                    opts.max_line_bytes,
                    p,
                    how.from_end && at_start,
                    state,
                );
                if let Some(read) = before {
                    name.skip_to(&read);
                }
                add(&mut self.names, name);
            }
        }
    }

    /// Sleep until a change worth looking at, a signal, or the nap's end:
    /// a second with inotify, a quarter without, and a quarter of
    /// `--run-idle-timeout` at most.
    fn wait(&self, signals: &Signals, how: &Follow) {
        let watch = &self.watch;
        let nap = if watch.fd.is_some() && !watch.missed.get() {
            NAP_WATCHED
        } else {
            NAP_POLLED
        };
        let nap = how
            .run_idle
            .map_or(nap, |d| nap.min(d / 4).max(Duration::from_millis(50)));
        // A change is one to look at when it is about a followed
        // file's name, or a name a glob may come to match; while a
        // rotated file drains, under whatever name it has now, every
        // change is.
        let draining = self.names.iter().any(|n| n.draining.is_some());
        let followed: HashSet<&std::ffi::OsStr> = self
            .names
            .iter()
            .filter_map(|n| n.path.file_name())
            .collect();
        let relevant = |name: &std::ffi::OsStr| {
            draining || followed.contains(name) || self.globs.iter().any(|g| g.matches_name(name))
        };
        watch.wait(signals, nap, &relevant);
    }
}

/// Whether `p`, which a quoted glob has come to match, is to be followed
/// now (`None`: not yet), and what of it another name read before.
fn to_follow(p: &std::path::Path, names: &[Name<'_>]) -> Option<Option<names::Released>> {
    // A name for a file followed already (a rotation to a name the glob
    // matches): its lines were read under the old name, so the new name
    // judges them for their state only, and reads what came after.
    let id = fs::metadata(p).ok().map(|m| FileId::of(&m));
    // Still read under its old name: looked at again at the next
    // listing, once the drain is over.
    if id.is_some()
        && names.iter().any(|n| {
            n.draining.as_ref().map(|d| d.0.id) == id || n.open.as_ref().map(|o| o.id) == id
        })
    {
        return None;
    }
    // Read before under another name (rotated, perhaps more than once:
    // agent.log -> .1 -> .2): what was read is skipped, not judged again,
    // and its runs stay with the name that read them.
    let before = id.and_then(|id| {
        names
            .iter()
            .flat_map(|n| &n.read_before)
            .find(|r| r.id == id)
            .cloned()
    });
    Some(before)
}

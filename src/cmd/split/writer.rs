//! split-by-run's writes, made on a thread of their own (docs/contract.md §2.2: off
//! the serial stage). Writing 64 MiB into a thousand files costs the
//! kernel about as much as judging the lines costs the checker; done on
//! the judging thread, the two were added up.
//!
//! Each run file's lines gather in a buffer of its own; a full buffer is
//! handed to the writer thread, which writes the buffers in the order
//! they were handed over, so each file's bytes stay in order, across a
//! close and a reopen too. Buffers are handed over `PARCEL` at a time (a
//! wake-up of the writer per 8 KiB cost more than the copy); a file
//! closed (evicted) while its last buffer waits stays open until it is
//! written, and the caller keeps those few (`CLOSED_WAITING`). The first failed write is kept and given
//! back at the next hand-over or `sync`; nothing after it is written.

use std::fs::File;
use std::io::{self, Write};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};

/// Each run file's buffer: what a run's lines wait in before they are
/// handed over.
const BUFFER_BYTES: usize = 8 * 1024;

/// Buffers handed to the writer at once.
const PARCEL: usize = 32;
/// Parcels on their way to the writer at most.
const PARCELS: usize = 2;
/// Files closed (evicted) at most while their last buffer waits for the
/// writer, holding a descriptor each; the caller waits for the writer
/// past it, so descriptors stay within `--max-open` and this.
pub const CLOSED_WAITING: usize = 8;

/// A run file, as the writer writes it: shared with the buffers that wait.
struct Target {
    file: File,
    name: String,
}

/// One run file's buffer and the file it goes to.
pub struct RunFile {
    target: Arc<Target>,
    buf: Vec<u8>,
}

impl RunFile {
    pub fn new(file: File, name: String) -> RunFile {
        RunFile {
            target: Arc::new(Target { file, name }),
            buf: Vec::with_capacity(BUFFER_BYTES),
        }
    }
}

enum Job {
    Write(Vec<(Arc<Target>, Vec<u8>)>),
    /// Everything before is written: say so.
    Sync(SyncSender<()>),
}

/// A failed write: the name of the file, and why.
pub type Failed = (String, io::Error);

pub struct Writer {
    to: Option<SyncSender<Job>>,
    parcel: Vec<(Arc<Target>, Vec<u8>)>,
    /// Buffers written, back for reuse: a fresh one per hand-over cost a
    /// page fault per 4 KiB.
    spare: Receiver<Vec<u8>>,
    failed: Arc<Mutex<Option<Failed>>>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    pub fn start() -> io::Result<Writer> {
        let (to, jobs) = mpsc::sync_channel(PARCELS);
        let (back, spare) = mpsc::channel();
        let failed = Arc::new(Mutex::new(None));
        let thread = thread::Builder::new().spawn({
            let failed = failed.clone();
            move || write_all(&jobs, &back, &failed)
        })?;
        Ok(Writer {
            to: Some(to),
            parcel: Vec::with_capacity(PARCEL),
            spare,
            failed,
            thread: Some(thread),
        })
    }

    /// Add `line` and its `\n` to `f`'s buffer, handing it over when full.
    /// A line longer than a buffer is written here, once what waits is
    /// written, rather than copied.
    pub fn line(&mut self, f: &mut RunFile, line: &[u8]) -> Result<(), Failed> {
        if line.len() >= BUFFER_BYTES {
            self.hand_over(f)?;
            self.sync()?;
            let mut file = &f.target.file;
            return file
                .write_all(line)
                .and_then(|()| file.write_all(b"\n"))
                .map_err(|e| (f.target.name.clone(), e));
        }
        // Handed over before the line would overflow it: a buffer never
        // grows past its size (a thousand of them doubled were 16 MiB).
        if f.buf.len() + line.len() + 1 > BUFFER_BYTES {
            self.hand_over(f)?;
        }
        f.buf.extend_from_slice(line);
        f.buf.push(b'\n');
        Ok(())
    }

    /// Hand `f`'s buffer over to be written.
    pub fn hand_over(&mut self, f: &mut RunFile) -> Result<(), Failed> {
        self.check()?;
        if f.buf.is_empty() {
            return Ok(());
        }
        let fresh = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BUFFER_BYTES));
        let buf = std::mem::replace(&mut f.buf, fresh);
        self.parcel.push((f.target.clone(), buf));
        if self.parcel.len() >= PARCEL {
            self.send();
        }
        Ok(())
    }

    /// Send the parcel made so far.
    fn send(&mut self) {
        if self.parcel.is_empty() {
            return;
        }
        let parcel = std::mem::replace(&mut self.parcel, Vec::with_capacity(PARCEL));
        if let Some(to) = &self.to {
            // The thread ends only when `to` is dropped, or by a panic,
            // which `sync` and the drop give back.
            let _ = to.send(Job::Write(parcel));
        }
    }

    /// Close `f` once what it holds is written.
    pub fn close(&mut self, mut f: RunFile) -> Result<(), Failed> {
        self.hand_over(&mut f)
    }

    /// Wait until everything handed over is written; the first failure.
    pub fn sync(&mut self) -> Result<(), Failed> {
        self.send();
        let (done, wait) = mpsc::sync_channel(1);
        if let Some(to) = &self.to
            && to.send(Job::Sync(done)).is_ok()
        {
            let _ = wait.recv();
        }
        self.check()
    }

    fn check(&self) -> Result<(), Failed> {
        // A copy is given: the failure stays, so every later call fails alike.
        let failed = self.failed.lock().unwrap_or_else(PoisonError::into_inner);
        match failed.as_ref() {
            Some((name, e)) => Err((name.clone(), io::Error::new(e.kind(), e.to_string()))),
            None => Ok(()),
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.send();
        self.to = None;
        if let Some(t) = self.thread.take()
            && let Err(panic) = t.join()
            && !thread::panicking()
        {
            std::panic::resume_unwind(panic);
        }
    }
}

/// The writer thread: write each buffer in turn; after a failure, write
/// nothing more (the command is ending with it).
fn write_all(jobs: &Receiver<Job>, back: &Sender<Vec<u8>>, failed: &Mutex<Option<Failed>>) {
    let mut ok = true;
    for job in jobs {
        match job {
            Job::Write(parcel) => {
                for (target, mut buf) in parcel {
                    let mut file = &target.file;
                    if let (true, Err(e)) = (ok, file.write_all(&buf)) {
                        ok = false;
                        *failed.lock().unwrap_or_else(PoisonError::into_inner) =
                            Some((target.name.clone(), e));
                    }
                    // A buffer grown past its size is let go, not kept.
                    if buf.capacity() <= BUFFER_BYTES {
                        buf.clear();
                        let _ = back.send(buf);
                    }
                }
            }
            Job::Sync(done) => {
                let _ = done.send(());
            }
        }
    }
}

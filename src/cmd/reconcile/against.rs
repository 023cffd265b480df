//! `--against`: a reference capture, compared event by event. One 8-byte
//! digest is kept per reference event; at most `MAX_DIFFS` differences
//! are listed (the rest are counted).

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::Path;

use crate::check::{Run, RunKey, digest, id_key};
use crate::config::Input;
use crate::input::lines::Lines;
use crate::input::scan::{Cutter, Line};
use crate::json::{Aoi, Event, Uint};
use crate::output::reconcile::{self, Difference};
use crate::stream::Report;

/// Differences from the reference listed; more are counted.
const MAX_DIFFS: usize = 1000;

/// The reference capture of `--against`: a digest per (run, seq).
pub struct Reference {
    events: HashMap<(RunKey, u64), (u64, bool)>,
    unkeyed: u64,
}

/// The run id and seq of an event, if it carries both.
fn run_seq(ev: &Event<'_>) -> Option<(RunKey, u64)> {
    let Aoi::Object {
        seq: Some(seq),
        run: Some(run),
    } = ev.aoi()
    else {
        return None;
    };
    let Uint::Int(n) = seq.as_uint() else {
        return None;
    };
    Some((Run::Id(id_key(&run.decoded()?).into()), n))
}

impl Reference {
    /// Read the capture at `path`: a digest of each event with a run and
    /// a seq.
    pub fn read(path: &Path, max_line: usize) -> io::Result<Reference> {
        let mut cut = Cutter::new(Input::Path(path.to_path_buf()).open()?, max_line);
        let mut lines = Lines::default();
        let mut r = Reference {
            events: HashMap::new(),
            unkeyed: 0,
        };
        while let Some(batch) = lines.next(&mut cut, None)? {
            for line in batch.lines() {
                let Line::Complete { bytes, json, .. } = line else {
                    continue;
                };
                match json.ok().as_ref().and_then(run_seq) {
                    Some(key) => {
                        r.events.insert(key, (digest(bytes), false));
                    }
                    None => r.unkeyed += 1,
                }
            }
        }
        Ok(r)
    }

    /// An event of the input: one the reference lacks, or holds with
    /// other bytes, is reported; returns whether it was.
    pub fn event(
        &mut self,
        ev: &Event<'_>,
        bytes: &[u8],
        number: u64,
        report: &mut Report,
    ) -> io::Result<bool> {
        let Some(k) = run_seq(ev) else {
            return Ok(false);
        };
        let (kind, seq) = match self.events.get_mut(&k) {
            None => ("extra", k.1),
            Some((_, true)) => ("extra", k.1),
            Some((d, seen)) => {
                *seen = true;
                if *d == digest(bytes) {
                    return Ok(false);
                }
                ("altered", k.1)
            }
        };
        let run = reconcile::run_name(&k.0);
        let text = reconcile::difference_text(&report.out.file, number, kind, &run, seq);
        report.out.text(&text)?;
        report.out.domain(
            "difference",
            Difference {
                kind,
                run: &run,
                from_seq: seq,
                to_seq: seq,
                count: 1,
                line_number: Some(number),
            },
        )?;
        Ok(true)
    }

    /// Reference events never seen, by run, as ranges; returns whether
    /// there were any.
    pub fn differences(&mut self, report: &mut Report) -> io::Result<bool> {
        let mut missing: BTreeMap<Vec<u8>, Vec<u64>> = BTreeMap::new();
        for ((key, seq), (_, seen)) in self.events.drain() {
            if !seen && let Run::Id(id) = key {
                missing.entry(id.into()).or_default().push(seq);
            }
        }
        let mut listed = 0;
        let any = !missing.is_empty();
        for (id, mut seqs) in missing {
            seqs.sort_unstable();
            let run = String::from_utf8_lossy(&id).into_owned();
            let mut i = 0;
            while i < seqs.len() {
                let mut j = i;
                while j + 1 < seqs.len() && seqs[j + 1] == seqs[j] + 1 {
                    j += 1;
                }
                listed += 1;
                if listed <= MAX_DIFFS {
                    let (from, to) = (seqs[i], seqs[j]);
                    let text = reconcile::missing_text(&report.out.file, &run, from, to);
                    report.out.text(&text)?;
                    report.out.domain(
                        "difference",
                        Difference {
                            kind: "missing",
                            run: &run,
                            from_seq: from,
                            to_seq: to,
                            count: to - from + 1,
                            line_number: None,
                        },
                    )?;
                }
                i = j + 1;
            }
        }
        if listed > MAX_DIFFS {
            report
                .out
                .text(&reconcile::more_missing_text(listed - MAX_DIFFS))?;
        }
        Ok(any)
    }
}

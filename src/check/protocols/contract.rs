//! The one trait every protocol's rules implement, and what they hand
//! back for a line. A protocol sees the run's state and where findings
//! go, never the checker: which run a line belongs to is decided before
//! it is asked (`runs.rs`), and the table acts on what it answers.

use std::io;

use crate::check::config::Config;
use crate::check::config::Protocol;
use crate::check::finding::Reporter;
use crate::check::profiles::ProfileRef;
use crate::check::rules::Rule;
use crate::check::run_state::RunState;
use crate::check::verdict::End;
use crate::json::Event;

/// The rules of one protocol (docs/contract.md §6.1).
pub(in crate::check) trait Contract {
    /// A JSON object line of a run of this protocol.
    fn event(&self, run: &mut RunState, out: &mut Reporter<'_>, ev: &Event<'_>) -> Judged;

    /// The run is over: what a cut end looks like in this protocol.
    fn close(&self, run: &mut RunState, out: &mut Reporter<'_>) -> io::Result<()>;

    /// What the verdict says of the run's end, in this protocol's words
    /// (the run is over and closed).
    fn end(&self, run: &RunState, cfg: &Config) -> End;

    /// The member an event's type is counted by (summarize,
    /// docs/contract.md §1.2); `flag` is `--type-field`.
    fn type_field<'a>(&'a self, _flag: &'a str) -> &'a str {
        "type"
    }

    /// Where a run of it states how it ended, for a command that reads
    /// that from the events (summarize).
    fn outcomes(&'static self) -> Outcomes {
        Outcomes::Unstated
    }

    /// Its events number themselves (AOI 1.x's seq): what reconcile
    /// accounts by.
    fn numbers_events(&self) -> bool {
        false
    }

    /// Its summary's count is every line of its run, meta and summary too
    /// (AOI 0.2).
    fn counts_every_line(&self) -> bool {
        false
    }

    /// `run`: how much of the command's stderr it reads (OKF's error
    /// envelope is there).
    fn stderr_read(&self) -> Option<usize> {
        None
    }

    /// Only `run` reads it: what it reads is a command's, not a stream's.
    fn run_only(&self) -> bool {
        false
    }

    /// What strip-envelope writes of an event (docs/contract.md §6.1); `kinds`
    /// are the `--type` values, which name kinds where `typed_by_kind`.
    fn payload(&self, _ev: &Event<'_>, _kinds: &[String]) -> Option<Payload> {
        Some(Payload::Whole(None))
    }

    /// `--type` names its kinds, not its types (AFDATA).
    fn typed_by_kind(&self) -> bool {
        false
    }

    /// How upgrade writes its events as AOI 1.0 (docs/contract.md §1.6).
    fn mapping(&'static self) -> Mapping {
        Mapping::Typed {
            discriminator: false,
            untyped_as_record: false,
        }
    }

    /// `run`: the command ended so. What the stream said must agree
    /// (spec §4.1, §6): `exit.disagrees` when it exited 0 but the run says
    /// ok:false, or failed but the run says ok:true.
    fn exited(
        &self,
        run: &mut RunState,
        out: &mut Reporter<'_>,
        ended: &Exited<'_>,
    ) -> io::Result<()> {
        let says = match claim_against(run, ended) {
            Some(false) => "ok:false",
            Some(true) => "ok:true",
            None => return Ok(()),
        };
        let how = ended.how;
        let msg = format!("the stream's summary says {says}, but the command {how}");
        out.report(run, Rule::ExitDisagrees, None, msg)
    }
}

/// What strip-envelope writes of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// The event, less this byte range (AOI 1.x's envelope member).
    Whole(Option<(usize, usize)>),
    /// Only this value (AFDATA's payload, the aiocs envelope's data).
    Value((usize, usize)),
}

/// Where a run states how it ended, as summarize reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcomes {
    /// AOI's framework events: `aoi:error`, `aoi:warning`, `aoi:summary`.
    Framework,
    /// AFDATA's `kind`: a `result`, or an `error` with its payload.
    Kinds,
    /// The aiocs envelope's `ok` and `error`.
    Envelope,
    /// A producer profile's end event, as the profile reads it.
    Profile(ProfileRef),
    /// Nowhere in its events.
    Unstated,
}

/// How upgrade writes a protocol's events as AOI 1.0 (docs/contract.md
/// §1.6): the shape of the mapping, which upgrade carries out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mapping {
    /// AOI 1.x and 0.2: domain events re-enveloped, framework events
    /// forwarded or dropped. `envelope`: a top-level `aoi` member is the
    /// protocol's envelope (1.x), replaced by aoitap's; in 0.2, which has
    /// none, it is the event's own data, and such an event is kept whole
    /// as a `record`.
    Framework { envelope: bool },
    /// AFDATA: `kind` becomes `type`; `error` an `aoi:error`.
    Kinds,
    /// Each event as it came, typed by `type`, else by the discriminator
    /// (`discriminator`), else kept whole as a `record`
    /// (`untyped_as_record`).
    Typed {
        discriminator: bool,
        untyped_as_record: bool,
    },
    /// The aiocs envelope: a `result`, or its error as an `aoi:error`.
    Envelope,
    /// One document, whole, as the `document` member of a `document`.
    Document,
    /// A producer profile's events: typed by its field, its errors as
    /// `aoi:warning`.
    Profile(ProfileRef),
}

/// What the run claims (`ok`) where the command's exit status says the
/// other (spec §4.1, §6): `run`'s `exit.disagrees`, in every protocol.
pub(in crate::check) fn claim_against(run: &RunState, ended: &Exited<'_>) -> Option<bool> {
    let ok = run.summary.as_ref().and_then(|o| o.ok)?;
    (ok != ended.success()).then_some(ok)
}

/// A protocol's ruling on one line, or the failure to write a finding.
pub(in crate::check) type Judged = io::Result<Ruling>;

/// What a protocol's rules made of one line.
#[derive(Debug, Default)]
pub(in crate::check) struct Ruling {
    pub(in crate::check) seen: LineKind,
    /// The line ended its run (its summary or terminal event): with
    /// `--multi-run` the run is judged at once.
    pub(in crate::check) ends: bool,
    /// The line is its run's `aoi:meta`: with `--multi-run`, lines without
    /// an id go to this run from now on.
    pub(in crate::check) meta: bool,
}

impl Ruling {
    pub(in crate::check) fn seen(seen: LineKind) -> Ruling {
        Ruling {
            seen,
            ..Ruling::default()
        }
    }
}

/// What the checker learned of a line, for commands that pass lines on.
#[derive(Debug, Default, Clone, Copy)]
pub struct LineKind {
    /// A JSON object with a string `type` and no reserved key twice: an
    /// event that can be passed on.
    pub event: bool,
    /// Its decoded type is `aoi:*`.
    pub framework: bool,
    /// The protocol of the run the line went to.
    pub protocol: Protocol,
    /// The line names a run already judged (multi-run): it is reported,
    /// and belongs to no open run.
    pub late: bool,
    /// How the checker stepped the run's seq on this line: reconcile keeps
    /// its account in the same steps, so the two count the same gaps.
    pub seq: SeqPlace,
    /// A line of a JSON document over several lines (a pretty-printed
    /// aiocs envelope), judged with it as one event: no line of its own.
    pub held: bool,
}

/// A line's place in its run's seq (AOI 1.x, spec §8.1).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum SeqPlace {
    /// Not followed (another protocol, or ids past the per-run cap).
    #[default]
    Untracked,
    /// It takes a step, but carries no seq that can be counted (none, or
    /// not an integer in 64 bits): one step, as for an unreadable line.
    Skipped,
    /// At this seq.
    At(u64),
}

/// How `run`'s command ended, as its protocol holds its output to it.
pub struct Exited<'a> {
    /// Its exit status; `None` when a signal killed it.
    pub code: Option<i32>,
    /// As a person says it: "exited 3", "was killed by SIGKILL".
    pub how: &'a str,
    /// What it wrote on stderr, for a protocol that reads it (OKF).
    pub stderr: Option<Captured>,
}

impl Exited<'_> {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// How a command that wrote no line ended, as its run's missing end
    /// says it: the exit status and what it says by convention (a usage
    /// error), or the signal that killed it.
    pub fn before_a_line(&self) -> String {
        if self.success() {
            return format!("{} without writing a stream", self.how);
        }
        match self.code.and_then(crate::exit::said_by_status) {
            Some(said) => format!("{}, {said}, before writing a stream", self.how),
            None => format!("{} before writing a stream", self.how),
        }
    }
}

/// The start of what a command wrote on a stream, and how much it wrote.
#[derive(Debug, Default)]
pub struct Captured {
    pub head: Vec<u8>,
    pub total: u64,
}

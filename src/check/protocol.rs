//! Which contract a run follows (DESIGN §9), and the seam where the
//! checker hands a line to that contract's rules.
//!
//! AOI 1.x is the checker's own (`mod.rs`, `framework.rs`); each other
//! protocol is one module of rules: `legacy.rs` (AOI 0.2, what the AOI
//! TypeScript SDK 0.1 and machinemode write), `afdata.rs` (AFDATA v1 event
//! streams) and `ndjson.rs` (typed NDJSON such as a daemon's log). A new
//! protocol is a variant here, its detection and its two calls below, and
//! its own module. Line rules (`line.*`, `json.*`) are decided before any
//! protocol is asked, so they hold in every one.

use std::io;

use super::{Sink, State, major};
use crate::check::rules::Rule;
use crate::json::Event;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// AOI-CLI 1.x (the spec in `spec/aoi-cli-v1.0-alpha.md`).
    #[default]
    Aoi,
    /// AOI 0.2: no envelope; `aoi:summary.count` counts every line.
    Aoi02,
    /// AFDATA protocol v1: `kind` and a payload named by it.
    Afdata,
    /// Typed NDJSON: a string discriminator, nothing more unless
    /// `--first`/`--last` say how a run starts and ends. Never guessed.
    Ndjson,
}

impl Protocol {
    pub const ALL: [Protocol; 4] = [
        Protocol::Aoi,
        Protocol::Aoi02,
        Protocol::Afdata,
        Protocol::Ndjson,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Aoi => "aoi",
            Protocol::Aoi02 => "aoi-0.2",
            Protocol::Afdata => "afdata",
            Protocol::Ndjson => "ndjson",
        }
    }

    pub fn from_name(name: &str) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.name() == name)
    }

    /// What a run's first JSON object says it is (DESIGN §9, `auto`): an
    /// `aoi:meta` of major version 0 is AOI 0.2; a string `kind` among
    /// AFDATA's four with a member of that name is AFDATA; anything else
    /// is AOI 1.x.
    pub fn detect(ev: &Event<'_>) -> Protocol {
        if ev.ty().as_deref() == Some("aoi:meta")
            && ev
                .get("aoi_version")
                .and_then(|v| v.as_str())
                .and_then(|v| major(&v))
                == Some(0)
        {
            return Protocol::Aoi02;
        }
        if let Some(kind) = ev.get("kind").and_then(|v| v.as_str())
            && matches!(&*kind, "result" | "error" | "progress" | "log")
            && ev.get(&kind).is_some()
        {
            return Protocol::Afdata;
        }
        Protocol::Aoi
    }

    /// Runs of this protocol have no id of their own: each is known by the
    /// line that opened it.
    pub fn runs_by_position(self) -> bool {
        matches!(self, Protocol::Afdata | Protocol::Ndjson)
    }
}

impl State<'_> {
    /// The protocol of the run in `slot`, decided at its first JSON object
    /// (`ev`) and then kept. A pinned protocol the run does not match is
    /// `protocol.mismatch`, once per run; the run is still judged by the
    /// pinned rules.
    pub(super) fn protocol_of(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        ev: &Event<'_>,
    ) -> io::Result<Protocol> {
        if let Some(p) = self.run(slot).protocol {
            return Ok(p);
        }
        let seen = Protocol::detect(ev);
        let pinned = self.cfg.protocol;
        let p = pinned.unwrap_or(seen);
        self.run(slot).protocol = Some(p);
        // ndjson is any object with a discriminator; a 0.x stream under
        // `--protocol aoi` is `version.aoi-unsupported` (its meta says so).
        let mismatch = pinned.is_some_and(|pin| {
            pin != seen
                && pin != Protocol::Ndjson
                && !(pin == Protocol::Aoi && seen == Protocol::Aoi02)
        });
        if mismatch {
            let msg = format!(
                "--protocol {} given, but the run's first object reads as {}",
                p.name(),
                seen.name()
            );
            self.report(sink, slot, Rule::ProtocolMismatch, None, msg)?;
        }
        Ok(p)
    }

    /// The protocol a run is judged by, once it is over.
    pub(super) fn protocol_at_end(&self, slot: usize) -> Protocol {
        let run = self.slots[slot].as_ref().expect("open run");
        run.protocol.or(self.cfg.protocol).unwrap_or(Protocol::Aoi)
    }

    /// A JSON object line, by the rules of the run's protocol.
    pub(super) fn by_protocol(
        &mut self,
        sink: &mut dyn Sink,
        slot: usize,
        ev: &Event<'_>,
    ) -> io::Result<super::Seen> {
        match self.protocol_of(sink, slot, ev)? {
            Protocol::Aoi => self.aoi_event(sink, slot, ev),
            Protocol::Aoi02 => self.legacy_event(sink, slot, ev),
            Protocol::Afdata => self.afdata_event(sink, slot, ev),
            Protocol::Ndjson => self.ndjson_event(sink, slot, ev),
        }
    }

    /// The end-of-run rules of the run's protocol (what a cut end looks
    /// like in each).
    pub(super) fn close_by_protocol(&mut self, sink: &mut dyn Sink, slot: usize) -> io::Result<()> {
        match self.protocol_at_end(slot) {
            Protocol::Aoi => self.aoi_close(sink, slot),
            Protocol::Aoi02 => self.legacy_close(sink, slot),
            Protocol::Afdata => self.afdata_close(sink, slot),
            Protocol::Ndjson => self.ndjson_close(sink, slot),
        }
    }
}

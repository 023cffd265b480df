//! The rules of each protocol (DESIGN §9), one module each behind one
//! trait (`contract.rs`): AOI 1.x (`aoi.rs`), AOI 0.2 as the AOI
//! TypeScript SDK 0.1 and machinemode write it (`aoi02.rs`), AFDATA v1
//! event streams (`afdata.rs`) and typed NDJSON such as a daemon's log
//! (`ndjson.rs`); the framework events 1.x and 0.2 share are
//! `framework.rs`. A new protocol is a variant of `Protocol`, its
//! detection, its module and its arm in `contract_of`.

use std::io;

use crate::check::config::Config;
use crate::check::finding::Reporter;
use crate::check::protocol::Protocol;
use crate::check::rules::Rule;
use crate::check::run_state::RunState;
use crate::json::Event;

mod afdata;
mod aoi;
mod aoi02;
mod contract;
mod framework;
mod ndjson;

pub(in crate::check) use contract::Contract;
pub use contract::{Seen, SeqSeen};
pub(in crate::check) use framework::typed;
pub(in crate::check) use ndjson::opens;

/// The rules of `protocol`.
pub(in crate::check) fn contract_of(protocol: Protocol) -> &'static dyn Contract {
    match protocol {
        Protocol::Aoi => &aoi::Aoi1,
        Protocol::Aoi02 => &aoi02::Aoi02,
        Protocol::Afdata => &afdata::Afdata,
        Protocol::Ndjson => &ndjson::Ndjson,
    }
}

/// The protocol of `run`, decided at its first JSON object (`ev`) and then
/// kept. A pinned protocol the run does not match is `protocol.mismatch`,
/// once per run; the run is still judged by the pinned rules.
pub(in crate::check) fn decide(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    ev: &Event<'_>,
) -> io::Result<Protocol> {
    if let Some(p) = run.protocol {
        return Ok(p);
    }
    let seen = Protocol::detect(ev);
    let pinned = out.cfg.protocol;
    let p = pinned.unwrap_or(seen);
    run.protocol = Some(p);
    // ndjson is any object with a discriminator; a 0.x stream under
    // `--protocol aoi` is `version.aoi-unsupported` (its meta says so).
    let mismatch = pinned.is_some_and(|pin| {
        pin != seen && pin != Protocol::Ndjson && !(pin == Protocol::Aoi && seen == Protocol::Aoi02)
    });
    if mismatch {
        let msg = format!(
            "--protocol {} given, but the run's first object reads as {}",
            p.name(),
            seen.name()
        );
        out.report(run, Rule::ProtocolMismatch, None, msg)?;
    }
    Ok(p)
}

/// The protocol a run is judged by, once it is over.
pub(in crate::check) fn at_end(run: &RunState, cfg: &Config) -> Protocol {
    run.protocol.or(cfg.protocol).unwrap_or(Protocol::Aoi)
}

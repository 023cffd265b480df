//! The rules of each protocol (docs/contract.md §6.1), one module each behind one
//! trait (`contract.rs`): AOI 1.x (`aoi.rs`; its error rules in
//! `aoi_error.rs`), AOI 0.2 as the AOI
//! TypeScript SDK 0.1 and machinemode write it (`aoi02.rs`), AFDATA v1
//! event streams (`afdata.rs`; the types its key suffixes name in
//! `afdata_suffixes.rs`, which `--names afdata` applies to any protocol),
//! typed NDJSON such as a daemon's log (`ndjson.rs`), the aiocs one-shot
//! envelope (`aiocs.rs`), an OKF command's output and error envelope
//! under `run` (`okf.rs`) and plain JSON lines (`jsonl.rs`); the framework events 1.x and 0.2 share are
//! `framework.rs`. A new protocol is a variant of `Protocol`, its
//! detection, its module and its arm in `contract_of`; its module holds
//! its state beyond what every run keeps (a `run_state::Part`) and the
//! words of its verdict (`Contract::end`).

use std::io;

use crate::check::config::Config;
use crate::check::config::Protocol;
use crate::check::finding::Reporter;
use crate::check::rules::Rule;
use crate::check::run_state::RunState;
use crate::json::Event;

mod afdata;
pub(in crate::check) mod afdata_suffixes;
mod aiocs;
mod aoi;
mod aoi02;
mod aoi_error;
mod contract;
pub(in crate::check) mod detect;
mod framework;
mod jsonl;
mod ndjson;
mod okf;
pub(in crate::check) mod profile;
mod profile_said;

pub use afdata::payload_retry_after_ms;
pub(in crate::check) use contract::Contract;
pub use contract::{Captured, Exited, LineKind, Mapping, Outcomes, Payload, SeqPlace};
pub(in crate::check) use framework::typed;
pub use framework::{identity, identity_text};
pub use okf::MAX_ERROR_BYTES as OKF_MAX_ERROR_BYTES;
pub use profile_said::{Problem, Reading};

/// The rules of `protocol`.
#[inline(always)]
pub(in crate::check) fn contract_of(protocol: Protocol) -> &'static dyn Contract {
    match protocol {
        Protocol::Aoi => &aoi::Aoi1,
        Protocol::Aoi02 => &aoi02::Aoi02,
        Protocol::Afdata => &afdata::Afdata,
        Protocol::Ndjson => &ndjson::Ndjson,
        Protocol::Aiocs => &aiocs::Aiocs,
        Protocol::Okf => &okf::Okf,
        Protocol::Jsonl => &jsonl::Jsonl,
        Protocol::Profile(p) => p.get(),
    }
}

/// The names of every protocol and built-in profile, as `--protocol` and
/// `--profile` take them and reports write them.
pub fn protocol_names() -> Vec<&'static str> {
    let profiles = crate::check::profiles::builtins()
        .iter()
        .map(|p| p.get().name.as_str());
    Protocol::ALL
        .iter()
        .map(|p| p.name())
        .chain(profiles)
        .collect()
}

/// The protocols `--protocol` names for `command`: those only `run` reads
/// are `run`'s.
pub fn protocols_named_for(command: &str) -> Vec<&'static str> {
    Protocol::ALL
        .iter()
        .filter(|p| !p.run_only() || command == "run")
        .map(|p| p.name())
        .collect()
}

/// What each protocol answers for itself (docs/architecture.md, "Adding
/// a protocol or profile"): the commands ask these, never which protocol
/// it is.
impl Protocol {
    /// The member an event's type is counted by (summarize,
    /// docs/contract.md §1.2); `flag` is `--type-field`.
    pub fn type_field(self, flag: &str) -> &str {
        contract_of(self).type_field(flag)
    }

    /// Where a run states how it ended, for summarize.
    pub fn outcomes(self) -> Outcomes {
        contract_of(self).outcomes()
    }

    /// Its events number themselves (AOI 1.x's seq): reconcile accounts
    /// by it.
    pub fn numbers_events(self) -> bool {
        contract_of(self).numbers_events()
    }

    /// Its summary counts every line of its run (AOI 0.2).
    pub fn counts_every_line(self) -> bool {
        contract_of(self).counts_every_line()
    }

    /// `run`: how much of the command's stderr it reads.
    pub fn stderr_read(self) -> Option<usize> {
        contract_of(self).stderr_read()
    }

    /// Only `run` reads it.
    pub fn run_only(self) -> bool {
        contract_of(self).run_only()
    }

    /// What strip-envelope writes of `ev` (`kinds`: the `--type` values).
    pub fn payload(self, ev: &Event<'_>, kinds: &[String]) -> Option<Payload> {
        contract_of(self).payload(ev, kinds)
    }

    /// `--type` names its kinds, not its types.
    pub fn typed_by_kind(self) -> bool {
        contract_of(self).typed_by_kind()
    }

    /// How upgrade writes its events as AOI 1.0.
    pub fn mapping(self) -> Mapping {
        contract_of(self).mapping()
    }
}

/// The protocol of `run`, decided at its first JSON object (`ev`) and then
/// kept. A pinned protocol the run does not match is `protocol.mismatch`,
/// once per run; the run is still judged by the pinned rules.
#[inline(always)]
pub(in crate::check) fn decide(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    ev: &Event<'_>,
) -> io::Result<Protocol> {
    if let Some(p) = run.protocol {
        return Ok(p);
    }
    let seen = detect::detect(ev);
    let pinned = out.cfg.protocol;
    let p = pinned.unwrap_or(seen);
    run.protocol = Some(p);
    // ndjson is any object with a discriminator; a 0.x stream under
    // `--protocol aoi` is `version.aoi-unsupported` (its meta says so); an
    // aiocs envelope that is not one is `aiocs.envelope-invalid`; an OKF
    // document is any object.
    let mismatch = pinned.is_some_and(|pin| {
        pin != seen
            && !matches!(
                pin,
                Protocol::Ndjson
                    | Protocol::Aiocs
                    | Protocol::Okf
                    | Protocol::Jsonl
                    | Protocol::Profile(_)
            )
            && !(pin == Protocol::Aoi && seen == Protocol::Aoi02)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::finding::tests::Kept;
    use crate::json::{Arena, Parser};

    /// Each line of `lines` through the rules of `protocol`, on one run:
    /// what each step said, and the rules found.
    fn steps(cfg: &Config, protocol: Protocol, lines: &[&str]) -> (Vec<(bool, bool)>, Vec<Rule>) {
        let mut run = RunState::new(None, None, 1);
        run.protocol = Some(protocol);
        let mut kept = Kept::default();
        let mut said = vec![];
        for (i, line) in lines.iter().enumerate() {
            let mut arena = Arena::default();
            let index = Parser::new().parse(line.as_bytes(), &mut arena).unwrap();
            let ev = index.event(line.as_bytes(), &arena);
            let mut out = Reporter {
                cfg,
                line: i as u64 + 1,
                sink: &mut kept,
                silent_exit: None,
            };
            let step = contract_of(protocol)
                .event(&mut run, &mut out, &ev)
                .unwrap();
            said.push((step.meta, step.ends));
        }
        let mut out = Reporter {
            cfg,
            line: lines.len() as u64,
            sink: &mut kept,
            silent_exit: None,
        };
        contract_of(protocol).close(&mut run, &mut out).unwrap();
        (said, kept.findings.iter().map(|f| f.rule).collect())
    }

    #[test]
    fn an_aoi_run_is_opened_by_its_meta_and_ended_by_its_summary() {
        let cfg = Config::default();
        let (said, rules) = steps(
            &cfg,
            Protocol::Aoi,
            &[
                r#"{"type":"aoi:meta","aoi":{"seq":0,"run":"r"},"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1"}"#,
                r#"{"type":"hit","aoi":{"seq":1,"run":"r"}}"#,
                r#"{"type":"aoi:summary","aoi":{"seq":2,"run":"r"},"ok":true,"event_count":3,"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1"}"#,
            ],
        );
        assert_eq!(said, [(true, false), (false, false), (false, true)]);
        assert_eq!(rules, []);
    }

    #[test]
    fn a_second_summary_ends_nothing() {
        let cfg = Config::default();
        let summary = r#"{"type":"aoi:summary","ok":true}"#;
        let (said, rules) = steps(&cfg, Protocol::Aoi, &[summary, summary]);
        assert_eq!(said, [(false, true), (false, false)]);
        assert!(rules.contains(&Rule::SummaryDuplicate), "{rules:?}");
    }

    #[test]
    fn an_aoi02_run_ends_with_its_summary_and_counts_every_line() {
        let cfg = Config::default();
        let (said, rules) = steps(
            &cfg,
            Protocol::Aoi02,
            &[
                r#"{"type":"aoi:meta","tool":"t","tool_version":"1","aoi_version":"0.2","schema_name":"s","schema_version":"1"}"#,
                r#"{"type":"item"}"#,
                r#"{"type":"aoi:summary","ok":true,"count":5}"#,
            ],
        );
        assert_eq!(said, [(true, false), (false, false), (false, true)]);
        assert!(rules.contains(&Rule::SummaryCountMismatch), "{rules:?}");
    }

    #[test]
    fn an_afdata_run_ends_with_its_first_terminal_event() {
        let cfg = Config::default();
        let (said, rules) = steps(
            &cfg,
            Protocol::Afdata,
            &[
                r#"{"kind":"progress","progress":{},"trace":{}}"#,
                r#"{"kind":"result","result":{},"trace":{}}"#,
                r#"{"kind":"log","log":{},"trace":{}}"#,
            ],
        );
        assert_eq!(said, [(false, false), (false, true), (false, false)]);
        assert_eq!(rules, [Rule::AfdataTerminalNotLast]);
    }

    #[test]
    fn a_typed_ndjson_run_ends_at_its_last_type_only_when_one_is_given() {
        let lines = [r#"{"type":"start"}"#, r#"{"type":"done"}"#];
        let (said, _) = steps(&Config::default(), Protocol::Ndjson, &lines);
        assert_eq!(said, [(false, false), (false, false)]);
        let cfg = Config {
            type_field: "type".into(),
            last: Some("done".into()),
            ..Config::default()
        };
        let (said, rules) = steps(&cfg, Protocol::Ndjson, &lines);
        assert_eq!(said, [(false, false), (false, true)]);
        assert_eq!(rules, []);
    }
}

//! A call's stdout judged as `aoitap verify` judges it (one truth: lint
//! asks the same checker), and each finding's rule placed under the §18.2
//! check it bears on.

use std::io;
use std::sync::Arc;

use crate::check::rules::{Levels, Rule};
use crate::check::schema::EventSchema;
use crate::check::{Checker, Config, Finding, RunVerdict, Sink, Tally};
use crate::exit::Exit;
use crate::input::line_check::LineCheck;
use crate::input::scan::{Batch, Cutter};
use crate::json::Parser;

/// The longest line judged: a tool under lint is not trusted with more.
const MAX_LINE: usize = 64 << 20;

/// What the checker made of one stream.
pub struct Judged {
    pub findings: Vec<Finding>,
    pub runs: Vec<RunVerdict>,
    /// verify's exit status for the stream.
    pub exit: Exit,
}

impl Judged {
    /// The findings that bear on §18.2 check `number`.
    pub fn for_check(&self, number: u8) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(move |f| check_of(f.rule) == Some(number))
    }
}

/// Judge `bytes` as one stream; with `schema`, every event is validated
/// against it too.
pub fn judge(bytes: &[u8], schema: Option<Arc<EventSchema>>) -> Judged {
    let cfg = Config {
        multi_run: false,
        unbounded: false,
        accept_partial: false,
        continue_on_error: false,
        expect_schema: None,
        levels: Levels::new(&[], false),
        markers: vec![],
        max_line_bytes: MAX_LINE,
        protocol: None,
        type_field: "type".to_string(),
        first: None,
        last: None,
        secret_names: vec![],
        redact: false,
        schema,
    };
    let mut kept = Kept::default();
    let mut check = Checker::new(&cfg);
    let mut cutter = Cutter::new(bytes, MAX_LINE);
    let mut parser = Parser::default();
    let mut batch = Batch::default();
    // Reading a slice cannot fail, and the sink keeps everything.
    while let Ok(true) = cutter.next_batch_in(&mut batch) {
        let line_check = cfg.schema.as_deref().map(|s| s as &dyn LineCheck);
        batch.parse(&mut parser, line_check);
        for line in batch.lines() {
            let _ = check.judge(&line, &mut kept);
        }
    }
    let _ = check.finish(&mut kept);
    Judged {
        exit: kept.tally.exit(),
        findings: kept.findings,
        runs: kept.runs,
    }
}

#[derive(Default)]
struct Kept {
    findings: Vec<Finding>,
    runs: Vec<RunVerdict>,
    tally: Tally,
}

impl Sink for Kept {
    fn finding(&mut self, f: &Finding) -> io::Result<()> {
        self.tally.finding(f);
        self.findings.push(f.clone());
        Ok(())
    }

    fn run(&mut self, r: &RunVerdict) -> io::Result<()> {
        self.tally.run(r);
        self.runs.push(r.clone());
        Ok(())
    }
}

/// The §18.2 check a rule bears on: 2 the stream's form, 3 its summary's
/// truth, 4 the schema, 5 the errors, 9 secrets, 13 versions, 14 one meta
/// and one summary, 15 seq and counts. `None`: a rule of another
/// protocol, or about aoitap's own reading.
pub fn check_of(rule: Rule) -> Option<u8> {
    use Rule::*;
    Some(match rule {
        LineUnterminated | LineBlank | LineTooLong | LineElided | JsonInvalid | JsonInvalidUtf8
        | JsonNotObject | EnvelopeTypeMissing | EnvelopeDuplicateKey | EnvelopeAoiNotObject
        | TextAnsi | FrameworkUnknownType => 2,
        SummaryMissing
        | SummaryOkMissing
        | SummaryReasonMissing
        | SummaryReasonInvalid
        | SummaryCountMismatch
        | SummaryCounterLow
        | SummaryCounterInvalid
        | SummaryPartialInconsistent
        | SummaryOkDespiteError
        | SummaryCausedByMissing
        | SummaryUpstreamNull
        | VerdictDuplicateKey
        | MetaMissing => 3,
        EventSchemaInvalid => 4,
        ErrorFieldMissing
        | ErrorCategoryRemoved
        | ErrorCategoryUnknown
        | ErrorCodeFormat
        | ErrorMessageMultiline
        | ErrorRetryAfterForbidden
        | ErrorRetryAfterInvalid
        | ErrorScopeInvalid => 5,
        MetaArgsUnredacted | SecretExposed | SecretUrlExposed => 9,
        VersionAoiUnsupported
        | VersionSchemaMismatch
        | MetaIdentityMissing
        | SummaryIdentityMissing => 13,
        MetaNotFirst | MetaDuplicate | SummaryNotLast | SummaryDuplicate => 14,
        SeqNotInteger
        | SeqMissing
        | SeqNotFromZero
        | SeqGap
        | SeqRepeat
        | RunMissing
        | RunNotString
        | RunChanged
        | VerifiableNotClaimed
        | SummaryEventCountMismatch
        | SummaryEventCountMissing => 15,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(ls: &[&str]) -> Vec<u8> {
        ls.iter()
            .flat_map(|l| [l.as_bytes(), b"\n"].concat())
            .collect()
    }

    const META: &str = r#"{"type":"aoi:meta","aoi":{"seq":0,"run":"R"},"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1"}"#;
    const HIT: &str = r#"{"type":"hit","aoi":{"seq":1,"run":"R"}}"#;
    const DONE: &str = r#"{"type":"aoi:summary","aoi":{"seq":2,"run":"R"},"ok":true,"event_count":3,"count":1,"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1"}"#;

    #[test]
    fn a_conforming_stream_has_no_finding_against_a_check() {
        let j = judge(&lines(&[META, HIT, DONE]), None);
        assert_eq!(j.exit, Exit::Pass);
        let placed: Vec<_> = j.findings.iter().filter_map(|f| check_of(f.rule)).collect();
        assert!(placed.is_empty(), "{placed:?}");
    }

    #[test]
    fn each_fault_lands_under_its_check() {
        let banner = judge(&lines(&["Searching...", META, HIT, DONE]), None);
        assert!(banner.for_check(2).count() > 0);
        let cut = judge(&lines(&[META, HIT]), None);
        assert!(cut.for_check(3).count() > 0);
        let gap = DONE.replace(r#""seq":2"#, r#""seq":3"#);
        let gapped = judge(&lines(&[META, HIT, &gap]), None);
        assert!(gapped.for_check(15).count() > 0);
        let twice = judge(&lines(&[META, META, HIT, DONE]), None);
        assert!(twice.for_check(14).count() > 0);
    }
}

//! The shared sample streams (expected.tsv) and aoitap's own output held to
//! the contract it checks.

use crate::util::*;

fn expected_rows() -> Vec<(String, Vec<String>, i32, Vec<String>)> {
    let tsv = std::fs::read_to_string(fixture("streams/expected.tsv")).unwrap();
    tsv.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            let args = cols[1].split_whitespace().map(String::from).collect();
            let rules = cols.get(3).map_or(vec![], |r| {
                r.split(',')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            });
            (cols[0].to_string(), args, cols[2].parse().unwrap(), rules)
        })
        .collect()
}

#[test]
fn every_row_of_expected_tsv_holds() {
    let rows = expected_rows();
    assert_eq!(rows.len(), 22);
    for (file, args, exit, rules) in rows {
        let input = std::fs::read(fixture(&format!("streams/{file}"))).unwrap();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = verify(&args, &input);
        assert_eq!(
            out.code,
            exit,
            "{file} {args:?}: exit; findings {:?}",
            out.rules()
        );
        for rule in &rules {
            assert!(
                out.has_rule(rule),
                "{file} {args:?}: {rule} missing from {:?}",
                out.rules()
            );
        }
    }
}

/// aoitap's own jsonl output, on good and bad input, is itself a
/// conforming stream: `aoitap verify --output jsonl | aoitap verify` finds
/// nothing to report, and its verdict carries the input's (§13.1).
#[test]
fn own_output_passes_verify() {
    for (file, args, exit, _) in expected_rows() {
        let input = std::fs::read(fixture(&format!("streams/{file}"))).unwrap();
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        let first = verify(&args, &input);
        let again = verify(&["--strict"], first.stdout.as_bytes());
        assert!(
            again.findings().is_empty(),
            "{file}: aoitap's own output has findings {:?}\n{}",
            again.rules(),
            first.stdout
        );
        let want = match exit {
            0 => 0,
            75 => 75,
            _ => 1,
        };
        assert_eq!(
            again.code, want,
            "{file}: the verdict did not survive the pipe"
        );
        // Quiet: nothing written, the same exit.
        args.push("-q");
        let quiet = verify(&args, &input);
        assert_eq!(quiet.code, first.code, "{file}: -q changed the exit");
        assert_eq!(quiet.stdout, "", "{file}: -q wrote a report");
    }
}

#[test]
fn own_output_shape() {
    let out = verify(
        &[],
        &std::fs::read(fixture("streams/elided-with-marker.jsonl")).unwrap(),
    );
    let events = out.events();
    assert_eq!(events[0]["type"], "aoi:meta");
    assert_eq!(events[0]["tool"], "aoitap");
    assert_eq!(events[0]["command"], "verify");
    assert!(events[0].get("args").is_none(), "no raw argv in meta (§11)");
    let run_id = events[0]["aoi"]["run"].as_str().unwrap().to_string();
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["aoi"]["seq"], i as u64);
        assert_eq!(e["aoi"]["run"], run_id.as_str());
    }
    let s = out.summary();
    assert_eq!(s["event_count"], events.len() as u64);
    assert_eq!(s["ok"], false);
    assert_eq!(s["reason"], "failed");
    assert_eq!(s["upstream"]["tool"], "outline");
    assert_eq!(
        s["count"],
        events
            .iter()
            .filter(|e| matches!(e["type"].as_str(), Some("finding" | "run")))
            .count() as u64
    );
    for key in [
        "tool_version",
        "aoi_version",
        "schema_name",
        "schema_version",
    ] {
        assert!(
            s.get(key).is_some() && events[0].get(key).is_some(),
            "{key} at both ends (§5)"
        );
    }
    let err = events.iter().find(|e| e["type"] == "aoi:error").unwrap();
    assert_eq!(err["code"], "STREAM_NONCONFORMING");
    assert_eq!(err["retryable"], false);
}

/// JSONTestSuite's values as AOI streams (tests/fixtures/jsonsuite): verify
/// passes exactly the streams whose every line is strict RFC 8259 JSON in
/// UTF-8 (docs/contract.md §2.1, §3.1), and never crashes on one.
#[test]
fn jsonsuite_verdicts_hold() {
    let tsv = std::fs::read_to_string(fixture("jsonsuite/expected.tsv")).unwrap();
    let mut wrong = vec![];
    let mut rows = 0;
    for line in tsv.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let (file, expect) = line.split_once('\t').unwrap();
        let input = std::fs::read(fixture(&format!("jsonsuite/streams/{file}"))).unwrap();
        let (code, _, err) = raw(&["verify"], &input);
        let verdict = match code {
            0 => "pass",
            1..=127 if !err.contains("panicked") => "fail",
            _ => "crash",
        };
        if verdict != expect {
            wrong.push(format!(
                "{file}: {verdict} (exit {code}), expected {expect}"
            ));
        }
        rows += 1;
    }
    assert_eq!(rows, 308);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

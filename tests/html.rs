//! `--output html` (docs/contract.md §5.4): pages rendered in headless
//! Chromium, their DOM read after the page's own script ran, and a
//! screenshot taken. `.ci/run` installs Chromium from the distribution's
//! packages; these tests need it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::*;

/// Chromium, as Debian names it (or as others do).
fn chromium() -> &'static str {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| installed(c))
        .expect("Chromium is installed (.ci/run installs the Debian package `chromium`)")
}

/// Headless Chromium on `page` (with `#fragment`), with `what` its last
/// arguments; its stdout.
fn chrome(page: &Path, fragment: &str, what: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("timeout")
        .arg("120")
        .arg(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(what)
        .arg(format!("file://{}{fragment}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The page's DOM once it loaded and its script ran.
fn dom(page: &Path, fragment: &str) -> String {
    chrome(page, fragment, &["--dump-dom"])
}

/// A screenshot of `page`: a PNG that is there and not empty.
fn screenshot(page: &Path) -> PathBuf {
    let png = page.with_extension("png");
    chrome(
        page,
        "",
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1400,1000",
        ],
    );
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "a screenshot was drawn"
    );
    png
}

/// `aoitap ARGS --output html` on `input`, the page written into `dir`:
/// its path and the exit status, which must be the human output's.
fn page(dir: &Path, name: &str, args: &[&str], input: &[u8]) -> (PathBuf, i32) {
    let (code, html, _) = raw(&[args, &["--output", "html"]].concat(), input);
    let (human, _, _) = raw(args, input);
    assert_eq!(
        code, human,
        "{args:?}: the page's exit status is the human output's"
    );
    let path = dir.join(name);
    std::fs::write(&path, &html).unwrap();
    (path, code)
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

/// Each run's row, as the DOM holds them: one `tbody` a run.
fn rows(dom: &str) -> usize {
    count(dom, "<tbody class=\"run ")
}

/// The page's own script ran, under its policy: it marks the root.
fn script_ran(dom: &str) -> bool {
    dom.contains("data-sorts=\"1\"")
}

/// One event of `run`.
fn event(run: &str, seq: u64, ty: &str, rest: &str) -> String {
    format!(
        r#"{{"type":"{ty}","aoi":{{"seq":{seq},"run":{}}}{rest}}}"#,
        serde_json::to_string(run).unwrap()
    )
}

/// `n` runs, interleaved ten at a time: of every four, one passes, one is
/// cut before its summary, one loses seq 2 in the middle, one fails.
fn mixed_runs(n: usize) -> Vec<u8> {
    let mut out = vec![];
    for group in (0..n).collect::<Vec<_>>().chunks(10) {
        let runs: Vec<Vec<String>> = group
            .iter()
            .map(|&r| {
                let id = format!("run-{r:05}");
                let mut ls = vec![event(
                    &id,
                    0,
                    "aoi:meta",
                    &format!(r#",{IDENTITY},"command":"c {r}""#),
                )];
                let seqs: Vec<u64> = if r % 4 == 2 {
                    vec![1, 3]
                } else {
                    vec![1, 2, 3]
                };
                ls.extend(seqs.iter().map(|&s| event(&id, s, "hit", r#","id":1"#)));
                let ok = if r % 4 == 3 { "false" } else { "true" };
                let reason = if r % 4 == 3 {
                    r#","reason":"failed""#
                } else {
                    ""
                };
                if r % 4 != 1 {
                    ls.push(event(
                        &id,
                        4,
                        "aoi:summary",
                        &format!(r#","ok":{ok}{reason},"event_count":5,"count":3,{IDENTITY}"#),
                    ));
                }
                ls
            })
            .collect();
        let longest = runs.iter().map(Vec::len).max().unwrap_or(0);
        for k in 0..longest {
            for r in &runs {
                if let Some(l) = r.get(k) {
                    out.extend_from_slice(l.as_bytes());
                    out.push(b'\n');
                }
            }
        }
    }
    out
}

#[test]
fn one_run_is_a_page_with_its_verdict_a_bar_and_a_row() {
    let dir = tempfile::tempdir().unwrap();
    let (path, code) = page(dir.path(), "one.html", &["summarize"], &lines(&good(3)));
    assert_eq!(code, 0);
    let dom = dom(&path, "");
    assert!(
        script_ran(&dom),
        "the page's script ran under its own policy"
    );
    assert!(
        dom.contains("<header id=\"verdict\" class=\"pass\"><h1>PASS</h1>"),
        "{dom}"
    );
    assert!(dom.contains("Result: PASS (1 run; exit 0)"));
    assert_eq!(rows(&dom), 1);
    assert_eq!(count(&dom, "class=\"bar\""), 1);
    assert_eq!(count(&dom, "<script"), 1, "only the page's own script");
    // The verdict is written last, and shown first.
    let verdict = dom.find("id=\"verdict\"").unwrap();
    assert!(verdict > dom.find("<table").unwrap());
    screenshot(&path);
}

#[test]
fn a_thousand_runs_with_failures_and_cuts_each_have_a_bar_a_row_and_their_marks() {
    let dir = tempfile::tempdir().unwrap();
    let input = mixed_runs(1000);
    for command in ["summarize", "reconcile"] {
        let (path, code) = page(dir.path(), &format!("{command}.html"), &[command], &input);
        assert_ne!(code, 0, "{command}: cut and failed runs fail the stream");
        let dom = dom(&path, "");
        assert!(script_ran(&dom));
        assert!(dom.contains("<h1>FAIL</h1>"), "{command}");
        assert_eq!(rows(&dom), 1000, "{command}: a row a run");
        assert_eq!(count(&dom, "class=\"bar\""), 1000, "{command}: a bar a run");
        assert_eq!(count(&dom, "<tbody class=\"run pass\">"), 250, "{command}");
        assert_eq!(
            count(&dom, "<i class=\"cut\" style"),
            250,
            "{command}: each cut run is marked at its end"
        );
        assert!(
            count(&dom, "<i class=\"gap\" style") >= 250,
            "{command}: each gap is marked"
        );
        // A failed run's row holds its findings, with their lines.
        assert!(dom.contains("error[<code>seq.gap</code>]"), "{command}");
        // Sorted by lines (`#sort-3`, as a click on the head sorts it).
        let sorted = self::dom(&path, "#sort-3");
        let lines: Vec<u64> = sorted
            .split("<tbody class=\"run ")
            .skip(1)
            .map(|row| {
                let cell = row.split("<td data-v=\"").nth(1).unwrap();
                cell[..cell.find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert_eq!(lines.len(), 1000);
        assert!(
            lines.windows(2).all(|w| w[0] <= w[1]),
            "{command}: sorted by lines"
        );
        assert_ne!(lines.first(), lines.last());
    }
    screenshot(&dir.path().join("summarize.html"));
}

#[test]
fn hostile_run_ids_are_shown_as_text_and_run_nothing() {
    let hostile = [
        "<script>document.title='PWNED'</script>",
        "\"><img src=x onerror=\"document.body.dataset.pwned=1\">",
        "'single' & \"double\" </td></table><h1>x</h1>",
        "left \u{202e}txt.exe\u{202c} right",
        "run\u{61c} 123-456",
    ];
    let mut input = vec![];
    for id in hostile {
        let tool = r#""tool":"<script>document.title='PWNED2'</script>","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1.0.0","command":"<img src=x onerror=alert(1)>""#;
        for l in [
            event(id, 0, "aoi:meta", &format!(",{tool}")),
            event(id, 1, "hit", ""),
            event(id, 3, "hit", ""),
        ] {
            input.extend_from_slice(l.as_bytes());
            input.push(b'\n');
        }
    }
    let dir = tempfile::tempdir().unwrap();
    for command in ["summarize", "reconcile"] {
        let (path, _) = page(dir.path(), &format!("{command}.html"), &[command], &input);
        let bytes = std::fs::read_to_string(&path).unwrap();
        assert!(
            !bytes.contains("<img"),
            "{command}: no markup from the input"
        );
        assert_eq!(
            count(&bytes, "<script"),
            1,
            "{command}: the page's own script only"
        );
        let dom = dom(&path, "");
        assert!(script_ran(&dom));
        assert!(
            dom.contains(&format!("<title>aoitap {command}</title>")),
            "{command}: no injected script ran (it would retitle the page)"
        );
        assert!(
            !dom.contains("data-pwned"),
            "{command}: no injected handler ran"
        );
        assert_eq!(count(&dom, "<script"), 1, "{command}");
        assert_eq!(
            rows(&dom),
            hostile.len(),
            "{command}: one row a run, none broken out of"
        );
        assert!(
            dom.contains("&lt;script&gt;document.title='PWNED'&lt;/script&gt;"),
            "{command}: shown as text"
        );
        assert!(
            dom.contains("left \\u{202e}txt.exe\\u{202c} right"),
            "{command}: bidi marks shown, not obeyed"
        );
        assert!(dom.contains("run\\u{61c} 123-456"), "{command}");
        assert!(!dom.contains(['\u{202e}', '\u{61c}']));
    }
    screenshot(&dir.path().join("summarize.html"));
}

/// 100,000 runs: the page draws a capped number of them and counts the
/// rest, stays well under 20 MB, and costs about the memory the human
/// output costs (docs/contract.md §5.4).
#[test]
fn a_page_for_a_hundred_thousand_runs_is_small_and_bounded() {
    let mut input = Vec::with_capacity(40 << 20);
    for r in 0..100_000u32 {
        let id = format!("r{r:06}");
        let ok = if r % 10 == 9 {
            r#"false,"reason":"failed""#
        } else {
            "true"
        };
        for l in [
            event(
                &id,
                0,
                "aoi:meta",
                &format!(",{IDENTITY},\"command\":\"c\""),
            ),
            event(&id, 1, "hit", ""),
            event(
                &id,
                2,
                "aoi:summary",
                &format!(",\"ok\":{ok},\"event_count\":3,{IDENTITY}"),
            ),
        ] {
            input.extend_from_slice(l.as_bytes());
            input.push(b'\n');
        }
    }
    let (html_peak, page) = peak_kib(&["summarize", "--output", "html"], &input);
    let (human_peak, _) = peak_kib(&["summarize"], &input);
    eprintln!(
        "100,000 runs: page {} bytes; peak RSS {html_peak} KiB (human output: {human_peak} KiB)",
        page.len()
    );
    assert!(page.len() < 20 << 20, "under 20 MB: {}", page.len());
    assert_eq!(
        rows(&page),
        10_000,
        "5,000 runs, then only the failed ones, to 10,000"
    );
    assert_eq!(count(&page, "<tbody class=\"run failed\">"), 5_500);
    assert!(
        page.contains("<p id=\"not-drawn\">90000 more runs not drawn (85500 pass, 4500 failed)"),
        "{}",
        &page[page.len() - 3000..]
    );
    assert!(
        html_peak < human_peak + 16 * 1024,
        "memory bounded as the human output's"
    );
    assert!(page.trim_end().ends_with("</html>"));
}

/// The verdict is the one human output gives, for every stream the
/// tests keep.
#[test]
fn a_page_exits_as_the_human_output_does() {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture("streams")).unwrap() {
        let file = entry.unwrap().path();
        let input = std::fs::read(&file).unwrap();
        for command in ["summarize", "reconcile"] {
            // `page` holds the two exit statuses equal.
            page(dir.path(), "p.html", &[command], &input);
        }
    }
}

/// A finding is listed under the run it is about, runs without an id
/// too (told apart by their first line); one about a run already judged
/// (a late line) is counted and listed in the head; `--limit` cuts the
/// lists, never the counts or the marks.
#[test]
fn findings_go_under_their_own_run_and_none_is_lost() {
    let meta = |cmd: &str| format!(r#"{{"type":"aoi:meta",{IDENTITY},"command":"{cmd}"}}"#);
    let hit = r#"{"type":"hit"}"#;
    // Two runs without ids (each opened by its meta), then R, whose
    // seq 2 is lost, and a line of R after its summary.
    let mut input = lines(&[
        meta("first"),
        hit.to_string(),
        meta("second"),
        hit.to_string(),
    ]);
    input.extend(lines(&[
        event("R", 0, "aoi:meta", &format!(",{IDENTITY}")),
        event("R", 1, "hit", ""),
        event("R", 3, "hit", ""),
        event(
            "R",
            4,
            "aoi:summary",
            &format!(r#","ok":true,"event_count":5,{IDENTITY}"#),
        ),
        event("R", 5, "hit", ""),
    ]));
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = page(dir.path(), "runs.html", &["summarize"], &input);
    let dom = dom(&path, "");
    let rows: Vec<&str> = dom.split("<tbody class=\"run ").skip(1).collect();
    assert_eq!(rows.len(), 3, "{dom}");
    let row = |name: &str| *rows.iter().find(|r| r.contains(name)).unwrap();
    // Each id-less run has its own bar and its own missing summary.
    for (name, bar) in [("first", "--a:0;--b:2"), ("second", "--a:2;--b:4")] {
        assert!(row(name).contains(bar), "{}", row(name));
        assert_eq!(
            count(row(name), "summary.missing</code>"),
            1,
            "{}",
            row(name)
        );
    }
    assert!(row(">R<").contains("error[<code>seq.gap</code>]"));
    assert_eq!(count(row(">R<"), "<i class=\"gap\" style"), 1);
    // The late line's finding: counted and shown in the head.
    assert!(dom.contains("1 finding of no open run"), "{dom}");
    assert!(
        dom.contains("line 9 error[<code>summary.not-last</code>]"),
        "{dom}"
    );
    // --limit 1 lists one finding in all, and keeps R's mark and count.
    let (limited, _) = page(
        dir.path(),
        "limited.html",
        &["summarize", "--limit", "1"],
        &input,
    );
    let bytes = std::fs::read_to_string(&limited).unwrap();
    assert_eq!(count(&bytes, "<li>line "), 1, "{bytes}");
    assert_eq!(count(&bytes, "<i class=\"gap\" style"), 1);
    assert!(bytes.contains("more findings not shown (--limit)"));
}

/// Values that escape to six times their bytes, in 10,000 failing runs
/// with findings each: the page still stays under 20 MB.
#[test]
fn a_page_of_escaped_values_stays_under_twenty_megabytes() {
    let mut input = vec![];
    let quotes = "\"".repeat(150);
    for r in 0..10_000 {
        let id = format!("{quotes}{r}");
        let tool = serde_json::to_string(&quotes).unwrap();
        for l in [
            event(
                &id,
                0,
                "aoi:meta",
                &format!(
                    r#","tool":{tool},"tool_version":{tool},"aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1.0.0","command":{tool}"#
                ),
            ),
            event(&id, 1, "hit", ""),
            event(&id, 3, "hit", ""),
            event(&id, 5, "hit", ""),
        ] {
            input.extend_from_slice(l.as_bytes());
            input.push(b'\n');
        }
    }
    for command in ["summarize", "reconcile"] {
        let (code, page, _) = raw(&[command, "--output", "html"], &input);
        assert_ne!(code, 0);
        let page = String::from_utf8(page).unwrap();
        eprintln!(
            "{command}: 10,000 runs of escaped values: a page of {} bytes",
            page.len()
        );
        assert!(page.len() < 20 << 20, "{command}: {}", page.len());
        assert!(
            page.contains("<p id=\"not-drawn\">"),
            "{command}: the rest are counted"
        );
        assert!(page.trim_end().ends_with("</html>"));
    }
}

/// `n` runs of meta, `hits` hits and a summary, one after another.
fn runs_in_a_row(n: usize, hits: u64) -> Vec<u8> {
    let mut all = vec![];
    for r in 0..n {
        let id = format!("r{r:02}");
        all.push(event(
            &id,
            0,
            "aoi:meta",
            &format!(",{IDENTITY},\"command\":\"c\""),
        ));
        all.extend((1..=hits).map(|s| event(&id, s, "hit", "")));
        let claim = format!(r#","ok":true,"event_count":{},{IDENTITY}"#, hits + 2);
        all.push(event(&id, hits + 1, "aoi:summary", &claim));
    }
    lines(&all)
}

/// The page's rows as they stand once its script ran: each run's id and
/// its outcome cell.
fn shown(dom: &str) -> Vec<(String, String)> {
    dom.split("<tbody class=\"run ")
        .skip(1)
        .map(|row| {
            let cells: Vec<&str> = row
                .split("<td")
                .skip(1)
                .map(|c| &c[c.find('>').unwrap() + 1..c.find("</td>").unwrap()])
                .collect();
            (cells[0].to_string(), cells[5].to_string())
        })
        .collect()
}

/// A page opens on its failures, worst first, each kind in the order its
/// runs began, though a cut run is judged only when its input ends; the
/// outcome a run's summary claims beside a verdict that is not a pass is
/// said to be the producer's (docs/contract.md §5.4).
#[test]
fn a_page_opens_on_its_failures_and_says_whose_outcome_it_shows() {
    let ok = format!(r#","ok":true,"elapsed_ms":0,"event_count":3,"count":1,{IDENTITY}"#);
    let lying = format!(r#","ok":true,"elapsed_ms":0,"event_count":3,"count":7,{IDENTITY}"#);
    let failed = format!(r#","ok":false,"reason":"failed","event_count":3,{IDENTITY}"#);
    let meta = |id: &str| event(id, 0, "aoi:meta", &format!(",{IDENTITY},\"command\":\"c\""));
    let hit = |id: &str| event(id, 1, "hit", "");
    // Begun A, B (cut), C (its count a lie), E (failed), D; ended D
    // before A, and B with the input.
    let input = lines(&[
        meta("A"),
        meta("B"),
        hit("A"),
        hit("B"),
        meta("C"),
        hit("C"),
        event("C", 2, "aoi:summary", &lying),
        meta("E"),
        hit("E"),
        event("E", 2, "aoi:summary", &failed),
        meta("D"),
        hit("D"),
        event("D", 2, "aoi:summary", &ok),
        event("A", 2, "aoi:summary", &ok),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let (path, code) = page(dir.path(), "order.html", &["summarize"], &input);
    assert_eq!(code, 65);
    let dom = dom(&path, "");
    assert!(script_ran(&dom));
    let rows = shown(&dom);
    let ids: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(ids, ["B", "C", "E", "A", "D"], "{dom}");
    let outcome = |id: &str| rows.iter().find(|r| r.0 == id).unwrap().1.clone();
    assert_eq!(outcome("C"), "producer said: ok, 0 ms");
    assert_eq!(outcome("E"), "producer said: not ok (failed)");
    assert_eq!(outcome("A"), "ok, 0 ms");
    assert_eq!(outcome("B"), "no aoi:summary");
    // The head says what the rows are sorted by.
    assert!(dom.contains("data-dir=\"-1\">verdict</th>"), "{dom}");
}

/// At 48 runs in a row on a narrow window each timeline bar is still a
/// bar a person sees, and stays inside its column: measured in Chromium
/// by a script of the test's own, let run by taking the page's policy
/// out of a copy.
#[test]
fn timeline_bars_stay_readable_at_forty_eight_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = page(dir.path(), "48.html", &["summarize"], &runs_in_a_row(48, 1));
    let html = std::fs::read_to_string(&path).unwrap();
    let policy = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let policy_end = policy + html[policy..].find('>').unwrap() + 1;
    let measure = "<script>var s=[];document.querySelectorAll('.bar').forEach(function(b){\
                   var r=b.getBoundingClientRect(),t=b.parentNode.getBoundingClientRect();\
                   s.push([r.width,r.height,t.right-r.right].map(Math.round).join('x'))});\
                   document.body.dataset.bars=s.join(' ')</script></body>";
    let measured =
        format!("{}{}", &html[..policy], &html[policy_end..]).replace("</body>", measure);
    let copy = dir.path().join("measured.html");
    std::fs::write(&copy, measured).unwrap();
    let dom = chrome(&copy, "", &["--window-size=800,600", "--dump-dom"]);
    let bars = dom.split("data-bars=\"").nth(1).unwrap();
    let bars: Vec<Vec<i64>> = bars[..bars.find('"').unwrap()]
        .split(' ')
        .map(|b| b.split('x').map(|n| n.parse().unwrap()).collect())
        .collect();
    assert_eq!(bars.len(), 48);
    for b in &bars {
        assert!(
            b[0] >= 8 && b[1] >= 12,
            "a bar of {}x{} px: {bars:?}",
            b[0],
            b[1]
        );
        assert!(b[2] >= 0, "a bar past its column: {bars:?}");
    }
}

/// reconcile's page draws each run's seq coverage as its terminal output
/// does: the same cells (present, missing, partly), the same count.
#[test]
fn a_reconcile_page_draws_the_seq_coverage_its_terminal_draws() {
    let ev = |id: &str, seq: u64, ty: &str, rest: &str| event(id, seq, ty, rest);
    let mut all = vec![];
    for (id, seqs, count) in [("gap", &[1, 2, 5, 6, 7, 8][..], 10), ("tail", &[1, 2], 60)] {
        all.push(ev(
            id,
            0,
            "aoi:meta",
            &format!(",{IDENTITY},\"command\":\"c\""),
        ));
        all.extend(seqs.iter().map(|&s| ev(id, s, "hit", "")));
        let claim = format!(r#","ok":true,"event_count":{count},{IDENTITY}"#);
        all.push(ev(id, count - 1, "aoi:summary", &claim));
    }
    let input = lines(&all);
    let (_, terminal, _) = raw(&["reconcile"], &input);
    let terminal = String::from_utf8(terminal).unwrap();
    let drawn: Vec<(String, String)> = terminal
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("seq 0.."))
        .map(|l| {
            let parts: Vec<&str> = l.split_whitespace().collect();
            (parts[1].to_string(), parts[2..5].join(" "))
        })
        .collect();
    assert_eq!(drawn.len(), 2, "{terminal}");
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = page(dir.path(), "seq.html", &["reconcile"], &input);
    let dom = dom(&path, "");
    assert!(script_ran(&dom));
    assert!(dom.contains("<th data-num=\"\">seq</th>"), "{dom}");
    for (bar, present) in &drawn {
        let row = dom
            .split("<tbody class=\"run ")
            .find(|r| r.contains(&format!(" {bar}\">")))
            .unwrap_or_else(|| panic!("no bar {bar}: {dom}"));
        // The cells, a block for each run of like ones.
        let blocks: String = row
            .split("<b class=\"")
            .skip(1)
            .map(|b| {
                let glyph = match &b[..1] {
                    "p" => "█",
                    "m" => "░",
                    _ => "▒",
                };
                let n = b.split("flex:").nth(1).unwrap();
                let n: usize = n[..n.find('"').unwrap()].parse().unwrap();
                glyph.repeat(n)
            })
            .collect();
        assert_eq!(&blocks, bar, "{row}");
        assert!(
            row.contains(&format!("</div>{present}")),
            "{present}: {row}"
        );
    }
}

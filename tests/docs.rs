//! `docs/` kept current with the code (docs/contract.md §5.3: a clone is
//! readable alone): the rule table of contract §3.1 is the catalogue, its
//! exit table (§4.1) is `Exit::ALL`, its command table (§1.1) is what the
//! binary's capabilities say, its lint table (§1.4) is lint's catalogue;
//! every section the code cites exists; architecture.md names every
//! module of `src/` and the layers `tests/layers.rs` enforces.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use aoitap::check::lint_checks::CHECKS;
use aoitap::check::rules::{Rule, Severity};
use aoitap::exit::Exit;

use crate::util::bin;

/// Backticked tokens in the contract that look like rule ids but name a
/// member of an event (`meta.args`, the list under `aoi:meta`).
const MEMBER_PATHS: &[&str] = &["meta.args"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn contract() -> String {
    read("docs/contract.md")
}

/// The contract's sections by number (`"3.1"`): the text under `### §N.M
/// ...` up to the next heading of either level.
fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vec![];
    let mut open = false;
    for line in text.lines() {
        if let Some(head) = line.strip_prefix("### §") {
            let n: String = head
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            out.push((n, String::new()));
            open = true;
        } else if line.starts_with("## ") {
            open = false;
        } else if let Some((_, body)) = out.last_mut().filter(|_| open) {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// Every `## ` heading and the text under it.
fn headed(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vec![];
    for line in text.lines() {
        if let Some(head) = line.strip_prefix("## ") {
            out.push((head.to_string(), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

fn section(text: &str, n: &str) -> String {
    sections(text)
        .into_iter()
        .find(|(k, _)| k == n)
        .unwrap_or_else(|| panic!("docs/contract.md has no §{n}"))
        .1
}

fn named(text: &str, title: &str) -> String {
    headed(text)
        .into_iter()
        .find(|(h, _)| h == title)
        .unwrap_or_else(|| panic!("no section {title:?}"))
        .1
}

/// The data rows of every table in `body` (header and rule lines left
/// out), each as its cells, trimmed. `\|` stays inside its cell.
fn rows(body: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = body.lines().collect();
    let mut out = vec![];
    for (i, line) in lines.iter().enumerate() {
        let is_row = |l: &str| l.trim_start().starts_with('|');
        let is_rule =
            |l: &str| is_row(l) && l.contains('-') && l.chars().all(|c| "|-: ".contains(c));
        let header = lines.get(i + 1).is_some_and(|next| is_rule(next));
        if !is_row(line) || is_rule(line) || header {
            continue;
        }
        out.push(cells(line));
    }
    out
}

fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                out.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => out.push(String::new()),
            _ => out.last_mut().unwrap().push(c),
        }
    }
    out.iter().map(|c| c.trim().to_string()).collect()
}

/// `` `x` `` as `x`; anything else as it is.
fn unquote(cell: &str) -> &str {
    cell.strip_prefix('`')
        .and_then(|c| c.strip_suffix('`'))
        .unwrap_or(cell)
}

/// The code spans of `text` (single backticks).
fn spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

fn severity_letter(s: Severity) -> &'static str {
    match s {
        Severity::Error => "E",
        Severity::Warning => "W",
        Severity::Info => "I",
    }
}

/// Every rule in the catalogue has its row in contract §3.1, with its
/// severity and source; every row is a rule, once.
#[test]
fn every_rule_has_its_row_in_the_contract() {
    let mut table: BTreeMap<String, (String, String)> = BTreeMap::new();
    for row in rows(&section(&contract(), "3.1")) {
        let id = unquote(&row[0]).to_string();
        let (sev, source) = (row[1].clone(), row[2].clone());
        assert!(
            table.insert(id.clone(), (sev, source)).is_none(),
            "§3.1 lists {id} twice"
        );
    }
    for r in Rule::ALL {
        let (sev, source) = table
            .get(r.id())
            .unwrap_or_else(|| panic!("{} has no row in docs/contract.md §3.1", r.id()));
        assert_eq!(sev, severity_letter(r.default_severity()), "{}", r.id());
        assert_eq!(*source, r.reference(), "{}: its source", r.id());
    }
    for id in table.keys() {
        assert!(
            Rule::from_id(id).is_some(),
            "docs/contract.md §3.1 lists {id}, which aoitap does not know"
        );
    }
}

/// Anywhere in the contract, a code span shaped like a rule id of a
/// known family is a rule aoitap knows (or a member path, listed above).
#[test]
fn no_rule_id_in_the_contract_is_unknown() {
    let families: BTreeSet<&str> = Rule::ALL
        .iter()
        .map(|r| r.id().split('.').next().unwrap())
        .collect();
    let text = contract();
    let mut seen = 0;
    for span in spans(&text) {
        let Some((family, rest)) = span.split_once('.') else {
            continue;
        };
        let shaped = !rest.is_empty()
            && rest
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !shaped || !families.contains(family) {
            continue;
        }
        seen += 1;
        assert!(
            Rule::from_id(span).is_some()
                || MEMBER_PATHS.contains(&span)
                || aoitap::output::sarif::verdict_ids().any(|v| v == span),
            "docs/contract.md names `{span}`, which is no rule of aoitap's"
        );
    }
    assert!(seen >= Rule::ALL.len(), "read too few rule ids: {seen}");
}

/// The exit table of contract §4.1 is `Exit::ALL`: the same statuses in
/// the same order, each with its name and the words --help prints.
#[test]
fn the_exit_table_is_exit_all() {
    let table: Vec<(u8, String, String)> = rows(&section(&contract(), "4.1"))
        .into_iter()
        .filter_map(|row| {
            let code = row[0].parse().ok()?;
            Some((code, unquote(&row[1]).to_string(), row[2].clone()))
        })
        .collect();
    let code: Vec<(u8, String, String)> = Exit::ALL
        .iter()
        .map(|e| (e.code(), format!("{e:?}"), e.brief().to_string()))
        .collect();
    assert_eq!(table, code, "docs/contract.md §4.1 against Exit::ALL");
}

/// The command table of contract §1.1 lists every subcommand, with the
/// report formats the binary's capabilities give it.
#[test]
fn the_command_table_is_what_the_binary_says() {
    let out = std::process::Command::new(bin())
        .args(["capabilities", "--output", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let caps: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let binary: BTreeMap<String, Vec<String>> = caps["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let outputs = c["outputs"].as_array().unwrap();
            let outputs = outputs.iter().map(|o| o.as_str().unwrap().to_string());
            (c["name"].as_str().unwrap().to_string(), outputs.collect())
        })
        .collect();
    let table: BTreeMap<String, Vec<String>> = rows(&section(&contract(), "1.1"))
        .into_iter()
        .filter(|row| row.len() == 5)
        .map(|row| {
            let outputs = row[3].split(", ").map(str::to_string).collect();
            (unquote(&row[0]).to_string(), outputs)
        })
        .collect();
    assert_eq!(table, binary, "docs/contract.md §1.1 against capabilities");
    let clap: BTreeSet<String> = aoitap::cli::command()
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .filter(|n| n != "help")
        .collect();
    assert_eq!(table.keys().cloned().collect::<BTreeSet<_>>(), clap);
}

/// The lint table of contract §1.4 is lint's catalogue, in order; no
/// other lint id is named anywhere in the contract.
#[test]
fn the_lint_table_is_the_check_catalogue() {
    let text = contract();
    let table: Vec<(String, String, String)> = rows(&section(&text, "1.4"))
        .into_iter()
        .map(|row| (unquote(&row[0]).to_string(), row[1].clone(), row[2].clone()))
        .collect();
    let code: Vec<(String, String, String)> = CHECKS
        .iter()
        .map(|c| (c.id.to_string(), c.number.to_string(), c.factor.to_string()))
        .collect();
    assert_eq!(table, code, "docs/contract.md §1.4 against lint's checks");
    for span in spans(&text).into_iter().filter(|s| s.starts_with("lint.")) {
        assert!(
            CHECKS.iter().any(|c| c.id == span),
            "docs/contract.md names `{span}`, which is no lint check"
        );
    }
}

/// The contract is by subject: eight chapters (`## §N`) named for what
/// they cover, never for a round of work, each of numbered sections
/// (`### §N.M`), then the table of former numbers, which maps each of
/// §1 to §25 to a section that exists. Every section a comment in the
/// code or the docs cites (`docs/contract.md §N.M`, a list of them, and
/// across a line break too) is one of them; no comment cites a document
/// the clone does not hold.
#[test]
fn every_section_the_code_cites_exists() {
    let text = contract();
    let chapters: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("## ")).collect();
    assert_eq!(
        chapters,
        [
            "§1 Commands",
            "§2 Input",
            "§3 Rules",
            "§4 Verdict and exit status",
            "§5 Outputs",
            "§6 Protocols and profiles",
            "§7 Secrets",
            "§8 Non-functional promises",
            "Former section numbers",
        ],
        "the contract's chapters"
    );
    let numbers: BTreeSet<String> = sections(&text).into_iter().map(|(n, _)| n).collect();
    for n in &numbers {
        let chapter = n.split('.').next().unwrap();
        assert!(
            n.contains('.') && ("1"..="8").contains(&chapter),
            "a section §{n}"
        );
    }
    let former: BTreeMap<u32, String> = rows(&named(&text, "Former section numbers"))
        .into_iter()
        .map(|r| {
            (
                r[0].trim_start_matches('§').parse().unwrap(),
                r[1].trim_start_matches('§').to_string(),
            )
        })
        .collect();
    assert_eq!(
        former.keys().copied().collect::<Vec<_>>(),
        (1..=25).collect::<Vec<_>>()
    );
    for now in former.values() {
        assert!(
            numbers.contains(now),
            "the former numbers map to §{now}, which does not exist"
        );
    }
    let cite = regex::Regex::new(
        r"contract\.md[`\])]*(?:[\s/!#*]*)(§\d+(?:\.\d+)?(?:(?:,|\s+and|\s+or)[\s/!#*]*§\d+(?:\.\d+)?)*)",
    )
    .unwrap();
    let one = regex::Regex::new(r"§(\d+(?:\.\d+)?)").unwrap();
    let mut cited = BTreeSet::new();
    let mut files = rs_files(&root().join("src"));
    files.extend(rs_files(&root().join("tests")));
    files.extend(
        std::iter::once("README.md".to_string())
            .chain(docs())
            .chain([
                "CONTRIBUTING.md".to_string(),
                "benches/RESULTS.md".to_string(),
            ])
            .map(|f| root().join(f)),
    );
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let outside = text.match_indices("DESIGN").find(|(at, _)| {
            text[at + "DESIGN".len()..]
                .trim_start_matches(|c: char| c.is_whitespace() || c == '/' || c == '!')
                .starts_with('§')
        });
        assert!(
            outside.is_none(),
            "{} cites DESIGN, which a clone does not hold: cite docs/contract.md",
            file.display()
        );
        for m in cite.captures_iter(&text) {
            for n in one.captures_iter(&m[1]) {
                cited.insert((n[1].to_string(), file.display().to_string()));
            }
        }
    }
    assert!(cited.len() > 100, "read too few citations: {cited:?}");
    for (n, file) in cited {
        assert!(
            numbers.contains(&n),
            "{file} cites §{n}, which docs/contract.md lacks (its sections are §N.M)"
        );
    }
}

fn rs_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// architecture.md's layer table is the one `tests/layers.rs` enforces.
#[test]
fn the_layer_table_is_the_enforced_one() {
    let table: Vec<Vec<String>> = rows(&named(&read("docs/architecture.md"), "Layers"))
        .into_iter()
        .map(|row| {
            spans(&row[1])
                .into_iter()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    let enforced: Vec<Vec<String>> = crate::layers::LAYERS
        .iter()
        .map(|l| l.iter().map(|m| m.to_string()).collect())
        .collect();
    assert_eq!(
        table, enforced,
        "docs/architecture.md against tests/layers.rs"
    );
}

/// architecture.md has a line for every file of `src/`, and every source
/// file it names exists.
#[test]
fn every_module_has_its_line_in_the_architecture() {
    let text = read("docs/architecture.md");
    let src = root().join("src");
    // A module's line: `- `path`: what it is`.
    let lines: BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("- `")?.split_once("`:").map(|(p, _)| p))
        .collect();
    for file in rs_files(&src) {
        let rel = file
            .strip_prefix(&src)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            lines.contains(rel.as_str()),
            "src/{rel} has no line in docs/architecture.md"
        );
    }
    // A path, not a command line that ends in one.
    let mentioned: BTreeSet<&str> = spans(&text).into_iter().collect();
    let paths = mentioned
        .iter()
        // `NAME.rs` is the file one adds, not one that is there.
        .filter(|s| s.ends_with(".rs") && !s.contains(' ') && !s.contains("NAME"));
    for span in paths {
        if span.starts_with("tests/") || span.starts_with("benches/") {
            assert!(
                root().join(span).exists(),
                "docs/architecture.md names {span}"
            );
            continue;
        }
        let rel = span.strip_prefix("src/").unwrap_or(span);
        assert!(
            src.join(rel).exists(),
            "docs/architecture.md names {span}, which src/ does not hold"
        );
    }
}

/// Every page of docs/, as `docs/NAME.md`, in name order.
fn docs() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    names.sort();
    names
}

/// The README leads to docs/, and nothing a reader of the clone is sent
/// to lies outside it.
#[test]
fn readme_and_docs_point_inside_the_clone() {
    let readme = read("README.md");
    for doc in docs() {
        assert!(
            readme.contains(&format!("]({doc}")),
            "README links no {doc}"
        );
    }
    for name in std::iter::once("README.md".to_string()).chain(docs()) {
        let text = read(&name);
        for outside in ["../shared", "DESIGN.md", "STYLE.md"] {
            assert!(!text.contains(outside), "{name} points at {outside}");
        }
    }
    // The figures and the contributor's page name the shared folder as
    // an input (`SHARED=`), but cite nothing in it.
    for name in ["benches/RESULTS.md", "CONTRIBUTING.md"] {
        let text = read(name);
        for outside in ["DESIGN", "STYLE.md"] {
            assert!(!text.contains(outside), "{name} cites {outside}");
        }
    }
}

/// Every link in the README and docs/ resolves in a clone: a relative
/// one to a file of the repository (an anchor to a heading of the file),
/// and every path of the repository named in backquotes exists; the
/// README links the public spec.
#[test]
fn every_link_and_path_in_the_docs_resolves_in_the_clone() {
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let path = regex::Regex::new(
        r"`((?:src|tests|docs|man|benches|scripts|packaging|\.ci)/[A-Za-z0-9_./-]*[A-Za-z0-9_])`",
    )
    .unwrap();
    let anchor = |text: &str, id: &str| {
        text.lines().filter(|l| l.starts_with('#')).any(|h| {
            let words = h.trim_start_matches('#').trim().to_lowercase();
            let slug: String = words
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
                .map(|c| if c == ' ' { '-' } else { c })
                .collect();
            slug == id
        })
    };
    let mut bad = vec![];
    for name in std::iter::once("README.md".to_string()).chain(docs()) {
        let text = read(&name);
        let dir = root().join(&name).parent().unwrap().to_path_buf();
        for m in link.captures_iter(&text) {
            let target = &m[1];
            if target.starts_with("https://") || target.starts_with("http://") {
                continue;
            }
            let (file, id) = target.split_once('#').unwrap_or((target, ""));
            let (file_text, exists) = if file.is_empty() {
                (text.clone(), true)
            } else {
                let p = dir.join(file);
                (std::fs::read_to_string(&p).unwrap_or_default(), p.exists())
            };
            if !exists || (!id.is_empty() && !anchor(&file_text, id)) {
                bad.push(format!("{name}: ]({target})"));
            }
        }
        for m in path.captures_iter(&text) {
            let named = m[1].trim_end_matches('/');
            // A glob or a placeholder names no one file.
            if named.contains('*') || named.contains("NAME") {
                continue;
            }
            if !root().join(named).exists() {
                bad.push(format!("{name}: `{named}`"));
            }
        }
    }
    assert!(bad.is_empty(), "not in the clone: {bad:#?}");
    assert!(
        read("README.md").contains("](https://www.machinemode.io/spec)"),
        "the README links the public spec"
    );
}

/// `scripts/commit-subjects.sh` (CONTRIBUTING.md, run by `.ci/run`)
/// passes subjects of the form `area: what changed` up to 72 characters
/// and names each one that is longer or of another form: run in a
/// repository of its own, with three such commits.
#[test]
fn commit_subjects_are_held_to_the_form() {
    let dir = std::env::temp_dir().join(format!("aoitap-subjects-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::copy(
        root().join("scripts/commit-subjects.sh"),
        dir.join("scripts/commit-subjects.sh"),
    )
    .unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(&dir)
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "base: the script"]);
    let base = git(&["rev-parse", "HEAD"]).trim().to_string();
    let check = || {
        let out = std::process::Command::new("bash")
            .arg(dir.join("scripts/commit-subjects.sh"))
            .arg(&base)
            .output()
            .expect("bash");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "check, json: a subject of the form",
    ]);
    assert_eq!(check().0, Some(0), "{}", check().1);
    let long = format!("check: {}", "x".repeat(66));
    git(&["commit", "-q", "--allow-empty", "-m", &long]);
    git(&["commit", "-q", "--allow-empty", "-m", "Fixed the thing"]);
    let (code, said) = check();
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("73 characters, over 72"), "{said}");
    assert!(
        said.contains("not `area: what changed`: Fixed the thing"),
        "{said}"
    );
    assert_eq!(said.lines().count(), 2, "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `cargo test` leaves out the tests that need peers (tests/peers.rs),
/// says so, and `.ci/run` runs them by name with every peer required.
#[test]
fn the_peers_target_is_named_and_run_by_ci() {
    let ci = read(".ci/run");
    assert!(
        ci.contains("AOITAP_PEERS=require"),
        ".ci/run requires the peers"
    );
    assert!(
        ci.contains("cargo test --profile quick --test peers"),
        ".ci/run runs the peers target"
    );
    let peers = read("tests/peers.rs");
    let modules: Vec<&str> = peers
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .filter(|m| *m != "util")
        .collect();
    assert!(!modules.is_empty());
    eprintln!(
        "not run by `cargo test`: tests/peers.rs ({}), which needs Chromium, \
         cargo install and PyPI: `cargo test --profile quick --test peers`",
        modules.join(", ")
    );
}

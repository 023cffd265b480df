//! The man page: current with the CLI, rendering with man(1).

use std::process::Command;

use crate::util::*;

fn page_path() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("man/aoitap.1")
}

/// `man/aoitap.1` is what the code makes of the clap definition.
#[test]
fn man_page_is_current() {
    let made = aoitap::cli::doc::man::render();
    if std::env::var_os("AOITAP_UPDATE_MAN").is_some() {
        std::fs::write(page_path(), &made).unwrap();
    }
    let checked_in = std::fs::read_to_string(page_path()).unwrap();
    assert!(
        made == checked_in,
        "man/aoitap.1 is stale: run AOITAP_UPDATE_MAN=1 cargo test --profile quick man_page"
    );
}

/// Every subcommand and long flag of the CLI is in the checked-in page.
#[test]
fn man_page_has_every_flag_and_subcommand() {
    let page = std::fs::read_to_string(page_path()).unwrap();
    let root = aoitap::cli::command();
    let mut commands = vec![&root];
    commands.extend(root.get_subcommands());
    for cmd in commands {
        if cmd.get_name() != "aoitap" {
            let section = format!(".SH {}", cmd.get_name().to_uppercase().replace('-', "\\-"));
            assert!(page.contains(&section), "no section for {}", cmd.get_name());
        }
        for a in cmd.get_arguments() {
            if let Some(long) = a.get_long() {
                let flag = format!("\\fB\\-\\-{}\\fR", long.replace('-', "\\-"));
                assert!(
                    page.contains(&flag),
                    "--{long} of {} is not in the man page",
                    cmd.get_name()
                );
            }
        }
    }
    for sec in [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "RULES",
        "LINT CHECKS",
        "EXIT STATUS",
        "ENVIRONMENT",
        "EXAMPLES",
    ] {
        assert!(page.contains(&format!(".SH {sec}")), "{sec}");
    }
    // Each lint check: what it does, needs and cannot prove (docs/contract.md §1.4).
    for c in aoitap::check::lint_checks::CHECKS {
        let entry = format!("\\fB{}\\fR (check {}", c.id.replace('-', "\\-"), c.number);
        let at = page
            .find(&entry)
            .unwrap_or_else(|| panic!("{} is not in the man page", c.id));
        let text = &page[at..page[at..].find("\n.TP").map_or(page.len(), |e| at + e)];
        assert!(text.contains("Cannot prove"), "{}", c.id);
        assert_eq!(text.contains("Needs"), !c.needs.is_empty(), "{}", c.id);
    }
    for r in aoitap::check::rules::Rule::ALL {
        assert!(
            page.contains(&r.id().replace('-', "\\-")),
            "{} not in RULES",
            r.id()
        );
    }
}

/// In a UTF-8 locale and in the C locale (ASCII), with no warning from
/// troff (`man` prints them on stderr).
#[test]
fn man_renders_it() {
    if !peer(installed("man"), "man") {
        return;
    }
    for locale in ["C.UTF-8", "C"] {
        let out = Command::new("man")
            .args(["-l", "-P", "cat"])
            .arg(page_path())
            .env("MANWIDTH", "80")
            .env("LC_ALL", locale)
            .output()
            .expect("man(1)");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && err.is_empty(), "{locale}: {err}");
    }
    let out = Command::new("man")
        .args(["-l", "-P", "cat"])
        .arg(page_path())
        .env("MANWIDTH", "80")
        .output()
        .expect("man(1)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("EXIT STATUS")
            && text.contains("seq.gap")
            && text.contains("--max-line-bytes"),
        "{text}"
    );
    let _ = bin();
}

/// The help's exit lists name every status aoitap exits with.
#[test]
fn help_lists_every_exit_status() {
    for args in [&["--help"][..], &["verify", "--help"]] {
        let out = crate::util::run(args, b"");
        for code in [
            "0", "1", "75", "65", "64", "66", "73", "74", "129", "130", "143", "141",
        ] {
            let listed = out
                .stdout
                .split(|c: char| !c.is_ascii_digit())
                .any(|w| w == code);
            assert!(listed, "{args:?}: exit {code} not listed");
        }
    }
}

/// run reads CMD, never FILE: its help (short and long) and its man page
/// synopsis leave the shared FILE operand out, and it still parses the
/// words after `--` as CMD.
#[test]
fn run_help_has_no_file_operand() {
    for flag in ["-h", "--help"] {
        let out = crate::util::run(&["run", flag], b"");
        assert_eq!(out.code, 0, "{flag}");
        assert!(
            out.stdout.contains("-- CMD [ARG ...]"),
            "{flag}: {}",
            out.stdout
        );
        assert!(!out.stdout.contains("FILE]"), "{flag}: {}", out.stdout);
        assert!(
            !out.stdout.contains("Input files"),
            "{flag}: {}",
            out.stdout
        );
    }
    let man = aoitap::cli::doc::man::render();
    let synopsis = man
        .lines()
        .find(|l| l.contains("aoitap run"))
        .expect("run in the synopsis");
    assert!(!synopsis.contains("FILE"), "{synopsis}");
    let out = crate::util::run(&["run", "-q", "--", "true"], b"");
    assert_eq!(out.code, 65, "an empty stream from CMD: {}", out.stderr);
}

/// Each stream command's refusal of --output tap names the formats it
/// does take.
#[test]
fn tap_refusal_names_the_formats_taken() {
    let out = crate::util::run(&["summarize", "--output", "tap"], b"");
    assert_eq!(out.code, 64);
    assert!(
        out.stderr
            .contains("[possible values: human, jsonl, json, html]"),
        "{}",
        out.stderr
    );
    let out = crate::util::run(&["reconcile", "--output", "tap"], b"");
    assert!(
        out.stderr.contains("[possible values: human, jsonl, html]"),
        "{}",
        out.stderr
    );
}

/// verify's rules table keeps its columns off a terminal: every line is a
/// rule (id, severity, §, description) or the description continued at
/// its own column, never text wrapped back to the margin.
#[test]
fn verify_rules_table_keeps_its_columns() {
    let out = crate::util::run(&["verify", "--help"], b"");
    let table: Vec<&str> = out
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Rules ("))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(table.len() >= 71, "{}", out.stdout);
    for (k, line) in table.iter().enumerate() {
        // "  id (to column 32) S  reference ...": the severity at column
        // 33, where the rule comes from after it (§8.1, AFDATA Part 3).
        let rule = line.starts_with("  ")
            && line.get(33..34).is_some_and(|s| "EWI".contains(s))
            && line
                .get(34..)
                .is_some_and(|s| s.starts_with("  ") && !s[2..].starts_with(' '));
        let continued = line.starts_with(&" ".repeat(48)) && !line[48..].starts_with(' ');
        assert!(rule || continued, "{line:?}");
        // A rule's description starts at column 48, or on the next line
        // when its anchor is wider than the anchor column.
        let cols: Vec<char> = line.chars().collect();
        if rule && cols.len() > 48 && cols[47] == ' ' {
            assert!(cols[48] != ' ', "{line:?}");
        } else if rule && cols.len() > 48 {
            let next = table.get(k + 1).copied().unwrap_or_default();
            assert!(next.starts_with(&" ".repeat(48)), "{line:?} then {next:?}");
        }
        assert!(line.chars().count() <= 100, "{line:?}");
    }
}

/// The README and the guide say how many rules there are: as many as
/// the catalogue has.
#[test]
fn the_readme_counts_the_rules_of_the_catalogue() {
    for (file, before) in [
        ("README.md", "rules (all "),
        ("docs/guide.md", ") list all "),
    ] {
        let path = format!("{}/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).unwrap();
        let at = text.find(before).expect("the rule count") + before.len();
        let n: usize = text[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(n, aoitap::check::rules::Rule::ALL.len(), "{file}");
    }
}

//! The man page, made from the clap definition and the rule catalogue, so
//! that it cannot fall behind them: `man/aoitap.1` is this output, and a
//! test fails when the two differ (regenerate with
//! `AOITAP_UPDATE_MAN=1 cargo test --profile quick man_page`).

use std::collections::BTreeSet;

use clap::Command;

use crate::check::rules::{Rule, Severity};
use crate::cli::args::command;
use crate::exit::Exit;

/// The stream commands, which share the options of docs/contract.md §1.1.
const STREAM_COMMANDS: &[&str] = &[
    "verify",
    "strip-envelope",
    "split-by-run",
    "summarize",
    "reconcile",
    "run",
];

/// roff text: backslashes and hyphens escaped, no line taken for a request.
fn esc(s: &str) -> String {
    let t = s
        .replace('\\', "\\e")
        .replace('-', "\\-")
        .replace('…', "\\[u2026]");
    t.lines()
        .map(|l| {
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `.TP` entries for options, skipping the names in `skip`.
fn options(cmd: &Command, skip: &BTreeSet<String>) -> String {
    let mut out = String::new();
    for a in cmd.get_arguments() {
        let Some(long) = a.get_long() else { continue };
        if skip.contains(long) || long == "help" || long == "version" {
            continue;
        }
        let mut head = String::new();
        if let Some(s) = a.get_short() {
            head.push_str(&format!("\\fB\\-{s}\\fR, "));
        }
        head.push_str(&format!("\\fB\\-\\-{}\\fR", esc(long)));
        if a.get_action().takes_values()
            && let Some(names) = a.get_value_names()
        {
            let names: Vec<String> = names
                .iter()
                .map(|n| format!("\\fI{}\\fR", esc(n)))
                .collect();
            head.push(' ');
            head.push_str(&names.join(" "));
        }
        let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
        let defaults: Vec<String> = a
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        let mut text = esc(&help);
        if !text.ends_with('.') {
            text.push('.');
        }
        if !defaults.is_empty() && a.get_action().takes_values() {
            text.push_str(&format!(" Default: {}.", esc(&defaults.join(", "))));
        }
        out.push_str(&format!(".TP\n{head}\n{text}\n"));
    }
    out
}

/// Help text as roff paragraphs. The help is wrapped by hand for a
/// terminal; the page lets roff fill it: a blank line starts a paragraph,
/// an indented line (an example's next command) keeps its break, and any
/// other line continues the one before.
fn paragraphs(text: &str) -> String {
    let mut out = String::new();
    for para in text.split("\n\n").filter(|p| !p.trim().is_empty()) {
        out.push_str(".PP\n");
        for (i, line) in para.lines().enumerate() {
            if i > 0 {
                out.push_str(if line.starts_with(' ') {
                    "\n.br\n"
                } else {
                    " "
                });
            }
            out.push_str(&esc(line));
        }
        out.push('\n');
    }
    out
}

fn long_names(cmd: &Command) -> BTreeSet<String> {
    cmd.get_arguments()
        .filter_map(|a| a.get_long())
        .map(String::from)
        .collect()
}

/// The whole page.
pub fn render() -> String {
    let root = command();
    let version = root.get_version().unwrap_or("").to_string();
    let mut out = String::new();
    out.push_str(
        ".\\\" Made from aoitap's clap definition and rule catalogue (src/cli/doc/man.rs);\n\
         .\\\" do not edit: AOITAP_UPDATE_MAN=1 cargo test --profile quick man_page\n",
    );
    out.push_str(&format!(
        ".TH AOITAP 1 \"\" \"aoitap {version}\" \"User Commands\"\n"
    ));
    // An ellipsis where the device has none (the C locale's ASCII) is
    // three dots, not a troff warning.
    out.push_str(".fchar \\[u2026] ...\n");
    out.push_str(".SH NAME\naoitap \\- check, relay and inspect AOI\\-CLI event streams\n");
    out.push_str(".SH SYNOPSIS\n");
    synopsis(&mut out, &root);
    out.push_str("\\fBaoitap\\fR \\fB\\-\\-schema\\fR | \\fB\\-\\-capabilities\\fR\n");
    description(&mut out, &root);
    out.push_str(".SH OPTIONS\n");
    out.push_str(&options(&root, &BTreeSet::new()));
    let common = common_options(&mut out, &root);
    command_sections(&mut out, &root, &common);
    rules(&mut out);
    lint_checks(&mut out);
    exit_status(&mut out);
    out.push_str(
        ".SH ENVIRONMENT\n.TP\n\\fBNO_COLOR\\fR\nWhen set and not empty, human output is not coloured unless \\fB\\-\\-color always\\fR. With \\fB\\-\\-color auto\\fR (the default), output that is not a terminal is not coloured; \\fB\\-\\-color always\\fR colours it all the same.\n.TP\n\\fBAOITAP_PROGRESS_FROM\\fR\nBytes of input from which a read shows its progress on a terminal's stderr (default 64 MiB); a read that has taken a second shows it whatever its size.\n",
    );
    out.push_str(
        ".SH EXAMPLES\n\
         .nf\n\
         set \\-o pipefail\n\
         tool \\-\\-output jsonl | aoitap verify \\-\\-relay | next\\-tool\n\
         aoitap verify \\-\\-follow agent.log\n\
         tail \\-q \\-n +1 \\-F agent.log | aoitap verify \\-\\-multi\\-run \\-\\-unbounded\n\
         tool \\-\\-output jsonl > out.jsonl; aoitap verify \\-q out.jsonl || retry\n\
         aoitap strip\\-envelope \\-\\-type hit out.jsonl | legacy\\-tool\n\
         aoitap lint \\-\\- tool search q \\-\\-output jsonl\n\
         aoitap split\\-by\\-run \\-\\-dir runs/ merged.jsonl\n\
         aoitap summarize out.jsonl\n\
         aoitap reconcile transcript.jsonl\n\
         aoitap run \\-\\-timeout 2m \\-\\-retries 3 \\-\\- tool sync \\-\\-output jsonl\n\
         prove \\-\\-exec 'aoitap verify \\-\\-output tap' out1.jsonl out2.jsonl\n\
         .fi\n",
    );
    out.push_str(".SH SEE ALSO\n\\fBjq\\fR(1); the AOI\\-CLI specification v1.0\\-alpha.\n");
    out
}

/// A line per command: its name, `[OPTIONS]` and its positional
/// arguments as its --help shows them.
fn synopsis(out: &mut String, root: &Command) {
    for sub in root.get_subcommands() {
        let positional: Vec<String> = sub
            .get_arguments()
            .filter(|a| a.is_positional() && !a.is_hide_set())
            .map(|a| {
                let n = a
                    .get_value_names()
                    .and_then(|v| v.first())
                    .map(|s| s.to_string())
                    .unwrap_or_default();
                if a.is_last_set() {
                    format!("\\-\\- \\fI{n}\\fR [\\fIARG\\fR ...]")
                } else if a.is_required_set() {
                    format!("\\fI{n}\\fR")
                } else if a.get_num_args().is_some_and(|r| r.max_values() == 1) {
                    // One at most (upgrade's FILE), as its --help says.
                    format!("[\\fI{n}\\fR]")
                } else {
                    format!("[\\fI{n}\\fR ...]")
                }
            })
            .collect();
        out.push_str(&format!(
            "\\fBaoitap {}\\fR [\\fIOPTIONS\\fR] {}\n.br\n",
            esc(sub.get_name()),
            positional.join(" ")
        ));
    }
}

/// What aoitap is, and what every stream command does with its FILEs.
fn description(out: &mut String, root: &Command) {
    out.push_str(".SH DESCRIPTION\n");
    out.push_str(&esc(&root
        .get_long_about()
        .map(|s| s.to_string())
        .unwrap_or_default()));
    out.push_str(
        "\n.PP\nEach FILE is an independent stream; a directory stands for its *.jsonl and *.ndjson files (recursively, sorted by path); without a FILE, or with \\fB\\-\\fR, standard input is read. \
         A line ends at a newline; a final line without one is never an event. Every stream command judges \
         what it reads and exits with the verdict (see EXIT STATUS), so the truth survives a pipeline even \
         when the output has lost its summary.\n",
    );
}

/// The options every stream command shares (docs/contract.md §1.1),
/// said once in their own section; returns their names, which each
/// command's section leaves out.
fn common_options(out: &mut String, root: &Command) -> BTreeSet<String> {
    let streams: Vec<&Command> = root
        .get_subcommands()
        .filter(|c| STREAM_COMMANDS.contains(&c.get_name()))
        .collect();
    let mut common = long_names(streams[0]);
    for c in &streams[1..] {
        common = common.intersection(&long_names(c)).cloned().collect();
    }
    out.push_str(".SH COMMON OPTIONS\nThese options are shared by \\fBverify\\fR, \\fBstrip\\-envelope\\fR, \\fBupgrade\\fR, \\fBfilter\\fR, \\fBsplit\\-by\\-run\\fR, \\fBsummarize\\fR, \\fBreconcile\\fR and \\fBrun\\fR.\n");
    out.push_str(
        &options(streams[0], &BTreeSet::new())
            .split(".TP\n")
            .filter(|e| {
                common
                    .iter()
                    .any(|n| e.contains(&format!("\\fB\\-\\-{}\\fR", esc(n))))
            })
            .map(|e| format!(".TP\n{e}"))
            .collect::<String>(),
    );
    common
}

/// A section per command: its about line, the rest of its long help,
/// its own options (`common` left out of a stream command's) and what
/// its --help says after them.
fn command_sections(out: &mut String, root: &Command, common: &BTreeSet<String>) {
    for sub in root.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        out.push_str(&format!(".SH {}\n", esc(&sub.get_name().to_uppercase())));
        out.push_str(&format!("\\fBaoitap {}\\fR: ", esc(sub.get_name())));
        out.push_str(&esc(&sub
            .get_about()
            .map(|s| s.to_string())
            .unwrap_or_default()));
        out.push('\n');
        // The long help's paragraphs after its first (which is the about
        // line): what `aoitap CMD --help` says, the page says too.
        if let Some(long) = sub.get_long_about() {
            for paragraph in long.to_string().split("\n\n").skip(1) {
                out.push_str(&format!(".PP\n{}\n", esc(paragraph)));
            }
        }
        let skip = if STREAM_COMMANDS.contains(&sub.get_name()) {
            common.clone()
        } else {
            BTreeSet::new()
        };
        out.push_str(&options(sub, &skip));
        if let Some(after) = sub.get_after_help() {
            out.push_str(&paragraphs(&after.to_string()));
        }
    }
}

/// Every rule of the catalogue: its id, severity and source.
fn rules(out: &mut String) {
    out.push_str(".SH RULES\nEach check has a stable id (used in reports and in \\fB\\-\\-allow\\fR/\\fB\\-\\-deny\\fR), a default severity, and where it comes from: a section of the AOI\\-CLI spec (\\(sc), or a neighbouring contract (AFDATA, aiocs, OKF) and its section. Ids are added, never renamed.\n");
    for r in Rule::ALL {
        let sev = match r.default_severity() {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        };
        out.push_str(&format!(
            ".TP\n\\fB{}\\fR ({sev}, {})\n{}\n",
            esc(r.id()),
            esc(&r.reference()).replace('§', "\\(sc"),
            esc(r.what())
        ));
    }
}

/// Every check of `aoitap lint`, and how lint runs a command.
fn lint_checks(out: &mut String) {
    out.push_str(
        ".SH LINT CHECKS\n\\fBaoitap lint\\fR reports each check of AOI\\-CLI \\(sc18.2 for CMD's command, by a stable id \
         (used in \\fB\\-\\-checks\\fR, \\fB\\-\\-exclude\\-checks\\fR and \\fB\\-\\-expected\\-failures\\fR): \
         pass, fail, not\\-claimed, inconclusive (the calls could not tell; the detail says what to give) or \
         skipped (what it needs is not advertised). Each call runs with the environment cleared but PATH, a \
         fresh empty HOME, stdin from /dev/null (a fixture for checks 12 and 16), no network where \
         \\fBunshare \\-rn\\fR is allowed, its own process group and \\fB\\-\\-timeout\\fR; lint is the \
         subreaper of what it starts, so nothing outlives it. CMD ARGS run several times: point a command \
         with effects at a scratch target. A failed check shows the last lines (10, at most 2 KiB) of \
         the stderr of each call it failed on, and says \\(lqa stack trace on stderr\\(rq when they hold \
         one; lines that name something secret\\-looking, or hold a value \\fB\\-\\-env\\fR passes, are \
         not quoted.\n",
    );
    for c in crate::check::lint_checks::CHECKS {
        out.push_str(&format!(
            ".TP\n\\fB{}\\fR (check {}, {})\n{}.",
            esc(c.id),
            c.number,
            esc(c.factor),
            esc(c.does)
        ));
        if !c.needs.is_empty() {
            out.push_str(&format!(" Needs {}.", esc(c.needs)));
        }
        out.push_str(&format!(" Cannot prove {}.\n", esc(c.cannot)));
    }
}

/// Every exit status and what it means.
fn exit_status(out: &mut String) {
    out.push_str(".SH EXIT STATUS\n");
    for e in Exit::ALL {
        out.push_str(&format!(
            ".TP\n\\fB{}\\fR\n{}\n",
            e.code(),
            esc(e.meaning())
        ));
    }
}

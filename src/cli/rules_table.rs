//! verify's long help: the rule catalogue as a table, the exit statuses
//! and examples, laid out for clap's `after_long_help`.

use crate::check::rules::{Rule, Severity};
use crate::exit::Exit;

const RULES_HELP: &str = "Rules (id, default severity E/W/I, spec §):";

/// verify's help is this wide off a terminal (clap's default), and a
/// rule's description continues at this column.
const HELP_COLUMNS: usize = 100;
const RULE_TEXT_AT: usize = 48;

/// `text` in lines of at most `width` characters, broken between words.
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// verify's long help after its options: the rule catalogue as a table,
/// the exit statuses and examples.
pub(super) fn verify_after_help() -> String {
    let mut s = String::from(RULES_HELP);
    s.push('\n');
    for r in Rule::ALL {
        let sev = match r.default_severity() {
            Severity::Error => 'E',
            Severity::Warning => 'W',
            Severity::Info => 'I',
        };
        let head = format!("  {:<30} {sev}  {:<11} ", r.id(), r.reference());
        let mut what = wrap_words(r.what(), HELP_COLUMNS - RULE_TEXT_AT).into_iter();
        if head.chars().count() == RULE_TEXT_AT {
            s.push_str(&head);
            s.push_str(&what.next().unwrap_or_default());
        } else {
            // A reference wider than its column (`aiocs: Daemon event stream`):
            // the description starts on the next line, in its column.
            s.push_str(head.trim_end());
        }
        s.push('\n');
        // Help is 100 columns wide off a terminal: a description wrapped
        // here keeps to its column, where clap's wrap would not.
        for more in what {
            s.push_str(&format!("{:RULE_TEXT_AT$}{more}\n", ""));
        }
    }
    s.push('\n');
    s.push_str(&Exit::help());
    s.push_str(
        "\n\nExamples:\n  set -o pipefail; tool --output jsonl | tee out.jsonl | aoitap verify -q\n  \
         aoitap verify --output jsonl out.jsonl | jq 'select(.type==\"finding\")'\n",
    );
    s
}

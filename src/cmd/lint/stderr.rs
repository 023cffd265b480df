//! What a failed check shows of the call it failed on (docs/contract.md
//! §1.4): the last lines of that call's stderr, so the traceback that
//! made the check fail is in the report and nobody rebuilds lint's
//! sandbox by hand to see it; and whether those lines hold a stack trace.
//!
//! What is quoted is bounded (a tail, not a log) and withheld whole as
//! lint withholds every quote of the tool's words (`quotable`, docs/contract.md §7.1): a
//! tail that names anything secret-looking, or holds the value of a
//! variable `--env` passed, is not quoted at all.

use super::sandbox::{self, Ran};
use crate::check::quotable::quotable;

/// The most lines of a tail, and the most bytes they may take.
const TAIL_LINES: usize = 10;
const TAIL_BYTES: usize = 2 * 1024;

/// The last lines of one call's stderr, as a failed check shows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stderr {
    /// Which call: "CMD", "CMD with stdout closed after the first line".
    pub call: String,
    /// Its last lines; empty when they are `withheld`.
    pub tail: String,
    /// Why its last lines are not quoted.
    pub withheld: Option<&'static str>,
    /// Earlier lines were left out.
    pub cut: bool,
    pub stack_trace: bool,
}

/// What a failed check shows of `ran`'s stderr; `None` when it wrote
/// nothing there.
pub fn of(call: &str, ran: &Ran) -> Option<Stderr> {
    let mut kept = ran.stderr_head.clone();
    kept.extend_from_slice(&ran.stderr_tail);
    let (tail, mut cut) = last_lines(&kept);
    if tail.is_empty() {
        return None;
    }
    cut |= ran.stderr_bytes > kept.len() as u64;
    let withheld = withheld_beside(&tail, &sandbox::passed_values());
    Some(Stderr {
        call: call.to_string(),
        tail: if withheld.is_some() {
            String::new()
        } else {
            tail
        },
        withheld,
        cut,
        stack_trace: stack_trace(ran),
    })
}

/// `text` as a report may quote it, or what stands for it: withheld as
/// `quotable` withholds, and when it holds what `--env` passed.
pub fn quoted(text: &str) -> String {
    match withheld_beside(text, &sandbox::passed_values()) {
        Some(why) => format!("(not quoted: {why})"),
        None => text.to_string(),
    }
}

/// Why `text` may not be quoted, when `passed` are the values `--env`
/// passed (a value shorter than a word is everywhere, and says nothing).
fn withheld_beside(text: &str, passed: &[String]) -> Option<&'static str> {
    if passed
        .iter()
        .any(|v| v.len() >= 4 && text.contains(v.as_str()))
    {
        return Some("it holds the value of a variable --env passes");
    }
    quotable(text)
        .is_none()
        .then_some("it names something secret-looking")
}

/// Whether a call's stderr shows a stack trace (Python, Rust, Node, Go,
/// Java).
pub fn stack_trace(r: &Ran) -> bool {
    let e = r.stderr_text();
    e.contains("Traceback (most recent call last)")
        || e.contains("panicked at")
        || e.contains("\n    at ")
        || e.contains("goroutine ")
        || e.contains("Exception in thread")
}

/// The last [`TAIL_LINES`] lines of `bytes` within [`TAIL_BYTES`], trailing
/// blank lines left out; and whether earlier lines were.
fn last_lines(bytes: &[u8]) -> (String, bool) {
    let end = bytes.trim_ascii_end();
    let mut from = end.len().saturating_sub(TAIL_BYTES);
    // Begin at a character, and at a line when there is one to begin at.
    while from > 0 && from < end.len() && end[from] & 0xC0 == 0x80 {
        from += 1;
    }
    if from > 0
        && end[from - 1] != b'\n'
        && let Some(nl) = end[from..].iter().position(|&b| b == b'\n')
    {
        from += nl + 1;
    }
    let text = String::from_utf8_lossy(&end[from..]);
    let lines: Vec<&str> = text.lines().collect();
    let skip = lines.len().saturating_sub(TAIL_LINES);
    let mut tail = lines[skip..].join("\n");
    if from > 0 && skip == 0 && end[from - 1] != b'\n' {
        // One line longer than the bound: its end, marked as cut.
        tail.insert(0, '…');
    }
    (tail, from > 0 || skip > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_is_the_last_lines_within_its_bytes() {
        let text: String = (1..=30).map(|n| format!("line {n}\n")).collect();
        let (tail, cut) = last_lines(format!("{text}\n\n").as_bytes());
        assert!(cut);
        assert_eq!(tail.lines().count(), TAIL_LINES);
        assert!(
            tail.starts_with("line 21\n") && tail.ends_with("line 30"),
            "{tail}"
        );

        let (short, cut) = last_lines(b"only\n");
        assert_eq!((short.as_str(), cut), ("only", false));

        // Long lines: whole lines within the bound, never half of one.
        let long = format!("{}\n{}\nend\n", "a".repeat(3000), "b".repeat(1500));
        let (tail, cut) = last_lines(long.as_bytes());
        assert!(cut);
        assert_eq!(tail, format!("{}\nend", "b".repeat(1500)));

        // One line over the bound: its end, from a character on.
        let one = "é".repeat(2000);
        let (tail, _) = last_lines(one.as_bytes());
        assert!(
            tail.starts_with('…') && tail.len() <= TAIL_BYTES + 3,
            "{}",
            tail.len()
        );
        assert!(!tail.contains('\u{FFFD}'));
    }

    #[test]
    fn a_tail_naming_a_secret_is_withheld_whole() {
        assert_eq!(quoted("ValueError: boom"), "ValueError: boom");
        assert!(quoted("line 1\nauth failed: password=hunter2").starts_with("(not quoted"));
        let passed = ["ghp_S1x9".to_string()];
        let leak = "404 for url https://api.example/?t=ghp_S1x9";
        assert!(withheld_beside(leak, &passed).is_some());
        assert_eq!(withheld_beside("404 for url", &passed), None);
    }
}

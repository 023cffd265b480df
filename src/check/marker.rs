//! Harness elision markers (docs/contract.md §3.2, `line.elided`): a line such as
//! `[… 29 lines omitted …]` that an agent harness writes where it cut a
//! stream. It is not an event and takes no seq step, so every command
//! counts the same gap behind it.

use std::sync::{Arc, Mutex, OnceLock};

use regex::Regex;

/// The markers recognised without `--marker` (one group: N):
/// `[… 29 lines omitted …]`, `... 29 lines omitted ...`,
/// `[29 lines truncated]`, `<29 lines elided>`, and the same with
/// `skipped`, `hidden` or `removed`, and `N more lines` (with or without
/// a verb: `[… 29 more lines …]`).
const MARKER: &str = r"^\s*[\[<(]?\s*(?:…|\.\.\.)?\s*(\d+)\s+(?:more\s+lines?(?:\s+(?:omitted|truncated|elided|skipped|hidden|removed))?|lines?\s+(?:omitted|truncated|elided|skipped|hidden|removed))\s*(?:…|\.\.\.)?\s*[\]>)]?\s*$";

/// Markers are short; a longer line is never one (and is not searched).
const MARKER_BYTES: usize = 256;

/// The built-in marker and those given with `--marker`, compiled at the
/// first line that could be one: a stream of events never pays for the
/// compile (a third of a short stream's work).
#[derive(Clone, Debug)]
pub struct Markers {
    extra: Arc<[String]>,
    /// Shared by clones, so a checker's copies compile once between them.
    compiled: Arc<OnceLock<Vec<Regex>>>,
}

impl Markers {
    /// `extra` were checked by the command line (one capture group each).
    pub fn new(extra: &[String]) -> Markers {
        Markers {
            extra: extra.into(),
            compiled: Arc::default(),
        }
    }

    fn compiled(&self) -> &[Regex] {
        self.compiled.get_or_init(|| compile(&self.extra))
    }

    /// How many lines `line` says were cut, if it is a marker.
    pub fn claims(&self, line: &[u8]) -> Option<u64> {
        if line.len() > MARKER_BYTES {
            return None;
        }
        let text = std::str::from_utf8(line).ok()?;
        self.compiled().iter().find_map(|m| {
            m.captures(text)
                .and_then(|c| c.get(1))
                // A count past u64 is still a marker (it saturates).
                .and_then(|n| {
                    let n = n.as_str();
                    match n.parse::<u64>() {
                        Ok(v) => Some(v),
                        Err(_) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                            Some(u64::MAX)
                        }
                        Err(_) => None,
                    }
                })
        })
    }
}

/// The patterns compiled once per process for the same `extra`, however
/// many inputs each make a checker (docs/contract.md §2.2: starting a FILE
/// compiles no regex); a clone of a `Regex` shares its program.
fn compile(extra: &[String]) -> Vec<Regex> {
    static LAST: Mutex<Option<(Vec<String>, Vec<Regex>)>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((patterns, compiled)) = &*last
        && patterns == extra
    {
        return compiled.clone();
    }
    let mut all = vec![Regex::new(MARKER).expect("built-in marker pattern")];
    all.extend(extra.iter().filter_map(|m| Regex::new(m).ok()));
    *last = Some((extra.to_vec(), all.clone()));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_forms() {
        let m = Markers::new(&[]);
        for (line, n) in [
            ("[… 29 lines omitted …]", 29),
            ("... 3 lines omitted ...", 3),
            ("[12 lines truncated]", 12),
            ("<7 more lines elided>", 7),
            ("  (1 line hidden)  ", 1),
            ("... 29 lines omitted ...", 29),
            ("[29 lines truncated]", 29),
            ("  (3 more lines hidden)", 3),
            ("[… 29 more lines …]", 29),
            ("... 29 more lines", 29),
            ("[1 line omitted]", 1),
        ] {
            assert_eq!(m.claims(line.as_bytes()), Some(n), "{line}");
        }
        for not in [
            "{\"lines\":29}",
            "29 lines",
            "omitted 29 lines",
            "[x lines omitted]",
        ] {
            assert_eq!(m.claims(not.as_bytes()), None, "{not}");
        }
    }

    #[test]
    fn extra_patterns() {
        let m = Markers::new(&[r"^<<cut (\d+)>>$".to_string()]);
        assert_eq!(m.claims(b"<<cut 5>>"), Some(5));
    }
}

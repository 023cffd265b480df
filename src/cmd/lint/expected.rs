//! `--expected-failures FILE`: the ids of checks known to fail, read
//! before lint runs (docs/contract.md §1.4). A missing file is no input
//! (66); one that cannot be read, is too long or names no check is a usage
//! error (64), said as a refused command line is (`cmd::load`).

use std::path::Path;

use crate::check::lint_checks::by_name;
use crate::config::LintOptions;
use crate::exit::Error;

/// The ids `--expected-failures` lists, as the catalogue spells them
/// (none without the flag).
pub fn expected_failures(opts: &LintOptions) -> Result<Vec<String>, Error> {
    let Some(path) = &opts.expected_failures_file else {
        return Ok(vec![]);
    };
    let refuse = |what: &str| crate::cli::refuse_file("lint", what, opts.style.format);
    let shown = path.display();
    let text = read_list(path).map_err(|(missing, e)| {
        let msg = format!("--expected-failures {shown}: {e}");
        if missing {
            Error::NoInput(format!("lint: {msg}"))
        } else {
            refuse(&msg)
        }
    })?;
    // An editor's byte order mark is not part of the first id.
    text.trim_start_matches('\u{feff}')
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim())
        .filter(|l| !l.is_empty())
        // Ids as the catalogue spells them, or `lint.06`, or `6`.
        .map(|g| {
            by_name(g).map(|c| c.id.to_string()).ok_or_else(|| {
                refuse(&format!(
                    "--expected-failures {shown}: no check {g:?} (aoitap lint --help lists them)"
                ))
            })
        })
        .collect()
}

/// A list file of ids (`--expected-failures`): text, at most 64 KiB, so
/// `/dev/zero` or a log named by mistake is an error, not a hang.
fn read_list(path: &Path) -> Result<String, (bool, String)> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    const MAX: u64 = 64 * 1024;
    let unread = |e: std::io::Error| (false, format!("cannot read it: {e}"));
    // Opened without blocking, so a FIFO with no writer is not a hang
    // (it reads as empty), then read as usual: `<(...)` works.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(|e| {
            (
                e.kind() == std::io::ErrorKind::NotFound,
                format!("cannot read it: {e}"),
            )
        })?;
    let flags = rustix::fs::fcntl_getfl(&file).map_err(|e| unread(e.into()))?;
    rustix::fs::fcntl_setfl(&file, flags - rustix::fs::OFlags::NONBLOCK)
        .map_err(|e| unread(e.into()))?;
    let mut bytes = vec![];
    file.take(MAX + 1).read_to_end(&mut bytes).map_err(unread)?;
    if bytes.len() as u64 > MAX {
        return Err((
            false,
            format!("over {} KiB: a list of check ids is short", MAX >> 10),
        ));
    }
    String::from_utf8(bytes).map_err(|_| (false, "not UTF-8 text".to_string()))
}

//! Secrets (docs/contract.md §7.1, §3.3; spec §11): where a line exposes
//! one, what a report may quote, and what `--redact` writes instead.
//!
//! A parsed line is walked member by member (`scan.rs`), a URL under a
//! `_url` key searched part by part (`url.rs`), and `aoi:meta`'s `args`
//! read as argv, a string or named values (`meta_args.rs`); a line that
//! is not JSON is read byte by byte, and withheld under `--redact`
//! (`unparsed.rs`). Each finds `Exposure`s (`exposure.rs`) by the names
//! that mark a secret (`names.rs`); `redaction.rs` writes a line with
//! them replaced, and `quotable.rs` keeps secrets out of what a report
//! quotes of what aoitap did not write. The files import each other only
//! downward, never this one.

mod exposure;
pub(super) mod meta_args;
mod names;
pub mod quotable;
pub mod redaction;
mod scan;
mod unparsed;
mod url;

pub use exposure::Exposure;
pub use names::{is_secret_name, is_sensitive_name};
pub use redaction::redact;
pub use scan::scan;
pub use unparsed::{AfterKey, Suspect, Withholding, unheld_note, unparsed_message, withheld};

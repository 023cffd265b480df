//! Producer profiles as data (docs/contract.md §25): the model a TOML file
//! is read into (`model.rs`, its matches in `matching.rs`), reading one
//! (`load.rs`), the built-ins (`builtin.rs`, one file each in `builtin/`),
//! and which built-in a run's first object reads as. The rules a profile
//! makes are `protocols/profile.rs`'s.

mod builtin;
mod load;
pub(in crate::check) mod matching;
pub(in crate::check) mod model;

pub use builtin::builtins;
pub use load::{LoadError, parse};
pub use matching::Path;
pub use model::{Category, Form, Level, Profile, ProfileRef};

use crate::json::Event;

/// The built-in profile whose signature the run's first object matches
/// exactly, if one does (docs/contract.md §25, detection).
pub fn detect(ev: &Event<'_>) -> Option<ProfileRef> {
    builtins()
        .iter()
        .copied()
        .find(|p| matching::any(&p.0.signature, ev))
}

/// `--profile NAME|FILE`: a value with a `/` or ending in `.toml` is a
/// file, anything else a built-in's name (so a file in the working
/// directory never shadows one).
pub fn by_name_or_file(arg: &str) -> Result<ProfileRef, LoadError> {
    let is_file = arg.contains('/') || arg.ends_with(".toml");
    if !is_file {
        return builtins()
            .iter()
            .copied()
            .find(|p| p.0.name == arg)
            .ok_or_else(|| {
                let names: Vec<&str> = builtins().iter().map(|p| p.0.name.as_str()).collect();
                LoadError(format!(
                    "no built-in profile {arg:?} (one of {}; a file is named with a / or .toml, \
                     as ./{arg}.toml)",
                    names.join(", ")
                ))
            });
    }
    let text = std::fs::read_to_string(arg)
        .map_err(|e| LoadError(format!("cannot read profile {arg}: {e}")))?;
    let profile = parse(&text).map_err(|e| LoadError(format!("profile {arg}: {}", e.0)))?;
    // One per process, named once at start: kept for the whole run.
    Ok(ProfileRef(Box::leak(Box::new(profile))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_a_built_in_and_a_path_a_file() {
        assert_eq!(by_name_or_file("codex-exec").unwrap().0.name, "codex-exec");
        let e = by_name_or_file("codex").unwrap_err().0;
        assert!(
            e.contains("no built-in profile") && e.contains("claude-stream"),
            "{e}"
        );
        let e = by_name_or_file("./nowhere.toml").unwrap_err().0;
        assert!(e.contains("cannot read profile ./nowhere.toml"), "{e}");
    }
}

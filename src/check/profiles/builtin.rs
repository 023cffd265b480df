//! The built-in profiles (docs/contract.md §6.3), one TOML file each in
//! `builtin/`, read once when first asked for. Each names the package,
//! version and file its facts were read from.

use std::sync::OnceLock;

use super::load::parse;
use super::model::ProfileRef;

/// The files, in the order `aoitap profiles` lists them and detection
/// tries their signatures.
const FILES: [&str; 7] = [
    include_str!("builtin/claude-stream.toml"),
    include_str!("builtin/claude-json.toml"),
    include_str!("builtin/codex-exec.toml"),
    include_str!("builtin/gemini-stream.toml"),
    include_str!("builtin/gemini-json.toml"),
    include_str!("builtin/opencode-json.toml"),
    include_str!("builtin/copilot-json.toml"),
];

/// Every built-in profile.
pub fn builtins() -> &'static [ProfileRef] {
    static BUILT: OnceLock<Vec<ProfileRef>> = OnceLock::new();
    BUILT.get_or_init(|| {
        FILES
            .iter()
            .map(|text| match parse(text) {
                Ok(p) => ProfileRef::keep(p).expect("the built-ins fit among the profiles kept"),
                // A unit test reads every file: a mistake here is a bug.
                Err(e) => panic!("a built-in profile does not read: {}", e.0),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_reads_and_is_named_once() {
        let names: Vec<&str> = builtins().iter().map(|p| p.get().name.as_str()).collect();
        assert_eq!(
            names,
            [
                "claude-stream",
                "claude-json",
                "codex-exec",
                "gemini-stream",
                "gemini-json",
                "opencode-json",
                "copilot-json"
            ]
        );
        for p in builtins() {
            assert!(!p.get().source.package.is_empty() && !p.get().source.file.is_empty());
        }
    }
}

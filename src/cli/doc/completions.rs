//! Shell completion scripts, from the clap definition.

use crate::config::Shell;

/// The completion script for `shell`, made in memory: clap_complete
/// panics on a failed write, so the caller writes it.
pub fn script(shell: Shell) -> Vec<u8> {
    let shell = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Elvish => clap_complete::Shell::Elvish,
        Shell::Fish => clap_complete::Shell::Fish,
        Shell::PowerShell => clap_complete::Shell::PowerShell,
        Shell::Zsh => clap_complete::Shell::Zsh,
    };
    let mut script = Vec::new();
    clap_complete::generate(
        shell,
        &mut crate::cli::args::command(),
        "aoitap",
        &mut script,
    );
    script
}

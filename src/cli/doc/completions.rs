//! Shell completion scripts, from the clap definition.

/// The completion script for `shell`, made in memory: clap_complete
/// panics on a failed write, so the caller writes it.
pub fn script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut script = Vec::new();
    clap_complete::generate(
        shell,
        &mut crate::cli::args::command(),
        "aoitap",
        &mut script,
    );
    script
}

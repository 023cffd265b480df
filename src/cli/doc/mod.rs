//! What is written about the command line, made from its clap definition
//! so that it cannot fall behind: help beyond what clap derives, the man
//! page, shell completions.

pub mod completions;
pub mod help;
pub mod man;

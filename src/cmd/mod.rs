//! One module per subcommand, each `run(&Options) -> Result<Exit>` over
//! the shared engine (`crate::stream`) or on its own.

pub mod capabilities;
pub mod completions;
pub mod filter;
pub mod lint;
pub mod reconcile;
pub mod run;
pub mod schema;
pub mod split;
pub mod strip;
pub mod summarize;
pub mod verify;

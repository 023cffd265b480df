//! The integration tests: one binary, one file per subcommand.

mod util;

mod conform;
mod conformance;
mod hostile;
mod man;
mod memory;
mod pipe;
mod reconcile;
mod split;
mod strip;
mod summarize;
mod truth;
mod verify;

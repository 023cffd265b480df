//! The integration tests: one binary, one file per subcommand.

// Measurements are reported on stderr (`--nocapture`); the lint is for the
// tool, whose every message goes through `say!`.
#![allow(clippy::print_stderr)]

mod util;
// One stream judged in process through every reading path: the harness
// the rule table runs on (verify.rs).
mod check;

mod ci;
mod conform;
mod conformance;
mod docs;
mod edges;
mod examples;
mod filter;
mod follow;
mod hostile;
mod junit;
mod layers;
mod lint;
mod man;
mod memory;
mod newcomer;
mod pipe;
mod profiles;
mod props;
mod protocols;
mod reconcile;
mod run;
mod schema;
mod secrets;
mod signals;
mod split;
mod strip;
mod summarize;
mod truth;
mod upgrade;
mod verify;

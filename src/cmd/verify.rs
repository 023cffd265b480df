//! `aoitap verify`: the pass/fail gate (DESIGN §1, §4), and with `--relay`
//! a judge inside a live pipe (DESIGN §5).

use anyhow::Result;

use crate::cli::StreamOptions;
use crate::cmd::{JudgeOnly, ReportTo, run_stream};
use crate::exit::Exit;

pub fn run(opts: &StreamOptions) -> Result<Exit> {
    // With --relay, stdout carries the stream itself.
    let to = if opts.relay {
        ReportTo::Stderr
    } else {
        ReportTo::Stdout
    };
    run_stream(opts, "verify", to, &mut JudgeOnly)
}

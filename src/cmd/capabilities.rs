//! `aoitap capabilities`: the capability manifest (spec §17).

use crate::cmd::schema::print_json;
use crate::config::CapabilitiesOptions;
use crate::exit::{Exit, Result};
use crate::output::discover;

pub fn run(_: &CapabilitiesOptions) -> Result<Exit> {
    print_json(&discover::capabilities())
}

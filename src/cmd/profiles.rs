//! `aoitap profiles [NAME|FILE]`: the producer profiles --profile takes
//! (docs/contract.md §6.3), one line each; or one, as the TOML it was read
//! from, to copy and adapt.

use std::io::{self, Write};

use crate::check::ProfileRef;
use crate::check::profiles::builtins;
use crate::exit::{Exit, Result};

pub fn run(one: Option<ProfileRef>) -> Result<Exit> {
    let mut out = io::stdout().lock();
    match one {
        Some(p) => out.write_all(p.get().text.as_bytes())?,
        None => {
            let width = builtins()
                .iter()
                .map(|p| p.get().name.len())
                .max()
                .unwrap_or(0);
            for p in builtins() {
                let (p, s) = (p.get(), &p.get().source);
                writeln!(out, "{:width$}  {}", p.name, p.about)?;
                writeln!(
                    out,
                    "{:width$}  read from {}@{}, {}",
                    "", s.package, s.version, s.file
                )?;
            }
        }
    }
    out.flush()?;
    Ok(Exit::Pass)
}

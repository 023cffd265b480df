//! One module per subcommand: `run(options) -> Result<Exit>`.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::PathBuf;

pub mod verify;

/// One input stream.
#[derive(Clone, Debug)]
pub enum Input {
    Stdin,
    Path(PathBuf),
}

impl Input {
    /// How findings name this input.
    pub fn label(&self) -> String {
        match self {
            Input::Stdin => "<stdin>".to_string(),
            Input::Path(p) => p.display().to_string(),
        }
    }

    /// Open for reading. Stdin is read through its own descriptor, so the
    /// scanner's large reads are not split by std's small stdin buffer.
    pub fn open(&self) -> io::Result<File> {
        match self {
            Input::Stdin => Ok(File::from(io::stdin().as_fd().try_clone_to_owned()?)),
            Input::Path(p) => File::open(p),
        }
    }
}

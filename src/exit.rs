//! Exit statuses (DESIGN §4, spec §6): the only place that knows the numbers.

use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// Every run passed.
    Pass,
    /// Well formed, and the producer reported a failure that is not retryable.
    Failed,
    /// Well formed, and every failed run may succeed if retried.
    Retryable,
    /// The stream violates the contract: wins over `Failed` and `Retryable`.
    Nonconforming,
    /// Bad command line.
    Usage,
    /// An input file could not be opened.
    NoInput,
    /// An output file or directory could not be created.
    CantCreate,
    /// Reading or writing failed.
    Io,
    /// `run`: the command exists but cannot be executed.
    CannotExecute,
    /// `run`: no such command.
    CommandNotFound,
    /// Downstream closed the pipe: a normal ending, without a message.
    BrokenPipe,
    Interrupted,
    Terminated,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Pass => 0,
            Exit::Failed => 1,
            Exit::Usage => 64,
            Exit::Nonconforming => 65,
            Exit::NoInput => 66,
            Exit::CantCreate => 73,
            Exit::Io => 74,
            Exit::Retryable => 75,
            Exit::CannotExecute => 126,
            Exit::CommandNotFound => 127,
            Exit::Interrupted => 130,
            Exit::BrokenPipe => 141,
            Exit::Terminated => 143,
        }
    }

    /// The input's verdict from what was seen: any error finding makes it
    /// nonconforming; else any plain failure is 1; else any retryable
    /// failure is 75 (so 75 means every failed run is retryable).
    pub fn verdict(error_findings: u64, failed: u64, retryable: u64) -> Exit {
        if error_findings > 0 {
            Exit::Nonconforming
        } else if failed > 0 {
            Exit::Failed
        } else if retryable > 0 {
            Exit::Retryable
        } else {
            Exit::Pass
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e.code())
    }
}

/// An error that ends the command with a chosen status (e.g. 73 when an
/// output file may not be overwritten). Its message names the path.
#[derive(Debug)]
pub struct ExitError {
    pub exit: Exit,
    pub message: String,
}

impl std::fmt::Display for ExitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExitError {}

impl ExitError {
    pub fn io(exit: Exit, message: String) -> std::io::Error {
        std::io::Error::other(ExitError { exit, message })
    }

    /// The status an I/O error asks for: its own, if it carries one.
    pub fn status_of(e: &std::io::Error) -> Exit {
        match e.get_ref().and_then(|i| i.downcast_ref::<ExitError>()) {
            Some(x) => x.exit,
            None if e.kind() == std::io::ErrorKind::BrokenPipe => Exit::BrokenPipe,
            None => Exit::Io,
        }
    }
}

//! The `chunk-worker` binary: parses the command line, runs the subcommand and
//! turns its outcome into the exit status documented in `--help`.

use std::io::{self, BufWriter, IsTerminal, StdoutLock};
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};
use worker::cli::{exit, Cli, Command};
use worker::commands::offline::{self, OfflineError, Progress, Summary};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Command::Chunk(args) => {
            // A bar is for a person watching; never in CI logs or pipes.
            let progress = if io::stderr().is_terminal() {
                Progress::Stderr
            } else {
                Progress::Hidden
            };
            let result = offline::chunk(args, progress, stdout(), io::stderr());
            offline_status("chunk", result)
        }
        Command::Normalize(args) => {
            let result = offline::normalize_file(args, stdout(), io::stderr());
            offline_status("normalize", result)
        }
        Command::Profiles(args) => offline_status(
            "profiles",
            offline::profiles::run(args, stdout(), io::stderr()),
        ),
        Command::Eval(args) => {
            let progress = if io::stderr().is_terminal() {
                Progress::Stderr
            } else {
                Progress::Hidden
            };
            offline_status("eval", offline::eval::run(args, progress, stdout()))
        }
        Command::Links(args) => {
            offline_status("links", offline::links(args, stdout(), io::stderr()))
        }
        Command::Explain(args) => offline_status(
            "explain",
            offline::explain::explain(args, stdout(), io::stderr()),
        ),
        Command::Report(args) => {
            offline_status("report", offline::report::report(args, io::stderr().lock()))
        }
        Command::Run => ExitCode::from(worker::commands::service::run()),
        Command::Migrate => ExitCode::from(worker::commands::service::migrate()),
        Command::Serve => ExitCode::from(worker::commands::service::serve()),
        Command::Dlq(args) => ExitCode::from(worker::commands::dlq::run(args)),
        Command::Tenant(args) => ExitCode::from(worker::commands::tenant::run(args)),
        Command::Topology(args) => ExitCode::from(worker::commands::topology::run(args)),
        Command::Demo { inputs } => ExitCode::from(worker::commands::service::demo(inputs.clone())),
        Command::Bench {
            inputs,
            docs,
            rate,
            median,
            profile,
            backlog,
            processes,
        } => ExitCode::from(worker::commands::service::bench(
            worker::commands::bench::BenchOptions {
                inputs: worker::commands::bench::inputs_or_default(inputs.clone()),
                docs: *docs,
                rate: *rate,
                median: *median,
                profile: profile.clone(),
                backlog: *backlog,
                processes: *processes,
            },
        )),
    }
}

/// Locked and buffered: chunk output is many small writes.
fn stdout() -> BufWriter<StdoutLock<'static>> {
    BufWriter::new(io::stdout().lock())
}

/// The exit status of an offline command; prints what stopped it, if anything.
fn offline_status(subcommand: &str, result: Result<Summary, OfflineError>) -> ExitCode {
    match result {
        Ok(summary) => ExitCode::from(summary.exit_code()),
        Err(OfflineError::Usage(message)) => usage_error(subcommand, &message),
        Err(e) => {
            let code = e.exit_code();
            eprintln!("error: {:#}", anyhow::Error::new(e));
            ExitCode::from(code)
        }
    }
}

/// Prints a usage error the way clap prints its own (with the subcommand's
/// usage line) and returns the usage exit status.
fn usage_error(subcommand: &str, message: &str) -> ExitCode {
    let mut cmd = Cli::command();
    cmd.build();
    let error = match cmd.find_subcommand_mut(subcommand) {
        Some(sub) => sub.error(ErrorKind::ValueValidation, message),
        None => cmd.error(ErrorKind::ValueValidation, message),
    };
    // If stderr is gone there is no one left to tell.
    error.print().ok();
    ExitCode::from(exit::USAGE)
}

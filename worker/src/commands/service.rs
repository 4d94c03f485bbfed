//! Entry points of `chunk-worker run` and `chunk-worker migrate` for the
//! binary: settings from the environment, telemetry, a runtime, and an exit
//! status (0 done, 1 failed, 2 invalid settings).

use std::future::Future;
use std::time::Duration;

use crate::config::Settings;

use crate::exit;

/// `chunk-worker run`.
pub fn run() -> u8 {
    entry(|_| {}, crate::startup::run)
}

/// `chunk-worker serve`.
pub fn serve() -> u8 {
    entry(|_| {}, crate::commands::serve::run)
}

/// `chunk-worker migrate`.
pub fn migrate() -> u8 {
    entry(|_| {}, crate::startup::migrate)
}

/// `chunk-worker bench`: logs as quiet as the demo's.
pub fn bench(opts: crate::commands::bench::BenchOptions) -> u8 {
    let quiet = |s: &mut Settings| s.log.level = "warn,lapin=off".into();
    entry(quiet, move |settings| {
        crate::commands::bench::run(settings, opts)
    })
}

/// `chunk-worker demo [FILE_OR_DIR...]`: quiet logs (warnings only, unless
/// RUST_LOG says otherwise), the demo's own table on stdout.
pub fn demo(inputs: Vec<std::path::PathBuf>) -> u8 {
    let inputs = if inputs.is_empty() {
        crate::commands::demo::default_inputs()
    } else {
        inputs
    };
    let quiet = |s: &mut Settings| s.log.level = "warn,lapin=off".into();
    entry(quiet, move |settings| {
        crate::commands::demo::run(settings, inputs)
    })
}

fn entry<F, Fut>(adjust: impl FnOnce(&mut Settings), f: F) -> u8
where
    F: FnOnce(Settings) -> Fut,
    Fut: Future<Output = anyhow::Result<()>>,
{
    let mut settings = match Settings::from_env() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    adjust(&mut settings);
    let _telemetry = crate::ops::telemetry::init(&settings.log, &settings.telemetry);
    let Some(runtime) = runtime(None) else {
        return exit::FAILED;
    };
    let result = runtime.block_on(f(settings));
    // Blocking chunking tasks of abandoned deliveries must not hold the exit.
    runtime.shutdown_timeout(Duration::from_secs(5));
    match result {
        Ok(()) => exit::SUCCESS,
        Err(e) => {
            tracing::error!(error = format!("{e:#}"), "chunk-worker stopped on an error");
            exit::FAILED
        }
    }
}

/// An operator tool's entry (`dlq`, `tenant`): settings from the
/// environment (exit 2 when invalid), a runtime of `worker_threads`, then
/// `f`'s exit status, or 1 after printing its error to stderr (no log
/// set-up: these tools talk to a person).
pub fn tool<F, Fut>(worker_threads: usize, f: F) -> u8
where
    F: FnOnce(Settings) -> Fut,
    Fut: Future<Output = anyhow::Result<u8>>,
{
    let settings = match Settings::from_env() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let Some(runtime) = runtime(Some(worker_threads)) else {
        return exit::FAILED;
    };
    match runtime.block_on(f(settings)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit::FAILED
        }
    }
}

/// The multi-threaded tokio runtime of a command (`worker_threads`: the
/// default, one per core, when `None`); `None` after printing why it could
/// not start.
pub fn runtime(worker_threads: Option<usize>) -> Option<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = worker_threads {
        builder.worker_threads(n);
    }
    match builder.enable_all().build() {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            None
        }
    }
}

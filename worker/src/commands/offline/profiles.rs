//! `chunk-worker profiles [show NAME | check FILE...]`: list the profiles,
//! print one as TOML, validate profile files.

use std::fs;
use std::io::Write;

use shared::profile::DEFAULT_PROFILE;
use shared::strategy::NO_TOKEN_LIMIT;
use shared::{Engine, Profile};

use super::outcome::{deliver, OfflineError, Summary};
use super::setup::engine_for;
use crate::cli::{ProfilesAction, ProfilesArgs};

/// Runs the subcommand: a listing, one profile's TOML, or a check report.
pub fn run(
    args: &ProfilesArgs,
    mut stdout: impl Write,
    mut stderr: impl Write,
) -> Result<Summary, OfflineError> {
    match &args.action {
        None => {
            let engine = engine_for(&args.select, &[])?;
            let listing = listing(&engine);
            deliver(
                stdout
                    .write_all(listing.as_bytes())
                    .and_then(|()| stdout.flush()),
            )?;
            Ok(Summary {
                succeeded: engine.profiles().names().len(),
                failed: 0,
            })
        }
        Some(ProfilesAction::Show { name }) => {
            let engine = engine_for(&args.select, &[])?;
            let profile = engine
                .profiles()
                .get(name)
                .map_err(|e| OfflineError::Usage(e.to_string()))?;
            let text = profile.to_toml();
            deliver(
                stdout
                    .write_all(text.as_bytes())
                    .and_then(|()| stdout.flush()),
            )?;
            Ok(Summary {
                succeeded: 1,
                failed: 0,
            })
        }
        Some(ProfilesAction::Check { files }) => {
            let mut summary = Summary::default();
            let mut problems = Vec::new();
            for file in files {
                let one = crate::profiles::load_engine(
                    None,
                    std::slice::from_ref(file),
                    true,
                    &crate::semantic::SemanticSettings::default(),
                    &[],
                );
                match one {
                    Ok(engine) => {
                        let name = fs::read_to_string(file)
                            .ok()
                            .and_then(|src| crate::profiles::profile_name_in(&src))
                            .unwrap_or_default();
                        let strategy = engine
                            .profiles()
                            .get(&name)
                            .map(|p| p.strategy.clone())
                            .unwrap_or_default();
                        summary.succeeded += 1;
                        writeln!(
                            stdout,
                            "ok  {}: profile {name:?}, strategy {strategy}",
                            file.display()
                        )
                        .ok();
                    }
                    Err(reason) => {
                        summary.failed += 1;
                        problems.push(reason);
                    }
                }
            }
            deliver(stdout.flush())?;
            if problems.is_empty() {
                return Ok(summary);
            }
            for p in &problems[..problems.len() - 1] {
                writeln!(stderr, "error: {p}").ok();
            }
            // The last one goes out as the usage error (exit status 2).
            Err(OfflineError::Usage(problems.pop().unwrap_or_default()))
        }
    }
}

/// One line per profile: name, strategy, tokenizer, granularity, sizes,
/// where it is defined, whether experimental, its parameters, description.
pub fn listing(engine: &Engine) -> String {
    let profiles: Vec<&Profile> = engine.profiles().iter().collect();
    let width = profiles.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for p in profiles {
        let limits = p.limits();
        let mut flags = String::new();
        if p.name == DEFAULT_PROFILE {
            flags.push_str(" (default)");
        }
        if p.experimental {
            flags.push_str(if engine.experimental_enabled() {
                " (experimental)"
            } else {
                " (experimental, disabled)"
            });
        }
        if p.chunker().needs_embedder() && engine.embedder().is_none() {
            flags.push_str(" (needs the embedding model: scripts/fetch-model.sh)");
        }
        if p.chunker().needs_chat() {
            flags.push_str(" (asks a chat model: set its endpoint or CHUNK_WORKER_LLM_ENDPOINT)");
        }
        if let Some(d) = &p.deprecation {
            flags.push_str(&match &d.replacement {
                Some(r) => format!(" (deprecated: use {r})"),
                None => " (deprecated)".to_owned(),
            });
        }
        if let Some(w) = &p.embedder {
            flags.push_str(&format!(
                " (fitted to {}: {} tokens of {}{})",
                w.name,
                w.max_tokens,
                w.tokenizer.spelling(),
                if w.counter().is_some() {
                    ""
                } else {
                    ", not loaded: scripts/fetch-model.sh"
                }
            ));
        }
        // A drop-in names the call it reproduces, and its sizes are in the
        // framework's units (LangChain's CharacterTextSplitter: characters).
        let framework = p.chunker().framework();
        let budget = |n: usize| {
            if n >= NO_TOKEN_LIMIT {
                "none".to_owned()
            } else {
                match framework.and_then(|f| f.unit) {
                    Some(unit) if unit != "tokens" => format!("{n}{unit}"),
                    _ => n.to_string(),
                }
            }
        };
        let framework = framework.map_or_else(String::new, |f| {
            format!(" framework=\"{} ({})\"", f.call, f.package)
        });
        out.push_str(&format!(
            "{:<width$}  strategy={}{framework} tokenizer={} granularity={} target={} hard_max={} source={}{flags}  {}  params: {}\n",
            p.name,
            p.strategy,
            p.tokenizer.name(),
            p.granularity.as_str(),
            budget(limits.target_tokens),
            budget(limits.hard_max_tokens),
            p.origin.describe(),
            p.description,
            p.params_line(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::ProfileSelectArgs;

    fn args(action: Option<ProfilesAction>) -> ProfilesArgs {
        ProfilesArgs {
            action,
            select: ProfileSelectArgs::default(),
        }
    }

    #[test]
    fn the_listing_has_one_line_per_profile_with_strategy_budgets_and_params(
    ) -> Result<(), OfflineError> {
        let mut out = Vec::new();
        run(&args(None), &mut out, Vec::new())?;
        let out = String::from_utf8_lossy(&out);
        let first = out.lines().next().unwrap_or_default();
        assert!(first.starts_with("spec-v1 "), "{out}");
        assert!(
            first.contains("strategy=structural tokenizer=cl100k_base granularity=section target=350 hard_max=520")
                && first.contains("source=built-in (default)")
                && first.contains("soft_max_tokens=450"),
            "{first}"
        );
        let engine = Engine::builtin().map_err(OfflineError::Engine)?;
        assert_eq!(
            out.lines().count(),
            engine.profiles().names().len(),
            "{out}"
        );
        assert!(
            out.contains("recursive-v1 ") && out.contains("strategy=recursive"),
            "{out}"
        );
        // Drop-ins name the call and version they reproduce, sizes in its units.
        let line = |name: &str| {
            out.lines()
                .find(|l| l.starts_with(&format!("{name} ")))
                .unwrap_or_default()
                .to_owned()
        };
        let character = line("langchain.character");
        assert!(
            character.contains(
                r#"framework="LangChain CharacterTextSplitter (langchain-text-splitters 1.1.3)""#
            ) && character.contains("target=4000chars hard_max=none"),
            "{character}"
        );
        let markdown = line("langchain.markdown");
        assert!(
            markdown.contains("MarkdownHeaderTextSplitter") && markdown.contains("target=none"),
            "{markdown}"
        );
        Ok(())
    }

    #[test]
    fn show_prints_toml_that_check_accepts() -> Result<(), OfflineError> {
        let mut out = Vec::new();
        run(
            &args(Some(ProfilesAction::Show {
                name: "token-v1".into(),
            })),
            &mut out,
            Vec::new(),
        )?;
        let text = String::from_utf8_lossy(&out).into_owned();
        assert!(
            text.contains("strategy = \"token\"") && text.contains("chunk_size = 512"),
            "{text}"
        );
        let path = std::env::temp_dir().join(format!("cw-show-{}.toml", std::process::id()));
        fs::write(&path, &text).map_err(OfflineError::Output)?;
        let summary = run(
            &args(Some(ProfilesAction::Check {
                files: vec![path.clone()],
            })),
            Vec::new(),
            Vec::new(),
        )?;
        assert_eq!(summary.succeeded, 1);
        fs::write(&path, text.replace("512", "99999")).map_err(OfflineError::Output)?;
        let err = run(
            &args(Some(ProfilesAction::Check {
                files: vec![path.clone()],
            })),
            Vec::new(),
            Vec::new(),
        )
        .err();
        fs::remove_file(&path).ok();
        let err = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            err.contains("params.chunk_size = 99999 is out of range; valid: 100..=4096")
                && err.contains("cw-show-"),
            "{err}"
        );
        Ok(())
    }

    #[test]
    fn show_of_an_unknown_profile_is_a_usage_error() {
        let r = run(
            &args(Some(ProfilesAction::Show {
                name: "nope".into(),
            })),
            Vec::new(),
            Vec::new(),
        );
        assert!(matches!(r, Err(OfflineError::Usage(m)) if m.contains("spec-v1")));
    }
}

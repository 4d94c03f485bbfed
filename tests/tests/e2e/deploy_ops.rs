//! The operations files under `deploy/` (Prometheus alert rules, Grafana
//! dashboard, Kubernetes manifests) parse, name only metrics the worker
//! exports, and agree with the worker's settings and endpoints.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

type R = anyhow::Result<()>;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn yaml(path: &str) -> anyhow::Result<Yaml> {
    let text = std::fs::read_to_string(root().join(path)).with_context(|| path.to_owned())?;
    let mut docs = YamlLoader::load_from_str(&text).with_context(|| path.to_owned())?;
    if docs.len() != 1 {
        bail!("{path}: expected one YAML document, found {}", docs.len());
    }
    Ok(docs.remove(0))
}

/// Metric names the worker exports: the sample names of a registry in which
/// every series was touched once, and the scrape-time gauges.
fn exported() -> BTreeSet<String> {
    use worker::ops::metrics::{Metrics, OperationOutcome, QueueKind, Stage, StrategyLabels};
    let m = Metrics::default();
    let s = StrategyLabels {
        strategy: "structural".into(),
        granularity: "section".into(),
    };
    m.operation(Some("t"), &s, OperationOutcome::Stored);
    m.failed(Some("t"), &s, shared::ErrorCode::InvalidMessage);
    m.chunks_stored(Some("t"), &s, [100]);
    m.observe_duration(&s, std::time::Duration::from_millis(5));
    m.observe_stage(Stage::Store, std::time::Duration::from_millis(5));
    m.set_queue_depth(QueueKind::DeadLetter, 1);
    m.api.rate_limited("tenant");
    m.api.breaker_state("structural", 1);
    m.api.answered(200);
    let mut names: BTreeSet<String> = m
        .render()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .map(str::to_owned)
        .collect();
    names.extend(
        worker::ops::scrape::SCRAPE_GAUGES
            .iter()
            .chain(&worker::ops::scrape::SCRAPE_COUNTERS)
            .map(|n| (*n).to_owned()),
    );
    names
}

/// Every `chunking_*` metric an expression uses is exported.
fn check_expr(expr: &str, exported: &BTreeSet<String>) -> R {
    let mut found = false;
    let bytes = expr.as_bytes();
    let mut i = 0;
    while let Some(at) = expr[i..].find("chunking_") {
        let start = i + at;
        let mut end = start;
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
            end += 1;
        }
        let name = &expr[start..end];
        let base = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .filter(|b| exported.contains(*b))
            .unwrap_or(name);
        if !exported.contains(base) {
            bail!("{expr}: {name} is not exported (exported: {exported:?})");
        }
        found = true;
        i = end;
    }
    if !found && !expr.contains("up{") {
        bail!("{expr}: names no chunk-worker metric");
    }
    Ok(())
}

#[test]
fn alert_rules_cover_seed_001_and_name_exported_metrics() -> R {
    let doc = yaml("deploy/prometheus/alerts.yml")?;
    let exported = exported();
    let mut alerts = BTreeSet::new();
    let groups = doc["groups"].as_vec().context("groups")?;
    for group in groups {
        for rule in group["rules"].as_vec().context("rules")? {
            let name = rule["alert"].as_str().context("alert name")?;
            let expr = rule["expr"].as_str().context("expr")?;
            check_expr(expr, &exported)?;
            assert!(
                rule["labels"]["severity"].as_str().is_some(),
                "{name}: severity"
            );
            assert!(
                rule["annotations"]["summary"].as_str().is_some(),
                "{name}: summary"
            );
            alerts.insert(name.to_owned());
        }
    }
    for name in [
        "ChunkingHighLatency",
        "ChunkingHighErrorRate",
        "ChunkingDeadLetterGrowth",
        "ChunkingOutboxLag",
        "ChunkingMemoryHigh",
    ] {
        assert!(alerts.contains(name), "{name} missing: {alerts:?}");
    }
    Ok(())
}

#[test]
fn the_dashboard_parses_and_names_exported_metrics() -> R {
    let text = std::fs::read_to_string(root().join("deploy/grafana/chunk-worker.json"))?;
    let dash: Value = serde_json::from_str(&text)?;
    let exported = exported();
    let panels = dash["panels"].as_array().context("panels")?;
    assert!(panels.len() >= 6);
    let mut used = BTreeSet::new();
    for panel in panels {
        for target in panel["targets"].as_array().context("targets")? {
            let expr = target["expr"].as_str().context("expr")?;
            check_expr(expr, &exported)?;
            used.insert(expr.to_owned());
        }
    }
    for name in [
        "chunking_operations_total",
        "chunking_operations_duration_seconds_bucket",
        "chunking_errors_total",
        "chunking_chunks_produced_total",
        "chunking_memory_bytes",
        "chunking_outbox_oldest_age_seconds",
    ] {
        assert!(used.iter().any(|e| e.contains(name)), "{name} not shown");
    }
    Ok(())
}

#[test]
fn kubernetes_manifests_agree_with_the_worker() -> R {
    let deployment = yaml("deploy/k8s/deployment.yaml")?;
    let config = yaml("deploy/k8s/configmap.yaml")?;
    let pdb = yaml("deploy/k8s/pdb.yaml")?;
    assert_eq!(deployment["kind"].as_str(), Some("Deployment"));
    assert_eq!(config["kind"].as_str(), Some("ConfigMap"));
    assert_eq!(pdb["kind"].as_str(), Some("PodDisruptionBudget"));

    let labels = &deployment["spec"]["selector"]["matchLabels"];
    assert_eq!(
        &deployment["spec"]["template"]["metadata"]["labels"],
        labels
    );
    assert_eq!(&pdb["spec"]["selector"]["matchLabels"], labels);

    let containers = deployment["spec"]["template"]["spec"]["containers"]
        .as_vec()
        .context("containers")?;
    let c = containers.first().context("a container")?;
    assert_eq!(
        c["livenessProbe"]["httpGet"]["path"].as_str(),
        Some("/healthz")
    );
    assert_eq!(
        c["readinessProbe"]["httpGet"]["path"].as_str(),
        Some("/readyz")
    );
    let port = c["ports"][0]["containerPort"].as_i64().context("port")?;
    assert_eq!(
        c["envFrom"][0]["configMapRef"]["name"].as_str(),
        config["metadata"]["name"].as_str()
    );

    // The ConfigMap's variables are valid settings, and the HTTP endpoint
    // listens on the probed port on every interface.
    let data = config["data"].as_hash().context("data")?;
    let mut vars: HashMap<String, String> = HashMap::new();
    for (k, v) in data {
        vars.insert(
            k.as_str().context("key")?.to_owned(),
            v.as_str().context("value")?.to_owned(),
        );
    }
    let settings = worker::config::Settings::load(&root().join("config"), None, vars.clone())?;
    assert_eq!(i64::from(settings.http_addr.port()), port);
    assert!(settings.http_addr.ip().is_unspecified());

    // Secrets reach the worker as mounted files, named by *_FILE settings
    // the worker knows, and the broker, database and collector use TLS.
    let env: HashMap<String, String> = c["env"]
        .as_vec()
        .context("env")?
        .iter()
        .filter_map(|e| {
            Some((
                e["name"].as_str()?.to_owned(),
                e["value"].as_str()?.to_owned(),
            ))
        })
        .collect();
    for key in [
        "CHUNK_WORKER__DATABASE__URL_FILE",
        "CHUNK_WORKER__DATABASE__PASSWORD_FILE",
        "CHUNK_WORKER__AMQP__URL_FILE",
        "CHUNK_WORKER__AMQP__PASSWORD_FILE",
        "CHUNK_WORKER__AMQP__TLS_CA_FILE",
        "CHUNK_WORKER__AMQP__TLS_CERT_FILE",
        "CHUNK_WORKER__AMQP__TLS_KEY_FILE",
        "CHUNK_WORKER__TELEMETRY__OTLP_CA_FILE",
    ] {
        let path = env
            .get(key)
            .with_context(|| format!("{key} in the Deployment"))?;
        let mounted = c["volumeMounts"]
            .as_vec()
            .context("volumeMounts")?
            .iter()
            .filter_map(|m| m["mountPath"].as_str())
            .any(|dir| path.starts_with(&format!("{dir}/")));
        assert!(mounted, "{key}={path} is not in a mounted volume");
    }
    assert!(env["CHUNK_WORKER__TELEMETRY__OTLP_ENDPOINT"].starts_with("https://"));
    let no_plain_secret = c["env"]
        .as_vec()
        .context("env")?
        .iter()
        .all(|e| e["valueFrom"].is_badvalue());
    assert!(no_plain_secret, "secrets come as files, not variables");
    // Every *_FILE key is a setting the worker reads (a typo would be an
    // unknown-field error).
    let mut file_vars = vars.clone();
    let dir = std::env::temp_dir().join(format!("cw-deploy-secrets-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let pem = "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n";
    for (key, content) in [
        (
            "CHUNK_WORKER__DATABASE__URL_FILE",
            "postgres://u@db:5432/chunk_worker?sslmode=verify-full",
        ),
        ("CHUNK_WORKER__DATABASE__PASSWORD_FILE", "pw"),
        (
            "CHUNK_WORKER__AMQP__URL_FILE",
            "amqps://u@rabbitmq:5671/%2f",
        ),
        ("CHUNK_WORKER__AMQP__PASSWORD_FILE", "pw"),
        ("CHUNK_WORKER__AMQP__TLS_CA_FILE", pem),
        ("CHUNK_WORKER__AMQP__TLS_CERT_FILE", pem),
        ("CHUNK_WORKER__AMQP__TLS_KEY_FILE", pem),
        ("CHUNK_WORKER__TELEMETRY__OTLP_CA_FILE", pem),
    ] {
        let f = dir.join(key);
        std::fs::write(&f, content)?;
        file_vars.insert(key.to_owned(), f.display().to_string());
    }
    file_vars.insert(
        "CHUNK_WORKER__TELEMETRY__OTLP_ENDPOINT".into(),
        env["CHUNK_WORKER__TELEMETRY__OTLP_ENDPOINT"].clone(),
    );
    let with_files = worker::config::Settings::load(&root().join("config"), None, file_vars);
    let _ = std::fs::remove_dir_all(&dir);
    let with_files = with_files?;
    assert!(with_files.amqp.tls.key_pem.is_some());

    // The grace period covers the outbox flush at shutdown.
    let grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        .as_i64()
        .context("grace period")?;
    assert!(u64::try_from(grace)? > settings.outbox.flush_timeout.as_secs());
    Ok(())
}

//! The deployment files stay valid and in step with the code: Docker does
//! not run here, so they are parsed and cross-checked instead.
#![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use worker::amqp::topology::{Topology, BROKER_DELIVERY_LIMIT_MARGIN};
use worker::config::Settings;
use yaml_rust2::{Yaml, YamlLoader};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn compose() -> Yaml {
    let text = std::fs::read_to_string(root().join("docker-compose.yml")).unwrap();
    YamlLoader::load_from_str(&text).unwrap().remove(0)
}

#[test]
fn compose_defines_the_three_services() {
    let doc = compose();
    let services = &doc["services"];
    for name in ["postgres", "rabbitmq", "worker"] {
        assert!(!services[name].is_badvalue(), "service {name} missing");
    }
    assert!(services["rabbitmq"]["image"]
        .as_str()
        .unwrap()
        .contains("management"));
    assert_eq!(
        services["worker"]["build"]["dockerfile"].as_str(),
        Some("deploy/Dockerfile")
    );
    // Every file the compose file mounts exists.
    for svc in ["rabbitmq", "worker"] {
        if let Some(vols) = services[svc]["volumes"].as_vec() {
            for v in vols {
                let src = v.as_str().unwrap().split(':').next().unwrap();
                if src.starts_with("./deploy") {
                    assert!(root().join(src).exists(), "{src} missing");
                }
            }
        }
    }
}

#[test]
fn compose_worker_environment_is_valid_settings() {
    let doc = compose();
    let env = doc["services"]["worker"]["environment"].as_hash().unwrap();
    let vars: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().unwrap().to_owned(),
                v.as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(vars.keys().all(|k| k.starts_with("CHUNK_WORKER__")));
    let settings = Settings::load(&root().join("config"), None, vars).unwrap();
    assert_eq!(settings.http_addr.port(), 9464);
}

#[test]
fn broker_definitions_match_the_topology_the_worker_declares() {
    let text = std::fs::read_to_string(root().join("deploy/rabbitmq/definitions.json")).unwrap();
    let defs: Value = serde_json::from_str(&text).unwrap();
    let settings = Settings::load(&root().join("config"), None, HashMap::new()).unwrap();
    let t = Topology::new("");
    let queue = |name: &str| {
        defs["queues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["name"] == name)
            .unwrap_or_else(|| panic!("queue {name} missing"))
            .clone()
    };
    let requests = queue(&t.requests_queue());
    assert_eq!(requests["arguments"]["x-queue-type"], "quorum");
    assert_eq!(
        requests["arguments"]["x-delivery-limit"],
        u64::from(settings.amqp.delivery_limit + BROKER_DELIVERY_LIMIT_MARGIN)
    );
    assert_eq!(
        requests["arguments"]["x-dead-letter-exchange"],
        t.dead_letter_exchange()
    );
    assert_eq!(
        queue(&t.failed_queue())["arguments"]["x-queue-type"],
        "quorum"
    );
    // The retry queue's arguments are exactly those the worker declares.
    let retry = queue(&t.retry_queue());
    let declared: serde_json::Map<String, Value> =
        worker::amqp::headers::table_to_json(&t.retry_arguments(settings.amqp.retry_delay));
    assert_eq!(retry["arguments"], Value::Object(declared));
    assert_eq!(retry["arguments"]["x-queue-type"], "quorum");
    let exchanges: Vec<&str> = defs["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert!(exchanges.contains(&t.events_exchange().as_str()));
    assert!(exchanges.contains(&t.dead_letter_exchange().as_str()));
}

#[test]
fn dockerfile_is_multi_stage_and_runs_the_worker() {
    let text = std::fs::read_to_string(root().join("deploy/Dockerfile")).unwrap();
    let stages = text.lines().filter(|l| l.starts_with("FROM ")).count();
    assert!(stages >= 2, "multi-stage build expected");
    assert!(text.contains("CMD [\"run\"]"));
    assert!(text.contains("STOPSIGNAL SIGTERM"));
}

#[test]
fn every_environment_file_loads() {
    for entry in std::fs::read_dir(root().join("config")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
        if name == "default" {
            continue;
        }
        Settings::load(&root().join("config"), Some(&name), HashMap::new())
            .unwrap_or_else(|e| panic!("config/{name}.toml: {e}"));
    }
}

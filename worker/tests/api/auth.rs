//! Token verification with key files: RS256 and ES256 PEM keys, a key file
//! read again when it changes, and a JWKS document.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use jsonwebtoken::{encode, EncodingKey, Header};
use serde_json::json;

use crate::{client, config_dir, good, now};

fn openssl(dir: &Path, args: &[&str]) {
    let ok = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "openssl {args:?}");
}

#[test]
fn rs256_and_es256_keys_verify_and_a_changed_key_file_is_read_again() {
    let dir = std::env::temp_dir().join(format!("cw-api-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    openssl(
        &dir,
        &[
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
            "rsa.key",
        ],
    );
    openssl(
        &dir,
        &["pkey", "-in", "rsa.key", "-pubout", "-out", "rsa.pub"],
    );
    openssl(
        &dir,
        &[
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-out",
            "ec.key",
        ],
    );
    openssl(
        &dir,
        &["pkey", "-in", "ec.key", "-pubout", "-out", "ec.pub"],
    );
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    let keys = dir.join("keys.pem");
    std::fs::write(&keys, read("rsa.pub")).unwrap();
    let (mut child, port) = key_server(&keys);
    let claims = |iss: &str| {
        json!({"sub": "erin", "tenant_id": "acme-prod", "scp": ["ingest:write"], "exp": now() + 600,
               "iss": iss, "aud": "chunk-worker"})
    };
    let rs = |iss: &str| {
        encode(
            &Header::new(jsonwebtoken::Algorithm::RS256),
            &claims(iss),
            &EncodingKey::from_rsa_pem(&read("rsa.key")).unwrap(),
        )
        .unwrap()
    };
    let es = encode(
        &Header::new(jsonwebtoken::Algorithm::ES256),
        &claims("https://idp.example.com"),
        &EncodingKey::from_ec_pem(&read("ec.key")).unwrap(),
    )
    .unwrap();
    let post = |t: &str| {
        client()
            .post(format!("http://127.0.0.1:{port}/v1/chunk"))
            .bearer_auth(t)
            .body(json!({"document_id": "k", "markdown": "# K\n\nKeys.\n"}).to_string())
            .send()
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(
        post(&rs("https://idp.example.com")),
        200,
        "RS256 with the configured key"
    );
    assert_eq!(post(&rs("https://evil.example.com")), 401, "another issuer");
    assert_eq!(post(&es), 401, "ES256 before its key is configured");
    assert_eq!(
        post(&good("acme-prod", "erin")),
        401,
        "HS256 without a secret"
    );
    // Key rotation: the file now holds both keys; no restart.
    let mut both = read("rsa.pub");
    both.extend(read("ec.pub"));
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&keys, both).unwrap();
    assert_eq!(post(&es), 200, "ES256 once the file has its key");
    assert_eq!(post(&rs("https://idp.example.com")), 200);
    // A JWKS document instead (the RSA key, kid k1): tokens naming that kid
    // verify, tokens naming another do not, and the EC key is gone.
    let modulus = Command::new("openssl")
        .args(["rsa", "-pubin", "-noout", "-modulus", "-in"])
        .arg(dir.join("rsa.pub"))
        .output()
        .unwrap();
    let hex = String::from_utf8(modulus.stdout).unwrap();
    let hex = hex.trim().trim_start_matches("Modulus=");
    let n: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let jwks = json!({"keys": [{"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
        "n": base64url(&n), "e": "AQAB"}]});
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&keys, jwks.to_string()).unwrap();
    let with_kid = |kid: &str| {
        let mut h = Header::new(jsonwebtoken::Algorithm::RS256);
        h.kid = Some(kid.to_owned());
        encode(
            &h,
            &claims("https://idp.example.com"),
            &EncodingKey::from_rsa_pem(&read("rsa.key")).unwrap(),
        )
        .unwrap()
    };
    assert_eq!(post(&with_kid("k1")), 200, "the JWKS key, by kid");
    assert_eq!(post(&with_kid("k2")), 401, "an unknown kid");
    assert_eq!(post(&es), 401, "the EC key left with the PEM file");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Base64url without padding (JWK members).
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((v >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// A server verifying RS256 tokens with the keys in `keys`, and the
/// configured issuer and audience.
fn key_server(keys: &Path) -> (std::process::Child, u16) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(env!("CARGO_BIN_EXE_chunk-worker"))
        .arg("serve")
        .env("CHUNK_WORKER_CONFIG_DIR", config_dir())
        .env("CHUNK_WORKER__HTTP__ADDR", format!("127.0.0.1:{port}"))
        .env("CHUNK_WORKER__API__ENABLED", "true")
        .env("CHUNK_WORKER__API__JWT__PUBLIC_KEYS_FILE", keys)
        .env("CHUNK_WORKER__API__JWT__ISSUER", "https://idp.example.com")
        .env("CHUNK_WORKER__API__JWT__AUDIENCE", "chunk-worker")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < end, "the API did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    (child, port)
}

#[test]
fn configured_claims_are_required_and_every_published_key_is_tried() {
    let dir = std::env::temp_dir().join(format!("cw-api-rotation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for k in ["old", "new"] {
        openssl(
            &dir,
            &[
                "genpkey",
                "-algorithm",
                "RSA",
                "-pkeyopt",
                "rsa_keygen_bits:2048",
                "-out",
                &format!("{k}.key"),
            ],
        );
        openssl(
            &dir,
            &[
                "pkey",
                "-in",
                &format!("{k}.key"),
                "-pubout",
                "-out",
                &format!("{k}.pub"),
            ],
        );
    }
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    let keys = dir.join("keys.pem");
    let mut both = read("old.pub");
    both.extend(read("new.pub"));
    std::fs::write(&keys, both).unwrap();
    let (mut child, port) = key_server(&keys);
    let full = json!({"sub": "erin", "tenant_id": "acme-prod", "scope": "ingest:write",
        "exp": now() + 600, "iss": "https://idp.example.com", "aud": "chunk-worker"});
    let without = |claim: &str| {
        let mut c = full.clone();
        c.as_object_mut().unwrap().remove(claim);
        c
    };
    let sign = |key: &str, claims: &serde_json::Value, kid: Option<&str>| {
        let mut h = Header::new(jsonwebtoken::Algorithm::RS256);
        h.kid = kid.map(str::to_owned);
        encode(
            &h,
            claims,
            &EncodingKey::from_rsa_pem(&read(&format!("{key}.key"))).unwrap(),
        )
        .unwrap()
    };
    let post = |t: &str| {
        let r = client()
            .post(format!("http://127.0.0.1:{port}/v1/chunk"))
            .bearer_auth(t)
            .body(json!({"document_id": "k", "markdown": "# K\n\nKeys.\n"}).to_string())
            .send()
            .unwrap();
        let status = r.status().as_u16();
        let body: serde_json::Value = serde_json::from_str(&r.text().unwrap()).unwrap();
        (status, body["detail"].as_str().unwrap_or("").to_owned())
    };
    assert_eq!(post(&sign("old", &full, None)).0, 200, "the first key");
    assert_eq!(
        post(&sign("new", &full, None)).0,
        200,
        "the second key of the same algorithm"
    );
    for claim in ["iss", "aud", "sub"] {
        let (status, detail) = post(&sign("new", &without(claim), None));
        assert_eq!(status, 401, "a token without {claim}");
        assert!(detail.contains(&format!("no {claim} claim")), "{detail}");
    }
    // The same as a JWKS without key ids, then with them: tokens without a
    // kid try every key, tokens with one try the key it names.
    let jwk = |key: &str, kid: Option<&str>| {
        let modulus = Command::new("openssl")
            .args(["rsa", "-pubin", "-noout", "-modulus", "-in"])
            .arg(dir.join(format!("{key}.pub")))
            .output()
            .unwrap();
        let hex = String::from_utf8(modulus.stdout).unwrap();
        let hex = hex.trim().trim_start_matches("Modulus=").to_owned();
        let n: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let mut k =
            json!({"kty": "RSA", "alg": "RS256", "use": "sig", "n": base64url(&n), "e": "AQAB"});
        if let Some(kid) = kid {
            k["kid"] = json!(kid);
        }
        k
    };
    let write = |content: Vec<u8>| {
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&keys, content).unwrap();
    };
    write(
        json!({"keys": [jwk("old", None), jwk("new", None)]})
            .to_string()
            .into_bytes(),
    );
    assert_eq!(
        post(&sign("new", &full, None)).0,
        200,
        "JWKS without kids: every key"
    );
    write(
        json!({"keys": [jwk("old", Some("k-old")), jwk("new", Some("k-new"))]})
            .to_string()
            .into_bytes(),
    );
    assert_eq!(post(&sign("new", &full, Some("k-new"))).0, 200, "by kid");
    assert_eq!(post(&sign("new", &full, None)).0, 200, "no kid: every key");
    assert_eq!(
        post(&sign("new", &full, Some("k-old"))).0,
        401,
        "a kid naming another key"
    );
    // The old key is withdrawn: its tokens stop verifying at once.
    write(read("new.pub"));
    let (status, detail) = post(&sign("old", &full, None));
    assert_eq!(status, 401, "a removed key");
    assert!(detail.contains("signature"), "{detail}");
    assert_eq!(post(&sign("new", &full, None)).0, 200);
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_shared_secret_token_without_the_configured_issuer_or_audience_is_refused() {
    let s = crate::Server::start(&[
        ("API__JWT__ISSUER", "https://idp.example.com"),
        ("API__JWT__AUDIENCE", "chunk-worker"),
    ]);
    let body = json!({"document_id": "d", "markdown": "# A\n\nB.\n"}).to_string();
    let base =
        json!({"sub": "u", "tenant_id": "acme-prod", "scope": "ingest:write", "exp": now() + 600});
    let with = |extra: &[(&str, &str)]| {
        let mut c = base.clone();
        for (k, v) in extra {
            c[*k] = json!(v);
        }
        crate::token(&c)
    };
    let status = |t: &str| s.post(Some(t), body.clone()).status().as_u16();
    assert_eq!(status(&with(&[])), 401, "minted for anyone");
    assert_eq!(
        status(&with(&[("iss", "https://idp.example.com")])),
        401,
        "no aud"
    );
    assert_eq!(status(&with(&[("aud", "chunk-worker")])), 401, "no iss");
    assert_eq!(
        status(&with(&[
            ("iss", "https://idp.example.com"),
            ("aud", "other-service")
        ])),
        401,
        "another audience"
    );
    assert_eq!(
        status(&with(&[
            ("iss", "https://idp.example.com"),
            ("aud", "chunk-worker")
        ])),
        200
    );
}

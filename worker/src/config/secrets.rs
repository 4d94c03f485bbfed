//! Secrets in settings (issue 15 item 3): URLs with credentials, passwords
//! and private keys are held in `secrecy` types (Debug prints `[REDACTED]`;
//! using one takes an explicit `expose_secret()`), and each can come from a
//! file, as Kubernetes mounts secrets: `<key>_file` replaces `<key>`.
//! Certificates are public and read as plain PEM.

use secrecy::SecretString;

use super::error::{invalid, ConfigError};

/// The trimmed content of the secret file at `path` (`None` for an empty
/// setting); an unreadable or empty file is an error naming `key`.
pub(super) fn secret_file(
    key: &'static str,
    path: &str,
) -> Result<Option<SecretString>, ConfigError> {
    let path = path.trim();
    if path.is_empty() {
        return Ok(None);
    }
    let content = std::fs::read_to_string(path)
        .map_err(|e| invalid(key, format!("cannot read {path}: {e}")))?;
    let value = content.trim();
    if value.is_empty() {
        return Err(invalid(key, format!("{path} is empty")));
    }
    Ok(Some(SecretString::from(value.to_owned())))
}

/// The PEM file at `path` (`None` for an empty setting), checked to hold at
/// least one PEM block.
pub(super) fn pem_file(key: &'static str, path: &str) -> Result<Option<String>, ConfigError> {
    let path = path.trim();
    if path.is_empty() {
        return Ok(None);
    }
    let content = std::fs::read_to_string(path)
        .map_err(|e| invalid(key, format!("cannot read {path}: {e}")))?;
    if !content.contains("-----BEGIN ") {
        return Err(invalid(key, format!("{path} holds no PEM block")));
    }
    Ok(Some(content))
}

/// `url` with its password replaced by `password` (percent-encoded as a URL
/// needs), for `*.password_file`.
pub(super) fn with_password(
    key: &'static str,
    url: &str,
    password: &str,
) -> Result<SecretString, ConfigError> {
    let mut parsed = url::Url::parse(url).map_err(|e| invalid(key, format!("not a URL: {e}")))?;
    if parsed.username().is_empty() {
        return Err(invalid(key, "the URL names no user for the password"));
    }
    parsed
        .set_password(Some(password))
        .map_err(|()| invalid(key, "this URL cannot hold a password"))?;
    Ok(SecretString::from(String::from(parsed)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

    use secrecy::ExposeSecret;

    use super::*;

    #[test]
    fn files_are_trimmed_and_empty_ones_refused() {
        let dir = std::env::temp_dir().join(format!("cw-secrets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("pw");
        std::fs::write(&f, "s3cret\n").unwrap();
        let s = secret_file("database.password_file", f.to_str().unwrap()).unwrap();
        assert_eq!(s.unwrap().expose_secret(), "s3cret");
        assert!(
            format!("{:?}", secret_file("k", f.to_str().unwrap()).unwrap()).contains("REDACTED")
        );
        std::fs::write(&f, "\n").unwrap();
        let e = secret_file("database.password_file", f.to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("database.password_file"), "{e}");
        let e = secret_file("amqp.url_file", "/nonexistent/x").unwrap_err();
        assert!(e.to_string().contains("amqp.url_file"), "{e}");
        assert!(secret_file("k", "").unwrap().is_none());
        std::fs::write(&f, "not pem").unwrap();
        assert!(pem_file("amqp.tls_ca_file", f.to_str().unwrap()).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_password_file_replaces_the_urls_password() {
        let u = with_password(
            "amqp.password_file",
            "amqp://app:old@h:5672/%2f",
            "p@ss:w/rd",
        )
        .unwrap();
        assert_eq!(u.expose_secret(), "amqp://app:p%40ss%3Aw%2Frd@h:5672/%2f");
        assert!(with_password("k", "amqp://h/%2f", "x").is_err());
    }
}

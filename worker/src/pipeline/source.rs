//! Reading the markdown a `file://` URI points at, confined to
//! `source.root`, bounded by the size limit.

use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use shared::ErrorCode;
use tokio::io::AsyncReadExt;

use crate::pipeline::failure::Failure;

/// How often a missing file is looked for again within the retry window.
const MISSING_FILE_POLL: Duration = Duration::from_millis(200);

/// Resolves `uri` to a path under `root`, without touching the filesystem.
pub fn resolve(uri: &str, root: &Path) -> Result<PathBuf, Failure> {
    let bad = |reason: String| {
        Failure::new(
            ErrorCode::InvalidMessage,
            format!("field `markdown_uri`: {reason}"),
        )
    };
    let rest = uri
        .strip_prefix("file://")
        .ok_or_else(|| bad("only file:// URIs are supported".into()))?;
    // file:///abs/path or file://localhost/abs/path; no other hosts.
    let path = if rest.starts_with('/') {
        rest
    } else if let Some(p) = rest.strip_prefix("localhost") {
        p
    } else {
        return Err(bad(format!("remote hosts are not supported: {uri:?}")));
    };
    if path.contains('?') || path.contains('#') {
        return Err(bad("query strings and fragments are not supported".into()));
    }
    let decoded = percent_decode(path).ok_or_else(|| bad("invalid percent-encoding".into()))?;
    let path = PathBuf::from(decoded);
    if !path.is_absolute()
        || path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
    {
        return Err(bad(format!(
            "path must be absolute without . or .. segments: {uri:?}"
        )));
    }
    if !path.starts_with(root) {
        return Err(bad(format!(
            "{uri:?} is outside the configured source root {}",
            root.display()
        )));
    }
    Ok(path)
}

/// Reads the file at `path` (already [`resolve`]d). A missing file is looked
/// for again for `retry` before it is `SOURCE_UNAVAILABLE`; a file over
/// `max_bytes` is `DOCUMENT_TOO_LARGE` without being read.
pub async fn read(
    path: &Path,
    root: &Path,
    max_bytes: u64,
    retry: Duration,
) -> Result<Vec<u8>, Failure> {
    let unavailable = |e: std::io::Error| {
        Failure::new(
            ErrorCode::SourceUnavailable,
            format!("cannot read markdown_uri file {}: {e}", path.display()),
        )
    };
    let deadline = Instant::now() + retry;
    let mut file = loop {
        match tokio::fs::File::open(path).await {
            Ok(f) => break f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && Instant::now() < deadline => {
                tokio::time::sleep(MISSING_FILE_POLL).await;
            }
            Err(e) => return Err(unavailable(e)),
        }
    };
    // A symlink under the root must not lead out of it.
    let real = tokio::fs::canonicalize(path).await.map_err(unavailable)?;
    let real_root = tokio::fs::canonicalize(root)
        .await
        .unwrap_or_else(|_| root.to_path_buf());
    if !real.starts_with(&real_root) {
        return Err(Failure::new(
            ErrorCode::InvalidMessage,
            format!(
                "field `markdown_uri`: {} resolves outside the configured source root",
                path.display()
            ),
        ));
    }
    let meta = file.metadata().await.map_err(unavailable)?;
    if !meta.is_file() {
        return Err(Failure::new(
            ErrorCode::SourceUnavailable,
            format!("markdown_uri {} is not a regular file", path.display()),
        ));
    }
    if meta.len() > max_bytes {
        return Err(too_large(meta.len(), max_bytes));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // The file may grow between stat and read: read at most one byte past the
    // limit to notice.
    (&mut file)
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .await
        .map_err(unavailable)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64, max_bytes));
    }
    Ok(bytes)
}

/// `DOCUMENT_TOO_LARGE` with both numbers.
pub fn too_large(size: u64, max: u64) -> Failure {
    Failure::new(
        ErrorCode::DocumentTooLarge,
        format!("markdown is {size} bytes, over limits.max_document_bytes = {max}"),
    )
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

    use super::*;

    #[test]
    fn uris_under_the_root_resolve() {
        let root = Path::new("/data/normalized");
        assert_eq!(
            resolve("file:///data/normalized/acme/v1.md", root).unwrap(),
            PathBuf::from("/data/normalized/acme/v1.md")
        );
        assert_eq!(
            resolve("file://localhost/data/normalized/a%20b.md", root).unwrap(),
            PathBuf::from("/data/normalized/a b.md")
        );
    }

    #[test]
    fn escapes_are_invalid_messages() {
        let root = Path::new("/data/normalized");
        for uri in [
            "file:///etc/passwd",
            "file:///data/normalized/../../etc/passwd",
            "file:///data/normalized-evil/x.md",
            "file://otherhost/data/normalized/x.md",
            "http://example.com/x.md",
            "file:///data/normalized/%zz",
        ] {
            let f = resolve(uri, root).unwrap_err();
            assert_eq!(f.code, ErrorCode::InvalidMessage, "{uri}");
        }
    }
}

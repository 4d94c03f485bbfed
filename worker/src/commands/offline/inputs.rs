//! The input files of an offline run: command-line paths, with directories
//! expanded into the Markdown (and HTML) files under them.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One input of an offline run.
#[derive(Debug)]
pub struct Input {
    /// The file, as given or as found under a directory argument.
    pub path: PathBuf,
    /// Set when `path` is a directory whose listing failed: it is reported as
    /// a failed input instead of silently contributing no files.
    pub listing_error: Option<io::Error>,
}

/// Expands command-line paths into input files, in argument order.
///
/// A path that is a directory (following a symbolic link the user named) is
/// walked recursively for `*.md`, `*.html`, `*.htm` and `*.tei.xml` files (extension compared ASCII
/// case-insensitively), sorted by path so that runs are reproducible whatever
/// order the file system lists entries in. Below a directory argument,
/// symbolic links are not followed and hidden entries (names starting with
/// `.`) are skipped. Any other path is an input as given, whatever its
/// extension; if it cannot be read, chunking it reports that.
pub fn collect_inputs(paths: &[PathBuf]) -> Vec<Input> {
    let mut inputs = Vec::new();
    for path in paths {
        if fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            let mut found = Vec::new();
            walk_markdown(path, &mut found);
            found.sort_by(|a, b| a.path.cmp(&b.path));
            inputs.extend(found);
        } else {
            inputs.push(Input {
                path: path.clone(),
                listing_error: None,
            });
        }
    }
    inputs
}

fn walk_markdown(dir: &Path, found: &mut Vec<Input>) {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            found.push(Input {
                path: dir.to_path_buf(),
                listing_error: Some(e),
            });
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                found.push(Input {
                    path: dir.to_path_buf(),
                    listing_error: Some(e),
                });
                continue;
            }
        };
        if entry.file_name().as_encoded_bytes().starts_with(b".") {
            continue;
        }
        let path = entry.path();
        // `DirEntry::file_type` does not follow symbolic links, so a link is
        // neither a directory nor a file here and is skipped.
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk_markdown(&path, found),
            Ok(t) if t.is_file() && is_markdown(&path) => found.push(Input {
                path,
                listing_error: None,
            }),
            Ok(_) => {}
            Err(e) => found.push(Input {
                path,
                listing_error: Some(e),
            }),
        }
    }
}

fn is_markdown(path: &Path) -> bool {
    path.extension().is_some_and(|ext| {
        ["md", "html", "htm"]
            .iter()
            .any(|x| ext.eq_ignore_ascii_case(x))
    }) || shared::tei::is_tei_name(&path.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_extension_is_case_insensitive() {
        assert!(is_markdown(Path::new("a/b.md")));
        assert!(is_markdown(Path::new("README.MD")));
        assert!(!is_markdown(Path::new("notes.txt")));
        assert!(!is_markdown(Path::new("md")));
    }
}

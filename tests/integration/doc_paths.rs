//! Every file a document names exists: the README, docs/*.md, fixtures' READMEs and the module
//! docs (`//!`) of the code. A file that moved and a document that still names it old is the
//! drift a new contributor trips over first.

use std::path::{Path, PathBuf};

/// The endings of the file names that are checked.
const CHECKED: &[&str] = &[".rs", ".toml", ".sh", ".py", ".md", ".tmux"];

/// Where a name may be relative to: the repository, `src/`, the document's own directory.
fn exists(root: &Path, document: &Path, name: &str) -> bool {
    let name = name.trim_start_matches("./");
    let base = document.parent().unwrap_or(root);
    [root.to_path_buf(), root.join("src"), base.to_path_buf()]
        .iter()
        .any(|dir| dir.join(name).exists())
}

/// The file names in backticks in `text` that look like paths of this repository.
fn named_paths(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    // Code fences are not quotes.
    let text = text.replace("```", "\n");
    for (index, part) in text.split('`').enumerate() {
        if index % 2 == 0 {
            continue;
        }
        let word = part.split([':', '#', ' ']).next().unwrap_or_default();
        let plausible = word.contains('/')
            && !word.contains('\n')
            && CHECKED.iter().any(|end| word.ends_with(end))
            && !word.contains(['<', '>', '*', '{', '$', '~', '…'])
            && !word.starts_with('/')
            && !word.starts_with("http")
            && !word.contains("..");
        if plausible {
            names.push(word.to_string());
        }
    }
    names
}

fn documents(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut markdown = vec![root.join("README.md")];
    for dir in [
        "docs",
        "fixtures/screens",
        "fixtures/holdout",
        "fixtures/divergences",
    ] {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            for entry in entries.flatten() {
                if entry.path().extension().is_some_and(|e| e == "md") {
                    markdown.push(entry.path());
                }
            }
        }
    }
    for path in markdown {
        if let Ok(text) = std::fs::read_to_string(&path) {
            out.push((path, text));
        }
    }
    let mut stack = vec![root.join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let docs: String = text
                    .lines()
                    .filter(|l| l.trim_start().starts_with("//!"))
                    .collect::<Vec<_>>()
                    .join("\n");
                out.push((path, docs));
            }
        }
    }
    out
}

#[test]
fn every_file_a_document_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut missing = Vec::new();
    for (document, text) in documents(root) {
        for name in named_paths(&text) {
            if !exists(root, &document, &name) {
                missing.push(format!(
                    "{}: `{name}`",
                    document.strip_prefix(root).unwrap_or(&document).display()
                ));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "named but missing:\n{}",
        missing.join("\n")
    );
}

#[test]
fn paths_are_read_from_backticks_only() {
    let names = named_paths("see `src/a.rs` and `docs/x.md#part`, not src/b.rs; `~/x.sh`, `a.rs`");
    assert_eq!(names, ["src/a.rs", "docs/x.md"]);
}

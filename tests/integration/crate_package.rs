//! The crate as crates.io would get it (`cargo package`): its manifest has what a published
//! crate needs (no warning), the list holds every file the build reads (`include_str!` /
//! `include_bytes!`) and none of the fixtures, and it is well under crates.io's 10 MB.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every `include_str!("…")` / `include_bytes!("…")` under `dir`, as paths from the crate root.
fn included_files(root: &Path, dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            included_files(root, &path, found);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for macro_name in ["include_str!(\"", "include_bytes!(\""] {
            for (at, _) in text.match_indices(macro_name) {
                let rest = &text[at + macro_name.len()..];
                let Some(end) = rest.find('"') else { continue };
                let target = path.parent().unwrap().join(&rest[..end]);
                let target = target.canonicalize().unwrap_or(target);
                found.push(target.strip_prefix(root).unwrap_or(&target).to_path_buf());
            }
        }
    }
}

#[test]
fn the_published_crate_holds_what_its_build_reads_and_no_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["package", "--list", "--allow-dirty", "--offline"])
        .current_dir(&root)
        .output()
        .expect("cargo package --list");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let listed: Vec<PathBuf> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(PathBuf::from)
        .collect();
    let mut included = Vec::new();
    included_files(&root, &root.join("src"), &mut included);
    assert!(included.len() > 10, "{included:?}");
    for file in &included {
        assert!(
            listed.contains(file),
            "{} is read by the build but not packaged",
            file.display()
        );
    }
    for required in [
        "Cargo.toml",
        "README.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "src/main.rs",
    ] {
        assert!(
            listed.contains(&PathBuf::from(required)),
            "{required} not packaged"
        );
    }
    assert!(
        !listed
            .iter()
            .any(|p| p.starts_with("fixtures") || p.starts_with("target")),
        "fixtures or build output packaged"
    );
    let bytes: u64 = listed
        .iter()
        .filter_map(|p| std::fs::metadata(root.join(p)).ok())
        .map(|m| m.len())
        .sum();
    assert!(bytes < 10_000_000, "{bytes} bytes: over crates.io's limit");
}

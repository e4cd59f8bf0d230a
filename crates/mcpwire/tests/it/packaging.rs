//! What crates.io needs of every crate this workspace publishes, checked on the manifests: a
//! name of the `mcpwire` family, a description, the license and its files, a README, where the
//! documentation and the repository are, keywords and categories crates.io accepts, and the
//! minimum supported Rust version. The crates that only serve the repository say
//! `publish = false`, and no published crate depends on one of them (except as a development
//! dependency without a version, which packaging drops).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn manifest(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every member of the workspace: its directory and manifest.
fn members() -> Vec<(PathBuf, toml::Table)> {
    let workspace = manifest(&root().join("Cargo.toml"));
    let members = workspace["workspace"]["members"].as_array().expect("workspace.members");
    members
        .iter()
        .map(|m| {
            let dir = root().join(m.as_str().expect("a member path"));
            let table = manifest(&dir.join("Cargo.toml"));
            (dir, table)
        })
        .collect()
}

fn publishes(table: &toml::Table) -> bool {
    table["package"].get("publish").and_then(toml::Value::as_bool) != Some(false)
}

fn name(table: &toml::Table) -> &str {
    table["package"]["name"].as_str().expect("package.name")
}

/// The category slugs this workspace uses, as crates.io lists them (crates.io/category_slugs).
const CATEGORIES: [&str; 13] = [
    "api-bindings",
    "asynchronous",
    "authentication",
    "command-line-utilities",
    "database",
    "development-tools",
    "development-tools::debugging",
    "development-tools::procedural-macro-helpers",
    "development-tools::testing",
    "encoding",
    "network-programming",
    "web-programming",
    "web-programming::http-server",
];

#[test]
fn every_published_crate_has_what_crates_io_needs() {
    let workspace = manifest(&root().join("Cargo.toml"));
    let shared = &workspace["workspace"]["package"];
    for key in ["license", "repository", "rust-version", "version", "edition"] {
        assert!(
            shared.get(key).and_then(toml::Value::as_str).is_some_and(|v| !v.is_empty()),
            "workspace.package.{key}"
        );
    }
    let mut published = 0;
    for (dir, table) in members() {
        if !publishes(&table) {
            continue;
        }
        published += 1;
        let name = name(&table);
        let package = table["package"].as_table().unwrap();
        assert!(name == "mcpwire" || name.starts_with("mcpwire-"), "{name}: not a name of the mcpwire family");
        let description = package.get("description").and_then(toml::Value::as_str).unwrap_or_default();
        assert!(description.len() >= 20, "{name}: a description of a sentence");
        for key in ["version", "edition", "license", "rust-version", "repository"] {
            assert!(
                package.get(key).and_then(toml::Value::as_table).is_some_and(|t| t.get("workspace").is_some()),
                "{name}: `{key}.workspace = true` (one value for the whole family)"
            );
        }
        assert_eq!(
            package.get("documentation").and_then(toml::Value::as_str),
            Some(format!("https://docs.rs/{name}").as_str()),
            "{name}: documentation"
        );
        let readme = package.get("readme").and_then(toml::Value::as_str).unwrap_or_else(|| panic!("{name}: readme"));
        let readme_text = std::fs::read_to_string(dir.join(readme)).unwrap_or_else(|e| panic!("{name}: {readme}: {e}"));
        assert!(readme_text.starts_with(&format!("# {name}\n")), "{name}: its README is headed by its name");
        for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
            let text = std::fs::read_to_string(dir.join(license)).unwrap_or_else(|e| panic!("{name}: {license}: {e}"));
            assert!(
                text.contains(if license == "LICENSE-MIT" { "MIT License" } else { "Apache License" }),
                "{name}: {license}"
            );
        }
        let keywords =
            package.get("keywords").and_then(toml::Value::as_array).unwrap_or_else(|| panic!("{name}: keywords"));
        assert!((1..=5).contains(&keywords.len()), "{name}: 1 to 5 keywords");
        for k in keywords {
            let k = k.as_str().unwrap();
            let valid = k.len() <= 20
                && k.starts_with(|c: char| c.is_ascii_alphabetic())
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '+');
            assert!(valid, "{name}: keyword `{k}` is not one crates.io accepts (ASCII, at most 20 characters)");
        }
        let categories =
            package.get("categories").and_then(toml::Value::as_array).unwrap_or_else(|| panic!("{name}: categories"));
        assert!((1..=5).contains(&categories.len()), "{name}: 1 to 5 categories");
        for c in categories.iter().map(|c| c.as_str().unwrap()) {
            assert!(CATEGORIES.contains(&c), "{name}: category {c} (add it to CATEGORIES if crates.io has it)");
        }
    }
    assert!(published >= 10, "the family: {published} published crates");
}

/// The crates of the workspace that `name` needs to build (its `[dependencies]`, and theirs).
fn needs<'a>(members: &'a [(PathBuf, toml::Table)], name: &str) -> Vec<&'a str> {
    let mut found: Vec<&str> = Vec::new();
    let mut next = vec![name.to_owned()];
    while let Some(n) = next.pop() {
        let Some((_, table)) = members.iter().find(|(_, t)| self::name(t) == n) else { continue };
        for dep in table.get("dependencies").and_then(toml::Value::as_table).into_iter().flat_map(|d| d.keys()) {
            if let Some((_, t)) = members.iter().find(|(_, t)| self::name(t) == dep) {
                if !found.contains(&self::name(t)) {
                    found.push(self::name(t));
                    next.push(dep.clone());
                }
            }
        }
    }
    found
}

/// crates.io takes a crate only when every dependency it names, development ones included, is
/// already there. Crates are published in the order of their `[dependencies]`, so a
/// development dependency on a crate of the family that the crate does not need to build
/// (published later, or a cycle) must be by path only: packaging then drops it.
#[test]
fn a_development_dependency_on_a_later_crate_has_no_version() {
    let members = members();
    let workspace = manifest(&root().join("Cargo.toml"));
    let shared = workspace["workspace"]["dependencies"].as_table().unwrap();
    for (_, table) in members.iter().filter(|(_, t)| publishes(t)) {
        let needed = needs(&members, name(table));
        let Some(dev) = table.get("dev-dependencies").and_then(toml::Value::as_table) else { continue };
        for (dep, spec) in dev {
            if !members.iter().any(|(_, t)| name(t) == dep) || needed.contains(&dep.as_str()) {
                continue;
            }
            let version =
                if spec.get("workspace").is_some() { shared[dep].get("version") } else { spec.get("version") };
            assert!(
                version.is_none(),
                "{}: the development dependency {dep} has a version; give it by path only",
                name(table)
            );
        }
    }
}

#[test]
fn no_published_crate_needs_one_that_is_not() {
    let members = members();
    let unpublished: Vec<&str> = members.iter().filter(|(_, t)| !publishes(t)).map(|(_, t)| name(t)).collect();
    assert!(unpublished.contains(&"mcpwire-bench") && unpublished.contains(&"mcpwire-testkit"));
    let workspace = manifest(&root().join("Cargo.toml"));
    let shared = workspace["workspace"]["dependencies"].as_table().unwrap();
    for (_, table) in members.iter().filter(|(_, t)| publishes(t)) {
        for section in ["dependencies", "build-dependencies", "dev-dependencies"] {
            let Some(deps) = table.get(section).and_then(toml::Value::as_table) else { continue };
            for (dep, spec) in deps {
                if !unpublished.contains(&dep.as_str()) {
                    continue;
                }
                // Through the workspace, or directly: a version would make packaging keep it.
                let inherited = spec.get("workspace").is_some();
                let version = if inherited { shared[dep].get("version") } else { spec.get("version") };
                assert!(
                    section == "dev-dependencies" && version.is_none(),
                    "{} needs the unpublished {dep} in [{section}]{}",
                    name(table),
                    if version.is_some() { " with a version" } else { "" }
                );
            }
        }
    }
}

/// A release changes the family's version in one manifest, the workspace's (docs/RELEASING.md):
/// no crate names a version of another crate of the workspace itself.
#[test]
fn only_the_workspace_names_the_family_s_version() {
    for (dir, table) in members() {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(!text.contains("version = \"="), "{}: take the family's crates from the workspace", name(&table));
    }
}

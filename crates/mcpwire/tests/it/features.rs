//! The feature table of the crate's documentation (`src/lib.rs`, "Features") must tell the
//! truth about `Cargo.toml`: the same features, and the same ones on by default. The
//! sentence "every feature but ..." of the documentation and the README too.

use std::collections::BTreeSet;
use std::path::Path;

fn read(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The features of `Cargo.toml` (without `default`), and those `default` turns on, directly
/// or through the features it names.
fn manifest_features() -> (BTreeSet<String>, BTreeSet<String>) {
    let manifest: toml::Table = toml::from_str(&read("Cargo.toml")).expect("Cargo.toml parses");
    let features = manifest["features"].as_table().expect("[features]");
    let names = |feature: &str| -> Vec<String> {
        let list = features[feature].as_array().unwrap_or_else(|| panic!("feature {feature} is a list"));
        // `dep:x` and `crate/feature` are not features of this crate.
        list.iter()
            .map(|v| v.as_str().expect("a feature is a string").to_owned())
            .filter(|f| !f.starts_with("dep:") && !f.contains('/'))
            .collect()
    };
    let all: BTreeSet<String> = features.keys().filter(|k| *k != "default").cloned().collect();
    let mut on = BTreeSet::new();
    let mut todo = names("default");
    while let Some(feature) = todo.pop() {
        if on.insert(feature.clone()) {
            todo.extend(names(&feature));
        }
    }
    (all, on)
}

/// The rows of the documentation's feature table: each feature and whether it says it is on
/// by default.
fn documented_features() -> Vec<(String, bool)> {
    let lib = read("src/lib.rs");
    let section = lib.split("//! # Features").nth(1).expect("src/lib.rs has a `# Features` section");
    let rows: Vec<(String, bool)> = section
        .lines()
        .skip(1) // the rest of the heading's line
        .take_while(|line| line.starts_with("//!"))
        .filter_map(|line| line.strip_prefix("//! | `"))
        .map(|row| {
            let cells: Vec<&str> = row.trim_end().trim_end_matches('|').split('|').map(str::trim).collect();
            let name = cells[0].trim_end_matches('`').to_owned();
            let default = match *cells.last().unwrap() {
                "yes" => true,
                "no" => false,
                other => panic!("the row of `{name}` says {other:?} as its default: yes or no"),
            };
            (name, default)
        })
        .collect();
    assert!(!rows.is_empty(), "no feature table found in src/lib.rs");
    rows
}

#[test]
fn the_feature_table_lists_every_feature_once() {
    let (all, _) = manifest_features();
    let rows = documented_features();
    let documented: BTreeSet<String> = rows.iter().map(|(name, _)| name.clone()).collect();
    assert_eq!(documented.len(), rows.len(), "a feature is listed twice: {rows:?}");
    assert_eq!(documented, all, "the table of src/lib.rs and the [features] of Cargo.toml differ");
}

#[test]
fn the_feature_table_tells_which_features_are_on_by_default() {
    let (_, on) = manifest_features();
    let wrong: Vec<String> = documented_features()
        .into_iter()
        .filter(|(name, default)| *default != on.contains(name))
        .map(|(name, default)| {
            let (says, is) = if default { ("yes", "off") } else { ("no", "on") };
            format!("`{name}`: the table says {says}, Cargo.toml's `default` leaves it {is}")
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_docs_say_which_features_default_leaves_off() {
    let (all, on) = manifest_features();
    let off: Vec<String> = all.difference(&on).map(|f| format!("`{f}`")).collect();
    let list = match off.split_last() {
        None => panic!("`default` turns on every feature: say so in src/lib.rs and the README"),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    };
    let sentence = format!("every feature but {list}");
    for (file, text) in [("src/lib.rs", read("src/lib.rs")), ("README.md", read("../../README.md"))] {
        // The sentence may be wrapped over lines (and, in src/lib.rs, behind `//!`).
        let words: Vec<&str> = text.split_whitespace().filter(|w| *w != "//!").collect();
        assert!(words.join(" ").contains(&sentence), "{file} should say \"{sentence}\" of `default`");
    }
}

//! The runtime's folders are layers, and imports only point down: a lower
//! layer never names a higher one, so there are no cycles between folders.
//! This test reads the sources and enforces it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each top-level module of `src/` and its layer, lowest first. Modules of
/// one layer may not use each other either, except inside one folder.
/// `__private`, what generated code reaches, sits above every layer: it
/// may gather from all of them, and none of them may use it. `guide`
/// holds documentation pages only, and nothing may use it.
const LAYERS: &[(&str, u8)] = &[
    ("log", 0),
    ("sync", 0),
    ("wire", 1),
    ("spec", 1),
    // W3C Trace Context: a format, like the wire's, that dispatch reads and
    // peers and transports write.
    ("otel", 1),
    ("catalog", 2),
    ("dispatch", 3),
    ("peer", 4),
    ("transport", 5),
    ("mcp", 6),
    ("lsp", 6),
    ("__private", 7),
    ("guide", 8),
];

fn layer(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(name, _)| *name == module).map(|(_, layer)| *layer)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its comments (doc links may name anything).
fn code(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::<segment>` in `code`.
fn crate_paths(code: &str) -> Vec<String> {
    code.match_indices("crate::")
        .filter(|(at, _)| !code[..*at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$'))
        .map(|(at, _)| code[at + "crate::".len()..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
        .collect()
}

#[test]
fn imports_only_point_down() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    let mut edges: BTreeMap<(String, String), usize> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let module =
            relative.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_owned();
        if module == "lib" {
            continue; // the root re-exports everything
        }
        let Some(own) = layer(&module) else {
            problems.push(format!("{}: module `{module}` has no layer; add it to LAYERS", relative.display()));
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for target in crate_paths(&code(&text)) {
            if target == module {
                continue;
            }
            match layer(&target) {
                Some(theirs) if theirs < own => *edges.entry((module.clone(), target)).or_default() += 1,
                Some(_) => problems.push(format!(
                    "{}: `{module}` (layer {own}) uses `crate::{target}`, which is not below it",
                    relative.display()
                )),
                None => problems.push(format!(
                    "{}: `crate::{target}` is not a layer module (use the module path, not a root re-export)",
                    relative.display()
                )),
            }
        }
    }
    assert!(problems.is_empty(), "layering violations:\n{}", problems.join("\n"));
    // The expected shape: each layer reaches the ones below.
    for (from, to) in [("catalog", "spec"), ("dispatch", "wire"), ("peer", "dispatch"), ("transport", "peer")] {
        assert!(edges.contains_key(&(from.to_owned(), to.to_owned())), "{from} -> {to} expected; edges: {edges:?}");
    }
}

#[test]
fn the_scanner_sees_paths_and_skips_comments() {
    assert_eq!(crate_paths("use crate::peer::Peer; x = crate::wire::E;"), ["peer", "wire"]);
    assert_eq!(crate_paths("$crate::x; my_crate::y"), Vec::<String>::new());
    assert_eq!(code("let a = 1; // see crate::peer\n/// [`P`](crate::Peer)"), "let a = 1; \n");
}

/// Everything generated code reaches is public through one hidden module,
/// `__private` (declared in `lib.rs`), and nowhere else: a `#[doc(hidden)]`
/// item anywhere else would be a public path outside it (a hidden method
/// on a public type, a hidden module under a public one).
#[test]
fn only_the_private_module_is_hidden() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut hidden = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let code = code(&text);
        let lines: Vec<&str> = code.lines().collect();
        for (index, line) in lines.iter().enumerate() {
            if !line.contains("doc(hidden)") {
                continue;
            }
            let next = lines[index + 1..].iter().find(|line| !line.trim().is_empty()).map_or("", |line| line.trim());
            hidden.push(format!("{}: {next}", file.strip_prefix(&src).unwrap().display()));
        }
    }
    assert_eq!(hidden, ["lib.rs: pub mod __private;"], "#[doc(hidden)] outside `__private`");
}

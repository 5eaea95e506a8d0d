//! One direction of dependency: the domain, then the store, then the runner,
//! then the engine, then the CLI and the desktop shell. A module may use its
//! own layer and the layers below it, never one above.
//!
//! One library crate keeps the binary, the desktop app and the integration
//! tests on one API and one compile unit; this test gives the guarantee a
//! crate graph would give for paths: it reads every `src/**/*.rs`, resolves
//! each `crate::…` path (and each `super::…` path that climbs to the crate
//! root) to the top-level module it names, and fails listing `file:line` for
//! every reference to a higher layer. It also fails for a top-level module
//! missing from [`LAYERS`], and for a desktop-shell path into the store or
//! the runner (the shell is an adapter over the engine and the domain).

use std::fmt;
use std::path::{Path, PathBuf};

/// Layers, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Layer {
    /// Pure types and rules: time is an argument, no IO.
    Domain,
    /// SQLite: the only module that sees SQL.
    Store,
    /// Agent processes and timers: the effects.
    Runner,
    /// Route engine: commits what the domain plans, then runs the effects.
    Engine,
}

/// Every top-level module of the library and its layer: the one table.
const LAYERS: &[(&str, Layer)] = &[
    ("account", Layer::Domain),
    ("agent", Layer::Domain),
    ("amount", Layer::Domain),
    ("ascii_regex", Layer::Domain),
    ("catalogue", Layer::Domain),
    ("classification", Layer::Domain),
    ("clock", Layer::Domain),
    ("controls", Layer::Domain),
    ("evaluator", Layer::Domain),
    ("evidence", Layer::Domain),
    ("policy", Layer::Domain),
    ("profile", Layer::Domain),
    ("route", Layer::Domain),
    ("safety", Layer::Domain),
    ("simulation", Layer::Domain),
    ("timing", Layer::Domain),
    ("store", Layer::Store),
    ("keyring", Layer::Store),
    ("runner", Layer::Runner),
    ("scheduler", Layer::Runner),
    ("engine", Layer::Engine),
];

/// The desktop shell sits on top and may use only these layers: it adapts
/// the engine's API and the domain's types, never the store or the runner.
const SHELL_MAY_USE: &[Layer] = &[Layer::Domain, Layer::Engine];

fn layer_of(module: &str) -> Option<Layer> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
}

/// One reference that breaks the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Violation {
    file: String,
    line: usize,
    what: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.what)
    }
}

/// A path to a top-level module found in source: `(line, module)`.
type Reference = (usize, String);

/// The source with comments, string and char literals blanked to spaces
/// (newlines kept), so only code is scanned and line numbers still match.
pub(crate) fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && !ident_before(&chars, i) {
            // A raw string: r"…" or r#"…"#.
            let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let mut j = i + 2 + hashes;
            while j < chars.len() && !chars[j..].starts_with(&close) {
                j += 1;
            }
            let end = (j + close.len()).min(chars.len());
            out.extend(chars[i..end].iter().map(|c| blank(*c)));
            i = end;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let skip = if chars[i] == '\\' { 2 } else { 1 };
                for k in 0..skip {
                    if let Some(c) = chars.get(i + k) {
                        out.push(blank(*c));
                    }
                }
                i += skip;
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A char literal ('{', '\n'); anything else is a lifetime.
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '\'' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            out.extend(chars[i..end].iter().map(|c| blank(*c)));
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The identifiers a path names right after `rest` begins: `x` for `x::…`,
/// and the first segment of each item of a group `{a::…, b}`.
fn first_segments(rest: &str) -> Vec<String> {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let mut names = Vec::new();
        let mut depth = 0;
        let mut item_start = true;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                c if item_start && is_ident(c) => {
                    let name: String = group[i..].chars().take_while(|c| is_ident(*c)).collect();
                    names.push(name);
                    item_start = false;
                }
                c if item_start && !c.is_whitespace() => item_start = false,
                _ => {}
            }
        }
        return names;
    }
    let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
    if name.is_empty() {
        Vec::new()
    } else {
        vec![name]
    }
}

/// Every top-level module that `prefix::…` paths in `code` name, where
/// `prefix` is `crate` or `recourse`.
fn absolute_references(code: &str, prefix: &str) -> Vec<Reference> {
    let needle = format!("{prefix}::");
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(&needle) {
        let start = from + at;
        from = start + needle.len();
        let before = code[..start].chars().next_back();
        // `$crate` in a macro is this crate too; `foo_crate::` is not.
        if before.is_some_and(|c| is_ident(c) || c == ':') {
            continue;
        }
        let line = line_at(code, start);
        for name in first_segments(&code[from..]) {
            found.push((line, name));
        }
    }
    found
}

/// The 1-based line of byte offset `at`.
fn line_at(code: &str, at: usize) -> usize {
    code[..at].matches('\n').count() + 1
}

/// Every top-level module that `super::…` paths in `code` reach by climbing
/// to the crate root. `module` is the file's module path (`["engine",
/// "flow"]`); inline `mod x {` blocks deepen it while they are open.
fn super_references(code: &str, module: &[String]) -> Vec<Reference> {
    let mut found = Vec::new();
    let mut depth = 0usize;
    // Brace depths at which inline modules were opened.
    let mut inline: Vec<usize> = Vec::new();
    let mut offset = 0;
    for (n, line) in code.split('\n').enumerate() {
        let line_start = offset;
        offset += line.len() + 1;
        let mut from = 0;
        while let Some(at) = line[from..].find("super::") {
            let start = from + at;
            if line[..start].chars().next_back().is_some_and(is_ident) {
                from = start + 1;
                continue;
            }
            let mut rest = &line[start..];
            let mut climbs = 0;
            while let Some(r) = rest.strip_prefix("super::") {
                climbs += 1;
                rest = r.trim_start();
            }
            from = line.len() - rest.len();
            if climbs >= module.len() + inline.len() {
                // A group may continue on the following lines.
                for name in first_segments(&code[line_start + from..]) {
                    found.push((n + 1, name));
                }
            }
        }
        let trimmed = line.trim_start();
        let opens_mod = ["mod ", "pub mod ", "pub(crate) mod "]
            .iter()
            .any(|p| trimmed.starts_with(p))
            && trimmed.trim_end().ends_with('{');
        for c in line.chars() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if inline.last() == Some(&depth) {
                        inline.pop();
                    }
                }
                _ => {}
            }
        }
        if opens_mod {
            inline.push(depth - 1);
        }
    }
    found
}

/// The module path of a library file (`src/engine/flow.rs` → `engine::flow`);
/// `None` for the crate root and for the binary (`main.rs`, `cli/`).
fn module_path(relative: &Path) -> Option<Vec<String>> {
    let parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    match parts.first().map(String::as_str) {
        None | Some("lib.rs" | "main.rs" | "cli") => return None,
        Some(_) => {}
    }
    let mut path: Vec<String> = parts
        .iter()
        .map(|p| p.strip_suffix(".rs").unwrap_or(p).to_string())
        .collect();
    if path.last().map(String::as_str) == Some("mod") {
        path.pop();
    }
    Some(path)
}

/// Violations in one library file, `relative` to `src/`.
fn check_library_file(relative: &Path, source: &str) -> Vec<Violation> {
    let Some(module) = module_path(relative) else {
        return Vec::new();
    };
    let file = format!("src/{}", relative.display());
    let Some(own) = layer_of(&module[0]) else {
        return vec![Violation {
            file,
            line: 1,
            what: format!("module `{}` is not in the LAYERS table", module[0]),
        }];
    };
    let code = code_only(source);
    let mut references = absolute_references(&code, "crate");
    references.extend(super_references(&code, &module));
    let mut violations = Vec::new();
    for (line, name) in references {
        let what = match layer_of(&name) {
            Some(theirs) if theirs > own => format!(
                "`{}` ({own:?}) uses `{name}` ({theirs:?}), a higher layer",
                module[0]
            ),
            Some(_) => continue,
            None => format!("`{name}` is not in the LAYERS table"),
        };
        violations.push(Violation {
            file: file.clone(),
            line,
            what,
        });
    }
    for (line, _) in absolute_references(&code, "recourse") {
        violations.push(Violation {
            file: file.clone(),
            line,
            what: "the library names itself as `recourse::`; use `crate::`".into(),
        });
    }
    violations
}

/// Violations in one desktop-shell file: a path into a layer it may not use.
fn check_shell_file(file: &str, source: &str) -> Vec<Violation> {
    let code = code_only(source);
    absolute_references(&code, "recourse")
        .into_iter()
        .filter_map(|(line, name)| {
            let what = match layer_of(&name) {
                Some(layer) if SHELL_MAY_USE.contains(&layer) => return None,
                Some(layer) => format!(
                    "the desktop shell uses `recourse::{name}` ({layer:?}); go through the engine"
                ),
                None => format!("`recourse::{name}` is not in the LAYERS table"),
            };
            Some(Violation {
                file: file.to_string(),
                line,
                what,
            })
        })
        .collect()
}

/// Top-level modules `lib.rs` declares.
fn declared_modules(lib: &str) -> Vec<String> {
    code_only(lib)
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("pub(crate) mod "))
                .or_else(|| line.strip_prefix("mod "))?;
            rest.strip_suffix(';').map(|m| m.trim().to_string())
        })
        .collect()
}

pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).expect("readable source directory") {
            let path = entry.expect("readable directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

pub(crate) fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn report(violations: &[Violation]) -> String {
    let lines: Vec<String> = violations.iter().map(Violation::to_string).collect();
    lines.join("\n")
}

#[test]
fn no_library_module_uses_a_higher_layer() {
    let src = root().join("src");
    let mut violations = Vec::new();
    for path in rust_files(&src) {
        let source = std::fs::read_to_string(&path).expect("readable source file");
        let relative = path.strip_prefix(&src).expect("under src/");
        violations.extend(check_library_file(relative, &source));
    }
    assert!(violations.is_empty(), "\n{}", report(&violations));
}

#[test]
fn every_declared_module_has_a_layer_and_the_table_lists_no_other() {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).expect("readable lib.rs");
    let mut declared = declared_modules(&lib);
    declared.sort();
    let mut table: Vec<String> = LAYERS.iter().map(|(m, _)| m.to_string()).collect();
    table.sort();
    assert_eq!(
        declared, table,
        "lib.rs and LAYERS must list the same top-level modules"
    );
}

#[test]
fn the_desktop_shell_uses_only_the_engine_and_the_domain() {
    let shell = root().join("src-tauri");
    let mut violations = Vec::new();
    for dir in ["src", "tests"] {
        for path in rust_files(&shell.join(dir)) {
            let source = std::fs::read_to_string(&path).expect("readable source file");
            let file = path.strip_prefix(root()).unwrap().display().to_string();
            violations.extend(check_shell_file(&file, &source));
        }
    }
    assert!(violations.is_empty(), "\n{}", report(&violations));
}

// The scanner itself, on synthetic sources: each rule must really fail.

fn lines_of(violations: &[Violation]) -> Vec<usize> {
    violations.iter().map(|v| v.line).collect()
}

#[test]
fn an_upward_crate_path_is_reported_with_its_file_and_line() {
    let source = "use chrono::Utc;\nuse crate::route::RouteRow;\nuse crate::engine::Engine;\n";
    let violations = check_library_file(Path::new("store/routes.rs"), source);
    assert_eq!(
        violations.len(),
        1,
        "store may use the domain, not the engine"
    );
    assert_eq!(violations[0].file, "src/store/routes.rs");
    assert_eq!(violations[0].line, 3);
    assert!(violations[0].what.contains("`engine`"), "{}", violations[0]);
}

#[test]
fn an_upward_module_inside_a_use_group_is_reported() {
    let source = "use crate::{\n    evidence::Evidence,\n    runner::{self, RunReport},\n};\n";
    let violations = check_library_file(Path::new("evaluator.rs"), source);
    assert_eq!(
        violations
            .iter()
            .map(|v| v.what.contains("`runner`"))
            .collect::<Vec<_>>(),
        vec![true],
        "only the runner item of the group is upward: {violations:?}"
    );
}

#[test]
fn a_super_path_climbing_to_the_root_is_resolved_through_inline_modules() {
    let source = "\
use super::Exhausted;
#[cfg(test)]
mod tests {
    use super::*;
    use super::super::super::engine::Engine;
}
use super::super::store::Store;
";
    let violations = check_library_file(Path::new("policy/legacy.rs"), source);
    assert_eq!(
        lines_of(&violations),
        vec![5, 7],
        "`super::*` stays in policy; three climbs out of `policy::legacy::tests` and two out \
         of `policy::legacy` reach the root: {violations:?}"
    );
}

#[test]
fn paths_in_comments_and_strings_are_not_references() {
    let source = "\
//! Unlike [`crate::engine`], this module …
/* crate::runner */
const HELP: &str = \"see crate::engine::Engine\";
const RAW: &str = r#\"crate::store\"#;
const BRACE: char = '{';
fn f<'a>(x: &'a str) -> &'a str { x }
";
    assert_eq!(
        check_library_file(Path::new("timing.rs"), source),
        vec![],
        "only code is scanned"
    );
}

#[test]
fn a_module_missing_from_the_table_fails() {
    let violations = check_library_file(
        Path::new("newcomer/mod.rs"),
        "use crate::route::RouteRow;\n",
    );
    assert_eq!(lines_of(&violations), vec![1]);
    assert!(
        violations[0].what.contains("not in the LAYERS table"),
        "{}",
        violations[0]
    );
    let declared = declared_modules("pub mod agent;\nmod ascii_regex;\n// mod old;\n");
    assert_eq!(
        declared,
        vec!["agent", "ascii_regex"],
        "a commented-out module is not declared"
    );
}

#[test]
fn the_binary_and_the_crate_root_are_not_library_modules() {
    let upward = "use crate::cli::run;\nuse recourse::store::Store;\n";
    for file in ["main.rs", "cli/db.rs", "lib.rs"] {
        assert_eq!(
            check_library_file(Path::new(file), upward),
            vec![],
            "{file} sits above every layer"
        );
    }
}

#[test]
fn the_shell_may_not_reach_into_the_store_or_the_runner() {
    let source = "\
use recourse::engine::{Engine, EngineOptions};
use recourse::route::RouteState;
let db = recourse::store::default_db_path();
use recourse::{policy::FieldError, runner::run};
";
    let violations = check_shell_file("src-tauri/src/lib.rs", source);
    assert_eq!(
        lines_of(&violations),
        vec![3, 4],
        "engine and domain paths pass; store and runner paths fail: {violations:?}"
    );
}

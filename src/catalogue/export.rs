//! Sharing a local rule upstream: a patch for `src/catalogue/rules.toml`
//! and new files under `fixtures/catalogue/`, ready for `git apply`.
//!
//! An overriding rule replaces the block of the rule it overrides; a new
//! rule is appended. `overrides` and `reviewed` are local-only and dropped.

use serde::Serialize;

use super::schema::RuleSpec;

/// Where the built-in rules live in the repository.
pub const RULES_PATH: &str = "src/catalogue/rules.toml";
/// Lines of context around a change, as `diff -u` gives.
const CONTEXT: usize = 3;

/// A fixture file to add: its path under `fixtures/catalogue/` and text.
#[derive(Debug, Clone, PartialEq)]
pub struct NewFixture {
    pub path: String,
    pub text: String,
}

#[derive(Serialize)]
struct OneRule<'a> {
    rule: [&'a RuleSpec; 1],
}

/// The rule as a built-in `[[rule]]` block.
pub fn builtin_block(rule: &RuleSpec) -> String {
    let upstream = RuleSpec {
        overrides: None,
        reviewed: None,
        ..rule.clone()
    };
    toml::to_string(&OneRule { rule: [&upstream] })
        .expect("a rule of strings and numbers always serializes")
}

/// The patch that adds `rule` (and `fixtures`) to a repository whose
/// `rules.toml` reads `rules_source`.
pub fn patch(rules_source: &str, rule: &RuleSpec, fixtures: &[NewFixture]) -> String {
    let block = builtin_block(rule);
    let patched = match rule
        .overrides
        .as_deref()
        .and_then(|t| block_range(rules_source, t))
    {
        Some((start, end)) => format!(
            "{}{}{}",
            &rules_source[..start],
            block,
            &rules_source[end..]
        ),
        None => {
            let sep = if rules_source.ends_with("\n\n") {
                ""
            } else {
                "\n"
            };
            format!("{rules_source}{sep}{block}")
        }
    };
    let mut out = file_diff(RULES_PATH, rules_source, &patched);
    for fixture in fixtures {
        out.push_str(&new_file_diff(&fixture.path, &fixture.text));
    }
    out
}

/// Byte range of the `[[rule]]` block with `id`, without the blank lines
/// and section comments that follow it.
fn block_range(source: &str, id: &str) -> Option<(usize, usize)> {
    let id_line = format!("\nid = \"{id}\"\n");
    let at = source.find(&id_line)?;
    let start = source[..=at].rfind("[[rule]]\n")?;
    let after = at + id_line.len();
    let mut end = source[after..]
        .find("\n[[rule]]\n")
        .map_or(source.len(), |i| after + i + 1);
    // Leave the separating blank lines and comments to the next block.
    let body = &source[start..end];
    let kept = body
        .lines()
        .rev()
        .skip_while(|l| l.trim().is_empty() || l.starts_with('#'))
        .map(|l| l.len() + 1)
        .sum::<usize>();
    end = start + kept;
    Some((start, end))
}

/// A one-hunk unified diff between two versions of one file.
fn file_diff(path: &str, old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let max_suffix = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let start = prefix.saturating_sub(CONTEXT);
    let a_end = (a.len() - suffix + CONTEXT).min(a.len());
    let b_end = (b.len() - suffix + CONTEXT).min(b.len());
    let mut out = format!(
        "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -{} +{} @@\n",
        range(start, a_end - start),
        range(start, b_end - start)
    );
    for line in &a[start..prefix] {
        out.push_str(&format!(" {line}\n"));
    }
    for line in &a[prefix..a.len() - suffix] {
        out.push_str(&format!("-{line}\n"));
    }
    for line in &b[prefix..b.len() - suffix] {
        out.push_str(&format!("+{line}\n"));
    }
    for line in &a[a.len() - suffix..a_end] {
        out.push_str(&format!(" {line}\n"));
    }
    out
}

fn new_file_diff(path: &str, text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +{} @@\n",
        range(0, lines.len())
    );
    for line in lines {
        out.push_str(&format!("+{line}\n"));
    }
    out
}

/// `start,count` of a hunk side, 1-based (`start` is the line before an
/// empty side, as `diff -u` writes it).
fn range(start: usize, count: usize) -> String {
    if count == 0 {
        format!("{start},0")
    } else {
        format!("{},{count}", start + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "version = \"2026.1.1\"\n\n[[rule]]\nid = \"a.first.v1\"\nx = 1\n\n# ─── section\n\n[[rule]]\nid = \"a.second.v1\"\ny = 2\n[[rule.match]]\ntext = 'z'\n\n[[rule]]\nid = \"a.third.v1\"\n";

    #[test]
    fn an_override_replaces_only_the_block_of_its_rule() {
        let (start, end) = block_range(SOURCE, "a.second.v1").unwrap();
        assert_eq!(
            &SOURCE[start..end],
            "[[rule]]\nid = \"a.second.v1\"\ny = 2\n[[rule.match]]\ntext = 'z'\n"
        );
        let (start, end) = block_range(SOURCE, "a.first.v1").unwrap();
        assert_eq!(
            &SOURCE[start..end],
            "[[rule]]\nid = \"a.first.v1\"\nx = 1\n",
            "blank lines and the next section's comment stay with the next block"
        );
        assert!(block_range(SOURCE, "a.missing.v1").is_none());
    }

    #[test]
    fn a_change_is_one_hunk_with_three_lines_of_context() {
        let diff = file_diff("f.toml", "1\n2\n3\n4\n5\n6\n7\n", "1\n2\n3\n4\nX\n6\n7\n");
        assert_eq!(
            diff,
            "diff --git a/f.toml b/f.toml\n--- a/f.toml\n+++ b/f.toml\n@@ -2,6 +2,6 @@\n 2\n 3\n 4\n-5\n+X\n 6\n 7\n"
        );
    }

    #[test]
    fn a_new_file_is_all_added_lines() {
        assert_eq!(
            new_file_diff("fixtures/catalogue/codex/x.toml", "a\nb\n"),
            "diff --git a/fixtures/catalogue/codex/x.toml b/fixtures/catalogue/codex/x.toml\nnew file mode 100644\n--- /dev/null\n+++ b/fixtures/catalogue/codex/x.toml\n@@ -0,0 +1,2 @@\n+a\n+b\n"
        );
    }
}

//! Built-in and catalogue patterns compile with ASCII `\b \w \W \d \D`.
//!
//! A Unicode word boundary stops the regex crate's lazy DFA on the first
//! non-ASCII byte, and agent output is full of them (`⎿`, `·`, `…`): the
//! search then falls back to a backtracker that zeroes a visited-set sized
//! to the rest of the text on every search. Sanitizing 4 KiB of Claude Code
//! output cost about 500 µs that way. The texts matched are ASCII where these
//! escapes appear, so the patterns mean the same.

use regex::Regex;

/// Compiles `pattern` with ASCII classes (see [`ascii_classes`]).
pub(crate) fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    Regex::new(&ascii_classes(pattern))
}

/// Makes `\b`, `\w`, `\W`, `\d` and `\D` ASCII. Besides keeping the lazy
/// DFA running, an ASCII class under a bounded repeat (`\W{1,8}`,
/// `[\w.-]{1,80}`) compiles to a few states where the Unicode one needs
/// thousands (loading the catalogue took hundreds of milliseconds).
fn ascii_classes(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 32);
    let mut chars = pattern.chars().peekable();
    // Depth of nested `[...]` classes; inside one a class escape is spliced
    // in as ranges rather than as a bracketed class.
    let mut depth = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push('\\');
                    break;
                };
                match (next, depth) {
                    ('b', 0) => out.push_str("(?-u:\\b)"),
                    ('w', 0) => out.push_str("[0-9A-Za-z_]"),
                    ('W', 0) => out.push_str("[^0-9A-Za-z_]"),
                    ('d', 0) => out.push_str("[0-9]"),
                    ('D', 0) => out.push_str("[^0-9]"),
                    ('w', _) => out.push_str("0-9A-Za-z_"),
                    ('d', _) => out.push_str("0-9"),
                    _ => {
                        out.push('\\');
                        out.push(next);
                    }
                }
            }
            '[' => {
                depth += 1;
                out.push('[');
                // A `]` right after `[` or `[^` is a literal, not the end.
                if chars.next_if_eq(&'^').is_some() {
                    out.push('^');
                }
                if chars.next_if_eq(&']').is_some() {
                    out.push(']');
                }
            }
            ']' if depth > 0 => {
                depth -= 1;
                out.push(']');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_boundaries_and_classes_become_ascii_and_escapes_survive() {
        assert_eq!(ascii_classes(r"\bfoo\b"), r"(?-u:\b)foo(?-u:\b)");
        assert_eq!(
            ascii_classes(r"type\W{1,8}x\d+\w\D"),
            r"type[^0-9A-Za-z_]{1,8}x[0-9]+[0-9A-Za-z_][^0-9]"
        );
        assert_eq!(
            ascii_classes(r"a\\b\(\s\S"),
            r"a\\b\(\s\S",
            "an escaped backslash before b is not a boundary; \\s stays Unicode"
        );
    }

    #[test]
    fn class_escapes_inside_brackets_become_ranges() {
        assert_eq!(
            ascii_classes(r"models/[\w.-]{1,80}"),
            r"models/[0-9A-Za-z_.-]{1,80}"
        );
        assert_eq!(
            ascii_classes(r"[]\w][^]\d]\w"),
            r"[]0-9A-Za-z_][^]0-9][0-9A-Za-z_]",
            "a leading ] is a literal and does not close the class"
        );
        assert_eq!(
            ascii_classes(r"\[\w\]"),
            r"\[[0-9A-Za-z_]\]",
            "escaped brackets do not open or close a class"
        );
    }
}

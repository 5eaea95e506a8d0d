//! Control characters in text a person or a file gave us (names, prompts,
//! local rules): which characters a name may not hold, and how a terminal
//! is shown them. One definition, so the characters names refuse and the
//! characters printers escape cannot drift apart.
//!
//! Agent output needs none of this: evidence is stripped of terminal
//! escapes when it is sanitized (`evidence::sanitize`).

use std::borrow::Cow;

/// A character a terminal acts on instead of showing: every C0 control
/// (newline and tab included: a name with a newline forges an output line),
/// DEL, every C1 control (`U+009B` is a CSI on its own), the line and
/// paragraph separators, and the bidirectional marks, embeddings, overrides
/// and isolates, which reorder what is shown around them.
pub fn is_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with each [control character](is_control) written as its Rust
/// escape (`\n`, `\t`, `\u{1b}`, `\u{9b}`, `\u{202e}`), everything else as
/// it is: what every command-line printer shows of names, prompts and other
/// text from the user or an imported file.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_control(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Multi-line text (an agent's answer) as [`escape`] shows it, except that
/// its newlines and tabs stay what they are: the lines of an answer are
/// its own, and a script reading `recourse run`'s stdout wants them.
pub fn escape_text(text: &str) -> Cow<'_, str> {
    let shown = |c: char| is_control(c) && c != '\n' && c != '\t';
    if !text.chars().any(shown) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if shown(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// JSON text with the [control characters](is_control) serde leaves raw
/// (DEL, C1, the separators and bidirectional controls; it escapes C0
/// itself) written as `\uXXXX`. They only occur inside strings, where the
/// escape means the same character, so the document reads back the same.
pub fn escape_json(json: &str) -> Cow<'_, str> {
    let raw = |c: char| c >= '\u{7f}' && is_control(c);
    if !json.chars().any(raw) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if raw(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The first control character of `text` and its 1-based position in
/// characters, for an error that says what and where.
pub fn first_control(text: &str) -> Option<(char, usize)> {
    text.chars()
        .enumerate()
        .find(|(_, c)| is_control(*c))
        .map(|(i, c)| (c, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_title_clipboard_clear_c1_and_forged_lines() {
        let hostile = "a\u{1b}]0;owned\u{7}b\u{1b}]52;c;aGk=\u{7}\u{1b}[2J\u{9b}31m\nroute 9 succeeded\r\u{202e}x";
        let shown = escape(hostile);
        assert!(
            !shown.chars().any(is_control),
            "nothing a terminal acts on is left: {shown}"
        );
        assert_eq!(
            shown,
            r"a\u{1b}]0;owned\u{7}b\u{1b}]52;c;aGk=\u{7}\u{1b}[2J\u{9b}31m\nroute 9 succeeded\r\u{202e}x",
            "each control is written as its escape, in place"
        );
    }

    #[test]
    fn plain_text_is_not_copied() {
        assert!(matches!(
            escape("Daily driver — ünï 日本"),
            Cow::Borrowed(_)
        ));
        assert!(matches!(escape_json("{\"a\": \"é\"}"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_keeps_its_meaning_with_c1_and_bidi_escaped() {
        let value = serde_json::json!({ "name": "x\u{9b}2J\u{202e}\u{7f}\u{1b}" });
        let text = serde_json::to_string_pretty(&value).unwrap();
        let safe = escape_json(&text);
        assert!(!safe.chars().any(|c| c != '\n' && is_control(c)), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value, "the escapes stand for the same characters");
    }

    #[test]
    fn first_control_says_which_and_where() {
        assert_eq!(first_control("ab\u{1b}c"), Some(('\u{1b}', 3)));
        assert_eq!(first_control("é\u{85}"), Some(('\u{85}', 2)));
        assert_eq!(first_control("plain"), None);
    }
}

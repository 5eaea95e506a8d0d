//! One stdout line of an agent's JSON event stream, read as far as it can be.
//!
//! `serde_json` refuses two things the real CLIs print: nesting deeper than
//! its 128-level limit (an MCP tool's input or result) and lone surrogate
//! escapes (`"\ud83d"`, which Node's `JSON.stringify` writes for a string cut
//! mid-emoji). Such a line is still a tool call or an answer, and dropping it
//! would hide the tool from the safety gate. So a line the parser refuses is
//! mended and read again: values nested below [`MAX_DEPTH`] become a marker
//! string, lone surrogates and unknown escapes become U+FFFD, raw control
//! characters are escaped. The mend is one bounded pass over the line (no
//! recursion), and nothing an adapter reads lies that deep.
//!
//! A line that does not parse even then is [`Line::Unreadable`]: the adapter
//! must count it as possible effects.

use serde_json::Value;

use super::json_head::{nested_end, string_end};

/// Values nested deeper than this are replaced by [`TOO_DEEP`].
pub(crate) const MAX_DEPTH: usize = 64;
/// What stands for a value nested below [`MAX_DEPTH`].
pub(crate) const TOO_DEEP: &str = "(nested too deep to keep)";

#[derive(Debug, PartialEq)]
pub(crate) enum Line {
    /// Only whitespace: no event.
    Blank,
    Event(Value),
    /// Not JSON even after mending: what it held is unknown.
    Unreadable,
}

pub(crate) fn read(line: &str) -> Line {
    let line = line.trim();
    if line.is_empty() {
        return Line::Blank;
    }
    if let Ok(v) = serde_json::from_str(line) {
        return Line::Event(v);
    }
    match mend(line).and_then(|m| serde_json::from_str(&m).ok()) {
        Some(v) => Line::Event(v),
        None => Line::Unreadable,
    }
}

/// The line with deep values cut off and bad escapes replaced, or `None`
/// when its brackets or strings do not close (it is not JSON at all).
fn mend(line: &str) -> Option<String> {
    let b = line.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let end = string_end(b, i)?;
                mend_string(&b[i..end], &mut out);
                i = end;
            }
            b'{' | b'[' if depth == MAX_DEPTH => {
                let end = nested_end(b, i)?;
                out.push(b'"');
                out.extend_from_slice(TOO_DEEP.as_bytes());
                out.push(b'"');
                i = end;
            }
            c @ (b'{' | b'[') => {
                depth += 1;
                out.push(c);
                i += 1;
            }
            c @ (b'}' | b']') => {
                depth = depth.checked_sub(1)?;
                out.push(c);
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Copies one string literal (quotes included), replacing what the parser
/// refuses: a lone surrogate or an unknown escape by `\ufffd`, a raw control
/// character by its escape. Cuts fall only at ASCII bytes, so UTF-8 stays whole.
fn mend_string(s: &[u8], out: &mut Vec<u8>) {
    const REPLACEMENT: &[u8] = b"\\ufffd";
    let last = s.len() - 1; // the closing quote
    out.push(b'"');
    let mut i = 1;
    while i < last {
        match s[i] {
            b'\\' => match s.get(i + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                    out.extend_from_slice(&s[i..i + 2]);
                    i += 2;
                }
                Some(b'u') => match hex4(s, i + 2) {
                    Some(high @ 0xD800..=0xDBFF) => {
                        let pair = (s.get(i + 6) == Some(&b'\\') && s.get(i + 7) == Some(&b'u'))
                            .then(|| hex4(s, i + 8))
                            .flatten()
                            .filter(|low| (0xDC00..=0xDFFF).contains(low));
                        if pair.is_some() {
                            out.extend_from_slice(&s[i..i + 12]);
                            i += 12;
                        } else {
                            tracing::debug!("lone surrogate \\u{high:x} replaced");
                            out.extend_from_slice(REPLACEMENT);
                            i += 6;
                        }
                    }
                    Some(0xDC00..=0xDFFF) => {
                        out.extend_from_slice(REPLACEMENT);
                        i += 6;
                    }
                    Some(_) => {
                        out.extend_from_slice(&s[i..i + 6]);
                        i += 6;
                    }
                    None => {
                        out.extend_from_slice(REPLACEMENT);
                        i += 2;
                    }
                },
                _ => {
                    out.extend_from_slice(REPLACEMENT);
                    i += 2;
                }
            },
            c if c < 0x20 => {
                out.extend_from_slice(format!("\\u{c:04x}").as_bytes());
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out.push(b'"');
}

/// Four hex digits at `at`, as a number.
fn hex4(s: &[u8], at: usize) -> Option<u32> {
    let digits = s.get(at..at + 4)?;
    let text = std::str::from_utf8(digits).ok()?;
    if !text.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(text, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize, inner: &str) -> String {
        format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
    }

    fn event(line: &str) -> Value {
        match read(line) {
            Line::Event(v) => v,
            other => panic!("{other:?} for {line:.120}"),
        }
    }

    #[test]
    fn nesting_past_the_parsers_limit_keeps_the_event_and_marks_the_deep_part() {
        for depth in [129, 200, 100_000] {
            let line = format!(
                r#"{{"type":"item.completed","item":{{"type":"mcp_tool_call","arguments":{}}}}}"#,
                nested(depth, r#"{"k":"v"}"#)
            );
            assert!(
                serde_json::from_str::<Value>(&line).is_err(),
                "the parser itself refuses depth {depth}, or this test tests nothing"
            );
            let v = event(&line);
            assert_eq!(v["type"], "item.completed");
            assert_eq!(v["item"]["type"], "mcp_tool_call");
            let mut at = &v["item"]["arguments"];
            let mut levels = 0;
            while let Some(first) = at.get(0) {
                at = first;
                levels += 1;
            }
            assert_eq!(at, TOO_DEEP, "the cut is marked, not silently dropped");
            assert_eq!(levels, MAX_DEPTH - 2, "kept down to the limit");
        }
    }

    #[test]
    fn lone_surrogates_become_the_replacement_character() {
        // A string cut mid-emoji as Node's JSON.stringify writes it.
        let v = event(r#"{"type":"text","part":{"text":"done \ud83d","x":"\ude00 y"}}"#);
        assert_eq!(v["part"]["text"], "done \u{fffd}");
        assert_eq!(v["part"]["x"], "\u{fffd} y");
        // A whole pair stays the emoji; an escaped backslash is text, not an escape.
        let v = event(r#"{"a":"\ud83d\ude00 \ud83d","b":"\\ud83d","c":"\ud83d\u0041"}"#);
        assert_eq!(v["a"], "\u{1f600} \u{fffd}");
        assert_eq!(v["b"], "\\ud83d");
        assert_eq!(
            v["c"], "\u{fffd}A",
            "a high surrogate before a non-surrogate"
        );
    }

    #[test]
    fn bad_escapes_and_raw_control_characters_are_mended() {
        let v = event("{\"a\":\"x\\qy\",\"b\":\"tab\there\",\"c\":\"\\u12\"}");
        assert_eq!(v["a"], "x\u{fffd}y");
        assert_eq!(v["b"], "tab\there");
        assert_eq!(v["c"], "\u{fffd}12");
    }

    #[test]
    fn blank_lines_are_noise_and_broken_json_is_unreadable() {
        assert_eq!(read("   \t"), Line::Blank);
        for line in [
            "not json at all",
            r#"{"type":"assistant","message":{"content":["#,
            r#"{"type":"tool_use"]"#,
            "]]]]",
            r#"{"a":"unterminated"#,
        ] {
            assert_eq!(read(line), Line::Unreadable, "{line}");
        }
    }

    #[test]
    fn a_plain_line_is_read_as_it_is() {
        let line = r#"{"type":"init","session_id":"s","n":[1,{"x":null}]}"#;
        assert_eq!(event(line), serde_json::from_str::<Value>(line).unwrap());
    }
}

//! Reading the head of a JSON object line that was cut at the runner's line
//! bound: its top-level scalar fields up to the cut, and which field the cut
//! fell in. Claude Code 2.1.x prints a `result` event with `type` near the
//! end, after the (possibly huge) `result` text, so the head of a 100 MB
//! answer says what it is only through the fields before that text.

use std::collections::BTreeMap;

use serde_json::Value;

/// What the head of a cut JSON object holds.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Head {
    /// Top-level fields whose value is a string, number, bool or null and
    /// ended before the cut.
    pub fields: BTreeMap<String, Value>,
    /// The top-level field the cut fell in.
    pub cut_in: Option<String>,
    /// For a string field the cut fell in: its start, decoded.
    pub cut_text: Option<String>,
}

impl Head {
    pub fn str(&self, key: &str) -> Option<&str> {
        self.fields.get(key)?.as_str()
    }

    pub fn bool(&self, key: &str) -> Option<bool> {
        self.fields.get(key)?.as_bool()
    }
}

/// `None` when `head` does not start as a JSON object.
pub(crate) fn scan(head: &str) -> Option<Head> {
    let b = head.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut out = Head::default();
    loop {
        i = skip_ws(b, i + 1);
        if b.get(i) != Some(&b'"') {
            return Some(out); // `}`, the cut, or not JSON: what was read stands
        }
        let Some(key_end) = string_end(b, i) else {
            return Some(out);
        };
        let Ok(key) = serde_json::from_str::<String>(&head[i..key_end]) else {
            return Some(out);
        };
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return Some(out);
        }
        i = skip_ws(b, i + 1);
        let value_end = match b.get(i) {
            Some(b'"') => string_end(b, i),
            Some(b'{' | b'[') => nested_end(b, i),
            Some(_) => scalar_end(b, i),
            None => None,
        };
        let Some(end) = value_end else {
            if b.get(i) == Some(&b'"') {
                out.cut_text = Some(partial_string(&head[i + 1..]));
            }
            out.cut_in = Some(key);
            return Some(out);
        };
        if let Ok(v @ (Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null)) =
            serde_json::from_str::<Value>(&head[i..end])
        {
            out.fields.insert(key, v);
        }
        i = skip_ws(b, end);
        if b.get(i) != Some(&b',') {
            return Some(out);
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// Index just past the closing quote of the string starting at `i`.
pub(super) fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

/// Index just past the object or array starting at `i`.
pub(super) fn nested_end(b: &[u8], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut j = i;
    while j < b.len() {
        match b[j] {
            b'"' => {
                j = string_end(b, j)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// A number, `true`, `false` or `null` ends at `,` or `}`; at the cut it
/// may be incomplete, so it is not taken.
fn scalar_end(b: &[u8], i: usize) -> Option<usize> {
    (i..b.len()).find(|&j| matches!(b[j], b',' | b'}') || b[j].is_ascii_whitespace())
}

/// The start of a string cut before its closing quote, decoded as far as
/// it is whole, at most 4 KiB of it: evidence needs its first words.
fn partial_string(rest: &str) -> String {
    let mut end = rest.len().min(4096);
    while !rest.is_char_boundary(end) {
        end -= 1;
    }
    let mut body = &rest[..end];
    // Drop a cut escape (`\`, `\u00`) so the rest decodes.
    for _ in 0..6 {
        if let Ok(s) = serde_json::from_str::<String>(&format!("\"{body}\"")) {
            return s;
        }
        body = &body[..body.len() - body.chars().last().map_or(0, char::len_utf8)];
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_before_a_cut_result_text_are_read_and_the_cut_field_named() {
        let head = r#"{"duration_api_ms":0,"usage":{"input_tokens":0,"iterations":[],"x":"}"},"is_error":true,"subtype":"success","api_error_status":500,"result":"API Error: 500 \"Internal\" server error. xxxxxxxx"#;
        let h = scan(head).unwrap();
        assert_eq!(h.bool("is_error"), Some(true));
        assert_eq!(h.str("subtype"), Some("success"));
        assert_eq!(h.fields.get("api_error_status"), Some(&Value::from(500)));
        assert!(!h.fields.contains_key("usage"), "only scalars are kept");
        assert_eq!(h.cut_in.as_deref(), Some("result"));
        assert_eq!(
            h.cut_text.as_deref(),
            Some(r#"API Error: 500 "Internal" server error. xxxxxxxx"#)
        );
    }

    #[test]
    fn a_cut_inside_an_escape_or_a_nested_value_is_handled() {
        let h = scan(r#"{"a":1,"result":"ab\u00"#).unwrap();
        assert_eq!(h.cut_text.as_deref(), Some("ab"));
        let h = scan(r#"{"a":1,"message":{"content":[{"text":"xx"#).unwrap();
        assert_eq!(h.cut_in.as_deref(), Some("message"));
        assert_eq!(h.cut_text, None);
        assert_eq!(h.fields.get("a"), Some(&Value::from(1)));
        let h = scan(r#"{"a":12"#).unwrap();
        assert_eq!(
            h.fields.get("a"),
            None,
            "a number at the cut may be incomplete"
        );
        assert_eq!(scan("not json"), None);
    }
}

//! What a profile or candidate name may be. Names are shown everywhere (the
//! app, every command, route history), so a name is trimmed, stored in
//! Unicode NFC, and holds no [control character](crate::controls); and two
//! names that differ only by invisible characters (zero-width space, joiner,
//! soft hyphen, variation selectors: Unicode's Default_Ignorable_Code_Point)
//! or by normalization (`é` as one character or as `e` + accent) are the
//! same name, so an imported document cannot add a look-alike.

use icu_normalizer::ComposingNormalizerBorrowed;
use icu_properties::props::DefaultIgnorableCodePoint;
use icu_properties::CodePointSetData;

use crate::policy::FieldError;

/// `name` trimmed and in NFC, as it is stored.
pub fn normalize(name: &str) -> String {
    ComposingNormalizerBorrowed::new_nfc()
        .normalize(name.trim())
        .into_owned()
}

/// The error for a name holding a control character, at `path`; `what`
/// is `a profile name` or `a candidate name`.
pub fn control_error(path: &str, name: &str, what: &str) -> Option<FieldError> {
    let (c, at) = crate::controls::first_control(name)?;
    Some(FieldError::new(
        path,
        format!(
            "{what} cannot hold control characters (found U+{:04X} at character {at})",
            u32::from(c)
        ),
    ))
}

/// What a name looks like: NFC without invisible characters. Two names
/// with the same key are one name to a reader.
pub fn look_alike_key(name: &str) -> String {
    let invisible = CodePointSetData::new::<DefaultIgnorableCodePoint>();
    let visible: String = name.chars().filter(|c| !invisible.contains(*c)).collect();
    normalize(&visible)
}

/// Why `name` may not sit beside `existing` although the two differ, or
/// `None` when they are plainly different names.
pub fn looks_like(name: &str, existing: &str) -> Option<&'static str> {
    if name == existing || look_alike_key(name) != look_alike_key(existing) {
        return None;
    }
    if normalize(name) == normalize(existing) {
        Some("it differs only by Unicode normalization")
    } else {
        Some("it differs only by invisible characters")
    }
}

/// `name` as the app quotes a name in its texts (“Work”), with each
/// invisible or control character written as its escape (`\u{200b}`): a
/// message about a look-alike shows where the two names differ.
pub fn quoted(name: &str) -> String {
    let invisible = CodePointSetData::new::<DefaultIgnorableCodePoint>();
    let mut out = String::from("“");
    for c in name.chars() {
        if invisible.contains(c) || crate::controls::is_control(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out.push('”');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_name_shows_its_invisible_characters_in_curly_quotes() {
        assert_eq!(quoted("Demo (simulated)"), "“Demo (simulated)”");
        assert_eq!(
            quoted("Caf\u{e9}\u{200b}"),
            "“Café\\u{200b}”",
            "the zero-width space a reader cannot see is written out"
        );
        assert_eq!(quoted("\"Q\" é"), "“\"Q\" é”", "nothing visible is escaped");
    }

    #[test]
    fn names_are_stored_trimmed_and_composed() {
        assert_eq!(normalize("  Cafe\u{301} "), "Café");
        assert_eq!(normalize("Café"), "Café");
    }

    #[test]
    fn zero_width_and_normalization_variants_look_alike() {
        for variant in [
            "Work\u{200B}",
            "W\u{200D}ork",
            "Wo\u{00AD}rk",
            "\u{FEFF}Work",
            "Work\u{FE0F}",
        ] {
            assert_eq!(
                looks_like(variant, "Work"),
                Some("it differs only by invisible characters"),
                "{variant:?}"
            );
        }
        assert_eq!(
            looks_like("Cafe\u{301}", "Café"),
            Some("it differs only by Unicode normalization")
        );
        assert_eq!(
            looks_like("Work", "Work"),
            None,
            "the same name is no look-alike"
        );
        assert_eq!(looks_like("Work 2", "Work"), None);
        assert_eq!(looks_like("work", "Work"), None, "case is visible");
    }

    #[test]
    fn a_control_character_is_named_with_its_position() {
        let e = control_error("name", "ab\u{1b}]0;x", "a profile name").unwrap();
        assert_eq!(
            e.to_string(),
            "name: a profile name cannot hold control characters (found U+001B at character 3)"
        );
        assert!(control_error("name", "Daily driver — 日本", "a profile name").is_none());
    }
}

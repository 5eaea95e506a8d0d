//! Taking the timing hint for a selected rule: headers first, then the text
//! from the start of the matched line on. Parsing and validation (future,
//! bounded) belong to [`crate::timing`]; this module only decides where to look.

use chrono_tz::Tz;

use super::schema::Rule;
use crate::classification::Span;
use crate::evidence::Evidence;
use crate::timing::{hint_from_headers, hint_from_text, TimingHint};

/// The trusted hint for `rule`, which matched `evidence` at `span`.
pub(crate) fn hint_for(
    rule: &Rule,
    evidence: &Evidence,
    span: Option<Span>,
    local_tz: Tz,
) -> Option<TimingHint> {
    let from_headers = || {
        rule.timing
            .headers
            .then(|| hint_from_headers(&evidence.headers, evidence.occurred_at))
            .flatten()
    };
    let from_text = || {
        rule.timing
            .text
            .then(|| text_hint(evidence, span, local_tz))
            .flatten()
    };
    from_headers().or_else(from_text)
}

/// Reads the text from the beginning of the matched line (or the whole
/// message for a structured match) so a hint printed after the error is found
/// and one from an earlier, unrelated line is not.
fn text_hint(evidence: &Evidence, span: Option<Span>, local_tz: Tz) -> Option<TimingHint> {
    let message = evidence.message.as_str();
    let start = span.map_or(0, |s| line_start(message, s.start as usize));
    let mut hint = hint_from_text(&message[start..], evidence.occurred_at, local_tz)?;
    hint.span = hint.span.map(|s| Span {
        start: s.start + start as u32,
        end: s.end + start as u32,
    });
    Some(hint)
}

/// Byte offset of the start of the line containing `offset`.
pub(crate) fn line_start(message: &str, offset: usize) -> usize {
    let offset = offset.min(message.len());
    message[..offset].rfind('\n').map_or(0, |i| i + 1)
}

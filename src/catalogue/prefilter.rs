//! One pass over the message that tells which text alternatives can match.
//!
//! Without it every text alternative scans the whole message on its own
//! (about a hundred scans of up to 4 KiB per classification). A [`RegexSet`]
//! of the same compiled patterns reports, in one scan, which of them match
//! anywhere; only those are then run to find their first terminal match. The
//! answer is exact, not a heuristic: a pattern the set rules out has no match
//! in the message at all, so the classification cannot change.

use regex::{RegexSet, RegexSetBuilder, SetMatches};

use super::schema::Rule;

/// Room for all patterns compiled together (the default fits one pattern).
const SET_NFA_BYTES: usize = 64 << 20;
/// Room for the lazy DFA of all patterns at once; the default cache is sized
/// for one pattern and would thrash, falling back to a much slower engine.
const SET_DFA_BYTES: usize = 64 << 20;

#[derive(Debug, Clone)]
pub(crate) struct TextPrefilter {
    set: RegexSet,
    /// For each rule, for each alternative: its pattern's index in `set`.
    slots: Vec<Vec<Option<usize>>>,
}

/// Which text alternatives of which rules can match one message.
#[derive(Debug)]
pub(crate) struct TextHits<'p> {
    matches: SetMatches,
    prefilter: &'p TextPrefilter,
}

impl TextPrefilter {
    /// Builds the set from the rules' already compiled patterns, in order.
    pub(crate) fn build(rules: &[Rule]) -> Result<TextPrefilter, regex::Error> {
        let mut patterns = Vec::new();
        let slots = rules
            .iter()
            .map(|rule| {
                rule.matchers
                    .iter()
                    .map(|matcher| {
                        matcher.text_pattern().map(|pattern| {
                            patterns.push(pattern.to_owned());
                            patterns.len() - 1
                        })
                    })
                    .collect()
            })
            .collect();
        let set = RegexSetBuilder::new(patterns)
            .size_limit(SET_NFA_BYTES)
            .dfa_size_limit(SET_DFA_BYTES)
            .build()?;
        Ok(TextPrefilter { set, slots })
    }

    pub(crate) fn scan(&self, message: &str) -> TextHits<'_> {
        TextHits {
            matches: self.set.matches(message),
            prefilter: self,
        }
    }
}

impl TextHits<'_> {
    /// False only when alternative `matcher` of rule `rule` has a text
    /// pattern that matches nowhere in the message.
    pub(crate) fn may_match(&self, rule: usize, matcher: usize) -> bool {
        match self.prefilter.slots[rule][matcher] {
            Some(slot) => self.matches.matched(slot),
            None => true,
        }
    }
}

//! The deterministic error catalogue: rules as data, matched against
//! sanitized evidence, producing one [`Classification`].
//!
//! Owns step 2 of the pipeline. The rules live in `rules.toml` beside this
//! file, compiled in with `include_str!`, parsed and validated once
//! ([`schema`]). [`classify`] is pure: same evidence, same time zone, same
//! catalogue version → same result. Unknown, low-confidence, conflicting and
//! out-of-scope evidence is [`Class::Unclassified`] and fails closed.

pub mod bundled;
pub mod checks;
mod explain;
pub mod export;
pub mod fixture;
mod hints;
pub mod local;
mod matcher;
mod prefilter;
pub mod propose;
pub mod schema;
mod select;
pub mod stats;
mod window;

use std::sync::LazyLock;

use chrono_tz::Tz;

pub use explain::{excerpt, Explanation, MatchReport, EXCERPT_MAX_BYTES};
pub use fixture::{
    fixture_from_evidence, Fixture, FixtureError, FixtureExpect, FixtureInput, FixtureKind,
};
pub use schema::{
    Catalogue, CatalogueError, Matcher, MatcherSpec, Origin, ProviderScope, Role, Rule, RuleSpec,
    TimingSources,
};
pub use select::MatchOutcome;
pub use window::SHORT_THROTTLE_MAX;

use crate::classification::{Class, Classification, Confidence};
use crate::evidence::Evidence;

/// Version of the built-in rules; stamped on every [`Classification`].
/// Must equal `version` in `rules.toml` (checked when the catalogue loads).
pub const CATALOGUE_VERSION: &str = "2026.12.5";

/// Source of the built-in catalogue.
pub const RULES_TOML: &str = include_str!("rules.toml");

static BUILTIN: LazyLock<Catalogue> = LazyLock::new(|| {
    let catalogue = Catalogue::parse(RULES_TOML)
        .unwrap_or_else(|e| panic!("built-in catalogue rules.toml is invalid: {e}"));
    assert_eq!(
        catalogue.version, CATALOGUE_VERSION,
        "rules.toml version and CATALOGUE_VERSION must agree"
    );
    catalogue
});

/// The built-in catalogue.
pub fn builtin() -> &'static Catalogue {
    &BUILTIN
}

/// Every built-in rule, in catalogue order (for browsing rules, codes, classes).
pub fn rules() -> &'static [Rule] {
    &BUILTIN.rules
}

/// Classifies evidence with the built-in catalogue.
///
/// `local_tz` resolves clock times printed without a zone ("resets 5pm").
pub fn classify(evidence: &Evidence, local_tz: Tz) -> Classification {
    builtin().classify(evidence, local_tz)
}

/// Classifies with the built-in catalogue and reports every rule that matched.
pub fn explain(evidence: &Evidence, local_tz: Tz) -> Explanation {
    builtin().explain(evidence, local_tz)
}

impl Catalogue {
    /// Classifies `evidence` with this catalogue.
    pub fn classify(&self, evidence: &Evidence, local_tz: Tz) -> Classification {
        self.explain(evidence, local_tz).classification
    }

    /// Classifies `evidence` and reports every matching rule and its fate.
    pub fn explain(&self, evidence: &Evidence, local_tz: Tz) -> Explanation {
        let progress = matcher::ProgressLines::of(&evidence.message);
        let hits = self.prefilter.scan(&evidence.message);
        let matches = self
            .rules
            .iter()
            .enumerate()
            .filter_map(|(index, rule)| {
                matcher::match_rule(rule, index, evidence, &progress, &hits)
            })
            .collect();
        let mut selection = select::select(matches);
        let settlement = window::settle(&mut selection, evidence, local_tz);
        explain::build(
            self,
            evidence,
            &selection,
            settlement.as_ref(),
            &progress,
            local_tz,
        )
    }
}

/// The class a rule's code gets at a given confidence: low confidence, and a
/// local rule nobody has reviewed, never drive automatic recovery.
fn effective_class(rule: &Rule) -> Class {
    if rule.unreviewed() {
        return Class::Unclassified;
    }
    match rule.confidence {
        Confidence::Low => Class::Unclassified,
        Confidence::Medium | Confidence::High => rule.class(),
    }
}

#[cfg(test)]
mod tests;

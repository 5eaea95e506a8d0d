//! The local catalogue overlay: the user's own rules, in the schema of the
//! built-in `rules.toml`, merged over the built-in catalogue.
//!
//! A local rule adds a rule, or replaces a built-in one only when it says so
//! (`overrides = "<built-in id>"`); reusing a built-in id silently is refused.
//! The class still comes from the code → class table (the schema has no
//! class field), and a rule with `reviewed` unset or false is shown but
//! fails closed. The merged catalogue's version names both parts:
//! `2026.12.5+local.7`, where 7 is the file's `revision`, raised on every
//! change. Pure: the engine reads the file, this module only parses it.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::schema::{compile_rule, Catalogue, CatalogueError, Origin, RuleSpec};

/// The local rules file, as written.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LocalFile {
    /// Raised on every change; names this overlay in `catalogue_version`.
    pub revision: u32,
    #[serde(default, rename = "rule")]
    pub rules: Vec<RuleSpec>,
}

/// Why the local rules file cannot be used (the built-in catalogue still is).
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("it does not follow the rule schema: {0}")]
    Syntax(#[from] toml::de::Error),
    #[error("{0}")]
    Rule(#[from] CatalogueError),
    #[error("rule {0} reuses the id of a built-in rule; to replace that rule say `overrides = \"{0}\"`, otherwise choose a new id")]
    ReusedId(String),
    #[error("rule {rule} overrides {target:?}, which is not a built-in rule")]
    UnknownOverride { rule: String, target: String },
    #[error("rules {first} and {second} both override {target}")]
    DoubleOverride {
        target: String,
        first: String,
        second: String,
    },
}

impl LocalFile {
    pub fn parse(source: &str) -> Result<LocalFile, LocalError> {
        Ok(toml::from_str(source)?)
    }

    /// The file's text, as the app and the CLI write it.
    pub fn to_toml(&self) -> String {
        let body = toml::to_string(self).expect("rules of strings and numbers always serialize");
        format!("# Recourse local catalogue: your own rules, merged over the built-in ones.\n# Same schema as src/catalogue/rules.toml, plus `overrides` and `reviewed`.\n# Raise `revision` on every change. See docs/catalogue.md.\n\n{body}")
    }

    /// The file with `rule` added, or replacing the local rule of its id;
    /// the revision is raised.
    pub fn with_rule(&self, rule: RuleSpec) -> LocalFile {
        let mut rules = self.rules.clone();
        match rules.iter_mut().find(|r| r.id == rule.id) {
            Some(slot) => *slot = rule,
            None => rules.push(rule),
        }
        LocalFile {
            revision: self.revision + 1,
            rules,
        }
    }

    /// The file without local rule `id`, or `None` when it has no such rule.
    pub fn without_rule(&self, id: &str) -> Option<LocalFile> {
        let rules: Vec<RuleSpec> = self.rules.iter().filter(|r| r.id != id).cloned().collect();
        (rules.len() < self.rules.len()).then(|| LocalFile {
            revision: self.revision + 1,
            rules,
        })
    }

    /// The built-in catalogue with these rules merged over it.
    pub fn merge(&self, builtin: &Catalogue) -> Result<Catalogue, LocalError> {
        let builtin_ids: BTreeSet<&str> = builtin.rules.iter().map(|r| r.id.as_str()).collect();
        let mut seen = BTreeSet::new();
        let mut overridden: Vec<(String, String)> = Vec::new();
        let mut added = Vec::new();
        for spec in &self.rules {
            if !seen.insert(spec.id.as_str()) {
                return Err(CatalogueError::DuplicateId(spec.id.clone()).into());
            }
            let reuses = builtin_ids.contains(spec.id.as_str())
                && spec.overrides.as_deref() != Some(spec.id.as_str());
            if reuses {
                return Err(LocalError::ReusedId(spec.id.clone()));
            }
            match &spec.overrides {
                Some(target) if !builtin_ids.contains(target.as_str()) => {
                    return Err(LocalError::UnknownOverride {
                        rule: spec.id.clone(),
                        target: target.clone(),
                    })
                }
                Some(target) => {
                    if let Some((_, first)) = overridden.iter().find(|(t, _)| t == target) {
                        return Err(LocalError::DoubleOverride {
                            target: target.clone(),
                            first: first.clone(),
                            second: spec.id.clone(),
                        });
                    }
                    overridden.push((target.clone(), spec.id.clone()));
                }
                None => {}
            }
            let origin = Origin::Local {
                overrides: spec.overrides.clone(),
                reviewed: spec.reviewed.unwrap_or(false),
            };
            added.push(compile_rule(spec.clone(), origin)?);
        }
        // An override takes the place of the rule it replaces (same
        // position, so the same place in tie-breaks); additions come last.
        let mut rules = Vec::with_capacity(builtin.rules.len() + added.len());
        for rule in &builtin.rules {
            match added.iter().position(
                |a| matches!(&a.origin, Origin::Local { overrides: Some(t), .. } if *t == rule.id),
            ) {
                Some(at) => rules.push(added.remove(at)),
                None => rules.push(rule.clone()),
            }
        }
        rules.extend(added);
        Ok(Catalogue::assemble(
            version(&builtin.version, self.revision),
            rules,
        )?)
    }
}

/// `2026.12.5+local.7`: the built-in version and the local revision.
pub fn version(builtin: &str, revision: u32) -> String {
    format!("{builtin}+local.{revision}")
}

#[cfg(test)]
mod tests;

use super::*;
use crate::catalogue::builtin;
use crate::classification::Class;
use crate::evidence::{Evidence, Provider, RawEvidence};

fn rule(id: &str, extra: &str, text: &str) -> String {
    format!(
        "[[rule]]\nid = \"{id}\"\ndescription = \"a local rule\"\npriority = 78\nproviders = [\"any\"]\ncode = \"provider_unavailable\"\nconfidence = \"medium\"\nscope = \"provider\"\n{extra}\n[[rule.match]]\ntext = '{text}'\n"
    )
}

fn merged(source: &str) -> Result<Catalogue, LocalError> {
    LocalFile::parse(source)?.merge(builtin())
}

fn classify(catalogue: &Catalogue, message: &str) -> crate::classification::Classification {
    let evidence = Evidence::from_raw(RawEvidence::new(
        Provider::Generic,
        message,
        chrono::DateTime::UNIX_EPOCH,
    ));
    catalogue.classify(&evidence, chrono_tz::Tz::UTC)
}

#[test]
fn a_reviewed_local_rule_adds_a_rule_and_names_both_versions() {
    let source = format!(
        "revision = 7\n{}",
        rule(
            "local.gizmo.jammed.v1",
            "reviewed = true",
            "gizmo jammed again"
        )
    );
    let catalogue = merged(&source).unwrap();
    assert_eq!(catalogue.version, format!("{}+local.7", builtin().version));
    assert_eq!(catalogue.rules.len(), builtin().rules.len() + 1);
    let got = classify(&catalogue, "error: gizmo jammed again");
    assert_eq!(got.rule_id.as_deref(), Some("local.gizmo.jammed.v1"));
    assert_eq!(got.class, Class::Transient, "the class comes from the code");
    assert_eq!(got.catalogue_version, catalogue.version);
}

#[test]
fn an_unreviewed_rule_is_shown_but_fails_closed() {
    let source = format!(
        "revision = 1\n{}",
        rule("local.gizmo.jammed.v1", "", "gizmo jammed again")
    );
    let got = classify(&merged(&source).unwrap(), "gizmo jammed again");
    assert_eq!(got.class, Class::Unclassified, "unreviewed never acts");
    assert_eq!(got.rule_id.as_deref(), Some("local.gizmo.jammed.v1"));
    assert!(
        got.explanation
            .contains("would classify as “Provider unavailable” (transient), not reviewed"),
        "{}",
        got.explanation
    );
}

#[test]
fn reusing_a_builtin_id_without_saying_so_is_refused() {
    let id = &builtin().rules[0].id;
    let source = format!(
        "revision = 1\n{}",
        rule(id, "reviewed = true", "gizmo jammed")
    );
    assert_eq!(
        merged(&source).unwrap_err().to_string(),
        format!("rule {id} reuses the id of a built-in rule; to replace that rule say `overrides = \"{id}\"`, otherwise choose a new id")
    );
}

#[test]
fn an_explicit_override_replaces_the_builtin_rule_in_place() {
    let target = builtin().rules[3].id.clone();
    let source = format!(
        "revision = 2\n{}",
        rule(
            "local.replacement.rule.v1",
            &format!("reviewed = true\noverrides = \"{target}\""),
            "gizmo jammed again"
        )
    );
    let catalogue = merged(&source).unwrap();
    assert_eq!(
        catalogue.rules.len(),
        builtin().rules.len(),
        "replaced, not added"
    );
    assert_eq!(
        catalogue.rules[3].id, "local.replacement.rule.v1",
        "same position"
    );
    assert!(catalogue.rules.iter().all(|r| r.id != target));
}

#[test]
fn overriding_something_that_is_not_builtin_is_refused() {
    let source = format!(
        "revision = 2\n{}",
        rule(
            "local.a.rule.v1",
            "overrides = \"no.such.v1\"",
            "gizmo jammed"
        )
    );
    assert_eq!(
        merged(&source).unwrap_err().to_string(),
        "rule local.a.rule.v1 overrides \"no.such.v1\", which is not a built-in rule"
    );
}

#[test]
fn a_local_rule_cannot_state_a_class() {
    let source = format!(
        "revision = 2\n{}",
        rule("local.a.rule.v1", "class = \"hard\"", "gizmo jammed")
    );
    let message = merged(&source).unwrap_err().to_string();
    assert!(
        message.starts_with("it does not follow the rule schema") && message.contains("class"),
        "{message}"
    );
}

#[test]
fn the_builtin_catalogue_refuses_local_only_fields() {
    let source = format!(
        "version = \"2026.1.1\"\n{}",
        rule("x.y.v1", "reviewed = true", "gizmo")
    );
    assert_eq!(
        Catalogue::parse(&source).unwrap_err().to_string(),
        "rule x.y.v1: `reviewed` belongs in the local catalogue, not the built-in one"
    );
}

#[test]
fn every_change_raises_the_revision() {
    let file = LocalFile::parse(&format!(
        "revision = 4\n{}",
        rule("local.a.rule.v1", "", "gizmo jammed")
    ))
    .unwrap();
    let added = file.with_rule(file.rules[0].clone());
    assert_eq!(added.revision, 5);
    let removed = added.without_rule("local.a.rule.v1").unwrap();
    assert_eq!(removed.revision, 6);
    assert!(removed.without_rule("local.a.rule.v1").is_none());
    assert_eq!(
        LocalFile::parse(&removed.to_toml()).unwrap(),
        removed,
        "the written file reads back"
    );
}

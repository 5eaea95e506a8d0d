use super::*;
use crate::catalogue::propose::{propose, RuleDraft};
use crate::evidence::{Provider, RawEvidence};

fn evidence(message: &str) -> Evidence {
    Evidence::from_raw(RawEvidence::new(
        Provider::Simulated,
        message,
        chrono::DateTime::UNIX_EPOCH,
    ))
}

/// Saves the rule proposed from `message` as a provider_unavailable
/// failure, with that evidence as its fixture.
fn save_drawn_from(overlay: &mut Overlay, message: &str) -> (Evidence, RuleDraft, SavedRule) {
    let evidence = evidence(message);
    let draft = RuleDraft {
        code: SemanticCode::ProviderUnavailable,
        ..propose(&evidence, |_| false)
    };
    let saved = save_from(overlay, &draft, &evidence).unwrap();
    (evidence, draft, saved)
}

/// Saves `draft`, reviewed, with `evidence` as the text it is made from.
fn save_from(
    overlay: &mut Overlay,
    draft: &RuleDraft,
    evidence: &Evidence,
) -> Result<SavedRule, EngineError> {
    let spec = draft.to_spec(true);
    overlay.save(
        &spec,
        Some(("test", evidence)),
        &[],
        &[],
        chrono_tz::Tz::UTC,
    )
}

#[test]
fn a_broken_local_file_keeps_the_builtin_catalogue_and_names_file_and_rule() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(RULES_FILE);
    std::fs::write(&path, "revision = 1\n[[rule]]\nid = \"local.x.y.v1\"\ndescription = \"d\"\npriority = 5000\nproviders = [\"any\"]\ncode = \"rate_limited\"\nconfidence = \"medium\"\nscope = \"account\"\n[[rule.match]]\ntext = 'gizmo jammed'\n").unwrap();
    let overlay = Overlay::open(dir.path().to_path_buf());
    assert_eq!(overlay.catalogue().version, builtin().version);
    assert_eq!(
        overlay.error(),
        Some(
            format!(
                "local catalogue {} is not used: rule local.x.y.v1: priority 5000 is outside 0-1000",
                path.display()
            )
            .as_str()
        )
    );
}

#[test]
fn saving_a_rule_writes_rule_and_fixture_without_the_secret() {
    let dir = tempfile::tempdir().unwrap();
    let mut overlay = Overlay::open(dir.path().to_path_buf());
    let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH";
    let message = format!("flux capacitor out of sync (key {key})");
    let (evidence, draft, saved) = save_drawn_from(&mut overlay, &message);
    assert_eq!(
        saved.catalogue_version,
        format!("{}+local.1", builtin().version)
    );
    let rules = std::fs::read_to_string(dir.path().join(RULES_FILE)).unwrap();
    let fixture = std::fs::read_to_string(saved.fixture_path.unwrap()).unwrap();
    for text in [&rules, &fixture] {
        assert!(
            !text.contains("abcdefghijklmnop"),
            "the key never reaches a file: {text}"
        );
    }
    let (fixtures, problems) = overlay.local_fixtures();
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        fixtures[0].fixture.check_with(&overlay.catalogue()),
        Vec::<String>::new(),
        "the saved fixture passes with the saved rule"
    );
    assert!(
        !fixtures[0].fixture.check().is_empty(),
        "and fails without it, so it proves the rule"
    );
    let got = overlay.catalogue().classify(&evidence, chrono_tz::Tz::UTC);
    assert_eq!(got.rule_id.as_deref(), Some(draft.id.as_str()));
}

#[test]
fn a_rule_that_misses_its_own_evidence_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut overlay = Overlay::open(dir.path().to_path_buf());
    let evidence = evidence("flux capacitor out of sync");
    let mut draft = propose(&evidence, |_| false);
    draft.code = SemanticCode::ProviderUnavailable;
    draft.pattern = "warp core breach imminent".into();
    let err = save_from(&mut overlay, &draft, &evidence).unwrap_err();
    assert_eq!(
        err.to_string(),
        "pattern: the rule does not match the text it is made from"
    );
    let review = overlay.review(
        &draft.to_spec(true),
        Some(&evidence),
        &[],
        &[],
        chrono_tz::Tz::UTC,
    );
    assert_eq!(
        review.refusals,
        [FieldError::new(
            "pattern",
            "the rule does not match the text it is made from"
        )],
        "the live check says it before Save is pressed"
    );
    assert!(
        !dir.path().join(RULES_FILE).exists(),
        "nothing half-written"
    );
}

#[test]
fn a_pattern_that_misses_its_own_text_is_said_before_a_code_is_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let overlay = Overlay::open(dir.path().to_path_buf());
    let evidence = evidence("flux capacitor out of sync");
    let mut draft = propose(&evidence, |_| false);
    draft.code = SemanticCode::Unknown;
    draft.pattern = "warp core breach imminent".into();
    let review = overlay.review(
        &draft.to_spec(true),
        Some(&evidence),
        &[],
        &[],
        chrono_tz::Tz::UTC,
    );
    let paths: Vec<&str> = review.refusals.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        ["code", "pattern"],
        "both the missing code and the pattern that misses its text: {:?}",
        review.refusals
    );
    assert_eq!(
        review.refusals[1].message,
        "the rule does not match the text it is made from"
    );
    assert!(review.checks.is_none(), "the checks' outcome needs a code");

    draft.pattern = "flux capacitor out of sync".into();
    let review = overlay.review(
        &draft.to_spec(true),
        Some(&evidence),
        &[],
        &[],
        chrono_tz::Tz::UTC,
    );
    assert_eq!(
        review.refusals.len(),
        1,
        "a pattern that matches leaves only the code to choose: {:?}",
        review.refusals
    );
}

#[test]
fn a_too_broad_rule_is_refused_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let mut overlay = Overlay::open(dir.path().to_path_buf());
    let mut draft = propose(&evidence("flux capacitor out of sync"), |_| false);
    draft.code = SemanticCode::ProviderUnavailable;
    draft.pattern = r"\w+ out".into();
    let err = overlay
        .save(&draft.to_spec(true), None, &[], &[], chrono_tz::Tz::UTC)
        .unwrap_err();
    assert!(
        err.to_string().starts_with(
            "pattern: the pattern of alternative 1 has only 4 characters of fixed text"
        ),
        "{err}"
    );
    assert!(!dir.path().join(RULES_FILE).exists());
}

#[test]
fn removing_a_rule_drops_its_fixtures_and_raises_the_revision() {
    let dir = tempfile::tempdir().unwrap();
    let mut overlay = Overlay::open(dir.path().to_path_buf());
    let (_, draft, _) = save_drawn_from(&mut overlay, "flux capacitor out of sync");
    let version = overlay.remove(&draft.id).unwrap();
    assert_eq!(version, format!("{}+local.2", builtin().version));
    assert!(overlay.local_fixtures().0.is_empty());
    assert_eq!(
        overlay.remove(&draft.id).unwrap_err().to_string(),
        format!("local rule {} does not exist", draft.id)
    );
}

#[test]
fn fixtures_by_rule_lists_builtin_and_local_fixtures_under_the_rule_they_expect() {
    let dir = tempfile::tempdir().unwrap();
    let mut overlay = Overlay::open(dir.path().to_path_buf());
    let (_, draft, saved) = save_drawn_from(&mut overlay, "flux capacitor out of sync");
    let by_rule = overlay.fixtures_by_rule();
    let file = std::path::PathBuf::from(saved.fixture_path.unwrap());
    let local_name = format!("local/{}", file.file_name().unwrap().to_string_lossy());
    assert_eq!(
        by_rule.get(&draft.id),
        Some(&vec![local_name]),
        "the saved rule lists the fixture made from its evidence"
    );
    let builtin = builtin_fixtures()
        .iter()
        .find(|f| f.fixture.expect.rule_id.is_some())
        .expect("some built-in fixture expects a rule");
    let id = builtin.fixture.expect.rule_id.as_ref().unwrap();
    assert!(
        by_rule[id].contains(&builtin.name),
        "built-in fixtures are listed beside local ones: {:?}",
        by_rule[id]
    );
}

#[test]
fn a_second_rule_for_text_a_local_rule_already_decides_names_that_rule_not_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let mut overlay = Overlay::open(dir.path().to_path_buf());
    let message = "two words and quotes";
    let (evidence, first, _) = save_drawn_from(&mut overlay, message);
    let mut second = first.clone();
    second.id = "local.generic.two_words_again.v1".into();
    second.pattern = message.into();
    let review = overlay.review(
        &second.to_spec(true),
        Some(&evidence),
        &[],
        &[],
        chrono_tz::Tz::UTC,
    );
    let pattern: Vec<&str> = review
        .refusals
        .iter()
        .filter(|f| f.path == "pattern")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(
        pattern,
        [format!(
            "rule “{}” ({}) already matches this text at the same priority ({}), and it comes first, so this rule would never decide it: give this rule a priority above {}, or remove or change that local rule",
            first.description, first.id, first.priority, first.priority
        )],
        "the pattern does match its text: the refusal names the rule that wins instead"
    );

    second.priority = first.priority + 1;
    let review = overlay.review(
        &second.to_spec(true),
        Some(&evidence),
        &[],
        &[],
        chrono_tz::Tz::UTC,
    );
    assert!(
        review.refusals.iter().all(|f| f.path != "pattern"),
        "above the saved rule's priority the new rule decides its text: {:?}",
        review.refusals
    );
}

#[test]
fn an_invalid_pattern_is_said_in_words_without_rule_id_or_caret_drawing() {
    let dir = tempfile::tempdir().unwrap();
    let overlay = Overlay::open(dir.path().to_path_buf());
    let evidence = evidence("two (words and quotes");
    let mut draft = propose(&evidence, |_| false);
    draft.code = SemanticCode::ProviderUnavailable;
    draft.pattern = "two (words".into();
    let review = overlay.review(
        &draft.to_spec(true),
        Some(&evidence),
        &[],
        &[],
        chrono_tz::Tz::UTC,
    );
    assert_eq!(
        review.refusals,
        [FieldError::new(
            "pattern",
            "pattern is not a valid regular expression: unclosed group ( at “two (words”"
        )],
        "one line, the regex crate's reason and where, no rule id"
    );
}

#[test]
fn before_a_code_is_chosen_a_tie_that_depends_on_the_code_is_not_claimed() {
    let dir = tempfile::tempdir().unwrap();
    let mut overlay = Overlay::open(dir.path().to_path_buf());
    let message = "two words and quotes";
    // Saved as provider_unavailable (transient); the stand-in code used
    // before a code is chosen is of another class, so the two would tie.
    let (evidence, first, _) = save_drawn_from(&mut overlay, message);
    let mut second = first.clone();
    second.id = "local.generic.two_words_again.v1".into();
    second.code = SemanticCode::Unknown;
    let review = overlay.review(
        &second.to_spec(true),
        Some(&evidence),
        &[],
        &[],
        chrono_tz::Tz::UTC,
    );
    let paths: Vec<&str> = review.refusals.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        ["code"],
        "whether it ties depends on the code still to be chosen: {:?}",
        review.refusals
    );
}

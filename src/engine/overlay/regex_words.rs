/// A regex error in words for the pattern's field: the regex crate's own
/// reason and where, without the rule id or its multi-line caret drawing.
pub(super) fn regex_words(e: &regex::Error) -> String {
    let regex::Error::Syntax(text) = e else {
        return format!("pattern is not a valid regular expression: {e}");
    };
    let lines: Vec<&str> = text.lines().collect();
    let reason = lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or(text.as_str());
    // The drawing: the pattern indented 4, a caret line under the fault.
    let at = lines.iter().position(|l| l.trim_start().starts_with('^'));
    let place = at.filter(|&i| i > 0).and_then(|i| {
        let pattern = lines[i - 1].get(4..)?;
        let column = lines[i].find('^')?.checked_sub(4)?;
        let fault = pattern.get(column..)?.chars().next()?;
        Some(format!(" {fault} at “{}”", pattern.trim()))
    });
    format!(
        "pattern is not a valid regular expression: {reason}{}",
        place.unwrap_or_default()
    )
}

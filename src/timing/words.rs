//! Durations in words: the one style of every duration a person reads, the
//! same as the app's own (`ui/src/lib/format.ts`): a number, a space, a
//! unit (`5 s`, `2 min 5 s`, `4 h 19 min`, `2 d 3 h`), never `2m5s`.

const UNITS: [(&str, u64); 4] = [("d", 86_400), ("h", 3_600), ("min", 60), ("s", 1)];

/// Every unit, exactly, leaving out zero ones: `1 min 10 s`, `1 h 5 s`;
/// `0 s` for nothing. For instants and delays a decision names.
pub fn exact(seconds: u64) -> String {
    let mut rest = seconds;
    let mut parts = Vec::new();
    for (unit, size) in UNITS {
        let count = rest / size;
        rest %= size;
        if count > 0 {
            parts.push(format!("{count} {unit}"));
        }
    }
    if parts.is_empty() {
        "0 s".to_string()
    } else {
        parts.join(" ")
    }
}

/// At most the two largest units, the rest left out: `4 h 19 min` for
/// 4 h 19 min 30 s. For a schedule read at a glance.
pub fn readable(seconds: u64) -> String {
    let Some(first) = UNITS.iter().position(|(_, size)| seconds >= *size) else {
        return "0 s".to_string();
    };
    let (unit, size) = UNITS[first];
    let head = format!("{} {unit}", seconds / size);
    match UNITS.get(first + 1) {
        Some((next, next_size)) if seconds % size / next_size > 0 => {
            format!("{head} {} {next}", seconds % size / next_size)
        }
        _ => head,
    }
}

/// Why a duration field's `got` seconds is refused by its `range`, in
/// durations, the way the person wrote them: `must be at most 1 h (2 h is
/// too long)`, never `must be 1–3600, got 7200` (counts are said so too: [`crate::amount`]).
pub fn outside(range: &std::ops::RangeInclusive<u32>, got: u32) -> String {
    if got < *range.start() {
        format!(
            "must be at least {} ({} is too short)",
            exact(u64::from(*range.start())),
            exact(u64::from(got))
        )
    } else {
        format!(
            "must be at most {} ({} is too long)",
            exact(u64::from(*range.end())),
            exact(u64::from(got))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_durations_write_every_unit_with_a_space() {
        let written: Vec<String> = [0, 3, 70, 3_605, 90_061].map(exact).into();
        assert_eq!(
            written,
            ["0 s", "3 s", "1 min 10 s", "1 h 5 s", "1 d 1 h 1 min 1 s"]
        );
    }

    #[test]
    fn readable_durations_keep_the_two_largest_units() {
        let written: Vec<String> = [5, 60, 125, 3_600, 15_540, 15_599, 86_400, 183_600]
            .map(readable)
            .into();
        assert_eq!(
            written,
            [
                "5 s",
                "1 min",
                "2 min 5 s",
                "1 h",
                "4 h 19 min",
                "4 h 19 min",
                "1 d",
                "2 d 3 h"
            ]
        );
    }

    #[test]
    fn a_refused_duration_is_said_in_durations_on_the_side_it_missed() {
        assert_eq!(
            outside(&(1..=3_600), 7_200),
            "must be at most 1 h (2 h is too long)"
        );
        assert_eq!(
            outside(&(10..=86_400), 5),
            "must be at least 10 s (5 s is too short)"
        );
        assert_eq!(
            outside(&(1..=604_800), 0),
            "must be at least 1 s (0 s is too short)",
            "nothing at all is a duration too"
        );
        assert_eq!(
            outside(&(1..=3_600), 5_400),
            "must be at most 1 h (1 h 30 min is too long)",
            "written with every unit, as typed"
        );
    }
}

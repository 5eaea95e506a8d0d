//! How a number outside its range is said: after the range a message
//! states, what is wrong with the number given, in words (`must be 1–10
//! when enabled (0 is too few)`), never `…, got 0`. Durations have their
//! own, in their units: [`crate::timing::words::outside`].

use std::fmt::Display;

/// `(0 is too few)` below `min`, `(11 is too many)` otherwise.
pub fn too_few_or_many<T: PartialOrd + Display>(min: T, given: T) -> String {
    if given < min {
        format!("({given} is too few)")
    } else {
        format!("({given} is too many)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_below_its_range_is_too_few_and_above_it_too_many() {
        assert_eq!(too_few_or_many(1, 0), "(0 is too few)");
        assert_eq!(too_few_or_many(1, 11), "(11 is too many)");
    }
}

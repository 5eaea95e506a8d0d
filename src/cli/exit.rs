//! The exit codes of the `recourse` binary, each with one name. Every
//! command returns an [`Exit`]; `main` turns it into the process's code.
//! README's command-line section lists them.

use std::process::ExitCode;

/// How a command ended. Ordered by how much it says: when a command follows
/// several routes, the greatest one is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// 0: done; every followed route succeeded.
    Success,
    /// 1: an error (printed on stderr), or a problem the command reports:
    /// `db check` found damage, `routes` could not read a row.
    Failure,
    /// 2: a usage error, a malformed input line, an invalid policy document
    /// or failure sequence.
    BadInput,
    /// 3: a followed route needs a person (manual recovery or stopped).
    NeedsYou,
    /// 4: another process took a followed route over.
    TakenOver,
    /// 128 + the signal, as shells report it: 130 for Ctrl-C (SIGINT), 143
    /// for SIGTERM, 129 for SIGHUP.
    Interrupted { signal: i32 },
}

impl Exit {
    /// The number the process exits with.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failure => 1,
            Exit::BadInput => 2,
            Exit::NeedsYou => 3,
            Exit::TakenOver => 4,
            Exit::Interrupted { signal } => 128 + u8::try_from(signal).unwrap_or(0),
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_documented_numbers() {
        let all = [
            Exit::Success,
            Exit::Failure,
            Exit::BadInput,
            Exit::NeedsYou,
            Exit::TakenOver,
            Exit::Interrupted {
                signal: libc::SIGINT,
            },
            Exit::Interrupted {
                signal: libc::SIGTERM,
            },
            Exit::Interrupted {
                signal: libc::SIGHUP,
            },
        ];
        let codes: Vec<u8> = all.iter().map(|e| e.code()).collect();
        assert_eq!(
            codes,
            [0, 1, 2, 3, 4, 130, 143, 129],
            "scripts and README depend on these numbers"
        );
    }

    #[test]
    fn a_later_variant_says_more_when_routes_are_merged() {
        assert!(
            Exit::Success < Exit::NeedsYou
                && Exit::NeedsYou < Exit::TakenOver
                && Exit::TakenOver
                    < Exit::Interrupted {
                        signal: libc::SIGHUP
                    },
            "following several routes reports the greatest: Ctrl-C over a takeover over a route that needs you"
        );
    }
}

//! What an agent may do to the machine: read only, edit the files of its
//! working directory, or everything. Recourse maps the level to each CLI's
//! own flags (the kind's descriptor, verified against the pinned CLIs in
//! `docs/agents.md`) and refuses extra arguments that would contradict it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An access level.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Read and answer; no file is changed, no command that could change one runs.
    ReadOnly,
    /// Change files in the working directory (what a coding agent is for).
    Edit,
    /// Everything the CLI can do, without asking: shell commands anywhere.
    Full,
}

impl Access {
    pub const ALL: [Access; 3] = [Access::ReadOnly, Access::Edit, Access::Full];

    /// The document and command-line spelling (`read_only`).
    pub fn as_str(self) -> &'static str {
        match self {
            Access::ReadOnly => "read_only",
            Access::Edit => "edit",
            Access::Full => "full",
        }
    }

    /// In words, for messages: `read-only`.
    pub fn words(self) -> &'static str {
        match self {
            Access::ReadOnly => "read-only",
            Access::Edit => "edit (the working directory)",
            Access::Full => "full",
        }
    }
}

/// What a CLI is given for an access level: arguments after its fixed
/// output flags, and variables (merged into any the candidate sets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessFlags {
    pub args: &'static [&'static str],
    pub env: &'static [(&'static str, &'static str)],
}

impl AccessFlags {
    pub const NONE: AccessFlags = AccessFlags {
        args: &[],
        env: &[],
    };

    pub const fn args(args: &'static [&'static str]) -> AccessFlags {
        AccessFlags { args, env: &[] }
    }
}

/// How a kind takes access levels.
#[derive(Debug, Clone, Copy)]
pub struct AccessMap {
    /// The flags for a level; `None`: the CLI cannot be held to it, so a
    /// candidate asking for it is refused at validation.
    pub flags: fn(Access) -> Option<AccessFlags>,
    /// Arguments of the CLI's own that set what the level sets: a
    /// candidate's extra argument among them contradicts its level. An
    /// entry ending in `=` matches `--flag=value` too.
    pub own_flags: &'static [&'static str],
}

impl AccessMap {
    /// The first extra argument that would override the level.
    pub fn contradiction<'a>(&self, args: &'a [String]) -> Option<&'a str> {
        args.iter().map(String::as_str).find(|arg| {
            self.own_flags.iter().any(|flag| {
                *arg == *flag
                    || arg
                        .strip_prefix(*flag)
                        .is_some_and(|rest| rest.starts_with('='))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_argument_that_sets_the_level_again_is_found_in_either_spelling() {
        let map = AccessMap {
            flags: |_| Some(AccessFlags::NONE),
            own_flags: &["--sandbox", "-s", "--yolo"],
        };
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(map.contradiction(&args(&["--max-turns", "5"])), None);
        assert_eq!(
            map.contradiction(&args(&["--model-x", "--sandbox=danger-full-access"])),
            Some("--sandbox=danger-full-access")
        );
        assert_eq!(map.contradiction(&args(&["-s", "read-only"])), Some("-s"));
        assert_eq!(
            map.contradiction(&args(&["--sandboxes"])),
            None,
            "a longer flag is another flag"
        );
    }
}

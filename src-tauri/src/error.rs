//! The one error shape that crosses IPC: `{code, message, fields}` with a
//! closed set of codes, so the UI can branch on `code`, show `message`, and
//! put each field error beside its field.

use recourse::engine::EngineError;
pub use recourse::engine::ErrorCode;
use recourse::policy::FieldError;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct IpcError {
    pub code: ErrorCode,
    pub message: String,
    /// Every field error of a validation error, each with its path
    /// (`candidates[2].hard.retry.max_retries`) and its own message; empty
    /// for any other error.
    pub fields: Vec<FieldError>,
}

impl IpcError {
    /// A file or window operation failed; `err` says why.
    pub fn io(err: &dyn std::fmt::Display) -> IpcError {
        IpcError {
            code: ErrorCode::Io,
            message: err.to_string(),
            fields: Vec::new(),
        }
    }
}

impl IpcError {
    /// A refused save or import of a candidate list, its message naming
    /// each field and each problem in words by the candidates' `names`
    /// (`Candidate 1 “opus” › Transient › First delay: …`); the fields keep
    /// their paths for the form.
    pub fn in_words(mut self, names: &[String]) -> IpcError {
        if !self.fields.is_empty() {
            self.message = recourse::profile::words::errors_in_words(&self.fields, names);
        }
        self
    }
}

impl From<EngineError> for IpcError {
    fn from(err: EngineError) -> Self {
        IpcError {
            code: err.code(),
            fields: err.field_errors().to_vec(),
            message: err.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_error_keeps_every_field_error_with_its_path() {
        let fields = vec![
            FieldError::new(
                "candidates[2].hard.retry.max_retries",
                "must be 1–10 when enabled (0 is too few)",
            ),
            FieldError::new("candidates[3].name", "must not be empty"),
        ];
        let ipc = IpcError::from(EngineError::Validation(fields.clone()));
        assert_eq!(ipc.code, ErrorCode::Validation);
        assert_eq!(
            ipc.fields, fields,
            "each error keeps its own path and message"
        );
        assert_eq!(
            ipc.message,
            "candidates[2].hard.retry.max_retries: must be 1–10 when enabled (0 is too few); \
             candidates[3].name: must not be empty"
        );
    }

    #[test]
    fn a_refused_import_says_each_problem_in_words_and_keeps_the_paths() {
        let fields = vec![
            FieldError::new(
                "candidates[0].hard.on_exhausted",
                "unknown variant `later`, expected `skip` or `stop`",
            ),
            FieldError::new("candidates[0].hard", "missing field `retry`"),
        ];
        let ipc =
            IpcError::from(EngineError::Validation(fields.clone())).in_words(&["opus".into()]);
        assert_eq!(
            ipc.message,
            "Candidate 1 “opus” › Hard › When recovery is used up: “later” is not one of skip, stop\n\
             Candidate 1 “opus” › Hard › Retry the same candidate: missing; the document must give it",
            "one problem a line: the second's own `;` does not split it"
        );
        assert_eq!(ipc.fields, fields, "the paths stay, for placing each error");
    }

    #[test]
    fn not_found_has_no_field() {
        let ipc = IpcError::from(EngineError::NotFound {
            what: "route",
            id: "7".into(),
        });
        assert_eq!(ipc.code, ErrorCode::NotFound);
        assert_eq!(ipc.fields, vec![]);
        assert_eq!(ipc.message, "route 7 does not exist");
    }
}

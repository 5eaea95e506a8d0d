//! The one error type of the engine API, with a closed set of codes the
//! desktop shell maps to its IPC error shape `{code, message, fields}`.

use super::RouteSnapshot;
use crate::policy::FieldError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{what} {id} does not exist")]
    NotFound { what: &'static str, id: String },
    /// Every problem found, each at its field path, so a form can show
    /// each one beside its field.
    #[error("{}", list(.0))]
    Validation(Vec<FieldError>),
    /// Says the generation: `recourse action --generation` needs it.
    #[error("the route changed: it {} now, at generation {}; look again before acting", .current.state.after_the_route(), .current.generation)]
    Stale { current: Box<RouteSnapshot> },
    #[error("{0}")]
    Conflict(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A file beside the database (the local catalogue) could not be written.
    #[error("{0}")]
    Io(String),
}

/// The closed set of error codes the UI and the CLI branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    NotFound,
    Validation,
    Stale,
    Conflict,
    Store,
    Io,
}

impl ErrorCode {
    /// `not_found`, `validation`, `stale`, `conflict`, `store` or `io`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotFound => "not_found",
            ErrorCode::Validation => "validation",
            ErrorCode::Stale => "stale",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Store => "store",
            ErrorCode::Io => "io",
        }
    }
}

impl EngineError {
    /// The one mapping of an error to its code.
    pub fn code(&self) -> ErrorCode {
        match self {
            EngineError::NotFound { .. } => ErrorCode::NotFound,
            EngineError::Validation(_) => ErrorCode::Validation,
            EngineError::Stale { .. } => ErrorCode::Stale,
            EngineError::Conflict(_) => ErrorCode::Conflict,
            EngineError::Store(_) => ErrorCode::Store,
            EngineError::Io(_) => ErrorCode::Io,
        }
    }

    /// The field errors of a validation error, each with its path
    /// (`candidates[2].hard.retry.max_retries`); empty for any other error.
    pub fn field_errors(&self) -> &[FieldError] {
        match self {
            EngineError::Validation(errors) => errors,
            EngineError::NotFound { .. }
            | EngineError::Stale { .. }
            | EngineError::Conflict(_)
            | EngineError::Store(_)
            | EngineError::Io(_) => &[],
        }
    }

    /// While opening the database at `path`: names a damaged file.
    pub(crate) fn opening(self, path: &std::path::Path) -> EngineError {
        match self {
            EngineError::Store(e) => EngineError::Store(e.opening(path)),
            EngineError::NotFound { .. }
            | EngineError::Validation(_)
            | EngineError::Stale { .. }
            | EngineError::Conflict(_)
            | EngineError::Io(_) => self,
        }
    }

    pub(crate) fn not_found(what: &'static str, id: impl ToString) -> EngineError {
        EngineError::NotFound {
            what,
            id: id.to_string(),
        }
    }

    /// A validation error at one field.
    pub(crate) fn validation(field: impl Into<String>, message: impl Into<String>) -> EngineError {
        EngineError::Validation(vec![FieldError::new(field, message)])
    }
}

/// `path: message` of each field error, separated by `; `.
fn list(errors: &[FieldError]) -> String {
    let each: Vec<String> = errors.iter().map(FieldError::to_string).collect();
    each.join("; ")
}

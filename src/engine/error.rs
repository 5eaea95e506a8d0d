//! The one error type of the engine API, with a closed set of codes the
//! desktop shell maps to its IPC error shape `{code, message, field?}`.

use super::RouteSnapshot;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{what} {id} does not exist")]
    NotFound { what: &'static str, id: String },
    #[error("{field}: {message}")]
    Validation { field: String, message: String },
    #[error("the route changed (now generation {}, {}); look again before acting", .current.generation, .current.state.as_str())]
    Stale { current: Box<RouteSnapshot> },
    #[error("{0}")]
    Conflict(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl EngineError {
    /// One of `not_found`, `validation`, `stale`, `conflict`, `store`.
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::NotFound { .. } => "not_found",
            EngineError::Validation { .. } => "validation",
            EngineError::Stale { .. } => "stale",
            EngineError::Conflict(_) => "conflict",
            EngineError::Store(_) => "store",
        }
    }

    /// The field path of a validation error (`candidates[2].hard.retry.max_retries`).
    pub fn field(&self) -> Option<&str> {
        match self {
            EngineError::Validation { field, .. } => Some(field),
            EngineError::NotFound { .. }
            | EngineError::Stale { .. }
            | EngineError::Conflict(_)
            | EngineError::Store(_) => None,
        }
    }

    /// While opening the database at `path`: names a damaged file.
    pub(crate) fn opening(self, path: &std::path::Path) -> EngineError {
        match self {
            EngineError::Store(e) => EngineError::Store(e.opening(path)),
            EngineError::NotFound { .. }
            | EngineError::Validation { .. }
            | EngineError::Stale { .. }
            | EngineError::Conflict(_) => self,
        }
    }

    pub(crate) fn not_found(what: &'static str, id: impl ToString) -> EngineError {
        EngineError::NotFound {
            what,
            id: id.to_string(),
        }
    }

    pub(crate) fn validation(field: impl Into<String>, message: impl Into<String>) -> EngineError {
        EngineError::Validation {
            field: field.into(),
            message: message.into(),
        }
    }
}

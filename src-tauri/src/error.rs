//! The one error shape that crosses IPC: `{code, message, field?}` with a
//! closed set of codes, so the UI can branch on `code` and show `message`.

use recourse::engine::EngineError;
use serde::Serialize;

/// Closed set of error codes the UI understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    NotFound,
    Validation,
    Stale,
    Conflict,
    Store,
    Io,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct IpcError {
    pub code: ErrorCode,
    pub message: String,
    /// Field path for validation errors (`candidates[2].hard.retry.max_retries`).
    pub field: Option<String>,
}

impl From<EngineError> for IpcError {
    fn from(err: EngineError) -> Self {
        let code = match &err {
            EngineError::NotFound { .. } => ErrorCode::NotFound,
            EngineError::Validation { .. } => ErrorCode::Validation,
            EngineError::Stale { .. } => ErrorCode::Stale,
            EngineError::Conflict(_) => ErrorCode::Conflict,
            EngineError::Store(_) => ErrorCode::Store,
        };
        IpcError {
            code,
            field: err.field().map(str::to_string),
            message: err.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_error_keeps_its_field_path() {
        let err = EngineError::Validation {
            field: "candidates[2].hard.retry.max_retries".into(),
            message: "must be 1–10 when enabled, got 0".into(),
        };
        let ipc = IpcError::from(err);
        assert_eq!(ipc.code, ErrorCode::Validation);
        assert_eq!(
            ipc.field.as_deref(),
            Some("candidates[2].hard.retry.max_retries")
        );
        assert_eq!(
            ipc.message,
            "candidates[2].hard.retry.max_retries: must be 1–10 when enabled, got 0"
        );
    }

    #[test]
    fn not_found_has_no_field() {
        let ipc = IpcError::from(EngineError::NotFound {
            what: "route",
            id: "7".into(),
        });
        assert_eq!(ipc.code, ErrorCode::NotFound);
        assert_eq!(ipc.field, None);
        assert_eq!(ipc.message, "route 7 does not exist");
    }
}

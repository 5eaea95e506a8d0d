//! The one error shape that crosses IPC: `{code, message, field?}` with a
//! closed set of codes, so the UI can branch on `code` and show `message`.

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
    Internal,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct IpcError {
    pub code: ErrorCode,
    pub message: String,
    /// Field path for validation errors (`candidates[2].hard.retry.max_retries`).
    pub field: Option<String>,
}

impl IpcError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        IpcError {
            code,
            message: message.into(),
            field: None,
        }
    }
}

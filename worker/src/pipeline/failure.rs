//! A permanent failure of one message: the error code (docs/contract.md#error-codes) and what was
//! wrong, where. Below the handler and the source reader, which both make
//! them.

use shared::ErrorCode;

/// A permanent failure: the code and what was wrong, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// error code (docs/contract.md#error-codes).
    pub code: ErrorCode,
    /// Detail for `x-error-detail`, `chunking_failures.error_detail`, the
    /// `chunking.failed` event and the log: scrubbed when made.
    detail: String,
}

impl Failure {
    /// A failure with `code`; personal data and secrets in `detail` (a
    /// file name may quote a token, a field an address) are replaced here,
    /// so that no path the detail takes out of the process carries them.
    pub fn new(code: ErrorCode, detail: impl Into<String>) -> Self {
        Self {
            code,
            detail: crate::scrub::scrub_pii(&detail.into()),
        }
    }

    /// What was wrong, where (scrubbed).
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

//! The error a setting that is missing, malformed or out of range gives.

/// A setting that is missing, malformed or out of range.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The layers could not be read or merged, or a value has the wrong type.
    #[error("cannot load settings: {0}")]
    Load(#[from] config::ConfigError),
    /// A profile setting names a profile that cannot be used, or a profile
    /// file is invalid.
    #[error(transparent)]
    Profile(#[from] crate::profiles::ProfileSettingError),
    /// A value parsed but is not acceptable.
    #[error("invalid setting `{key}`: {reason}")]
    Invalid {
        /// Dotted key, e.g. `amqp.prefetch`.
        key: &'static str,
        /// Why it is rejected.
        reason: String,
    },
}

pub(super) fn invalid(key: &'static str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key,
        reason: reason.into(),
    }
}

//! Shared code of the fuzz targets: [`checks`] holds each target's body.
pub mod checks;

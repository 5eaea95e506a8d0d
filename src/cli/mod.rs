pub mod policy;
pub mod simulate;

pub mod action;
pub mod policy;
pub mod routes;
pub mod run;
pub mod simulate;
pub mod classify;

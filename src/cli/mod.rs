pub mod action;
pub mod classify;
pub mod policy;
pub mod routes;
pub mod run;
pub mod simulate;

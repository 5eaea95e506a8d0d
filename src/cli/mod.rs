pub mod action;
pub mod routes;
pub mod run;

//! Compile-time tests (trybuild): the macro's errors and passes, and the catalog's.

pub mod catalog_ui;
pub mod ui;

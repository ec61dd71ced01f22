//! What the code `#[rpc]` generates reaches to build a trait's catalog:
//! the schema functions of its types and the errors they declare, picked
//! by autoref specialization. Reached through `__private`, not a public API.

use schemars::{JsonSchema, Schema, SchemaGenerator};

use super::{ErrorInfo, RpcError, SchemaFn};

/// The schema of `T` (hoisted into the definitions if `T` is a named type).
pub fn schema_of<T: JsonSchema + ?Sized>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// The schema of a type that does not implement [`JsonSchema`]: any value,
/// with a note that says why (outside `#[rpc(strict_schemas)]`).
pub fn unknown_schema_of<T: ?Sized>(_: &mut SchemaGenerator) -> Schema {
    let note = format!(
        "Any JSON value: `{}` has no JSON Schema (it does not implement `JsonSchema`).",
        std::any::type_name::<T>()
    );
    let mut schema = Schema::default();
    schema.insert("description".into(), note.into());
    schema.insert("x-no-schema".into(), true.into());
    schema
}

/// Picks, where `#[rpc]` names a param or result type, [`schema_of`] when
/// the type implements [`JsonSchema`] and [`unknown_schema_of`] otherwise
/// (autoref specialization: the generated code names a concrete `T`).
pub struct SchemaOf<T: ?Sized>(std::marker::PhantomData<fn() -> std::marker::PhantomData<T>>);

impl<T: ?Sized> SchemaOf<T> {
    /// The selector for `T`.
    pub const fn new() -> Self {
        SchemaOf(std::marker::PhantomData)
    }
}

impl<T: ?Sized> std::fmt::Debug for SchemaOf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SchemaOf").field(&std::any::type_name::<T>()).finish()
    }
}

impl<T: ?Sized> Default for SchemaOf<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Chosen when `T: JsonSchema`.
pub trait ViaJsonSchema {
    /// The schema function of the type.
    fn schema_fn(&self) -> SchemaFn;
}

impl<T: JsonSchema + ?Sized> ViaJsonSchema for SchemaOf<T> {
    fn schema_fn(&self) -> SchemaFn {
        schema_of::<T>
    }
}

/// Chosen otherwise.
pub trait ViaNoJsonSchema {
    /// A schema function that says the type has no schema.
    fn schema_fn(&self) -> SchemaFn;
}

impl<T: ?Sized> ViaNoJsonSchema for &SchemaOf<T> {
    fn schema_fn(&self) -> SchemaFn {
        unknown_schema_of::<T>
    }
}

/// No errors: what a method that cannot fail, or whose error type is not
/// an [`RpcError`], declares through its type.
pub fn no_errors() -> &'static [ErrorInfo] {
    &[]
}

/// Picks [`RpcError::ERRORS`] of `E` when `E` implements it, and no errors
/// otherwise (autoref specialization, as [`SchemaOf`]).
pub struct ErrorsOf<E: ?Sized>(std::marker::PhantomData<fn() -> std::marker::PhantomData<E>>);

impl<E: ?Sized> ErrorsOf<E> {
    /// The selector for `E`.
    pub const fn new() -> Self {
        ErrorsOf(std::marker::PhantomData)
    }
}

impl<E: ?Sized> std::fmt::Debug for ErrorsOf<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ErrorsOf").field(&std::any::type_name::<E>()).finish()
    }
}

impl<E: ?Sized> Default for ErrorsOf<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// Chosen when `E: RpcError`.
pub trait ViaRpcError {
    /// The errors `E` declares.
    fn errors(&self) -> &'static [ErrorInfo];
}

impl<E: RpcError + ?Sized> ViaRpcError for ErrorsOf<E> {
    fn errors(&self) -> &'static [ErrorInfo] {
        E::ERRORS
    }
}

/// Chosen otherwise.
pub trait ViaNoRpcError {
    /// No errors.
    fn errors(&self) -> &'static [ErrorInfo];
}

impl<E: ?Sized> ViaNoRpcError for &ErrorsOf<E> {
    fn errors(&self) -> &'static [ErrorInfo] {
        &[]
    }
}

/// The success type of a `Result`-like return type, for the catalog's `result`.
pub trait ResultSchema {
    /// The schema of the `Ok` value.
    fn ok_schema(generator: &mut SchemaGenerator) -> Schema;
}

impl<T: JsonSchema, E> ResultSchema for Result<T, E> {
    fn ok_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<T>()
    }
}

/// The schema of the `Ok` value of `R`.
pub fn result_schema_of<R: ResultSchema>(generator: &mut SchemaGenerator) -> Schema {
    R::ok_schema(generator)
}

//! `error(code = ..., message = "...")` on a method, and the error codes
//! that `#[derive(RpcError)]` reads the same way.

use syn::meta::ParseNestedMeta;
use syn::LitStr;

use super::{unknown_key, CODE, ERROR_KEYS, MESSAGE};

/// `error(code = -32001, message = "...")` on a method; the code is an
/// integer literal or a constant.
pub struct DeclaredError {
    pub code: syn::Expr,
    pub message: String,
}

/// `error(code = -32001, message = "Not found")`.
pub(super) fn parse_declared_error(meta: &ParseNestedMeta<'_>) -> syn::Result<DeclaredError> {
    let mut code = None;
    let mut message = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident(CODE) {
            let expr: syn::Expr = inner.value()?.parse()?;
            code = Some(parse_code(&expr)?);
        } else if inner.path.is_ident(MESSAGE) {
            message = Some(inner.value()?.parse::<LitStr>()?.value());
        } else {
            return Err(unknown_key(&inner, "in `error(...)`", ERROR_KEYS));
        }
        Ok(())
    })?;
    match (code, message) {
        (Some(code), Some(message)) => Ok(DeclaredError { code, message }),
        _ => Err(meta.error("`error` needs both keys: `error(code = -32001, message = \"...\")`")),
    }
}

/// An error code: an integer literal (possibly negative) or the path of
/// a constant (`NOT_FOUND`, `errors::NOT_FOUND`), checked by the compiler
/// to be an `i64`.
pub fn parse_code(expr: &syn::Expr) -> syn::Result<syn::Expr> {
    let invalid = || {
        syn::Error::new_spanned(expr, "error `code` must be an integer such as -32001 or the name of an `i64` constant")
    };
    match expr {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(int), .. }) => int.base10_parse::<i64>().map(|_| expr.clone()),
        syn::Expr::Unary(syn::ExprUnary { op: syn::UnOp::Neg(_), expr: inner, .. }) => match &**inner {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(int), .. }) => {
                int.base10_parse::<i64>().map(|_| expr.clone())
            }
            syn::Expr::Path(_) => Ok(expr.clone()),
            _ => Err(invalid()),
        },
        syn::Expr::Path(_) => Ok(expr.clone()),
        _ => Err(invalid()),
    }
}

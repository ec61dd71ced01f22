//! A real browser calls the calculator from a web page on another origin:
//! `tests/js/browser/run.js` starts the calculator with `--ws ADDR
//! --allow-origin <site>`, and headless Chromium (Debian's `chromium`,
//! driven by `puppeteer-core`, pinned in `tests/js/browser/package-lock.json`)
//! loads a page from that site: `fetch` calls with a CORS preflight, a
//! batch, an error with data, a notification, then a WebSocket with a call,
//! a subscription and a call from the server that the page answers. A page
//! from a second site, not allowed, is refused over `fetch` and WebSocket.
//!
//! Needs `node`, `npm` and `chromium` (skipped without them unless
//! `RPC_REQUIRE_INTEROP=1`, see `tests::interop`; `.ci/run` installs
//! them). `RPC_CHROMIUM` names another Chromium binary.

use crate::client_support;

use std::path::PathBuf;

#[test]
fn a_web_page_on_an_allowed_origin_calls_the_calculator_and_others_are_refused() {
    let test = "a_web_page_on_an_allowed_origin_calls_the_calculator_and_others_are_refused";
    let chromium = std::env::var("RPC_CHROMIUM").unwrap_or_else(|_| "chromium".to_owned());
    if !tests::interop::require(&["node", "npm", &chromium], test) {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("js").join("browser");
    tests::interop::npm_ci(&dir);
    let checks = [
        "ok fetch with a JSON body (after a CORS preflight) is answered",
        "ok a batch: its calls answered in one array, its notification not",
        "ok an error arrives with its data",
        "ok a notification is answered 204 without a body",
        "ok a call over the page's WebSocket",
        "ok a subscription over the WebSocket: its items, then its end",
        "ok the server calls the page, which answers",
        "ok a page from another origin is refused over fetch and WebSocket",
    ];
    let args = [client_support::calculator().into_os_string(), chromium.into()];
    tests::interop::node_checks(&dir, "run.js", &args, &checks, "all checks passed");
}

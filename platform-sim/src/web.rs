//! The demo page (`platform-sim --web DIR`, [`crate::SimConfig::web`]): the files of a folder
//! under `/demo/`, on the same origin as the platform API and the runtimes, and
//! `/demo/config.json` with the simulator's demo values for the page to read. Only `GET` and
//! `HEAD`; a path that leaves the folder, or names no file, is 404.

use std::path::{Component, Path, PathBuf};

use axum::body::Body;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use serde_json::json;

use crate::SimConfig;

/// The path the page is served under.
pub const DEMO_PATH: &str = "/demo/";

/// The answer for `path` when it is the demo page's, else `None` (the platform answers it).
pub(crate) fn serve(config: &SimConfig, method: &Method, path: &str) -> Option<Response> {
    let dir = config.web.as_deref()?;
    if method != Method::GET && method != Method::HEAD {
        return None;
    }
    if path == "/" || path == "/demo" {
        return Some(redirect(DEMO_PATH));
    }
    let rest = path.strip_prefix(DEMO_PATH)?;
    if rest == "config.json" {
        return Some(file_response(
            "application/json",
            demo_values(config).to_string().into_bytes(),
        ));
    }
    let rest = if rest.is_empty() { "index.html" } else { rest };
    Some(
        match inside(dir, rest).and_then(|p| std::fs::read(&p).ok().map(|b| (p, b))) {
            Some((file, bytes)) => file_response(content_type(&file), bytes),
            None => not_found(),
        },
    )
}

/// What the page needs to talk to the simulator: its Environment, person, platform token (a
/// development value on loopback) and Agents.
fn demo_values(config: &SimConfig) -> serde_json::Value {
    json!({
        "environmentUid": config.environment_uid,
        "personUid": config.person_uid,
        "token": config.platform_token,
        "dialect": config.dialect.name(),
        "agents": config.agents.iter().map(|a| json!({"uid": a.uid, "name": a.name})).collect::<Vec<_>>(),
    })
}

/// `rest` (percent-decoded) as a file inside `dir`, or `None` when it would leave it.
fn inside(dir: &Path, rest: &str) -> Option<PathBuf> {
    let decoded = crate::server::decode(rest);
    let relative = Path::new(&decoded);
    if !relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
    {
        return None;
    }
    let path = dir.join(relative);
    path.is_file().then_some(path)
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json" | "map") => "application/json",
        Some("wasm") => "application/wasm",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

fn file_response(content_type: &'static str, bytes: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(bytes));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn redirect(to: &'static str) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::FOUND;
    response
        .headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static(to));
    response
}

fn not_found() -> Response {
    let mut response = Response::new(Body::from("Not found."));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_that_leaves_the_folder_is_refused() {
        let dir = std::env::temp_dir();
        assert_eq!(inside(&dir, "../etc/passwd"), None);
        assert_eq!(inside(&dir, "%2e%2e/etc/passwd"), None);
        assert_eq!(inside(&dir, "/etc/passwd"), None);
    }
}

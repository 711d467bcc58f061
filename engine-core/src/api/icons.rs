//! P13/P14: the Agent icon projection of an Environment and the checks on icon addresses
//! (ADR 090, `platform-api.md` "P13/P14 Agent icons").

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::ApiError;
use super::error::parse_json;
use super::runtime::split_absolute;

/// At most this many icons are kept from one projection; later rows are ignored.
pub const MAX_PROJECTED_ICONS: usize = 500;
/// An Agent uid longer than this (bytes) is not a usable key; its row is skipped.
const MAX_UID_BYTES: usize = 256;
/// An icon url longer than this (bytes) is refused; its row is skipped.
pub const MAX_ICON_URL_BYTES: usize = 2048;

/// How a surface draws an icon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum IconRendering {
    /// A monochrome alpha mask that follows the theme (`currentColor`).
    Mask,
    /// A preserved-colour image, never tinted.
    Color,
}

/// One row of the projection: an Agent with a usable icon.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProjectedIcon {
    /// How it is drawn.
    pub rendering: IconRendering,
    /// Its address as the platform gave it (trimmed): absolute on the platform's origin, or
    /// root-relative.
    pub url: String,
}

/// The value at `camel`, else at `snake`; a `null` reads as absent (the reference's
/// `record.agentUid ?? record.agent_uid`).
fn either<'a>(map: &'a Map<String, Value>, camel: &str, snake: &str) -> Option<&'a Value> {
    map.get(camel)
        .filter(|v| !v.is_null())
        .or_else(|| map.get(snake))
}

/// A trimmed, non-blank string.
fn text(value: Option<&Value>) -> Option<&str> {
    value
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

/// Parses a 2xx P13 body into the icons keyed by Agent uid. A body that is not JSON fails; a
/// JSON value that is not a list is an empty projection (as in the reference). Rows are skipped
/// when they are not objects, have no uid, no icon object, a rendering other than `mask` or
/// `color`, or a url off the platform's origin (only an absolute url with the platform base's
/// scheme, host and port, or a root-relative `/…` one, is kept: the person's credential goes
/// with an icon request); a later row for the same uid replaces an earlier one.
pub fn parse_icon_projection(
    body: &[u8],
    platform_base: &str,
) -> Result<BTreeMap<String, ProjectedIcon>, ApiError> {
    let value = parse_json(body).ok_or_else(|| ApiError::Malformed {
        message: "The agent icon projection is not JSON.".to_owned(),
    })?;
    let mut icons = BTreeMap::new();
    let Value::Array(rows) = value else {
        return Ok(icons);
    };
    for row in &rows {
        let Some(record) = row.as_object() else {
            continue;
        };
        let Some(uid) = text(either(record, "agentUid", "agent_uid")) else {
            continue;
        };
        let Some(icon) =
            either(record, "commandCenterIcon", "command_center_icon").and_then(Value::as_object)
        else {
            continue;
        };
        let rendering = match text(icon.get("rendering")) {
            Some("mask") => IconRendering::Mask,
            Some("color") => IconRendering::Color,
            _ => continue,
        };
        let Some(url) = text(icon.get("url")) else {
            continue;
        };
        if uid.len() > MAX_UID_BYTES || icon_address(url, platform_base).is_none() {
            continue;
        }
        if icons.len() >= MAX_PROJECTED_ICONS && !icons.contains_key(uid) {
            continue;
        }
        let url = url.to_owned();
        icons.insert(uid.to_owned(), ProjectedIcon { rendering, url });
    }
    Ok(icons)
}

/// Where an icon url is requested: `(origin, path and query, root-relative)`. The person's
/// credential goes with an icon request, so only the platform's own origin is accepted: an
/// absolute `http`/`https` url with the platform base's scheme and authority, or a
/// root-relative one (`/…`, joined to that origin). Refused: anything longer than
/// [`MAX_ICON_URL_BYTES`], with whitespace, control or non-ASCII characters, `\` or a fragment,
/// a protocol-relative `//host/…`, another origin or scheme.
pub(crate) fn icon_address(url: &str, platform_base: &str) -> Option<(String, String, bool)> {
    let acceptable = |c: char| c.is_ascii_graphic() && !matches!(c, '#' | '\\');
    if url.len() > MAX_ICON_URL_BYTES || !url.chars().all(acceptable) {
        return None;
    }
    let platform = split_absolute(platform_base.trim())?;
    let origin = format!("{}://{}", platform.scheme, platform.authority);
    if url.starts_with("//") {
        return None;
    }
    if url.starts_with('/') {
        return Some((origin, url.to_owned(), true));
    }
    let parts = split_absolute(url)?;
    let same =
        parts.scheme == platform.scheme && parts.authority.eq_ignore_ascii_case(platform.authority);
    if !same {
        return None;
    }
    let path = if parts.path.is_empty() {
        "/".to_owned()
    } else {
        parts.path.to_owned()
    };
    Some((origin, path, false))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::api::error::hostile_bodies;

    const BASE: &str = "https://platform.example.test/prefix";

    #[test]
    fn keeps_only_usable_rows_keyed_by_uid() {
        let body = br#"[
          {"agentUid": "a1", "commandCenterIcon": {"rendering": "mask", "url": "https://platform.example.test/api/v1/command-center/agents/a1/icon/"}},
          {"agentUid": "a2", "commandCenterIcon": null},
          {"agentUid": "a3", "commandCenterIcon": {"rendering": "sparkle", "url": "/x/"}},
          {"agentUid": "a4", "commandCenterIcon": {"rendering": "color", "url": "  "}},
          {"agentUid": "", "commandCenterIcon": {"rendering": "color", "url": "/x/"}},
          {"agent_uid": "a5", "command_center_icon": {"rendering": " color ", "url": " /api/v1/command-center/agents/a5/icon/ "}},
          {"agentUid": "a6", "commandCenterIcon": {"rendering": "mask", "url": "https://elsewhere.test/icon/"}},
          {"agentUid": "a7", "commandCenterIcon": {"rendering": "mask", "url": "//platform.example.test/icon/"}},
          {"agentUid": 8, "agent_uid": "a8", "commandCenterIcon": {"rendering": "mask", "url": "/i/"}},
          "junk"
        ]"#;
        let icons = parse_icon_projection(body, BASE).unwrap();
        assert_eq!(icons.keys().collect::<Vec<_>>(), ["a1", "a5"]);
        assert_eq!(icons["a5"].rendering, IconRendering::Color);
        assert_eq!(icons["a5"].url, "/api/v1/command-center/agents/a5/icon/");
        assert!(
            parse_icon_projection(br#"{"not": "a list"}"#, BASE)
                .unwrap()
                .is_empty()
        );
        assert!(parse_icon_projection(b"<html>", BASE).is_err());
    }

    #[test]
    fn icon_addresses_stay_on_the_platform_origin() {
        let ok = icon_address("HTTPS://Platform.Example.Test/api/v1/i/?v=2", BASE).unwrap();
        assert_eq!(
            ok,
            (
                "https://platform.example.test".to_owned(),
                "/api/v1/i/?v=2".to_owned(),
                false
            )
        );
        let root = icon_address("/api/v1/i/", BASE).unwrap();
        assert_eq!(root.1, "/api/v1/i/");
        assert!(root.2);
        for bad in [
            "http://platform.example.test/i/",
            "https://platform.example.test:8443/i/",
            "https://evil.test/i/",
            "//evil.test/i/",
            "javascript:alert(1)",
            "/i/ x",
            "/i/#frag",
            "/i\\x",
            "/ü",
            "relative/icon",
        ] {
            assert!(icon_address(bad, BASE).is_none(), "{bad}");
        }
        assert!(icon_address(&format!("/{}", "a".repeat(MAX_ICON_URL_BYTES)), BASE).is_none());
    }

    #[test]
    fn hostile_bodies_do_not_panic_and_large_lists_are_bounded() {
        for body in hostile_bodies() {
            let _ = parse_icon_projection(&body, BASE);
        }
        let rows: Vec<String> = (0..MAX_PROJECTED_ICONS + 50)
            .map(|i| {
                format!(r#"{{"agentUid":"a{i}","commandCenterIcon":{{"rendering":"mask","url":"/i/{i}/"}}}}"#)
            })
            .collect();
        let body = format!("[{}]", rows.join(","));
        let icons = parse_icon_projection(body.as_bytes(), BASE).unwrap();
        assert_eq!(icons.len(), MAX_PROJECTED_ICONS);
    }
}

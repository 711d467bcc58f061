//! HTTP requests as they go on the wire, without an HTTP client's types: method, target,
//! headers (credentials redacted), the address and its encoding, ids as path segments, and
//! the line a finished answer names in its failure texts.

use std::fmt;

use bytes::Bytes;
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde::{Serialize, Serializer};
use serde_json::Value;

/// HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Method {
    /// GET
    #[serde(rename = "GET")]
    Get,
    /// POST
    #[serde(rename = "POST")]
    Post,
    /// PATCH
    #[serde(rename = "PATCH")]
    Patch,
    /// PUT
    #[serde(rename = "PUT")]
    Put,
    /// DELETE
    #[serde(rename = "DELETE")]
    Delete,
}

impl Method {
    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Patch => "PATCH",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

/// Which backend a request goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// The platform API (person credential).
    Platform,
    /// An Agent runtime (runtime token).
    AgentRuntime,
    /// A local Agent runtime (ADR 099): no credential at all.
    Local,
}

/// Whether the shell hands the body over whole or chunk by chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BodyMode {
    /// The shell may deliver the answer body in any chunking, typically one chunk.
    Buffered,
    /// The shell should deliver chunks as they arrive (streamed answers).
    Streamed,
}

/// One request header. Sensitive values (credentials) never show in `Debug` or serialized
/// output; shells read them with [`Header::value`].
#[derive(Clone, PartialEq, Eq)]
pub struct Header {
    name: &'static str,
    value: String,
    sensitive: bool,
}

impl Header {
    /// A header whose value may be shown.
    pub fn new(name: &'static str, value: impl Into<String>) -> Header {
        Header {
            name,
            value: value.into(),
            sensitive: false,
        }
    }

    /// A header carrying a credential: redacted everywhere but [`Header::value`].
    pub fn sensitive(name: &'static str, value: impl Into<String>) -> Header {
        Header {
            name,
            value: value.into(),
            sensitive: true,
        }
    }

    /// The header name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The real value, for the shell that sends the request.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Whether the value is a credential.
    pub fn is_sensitive(&self) -> bool {
        self.sensitive
    }

    fn shown(&self) -> &str {
        if self.sensitive {
            "[redacted]"
        } else {
            &self.value
        }
    }
}

impl fmt::Debug for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.shown())
    }
}

impl Serialize for Header {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (self.name, self.shown()).serialize(s)
    }
}

/// A request as it goes on the wire, without an HTTP client's types.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct HttpRequest {
    /// The method.
    pub method: Method,
    /// Platform or Agent runtime.
    pub target: Target,
    /// The base address (scheme, host, optional path prefix, no trailing slash).
    pub base: String,
    /// The path, every id percent-encoded as one segment.
    pub path: String,
    /// Query parameters in order (not yet encoded).
    pub query: Vec<(String, String)>,
    /// Headers in order.
    pub headers: Vec<Header>,
    /// The JSON body, when there is one.
    #[serde(serialize_with = "body_as_text")]
    pub body: Option<Bytes>,
    /// Buffered or streamed answer.
    pub body_mode: BodyMode,
    /// The address came root-relative (`/…`: an `rpc_url` or an icon url starting with `/`) and
    /// was resolved against the platform's origin, which stands in for the reference's page. As
    /// in the reference, such an address is not given to the host's URL rewrite
    /// ([`HttpRequest::request_url`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub root_relative: bool,
}

/// The host's URL rewrite (`connection.rewriteRequestUrl`): from the absolute address of a
/// request and its target to the address actually requested. Shells apply it once to every
/// request they carry out, through [`HttpRequest::request_url`].
pub type UrlRewrite = dyn Fn(&str, Target) -> String + Send + Sync;

/// A host's URL rewrite as the shells apply it (RU-46): a result that is root-relative (`/…`,
/// or `//host/…` without a scheme) is resolved against the platform's origin, which stands in
/// for the page the reference's browser resolves it against; any other result is requested as
/// returned. `platform_base` is [`crate::Config::platform_base_url`].
///
/// ```
/// use std::sync::Arc;
/// use engine_core::{Target, UrlRewrite, rewrite_on_platform};
///
/// let proxy: Arc<UrlRewrite> = Arc::new(|url: &str, _target: Target| {
///     url.replacen("https://platform.test", "/__platform__", 1)
/// });
/// let rewrite = rewrite_on_platform(proxy, "https://platform.test");
/// assert_eq!(
///     rewrite("https://platform.test/api/v1/agent-sessions/?limit=20", Target::Platform),
///     "https://platform.test/__platform__/api/v1/agent-sessions/?limit=20"
/// );
/// ```
pub fn rewrite_on_platform(
    rewrite: std::sync::Arc<UrlRewrite>,
    platform_base: &str,
) -> std::sync::Arc<UrlRewrite> {
    let base = platform_base.trim();
    let (scheme, rest) = base.split_once("://").unwrap_or(("https", base));
    let origin = format!("{scheme}://{}", rest.split('/').next().unwrap_or(rest));
    let scheme = scheme.to_owned();
    std::sync::Arc::new(move |url: &str, target: Target| {
        let address = rewrite(url, target);
        if let Some(rest) = address.strip_prefix("//") {
            format!("{scheme}://{rest}")
        } else if address.starts_with('/') {
            format!("{origin}{address}")
        } else {
            address
        }
    })
}

fn body_as_text<S: Serializer>(body: &Option<Bytes>, s: S) -> Result<S::Ok, S::Error> {
    match body {
        Some(b) => match serde_json::from_slice::<Value>(b) {
            Ok(v) => v.serialize(s),
            Err(_) => String::from_utf8_lossy(b).serialize(s),
        },
        None => s.serialize_none(),
    }
}

/// Characters encoded in a query component (everything but unreserved characters).
const QUERY: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'&')
    .add(b'+')
    .add(b'<')
    .add(b'=')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'/')
    .add(b'\\')
    .add(b'|')
    .add(b'^')
    .add(b'[')
    .add(b']')
    .add(b';')
    .add(b':')
    .add(b'@')
    .add(b'$')
    .add(b',')
    .add(b'\'');

/// Characters encoded in a path segment: `/`, `?`, `#`, `%`, spaces, controls and the rest of
/// the WHATWG path set, so an id is always exactly one segment.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'\\')
    .add(b'|')
    .add(b'^')
    .add(b'[')
    .add(b']')
    .add(b';');

impl HttpRequest {
    /// A request with no query, no header and no body, its answer buffered: what a shell's own
    /// tests (or a host replaying requests) start from, setting the other fields after.
    ///
    /// ```
    /// use engine_core::{BodyMode, HttpRequest, Method, Target};
    /// let mut request = HttpRequest::new(Method::Get, Target::Platform, "https://p.example", "/v1/x");
    /// request.query.push(("q".into(), "a b".into()));
    /// request.body_mode = BodyMode::Streamed;
    /// assert_eq!(request.url(), "https://p.example/v1/x?q=a%20b");
    /// ```
    pub fn new(
        method: Method,
        target: Target,
        base: impl Into<String>,
        path: impl Into<String>,
    ) -> HttpRequest {
        HttpRequest {
            method,
            target,
            base: base.into(),
            path: path.into(),
            query: Vec::new(),
            headers: Vec::new(),
            body: None,
            body_mode: BodyMode::Buffered,
            root_relative: false,
        }
    }

    /// The full address: base, path and encoded query.
    pub fn url(&self) -> String {
        let mut url = format!("{}{}", self.base, self.path);
        for (i, (k, v)) in self.query.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.extend(utf8_percent_encode(k, QUERY));
            url.push('=');
            url.extend(utf8_percent_encode(v, QUERY));
        }
        url
    }

    /// The address to request: [`HttpRequest::url`] passed once through `rewrite` when there is
    /// one, unless the address was root-relative ([`HttpRequest::root_relative`]). The engine's
    /// requests always carry the original platform or runtime address, never a rewritten one,
    /// so calling this once per request never doubles a prefix.
    ///
    /// ```
    /// # use engine_core::{HttpRequest, Target};
    /// # fn demo(request: &HttpRequest) {
    /// let rewrite = |url: &str, _target: Target| url.replace("https://platform.example.test", "http://proxy.test/platform");
    /// let address = request.request_url(Some(&rewrite));
    /// # }
    /// ```
    pub fn request_url(&self, rewrite: Option<&UrlRewrite>) -> String {
        let url = self.url();
        match rewrite {
            Some(rewrite) if !self.root_relative => rewrite(&url, self.target),
            _ => url,
        }
    }

    /// The value of the first header with this name (ASCII case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(Header::value)
    }
}

/// Why an id cannot be placed in a path. A session's or an Agent's reads "session \"undefined\"
/// is not a valid session uid." (RU-25 pins "valid session uid"); anything else "... is not a
/// valid id.".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} {shown:?} is not a valid {}.", self.kind())]
pub struct InvalidId {
    what: &'static str,
    shown: String,
}

impl InvalidId {
    /// A value that cannot be rendered at all (shown as nothing).
    pub(crate) fn refused(what: &'static str) -> InvalidId {
        InvalidId {
            what,
            shown: String::new(),
        }
    }

    /// What the text calls the refused value: "session uid", "agent uid", else "id".
    fn kind(&self) -> &'static str {
        match self.what {
            "session" => "session uid",
            "agent" => "agent uid",
            _ => "id",
        }
    }

    /// A value refused, quoted by its first 64 characters.
    pub(crate) fn quoting(what: &'static str, value: &str) -> InvalidId {
        InvalidId {
            what,
            shown: value.chars().take(64).collect(),
        }
    }
}

/// Checks an id before it goes into a path (`platform-api.md` section 1): empty, `undefined`
/// and `null` (any case, surrounding spaces ignored) are refused, and so are `.` and `..`,
/// which URL normalization would turn into a different path even when percent-encoded.
pub fn check_id(what: &'static str, id: &str) -> Result<(), InvalidId> {
    let t = id.trim();
    let bad = t.is_empty()
        || t.eq_ignore_ascii_case("undefined")
        || t.eq_ignore_ascii_case("null")
        || t == "."
        || t == "..";
    if bad {
        Err(InvalidId::quoting(what, id))
    } else {
        Ok(())
    }
}

/// A credential can go into a header: no control characters (no CR/LF header injection).
pub(crate) fn header_safe(value: &str) -> bool {
    !value.chars().any(char::is_control)
}

/// Percent-encodes an id as exactly one path segment.
pub fn segment(id: &str) -> String {
    utf8_percent_encode(id, SEGMENT).to_string()
}

/// A request's method and full address, as the engine built it, and the reason phrase of its
/// answer's status line, once the head came: what RU-19's text of a refusal quotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CallLine {
    pub method: Method,
    pub url: String,
    /// The status line's reason phrase, when the head had one.
    pub reason: Option<String>,
}

/// Splits `host[:port]` or `[v6][:port]` (no user info); `None` when the brackets or what
/// follows them are malformed. The host of an IPv6 literal is what is inside the brackets.
pub(crate) fn host_and_port(host_port: &str) -> Option<(&str, Option<&str>)> {
    if let Some(bracketed) = host_port.strip_prefix('[') {
        let (inside, after) = bracketed.split_once(']')?;
        if inside.is_empty() || inside.contains('[') {
            return None;
        }
        return match after {
            "" => Some((inside, None)),
            _ => after.strip_prefix(':').map(|port| (inside, Some(port))),
        };
    }
    if host_port.contains(['[', ']']) {
        return None;
    }
    Some(match host_port.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (host_port, None),
    })
}

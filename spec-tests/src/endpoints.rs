//! The endpoint table the suite holds requests to (INV-9), shared by the property tests and the
//! simulator.

/// INV-9: the endpoint table of OI-11, for requests made against [`crate::BASE`] and the
/// fixtures' runtime base (`fixtures::rpc_url`), and the local runtime's routes of
/// `platform-api.md` section 8 at [`crate::local::BASE`] (ADR 099), which carry no credential.
pub fn allowed(r: &engine_core::HttpRequest) -> bool {
    use engine_core::Method::{Delete, Get, Post, Put};
    let segs: Vec<&str> = r.path.split('/').collect();
    let id = |s: &str| !s.is_empty() && !s.contains(['?', '#', ' ']) && s != "." && s != "..";
    if r.target == engine_core::Target::Local {
        let route_ok = match (r.method, segs.as_slice()) {
            (Get, ["", "ready" | "health"] | ["", "api", "chat"]) => true,
            (Get, ["", "api", "chat", "model-providers" | "session-model"]) => true,
            (Put, ["", "api", "chat", "session-model"]) => true,
            (Post, ["", "api", "chat"] | ["", "api", "chat", "session", "cancel"]) => true,
            (Get, ["", "api", "local", "v1", "agent" | "chat-sessions"]) => true,
            (Get, ["", "api", "local", "v1", "chat-sessions", s, "history"]) => id(s),
            _ => false,
        };
        let no_credential = r
            .headers
            .iter()
            .all(|h| !h.name().eq_ignore_ascii_case("authorization"));
        return route_ok && no_credential && r.base == crate::local::BASE;
    }
    if r.target == engine_core::Target::AgentRuntime {
        // R1 to R3, on the runtime base of the answer (INV-11: the session's own rpc_url).
        let path_ok = match r.method {
            Get => r.path == "/api/chat",
            Post => r.path == "/api/chat" || r.path == "/api/chat/session/cancel",
            _ => false,
        };
        return path_ok && r.base.starts_with("https://rt.test/agents/");
    }
    if !r.path.ends_with('/') || r.base != crate::BASE {
        return false;
    }
    match (r.method, segs.as_slice()) {
        (Get, ["", "api", "v1", "agent-sessions", ""]) => true,
        (Get, ["", "api", "v1", "model-providers", ""]) => r.query.is_empty(),
        (engine_core::Method::Patch, ["", "api", "v1", "agent-sessions", s, ""]) => id(s),
        (Get | Delete, ["", "api", "v1", "agent-sessions", s, ""]) => id(s),
        (
            Get,
            [
                "",
                "api",
                "v1",
                "agent-sessions",
                s,
                "history" | "insights",
                "",
            ],
        ) => id(s),
        (Post, ["", "api", "v1", "agent-sessions", s, "archive", ""]) => id(s),
        (Post, ["", "api", "v1", "agents", a, "start-new-session", ""]) => id(a),
        (
            Post,
            [
                "",
                "api",
                "v1",
                "agents",
                a,
                "sessions",
                "get-or-create-session",
                "",
            ],
        ) => id(a),
        (
            Post,
            [
                "",
                "api",
                "v1",
                "agent-sessions",
                s,
                "resolve-runtime-access",
                "",
            ],
        ) => id(s),
        _ => false,
    }
}

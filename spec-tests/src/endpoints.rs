//! The endpoint table the suite holds requests to (INV-9), shared by the property tests and the
//! simulator.

/// INV-9: the endpoint table of OI-11 (platform requests only, in this release), for requests
/// made against [`crate::BASE`] and the fixtures' runtime base (`fixtures::rpc_url`).
pub fn allowed(r: &engine_core::HttpRequest) -> bool {
    use engine_core::Method::{Delete, Get, Post};
    let segs: Vec<&str> = r.path.split('/').collect();
    let id = |s: &str| !s.is_empty() && !s.contains(['?', '#', ' ']) && s != "." && s != "..";
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

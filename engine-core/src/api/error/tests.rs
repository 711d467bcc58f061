use super::*;

fn message(body: &str) -> Option<String> {
    error_message(body.as_bytes())
}

#[test]
fn detail_body_reads_detail() {
    let body = r#"{"detail": "Model selection cannot change while a turn is working or persisting.", "error_code": "agent_session_selection_runtime_active"}"#;
    assert_eq!(
        message(body).as_deref(),
        Some("Model selection cannot change while a turn is working or persisting.")
    );
}

#[test]
fn message_fields_in_order_and_trimmed() {
    assert_eq!(
        message(r#"{"detail": "d", "message": "  m  "}"#).as_deref(),
        Some("m")
    );
    assert_eq!(
        message(r#"{"message": "   ", "detail": "d"}"#).as_deref(),
        Some("d")
    );
    assert_eq!(
        message(r#"{"message": 5, "error": "e", "error_detail": "x"}"#).as_deref(),
        Some("e")
    );
    assert_eq!(
        message(r#"{"error_detail": "x", "code": "c"}"#).as_deref(),
        Some("x")
    );
}

#[test]
fn field_map_collects_paths_in_document_order() {
    let body = r#"{"llm_provider": ["This field is required."], "llm_model": ["This field is required."]}"#;
    assert_eq!(
        message(body).as_deref(),
        Some("llm_provider: This field is required.; llm_model: This field is required.")
    );
}

#[test]
fn non_field_errors_have_no_prefix() {
    let body = r#"{"non_field_errors": ["Send exactly one of handle_unique_id and session_uid.", "Second."]}"#;
    assert_eq!(
        message(body).as_deref(),
        Some("Send exactly one of handle_unique_id and session_uid.; Second.")
    );
}

#[test]
fn nested_paths_join_with_dots_and_skip_metadata() {
    let body = r#"{
        "code": "invalid",
        "request_id": "r-1",
        "status": "error",
        "status_code": "400",
        "error_code": "bad",
        "runtime_config_override": {"limits": {"max_turns": ["Too large."]}, "non_field_errors": ["Bad config."]},
        "llm_model": "Unknown model.",
        "again": "Unknown model.",
        "dup": ["x", "x"],
        "count": 3,
        "empty": "  "
    }"#;
    assert_eq!(
        message(body).as_deref(),
        Some(
            "error_code: bad; runtime_config_override.limits.max_turns: Too large.; runtime_config_override: Bad config.; llm_model: Unknown model.; again: Unknown model.; dup: x"
        )
    );
}

/// RU-19's example, verbatim: list entries that are objects add `[i]`, `request_id` is
/// skipped.
#[test]
fn ru_19_list_entries_add_their_index() {
    let body = r#"{"models": [{"metadata": ["Metadata cannot contain authentication fields: token."], "thinking_levels": ["A non-reasoning model cannot expose thinking levels."]}], "request_id": "r"}"#;
    assert_eq!(
        message(body).as_deref(),
        Some(
            "models[0].metadata: Metadata cannot contain authentication fields: token.; models[0].thinking_levels: A non-reasoning model cannot expose thinking levels."
        )
    );
    // A string entry keeps the list's path; lists in lists add each index; a top-level list
    // starts at its index; `non_field_errors` adds nothing, `status` is skipped with all it
    // holds; numbers, booleans and null give nothing.
    assert_eq!(
        message(r#"{"a": ["x", ["y", {"b": "z"}], 3, null, true]}"#).as_deref(),
        Some("a: x; a[1]: y; a[1][1].b: z")
    );
    assert_eq!(
        message(r#"[{"a": "x"}, "y", {"non_field_errors": ["w"]}]"#).as_deref(),
        Some("[0].a: x; y; [2]: w")
    );
    assert_eq!(
        message(r#"{"status": {"a": "hidden"}, "status_code": ["hidden"], "code": "c", "f": [{"non_field_errors": ["v"]}]}"#).as_deref(),
        Some("f[0]: v")
    );
}

/// RU-18: the body read by its content type.
#[test]
fn ru_18_server_message_by_content_type() {
    let json = Some("Application/JSON");
    assert_eq!(
        server_message(json, br#"{"detail": "boom"}"#).as_deref(),
        Some("boom")
    );
    assert_eq!(server_message(json, b"not json"), None);
    assert_eq!(server_message(json, b"{}"), None);
    assert_eq!(server_message(json, b""), None);
    assert_eq!(
        server_message(json, br#"{"llm_model": ["Bad."]}"#).as_deref(),
        Some("llm_model: Bad.")
    );
    for text_type in [None, Some("text/plain"), Some("text/html")] {
        assert_eq!(server_message(text_type, b" \n "), None);
        assert_eq!(
            server_message(text_type, br#" {"message": "m"} "#).as_deref(),
            Some("m")
        );
        assert_eq!(
            server_message(text_type, b"[1, 2]").as_deref(),
            Some("[1, 2]")
        );
        assert_eq!(
            server_message(text_type, b"  Bad gateway \n").as_deref(),
            Some("Bad gateway")
        );
        assert_eq!(
            server_message(text_type, b"<h1>502</h1>").as_deref(),
            Some("<h1>502</h1>")
        );
    }
    let long = "a".repeat(600);
    assert_eq!(
        server_message(None, long.as_bytes()).map(|m| m.chars().count()),
        Some(501)
    );
}

#[test]
fn non_string_detail_falls_back_to_collection() {
    assert_eq!(
        message(r#"{"detail": {"llm_model": ["Bad."]}}"#).as_deref(),
        Some("detail.llm_model: Bad.")
    );
}

#[test]
fn json_string_and_array_bodies() {
    assert_eq!(
        message(r#""  Plain failure. ""#).as_deref(),
        Some("Plain failure.")
    );
    assert_eq!(
        message(r#"["One.", "Two.", "One."]"#).as_deref(),
        Some("One.; Two.")
    );
    assert_eq!(message(r#"[]"#), None);
    assert_eq!(message(r#""""#), None);
}

#[test]
fn json_without_text_gives_none() {
    assert_eq!(message("{}"), None);
    assert_eq!(message("null"), None);
    assert_eq!(message("42"), None);
    assert_eq!(message("true"), None);
    assert_eq!(message(r#"{"code": "x", "status": 500}"#), None);
}

#[test]
fn plain_text_is_trimmed() {
    assert_eq!(message("  Bad gateway  \n").as_deref(), Some("Bad gateway"));
    assert_eq!(message(""), None);
    assert_eq!(message("   \n"), None);
    // Broken JSON is raw text.
    assert_eq!(
        message(r#"{"detail": "x"#).as_deref(),
        Some(r#"{"detail": "x"#)
    );
}

#[test]
fn html_body_gives_none() {
    let body = "\n<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head><body><h1>Server Error</h1></body></html>";
    assert_eq!(message(body), None);
    assert_eq!(message("<html>oops</html>"), None);
}

#[test]
fn invalid_utf8_is_decoded_leniently() {
    let body = b"Bad \xFF\xFE gateway";
    assert_eq!(
        error_message(body).as_deref(),
        Some("Bad \u{FFFD}\u{FFFD} gateway")
    );
    assert_eq!(error_message(b"\xC3"), Some("\u{FFFD}".to_owned()));
}

#[test]
fn byte_order_mark_is_ignored() {
    assert_eq!(
        error_message(b"\xEF\xBB\xBF{\"detail\": \"x\"}").as_deref(),
        Some("x")
    );
}

#[test]
fn long_messages_are_capped_at_a_char_boundary() {
    let long = "é".repeat(800);
    let capped = message(&format!(r#"{{"detail": "{long}"}}"#)).unwrap();
    assert_eq!(capped.chars().count(), 501);
    assert!(capped.ends_with('…'));
    assert!(capped.starts_with("éé"));

    let exact = "a".repeat(500);
    assert_eq!(message(&exact).as_deref(), Some(exact.as_str()));
    let over = "a".repeat(501);
    assert_eq!(message(&over), Some(format!("{exact}…")));
}

#[test]
fn http_error_display_carries_the_server_message() {
    let error = ApiError::http(Operation::SessionDetail, 409, br#"{"detail": "Busy."}"#);
    assert_eq!(error.server_message(), Some("Busy."));
    assert_eq!(error.status(), Some(409));
    assert_eq!(
        error.to_string(),
        "Session detail request failed. Status: HTTP 409. Server response: Busy."
    );
    let error = ApiError::http(Operation::SessionList, 500, b"<html></html>");
    assert_eq!(
        error.to_string(),
        "Latest agent sessions request failed. Status: HTTP 500."
    );
}

#[test]
fn model_required_both_fields() {
    let body = br#"{"llm_provider": ["This field is required."], "llm_model": ["This field is required."]}"#;
    assert_eq!(
        model_required_fields(400, body),
        Some(vec!["llm_provider".to_owned(), "llm_model".to_owned()])
    );
}

#[test]
fn model_required_one_field_string_or_list() {
    assert_eq!(
        model_required_fields(400, br#"{"llm_model": "REQUIRED field"}"#),
        Some(vec!["llm_model".to_owned()])
    );
    assert_eq!(
        model_required_fields(
            400,
            br#"{"llm_model": ["Unknown model."], "llm_provider": [3, "Provider is Required."]}"#
        ),
        Some(vec!["llm_provider".to_owned()])
    );
}

#[test]
fn model_required_negative_cases() {
    let required = br#"{"llm_provider": ["This field is required."]}"#;
    assert_eq!(
        model_required_fields(400, br#"{"llm_model": ["Unknown model."]}"#),
        None
    );
    assert_eq!(model_required_fields(500, required), None);
    assert_eq!(model_required_fields(401, required), None);
    assert_eq!(
        model_required_fields(400, br#"[{"llm_model": ["This field is required."]}]"#),
        None
    );
    assert_eq!(
        model_required_fields(400, br#"["This field is required."]"#),
        None
    );
    assert_eq!(
        model_required_fields(400, b"llm_model: This field is required."),
        None
    );
    assert_eq!(
        model_required_fields(400, br#"{"name": ["This field is required."]}"#),
        None
    );
    assert_eq!(
        model_required_fields(400, br#"{"llm_model": [["This field is required."]]}"#),
        None
    );
    assert_eq!(
        model_required_fields(400, br#"{"llm_model": {"x": "required"}}"#),
        None
    );
    assert_eq!(model_required_fields(400, b""), None);
}

#[test]
fn hostile_bodies_do_not_panic() {
    for body in hostile_bodies() {
        let _ = error_message(&body);
        let _ = server_message(Some("application/json"), &body);
        let _ = server_message(None, &body);
        let _ = model_required_fields(400, &body);
    }
}

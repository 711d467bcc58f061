use super::*;

/// The chunk summary escapes only the start of a chunk, and reads the same as clipping the
/// whole chunk's `Debug` form.
#[test]
fn debug_clipped_is_the_clipped_debug_form() {
    let long = "data: {\"delta\":\"x\"}\n\n".repeat(20);
    let samples = [
        "",
        "plain",
        "it's \"quoted\" \\ back\tslash\r\n",
        "\u{301}accent first, then e\u{301} and \u{200b} and \u{7f}\u{0}",
        "ünïcödé 日本語 🎉 \u{feff}",
        long.as_str(),
    ];
    for s in samples {
        for max in [0, 1, 2, 5, 10, 11, 12, 100] {
            let mut out = String::new();
            debug_clipped(&mut out, s, max);
            assert_eq!(out, clip(&format!("{s:?}"), max), "{s:?} at {max}");
        }
    }
    // Exactly at the limit: no ellipsis.
    let mut out = String::new();
    debug_clipped(&mut out, "abc", 5);
    assert_eq!(out, "\"abc\"");
}

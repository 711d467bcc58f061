//! The chat backend connection (`reference-update.md`, section 9: RU-45 to RU-49): the
//! platform base URL a host gives the engine.

use engine_core::{Config, ConfigError, HostConfig, Time};

/// RU-45: the reference's text for a refused base URL.
const REFUSED: &str =
    "The chat backend connection requires an absolute http(s) platform API base URL.";

/// RU-45: the base, trimmed, must be an absolute `http` or `https` URL; `""`, `"/api"` and
/// `"ftp://platform.test"` are refused with the reference's text (its tests pin "absolute
/// http(s)"), and `" https://api.platform.test "` is taken as `https://api.platform.test`.
#[test]
fn ru_45_the_base_url_must_be_absolute_http_or_https() {
    for base in [
        "",
        "/api",
        "ftp://platform.test",
        "   ",
        "platform.test",
        "https://",
    ] {
        let err = Config::new(base).expect_err(base);
        assert_eq!(err.to_string(), REFUSED, "{base:?}");
        assert!(err.to_string().contains("absolute http(s)"));
        assert_eq!(err.code(), "config_base_url");
        assert_eq!(
            err,
            ConfigError::BaseUrl(base.to_owned()),
            "the value refused is kept"
        );
    }
    let config = Config::new(" https://api.platform.test ").unwrap();
    assert_eq!(config.platform_base_url, "https://api.platform.test");
    let config = Config::new("http://127.0.0.1:8080/").unwrap();
    assert_eq!(config.platform_base_url, "http://127.0.0.1:8080");
}

/// RU-45: hosts outside Rust (the C ABI, the Python package) start an engine from a
/// `HostConfig`: the same refusal and the same text reach them.
#[test]
fn ru_45_a_host_configuration_is_refused_alike() {
    for base in ["/api", "ftp://platform.test"] {
        let form = serde_json::json!({ "platformBaseUrl": base }).to_string();
        let form: HostConfig = serde_json::from_str(&form).unwrap();
        let err = form.engine(Time::ZERO).expect_err("refused");
        assert_eq!(err.to_string(), REFUSED);
        assert_eq!(err.code(), "config_base_url");
    }
    let form: HostConfig =
        serde_json::from_str(r#"{"platformBaseUrl": " https://api.platform.test "}"#).unwrap();
    assert!(form.engine(Time::ZERO).is_ok());
}

use super::*;
use crate::input::{Command, Person};
use crate::model::Secret;

fn round_trip(record: Record) {
    let line = record.to_line();
    let back = Record::parse_line(&line).unwrap().unwrap();
    assert_eq!(back, record, "{line}");
}

#[test]
fn records_round_trip() {
    round_trip(Record::Header(Header {
        trace: FORMAT.into(),
        version: VERSION,
        config: TraceConfig::from_config(&Config::new("https://p.test").unwrap()),
        engine: Some("engine-core test".into()),
    }));
    round_trip(Record::Step {
        at: Offset(1_203_417),
        step: Step::Input(Input::Command(Command::SendMessage { text: "hi".into() })),
    });
    round_trip(Record::Step {
        at: Offset::from_millis(5),
        step: Step::Chunk {
            id: RequestId(3),
            bytes: vec![0xff, 0x00, b'a'],
        },
    });
    round_trip(Record::Step {
        at: Offset::from_millis(5),
        step: Step::Chunk {
            id: RequestId(3),
            bytes: b"data: {}\n\n".to_vec(),
        },
    });
    round_trip(Record::Step {
        at: Offset::ZERO,
        step: Step::Failure {
            id: RequestId(2),
            failure: TransportFailure::no_answer("refused"),
        },
    });
    round_trip(Record::Step {
        at: Offset(1),
        step: Step::Timeout,
    });
    round_trip(Record::Note("a comment".into()));
    let json = Record::parse_line(r#"{"at": 2, "chunk": {"id": 4, "json": {"a": [1, "x"]}}}"#);
    assert_eq!(
        json.unwrap().unwrap(),
        Record::Step {
            at: Offset::from_millis(2),
            step: Step::Chunk {
                id: RequestId(4),
                bytes: br#"{"a":[1,"x"]}"#.to_vec()
            }
        }
    );
    round_trip(Record::Expect(Expectation {
        no_intents: true,
        aborts: Some(vec![1]),
        ..Expectation::default()
    }));
}

#[test]
fn person_token_is_written_redacted() {
    let record = Record::Step {
        at: Offset::ZERO,
        step: Step::Input(Input::Person(Person {
            user_uid: Some("u".into()),
            token: Some(Secret::new("platform-secret")),
            token_type: None,
        })),
    };
    let line = record.to_line();
    assert!(!line.contains("platform-secret"), "{line}");
    assert!(line.contains(r#""token":"[redacted]""#), "{line}");
    assert_eq!(
        line,
        r#"{"at":0,"input":{"input":"person","value":{"userUid":"u","token":"[redacted]","tokenType":null}}}"#
    );
}

#[test]
fn offsets_read_milliseconds_with_microsecond_fractions() {
    let read = |s: &str| serde_json::from_str::<Offset>(s);
    assert_eq!(read("120").unwrap(), Offset::from_millis(120));
    assert_eq!(read("120.5").unwrap().as_micros(), 120_500);
    assert_eq!(read("0.001").unwrap().as_micros(), 1);
    assert!(read("-1").is_err());
    assert!(read("\"1\"").is_err());
    assert_eq!(Offset(120_500).to_string(), "120.5");
    assert_eq!(serde_json::to_string(&Offset(120_500)).unwrap(), "120.5");
    assert_eq!(serde_json::to_string(&Offset(120_000)).unwrap(), "120");
}

/// A decimal offset is in range up to 9e15 µs (9e12 ms, about 285 years) inclusive; past
/// that it is refused, not saturated.
#[test]
fn decimal_offsets_are_in_range_up_to_9e15_micros() {
    let read = |s: &str| serde_json::from_str::<Offset>(s);
    assert_eq!(
        read("9000000000000.0").unwrap(),
        Offset::from_millis(9_000_000_000_000)
    );
    let past = read("9000000000000.5").unwrap_err().to_string();
    assert!(past.contains("offset out of range"), "{past}");
    assert!(read("1e300").is_err());
}

/// A replay error's `source()` walks to its cause: serde's error for a line serde refused,
/// the `ConfigError` of a refused header; errors of the replay's own checks have none.
#[test]
fn replay_errors_keep_their_causes() {
    use std::error::Error as _;
    let header = r#"{"trace": "agent-chat-engine", "version": 1, "config": {"platformBaseUrl": "platform.test"}}"#;
    let e = replay(header).unwrap_err();
    assert!(matches!(e, ReplayError::Header { line: 1, .. }), "{e}");
    let config = e
        .source()
        .and_then(|s| s.downcast_ref::<crate::ConfigError>());
    assert!(matches!(config, Some(crate::ConfigError::BaseUrl(u)) if u == "platform.test"));
    assert!(config.is_some_and(|c| c.source().is_none()));

    let good = r#"{"trace": "agent-chat-engine", "version": 1, "config": {"platformBaseUrl": "https://platform.test"}}"#;
    let e = replay(&format!(
        "{good}\n{{\"at\": 1, \"head\": {{\"id\": \"x\"}}}}"
    ))
    .unwrap_err();
    assert_eq!(e.line(), 2);
    let json = e
        .source()
        .and_then(|s| s.downcast_ref::<serde_json::Error>());
    assert!(json.is_some_and(serde_json::Error::is_data), "{e:?}");
    assert!(
        e.to_string()
            .starts_with("line 2: malformed record: head: "),
        "{e}"
    );

    let e = replay(&format!(
        "{good}\n{{\"at\": 5, \"timeout\": {{}}}}\n{{\"at\": 1, \"timeout\": {{}}}}"
    ))
    .unwrap_err();
    assert!(matches!(e, ReplayError::Malformed { line: 3, .. }), "{e}");
    assert!(e.source().is_none());
    assert_eq!(e.clone(), e);
}

#[test]
fn bad_lines_say_what_is_wrong() {
    let err = |s: &str| match Record::parse_line(s) {
        Err(e) => e,
        Ok(r) => panic!("accepted {s}: {r:?}"),
    };
    assert!(matches!(err(r#"{"at": 1, "bogus": {}}"#), LineError::UnknownKind(k) if k == "bogus"));
    assert!(matches!(
        err("{\"at\": 1, \"head\": "),
        LineError::Json(_, e) if e.is_eof()
    ));
    assert!(
        matches!(err(r#"{"head": {"id": 1, "status": 200}}"#), LineError::Malformed(m) if m.contains("\"at\""))
    );
    assert!(
        matches!(err(r#"{"at": 1, "head": {"id": "one", "status": 200}}"#), LineError::Json(m, e) if m.starts_with("head: ") && e.is_data())
    );
    assert!(
        matches!(err(r#"{"at": 1, "chunk": {"id": 1}}"#), LineError::Malformed(m) if m.contains("exactly one"))
    );
    assert!(
        matches!(err(r#"{"at": 1, "end": {"id": 1}, "head": {}}"#), LineError::Malformed(m) if m.contains("one kind"))
    );
    assert!(
        matches!(err(r#"{"expect": {"snapshots": {}}}"#), LineError::Json(m, _) if m.contains("snapshots"))
    );
    assert_eq!(Record::parse_line("   ").unwrap(), None);
}

#[test]
fn lookup_follows_names_then_paths() {
    let v = serde_json::json!({"a": {"b": [10, {"c": 3}]}, "x.y": 1});
    assert_eq!(lookup(&v, "a.b.1.c"), Some(&Value::from(3)));
    assert_eq!(lookup(&v, "x.y"), Some(&Value::from(1)));
    assert_eq!(lookup(&v, "a.b.7"), None);
    assert_eq!(lookup(&v, "a.z"), None);
}

use super::*;

/// RU-14: every key of the table gives its label, around spaces too.
#[test]
fn known_keys_give_the_reference_labels() {
    for (key, label) in LABELS {
        assert_eq!(FailureSource::new(key).label(), label);
        assert_eq!(FailureSource::new(format!("  {key} ")).label(), label);
    }
    assert_eq!(FailureSource::SENDING.label(), "Sending to the Agent");
    assert_eq!(FailureSource::CONNECTING.label(), "Connecting to the Agent");
    assert_eq!(
        FailureSource::RECEIVING.label(),
        "Receiving the Agent's reply"
    );
    assert_eq!(FailureSource::GUARD.label(), "Request was never sent");
    assert_eq!(FailureSource::NOT_SENT.label(), "Request was never sent");
}

/// RU-13: another key is split on runs of `.`, `_`, `-`, its words capitalised.
#[test]
fn unknown_keys_are_capitalised_words() {
    let cases = [
        ("provider_gateway", "Provider Gateway"),
        ("provider.gateway-v2", "Provider Gateway V2"),
        ("__a..b--c__", "A B C"),
        ("llm", "Llm"),
        ("Already Spaced", "Already Spaced"),
        ("élan_vital", "Élan Vital"),
        ("mixedCase_key", "MixedCase Key"),
    ];
    for (key, label) in cases {
        assert_eq!(FailureSource::new(key).label(), label, "{key}");
    }
}

/// RU-13: a missing or blank key (or one of separators only) gives "Unknown source".
#[test]
fn blank_keys_give_unknown_source() {
    for key in ["", "   ", "._-", "\t"] {
        assert_eq!(FailureSource::new(key).label(), "Unknown source", "{key:?}");
    }
    assert_eq!(labelled(None, "x"), "Source: Unknown source. x");
}

/// RU-13: the message is trimmed; an empty one reads "Unknown error.".
#[test]
fn messages_are_trimmed_and_never_empty() {
    let s = FailureSource::NOT_SENT;
    assert_eq!(
        s.label_message("  Boom.\n"),
        "Source: Request was never sent. Boom."
    );
    assert_eq!(
        s.label_message("   "),
        "Source: Request was never sent. Unknown error."
    );
}

/// RU-13: never doubled, whatever the letter case of "Source:".
#[test]
fn labelled_messages_are_not_labelled_again() {
    let s = FailureSource::SENDING;
    for already in [
        "Source: Sending to the Agent. Boom.",
        "SOURCE: Other. Boom.",
        "source: other. Boom.",
        "sOuRcE: x",
    ] {
        assert_eq!(s.label_message(already), already);
        assert_eq!(s.label_message(&format!("  {already} ")), already);
    }
    let once = s.label_message("Boom.");
    assert_eq!(s.label_message(&once), once);
    // "Source:" without a space after it, or later in the text, is no label.
    assert_eq!(
        s.label_message("Source:Boom."),
        "Source: Sending to the Agent. Source:Boom."
    );
    assert_eq!(
        s.label_message("The Source: x"),
        "Source: Sending to the Agent. The Source: x"
    );
    // Multibyte text at the prefix's length does not panic.
    assert_eq!(
        s.label_message("ééééé"),
        "Source: Sending to the Agent. ééééé"
    );
}

#[test]
fn serializes_as_its_key() {
    let json = serde_json::to_value(FailureSource::SENDING).unwrap();
    assert_eq!(json, serde_json::json!("assistant_backend_http"));
    let back: FailureSource = serde_json::from_value(json).unwrap();
    assert_eq!(back, FailureSource::SENDING);
    assert_eq!(back.key(), "assistant_backend_http");
}

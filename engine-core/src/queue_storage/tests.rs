use super::*;

fn scope(env: &str) -> ScopeKey {
    ScopeKey {
        person: Some("p".to_owned()),
        environment: Some(env.to_owned()),
        source: None,
    }
}

fn row(text: &str) -> QueuedMessage {
    QueuedMessage {
        id: format!("id-{text}"),
        text: text.to_owned(),
        created_at: "2026-01-01T00:00:00.000Z".to_owned(),
    }
}

#[test]
fn only_the_owner_reads_and_writes_a_stored_copy() {
    let (a, b) = (scope("a"), scope("b"));
    let mut s = QueueStorage::default();
    assert!(s.ask(Some(&a), "s1"));
    assert!(!s.ask(Some(&a), "s1"), "read once");
    assert!(!s.ask(Some(&b), "s1"), "another scope never reads it");
    assert!(s.answered(Some(&a), "s1"));
    let rows = [row("one")];
    assert!(s.needs_write(Some(&a), "s1", rows.iter()));
    s.written("s1", rows.to_vec());
    assert!(!s.needs_write(Some(&a), "s1", rows.iter()), "unchanged");
    assert!(!s.needs_write(Some(&b), "s1", [].iter()), "no removal by b");
    assert!(
        !s.needs_write(Some(&b), "s1", [row("two")].iter()),
        "no overwrite"
    );
    assert!(s.can_store(Some(&a), "s1") && !s.can_store(Some(&b), "s1"));
    assert!(s.can_store(Some(&b), "s2"), "nobody owns s2");
    assert!(
        s.needs_write(Some(&a), "s1", [].iter()),
        "the owner empties it"
    );
}

#[test]
fn a_read_answered_after_its_scope_was_left_is_asked_again() {
    let (a, b) = (scope("a"), scope("b"));
    let mut s = QueueStorage::default();
    assert!(s.ask(Some(&a), "s1"));
    assert!(!s.answered(Some(&b), "s1"));
    assert!(!s.ask(Some(&b), "s1"));
    assert!(s.ask(Some(&a), "s1"), "the owner asks again");
    assert!(s.answered(Some(&a), "s1"));
}

#[test]
fn a_copy_known_empty_passes_to_the_scope_that_writes() {
    let (a, b) = (scope("a"), scope("b"));
    let mut s = QueueStorage::default();
    assert!(s.ask(Some(&a), "s1"));
    assert!(
        !s.needs_write(Some(&b), "s1", [row("two")].iter()),
        "a read is pending"
    );
    assert!(s.answered(Some(&a), "s1"));
    s.set("s1", Vec::new());
    assert!(s.can_store(Some(&b), "s1"));
    assert!(
        s.needs_write(Some(&b), "s1", [row("two")].iter()),
        "known empty"
    );
    s.written("s1", vec![row("two")]);
    assert!(
        !s.needs_write(Some(&a), "s1", [row("one")].iter()),
        "b holds it now"
    );
    assert!(
        !s.needs_write(Some(&a), "s1", [].iter()),
        "and a never removes it"
    );
    assert!(s.needs_write(Some(&b), "s1", [].iter()));
    s.written("s1", Vec::new());
    assert!(
        s.needs_write(Some(&a), "s1", [row("one")].iter()),
        "empty again"
    );
}

#[test]
fn a_first_write_takes_the_copy() {
    let (a, b) = (scope("a"), scope("b"));
    let mut s = QueueStorage::default();
    assert!(
        !s.needs_write(Some(&b), "s1", [].iter()),
        "nothing to write"
    );
    assert!(s.needs_write(Some(&a), "s1", [row("one")].iter()));
    assert!(!s.ask(Some(&b), "s1"));
    assert!(s.ask(Some(&a), "s1"), "its owner still reads it once");
    assert!(!s.answered(None, "unknown"));
}

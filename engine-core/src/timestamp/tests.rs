use super::unix_ms;

#[test]
fn formats_and_reads_back() {
    assert_eq!(super::iso_from_unix_ms(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(
        super::iso_from_unix_ms(1_790_928_900_123),
        "2026-10-02T08:15:00.123Z"
    );
    assert_eq!(
        super::iso_from_unix_ms(951_782_400_000),
        "2000-02-29T00:00:00.000Z"
    );
    for ms in [
        0u64,
        1,
        86_399_999,
        951_782_400_000,
        1_790_928_900_123,
        4_102_444_800_000,
    ] {
        let back = unix_ms(&super::iso_from_unix_ms(ms)).and_then(|v| u64::try_from(v).ok());
        assert_eq!(back, Some(ms));
    }
}

#[test]
fn reads_common_forms() {
    assert_eq!(unix_ms("1970-01-01T00:00:00Z"), Some(0));
    assert_eq!(unix_ms("2026-10-02T08:15:00Z"), Some(1_790_928_900_000));
    assert_eq!(
        unix_ms("2026-10-02T10:15:00+02:00"),
        Some(1_790_928_900_000)
    );
    assert_eq!(unix_ms("2026-10-02T08:15:00.5Z"), Some(1_790_928_900_500));
    assert_eq!(
        unix_ms("2026-10-02T08:15:00.123456Z"),
        Some(1_790_928_900_123)
    );
    assert_eq!(unix_ms("2026-10-02"), Some(1_790_899_200_000));
    for bad in [
        "",
        "x",
        "2026-13-01T00:00:00Z",
        "2026-10-02T08:15",
        "2026-10-02T08:15:00+0200",
        "２０２６-10-02",
    ] {
        assert_eq!(unix_ms(bad), None, "{bad}");
    }
}

/// Each separator, each field's range and each part of an offset is checked on its own:
/// one wrong part is enough to refuse the whole timestamp.
#[test]
fn refuses_each_wrong_part_alone() {
    let good = "2026-10-02T08:15:30+02:00";
    assert!(unix_ms(good).is_some());
    for bad in [
        "2026/10-02T08:15:30+02:00",
        "2026-10/02T08:15:30+02:00",
        "2026-10-02T08.15:30+02:00",
        "2026-10-02T08:15.30+02:00",
        "2026-10-02T08:15:30+02-00",
        "2026-10-02T08:15:30*02:00",
        "2026-10-02T08:15:30++2:00",
        "2026-10-02T08:15:30+99:00",
        "2026-10-02T08:15:30+02:99",
        "2026-10-02T08:15:30+24:00",
        "2026-00-02T08:15:30+02:00",
        "2026-10-00T08:15:30+02:00",
        "2026-10-32T08:15:30+02:00",
        "2026-10-02T24:15:30+02:00",
        "2026-10-02T08:60:30+02:00",
        "2026-10-02T08:15:61+02:00",
        "2026-10-02T08:15:30.+02:00",
    ] {
        assert_eq!(unix_ms(bad), None, "{bad}");
    }
    assert_eq!(
        unix_ms("2026-10-02T08:15:30-23:59").map(|v| v > 0),
        Some(true)
    );
    assert!(unix_ms("2026-12-31T23:59:60Z").is_some(), "a leap second");
}

/// RFC 3339's alternatives are read (`t`, `z`, a space for `T`); other separators are not.
#[test]
fn separators_follow_rfc_3339() {
    let utc = Some(1_790_928_900_000);
    for good in [
        "2026-10-02T08:15:00Z",
        "2026-10-02t08:15:00z",
        "2026-10-02 08:15:00Z",
        " 2026-10-02T08:15:00Z\n",
        "2026-10-02T08:15:00",
        "2026-10-02T08:15:00+00:00",
        "2026-10-02T08:15:00-00:00",
    ] {
        assert_eq!(unix_ms(good), utc, "{good:?}");
    }
    for bad in [
        "2026/02/01",
        "2026-02-01X10:00:00Z",
        "2026-02-01_10:00:00Z",
        "2026-02-01T10:00:00ZZ",
        "2026-02-01T10:00:00+02:00Z",
        "2026-02-01T10:00:00+02",
        "2026-02-01T10:00:00 +02:00",
        "2026-02-01T10:00Z",
        "2026-02-01T1:00:00Z",
        "2026-2-01T10:00:00Z",
        "26-02-01T10:00:00Z",
        "2026-02-01T",
        "2026-02-01T10:00:00.Z",
        "2026-02-01T10:00:00,5Z",
        "+2026-02-01T10:00:00Z",
        "2026-02-01T10:00:00+9:00",
        "2026-02-01T10:00:00+99:99",
        "2026-02-01T10:00:00-24:00",
        "2026-02-01T10:00:00+23:60",
    ] {
        assert_eq!(unix_ms(bad), None, "{bad:?}");
    }
    // Trailing whitespace is trimmed like leading whitespace.
    assert!(unix_ms("2026-02-01T10:00:00Z ").is_some());
    assert_eq!(
        unix_ms("2026-02-01T10:00:00+23:59").map(|v| v + 1439 * 60_000),
        unix_ms("2026-02-01T10:00:00Z")
    );
}

/// A leap second reads as the first second of the next minute.
#[test]
fn leap_second_is_the_next_minute() {
    assert_eq!(
        unix_ms("2016-12-31T23:59:60Z"),
        unix_ms("2017-01-01T00:00:00Z")
    );
    assert_eq!(unix_ms("2016-12-31T23:59:61Z"), None);
}

/// The day count of every month, leap years and centuries included.
#[test]
fn month_lengths() {
    let days = |y, m| super::days_in_month(y, m);
    assert_eq!(
        (1..=12).map(|m| days(2026, m)).collect::<Vec<_>>(),
        [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    );
    assert_eq!(
        (days(2024, 2), days(2000, 2), days(1900, 2), days(2100, 2)),
        (29, 29, 28, 28)
    );
}

mod properties {
    use super::super::{days_from_civil, days_in_month, unix_ms};
    use proptest::prelude::*;

    proptest! {
        /// Any valid civil date and time, formatted with any offset in range, reads back as
        /// the instant it names.
        #[test]
        fn valid_timestamps_read_back(
            year in 0i64..=9999,
            month in 1i64..=12,
            day_seed in 0i64..31,
            hour in 0i64..24,
            minute in 0i64..60,
            second in 0i64..60,
            millis in 0i64..1000,
            offset in -(23 * 60 + 59)..=(23i64 * 60 + 59),
        ) {
            let day = day_seed % days_in_month(year, month) + 1;
            let sign = if offset < 0 { '-' } else { '+' };
            let text = format!(
                "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}\
                 {sign}{:02}:{:02}",
                offset.abs() / 60,
                offset.abs() % 60
            );
            let expected = ((days_from_civil(year, month, day) * 24 + hour) * 60 + minute
                - offset)
                * 60_000
                + second * 1000
                + millis;
            prop_assert_eq!(unix_ms(&text), Some(expected), "{}", text);
        }

        /// Any day past its month's end is refused, whatever the rest.
        #[test]
        fn days_past_the_month_are_refused(
            year in 0i64..=9999,
            month in 1i64..=12,
            past in 1i64..=9,
            hour in 0i64..24,
        ) {
            let day = days_in_month(year, month) + past;
            prop_assume!(day <= 99);
            let text = format!("{year:04}-{month:02}-{day:02}T{hour:02}:00:00Z");
            prop_assert_eq!(unix_ms(&text), None, "{}", text);
        }

        /// Offsets outside ±23:59 (hours above 23 or minutes above 59) are refused.
        #[test]
        fn offsets_out_of_range_are_refused(h in 0u32..100, m in 0u32..100, minus: bool) {
            prop_assume!(h > 23 || m > 59);
            let sign = if minus { '-' } else { '+' };
            let text = format!("2026-10-02T08:15:00{sign}{h:02}:{m:02}");
            prop_assert_eq!(unix_ms(&text), None, "{}", text);
        }

        /// Arbitrary text never panics the reader.
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,40}") {
            let _ = unix_ms(&text);
        }
    }
}

/// A day past its month's end is refused; February has 29 days in leap years only.
#[test]
fn days_follow_the_month() {
    for (date, ok) in [
        ("2026-02-28", true),
        ("2026-02-29", false),
        ("2026-02-31", false),
        ("2024-02-29", true),
        ("2000-02-29", true),
        ("1900-02-29", false),
        ("2026-04-30", true),
        ("2026-04-31", false),
        ("2026-06-31", false),
        ("2026-09-31", false),
        ("2026-11-31", false),
        ("2026-12-31", true),
        ("2026-01-31", true),
    ] {
        assert_eq!(unix_ms(date).is_some(), ok, "{date}");
    }
}

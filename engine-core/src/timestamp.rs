//! Reading platform ISO-8601 timestamps into Unix milliseconds, to order sessions (OI-13).

/// Parses `YYYY-MM-DD[THH:MM:SS[.fff…][Z|±HH:MM]]` (RFC 3339's `date-time`, or a bare date at
/// midnight UTC). `t` and a space may stand for `T`, and `z` for `Z` (RFC 3339, section 5.6,
/// note); no offset means UTC; surrounding whitespace is ignored; fraction digits past the
/// millisecond are dropped. Returns `None` for anything else: a wrong separator, a missing or
/// extra digit, a month outside 1-12, a day past its month's end (proleptic Gregorian leap
/// years), an hour above 23, a minute above 59, a second above 60 (a leap second `:60` is read
/// as the next minute's first second, the Unix time of `:59` plus one second), an offset whose
/// hours pass 23 or minutes pass 59, or anything after the offset.
pub(crate) fn unix_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = s.get(from..from + len)?;
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let (mut hour, mut minute, mut second, mut millis) = (0, 0, 0, 0);
    let mut rest = s.get(10..)?;
    if let Some(t) = rest.strip_prefix(['T', 't', ' ']) {
        let tb = t.as_bytes();
        let tnum = |from: usize| -> Option<i64> {
            let part = t.get(from..from + 2)?;
            if part.bytes().all(|c| c.is_ascii_digit()) {
                part.parse().ok()
            } else {
                None
            }
        };
        hour = tnum(0)?;
        minute = tnum(3)?;
        if tb.get(2) != Some(&b':') || tb.get(5) != Some(&b':') {
            return None;
        }
        second = tnum(6)?;
        rest = t.get(8..)?;
        if let Some(frac) = rest.strip_prefix('.') {
            let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return None;
            }
            let ms_digits: String = frac.chars().take(digits.min(3)).collect();
            millis = format!("{ms_digits:0<3}").parse().ok()?;
            rest = frac.get(digits..)?;
        }
    }
    let offset_min = match rest {
        "" | "Z" | "z" => 0,
        o if o.len() == 6 && (o.starts_with('+') || o.starts_with('-')) => {
            let digits = |r: std::ops::Range<usize>| -> Option<i64> {
                let part = o.get(r)?;
                part.bytes()
                    .all(|c| c.is_ascii_digit())
                    .then(|| part.parse().ok())?
            };
            let (h, m) = (digits(1..3)?, digits(4..6)?);
            if o.as_bytes().get(3) != Some(&b':') || h > 23 || m > 59 {
                return None;
            }
            let v = h * 60 + m;
            if o.starts_with('-') { -v } else { v }
        }
        _ => return None,
    };
    if !(1..=12).contains(&month)
        || !(1..=days_in_month(year, month)).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(((days * 24 + hour) * 60 + minute - offset_min) * 60_000 + second * 1000 + millis)
}

/// Formats Unix milliseconds as `YYYY-MM-DDTHH:MM:SS.sssZ` (UTC).
pub(crate) fn iso_from_unix_ms(ms: u64) -> String {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// The number of days in `month` (1 to 12) of `year` (proleptic Gregorian).
fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The civil date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
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
}

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
mod tests;

//! Standard base64 (RFC 4648, `+/`, `=` padding) for chunk bodies that are not UTF-8.
//!
//! A few dozen lines here spare the workspace a dependency for one field of the trace format.

/// The symbol for a 6-bit value.
fn symbol(v: u8) -> char {
    let b = match v {
        0..=25 => b'A' + v,
        26..=51 => b'a' + (v - 26),
        52..=61 => b'0' + (v - 52),
        62 => b'+',
        _ => b'/',
    };
    char::from(b)
}

/// The 6-bit value of a symbol.
fn value(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Encodes with padding.
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let (a, b, c) = match *group {
            [a, b, c] => (a, Some(b), Some(c)),
            [a, b] => (a, Some(b), None),
            [a] => (a, None, None),
            _ => continue,
        };
        let n = (u32::from(a) << 16) | (u32::from(b.unwrap_or(0)) << 8) | u32::from(c.unwrap_or(0));
        let six = |shift: u32| symbol(((n >> shift) & 0x3f) as u8);
        out.push(six(18));
        out.push(six(12));
        out.push(if b.is_some() { six(6) } else { '=' });
        out.push(if c.is_some() { six(0) } else { '=' });
    }
    out
}

/// Decodes standard base64; padding is optional, anything else (whitespace included) is refused.
pub(crate) fn decode(text: &str) -> Result<Vec<u8>, String> {
    let trimmed = text.trim_end_matches('=');
    if text.len() - trimmed.len() > 2 {
        return Err("invalid base64: too much padding".to_owned());
    }
    let mut out = Vec::with_capacity(trimmed.len() / 4 * 3 + 2);
    for group in trimmed.as_bytes().chunks(4) {
        let mut n: u32 = 0;
        for (i, c) in group.iter().enumerate() {
            let v = value(*c).ok_or_else(|| {
                format!("invalid base64: unexpected character {:?}", char::from(*c))
            })?;
            n |= u32::from(v) << (18 - 6 * i);
        }
        let [_, b0, b1, b2] = n.to_be_bytes();
        match group.len() {
            4 => out.extend_from_slice(&[b0, b1, b2]),
            3 => out.extend_from_slice(&[b0, b1]),
            2 => out.push(b0),
            _ => return Err("invalid base64: truncated group".to_owned()),
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_rfc_4648_vectors() {
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in vectors {
            assert_eq!(encode(plain.as_bytes()), coded);
            assert_eq!(decode(coded).unwrap(), plain.as_bytes());
        }
        assert_eq!(decode("Zm8").unwrap(), b"fo");
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(decode(&encode(&all)).unwrap(), all);
        assert!(decode("Zm9v YmFy").is_err());
        assert!(decode("Z").is_err());
        assert!(decode("Zg===").is_err());
    }
}

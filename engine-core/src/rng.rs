//! The engine's seeded generator (OI-32): SplitMix64, small and well studied; nothing here is
//! security-sensitive, it only has to be reproducible.

#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A version-4 UUID in its lower-case text form.
    pub(crate) fn uuid_v4(&mut self) -> String {
        let hi = self.next_u64();
        let lo = self.next_u64();
        let hi = (hi & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000;
        let lo = (lo & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            hi >> 32,
            (hi >> 16) & 0xFFFF,
            hi & 0xFFFF,
            lo >> 48,
            lo & 0xFFFF_FFFF_FFFF
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn uuids_are_version_4_and_reproducible() {
        let a = Rng::new(7).uuid_v4();
        assert_eq!(a, Rng::new(7).uuid_v4());
        assert_eq!(a.len(), 36);
        assert_eq!(a.as_bytes().get(14), Some(&b'4'));
        assert!(matches!(
            a.as_bytes().get(19),
            Some(b'8' | b'9' | b'a' | b'b')
        ));
        assert_ne!(a, Rng::new(8).uuid_v4());
    }
}

//! Finding a method by name: the hash of the larger tables, and the
//! keys a small table is searched by.

use std::hash::Hasher;

use crate::wire::words::word_at;

/// A multiply-fold hash over the method name, eight bytes a step, in
/// place of SipHash: the table's keys are the server's own method names,
/// so a caller choosing the looked-up name cannot grow a collision chain,
/// and a name hashes with one multiply per eight bytes instead of a keyed
/// round function (or FNV-1a's one multiply per byte).
#[derive(Default)]
pub(crate) struct NameHasher(u64);

/// A name's length and a word of its bytes: for a name of up to eight
/// bytes, two names are equal exactly when their keys are (the word holds
/// every byte); a longer name's word is of its first and last eight bytes,
/// and equal keys are then checked by comparing the names.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct NameKey {
    len: usize,
    word: u64,
}

impl NameKey {
    #[inline(always)]
    pub(super) fn of(name: &str) -> Self {
        let bytes = name.as_bytes();
        let word = match bytes.len() {
            0 => 0,
            1..=8 => short_word(bytes),
            len => word_at(bytes, 0) ^ word_at(bytes, len - 8).rotate_left(29),
        };
        NameKey { len: bytes.len(), word }
    }
}

/// One to eight bytes as one word holding each of them, from (possibly
/// overlapping) loads that need no loop. Two slices of the same length
/// give the same word only when they are equal.
#[inline(always)]
fn short_word(bytes: &[u8]) -> u64 {
    match bytes.len() {
        len @ 1..=3 => u64::from(bytes[0]) | u64::from(bytes[len / 2]) << 8 | u64::from(bytes[len - 1]) << 16,
        len => {
            let low = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
            let high = u32::from_le_bytes([bytes[len - 4], bytes[len - 3], bytes[len - 2], bytes[len - 1]]);
            u64::from(low) | u64::from(high) << 32
        }
    }
}

impl NameHasher {
    /// Mixes `word` in: one 64x64->128-bit multiply, its halves folded, so
    /// that both the high bits (hashbrown's tag) and the low bits (its
    /// bucket) depend on every input bit.
    #[inline(always)]
    fn mix(&mut self, word: u64) {
        let product = u128::from(self.0 ^ word ^ 0x243f_6a88_85a3_08d3) * 0x9e37_79b9_7f4a_7c15;
        self.0 = (product as u64) ^ ((product >> 64) as u64);
    }
}

impl Hasher for NameHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if rest.is_empty() {
            return;
        }
        // The last 1-7 bytes as one word; the length keeps `a` and `a\0` apart.
        self.mix(short_word(rest) ^ (rest.len() as u64) << 59);
    }

    #[inline]
    fn write_u8(&mut self, byte: u8) {
        self.mix(u64::from(byte));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::hash::{BuildHasher, BuildHasherDefault};

    #[test]
    fn names_of_every_length_hash_apart_and_are_found() {
        let names: Vec<String> =
            (0..40).flat_map(|len| ["a", "b", "é"].map(|c| format!("{}{c}", "x".repeat(len)))).collect();
        let build = BuildHasherDefault::<NameHasher>::default();
        let hashes: std::collections::HashSet<u64> = names.iter().map(|name| build.hash_one(name.as_str())).collect();
        assert_eq!(hashes.len(), names.len());
        // A trailing NUL or a repeated byte still makes another name.
        for (a, b) in [("a", "a\0"), ("ab", "abb"), ("abcd", "abcd\0\0\0"), ("", "\0")] {
            assert_ne!(build.hash_one(a), build.hash_one(b), "{a:?} {b:?}");
        }
        let mut map: HashMap<Box<str>, usize, BuildHasherDefault<NameHasher>> = HashMap::default();
        for (i, name) in names.iter().enumerate() {
            map.insert(name.as_str().into(), i);
        }
        for (i, name) in names.iter().enumerate() {
            assert_eq!(map.get(name.as_str()), Some(&i));
        }
        assert_eq!(map.get("x"), None);
    }
}

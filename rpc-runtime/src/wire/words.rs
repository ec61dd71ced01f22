//! Eight bytes at a time: tests over a word of a short text (method
//! names, error messages), too short for memchr's setup to pay off and
//! long enough for a byte loop to show.

const ONES: u64 = u64::from_le_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

/// The eight bytes of `bytes` from `at` (which must leave eight), as a
/// little-endian word.
pub(crate) fn word_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// Whether a byte of `word` is below `n` (at most 0x80): the classic "has
/// less than" test, exact for the word as a whole (a borrow only ever
/// flags a byte above one that is below `n`).
pub(crate) fn has_below(word: u64, n: u8) -> bool {
    word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS != 0
}

/// Whether a byte of `word` is `byte`.
pub(crate) fn has_byte(word: u64, byte: u8) -> bool {
    has_below(word ^ (ONES * u64::from(byte)), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_byte_of_a_word_is_told_apart() {
        for at in 0..8 {
            for byte in [0u8, 1, b'\n', 0x1f, 0x20, b'"', b'\\', b'x', 0x7f, 0x80, 0xc3, 0xff] {
                let mut bytes = [b'a'; 8];
                bytes[at] = byte;
                let word = word_at(&bytes, 0);
                assert_eq!(has_below(word, 0x20), byte < 0x20, "{byte:#x} at {at}");
                for wanted in [b'"', b'\\', b'x', 0xc3] {
                    assert_eq!(has_byte(word, wanted), byte == wanted, "{byte:#x} at {at}");
                }
            }
        }
    }
}

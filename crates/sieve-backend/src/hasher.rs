//! [`FingerprintHasher`]: the running hash backends build their [`crate::Fingerprint`]s with.
//!
//! # Invariants
//!
//! Fixed constants only (no random seeds, addresses or map order), so a value depends on the
//! words folded in and their order alone; the two lanes mix differently, so they fail
//! independently and a fingerprint built from both carries about 128 bits.

/// splitmix64's finaliser: a bijective mixer of one word.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Two independent running hashes over words; not commutative.
#[derive(Clone, Copy, Debug)]
pub struct FingerprintHasher([u64; 2]);

impl FingerprintHasher {
    /// A hasher starting from `seed` (one lane from it, the other from its complement): a
    /// backend seeds with what names its hash and the constants its classification reads.
    pub fn new(seed: u64) -> FingerprintHasher {
        FingerprintHasher([seed, !seed])
    }

    /// Folds `w` into both lanes.
    pub fn word(&mut self, w: u64) {
        self.0[0] = mix(self.0[0] ^ w).wrapping_add(0x9e37_79b9_7f4a_7c15);
        self.0[1] = mix(self.0[1].rotate_left(23) ^ w.wrapping_mul(0xd6e8_feb8_6659_fd93));
    }

    /// The two lanes.
    pub fn finish(&self) -> [u64; 2] {
        self.0
    }
}

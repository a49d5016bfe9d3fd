//! Opaque IDs: a keyed, format-preserving permutation of a layout's bit width.
//!
//! A minted ID tells whoever sees it when it was made, on which node, and (from two IDs) how many were
//! minted in between. [`Opaque`] maps each ID of a `w`-bit layout to a `w`-bit token and back with a
//! 128-bit secret key: a bijection on `0..2^w`, so tokens are as compact as the IDs, fit the same
//! column (63 bits stay positive as signed 64-bit integers; 53 bits, `js53`, stay exact in JavaScript
//! Numbers), and decode back to the ID with the key.
//!
//! ## Construction
//! A four-round Feistel network over the `w` bits, in the maximally balanced, alternating form for any
//! width of Black & Rogaway ("Ciphers with Arbitrary Finite Domains", CT-RSA 2002, the generalized
//! Feistel cipher; the same split as NIST SP 800-38G's FF1 with radix 2), whose two middle rounds use a
//! pseudo-random function and whose first and last rounds use a keyed universal hash function: the
//! construction of Naor & Reingold ("On the construction of pseudorandom permutations: Luby–Rackoff
//! revisited", J. Cryptology 12(1), 1999) in the Feistel-round form of Patel, Ramzan & Sundaram
//! ("Towards making Luby–Rackoff ciphers optimal and practical", FSE 1999), who prove it a *strong*
//! pseudo-random permutation, as Luby & Rackoff (SIAM J. Comput. 17(2), 1988) did for four PRF rounds:
//!
//! * the ID `x` is split into `A`, its high `u = ⌊w/2⌋` bits, and `B`, its low `v = w − u` bits;
//! * for rounds `i = 0, 1, 2, 3`: even `i`: `A ^= F(i, B)`, `F` giving `u` bits; odd `i`:
//!   `B ^= F(i, A)`, `F` giving `v` bits;
//! * the token is `A · 2^v + B`; decoding runs the rounds backwards (`i = 3, 2, 1, 0`).
//!
//! Rounds 1 and 2: `F(i, X)` is SipHash-1-3 (Aumasson & Bernstein, "SipHash: a fast short-input PRF",
//! INDOCRYPT 2012; the variant of Rust's and CPython's hash tables) under the 16-byte key of the 6-byte
//! message `X` (4 bytes, little-endian) ‖ `i` (1 byte) ‖ `w` (1 byte), reduced to its low `m` bits
//! (`m` = `u` or `v`, the bits the round needs).
//!
//! Rounds 0 and 3: `F(i, X)` is Dietzfelbinger's multiply-add-shift hash ("Universal hashing and
//! k-wise independent random variables via integer arithmetic without primes", STACS 1996): the top `m`
//! bits of `(a_i · X + b_i) mod 2^64`, strongly universal for inputs below `2^32` and `m ≤ 32` (so
//! almost-XOR-universal, as the construction needs), with `a_i` and `b_i` the SipHash-1-3 outputs, under
//! the same key, of the 3-byte messages `i` ‖ `w` ‖ `0` and `i` ‖ `w` ‖ `1`. The width in every message
//! makes the permutations of different widths under one key unrelated.
//!
//! ## Strength and speed: the trade-off
//! A distinguisher that may both encode and decode has an advantage of at most about `q² / 2^u` after
//! `q` queries, the same birthday-type bound as four PRF rounds: it needs about `2^(u/2)` ID–token pairs
//! it knows both sides of (about 46 000 for 63 bits, 8 000 for 53 bits, 256 for 32 bits) before the
//! tokens could even in principle be told apart from a random permutation; telling them apart is still
//! far from decoding another token. NIST's FF1 (10 rounds) and FF3-1 (8 rounds) buy margin beyond that
//! bound (Patarin: 6 or more rounds stay secure up to about `2^u` queries) with several times the work.
//! The hash rounds are what make an encode fast: a SipHash-1-3 call on a one-block message is four
//! SipRounds, a chain of dependent arithmetic of about 16 cycles, while a multiply-add-shift is about 5
//! cycles; with everything that does not depend on the input computed once per key ([`Opaque::new`]),
//! an encode costs about 13 ns on this project's 2-core CI VM where four SipHash rounds cost 24
//! (`cargo bench -p snowmint-benches --bench opaque`). Fewer than four rounds would no longer be a strong
//! pseudo-random permutation. Widths below 32 bits are refused: there the birthday bound becomes small.
//!
//! ## What it protects, and what not
//! Tokens reveal neither the time, the node nor the count: consecutive IDs give unrelated tokens. It is
//! not authentication: anyone may try any `w`-bit number as a token, and each one decodes to some ID,
//! so check that the ID exists (and that the caller may see it) as you would for any ID from outside.
//! It is deterministic: the same ID always gives the same token (that is what makes it a lookup key).
//!
//! ```
//! use snowmint::{Layout, Opaque};
//!
//! let key: [u8; 16] = *b"0123456789abcdef"; // in production: 16 random bytes from your secret store
//! let opaque = Opaque::for_layout(&key, &Layout::preset("js53")?)?;
//! let id = 1_234_567_890_123_456; // a js53 ID (53 bits)
//! let token = opaque.encode(id)?; // an unrelated-looking number below 2^53
//! assert!(token < 1 << 53);
//! assert_eq!(opaque.decode(token)?, id);
//! assert!(opaque.encode(1 << 53).is_err()); // INVALID_ID: wider than the layout
//! # Ok::<(), snowmint::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::layout::Layout;

/// Length of an opaque-ID key in bytes (128 bits, the SipHash key).
pub const OPAQUE_KEY_LEN: usize = 16;
/// The narrowest width [`Opaque`] accepts, in bits.
pub const OPAQUE_MIN_BITS: u32 = 32;
/// The widest width [`Opaque`] accepts, in bits.
pub const OPAQUE_MAX_BITS: u32 = 64;
/// Feistel rounds (even, so the halves end where they started).
const ROUNDS: usize = 4;

/// A keyed permutation of the `w`-bit numbers: encode IDs into tokens and tokens back into IDs.
///
/// Cheap to copy (200 bytes), immutable, `Send + Sync`: build one per key and share it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Opaque {
    /// Per round `i`, done once at construction. Rounds 1 and 2 (SipHash): what SipHash computes before
    /// the message's variable bytes matter: the state after the key is mixed in (`k0 ^ c0, k1 ^ c1,
    /// k0 ^ c2, k1 ^ c3`), with the message's constant bytes 4..8 (round index, width, length) xored
    /// into `v3`, and the half of the first SipRound that reads only `v0` and `v1` already applied;
    /// then those constant bytes themselves (for the `v0 ^= m` after the compression round). Rounds 0
    /// and 3 (multiply-add-shift): `a_i`, `b_i` and the shift `64 − m`. See [`Opaque::round_fn`].
    rounds: [[u64; 5]; ROUNDS],
    /// `2^bits - 1`: the largest ID and token.
    max: u64,
    /// Masks of the high half `A` (`u = bits / 2` bits) and the low half `B` (`v = bits - u` bits).
    mask_a: u64,
    mask_b: u64,
    /// Width in bits (32..=64; smaller only in this crate's tests).
    bits: u32,
    /// Bits of the low half, `B` (`v = bits - bits / 2`).
    low_bits: u32,
}

impl core::fmt::Debug for Opaque {
    /// Shows the width, never the key.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Opaque")
            .field("bits", &self.bits)
            .finish_non_exhaustive()
    }
}

#[inline(always)]
fn sip_round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13);
    v[1] ^= v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16);
    v[3] ^= v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21);
    v[3] ^= v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17);
    v[1] ^= v[2];
    v[2] = v[2].rotate_left(32);
}

const fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Whether round `i` is a multiply-add-shift round (the first and the last) rather than a SipHash one.
#[inline(always)]
const fn is_hash_round(i: usize) -> bool {
    i == 0 || i == ROUNDS - 1
}

/// SipHash-1-3 of a one-block message (fewer than 8 bytes: `m` holds them and, in its top byte, their
/// count), from the keyed initial state.
fn siphash13_block(init: [u64; 4], m: u64) -> u64 {
    let mut v = init;
    v[3] ^= m;
    sip_round(&mut v);
    v[0] ^= m;
    v[2] ^= 0xff;
    sip_round(&mut v);
    sip_round(&mut v);
    sip_round(&mut v);
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

impl Opaque {
    /// A permutation of the `bits`-bit numbers (32..=64) under a 16-byte key.
    ///
    /// Errors (code `INVALID_ARGUMENT`): a key that is not exactly [`OPAQUE_KEY_LEN`] bytes, a width
    /// outside 32..=64.
    pub fn new(key: &[u8], bits: u32) -> Result<Opaque> {
        if !(OPAQUE_MIN_BITS..=OPAQUE_MAX_BITS).contains(&bits) {
            return Err(Error::InvalidOptions {
                reason: "opaque IDs need a width of 32 to 64 bits (the layout's total bits)",
            });
        }
        Opaque::with_any_width(key, bits)
    }

    /// The permutation of a layout's width ([`Layout::total_bits`]: 63 for `twitter`, 53 for `js53`, 64
    /// for layouts that use the sign bit and for decimal IDs).
    pub fn for_layout(key: &[u8], layout: &Layout) -> Result<Opaque> {
        Opaque::new(key, layout.total_bits())
    }

    /// Any width 2..=64 (the crate's tests check small widths exhaustively).
    pub(crate) fn with_any_width(key: &[u8], bits: u32) -> Result<Opaque> {
        let key: &[u8; OPAQUE_KEY_LEN] = key.try_into().map_err(|_| Error::InvalidOptions {
            reason: "an opaque-ID key must be exactly 16 bytes (128 bits)",
        })?;
        debug_assert!((2..=64).contains(&bits));
        let (k0_bytes, k1_bytes) = key.split_at(8);
        let k0 = u64::from_le_bytes(k0_bytes.try_into().unwrap_or([0; 8]));
        let k1 = u64::from_le_bytes(k1_bytes.try_into().unwrap_or([0; 8]));
        let init = [
            k0 ^ 0x736f_6d65_7073_6575,
            k1 ^ 0x646f_7261_6e64_6f6d,
            k0 ^ 0x6c79_6765_6e65_7261,
            k1 ^ 0x7465_6462_7974_6573,
        ];
        let low_bits = bits - bits / 2;
        let mut rounds = [[0u64; 5]; ROUNDS];
        for (i, r) in rounds.iter_mut().enumerate() {
            if is_hash_round(i) {
                // a_i, b_i: SipHash-1-3 of the 3-byte messages i ‖ w ‖ 0 and i ‖ w ‖ 1 (one block:
                // the bytes, then the length 3 in the top byte); the shift keeps the top m bits.
                let m = |s: u64| (3u64 << 56) | (s << 16) | (u64::from(bits) << 8) | i as u64;
                let out_bits = if i % 2 == 0 { bits / 2 } else { low_bits };
                *r = [
                    siphash13_block(init, m(0)),
                    siphash13_block(init, m(1)),
                    u64::from(64 - out_bits),
                    0,
                    0,
                ];
                continue;
            }
            // The message bytes 4..8 of round i: the round index (byte 4), the width (byte 5) and the
            // message length 6 (byte 7, as SipHash's padding puts it).
            let tweak = (6u64 << 56) | (u64::from(bits) << 40) | ((i as u64) << 32);
            // The first SipRound's steps on v0 and v1 alone (they come before v3, which holds the
            // message, reaches them).
            let v0 = init[0].wrapping_add(init[1]);
            let v1 = init[1].rotate_left(13) ^ v0;
            *r = [v0.rotate_left(32), v1, init[2], init[3] ^ tweak, tweak];
        }
        Ok(Opaque {
            rounds,
            max: low_mask(bits),
            mask_a: low_mask(bits - low_bits),
            mask_b: low_mask(low_bits),
            bits,
            low_bits,
        })
    }

    /// The width in bits: IDs and tokens are the numbers below `2^bits`.
    pub const fn bits(&self) -> u32 {
        self.bits
    }

    /// The largest ID (and token), `2^bits - 1`.
    pub const fn max_value(&self) -> u64 {
        self.max
    }

    /// Round `i`'s function, for `x` below `2^32`. Rounds 0 and 3: the top `m` bits of
    /// `a_i · x + b_i` (mod 2^64). Rounds 1 and 2: SipHash-1-3 of the 6-byte message `x` (LE32) ‖ `i` ‖
    /// `bits`. A message shorter than 8 bytes is one block `m`: its bytes, then the length in the top
    /// byte; here `m = x ^ tweak`, the tweak's part of the first SipRound precomputed (see
    /// [`Opaque::rounds`](Opaque)), so a call is the rest of the standard SipHash-1-3 steps.
    #[inline(always)]
    fn round_fn(&self, i: usize, x: u64) -> u64 {
        if is_hash_round(i) {
            let [a, b, shift, _, _] = self.rounds[i];
            return a.wrapping_mul(x).wrapping_add(b) >> shift;
        }
        let [mut v0, mut v1, mut v2, v3_tweaked, tweak] = self.rounds[i];
        // v3 ^= m, then the rest of the first SipRound (the compression round).
        let mut v3 = v3_tweaked ^ x;
        v2 = v2.wrapping_add(v3);
        v3 = v3.rotate_left(16) ^ v2;
        v0 = v0.wrapping_add(v3);
        v3 = v3.rotate_left(21) ^ v0;
        v2 = v2.wrapping_add(v1);
        v1 = v1.rotate_left(17) ^ v2;
        v2 = v2.rotate_left(32);
        let mut v = [v0 ^ tweak ^ x, v1, v2 ^ 0xff, v3];
        // Finalization: three SipRounds.
        sip_round(&mut v);
        sip_round(&mut v);
        sip_round(&mut v);
        v[0] ^ v[1] ^ v[2] ^ v[3]
    }

    /// The permutation (`decode` false) or its inverse, for `x` below `2^bits` (not checked). One body
    /// for both directions. Natively it is always inlined, so the direction is a constant and each
    /// caller gets the straight-line rounds (a call with the direction as a variable cost Python's
    /// `encode` 60 ns); in WebAssembly, where module size matters more, the compiler decides.
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    #[cfg_attr(target_arch = "wasm32", inline)]
    fn feistel(&self, x: u64, decode: bool) -> u64 {
        let v = self.low_bits;
        let (mask_a, mask_b) = (self.mask_a, self.mask_b);
        let (mut a, mut b) = (x >> v, x & mask_b);
        for step in 0..ROUNDS {
            let i = if decode { ROUNDS - 1 - step } else { step };
            // Even rounds change A from B; odd rounds change B from A.
            if i % 2 == 0 {
                a ^= self.round_fn(i, b) & mask_a;
            } else {
                b ^= self.round_fn(i, a) & mask_b;
            }
        }
        (a << v) | b
    }

    #[inline]
    pub(crate) fn permute(&self, x: u64) -> u64 {
        self.feistel(x, false)
    }

    #[inline]
    pub(crate) fn unpermute(&self, y: u64) -> u64 {
        self.feistel(y, true)
    }

    #[inline]
    fn check(&self, x: u64) -> Result<u64> {
        if x > self.max_value() {
            Err(Error::InvalidId {
                id: x,
                bits: self.bits,
            })
        } else {
            Ok(x)
        }
    }

    /// The token of an ID. `INVALID_ID` if the ID has bits at or above `bits`.
    #[inline]
    pub fn encode(&self, id: u64) -> Result<u64> {
        self.check(id).map(|id| self.permute(id))
    }

    /// The ID of a token. `INVALID_ID` if the token has bits at or above `bits`.
    #[inline]
    pub fn decode(&self, token: u64) -> Result<u64> {
        self.check(token).map(|t| self.unpermute(t))
    }

    /// Encodes `ids` in place; on an ID out of range nothing is changed and the error names it.
    pub fn encode_in_place(&self, ids: &mut [u64]) -> Result<()> {
        self.map_in_place(ids, false)
    }

    /// Decodes `tokens` in place; on a token out of range nothing is changed and the error names it.
    pub fn decode_in_place(&self, tokens: &mut [u64]) -> Result<()> {
        self.map_in_place(tokens, true)
    }

    fn map_in_place(&self, xs: &mut [u64], decode: bool) -> Result<()> {
        if let Some(&bad) = xs.iter().find(|&&x| x > self.max) {
            return Err(Error::InvalidId {
                id: bad,
                bits: self.bits,
            });
        }
        // Four at a time: one value's rounds are a chain of dependent arithmetic, four values' chains
        // are independent, so the CPU runs them side by side (natively; in WebAssembly, one at a time
        // keeps the module small).
        let lanes = if cfg!(target_arch = "wasm32") { 0 } else { 4 };
        let split = xs.len() / 4 * lanes;
        let (quads, rest) = xs.split_at_mut(split);
        for q in quads.chunks_exact_mut(4) {
            let out = self.feistel4([q[0], q[1], q[2], q[3]], decode);
            q.copy_from_slice(&out);
        }
        for x in rest.iter_mut() {
            *x = self.feistel(*x, decode);
        }
        Ok(())
    }

    /// [`Opaque::feistel`] of four values at once, the rounds interleaved.
    #[inline(always)]
    fn feistel4(&self, xs: [u64; 4], decode: bool) -> [u64; 4] {
        let v = self.low_bits;
        let (mask_a, mask_b) = (self.mask_a, self.mask_b);
        let mut a = xs.map(|x| x >> v);
        let mut b = xs.map(|x| x & mask_b);
        for step in 0..ROUNDS {
            let i = if decode { ROUNDS - 1 - step } else { step };
            for k in 0..4 {
                if i % 2 == 0 {
                    a[k] ^= self.round_fn(i, b[k]) & mask_a;
                } else {
                    b[k] ^= self.round_fn(i, a[k]) & mask_b;
                }
            }
        }
        [0, 1, 2, 3].map(|k| (a[k] << v) | b[k])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

    /// Reference SipHash-c-d over a byte string, straight from the paper (any length, any c and d).
    fn siphash(c: usize, d: usize, key: &[u8; 16], msg: &[u8]) -> u64 {
        let k0 = u64::from_le_bytes(key[..8].try_into().unwrap());
        let k1 = u64::from_le_bytes(key[8..].try_into().unwrap());
        let mut v = [
            k0 ^ 0x736f6d6570736575,
            k1 ^ 0x646f72616e646f6d,
            k0 ^ 0x6c7967656e657261,
            k1 ^ 0x7465646279746573,
        ];
        let mut blocks: std::vec::Vec<u64> = msg
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let tail = &msg[msg.len() / 8 * 8..];
        let mut last = (msg.len() as u64 & 0xff) << 56;
        for (j, &byte) in tail.iter().enumerate() {
            last |= u64::from(byte) << (8 * j);
        }
        blocks.push(last);
        for m in blocks {
            v[3] ^= m;
            for _ in 0..c {
                sip_round(&mut v);
            }
            v[0] ^= m;
        }
        v[2] ^= 0xff;
        for _ in 0..d {
            sip_round(&mut v);
        }
        v[0] ^ v[1] ^ v[2] ^ v[3]
    }

    extern crate std;

    #[test]
    fn reference_siphash_matches_the_paper() {
        // SipHash paper, appendix A: key 00..0f, message 00..0e, SipHash-2-4 = a129ca6149be45e5.
        let msg: std::vec::Vec<u8> = (0u8..15).collect();
        assert_eq!(siphash(2, 4, &KEY, &msg), 0xa129ca6149be45e5);
    }

    #[test]
    fn round_functions_are_the_documented_ones() {
        for bits in [20u32, 32, 33, 53, 63, 64] {
            let o = Opaque::with_any_width(&KEY, bits).unwrap();
            for x in [0u64, 1, 0xdead_beef, 0xffff_ffff, 12345] {
                for i in [1usize, 2] {
                    // SipHash-1-3 of x (LE32) ‖ i ‖ bits.
                    let mut msg = std::vec::Vec::from((x as u32).to_le_bytes());
                    msg.push(i as u8);
                    msg.push(bits as u8);
                    assert_eq!(
                        o.round_fn(i, x),
                        siphash(1, 3, &KEY, &msg),
                        "bits {bits} round {i}"
                    );
                }
                for (i, m) in [(0usize, bits / 2), (3, bits - bits / 2)] {
                    // The top m bits of a·x + b, a and b SipHash-1-3 of i ‖ bits ‖ 0 and i ‖ bits ‖ 1.
                    let a = siphash(1, 3, &KEY, &[i as u8, bits as u8, 0]);
                    let b = siphash(1, 3, &KEY, &[i as u8, bits as u8, 1]);
                    let want =
                        ((u128::from(a) * u128::from(x) + u128::from(b)) % (1 << 64)) >> (64 - m);
                    assert_eq!(u128::from(o.round_fn(i, x)), want, "bits {bits} round {i}");
                }
            }
        }
    }

    #[test]
    fn twenty_bits_is_a_permutation() {
        // 2^20 encodes natively; 2^10 under Miri (the same check, a smaller domain).
        let bits = if cfg!(miri) { 10 } else { 20 };
        let o = Opaque::with_any_width(&KEY, bits).unwrap();
        let n = 1usize << bits;
        let mut seen = std::vec![0u64; n / 64];
        for x in 0..n as u64 {
            let y = o.permute(x);
            assert!(y < n as u64, "{x} -> {y} leaves the {bits} bits");
            assert_eq!(
                seen[(y / 64) as usize] >> (y % 64) & 1,
                0,
                "{y} is hit twice"
            );
            seen[(y / 64) as usize] |= 1 << (y % 64);
            assert_eq!(o.unpermute(y), x);
        }
        assert!(seen.iter().all(|&w| w == u64::MAX));
    }

    #[test]
    fn odd_small_widths_are_permutations() {
        let widths: &[u32] = if cfg!(miri) {
            &[2, 3, 5]
        } else {
            &[2, 3, 5, 9, 13]
        };
        for &bits in widths {
            let o = Opaque::with_any_width(&KEY, bits).unwrap();
            let mut images: std::vec::Vec<u64> = (0..1u64 << bits).map(|x| o.permute(x)).collect();
            images.sort_unstable();
            assert!(images.iter().copied().eq(0..1u64 << bits), "{bits} bits");
        }
    }

    #[test]
    fn errors() {
        let e = Opaque::new(&KEY[..15], 63).unwrap_err();
        assert_eq!(e.code(), crate::ErrorCode::InvalidArgument);
        assert!(std::format!("{e}").contains("16 bytes"));
        for bits in [0u32, 31, 65] {
            assert_eq!(
                Opaque::new(&KEY, bits).unwrap_err().code(),
                crate::ErrorCode::InvalidArgument
            );
        }
        let o = Opaque::new(&KEY, 53).unwrap();
        assert_eq!(
            o.encode(1 << 53).unwrap_err(),
            Error::InvalidId {
                id: 1 << 53,
                bits: 53
            }
        );
        assert_eq!(
            o.decode(u64::MAX).unwrap_err().code(),
            crate::ErrorCode::InvalidId
        );
        let mut xs = [1u64, 2, 1 << 53];
        assert!(o.encode_in_place(&mut xs).is_err());
        assert_eq!(xs, [1, 2, 1 << 53], "unchanged after an error");
        let full = Opaque::new(&KEY, 64).unwrap();
        assert_eq!(
            full.decode(full.encode(u64::MAX).unwrap()).unwrap(),
            u64::MAX
        );
        assert!(
            !std::format!("{o:?}").contains("rounds"),
            "Debug must not show key material"
        );
    }
}

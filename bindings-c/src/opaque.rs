//! Opaque IDs for C: the core's keyed permutation ([`snowmint::Opaque`]) behind a handle.

use snowmint_core::Opaque;

use crate::{
    checked_len, guard, guard_value, layout_ref, put, snowmint_layout, snowmint_result, Fail,
};

/// Encodes IDs into opaque tokens of the layout's width and back (a keyed permutation: tokens reveal
/// neither time, node nor count; they are not authentication). Create with `snowmint_opaque_new`; free
/// with `snowmint_opaque_free`. Immutable: any number of threads may use one at once.
pub struct snowmint_opaque {
    inner: Opaque,
}

/// Creates the permutation of `layout`'s width (63 bits for twitter, 53 for js53, 64 with the sign
/// bit) under the secret `key` of `key_len` bytes, which must be 16 (SNOWMINT_RESULT_INVALID_ARGUMENT
/// otherwise, and for layouts narrower than 32 bits). The key and layout are copied.
///
/// On success `*opaque_out` is a new handle: free it with `snowmint_opaque_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_opaque_new(
    key: *const u8,
    key_len: usize,
    layout: *const snowmint_layout,
    opaque_out: *mut *mut snowmint_opaque,
) -> snowmint_result {
    guard(|| {
        nonnull!(key);
        nonnull!(layout);
        nonnull!(opaque_out);
        if key_len != snowmint_core::OPAQUE_KEY_LEN {
            return Err(Fail::Argument(
                "an opaque-ID key must be exactly 16 bytes (128 bits): key_len is not 16",
            ));
        }
        // SAFETY: key holds key_len readable bytes (caller contract); non-NULL.
        let key = unsafe { std::slice::from_raw_parts(key, key_len) };
        // SAFETY: non-NULL live handle.
        let inner = Opaque::for_layout(key, unsafe { layout_ref(layout) })?;
        let p = Box::into_raw(Box::new(snowmint_opaque { inner }));
        // SAFETY: non-NULL.
        unsafe { put(opaque_out, p) };
        Ok(())
    })
}

/// Frees an opaque-ID handle. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn snowmint_opaque_free(opaque: *mut snowmint_opaque) {
    if opaque.is_null() {
        return;
    }
    guard_value((), || {
        // SAFETY: a handle from snowmint_opaque_new, freed once (caller contract).
        drop(unsafe { Box::from_raw(opaque) });
    })
}

/// The width in bits (IDs and tokens are below 2^bits); 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn snowmint_opaque_bits(opaque: *const snowmint_opaque) -> u32 {
    if opaque.is_null() {
        return 0;
    }
    // SAFETY: non-NULL live handle.
    guard_value(0, || unsafe { &*opaque }.inner.bits())
}

unsafe fn one(
    opaque: *const snowmint_opaque,
    value: u64,
    out: *mut u64,
    f: fn(&Opaque, u64) -> snowmint_core::Result<u64>,
) -> snowmint_result {
    guard(|| {
        nonnull!(opaque);
        nonnull!(out);
        // SAFETY: non-NULL live handle.
        let v = f(&unsafe { &*opaque }.inner, value)?;
        // SAFETY: non-NULL.
        unsafe { put(out, v) };
        Ok(())
    })
}

unsafe fn many(
    opaque: *const snowmint_opaque,
    buf: *mut u64,
    n: usize,
    f: fn(&Opaque, &mut [u64]) -> snowmint_core::Result<()>,
) -> snowmint_result {
    guard(|| {
        nonnull!(opaque);
        if n == 0 {
            return Ok(());
        }
        nonnull!(buf);
        // SAFETY: buf holds n readable and writable u64 (caller contract).
        let xs = unsafe { std::slice::from_raw_parts_mut(buf, checked_len(n)?) };
        // SAFETY: non-NULL live handle.
        f(&unsafe { &*opaque }.inner, xs)?;
        Ok(())
    })
}

/// Writes the token of `id` to `*token_out`. An ID at or above 2^bits is SNOWMINT_RESULT_INVALID_ID.
#[no_mangle]
pub unsafe extern "C" fn snowmint_opaque_encode(
    opaque: *const snowmint_opaque,
    id: u64,
    token_out: *mut u64,
) -> snowmint_result {
    // SAFETY: forwarded caller contract.
    unsafe { one(opaque, id, token_out, Opaque::encode) }
}

/// Writes the ID of `token` to `*id_out`. A token at or above 2^bits is SNOWMINT_RESULT_INVALID_ID.
#[no_mangle]
pub unsafe extern "C" fn snowmint_opaque_decode(
    opaque: *const snowmint_opaque,
    token: u64,
    id_out: *mut u64,
) -> snowmint_result {
    // SAFETY: forwarded caller contract.
    unsafe { one(opaque, token, id_out, Opaque::decode) }
}

/// Encodes `buf[0..n]` in place. If any ID is at or above 2^bits the result is
/// SNOWMINT_RESULT_INVALID_ID and `buf` is unchanged. `buf` may be NULL when `n` is 0.
#[no_mangle]
pub unsafe extern "C" fn snowmint_opaque_encode_many(
    opaque: *const snowmint_opaque,
    buf: *mut u64,
    n: usize,
) -> snowmint_result {
    // SAFETY: forwarded caller contract.
    unsafe { many(opaque, buf, n, Opaque::encode_in_place) }
}

/// Decodes `buf[0..n]` in place (tokens to IDs); unchanged on SNOWMINT_RESULT_INVALID_ID.
#[no_mangle]
pub unsafe extern "C" fn snowmint_opaque_decode_many(
    opaque: *const snowmint_opaque,
    buf: *mut u64,
    n: usize,
) -> snowmint_result {
    // SAFETY: forwarded caller contract.
    unsafe { many(opaque, buf, n, Opaque::decode_in_place) }
}

//! The C API's entry points with arbitrary arguments, as a C caller could pass them: any numbers, any
//! bytes as text (with or without a terminating NUL), NULL pointers, short buffers. Never a panic or
//! an abort; every result is a known code; an output is written only on success.
#![no_main]

use std::ffi::c_char;
use std::ptr;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use snowmint_capi::*;

#[derive(Arbitrary, Debug)]
struct Input {
    text: Vec<u8>,
    null_text: bool,
    encoding: u32,
    id: u64,
    cap: u8,
    timestamp_bits: u32,
    node_bits: u32,
    sequence_bits: u32,
    order: u32,
    tick_ns: u64,
    epoch_ms: u64,
    node_id_offset: u64,
    use_sign_bit: bool,
    node_split_bits: u32,
    preset: u32,
    node_id: u64,
    policy: u32,
    max_ahead_ns: u64,
    sequence_start: u32,
    seed: u64,
    batch: u8,
    reading: f64,
    code: u32,
}

const SENTINEL: u64 = 0xDEAD_BEEF_DEAD_BEEF;

fn known(r: snowmint_result) -> snowmint_result {
    // SAFETY: a static string or NULL.
    let name = unsafe { std::ffi::CStr::from_ptr(snowmint_result_name(r as u32)) };
    assert_ne!(name.to_bytes(), b"PANIC");
    r
}

fuzz_target!(|i: Input| {
    // SAFETY: every pointer passed is NULL or valid for what the header documents.
    unsafe {
        let mut text = i.text.clone();
        let terminated = !text.contains(&0);
        text.push(0);
        let text_ptr: *const c_char = if i.null_text { ptr::null() } else { text.as_ptr().cast() };

        let mut id = SENTINEL;
        let r = known(snowmint_parse_any(text_ptr, &mut id));
        if r != snowmint_result::Ok {
            assert_eq!(id, SENTINEL, "written on failure");
        }
        let _ = known(snowmint_parse(i.encoding, text_ptr, &mut id));
        let _ = terminated;
        let mut enc = 0u32;
        let _ = known(snowmint_encoding_from_name(text_ptr, &mut enc));
        let _ = known(snowmint_policy_from_name(text_ptr, &mut enc));
        let _ = known(snowmint_order_from_name(text_ptr, &mut enc));

        let mut buf = [0x55 as c_char; 32];
        let mut len = usize::MAX;
        let cap = i.cap as usize % 33;
        let r = known(snowmint_encode(i.encoding, i.id, buf.as_mut_ptr(), cap, &mut len));
        match r {
            snowmint_result::Ok => assert!(len < cap, "the text and its NUL fit"),
            // The documented exception: the length needed (without the NUL) is reported.
            snowmint_result::BufferTooSmall => assert!(len >= cap && len <= 20, "needed {len}"),
            _ => assert_eq!(len, usize::MAX, "written on failure"),
        }

        let cfg = snowmint_layout_config {
            timestamp_bits: i.timestamp_bits,
            node_bits: i.node_bits,
            sequence_bits: i.sequence_bits,
            order: i.order,
            tick_ns: i.tick_ns,
            epoch_ms: i.epoch_ms,
            node_id_offset: i.node_id_offset,
            use_sign_bit: i.use_sign_bit,
            node_split_bits: i.node_split_bits,
        };
        let mut layout: *mut snowmint_layout = ptr::null_mut();
        let r = if i.preset % 3 == 0 {
            known(snowmint_layout_new(&cfg, &mut layout))
        } else if i.preset % 3 == 1 {
            known(snowmint_layout_new_preset(text_ptr, &mut layout))
        } else {
            known(snowmint_layout_new_from_preset(i.preset / 3, &mut layout))
        };
        if r != snowmint_result::Ok {
            assert!(layout.is_null(), "written on failure");
            return;
        }
        let mut decoded = std::mem::zeroed::<snowmint_decoded>();
        let _ = known(snowmint_decode(layout, i.id, &mut decoded));
        let _ = known(snowmint_compose(layout, i.id, i.node_id, i.seed, &mut id));
        let _ = known(snowmint_min_id_at_ms(layout, i.epoch_ms, &mut id));
        let _ = known(snowmint_min_id_at_ns(layout, i.tick_ns, &mut id));
        let mut ns = SENTINEL;
        let _ = known(snowmint_clock_reading_to_ns(layout, i.reading, &mut ns));
        let mut info = std::mem::zeroed::<snowmint_layout_info>();
        let _ = known(snowmint_layout_get_info(layout, &mut info));

        let mut options = std::mem::zeroed::<snowmint_options>();
        let _ = known(snowmint_options_default(&mut options));
        // `wait` (0) sleeps up to max_ahead: the fuzzer keeps the other policies.
        options.policy = 1 + i.policy % 3;
        options.max_ahead_ns = i.max_ahead_ns % 60_000_000_000;
        options.sequence_start = i.sequence_start;
        options.seed = i.seed;
        let mut g: *mut snowmint_generator = ptr::null_mut();
        if known(snowmint_generator_new(layout, i.node_id, &options, &mut g)) == snowmint_result::Ok {
            let mut ids = [0u64; 64];
            let _ = known(snowmint_next_ids(g, ids.as_mut_ptr(), i.batch as usize % 65));
            let _ = known(snowmint_next_id(g, &mut id));
            let mut state = 0;
            let _ = known(snowmint_generator_state(g, &mut state));
            let _ = known(snowmint_generator_restore(g, i.seed));
            snowmint_generator_free(g);
        } else {
            assert!(g.is_null(), "written on failure");
        }
        let _ = snowmint_result_message(i.code);
        let _ = snowmint_result_name(i.code);
        let mut msg = [0 as c_char; 16];
        let _ = known(snowmint_last_error_message(msg.as_mut_ptr(), i.cap as usize % 17, &mut len));
        snowmint_layout_free(layout);
    }
});

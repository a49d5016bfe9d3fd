//! Every string parser of the core: each encoding, `parse_any`, and the names of encodings, layouts,
//! orders and policies. Never a panic; a parsed ID's canonical form parses back to it; `parse_any`
//! returns only what one of the forms reads.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowmint::{parse_any, Encoding, Layout, Order, Policy, ENCODINGS};

fuzz_target!(|s: &str| {
    for enc in ENCODINGS {
        if let Ok(id) = enc.parse(s) {
            let text = enc.encode(id);
            assert_eq!(enc.parse(text.as_str()).ok(), Some(id), "{enc:?} round trip of {s:?}");
        }
    }
    if let Ok(id) = parse_any(s) {
        assert!(
            ENCODINGS.iter().any(|e| e.parse(s).ok() == Some(id)),
            "parse_any({s:?}) = {id}, which no form reads"
        );
    }
    let _ = Encoding::from_name(s);
    let _ = Order::from_name(s);
    let _ = Policy::from_name(s);
    let _ = Layout::preset(s);
    // Every message renders.
    if let Err(e) = parse_any(s) {
        let _ = e.to_string();
    }
});

//! Node-source strings and store URLs (SPEC §3.1) as users type them: parsed only (nothing is
//! resolved or contacted). Never a panic; a refusal renders a message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowmint_coord::source::{parse_store_url, parse_ttl};
use snowmint_coord::NodeSource;

fuzz_target!(|s: &str| {
    match NodeSource::parse(s) {
        Ok(src) => {
            let _ = format!("{src:?}");
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    if let Err(e) = parse_store_url(s) {
        let _ = e.to_string();
    }
    let _ = parse_ttl(s);
});

//! The ID service's request handling (SPEC §6a): arbitrary method, path, query and body through
//! `Service::handle`, the function the HTTP server calls, with client leases on an in-memory store and no
//! sockets. Input: `METHOD TARGET\n` then the body. Checks: never a panic (a caught one would answer
//! 500 PANIC, which fails here too); every non-2xx answer has a JSON error body with a known code and a
//! message; every 200 of `/v1/ids` holds unique, increasing IDs, later than any batch before it.
#![no_main]

use std::sync::{Arc, Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use snowmint::ErrorCode;
use snowmint_coord::{MemoryStore, SystemTime};
use snowmint_service::{Config, Service};

fn service() -> &'static (Service, Mutex<u64>) {
    static S: OnceLock<(Service, Mutex<u64>)> = OnceLock::new();
    S.get_or_init(|| {
        let mut config = Config::new("5", "twitter").unwrap();
        config.max_count = 300;
        let s = Service::open_with(config, Arc::new(SystemTime), Some(Arc::new(MemoryStore::new())), false)
            .unwrap();
        (s, Mutex::new(0))
    })
}

fuzz_target!(|data: &[u8]| {
    let (head, body) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let head = String::from_utf8_lossy(head);
    let (method, target) = head.split_once(' ').unwrap_or((&head, "/"));
    let (s, last) = service();
    let r = s.handle(method, target, body);
    if r.status >= 300 {
        assert!(r.status >= 400 && r.status < 600, "status {}", r.status);
        let v: serde_json::Value = serde_json::from_slice(&r.body).expect("a JSON error body");
        let code = v["error"]["code"].as_str().expect("a code");
        let known = ErrorCode::from_name(code).expect("a known code");
        assert_ne!(known, ErrorCode::Panic, "the handler panicked: {v}");
        assert!(v["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
        assert_eq!(r.content_type, "application/json");
        return;
    }
    if r.status == 200 && target.split('?').next() == Some("/v1/ids") {
        let v: serde_json::Value = serde_json::from_slice(&r.body).expect("a JSON body");
        let ids: Vec<u64> = v["ids"]
            .as_array()
            .expect("ids")
            .iter()
            .map(|x| x.as_str().expect("decimal string").parse().expect("a u64"))
            .collect();
        assert!(!ids.is_empty() && ids.len() <= 300);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "not increasing");
        let mut last = last.lock().unwrap();
        assert!(ids[0] > *last, "not after the batch before");
        *last = ids[ids.len() - 1];
    }
});

//! Unit tests of the rows and of opening by URL.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use snowmint::ErrorCode;

use crate::base::error::Error;
use crate::base::store::Store;
use crate::stores::open::StoreOpener;

use super::open::open_pair_through;
use super::rows::{Dc, Global};

/// SPEC §4: a process opens from its datacenter's store alone; the global store is connected (through
/// the same opener) on its first use, and again after a failed connection.
#[test]
fn open_pair_connects_the_global_store_on_first_use() {
    use std::sync::{atomic::AtomicBool, Mutex};
    let reachable = Arc::new(AtomicBool::new(false));
    let opened = Arc::new(Mutex::new(Vec::new()));
    let memory: Arc<dyn Store> = Arc::new(crate::stores::memory::MemoryStore::new());
    let open: Arc<StoreOpener> = {
        let (reachable, opened) = (reachable.clone(), opened.clone());
        Arc::new(move |url: &crate::base::url::StoreUrl| {
            let global = url.to_string().ends_with("/global");
            if global && !reachable.load(Ordering::SeqCst) {
                return Err(Error::unavailable("the global store is unreachable"));
            }
            opened.lock().unwrap().push(url.to_string());
            Ok(memory.clone())
        })
    };
    let (global, local) =
        open_pair_through("file:///tmp/global", "file:///tmp/dc-a", open).unwrap();
    assert_eq!(*opened.lock().unwrap(), ["file:///tmp/dc-a"]);
    assert_eq!(local.row("k").unwrap(), None);
    let e = global.row("k").unwrap_err();
    assert_eq!(e.code(), ErrorCode::StoreUnavailable);
    reachable.store(true, Ordering::SeqCst);
    assert_eq!(global.row("k").unwrap(), None);
    assert_eq!(
        *opened.lock().unwrap(),
        ["file:///tmp/dc-a", "file:///tmp/global"]
    );
}

#[test]
fn rows_round_trip_and_reject_garbage() {
    let mut dcs = BTreeMap::new();
    dcs.insert("eu".to_string(), (1, 101));
    let g = Global {
        bits: 31,
        start: 1,
        next: 101,
        dcs,
    };
    assert_eq!(Global::parse(&g.text("n1")), Some(g));
    let d = Dc {
        bits: 32,
        start: 0,
        floor: 10,
        ranges: vec![(10, 20), (30, 40)],
        ticket: Some(("p".into(), 99)),
    };
    assert_eq!(Dc::parse(&d.text("n2")), Some(d.clone()));
    let empty = Dc {
        ranges: vec![],
        ticket: None,
        ..d
    };
    assert_eq!(Dc::parse(&empty.text("n3")), Some(empty));
    for bad in [
        "",
        "v2 bits=31 start=1 next=1 by=x",
        "v1 bits=x start=1 next=1",
        "v1 bits=31 bits=31 start=1 next=1",
        "v1 bits=31 start=1 next=1 dc.eu=5-5",
    ] {
        assert_eq!(Global::parse(bad), None, "{bad}");
    }
    assert_eq!(
        Dc::parse("v1 bits=31 start=1 floor=0 ranges=3-2 fetch=- by=x"),
        None
    );
}

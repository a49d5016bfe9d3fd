//! Connection slots (`--max-connections`): at most that many connections are served at once, and one
//! source takes at most a share of them ([`Slots::per_source`]), so that one client cannot hold every
//! slot. A source is an IPv4 address, or an IPv6 /64 ([`crate::source::source_key`]).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use crate::source::source_key;

/// The share of `--max-connections` one source may hold by default: a quarter (64 of the default
/// 256), at least 1.
pub fn default_per_source(max_connections: usize) -> usize {
    (max_connections / 4).max(1)
}

#[derive(Debug, Default)]
struct Held {
    total: usize,
    by_source: HashMap<IpAddr, usize>,
}

/// The slots of one server.
#[derive(Debug)]
pub struct Slots {
    max: usize,
    per_source: usize,
    held: Mutex<Held>,
}

/// Why a connection got no slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Full {
    /// Every slot is held.
    All,
    /// Its source holds its share.
    Source,
}

/// A held slot, given back when dropped.
#[derive(Debug)]
pub struct Slot {
    slots: Arc<Slots>,
    source: IpAddr,
}

impl Slots {
    /// `max` slots, at most `per_source` of them (at least 1) to one source.
    pub fn new(max: usize, per_source: usize) -> Arc<Slots> {
        Arc::new(Slots {
            max,
            per_source: per_source.clamp(1, max.max(1)),
            held: Mutex::new(Held::default()),
        })
    }

    /// How many slots one source may hold.
    pub fn per_source(&self) -> usize {
        self.per_source
    }

    /// A slot for a connection from `peer`, unless every slot or its source's share is held.
    pub fn take(self: &Arc<Self>, peer: IpAddr) -> Result<Slot, Full> {
        let source = source_key(peer);
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if held.total >= self.max {
            return Err(Full::All);
        }
        let mine = held.by_source.entry(source).or_insert(0);
        if *mine >= self.per_source {
            return Err(Full::Source);
        }
        *mine += 1;
        held.total += 1;
        Ok(Slot {
            slots: self.clone(),
            source,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.slots.held.lock().unwrap_or_else(|p| p.into_inner());
        held.total -= 1;
        if let Some(n) = held.by_source.get_mut(&self.source) {
            *n -= 1;
            if *n == 0 {
                held.by_source.remove(&self.source);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_source_holds_at_most_its_share() {
        let slots = Slots::new(4, 2);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let a1 = slots.take(a).unwrap();
        let _a2 = slots.take(a).unwrap();
        assert_eq!(slots.take(a).unwrap_err(), Full::Source);
        // The same address mapped into IPv6 is the same source.
        assert_eq!(
            slots.take("::ffff:10.0.0.1".parse().unwrap()).unwrap_err(),
            Full::Source
        );
        let _b1 = slots.take(b).unwrap();
        let _b2 = slots.take(b).unwrap();
        assert_eq!(
            slots.take("10.0.0.3".parse().unwrap()).unwrap_err(),
            Full::All
        );
        drop(a1);
        let _a3 = slots.take(a).unwrap();
    }

    #[test]
    fn an_ipv6_host_is_its_64() {
        let slots = Slots::new(8, 1);
        let _x = slots.take("2001:db8:1:2::1".parse().unwrap()).unwrap();
        assert_eq!(
            slots
                .take("2001:db8:1:2:ffff::9".parse().unwrap())
                .unwrap_err(),
            Full::Source
        );
        let _y = slots.take("2001:db8:1:3::1".parse().unwrap()).unwrap();
        assert_eq!(default_per_source(256), 64);
        assert_eq!(default_per_source(2), 1);
    }
}

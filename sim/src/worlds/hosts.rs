//! The hosts world (`--world hosts`, `--replay SEED --hosts`): the `ip` node source (SPEC §3.1) on a
//! fleet. Each seed draws 6 to 12 hosts on one subnet (a /24, or a /16 numbered by rack and slot,
//! `10.1.RACK.SLOT`, whose host parts may not fit a node field of 8 or 10 bits) with the interface
//! lists real hosts have, in the operating system's order: loopback; `docker0` with 172.17.0.1/16 and
//! `cni0` with 10.244.N.1/24, bridges with the same host part on every host, sometimes listed before the
//! fleet's interface (a bond or a renamed NIC created after them); a link-local 169.254/16 address; an
//! interface that is down with a stale address baked into the image (192.168.1.10/24 on every host).
//! Some hosts name their fleet interface (`ip:IFACE`), the others take `ip`. Each host derives its node
//! ID with the real `ip_node`; a refusal means the host does not start (allowed: the operator sees
//! why). The started hosts mint with the real generator (`snowmint::Generator`) under clocks of their
//! own, and the checker fails on any ID minted twice across hosts: the `ip` source must never give two
//! hosts of a fleet one node ID. Pure computation, no store.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};

use snowmint::{Layout, LayoutConfig, Options, Policy};
use snowmint_coord::defect::Defect;

use crate::clock::{trace_line, MS, START_UNIX_NS};
use crate::rng::Rng;
use snowmint::{Generator, Mint};
use snowmint_coord::source::{ip_node_planted, Interface};
use std::collections::HashMap;
use std::net::Ipv4Addr;

const UP: u32 = libc::IFF_UP as u32;
const LOOPBACK: u32 = libc::IFF_LOOPBACK as u32;

struct Host {
    /// What the host was configured with (`ip` or `ip:IFACE`), and the address it took.
    source: String,
    node: u64,
    generator: Generator,
    /// Its clock's offset from the true time.
    offset_ns: u64,
}

fn iface(name: &str, flags: u32, bridge: bool, addr: [u8; 4], prefix_len: u8) -> Interface {
    Interface {
        name: name.into(),
        flags,
        bridge,
        addr: Ipv4Addr::from(addr),
        prefix_len,
    }
}

/// A host's interfaces as `ip -4 -brief address` would list them (bridges and down ones said so).
fn describe(list: &[Interface]) -> String {
    let one = |i: &Interface| {
        let state = if i.flags & UP == 0 { " down" } else { "" };
        let bridge = if i.bridge { " bridge" } else { "" };
        format!("{} {}/{}{state}{bridge}", i.name, i.addr, i.prefix_len)
    };
    list.iter().map(one).collect::<Vec<_>>().join(", ")
}

/// One host's interfaces, in the operating system's order, with its fleet address `addr/prefix` on
/// `nic`.
fn interfaces(rng: &mut Rng, nic: &str, addr: [u8; 4], prefix: u8) -> Vec<Interface> {
    let mut before = Vec::new();
    let mut after = Vec::new();
    let mut put = |rng: &mut Rng, i: Interface| match rng.chance(30) {
        true => before.push(i),
        false => after.push(i),
    };
    if rng.chance(80) {
        put(rng, iface("docker0", UP, true, [172, 17, 0, 1], 16));
    }
    if rng.chance(40) {
        let pod = rng.below(256) as u8;
        put(rng, iface("cni0", UP, true, [10, 244, pod, 1], 24));
    }
    if rng.chance(30) {
        let (a, b) = (rng.below(256) as u8, 1 + rng.below(254) as u8);
        put(rng, iface("eth1", UP, false, [169, 254, a, b], 16));
    }
    if rng.chance(30) {
        put(rng, iface("eth2", 0, false, [192, 168, 1, 10], 24));
    }
    let mut all = vec![iface("lo", UP | LOOPBACK, false, [127, 0, 0, 1], 8)];
    all.append(&mut before);
    all.push(iface(nic, UP, false, addr, prefix));
    all.append(&mut after);
    all
}

/// One seed of the hosts world: the IDs minted across the fleet.
pub(crate) fn run_hosts(
    seed: u64,
    steps: u64,
    defect: Defect,
    trace: bool,
) -> std::result::Result<u64, String> {
    let mut rng = Rng(seed ^ 0x1F_0001);
    let now = AtomicU64::new(START_UNIX_NS);
    let log = |step: u64, what: &dyn Fn() -> String| trace_line(trace, step, &now, what);
    let node_bits = [8, 10][rng.below(2) as usize];
    let layout = Layout::new(LayoutConfig {
        timestamp_bits: 41,
        node_bits,
        sequence_bits: 4,
        node_split_bits: 0,
        ..LayoutConfig::default()
    })
    .expect("the simulation's layout");
    // The fleet's subnet: 10.NET.SUB.0/24, or 10.NET.0.0/16 numbered 10.NET.RACK.SLOT.
    let wide = rng.chance(50);
    let net = 1 + rng.below(200) as u8;
    let sub = rng.below(256) as u8;
    let nic = ["eth0", "ens5", "bond0"][rng.below(3) as usize];
    let count = 6 + rng.below(7);
    let mut taken = HashSet::new();
    let mut hosts = Vec::new();
    while (hosts.len() as u64) < count {
        let addr = match wide {
            true => [10, net, rng.below(6) as u8, 11 + rng.below(8) as u8],
            false => [10, net, sub, 1 + rng.below(254) as u8],
        };
        if !taken.insert(addr) {
            continue;
        }
        let prefix = if wide { 16 } else { 24 };
        let list = interfaces(&mut rng, nic, addr, prefix);
        let named = rng.chance(30).then_some(nic);
        let source = named.map_or("ip".to_string(), |n| format!("ip:{n}"));
        let h = hosts.len();
        let at = Ipv4Addr::from(addr);
        match ip_node_planted(&list, named, node_bits, defect) {
            Ok(node) => {
                let generator = Generator::new(
                    layout,
                    node,
                    Options {
                        policy: Policy::Fail,
                        ..Options::default()
                    },
                )
                .map_err(|e| {
                    format!("host {h} ({source}, fleet address {at}): node {node}: {e}")
                })?;
                log(0, &|| {
                    format!("host {h} ({source}; {}) takes node {node}", describe(&list))
                });
                hosts.push(Some(Host {
                    source: format!("{source}; {}", describe(&list)),
                    node,
                    generator,
                    offset_ns: rng.below(3 * MS),
                }));
            }
            Err(why) => {
                log(0, &|| {
                    format!(
                        "host {h} ({source}; {}) does not start: {why}",
                        describe(&list)
                    )
                });
                hosts.push(None);
            }
        }
    }
    let mut seen: HashMap<u64, usize> = HashMap::new();
    let mut minted = 0u64;
    let mut out = [0u64; 8];
    for step in 1..=steps {
        now.fetch_add(rng.below(MS), Ordering::SeqCst);
        let h = rng.below(hosts.len() as u64) as usize;
        let k = 1 + rng.below(out.len() as u64) as usize;
        let Some(host) = &mut hosts[h] else { continue };
        let at = now.load(Ordering::SeqCst) + host.offset_ns;
        let Ok(Mint::Ready(())) = host.generator.next_ids_at(at, &mut out[..k]) else {
            continue;
        };
        let (node, source) = (host.node, host.source.clone());
        log(step, &|| format!("host {h} (node {node}) mints {k}"));
        for &id in &out[..k] {
            if let Some(first) = seen.insert(id, h) {
                let other = hosts[first].as_ref().expect("a started host");
                return Err(format!(
                    "hosts: ID {id} minted by host {h} (node {}; {}) was minted before by host \
                     {first} (node {}; {})",
                    node, source, other.node, other.source
                ));
            }
        }
        minted += k as u64;
    }
    Ok(minted)
}

//! Who a caller is, by where it comes from: the source a connection is counted under (an IPv4 address,
//! an IPv6 /64: what one IPv6 host is usually given) and the network a lease is also counted under (an
//! IPv4 /24, an IPv6 /64). An IPv4 address mapped into IPv6 counts as the IPv4 address.

use std::net::IpAddr;

fn v6_prefix(v6: std::net::Ipv6Addr, bits: u32) -> IpAddr {
    let mask = !0u128 << (128 - bits);
    IpAddr::V6((u128::from(v6) & mask).into())
}

/// The key a connection's source is counted under: the IPv4 address, or the IPv6 address's /64.
pub fn source_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => v6_prefix(v6, 64),
    }
}

/// The network an address belongs to: its IPv4 /24, or its IPv6 /64.
pub fn network(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4((u32::from(v4) & !0xff).into()),
        IpAddr::V6(v6) => v6_prefix(v6, 64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn sources_and_networks() {
        assert_eq!(source_key(ip("10.1.2.3")), ip("10.1.2.3"));
        assert_eq!(source_key(ip("::ffff:10.1.2.3")), ip("10.1.2.3"));
        assert_eq!(source_key(ip("2001:db8:1:2:3::4")), ip("2001:db8:1:2::"));
        assert_eq!(network(ip("10.1.2.3")), ip("10.1.2.0"));
        assert_eq!(network(ip("::ffff:127.0.0.4")), ip("127.0.0.0"));
        assert_eq!(network(ip("2001:db8:1:2:ffff::1")), ip("2001:db8:1:2::"));
    }
}

//! Which addresses a crawl may reach. The rule is pure so that registering a
//! site (its literal hosts) and fetching (its resolved addresses) apply the
//! same one.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::Host;

/// Returns whether an address is publicly routable (not loopback, private,
/// link-local, shared, unspecified, multicast or documentation).
pub fn is_public_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let shared = a == 100 && (64..128).contains(&b);
    let benchmarking = a == 198 && (b == 18 || b == 19);
    let protocol_assignments = a == 192 && b == 0 && c == 0;
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || shared
        || benchmarking
        || protocol_assignments
        || a == 0
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    let first = segments[0];
    // Forms that carry an IPv4 address are as public as that address.
    let embedded_v4 = |high: u16, low: u16| {
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    let nat64 = segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
    if nat64 {
        return is_public_v4(embedded_v4(segments[6], segments[7]));
    }
    if first == 0x2002 {
        return is_public_v4(embedded_v4(segments[1], segments[2]));
    }
    let ipv4_compatible = segments[..6] == [0; 6];
    let local_nat64 = first == 0x64 && segments[1] == 0xff9b && segments[2] == 1;
    let discard = segments[..4] == [0x100, 0, 0, 0];
    let unique_local = (first & 0xfe00) == 0xfc00;
    let link_local = (first & 0xffc0) == 0xfe80;
    let site_local = (first & 0xffc0) == 0xfec0;
    let teredo = first == 0x2001 && segments[1] == 0;
    let benchmarking = first == 0x2001 && segments[1] == 2 && segments[2] == 0;
    let orchid = first == 0x2001 && matches!(segments[1] & 0xfff0, 0x0010 | 0x0020);
    let documentation = first == 0x2001 && segments[1] == 0x0db8;
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ipv4_compatible
        || local_nat64
        || discard
        || unique_local
        || link_local
        || site_local
        || teredo
        || benchmarking
        || orchid
        || documentation)
}

/// Returns whether a host may be registered without resolving it: IP literals
/// must be public and names reserved for loopback (`localhost`, `*.localhost`)
/// are refused. Other names are checked when they are resolved at crawl time.
pub fn is_public_host(host: &Host<&str>) -> bool {
    match host {
        Host::Ipv4(ip) => is_public_v4(*ip),
        Host::Ipv6(ip) => is_public_ip(IpAddr::V6(*ip)),
        Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            !(name == "localhost" || name.ends_with(".localhost"))
        }
    }
}

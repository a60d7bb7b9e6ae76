//! Which addresses a fetch may reach without a rule naming the host (docs/web.md, "What a
//! fetch may reach"). A page the model picked must not become a way into the person's
//! own machine or network: the router's admin page, a database on localhost, the cloud
//! metadata service at 169.254.169.254. Only addresses on the public internet pass; every
//! other range is refused here, after DNS (`Guard`) and for an address written in the URL.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `ip` is an address on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()          // 0.0.0.0 reaches the local machine on Linux
        || a == 0                  // "this network"
        || ip.is_loopback()        // 127/8
        || ip.is_private()         // 10/8, 172.16/12, 192.168/16
        || ip.is_link_local()      // 169.254/16: cloud metadata services
        || (a == 100 && (64..128).contains(&b)) // 100.64/10: carrier-grade NAT
        || (a == 192 && b == 0 && c == 0)       // 192.0.0/24: protocol assignments
        || (a == 192 && b == 0 && c == 2)       // documentation
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
        || (a == 198 && (b == 18 || b == 19))   // benchmarking
        || (a == 192 && b == 88 && c == 99)     // 6to4 relay anycast
        || ip.is_multicast()       // 224/4
        || a >= 240) // reserved, and 255.255.255.255
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    // An IPv4 address carried in an IPv6 one reaches that IPv4 address: judged as it.
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    !(ip.is_unspecified()                 // ::
        || ip.is_loopback()               // ::1
        || (s[0] & 0xfe00) == 0xfc00      // fc00::/7 unique local
        || (s[0] & 0xffc0) == 0xfe80      // fe80::/10 link-local
        || (s[0] & 0xffc0) == 0xfec0      // fec0::/10 site-local (deprecated, still routed by some)
        || (s[0] & 0xff00) == 0xff00      // multicast
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || (s[0] == 0x0100 && s[1] == 0 && s[2] == 0 && s[3] == 0) // 100::/64 discard
        || (s[0] == 0x2001 && s[1] < 0x0200) // 2001::/23 protocol assignments (Teredo…)
        || s[0] < 0x2000 // outside 2000::/3, the only global unicast space
        || s[0] >= 0x4000)
}

/// The IPv4 address an IPv6 address stands for: IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`), the well-known NAT64 prefix (`64:ff9b::/96` and the
/// local-use `64:ff9b:1::/48`), and 6to4 (`2002:aabb:ccdd::/48`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new(
        (s[6] >> 8) as u8,
        (s[6] & 0xff) as u8,
        (s[7] >> 8) as u8,
        (s[7] & 0xff) as u8,
    );
    if s[..5] == [0; 5] && (s[5] == 0xffff || (s[5] == 0 && (s[6] != 0 || s[7] > 1))) {
        return Some(low);
    }
    if s[0] == 0x0064 && s[1] == 0xff9b && (s[2..6] == [0; 4] || s[2] == 1) {
        return Some(low);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            (s[1] & 0xff) as u8,
            (s[2] >> 8) as u8,
            (s[2] & 0xff) as u8,
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(s: &str) -> bool {
        is_public(s.parse().unwrap())
    }

    #[test]
    fn the_public_internet_passes() {
        for ip in [
            "93.184.215.14",
            "1.1.1.1",
            "8.8.8.8",
            "2606:4700::1111",
            "2a00:1450:4001::200e",
        ] {
            assert!(public(ip), "{ip}");
        }
    }

    #[test]
    fn every_local_and_special_range_is_refused() {
        for ip in [
            "127.0.0.1",
            "127.1.2.3",
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "192.0.0.8",
            "192.0.2.1",
            "198.51.100.1",
            "203.0.113.1",
            "198.18.0.1",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "100::1",
            "2001::1",
        ] {
            assert!(!public(ip), "{ip} passed");
        }
    }

    #[test]
    fn an_ipv4_address_inside_an_ipv6_one_is_judged_as_itself() {
        for ip in [
            "::ffff:127.0.0.1",
            "::ffff:7f00:1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "::10.0.0.1",
            "64:ff9b::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::c0a8:101",
            "2002:7f00:1::",
            "2002:c0a8:101::1",
            "::ffff:0.0.0.0",
        ] {
            assert!(!public(ip), "{ip} passed");
        }
        assert!(public("::ffff:8.8.8.8"));
        assert!(public("64:ff9b::808:808"));
        assert!(public("2002:808:808::1"));
    }
}

//! Hosts as a command names them, where they resolve, and which addresses are not the public
//! internet.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

/// A host from a request: a DNS name (lowercase, no trailing dot) or an IP address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Host {
    Name(String),
    Ip(IpAddr),
}

impl Host {
    /// Parses the host part of `host:port`. Numeric forms that resolvers read as addresses
    /// (`127.1`, `0x7f.0.0.1`, `2130706433`) are refused rather than passed to a resolver,
    /// since they are IP addresses in disguise.
    pub(crate) fn parse(raw: &str) -> Result<Host, String> {
        let bad = || format!("`{raw}` is not a host name or an IP address");
        if let Some(inner) = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            return inner
                .parse::<Ipv6Addr>()
                .map(|ip| Host::Ip(ip.into()))
                .map_err(|_| bad());
        }
        let name = raw.to_ascii_lowercase();
        let name = name.strip_suffix('.').unwrap_or(&name);
        if let Ok(ip) = name.parse::<Ipv4Addr>() {
            return Ok(Host::Ip(ip.into()));
        }
        let labels: Vec<&str> = name.split('.').collect();
        let label_ok = |l: &&str| {
            (1..=63).contains(&l.len())
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        let last = labels.last().copied().unwrap_or_default();
        let numeric = last.chars().all(|c| c.is_ascii_digit())
            || (last.starts_with("0x") && last[2..].chars().all(|c| c.is_ascii_hexdigit()));
        if name.is_empty() || name.len() > 253 || !labels.iter().all(label_ok) || numeric {
            return Err(bad());
        }
        Ok(Host::Name(name.to_string()))
    }

    /// The host as the decider and the report see it (`::1` without brackets).
    pub(crate) fn text(&self) -> String {
        match self {
            Host::Name(n) => n.clone(),
            Host::Ip(ip) => ip.to_string(),
        }
    }
}

/// Why an address is not on the public internet (`None` when it is): loopback, private
/// (RFC 1918), shared (CGNAT, RFC 6598), unique-local (`fc00::/7`), link-local, unspecified,
/// multicast, broadcast, documentation, benchmarking or reserved; an IPv6 address that embeds
/// an IPv4 one (mapped, NAT64, 6to4) is judged by that address.
pub(crate) fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, _, _) => "unspecified",
        (127, _, _) => "loopback",
        (10, _, _) | (192, 168, _) => "private",
        (172, 16..=31, _) => "private",
        (100, 64..=127, _) => "shared (CGNAT)",
        (169, 254, _) => "link-local",
        (192, 0, 0) => "reserved",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (198, 18..=19, _) => "benchmarking",
        (224..=239, _, _) => "multicast",
        (255, 255, 255) if ip.is_broadcast() => "broadcast",
        (240..=255, _, _) => "reserved",
        _ => return None,
    })
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    if let Some(v4) = ip.to_ipv4_mapped() {
        return non_public_v4(v4);
    }
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    Some(match s[0] {
        0 if s[1..6] == [0; 5] => "reserved",
        0x64 if s[1] == 0xff9b && s[2..6] == [0; 4] => return non_public_v4(embedded(s[6], s[7])),
        0x64 if s[1] == 0xff9b && s[2] == 1 => "private",
        0x100 if s[1..4] == [0; 3] => "reserved",
        0x2001 if s[1] == 0xdb8 => "documentation",
        0x2002 => return non_public_v4(embedded(s[1], s[2])),
        x if x & 0xfe00 == 0xfc00 => "unique-local",
        x if x & 0xffc0 == 0xfe80 => "link-local",
        x if x & 0xffc0 == 0xfec0 => "site-local",
        x if x & 0xff00 == 0xff00 => "multicast",
        _ => return None,
    })
}

/// The environment variable (debug builds only) that maps host names to local test servers:
/// `BOSUN_PROXY_RESOLVE=allowed.test=127.0.0.1:8080,other.test=127.0.0.1:8081`.
pub const RESOLVE_ENV: &str = "BOSUN_PROXY_RESOLVE";

/// Parses a [`RESOLVE_ENV`] value into `(host, address)` pairs.
pub fn parse_resolve(text: &str) -> Result<Vec<(String, SocketAddr)>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|entry| {
            let (host, addr) = entry
                .split_once('=')
                .ok_or_else(|| format!("`{entry}` in {RESOLVE_ENV} is not host=127.0.0.1:PORT"))?;
            let addr: SocketAddr = addr.trim().parse().map_err(|_| {
                format!("`{addr}` in {RESOLVE_ENV} is not an address like 127.0.0.1:8080")
            })?;
            match Host::parse(host.trim())? {
                Host::Name(name) => Ok((name, addr)),
                Host::Ip(_) => Err(format!("{RESOLVE_ENV} maps names, not `{host}`")),
            }
        })
        .collect()
}

/// Where a connection to `host:port` goes: the address itself, a [`RESOLVE_ENV`] mapping, or
/// what the system resolver answers (within `timeout`).
pub(crate) async fn resolve(
    host: &Host,
    port: u16,
    overrides: &[(String, SocketAddr)],
    timeout: Duration,
) -> Result<Vec<SocketAddr>, String> {
    let name = match host {
        Host::Ip(ip) => return Ok(vec![SocketAddr::new(*ip, port)]),
        Host::Name(name) => name,
    };
    if let Some((_, addr)) = overrides.iter().find(|(n, _)| n == name) {
        return Ok(vec![*addr]);
    }
    match tokio::time::timeout(timeout, tokio::net::lookup_host((name.as_str(), port))).await {
        Ok(Ok(addrs)) => {
            let addrs: Vec<SocketAddr> = addrs.collect();
            if addrs.is_empty() {
                Err(format!("`{name}` has no address"))
            } else {
                Ok(addrs)
            }
        }
        Ok(Err(e)) => Err(format!("cannot resolve `{name}`: {e}")),
        Err(_) => Err(format!(
            "resolving `{name}` took longer than {} s",
            timeout.as_secs()
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn hosts_are_names_or_addresses_never_numbers_in_disguise() {
        assert_eq!(
            Host::parse("PyPI.org.").unwrap(),
            Host::Name("pypi.org".into())
        );
        assert_eq!(
            Host::parse("[::1]").unwrap(),
            Host::Ip("::1".parse().unwrap())
        );
        assert_eq!(
            Host::parse("10.0.0.1").unwrap(),
            Host::Ip("10.0.0.1".parse().unwrap())
        );
        for bad in [
            "127.1",
            "2130706433",
            "0x7f.0.0.1",
            "0x7f000001",
            "",
            "a..b",
            "-a.com",
            "a b",
            "é.com",
            "[::1",
            "::1",
            "a@b",
        ] {
            assert!(Host::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn addresses_off_the_public_internet_are_named() {
        let kind = |s: &str| non_public(s.parse().unwrap());
        for (ip, want) in [
            ("127.0.0.1", Some("loopback")),
            ("10.1.2.3", Some("private")),
            ("172.31.0.1", Some("private")),
            ("192.168.1.1", Some("private")),
            ("100.100.0.1", Some("shared (CGNAT)")),
            ("169.254.169.254", Some("link-local")),
            ("0.0.0.0", Some("unspecified")),
            ("255.255.255.255", Some("broadcast")),
            ("224.0.0.1", Some("multicast")),
            ("::1", Some("loopback")),
            ("::", Some("unspecified")),
            ("fd12::1", Some("unique-local")),
            ("fe80::1", Some("link-local")),
            ("::ffff:127.0.0.1", Some("loopback")),
            ("64:ff9b::a00:1", Some("private")),
            ("2002:c0a8:101::1", Some("private")),
            ("8.8.8.8", None),
            ("172.32.0.1", None),
            ("151.101.0.223", None),
            ("2606:4700::1111", None),
        ] {
            assert_eq!(kind(ip), want, "{ip}");
        }
    }

    #[test]
    fn resolve_overrides_are_parsed_strictly() {
        assert_eq!(
            parse_resolve("a.test=127.0.0.1:80, B.test=127.0.0.1:81").unwrap(),
            vec![
                ("a.test".to_string(), "127.0.0.1:80".parse().unwrap()),
                ("b.test".to_string(), "127.0.0.1:81".parse().unwrap()),
            ]
        );
        assert!(parse_resolve("a.test").is_err());
        assert!(parse_resolve("a.test=localhost:80").is_err());
        assert!(parse_resolve("1.2.3.4=127.0.0.1:80").is_err());
    }
}

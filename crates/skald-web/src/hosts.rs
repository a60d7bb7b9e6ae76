//! Host patterns, as rules write them for web tools (`skald rules add --tool web_fetch
//! --domain docs.rs`): `docs.rs` is that host, `*.docs.rs` any host below it (not itself),
//! either with `:port` for that port only. Compared as DNS compares names: without case,
//! without a trailing dot. An IPv6 address is written in brackets (`[::1]:8080`).

/// Whether `pattern` covers `host` (as a URL gives it: lower case, IPv6 in brackets) on
/// `port`.
pub fn pattern_matches(pattern: &str, host: &str, port: u16) -> bool {
    let Some((name, want_port)) = split(pattern) else {
        return false;
    };
    if want_port.is_some_and(|p| p != port) {
        return false;
    }
    let host = normal(host);
    match name.strip_prefix("*.") {
        Some(parent) => host.len() > parent.len() + 1 && host.ends_with(&format!(".{parent}")),
        None => host == name,
    }
}

/// Whether `pattern` names `host` itself and its port — no wildcard, a port written — so
/// a rule with it may let a fetch reach that host's private or local address on that port.
/// A pattern without a port ("always allow docs.rs") never does: the name's owner could
/// point it at the person's router or their machine's services later.
pub fn pattern_names(pattern: &str, host: &str, port: u16) -> bool {
    !pattern.contains('*')
        && split(pattern).is_some_and(|(_, p)| p.is_some())
        && pattern_matches(pattern, host, port)
}

/// Why `pattern` is not a host pattern, for `skald rules add --domain`.
pub fn check_pattern(pattern: &str) -> Result<(), String> {
    let Some((name, _)) = split(pattern) else {
        return Err(format!(
            "`{pattern}` is not a host pattern: write a host (`docs.rs`), `*.` and a domain \
             (`*.python.org`), either with `:port` if you like, and nothing else (no scheme, \
             no path)"
        ));
    };
    let bare = name.strip_prefix("*.").unwrap_or(&name);
    if bare.is_empty() || bare.contains('*') {
        return Err(format!(
            "`{pattern}`: a `*` may only stand first, as `*.example.com`"
        ));
    }
    Ok(())
}

/// The name (lower case, no trailing dot) and port of a pattern; None if it is not one.
fn split(pattern: &str) -> Option<(String, Option<u16>)> {
    let p = pattern.trim();
    if p.is_empty() || p.contains("://") || p.contains('/') || p.contains('@') || p.contains(' ') {
        return None;
    }
    let (name, port) = if let Some(rest) = p.strip_prefix('[') {
        let (addr, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':')?.parse().ok()?),
        };
        (format!("[{}]", addr.to_ascii_lowercase()), port)
    } else {
        match p.rsplit_once(':') {
            Some((name, port)) => (name.to_string(), Some(port.parse().ok()?)),
            None => (p.to_string(), None),
        }
    };
    let name = normal(&name);
    (!name.is_empty()).then_some((name, port))
}

/// A host as URLs carry it: no trailing dot, lower case, an internationalised name in its
/// ASCII (punycode) form, an IPv4 address in its dotted form — so `bücher.example` in a
/// rule is the `xn--bcher-kva.example` of the URL.
fn normal(host: &str) -> String {
    let h = host.trim_end_matches('.').to_lowercase();
    if h.starts_with('[') {
        return h;
    }
    let (star, bare) = match h.strip_prefix("*.") {
        Some(rest) => ("*.", rest),
        None => ("", h.as_str()),
    };
    match url::Host::parse(bare) {
        Ok(url::Host::Domain(d)) => format!("{star}{d}"),
        Ok(url::Host::Ipv4(ip)) => format!("{star}{ip}"),
        _ => h.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_pattern_is_that_host_and_a_star_its_subdomains() {
        assert!(pattern_matches("docs.rs", "docs.rs", 443));
        assert!(pattern_matches("Docs.RS.", "docs.rs", 80));
        assert!(!pattern_matches("docs.rs", "evil-docs.rs", 443));
        assert!(!pattern_matches("docs.rs", "docs.rs.evil.com", 443));
        assert!(!pattern_matches("docs.rs", "a.docs.rs", 443));
        assert!(pattern_matches("*.python.org", "docs.python.org", 443));
        assert!(!pattern_matches("*.python.org", "python.org", 443));
        assert!(!pattern_matches("*.python.org", "evilpython.org", 443));
        assert!(pattern_matches("127.0.0.1:8080", "127.0.0.1", 8080));
        assert!(!pattern_matches("127.0.0.1:8080", "127.0.0.1", 8081));
        assert!(pattern_matches("[::1]:99", "[::1]", 99));
        assert!(pattern_matches("[::1]", "[::1]", 1));
        assert!(pattern_matches(
            "bücher.example",
            "xn--bcher-kva.example",
            443
        ));
        assert!(pattern_matches(
            "*.BÜCHER.example",
            "shop.xn--bcher-kva.example",
            443
        ));
        assert!(!pattern_names("*.corp", "wiki.corp", 80));
        assert!(!pattern_names("wiki.corp", "wiki.corp", 80));
        assert!(pattern_names("wiki.corp:80", "wiki.corp", 80));
        assert!(!pattern_names("wiki.corp:80", "wiki.corp", 8080));
    }

    #[test]
    fn what_is_not_a_host_pattern_is_said() {
        for bad in [
            "https://docs.rs",
            "docs.rs/x",
            "",
            "a b",
            "u@docs.rs",
            "*",
            "a.*.com",
            "docs.rs:x",
        ] {
            assert!(check_pattern(bad).is_err(), "{bad}");
        }
        for good in [
            "docs.rs",
            "*.docs.rs",
            "localhost:3000",
            "[::1]:8080",
            "10.0.0.5",
        ] {
            assert!(check_pattern(good).is_ok(), "{good}");
        }
    }
}

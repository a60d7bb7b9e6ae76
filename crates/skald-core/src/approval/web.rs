//! The approval gate's part for the web tools (docs/web.md, "Approval"): rules name hosts
//! (`--domain docs.rs`), "always allow" proposes the fetched URL's host, and the hosts a
//! run's allow rules name are the only ones a fetch may reach at a local or private
//! address.

use super::{RunContext, rule_applies};
use serde_json::Value;
use skald_api::tool_names as tn;
use skald_store::{Rule, RuleAction, Store};
use skald_web::address::is_public;
use std::net::IpAddr;

/// Whether a rule's host pattern covers the URL a call fetches. A call with no URL (or
/// one that does not parse) is covered by no host pattern.
pub fn domain_matches(pattern: &str, tool: &str, args: &Value) -> bool {
    let Some(url) = fetched_url(tool, args) else {
        return false;
    };
    let (host, port) = skald_web::host_and_port(&url);
    skald_web::hosts::pattern_matches(pattern, &host, port)
}

fn fetched_url(tool: &str, args: &Value) -> Option<skald_web::Url> {
    if tool != tn::WEB_FETCH {
        return None;
    }
    let raw = skald_tools::web_fetch::url_arg(args)?;
    skald_web::parse_url(raw).ok()
}

/// The host "always allow" proposes for a fetch: the URL's host, with its port when the
/// port is not the scheme's own or the host is local (a rule for `localhost` would let
/// the agent reach every service on the machine; `localhost:3000` is the one asked for).
pub fn proposed_domain(args: &Value) -> Option<String> {
    let url = fetched_url(tn::WEB_FETCH, args)?;
    let (host, port) = skald_web::host_and_port(&url);
    let local = host == "localhost"
        || host.ends_with(".localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| !is_public(ip));
    let default_port = url.port().is_none();
    Some(if local || !default_port {
        format!("{host}:{port}")
    } else {
        host
    })
}

/// What a host rule allows, in words a person can check.
pub fn domain_reach(tool: &str, pattern: &str) -> String {
    let hosts = match pattern.split_once("*.") {
        Some((_, parent)) => format!("any host under {parent} (not {parent} itself)"),
        None => pattern.to_string(),
    };
    format!("{tool} of any page on {hosts}, over http or https, whatever its path")
}

/// The host patterns the allow rules of this run name for `tool`, without a wildcard:
/// the hosts a fetch may reach at a local or private address. Unreadable rules name none.
pub fn named_hosts(store: &Store, ctx: &RunContext, tool: &str) -> Vec<String> {
    let Ok(rules) = store.rules_for_group(&ctx.group) else {
        return Vec::new();
    };
    rules
        .iter()
        .filter(|r: &&Rule| r.action == RuleAction::Allow && rule_applies(r, ctx, tool))
        .filter_map(|r| r.domain_pattern.clone())
        .filter(|p| !p.contains('*'))
        .collect()
}

/// What the web tools may do in this call: the hosts the rules name, config.toml's
/// `[web]`, and the search API's key when one is set up.
pub fn web_access(
    store: &Store,
    ctx: &RunContext,
    tool: &str,
    web: &crate::config::WebConfig,
    secrets: Option<&skald_secrets::Secrets>,
) -> skald_api::WebAccess {
    let search = match web.search_api() {
        Ok(Some((backend, endpoint))) => Some(skald_api::WebSearchSetup {
            backend: backend.name().to_string(),
            endpoint,
            key: backend
                .needs_key()
                .then(|| secrets.and_then(|s| s.get(crate::config::WEB_SEARCH_KEY).ok().flatten()))
                .flatten(),
        }),
        _ => None,
    };
    skald_api::WebAccess {
        named_hosts: if tool == tn::WEB_FETCH {
            named_hosts(store, ctx, tool)
        } else {
            Vec::new()
        },
        timeout: std::time::Duration::from_secs(web.timeout_secs.max(1)),
        max_bytes: web.max_bytes.max(1024),
        search,
    }
}

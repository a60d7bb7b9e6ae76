//! `fetch` and `search` against real sites on 127.0.0.1 (skald-testkit `WebSite`): what a
//! fetch reads, what it refuses — and that a refused address never sees a request; and
//! each search API asked the way it expects.

use crate::{Fetched, Kind, Reach, WebError, fetch, parse_url};
use skald_testkit::web::{Route, WebSite, pdf_saying};
use std::time::Duration;

fn reach(named: &[&str]) -> Reach {
    Reach {
        named: named.iter().map(|s| s.to_string()).collect(),
        timeout: Duration::from_secs(10),
        max_bytes: 1024 * 1024,
    }
}

async fn get(url: &str, reach: &Reach) -> Result<Fetched, WebError> {
    fetch(&parse_url(url)?, reach).await
}

fn page(f: Fetched) -> std::sync::Arc<crate::Page> {
    match f {
        Fetched::Page(p) => p,
        other => panic!("not a page: {other:?}"),
    }
}

#[tokio::test]
async fn an_allowed_local_site_is_read_and_its_redirects_within_it_followed() {
    let site = WebSite::new(vec![
        (
            "/article",
            Route::ok("text/html; charset=utf-8", crate::convert::tests::ARTICLE),
        ),
        ("/old", Route::redirect("/article")),
        (
            "/doc.pdf",
            Route::ok("application/pdf", pdf_saying("Quarterly results are up")),
        ),
        ("/data", Route::ok("application/json", r#"{"ok":true}"#)),
    ]);
    let named = format!("127.0.0.1:{}", site.port);
    let r = reach(&[&named]);
    let p = page(get(&site.url("/old"), &r).await.unwrap());
    assert_eq!(p.url, site.url("/article"));
    assert!(p.text.contains("borrow checker"), "{}", p.text);
    assert!(!p.text.contains("NAV-CHROME"));
    let pdf = page(get(&site.url("/doc.pdf"), &r).await.unwrap());
    assert_eq!(pdf.kind, Kind::Pdf);
    assert!(
        pdf.text.contains("Quarterly results are up"),
        "{}",
        pdf.text
    );
    let json = page(get(&site.url("/data"), &r).await.unwrap());
    assert!(json.text.contains("\"ok\": true"));
    // No cookie is ever sent, even when the site sets one.
    assert!(
        site.requests()
            .iter()
            .all(|q| !q.headers.contains_key("cookie"))
    );
}

#[tokio::test]
async fn a_redirect_to_another_host_is_not_followed() {
    let site = WebSite::new(vec![
        (
            "/meta",
            Route::redirect("http://169.254.169.254/latest/meta-data/"),
        ),
        ("/v6", Route::redirect("http://[::ffff:127.0.0.1]/secret")),
        ("/name", Route::redirect("http://localhost/secret")),
    ]);
    let named = format!("127.0.0.1:{}", site.port);
    let r = reach(&[&named]);
    for (path, to) in [
        ("/meta", "http://169.254.169.254/latest/meta-data/"),
        ("/v6", "http://[::ffff:7f00:1]/secret"),
        ("/name", "http://localhost/secret"),
    ] {
        match get(&site.url(path), &r).await.unwrap() {
            Fetched::Moved { to: got, .. } => assert_eq!(got, to),
            other => panic!("{path}: {other:?}"),
        }
    }
    // And fetched directly, the private target is refused.
    let err = get("http://169.254.169.254/latest/meta-data/", &r)
        .await
        .unwrap_err();
    assert!(matches!(err, WebError::Private { .. }), "{err}");
}

#[tokio::test]
async fn every_form_of_a_local_address_is_refused_before_a_request_is_made() {
    let site = WebSite::new(vec![("/", Route::ok("text/plain", "secret"))]);
    let port = site.port;
    let r = reach(&[]);
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://0.0.0.0:{port}/"),
        format!("http://2130706433:{port}/"),
        format!("http://0177.0.0.1:{port}/"),
        format!("http://0x7f.1:{port}/"),
        format!("http://127.1:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://[0:0:0:0:0:ffff:7f00:1]:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://LocalHost:{port}/"),
    ] {
        let err = get(&url, &r).await.unwrap_err();
        assert!(matches!(err, WebError::Private { .. }), "{url}: {err}");
    }
    // A trailing dot: refused as a local address where the system resolves it, as an
    // unknown name where it does not; never fetched.
    get(&format!("http://LOCALHOST.:{port}/"), &r)
        .await
        .unwrap_err();
    assert!(
        site.requests().is_empty(),
        "a refused fetch reached the site"
    );
    // A rule naming another port, or a wildcard, does not name this one.
    for named in [
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        "*.0.0.1".to_string(),
    ] {
        let err = get(&format!("http://127.0.0.1:{port}/"), &reach(&[&named]))
            .await
            .unwrap_err();
        assert!(matches!(err, WebError::Private { .. }), "{named}: {err}");
    }
    assert!(site.requests().is_empty());
}

#[tokio::test]
async fn a_huge_page_is_read_up_to_the_cap_and_a_slow_one_times_out() {
    let big: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
    let site = WebSite::new(vec![
        ("/big", Route::ok("text/plain", big)),
        (
            "/slow",
            Route::ok("text/plain", "late").delayed(Duration::from_secs(5)),
        ),
    ]);
    let named = format!("127.0.0.1:{}", site.port);
    let mut r = reach(&[&named]);
    r.max_bytes = 100_000;
    let p = page(get(&site.url("/big"), &r).await.unwrap());
    assert!(p.cut);
    assert_eq!(p.bytes, 100_000);
    assert!(p.text.starts_with("line 0\n"));
    r.timeout = Duration::from_millis(300);
    let err = get(&site.url("/slow"), &r).await.unwrap_err();
    assert!(matches!(err, WebError::TimedOut { .. }), "{err}");
}

#[tokio::test]
async fn bad_urls_and_error_statuses_say_what_is_wrong() {
    for (url, says) in [
        ("ftp://example.com/x", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("http://user:pw@example.com/", "user name or password"),
        ("not a url", "bad URL"),
    ] {
        let err = parse_url(url).unwrap_err().to_string();
        assert!(err.contains(says), "{url}: {err}");
    }
    let site = WebSite::new(vec![
        ("/gone", Route::status(410)),
        ("/img", Route::ok("image/png", vec![0x89, 1, 2])),
    ]);
    let named = format!("127.0.0.1:{}", site.port);
    let r = reach(&[&named]);
    let err = get(&site.url("/gone"), &r).await.unwrap_err().to_string();
    assert!(err.contains("HTTP 410"), "{err}");
    let err = get(&site.url("/img"), &r).await.unwrap_err().to_string();
    assert!(err.contains("image/png"), "{err}");
}

fn api(
    backend: crate::search::Backend,
    endpoint: String,
    key: Option<&str>,
) -> crate::search::SearchApi {
    crate::search::SearchApi {
        backend,
        endpoint,
        key: key.map(str::to_string),
        timeout: Duration::from_secs(10),
    }
}

#[tokio::test]
async fn each_search_api_is_asked_as_it_expects_and_its_results_read() {
    use crate::search::{Backend, search};
    let site = WebSite::new(vec![
        (
            "/searx/search",
            Route::ok(
                "application/json",
                r#"{"query":"rust borrow","results":[{"title":"The Book","url":"https://doc.rust-lang.org/book/","content":"References and <b>borrowing</b>"},{"title":"Nomicon","url":"https://doc.rust-lang.org/nomicon/","content":"dark arts"}]}"#,
            ),
        ),
        (
            "/brave",
            Route::ok(
                "application/json",
                r#"{"type":"search","web":{"results":[{"title":"Brave <strong>hit</strong>","url":"https://example.org/a","description":"snippet &amp; more"}]}}"#,
            ),
        ),
        (
            "/tavily",
            Route::ok(
                "application/json",
                r#"{"query":"q","results":[{"title":"T hit","url":"https://example.net/t","content":"tavily snippet","score":0.9}]}"#,
            ),
        ),
        ("/refuses", Route::status(401)),
    ]);
    let hits = search(
        &api(Backend::Searxng, site.url("/searx"), None),
        "rust borrow",
        8,
    )
    .await
    .unwrap();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].title, "The Book");
    assert_eq!(hits[0].snippet, "References and borrowing");
    let hits = search(
        &api(Backend::Brave, site.url("/brave"), Some("brave-key")),
        "q",
        5,
    )
    .await
    .unwrap();
    assert_eq!(
        (hits[0].title.as_str(), hits[0].snippet.as_str()),
        ("Brave hit", "snippet & more")
    );
    let hits = search(
        &api(Backend::Tavily, site.url("/tavily"), Some("tv-key")),
        "q",
        5,
    )
    .await
    .unwrap();
    assert_eq!(hits[0].url, "https://example.net/t");
    let requests = site.requests();
    let searx = &requests[0];
    assert!(
        searx
            .target
            .starts_with("/searx/search?q=rust+borrow&format=json"),
        "{}",
        searx.target
    );
    let brave = &requests[1];
    assert_eq!(
        brave
            .headers
            .get("x-subscription-token")
            .map(String::as_str),
        Some("brave-key")
    );
    assert!(brave.target.contains("count=5"), "{}", brave.target);
    let tavily = &requests[2];
    assert_eq!(tavily.method, "POST");
    assert_eq!(
        tavily.headers.get("authorization").map(String::as_str),
        Some("Bearer tv-key")
    );
    let body: serde_json::Value = serde_json::from_slice(&tavily.body).unwrap();
    assert_eq!(body["query"], "q");
    // A key never goes where it does not belong: SearXNG got none.
    assert!(
        !searx.headers.contains_key("authorization")
            && !searx.headers.contains_key("x-subscription-token")
    );

    let err = search(
        &api(Backend::Brave, site.url("/refuses"), Some("bad")),
        "q",
        5,
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("refused the key"), "{err}");
    let err = search(&api(Backend::Brave, site.url("/brave"), None), "q", 5)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("needs an API key"), "{err}");
}

#[tokio::test]
async fn a_search_api_that_redirects_is_not_followed_and_the_key_stays_home() {
    use crate::search::{Backend, search};
    let elsewhere = WebSite::new(vec![("/steal", Route::ok("application/json", "{}"))]);
    let api_site = WebSite::new(vec![("/brave", Route::redirect(&elsewhere.url("/steal")))]);
    let err = search(
        &api(Backend::Brave, api_site.url("/brave"), Some("KEY-CANARY")),
        "q",
        5,
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("redirect"), "{err}");
    assert!(
        elsewhere.requests().is_empty(),
        "the key went to another origin"
    );
}

#[tokio::test]
async fn a_rule_without_a_port_does_not_open_private_addresses() {
    let site = WebSite::new(vec![("/", Route::ok("text/plain", "inside"))]);
    // "always allow" of a public name stores it without a port: were the name pointed at
    // this machine, it still may not be reached.
    for named in ["127.0.0.1", "localhost"] {
        let err = get(&format!("http://{named}:{}/", site.port), &reach(&[named]))
            .await
            .unwrap_err();
        assert!(matches!(err, WebError::Private { .. }), "{named}: {err}");
        assert!(
            err.to_string().contains(&format!("{named}:{}", site.port)),
            "{err}"
        );
    }
    assert!(site.requests().is_empty());
}

//! The `skald-file` URI scheme: the viewer's files in the desktop app, checked by the same
//! path policy as `skald serve`'s file route and sent with the same types and
//! Content-Security-Policy (an HTML preview runs sandboxed, in an opaque origin).

use skald_service::Service;
use std::sync::Arc;
use tauri::UriSchemeResponder;
use tauri::http::{Request, Response, StatusCode, header};

pub fn serve(service: Arc<Service>, request: Request<Vec<u8>>, responder: UriSchemeResponder) {
    let query = request.uri().query().unwrap_or("").to_string();
    // The policy reads the store and the disk: off the async workers.
    tauri::async_runtime::spawn_blocking(move || responder.respond(answer(&service, &query)));
}

fn refuse(status: StatusCode, why: &str) -> Response<Vec<u8>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(why.as_bytes().to_vec())
        .unwrap_or_else(|_| Response::new(Vec::new()))
}

fn answer(service: &Service, query: &str) -> Response<Vec<u8>> {
    let raw = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("path="))
        .map(|p| percent_decode(p).ok_or(()));
    let raw = match raw {
        Some(Ok(p)) => Some(p),
        // A path that does not decode is no path at all.
        Some(Err(())) | None => None,
    };
    let route = match service.file_route(raw.as_deref()) {
        Ok(route) => route,
        Err(refusal) => {
            let status =
                StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            return refuse(status, &refusal.to_string());
        }
    };
    let body = match route.open().and_then(|mut f| {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut bytes).map(|_| bytes)
    }) {
        Ok(b) => b,
        Err(e) => {
            return refuse(
                StatusCode::NOT_FOUND,
                &format!("{}: {e}", route.path.display()),
            );
        }
    };
    let mut b = Response::builder()
        .header(header::CONTENT_TYPE, route.served.mime)
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::CACHE_CONTROL, "no-cache");
    if let Some(csp) = route.served.csp {
        b = b.header(header::CONTENT_SECURITY_POLICY, csp);
    }
    b.body(body)
        .unwrap_or_else(|_| refuse(StatusCode::INTERNAL_SERVER_ERROR, "bad response"))
}

/// `%XX` and `+` decoded; `None` for malformed escapes or text that is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                // Exactly two hex digits (`from_str_radix` alone would take `%+1`).
                let hex = s.get(i + 1..i + 3)?;
                if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What the viewer's `encodeURIComponent` does to a path, segment by segment.
    fn encode(s: &str) -> String {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    }

    proptest! {
        #![proptest_config(skald_testkit::property_config())]

        /// Any path the viewer encodes comes back exactly.
        #[test]
        fn encoded_paths_decode_to_themselves(path in any::<String>()) {
            prop_assert_eq!(percent_decode(&encode(&path)), Some(path));
        }

        /// No input makes it panic; what it accepts turned each `%XX` into one byte.
        #[test]
        fn any_input_decodes_or_is_refused(raw in r"[%+a-fA-F0-9/ \x{80}-\x{10FFFF}]{0,40}") {
            if let Some(decoded) = percent_decode(&raw) {
                prop_assert_eq!(decoded.len(), raw.len() - 2 * raw.matches('%').count());
            }
        }
    }

    #[test]
    fn escapes_need_two_hex_digits() {
        assert_eq!(percent_decode("%+1"), None);
        assert_eq!(percent_decode("%4"), None);
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("a%2Fb").as_deref(), Some("a/b"));
    }

    #[test]
    fn paths_are_decoded_as_the_viewer_encodes_them() {
        assert_eq!(
            percent_decode("%2Fhome%2Fme%2Fa%20b.md").as_deref(),
            Some("/home/me/a b.md")
        );
        assert_eq!(percent_decode("/x/%C3%A9.txt").as_deref(), Some("/x/é.txt"));
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%2"), None);
        assert_eq!(percent_decode("%FF"), None);
    }
}

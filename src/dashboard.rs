//! The dashboard as every shell serves it (`workbench serve` at its root, the native and the npm
//! proxy under [`crate::proxy::DASHBOARD_PATH`]): its files, embedded here so it works offline
//! and the same bytes go out everywhere; the headers they go with (a strict
//! Content-Security-Policy: scripts, styles and requests of its own origin only); and which host
//! names are served. The page reads only the query API beside it (`store::api`). Its files are in
//! `src/dashboard/`, inside the crate's package: the view modules there are the playground's too
//! (`bindings/playground/` imports them), and a static server of the repository serves the page
//! over a trace store folder picked in the browser (`folder.js`).

/// One file of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asset {
    pub content_type: &'static str,
    pub text: &'static str,
}

const JS: &str = "text/javascript; charset=utf-8";

/// The page's files by name: the dashboard's own, and the view modules it shares with the
/// playground (`folder.js` and its worker, for a page without a server, are not served here).
const ASSETS: &[(&str, Asset)] = &[
    ("index.html", Asset { content_type: "text/html; charset=utf-8", text: include_str!("dashboard/dashboard.html") }),
    ("dashboard.js", Asset { content_type: JS, text: include_str!("dashboard/dashboard.js") }),
    ("dashboard.css", Asset { content_type: "text/css; charset=utf-8", text: include_str!("dashboard/dashboard.css") }),
    ("dom.js", Asset { content_type: JS, text: include_str!("dashboard/dom.js") }),
    ("chart.js", Asset { content_type: JS, text: include_str!("dashboard/chart.js") }),
    ("views.js", Asset { content_type: JS, text: include_str!("dashboard/views.js") }),
];

/// Nothing but this origin's own scripts, styles and API; no frames, forms or plugins.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
    connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The file `name` (`/` is the page itself), if the page has one.
pub fn asset(name: &str) -> Option<Asset> {
    let name = if name.is_empty() || name == "/" { "index.html" } else { name.trim_start_matches('/') };
    ASSETS.iter().find(|(asset, _)| *asset == name).map(|&(_, asset)| asset)
}

/// The headers every file of the page goes out with, after its content type.
pub fn headers(asset: &Asset) -> [(&'static str, &'static str); 5] {
    [
        ("content-type", asset.content_type),
        ("content-security-policy", CSP),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("cache-control", "no-cache"),
    ]
}

/// Why a request to the dashboard or its API is refused, or `None` when it is served. Its `Host`
/// must name this machine (`127.0.0.1`, `localhost` or `[::1]`, with or without a port), so a
/// web page that rebinds its own host name to this address reads nothing; and an `Origin` it
/// carries (a browser sends one with every cross-site request and every WebSocket) must be this
/// same origin, so another site's page can neither read nor load the server.
pub fn refusal(host: &str, origin: Option<&str>) -> Option<String> {
    if !is_local_host(host) {
        return Some(format!("this server answers requests for 127.0.0.1 or localhost only, not for host `{host}`"));
    }
    foreign_origin(host, origin)
}

/// Why a request from another site's page is refused (its `Origin` is not `http://{host}`):
/// all [`refusal`] keeps of its rule for a server that listens beyond loopback in team mode,
/// where every request needs a member's token, which a page of another host name never has.
pub fn foreign_origin(host: &str, origin: Option<&str>) -> Option<String> {
    match origin {
        Some(origin) if !origin.eq_ignore_ascii_case(&format!("http://{host}")) => {
            Some(format!("this server answers its own pages only, not a request from `{origin}`"))
        }
        _ => None,
    }
}

fn is_local_host(host: &str) -> bool {
    let (name, port) = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((name, port)) => (name, port.strip_prefix(':').or(port.is_empty().then_some(""))),
            None => return false,
        },
        None => match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, Some("")),
        },
    };
    let port_ok = port.is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()));
    port_ok && matches!(name.to_ascii_lowercase().as_str(), "127.0.0.1" | "localhost" | "::1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_machine_by_name_and_its_own_pages_are_served() {
        for host in ["127.0.0.1:8000", "localhost:1", "LOCALHOST", "[::1]:9", "[::1]", "127.0.0.1"] {
            assert_eq!(refusal(host, None), None, "{host}");
        }
        for host in [
            "",
            "evil.example:8000",
            "127.0.0.1.evil.example",
            "localhost.evil:80",
            "10.0.0.1",
            "[::1]x",
            "[::1",
            "localhost:8x",
        ] {
            assert!(refusal(host, None).is_some(), "{host}");
        }
        assert_eq!(refusal("127.0.0.1:8787", Some("http://127.0.0.1:8787")), None);
        for origin in ["https://evil.example", "null", "http://localhost:8787", "http://127.0.0.1:9999"] {
            assert!(refusal("127.0.0.1:8787", Some(origin)).unwrap().contains(origin), "{origin}");
        }
    }

    #[test]
    fn the_page_and_its_modules_are_found_by_name() {
        assert_eq!(asset("/"), asset("index.html"));
        assert!(asset("dashboard.js").unwrap().text.contains("from './chart.js'"));
        assert_eq!(asset("../Cargo.toml"), None);
        assert_eq!(headers(&asset("dom.js").unwrap())[0], ("content-type", JS));
    }
}

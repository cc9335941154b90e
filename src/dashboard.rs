//! The dashboard as every shell serves it (`workbench serve` at its root, the native and the npm
//! proxy under [`crate::proxy::DASHBOARD_PATH`]): its files, embedded here so it works offline
//! and the same bytes go out everywhere; the headers they go with (a strict
//! Content-Security-Policy: scripts, styles and requests of its own origin only); and which host
//! names are served. The page reads only the query API beside it (`store::api`) and draws with
//! the playground's view modules.

/// One file of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asset {
    pub content_type: &'static str,
    pub text: &'static str,
}

const JS: &str = "text/javascript; charset=utf-8";

/// The page's files by name: the dashboard's own, and the view modules it shares with the playground.
const ASSETS: &[(&str, Asset)] = &[
    (
        "index.html",
        Asset { content_type: "text/html; charset=utf-8", text: include_str!("../bindings/dashboard/index.html") },
    ),
    ("dashboard.js", Asset { content_type: JS, text: include_str!("../bindings/dashboard/dashboard.js") }),
    (
        "dashboard.css",
        Asset { content_type: "text/css; charset=utf-8", text: include_str!("../bindings/dashboard/dashboard.css") },
    ),
    ("dom.js", Asset { content_type: JS, text: include_str!("../bindings/playground/dom.js") }),
    ("chart.js", Asset { content_type: JS, text: include_str!("../bindings/playground/chart.js") }),
    ("views.js", Asset { content_type: JS, text: include_str!("../bindings/playground/views.js") }),
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

/// Whether a request's `Host` names this machine (`127.0.0.1`, `localhost` or `[::1]`, with or
/// without a port). Anything else is refused, so a web page that rebinds its own host name to
/// this address reads nothing.
pub fn is_local_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    matches!(name.to_ascii_lowercase().as_str(), "127.0.0.1" | "localhost" | "::1")
}

/// The answer to a request for another host name.
pub fn foreign_host_message(host: &str) -> String {
    format!("this server answers requests for 127.0.0.1 or localhost only, not for host `{host}`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_machine_by_name_is_local() {
        for host in ["127.0.0.1:8000", "localhost:1", "LOCALHOST", "[::1]:9", "127.0.0.1"] {
            assert!(is_local_host(host), "{host}");
        }
        for host in ["", "evil.example:8000", "127.0.0.1.evil.example", "localhost.evil:80", "10.0.0.1"] {
            assert!(!is_local_host(host), "{host}");
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

//! The page: plain ES modules, CSS and HTML, embedded in the binary at build time.
//!
//! Invariant: the page needs nothing but these files (no CDN, no remote font, no build
//! step beyond cargo's), and only these names are served, each with its own type.

/// Every asset: its name under `/assets/` (`index.html` is `/`), its type, its bytes.
const ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "index.html",
        "text/html; charset=utf-8",
        include_bytes!("../../ui/index.html"),
    ),
    (
        "app.css",
        "text/css; charset=utf-8",
        include_bytes!("../../ui/app.css"),
    ),
    (
        "favicon.svg",
        "image/svg+xml",
        include_bytes!("../../ui/favicon.svg"),
    ),
    ("main.js", JS, include_bytes!("../../ui/main.js")),
    ("api.js", JS, include_bytes!("../../ui/api.js")),
    ("dom.js", JS, include_bytes!("../../ui/dom.js")),
    ("tree.js", JS, include_bytes!("../../ui/tree.js")),
    ("preview.js", JS, include_bytes!("../../ui/preview.js")),
    ("jsonview.js", JS, include_bytes!("../../ui/jsonview.js")),
    ("meta.js", JS, include_bytes!("../../ui/meta.js")),
    ("search.js", JS, include_bytes!("../../ui/search.js")),
    ("template.js", JS, include_bytes!("../../ui/template.js")),
    ("basket.js", JS, include_bytes!("../../ui/basket.js")),
];

const JS: &str = "text/javascript; charset=utf-8";

/// The asset called `name`, with its type.
pub(super) fn get(name: &str) -> Option<(&'static str, &'static [u8])> {
    ASSETS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, t, b)| (*t, *b))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_page_loads_only_embedded_modules_and_no_inline_script() {
        let html = std::str::from_utf8(super::get("index.html").unwrap().1).unwrap();
        assert!(html.contains(r#"<script type="module" src="/assets/main.js">"#));
        assert!(!html.contains("<script>"), "inline script");
        let handler = html.split(" on").skip(1).any(|rest| {
            let name: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
            !name.is_empty() && rest[name.len()..].starts_with('=')
        });
        assert!(!handler, "an inline event handler");
        for (name, _, bytes) in super::ASSETS {
            let text = String::from_utf8_lossy(bytes);
            // An SVG names its namespace by URL; it fetches nothing without an href.
            let remote: &[&str] = if name.ends_with(".svg") {
                &["href"]
            } else {
                &["http://", "https://", "//cdn", "eval(", "new Function"]
            };
            for remote in remote {
                assert!(!text.contains(remote), "{name} holds {remote}");
            }
            if name.ends_with(".js") {
                // Imports name embedded modules only.
                for line in text.lines().filter(|l| l.starts_with("import ")) {
                    let from = line.rsplit("from ").next().unwrap();
                    let module = from.trim_matches([' ', '\'', '"', ';']);
                    let module = module.strip_prefix("./").expect(line);
                    assert!(super::get(module).is_some(), "{name} imports {module}");
                }
            }
        }
    }
}

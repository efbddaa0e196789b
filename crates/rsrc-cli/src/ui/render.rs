//! How a read result is prepared for the page: which view each entry gets, Markdown
//! rendered and sanitised, CSV parsed into rows, the first bytes of a blob as hex.
//!
//! Invariants:
//! - The only HTML the page ever inserts is [`markdown`]'s output: rendered by
//!   pulldown-cmark, then sanitised by ammonia, with links kept only with `http`, `https`
//!   or a relative reference (which the page resolves against the resource and opens in
//!   itself), images only from `data:image/…` URLs, no script, style, event handler, form
//!   or frame of any kind.
//! - Everything else reaches the page as JSON strings, which it only ever sets as text.
//! - The work per entry is bounded: Markdown is rendered up to [`MARKDOWN_MAX`] bytes,
//!   CSV parsed up to [`CSV_ROWS`] rows, hex shown for [`HEX_BYTES`] bytes.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::Serialize;

/// Largest Markdown text rendered (larger ones are shown as text).
pub(super) const MARKDOWN_MAX: usize = 2 * 1024 * 1024;
/// Most CSV rows sent as a table.
pub(super) const CSV_ROWS: usize = 2000;
/// Largest CSV text parsed as a table.
pub(super) const CSV_MAX: usize = 4 * 1024 * 1024;
/// Bytes of a blob shown as hex.
pub(super) const HEX_BYTES: usize = 512;

/// How the page shows an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum View {
    /// Plain text.
    Text,
    /// Rendered Markdown.
    Markdown,
    /// A collapsible JSON tree.
    Json,
    /// A table.
    Csv,
    /// An image, as an `<img>` from a `blob:` URL.
    Image,
    /// A PDF: its text alternative if there is one, else its size and bytes.
    Pdf,
    /// Size, hex of the first bytes, download.
    Binary,
}

fn essence(mime: Option<&str>) -> String {
    mime.unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

fn extension(uri: &str) -> String {
    let path = uri.split(['?', '#']).next().unwrap_or(uri);
    let last = path.rsplit('/').next().unwrap_or(path);
    match last.rsplit_once('.') {
        Some((_, ext)) => ext.to_ascii_lowercase(),
        None => String::new(),
    }
}

/// The images the page shows inline (as `<img>`, where nothing in them can run).
const IMAGES: [&str; 8] = [
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/svg+xml",
    "image/avif",
    "image/bmp",
    "image/x-icon",
];

/// The view for an entry with this MIME type and URI, text or not.
pub(super) fn view(mime: Option<&str>, uri: &str, is_text: bool) -> View {
    let mime = essence(mime);
    let ext = extension(uri);
    if is_text {
        if mime == "text/markdown" || mime == "text/x-markdown" || ext == "md" || ext == "markdown"
        {
            View::Markdown
        } else if mime == "application/json" || mime.ends_with("+json") || ext == "json" {
            View::Json
        } else if mime == "text/csv" || ext == "csv" {
            View::Csv
        } else {
            View::Text
        }
    } else if IMAGES.contains(&mime.as_str()) {
        View::Image
    } else if mime == "application/pdf" || ext == "pdf" {
        View::Pdf
    } else {
        View::Binary
    }
}

fn sanitizer() -> ammonia::Builder<'static> {
    let mut b = ammonia::Builder::default();
    b.url_schemes(["http", "https", "data"].into_iter().collect())
        .link_rel(Some("noopener noreferrer nofollow"))
        .strip_comments(true)
        .attribute_filter(|element, attribute, value| {
            let v = value.trim_start().to_ascii_lowercase();
            match (element, attribute) {
                // Images only from data: URLs (anything else would fetch from elsewhere).
                ("img", "src") => v.starts_with("data:image/").then_some(Cow::Borrowed(value)),
                // data: is for images only.
                (_, "href" | "cite" | "longdesc") if v.starts_with("data:") => None,
                _ => Some(Cow::Borrowed(value)),
            }
        });
    b
}

/// Markdown rendered to HTML and sanitised (see the module's invariants).
pub(super) fn markdown(text: &str) -> String {
    use pulldown_cmark::{Options, Parser, html};
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES;
    let mut rendered = String::with_capacity(text.len() + text.len() / 4);
    html::push_html(&mut rendered, Parser::new_ext(text, options));
    sanitizer().clean(&rendered).to_string()
}

/// A CSV text's first rows, and whether there were more (or a row could not be read).
#[derive(Debug, Serialize)]
pub(super) struct Table {
    pub(super) rows: Vec<Vec<String>>,
    pub(super) truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) error: Option<String>,
}

/// Parses up to [`CSV_ROWS`] rows (the first is shown as the header).
pub(super) fn csv(text: &str) -> Table {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut table = Table {
        rows: Vec::new(),
        truncated: false,
        error: None,
    };
    for record in reader.records() {
        if table.rows.len() == CSV_ROWS {
            table.truncated = true;
            break;
        }
        match record {
            Ok(r) => table.rows.push(r.iter().map(str::to_owned).collect()),
            Err(e) => {
                table.error = Some(e.to_string());
                break;
            }
        }
    }
    table
}

/// The first [`HEX_BYTES`] bytes as hex lines: offset, 16 bytes, printable ASCII.
pub(super) fn hex(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (i, line) in bytes[..bytes.len().min(HEX_BYTES)].chunks(16).enumerate() {
        let _ = write!(out, "{:08x} ", i * 16);
        for j in 0..16 {
            match line.get(j) {
                Some(b) => {
                    let _ = write!(out, " {b:02x}");
                }
                None => out.push_str("   "),
            }
        }
        out.push_str("  |");
        out.extend(line.iter().map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                char::from(b)
            } else {
                '.'
            }
        }));
        out.push_str("|\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_rendered_and_nothing_in_it_can_run() {
        let html = markdown(
            "# Title\n\n<script>window.__pwned=1</script>\n\n\
             <img src=x onerror=\"window.__pwned=1\">\n\n\
             [js](javascript:window.__pwned=1) [ok](https://example.com/) [rel](guide/a.md)\n\n\
             <a href=\"data:text/html,<script>1</script>\">d</a>\n\n\
             <iframe src=\"https://example.com\"></iframe><style>*{}</style>\n\n\
             <svg><script>1</script></svg><form action=x><input></form>\n\n\
             ![i](data:image/png;base64,iVBORw0KGgo=) ![r](https://example.com/t.png)",
        );
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        for bad in [
            "<script",
            "onerror",
            "javascript:",
            "data:text",
            "<iframe",
            "<style",
            "<svg",
            "<form",
            "<input",
            "example.com/t.png",
        ] {
            assert!(!html.contains(bad), "{bad} in {html}");
        }
        assert!(html.contains("href=\"https://example.com/\""), "{html}");
        assert!(html.contains("href=\"guide/a.md\""), "{html}");
        assert!(html.contains("src=\"data:image/png;base64,"), "{html}");
        assert!(
            html.contains("rel=\"noopener noreferrer nofollow\""),
            "{html}"
        );
    }

    #[test]
    fn views_follow_the_mime_type_then_the_extension() {
        assert_eq!(view(Some("text/markdown"), "x:a", true), View::Markdown);
        assert_eq!(view(None, "file:///a/b.MD", true), View::Markdown);
        assert_eq!(
            view(Some("application/ld+json; charset=utf-8"), "x:a", true),
            View::Json
        );
        assert_eq!(view(Some("text/csv"), "x:a", true), View::Csv);
        assert_eq!(view(Some("text/plain"), "x:a.txt", true), View::Text);
        assert_eq!(view(Some("image/svg+xml"), "x:a", false), View::Image);
        assert_eq!(view(Some("application/pdf"), "x:a", false), View::Pdf);
        assert_eq!(view(Some("image/tiff"), "x:a", false), View::Binary);
        assert_eq!(view(Some("text/html"), "x:a.html", true), View::Text);
    }

    #[test]
    fn csv_rows_are_capped_and_quoted_fields_kept_whole() {
        let t = csv("a,b\n\"x, y\",\"<b>\"\n");
        assert_eq!(t.rows, [vec!["a", "b"], vec!["x, y", "<b>"]]);
        let many: String = (0..CSV_ROWS + 5).map(|i| format!("{i}\n")).collect();
        let t = csv(&many);
        assert_eq!(t.rows.len(), CSV_ROWS);
        assert!(t.truncated);
    }

    #[test]
    fn hex_lines_show_offsets_bytes_and_ascii() {
        let h = hex(b"\x89PNG\r\n\x1a\n0123456789");
        assert_eq!(
            h.lines().next(),
            Some("00000000  89 50 4e 47 0d 0a 1a 0a 30 31 32 33 34 35 36 37  |.PNG....01234567|")
        );
        assert!(h.lines().nth(1).unwrap().ends_with("|89|"));
        assert_eq!(hex(&[0; 4096]).lines().count(), HEX_BYTES / 16);
    }
}

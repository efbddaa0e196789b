//! The tools bridge's settings ([`ToolsConfig`]), the methods it serves and the
//! capability it declares: a leaf the builder, the inside state and the bridge (`tools/`)
//! all read. Invariant: an excluded URI is compared in its canonical form,
//! so no spelling of it is offered.

/// The methods the bridge serves.
pub(crate) const METHODS: [&str; 2] = ["tools/list", "tools/call"];

/// The capability the bridge declares.
pub(crate) const CAPABILITY: &str = "tools";

/// Settings of the tools bridge ([`ServerBuilder::tools`](crate::ServerBuilder::tools)).
#[derive(Debug, Clone)]
pub struct ToolsConfig {
    /// Most characters of text one `read_resource` call returns (default 20,000).
    pub max_text: usize,
    /// Largest binary content embedded in a result, in bytes (default 1 MiB); larger
    /// content is described and linked instead.
    pub max_blob: usize,
    /// Most resources or templates one call returns (default 100).
    pub page: usize,
    /// Most resources a filtered listing or a search examines per call (default 10,000);
    /// the result then says where to continue.
    pub scan: usize,
    /// URIs kept out of the tools (default: none): each is a resource's URI, and what it
    /// holds is every URI below it (after a `/`, or right after a URI that ends with
    /// `/`), however it is spelled: URIs are compared in the canonical form providers
    /// resolve them to (percent-encodings decoded, scheme and authority in lowercase, dot
    /// segments removed). The tools neither list, find nor read them, and answer as for
    /// a resource that does not exist; the resource methods still serve them.
    pub excluded: Vec<String>,
}

impl ToolsConfig {
    /// Whether the tools offer `uri`: not if any spelling of it lies in an excluded URI.
    /// Both are compared in their canonical form ([`crate::uri::canonical`]: what every
    /// provider resolves them to), so no encoding, case or dot segment reaches an
    /// excluded resource; a URI is also held to be under an excluded one when it is
    /// only with its dot segments taken literally (as providers that refuse them do not
    /// need, but one taking `..` as a name would).
    pub(super) fn offers(&self, uri: &str) -> bool {
        if self.excluded.is_empty() {
            return true;
        }
        let resolved = crate::uri::canonical(uri);
        let literal = crate::uri::decoded(uri);
        !self.excluded.iter().any(|base| {
            let base = crate::uri::canonical(base);
            below(&resolved, &base) || below(&literal, &base)
        })
    }
}

/// Whether `uri` is `base` or lies below it: after a `/`, `?` or `#`, or anywhere after
/// a base that ends with `/` (which also holds its own URI without the slash).
fn below(uri: &[u8], base: &[u8]) -> bool {
    match uri.strip_prefix(base) {
        Some(rest) => {
            rest.is_empty()
                || base.ends_with(b"/")
                || matches!(rest.first(), Some(b'/' | b'?' | b'#'))
        }
        None => base.strip_suffix(b"/").is_some_and(|b| b == uri),
    }
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            max_text: 20_000,
            max_blob: 1024 * 1024,
            page: 100,
            scan: 10_000,
            excluded: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ToolsConfig;

    #[test]
    fn an_excluded_uri_hides_what_is_below_it_and_nothing_else() {
        let config = ToolsConfig {
            excluded: vec!["db://shop".into(), "file:///".into()],
            ..ToolsConfig::default()
        };
        assert!(!config.offers("db://shop"));
        assert!(!config.offers("db://shop/items/1"));
        assert!(config.offers("db://shopping/items/1"));
        assert!(!config.offers("file:///notes/a.md"));
        assert!(config.offers("git:///main/README.md"));
    }

    #[test]
    fn no_spelling_of_an_excluded_uri_is_offered() {
        let config = ToolsConfig {
            excluded: vec![
                "file:///secret".into(),
                "db://shop".into(),
                "skill://team/".into(),
            ],
            ..ToolsConfig::default()
        };
        for hidden in [
            "file:///%73ecret/key.txt",
            "file:///%73%65%63%72%65%74",
            "FILE:///secret/key.txt",
            "file:///open/../secret/key.txt",
            "file:///open/%2e%2e/secret/key.txt",
            "file:///./secret/key.txt",
            "file:///secret%2Fkey.txt",
            "file:///secret?x",
            "file:///secret/..",
            "file:///secret/../open/a.txt",
            "db://%73hop/items/1",
            "DB://SHOP/items/1",
            "db://Sh%4Fp",
            "skill://%74eam/s/SKILL.md",
            "skill://team",
        ] {
            assert!(!config.offers(hidden), "{hidden}");
        }
        for offered in [
            "file:///secrets/key.txt",
            "file:///open/secret",
            "file:///open/../open/a.txt",
            "db://shopping/items/1",
            "skill://teams/s/SKILL.md",
        ] {
            assert!(config.offers(offered), "{offered}");
        }
    }
}

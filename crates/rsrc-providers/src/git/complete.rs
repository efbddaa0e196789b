//! Completing the template's variables: `{ref}` among the served refs' short names,
//! `{+path}` among the entries of the typed directory at the ref of the context.
//!
//! Invariant: completion reads at most the refs the provider serves and one tree (at most
//! 10,000 of its entries); a value that names nothing completes to nothing.

use gix::bstr::ByteSlice;
use rsrc::ResourceError;
use rsrc::protocol::Completion;

use super::names;
use super::repo::{self, Node, Refs};
use super::state::{ServedRepo, gix_error};
use crate::kit::blocking::{Signal, cancelled};

impl ServedRepo {
    /// Completes `argument` of the template: `ref` among the served refs' short names,
    /// `path` at the ref of the context (`HEAD` without one).
    pub(super) fn complete(
        &self,
        repo: &gix::Repository,
        argument: &str,
        value: &str,
        context_ref: Option<&str>,
        stop: &dyn Signal,
    ) -> Result<Completion, ResourceError> {
        match argument {
            "ref" => {
                let refs = Refs::read(repo, self.config.max_refs, stop)
                    .map_err(|e| gix_error(&self.prefix, &e))?;
                let mut values: Vec<String> = refs
                    .map
                    .keys()
                    .filter_map(|full| refs.short_name(full.as_bstr(), self.hash))
                    .filter_map(|short| String::from_utf8(short.into()).ok())
                    .filter(|short| short.starts_with(value))
                    .collect();
                values.sort();
                Ok(Completion::from_matches(values))
            }
            "path" => self.complete_path(repo, value, context_ref.unwrap_or("HEAD"), stop),
            other => Err(ResourceError::invalid(
                "",
                format!("the template {} has no variable {other:?}", self.template()),
            )),
        }
    }

    /// Completes a path: the entries of the typed directory at the ref whose names start
    /// with the typed rest; directories end with `/`. A value that names nothing
    /// completes to nothing; the error is a stop (`stop` was set).
    fn complete_path(
        &self,
        repo: &gix::Repository,
        value: &str,
        ref_name: &str,
        stop: &dyn Signal,
    ) -> Result<Completion, ResourceError> {
        let Some(name) = names::raw_ref(ref_name, self.hash) else {
            return Ok(Completion::empty());
        };
        let resolved = repo::resolve(repo, &name, &self.reachable, self.config.max_refs, stop);
        let at = match resolved {
            Ok(Some(at)) => at,
            Err(e) if repo::is_stopped(&e) => return Err(cancelled(&self.prefix)),
            _ => return Ok(Completion::empty()),
        };
        let (dir_part, prefix) = value.rsplit_once('/').unwrap_or(("", value));
        let dir = if dir_part.is_empty() {
            Vec::new()
        } else {
            match names::decode_path(dir_part) {
                Ok(d) => d,
                Err(_) => return Ok(Completion::empty()),
            }
        };
        let Ok(Some(Node::Tree(tree))) = repo::walk(repo, at.commit.tree, &dir) else {
            return Ok(Completion::empty());
        };
        let entries = match repo::entries(repo, tree, stop) {
            Ok(entries) => entries,
            Err(e) if repo::is_stopped(&e) => return Err(cancelled(&self.prefix)),
            Err(_) => return Ok(Completion::empty()),
        };
        let values = entries
            .iter()
            .take(10_000)
            .filter(|e| e.name.starts_with(prefix.as_bytes()))
            .filter_map(|e| {
                let n = e.name.to_str().ok()?;
                let mut v = if dir_part.is_empty() {
                    n.to_owned()
                } else {
                    format!("{dir_part}/{n}")
                };
                if matches!(e.node, Node::Tree(_)) {
                    v.push('/');
                }
                Some(v)
            })
            .collect();
        Ok(Completion::from_matches(values))
    }
}

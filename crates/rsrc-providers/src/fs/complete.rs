//! Completing a path in the served directories: the entries of the typed directory
//! whose names start with the typed rest, directories ending with `/`.
//!
//! Invariant: completion sees exactly what listing sees (the same visibility rules), and
//! considers at most 10,000 entries of one directory; it runs on a blocking thread (the
//! provider's `complete` calls it through
//! [`off_runtime`](super::state::off_runtime)) and gives up when its request goes away.

use std::os::unix::ffi::OsStrExt;

use rsrc::protocol::Completion;

use rsrc::ResourceError;

use super::entry::Kind;
use super::scan;
use super::state::{PREFIX, ServedRoots};
use crate::kit::blocking::{Signal, cancelled, is_stopped};
use crate::kit::rel_path::RelPath;

impl ServedRoots {
    /// The root whose template is `template`, if any.
    pub(super) fn template_root(&self, template: &str) -> Option<usize> {
        (0..self.roots.len()).find(|&i| self.template_for(i) == template)
    }

    /// The template of a root's files: `file:///{+path}`, or `file:///NAME/{+path}` when
    /// several roots are served.
    pub(super) fn template_for(&self, root: usize) -> String {
        if self.multi() {
            format!("{}/{{+path}}", self.uri(root, &RelPath::root()))
        } else {
            format!("{PREFIX}{{+path}}")
        }
    }

    /// Completes a path: the entries of the typed directory whose names start with the
    /// typed rest; directories end with `/`. A value that names no directory completes
    /// to nothing; the error is a stop (`stop` was set).
    pub(super) fn complete_path(
        &self,
        root: usize,
        value: &str,
        stop: &dyn Signal,
    ) -> Result<Completion, ResourceError> {
        let (dir_part, prefix) = value.rsplit_once('/').unwrap_or(("", value));
        let Ok(dir) = RelPath::decode(dir_part) else {
            return Ok(Completion::empty());
        };
        let Ok(md) = self.stat("", root, &dir) else {
            return Ok(Completion::empty());
        };
        if !md.is_dir {
            return Ok(Completion::empty());
        }
        // Bounded: at most 10,000 entries are considered.
        let entries = match scan::next_entries(&self.scope(root, stop), &dir, None, 10_000) {
            Ok(entries) => entries,
            Err(e) if is_stopped(&e) => return Err(cancelled("")),
            Err(_) => return Ok(Completion::empty()),
        };
        let values = entries
            .into_iter()
            .filter(|e| e.name.as_bytes().starts_with(prefix.as_bytes()))
            .filter_map(|e| {
                let name = e.name.to_str()?;
                let mut v = if dir_part.is_empty() {
                    name.to_owned()
                } else {
                    format!("{dir_part}/{name}")
                };
                if e.kind == Kind::Dir {
                    v.push('/');
                }
                Some(v)
            })
            .collect();
        Ok(Completion::from_matches(values))
    }
}

//! What the skills provider serves: the skills directories, the settings, and the index
//! of the last scan. The provider (`provider.rs`), the extension's methods
//! (`extension.rs`) and the watcher (`watch.rs`) take it.
//!
//! Invariant: the index is one immutable snapshot, swapped whole: whoever took it sees
//! one scan, whatever scans follow.

use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use super::config::{SkillsConfig, SkillsError};
use super::index::{Index, scan};
use super::manifest;
use super::roots::Root;

/// What the provider serves: the skills directories, the settings, and the index of the
/// last scan (swapped whole by each scan). Shared with the thread that scans.
pub(super) struct ServedSkills {
    pub(super) roots: Vec<Root>,
    pub(super) config: SkillsConfig,
    index: RwLock<Arc<Index>>,
}

impl ServedSkills {
    /// Opens `dirs` (`(name, path)` pairs; several need a name each) and scans them once.
    pub(super) fn serve(
        dirs: Vec<(Option<String>, PathBuf)>,
        config: SkillsConfig,
    ) -> Result<Arc<ServedSkills>, SkillsError> {
        if dirs.len() > 1 && dirs.iter().any(|(n, _)| n.is_none()) {
            return Err(SkillsError::Unnamed);
        }
        let mut roots: Vec<Root> = Vec::with_capacity(dirs.len());
        for (name, path) in dirs {
            if let Some(n) = &name
                && (manifest::check_name(n).is_err()
                    || roots.iter().any(|r| r.name.as_deref() == Some(n)))
            {
                return Err(SkillsError::BadName(n.clone()));
            }
            let dir = Dir::open_ambient_dir(&path, ambient_authority())
                .map_err(|e| SkillsError::Open(path.clone(), e))?;
            roots.push(Root { name, path, dir });
        }
        let first = scan(&roots, &Index::default());
        Ok(Arc::new(ServedSkills {
            roots,
            config,
            index: RwLock::new(Arc::new(first)),
        }))
    }

    /// The index of the last scan.
    pub(super) fn index(&self) -> Arc<Index> {
        Arc::clone(&self.index.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Scans the directories again, keeping the digests of files unchanged since the
    /// last scan, and makes the new index the served one. Returns the index it replaced
    /// and the new one.
    pub(super) fn rescan(&self) -> (Arc<Index>, Arc<Index>) {
        let old = self.index();
        let new = Arc::new(scan(&self.roots, &old));
        *self.index.write().unwrap_or_else(PoisonError::into_inner) = Arc::clone(&new);
        (old, new)
    }
}

//! What a listing knows about one entry of a directory: its kind, its metadata, and its
//! encoded listing entry. Shared by the directory scans (`scan.rs`), the tree walks
//! (`walk.rs`) and the listing cache (`cache.rs`), which all hold entries.
//!
//! Invariant: an entry's metadata is its target's for a symlink (one that stays inside
//! the root and leads to a regular file); an entry is never a special file.

use std::ffi::OsStr;
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use cap_std::fs::Metadata;
use rsrc::ListEntry;

/// What an entry is, after following a symlink that stays inside the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
}

/// What a listing needs to know about a file or directory.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Info {
    pub(crate) is_dir: bool,
    pub(crate) len: u64,
    pub(crate) modified: Option<SystemTime>,
}

impl From<&Metadata> for Info {
    fn from(md: &Metadata) -> Self {
        Info {
            is_dir: md.is_dir(),
            len: md.len(),
            modified: md.modified().ok().map(cap_std::time::SystemTime::into_std),
        }
    }
}

impl Info {
    #[cfg(target_os = "linux")]
    pub(crate) fn from_statx(st: &rustix::fs::Statx) -> Self {
        use std::time::{Duration, UNIX_EPOCH};
        let t = st.stx_mtime;
        let modified = u64::try_from(t.tv_sec)
            .ok()
            .map(|secs| UNIX_EPOCH + Duration::new(secs, t.tv_nsec));
        Info {
            is_dir: rustix::fs::FileType::from_raw_mode(st.stx_mode.into())
                == rustix::fs::FileType::Directory,
            len: st.stx_size,
            modified,
        }
    }
}

/// One exposed entry of a directory, with its metadata (of the link's target for a
/// symlink).
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) name: Arc<OsStr>,
    pub(crate) kind: Kind,
    pub(crate) info: Info,
    /// The entry as listed, encoded on first use; shared by the clones a cached
    /// directory hands out, so a cached entry is encoded once.
    pub(crate) listed: Arc<OnceLock<ListEntry>>,
}

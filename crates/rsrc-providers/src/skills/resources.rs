//! How an indexed file or directory shows as a resource: a skill's `SKILL.md` with the
//! skill's name and description, any other file with its size and the MIME type its
//! name gives, a directory as a collection. Invariant: built from the index alone, so a
//! listing, a metadata request and a read of one snapshot describe the same resource.

use rsrc::protocol::{DIRECTORY_MIME_TYPE, Resource};

use super::index::{FileInfo, Index};
use crate::kit::content::mime_from_name;

pub(super) fn file_resource(uri: &str, f: &FileInfo) -> Resource {
    let mut r = Resource::new(uri, f.name.clone())
        .with_size(f.size)
        .document();
    match &f.skill {
        Some((name, description)) => {
            r.name = name.clone();
            r.description = Some(description.clone());
            r.mime_type = Some("text/markdown".into());
        }
        None => r.mime_type = mime_from_name(f.name.as_bytes()),
    }
    r
}

pub(super) fn dir_resource(uri: &str) -> Resource {
    let name = uri.rsplit('/').next().unwrap_or(uri).to_owned();
    Resource::new(uri, name)
        .with_mime_type(DIRECTORY_MIME_TYPE)
        .collection()
}

pub(super) fn resource(index: &Index, uri: &str) -> Option<Resource> {
    if let Some(f) = index.files.get(uri) {
        return Some(file_resource(uri, f));
    }
    index.dirs.contains_key(uri).then(|| dir_resource(uri))
}

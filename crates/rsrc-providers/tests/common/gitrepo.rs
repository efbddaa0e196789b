//! Real git repositories for the git provider's tests, written with gix itself (no git
//! command): blobs, trees, commits with fixed times, branches, lightweight and annotated
//! tags. Each fixture lives in a temporary directory with a secret file *next to* the
//! repository, which no URI may ever reach.
#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::objs::tree::EntryKind;
use gix::refs::transaction::PreviousValue;

/// What the secret file next to every fixture repository holds.
pub const SECRET: &str = "TOP-SECRET-NEXT-TO-THE-REPOSITORY";

/// One entry of a commit's tree.
pub enum Item<'a> {
    /// A regular file.
    File(&'a str, &'a [u8]),
    /// An executable file.
    Exe(&'a str, &'a [u8]),
    /// A symbolic link to the given target.
    Link(&'a str, &'a str),
    /// A submodule at the given commit.
    Submodule(&'a str, ObjectId),
}

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
    pub repo: gix::Repository,
    time: std::cell::Cell<i64>,
}

/// A fixed, known commit time (2024-01-02T03:04:05Z), advanced one minute per commit.
pub const FIRST_COMMIT_TIME: i64 = 1_704_164_645;

fn open_options() -> gix::open::Options {
    gix::open::Options::isolated().config_overrides([
        "user.name=rsrc test",
        "user.email=test@rsrc.invalid",
        "committer.name=rsrc test",
        "committer.email=test@rsrc.invalid",
        "init.defaultBranch=main",
    ])
}

impl Fixture {
    /// An empty repository with a work tree at `<tmp>/repo`, and `<tmp>/secret.txt`.
    pub fn new() -> Fixture {
        Fixture::create(gix::create::Kind::WithWorktree, "repo")
    }

    /// An empty bare repository at `<tmp>/repo.git`.
    pub fn bare() -> Fixture {
        Fixture::create(gix::create::Kind::Bare, "repo.git")
    }

    fn create(kind: gix::create::Kind, name: &str) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(dir.path().join("secret.txt"), SECRET).unwrap();
        let repo =
            gix::ThreadSafeRepository::init_opts(&path, kind, Default::default(), open_options())
                .unwrap()
                .to_thread_local();
        Fixture {
            dir,
            path,
            repo,
            time: std::cell::Cell::new(FIRST_COMMIT_TIME),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes a tree holding `items`.
    pub fn tree(&self, items: &[Item<'_>]) -> ObjectId {
        let empty = ObjectId::empty_tree(self.repo.object_hash());
        let mut editor = self.repo.edit_tree(empty).unwrap();
        for item in items {
            let (path, kind, id) = match *item {
                Item::File(p, data) => (p, EntryKind::Blob, self.blob(data)),
                Item::Exe(p, data) => (p, EntryKind::BlobExecutable, self.blob(data)),
                Item::Link(p, target) => (p, EntryKind::Link, self.blob(target.as_bytes())),
                Item::Submodule(p, id) => (p, EntryKind::Commit, id),
            };
            editor.upsert(path, kind, id).unwrap();
        }
        editor.write().unwrap().detach()
    }

    pub fn blob(&self, data: &[u8]) -> ObjectId {
        self.repo.write_blob(data).unwrap().detach()
    }

    /// Commits `items` as the whole tree on `refs/heads/{branch}` (created, or moved with
    /// its tip as the parent).
    pub fn commit(&self, branch: &str, message: &str, items: &[Item<'_>]) -> ObjectId {
        let tree = self.tree(items);
        let full = format!("refs/heads/{branch}");
        let parent = self
            .repo
            .try_find_reference(full.as_str())
            .unwrap()
            .map(|mut r| r.peel_to_id().unwrap().detach());
        let seconds = self.time.get();
        self.time.set(seconds + 60);
        let sig = gix::actor::Signature {
            name: "rsrc test".into(),
            email: "test@rsrc.invalid".into(),
            time: gix::date::Time { seconds, offset: 0 },
        };
        let mut buf = gix::date::parse::TimeBuf::default();
        let sig = sig.to_ref(&mut buf);
        self.repo
            .commit_as(sig, sig, full.as_str(), message, tree, parent)
            .unwrap()
            .detach()
    }

    /// Points `full` (e.g. `refs/heads/x`, `refs/tags/v1`) at `target`, creating it or
    /// moving it.
    pub fn set_ref(&self, full: &str, target: ObjectId) {
        self.repo
            .reference(full, target, PreviousValue::Any, "test")
            .unwrap();
    }

    /// Deletes the reference `full`.
    pub fn delete_ref(&self, full: &str) {
        self.repo.find_reference(full).unwrap().delete().unwrap();
    }

    /// An annotated tag `name` pointing at `target`.
    pub fn annotated_tag(&self, name: &str, target: ObjectId) {
        let sig = gix::actor::Signature {
            name: "rsrc test".into(),
            email: "test@rsrc.invalid".into(),
            time: gix::date::Time {
                seconds: FIRST_COMMIT_TIME,
                offset: 0,
            },
        };
        let mut buf = gix::date::parse::TimeBuf::default();
        self.repo
            .tag(
                name,
                target,
                gix::objs::Kind::Commit,
                Some(sig.to_ref(&mut buf)),
                "a release",
                PreviousValue::Any,
            )
            .unwrap();
    }
}

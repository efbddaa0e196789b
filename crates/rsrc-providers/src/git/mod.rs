//! git repositories as resources. Being written.

//! `rsrc serve`'s configuration: the TOML file given with `--config`, the command line's
//! flags over it, and the effective result that `--print-config` prints and the server is
//! built from.
//!
//! Invariants:
//! - Defaults live in one place, the command line's definition ([`ServeArgs`]): a key
//!   left out of the file and a flag left off the command line mean the same value.
//! - A flag given on the command line wins over the file, for the server and for every
//!   source; sources named on the command line are served after the file's.
//! - What `--print-config` prints reads back to the same configuration, except that a
//!   password in a connection string is masked.
//! - A file that cannot be used is an error naming the file, the line and the key, and
//!   nothing is served.
//!
//! This file is a facade. `shape.rs` holds the configuration's shape (the top level and
//! its sections), `load.rs` reading the file and applying the flags over it, and
//! `effective.rs` every source's settings resolved and the result printed as TOML.
//! Beneath them, in `serve/`: `values.rs` the values written in both the file and the
//! flags (sizes, durations, addresses), `sources.rs` a source and its `[[sources]]`
//! table, `args.rs` the flags. (`rsrc config`, which writes a host's configuration for
//! launching `rsrc serve`, is another thing: `host_config.rs`.)
//!
//! [`ServeArgs`]: crate::serve::ServeArgs

mod effective;
mod load;
mod shape;

pub(crate) use shape::{Config, HttpSection};

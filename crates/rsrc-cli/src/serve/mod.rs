//! `rsrc serve`: build the server from the sources on the command line and serve it.
//!
//! Invariant: unless told to use more threads, the whole server runs on one thread (a
//! current-thread runtime), so a request is decoded, served and encoded without a thread
//! hop.
//!
//! This file is a facade. `run.rs` runs the server (the runtime, stdio, the shutdown
//! sequence); `args.rs` holds the flags, `config/` the configuration (the `--config`
//! file, the flags over it, the effective result), `values.rs` the values both write,
//! `sources.rs` a source (its table, and the argument that names it), `build.rs` builds
//! the server from the configuration, `secrets.rs` reads secret files and masks passwords,
//! `http.rs` serves it over Streamable HTTP, `admin.rs` serves metrics, health and
//! readiness, and `drain.rs` is the first step of shutdown. Over stdio the drain applies
//! only with an admin listener (without one, nothing could see it).

mod admin;
mod args;
mod build;
mod config;
mod drain;
mod http;
mod run;
mod secrets;
mod sources;
mod values;

pub(crate) use args::ServeArgs;
pub(crate) use build::CONVERT_WORKER;
pub(crate) use run::run;
pub(crate) use secrets::redact;
pub(crate) use sources::{Location, absolute_source, parse_source};

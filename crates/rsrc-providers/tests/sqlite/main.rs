//! The SQLite provider on real database files, through the engine, in raw JSON (every
//! server message schema-validated): the catalog as collections, rows as JSON and CSV,
//! schema documents, keys of every kind (integer, rowid, composite, text, positions of
//! view rows), a 100,000-row listing page by page, completion and change notifications.
//! Safety and limits are in `sqlite_safety.rs`.
#![cfg(feature = "sqlite")]

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/sqlite.rs"]
mod db;

use std::time::Duration;

use base64::Engine as _;
use rsrc::protocol::ProtocolVersion;
use rsrc_providers::db::sqlite::{SqliteConfig, SqliteProvider, SqliteSource};
use serde_json::{Value, json};

use common::{is_not_found, list_changes, read, updates, walk};
use db::{contents, create_db, peer_for, serve, serve_with, server_for, shop, text_json, writer};

mod listing;
mod reading;
mod serving;

//! A database-backed set of resources with a collection, written with `#[resources]`:
//! books read from SQLite (JSON, with CSV as a format alternative), each author a
//! collection of their books, books listed and author names completed. See
//! `docs/writing-resources.md`.
//!
//! ```sh
//! cargo run -p rsrc --example bookshop        # stdio
//! ```
//!
//! The handlers are plain `fn`s: SQLite here is an in-memory database answering in
//! microseconds. A slow database belongs on a blocking thread (`spawn_blocking`) behind an
//! `async fn`.

use std::sync::{Mutex, PoisonError};

use rsrc::declare::{Child, Json, ListItem, Typed};
use rsrc::protocol::Resource;
use rsrc::{ResourceError, resources};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

/// The resources, over a SQLite connection.
pub struct Bookshop {
    db: Mutex<Connection>,
}

/// One row of `books`.
#[derive(Serialize)]
pub struct Book {
    id: i64,
    title: String,
    author: String,
    year: i64,
}

/// A book as JSON, and as CSV: two formats of one resource.
type Formats = (Json<Book>, Typed<String>);

/// A database failure: logged by the server, answered as an internal error.
pub struct DbError(rusqlite::Error);

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError(e)
    }
}

impl From<DbError> for ResourceError {
    fn from(e: DbError) -> Self {
        ResourceError::internal(format_args!("database: {}", e.0))
    }
}

#[resources]
impl Bookshop {
    /// One book, as JSON, or as a CSV row.
    #[resource(
        uri = "books://books/{id}",
        name = "book",
        mime_type = "application/json"
    )]
    fn book(&self, id: i64) -> Result<Option<Formats>, DbError> {
        let Some(book) = self.query_book(id)? else {
            return Ok(None);
        };
        let csv = format!(
            "id,title,author,year\n{},{:?},{:?},{}\n",
            book.id, book.title, book.author, book.year
        );
        Ok(Some((Json(book), Typed::new("text/csv", csv))))
    }

    #[list(book)]
    fn books(&self) -> Result<Vec<ListItem<BookItem>>, DbError> {
        let db = self.db.lock().unwrap_or_else(PoisonError::into_inner);
        let mut stmt = db.prepare("SELECT id, title FROM books ORDER BY id")?;
        let rows = stmt.query_map([], |r| {
            Ok(BookItem { id: r.get(0)? }.title(r.get::<_, String>(1)?))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every book of one author: a collection whose children are the books.
    #[resource(uri = "books://authors/{author}", name = "author", collection)]
    fn author(&self, author: &str) -> Result<Option<Vec<Child>>, DbError> {
        let ids = self.ids_by(author)?;
        if ids.is_empty() {
            return Ok(None);
        }
        let mut children = Vec::new();
        for id in ids {
            if let Some(book) = self.query_book(id)? {
                let resource = Resource::new(format!("books://books/{id}"), book.title.clone())
                    .with_mime_type("application/json");
                children.push(Child::new(resource).with(Json(book)));
            }
        }
        Ok(Some(children))
    }

    #[complete(author, author)]
    fn authors(&self, author: &str) -> Result<Vec<String>, DbError> {
        let db = self.db.lock().unwrap_or_else(PoisonError::into_inner);
        let mut stmt = db.prepare(
            "SELECT DISTINCT author FROM books WHERE author LIKE ?1 || '%' ORDER BY author",
        )?;
        let rows = stmt.query_map([author], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl Bookshop {
    /// A bookshop over an in-memory database with a few books.
    pub fn open() -> rusqlite::Result<Self> {
        let db = Connection::open_in_memory()?;
        db.execute_batch(
            "CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT NOT NULL, author TEXT NOT NULL, year INTEGER NOT NULL);
             INSERT INTO books VALUES
               (1, 'Emma', 'Jane Austen', 1815),
               (2, 'Persuasion', 'Jane Austen', 1817),
               (3, 'Dune', 'Frank Herbert', 1965),
               (4, 'Beloved', 'Toni Morrison', 1987);",
        )?;
        Ok(Bookshop { db: Mutex::new(db) })
    }

    fn query_book(&self, id: i64) -> Result<Option<Book>, DbError> {
        let db = self.db.lock().unwrap_or_else(PoisonError::into_inner);
        let book = db
            .query_row(
                "SELECT id, title, author, year FROM books WHERE id = ?1",
                params![id],
                |r| {
                    Ok(Book {
                        id: r.get(0)?,
                        title: r.get(1)?,
                        author: r.get(2)?,
                        year: r.get(3)?,
                    })
                },
            )
            .optional()?;
        Ok(book)
    }

    fn ids_by(&self, author: &str) -> Result<Vec<i64>, DbError> {
        let db = self.db.lock().unwrap_or_else(PoisonError::into_inner);
        let mut stmt = db.prepare("SELECT id FROM books WHERE author = ?1 ORDER BY id")?;
        let rows = stmt.query_map([author], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The server of this example.
pub fn server() -> Result<rsrc::Server, Box<dyn std::error::Error>> {
    Ok(rsrc::Server::builder("bookshop-example", "1.0")
        .mount("books:", Bookshop::open()?)
        .build()?)
}

#[allow(dead_code)]
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The server's logs (a failed query, say), on stderr: stdout carries the protocol.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    rsrc::transport::serve_stdio(&server()?, &Default::default()).await?;
    Ok(())
}

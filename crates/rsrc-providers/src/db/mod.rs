//! Databases as resources (SQLite; PostgreSQL follows). Being written.

-- The bundled sample database, served as db://bookshop when `rsrc serve` is given no
-- source. It is built in memory from this script at start; nothing is written to disk.
-- It shows each kind of table the SQLite provider distinguishes.

-- An INTEGER PRIMARY KEY (the rowid): rows are db://bookshop/authors/1, /2, …
CREATE TABLE authors (
    id      INTEGER PRIMARY KEY,
    name    TEXT NOT NULL,
    born    INTEGER,
    country TEXT
);
INSERT INTO authors VALUES
    (1, 'Ursula K. Le Guin', 1929, 'United States'),
    (2, 'Italo Calvino', 1923, 'Italy'),
    (3, 'Wisława Szymborska', 1923, 'Poland'),
    (4, 'Chinua Achebe', 1930, 'Nigeria');

-- A REAL column and a BLOB column (served as base64).
CREATE TABLE books (
    id        INTEGER PRIMARY KEY,
    author_id INTEGER NOT NULL REFERENCES authors(id),
    title     TEXT NOT NULL,
    published INTEGER,
    price     REAL,
    cover     BLOB
);
INSERT INTO books VALUES
    (1, 1, 'The Dispossessed', 1974, 9.5, x'89504e470d0a1a0a'),
    (2, 1, 'The Left Hand of Darkness', 1969, 8.75, NULL),
    (3, 2, 'Invisible Cities', 1972, 12.0, NULL),
    (4, 2, 'If on a winter''s night a traveler', 1979, 11.25, NULL),
    (5, 3, 'View with a Grain of Sand', 1995, 14.0, NULL),
    (6, 4, 'Things Fall Apart', 1958, 7.5, NULL);

-- A composite primary key in a WITHOUT ROWID table: rows are db://bookshop/tags/1,anarchy …
CREATE TABLE tags (
    book_id INTEGER NOT NULL REFERENCES books(id),
    tag     TEXT NOT NULL,
    PRIMARY KEY (book_id, tag)
) WITHOUT ROWID;
INSERT INTO tags VALUES
    (1, 'anarchy'), (1, 'science fiction'), (2, 'science fiction'), (3, 'cities'),
    (4, 'metafiction'), (5, 'poetry'), (6, 'colonialism');

-- No primary key: rows are addressed by rowid.
CREATE TABLE sales (
    sold_at TEXT NOT NULL,
    book_id INTEGER NOT NULL REFERENCES books(id),
    copies  INTEGER NOT NULL DEFAULT 1
);
INSERT INTO sales VALUES
    ('2025-03-01T10:12:00Z', 1, 2),
    ('2025-03-01T11:40:00Z', 3, 1),
    ('2025-03-02T09:05:00Z', 6, 3),
    ('2025-03-02T16:30:00Z', 1, 1);

-- A view: rows are addressed by position (sorted by all columns).
CREATE VIEW books_by_author AS
    SELECT authors.name AS author, books.title, books.published
    FROM books JOIN authors ON authors.id = books.author_id;

-- The table as every earlier version created it at start: a file made by one of them is adopted as it is.
-- SQLite has no timestamp type: created_at is ISO 8601 text in UTC, written by SQLite itself in the
-- same form the PostgreSQL adapter returns. The CHECKs hold the limits PostgreSQL's varchar holds.
CREATE TABLE IF NOT EXISTS users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL CHECK (length(name) <= 100),
  email TEXT NOT NULL UNIQUE CHECK (length(email) <= 120),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

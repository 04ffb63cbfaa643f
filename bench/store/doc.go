// Package store keeps benchmark runs: every bench.Report recorded in a database, with its
// devices, results and every sample in tables of their own for queries (Runs, History),
// the device fingerprint that decides which runs may be compared, named baselines, and the
// report itself, so that Export gives back exactly what Record was given.
//
// The database is a SQLite file (DefaultPath: $XDG_DATA_HOME/prism/results.db), in WAL
// mode with a busy timeout, so that several processes of one host may record at once. The
// schema is versioned (schema_version) and Open migrates an older store forward in one
// transaction; a newer one is refused. The store reaches the database only through
// database/sql, with SQL that PostgreSQL runs too: what differs between the two
// (placeholders, the type of a numbered key and of binary data, integrity checks, the
// names of errors) is a dialect, so that a PostgreSQL store is a second dialect.
//
// The SQLite driver is github.com/mattn/go-sqlite3 built against the system's libsqlite3
// (build tag libsqlite3, Debian's libsqlite3-dev): it compiles in seconds where the bundled
// amalgamation or a pure-Go SQLite take more than half a minute. Without the tag the
// driver compiles its own copy of SQLite; the store works the same.
//
// A Store is safe for concurrent use by multiple goroutines.
package store

// Package store keeps benchmark runs: every bench.Report recorded in a database, with its
// devices and results in tables of their own for queries (Runs, History), each result
// with every sample it took (in one compact value of its row: samples.go), the device
// fingerprint that decides which runs may be compared, named baselines, and the report
// itself, so that Export gives back exactly what Record was given.
//
// The database is a SQLite file (DefaultPath: $XDG_DATA_HOME/prism/results.db), in WAL
// mode with a busy timeout, so that several processes of one host may record at once; or,
// for a team or a cluster, a PostgreSQL database (13 or later) that processes of many
// hosts write at once: Open takes a URL, postgres://user:password@host:5432/database or
// postgresql://... (libpq's options in its query: ?sslmode=require, ?host=/run/postgresql
// for a Unix socket, ?search_path=team for a store in a schema of its own), or libpq's
// key=value form ("host=db dbname=prism user=ci"); the PG* variables and ~/.pgpass fill in
// what it leaves out. The database must exist (createdb prism); Open creates the store's
// tables. A run is one transaction on both; on PostgreSQL run IDs come from a sequence
// and baselines are upserted, so that concurrent writers never collide, and processes that
// open a new database at once take turns to create its tables.
//
// The schema is versioned (schema_version) and Open migrates an older store forward in one
// transaction; a newer one is refused. The store reaches the database only through
// database/sql, each query written once: what differs between SQLite and PostgreSQL
// (placeholders, the type of a numbered key and of binary data, integrity checks, the
// names of errors) is a dialect. Errors name the file, or the server and database as a URL
// without the password (Path), and say what went wrong in the user's terms.
//
// The SQLite driver is github.com/mattn/go-sqlite3 built against the system's libsqlite3
// (build tag libsqlite3, Debian's libsqlite3-dev): it compiles in seconds where the bundled
// amalgamation or a pure-Go SQLite take more than half a minute. Without the tag the
// driver compiles its own copy of SQLite; the store works the same. The PostgreSQL driver
// is github.com/jackc/pgx/v5 through its database/sql driver (pgx/v5/stdlib): pure Go,
// nothing to install or link.
//
// The tests run on both databases: on PostgreSQL, a throw-away server of the system's
// postgresql package that they start themselves (see cluster_test.go; they skip without
// it, and fail where PRISM_REQUIRE names postgres).
//
// A Store is safe for concurrent use by multiple goroutines.
package store

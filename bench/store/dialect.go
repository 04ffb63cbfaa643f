package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// dialect is what differs between the databases a store may live in. Every query of the
// store is written once, with ? for its parameters, in SQL that SQLite and PostgreSQL
// both run; a dialect supplies the rest.
type dialect struct {
	name string
	// driver is the database/sql driver's name.
	driver string
	// id is the column type of a table's own key, numbered by the database.
	id string
	// blob is the type of binary data.
	blob string
	// emptyBlob is the literal of an empty value of type blob.
	emptyBlob string
	// placeholder returns the marker of the n-th parameter (1-based); nil: ? as written.
	placeholder func(n int) string
	// hasTable is a query of one parameter, a table's name, counting the tables of that name.
	hasTable string
	// lock, run first in the schema's migration, makes processes that open a new store at
	// once take turns; "" where the transaction does so itself (SQLite's, which takes the
	// write lock at its start).
	lock string
	// integrity runs the database's own checks and returns what they found wrong; nil
	// where the database keeps its integrity itself.
	integrity func(ctx context.Context, db *sql.DB) ([]string, error)
	// explain says in the user's terms what a database error means ("the database is
	// locked by another writer"), or "" for errors it does not know.
	explain func(err error, busy time.Duration) string
}

// q rewrites query's ? into the dialect's parameter markers. The store's queries hold no ?
// inside string literals.
func (d *dialect) q(query string) string {
	if d.placeholder == nil {
		return query
	}
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteString(d.placeholder(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// upsert returns the statement that inserts a row of cols into table, or updates the row
// with the same key column (the first of cols) to the new values. SQLite (3.24 and later)
// and PostgreSQL share this form.
func (d *dialect) upsert(table string, cols ...string) string {
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")
	var set []string
	for _, c := range cols[1:] {
		set = append(set, c+" = excluded."+c)
	}
	return d.q(fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s) ON CONFLICT (%s) DO UPDATE SET %s",
		table, strings.Join(cols, ", "), marks, cols[0], strings.Join(set, ", ")))
}

// sqliteDialect is SQLite's, through github.com/mattn/go-sqlite3.
var sqliteDialect = &dialect{
	name:      "sqlite",
	driver:    "sqlite3",
	id:        "INTEGER PRIMARY KEY AUTOINCREMENT",
	blob:      "BLOB",
	emptyBlob: "X''",
	hasTable:  "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
	integrity: func(ctx context.Context, db *sql.DB) ([]string, error) {
		var problems []string
		rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var msg string
			if err := rows.Scan(&msg); err != nil {
				rows.Close()
				return nil, err
			}
			if msg != "ok" {
				problems = append(problems, "integrity: "+msg)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		rows, err = db.QueryContext(ctx, "PRAGMA foreign_key_check")
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var table, parent string
			var rowid sql.NullInt64
			var fk int
			if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
				return nil, err
			}
			problems = append(problems, fmt.Sprintf("foreign key: row %d of %s names a missing row of %s", rowid.Int64, table, parent))
		}
		return problems, rows.Err()
	},
	explain: func(err error, busy time.Duration) string {
		var se sqlite3.Error
		if !errors.As(err, &se) {
			return ""
		}
		switch se.Code {
		case sqlite3.ErrBusy, sqlite3.ErrLocked:
			return fmt.Sprintf("the database is locked by another writer (waited %s)", busy)
		case sqlite3.ErrCorrupt, sqlite3.ErrNotADB:
			return "the file is not a results store or is corrupt"
		case sqlite3.ErrFull:
			return "the disk is full"
		case sqlite3.ErrReadonly, sqlite3.ErrPerm:
			return "the file or its directory cannot be written"
		case sqlite3.ErrCantOpen:
			return "the file cannot be opened or created (does its directory exist and is it writable?)"
		case sqlite3.ErrIoErr:
			return "the disk failed to read or write"
		}
		return ""
	},
}

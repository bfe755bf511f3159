package postgres

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// Names in PostgreSQL.
//
// PostgreSQL keeps max_identifier_length bytes of an identifier
// (NAMEDATALEN-1: 63 in every stock build) and silently truncates a
// longer one, in CREATE TABLE as in every later statement. Two loadnode
// tables whose names share their first 63 bytes would be one PostgreSQL
// table, and dropping one would drop the other's rows; two such columns
// are refused by PostgreSQL as one column given twice. loadnode's own
// rule (table.NewSchema) allows 128 bytes, which the embedded store keeps,
// so CreateTable refuses a table or column name longer than the server's
// limit, read at bootstrap (NameError). Names are ASCII ([A-Za-z0-9_]),
// and the limit is counted in bytes as PostgreSQL counts it.
//
// loadnode derives no identifier from a name: its staging tables are
// fixed temporary names (loadnode_staging, loadnode_stage_up,
// loadnode_stage_del) and its advisory locks are hashes. The constraint
// indexes of a table (its primary key, UNIQUE (_loadnode_key), the key
// columns' constraint) are named by PostgreSQL, which truncates the table
// and column parts and numbers the result until it is unique in the
// schema, and loadnode never refers to them by name. A table name that
// is already another relation's name (such as an index "t_pkey") is
// refused by PostgreSQL at create.

// stockMaxIdentBytes is PostgreSQL's max_identifier_length in every stock
// build, used until the server has said its own (bootstrap), and for the
// schema, which Options.Validate checks before connecting.
const stockMaxIdentBytes = 63

// NameError refuses a name PostgreSQL would truncate.
type NameError struct {
	// Field is the spec field of the name ("table.name",
	// "table.columns[2].name"; "table.database" for the database's schema).
	Field string
	Kind  string // "table", "column" or "schema"
	Name  string
	// Limit is the server's max_identifier_length, in bytes.
	Limit int
}

func (e *NameError) Error() string {
	return fmt.Sprintf("postgres: %s name %s is %d bytes; PostgreSQL keeps identifiers to %d bytes (max_identifier_length) "+
		"and would truncate it, so two names sharing their first %d bytes would be one %s: use at most %d bytes",
		e.Kind, api.Quote(e.Name), len(e.Name), e.Limit, e.Limit, e.Kind, e.Limit)
}

// SpecField names the spec field at fault.
func (e *NameError) SpecField() string { return e.Field }

// checkNames refuses the schema, table or column name of sc that is
// longer than limit bytes.
func checkNames(schema string, sc *table.Schema, limit int) error {
	if len(schema) > limit {
		return &NameError{Field: "table.database", Kind: "schema", Name: schema, Limit: limit}
	}
	if len(sc.Name()) > limit {
		return &NameError{Field: "table.name", Kind: "table", Name: sc.Name(), Limit: limit}
	}
	for i, c := range sc.Columns() {
		if len(c.GetName()) > limit {
			return &NameError{Field: fmt.Sprintf("table.columns[%d].name", i), Kind: "column", Name: c.GetName(), Limit: limit}
		}
	}
	return nil
}

// truncated is name as PostgreSQL keeps it: at most limit bytes, cut at
// a character boundary.
func truncated(name string, limit int) string {
	if len(name) <= limit {
		return name
	}
	n := limit
	for n > 0 && !utf8.RuneStart(name[n]) {
		n--
	}
	return name[:n]
}

// sharers returns the other tables of loadnode.tables in schema that are,
// in PostgreSQL, the same table as name: their names truncate to the same
// identifier. Only a catalog made before CreateTable refused long names
// has them.
func sharers(ctx context.Context, tx pgx.Tx, schema, name string, limit int) ([]string, error) {
	if len(name) < limit {
		return nil, nil // a table of a shorter name has it to itself
	}
	ident := truncated(name, limit)
	rows, err := tx.Query(ctx, `SELECT table_name FROM loadnode.tables
		WHERE schema_name = $1 AND table_name <> $2 AND starts_with(table_name, $3)`, schema, name, ident)
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if truncated(n, limit) == ident {
			out = append(out, n)
		}
	}
	return out, nil
}

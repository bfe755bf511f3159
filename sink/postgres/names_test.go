package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// specFielder is what the actors read to name the field at fault.
type specFielder interface{ SpecField() string }

// TestLongNamesRefused: PostgreSQL keeps 63 bytes of an identifier and
// truncates the rest, so two loadnode tables (or columns) sharing their
// first 63 bytes would be one. At create, a table or column name longer
// than the server's max_identifier_length is refused before anything is
// made, naming the name, the limit and the spec field; 63 bytes are
// accepted.
func TestLongNamesRefused(t *testing.T) {
	s, _ := open(t, false)
	p := strings.Repeat("a", 70)
	for _, name := range []string{p + "_one", p + "_three", strings.Repeat("b", 64)} {
		err := s.CreateTable(spec(name, col("id", api.ColumnType_INT64)))
		var f specFielder
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "63 bytes") ||
			!errors.As(err, &f) || f.SpecField() != "table.name" {
			t.Errorf("CreateTable of a %d-byte table name = %v; want a refusal of field table.name naming it and the limit of 63 bytes", len(name), err)
		}
	}
	long := strings.Repeat("c", 64)
	err := s.CreateTable(spec("cols", col("id", api.ColumnType_INT64), col(long+"_x", api.ColumnType_STRING), col(long+"_y", api.ColumnType_STRING)))
	var f specFielder
	if err == nil || !strings.Contains(err.Error(), long+"_x") || !strings.Contains(err.Error(), "63 bytes") ||
		!errors.As(err, &f) || f.SpecField() != "table.columns[1].name" {
		t.Errorf("CreateTable with 66-byte column names sharing 64 bytes = %v; want a refusal of table.columns[1].name naming it and the limit", err)
	}
	var n int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_class WHERE relname LIKE 'aaa%' OR relname LIKE 'bbb%' OR relname = 'cols'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("refused creates made %d relations (%v)", n, err)
	}

	// 63 bytes is PostgreSQL's own: accepted, and two such names sharing 62
	// bytes are two tables, each with its own constraint indexes (which
	// PostgreSQL names itself, truncating and numbering them to keep them
	// apart), on 63-byte key columns.
	keyed := func(name string) *api.TableSpec {
		sp := spec(name, col(strings.Repeat("k", 63), api.ColumnType_INT64), col(strings.Repeat("v", 63), api.ColumnType_STRING))
		sp.Model, sp.KeyColumns = api.TableModel_UNIQUE, []string{strings.Repeat("k", 63)}
		return sp
	}
	for _, name := range []string{strings.Repeat("d", 62) + "1", strings.Repeat("d", 62) + "2"} {
		if err := s.CreateTable(keyed(name)); err != nil {
			t.Fatalf("CreateTable of a 63-byte name: %v", err)
		}
		var idx int
		if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_index WHERE indrelid = ('public.' || quote_ident($1))::regclass AND indisunique`,
			name).Scan(&idx); err != nil || idx != 2 {
			t.Errorf("table %s has %d unique indexes (%v), want 2 (the key columns, _loadnode_key)", name, idx, err)
		}
	}
}

// TestDropKeepsTruncatedSibling: a catalog made before long names were
// refused may hold two tables PostgreSQL truncated into one. Dropping one
// of them removes its catalog row but keeps the PostgreSQL table, which
// holds the other's rows; a long name with no sibling drops its table.
func TestDropKeepsTruncatedSibling(t *testing.T) {
	s, _ := open(t, false)
	ctx := context.Background()
	if err := s.bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	p := strings.Repeat("a", 70)
	record := func(name string) {
		t.Helper()
		b, err := proto.Marshal(spec(name, col("id", api.ColumnType_INT64)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.pool.Exec(ctx, `INSERT INTO loadnode.tables (schema_name, table_name, spec) VALUES ('public', $1, $2)`, name, b); err != nil {
			t.Fatal(err)
		}
	}
	// What an earlier release made of CREATE TABLE p_one and p_three.
	exec(t, s, `CREATE TABLE public.`+p+`_one (_loadnode_key bytea PRIMARY KEY, _loadnode_job bigint NOT NULL,
		_loadnode_partition integer NOT NULL, _loadnode_offset bigint NOT NULL, id bigint)`)
	exec(t, s, `INSERT INTO public.`+p+` VALUES ('\x01', 1, 0, 0, 1)`)
	record(p + "_one")
	record(p + "_three")
	if err := s.DropTable(p + "_three"); err != nil {
		t.Fatalf("DropTable: %v", err)
	}
	var rows, left int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM public.`+p[:63]).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("after dropping %s_three, the table that %s_one shares holds %d rows (%v); want its 1 row", p, p, rows, err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM loadnode.tables WHERE table_name LIKE 'aaa%'`).Scan(&left); err != nil || left != 1 {
		t.Fatalf("loadnode.tables holds %d rows of the two (%v); want 1 (%s_one)", left, err, p)
	}
	if err := s.DropTable(p + "_one"); err != nil {
		t.Fatalf("DropTable: %v", err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname LIKE 'aaa%'`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("the last long name dropped left %d relations (%v); want its table gone", left, err)
	}
}

// TestSchemaNameBounded: a schema PostgreSQL would truncate (over 63
// bytes, however many characters) is refused before connecting.
func TestSchemaNameBounded(t *testing.T) {
	for _, c := range []struct {
		schema string
		ok     bool
	}{
		{strings.Repeat("s", 63), true}, {strings.Repeat("s", 64), false}, {"a\x00b", false},
		{strings.Repeat("ü", 31), true}, {strings.Repeat("ü", 32), false}, // bytes, not characters
	} {
		err := Options{DSN: "postgres://x@127.0.0.1:1/x", Schema: c.schema}.withDefaults().Validate()
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), "at most 63 bytes")) {
			t.Errorf("Validate of schema %q (%d bytes) = %v; want ok %v", c.schema, len(c.schema), err, c.ok)
		}
	}
}

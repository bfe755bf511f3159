package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
)

// asRole is dsn as the role instead of the superuser (pgtest trusts every
// role).
func asRole(dsn, role string) string {
	return strings.Replace(dsn, "postgres://postgres@", "postgres://"+role+"@", 1)
}

// TestCreateRefusals: a PostgreSQL refusal retrying cannot fix (a missing
// privilege on the database or on the schema, a read-only role, a
// statement timeout) fails a create with an error wrapping
// sink.ErrRefused, not sink.ErrUnavailable, naming the cause; a
// transient one (too many connections, the server stopped) does not.
func TestCreateRefusals(t *testing.T) {
	s, _ := open(t, false)
	ctx := context.Background()
	var db string
	if err := s.pool.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
		t.Fatal(err)
	}
	role := func(name string, sql ...string) string {
		r := db + "_" + name
		exec(t, s, `CREATE ROLE `+r+` LOGIN`)
		for _, q := range sql {
			exec(t, s, strings.NewReplacer("{role}", r, "{db}", db).Replace(q))
		}
		return r
	}
	sp := spec("t", col("id", api.ColumnType_INT64))
	for _, c := range []struct {
		name    string
		role    string
		hold    bool // a session holds the bootstrap's lock meanwhile
		refused bool
		says    []string
	}{
		{name: "no CREATE on the database", role: role("nodb"), refused: true,
			says: []string{"permission denied for database", "42501", "privilege"}},
		{name: "no CREATE on schema public", role: role("nopublic", `GRANT CREATE ON DATABASE {db} TO {role}`), refused: true,
			says: []string{"permission denied for schema public", "42501", "privilege"}},
		{name: "read-only role", role: role("ro", `GRANT CREATE ON DATABASE {db} TO {role}`, `ALTER ROLE {role} SET default_transaction_read_only = on`),
			refused: true, says: []string{"read-only transaction", "25006", "read-only"}},
		{name: "statement timeout", role: role("slow", `GRANT CREATE ON DATABASE {db} TO {role}`, `ALTER ROLE {role} SET statement_timeout = '50ms'`),
			hold: true, refused: true, says: []string{"statement timeout", "57014", "statement_timeout"}},
		{name: "too many connections", role: role("full", `ALTER ROLE {role} CONNECTION LIMIT 0`), says: []string{"53300"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.hold {
				tx, err := s.pool.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback(ctx) //nolint:errcheck // releases the lock
				if _, err := tx.Exec(ctx, bootstrapSQL[0]); err != nil {
					t.Fatal(err)
				}
			}
			rs, err := Open(Options{DSN: asRole(server.DSN(db), c.role)})
			if err != nil {
				t.Fatal(err)
			}
			defer rs.Close()
			err = rs.CreateTable(sp)
			switch {
			case err == nil:
				t.Fatal("CreateTable succeeded")
			case c.refused && (!errors.Is(err, sink.ErrRefused) || errors.Is(err, sink.ErrUnavailable)):
				t.Fatalf("CreateTable = %v; want an error wrapping sink.ErrRefused, not sink.ErrUnavailable", err)
			case !c.refused && errors.Is(err, sink.ErrRefused):
				t.Fatalf("CreateTable = %v; a transient error wraps sink.ErrRefused", err)
			}
			for _, w := range c.says {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("CreateTable = %v; want it to say %q", err, w)
				}
			}
		})
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname = 't'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("refused creates made table t (%d, %v)", n, err)
	}
}

// TestTransient: the SQLSTATEs a retry may pass, and refusals that stay.
func TestTransient(t *testing.T) {
	for code, want := range map[string]bool{
		"08006": true, "08001": true, "57P01": true, "57P03": true, "40001": true, "40P01": true,
		"53100": true, "53200": true, "53300": true, "55P03": true, "58030": true, "XX000": true,
		"42501": false, "25006": false, "57014": false, "57P04": false, "42P07": false, "42701": false,
		"3D000": false, "28P01": false, "0A000": false, "23505": false, "": false,
	} {
		if got := transient(code); got != want {
			t.Errorf("transient(%q) = %v, want %v", code, got, want)
		}
	}
}

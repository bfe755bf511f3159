package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadNodeDatabases(t *testing.T) {
	n, err := LoadNode([]byte(`
databases:
  analytics:
    type: postgres
    dsn: "postgres://loader@db.internal:5432/analytics?sslmode=verify-full"
    password_file: /etc/loadnode/analytics.password
  other:
    type: postgres
    dsn: host=127.0.0.1 dbname=x
    schema: staging
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Database{
		"analytics": {Type: "postgres", DSN: "postgres://loader@db.internal:5432/analytics?sslmode=verify-full",
			PasswordFile: "/etc/loadnode/analytics.password", Schema: "public"},
		"other": {Type: "postgres", DSN: "host=127.0.0.1 dbname=x", Schema: "staging"},
	}
	if !reflect.DeepEqual(n.Databases, want) {
		t.Fatalf("databases = %+v\nwant %+v", n.Databases, want)
	}
	if got := n.DatabaseNames(); !reflect.DeepEqual(got, []string{"analytics", "other"}) {
		t.Errorf("DatabaseNames = %v", got)
	}
	if DefaultNode().Databases != nil {
		t.Errorf("DefaultNode has databases")
	}
}

func TestLoadNodeDatabaseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, field string
		line              int
		msg               string
	}{
		{"no type", "databases:\n  a:\n    dsn: x\n", "databases.a.type", 2, "required"},
		{"bad type", "databases:\n  a:\n    type: mysql\n    dsn: x\n", "databases.a.type", 3, "not a supported type"},
		{"no dsn", "databases:\n  a:\n    type: postgres\n", "databases.a.dsn", 2, "required"},
		{"unknown key", "databases:\n  a:\n    type: postgres\n    dsn: x\n    password: p\n", "databases.a.password", 5, "unknown key"},
		{"bad name", "databases:\n  9a:\n    type: postgres\n    dsn: x\n", "databases.9a", 2, "invalid name"},
		{"null entry", "databases:\n  a:\n", "databases.a", 2, "mapping"},
		{"not mapping", "databases: [a]\n", "databases", 1, "mapping"},
		{"empty schema", "databases:\n  a:\n    type: postgres\n    dsn: x\n    schema: \"\"\n", "databases.a.schema", 5, "must not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadNode([]byte(tc.yaml))
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("want *FieldError, got %v", err)
			}
			if fe.Field != tc.field || fe.Line != tc.line || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got field %q line %d error %q; want %q line %d containing %q", fe.Field, fe.Line, err, tc.field, tc.line, tc.msg)
			}
		})
	}
}

func TestDatabasePassword(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pw")
	if err := os.WriteFile(file, []byte("  s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	_ = os.WriteFile(empty, []byte("\n"), 0o600)
	for _, c := range []struct {
		db       Database
		want     string
		source   string
		errField string
	}{
		{Database{}, "", "dsn or none", ""},
		{Database{PasswordFile: file}, "s3cret", "password_file", ""},
		{Database{PasswordFile: file, Password: "env"}, "env", "$LOADNODE_DB_ANALYTICS_PASSWORD", ""},
		{Database{PasswordFile: empty}, "", "password_file", "databases.analytics.password_file"},
		{Database{PasswordFile: filepath.Join(dir, "none")}, "", "password_file", "databases.analytics.password_file"},
	} {
		got, err := c.db.ReadPassword("databases.analytics")
		var fe *FieldError
		switch {
		case c.errField != "" && (!errors.As(err, &fe) || fe.Field != c.errField):
			t.Errorf("ReadPassword(%+v) = %v, want an error on %s", c.db, err, c.errField)
		case c.errField == "" && (err != nil || got != c.want):
			t.Errorf("ReadPassword(%+v) = %q, %v; want %q", c.db, got, err, c.want)
		}
		if s := c.db.PasswordSource("analytics"); s != c.source {
			t.Errorf("PasswordSource(%+v) = %q, want %q", c.db, s, c.source)
		}
	}
}

func TestRedactedDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:pw@h:5432/db?sslmode=disable": "postgres://u:xxxxx@h:5432/db?sslmode=disable",
		"postgres://u@h/db?password=pw":             "postgres://u@h/db?password=xxxxx",
		"postgres://u@h/db":                         "postgres://u@h/db",
		"host=h password=pw dbname=db":              "host=h password=xxxxx dbname=db",
		"host=h password = 'p w' dbname=db":         "host=h password = xxxxx dbname=db",
	} {
		if got := (Database{DSN: in}).RedactedDSN(); got != want {
			t.Errorf("RedactedDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTableDatabase: table.database reads, validates and writes back.
func TestTableDatabase(t *testing.T) {
	spec := strings.Replace(minimal, "  name: t\n", "  name: t\n  database: analytics\n", 1)
	s, err := ParseJobSpec([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	if s.GetTable().GetDatabase() != "analytics" {
		t.Fatalf("table.database = %q", s.GetTable().GetDatabase())
	}
	out, err := MarshalJobSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := ParseJobSpec(out); err != nil || again.GetTable().GetDatabase() != "analytics" {
		t.Fatalf("written back as\n%s\nreads as %v, %v", out, again.GetTable(), err)
	}
	_, err = ParseJobSpec([]byte(strings.Replace(minimal, "  name: t\n", "  name: t\n  database: \"a-b\"\n", 1)))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "table.database" {
		t.Fatalf("an invalid database name: %v, want a FieldError on table.database", err)
	}
}

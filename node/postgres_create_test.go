package node_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/node"
)

// startPostgresNode starts a node whose config names a PostgreSQL database
// per entry of dbs (name -> DSN) and returns a client of it.
func startPostgresNode(t *testing.T, dbs map[string]string) *client.Client {
	t.Helper()
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen = t.TempDir(), "127.0.0.1:0"
	cfg.Databases = map[string]config.Database{}
	for name, dsn := range dbs {
		cfg.Databases[name] = config.Database{Type: config.DatabasePostgres, DSN: dsn, Schema: config.DefaultDatabaseSchema}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := node.Start(ctx, node.Config{Node: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	c, err := client.Dial(ctx, n.Addr(), client.WithTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// wantCode fails t unless err is a client error of code whose message
// holds every one of says.
func wantCode(t *testing.T, what string, err error, code api.ErrorCode, says ...string) {
	t.Helper()
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != code {
		t.Errorf("%s: %v; want %s", what, err, code)
		return
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: %v; want it to say %q", what, err, s)
		}
	}
}

// TestPostgresLongNamesRefused: PostgreSQL keeps 63 bytes of a name, so
// CREATE TABLE in a PostgreSQL database refuses a longer table or column
// name (INVALID_ARGUMENT, naming the field, the name and the limit)
// instead of making two loadnode tables one PostgreSQL table; the
// embedded store keeps its 128 bytes.
func TestPostgresLongNamesRefused(t *testing.T) {
	pg := pgtest.Start(t)
	c := startPostgresNode(t, map[string]string{"analytics": pg.CreateDatabase(t)})
	ctx := context.Background()
	p := strings.Repeat("a", 70)
	for _, name := range []string{p + "_one", p + "_three"} {
		_, err := exec.Exec(ctx, c, "CREATE TABLE analytics."+name+" (id BIGINT, note VARCHAR(64)) DUPLICATE KEY(id)")
		wantCode(t, "CREATE TABLE of a "+name, err, api.ErrorCode_INVALID_ARGUMENT, "table.name", name, "63 bytes")
	}
	long := strings.Repeat("c", 64)
	_, err := exec.Exec(ctx, c, "CREATE TABLE analytics.cols (id BIGINT, "+long+"_x BIGINT, "+long+"_y BIGINT) DUPLICATE KEY(id)")
	wantCode(t, "CREATE TABLE with 66-byte columns", err, api.ErrorCode_INVALID_ARGUMENT, "table.columns[1].name", long+"_x", "63 bytes")
	if _, err := exec.Exec(ctx, c, "CREATE TABLE analytics."+p[:63]+" (id BIGINT) DUPLICATE KEY(id)"); err != nil {
		t.Errorf("CREATE TABLE of a 63-byte name: %v", err)
	}
	if _, err := exec.Exec(ctx, c, "CREATE TABLE "+p+"_embedded (id BIGINT) DUPLICATE KEY(id)"); err != nil {
		t.Errorf("CREATE TABLE of a 79-byte name in the embedded store: %v", err)
	}
}

// TestPostgresCreateRefusals: a PostgreSQL refusal of a create that
// retrying cannot fix (a role without CREATE, a read-only role) is
// FAILED_PRECONDITION naming the cause, not UNAVAILABLE; a transient one
// (too many connections for the role) stays UNAVAILABLE.
func TestPostgresCreateRefusals(t *testing.T) {
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	db := dsn[strings.LastIndex(dsn, "/")+1 : strings.Index(dsn, "?")]
	su, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(context.Background())
	for _, q := range []string{
		`CREATE ROLE nocreate LOGIN`,
		`CREATE ROLE readonly LOGIN`, `GRANT CREATE ON DATABASE ` + db + ` TO readonly`,
		`ALTER ROLE readonly SET default_transaction_read_only = on`,
		`CREATE ROLE crowded LOGIN CONNECTION LIMIT 0`,
	} {
		if _, err := su.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	as := func(role string) string {
		return strings.Replace(dsn, "postgres://postgres@", "postgres://"+role+"@", 1)
	}
	c := startPostgresNode(t, map[string]string{"nocreate": as("nocreate"), "readonly": as("readonly"), "crowded": as("crowded")})
	ctx := context.Background()
	for _, tc := range []struct {
		db   string
		code api.ErrorCode
		says []string
	}{
		{"nocreate", api.ErrorCode_FAILED_PRECONDITION, []string{"permission denied for database", "privilege"}},
		{"readonly", api.ErrorCode_FAILED_PRECONDITION, []string{"read-only transaction", "read-only"}},
		{"crowded", api.ErrorCode_UNAVAILABLE, []string{"too many connections"}},
	} {
		_, err := exec.Exec(ctx, c, "CREATE TABLE "+tc.db+".t_"+tc.db+" (id BIGINT) DUPLICATE KEY(id)")
		wantCode(t, "CREATE TABLE in "+tc.db, err, tc.code, tc.says...)
		spec := &api.JobSpec{Name: "job_" + tc.db, Format: "csv",
			Table: &api.TableSpec{Name: "j_" + tc.db, Database: tc.db, Columns: []*api.Column{{Name: "v", Type: api.ColumnType_INT64}}},
			Kafka: &api.KafkaSpec{Brokers: []string{"127.0.0.1:1"}, Topic: "x"}}
		config.ApplyDefaults(spec)
		_, err = c.CreateJob(ctx, spec)
		wantCode(t, "job create into "+tc.db, err, tc.code, tc.says...)
	}
}

package node_test

import (
	"context"
	"crypto/tls"
	"database/sql"
	"log/slog"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/internal/testcert"
	"github.com/loadnode/loadnode/node"
)

// TestMySQLEndpointWithTLS: a node with a token and TLS serves the MySQL
// protocol with its certificate; its statements take the node's own
// endpoint (token and TLS, the certificate pinned) as `loadnode sql` does;
// a plaintext client and a wrong password are refused; Close stops it.
func TestMySQLEndpointWithTLS(t *testing.T) {
	certs := testcert.Write(t, t.TempDir(), "node")
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen, cfg.MySQL = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	cfg.AuthToken = testToken
	cfg.TLSCertFile, cfg.TLSKeyFile = certs.CertFile, certs.KeyFile
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := node.Start(ctx, node.Config{Node: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if n.MySQLAddr() == "" {
		t.Fatal("no MySQL address")
	}
	if err := mysql.RegisterTLSConfig("nodetest", &tls.Config{RootCAs: certs.Pool, ServerName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	open := func(password, params string) *sql.DB {
		db, err := sql.Open("mysql", "root:"+password+"@tcp("+n.MySQLAddr()+")/?timeout=5s&"+params)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	db := open(testToken, "tls=nodetest")
	if _, err := db.ExecContext(ctx, "CREATE TABLE my_t (id BIGINT, note STRING) DUPLICATE KEY(id)"); err != nil {
		t.Fatalf("CREATE TABLE: %v", err)
	}
	var name string
	if err := db.QueryRowContext(ctx, "SHOW TABLES").Scan(&name); err != nil || name != "my_t" {
		t.Fatalf("SHOW TABLES: %q, %v", name, err)
	}
	var me *mysql.MySQLError
	if _, err := db.ExecContext(ctx, "CREATE TABLE my_t (id BIGINT)"); !asMySQL(err, &me) || me.Number != 1050 {
		t.Errorf("CREATE TABLE again: %v, want error 1050", err)
	}
	if err := open(testToken, "tls=false").PingContext(ctx); !asMySQL(err, &me) || me.Number != 3159 {
		t.Errorf("plaintext: %v, want error 3159", err)
	}
	if err := open("wrong-token-0123456789", "tls=nodetest").PingContext(ctx); !asMySQL(err, &me) || me.Number != 1045 {
		t.Errorf("a wrong token: %v, want error 1045", err)
	}
	addr := n.MySQLAddr()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := open(testToken, "tls=nodetest").PingContext(ctx); err == nil {
		t.Errorf("%s answers after Close", addr)
	}
}

func asMySQL(err error, target **mysql.MySQLError) bool {
	e, ok := err.(*mysql.MySQLError)
	if ok {
		*target = e
	}
	return ok
}

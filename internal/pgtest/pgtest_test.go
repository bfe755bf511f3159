package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestServer: a started server answers, a database created on it is
// empty and writable, and what was committed survives a crash restart.
func TestServer(t *testing.T) {
	s := Start(t)
	dsn := s.CreateDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	exec := func(sql string) {
		t.Helper()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("CREATE TABLE t (n bigint); INSERT INTO t VALUES (1), (2)")
	if err := s.Crash(); err != nil {
		t.Fatalf("Crash: %v", err)
	}
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect after a crash restart: %v", err)
	}
	defer c.Close(ctx)
	var n int64
	if err := c.QueryRow(ctx, "SELECT sum(n) FROM t").Scan(&n); err != nil || n != 3 {
		t.Fatalf("sum after a crash restart = %d, %v; want 3", n, err)
	}
}

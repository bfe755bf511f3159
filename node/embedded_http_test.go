package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	dorisexec "github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/node"
)

// TestEmbeddedTableCommandsWithHTTP: on a node with an admin endpoint
// (whose metrics time every commit), INSERT INTO, TRUNCATE TABLE and DROP
// TABLE work on an embedded table as they do without one: a dropped
// table's rows are gone when a table of its name is created again.
func TestEmbeddedTableCommandsWithHTTP(t *testing.T) {
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen, cfg.HTTP = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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
	exec := func(q string) {
		t.Helper()
		if _, err := dorisexec.Exec(ctx, c, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	count := func(want int64) {
		t.Helper()
		n, err := c.Count(ctx, "t")
		if err != nil || n != want {
			t.Fatalf("count(t) = %d, %v; want %d", n, err, want)
		}
	}
	exec("CREATE TABLE t (id BIGINT, s STRING) DUPLICATE KEY(id)")
	exec("INSERT INTO t (id, s) VALUES (1, 'x'), (2, 'y')")
	count(2)
	exec("TRUNCATE TABLE t")
	count(0)
	exec("INSERT INTO t (id, s) VALUES (3, 'z')")
	count(1)
	exec("DROP TABLE t")
	exec("CREATE TABLE t (id BIGINT, s STRING) DUPLICATE KEY(id)")
	count(0)
}

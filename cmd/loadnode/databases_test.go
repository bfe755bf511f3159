package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/internal/pgtest"
)

// TestServeCheckConfigDatabases: --check-config connects to every
// database and says which answered, with the reason of those that did not;
// the password comes from the environment and is never printed.
func TestServeCheckConfigDatabases(t *testing.T) {
	pg := pgtest.Start(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	file := t.TempDir() + "/node.yaml"
	yaml := fmt.Sprintf("databases:\n  analytics:\n    type: postgres\n    dsn: %q\n  gone:\n    type: postgres\n    dsn: \"postgres://x@%s/x?sslmode=disable&connect_timeout=2\"\n",
		pg.DSN("postgres"), closed)
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	m, out, _ := testMain(map[string]string{"LOADNODE_DB_ANALYTICS_PASSWORD": "not-printed"})
	if err := m.ParseFlags(context.Background(), []string{"serve", "--config", file, "--check-config"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	analytics, gone, _ := strings.Cut(got[strings.Index(got, "  analytics:"):], "  gone:")
	for _, want := range []string{"# reachable", "# password from: $LOADNODE_DB_ANALYTICS_PASSWORD", "schema: \"public\""} {
		if !strings.Contains(analytics, want) {
			t.Errorf("analytics lacks %q:\n%s", want, got)
		}
	}
	if !strings.Contains(gone, "# unreachable: ") || !strings.Contains(gone, "connect") {
		t.Errorf("gone is not reported unreachable with a reason:\n%s", got)
	}
	if strings.Contains(got, "not-printed") {
		t.Errorf("the password is printed:\n%s", got)
	}
	again, err := config.LoadNode([]byte(got))
	if err != nil || len(again.Databases) != 2 {
		t.Fatalf("check-config output reads back as %v, %v", again.Databases, err)
	}
}

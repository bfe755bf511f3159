package postgres

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/sink/sinktest"
)

// errorRowsKept is MaxErrorRowsKept of the suite's sinks.
const errorRowsKept = 5

// server is the test binary's PostgreSQL cluster, started by TestMain.
var server *pgtest.Server

func TestMain(m *testing.M) {
	os.Exit(runWithServer(m))
}

func runWithServer(m *testing.M) int {
	bin, err := pgtest.FindBin()
	if err != nil {
		// Every test that needs the server fails, saying this, or skips
		// with $LOADNODE_SKIP_POSTGRES=1 (needServer).
		return m.Run()
	}
	s, err := pgtest.Launch(bin)
	if err != nil {
		println(err.Error())
		return 1
	}
	defer s.Close()
	server = s
	return m.Run()
}

// needServer fails t, naming what to install, or skips it with
// $LOADNODE_SKIP_POSTGRES=1, when TestMain found no PostgreSQL binaries.
func needServer(t testing.TB) {
	t.Helper()
	if server == nil {
		pgtest.Bin(t)
	}
}

// incarnations numbers the process incarnations of open's reopens.
var incarnations atomic.Int64

// open returns a sink over a new database and its reopen; with crash,
// reopen also crash-restarts the server (pg_ctl stop -m immediate). Each
// open is a new process incarnation, as a node's restart is.
func open(t testing.TB, crash bool) (*Sink, func(t *testing.T) *Sink) {
	t.Helper()
	needServer(t)
	dsn := server.CreateDatabase(t)
	o := Options{DSN: dsn, MaxErrorRowsKept: errorRowsKept, Incarnation: "open-0"}
	cur, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { cur.Close() })
	return cur, func(t *testing.T) *Sink {
		t.Helper()
		cur.Close()
		if crash {
			if err := server.Crash(); err != nil {
				t.Fatalf("%v", err)
			}
		}
		o.Incarnation = fmt.Sprintf("open-%d", incarnations.Add(1))
		if cur, err = Open(o); err != nil {
			t.Fatalf("Open: %v", err)
		}
		return cur
	}
}

// TestSinkConformance runs the sink suite; every reopen is a crash
// restart of PostgreSQL, so what survives is what was committed.
func TestSinkConformance(t *testing.T) {
	sinktest.Run(t, sinktest.Harness{
		Open: func(t *testing.T) (sink.Sink, func(*testing.T) sink.Sink) {
			s, reopen := open(t, true)
			return s, func(t *testing.T) sink.Sink { return reopen(t) }
		},
		MaxErrorRowsKept: errorRowsKept,
	})
}

package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
)

// openIncarnation opens a sink of owner as the process incarnation.
func openIncarnation(t *testing.T, dsn, owner, incarnation, schema string) *Sink {
	t.Helper()
	s, err := Open(Options{DSN: dsn, Owner: owner, Incarnation: incarnation, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestIncarnationSupersedes (issue 25): two processes with one owner (two
// nodes started from one backup, or a restored node and the original
// still running) are two incarnations; the one whose sink is used last
// claims the owner, and from then on every write of the other (commit,
// init, reset, rebase, drop, insert, drop table) is refused with
// ErrSuperseded (and ErrStaleCommit), writing nothing, while its own go
// through. A process started again claims back; a second sink of one
// process (another schema on the same database) does not fence its sibling.
func TestIncarnationSupersedes(t *testing.T) {
	needServer(t)
	dsn := server.CreateDatabase(t)
	a := openIncarnation(t, dsn, "node-1", "proc-a", "")
	sp := spec("inc", col("n", api.ColumnType_INT64))
	if err := a.PrepareTable(sp); err != nil {
		t.Fatal(err)
	}
	if err := a.InitStarts(1, map[int32]int64{0: 0}, nil); err != nil {
		t.Fatal(err)
	}
	commit := func(s *Sink, from, to int64) error {
		return s.Commit(&sink.Commit{JobID: 1, Table: "inc", Fence: uint64(time.Now().UnixNano()),
			Ranges: []sink.Range{{Partition: 0, From: from, To: to}}})
	}
	if err := commit(a, 0, 10); err != nil {
		t.Fatal(err)
	}
	at := func(s *Sink) int64 {
		t.Helper()
		p, err := s.Progress(1)
		if err != nil {
			t.Fatal(err)
		}
		return p.Positions[0]
	}
	// b claims at its first use, and reads a's progress.
	b := openIncarnation(t, dsn, "node-1", "proc-b", "")
	if got := at(b); got != 10 {
		t.Fatalf("b reads position %d, want 10", got)
	}
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, sink.ErrSuperseded) || !errors.Is(err, sink.ErrStaleCommit) || !strings.Contains(err.Error(), "proc-b") {
			t.Errorf("%s of the former incarnation: %v; want ErrSuperseded and ErrStaleCommit naming proc-b", what, err)
		}
	}
	refused("commit", commit(a, 10, 20))
	refused("init starts", a.InitStarts(2, map[int32]int64{0: 0}, nil))
	refused("reset", a.ResetStarts(1, map[int32]int64{0: 0}, nil))
	refused("rebase", a.RebaseStarts(1, uint64(time.Now().UnixNano()), map[int32]int64{5: 0}, nil))
	refused("drop job", a.DropJob(1))
	refused("insert", a.InsertRows("inc", nil))
	refused("drop table", a.DropTable("inc"))
	if got := at(b); got != 10 {
		t.Fatalf("position %d after the former incarnation's refused writes, want 10", got)
	}
	if p, _ := b.Progress(2); len(p.Positions) != 0 {
		t.Fatalf("job 2 has progress %v after a refused init", p.Positions)
	}
	if err := commit(b, 10, 20); err != nil {
		t.Fatalf("the claiming incarnation's commit: %v", err)
	}
	// Another schema on the same database, in b's process: one
	// incarnation, no fence between the two.
	b2 := openIncarnation(t, dsn, "node-1", "proc-b", "other")
	if err := b2.InitStarts(3, map[int32]int64{0: 0}, nil); err != nil {
		t.Fatalf("a second sink of b's process: %v", err)
	}
	if err := commit(b, 20, 30); err != nil {
		t.Fatalf("b's commit after its sibling's first use: %v", err)
	}
	// a's process started again (a new incarnation) takes the owner back.
	a2 := openIncarnation(t, dsn, "node-1", "proc-a2", "")
	if got := at(a2); got != 30 {
		t.Fatalf("a2 reads position %d, want 30", got)
	}
	refused2 := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, sink.ErrSuperseded) || !strings.Contains(err.Error(), "proc-a2") {
			t.Errorf("%s after a2's claim: %v; want ErrSuperseded naming proc-a2", what, err)
		}
	}
	refused2("b's commit", commit(b, 30, 40))
	refused2("b2's init", b2.InitStarts(4, map[int32]int64{0: 0}, nil))
	if err := commit(a2, 30, 40); err != nil {
		t.Fatal(err)
	}
	// Another owner on the database is not touched by any of this.
	other := openIncarnation(t, dsn, "node-2", "proc-x", "")
	if err := other.InitStarts(1, map[int32]int64{0: 0}, nil); err != nil {
		t.Fatal(err)
	}
	if err := commit(a2, 40, 50); err != nil {
		t.Fatalf("a2's commit after another owner's claim: %v", err)
	}
}

// TestIncarnationClaimsAgainAfterDatabaseRestore: the database restored
// from a dump taken before this process claimed the owner (the owner's row
// older, or missing) does not stop the process: its next write claims
// again; a former process's claim stays refused.
func TestIncarnationClaimsAgainAfterDatabaseRestore(t *testing.T) {
	needServer(t)
	dsn := server.CreateDatabase(t)
	a := openIncarnation(t, dsn, "node-1", "proc-a", "")
	if err := a.InitStarts(1, map[int32]int64{0: 0}, nil); err != nil {
		t.Fatal(err)
	}
	exec := func(sql string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	holder := func() string {
		t.Helper()
		var h string
		if err := a.pool.QueryRow(context.Background(), `SELECT holder FROM loadnode.owners WHERE owner = 'node-1'`).Scan(&h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	commit := func(from, to int64) error {
		return a.Commit(&sink.Commit{JobID: 1, Fence: 1, Ranges: []sink.Range{{Partition: 0, From: from, To: to}}})
	}
	exec(`UPDATE loadnode.owners SET incarnation = 0, holder = 'from-the-dump'`)
	if err := commit(0, 5); err != nil {
		t.Fatalf("commit after the owner's row went back: %v", err)
	}
	if h := holder(); h != "proc-a" {
		t.Fatalf("holder %q after the commit, want proc-a", h)
	}
	exec(`DELETE FROM loadnode.owners`)
	if err := a.ResetStarts(1, map[int32]int64{0: 5}, nil); err != nil {
		t.Fatalf("reset after the owner's row went: %v", err)
	}
	if h := holder(); h != "proc-a" {
		t.Fatalf("holder %q after the reset, want proc-a", h)
	}
	// A later claim in the restored database still wins.
	exec(`UPDATE loadnode.owners SET incarnation = incarnation + 1, holder = 'proc-b'`)
	if err := commit(5, 6); !errors.Is(err, sink.ErrSuperseded) {
		t.Fatalf("commit after a later claim: %v, want ErrSuperseded", err)
	}
}

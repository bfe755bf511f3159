package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// TestCommitLeavesConnectionIdle: a commit is three pipelines on one
// pooled connection (BEGIN with the checks, the COPY, the progress writes
// with COMMIT). With one connection in the pool, commits refused by each
// step (a range that does not start at the stored progress, an older
// fence, a statistics base that is not the stored one, a COPY that fails)
// leave it out of any transaction, having written nothing, and the next
// commit goes through; a replayed key (the COPY's unique violation) is
// committed by the upsert attempt on the same connection.
func TestCommitLeavesConnectionIdle(t *testing.T) {
	needServer(t)
	s, err := Open(Options{DSN: server.CreateDatabase(t), MaxConns: 1, Incarnation: "one-conn"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	sp := spec("idle", col("n", api.ColumnType_INT64))
	sc, err := table.NewSchema(sp)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PrepareTable(sp); err != nil {
		t.Fatal(err)
	}
	if err := s.InitStarts(1, map[int32]int64{0: 0}, nil); err != nil {
		t.Fatal(err)
	}
	rows := func(from, n int64) []sink.KV {
		kvs := make([]sink.KV, n)
		for i := range n {
			pos := table.Pos{JobID: 1, Partition: 0, Offset: from + i}
			vals := []table.Value{{Int: from + i}}
			kvs[i] = sink.KV{Key: table.AppendKey(nil, api.TableModel_DUPLICATE, pos, vals), Value: table.AppendValue(nil, sc, pos, vals)}
		}
		return kvs
	}
	batches := int64(0)
	commit := func(from, to int64, fence uint64, base int64, kvs []sink.KV) error {
		return s.Commit(&sink.Commit{JobID: 1, Table: "idle", Fence: fence, Rows: kvs,
			Ranges:    []sink.Range{{Partition: 0, From: from, To: to}},
			Stats:     &api.JobStats{CommittedBatches: base + 1, LoadedRows: to},
			StatsBase: base})
	}
	idle := func(step string) {
		t.Helper()
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		defer c.Release()
		if st := c.Conn().PgConn().TxStatus(); st != 'I' {
			t.Errorf("%s: the pooled connection is in transaction status %q, want idle", step, st)
		}
	}
	check := func(step string, want int64) {
		t.Helper()
		idle(step)
		var n int64
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM idle`).Scan(&n); err != nil || n != want {
			t.Errorf("%s: %d rows (%v), want %d", step, n, err, want)
		}
		if p, err := s.Progress(1); err != nil || p.Positions[0] != want {
			t.Errorf("%s: progress %+v (%v), want %d", step, p, err, want)
		}
	}
	if err := commit(0, 10, 1, batches, rows(0, 10)); err != nil {
		t.Fatal(err)
	}
	batches++
	check("first commit", 10)
	for _, c := range []struct {
		name     string
		from, to int64
		fence    uint64
		base     int64
	}{
		{name: "stale range", from: 5, to: 20, fence: 1, base: batches},
		{name: "older fence", from: 10, to: 20, fence: 0, base: batches},
		{name: "stale statistics base", from: 10, to: 20, fence: 1, base: batches + 3},
	} {
		if err := commit(c.from, c.to, c.fence, c.base, rows(c.from, c.to-c.from)); !errors.Is(err, sink.ErrStaleCommit) {
			t.Errorf("%s: commit = %v, want ErrStaleCommit", c.name, err)
		}
		check(c.name, 10)
	}
	// A constraint the rows break: the COPY fails after the checks.
	exec(t, s, `ALTER TABLE idle ADD CONSTRAINT small CHECK (n < 15)`)
	if err := commit(10, 20, 1, batches, rows(10, 10)); err == nil {
		t.Error("a commit whose COPY breaks a constraint succeeded")
	}
	check("failed COPY", 10)
	exec(t, s, `ALTER TABLE idle DROP CONSTRAINT small`)
	// Rows 5..9 again with 10..19 (a replay after a reset writes keys
	// stored already): the upsert attempt commits them.
	if err := commit(10, 20, 1, batches, append(rows(5, 5), rows(10, 10)...)); err != nil {
		t.Fatalf("replayed keys: %v", err)
	}
	batches++
	check("replayed keys", 20)
	if err := commit(20, 30, 1, batches, rows(20, 10)); err != nil {
		t.Fatal(err)
	}
	check("last commit", 30)
}

package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// TestCommitGroup: commits of different jobs in one group transaction
// land as each would alone; one refused commit (a stale range, a replayed
// key) gets its own answer and the others still land; concurrent small
// commits of many jobs all land, each once.
func TestCommitGroup(t *testing.T) {
	s, _ := open(t, false)
	ctx := context.Background()
	sp := spec("grouped", col("n", api.ColumnType_INT64))
	sc, err := table.NewSchema(sp)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PrepareTable(sp); err != nil {
		t.Fatal(err)
	}
	rows := func(job uint64, from, n int64) []sink.KV {
		kvs := make([]sink.KV, n)
		for i := range n {
			pos := table.Pos{JobID: job, Partition: 0, Offset: from + i}
			vals := []table.Value{{Int: int64(job)*1000 + from + i}}
			kvs[i] = sink.KV{Key: table.AppendKey(nil, api.TableModel_DUPLICATE, pos, vals), Value: table.AppendValue(nil, sc, pos, vals)}
		}
		return kvs
	}
	commit := func(job uint64, from, to int64, kvs []sink.KV) *sink.Commit {
		return &sink.Commit{JobID: job, Table: "grouped", Fence: 1, Rows: kvs,
			Ranges:    []sink.Range{{Partition: 0, From: from, To: to}},
			Stats:     &api.JobStats{CommittedBatches: 1, LoadedRows: to - from},
			StatsBase: 0}
	}
	count := func(job uint64) (n int64) {
		t.Helper()
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM grouped WHERE n / 1000 = $1`, int64(job)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for job := uint64(1); job <= 4; job++ {
		if err := s.InitStarts(job, map[int32]int64{0: 0}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Job 4 has rows 0..4 stored already (a replay after a reset writes
	// them again).
	if err := s.Commit(commit(4, 0, 5, rows(4, 0, 5))); err != nil {
		t.Fatal(err)
	}
	group := func(cs ...*sink.Commit) []error {
		var calls []*commitCall
		for _, c := range cs {
			writes, err := s.tableWrites(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if !groupable(c, writes) {
				t.Fatalf("job %d's commit is not groupable", c.JobID)
			}
			calls = append(calls, &commitCall{c: c, writes: writes, done: make(chan error, 1)})
		}
		s.writeCommits(calls)
		errs := make([]error, len(calls))
		for i, c := range calls {
			errs[i] = <-c.done
		}
		return errs
	}
	// Job 2's range does not start at its stored position; job 4 replays
	// rows 0..4 with 5..9 and is based on its one committed batch.
	c4 := commit(4, 5, 10, append(rows(4, 0, 5), rows(4, 5, 5)...))
	c4.Stats, c4.StatsBase = &api.JobStats{CommittedBatches: 2, LoadedRows: 10}, 1
	errs := group(commit(3, 0, 7, rows(3, 0, 7)), commit(1, 0, 3, rows(1, 0, 3)), commit(2, 4, 6, rows(2, 4, 2)), c4)
	for i, want := range []error{nil, nil, sink.ErrStaleCommit, nil} {
		if (want == nil) != (errs[i] == nil) || (want != nil && !errors.Is(errs[i], want)) {
			t.Errorf("call %d: %v, want %v", i, errs[i], want)
		}
	}
	for job, want := range map[uint64]int64{1: 3, 2: 0, 3: 7, 4: 10} {
		if n := count(job); n != want {
			t.Errorf("job %d: %d rows, want %d", job, n, want)
		}
		p, err := s.Progress(job)
		if err != nil {
			t.Fatal(err)
		}
		if wantPos := map[uint64]int64{1: 3, 2: 0, 3: 7, 4: 10}[job]; p.Positions[0] != wantPos {
			t.Errorf("job %d: position %d, want %d", job, p.Positions[0], wantPos)
		}
	}
	// Job 1's next commit claims to be based on no committed batch (it has
	// one): refused alone, and job 2's first commit lands.
	errs = group(commit(2, 0, 2, rows(2, 0, 2)), commit(1, 3, 5, rows(1, 3, 2)))
	if errs[0] != nil || !errors.Is(errs[1], sink.ErrStaleCommit) {
		t.Errorf("jobs 2 and 1: %v, %v; want nil, ErrStaleCommit", errs[0], errs[1])
	}
	if n1, n2 := count(1), count(2); n1 != 3 || n2 != 2 {
		t.Errorf("jobs 1 and 2: %d and %d rows, want 3 and 2", n1, n2)
	}

	// Two tables: job 5 writes both (a multi-table commit), job 6 the
	// first; one COPY per table carries both jobs' rows.
	sp2 := spec("grouped_b", col("n", api.ColumnType_INT64))
	if err := s.PrepareTable(sp2); err != nil {
		t.Fatal(err)
	}
	for _, job := range []uint64{5, 6} {
		if err := s.InitStarts(job, map[int32]int64{0: 0}, nil); err != nil {
			t.Fatal(err)
		}
	}
	c5 := commit(5, 0, 6, rows(5, 0, 3))
	c5.More = []sink.TableRows{{Table: "grouped_b", Rows: rows(5, 3, 3)}}
	if errs := group(c5, commit(6, 0, 2, rows(6, 0, 2))); errs[0] != nil || errs[1] != nil {
		t.Fatalf("jobs 5 and 6: %v, %v", errs[0], errs[1])
	}
	var inB int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM grouped_b WHERE n / 1000 = 5`).Scan(&inB); err != nil || inB != 3 {
		t.Errorf("job 5: %d rows in grouped_b (%v), want 3", inB, err)
	}
	if n5, n6 := count(5), count(6); n5 != 3 || n6 != 2 {
		t.Errorf("jobs 5 and 6: %d and %d rows in grouped, want 3 and 2", n5, n6)
	}

	// Many jobs at once through Commit: every one lands once.
	const first, n = 100, 80
	for job := uint64(first); job < first+n; job++ {
		if err := s.InitStarts(job, map[int32]int64{0: 0}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for job := uint64(first); job < first+n; job++ {
		wg.Go(func() {
			if err := s.Commit(commit(job, 0, 4, rows(job, 0, 4))); err != nil {
				t.Errorf("job %d: %v", job, err)
			}
		})
	}
	wg.Wait()
	if !s.commits.Idle() {
		t.Error("the commit group is not idle after every commit answered")
	}
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM grouped WHERE n / 1000 >= $1`, int64(first)).Scan(&total); err != nil || total != 4*n {
		t.Errorf("%d rows of the concurrent jobs (%v), want %d", total, err, 4*n)
	}
}

package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loadnode/loadnode/sink"
)

// TestInitStartsGroup: one group's transaction writes the starts (and
// checkpoints) of every job without progress and refuses, writing
// nothing for it, a job whose partition has some; concurrent calls of
// many jobs each get their own answer and their own positions.
func TestInitStartsGroup(t *testing.T) {
	s, _ := open(t, false)
	if err := s.InitStarts(1, map[int32]int64{0: 5}, nil); err != nil {
		t.Fatal(err)
	}
	call := func(job int64, pos map[int32]int64, cks map[int32][]byte) *startsCall {
		parts := make([]int32, 0, len(pos))
		for p := range pos {
			parts = append(parts, p)
		}
		slices.Sort(parts)
		return &startsCall{job: job, parts: parts, positions: pos, checkpoints: cks}
	}
	batch := []*startsCall{
		call(3, map[int32]int64{0: 30, 1: 31}, map[int32][]byte{1: []byte("ck31")}),
		call(1, map[int32]int64{0: 10, 1: 11}, nil), // partition 0 has progress
		call(2, map[int32]int64{0: 20}, nil),
		call(4, map[int32]int64{}, nil),
	}
	errs := s.initStartsGroup(batch)
	for i, c := range batch {
		if c.job == 1 {
			if !errors.Is(errs[i], sink.ErrProgressExists) {
				t.Errorf("job 1: %v, want ErrProgressExists", errs[i])
			}
		} else if errs[i] != nil {
			t.Errorf("job %d: %v", c.job, errs[i])
		}
	}
	for _, want := range []struct {
		job uint64
		pos map[int32]int64
		ck  map[int32]string
	}{
		{1, map[int32]int64{0: 5}, nil},
		{2, map[int32]int64{0: 20}, nil},
		{3, map[int32]int64{0: 30, 1: 31}, map[int32]string{1: "ck31"}},
		{4, map[int32]int64{}, nil},
	} {
		p, err := s.Progress(want.job)
		if err != nil {
			t.Fatalf("progress of job %d: %v", want.job, err)
		}
		if fmt.Sprint(p.Positions) != fmt.Sprint(want.pos) {
			t.Errorf("job %d: positions %v, want %v", want.job, p.Positions, want.pos)
		}
		got := map[int32]string{}
		for k, v := range p.Checkpoints {
			got[k] = string(v)
		}
		if !maps.Equal(got, want.ck) {
			t.Errorf("job %d: checkpoints %v, want %v", want.job, got, want.ck)
		}
	}
	// Every job refused: nothing written, no error but each job's.
	errs = s.initStartsGroup([]*startsCall{call(2, map[int32]int64{0: 1}, nil), call(3, map[int32]int64{1: 1}, nil)})
	for i, err := range errs {
		if !errors.Is(err, sink.ErrProgressExists) {
			t.Errorf("call %d of an all-refused group: %v, want ErrProgressExists", i, err)
		}
	}

	var wg sync.WaitGroup
	const n = 60
	for job := uint64(100); job < 100+n; job++ {
		wg.Go(func() {
			if err := s.InitStarts(job, map[int32]int64{0: int64(job), 1: int64(job) + 1}, nil); err != nil {
				t.Errorf("job %d: %v", job, err)
			}
		})
	}
	wg.Wait()
	for job := uint64(100); job < 100+n; job++ {
		p, err := s.Progress(job)
		if err != nil || p.Positions[0] != int64(job) || p.Positions[1] != int64(job)+1 {
			t.Errorf("job %d: progress %v, %v", job, p, err)
		}
	}
	if err := s.InitStarts(100, map[int32]int64{1: 0}, nil); !errors.Is(err, sink.ErrProgressExists) {
		t.Errorf("job 100 again: %v, want ErrProgressExists", err)
	}
	if !s.starts.Idle() {
		t.Error("after the calls: a group is still queued or being written")
	}
}

// TestManyJobStatementsPlanCustom: the statements that take many jobs at
// once (InitStarts' and ClaimJobs') are planned for their arguments at
// every execution (customPlans), never with the generic plan PostgreSQL
// switches a prepared statement to after five executions: made while the
// tables were nearly empty, that plan read every job of the owner at each
// call. Checked on the pool's one connection, whose prepared statements
// count their generic and custom plans.
func TestManyJobStatementsPlanCustom(t *testing.T) {
	needServer(t)
	s, err := Open(Options{DSN: server.CreateDatabase(t), MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const calls = 12
	for job := uint64(1); job <= calls; job++ {
		if err := s.InitStarts(job, map[int32]int64{0: 0, 1: 0}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ClaimJobs(map[uint64]uint64{job: 1}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	rows, err := s.pool.Query(ctx, `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var stmt string
		var generic, custom int64
		if err := rows.Scan(&stmt, &generic, &custom); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stmt, "ANY($1)") && !strings.Contains(stmt, "unnest($1::bigint[], $2::bigint[])") {
			continue
		}
		seen++
		if generic > 0 || custom < calls {
			t.Errorf("%d generic and %d custom plans, want 0 and %d: %s", generic, custom, calls, strings.Join(strings.Fields(stmt), " "))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen < 4 {
		t.Fatalf("found %d of the 4 many-job statements among the connection's prepared statements", seen)
	}
}

package postgres

import (
	"errors"
	"fmt"
	"maps"
	"slices"
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

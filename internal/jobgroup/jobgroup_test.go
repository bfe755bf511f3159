package jobgroup

import (
	"slices"
	"sync"
	"testing"
)

// TestTake: at most max calls, of distinct jobs, oldest first; the rest
// stay in order.
func TestTake(t *testing.T) {
	var pending []entry[int]
	for i, job := range []uint64{1, 2, 1, 3, 4, 2, 5} {
		pending = append(pending, entry[int]{job, i})
	}
	jobs := func(es []entry[int]) (out []uint64) {
		for _, e := range es {
			out = append(out, e.job)
		}
		return out
	}
	if got := take(&pending, 4); !slices.Equal(got, []int{0, 1, 3, 4}) || !slices.Equal(jobs(pending), []uint64{1, 2, 5}) {
		t.Errorf("took calls %v, left jobs %v; want [0 1 3 4], [1 2 5]", got, jobs(pending))
	}
	if got := take(&pending, 4); !slices.Equal(got, []int{2, 5, 6}) || len(pending) != 0 {
		t.Errorf("took calls %v, left jobs %v; want [2 5 6], []", got, jobs(pending))
	}
}

// TestGroupConcurrent: the calls of many goroutines, three per job, are
// each run exactly once, in groups of at most max calls of distinct jobs;
// afterwards the group is idle.
func TestGroupConcurrent(t *testing.T) {
	type call struct {
		job  uint64
		id   int
		done chan struct{}
	}
	const jobs, perJob, calls, max = 8, 3, 40, 5
	var g Group[*call]
	var mu sync.Mutex
	runs := map[int]int{}
	run := func(batch []*call) {
		if len(batch) == 0 || len(batch) > max {
			t.Errorf("a group of %d calls", len(batch))
		}
		seen := map[uint64]bool{}
		mu.Lock()
		for _, c := range batch {
			if seen[c.job] {
				t.Errorf("job %d twice in one group", c.job)
			}
			seen[c.job] = true
			runs[c.id]++
		}
		mu.Unlock()
		for _, c := range batch {
			close(c.done)
		}
	}
	var wg sync.WaitGroup
	for w := range jobs * perJob {
		wg.Go(func() {
			for i := range calls {
				c := &call{job: uint64(w % jobs), id: w*calls + i, done: make(chan struct{})}
				g.Add(c.job, c, max, run)
				<-c.done
			}
		})
	}
	wg.Wait()
	if len(runs) != jobs*perJob*calls {
		t.Errorf("%d calls run, want %d", len(runs), jobs*perJob*calls)
	}
	for id, n := range runs {
		if n != 1 {
			t.Errorf("call %d run %d times", id, n)
		}
	}
	if !g.Idle() {
		t.Error("not idle after every call was answered")
	}
}

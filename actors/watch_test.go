package actors

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
)

// watchSource is a quietSource that is a Watcher and counts the job's own
// look-ups (watermarks and partitions).
type watchSource struct {
	quietSource
	looks, partLooks atomic.Int64

	mu       sync.Mutex
	marks    map[int32]int64
	watchers map[int]func(map[int32]int64, error)
	next     int
}

func (s *watchSource) Partitions(context.Context) ([]int32, error) {
	s.partLooks.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.parts), nil
}

func (s *watchSource) Watermarks(context.Context) (map[int32]int64, error) {
	s.looks.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.marks), nil
}

func (s *watchSource) Watch(fn func(map[int32]int64, error)) func() {
	s.mu.Lock()
	s.next++
	id := s.next
	s.watchers[id] = fn
	m := maps.Clone(s.marks)
	s.mu.Unlock()
	fn(m, nil)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.watchers, id)
	}
}

// set reports new watermarks to the watchers; a partition new to marks is
// added to the topic.
func (s *watchSource) set(m map[int32]int64) {
	s.mu.Lock()
	s.marks = m
	for p := range m {
		if !slices.Contains(s.parts, p) {
			s.parts = append(s.parts, p)
		}
	}
	fns := make([]func(map[int32]int64, error), 0, len(s.watchers))
	for _, fn := range s.watchers {
		fns = append(fns, fn)
	}
	s.mu.Unlock()
	for _, fn := range fns {
		fn(maps.Clone(m), nil)
	}
}

func (s *watchSource) watching() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watchers)
}

// TestIdleJobWatches: an idle job of a Watcher source makes no look-ups
// and runs no timers of its own; when the source reports new data it
// spawns tasks and goes back to its timers.
func TestIdleJobWatches(t *testing.T) {
	src := &watchSource{quietSource: quietSource{parts: []int32{0, 1}},
		marks: map[int32]int64{0: 0, 1: 0}, watchers: map[int]func(map[int32]int64, error){}}
	h := newHarnessWith(t, vfs.NewMem(), src, Settings{
		WatermarkInterval: 10 * time.Millisecond, TopologyInterval: 10 * time.Millisecond,
	})
	id, _ := h.create("idle")
	h.waitState(h.jobPID(id), api.JobState_RUNNING)
	poll(t, 5*time.Second, func() (bool, string) {
		return src.watching() == 1, fmt.Sprintf("%d watchers, want the idle job", src.watching())
	})
	// A look-up started just before the watch may still land: start
	// counting once the counts stand still between two polls.
	var looks, parts int64 = -1, -1
	poll(t, 5*time.Second, func() (bool, string) {
		l, p := src.looks.Load(), src.partLooks.Load()
		still := l == looks && p == parts
		looks, parts = l, p
		return still, "the look-ups never stopped"
	})
	// Polling every 10 ms would make about 30 look-ups of each kind here.
	holds(t, 300*time.Millisecond, func() (bool, string) {
		l, p := src.looks.Load()-looks, src.partLooks.Load()-parts
		return l == 0 && p == 0, fmt.Sprintf("a watching idle job made %d watermark and %d partition look-ups", l, p)
	})
	// A partition added to the topic reaches the watching job through its
	// source, and its start is persisted (topology follows progress).
	src.set(map[int32]int64{0: 0, 1: 0, 2: 0})
	poll(t, 5*time.Second, func() (bool, string) {
		in := h.ask(h.jobPID(id), &InspectJob{}).(*JobRuntime)
		st, err := h.store.LoadJob(id)
		if err != nil {
			return false, err.Error()
		}
		_, mem := in.Progress[2]
		_, durable := st.Progress[2]
		return mem && durable, fmt.Sprintf("new partition 2: known %v, persisted %v", mem, durable)
	})
	poll(t, 5*time.Second, func() (bool, string) {
		return src.watching() == 1, fmt.Sprintf("%d watchers after the new partition, want the idle job", src.watching())
	})
	show := func() *api.JobInfo {
		return h.ask(h.mgr, &api.ShowJobRequest{Name: "idle"}).(*api.JobResponse).GetJob()
	}
	if info := show(); info.GetRunningTasks() != 0 {
		t.Fatalf("idle job has %d tasks", info.GetRunningTasks())
	}

	src.set(map[int32]int64{0: 5, 1: 0})
	poll(t, 5*time.Second, func() (bool, string) {
		info := show()
		return info.GetRunningTasks() > 0 && src.watching() == 0,
			fmt.Sprintf("after new data: %d tasks, %d watchers", info.GetRunningTasks(), src.watching())
	})
	// Back to its timers.
	poll(t, 5*time.Second, func() (bool, string) {
		n := src.looks.Load() - looks
		return n >= 3, fmt.Sprintf("%d look-ups since the job stopped watching", n)
	})
}

// TestJobHoldsOnlyPendingTimers: a job that has fired many timers holds
// only the pending ones (it once kept up to 64 fired timers per job).
func TestJobHoldsOnlyPendingTimers(t *testing.T) {
	h := newHarnessWith(t, vfs.NewMem(), &quietSource{parts: []int32{0}}, Settings{
		WatermarkInterval: 2 * time.Millisecond, TopologyInterval: 2 * time.Millisecond,
	})
	_, pid := h.create("ticking")
	h.waitState(pid, api.JobState_RUNNING)
	// Over 300 ms the job fires ~150 watermark and ~150 topology timers.
	holds(t, 300*time.Millisecond, func() (bool, string) {
		n := h.ask(pid, &InspectJob{}).(*JobRuntime).Timers
		return n <= 4, fmt.Sprintf("the job holds %d timers", n)
	})
}

// TestAlterMovesTheWatch: new client properties give a watching idle job a
// new source; the watch moves to it (the old source's poller may stop with
// the old source) and new data on it still wakes the job.
func TestAlterMovesTheWatch(t *testing.T) {
	var mu sync.Mutex
	var opened []*watchSource
	open := func(*api.JobSpec) (Source, error) {
		mu.Lock()
		defer mu.Unlock()
		src := &watchSource{quietSource: quietSource{parts: []int32{0}},
			marks: map[int32]int64{0: 0}, watchers: map[int]func(map[int32]int64, error){}}
		opened = append(opened, src)
		return adapt(src), nil
	}
	nth := func(i int) *watchSource {
		mu.Lock()
		defer mu.Unlock()
		if i >= len(opened) {
			return nil
		}
		return opened[i]
	}
	h := newHarnessSources(t, vfs.NewMem(), open, Settings{
		WatermarkInterval: 10 * time.Millisecond, TopologyInterval: 10 * time.Millisecond,
	}, nil)
	spec := testSpec("altered")
	resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: spec}).(*api.JobResponse)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	h.waitState(h.jobPID(resp.Job.Summary.Id), api.JobState_RUNNING)
	poll(t, 5*time.Second, func() (bool, string) {
		return nth(0).watching() == 1, "the idle job does not watch its source"
	})
	spec.Kafka.Properties = map[string]string{"client.id": "altered"}
	if r := h.ask(h.mgr, &api.AlterJobRequest{Name: "altered", Spec: spec}).(*api.JobResponse); r.Error != nil {
		t.Fatal(r.Error)
	}
	poll(t, 5*time.Second, func() (bool, string) {
		second := nth(1)
		return second != nil && second.watching() == 1 && nth(0).watching() == 0,
			fmt.Sprintf("after the alter: old source %d watchers, new source %v", nth(0).watching(), second)
	})
	nth(1).set(map[int32]int64{0: 3})
	poll(t, 5*time.Second, func() (bool, string) {
		info := h.ask(h.mgr, &api.ShowJobRequest{Name: "altered"}).(*api.JobResponse).GetJob()
		return info.GetRunningTasks() > 0, "new data on the new source did not wake the job"
	})
}

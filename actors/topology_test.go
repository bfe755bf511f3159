package actors

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/sources"
)

// durableStartSource starts partition p at offset 10+p, and checks, each
// time a task opens a reader, that every start it is given is durable in
// the sink at that offset.
type durableStartSource struct {
	store atomic.Pointer[persistence.Store]

	mu         sync.Mutex
	parts      []int32
	read       map[int32]bool // partitions a reader was opened for
	violations []string
	// opened gets a value each time a reader was opened (after its
	// check), without blocking.
	opened chan struct{}
}

func (s *durableStartSource) Partitions(context.Context) ([]int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.parts), nil
}

func (s *durableStartSource) ResolveStarts(_ context.Context, want map[int32]string, _ bool) (map[int32]sources.Start, error) {
	out := map[int32]sources.Start{}
	for p := range want {
		out[p] = sources.Start{Offset: 10 + int64(p)}
	}
	return out, nil
}

func (s *durableStartSource) Watermarks(context.Context) (map[int32]int64, error) { return nil, nil }

func (s *durableStartSource) NewReader(start map[int32]sources.Start) (sources.Reader, error) {
	var bad []string
	st := s.store.Load()
	id, err := st.LastJobID() // the only job: its create is durable before it runs
	var prog *sink.Progress
	if err == nil {
		prog, err = st.Sink().Progress(id)
	}
	if err != nil {
		bad = append(bad, fmt.Sprintf("read progress: %v", err))
	}
	for p, o := range start {
		if prog == nil {
			break
		}
		if got, ok := prog.Positions[p]; !ok || got != o.Offset {
			bad = append(bad, fmt.Sprintf("reader opened for partition %d at %d; durable: %d (present %v)", p, o.Offset, got, ok))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = append(s.violations, bad...)
	for p := range start {
		s.read[p] = true
	}
	select {
	case s.opened <- struct{}{}:
	default:
	}
	return quietReader{}, nil
}

func (s *durableStartSource) Close() {}

func (s *durableStartSource) add(p int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.parts = append(s.parts, p)
}

func (s *durableStartSource) state() (read []int32, violations []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.read {
		read = append(read, p)
	}
	slices.Sort(read)
	return read, slices.Clone(s.violations)
}

// slowInitSink holds back initial positions until a reader is opened (or
// 50ms pass, when none is): a task given a partition before its start is
// durable then always opens its reader first, and the source records it.
type slowInitSink struct {
	sink.Sink
	src *durableStartSource
}

func (s slowInitSink) InitStarts(job uint64, pos map[int32]int64, cks map[int32][]byte) error {
	select { // readers opened before this write are not the ones it holds back for
	case <-s.src.opened:
	default:
	}
	select {
	case <-s.src.opened:
	case <-time.After(50 * time.Millisecond):
	}
	return s.Sink.InitStarts(job, pos, cks)
}

// TestTopologyFollowsProgress: no task reads a partition before the
// partition's start is durable in the sink: neither the partitions the job
// starts with nor one added while it runs.
func TestTopologyFollowsProgress(t *testing.T) {
	src := &durableStartSource{parts: []int32{0, 1}, read: map[int32]bool{}, opened: make(chan struct{}, 1)}
	h := newHarnessStore(t, vfs.NewMem(), src, Settings{TopologyInterval: 10 * time.Millisecond},
		func(st *persistence.Store) sink.Sink { return slowInitSink{Sink: st.Sink(), src: src} })
	src.store.Store(h.store)
	spec := testSpec("durable")
	spec.DesiredConcurrentNumber = 3
	resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: spec}).(*api.JobResponse)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	wait := func(want []int32) {
		t.Helper()
		poll(t, 10*time.Second, func() (bool, string) {
			read, bad := src.state()
			if len(bad) > 0 {
				t.Fatalf("a task read before its start was durable: %v", bad)
			}
			return slices.Equal(read, want), fmt.Sprintf("readers opened for %v, want %v", read, want)
		})
	}
	wait([]int32{0, 1})
	src.add(2)
	wait([]int32{0, 1, 2})
	if _, bad := src.state(); len(bad) > 0 {
		t.Fatalf("a task read before its start was durable: %v", bad)
	}
	in := h.ask(h.jobPID(resp.Job.Summary.Id), &InspectJob{}).(*JobRuntime)
	if want := map[int32]int64{0: 10, 1: 11, 2: 12}; fmt.Sprint(in.Progress) != fmt.Sprint(want) {
		t.Fatalf("job progress %v, want %v", in.Progress, want)
	}
}

// gatedSource is quietSource whose first partition listing waits until
// gate is closed, telling entered when it started.
type gatedSource struct {
	quietSource
	once    sync.Once
	entered chan struct{}
	gate    chan struct{}
}

func (s *gatedSource) Partitions(ctx context.Context) ([]int32, error) {
	first := false
	s.once.Do(func() { first = true })
	if first {
		close(s.entered)
		select {
		case <-s.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.quietSource.Partitions(ctx)
}

// A job paused and resumed while its first topology look-up is still out
// gets scheduled once that look-up answers: the answer belongs to the
// epoch before the pause and is dropped, and the resume's own look-up,
// refused while the first one was out, runs then. The job stayed in
// NEED_SCHEDULE for good (a MySQL e2e test under two CPU hogs: PAUSE and
// RESUME right after CREATE).
func TestTopologyLookupAcrossPauseResume(t *testing.T) {
	src := &gatedSource{quietSource: quietSource{parts: []int32{0}}, entered: make(chan struct{}), gate: make(chan struct{})}
	h := newHarnessWith(t, vfs.NewMem(), src, Settings{})
	_, pid := h.create("gated")
	select {
	case <-src.entered:
	case <-time.After(10 * time.Second): // a hang guard, not a timing
		t.Fatal("the job never looked its topology up")
	}
	if resp := h.ask(h.mgr, &api.PauseJobRequest{Name: "gated"}).(*api.JobResponse); resp.Error != nil {
		t.Fatal(resp.Error)
	}
	if resp := h.ask(h.mgr, &api.ResumeJobRequest{Name: "gated"}).(*api.JobResponse); resp.Error != nil {
		t.Fatal(resp.Error)
	}
	h.waitState(pid, api.JobState_NEED_SCHEDULE)
	close(src.gate)
	h.waitState(pid, api.JobState_RUNNING)
}

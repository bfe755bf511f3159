package actors

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cockroachdb/pebble/v2/vfs"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
)

// countingMeta counts CreateJobs calls and the jobs each carried; the
// first call waits for open to be closed, so that a burst of creates
// queues behind it.
type countingMeta struct {
	metastore.Store
	open chan struct{}

	mu    sync.Mutex
	calls []int // jobs per CreateJobs call, in call order
}

func (m *countingMeta) CreateJobs(jobs []metastore.NewJob) []error {
	m.mu.Lock()
	first := len(m.calls) == 0
	m.calls = append(m.calls, len(jobs))
	m.mu.Unlock()
	if first {
		<-m.open
	}
	return m.Store.CreateJobs(jobs)
}

func (m *countingMeta) counts() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int(nil), m.calls...)
}

// TestCreatesWrittenTogether: creates that arrive while a create write is
// in flight are written together, in one CreateJobs call, and each still
// gets its own answer and its job.
func TestCreatesWrittenTogether(t *testing.T) {
	const n = 20
	cm := &countingMeta{open: make(chan struct{})}
	open := func(*api.JobSpec) (Source, error) { return adapt(&quietSource{parts: []int32{0}}), nil }
	h := newHarnessOpts(t, vfs.NewMem(), open, Settings{}, harnessOpts{
		meta: func(s metastore.Store) metastore.Store { cm.Store = s; return cm },
	})
	futures := make([]*actor.Future, n)
	for i := range futures {
		futures[i] = h.system.Root.RequestFuture(h.mgr, &api.CreateJobRequest{Spec: testSpec(fmt.Sprintf("burst%02d", i))}, 10*time.Second)
	}
	// The manager answers in mailbox order: once it has answered this,
	// every create of the burst is validated and queued.
	h.ask(h.mgr, &api.ListJobsRequest{})
	close(cm.open)
	for i, f := range futures {
		res, err := f.Result()
		if err != nil {
			t.Fatalf("create burst%02d: %v", i, err)
		}
		if r := res.(*api.JobResponse); r.Error != nil {
			t.Fatalf("create burst%02d: %v", i, r.Error)
		}
	}
	calls := cm.counts()
	jobs, most := 0, 0
	for _, c := range calls {
		jobs += c
		most = max(most, c)
	}
	if jobs != n {
		t.Fatalf("CreateJobs wrote %d jobs in %v, want %d", jobs, calls, n)
	}
	if len(calls) >= n || most < 2 {
		t.Fatalf("%d creates took %d CreateJobs calls (jobs per call %v): not written together", n, len(calls), calls)
	}
	if l := h.ask(h.mgr, &api.ListJobsRequest{}).(*api.ListJobsResponse); len(l.Jobs) != n {
		t.Fatalf("%d jobs listed, want %d", len(l.Jobs), n)
	}
}

// loadCountingMeta counts LoadJob calls per job.
type loadCountingMeta struct {
	metastore.Store

	mu    sync.Mutex
	loads map[uint64]int
}

func (m *loadCountingMeta) LoadJob(id uint64) (*metastore.JobState, error) {
	m.mu.Lock()
	m.loads[id]++
	m.mu.Unlock()
	return m.Store.LoadJob(id)
}

func (m *loadCountingMeta) count(id uint64) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.loads[id]
}

// TestCreatedJobStartsFromItsWrite: a created job's actor starts from the
// record the manager has just written and keeps in its registry (one copy
// in memory, not a second read back from the store), asks for admission
// at once (it is not held like a respawned job), and an actor restarted
// by its supervisor reads its state from the store again.
func TestCreatedJobStartsFromItsWrite(t *testing.T) {
	lm := &loadCountingMeta{loads: map[uint64]int{}}
	open := func(*api.JobSpec) (Source, error) { return adapt(&quietSource{parts: []int32{0}}), nil }
	h := newHarnessOpts(t, vfs.NewMem(), open, Settings{}, harnessOpts{
		meta: func(s metastore.Store) metastore.Store { lm.Store = s; return lm },
	})
	id, pid := h.create("fresh")
	h.waitState(pid, api.JobState_RUNNING)
	if n := lm.count(id); n != 0 {
		t.Fatalf("the created job read its state from the store %d times, want 0 (it has the record just written)", n)
	}
	h.system.Root.Send(pid, &Crash{Reason: "test"})
	poll(t, 10*time.Second, func() (bool, string) {
		n := lm.count(id)
		return n >= 1, fmt.Sprintf("%d loads after the crash, want the restarted actor to reload", n)
	})
	h.waitState(pid, api.JobState_RUNNING)
}

// syncCountFS counts the syncs of every file opened for writing.
type syncCountFS struct {
	vfs.FS
	syncs atomic.Int64
}

func (fs *syncCountFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &syncCountFile{File: f, fs: fs}, nil
}

func (fs *syncCountFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.Create(name, c))
}

func (fs *syncCountFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return fs.wrap(fs.FS.OpenReadWrite(name, c, opts...))
}

func (fs *syncCountFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.ReuseForWrite(oldname, newname, c))
}

type syncCountFile struct {
	vfs.File
	fs *syncCountFS
}

func (f *syncCountFile) Sync() error { f.fs.syncs.Add(1); return f.File.Sync() }

func (f *syncCountFile) SyncData() error { f.fs.syncs.Add(1); return f.File.SyncData() }

func (f *syncCountFile) SyncTo(length int64) (bool, error) {
	f.fs.syncs.Add(1)
	return f.File.SyncTo(length)
}

// TestCreateBurstSyncs: n concurrent creates are made durable in fewer
// synced writes than n, counted at the filesystem: exactly one per
// CreateJobs call on the single-node path (no other write of a create
// syncs). The jobs are never admitted (the scheduler drops their
// JobReady), so that no first schedule syncs meanwhile.
func TestCreateBurstSyncs(t *testing.T) {
	const n = 16
	fs := &syncCountFS{FS: vfs.NewMem()}
	cm := &countingMeta{open: make(chan struct{})}
	open := func(*api.JobSpec) (Source, error) { return adapt(&quietSource{parts: []int32{0}}), nil }
	noAdmission := func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			if _, ok := env.Message.(*JobReady); !ok {
				next(c, env)
			}
		}
	}
	h := newHarnessOpts(t, fs, open, Settings{}, harnessOpts{
		meta:  func(s metastore.Store) metastore.Store { cm.Store = s; return cm },
		slots: noAdmission,
	})
	before := fs.syncs.Load()
	futures := make([]*actor.Future, n)
	for i := range futures {
		futures[i] = h.system.Root.RequestFuture(h.mgr, &api.CreateJobRequest{Spec: testSpec(fmt.Sprintf("sync%02d", i))}, 10*time.Second)
	}
	h.ask(h.mgr, &api.ListJobsRequest{}) // every create is queued
	close(cm.open)
	for i, f := range futures {
		res, err := f.Result()
		if err != nil {
			t.Fatalf("create sync%02d: %v", i, err)
		}
		if r := res.(*api.JobResponse); r.Error != nil {
			t.Fatalf("create sync%02d: %v", i, r.Error)
		}
	}
	syncs, calls := fs.syncs.Load()-before, cm.counts()
	t.Logf("%d creates: %d syncs, jobs per CreateJobs call %v", n, syncs, calls)
	if syncs >= n {
		t.Fatalf("%d creates took %d syncs: not grouped", n, syncs)
	}
	if syncs != int64(len(calls)) {
		t.Fatalf("%d creates took %d syncs in %d CreateJobs calls (%v): want one sync per call", n, syncs, len(calls), calls)
	}
}

// TestLocalCreateSpecUntouched: a create sent from the manager's own actor
// system leaves the sender's spec as it was (the manager applies the
// defaults to a copy); only a request decoded from another system is taken
// as it is.
func TestLocalCreateSpecUntouched(t *testing.T) {
	open := func(*api.JobSpec) (Source, error) { return adapt(&quietSource{parts: []int32{0}}), nil }
	h := newHarnessOpts(t, vfs.NewMem(), open, Settings{}, harnessOpts{})
	spec := testSpec("untouched")
	before := proto.Clone(spec)
	resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: spec}).(*api.JobResponse)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	if !proto.Equal(spec, before) {
		t.Fatalf("the manager changed a local sender's spec: %v, was %v", spec, before)
	}
	// The answer (not encoded between local actors) carries the job's
	// record spec: it must be the manager's copy, not the sender's.
	if resp.Job.Spec == spec {
		t.Fatal("the job's record holds the local sender's spec, not a copy")
	}
}

package actors

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// oneMember is the actors' view of a cluster of one member whose
// assignments the test sets (the cluster package's own tests run the
// real membership against etcd).
type oneMember struct {
	mu     sync.Mutex
	epochs map[uint64]uint64
}

func (c *oneMember) Self() string { return "m" }
func (c *oneMember) Owner(id uint64) (string, string, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.epochs[id]
	return "m", "", e, ok
}
func (c *oneMember) Status(context.Context) (*api.ClusterStatusResponse, error) {
	return &api.ClusterStatusResponse{}, nil
}

// TestZombieOwnerFenced: a job moves to a new epoch while an actor of its
// former epoch is still alive (a frozen owner that has not noticed it lost
// the job). Once the new owner has committed, the zombie's commit is
// refused, even with current start positions and statistics: only the
// fence (the epoch in the generation's high bits) tells them apart.
func TestZombieOwnerFenced(t *testing.T) {
	cl := &oneMember{epochs: map[uint64]uint64{}}
	h := newHarnessOpts(t, vfs.NewMem(), func(*api.JobSpec) (Source, error) { return adapt(&quietSource{parts: []int32{0}}), nil },
		Settings{}, harnessOpts{cluster: cl})
	spec := testSpec("zombie")
	spec.Table.Database = "db" // cluster mode refuses the embedded store; the test's sink factory ignores it
	resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: spec}).(*api.JobResponse)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	id := resp.Job.Summary.Id
	// Created, not owned: no actor (only an owner spawns).
	if r, _ := h.system.Root.RequestFuture(h.jobPID(id), &InspectJob{}, 200*time.Millisecond).Result(); r != nil {
		t.Fatalf("a job actor exists before the job is owned: %v", r)
	}
	own := func(epoch uint64) {
		cl.mu.Lock()
		cl.epochs[id] = epoch
		cl.mu.Unlock()
		h.system.Root.Send(h.mgr, &OwnJob{ID: id, Epoch: epoch})
	}
	running := func(epoch uint64) *JobRuntime {
		t.Helper()
		var in *JobRuntime
		poll(t, 10*time.Second, func() (bool, string) {
			r, err := h.system.Root.RequestFuture(h.jobPID(id), &InspectJob{}, time.Second).Result()
			if err != nil {
				return false, err.Error()
			}
			in = r.(*JobRuntime)
			return in.State == api.JobState_RUNNING && sink.FenceEpoch(in.Generation) == epoch,
				"waiting for a RUNNING actor whose generations carry the epoch"
		})
		return in
	}
	own(5)
	in := running(5)
	schema, _ := table.NewSchema(spec.Table)
	row := func(off int64) persistence.KV {
		return oneRow(t, schema, table.Pos{JobID: id, Partition: 0, Offset: off}, off)
	}
	if res := h.ask(h.jobPID(id), &commitBatch{generation: in.Generation, ranges: []persistence.Range{{Partition: 0, From: 0, To: 1}}, rows: []persistence.KV{row(0)}, loaded: 1}).(*commitResult); res.err != nil {
		t.Fatalf("the first owner's commit: %v", res.err)
	}

	// The job moves to epoch 9: the manager replaces its actor; the new
	// owner commits.
	own(9)
	b := running(9)
	if res := h.ask(h.jobPID(id), &commitBatch{generation: b.Generation, ranges: []persistence.Range{{Partition: 0, From: 1, To: 2}}, rows: []persistence.KV{row(1)}, loaded: 1}).(*commitResult); res.err != nil {
		t.Fatalf("the new owner's commit: %v", res.err)
	}

	// A zombie of epoch 5 that loaded the current state (positions and
	// statistics match the store) tries to commit.
	zombie := h.system.Root.Spawn(newJobProps(id, h.deps, h.sch, nil, false, 5))
	var z *JobRuntime
	poll(t, 10*time.Second, func() (bool, string) {
		z = h.ask(zombie, &InspectJob{}).(*JobRuntime)
		return z.State == api.JobState_RUNNING, "zombie state " + z.State.String()
	})
	if z.Progress[0] != 2 {
		t.Fatalf("the zombie loaded progress %v, want the current 2", z.Progress)
	}
	res := h.ask(zombie, &commitBatch{generation: z.Generation, ranges: []persistence.Range{{Partition: 0, From: 2, To: 3}}, rows: []persistence.KV{row(2)}, loaded: 1}).(*commitResult)
	if !errors.Is(res.err, ErrStaleCommit) {
		t.Fatalf("the former owner's commit after the job moved = %v, want ErrStaleCommit (zombie generation %d, new owner's %d)", res.err, z.Generation, b.Generation)
	}
	if n, err := h.store.CountRows("t_zombie"); err != nil || n != 2 {
		t.Fatalf("rows = %d, %v; want 2 (the zombie's row must not be there)", n, err)
	}
}

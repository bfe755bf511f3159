package actors

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
)

// heldSource is a quiet Watcher source that counts the watermark look-ups
// made before any job stopped watching: a job held for admission after a
// recovery watches, and only polls once it is told to ask for admission
// (which ends its watch).
type heldSource struct {
	quietSource
	mu           sync.Mutex
	watches      int
	unwatched    int
	heldLookUps  int // Watermarks calls while no job had stopped watching
	totalLookUps int
}

func (s *heldSource) Watermarks(ctx context.Context) (map[int32]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.totalLookUps++
	if s.unwatched == 0 {
		s.heldLookUps++
	}
	return nil, nil
}

func (s *heldSource) Watch(fn func(map[int32]int64, error)) (stop func()) {
	s.mu.Lock()
	s.watches++
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.unwatched++
			s.mu.Unlock()
		})
	}
}

// TestRespawnAnswersBetweenBatches: after a recovery the manager answers a
// listing and a command before it has respawned every job actor (the
// respawn goes a batch per message), the command reaching a job not
// respawned yet; the respawned jobs watch their source instead of polling
// it until they are told to ask for admission; and every job is admitted.
func TestRespawnAnswersBetweenBatches(t *testing.T) {
	defer func(n int) { respawnBatch = n }(respawnBatch)
	respawnBatch = 8
	fs := vfs.NewMem()
	n := 400 // 50 batches
	if err := storeWithJobs(t, fs, "r", n).Close(); err != nil {
		t.Fatal(err)
	}

	src := &heldSource{quietSource: quietSource{parts: []int32{0}}}
	// The respawn's second batch waits until the requests below are in the
	// manager's mailbox (a respawn done at once never gets there).
	reached, release := make(chan struct{}), make(chan struct{})
	hooks := Hooks{BeforeRespawnBatch: func(batch int) {
		if batch == 1 {
			close(reached)
			<-release
		}
	}}
	h := newHarnessOpts(t, fs, func(*api.JobSpec) (Source, error) { return adapt(src), nil }, Settings{}, harnessOpts{hooks: hooks})
	select {
	case <-reached:
	case <-time.After(5 * time.Second):
	}
	// Asked in this order by one actor, which gets the manager's answers in
	// the order it sent them: the respawn's must still come after the
	// listing's.
	name := fmt.Sprintf("r%d", n)
	answers, sent := make(chan any, 3), make(chan struct{})
	h.system.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		switch msg := ctx.Message().(type) {
		case *actor.Started:
			ctx.Request(h.mgr, &AwaitRespawn{})
			ctx.Request(h.mgr, &api.ListJobsRequest{Limit: api.MaxListPage})
			ctx.Request(h.mgr, &api.ShowJobRequest{Name: name})
			close(sent)
		case *RespawnDone, *api.ListJobsResponse, *api.JobResponse:
			answers <- msg
		}
	}))
	<-sent
	close(release)
	var got []string
	var list *api.ListJobsResponse
	var show *api.JobResponse
	for range 3 {
		select {
		case a := <-answers:
			got = append(got, fmt.Sprintf("%T", a))
			switch a := a.(type) {
			case *api.ListJobsResponse:
				list = a
			case *api.JobResponse:
				show = a
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("answers so far: %v", got)
		}
	}
	// The manager answers the listing itself; the show it routes to the
	// job actor (spawned for it, its batch not reached yet), whose answer
	// may come after the manager's next ones.
	if slices.Index(got, "*api.ListJobsResponse") > slices.Index(got, "*actors.RespawnDone") {
		t.Fatalf("answers in order %v: the listing waited for the whole respawn", got)
	}
	if len(list.GetJobs()) != n {
		t.Fatalf("listing during the respawn has %d jobs, want %d", len(list.GetJobs()), n)
	}
	if show.GetError() != nil || show.GetJob().GetSummary().GetState() != api.JobState_NEED_SCHEDULE {
		t.Fatalf("show of the last job during the respawn: %v", show)
	}
	// Each job watches in its Started, which comes before what admission
	// tells it.
	poll(t, 30*time.Second, func() (bool, string) {
		src.mu.Lock()
		defer src.mu.Unlock()
		if src.heldLookUps != 0 {
			t.Fatalf("held jobs: %d watermark look-ups before any watch ended; held jobs must watch, not poll", src.heldLookUps)
		}
		return src.watches >= n, fmt.Sprintf("%d watches of %d held jobs", src.watches, n)
	})
	poll(t, 60*time.Second, func() (bool, string) {
		res := h.ask(h.mgr, &api.ListJobsRequest{Limit: api.MaxListPage}).(*api.ListJobsResponse)
		running := 0
		for _, s := range res.GetJobs() {
			if s.GetState() == api.JobState_RUNNING {
				running++
			}
		}
		return running == n, fmt.Sprintf("%d of %d jobs running", running, n)
	})
	src.mu.Lock()
	defer src.mu.Unlock()
	if src.totalLookUps == 0 {
		t.Fatal("no watermark look-up after admission: the admitted jobs do not poll")
	}
}

package node_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/node"
	"github.com/loadnode/loadnode/persistence"
)

// signalHandler is a slog handler that writes text to buf and closes hit
// when a record's message is msg.
type signalHandler struct {
	slog.Handler
	msg  string
	once *sync.Once
	hit  chan struct{}
}

func (h signalHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.hit) })
	}
	return h.Handler.Handle(ctx, r)
}

func (h signalHandler) WithAttrs(as []slog.Attr) slog.Handler {
	h.Handler = h.Handler.WithAttrs(as)
	return h
}

func (h signalHandler) WithGroup(g string) slog.Handler {
	h.Handler = h.Handler.WithGroup(g)
	return h
}

// TestStartAbandonedDuringRecovery: a start whose context ends while the
// manager is still recovering returns (and logs first) an error that says
// so, and its Close, which runs while the manager goes on reading the
// store, neither panics nor loses anything: the store reopens with every
// job. Before, Start waited a fixed 60 s whatever its context said (a
// slow but healthy recovery of 70,000 jobs on a loaded machine failed),
// and the Close that followed closed Pebble under the still-recovering
// manager, which panicked and hid the error.
func TestStartAbandonedDuringRecovery(t *testing.T) {
	dir := t.TempDir()
	st, err := persistence.Open(persistence.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	const jobs = 50
	var seed []persistence.NewJob
	for i := 1; i <= jobs; i++ {
		spec := testJob(fmt.Sprintf("r%d", i))
		seed = append(seed, persistence.NewJob{Record: &api.JobRecord{Id: uint64(i), Name: spec.Name, Spec: spec, CreatedUnixMs: 1},
			First: &api.Transition{Seq: 1, To: api.JobState_NEED_SCHEDULE, Reason: api.Reason_CREATED}, NewTable: spec.Table})
	}
	for i, err := range st.CreateJobs(seed) {
		if err != nil {
			t.Fatalf("seed job %d: %v", i+1, err)
		}
	}
	// Job 1 was RUNNING: recovery journals it back to NEED_SCHEDULE, and
	// the AfterTransition hook of that write holds the manager there.
	if err := st.AppendTransition(1, &api.Transition{Seq: 2, To: api.JobState_RUNNING, Reason: api.Reason_SCHEDULED}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	failed := make(chan struct{})
	logger := slog.New(signalHandler{Handler: slog.NewTextHandler(&logs, nil), msg: "loadnode: start failed", once: &sync.Once{}, hit: failed})
	inRecovery := make(chan struct{})
	var once sync.Once
	hooks := actors.Hooks{AfterTransition: func(_ uint64, tr *api.Transition) {
		if tr.GetReason() != api.Reason_RECOVERED {
			return
		}
		once.Do(func() { close(inRecovery) })
		// The manager goes on recovering only once the start has been
		// abandoned: its Close runs while the manager spawns and reads.
		select {
		case <-failed:
		case <-time.After(time.Minute):
		}
	}}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	abandon := errors.New("test: start abandoned")
	go func() {
		<-inRecovery
		cancel(abandon)
	}()
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen = dir, "127.0.0.1:0"
	began := time.Now()
	n, err := node.Start(ctx, node.Config{Node: cfg, Logger: logger, Hooks: hooks})
	if err == nil {
		n.Close()
		t.Fatal("Start succeeded after its context was cancelled during recovery")
	}
	if !errors.Is(err, abandon) || !strings.Contains(err.Error(), "recovery not finished") {
		t.Fatalf("Start: %v, want the recovery named and the context's cause", err)
	}
	if took := time.Since(began); took > 45*time.Second {
		t.Fatalf("Start took %v to give up after its context ended", took)
	}
	if !strings.Contains(logs.String(), "start failed") || !strings.Contains(logs.String(), abandon.Error()) {
		t.Fatalf("the failure was not logged:\n%s", logs.String())
	}

	// Closed cleanly: the lock is free and every job is there, job 1
	// journaled back to NEED_SCHEDULE.
	st, err = persistence.Open(persistence.Options{Dir: dir})
	if err != nil {
		t.Fatalf("reopen after the abandoned start: %v", err)
	}
	defer st.Close()
	got := 0
	if err := st.LoadAllJobs(func(js *persistence.JobState) error {
		got++
		if js.Record.GetId() == 1 && js.Last.GetTo() != api.JobState_NEED_SCHEDULE {
			t.Errorf("job 1 after recovery: %v, want NEED_SCHEDULE", js.Last)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got != jobs {
		t.Fatalf("reopened store has %d jobs, want %d", got, jobs)
	}
}

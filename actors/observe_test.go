package actors

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
)

// eventLog is an Observer that records events and the newest sample.
type eventLog struct {
	mu      sync.Mutex
	events  []*JobEvent
	samples int
	last    *JobSample
}

func (l *eventLog) CommitDone(string, int, time.Duration) {}
func (l *eventLog) JobSampled(s *JobSample) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.samples++
	l.last = s
}
func (l *eventLog) JobEvent(e *JobEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}
func (l *eventLog) JobDeleted(uint64) {}

func (l *eventLog) kinds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.events))
	for _, e := range l.events {
		out = append(out, e.Event)
	}
	return out
}

// laggingSource has records to read (its watermark is 100) that its
// readers never deliver: RUNNING, lag above zero, no progress.
type laggingSource struct{ quietSource }

func (s *laggingSource) Watermarks(context.Context) (map[int32]int64, error) {
	return map[int32]int64{0: 100}, nil
}

// TestStalledAndTransitionEvents: a RUNNING job with lag and no progress
// for stall_after becomes stalled, once, as an event and in its samples;
// pause, resume and stop are events too.
func TestStalledAndTransitionEvents(t *testing.T) {
	obs := &eventLog{}
	src := &laggingSource{quietSource{parts: []int32{0}}}
	h := newHarnessOpts(t, vfs.NewMem(), func(*api.JobSpec) (Source, error) { return adapt(src), nil },
		Settings{StallAfter: 300 * time.Millisecond, WatermarkInterval: 50 * time.Millisecond}, harnessOpts{observer: obs})
	resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: testSpec("lagging")}).(*api.JobResponse)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	poll(t, 10*time.Second, func() (bool, string) {
		k := obs.kinds()
		return len(k) > 0 && k[len(k)-1] == EventStalled, fmt.Sprint(k)
	})
	obs.mu.Lock()
	last := obs.last
	obs.mu.Unlock()
	if last.Health != "stalled" || last.TotalLag != 100 || last.Lag[0] != 100 || last.Name != "lagging" {
		t.Errorf("last sample %+v", last)
	}
	for _, req := range []any{&api.PauseJobRequest{Name: "lagging"}, &api.ResumeJobRequest{Name: "lagging"}, &api.StopJobRequest{Name: "lagging"}} {
		if r := h.ask(h.mgr, req).(*api.JobResponse); r.Error != nil {
			t.Fatal(r.Error)
		}
	}
	poll(t, 10*time.Second, func() (bool, string) {
		k := obs.kinds()
		n := map[string]int{}
		for _, e := range k {
			n[e]++
		}
		return n[EventPaused] == 1 && n[EventResumed] == 1 && n[EventStopped] == 1 && n[EventStalled] == 1, fmt.Sprint(k)
	})
	obs.mu.Lock()
	defer obs.mu.Unlock()
	for _, e := range obs.events {
		if e.Name != "lagging" || e.ID == 0 || e.AtMs == 0 {
			t.Errorf("event %+v", e)
		}
		if e.Event == EventPaused && (e.State != api.JobState_PAUSED || e.Reason != api.Reason_USER_PAUSE) {
			t.Errorf("paused event %+v", e)
		}
	}
}

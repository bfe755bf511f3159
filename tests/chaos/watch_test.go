package chaos

import (
	"errors"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
)

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	r.Created("a", nil)
	r.Created("b", &client.Error{Code: api.ErrorCode_STORE_ERROR})
	r.Created("c", errors.New("no answer"))
	r.Created("d", &client.Error{Code: api.ErrorCode_ALREADY_EXISTS})
	list := func(names ...string) []*api.JobSummary {
		var out []*api.JobSummary
		for _, n := range names {
			out = append(out, &api.JobSummary{Name: n})
		}
		return out
	}
	if v := r.Check(list("a", "c")); len(v) != 0 {
		t.Fatalf("clean listing: %v", v)
	}
	if v := r.Check(list("a")); len(v) != 0 {
		t.Fatalf("an unknown outcome may be absent: %v", v)
	}
	if v := r.Check(list("b", "c")); len(v) != 2 {
		t.Fatalf("missing acknowledged and present refused: %v", v)
	}
	// A frozen registry does not see a create acknowledged after it; the
	// live one does.
	frozen := r.Freeze()
	r.Created("late", nil)
	if v := frozen.Check(list("a", "c")); len(v) != 0 {
		t.Fatalf("frozen before the late create: %v", v)
	}
	if v := r.Check(list("a", "c")); len(v) != 1 {
		t.Fatalf("live registry: late missing not reported: %v", v)
	}
	if v := frozen.Check(list("c")); len(v) != 1 {
		t.Fatalf("frozen: a missing earlier create not reported: %v", v)
	}
}

func TestStallWatch(t *testing.T) {
	s := NewStallWatch(time.Second)
	at := time.Unix(1000, 0)
	running := func(tasks int32) *api.JobInfo {
		return &api.JobInfo{Summary: &api.JobSummary{Name: "j", State: api.JobState_RUNNING}, RunningTasks: tasks}
	}
	s.Observe(running(0), at)
	s.Observe(running(0), at.Add(900*time.Millisecond))
	s.Observe(running(2), at.Add(1000*time.Millisecond))
	s.Observe(running(0), at.Add(1100*time.Millisecond))
	if s.Violations() != 0 {
		t.Fatalf("short streaks: %d violations", s.Violations())
	}
	s.Observe(running(0), at.Add(2200*time.Millisecond))
	s.Observe(running(0), at.Add(3000*time.Millisecond))
	if s.Violations() != 1 {
		t.Fatalf("a long streak: %d violations, want 1", s.Violations())
	}
}

package node

import (
	"testing"
	"time"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
)

// TestTimelines: samples are kept for the span, bounded per job, a run of
// equal samples is two points, and a deleted job's timeline is freed.
func TestTimelines(t *testing.T) {
	ts := newTimelines(time.Minute, 5*time.Second) // 14 samples at most
	sample := func(id uint64, atMs int64, rate float64) *actors.JobSample {
		return &actors.JobSample{ID: id, Name: "j", AtMs: atMs, State: api.JobState_RUNNING, Health: "healthy", RowsPerSec: rate,
			TotalLag: 0, Lag: map[int32]int64{0: int64(rate)}}
	}
	for i := range 10 {
		ts.add(sample(1, int64(i)*1000, 5)) // equal: two points
	}
	if got := ts.series(1); len(got) != 2 || got[0].AtMs != 0 || got[1].AtMs != 9000 {
		t.Fatalf("equal samples kept as %d points: %+v", len(got), got)
	}
	for i := range 100 {
		ts.add(sample(1, 10_000+int64(i)*100, float64(i))) // all different
	}
	got := ts.series(1)
	if len(got) != ts.max {
		t.Errorf("%d points kept, bound %d", len(got), ts.max)
	}
	if last := got[len(got)-1]; last.RowsPerSec != 99 {
		t.Errorf("latest %+v", last)
	}
	ts.add(sample(1, 10_000+99*100+2*60_000, 1))
	if got := ts.series(1); len(got) != 1 {
		t.Errorf("after a span without samples %d points are kept, want 1", len(got))
	}
	ts.add(sample(2, 0, 1))
	ts.drop(1)
	if ts.size() != 1 || ts.series(1) != nil {
		t.Errorf("a deleted job's timeline is kept")
	}
}

package node

import (
	"maps"
	"sync"
	"time"

	"github.com/loadnode/loadnode/actors"
)

// timelines keeps, in memory, the recent samples of every live job (the
// console's charts): a bounded ring per job, freed when the job is deleted.
// A sample equal to the two before it only moves the last one's time, so
// an idle job holds two points, not one per interval.
//
// Concurrency: safe for concurrent use (job actors add, HTTP handlers read).
type timelines struct {
	span time.Duration // how far back samples are kept
	max  int           // samples per job, at most

	mu   sync.Mutex
	jobs map[uint64]*timeline
}

// timelineSpan is how far back the console's charts reach.
const timelineSpan = time.Hour

// timelineBudget bounds the samples kept node-wide (about 150 B each, plus
// 16 B per partition): past timelineBudget/722 sampled jobs, each job keeps
// fewer than an hour of samples.
const timelineBudget = 1_000_000

type timeline struct {
	name   string
	points []point // oldest first
}

// point is one sample, as the console reads it.
type point struct {
	AtMs       int64           `json:"t"`
	State      string          `json:"state"`
	Health     string          `json:"health"`
	RowsPerSec float64         `json:"rows_per_sec"`
	TotalLag   int64           `json:"total_lag"`
	Lag        map[int32]int64 `json:"lag"`
	Loaded     int64           `json:"loaded"`
	Sink       string          `json:"-"`
	Reason     string          `json:"-"`
}

func newTimelines(span, interval time.Duration) *timelines {
	n := int(span/max(interval, time.Second)) + 2
	return &timelines{span: span, max: min(max(n, 16), 4096), jobs: map[uint64]*timeline{}}
}

func (p point) same(q point) bool {
	return p.State == q.State && p.Health == q.Health && p.RowsPerSec == q.RowsPerSec && p.TotalLag == q.TotalLag &&
		p.Loaded == q.Loaded && maps.Equal(p.Lag, q.Lag)
}

func (ts *timelines) add(s *actors.JobSample) {
	p := point{AtMs: s.AtMs, State: s.State.String(), Health: s.Health, RowsPerSec: s.RowsPerSec, TotalLag: s.TotalLag,
		Lag: s.Lag, Loaded: s.Loaded, Sink: s.Sink, Reason: s.Reason.String()}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	tl := ts.jobs[s.ID]
	if tl == nil {
		tl = &timeline{}
		ts.jobs[s.ID] = tl
	}
	tl.name = s.Name
	n := len(tl.points)
	if n >= 2 && tl.points[n-1].same(p) && tl.points[n-2].same(p) {
		tl.points[n-1] = p
	} else {
		tl.points = append(tl.points, p)
	}
	// The node-wide budget shares timelineBudget samples between the jobs:
	// with many jobs each keeps fewer (at least 16).
	limit := min(ts.max, max(timelineBudget/len(ts.jobs), 16))
	cut := 0
	for cut < len(tl.points)-1 && (len(tl.points)-cut > limit || tl.points[cut].AtMs < s.AtMs-ts.span.Milliseconds()) {
		cut++
	}
	if cut > 0 {
		tl.points = append(tl.points[:0], tl.points[cut:]...)
	}
}

func (ts *timelines) drop(id uint64) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.jobs, id)
}

// series returns a copy of a job's samples, oldest first.
func (ts *timelines) series(id uint64) []point {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	tl := ts.jobs[id]
	if tl == nil {
		return nil
	}
	return append([]point(nil), tl.points...)
}

// size is the number of jobs with a timeline (tests).
func (ts *timelines) size() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.jobs)
}

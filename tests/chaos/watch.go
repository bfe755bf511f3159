package chaos

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/ledger"
)

// maxDetails bounds the violations a watch describes.
const maxDetails = 20

// Registry remembers the outcome of every create request, to check after
// each restart that acknowledged jobs exist and refused ones do not.
type Registry struct {
	mu        sync.Mutex
	acked     map[string]bool
	failed    map[string]bool
	ambiguous map[string]bool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{acked: map[string]bool{}, failed: map[string]bool{}, ambiguous: map[string]bool{}}
}

// Created records the outcome of creating job name: acknowledged (nil),
// refused by the node (a *client.Error other than ALREADY_EXISTS), or
// unknown (no answer: the node may or may not have made it durable).
func (r *Registry) Created(name string, err error) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ce *client.Error
	switch {
	case err == nil:
		r.acked[name] = true
		return "acknowledged"
	case errors.As(err, &ce) && ce.Code != api.ErrorCode_ALREADY_EXISTS:
		r.failed[name] = true
		return "refused (" + ce.Code.String() + ")"
	default:
		r.ambiguous[name] = true
		return "unknown"
	}
}

// Freeze returns a copy of the registry as it is now. A listing taken
// after Freeze is checked against it: a create acknowledged while the
// listing was on its way is not expected in it.
func (r *Registry) Freeze() *Registry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &Registry{acked: maps.Clone(r.acked), failed: maps.Clone(r.failed), ambiguous: maps.Clone(r.ambiguous)}
}

// Check returns one line per violation in a listing: an acknowledged job
// missing, or a job whose create was refused present.
func (r *Registry) Check(listed []*api.JobSummary) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	have := map[string]bool{}
	for _, s := range listed {
		have[s.GetName()] = true
	}
	var out []string
	for _, n := range slices.Sorted(maps.Keys(r.acked)) {
		if !have[n] {
			out = append(out, fmt.Sprintf("job %s was acknowledged as created but is missing", n))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(r.failed)) {
		if have[n] {
			out = append(out, fmt.Sprintf("job %s exists although its create was refused", n))
		}
	}
	return out
}

// StallWatch counts jobs that stay RUNNING without tasks for longer than a
// grace period (one violation per streak).
type StallWatch struct {
	Grace time.Duration

	mu         sync.Mutex
	since      map[string]time.Time
	reported   map[string]bool
	violations int
	details    []string
}

// NewStallWatch returns a watch with the given grace period.
func NewStallWatch(grace time.Duration) *StallWatch {
	return &StallWatch{Grace: grace, since: map[string]time.Time{}, reported: map[string]bool{}}
}

// Observe records one look at a job.
func (s *StallWatch) Observe(info *api.JobInfo, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := info.GetSummary().GetName()
	if info.GetSummary().GetState() != api.JobState_RUNNING || info.GetRunningTasks() > 0 {
		delete(s.since, name)
		delete(s.reported, name)
		return
	}
	start, ok := s.since[name]
	if !ok {
		s.since[name] = now
		return
	}
	if now.Sub(start) > s.Grace && !s.reported[name] {
		s.reported[name] = true
		s.violations++
		if len(s.details) < maxDetails {
			s.details = append(s.details, fmt.Sprintf("%s RUNNING without tasks since %s (%s): %s", name, start.Format("15:04:05.000"), now.Sub(start).Round(time.Millisecond), info.GetSummary().GetReasonMessage()))
		}
	}
}

// Reset forgets the streaks (the node restarted: its jobs are new).
func (s *StallWatch) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.since)
	clear(s.reported)
}

// Violations is the number of streaks longer than the grace period.
func (s *StallWatch) Violations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.violations
}

// Details describes the first violations.
func (s *StallWatch) Details() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.details...)
}

// Summary is a chaos run's result.
type Summary struct {
	Name            string
	Seed            int64
	Records         int // records produced (acknowledged or found in the log)
	Checked         int // rows checked over all jobs
	Faults          map[string]int
	Restarts        int
	Counts          ledger.Counts
	Regressions     int
	Invariants      int // job-state invariant violations
	LongestRecovery time.Duration
	Drain           time.Duration
}

// TotalFaults is the number of faults injected, of every kind.
func (s *Summary) TotalFaults() int {
	n := 0
	for _, v := range s.Faults {
		n += v
	}
	return n
}

// Pass reports whether every anomaly count is zero.
func (s *Summary) Pass() bool {
	return s.Counts.Anomalies() == 0 && s.Regressions == 0 && s.Invariants == 0
}

// Table renders the summary as a two-column table.
func (s *Summary) Table() string {
	var b strings.Builder
	row := func(k string, v any) { fmt.Fprintf(&b, "  %-28s %v\n", k, v) }
	fmt.Fprintf(&b, "chaos summary: %s (seed %d)\n", s.Name, s.Seed)
	row("records", s.Records)
	row("rows checked", s.Checked)
	for _, k := range slices.Sorted(maps.Keys(s.Faults)) {
		row("fault: "+k, s.Faults[k])
	}
	row("faults (total)", s.TotalFaults())
	row("restarts", s.Restarts)
	row("lost", s.Counts.Lost)
	row("duplicated", s.Counts.Duplicated)
	row("inconsistent", s.Counts.Inconsistent)
	row("torn", s.Counts.Torn)
	row("progress regressions", s.Regressions)
	row("order violations", s.Counts.Order)
	row("loaded-rows stat delta", s.Counts.StatsDelta)
	row("job-state violations", s.Invariants)
	row("longest recovery", s.LongestRecovery.Round(time.Millisecond))
	row("drain after faults", s.Drain.Round(time.Millisecond))
	return b.String()
}

// Line is the one-line result: chaos: records=N lost=0 duplicated=0
// regressions=0 faults=K restarts=R.
func (s *Summary) Line() string {
	return fmt.Sprintf("chaos: records=%d lost=%d duplicated=%d regressions=%d faults=%d restarts=%d",
		s.Records, s.Counts.Lost, s.Counts.Duplicated, s.Regressions, s.TotalFaults(), s.Restarts)
}

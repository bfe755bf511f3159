package chaos

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
)

// Row is one loaded row as the checker sees it.
type Row struct {
	Job       uint64
	Partition int32
	Offset    int64
	Payload   Payload
	// Bad: the row's values are not a payload (wrong types or nulls).
	Bad bool
}

// RowFromAPI turns a scanned row of a chaos table (columns w, seq, ...)
// into a Row.
func RowFromAPI(r *api.Row) Row {
	out := Row{Job: r.GetJobId(), Partition: r.GetPartition(), Offset: r.GetOffset()}
	v := r.GetValues()
	if len(v) < 2 {
		out.Bad = true
		return out
	}
	w, ok1 := v[0].GetKind().(*api.Value_Int64)
	s, ok2 := v[1].GetKind().(*api.Value_Int64)
	if !ok1 || !ok2 {
		out.Bad = true
		return out
	}
	out.Payload = Payload{W: w.Int64, Seq: s.Int64}
	return out
}

// JobView is what the checker needs of a job: its durable progress and its
// loaded-rows statistic (committed in the same batch as the rows).
type JobView struct {
	Name string
	// ID filters the rows of a shared table; 0 takes every row.
	ID         uint64
	Progress   map[int32]int64
	LoadedRows int64
}

// JobViewFromInfo builds a JobView from `job show`.
func JobViewFromInfo(info *api.JobInfo) JobView {
	v := JobView{Name: info.GetSummary().GetName(), ID: info.GetSummary().GetId(), Progress: map[int32]int64{}, LoadedRows: info.GetStats().GetLoadedRows()}
	for _, p := range info.GetPartitions() {
		v.Progress[p.GetPartition()] = p.GetCommittedOffset()
	}
	return v
}

// CheckOptions says how complete the picture is.
type CheckOptions struct {
	// Final: the job has drained, so every expected record missing from
	// the table is lost.
	Final bool
	// PartialLedger: the ledger may still lack records the job has already
	// loaded (acknowledgements in flight), so a row at a position the
	// ledger does not know is pending, not inconsistent.
	PartialLedger bool
	// Frozen: per partition, the offset from which records are not
	// expected (a job paused because retention deleted what it needed).
	Frozen map[int32]int64
}

// Counts are the anomalies Check finds. Every one must be zero.
type Counts struct {
	Records int // expected records (not frozen)
	Rows    int // distinct rows of the job
	// Lost: expected records missing from the table (Final only).
	Lost int
	// Duplicated: a position loaded twice with the same payload.
	Duplicated int
	// Inconsistent: one position with two payloads, or a row whose
	// payload is not the ledger's at that position (or the ledger has none).
	Inconsistent int
	// Torn: rows at or beyond the job's progress in their partition, or
	// expected records below the progress missing from the table.
	Torn int
	// Order: within a partition, a writer's seq not increasing with offset.
	Order int
	// StatsDelta: the loaded-rows statistic minus the distinct rows; a
	// batch committed twice makes it positive.
	StatsDelta int64
	// Pending: rows the partial ledger does not know yet (not an anomaly).
	Pending int
	// Details describes the first anomalies.
	Details []string
}

// Anomalies is the sum of every anomaly count.
func (c Counts) Anomalies() int64 {
	d := c.StatsDelta
	if d < 0 {
		d = -d
	}
	return int64(c.Lost+c.Duplicated+c.Inconsistent+c.Torn+c.Order) + d
}

// Add adds o's counts to c.
func (c *Counts) Add(o Counts) {
	c.Records += o.Records
	c.Rows += o.Rows
	c.Lost += o.Lost
	c.Duplicated += o.Duplicated
	c.Inconsistent += o.Inconsistent
	c.Torn += o.Torn
	c.Order += o.Order
	c.StatsDelta += o.StatsDelta
	c.Pending += o.Pending
	for _, d := range o.Details {
		if len(c.Details) < maxDetails {
			c.Details = append(c.Details, d)
		}
	}
}

func (c Counts) String() string {
	return fmt.Sprintf("records=%d rows=%d lost=%d duplicated=%d inconsistent=%d torn=%d order=%d stats_delta=%d pending=%d",
		c.Records, c.Rows, c.Lost, c.Duplicated, c.Inconsistent, c.Torn, c.Order, c.StatsDelta, c.Pending)
}

const maxDetails = 20

func (c *Counts) note(format string, a ...any) {
	if len(c.Details) < maxDetails {
		c.Details = append(c.Details, fmt.Sprintf(format, a...))
	}
}

// Check compares one job's rows, progress and statistics with the records
// the ledger expects in its topic (all partitions, from offset 0).
func Check(expected map[PartOff]Payload, rows []Row, job JobView, opts CheckOptions) Counts {
	var c Counts
	frozen := func(po PartOff) bool {
		f, ok := opts.Frozen[po.Partition]
		return ok && po.Offset >= f
	}
	seen := make(map[PartOff]Payload, len(rows))
	byPart := map[int32][]Row{}
	for _, r := range rows {
		if job.ID != 0 && r.Job != job.ID {
			continue
		}
		po := PartOff{r.Partition, r.Offset}
		if old, ok := seen[po]; ok {
			if old == r.Payload {
				c.Duplicated++
				c.note("%s: %d@%d loaded twice", job.Name, r.Partition, r.Offset)
			} else {
				c.Inconsistent++
				c.note("%s: %d@%d loaded with %v and %v", job.Name, r.Partition, r.Offset, old, r.Payload)
			}
			continue
		}
		seen[po] = r.Payload
		byPart[r.Partition] = append(byPart[r.Partition], r)
		exp, ok := expected[po]
		switch {
		case r.Bad:
			c.Inconsistent++
			c.note("%s: %d@%d has values that are not a payload", job.Name, r.Partition, r.Offset)
		case !ok && opts.PartialLedger:
			c.Pending++
		case !ok:
			c.Inconsistent++
			c.note("%s: %d@%d loaded %v; the ledger has no record there", job.Name, r.Partition, r.Offset, r.Payload)
		case exp != r.Payload:
			c.Inconsistent++
			c.note("%s: %d@%d loaded %v; the ledger has %v", job.Name, r.Partition, r.Offset, r.Payload, exp)
		}
		if prog, ok := job.Progress[r.Partition]; !ok || r.Offset >= prog {
			c.Torn++
			c.note("%s: row %d@%d is at or beyond the progress %d (present %v)", job.Name, r.Partition, r.Offset, prog, ok)
		}
	}
	c.Rows = len(seen)
	for po := range expected {
		if frozen(po) {
			continue
		}
		c.Records++
		if _, ok := seen[po]; ok {
			continue
		}
		if prog, ok := job.Progress[po.Partition]; ok && po.Offset < prog {
			c.Torn++
			c.note("%s: progress %d of partition %d is beyond the missing row %d", job.Name, prog, po.Partition, po.Offset)
		}
		if opts.Final {
			c.Lost++
			c.note("%s: %d@%d %v lost", job.Name, po.Partition, po.Offset, expected[po])
		}
	}
	for _, p := range slices.Sorted(maps.Keys(byPart)) {
		rs := byPart[p]
		sort.Slice(rs, func(i, j int) bool { return rs[i].Offset < rs[j].Offset })
		last := map[int64]int64{}
		for _, r := range rs {
			if r.Bad {
				continue
			}
			if prev, ok := last[r.Payload.W]; ok && r.Payload.Seq <= prev {
				c.Order++
				c.note("%s: partition %d: writer %d seq %d at offset %d after seq %d", job.Name, p, r.Payload.W, r.Payload.Seq, r.Offset, prev)
			}
			last[r.Payload.W] = r.Payload.Seq
		}
	}
	c.StatsDelta = job.LoadedRows - int64(len(seen))
	if c.StatsDelta != 0 {
		c.note("%s: loaded-rows statistic %d, distinct rows %d", job.Name, job.LoadedRows, len(seen))
	}
	return c
}

// ProgressTracker remembers the highest progress seen per job and
// partition, and counts every sample below it.
type ProgressTracker struct {
	mu          sync.Mutex
	max         map[string]map[int32]int64
	samples     int
	regressions int
	details     []string
}

// NewProgressTracker returns an empty tracker.
func NewProgressTracker() *ProgressTracker {
	return &ProgressTracker{max: map[string]map[int32]int64{}}
}

// Observe records a sample of job's progress taken at `when` (a fault or
// restart name) and returns the regressions it shows: a partition whose
// progress went down, or that the job no longer has.
func (t *ProgressTracker) Observe(job string, progress map[int32]int64, when string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.samples++
	m := t.max[job]
	if m == nil {
		m = map[int32]int64{}
		t.max[job] = m
	}
	n := 0
	for p, hi := range m {
		cur, ok := progress[p]
		if !ok || cur < hi {
			n++
			if len(t.details) < maxDetails {
				t.details = append(t.details, fmt.Sprintf("%s: partition %d progress %d (present %v) after %s; was %d", job, p, cur, ok, when, hi))
			}
		}
	}
	for p, cur := range progress {
		if cur > m[p] {
			m[p] = cur
		}
	}
	t.regressions += n
	return n
}

// Regressions is the number of regressions seen.
func (t *ProgressTracker) Regressions() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.regressions
}

// Samples is the number of samples observed.
func (t *ProgressTracker) Samples() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.samples
}

// Details describes the first regressions.
func (t *ProgressTracker) Details() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.details...)
}

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

// Acked lists the acknowledged jobs, sorted.
func (r *Registry) Acked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.acked))
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
	Counts          Counts
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

package ledger

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/loadnode/loadnode/api"
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

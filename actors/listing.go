package actors

import (
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
)

// Listings: a page of job summaries with each job's status is one request
// to the manager. Live job actors report what a listing shows (lag, rows,
// last progress, rate, sink) when it moves; the manager keeps the newest
// report beside its registry entry and computes the health verdict at
// listing time (stalled depends on the clock), with the same health
// function `job show` uses.

// Page sizes of ListJobsRequest.limit.
const (
	DefaultListPage = 1000
	MaxListPage     = 10000
)

// jobStatus is a live job's report of what a listing shows of it.
type jobStatus struct {
	totalLag    int64 // -1 unknown
	maxBehindMs int64 // the largest MillisBehindLatest; -1 unknown or none
	lastMs      int64
	loadedRows  int64
	rowsPerSec  float64
	sink        string
}

// status is the job's current listing report.
func (j *job) status() *jobStatus {
	info := presentCore(jobView{rec: j.rec, progress: j.progress, checkpoints: j.checkpoints,
		marks: j.marks, behind: j.behind, sink: j.sink})
	st := &jobStatus{totalLag: info.GetTotalLag(), maxBehindMs: -1, lastMs: max(j.stats.GetLastCommitUnixMs(), j.runningSinceMs),
		loadedRows: j.stats.GetLoadedRows(), rowsPerSec: j.rowsPerSecond(), sink: info.GetSink()}
	for _, p := range info.GetPartitions() {
		if p.GetShardId() != "" && p.GetMillisBehind() > st.maxBehindMs {
			st.maxBehindMs = p.GetMillisBehind()
		}
	}
	return st
}

// rowsPerSecond is the loaded rows/s over the last minute.
func (j *job) rowsPerSecond() float64 {
	now := j.deps.Now().UnixMilli()
	var rows int64
	for _, r := range j.rowsWindow {
		if r.atMs >= now-60_000 {
			rows += r.rows
		}
	}
	return float64(rows) / 60
}

// report sends the job's listing status to the manager if it moved since
// the last report (notify always sends it, with the summary).
func (j *job) report(ctx actor.Context) {
	st := j.status()
	if j.reported != nil && *j.reported == *st {
		return
	}
	j.reported = st
	if p := ctx.Parent(); p != nil {
		ctx.Send(p, &jobStateChanged{summary: j.summary(), status: st})
	}
}

// listSummary is e's summary with its status, as a listing shows it.
func (m *manager) listSummary(e *entry, now time.Time) *api.JobSummary {
	// A field-by-field copy: proto.Clone (reflection) costs more than the
	// rest of a 10,000-job page.
	es := e.summary
	s := &api.JobSummary{Id: es.GetId(), Name: es.GetName(), State: es.GetState(), Reason: es.GetReason(),
		ReasonMessage: es.GetReasonMessage(), Table: es.GetTable(), Source: es.GetSource()}
	st := e.status
	if st == nil {
		// Not reported yet (a job actor still starting: what `job show`
		// would say before the first watermarks), or a final job, which
		// does not change: its statistics are read once.
		st = &jobStatus{totalLag: -1, maxBehindMs: -1, sink: "embedded"}
		if sk, err := m.deps.Sinks(e.rec.GetSpec().GetTable()); err == nil {
			if d, ok := sk.(sink.Describer); ok {
				st.sink = d.Describe(e.rec.GetSpec().GetTable().GetName())
			}
			if isFinal(s.GetState()) {
				if p, err := sk.Progress(e.rec.GetId()); err == nil {
					st.loadedRows = p.Stats.GetLoadedRows()
					e.status = st
				}
			}
		}
	}
	s.TotalLag, s.LoadedRows, s.RowsPerSecond, s.Sink = st.totalLag, st.loadedRows, st.rowsPerSec, st.sink
	info := &api.JobInfo{Summary: s, TotalLag: st.totalLag, LastProgressUnixMs: st.lastMs}
	if st.maxBehindMs >= 0 {
		info.Partitions = []*api.PartitionInfo{{ShardId: "-", MillisBehind: st.maxBehindMs, Lag: -1}}
	}
	s.Health = health(info, now, m.deps.Settings.StallAfter, e.rec.GetSpec().GetMaxBatchRows())
	return s
}

// list answers one page of summaries, in id order after req.AfterId.
func (m *manager) list(req *api.ListJobsRequest) *api.ListJobsResponse {
	limit := int(req.GetLimit())
	switch {
	case limit < 0:
		return &api.ListJobsResponse{Error: invalid("limit", "limit must be >= 0").GetError()}
	case limit == 0:
		limit = DefaultListPage
	case limit > MaxListPage:
		limit = MaxListPage
	}
	m.sortOrder()
	i, _ := slices.BinarySearchFunc(m.order, req.GetAfterId()+1, func(e *entry, id uint64) int {
		return cmpID(e.rec.GetId(), id)
	})
	now := m.deps.Now()
	resp := &api.ListJobsResponse{Total: int64(len(m.byName))}
	for ; i < len(m.order) && len(resp.Jobs) < limit; i++ {
		resp.Jobs = append(resp.Jobs, m.listSummary(m.order[i], now))
	}
	if i < len(m.order) && len(resp.Jobs) > 0 {
		resp.NextAfterId = resp.Jobs[len(resp.Jobs)-1].GetId()
	}
	return resp
}

func cmpID(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// addEntry registers e by name and in id order.
func (m *manager) addEntry(e *entry) {
	m.byName[e.rec.GetName()] = e
	if n := len(m.order); n > 0 && m.order[n-1].rec.GetId() > e.rec.GetId() {
		m.orderDirty = true
	}
	m.order = append(m.order, e)
}

// removeEntry drops e from the registry.
func (m *manager) removeEntry(e *entry) {
	delete(m.byName, e.rec.GetName())
	m.sortOrder()
	if i, ok := slices.BinarySearchFunc(m.order, e.rec.GetId(), func(x *entry, id uint64) int {
		return cmpID(x.rec.GetId(), id)
	}); ok {
		m.order = slices.Delete(m.order, i, i+1)
	}
}

// sortOrder restores the id order of m.order after an out-of-order add.
func (m *manager) sortOrder() {
	if !m.orderDirty {
		return
	}
	slices.SortFunc(m.order, func(a, b *entry) int { return cmpID(a.rec.GetId(), b.rec.GetId()) })
	m.orderDirty = false
}

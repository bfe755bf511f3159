package actors

import (
	"cmp"
	"context"
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
	retries     int // consecutive failures being retried: the job is failing
}

// status is the job's current listing report.
func (j *job) status() *jobStatus {
	info := presentCore(jobView{rec: j.rec, progress: j.progress, checkpoints: j.checkpoints,
		marks: j.marks, behind: j.behind, sink: j.sink})
	st := &jobStatus{totalLag: info.GetTotalLag(), maxBehindMs: -1, lastMs: max(j.stats.GetLastCommitUnixMs(), j.runningSinceMs),
		loadedRows: j.stats.GetLoadedRows(), rowsPerSec: j.rowsPerSecond(), sink: info.GetSink(), retries: j.retries}
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
		// does not change: its statistics are read once, off the mailbox
		// (listFor), and kept.
		st = &jobStatus{totalLag: -1, maxBehindMs: -1, sink: "embedded"}
		if sk, err := m.deps.Sinks(e.rec.GetSpec().GetTable()); err == nil {
			if d, ok := sk.(sink.Describer); ok {
				st.sink = d.Describe(e.rec.GetSpec().GetTable().GetName())
			}
			if isFinal(s.GetState()) {
				if lk := e.look; lk != nil && lk.progress && !lk.pending() && lk.progErr == nil {
					st.loadedRows = lk.prog.Stats.GetLoadedRows()
					e.status = st
				} else if m.reads != nil {
					m.reads.need(e, sk)
				}
			} else {
				// Kept until the job's first report replaces it: a
				// listing right after a restart of 100,000 jobs builds
				// each one once.
				e.status = st
			}
		}
	}
	s.TotalLag, s.LoadedRows, s.RowsPerSecond, s.Sink = st.totalLag, st.loadedRows, st.rowsPerSec, st.sink
	info := &api.JobInfo{Summary: s, TotalLag: st.totalLag, LastProgressUnixMs: st.lastMs, Retries: int32(st.retries)}
	if st.maxBehindMs >= 0 {
		info.Partitions = []*api.PartitionInfo{{ShardId: "-", MillisBehind: st.maxBehindMs, Lag: -1}}
	}
	s.Health = health(info, now, m.deps.Settings.StallAfter, e.rec.GetSpec().GetMaxBatchRows())
	if m.clustered() {
		if name, _, epoch, ok := m.deps.Cluster.Owner(e.rec.GetId()); ok {
			s.Owner, s.Epoch = name, epoch
		}
	}
	return s
}

// listReads are the reads of final jobs' statistics a listing needs
// (listFor): start are those to make (no read of the job in flight), all
// every read the listing waits for.
type listReads struct {
	start []listRead
	all   []*sinkLook
}

// listRead is a read to make: job id's, of sk, into lk.
type listRead struct {
	lk *sinkLook
	sk sink.Sink
	id uint64
}

// need adds e's read, joining one in flight.
func (r *listReads) need(e *entry, sk sink.Sink) {
	if !e.look.serves(lookKey{}, false, true) {
		e.look = newLook(lookKey{}, false, true)
		r.start = append(r.start, listRead{lk: e.look, sk: sk, id: e.rec.GetId()})
	}
	r.all = append(r.all, e.look)
}

// listAgain is a listing whose reads have answered or that waited
// showSinkWait for them: it is answered from what they read.
type listAgain struct {
	req *api.ListJobsRequest
	to  *actor.PID
}

// listFor answers a listing (REQUIRES: in the actor). A final job's
// loaded rows are its sink's: the first listing that shows one reads
// them, off the mailbox (one goroutine for the listing's reads, in job
// order), waits for them at most showSinkWait, and is answered from what
// has been read (listAgain); each answer read is kept in the job's entry.
// A read that failed is made again by the next listing.
func (m *manager) listFor(ctx actor.Context, req *api.ListJobsRequest) {
	m.reads = &listReads{}
	resp := m.list(req)
	reads := m.reads
	m.reads = nil
	to := ctx.Sender()
	if len(reads.all) == 0 || to == nil {
		ctx.Respond(resp)
		return
	}
	if len(reads.start) > 0 {
		go func() {
			for _, r := range reads.start {
				r.lk.read(r.sk, r.id)
			}
		}()
	}
	run(m.life, "listing: read stopped jobs' statistics", func(c context.Context) *listAgain {
		t := time.NewTimer(showSinkWait)
		defer t.Stop()
		for _, lk := range reads.all {
			if !lk.wait(c, t.C) {
				break
			}
		}
		return &listAgain{req: req, to: to}
	}, func(error) *listAgain { return &listAgain{req: req, to: to} })
}

// list answers one page of summaries, in id order after req.AfterId, or
// a sorted or filtered page (listQuery).
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
	if listQueried(req) {
		return m.listQuery(req, limit) // listing_query.go
	}
	m.sortOrder()
	i, _ := slices.BinarySearchFunc(m.order, req.GetAfterId()+1, func(e *entry, id uint64) int {
		return cmp.Compare(e.rec.GetId(), id)
	})
	now := m.deps.Now()
	resp := &api.ListJobsResponse{Total: int64(len(m.byName)), Matched: int64(len(m.byName))}
	for ; i < len(m.order) && len(resp.Jobs) < limit; i++ {
		resp.Jobs = append(resp.Jobs, m.listSummary(m.order[i], now))
	}
	if i < len(m.order) && len(resp.Jobs) > 0 {
		resp.NextAfterId = resp.Jobs[len(resp.Jobs)-1].GetId()
	}
	return resp
}

// register adds e to the registry (by name, by id, in id order); e
// replaces an entry of the same id or name.
func (m *manager) register(e *entry) {
	id := e.rec.GetId()
	old, had := m.byID[id]
	if o := m.byName[e.rec.GetName()]; o != nil && o != e && o.rec.GetId() != id {
		m.orderDirty = true // a name now means another job
	}
	m.byName[e.rec.GetName()] = e
	m.byID[id] = e
	switch n := len(m.order); {
	case had && old == e:
	case !had && !m.orderDirty && (n == 0 || m.order[n-1].rec.GetId() < id):
		m.order = append(m.order, e)
	default:
		m.orderDirty = true
	}
}

// unregister drops e from the registry.
func (m *manager) unregister(e *entry) {
	if m.byName[e.rec.GetName()] == e {
		delete(m.byName, e.rec.GetName())
	}
	if m.byID[e.rec.GetId()] == e {
		delete(m.byID, e.rec.GetId())
	}
	m.orderDirty = true
}

// sortOrder rebuilds m.order (every entry of byName, by id) after a change
// register could not append.
func (m *manager) sortOrder() {
	if !m.orderDirty {
		return
	}
	m.order = m.order[:0]
	for _, e := range m.byName {
		m.order = append(m.order, e)
	}
	slices.SortFunc(m.order, func(a, b *entry) int { return cmp.Compare(a.rec.GetId(), b.rec.GetId()) })
	m.orderDirty = false
}

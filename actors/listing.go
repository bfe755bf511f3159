package actors

import (
	"cmp"
	"context"
	"fmt"
	"math"
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

// listingState is the manager's listing order and reads.
type listingState struct {
	// order holds every entry of byName by job id (listing pages);
	// orderDirty: it must be rebuilt from byName.
	order      []*entry
	orderDirty bool
	// reads collects, while listFor builds a listing, the reads of final
	// jobs' statistics it needs; nil otherwise.
	reads *listReads
}

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
	j.publishCommitted()
	st := j.status()
	if j.reported != nil && *j.reported == *st {
		return
	}
	j.reported = st
	if p := ctx.Parent(); p != nil {
		ctx.Send(p, &jobStateChanged{summary: j.summary(), status: st})
	}
}

// listSummary is e's summary with its status, as a listing shows it. In
// cluster mode, a job this member does not own shows its owner's figures
// from figs (listing_owners.go), unknown without them.
func (m *manager) listSummary(e *entry, now time.Time, figs ownerFigures) *api.JobSummary {
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
			if s.GetState().Final() {
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
	if m.clustered() {
		if name, _, epoch, ok := m.deps.Cluster.Owner(e.rec.GetId()); ok {
			s.Owner, s.Epoch = name, epoch
		}
		if _, mine := m.owned[e.rec.GetId()]; !mine && !s.GetState().Final() {
			// Another member's job (or no member's): what its actor here
			// reported last, if it ever ran here, is out of date.
			figs.apply(s)
			return s
		}
	}
	info := &api.JobInfo{Summary: s, TotalLag: st.totalLag, LastProgressUnixMs: st.lastMs, Retries: int32(st.retries)}
	if st.maxBehindMs >= 0 {
		info.Partitions = []*api.PartitionInfo{{ShardId: "-", MillisBehind: st.maxBehindMs, Lag: -1}}
	}
	s.Health = health(info, now, m.deps.Settings.StallAfter, e.rec.GetSpec().GetMaxBatchRows())
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
	req  *api.ListJobsRequest
	to   *actor.PID
	figs ownerFigures
}

// listFor answers a listing to `to` (REQUIRES: in the actor), with the
// owners' figures figs (cluster mode; nil: none). A final job's loaded
// rows are its sink's: the first listing that shows one reads them, off
// the mailbox (one goroutine for the listing's reads, in job order),
// waits for them at most showSinkWait, and is answered from what has been
// read (listAgain); each answer read is kept in the job's entry. A read
// that failed is made again by the next listing.
func (m *manager) listFor(ctx actor.Context, to *actor.PID, req *api.ListJobsRequest, figs ownerFigures) {
	m.reads = &listReads{}
	resp := m.listWith(req, figs)
	reads := m.reads
	m.reads = nil
	if to == nil {
		return
	}
	if len(reads.all) == 0 {
		ctx.Send(to, resp)
		return
	}
	if len(reads.start) > 0 {
		go func() {
			for _, r := range reads.start {
				r.lk.read(r.sk, r.id)
			}
		}()
	}
	again := &listAgain{req: req, to: to, figs: figs}
	run(m.life, "listing: read stopped jobs' statistics", func(c context.Context) *listAgain {
		t := time.NewTimer(showSinkWait)
		defer t.Stop()
		for _, lk := range reads.all {
			if !lk.wait(c, t.C) {
				break
			}
		}
		return again
	}, func(error) *listAgain { return again })
}

// listInvalid checks a listing request, nil when it is valid.
func listInvalid(req *api.ListJobsRequest) *api.ListJobsResponse {
	fail := func(field, msg string) *api.ListJobsResponse {
		return &api.ListJobsResponse{Error: invalid(field, msg).GetError()}
	}
	if req.GetLimit() < 0 {
		return fail("limit", "limit must be >= 0")
	}
	if !listQueried(req) {
		return nil
	}
	switch {
	case req.GetOffset() < 0:
		return fail("offset", fmt.Sprintf("offset %d must be >= 0", req.GetOffset()))
	case req.GetAfterId() != 0:
		return fail("after_id", "after_id pages the listing in id order only; a sorted or filtered listing pages by offset (next_offset)")
	case len(req.GetFilter()) > api.MaxListFilter:
		return fail("filter", fmt.Sprintf("filter of %d bytes: at most %d", len(req.GetFilter()), api.MaxListFilter))
	}
	if err := api.ValidListSort(req.GetSort()); err != nil {
		return fail("sort", err.Error())
	}
	return nil
}

// listLimit is req's page size, bounded.
func listLimit(req *api.ListJobsRequest) int {
	switch limit := int(req.GetLimit()); {
	case limit <= 0:
		return api.DefaultListPage
	case limit > api.MaxListPage:
		return api.MaxListPage
	default:
		return limit
	}
}

// listed reports whether a listing of req shows e: an owned_only one
// (cluster mode) only the jobs this member owns.
func (m *manager) listed(req *api.ListJobsRequest, e *entry) bool {
	if !req.GetOwnedOnly() || !m.clustered() {
		return true
	}
	_, mine := m.owned[e.rec.GetId()]
	return mine
}

// list answers one page of summaries, in id order after req.AfterId, or
// a sorted or filtered page (listQuery), without other members' figures.
func (m *manager) list(req *api.ListJobsRequest) *api.ListJobsResponse {
	return m.listWith(req, nil)
}

// listWith is list with the owners' figures of the jobs other members own.
func (m *manager) listWith(req *api.ListJobsRequest, figs ownerFigures) *api.ListJobsResponse {
	if bad := listInvalid(req); bad != nil {
		return bad
	}
	limit := listLimit(req)
	if listQueried(req) {
		return m.listQuery(req, limit, figs) // listing_query.go
	}
	m.sortOrder()
	i := m.pageStart(req)
	now := m.deps.Now()
	resp := &api.ListJobsResponse{Total: int64(len(m.byName)), Matched: int64(len(m.byName))}
	for ; i < len(m.order) && len(resp.Jobs) < limit; i++ {
		if m.listed(req, m.order[i]) {
			resp.Jobs = append(resp.Jobs, m.listSummary(m.order[i], now, figs))
		}
	}
	if i < len(m.order) && len(resp.Jobs) > 0 {
		resp.NextAfterId = resp.Jobs[len(resp.Jobs)-1].GetId()
	}
	return resp
}

// pageStart is the index in m.order of the first job after req.AfterId.
// REQUIRES: m.order sorted (sortOrder).
func (m *manager) pageStart(req *api.ListJobsRequest) int {
	if req.GetAfterId() == math.MaxUint64 {
		return len(m.order) // nothing comes after it (and +1 would wrap to 0)
	}
	i, _ := slices.BinarySearchFunc(m.order, req.GetAfterId()+1, func(e *entry, id uint64) int {
		return cmp.Compare(e.rec.GetId(), id)
	})
	return i
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
	m.deps.committed.drop(e.rec.GetId())
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

package actors

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
)

// Listings in cluster mode. A job's figures (lag, rows, rate, health) live
// with its actor, on the member that owns it: the registry elsewhere has
// only what etcd holds (state and reason). A member asked for a listing
// therefore asks each other member that owns a job of the page for its own
// jobs' figures (ListJobsRequest.owned_only: an owner answers from its own
// actors' reports and never asks further), all at once, and answers when
// they have answered or ownerFiguresWait has passed. A job whose owner did
// not answer in time, or that no live member owns, is listed with its
// figures unknown (-1, health "unknown"), never as 0.
//
// Cost: per listing, one request per other owner and page of its jobs (in
// id order, the jobs of the page only; sorted or filtered, every job it
// owns, api.MaxListPage a request).

// ownerFiguresWait bounds how long a listing waits for other members'
// figures.
const ownerFiguresWait = 3 * time.Second

// ownerFigures are other members' summaries of the jobs they own, by job
// id; nil: none were asked (every such job's figures are unknown).
type ownerFigures map[uint64]*api.JobSummary

// apply gives s (a job this member does not own, not final) its owner's
// figures, or marks them unknown.
func (f ownerFigures) apply(s *api.JobSummary) {
	o := f[s.GetId()]
	if o == nil || o.GetOwner() != s.GetOwner() {
		s.TotalLag, s.LoadedRows, s.RowsPerSecond = -1, -1, -1
		s.Health = stateHealth(s.GetState(), s.GetReason())
		if s.Health == "" {
			s.Health = "unknown"
		}
		return
	}
	s.TotalLag, s.LoadedRows, s.RowsPerSecond = o.GetTotalLag(), o.GetLoadedRows(), o.GetRowsPerSecond()
	if o.GetSink() != "" {
		s.Sink = o.GetSink()
	}
	// The state this member knows decides a paused or stopped job's
	// verdict; a loading job's is its owner's.
	if s.Health = stateHealth(s.GetState(), s.GetReason()); s.Health == "" {
		s.Health = o.GetHealth()
	}
}

// ownersFigures brings a listing request back to the manager with the
// figures its owners gave, to answer to.
type ownersFigures struct {
	req  *api.ListJobsRequest
	to   *actor.PID
	figs ownerFigures
}

// listJobs answers a listing: at once on a single node or for an
// owned_only request; in cluster mode after asking the owners of the
// jobs it shows for their figures.
func (m *manager) listJobs(ctx actor.Context, req *api.ListJobsRequest) {
	if !m.clustered() || req.GetOwnedOnly() {
		m.listFor(ctx, ctx.Sender(), req, nil)
		return
	}
	if bad := listInvalid(req); bad != nil {
		ctx.Respond(bad)
		return
	}
	owners := m.pageOwners(req)
	if len(owners) == 0 {
		m.listFor(ctx, ctx.Sender(), req, nil)
		return
	}
	ask := &api.ListJobsRequest{OwnedOnly: true, AfterId: req.GetAfterId(), Limit: int32(listLimit(req))}
	var upTo uint64 // id order: the owners' jobs up to the page's last
	if listQueried(req) {
		ask.AfterId, ask.Limit = 0, api.MaxListPage
	} else {
		i := m.pageStart(req)
		upTo = m.order[min(i+listLimit(req), len(m.order))-1].rec.GetId()
	}
	sys, to := ctx.ActorSystem(), ctx.Sender()
	run(m.life, "ask owners for figures", func(c context.Context) *ownersFigures {
		return &ownersFigures{req: req, to: to, figs: askOwners(c, sys, owners, ask, upTo)}
	}, func(error) *ownersFigures { return &ownersFigures{req: req, to: to} })
}

// onOwnersFigures answers the listing with the figures its owners gave.
func (m *manager) onOwnersFigures(ctx actor.Context, msg *ownersFigures) {
	m.listFor(ctx, msg.to, msg.req, msg.figs)
}

// pageOwners are the other live members (name: address) that own a job
// req's listing may show and that is not final: in id order the page's
// jobs, else every job.
func (m *manager) pageOwners(req *api.ListJobsRequest) map[string]string {
	m.sortOrder()
	jobs := m.order
	if !listQueried(req) {
		i := m.pageStart(req)
		jobs = m.order[i:min(i+listLimit(req), len(m.order))]
	}
	self := m.deps.Cluster.Self()
	owners := map[string]string{}
	for _, e := range jobs {
		if e.summary.GetState().Final() {
			continue
		}
		if name, addr, _, ok := m.deps.Cluster.Owner(e.rec.GetId()); ok && name != self && addr != "" {
			owners[name] = addr
		}
	}
	return owners
}

// askOwners asks each owner (name: address) for the figures of the jobs
// it owns, all at once, within ownerFiguresWait: pages of ask from
// ask.AfterId on, up to job upTo (0: all). An owner that does not answer
// in time gives nothing; what it gave by then is kept.
func askOwners(ctx context.Context, sys *actor.ActorSystem, owners map[string]string, ask *api.ListJobsRequest, upTo uint64) ownerFigures {
	ctx, cancel := context.WithTimeout(ctx, ownerFiguresWait)
	defer cancel()
	var mu sync.Mutex
	figs := ownerFigures{}
	var wg sync.WaitGroup
	for _, name := range slices.Sorted(maps.Keys(owners)) {
		target := actor.NewPID(owners[name], api.ManagerName)
		wg.Go(func() {
			req := &api.ListJobsRequest{OwnedOnly: true, AfterId: ask.GetAfterId(), Limit: ask.GetLimit()}
			for ctx.Err() == nil {
				deadline, _ := ctx.Deadline()
				f := sys.Root.RequestFuture(target, req, max(time.Until(deadline), time.Millisecond))
				res, err := f.Result()
				resp, ok := res.(*api.ListJobsResponse)
				if err != nil || !ok || resp.GetError() != nil {
					return
				}
				mu.Lock()
				for _, s := range resp.GetJobs() {
					if s.GetOwner() == name {
						figs[s.GetId()] = s
					}
				}
				mu.Unlock()
				next := resp.GetNextAfterId()
				if next == 0 || next <= req.GetAfterId() || (upTo != 0 && next >= upTo) {
					return
				}
				req = &api.ListJobsRequest{OwnedOnly: true, AfterId: next, Limit: ask.GetLimit()}
			}
		})
	}
	wg.Wait()
	return figs
}

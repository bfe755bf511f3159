package actors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/sink"
)

// Cluster mode. The manager of every member knows every job (its registry
// is fed by recovery, by its own creates and by JobChanged from the
// member's watch of the metadata store), but spawns a job actor only for
// the jobs its member owns (OwnJob, sent after the member saw the
// assignment in etcd), and stops it when the job moves (ReleaseJob) or
// the member's session ends (ReleaseAllJobs). A command for a job owned
// elsewhere is forwarded to the owner's manager and its answer relayed.
//
// INVARIANT (durable before visible, cluster-wide): a job actor is spawned
// only for a job whose create snapshot the metadata store (etcd) has
// acknowledged and whose assignment this member has seen; a create only
// writes the snapshot, it never spawns.
//
// INVARIANT (single journal writer): only the owner's job actor (or the
// owner's manager after that actor gave up) appends to a job's journal;
// recovery on a non-owner journals nothing.

// ownership is what the manager knows of the jobs its member owns
// (cluster mode).
type ownership struct {
	// owned are the jobs this member owns, with their epochs; it survives
	// a manager restart (the member still owns them).
	owned map[uint64]uint64
	// preparing are owned jobs whose takeover (snapshots read, fences
	// raised, progress read, in bulk) is in flight, at the epoch it is
	// for; changed are jobs the watch reported changed since the last
	// flush.
	preparing map[uint64]uint64
	takeQueue []OwnJob
	changed   map[uint64]*JobChanged
}

// Cluster is the node's cluster membership, as the actors use it.
type Cluster interface {
	// Self is this member's name.
	Self() string
	// Owner returns the job's current owner (name, client address) and
	// epoch as this member last saw them.
	Owner(id uint64) (name, addr string, epoch uint64, ok bool)
	// Status reads the cluster from etcd. REQUIRES: outside the actor.
	Status(ctx context.Context) (*api.ClusterStatusResponse, error)
}

// IDAllocator is implemented by a metadata store that allocates job ids
// itself (etcd: unique across the cluster's members).
type IDAllocator interface {
	AllocJobIDs(n int) (first uint64, err error)
}

// OwnJob tells the manager that its member owns job ID from Epoch on.
type OwnJob struct{ ID, Epoch uint64 }

// OwnJobs tells the manager that its member owns these jobs (the ones one
// watch response gave it): they are taken over in bulk.
type OwnJobs struct{ Jobs []OwnJob }

// flushChanged: the manager reloads the jobs JobChanged reported since
// the last flush, in bulk.
type flushChanged struct{}

// onJobChanged merges a change into the job's pending one; the first of
// a burst schedules the flush behind the burst's other messages already
// in the mailbox. Each of Record and Head comes from one watch, in
// revision order: a later value replaces an earlier one.
func (m *manager) onJobChanged(ctx actor.Context, msg *JobChanged) {
	if len(m.changed) == 0 {
		ctx.Send(ctx.Self(), &flushChanged{})
	}
	p := m.changed[msg.ID]
	if p == nil {
		p = &JobChanged{ID: msg.ID}
		m.changed[msg.ID] = p
	}
	p.Deleted = p.Deleted || msg.Deleted
	if msg.Record != nil {
		p.Record = msg.Record
	}
	if msg.Head != nil {
		p.Head = msg.Head
	}
}

// flushChanged applies the pending changes: a job's new head with its
// record (from the change, else the registry's) is applied as it is; a
// deletion, a record without its head (an alter whose head the other
// watch has not given yet) or a job the registry does not have yet is
// read back from the store, in bulk.
func (m *manager) flushChanged(ctx actor.Context) {
	var ids []uint64
	direct := &jobsLoaded{}
	for _, id := range slices.Sorted(maps.Keys(m.changed)) {
		p := m.changed[id]
		rec := p.Record
		if e := m.byID[id]; rec == nil && e != nil {
			rec = e.rec
		}
		if p.Deleted || p.Head == nil || rec == nil || rec.GetId() != id {
			ids = append(ids, id)
			continue
		}
		direct.states = append(direct.states, &metastore.JobState{Record: rec, Last: p.Head})
	}
	clear(m.changed)
	if len(direct.states) > 0 {
		m.onJobsLoaded(ctx, direct)
	}
	if len(ids) > 0 {
		m.loadJobs(ctx, ids)
	}
}

// ReleaseJob tells the manager that its member no longer owns job ID.
type ReleaseJob struct{ ID uint64 }

// ReleaseAllJobs tells the manager that its member owns nothing (its
// session ended).
type ReleaseAllJobs struct{}

// JobChanged tells the manager that a job's record or journal head changed
// in the metadata store (possibly by another member). Record and Head,
// when set, are the values the change wrote (the member's watch carries
// them); a change with neither, or Deleted, is read back from the store.
type JobChanged struct {
	ID      uint64
	Record  *api.JobRecord
	Head    *api.Transition
	Deleted bool
}

// JobsResync asks the manager to re-read every job from the metadata
// store (the member's watch restarted and may have missed changes).
type JobsResync struct{}

// jobsLoaded carries metadata read outside the manager back to it; gone
// lists ids that were asked for and are not stored any more.
type jobsLoaded struct {
	states []*metastore.JobState
	gone   []uint64
	all    bool
}

// forwardTimeout bounds a command forwarded to another member.
const forwardTimeout = 30 * time.Second

func (m *manager) clustered() bool { return m.deps.Cluster != nil }

// onOwnJobs records what the member now owns; ensureActor queues the
// jobs that need an actor for a bulk takeover.
func (m *manager) onOwnJobs(ctx actor.Context, jobs []OwnJob) {
	for _, o := range jobs {
		m.owned[o.ID] = o.Epoch
		if e := m.byID[o.ID]; e != nil {
			m.ensureActor(ctx, e)
		} else {
			// Created on another member, and our watch has not told us
			// yet: the takeover reads it.
			m.queueTakeover(ctx, o)
		}
	}
}

// flushTakeover: the manager takes over the jobs queued since the last
// flush, in bulk (prepareOwned).
type flushTakeover struct{}

// queueTakeover queues an owned job for the next bulk takeover; the first
// of a burst schedules the flush behind the burst's other messages
// already in the mailbox.
func (m *manager) queueTakeover(ctx actor.Context, o OwnJob) {
	if p, ok := m.preparing[o.ID]; ok && p == o.Epoch {
		return
	}
	if len(m.takeQueue) == 0 {
		ctx.Send(ctx.Self(), &flushTakeover{})
	}
	m.takeQueue = append(m.takeQueue, o)
	m.preparing[o.ID] = o.Epoch
}

func (m *manager) flushTakeover() {
	take := m.takeQueue
	m.takeQueue = nil
	if len(take) > 0 {
		m.prepareOwned(take)
	}
}

// ownedStart is what an owned job's first actor starts from, read by the
// manager in bulk: its snapshot and, when its sink is a sink.Claimer,
// its progress read after its fence was raised to the epoch (nil
// otherwise: the actor reads progress and raises the fence itself).
type ownedStart struct {
	id, epoch uint64
	state     *metastore.JobState
	progress  *sink.Progress
}

// ownedPrepared carries a bulk takeover back to the manager; gone are
// jobs that are not stored any more.
type ownedPrepared struct {
	jobs []*ownedStart
	gone []uint64
}

// BulkLoader is implemented by a metadata store that reads many jobs in
// few round trips (etcd: one read-only transaction per few dozen jobs).
type BulkLoader interface {
	LoadJobs(ids []uint64) (states map[uint64]*metastore.JobState, gone []uint64, err error)
}

// loadMany reads jobs through BulkLoader when meta is one, else one by one.
func loadMany(meta metastore.Store, ids []uint64) (map[uint64]*metastore.JobState, []uint64, error) {
	if b, ok := meta.(BulkLoader); ok {
		return b.LoadJobs(ids)
	}
	states := make(map[uint64]*metastore.JobState, len(ids))
	var gone []uint64
	for _, id := range ids {
		st, err := meta.LoadJob(id)
		switch {
		case errors.Is(err, metastore.ErrNotFound):
			gone = append(gone, id)
		case err != nil:
			return nil, nil, err
		default:
			states[id] = st
		}
	}
	return states, gone, nil
}

// prepareOwned reads the jobs' snapshots, raises their fences and reads
// their progress outside the mailbox, grouped by database: one
// ClaimJobs per database for up to claimChunk jobs, instead of a read,
// a fence raise and a progress read per job.
//
// INVARIANT (fence): an owned job's tasks read only after its fence is
// raised to its epoch: here (the progress handed over is read after the
// raise, in the same transaction) or by the actor itself (claimFence).
func (m *manager) prepareOwned(take []OwnJob) {
	meta, sinks := m.deps.Meta, m.deps.Sinks
	log := m.log()
	run(m.life, "take over owned jobs", func(context.Context) *ownedPrepared {
		t0 := time.Now()
		ids := make([]uint64, len(take))
		epochs := make(map[uint64]uint64, len(take))
		for i, o := range take {
			ids[i], epochs[o.ID] = o.ID, o.Epoch
		}
		res := &ownedPrepared{}
		states, gone, err := loadMany(meta, ids)
		if err != nil {
			log.Warn("cluster: take over owned jobs: read snapshots", "jobs", len(ids), "err", err)
			// The actors read their own (the supervisor backs off).
			for _, o := range take {
				res.jobs = append(res.jobs, &ownedStart{id: o.ID, epoch: o.Epoch})
			}
			return res
		}
		res.gone = gone
		byDB := map[string][]uint64{}
		tables := map[string]*api.TableSpec{}
		for _, id := range ids {
			st := states[id]
			if st == nil {
				continue
			}
			res.jobs = append(res.jobs, &ownedStart{id: id, epoch: epochs[id], state: st})
			if st.Last != nil && st.Last.GetTo().Final() {
				continue
			}
			t := st.Record.GetSpec().GetTable()
			byDB[t.GetDatabase()] = append(byDB[t.GetDatabase()], id)
			tables[t.GetDatabase()] = t
		}
		claimed := map[uint64]*sink.Progress{}
		for db, jobs := range byDB {
			sk, err := sinks(tables[db])
			if err != nil {
				continue // the actor pauses the job with the sink's error
			}
			c, ok := sk.(sink.Claimer)
			if !ok {
				continue
			}
			fences := make(map[uint64]uint64, len(jobs))
			for _, id := range jobs {
				fences[id] = sink.EpochFence(epochs[id], 0)
			}
			progs, err := c.ClaimJobs(fences)
			if err != nil {
				log.Warn("cluster: take over owned jobs: raise fences", "database", db, "jobs", len(jobs), "err", err)
				continue // each actor raises its own
			}
			maps.Copy(claimed, progs)
		}
		for _, s := range res.jobs {
			s.progress = claimed[s.id]
		}
		log.Info("cluster: took over owned jobs", "jobs", len(res.jobs), "fenced", len(claimed), "gone", len(gone),
			"took", time.Since(t0).Round(time.Millisecond))
		return res
	}, func(err error) *ownedPrepared {
		res := &ownedPrepared{}
		for _, o := range take {
			res.jobs = append(res.jobs, &ownedStart{id: o.ID, epoch: o.Epoch})
		}
		return res
	})
}

// onOwnedPrepared registers what the takeover read and spawns the actors
// of the jobs still owned at the epoch it was for.
func (m *manager) onOwnedPrepared(ctx actor.Context, msg *ownedPrepared) {
	loaded := &jobsLoaded{gone: msg.gone}
	for _, s := range msg.jobs {
		if s.state != nil {
			loaded.states = append(loaded.states, s.state)
		}
	}
	// Registers new jobs and refreshes summaries; ensureActor spawns none
	// of these while they are preparing.
	m.onJobsLoaded(ctx, loaded)
	for _, s := range msg.jobs {
		if m.preparing[s.id] != s.epoch {
			continue // a newer takeover of the job is queued
		}
		delete(m.preparing, s.id)
		e := m.byID[s.id]
		if e == nil {
			continue
		}
		if epoch, ok := m.owned[s.id]; ok && epoch == s.epoch {
			// What was read serves this epoch only; without a state (the
			// read failed) the actor reads its own.
			e.takeover = s
		}
		m.ensureActor(ctx, e)
		e.takeover = nil
	}
}

// ensureActor makes the actor of an owned, non-final job run at the owned
// epoch: spawned if absent, replaced if it runs at an older epoch.
func (m *manager) ensureActor(ctx actor.Context, e *entry) {
	epoch, owned := m.owned[e.rec.GetId()]
	if !owned || e.summary.GetState().Final() || m.stopping {
		return
	}
	if p, ok := m.preparing[e.rec.GetId()]; ok && p == epoch {
		return // its takeover is in flight (onOwnedPrepared spawns it)
	}
	if e.pid != nil && e.epoch == epoch {
		return
	}
	if e.pid != nil {
		// A new epoch: the old actor stops first; its Terminated brings
		// this back (onJobTerminated), so two actors of one job never run
		// here at once and the new one gets the job's name.
		m.stopActor(ctx, e)
		return
	}
	if e.stopping != "" {
		return
	}
	if e.takeover == nil || e.takeover.epoch != epoch {
		// Every owned job starts through a bulk takeover (a member given
		// a lost member's share starts hundreds at once).
		m.queueTakeover(ctx, OwnJob{ID: e.rec.GetId(), Epoch: epoch})
		return
	}
	e.epoch = epoch
	m.spawn(ctx, e)
	m.log().Info("job owned", "job", e.rec.GetId(), "name", e.rec.GetName(), "epoch", epoch)
}

// stopActor stops a job's actor on purpose (the job moved): its
// Terminated is not a supervisor giving up.
func (m *manager) stopActor(ctx actor.Context, e *entry) {
	pid := e.pid
	e.pid = nil
	e.stopping = pid.Id
	ctx.Stop(pid)
}

func (m *manager) onReleaseJob(ctx actor.Context, id uint64) {
	delete(m.owned, id)
	if e := m.byID[id]; e != nil && e.pid != nil {
		m.stopActor(ctx, e)
		m.log().Info("job released", "job", id, "name", e.rec.GetName())
	}
}

func (m *manager) onReleaseAll(ctx actor.Context) {
	for id := range m.owned {
		m.onReleaseJob(ctx, id)
	}
	clear(m.owned)
}

// loadJobs reads jobs from the metadata store outside the mailbox; nil
// ids: every job.
func (m *manager) loadJobs(ctx actor.Context, ids []uint64) {
	meta := m.deps.Meta
	run(m.life, "load jobs", func(context.Context) *jobsLoaded {
		res := &jobsLoaded{all: ids == nil}
		if ids == nil {
			if err := meta.LoadAllJobs(func(st *metastore.JobState) error {
				res.states = append(res.states, st)
				return nil
			}); err != nil {
				m.log().Warn("cluster: reload jobs", "err", err)
				res.all = false
			}
			return res
		}
		states, gone, err := loadMany(meta, ids)
		if err != nil {
			m.log().Warn("cluster: load jobs", "jobs", len(ids), "err", err)
			return res
		}
		res.gone = gone
		for _, id := range ids {
			if st := states[id]; st != nil {
				res.states = append(res.states, st)
			}
		}
		return res
	}, func(err error) *jobsLoaded { return &jobsLoaded{} })
}

// onJobsLoaded merges stored jobs into the registry. The summary of a job
// this member runs comes from its actor; any other's from its journal.
func (m *manager) onJobsLoaded(ctx actor.Context, msg *jobsLoaded) {
	seen := map[uint64]bool{}
	for _, st := range msg.states {
		rec := st.Record
		seen[rec.GetId()] = true
		if st.Last == nil {
			continue
		}
		m.lastID = max(m.lastID, rec.GetId())
		e := m.byID[rec.GetId()]
		if e != nil && e.pid != nil {
			continue
		}
		state, reason, message := stateOf(st.Last)
		if e == nil {
			if old := m.byName[rec.GetName()]; old != nil && old.rec.GetId() != rec.GetId() && old.pid == nil {
				m.unregister(old)
			}
			e = &entry{rec: rec}
		}
		e.rec = rec
		e.summary = summaryOf(m.deps.Specs, rec, state, reason, message)
		m.register(e)
		m.ensureActor(ctx, e)
	}
	gone := msg.gone
	if msg.all {
		for id := range m.byID {
			if !seen[id] {
				gone = append(gone, id)
			}
		}
	}
	for _, id := range gone {
		e := m.byID[id]
		if e == nil || e.pid != nil {
			continue
		}
		m.unregister(e)
	}
}

// forward sends a job command to the manager of the member that owns the
// job and relays its answer to the requester.
func (m *manager) forward(ctx actor.Context, e *entry, msg any) bool {
	name, addr, _, ok := m.deps.Cluster.Owner(e.rec.GetId())
	if !ok || name == m.deps.Cluster.Self() || addr == "" {
		ctx.Respond(&api.JobResponse{Error: &api.Error{Code: api.ErrorCode_UNAVAILABLE,
			Message: fmt.Sprintf("job %s has no live owner at the moment (it is being assigned); retry", api.Quote(e.rec.GetName()))}})
		return true
	}
	sys := ctx.ActorSystem()
	target := actor.NewPID(addr, api.ManagerName)
	runTo(m.life, ctx.Sender(), "forward", func(context.Context) proto.Message {
		res, err := sys.Root.RequestFuture(target, msg, forwardTimeout).Result()
		if err != nil {
			return &api.JobResponse{Error: &api.Error{Code: api.ErrorCode_UNAVAILABLE,
				Message: fmt.Sprintf("job %s: its owner %s at %s did not answer: %v", api.Quote(e.rec.GetName()), name, addr, err)}}
		}
		if pm, ok := res.(proto.Message); ok {
			return pm
		}
		return &api.JobResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: fmt.Sprintf("owner %s answered %T", name, res)}}
	}, func(err error) proto.Message {
		return &api.JobResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}}
	})
	return true
}

// clusterStatus answers ClusterStatusRequest from etcd, outside the mailbox.
func (m *manager) clusterStatus(ctx actor.Context) {
	if !m.clustered() {
		ctx.Respond(&api.ClusterStatusResponse{Error: &api.Error{Code: api.ErrorCode_FAILED_PRECONDITION,
			Message: "this node is not a cluster member (its config has no cluster section)"}})
		return
	}
	c := m.deps.Cluster
	runTo(m.life, ctx.Sender(), "cluster status", func(ctx context.Context) *api.ClusterStatusResponse {
		st, err := c.Status(ctx)
		if err != nil {
			return &api.ClusterStatusResponse{Self: c.Self(), Error: &api.Error{Code: api.ErrorCode_UNAVAILABLE, Message: fmt.Sprintf("cluster status: etcd: %v", err)}}
		}
		st.Self = c.Self()
		return st
	}, func(err error) *api.ClusterStatusResponse {
		return &api.ClusterStatusResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}}
	})
}

// allocIDs gives queued creates cluster-wide ids when the store allocates
// them. REQUIRES: outside the actor (it writes to etcd).
func allocIDs(meta metastore.Store, jobs []metastore.NewJob) error {
	a, ok := meta.(IDAllocator)
	if !ok || len(jobs) == 0 {
		return nil
	}
	first, err := a.AllocJobIDs(len(jobs))
	if err != nil {
		return err
	}
	for i := range jobs {
		jobs[i].Record.Id = first + uint64(i)
	}
	return nil
}

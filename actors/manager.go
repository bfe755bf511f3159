package actors

import (
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/backoff"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/supervisor"
)

// The manager: the node's job registry. This file holds the registry, its
// recovery and the routing of commands; create.go the creation of jobs and
// tables, tables.go table reads.

// AwaitRecovery is answered with *RecoveryDone once the manager has
// rebuilt its registry from the store (it does so in Started, so any
// request answered after that sees every recovered job, and a command to a
// job whose actor is not respawned yet spawns it). AwaitRespawn waits for
// the job actors too.
type AwaitRecovery struct{}

// RecoveryDone answers AwaitRecovery.
type RecoveryDone struct {
	Jobs int
	Err  error
}

// entry is the manager's registry record of one job.
type entry struct {
	rec     *api.JobRecord
	pid     *actor.PID // nil when the job has no actor (final, or gave up)
	summary *api.JobSummary
	// preload is the state recovery read, handed to the job actor's first
	// start and then dropped.
	preload *metastore.JobState
	// epoch is the ownership epoch the actor was spawned at (cluster mode).
	epoch uint64
	// takeover is what the manager read and fenced in bulk for the job's
	// next actor (cluster mode), handed to its first start and dropped.
	takeover *ownedStart
	// stopping is the id of the actor stopped because the job moved or
	// changed epoch, until its Terminated (cluster mode).
	stopping string
	// status is the job actor's newest listing report (listing.go); nil
	// before the first.
	status *jobStatus
	// look is the newest read of the sink of a job without an actor, for
	// a show or a listing (sinklook.go).
	look *sinkLook
}

// manager is the node's job registry: it creates jobs (validate, persist
// with a synced write, spawn), routes commands to job actors, watches them
// and answers listings and table reads. Its state is grouped by concern,
// each group declared beside the file whose functions keep it:
//
//	registry         the jobs by name, actor and id (manager.go)
//	ownership        the jobs this member owns and their takeovers (cluster.go)
//	createQueue      creates in flight (create.go)
//	admissionPacing  admission after a recovery (admission.go)
//	respawn          the respawn of job actors after a recovery (respawn.go)
//	listingState     the listing order and reads (listing.go)
type manager struct {
	deps      *Deps
	life      *lifetime
	scheduler *actor.PID
	recovered RecoveryDone
	stopping  bool

	registry
	ownership
	createQueue
	admissionPacing
	respawn respawn
	listingState
}

// registry is the manager's record of every job it knows.
type registry struct {
	byName map[string]*entry
	byPID  map[string]*entry
	byID   map[uint64]*entry
	lastID uint64
}

// NewManagerProps returns the props of a node's manager, or an error if
// deps are incomplete or their settings invalid. Spawn it with
// SpawnNamed(props, api.ManagerName) after the scheduler.
func NewManagerProps(deps *Deps, scheduler *actor.PID) (*actor.Props, error) {
	if err := deps.check(); err != nil {
		return nil, err
	}
	strategy := supervisor.NewStrategy(deps.Settings.JobSupervision, nil, uint64(deps.Now().UnixNano()))
	return actor.PropsFromProducer(func() actor.Actor {
		return &manager{deps: deps, scheduler: scheduler}
	}, actor.WithDispatcher(mailboxes), actor.WithSupervisor(strategy)), nil
}

func (m *manager) log() *slog.Logger { return m.deps.Logger }

// jobLog is the logger of lines about one job: every one carries the job's
// id and name under the constant keys "job" and "name", as the job actor's
// own lines do (job.log).
func (m *manager) jobLog(rec *api.JobRecord) *slog.Logger {
	return jobLogger(m.deps.Logger, rec.GetId(), rec.GetName())
}

func (m *manager) Receive(ctx actor.Context) {
	crashOn(ctx.Message())
	if _, ok := ctx.Message().(*actor.Started); ok {
		m.life = newLifetime(ctx)
	}
	if ctx = opened(m.life, ctx); ctx == nil {
		return
	}
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		m.recover(ctx)
	case *AwaitRecovery:
		r := m.recovered
		ctx.Respond(&r)
	case *api.CreateJobRequest:
		if resp := m.createFor(ctx, msg); resp != nil {
			ctx.Respond(resp)
		}
	case *createsWritten:
		m.onCreatesWritten(ctx, msg)
	case *api.PauseJobRequest:
		m.route(ctx, msg.GetName())
	case *api.ResumeJobRequest:
		m.route(ctx, msg.GetName())
	case *api.StopJobRequest:
		m.route(ctx, msg.GetName())
	case *api.ShowJobRequest:
		m.route(ctx, msg.GetName())
	case *api.JobCommittedRequest:
		m.committed(ctx, msg)
	case *api.AlterJobRequest:
		m.route(ctx, msg.GetName())
	case *api.DeleteJobRequest:
		ctx.Respond(m.deleteJob(msg.GetName()))
	case *api.CreateTableRequest:
		if resp := m.createTable(msg); resp != nil {
			ctx.Respond(resp)
		} else {
			m.createTableIn(ctx, msg)
		}
	case *api.PingRequest:
		ctx.Respond(&api.PingResponse{Jobs: int64(len(m.byName))})
	case *api.ListJobsRequest:
		m.listJobs(ctx, msg)
	case *ownersFigures:
		m.onOwnersFigures(ctx, msg)
	case *listAgain:
		ctx.Send(msg.to, m.listWith(msg.req, msg.figs))
	case *api.TableCountRequest:
		m.tableCount(ctx, msg)
	case *api.TableTruncateRequest:
		m.tableTruncate(ctx, msg)
	case *api.TableInsertRequest:
		m.tableInsert(ctx, msg)
	case *api.TableScanRequest:
		m.tableScan(ctx, msg)
	case *api.TableQueryRequest:
		m.tableQuery(ctx, msg)
	case *api.ListTablesRequest:
		ctx.Respond(m.listTables())
	case *api.DescribeTableRequest:
		m.describeTable(ctx, msg)
	case *api.DropTableRequest:
		ctx.Respond(m.dropTable(msg))
	case *api.BackupRequest:
		m.backup(ctx, msg)
	case *jobStateChanged:
		if e := m.byName[msg.summary.GetName()]; e != nil && e.rec.GetId() == msg.summary.GetId() {
			e.summary = msg.summary
			if msg.rec != nil && !m.clustered() {
				// A cluster member's registry follows the metadata
				// store's watch instead (onJobChanged).
				e.rec = msg.rec
			}
			if msg.status != nil {
				e.status = msg.status
			}
		}
		m.admissionReport(ctx, msg)
	case *admitTick:
		m.onAdmitTick(ctx)
	case *OwnJob:
		m.onOwnJobs(ctx, []OwnJob{*msg})
	case *OwnJobs:
		m.onOwnJobs(ctx, msg.Jobs)
	case *ownedPrepared:
		m.onOwnedPrepared(ctx, msg)
	case *flushTakeover:
		m.flushTakeover()
	case *ReleaseJob:
		m.onReleaseJob(ctx, msg.ID)
	case *ReleaseAllJobs:
		m.onReleaseAll(ctx)
	case *JobChanged:
		m.onJobChanged(ctx, msg)
	case *flushChanged:
		m.flushChanged(ctx)
	case *JobsResync:
		m.loadJobs(ctx, nil)
	case *jobsLoaded:
		m.onJobsLoaded(ctx, msg)
	case *api.ClusterStatusRequest:
		m.clusterStatus(ctx)
	case *actor.Terminated:
		m.onJobTerminated(ctx, msg.Who)
	case *respawnJob:
		m.onRespawn(ctx, msg)
	case *respawnChunk:
		m.onRespawnChunk(ctx, msg)
	case *AwaitRespawn:
		m.awaitRespawn(ctx)
	case *actor.Stopping, *actor.Restarting:
		// Children are stopped with us; their Terminated must not be
		// mistaken for a supervisor giving up on them.
		m.stopping = true
		m.life.end()
	case *actor.Stopped:
	default:
		if ctx.Sender() != nil {
			ctx.Respond(&api.JobResponse{Error: &api.Error{
				Code:    api.ErrorCode_UNKNOWN_MESSAGE,
				Message: fmt.Sprintf("manager: unknown message %T", msg),
			}})
		}
	}
}

// recover respawns every non-final job from its snapshot. A restarted
// manager comes here too and rebuilds its registry from the store; job
// actors that survived (children are stopped on restart) are respawned.
func (m *manager) recover(ctx actor.Context) {
	m.stopping = false
	m.byName, m.byPID, m.byID = map[string]*entry{}, map[string]*entry{}, map[uint64]*entry{}
	if m.owned == nil {
		m.owned = map[uint64]uint64{}
	}
	m.preparing, m.takeQueue, m.changed = map[uint64]uint64{}, nil, map[uint64]*JobChanged{}
	m.order, m.orderDirty = nil, false
	m.reserved, m.newTables, m.queue, m.writing = map[string]bool{}, map[string]*api.TableSpec{}, nil, 0
	m.recovered = RecoveryDone{}
	last, err := m.deps.Meta.LastJobID()
	if err != nil {
		m.recovered.Err = fmt.Errorf("actors: recover: last job id: %w", err)
		m.log().Error("recovery failed", "err", err)
		return
	}
	m.lastID = last
	// One pass over the job key space reads every job's state; each job
	// actor starts from it instead of reading its own.
	t0 := time.Now()
	var states []*metastore.JobState
	if err := m.deps.Meta.LoadAllJobs(func(st *metastore.JobState) error {
		states = append(states, st)
		return nil
	}); err != nil {
		m.recovered.Err = fmt.Errorf("actors: recover: load jobs: %w", err)
		m.log().Error("recovery failed", "err", err)
		return
	}
	loaded := time.Since(t0)
	var spawn []*entry
	var recovered []metastore.JobTransition
	now := m.deps.nowMs()
	for _, st := range states {
		rec, last := st.Record, st.Last
		m.lastID = max(m.lastID, rec.GetId())
		if last == nil {
			m.jobLog(rec).Error("recover job", "err", "empty journal")
			continue
		}
		state, reason, message := stateOf(last)
		e := &entry{rec: rec, preload: st, summary: summaryOf(m.deps.Specs, rec, state, reason, message)}
		m.register(e)
		if e.summary.State.Final() {
			continue
		}
		if m.clustered() {
			// Only an owner spawns (and journals); the member tells us
			// which jobs are ours once it has joined.
			e.preload = nil
			continue
		}
		// Listing shows what the job actor will restore: never RUNNING.
		if e.summary.State == api.JobState_RUNNING {
			e.summary.State, e.summary.Reason = api.JobState_NEED_SCHEDULE, api.Reason_RECOVERED
			e.summary.ReasonMessage = recoveredMessage
			recovered = append(recovered, metastore.JobTransition{JobID: rec.GetId(), T: &api.Transition{
				Seq: last.GetSeq() + 1, TimeUnixMs: now, From: api.JobState_RUNNING, To: api.JobState_NEED_SCHEDULE,
				Reason: api.Reason_RECOVERED, Message: recoveredMessage}})
		}
		spawn = append(spawn, e)
	}
	// Every stored RUNNING becomes NEED_SCHEDULE in one synced write, not
	// one per job actor. If it fails, each job actor journals its own.
	t1 := time.Now()
	if err := m.deps.Meta.AppendTransitions(recovered); err != nil {
		m.log().Warn("recover: journal RECOVERED transitions together", "jobs", len(recovered), "err", err)
	} else {
		byID := make(map[uint64]*api.Transition, len(recovered))
		for _, jt := range recovered {
			byID[jt.JobID] = jt.T
		}
		for _, e := range spawn {
			if t, ok := byID[e.rec.GetId()]; ok && e.preload != nil {
				e.preload.Last = t
			}
		}
		if h := m.deps.Hooks.AfterTransition; h != nil {
			for _, jt := range recovered {
				h(jt.JobID, jt.T)
			}
		}
	}
	if m.clustered() {
		// A restarted manager: the jobs the member owns come back.
		for id := range m.owned {
			if e := m.byID[id]; e != nil {
				m.ensureActor(ctx, e)
			}
		}
	}
	// The registry is whole: from here on every job is listed and answers
	// (a command to a job not respawned yet spawns it first, route). The
	// job actors are respawned a chunk per message (respawn.go), so that
	// listings and commands are answered between chunks.
	m.recovered.Jobs = len(states)
	m.log().Info("recovered jobs", "jobs", len(states), "load", loaded.Round(time.Millisecond),
		"journal", time.Since(t1).Round(time.Millisecond), "respawning", len(spawn))
	m.startRespawn(ctx, spawn)
}

// spawn spawns e's job actor, from the state recovery read if any (its
// admission then waits for the respawn).
func (m *manager) spawn(ctx actor.Context, e *entry) {
	pre := e.preload
	e.preload = nil
	m.spawnFrom(ctx, e, pre, pre != nil)
}

// spawnFrom spawns e's job actor starting from pre (nil: the actor reads
// its state from the store). The actor shares pre's record with the
// registry instead of reading its own copy: records are never changed in
// place, an alteration replaces them. hold: its first admission waits for
// the respawn.
func (m *manager) spawnFrom(ctx actor.Context, e *entry, pre *metastore.JobState, hold bool) {
	props := newJobProps(e.rec.GetId(), m.deps, m.scheduler, pre, hold, e.epoch)
	if e.takeover != nil {
		props = newOwnedJobProps(e.rec.GetId(), m.deps, m.scheduler, e.takeover)
		e.takeover = nil
	}
	pid, err := ctx.SpawnNamed(props, jobActorName(e.rec.GetId()))
	if err != nil {
		// The name is taken by an actor still stopping; try an unnamed one.
		pid = ctx.Spawn(newJobProps(e.rec.GetId(), m.deps, m.scheduler, nil, false, e.epoch))
	}
	e.pid = pid
	m.byPID[pid.Id] = e
}

// jobActorName is the name job id's actor is spawned under, as a child of
// the manager (its process id is the manager's, "/", and this name).
func jobActorName(id uint64) string {
	return "job-" + strconv.FormatUint(id, 10)
}

// route forwards a job command to its job actor, which answers the original
// sender. Jobs without an actor are answered here from the store.
func (m *manager) route(ctx actor.Context, name string) {
	m.routeMsg(ctx, name, ctx.Message())
}

// routeMsg sends msg (a job command) to the named job's actor with the
// current sender as its sender, so the job answers the client directly.
func (m *manager) routeMsg(ctx actor.Context, name string, msg any) {
	e := m.byName[name]
	if e == nil {
		ctx.Respond(&api.JobResponse{Error: &api.Error{Code: api.ErrorCode_NOT_FOUND, Field: "name", Message: fmt.Sprintf("job %s not found", api.Quote(name))}})
		return
	}
	if e.summary.GetState().Final() {
		// A final job's actor is stopping or gone: answer from the store,
		// never forward (a message to a stopping actor is lost).
		switch msg.(type) {
		case *api.ShowJobRequest:
			m.showStored(ctx, e)
		default:
			ctx.Respond(&api.JobResponse{Error: precondition("job %s is %s", name, e.summary.GetState())})
		}
		return
	}
	if m.clustered() && e.pid == nil {
		epoch, mine := m.owned[e.rec.GetId()]
		if !mine {
			m.forward(ctx, e, msg)
			return
		}
		// Spawned below at the epoch owned (it loads and fences itself):
		// a takeover still in flight then finds it running at that epoch
		// and leaves it, so the command is not lost to a replaced actor.
		e.epoch = epoch
	}
	if e.pid == nil {
		// The job actor gave up (restart budget) and the job is PAUSED:
		// a command brings it back, reloaded from the store.
		m.spawn(ctx, e)
	}
	ctx.RequestWithCustomSender(e.pid, msg, ctx.Sender())
}

// deleteJob removes a final job from the store and the registry; its
// table stays. Only STOPPED and CANCELLED jobs can be deleted: a job that
// may still write is never removed under its actor.
func (m *manager) deleteJob(name string) *api.JobResponse {
	e := m.byName[name]
	if e == nil {
		return &api.JobResponse{Error: &api.Error{Code: api.ErrorCode_NOT_FOUND, Field: "name", Message: fmt.Sprintf("job %s not found", api.Quote(name))}}
	}
	if !e.summary.GetState().Final() {
		return &api.JobResponse{Error: precondition("job %s is %s: stop it before deleting it", name, e.summary.GetState())}
	}
	if err := m.deps.Meta.DeleteJob(e.rec.GetId(), name); err != nil {
		return &api.JobResponse{Error: storeErr(err)}
	}
	if o := m.deps.Observer; o != nil {
		o.JobDeleted(e.rec.GetId())
	}
	if sk, err := m.deps.Sinks(e.rec.GetSpec().GetTable()); err != nil {
		m.jobLog(e.rec).Warn("job deleted; its sink is unavailable, its progress stays there", "err", err)
	} else if err := sk.DropJob(e.rec.GetId()); err != nil {
		m.jobLog(e.rec).Warn("job deleted; dropping its progress from its sink failed", "err", err)
	}
	m.unregister(e)
	m.jobLog(e.rec).Info("job deleted")
	return &api.JobResponse{Job: &api.JobInfo{Summary: proto.Clone(e.summary).(*api.JobSummary), Spec: api.RedactSpec(e.rec.GetSpec())}}
}

// showStored answers a show of a job that has no actor (a final job):
// its record and journal, and from its sink, off the mailbox and waited
// for at most showSinkWait, its progress, statistics and error rows.
func (m *manager) showStored(ctx actor.Context, e *entry) {
	id := e.rec.GetId()
	hist, err := history(m.deps.Meta, id)
	if err != nil {
		ctx.Respond(&api.JobResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}})
		return
	}
	to := ctx.Sender()
	if to == nil {
		return
	}
	v := jobView{rec: e.rec, summary: proto.Clone(e.summary).(*api.JobSummary)}
	sk, err := m.deps.Sinks(e.rec.GetSpec().GetTable())
	if err != nil {
		info := shape(v)
		info.History = hist
		info.ProgressUnavailable = api.Clip(err.Error(), api.MaxMessageBytes)
		info.ErrorRowsUnavailable = info.ProgressUnavailable
		ctx.Respond(&api.JobResponse{Job: info})
		return
	}
	v.sink = sk
	if !e.look.serves(lookKey{}, true, true) {
		e.look = startLook(sk, id, lookKey{}, true, true)
	}
	lk := e.look
	answerShow(m.life, to, lk, func(answered bool) *api.JobResponse {
		if answered && lk.progErr == nil {
			v.progress, v.checkpoints, v.stats = lk.prog.Positions, lk.prog.Checkpoints, lk.prog.Stats
		}
		info := shape(v)
		info.History = hist
		info.ProgressUnavailable = lk.unavailable(answered, lk.progErr)
		lk.fillErrorRows(info, answered)
		return &api.JobResponse{Job: info}
	})
}

// onJobTerminated handles a job actor that stopped: on purpose (a final
// state), or because the supervisor gave up on it. In the second case the
// job is durably paused with that reason, so it does not silently vanish.
func (m *manager) onJobTerminated(ctx actor.Context, who *actor.PID) {
	e := m.byPID[who.Id]
	if e == nil {
		return
	}
	delete(m.byPID, who.Id)
	m.deps.committed.drop(e.rec.GetId())
	if m.admitting[e.rec.GetId()] {
		delete(m.admitting, e.rec.GetId())
		m.releaseAdmissions(ctx)
	}
	if e.stopping == who.Id {
		e.stopping = ""
		m.ensureActor(ctx, e) // owned again meanwhile, or at a new epoch
		return
	}
	if m.stopping || e.pid == nil || e.pid.Id != who.Id {
		return
	}
	e.pid = nil
	if e.summary.GetState().Final() {
		return
	}
	if _, mine := m.owned[e.rec.GetId()]; m.clustered() && !mine {
		return // the job moved meanwhile; its new owner runs it
	}
	// The job actor is gone, so the manager is its journal's only writer now.
	st, err := m.deps.Meta.LoadJob(e.rec.GetId())
	if err != nil {
		m.jobLog(e.rec).Error("job actor gave up; cannot load job", "err", err)
		return
	}
	if st.Last != nil && st.Last.To.Final() {
		state, reason, message := stateOf(st.Last)
		e.summary = summaryOf(m.deps.Specs, e.rec, state, reason, message)
		return
	}
	t := &api.Transition{TimeUnixMs: m.deps.nowMs(), To: api.JobState_PAUSED, Reason: api.Reason_RESTART_BUDGET_EXHAUSTED,
		Message: "the job actor failed too often and was stopped by its supervisor"}
	if st.Last != nil {
		t.Seq, t.From = st.Last.Seq+1, st.Last.To
		if t.From == api.JobState_RUNNING {
			t.From = api.JobState_NEED_SCHEDULE
		}
	} else {
		t.Seq = 1
	}
	if err := m.deps.Meta.AppendTransition(e.rec.GetId(), t); err != nil {
		m.jobLog(e.rec).Error("journal restart-budget pause failed", "err", err)
		if m.clustered() {
			// The metadata store (etcd) is unreachable: try the job again
			// later rather than leave an owned job without an actor.
			m.life.after(m.deps.Settings.AutoResumeBase, &respawnJob{name: e.rec.GetName()})
		}
		return
	}
	e.summary = summaryOf(m.deps.Specs, e.rec, t.To, t.Reason, t.Message)
	// Bring the job back after the auto-resume back-off; the new job actor
	// finds it PAUSED for a transient reason and resumes it.
	n := 0
	if hist, err := m.deps.Meta.Journal(e.rec.GetId()); err == nil {
		for _, h := range hist {
			if h.Reason == api.Reason_RESTART_BUDGET_EXHAUSTED && m.deps.Now().Sub(time.UnixMilli(h.TimeUnixMs)) < m.deps.Settings.AutoResumeQuiet {
				n++
			}
		}
	}
	delay := backoff.Doubling(m.deps.Settings.AutoResumeBase, n-1, m.deps.Settings.AutoResumeMax)
	m.life.after(delay, &respawnJob{name: e.rec.GetName()})
	m.jobLog(e.rec).Warn("job paused: restart budget exhausted", "respawn_in", delay)
}

// respawnJob asks the manager (itself) to bring back a job whose actor the
// supervisor stopped.
type respawnJob struct{ name string }

func (m *manager) onRespawn(ctx actor.Context, msg *respawnJob) {
	e := m.byName[msg.name]
	if e == nil || e.pid != nil || e.summary.GetState().Final() || m.stopping {
		return
	}
	if _, mine := m.owned[e.rec.GetId()]; m.clustered() && !mine {
		return
	}
	m.spawn(ctx, e)
}

package actors

import (
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// The job actor: the only holder of one job's state. This file holds its
// state, its mailbox and its lifecycle; its concerns have their own files:
// state.go (transitions, user commands, failures), topology.go (partitions
// and their starts), watch.go (watermarks, idle jobs), autoresume.go,
// tasks.go (task generations), commit.go (group commit), sinkread.go (reads
// of the sink a command waits for), alter.go and show.go (the presentation
// of a job).

// jobStateChanged is sent by a job actor to the manager after each durable
// transition, so that listings need not ask every job.
type jobStateChanged struct {
	summary *api.JobSummary
	status  *jobStatus // nil: unchanged
	// rec is the job's record: an alter replaces it (never changes it in
	// place), and the manager's registry follows (which table a job
	// loads, for DROP TABLE and SHOW TABLES).
	rec *api.JobRecord
}

// Timer messages a job actor sends itself.
type (
	topologyTick  struct{ epoch uint64 }
	watermarkTick struct{}
	respawnTasks  struct{ epoch uint64 }
	autoResume    struct{ epoch uint64 }
	retrySchedule struct{ epoch uint64 }
	// recoveryFinished: the manager has respawned every job; a job it
	// respawned may now ask for admission.
	recoveryFinished struct{}
)

// job is the only holder of one job's state. Everything about the job is
// read or changed through its mailbox. Its state is grouped by concern,
// each group declared beside the file whose functions keep it:
//
//	jobCore          identity, record, journaled state, lifecycle (job.go, state.go)
//	sourceTopology   source, partitions, tasks, watermarks (topology.go, tasks.go, watch.go)
//	commitPipeline   durable positions and the group commit (commit.go)
//	errorWindow      failures, retries, the error window, auto-resume (state.go, autoresume.go)
//	presentation     what shows and listings see (show.go, listing.go, observe.go)
//	jobTimers        the pending timers (job.go)
type job struct {
	jobCore
	sourceTopology
	commitPipeline
	errorWindow
	presentation
	jobTimers
}

// jobCore is who the job is and where its life stands: its record, its
// journaled state, its sink and the actor incarnation's lifecycle.
type jobCore struct {
	id   uint64
	deps *Deps
	sch  *actor.PID
	life *lifetime
	// latch is shared by the actor's incarnations: a stop is final.
	latch *stopLatch
	// preload is the state recovery read for this job (first start only).
	preload *metastore.JobState
	// takeover is the state, progress and raised fence the manager got in
	// bulk when this member was given the job (cluster mode; first start
	// only).
	takeover *ownedStart
	// headRunning: the job's journal head says RUNNING although the actor
	// is not (yet) running: it ran on a former owner, or before this
	// actor restarted. In cluster mode that entry stays the head (the
	// assignment in etcd records who runs the job now): going RUNNING
	// again journals nothing, and the next entry journaled starts from
	// RUNNING.
	headRunning   bool
	holdAdmission bool // respawned by recovery: admission waits for *recoveryFinished
	// tornDown: the actor is stopping or restarting; its tasks end with it,
	// and that is no failure (no retry, no failing verdict or alert).
	tornDown bool

	rec  *api.JobRecord
	sink sink.Sink
	// state, reason and message are the job's current state; lastSeq is
	// its journal head.
	state   api.JobState
	reason  api.Reason
	message string
	lastSeq uint64
	// epoch changes whenever the job leaves RUNNING or NEED_SCHEDULE, so
	// that results of look-ups started before are recognised as stale.
	epoch uint64
	// logger is log's logger, built once for the name it carries.
	logger struct {
		name string
		l    *slog.Logger
	}
}

// jobTimers are the timers a job actor set and that have not fired
// (scheduleTimer); teardown stops them.
type jobTimers struct {
	timers []*jobTimer
}

type rateSample struct {
	atMs int64
	rows int64
}

// newJobProps are the props of a job's actor. preload (the recovery
// scan's state, or the one a create just wrote) serves the first start
// only: a restarted actor reloads from the store and asks for admission at
// once. hold: the first start waits for the respawn before it asks.
func newJobProps(id uint64, deps *Deps, sch *actor.PID, preload *metastore.JobState, hold bool, ownerEpoch uint64) *actor.Props {
	var pre atomic.Pointer[metastore.JobState]
	pre.Store(preload)
	return jobProps(func(latch *stopLatch) actor.Actor {
		st := pre.Swap(nil)
		return &job{
			jobCore:        jobCore{id: id, deps: deps, sch: sch, latch: latch, preload: st, holdAdmission: st != nil && hold},
			sourceTopology: sourceTopology{ownerEpoch: ownerEpoch},
		}
	})
}

// newOwnedJobProps are the props of an owned job's actor (cluster mode)
// that starts from what the manager read and fenced in bulk (first start
// only, as newJobProps' preload); it asks for admission at once.
func newOwnedJobProps(id uint64, deps *Deps, sch *actor.PID, st *ownedStart) *actor.Props {
	var pre atomic.Pointer[ownedStart]
	pre.Store(st)
	return jobProps(func(latch *stopLatch) actor.Actor {
		return &job{
			jobCore:        jobCore{id: id, deps: deps, sch: sch, latch: latch, takeover: pre.Swap(nil)},
			sourceTopology: sourceTopology{ownerEpoch: st.epoch},
		}
	})
}

// jobProps are the props of one job actor (they serve one spawn): every
// incarnation produce makes shares one stopLatch.
func jobProps(produce func(*stopLatch) actor.Actor) *actor.Props {
	latch := &stopLatch{}
	return actor.PropsFromProducer(func() actor.Actor { return produce(latch) }, actor.WithDispatcher(mailboxes), actor.WithSupervisor(actor.NewOneForOneStrategy(0, 0, func(any) actor.Directive {
		// A failed task is stopped, never restarted in place: its positions
		// may be stale. The job notices the Terminated and respawns a new
		// generation from its own progress.
		return actor.StopDirective
	})))
}

// log is the job's logger: every line carries "job" (the id) and "name".
func (j *job) log() *slog.Logger {
	if name := j.rec.GetName(); j.logger.l == nil || j.logger.name != name {
		j.logger.name, j.logger.l = name, jobLogger(j.deps.Logger, j.id, name)
	}
	return j.logger.l
}

// jobLogger returns l with a job's id and name under the constant keys
// "job" and "name" (the name is "" only before the job's snapshot is read).
func jobLogger(l *slog.Logger, id uint64, name string) *slog.Logger {
	return l.With("job", id, "name", name)
}

func (j *job) Receive(ctx actor.Context) {
	if !j.latch.admit(ctx) {
		return // started after a stop (stopping.go): never runs again
	}
	crashOn(ctx.Message())
	if _, ok := ctx.Message().(*actor.Started); ok {
		j.life = newLifetime(ctx)
	}
	if ctx = opened(j.life, ctx); ctx == nil {
		return // started by an earlier incarnation
	}
	if j.busy() && !commitSafe(ctx.Message()) {
		// A group commit (or a read of the sink a command waits for) is in
		// flight: whatever may change the job's state waits until it is
		// durable (or failed, or answered), so that no transition, alter or
		// respawn interleaves with it.
		j.deferred = append(j.deferred, deferredMsg{msg: ctx.Message(), sender: ctx.Sender()})
		return
	}
	j.handle(ctx)
}

func (j *job) handle(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		j.start(ctx)
	case *actor.Restarting, *actor.Stopping:
		j.teardown()
	case *recoveryFinished:
		held := j.holdAdmission && j.state == api.JobState_NEED_SCHEDULE
		j.holdAdmission = false
		if held {
			// Polling again (watchIfIdle): its timers start here.
			if j.endWatch() {
				j.refreshWatermarks(ctx)
			}
			j.askAdmission(ctx)
		}
	case *JobAdmitted:
		if j.state == api.JobState_NEED_SCHEDULE {
			j.resolveTopology(ctx)
		}
	case *retrySchedule:
		if msg.epoch == j.epoch && j.state == api.JobState_NEED_SCHEDULE {
			j.resolveTopology(ctx)
		}
	case *topologyResolved:
		j.onTopology(ctx, msg)
	case *topologyTick:
		// A watching idle job learns of new partitions from its source;
		// its ticks resume when it stops watching.
		if msg.epoch == j.epoch && j.state == api.JobState_RUNNING && j.unwatch == nil {
			j.resolveTopology(ctx)
		}
	case *watermarkTick:
		j.refreshWatermarks(ctx)
		j.judge(ctx, true)
	case *watermarksRefreshed:
		j.markBusy = false
		if msg.err != nil {
			j.onMarksFailed(ctx, msg.err)
		} else {
			j.onMarks(ctx, msg.marks)
		}
	case *watermarksWatched:
		j.onWatched(ctx, msg)
	case *commitBatch:
		j.onCommitBatch(ctx, msg)
	case *groupCommitted:
		j.onGroupCommitted(ctx, msg)
	case *sinkReadDone:
		j.onSinkRead(ctx, msg)
	case *taskFailed:
		j.onTaskFailed(ctx, msg)
	case *actor.Terminated:
		j.onTaskTerminated(ctx, msg.Who)
	case *autoResume:
		j.onAutoResume(ctx, msg)
	case *respawnTasks:
		if msg.epoch == j.epoch && j.state == api.JobState_RUNNING {
			j.spawnTasks(ctx)
		}
	case *api.PauseJobRequest:
		ctx.Respond(j.userPause(ctx))
	case *api.ResumeJobRequest:
		j.userResume(ctx)
	case *api.StopJobRequest:
		ctx.Respond(j.userStop(ctx))
	case *api.ShowJobRequest:
		j.show(ctx)
	case *api.JobCommittedRequest:
		j.onCommittedRequest(ctx, msg)
	case *api.AlterJobRequest:
		j.userAlter(ctx, msg)
	case *alterResolved:
		j.onAlterResolved(ctx, msg)
	case *InspectJob:
		ctx.Respond(&JobRuntime{State: j.state, Generation: j.generation, Progress: cloneProgress(j.progress), Tasks: ctx.Children(), Timers: len(j.timers)})
	}
}

func cloneProgress(p map[int32]int64) map[int32]int64 {
	out := make(map[int32]int64, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}

// recoveredMessage is the message of a RECOVERED transition.
const recoveredMessage = "restored from RUNNING at start"

// supersededRecoveredMessage is the message of the RECOVERED transition of
// a job paused SUPERSEDED by an earlier process of this node.
const supersededRecoveredMessage = "this node started again and claimed the job's database: " +
	"a process with this node's id that loaded the job since can no longer write there"

// start loads the job: its snapshot and state from the metadata store, its
// positions and statistics from its sink (the authority on where the job
// stands). A restarted job actor comes here too: its in-memory state was
// rebuilt by the producer, so everything is reloaded.
func (j *job) start(ctx actor.Context) {
	j.tornDown = false
	st, take := j.startingState()
	j.load(st)
	spec := j.rec.GetSpec()
	sk, err := j.deps.Sinks(spec.GetTable())
	if err == nil {
		j.sink = sk
		j.loadPositions(st, take)
	}
	if !j.restoreRunning(ctx) {
		return
	}
	if err != nil && !j.state.Final() {
		j.transition(ctx, api.JobState_PAUSED, api.Reason_STORE_FAILURE, fmt.Sprintf("sink of table %s: %v", spec.GetTable().GetName(), err))
		return
	}
	if j.holdAdmission && j.state == api.JobState_PAUSED && j.reason == api.Reason_SUPERSEDED {
		// SUPERSEDED stopped the process whose writes were refused, not
		// the job: this process, started since (respawned by its
		// recovery), claimed the job's database when it read the job's
		// progress above, so the job loads here again.
		if !j.transition(ctx, api.JobState_NEED_SCHEDULE, api.Reason_RECOVERED, supersededRecoveredMessage) {
			return
		}
	}
	// The table schema is built when tasks are first spawned: an idle job
	// never needs it (a restart of 100,000 idle jobs builds none).
	j.schema = nil
	j.format = table.FormatOf(spec)
	err = j.openSource(spec)
	if !j.holdAdmission {
		// A job respawned by recovery is listed by the manager as it
		// restores itself (the manager built that summary from the same
		// state): 100,000 reports now would only queue in the manager's
		// mailbox ahead of the listings. Its first report comes when
		// something moves.
		j.notify(ctx)
	}
	if err != nil && !j.state.Final() {
		j.transition(ctx, api.JobState_PAUSED, api.Reason_SOURCE_CONFIG_ERROR, err.Error())
		return
	}
	j.refreshWatermarks(ctx) // and every WatermarkInterval after
	j.planAutoResume(ctx)
	if j.state == api.JobState_NEED_SCHEDULE {
		if j.holdAdmission {
			// Respawned by recovery: ask for admission once every job is
			// back (*recoveryFinished), so that scheduling does not slow
			// the respawn of the rest.
			return
		}
		j.askAdmission(ctx)
	}
}

// restoreRunning takes a job the journal leaves RUNNING back to
// NEED_SCHEDULE; it reports false if that transition's journal write
// failed (transition).
func (j *job) restoreRunning(ctx actor.Context) bool {
	if j.state == api.JobState_RUNNING && j.ownerEpoch != 0 {
		// Cluster mode: the job ran on a former owner (or before this actor
		// restarted). RUNNING is not restored: the actor starts in
		// NEED_SCHEDULE, but journals nothing for it; the assignment is
		// the record of the move, and the head stays RUNNING, which is
		// where the job goes again once admitted (headRunning).
		j.state, j.reason, j.message, j.headRunning = api.JobState_NEED_SCHEDULE, api.Reason_RECOVERED, recoveredMessage, true
	}
	if j.state == api.JobState_RUNNING {
		// RUNNING means "has live tasks" and is never restored.
		return j.transition(ctx, api.JobState_NEED_SCHEDULE, api.Reason_RECOVERED, recoveredMessage)
	}
	return true
}

// startingState returns the state this start begins from: what recovery
// or the manager's takeover read for the first start, else the store's.
func (j *job) startingState() (*metastore.JobState, *ownedStart) {
	st, take := j.preload, j.takeover
	j.preload, j.takeover = nil, nil
	if take != nil {
		st = take.state
	}
	if st == nil {
		var err error
		if st, err = j.deps.Meta.LoadJob(j.id); err != nil {
			// Without its snapshot the job cannot run; the supervisor decides.
			panic(fmt.Errorf("actors: job %d: load: %w", j.id, err))
		}
	}
	return st, take
}

// load takes the job's record and journaled state from st; what comes
// from the sink and the source starts empty.
func (j *job) load(st *metastore.JobState) {
	j.rec = st.Record
	j.behind = map[int32]int64{}
	j.marks = map[int32]int64{}
	j.tasks = map[string]int{}
	j.progress, j.checkpoints, j.stats = map[int32]int64{}, map[int32][]byte{}, &api.JobStats{}
	j.state, j.reason, j.message, j.lastSeq = api.JobState_NEED_SCHEDULE, api.Reason_CREATED, "", 0
	j.headRunning = false
	if st.Last != nil {
		j.state, j.reason, j.message = stateOf(st.Last)
		j.lastSeq = st.Last.Seq
	}
}

// loadPositions loads the job's positions and statistics from j.sink (or
// takes what recovery or the takeover read) and raises the job's fence.
// Without its positions the job cannot run: it panics, and the supervisor
// decides.
func (j *job) loadPositions(st *metastore.JobState, take *ownedStart) {
	sk := j.sink
	prog := st.SinkProgress
	var err error
	if take != nil && take.progress != nil {
		// Read by the manager after it raised the fence (sink.Claimer).
		prog = take.progress
	} else if js, ok := sk.(journaledStarts); prog == nil || !ok || !js.Journals(j.deps.Meta) {
		// Only the metadata store's own sink may hand over what its
		// recovery scan read (one consistent read, before this actor,
		// the single writer of its progress, existed).
		prog, err = sk.Progress(j.id)
	}
	if err != nil {
		panic(fmt.Errorf("actors: job %d: load progress: %w", j.id, err))
	}
	if prog, err = j.applyRebase(sk, prog); err != nil {
		// Journaled, not applied, and the sink refuses: the job
		// cannot read from positions it does not know.
		panic(fmt.Errorf("actors: job %d: %w", j.id, err))
	}
	j.progress, j.checkpoints, j.stats = prog.Positions, prog.Checkpoints, prog.Stats
	j.observeFence(prog.Fence)
	j.loadWindowReset()
	if take == nil || take.progress == nil {
		if err = j.claimFence(); err != nil {
			panic(fmt.Errorf("actors: job %d: raise fence to epoch %d: %w", j.id, j.ownerEpoch, err))
		}
	}
}

// askAdmission asks the scheduler to admit the job (*JobAdmitted).
func (j *job) askAdmission(ctx actor.Context) {
	j.holdAdmission = false
	ctx.Request(j.sch, &JobReady{JobID: j.id})
}

func (j *job) teardown() {
	j.tornDown = true
	if g := j.inflight; g != nil {
		// The store must not be closed under the commit, and a restarted
		// actor must load what it made durable.
		<-g.done
		j.inflight = nil
	}
	if r := j.reading; r != nil {
		// A read may apply a journaled rebase (a write): a restarted actor
		// must not read under it, as it did not when reads were made in
		// the mailbox.
		r.timer.Stop()
		<-r.done
		j.reading = nil
	}
	j.endWatch()
	for _, t := range j.timers {
		t.t.Stop()
	}
	j.timers = nil
	j.life.end()
	if j.src != nil {
		j.src.Close()
		j.src = nil
	}
}

// scheduleTimer sends msg to the job after d (within this incarnation).
func (j *job) scheduleTimer(d time.Duration, msg any) {
	jt, life := &jobTimer{}, j.life
	jt.t = time.AfterFunc(d, func() {
		jt.fired.Store(true)
		life.send(msg)
	})
	// Only pending timers are kept (teardown stops them): a long-lived
	// job must not hold every timer it ever fired.
	j.timers = slices.DeleteFunc(j.timers, func(t *jobTimer) bool { return t.fired.Load() })
	j.timers = append(j.timers, jt)
}

// jobTimer is a timer of a job actor and whether it has fired.
type jobTimer struct {
	t     *time.Timer
	fired atomic.Bool
}

// nextGeneration is the job's next task generation: node-wide on a single
// node; in cluster mode the ownership epoch in the high bits over a local
// counter, so that a new owner's generations exceed every former owner's.
func (j *job) nextGeneration() uint64 {
	if j.ownerEpoch == 0 {
		return j.deps.nextGeneration()
	}
	j.localGen = min(j.localGen+1, sink.MaxLocal)
	return sink.EpochFence(j.ownerEpoch, j.localGen)
}

// observeFence makes later generations newer than a fence the sink stored.
// In cluster mode a fence of our own epoch lifts the local counter; one of
// a later epoch means the job has moved on without us, and our commits are
// refused as they should be.
func (j *job) observeFence(f uint64) {
	if j.ownerEpoch == 0 {
		j.deps.observeFence(f)
		return
	}
	if sink.FenceEpoch(f) == j.ownerEpoch && sink.FenceLocal(f) > j.localGen {
		j.localGen = sink.FenceLocal(f)
	}
}

// claimFence raises the job's stored fence to its epoch before any task
// reads, when the sink can: from then on a former owner's commits are
// refused even before this owner commits (REQUIRES: in the actor; blocks
// on the sink as loading progress does).
func (j *job) claimFence() error {
	f, ok := j.sink.(sink.Fencer)
	if j.ownerEpoch == 0 || !ok {
		return nil
	}
	return f.RaiseFence(j.id, sink.EpochFence(j.ownerEpoch, 0))
}

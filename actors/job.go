package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/table"
)

// jobStateChanged is sent by a job actor to the manager after each durable
// transition, so that listings need not ask every job.
type jobStateChanged struct {
	summary *api.JobSummary
}

// topologyResolved carries a topology look-up's result to its job actor.
type topologyResolved struct {
	epoch      uint64
	partitions []int32
	initial    map[int32]sources.Start // starts of partitions without progress
	err        error
}

// watermarksRefreshed carries cached high watermarks to the job actor.
type watermarksRefreshed struct {
	marks map[int32]int64
	err   error
}

// watermarksWatched carries watermarks a Watcher source reported changed.
type watermarksWatched struct {
	marks map[int32]int64
}

// inspectJob asks a job actor for its runtime state (in-process only: it
// is not a protobuf message, so no remote peer can send it).
type inspectJob struct{}

// jobInspection answers inspectJob.
type jobInspection struct {
	state      api.JobState
	generation uint64
	progress   map[int32]int64
	timers     int // timers held (pending ones only)
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
// read or changed through its mailbox.
type job struct {
	id   uint64
	deps *Deps
	sch  *actor.PID
	// preload is the state recovery read for this job (first start only).
	preload *persistence.JobState

	rec      *api.JobRecord
	schema   *table.Schema
	format   table.Format
	src      Source
	state    api.JobState
	reason   api.Reason
	message  string
	lastSeq  uint64
	progress map[int32]int64
	// checkpoints are the partitions' opaque source checkpoints (Kinesis),
	// moved with progress.
	checkpoints map[int32][]byte
	// behind is the source's MillisBehindLatest per partition, from the
	// newest commit that reported it.
	behind map[int32]int64
	// readable is the set of partitions the current tasks read (a lineage
	// source reads a child only after its parents ended).
	readable []int32
	stats    *api.JobStats
	marks    map[int32]int64
	// idle: RUNNING without tasks, because the cached high watermarks
	// showed nothing to read; the next watermark refresh that shows data
	// spawns them. An idle job costs its actor and its snapshot only.
	idle bool
	// batchesAtMark is CommittedBatches at the previous watermark refresh:
	// tasks that committed nothing since and have nothing to read are
	// stopped.
	batchesAtMark int64

	// epoch changes whenever the job leaves RUNNING or NEED_SCHEDULE, so
	// that results of look-ups started before are recognised as stale.
	epoch          uint64
	generation     uint64
	tasks          map[string]int    // task PID id -> index, current generation only
	retries        int               // consecutive task or topology failures
	autoResumeN    int               // the attempt number of the planned auto-resume
	runningSinceMs int64             // when the job last entered RUNNING
	srcProps       map[string]string // the client settings j.src was opened with
	topoBusy       bool
	markBusy       bool
	unwatch        func() // set while an idle job watches its source (Watcher)
	holdAdmission  bool   // respawned by recovery: admission waits for *recoveryFinished
	timers         []*jobTimer
	cancel         context.CancelFunc
	rowsWindow     []rateSample

	// Group commit: inflight is the group being made durable in a
	// goroutine, commitWait the batches that arrived since (they go
	// together in the next group), deferred the messages that wait for the
	// in-flight group to finish.
	inflight   *commitGroup
	commitWait []queuedCommit
	commitSeq  uint64
	deferred   []deferredMsg
}

type rateSample struct {
	atMs int64
	rows int64
}

func newJobProps(id uint64, deps *Deps, sch *actor.PID, preload *persistence.JobState) *actor.Props {
	// The recovery scan's state serves the first start only: a restarted
	// actor reloads from the store and asks for admission at once.
	var pre atomic.Pointer[persistence.JobState]
	pre.Store(preload)
	return actor.PropsFromProducer(func() actor.Actor {
		st := pre.Swap(nil)
		return &job{id: id, deps: deps, sch: sch, preload: st, holdAdmission: st != nil}
	}, actor.WithSupervisor(actor.NewOneForOneStrategy(0, 0, func(any) actor.Directive {
		// A failed task is stopped, never restarted in place: its positions
		// may be stale. The job notices the Terminated and respawns a new
		// generation from its own progress.
		return actor.StopDirective
	})))
}

func (j *job) log() *slog.Logger { return j.deps.Logger.With("job", j.id) }

func (j *job) Receive(ctx actor.Context) {
	crashOn(ctx.Message())
	if j.inflight != nil && !commitSafe(ctx.Message()) {
		// A group commit is in flight: whatever may change the job's state
		// waits until it is durable (or failed), so that no transition,
		// alter or respawn interleaves with it.
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
		if j.holdAdmission && j.state == api.JobState_NEED_SCHEDULE {
			j.askAdmission(ctx)
		}
		j.holdAdmission = false
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
	case *watermarksRefreshed:
		j.markBusy = false
		if msg.err == nil {
			j.onMarks(ctx, msg.marks)
		}
	case *watermarksWatched:
		if j.unwatch != nil {
			j.onMarks(ctx, msg.marks)
			for p := range msg.marks {
				if _, ok := j.progress[p]; !ok {
					j.resolveTopology(ctx) // a new partition, maybe ours
					break
				}
			}
		}
	case *commitBatch:
		j.onCommitBatch(ctx, msg)
	case *groupCommitted:
		j.onGroupCommitted(ctx, msg)
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
		ctx.Respond(j.userResume(ctx))
	case *api.StopJobRequest:
		ctx.Respond(j.userStop(ctx))
	case *api.ShowJobRequest:
		ctx.Respond(j.show())
	case *api.AlterJobRequest:
		j.userAlter(ctx, msg)
	case *alterResolved:
		j.onAlterResolved(ctx, msg)
	case *alterStatement:
		j.onAlterStatement(ctx, msg)
	case *InspectJob:
		p := make(map[int32]int64, len(j.progress))
		for k, v := range j.progress {
			p[k] = v
		}
		ctx.Respond(&JobRuntime{State: j.state.String(), Generation: j.generation, Progress: p, Tasks: ctx.Children()})
	case *inspectJob:
		p := make(map[int32]int64, len(j.progress))
		for k, v := range j.progress {
			p[k] = v
		}
		ctx.Respond(&jobInspection{state: j.state, generation: j.generation, progress: p, timers: len(j.timers)})
	}
}

// recoveredMessage is the message of a RECOVERED transition.
const recoveredMessage = "restored from RUNNING at start"

// start loads the job from the store. A restarted job actor comes here too:
// its in-memory state was rebuilt by the producer, so everything is
// reloaded from Pebble.
func (j *job) start(ctx actor.Context) {
	st := j.preload
	j.preload = nil
	if st == nil {
		var err error
		if st, err = j.deps.Store.LoadJob(j.id); err != nil {
			// Without its snapshot the job cannot run; the supervisor decides.
			panic(fmt.Errorf("actors: job %d: load: %w", j.id, err))
		}
	}
	j.rec = st.Record
	j.progress = st.Progress
	j.checkpoints = st.Checkpoints
	j.behind = map[int32]int64{}
	j.stats = st.Stats
	j.marks = map[int32]int64{}
	j.tasks = map[string]int{}
	j.state, j.reason, j.message, j.lastSeq = api.JobState_NEED_SCHEDULE, api.Reason_CREATED, "", 0
	if st.Last != nil {
		j.state, j.reason, j.message, j.lastSeq = st.Last.To, st.Last.Reason, st.Last.Message, st.Last.Seq
	}
	if j.state == api.JobState_RUNNING {
		// RUNNING means "has live tasks" and is never restored.
		if !j.transition(ctx, api.JobState_NEED_SCHEDULE, api.Reason_RECOVERED, recoveredMessage) {
			return
		}
	}
	spec := j.rec.GetSpec()
	// The table schema is built when tasks are first spawned: an idle job
	// never needs it (a restart of 100,000 idle jobs builds none).
	j.schema = nil
	j.format = table.Format{Kind: spec.GetFormat(), ColumnSeparator: spec.GetColumnSeparator(), JSONPaths: spec.GetJsonpaths()}
	var err error
	j.src, err = j.deps.Sources(spec)
	j.srcProps = spec.GetKafka().GetProperties()
	j.notify(ctx)
	if err != nil && isFinal(j.state) == false {
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

// onMarks takes new high watermarks: an idle job with data to read spawns
// tasks; a job whose tasks found nothing since the last look lets them go.
func (j *job) onMarks(ctx actor.Context, marks map[int32]int64) {
	j.marks = marks
	quiet := j.stats.GetCommittedBatches() == j.batchesAtMark
	j.batchesAtMark = j.stats.GetCommittedBatches()
	switch {
	case j.state != api.JobState_RUNNING, j.inflight != nil:
		// Tasks change only between group commits.
	case j.idle && !j.nothingToRead():
		j.spawnTasks(ctx)
	case !j.idle && quiet && len(j.tasks) > 0 && j.nothingToRead():
		if _, lineage := j.src.(Lineage); !lineage {
			// Nothing committed since the last look and nothing to
			// read: the tasks go; data arriving brings them back.
			j.stopTasks(ctx)
			j.idle = true
		}
	}
}

// watchIfIdle makes an idle RUNNING job whose source is a Watcher watch
// it instead of polling, and reports whether the job is watching. Any
// other job stops watching and goes back to its timers.
func (j *job) watchIfIdle(ctx actor.Context) bool {
	w, ok := j.src.(Watcher)
	if !ok || !j.idle || j.state != api.JobState_RUNNING || len(j.tasks) > 0 {
		j.stopWatching(ctx)
		return false
	}
	if j.unwatch == nil {
		self, system := ctx.Self(), ctx.ActorSystem()
		j.unwatch = w.Watch(func(marks map[int32]int64) {
			system.Root.Send(self, &watermarksWatched{marks: marks})
		})
	}
	return true
}

// stopWatching ends a watch and re-arms the job's timers.
func (j *job) stopWatching(ctx actor.Context) {
	if j.endWatch() {
		j.rearm(ctx)
	}
}

// endWatch ends a watch, if any, without re-arming anything, and reports
// whether there was one.
func (j *job) endWatch() bool {
	if j.unwatch == nil {
		return false
	}
	j.unwatch()
	j.unwatch = nil
	return true
}

// rearm starts the watermark and topology refreshes of a job that was
// watching (a watching job has none): its timers, or a new watch of its
// current source if it is still idle.
func (j *job) rearm(ctx actor.Context) {
	j.scheduleTimer(ctx, j.deps.Settings.TopologyInterval, &topologyTick{epoch: j.epoch})
	j.refreshWatermarks(ctx)
}

// askAdmission asks the scheduler to admit the job (*JobAdmitted).
func (j *job) askAdmission(ctx actor.Context) {
	j.holdAdmission = false
	ctx.Request(j.sch, &JobReady{JobID: j.id})
}

func (j *job) teardown() {
	if g := j.inflight; g != nil {
		// The store must not be closed under the commit, and a restarted
		// actor must load what it made durable.
		<-g.done
		j.inflight = nil
	}
	j.endWatch()
	for _, t := range j.timers {
		t.t.Stop()
	}
	j.timers = nil
	if j.cancel != nil {
		j.cancel()
		j.cancel = nil
	}
	if j.src != nil {
		j.src.Close()
		j.src = nil
	}
}

func isFinal(s api.JobState) bool {
	return s == api.JobState_STOPPED || s == api.JobState_CANCELLED
}

func (j *job) scheduleTimer(ctx actor.Context, d time.Duration, msg any) {
	self, system := ctx.Self(), ctx.ActorSystem()
	jt := &jobTimer{}
	jt.t = time.AfterFunc(d, func() {
		jt.fired.Store(true)
		system.Root.Send(self, msg)
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

// transition journals a state change durably, then applies it. It returns
// false if the journal write failed, in which case nothing changed.
//
// INVARIANT: every transition is journaled before it is acknowledged or
// acted on.
func (j *job) transition(ctx actor.Context, to api.JobState, reason api.Reason, message string) bool {
	t := j.nextTransition(to, reason, message)
	if err := j.deps.Store.AppendTransition(j.id, t); err != nil {
		j.log().Error("journal transition failed", "to", to.String(), "err", err)
		return false
	}
	j.applyTransition(ctx, t)
	return true
}

// nextTransition is the journal entry of a change from the current state.
func (j *job) nextTransition(to api.JobState, reason api.Reason, message string) *api.Transition {
	return &api.Transition{
		Seq: j.lastSeq + 1, TimeUnixMs: j.deps.nowMs(),
		From: j.state, To: to, Reason: reason, Message: message,
	}
}

// applyTransition acts on t once it is durable.
func (j *job) applyTransition(ctx actor.Context, t *api.Transition) {
	to, reason, message := t.GetTo(), t.GetReason(), t.GetMessage()
	if h := j.deps.Hooks.AfterTransition; h != nil {
		h(j.id, t)
	}
	j.lastSeq = t.Seq
	leaving := j.state
	j.state, j.reason, j.message = to, reason, message
	if to != api.JobState_RUNNING && leaving == api.JobState_RUNNING || to == api.JobState_PAUSED || isFinal(to) {
		j.stopTasks(ctx)
		j.stopWatching(ctx)
	}
	if to != leaving {
		j.epoch++
	}
	if to == api.JobState_RUNNING {
		j.runningSinceMs = t.TimeUnixMs
	}
	// Routine steps (scheduled, recovered at restart) are debug: a restart
	// of 100,000 jobs would otherwise log 200,000 lines; the manager logs
	// the recovery as one line. Everything a user did or a failure caused
	// is info.
	lvl := slog.LevelInfo
	if reason == api.Reason_SCHEDULED || reason == api.Reason_RECOVERED {
		lvl = slog.LevelDebug
	}
	if j.deps.Logger.Enabled(context.Background(), lvl) {
		j.log().Log(context.Background(), lvl, "job state", "from", leaving.String(), "to", to.String(), "reason", reason.String(), "message", message)
	}
	j.notify(ctx)
	if to == api.JobState_PAUSED {
		j.planAutoResume(ctx)
	}
}

func (j *job) notify(ctx actor.Context) {
	if p := ctx.Parent(); p != nil {
		ctx.Send(p, &jobStateChanged{summary: j.summary()})
	}
}

func (j *job) summary() *api.JobSummary {
	return summaryOf(j.rec, j.state, j.reason, j.message)
}

func summaryOf(rec *api.JobRecord, state api.JobState, reason api.Reason, message string) *api.JobSummary {
	src := ""
	if k := rec.GetSpec().GetKafka(); k != nil {
		src = "kafka://" + k.GetTopic()
	} else if k := rec.GetSpec().GetKinesis(); k != nil {
		src = "kinesis://" + k.GetStream()
	}
	return &api.JobSummary{
		Id: rec.GetId(), Name: rec.GetName(), State: state, Reason: reason,
		ReasonMessage: message, Table: rec.GetSpec().GetTable().GetName(), Source: src,
	}
}

// ---------------------------------------------------------------- topology

// resolveTopology looks up the source's partitions and the initial
// positions of partitions without progress, in a goroutine.
func (j *job) resolveTopology(ctx actor.Context) {
	if j.topoBusy || j.src == nil {
		return
	}
	j.topoBusy = true
	self, system := ctx.Self(), ctx.ActorSystem()
	src, epoch := j.src, j.epoch
	// A Kafka job chooses partitions and their offsets here; a Kinesis
	// source applies its own shard choice and positions (want is "").
	kafka := j.rec.GetSpec().GetKafka()
	wanted := kafka.GetPartitions()
	offsets := kafka.GetOffsets()
	def := kafka.GetDefaultOffset()
	initial := len(j.progress) == 0
	known := make(map[int32]bool, len(j.progress))
	for p := range j.progress {
		known[p] = true
	}
	rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	go func() {
		defer cancel()
		res := &topologyResolved{epoch: epoch}
		defer func() {
			if r := recover(); r != nil {
				res = &topologyResolved{epoch: epoch, err: &PanicError{Where: "topology look-up", Value: r, Stack: debug.Stack()}}
			}
			system.Root.Send(self, res)
		}()
		all, err := src.Partitions(rctx)
		if err != nil {
			res.err = err
			return
		}
		parts := all
		if len(wanted) > 0 {
			have := make(map[int32]bool, len(all))
			for _, p := range all {
				have[p] = true
			}
			for _, p := range wanted {
				if !have[p] {
					res.err = &sources.ConfigError{Err: fmt.Errorf("kafka.partitions: partition %d does not exist in the topic", p)}
					return
				}
			}
			parts = slices.Clone(wanted)
			slices.Sort(parts)
		}
		want := map[int32]string{}
		for _, p := range parts {
			if known[p] {
				continue
			}
			if o, ok := offsets[p]; ok {
				want[p] = o
			} else {
				want[p] = def
			}
		}
		res.partitions = parts
		if len(want) > 0 {
			res.initial, res.err = src.ResolveStarts(rctx, want, initial)
		}
	}()
}

func (j *job) onTopology(ctx actor.Context, msg *topologyResolved) {
	j.topoBusy = false
	if msg.epoch != j.epoch || (j.state != api.JobState_NEED_SCHEDULE && j.state != api.JobState_RUNNING) {
		return
	}
	if msg.err != nil {
		j.onSourceError(ctx, msg.err)
		return
	}
	fresh := map[int32]int64{}
	var cks map[int32][]byte
	for p, s := range msg.initial {
		if _, ok := j.progress[p]; !ok {
			fresh[p] = s.Offset
			if s.Checkpoint != nil {
				if cks == nil {
					cks = map[int32][]byte{}
				}
				cks[p] = s.Checkpoint
			}
		}
	}
	// A first schedule journals RUNNING in the same synced write as the
	// initial positions (one fsync per new job, not two).
	var run *api.Transition
	if j.state == api.JobState_NEED_SCHEDULE && len(fresh) > 0 {
		run = j.nextTransition(api.JobState_RUNNING, api.Reason_SCHEDULED, "")
	}
	if len(fresh) > 0 {
		// INVARIANT (topology follows progress): a new partition's initial
		// position (and, for Kinesis, its lineage and start position) is
		// durable before any task is given the partition.
		if err := j.deps.Store.InitStarts(j.id, fresh, cks, run); err != nil {
			j.onStoreError(ctx, fmt.Errorf("persist initial positions: %w", err))
			return
		}
		for p, o := range fresh {
			j.progress[p] = o
		}
		for p, c := range cks {
			j.checkpoints[p] = c
		}
		j.log().Info("new partitions", "positions", fmt.Sprint(fresh))
	}
	switch j.state {
	case api.JobState_NEED_SCHEDULE:
		if run != nil {
			j.applyTransition(ctx, run)
		} else if !j.transition(ctx, api.JobState_RUNNING, api.Reason_SCHEDULED, "") {
			return
		}
		j.spawnTasks(ctx)
	case api.JobState_RUNNING:
		if len(fresh) > 0 {
			j.spawnTasks(ctx)
		}
	}
	j.scheduleTimer(ctx, j.deps.Settings.TopologyInterval, &topologyTick{epoch: j.epoch})
}

// onSourceError decides what a source failure does to the job.
func (j *job) onSourceError(ctx actor.Context, err error) {
	var oor *sources.OutOfRangeError
	var cfg *sources.ConfigError
	switch {
	case errors.As(err, &oor):
		// INVARIANT (no silent loss): the records the job needs are gone;
		// stop with an explicit reason instead of skipping.
		j.transition(ctx, api.JobState_PAUSED, api.Reason_OFFSET_OUT_OF_RANGE, oor.Error())
	case errors.As(err, &cfg):
		j.transition(ctx, api.JobState_PAUSED, api.Reason_SOURCE_CONFIG_ERROR, cfg.Error())
	default:
		// Transient: stay where we are and try again with back-off; after
		// SourceRetryLimit failures in a row, pause (and auto-resume later).
		j.retries++
		if j.retries > j.deps.Settings.SourceRetryLimit {
			reason := api.Reason_SOURCE_UNREACHABLE
			var pe *PanicError
			if errors.As(err, &pe) {
				reason = api.Reason_INTERNAL_ERROR
			}
			j.transition(ctx, api.JobState_PAUSED, reason,
				fmt.Sprintf("%d failures in a row; last: %v", j.retries-1, err))
			return
		}
		delay := j.retryDelay(j.retries)
		j.message = fmt.Sprintf("source error (retry %d in %s): %v", j.retries, delay, err)
		j.log().Warn("source error", "err", err, "retry_in", delay)
		if j.state == api.JobState_NEED_SCHEDULE {
			j.scheduleTimer(ctx, delay, &retrySchedule{epoch: j.epoch})
		} else {
			j.stopTasks(ctx)
			j.scheduleTimer(ctx, delay, &respawnTasks{epoch: j.epoch})
		}
	}
}

func (j *job) onStoreError(ctx actor.Context, err error) {
	j.log().Error("store error", "err", err)
	// A failed store stops the process (persistence.Options.OnFatal); a
	// refused write leaves the job where it is, and tasks are restarted.
	j.stopTasks(ctx)
	if !j.transition(ctx, api.JobState_PAUSED, api.Reason_STORE_FAILURE, err.Error()) {
		j.message = err.Error()
	}
}

// retryDelay is the back-off before retry n (1-based) of a transient
// source failure: SourceRetryBase doubled per retry, at most 30s.
func (j *job) retryDelay(n int) time.Duration {
	return doubling(j.deps.Settings.SourceRetryBase, n-1, 30*time.Second)
}

// doubling returns min(base * 2^n, limit).
func doubling(base time.Duration, n int, limit time.Duration) time.Duration {
	d := base
	for i := 0; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// ---------------------------------------------------------------- auto-resume

// transient reports whether a pause reason is resumed automatically. User
// pauses, the error-row budget, data loss and configuration errors never
// are: they need a person.
func transient(r api.Reason) bool {
	switch r {
	case api.Reason_SOURCE_UNREACHABLE, api.Reason_INTERNAL_ERROR, api.Reason_STORE_FAILURE, api.Reason_RESTART_BUDGET_EXHAUSTED:
		return true
	}
	return false
}

// planAutoResume schedules the auto-resume of a job paused for a transient
// reason, min(AutoResumeBase * 2^n, AutoResumeMax) after the pause, where n
// counts the auto-resumes journaled within AutoResumeQuiet. Both come from
// the journal, so the plan survives a restart.
func (j *job) planAutoResume(ctx actor.Context) {
	if j.state != api.JobState_PAUSED || !transient(j.reason) {
		return
	}
	hist, err := j.deps.Store.Journal(j.id)
	if err != nil || len(hist) == 0 {
		j.log().Error("auto-resume: read journal", "err", err)
		return
	}
	now := j.deps.Now()
	n := 0
	for _, t := range hist {
		if t.Reason == api.Reason_AUTO_RESUME && now.Sub(time.UnixMilli(t.TimeUnixMs)) < j.deps.Settings.AutoResumeQuiet {
			n++
		}
	}
	set := j.deps.Settings
	delay := doubling(set.AutoResumeBase, n, set.AutoResumeMax)
	pausedAt := time.UnixMilli(hist[len(hist)-1].TimeUnixMs)
	wait := max(pausedAt.Add(delay).Sub(now), 0)
	j.autoResumeN = n + 1
	j.log().Info("auto-resume planned", "reason", j.reason.String(), "attempt", n+1, "in", wait)
	j.scheduleTimer(ctx, wait, &autoResume{epoch: j.epoch})
}

func (j *job) onAutoResume(ctx actor.Context, msg *autoResume) {
	if msg.epoch != j.epoch || j.state != api.JobState_PAUSED || !transient(j.reason) {
		return
	}
	if j.src == nil {
		src, err := j.deps.Sources(j.rec.GetSpec())
		if err != nil {
			j.transition(ctx, api.JobState_PAUSED, api.Reason_SOURCE_CONFIG_ERROR, err.Error())
			return
		}
		j.src = src
	}
	if !j.transition(ctx, api.JobState_NEED_SCHEDULE, api.Reason_AUTO_RESUME,
		fmt.Sprintf("auto-resume %d after %s", j.autoResumeN, j.reason)) {
		return
	}
	j.retries = 0
	j.askAdmission(ctx)
}

// ---------------------------------------------------------------- tasks

// spawnTasks replaces the job's tasks by a new generation reading from the
// job's durable progress.
func (j *job) spawnTasks(ctx actor.Context) {
	j.stopTasks(ctx)
	parts := slices.Sorted(maps.Keys(j.progress))
	lin, keep := j.src.(Lineage)
	if keep {
		parts = lin.Readable(parts, j.checkpoints)
	}
	j.readable = parts
	j.idle = !keep && j.nothingToRead()
	if !j.idle {
		j.stopWatching(ctx)
	}
	if len(parts) == 0 || j.idle {
		return
	}
	spec := j.rec.GetSpec()
	if j.schema == nil {
		schema, err := table.NewSchema(spec.GetTable())
		if err != nil {
			j.transition(ctx, api.JobState_PAUSED, api.Reason_SOURCE_CONFIG_ERROR, err.Error())
			return
		}
		j.schema = schema
	}
	n := min(int(max(spec.GetDesiredConcurrentNumber(), 1)), len(parts))
	j.generation = j.deps.nextGeneration()
	limits := sources.Limits{
		MaxRows:  int(spec.GetMaxBatchRows()),
		MaxBytes: spec.GetMaxBatchSize(),
		MaxWait:  time.Duration(spec.GetMaxBatchIntervalMs()) * time.Millisecond,
	}
	for i := 0; i < n; i++ {
		start := map[int32]sources.Start{}
		for k := i; k < len(parts); k += n {
			start[parts[k]] = sources.Start{Offset: j.progress[parts[k]], Checkpoint: j.checkpoints[parts[k]]}
		}
		pid := ctx.Spawn(newTaskProps(taskConfig{
			jobID: j.id, generation: j.generation, index: i,
			job: ctx.Self(), scheduler: j.sch, source: j.src,
			schema: j.schema, format: j.format, limits: limits, start: start, keepReader: keep,
			settings: j.deps.Settings, logger: j.deps.Logger,
		}))
		j.tasks[pid.Id] = i
	}
}

func (j *job) stopTasks(ctx actor.Context) {
	for _, c := range ctx.Children() {
		ctx.Stop(c)
	}
	clear(j.tasks)
	// Any commit still in flight carries the old generation and is refused.
	j.generation = j.deps.nextGeneration()
}

func (j *job) onTaskFailed(ctx actor.Context, msg *taskFailed) {
	if msg.generation != j.generation || j.state != api.JobState_RUNNING {
		return
	}
	j.log().Warn("task failed", "task", msg.task, "err", msg.err)
	j.onSourceError(ctx, msg.err)
}

func (j *job) onTaskTerminated(ctx actor.Context, who *actor.PID) {
	if _, ok := j.tasks[who.Id]; !ok {
		return // an old generation, or stopped on purpose
	}
	delete(j.tasks, who.Id)
	if j.state != api.JobState_RUNNING {
		return
	}
	// A current task died (a panic, a refused commit): replace the whole
	// generation from durable progress after a back-off, or pause when it
	// keeps happening.
	j.retries++
	if j.retries > j.deps.Settings.SourceRetryLimit {
		j.transition(ctx, api.JobState_PAUSED, api.Reason_INTERNAL_ERROR,
			fmt.Sprintf("tasks stopped %d times in a row", j.retries-1))
		return
	}
	j.stopTasks(ctx)
	j.scheduleTimer(ctx, j.retryDelay(j.retries)/5, &respawnTasks{epoch: j.epoch})
}

// ---------------------------------------------------------------- commits

// nothingToRead reports whether the cached high watermarks show every
// partition's progress at its end. Unknown watermarks (none fetched yet, a
// partition missing, a watermark below progress) mean "read and see".
func (j *job) nothingToRead() bool {
	if len(j.marks) == 0 {
		return false
	}
	for p, o := range j.progress {
		if hw, ok := j.marks[p]; !ok || hw != o {
			return false
		}
	}
	return true
}

// lineageMoved reports whether the committed group g changed which
// partitions are readable (a Kinesis shard was read to its end).
func (j *job) lineageMoved(g *commitGroup) bool {
	lin, ok := j.src.(Lineage)
	if !ok || g.generation != j.generation {
		return false
	}
	moved := false
	for _, q := range g.members {
		for _, r := range q.c.ranges {
			moved = moved || r.Checkpoint != nil
		}
	}
	if !moved {
		return false
	}
	return !slices.Equal(lin.Readable(slices.Sorted(maps.Keys(j.progress)), j.checkpoints), j.readable)
}

func (j *job) noteRate(atMs, rows int64) {
	j.rowsWindow = append(j.rowsWindow, rateSample{atMs: atMs, rows: rows})
	cut := 0
	for cut < len(j.rowsWindow) && j.rowsWindow[cut].atMs < atMs-60_000 {
		cut++
	}
	j.rowsWindow = j.rowsWindow[cut:]
}

// ---------------------------------------------------------------- watermarks

func (j *job) refreshWatermarks(ctx actor.Context) {
	if j.watchIfIdle(ctx) {
		return
	}
	j.scheduleTimer(ctx, j.deps.Settings.WatermarkInterval, &watermarkTick{})
	if j.markBusy || j.src == nil || isFinal(j.state) {
		return
	}
	j.markBusy = true
	self, system, src := ctx.Self(), ctx.ActorSystem(), j.src
	go func() {
		res := &watermarksRefreshed{}
		defer func() {
			if r := recover(); r != nil {
				res = &watermarksRefreshed{err: &PanicError{Where: "watermark look-up", Value: r, Stack: debug.Stack()}}
			}
			system.Root.Send(self, res)
		}()
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res.marks, res.err = src.Watermarks(rctx)
	}()
}

// ---------------------------------------------------------------- user commands

func (j *job) reply(err *api.Error) *api.JobResponse {
	if err != nil {
		return &api.JobResponse{Error: err}
	}
	return &api.JobResponse{Job: &api.JobInfo{Summary: j.summary(), Spec: j.rec.GetSpec()}}
}

func precondition(format string, a ...any) *api.Error {
	return &api.Error{Code: api.ErrorCode_FAILED_PRECONDITION, Message: fmt.Sprintf(format, a...)}
}

func storeErr(err error) *api.Error {
	return &api.Error{Code: api.ErrorCode_STORE_ERROR, Message: err.Error()}
}

func (j *job) userPause(ctx actor.Context) *api.JobResponse {
	switch j.state {
	case api.JobState_NEED_SCHEDULE, api.JobState_RUNNING:
	default:
		return j.reply(precondition("job %s is %s and cannot be paused", j.rec.GetName(), j.state))
	}
	if !j.transition(ctx, api.JobState_PAUSED, api.Reason_USER_PAUSE, "paused by user") {
		return j.reply(storeErr(errors.New("journal write failed; the job was not paused")))
	}
	return j.reply(nil)
}

func (j *job) userResume(ctx actor.Context) *api.JobResponse {
	if j.state != api.JobState_PAUSED {
		return j.reply(precondition("job %s is %s; only a PAUSED job can be resumed", j.rec.GetName(), j.state))
	}
	if j.src == nil {
		src, err := j.deps.Sources(j.rec.GetSpec())
		if err != nil {
			return j.reply(precondition("job %s: source: %v", j.rec.GetName(), err))
		}
		j.src = src
	}
	if !j.transition(ctx, api.JobState_NEED_SCHEDULE, api.Reason_USER_RESUME, "resumed by user") {
		return j.reply(storeErr(errors.New("journal write failed; the job was not resumed")))
	}
	j.retries = 0
	j.askAdmission(ctx)
	return j.reply(nil)
}

func (j *job) userStop(ctx actor.Context) *api.JobResponse {
	if isFinal(j.state) {
		return j.reply(precondition("job %s is already %s", j.rec.GetName(), j.state))
	}
	if !j.transition(ctx, api.JobState_STOPPED, api.Reason_USER_STOP, "stopped by user") {
		return j.reply(storeErr(errors.New("journal write failed; the job was not stopped")))
	}
	resp := j.reply(nil)
	// A final job needs no actor: the manager answers for it from the store.
	ctx.Stop(ctx.Self())
	return resp
}

func (j *job) show() *api.JobResponse {
	lin, _ := j.src.(Lineage)
	info, err := buildInfo(j.deps.Store, j.rec, j.summary(), j.progress, j.marks, proto.Clone(j.stats).(*api.JobStats))
	if err == nil {
		addShardInfo(info, j.checkpoints, j.behind, lin)
	}
	if err != nil {
		return &api.JobResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}}
	}
	info.RunningTasks = int32(len(j.tasks))
	now := j.deps.Now()
	info.LastProgressUnixMs = max(j.stats.GetLastCommitUnixMs(), j.runningSinceMs)
	var rows int64
	for _, r := range j.rowsWindow {
		if r.atMs >= now.UnixMilli()-60_000 {
			rows += r.rows
		}
	}
	info.RowsPerSecond = float64(rows) / 60
	info.Health = health(info, now, j.deps.Settings.StallAfter, j.rec.GetSpec().GetMaxBatchRows())
	return &api.JobResponse{Job: info}
}

// health is a job's verdict at a glance.
func health(info *api.JobInfo, now time.Time, stallAfter time.Duration, batchRows int64) string {
	s := info.GetSummary()
	switch s.GetState() {
	case api.JobState_STOPPED:
		return "stopped"
	case api.JobState_CANCELLED:
		return "failed"
	case api.JobState_PAUSED:
		switch s.GetReason() {
		case api.Reason_ERROR_ROWS_EXCEEDED, api.Reason_OFFSET_OUT_OF_RANGE, api.Reason_SOURCE_CONFIG_ERROR:
			return "failed" // error-row budget, data loss, configuration: a person must act
		}
		return "paused"
	}
	lag := info.GetTotalLag()
	for _, p := range info.GetPartitions() {
		// A checkpointed source's lag is in time: count a partition more
		// than a second behind as one batch of lag, for the verdict.
		if p.GetMillisBehind() > 1000 {
			lag = max(lag, 0) + max(batchRows, 1) + 1
		}
	}
	if lag > 0 && now.Sub(time.UnixMilli(info.GetLastProgressUnixMs())) > stallAfter {
		return "stalled"
	}
	if lag > max(batchRows, 1) {
		return "lagging"
	}
	return "healthy"
}

// addShardInfo fills the Kinesis fields of info's partitions from the job's
// checkpoints, as the source describes them; without the source (a final
// job) only the position is known. MillisBehindLatest is the lag of a
// checkpointed source: its total is the largest of the partitions'.
func addShardInfo(info *api.JobInfo, cks map[int32][]byte, behind map[int32]int64, lin Lineage) {
	if len(cks) == 0 {
		return
	}
	info.TotalLag = -1
	for _, pi := range info.Partitions {
		ck, ok := cks[pi.Partition]
		if !ok {
			continue
		}
		pi.MillisBehind = -1
		if ms, ok := behind[pi.Partition]; ok {
			pi.MillisBehind = ms
		}
		if lin == nil {
			continue
		}
		d := lin.Describe(pi.Partition, ck)
		pi.ShardId, pi.ShardState, pi.Sequence, pi.Parents = d.ID, d.State, d.Seq, d.Parents
		if d.State == "finished" {
			pi.MillisBehind = 0
		}
	}
}

// showTransitions bounds the history `job show` returns (the newest).
const showTransitions = 200

// buildInfo assembles a JobInfo from in-memory state plus the journal and
// error rows read from the store.
func buildInfo(st Store, rec *api.JobRecord, sum *api.JobSummary, progress, marks map[int32]int64, stats *api.JobStats) (*api.JobInfo, error) {
	hist, errRows, err := st.ShowData(rec.GetId(), showTransitions, 20)
	if err != nil {
		return nil, fmt.Errorf("actors: job %d: journal and error rows: %w", rec.GetId(), err)
	}
	info := &api.JobInfo{
		Summary: sum, Spec: rec.GetSpec(), Stats: stats, History: hist,
		ErrorRows: errRows, CreatedUnixMs: rec.GetCreatedUnixMs(), TotalLag: 0,
	}
	parts := make([]int32, 0, len(progress))
	for p := range progress {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	for _, p := range parts {
		pi := &api.PartitionInfo{Partition: p, CommittedOffset: progress[p], HighWatermark: -1, Lag: -1}
		if hw, ok := marks[p]; ok {
			pi.HighWatermark = hw
			pi.Lag = max(hw-progress[p], 0)
		}
		if pi.Lag < 0 || info.TotalLag < 0 {
			info.TotalLag = -1
		} else {
			info.TotalLag += pi.Lag
		}
		info.Partitions = append(info.Partitions, pi)
	}
	if len(parts) == 0 {
		info.TotalLag = -1
	}
	return info, nil
}

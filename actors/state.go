package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/backoff"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/table"
)

// A job's state: its transitions, the user's commands and what failures do
// to it.

// errorWindow is what a job actor counts of its failures: retries, the
// error window's start and the planned auto-resume (state.go,
// autoresume.go).
type errorWindow struct {
	retries int // consecutive task or topology failures
	// windowSeq is the journal seq of the newest user resume: the error
	// window starts there (see applyWindowReset).
	windowSeq   uint64
	autoResumeN int // the attempt number of the planned auto-resume
}

// stateOf returns the state, reason and message a journal entry leaves the
// job in. An entry that keeps the state (an alter) keeps its reason too.
func stateOf(t *api.Transition) (api.JobState, api.Reason, string) {
	if t.GetFrom() == t.GetTo() && t.GetStateReason() != api.Reason_REASON_UNSPECIFIED {
		return t.GetTo(), t.GetStateReason(), t.GetStateMessage()
	}
	return t.GetTo(), t.GetReason(), t.GetMessage()
}

// transition journals a state change durably, then applies it. It returns
// false if the journal write failed, in which case nothing changed.
//
// INVARIANT: every transition is journaled before it is acknowledged or
// acted on.
func (j *job) transition(ctx actor.Context, to api.JobState, reason api.Reason, message string) bool {
	if j.headRunning && to == api.JobState_RUNNING && reason == api.Reason_SCHEDULED {
		// The journal head already says RUNNING (see headRunning): it is
		// durable; only the actor's memory catches up.
		j.applyTransition(ctx, &api.Transition{Seq: j.lastSeq, TimeUnixMs: j.deps.nowMs(), From: j.state, To: to, Reason: reason})
		return true
	}
	t := j.nextTransition(to, reason, message)
	if err := j.deps.Meta.AppendTransition(j.id, t); err != nil {
		j.log().Error("journal transition failed", "to", to.String(), "err", err)
		if j.deps.Cluster != nil {
			// etcd did not answer (or another writer won): the job's
			// memory may be ahead of its journal. Fail, so the supervisor
			// restarts the actor from the stored state, with back-off.
			panic(fmt.Errorf("actors: job %d: journal %s: %w", j.id, to, err))
		}
		return false
	}
	j.applyTransition(ctx, t)
	return true
}

// nextTransition is the journal entry of a change from the current state.
func (j *job) nextTransition(to api.JobState, reason api.Reason, message string) *api.Transition {
	from := j.state
	if j.headRunning {
		from = api.JobState_RUNNING // what the journal says (headRunning)
	}
	return &api.Transition{
		Seq: j.lastSeq + 1, TimeUnixMs: j.deps.nowMs(),
		From: from, To: to, Reason: reason, Message: api.Clip(message, api.MaxMessageBytes),
	}
}

// applyTransition acts on t once it is durable.
func (j *job) applyTransition(ctx actor.Context, t *api.Transition) {
	to, reason, message := t.GetTo(), t.GetReason(), t.GetMessage()
	if h := j.deps.Hooks.AfterTransition; h != nil {
		h(j.id, t)
	}
	j.lastSeq = t.Seq
	// Whatever the actor applies, the journal head and its memory agree
	// from here on (a journaled entry replaced the RUNNING head, or the
	// actor went RUNNING as the head says).
	j.headRunning = false
	leaving := j.state
	j.state, j.reason, j.message = to, reason, message
	if to != api.JobState_RUNNING && leaving == api.JobState_RUNNING || to == api.JobState_PAUSED || to.Final() {
		j.stopTasks(ctx)
		j.stopWatching(ctx)
	}
	if to != leaving {
		j.epoch++
	}
	if to == api.JobState_RUNNING || leaving == api.JobState_PAUSED {
		// The stall clock (last progress) starts again when the job runs,
		// and at a resume: a job just resumed is not stalled for the time
		// it was paused.
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
	j.judge(ctx, false)
	j.notify(ctx)
	if ev := transitionEvent(leaving, t); ev != "" {
		j.event(ev, message)
	}
	if to == api.JobState_PAUSED {
		j.planAutoResume(ctx)
	}
}

func (j *job) notify(ctx actor.Context) {
	j.publishCommitted()
	if p := ctx.Parent(); p != nil {
		j.reported = j.status()
		ctx.Send(p, &jobStateChanged{summary: j.summary(), status: j.reported, rec: j.rec})
	}
}

func (j *job) summary() *api.JobSummary {
	s := summaryOf(j.deps.Specs, j.rec, j.state, j.reason, j.message)
	if s.Health == "" {
		s.Health = j.health
	}
	if j.deps.Cluster != nil {
		s.Owner, s.Epoch = j.deps.Cluster.Self(), j.ownerEpoch
	}
	return s
}

func summaryOf(specs Specs, rec *api.JobRecord, state api.JobState, reason api.Reason, message string) *api.JobSummary {
	return &api.JobSummary{
		Id: rec.GetId(), Name: rec.GetName(), State: state, Reason: reason,
		ReasonMessage: api.Clip(message, api.MaxMessageBytes), Table: rec.GetSpec().GetTable().GetName(), Source: specs.SourceName(rec.GetSpec()),
		Health: stateHealth(state, reason),
	}
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
			var ue *table.UnavailableError
			switch {
			case errors.As(err, &pe):
				reason = api.Reason_INTERNAL_ERROR
			case errors.As(err, &ue):
				reason = api.Reason_SCHEMA_REGISTRY_UNREACHABLE
			}
			j.transition(ctx, api.JobState_PAUSED, reason,
				fmt.Sprintf("%d failures in a row; last: %v", j.retries-1, err))
			return
		}
		delay := j.retryDelay(j.retries)
		j.message = fmt.Sprintf("source error (retry %d in %s): %v", j.retries, delay, err)
		j.log().Warn("source error", "err", err, "retry_in", delay)
		j.judge(ctx, true)
		if j.state == api.JobState_NEED_SCHEDULE {
			j.scheduleTimer(delay, &retrySchedule{epoch: j.epoch})
		} else {
			j.stopTasks(ctx)
			j.scheduleTimer(delay, &respawnTasks{epoch: j.epoch})
		}
	}
}

func (j *job) onStoreError(ctx actor.Context, err error) {
	if errors.Is(err, sink.ErrSuperseded) {
		j.onSuperseded(ctx, err)
		return
	}
	j.log().Error("store error", "err", err)
	// A failed store stops the process (persistence.Options.OnFatal); a
	// refused write leaves the job where it is, and tasks are restarted.
	j.stopTasks(ctx)
	if !j.transition(ctx, api.JobState_PAUSED, api.Reason_STORE_FAILURE, err.Error()) {
		j.message = err.Error()
	}
}

// onSuperseded: the job's database refused a write because another process
// with this node's id (a node started on a restored backup or on a copied
// data directory) has claimed the node's job state there since
// (sink.ErrSuperseded); that process loads the job now. The job stops
// its tasks and pauses with SUPERSEDED, which is never auto-resumed:
// retrying cannot help.
//
// INVARIANT (a restore continues, never repeats): of two processes with
// one node id, only the one that claimed last commits.
func (j *job) onSuperseded(ctx actor.Context, err error) {
	j.log().Error("another process with this node's id claimed the job's database; this node no longer loads the job", "err", err)
	j.stopTasks(ctx)
	if !j.transition(ctx, api.JobState_PAUSED, api.Reason_SUPERSEDED, err.Error()) {
		j.message = err.Error()
	}
}

// onSinkUnavailable: the table's database did not answer. Like a
// transient source error, the job stays where it is and tries again with
// back-off (its tasks respawn from the progress the sink reports); after
// SourceRetryLimit failures in a row it pauses with SINK_UNREACHABLE, which
// is auto-resumed.
func (j *job) onSinkUnavailable(ctx actor.Context, err error) {
	j.retries++
	if j.retries > j.deps.Settings.SourceRetryLimit {
		j.stopTasks(ctx)
		j.transition(ctx, api.JobState_PAUSED, api.Reason_SINK_UNREACHABLE,
			fmt.Sprintf("%d failures in a row; last: %v", j.retries-1, err))
		return
	}
	delay := j.retryDelay(j.retries)
	j.message = fmt.Sprintf("sink unavailable (retry %d in %s): %v", j.retries, delay, err)
	j.log().Warn("sink unavailable", "err", err, "retry_in", delay)
	j.judge(ctx, true)
	j.stopTasks(ctx)
	j.scheduleTimer(delay, &respawnTasks{epoch: j.epoch})
}

// retryDelay is the back-off before retry n (1-based) of a transient
// source failure: SourceRetryBase doubled per retry, at most SourceRetryMax.
func (j *job) retryDelay(n int) time.Duration {
	s := j.deps.Settings
	return backoff.Doubling(s.SourceRetryBase, n-1, s.SourceRetryMax)
}

// ---------------------------------------------------------------- user commands

func (j *job) reply(err *api.Error) *api.JobResponse {
	if err != nil {
		return &api.JobResponse{Error: err}
	}
	return &api.JobResponse{Job: &api.JobInfo{Summary: j.summary(), Spec: api.RedactSpec(j.rec.GetSpec())}}
}

func precondition(format string, a ...any) *api.Error {
	return &api.Error{Code: api.ErrorCode_FAILED_PRECONDITION, Message: api.Clip(fmt.Sprintf(format, a...), api.MaxMessageBytes)}
}

func storeErr(err error) *api.Error {
	return &api.Error{Code: api.ErrorCode_STORE_ERROR, Message: api.Clip(err.Error(), api.MaxMessageBytes)}
}

// invalidErr answers an error as INVALID_ARGUMENT, naming the field it
// names (or field when it names none).
func invalidErr(field string, err error) *api.Error {
	var f fielder
	if errors.As(err, &f) && f.SpecField() != "" {
		field = f.SpecField()
	}
	var ce *sources.ConfigError
	if errors.As(err, &ce) && ce.Field != "" {
		field = ce.Field
	}
	return &api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: api.Clip(field, api.MaxEchoBytes), Message: api.Clip(err.Error(), api.MaxMessageBytes)}
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

// userResume resumes a PAUSED job, once its sink has answered where the
// job stands (off the mailbox, sinkread.go); the answer goes to the
// requester.
func (j *job) userResume(ctx actor.Context) {
	if j.state != api.JobState_PAUSED {
		ctx.Respond(j.reply(precondition("job %s is %s; only a PAUSED job can be resumed", j.rec.GetName(), j.state)))
		return
	}
	sk, err := j.sinkToOpen()
	if err != nil {
		ctx.Respond(j.reply(precondition("job %s: sink: %v", j.rec.GetName(), err)))
		return
	}
	// The sink is the authority on where the job stands, and it may have
	// moved while the job was paused (a database restored from a backup):
	// read it again. A paused job has no tasks to disagree.
	to := ctx.Sender()
	j.readSink(sk, func(ctx actor.Context, r *sinkReadDone) {
		resp := j.resumeWith(ctx, r)
		if to != nil {
			ctx.Send(to, resp)
		}
	})
}

// resumeWith resumes the job from r, the read of its sink userResume made.
func (j *job) resumeWith(ctx actor.Context, r *sinkReadDone) *api.JobResponse {
	if j.state != api.JobState_PAUSED {
		return j.reply(precondition("job %s is %s; only a PAUSED job can be resumed", j.rec.GetName(), j.state))
	}
	if r.err != nil {
		return j.reply(precondition("job %s: sink: %v", j.rec.GetName(), r.err))
	}
	if j.sink == nil {
		j.adoptSink(r)
	}
	prog := r.prog
	j.progress, j.checkpoints, j.stats = prog.Positions, prog.Checkpoints, prog.Stats
	j.deps.observeFence(prog.Fence)
	if j.src == nil {
		if err := j.openSource(j.rec.GetSpec()); err != nil {
			return j.reply(precondition("job %s: source: %v", j.rec.GetName(), err))
		}
	}
	// A user resume starts a fresh error window: after ERROR_ROWS_EXCEEDED
	// the person fixed the producer, and the old error rows must not pause
	// the job again. The journaled USER_RESUME is the reset: its seq
	// becomes the window's start (JobStats.window_start_seq), so a restart
	// before the next commit resets the window again (applyWindowReset).
	msg := fmt.Sprintf("resumed by user; new error window (the last one held %d error rows in %d rows)",
		j.stats.GetWindowErrorRows(), j.stats.GetWindowRows())
	if !j.transition(ctx, api.JobState_NEED_SCHEDULE, api.Reason_USER_RESUME, msg) {
		return j.reply(storeErr(errors.New("journal write failed; the job was not resumed")))
	}
	j.windowSeq = j.lastSeq
	j.applyWindowReset()
	j.retries = 0
	j.askAdmission(ctx)
	return j.reply(nil)
}

func (j *job) userStop(ctx actor.Context) *api.JobResponse {
	if j.state.Final() {
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

// applyWindowReset empties the error window of j.stats if a user resume
// (at journal seq j.windowSeq) started a new window after the one the
// statistics hold. Call it whenever j.stats is loaded from the sink.
func (j *job) applyWindowReset() {
	if j.stats == nil || j.windowSeq <= j.stats.GetWindowStartSeq() {
		return
	}
	j.stats.WindowRows, j.stats.WindowErrorRows, j.stats.WindowStartSeq = 0, 0, j.windowSeq
}

// loadWindowReset finds, in the journal, the newest user resume, if the
// statistics just loaded hold error rows in their window (an empty window
// needs no reset, and the journal is then not read: a restart of 100,000
// jobs reads none), and applies it.
func (j *job) loadWindowReset() {
	if j.stats.GetWindowErrorRows() == 0 {
		return
	}
	hist, err := j.deps.Meta.Journal(j.id)
	if err != nil {
		j.log().Warn("error window: read journal", "err", err)
		return
	}
	for _, t := range hist {
		if t.GetReason() == api.Reason_USER_RESUME {
			j.windowSeq = max(j.windowSeq, t.GetSeq())
		}
	}
	j.applyWindowReset()
}

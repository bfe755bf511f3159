package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/backoff"
)

// Auto-resume: a job paused for a transient reason comes back by itself,
// with back-off; the plan comes from the journal, so it survives restarts.

// transient reports whether a pause reason is resumed automatically. User
// pauses, the error-row budget, data loss and configuration errors never
// are: they need a person.
func transient(r api.Reason) bool {
	switch r {
	case api.Reason_SOURCE_UNREACHABLE, api.Reason_INTERNAL_ERROR, api.Reason_STORE_FAILURE, api.Reason_RESTART_BUDGET_EXHAUSTED,
		api.Reason_SINK_UNREACHABLE, api.Reason_SCHEMA_REGISTRY_UNREACHABLE:
		return true
	}
	return false
}

// autoResumePlan returns, from a paused job's journal, how many
// auto-resumes fall within the quiet period before now, and when the job
// was paused (its last change of state: an alter since does not move it).
func autoResumePlan(hist []*api.Transition, now time.Time, quiet time.Duration) (n int, pausedAt time.Time) {
	for _, t := range hist {
		if t.Reason == api.Reason_AUTO_RESUME && now.Sub(time.UnixMilli(t.TimeUnixMs)) < quiet {
			n++
		}
		if t.From != t.To || t.Reason != api.Reason_USER_ALTER {
			pausedAt = time.UnixMilli(t.TimeUnixMs)
		}
	}
	return n, pausedAt
}

// planAutoResume schedules the auto-resume of a job paused for a transient
// reason, min(AutoResumeBase * 2^n, AutoResumeMax) after the pause, where n
// counts the auto-resumes journaled within AutoResumeQuiet.
func (j *job) planAutoResume(ctx actor.Context) {
	if j.state != api.JobState_PAUSED || !transient(j.reason) {
		return
	}
	hist, err := j.deps.Meta.Journal(j.id)
	if err != nil || len(hist) == 0 {
		j.log().Error("auto-resume: read journal", "err", err)
		return
	}
	now := j.deps.Now()
	set := j.deps.Settings
	n, pausedAt := autoResumePlan(hist, now, set.AutoResumeQuiet)
	delay := backoff.Doubling(set.AutoResumeBase, n, set.AutoResumeMax)
	wait := max(pausedAt.Add(delay).Sub(now), 0)
	j.autoResumeN = n + 1
	j.log().Info("auto-resume planned", "reason", j.reason.String(), "attempt", n+1, "in", wait)
	j.scheduleTimer(wait, &autoResume{epoch: j.epoch})
}

func (j *job) onAutoResume(ctx actor.Context, msg *autoResume) {
	if msg.epoch != j.epoch || j.state != api.JobState_PAUSED || !transient(j.reason) {
		return
	}
	if j.sink != nil {
		j.autoResume(ctx)
		return
	}
	// The sink is not open: it is opened, and where the job stands read,
	// off the mailbox (sinkread.go).
	sk, err := j.sinkToOpen()
	if err != nil {
		j.autoResumeLater(err)
		return
	}
	epoch := j.epoch
	j.readSink(sk, func(ctx actor.Context, r *sinkReadDone) {
		if epoch != j.epoch || j.state != api.JobState_PAUSED || !transient(j.reason) {
			return
		}
		if r.err != nil {
			j.autoResumeLater(r.err)
			return
		}
		j.adoptSink(r)
		j.autoResume(ctx)
	})
}

// autoResumeLater plans the next attempt of an auto-resume whose sink
// could not be opened.
func (j *job) autoResumeLater(err error) {
	j.log().Warn("auto-resume: sink", "err", err, "retry_in", j.deps.Settings.AutoResumeBase)
	j.scheduleTimer(j.deps.Settings.AutoResumeBase, &autoResume{epoch: j.epoch})
}

// autoResume resumes the job, its sink open.
func (j *job) autoResume(ctx actor.Context) {
	if j.src == nil {
		if err := j.openSource(j.rec.GetSpec()); err != nil {
			j.transition(ctx, api.JobState_PAUSED, api.Reason_SOURCE_CONFIG_ERROR, err.Error())
			return
		}
	}
	if !j.transition(ctx, api.JobState_NEED_SCHEDULE, api.Reason_AUTO_RESUME,
		fmt.Sprintf("auto-resume %d after %s", j.autoResumeN, j.reason)) {
		return
	}
	j.retries = 0
	j.askAdmission(ctx)
}

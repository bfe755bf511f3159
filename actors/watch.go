package actors

import (
	"context"
	"errors"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
)

// Watermarks and idle jobs: a job refreshes its sources' high watermarks
// (lag); a RUNNING job with nothing to read lets its tasks go and, if its
// source is a Watcher, watches it instead of polling.

// watermarksRefreshed carries cached high watermarks to the job actor.
type watermarksRefreshed struct {
	marks map[int32]int64
	err   error
}

// watermarksWatched carries watermarks a Watcher source reported changed.
type watermarksWatched struct {
	marks map[int32]int64
	err   error // a *sources.ConfigError; marks is nil
}

// watermarkTimeout bounds one watermark look-up.
const watermarkTimeout = 10 * time.Second

func (j *job) refreshWatermarks(ctx actor.Context) {
	if j.watchIfIdle(ctx) {
		return
	}
	j.scheduleTimer(j.deps.Settings.WatermarkInterval, &watermarkTick{})
	if j.markBusy || j.src == nil || j.state.Final() {
		return
	}
	j.markBusy = true
	src := j.src
	run(j.life, "watermark look-up", func(ctx context.Context) *watermarksRefreshed {
		ctx, cancel := context.WithTimeout(ctx, watermarkTimeout)
		defer cancel()
		marks, err := src.Watermarks(ctx)
		return &watermarksRefreshed{marks: marks, err: err}
	}, func(err error) *watermarksRefreshed { return &watermarksRefreshed{err: err} })
}

// onMarks takes new high watermarks: an idle job with data to read spawns
// tasks; a job whose tasks found nothing since the last look lets them go.
func (j *job) onMarks(ctx actor.Context, marks map[int32]int64) {
	j.marks = marks
	defer j.report(ctx)
	quiet := j.stats.GetCommittedBatches() == j.batchesAtMark
	j.batchesAtMark = j.stats.GetCommittedBatches()
	if j.state == api.JobState_RUNNING && j.retries > 0 && j.nothingToRead() {
		// The source answered and the job has read everything: nothing is
		// failing any more (a commit would say so too, but a job at its end
		// commits nothing).
		j.retries = 0
		j.judge(ctx, true)
	}
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

// onWatched takes watermarks a watched source reported.
func (j *job) onWatched(ctx actor.Context, msg *watermarksWatched) {
	if j.unwatch == nil {
		return
	}
	if msg.err != nil {
		j.onMarksFailed(ctx, msg.err)
		return
	}
	j.onMarks(ctx, msg.marks)
	if j.state != api.JobState_RUNNING {
		return // held for admission: topology is resolved once admitted
	}
	for p := range msg.marks {
		if _, ok := j.progress[p]; !ok {
			j.resolveTopology(ctx) // a new partition, maybe ours
			return
		}
	}
}

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

// watchIfIdle makes an idle RUNNING job, or one held for admission after
// a recovery, whose source is a Watcher watch it instead of polling, and
// reports whether the job is watching. Any other job stops watching and
// goes back to its timers.
func (j *job) watchIfIdle(ctx actor.Context) bool {
	w, ok := j.src.(Watcher)
	// A job respawned by recovery and held for admission watches too: at a
	// restart of 100,000 jobs, a look-up each (a goroutine and a timer per
	// job every watermark_interval) took the CPU the listings needed.
	held := j.holdAdmission && j.state == api.JobState_NEED_SCHEDULE
	if !ok || !held && (!j.idle || j.state != api.JobState_RUNNING || len(j.tasks) > 0) {
		j.stopWatching(ctx)
		return false
	}
	if j.unwatch == nil {
		life := j.life
		j.unwatch = w.Watch(func(marks map[int32]int64, err error) {
			life.send(&watermarksWatched{marks: marks, err: err})
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
	j.scheduleTimer(j.deps.Settings.TopologyInterval, &topologyTick{epoch: j.epoch})
	j.refreshWatermarks(ctx)
}

// onMarksFailed takes a failed watermark look-up. A transient failure is
// left to the next look-up (tasks report their own); a configuration
// error (a wrong SASL password after an alter, a revoked ACL) pauses the
// job with SOURCE_CONFIG_ERROR: an idle job has no task to notice it.
func (j *job) onMarksFailed(ctx actor.Context, err error) {
	var cfg *sources.ConfigError
	if errors.As(err, &cfg) && j.state == api.JobState_RUNNING {
		j.onSourceError(ctx, err)
	}
}

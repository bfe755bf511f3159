package actors

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/table"
)

// Task generations: a job's tasks are replaced together, by a new
// generation reading from the job's durable progress.

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
		if err == nil {
			j.update, err = table.UpdateOf(schema, spec)
		}
		if err == nil {
			err = table.CheckSequenceNamed(schema, spec)
		}
		if err == nil {
			err = j.sink.PrepareTable(spec.GetTable())
		}
		var tables []*table.Schema
		for _, ts := range spec.GetTables() {
			if err != nil {
				break
			}
			var s *table.Schema
			if s, err = table.NewSchema(ts); err == nil {
				err = j.sink.PrepareTable(ts)
			}
			tables = append(tables, s)
		}
		if err != nil {
			reason := api.Reason_SOURCE_CONFIG_ERROR
			switch {
			case errors.Is(err, sink.ErrTableChanged):
				reason = api.Reason_SINK_TABLE_CHANGED
			case errors.Is(err, sink.ErrUnavailable):
				// A database that is down or starting up (a restart in
				// progress) comes back: SINK_UNREACHABLE auto-resumes,
				// SOURCE_CONFIG_ERROR would wait for an operator.
				reason = api.Reason_SINK_UNREACHABLE
			}
			j.transition(ctx, api.JobState_PAUSED, reason, err.Error())
			return
		}
		j.schema, j.tables = schema, tables
	}
	n := min(int(max(spec.GetDesiredConcurrentNumber(), 1)), len(parts))
	checker, _ := j.sink.(sink.RowChecker)
	encoder, _ := j.sink.(sink.Encoder)
	j.generation = j.nextGeneration()
	limits := sources.Limits{
		MaxRows:  int(spec.GetMaxBatchRows()),
		MaxBytes: spec.GetMaxBatchSize(),
		MaxWait:  time.Duration(spec.GetMaxBatchIntervalMs()) * time.Millisecond,
	}
	if j.taskInfos == nil {
		j.taskInfos = make(map[int]*api.TaskInfo, n)
	}
	createdMs := j.deps.Now().UnixMilli()
	for i := 0; i < n; i++ {
		start := map[int32]sources.Start{}
		ti := &api.TaskInfo{Id: fmt.Sprintf("%d-%d", j.generation, i), Generation: j.generation, Index: int32(i), CreatedUnixMs: createdMs}
		for k := i; k < len(parts); k += n {
			start[parts[k]] = sources.Start{Offset: j.progress[parts[k]], Checkpoint: j.checkpoints[parts[k]]}
			ti.Partitions = append(ti.Partitions, parts[k])
		}
		j.taskInfos[i] = ti
		pid := ctx.Spawn(newTaskProps(taskConfig{
			jobID: j.id, keySpace: table.KeySpace(j.id, j.rec.GetRebase().GetCount()), generation: j.generation, index: i,
			job: ctx.Self(), scheduler: j.sch, source: j.src,
			schema: j.schema, format: j.format, limits: limits, start: start, keepReader: keep,
			settings: j.deps.Settings, logger: j.log(), checker: checker,
			encoder: encoder, table: spec.GetTable().GetName(),
			deadLetters: j.rec.GetSpec().GetErrorTopic() != "", tables: j.tables,
		}))
		j.tasks[pid.Id] = i
	}
}

func (j *job) stopTasks(ctx actor.Context) {
	for _, c := range ctx.Children() {
		ctx.Stop(c)
	}
	clear(j.tasks)
	clear(j.taskInfos)
	// Any commit still in flight carries the old generation and is refused.
	j.generation = j.nextGeneration()
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
	delete(j.taskInfos, j.tasks[who.Id])
	delete(j.tasks, who.Id)
	if j.state != api.JobState_RUNNING || j.tornDown {
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
	j.scheduleTimer(j.retryDelay(j.retries)/5, &respawnTasks{epoch: j.epoch})
	j.judge(ctx, true)
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

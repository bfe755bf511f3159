package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/table"
)

// Topology: the partitions a job reads and where new ones start.

// sourceTopology is what a job actor knows of its source: the source
// itself and how its records become rows, the partitions and their
// watermarks, and the task generation that reads them (topology.go,
// tasks.go, watch.go).
type sourceTopology struct {
	src    Source
	schema *table.Schema
	// tables are a multi-table job's table schemas (JobSpec.tables), built
	// with schema.
	tables []*table.Schema
	update *table.Update // how rows change a keyed table; set with schema
	format table.Format
	// behind is the source's MillisBehindLatest per partition, from the
	// newest commit that reported it.
	behind map[int32]int64
	// readable is the set of partitions the current tasks read (a lineage
	// source reads a child only after its parents ended).
	readable []int32
	marks    map[int32]int64
	// idle: RUNNING without tasks, because the cached high watermarks
	// showed nothing to read; the next watermark refresh that shows data
	// spawns them. An idle job costs its actor and its snapshot only.
	idle bool
	// batchesAtMark is CommittedBatches at the previous watermark refresh:
	// tasks that committed nothing since and have nothing to read are
	// stopped.
	batchesAtMark int64
	topoBusy      bool
	// topoAgain: a look-up was asked for while one was out (topoBusy);
	// onTopology starts it if the one out answers for an earlier epoch.
	topoAgain bool
	markBusy  bool
	unwatch   func() // set while an idle job watches its source (Watcher)

	generation uint64
	// ownerEpoch is the cluster ownership epoch this actor runs at (0 on a
	// single node); localGen counts its task generations within it. In
	// cluster mode generations are sink.EpochFence(ownerEpoch, localGen).
	ownerEpoch, localGen uint64
	tasks                map[string]int // task PID id -> index, current generation only
	// taskInfos describes the current generation's tasks by index (SHOW
	// ROUTINE LOAD TASK); cleared with tasks.
	taskInfos map[int]*api.TaskInfo
}

// topologyResolved carries a topology look-up's result to its job actor.
type topologyResolved struct {
	epoch      uint64
	partitions []int32
	initial    map[int32]sources.Start // starts of partitions without progress
	err        error
}

// topologyTimeout bounds one topology look-up.
const topologyTimeout = 30 * time.Second

// resolveTopology asks the source, in a goroutine, for the partitions the
// job reads and the starts of those without progress.
func (j *job) resolveTopology(ctx actor.Context) {
	if j.src == nil {
		return
	}
	if j.topoBusy {
		j.topoAgain = true
		return
	}
	j.topoBusy, j.topoAgain = true, false
	src, epoch := j.src, j.epoch
	known := make(map[int32]bool, len(j.progress))
	for p := range j.progress {
		known[p] = true
	}
	run(j.life, "topology look-up", func(ctx context.Context) *topologyResolved {
		ctx, cancel := context.WithTimeout(ctx, topologyTimeout)
		defer cancel()
		parts, starts, err := src.Discover(ctx, known)
		return &topologyResolved{epoch: epoch, partitions: parts, initial: starts, err: err}
	}, func(err error) *topologyResolved { return &topologyResolved{epoch: epoch, err: err} })
}

func (j *job) onTopology(ctx actor.Context, msg *topologyResolved) {
	j.topoBusy = false
	again := j.topoAgain
	j.topoAgain = false
	if j.state != api.JobState_NEED_SCHEDULE && j.state != api.JobState_RUNNING {
		return
	}
	if msg.epoch != j.epoch {
		// The look-up began before a pause, a resume or a new
		// generation: its answer is not this epoch's. A look-up asked for
		// meanwhile (a resumed job's admission) was refused while this one
		// was out: it runs now, or the job would wait in NEED_SCHEDULE
		// for good.
		if again {
			j.resolveTopology(ctx)
		}
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
	// A first schedule journals RUNNING in the same durable write as the
	// initial positions when the sink keeps the job's journal too (the
	// embedded store): one fsync per new job, not two.
	var run *api.Transition
	js, oneStore := j.sink.(journaledStarts)
	oneStore = oneStore && js.Journals(j.deps.Meta)
	if oneStore && j.state == api.JobState_NEED_SCHEDULE && len(fresh) > 0 {
		run = j.nextTransition(api.JobState_RUNNING, api.Reason_SCHEDULED, "")
	}
	if len(fresh) > 0 {
		// INVARIANT (topology follows progress): a new partition's initial
		// position (and, for Kinesis, its lineage and start position) is
		// durable in the sink before any task is given the partition.
		var err error
		if run != nil {
			err = js.InitStartsJournaled(j.id, fresh, cks, run)
		} else {
			err = j.sink.InitStarts(j.id, fresh, cks)
		}
		if err != nil {
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
	j.scheduleTimer(j.deps.Settings.TopologyInterval, &topologyTick{epoch: j.epoch})
}

// journaledStarts is implemented by a sink that can also keep a job's
// journal: the embedded store, which is the node's metadata store as well.
// Journals reports whether meta is that same store; only then may the
// initial positions and a transition go in one write.
type journaledStarts interface {
	Journals(meta metastore.Store) bool
	InitStartsJournaled(job uint64, positions map[int32]int64, checkpoints map[int32][]byte, t *api.Transition) error
}

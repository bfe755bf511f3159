package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
)

// Topology: the partitions a job reads and where new ones start.

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
	if j.topoBusy || j.src == nil {
		return
	}
	j.topoBusy = true
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
	if len(fresh) > 0 {
		// INVARIANT (topology follows progress): a new partition's initial
		// position (and, for Kinesis, its lineage and start position) is
		// durable in the sink before any task is given the partition.
		if err := j.sink.InitStarts(j.id, fresh, cks); err != nil {
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
		if !j.transition(ctx, api.JobState_RUNNING, api.Reason_SCHEDULED, "") {
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

package actors

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/sources/kafka"
)

// alterResolved carries the positions an alter's reset_offsets resolved to
// (looked up in a goroutine) back to the job actor.
type alterResolved struct {
	sender *actor.PID
	req    *api.AlterJobRequest
	spec   *api.JobSpec
	reset  map[int32]sources.Start
	err    error
}

// alterable lists the spec fields an alter may change.
var alterable = []string{"desired_concurrent_number", "max_batch_interval", "max_batch_rows", "max_batch_size", "max_error_number", "kafka.properties", "kafka.default_offset"}

// alterSpec returns the new spec of an alter, or an error naming the first
// field that may not change.
func alterSpec(old, in *api.JobSpec) (*api.JobSpec, []string, *api.Error) {
	if in == nil {
		return old, nil, nil
	}
	next := proto.Clone(in).(*api.JobSpec)
	config.ApplyDefaults(next)
	if err := config.ValidateJobSpec(next); err != nil {
		return nil, nil, &api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "spec", Message: err.Error()}
	}
	// Fields that may not change: compare with them copied over.
	probe := proto.Clone(next).(*api.JobSpec)
	probe.DesiredConcurrentNumber, probe.MaxBatchIntervalMs = old.GetDesiredConcurrentNumber(), old.GetMaxBatchIntervalMs()
	probe.MaxBatchRows, probe.MaxBatchSize, probe.MaxErrorNumber = old.GetMaxBatchRows(), old.GetMaxBatchSize(), old.GetMaxErrorNumber()
	if probe.Kafka != nil {
		probe.Kafka.Properties, probe.Kafka.DefaultOffset, probe.Kafka.Offsets = old.GetKafka().GetProperties(), old.GetKafka().GetDefaultOffset(), old.GetKafka().GetOffsets()
	}
	if probe.Kinesis != nil {
		// Start positions apply at creation only (reset_positions moves them).
		probe.Kinesis.Positions = old.GetKinesis().GetPositions()
	}
	if !proto.Equal(probe, old) {
		return nil, nil, &api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "spec",
			Message: "alter may change only " + strings.Join(alterable, ", ") + "; name, table, format and source stay (create a new job instead)"}
	}
	if next.Kafka != nil {
		next.Kafka.Offsets = old.GetKafka().GetOffsets()
	}
	if next.Kinesis != nil {
		next.Kinesis.Positions = old.GetKinesis().GetPositions()
	}
	var changed []string
	if next.GetDesiredConcurrentNumber() != old.GetDesiredConcurrentNumber() {
		changed = append(changed, fmt.Sprintf("desired_concurrent_number %d->%d", old.GetDesiredConcurrentNumber(), next.GetDesiredConcurrentNumber()))
	}
	if next.GetMaxBatchIntervalMs() != old.GetMaxBatchIntervalMs() {
		changed = append(changed, fmt.Sprintf("max_batch_interval %s->%s", time.Duration(old.GetMaxBatchIntervalMs())*time.Millisecond, time.Duration(next.GetMaxBatchIntervalMs())*time.Millisecond))
	}
	if next.GetMaxBatchRows() != old.GetMaxBatchRows() {
		changed = append(changed, fmt.Sprintf("max_batch_rows %d->%d", old.GetMaxBatchRows(), next.GetMaxBatchRows()))
	}
	if next.GetMaxBatchSize() != old.GetMaxBatchSize() {
		changed = append(changed, fmt.Sprintf("max_batch_size %d->%d", old.GetMaxBatchSize(), next.GetMaxBatchSize()))
	}
	if next.GetMaxErrorNumber() != old.GetMaxErrorNumber() {
		changed = append(changed, fmt.Sprintf("max_error_number %d->%d", old.GetMaxErrorNumber(), next.GetMaxErrorNumber()))
	}
	if !maps.Equal(next.GetKafka().GetProperties(), old.GetKafka().GetProperties()) {
		changed = append(changed, "kafka.properties")
	}
	if next.GetKafka().GetDefaultOffset() != old.GetKafka().GetDefaultOffset() {
		changed = append(changed, fmt.Sprintf("kafka.default_offset %s->%s", old.GetKafka().GetDefaultOffset(), next.GetKafka().GetDefaultOffset()))
	}
	return next, changed, nil
}

// userAlter starts an alter: checks it, resolves reset offsets in a
// goroutine when there are any, and finishes in onAlterResolved.
func (j *job) userAlter(ctx actor.Context, req *api.AlterJobRequest) {
	if isFinal(j.state) {
		ctx.Respond(j.reply(precondition("job %s is %s and cannot be altered", j.rec.GetName(), j.state)))
		return
	}
	next, _, aerr := alterSpec(j.rec.GetSpec(), req.GetSpec())
	if aerr != nil {
		ctx.Respond(j.reply(aerr))
		return
	}
	if err := kafka.ValidateProperties(next.GetKafka().GetProperties()); err != nil {
		ctx.Respond(j.reply(&api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "kafka.properties", Message: err.Error()}))
		return
	}
	want := req.GetResetOffsets()
	if len(want) == 0 && len(req.GetResetPositions()) == 0 {
		j.onAlterResolved(ctx, &alterResolved{sender: ctx.Sender(), req: req, spec: next})
		return
	}
	if j.state != api.JobState_PAUSED {
		ctx.Respond(j.reply(precondition("job %s is %s: pause it before resetting offsets", j.rec.GetName(), j.state)))
		return
	}
	if len(req.GetResetPositions()) > 0 {
		j.alterPositions(ctx, req, next)
		return
	}
	if next.GetKafka() == nil {
		ctx.Respond(j.reply(&api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "reset_offsets", Message: "a Kinesis job's positions are reset by shard id (reset_positions)"}))
		return
	}
	for p, o := range want {
		if _, ok := j.progress[p]; !ok {
			ctx.Respond(j.reply(&api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: fmt.Sprintf("reset_offsets.%d", p), Message: fmt.Sprintf("the job does not read partition %d", p)}))
			return
		}
		if err := kafka.ParseOffset(o); err != nil {
			ctx.Respond(j.reply(&api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: fmt.Sprintf("reset_offsets.%d", p), Message: err.Error()}))
			return
		}
	}
	if j.src == nil {
		ctx.Respond(j.reply(precondition("job %s has no source open; resume it once or fix its configuration first", j.rec.GetName())))
		return
	}
	self, system, src, sender := ctx.Self(), ctx.ActorSystem(), j.src, ctx.Sender()
	go func() {
		res := &alterResolved{sender: sender, req: req, spec: next}
		defer func() {
			if r := recover(); r != nil {
				res.err = &PanicError{Where: "alter offsets look-up", Value: r}
			}
			system.Root.Send(self, res)
		}()
		rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res.reset, res.err = src.ResolveStarts(rctx, want, true)
	}()
}

// alterPositions starts the reset of a Kinesis job's shard positions. A
// shard's ordinal (its progress) does not move back: records read again
// after a reset get new ordinals, so no row is overwritten by another.
func (j *job) alterPositions(ctx actor.Context, req *api.AlterJobRequest, next *api.JobSpec) {
	lin, ok := j.src.(Lineage)
	if !ok || next.GetKinesis() == nil {
		ctx.Respond(j.reply(&api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "reset_positions", Message: "only a Kinesis job has shard positions; use reset_offsets"}))
		return
	}
	byID := map[string]int32{}
	for p, c := range j.checkpoints {
		byID[lin.Describe(p, c).ID] = p
	}
	want := map[int32]string{}
	for id, pos := range req.GetResetPositions() {
		p, ok := byID[id]
		if !ok {
			ctx.Respond(j.reply(&api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "reset_positions." + id, Message: fmt.Sprintf("the job does not read shard %s", id)}))
			return
		}
		canon, ok := config.CanonicalPosition(pos)
		if !ok {
			ctx.Respond(j.reply(&api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "reset_positions." + id,
				Message: fmt.Sprintf("%q must be TRIM_HORIZON, LATEST, AT_TIMESTAMP:<RFC3339 time> or a sequence number", pos)}))
			return
		}
		want[p] = canon
	}
	self, system, src, sender := ctx.Self(), ctx.ActorSystem(), j.src, ctx.Sender()
	progress := maps.Clone(j.progress)
	go func() {
		res := &alterResolved{sender: sender, req: req, spec: next}
		defer func() {
			if r := recover(); r != nil {
				res.err = &PanicError{Where: "alter positions look-up", Value: r}
			}
			system.Root.Send(self, res)
		}()
		rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res.reset, res.err = src.ResolveStarts(rctx, want, true)
		for p, s := range res.reset {
			s.Offset = progress[p]
			res.reset[p] = s
		}
	}()
}

// onAlterResolved makes the alter durable (snapshot, reset progress and the
// journal entry in one synced batch) and only then applies and answers it.
func (j *job) onAlterResolved(ctx actor.Context, res *alterResolved) {
	answer := func(r *api.JobResponse) {
		if res.sender != nil {
			ctx.Send(res.sender, r)
		}
	}
	if res.err != nil {
		answer(j.reply(&api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "reset_offsets", Message: res.err.Error()}))
		return
	}
	if len(res.reset) > 0 && j.state != api.JobState_PAUSED {
		answer(j.reply(precondition("job %s is %s: pause it before resetting offsets", j.rec.GetName(), j.state)))
		return
	}
	_, changed, _ := alterSpec(j.rec.GetSpec(), res.req.GetSpec())
	parts := slices.Sorted(maps.Keys(res.reset))
	lin, _ := j.src.(Lineage)
	for _, p := range parts {
		if lin != nil && res.reset[p].Checkpoint != nil {
			was, now := lin.Describe(p, j.checkpoints[p]), lin.Describe(p, res.reset[p].Checkpoint)
			changed = append(changed, fmt.Sprintf("shard %s position %s->%s", was.ID, was.Seq, now.Seq))
			continue
		}
		changed = append(changed, fmt.Sprintf("partition %d offset %d->%d", p, j.progress[p], res.reset[p].Offset))
	}
	if len(changed) == 0 {
		answer(j.reply(nil))
		return
	}
	rec := proto.Clone(j.rec).(*api.JobRecord)
	rec.Spec = res.spec
	t := &api.Transition{Seq: j.lastSeq + 1, TimeUnixMs: j.deps.nowMs(), From: j.state, To: j.state,
		Reason: api.Reason_USER_ALTER, Message: "altered: " + strings.Join(changed, ", ")}
	reset, cks := map[int32]int64{}, map[int32][]byte{}
	for p, s := range res.reset {
		reset[p] = s.Offset
		if s.Checkpoint != nil {
			cks[p] = s.Checkpoint
		}
	}
	if err := j.deps.Store.AlterJobStarts(rec, reset, cks, t); err != nil {
		answer(j.reply(storeErr(err)))
		return
	}
	j.lastSeq = t.Seq
	j.rec = rec
	j.reason, j.message = t.Reason, t.Message
	for p, o := range reset {
		j.progress[p] = o
	}
	for p, c := range cks {
		j.checkpoints[p] = c
	}
	j.log().Info("job altered", "changes", t.Message)
	j.notify(ctx)
	if !maps.Equal(rec.GetSpec().GetKafka().GetProperties(), j.srcProps) && j.src != nil {
		// New client settings: a new source (and new tasks below). A
		// watch of the old source ends with it; the refreshes restart on
		// the new one.
		watching := j.endWatch()
		j.stopTasks(ctx)
		j.src.Close()
		j.src = nil
		if src, err := j.deps.Sources(rec.GetSpec()); err == nil {
			j.src = src
			j.srcProps = rec.GetSpec().GetKafka().GetProperties()
		}
		if watching {
			j.rearm(ctx)
		}
	}
	if j.state == api.JobState_RUNNING {
		j.spawnTasks(ctx) // the new limits take effect with a new generation
	}
	answer(j.reply(nil))
}

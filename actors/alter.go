package actors

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/table"
)

// Alters: a user's change of a job's settings, or (PAUSED only) of its
// positions. Which fields may change and what a change means is the spec
// policy's (Deps.Specs); what a position reset means is the source's.

// alterResolved carries the positions an alter's reset resolved to (looked
// up in a goroutine) back to the job actor.
type alterResolved struct {
	sender  *actor.PID
	req     *api.AlterJobRequest
	spec    *api.JobSpec
	changes []string
	reopen  bool
	reset   map[int32]sources.Start
	err     error
}

// alterTimeout bounds the look-up of an alter's reset positions.
const alterTimeout = 30 * time.Second

// userAlter starts an alter: checks it, resolves a position reset in a
// goroutine when there is one, and finishes in onAlterResolved.
func (j *job) userAlter(ctx actor.Context, req *api.AlterJobRequest) {
	if isFinal(j.state) {
		ctx.Respond(j.reply(precondition("job %s is %s and cannot be altered", j.rec.GetName(), j.state)))
		return
	}
	next, changes, reopen, err := j.deps.Specs.Alter(j.rec.GetSpec(), req)
	if err != nil {
		ctx.Respond(j.reply(invalidErr("spec", err)))
		return
	}
	res := &alterResolved{sender: ctx.Sender(), req: req, spec: next, changes: changes, reopen: reopen}
	reset := sources.Reset{Offsets: req.GetResetOffsets(), Positions: req.GetResetPositions()}
	if reset.Empty() {
		j.onAlterResolved(ctx, res)
		return
	}
	if j.state != api.JobState_PAUSED {
		ctx.Respond(j.reply(precondition("job %s is %s: pause it before resetting offsets", j.rec.GetName(), j.state)))
		return
	}
	if j.src == nil {
		ctx.Respond(j.reply(precondition("job %s has no source open; resume it once or fix its configuration first", j.rec.GetName())))
		return
	}
	src := j.src
	cur := make(map[int32]sources.Start, len(j.progress))
	for p, o := range j.progress {
		cur[p] = sources.Start{Offset: o, Checkpoint: j.checkpoints[p]}
	}
	run(j.life, "alter reset look-up", func(ctx context.Context) *alterResolved {
		ctx, cancel := context.WithTimeout(ctx, alterTimeout)
		defer cancel()
		r := *res
		r.reset, r.err = src.ResolveReset(ctx, reset, cur)
		return &r
	}, func(err error) *alterResolved {
		r := *res
		r.err = err
		return &r
	})
}

// onAlterResolved makes the alter durable and only then applies and
// answers it: the journal entry with the new snapshot first (metadata
// store), then the reset positions (sink). A crash between the two leaves
// the reset journaled but not applied, never applied without its journal
// entry (only a journaled user reset may move progress backwards).
func (j *job) onAlterResolved(ctx actor.Context, res *alterResolved) {
	answer := func(r *api.JobResponse) {
		if res.sender != nil {
			ctx.Send(res.sender, r)
		}
	}
	if res.err != nil {
		answer(j.reply(invalidErr("reset_offsets", res.err)))
		return
	}
	if len(res.reset) > 0 && j.sink == nil {
		answer(j.reply(precondition("job %s has no sink open; resume it first", j.rec.GetName())))
		return
	}
	if len(res.reset) > 0 && j.state != api.JobState_PAUSED {
		answer(j.reply(precondition("job %s is %s: pause it before resetting offsets", j.rec.GetName(), j.state)))
		return
	}
	changed := slices.Clone(res.changes)
	for _, p := range slices.Sorted(maps.Keys(res.reset)) {
		was := sources.Start{Offset: j.progress[p], Checkpoint: j.checkpoints[p]}
		name, from := j.src.Render(p, was)
		_, to := j.src.Render(p, res.reset[p])
		changed = append(changed, name+" "+from+"->"+to)
	}
	if len(changed) == 0 {
		answer(j.reply(nil))
		return
	}
	rec := proto.Clone(j.rec).(*api.JobRecord)
	rec.Spec = res.spec
	// The alter is journaled; the job's state and its reason stay.
	t := &api.Transition{Seq: j.lastSeq + 1, TimeUnixMs: j.deps.nowMs(), From: j.state, To: j.state,
		Reason: api.Reason_USER_ALTER, Message: "altered: " + strings.Join(changed, ", "),
		StateReason: j.reason, StateMessage: j.message}
	if err := j.deps.Meta.AlterJob(rec, t); err != nil {
		answer(j.reply(storeErr(err)))
		return
	}
	j.lastSeq = t.Seq
	j.headRunning = false // the head is this entry now
	j.rec = rec
	// Parsing options (strict_mode, enclose, json_root, ...) may have
	// changed: the next generation of tasks parses with the new ones.
	// The decoder stays: schema_registry is not alterable.
	dec := j.format.Decoder
	j.format = table.FormatOf(rec.GetSpec())
	j.format.Decoder = dec
	if len(res.reset) > 0 {
		reset, cks := map[int32]int64{}, map[int32][]byte{}
		for p, s := range res.reset {
			reset[p] = s.Offset
			if s.Checkpoint != nil {
				cks[p] = s.Checkpoint
			}
		}
		if err := j.sink.ResetStarts(j.id, reset, cks); err != nil {
			answer(j.reply(storeErr(err)))
			return
		}
		for p, o := range reset {
			j.progress[p] = o
		}
		for p, c := range cks {
			j.checkpoints[p] = c
		}
	}
	j.log().Info("job altered", "changes", t.Message)
	j.notify(ctx)
	if res.reopen && j.src != nil {
		// New client settings: a new source (and new tasks below). A
		// watch of the old source ends with it; the refreshes restart on
		// the new one.
		watching := j.endWatch()
		j.stopTasks(ctx)
		j.src.Close()
		j.src = nil
		if src, err := j.newSource(rec.GetSpec()); err == nil {
			j.src = src
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

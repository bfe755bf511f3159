package actors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/sink"
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
	// rebase: the alter moves the job to another stream (Specs.Rebases);
	// newSrc is the new stream's source and starts its partitions' first
	// positions, which replace the job's whole progress.
	rebase bool
	newSrc Source
	starts map[int32]sources.Start
	err    error
}

// alterTimeout bounds the look-up of an alter's reset positions.
const alterTimeout = 30 * time.Second

// userAlter starts an alter: checks it, resolves a position reset in a
// goroutine when there is one, and finishes in onAlterResolved.
func (j *job) userAlter(ctx actor.Context, req *api.AlterJobRequest) {
	if j.state.Final() {
		ctx.Respond(j.reply(precondition("job %s is %s and cannot be altered", j.rec.GetName(), j.state)))
		return
	}
	req, e := j.catalogTarget(req)
	if e != nil {
		ctx.Respond(j.reply(e))
		return
	}
	next, changes, reopen, err := j.deps.Specs.Alter(j.rec.GetSpec(), req)
	if err != nil {
		ctx.Respond(j.reply(invalidErr("spec", err)))
		return
	}
	if e := j.pausedOnly(next); e != nil {
		ctx.Respond(j.reply(e))
		return
	}
	res := &alterResolved{sender: ctx.Sender(), req: req, spec: next, changes: changes, reopen: reopen}
	reset := sources.Reset{Offsets: req.GetResetOffsets(), Positions: req.GetResetPositions()}
	if j.deps.Specs.Rebases(j.rec.GetSpec(), next) {
		j.alterRebase(ctx, res, reset)
		return
	}
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

// catalogTarget returns req with the table an update_mask "table" names
// (Doris's ALTER ROUTINE LOAD ... ON) filled from the catalog, as a
// create's stored table is; a table the catalog lacks, or of another
// database than the one req names, is refused. Any other req is as given.
func (j *job) catalogTarget(req *api.AlterJobRequest) (*api.AlterJobRequest, *api.Error) {
	if !slices.Contains(req.GetUpdateMask(), "table") {
		return req, nil
	}
	name, db := req.GetSpec().GetTable().GetName(), req.GetSpec().GetTable().GetDatabase()
	stored, err := j.deps.Meta.Table(name)
	switch {
	case errors.Is(err, metastore.ErrNotFound) || err == nil && table.IsTemporaryPartition(name):
		return nil, &api.Error{Code: api.ErrorCode_NOT_FOUND, Field: "table.name", Message: fmt.Sprintf("table %s does not exist: create it first", api.Quote(name))}
	case err != nil:
		return nil, storeErr(err)
	case db != "" && db != stored.GetDatabase():
		return nil, &api.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "table.database", Message: fmt.Sprintf("table %s is not in database %q", api.Quote(name), db)}
	}
	req = proto.Clone(req).(*api.AlterJobRequest)
	req.Spec.Table = stored
	return req, nil
}

// pausedOnly refuses an alter to next that changes how records map onto
// rows (Specs.PausedOnly: Doris's COLUMNS, WHERE, ...) unless the job is
// PAUSED, as Doris does ("Only supports modification of PAUSED jobs"): a
// generation of tasks never changes its mapping halfway.
func (j *job) pausedOnly(next *api.JobSpec) *api.Error {
	fields := j.deps.Specs.PausedOnly(j.rec.GetSpec(), next)
	if len(fields) == 0 || j.state == api.JobState_PAUSED {
		return nil
	}
	return precondition("job %s is %s: pause it before altering %s (only a PAUSED job's load properties change, as in Doris)", j.rec.GetName(), j.state, strings.Join(fields, ", "))
}

// alterRebase starts an alter that moves the job to another stream (a new
// Kafka topic), as Doris does: only while PAUSED; the old stream's
// progress is dropped and the new stream's partitions start where the new
// spec says (its offsets, else its default offset), looked up on a new
// source in a goroutine.
func (j *job) alterRebase(ctx actor.Context, res *alterResolved, reset sources.Reset) {
	res.rebase = true
	if j.state != api.JobState_PAUSED {
		ctx.Respond(j.reply(precondition("job %s is %s: pause it before moving it to another stream (%s)", j.rec.GetName(), j.state, strings.Join(res.changes, ", "))))
		return
	}
	if !reset.Empty() {
		ctx.Respond(j.reply(invalidErr("reset_offsets", errors.New("a reset names partitions of the current stream; give the new stream's start offsets in the spec (kafka.offsets)"))))
		return
	}
	src, err := j.newSource(res.spec)
	if err != nil {
		ctx.Respond(j.reply(invalidErr("kafka", err)))
		return
	}
	res.newSrc = src
	run(j.life, "alter rebase look-up", func(ctx context.Context) *alterResolved {
		ctx, cancel := context.WithTimeout(ctx, alterTimeout)
		defer cancel()
		r := *res
		parts, starts, err := src.Discover(ctx, map[int32]bool{})
		r.starts, r.err = map[int32]sources.Start{}, err
		for _, p := range parts {
			s, ok := starts[p]
			if !ok && r.err == nil {
				r.err = fmt.Errorf("actors: the new source gave no start for partition %d", p)
			}
			r.starts[p] = s
		}
		return &r
	}, func(err error) *alterResolved {
		r := *res
		r.err = err
		return &r
	})
}

// applyRebase makes the sink hold the job's journaled rebase if it does
// not yet (a crash, or a sink error, between the journal entry and the
// sink's step): the sink's fence below the rebase's means the rebase never
// reached it, since every commit after it has a newer fence. It returns
// the progress to use.
func (j *job) applyRebase(sk sink.Sink, prog *sink.Progress) (*sink.Progress, error) {
	return rebased(sk, j.id, j.rec.GetRebase(), j.sourceName(), j.log(), prog)
}

// nextKeySpace returns rb (the job's last move to another stream, nil if
// none) with the next key-space count: a reset keeps the move's fence and
// positions (applyRebase reapplies them only while the sink's fence is
// below the move's, so never again once the move reached the sink, which
// a reset requires) and gives the rows loaded after it keys of their own.
//
// The count is bounded (table.MaxKeySpace): past it keys would repeat, so
// the reset or move is refused.
func nextKeySpace(rb *api.SourceRebase) (*api.SourceRebase, error) {
	if rb.GetCount() >= table.MaxKeySpace {
		return nil, fmt.Errorf("the job has been reset or moved %d times, the most one job keeps apart; create a new job", rb.GetCount())
	}
	next := &api.SourceRebase{}
	if rb != nil {
		next = proto.Clone(rb).(*api.SourceRebase)
	}
	next.Count++
	return next, nil
}

// onRebaseResolved makes a rebase durable: the new spec with the rebase
// (fence, new starts) journaled first, then the sink's RebaseStarts, which
// drops the old progress and fences out any commit of the old stream's
// generations. A crash (or a sink error) between the two leaves the rebase
// journaled, and the job applies it before it reads again (applyRebase).
func (j *job) onRebaseResolved(ctx actor.Context, res *alterResolved, answer func(*api.JobResponse)) {
	fail := func(e *api.Error) {
		res.newSrc.Close()
		answer(j.reply(e))
	}
	switch {
	case res.err != nil:
		fail(invalidErr("kafka.topic", res.err))
		return
	case j.state != api.JobState_PAUSED:
		fail(precondition("job %s is %s: pause it before moving it to another stream", j.rec.GetName(), j.state))
		return
	}
	space, err := nextKeySpace(j.rec.GetRebase())
	if err != nil {
		fail(precondition("job %s: %v", j.rec.GetName(), err))
		return
	}
	if j.sink != nil {
		j.rebase(ctx, res, space, answer)
		return
	}
	// The sink is not open: it is opened, and where the job stands read,
	// off the mailbox (sinkread.go).
	sk, err := j.sinkToOpen()
	if err != nil {
		fail(precondition("job %s: sink: %v", j.rec.GetName(), err))
		return
	}
	j.readSink(sk, func(ctx actor.Context, r *sinkReadDone) {
		switch {
		case r.err != nil:
			fail(precondition("job %s: sink: %v", j.rec.GetName(), r.err))
		case j.state != api.JobState_PAUSED:
			fail(precondition("job %s is %s: pause it before moving it to another stream", j.rec.GetName(), j.state))
		default:
			j.adoptSink(r)
			j.rebase(ctx, res, space, answer)
		}
	})
}

// rebase moves the job, its sink open, to the stream res resolved, in
// key space space (onRebaseResolved).
func (j *job) rebase(ctx actor.Context, res *alterResolved, space *api.SourceRebase, answer func(*api.JobResponse)) {
	fail := func(e *api.Error) {
		res.newSrc.Close()
		answer(j.reply(e))
	}
	// INVARIANT (stale tasks cannot commit): the fence is newer than every
	// generation so far; the sink refuses commits older than it.
	fence := j.nextGeneration()
	j.generation = fence
	positions, cks := make(map[int32]int64, len(res.starts)), map[int32][]byte{}
	var starts, dropped []string
	for _, p := range slices.Sorted(maps.Keys(res.starts)) {
		s := res.starts[p]
		positions[p] = s.Offset
		if s.Checkpoint != nil {
			cks[p] = s.Checkpoint
		}
		name, at := res.newSrc.Render(p, s)
		starts = append(starts, name+" "+at)
	}
	if j.src != nil {
		for _, p := range slices.Sorted(maps.Keys(j.progress)) {
			name, at := j.src.Render(p, sources.Start{Offset: j.progress[p], Checkpoint: j.checkpoints[p]})
			dropped = append(dropped, name+" "+at)
		}
	}
	changed := slices.Clone(res.changes)
	changed = append(changed, "progress of "+j.deps.Specs.SourceName(j.rec.GetSpec())+" dropped ("+strings.Join(dropped, ", ")+")",
		"starts on "+j.deps.Specs.SourceName(res.spec)+" ("+strings.Join(starts, ", ")+")")
	remap := len(j.deps.Specs.PausedOnly(j.rec.GetSpec(), res.spec)) > 0
	rec := proto.Clone(j.rec).(*api.JobRecord)
	rec.Spec = res.spec
	rec.Rebase = &api.SourceRebase{Fence: fence, Positions: positions, Checkpoints: cks,
		Count: space.GetCount(), TimeUnixMs: j.deps.nowMs()}
	t := &api.Transition{Seq: j.lastSeq + 1, TimeUnixMs: j.deps.nowMs(), From: j.state, To: j.state,
		Reason: api.Reason_USER_ALTER, Message: "altered: " + strings.Join(changed, ", "),
		StateReason: j.reason, StateMessage: j.message}
	if err := j.deps.Meta.AlterJob(rec, t); err != nil {
		fail(storeErr(err))
		return
	}
	j.lastSeq, j.rec = t.Seq, rec
	if h := j.deps.Hooks.AfterTransition; h != nil {
		h(j.id, t) // tests crash here: journaled, not yet in the sink
	}
	dec := j.format.Decoder
	j.format = table.FormatOf(rec.GetSpec())
	j.format.Decoder = dec
	if remap {
		j.schema = nil // the next generation derives its update from the new mapping
	}
	// The old source goes; its watch with it.
	watching := j.endWatch()
	j.stopTasks(ctx)
	if j.src != nil {
		j.src.Close()
	}
	j.src = res.newSrc
	clear(j.marks)
	clear(j.behind)
	var sinkErr error
	if sinkErr = j.sink.RebaseStarts(j.id, fence, positions, cks); sinkErr == nil {
		j.progress, j.checkpoints = positions, cks
	} else {
		// Journaled but not in the sink: the next open of the sink (a
		// resume) applies it first.
		j.sink = nil
	}
	j.log().Info("job altered", "changes", t.Message)
	j.notify(ctx)
	if watching {
		j.rearm(ctx)
	}
	if sinkErr != nil {
		answer(j.reply(storeErr(fmt.Errorf("the alter is journaled; its new positions reach the sink when the job resumes: %w", sinkErr))))
		return
	}
	answer(j.reply(nil))
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
	if res.rebase {
		j.onRebaseResolved(ctx, res, answer)
		return
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
	if e := j.pausedOnly(res.spec); e != nil {
		answer(j.reply(e)) // resumed while the reset was looked up
		return
	}
	remap := len(j.deps.Specs.PausedOnly(j.rec.GetSpec(), res.spec)) > 0
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
	if len(res.reset) > 0 {
		// INVARIANT (a DUPLICATE table keeps every row the user asked to
		// load): the rows loaded after a reset are keyed in a new key
		// space (table.KeySpace), journaled with the reset before its
		// positions reach the sink, so a record read again from a
		// rewound offset is a new row, never the one first loaded from
		// that offset. Within one key space progress never moves back,
		// so a replay (the same key space, the same offsets) still
		// rewrites its own keys.
		rb, err := nextKeySpace(j.rec.GetRebase())
		if err != nil {
			answer(j.reply(precondition("job %s: %v", j.rec.GetName(), err)))
			return
		}
		rec.Rebase = rb
	}
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
	if remap {
		// A new mapping (COLUMNS, ORDER BY, ...): the next generation
		// derives the table update (partial columns, sequence column) from
		// it, as a job does when it starts.
		j.schema = nil
	}
	if slices.Contains(res.req.GetUpdateMask(), "table") && j.sink != nil {
		// Another table of the same database (config's retarget): the
		// same sink, which holds the job's progress; the next generation
		// prepares the table there (spawnTasks).
		if sk, err := j.deps.Sinks(res.spec.GetTable()); err == nil {
			j.sink = sk
		}
	}
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

package actors

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
)

// Reads of a job's sink that a command waits for (issue 27): a resume, an
// auto-resume or a move to another stream reads where the job stands
// (sink.Progress, and a journaled rebase the sink lacks, applied first).
// The read runs on a goroutine of the actor's lifetime and its answer
// comes back as a *sinkReadDone; meanwhile the actor answers shows and
// inspections, and defers every message that could change the job's state
// (commitSafe), as it does while a group commit is in flight, so that the
// read and what the command does with it are one step, as they were when
// the read was made in the mailbox. The command waits at most
// sinkReadWait: then it fails naming the sink, and the read's late answer
// is dropped. (Such a late read may still apply the journaled rebase to
// the sink: the same rebase any later read applies, once, as the sink's
// fence then shows it applied.)
//
// The reads a job's start makes (job.loadPositions) and the reload after a
// failed commit are not here: see docs/design.md, "Sink reads and the
// mailboxes".

// sinkReadWait bounds how long a command waits for a read of its sink.
const sinkReadWait = 30 * time.Second

// sinkRead is a read of the job's sink in flight.
type sinkRead struct {
	seq   uint64
	timer *time.Timer
	done  <-chan struct{}
	// then finishes the command with the read's answer, in the mailbox.
	then func(ctx actor.Context, r *sinkReadDone)
}

// sinkReadDone answers a sinkRead (or says it did not answer in time).
type sinkReadDone struct {
	seq  uint64
	sk   sink.Sink
	prog *sink.Progress
	err  error
}

// readSink reads the job's progress from sk on a goroutine (applying the
// journaled rebase the sink lacks, as applyRebase) and calls then with the
// answer, in the mailbox. REQUIRES: no read in flight (the command that
// starts one is not commitSafe, so it is deferred while one is).
func (j *job) readSink(sk sink.Sink, then func(ctx actor.Context, r *sinkReadDone)) {
	j.readSeq++
	seq, id, rb, what, log := j.readSeq, j.id, j.rec.GetRebase(), j.sourceName(), j.log()
	r := &sinkRead{seq: seq, then: then}
	r.done = run(j.life, "sink read", func(context.Context) *sinkReadDone {
		prog, err := sk.Progress(id)
		if err == nil {
			prog, err = rebased(sk, id, rb, what, log, prog)
		}
		return &sinkReadDone{seq: seq, sk: sk, prog: prog, err: err}
	}, func(err error) *sinkReadDone { return &sinkReadDone{seq: seq, sk: sk, err: err} })
	wait := sinkReadWait
	if w := j.deps.Hooks.SinkReadWait; w > 0 {
		wait = w
	}
	r.timer = j.life.after(wait, &sinkReadDone{seq: seq, sk: sk,
		err: fmt.Errorf("actors: job %d: the sink did not answer within %s", id, wait)})
	j.reading = r
}

// onSinkRead finishes the command that waits for the read msg answers;
// an answer to a read no longer awaited (it answered late) is dropped.
// Then the messages deferred meanwhile are handled.
func (j *job) onSinkRead(ctx actor.Context, msg *sinkReadDone) {
	r := j.reading
	if r == nil || r.seq != msg.seq {
		return
	}
	j.reading = nil
	r.timer.Stop()
	r.then(ctx, msg)
	j.drainDeferred(ctx)
	j.startGroup(ctx)
}

// adoptSink makes r.sk the job's open sink, with the positions and
// statistics r read from it.
func (j *job) adoptSink(r *sinkReadDone) {
	j.sink, j.progress, j.checkpoints, j.stats = r.sk, r.prog.Positions, r.prog.Checkpoints, r.prog.Stats
	j.observeFence(r.prog.Fence)
	j.loadWindowReset()
}

// sinkToOpen is the job's open sink, or the one to open (nil and why when
// there is none).
func (j *job) sinkToOpen() (sink.Sink, error) {
	if j.sink != nil {
		return j.sink, nil
	}
	return j.deps.Sinks(j.rec.GetSpec().GetTable())
}

// sourceName names the job's source for a message, on any goroutine.
func (j *job) sourceName() func() string {
	specs, spec := j.deps.Specs, j.rec.GetSpec()
	return func() string { return specs.SourceName(spec) }
}

// rebased makes sk hold the journaled rebase rb if it does not yet (see
// applyRebase) and returns the progress to use; what names the source.
func rebased(sk sink.Sink, id uint64, rb *api.SourceRebase, what func() string, log *slog.Logger, prog *sink.Progress) (*sink.Progress, error) {
	if rb == nil || prog.Fence >= rb.GetFence() {
		return prog, nil
	}
	if err := sk.RebaseStarts(id, rb.GetFence(), rb.GetPositions(), rb.GetCheckpoints()); err != nil {
		return nil, fmt.Errorf("apply the journaled move to %s: %w", what(), err)
	}
	log.Info("journaled rebase applied to the sink", "fence", rb.GetFence())
	return sk.Progress(id)
}

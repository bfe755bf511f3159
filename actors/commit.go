package actors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
)

// Group commit.
//
// A job's commits are made durable in a goroutine, one group at a time.
// Batches that arrive while a group is being synced wait in commitWait and
// go together, as ONE sink.Commit (one atomic sink commit: all of
// their rows, progress, checkpoints and the job's statistics after the
// last of them), in the next group. One fsync and one commit-pipeline pass
// then serve every task of the job that finished a batch meanwhile, and
// the job actor stays free to queue them.
//
// INVARIANTS kept:
//   - fencing: every member's ranges start at the job's durable progress
//     when its group is formed (a task has at most one commit outstanding,
//     so a queued batch never depends on another queued one), and the store
//     checks the same From positions again under the job's lock;
//   - rows and progress move together: a group is one batch, all or
//     nothing, and memory moves (and tasks hear "done") only after it is
//     durable;
//   - no state change interleaves with a commit: while a group is in
//     flight, every message that could change the job's state is deferred
//     (see commitSafe) and handled, in arrival order, after the group.

// maxGroupBytes bounds the row bytes of one group. The store's memtable is
// 64 MiB and Pebble turns a batch of half of it into a flushable batch
// (which forces a flush); a quarter keeps groups ordinary. A larger single
// batch still goes alone.
const maxGroupBytes = 16 << 20

// commitPipeline is a job actor's durable positions and the group commit
// that moves them (commit.go).
type commitPipeline struct {
	// progress, checkpoints and stats are the positions and statistics
	// loaded from the sink and moved by each durable commit; the job actor
	// is their single writer.
	progress    map[int32]int64
	checkpoints map[int32][]byte
	stats       *api.JobStats
	// inflight is the group being made durable in a goroutine, commitWait
	// the batches that arrived since (they go together in the next group),
	// deferred the messages that wait for the in-flight group to finish.
	inflight   *commitGroup
	commitWait []queuedCommit
	commitSeq  uint64
	deferred   []deferredMsg
	// refusals are the commits the sink refused as stale since this
	// actor started (job show refused_commits, last_refusal).
	refusals refusals
	// reading is the read of the sink a command waits for (sinkread.go);
	// messages are deferred while it is in flight, as while a group is.
	reading *sinkRead
	readSeq uint64
}

// refusals counts a job actor's commits that its sink refused as stale
// (sink.ErrStaleCommit): another writer had moved the job's stored
// progress, fence or statistics. Not stored: each incarnation of a job
// counts its own.
type refusals struct {
	commits int64
	last    string // the newest refusal's reason, clipped
}

type queuedCommit struct {
	c      *commitBatch
	sender *actor.PID
}

type deferredMsg struct {
	msg    any
	sender *actor.PID
}

// commitGroup is a group commit in flight.
type commitGroup struct {
	seq        uint64
	generation uint64
	members    []queuedCommit
	stats      *api.JobStats // the job's statistics after the group
	loaded     int64
	rows       int
	// exceeded: the last member took the error rows of the window over
	// max_error_number; the job pauses once the group is durable.
	exceeded     bool
	windowErrors int64
	// aborted is the batch that came after the members and whose error
	// rows are over max_filter_ratio of its rows (overRatio): nothing of it
	// is committed, and the job pauses with reason abortReason once the
	// members are durable (at once when there are none).
	aborted     *queuedCommit
	abortReason string
	done        <-chan struct{} // closed when the commit's goroutine has finished
}

// groupCommitted is the goroutine's answer for group seq.
type groupCommitted struct {
	seq  uint64
	err  error
	took time.Duration
	// reload is the job's progress the sink held after the commit failed
	// (nil when the commit succeeded, or when the reload failed too: then
	// reloadErr says why), read by the commit's goroutine.
	reload    *sink.Progress
	reloadErr error
}

// commitSafe reports whether msg may be handled while a group commit is in
// flight: commits (queued), the group's result, and read-only requests.
func commitSafe(msg any) bool {
	switch msg.(type) {
	case *commitBatch, *groupCommitted, *sinkReadDone, *api.ShowJobRequest, *api.JobCommittedRequest, *InspectJob,
		*watermarkTick, *watermarksRefreshed,
		*actor.Stopping, *actor.Stopped, *actor.Restarting, *actor.Started:
		return true
	}
	return false
}

// refuse answers a commit request that cannot be committed.
func (j *job) refuse(ctx actor.Context, to *actor.PID, err error) {
	j.stats.AbortedBatches++
	if to != nil {
		ctx.Send(to, &commitResult{err: err})
	}
}

// stale returns why c cannot be committed now, or nil.
func (j *job) stale(c *commitBatch) error {
	if c.generation != j.generation || j.state != api.JobState_RUNNING {
		return fmt.Errorf("actors: generation %d is not current (%d) or job is %s: %w", c.generation, j.generation, j.state, ErrStaleCommit)
	}
	// INVARIANT (fencing): the batch must start exactly where the job's
	// progress is, for every partition it covers.
	for _, r := range c.ranges {
		cur, ok := j.progress[r.Partition]
		if !ok || cur != r.From || r.To < r.From {
			return fmt.Errorf("actors: partition %d starts at %d, progress is %d: %w", r.Partition, r.From, cur, ErrStaleCommit)
		}
	}
	return nil
}

func (j *job) onCommitBatch(ctx actor.Context, c *commitBatch) {
	if err := j.stale(c); err != nil {
		j.refuse(ctx, ctx.Sender(), err)
		return
	}
	j.commitWait = append(j.commitWait, queuedCommit{c: c, sender: ctx.Sender()})
	j.startGroup(ctx)
}

// startGroup makes the waiting batches durable as one group, unless a group
// is in flight already.
func (j *job) startGroup(ctx actor.Context) {
	if j.inflight != nil || len(j.commitWait) == 0 {
		return
	}
	wait := j.commitWait
	j.commitWait = nil
	// Refusals first: they count in the statistics the group writes.
	ok := wait[:0]
	for _, q := range wait {
		if err := j.stale(q.c); err != nil {
			j.refuse(ctx, q.sender, err)
			continue
		}
		ok = append(ok, q)
	}
	if len(ok) == 0 {
		return
	}
	g := j.formGroup(ok)
	if len(g.members) == 0 {
		j.abort(ctx, g)
		return
	}
	commit := j.commitOf(g)
	j.commitSeq++
	g.seq = j.commitSeq
	j.inflight = g
	g.done = commitAsync(j.life, j.sink, j.id, g.seq, commit)
}

// commitAsync makes commit (group seq of job id) durable in sk on a
// goroutine of l and delivers the *groupCommitted.
func commitAsync(l *lifetime, sk sink.Sink, id, seq uint64, commit *sink.Commit) <-chan struct{} {
	return run(l, "commit", func(context.Context) *groupCommitted {
		began := time.Now()
		res := &groupCommitted{seq: seq, err: sk.Commit(commit)}
		res.took = time.Since(began)
		if res.err != nil {
			// The reload of a failed commit is part of it: the group stays
			// in flight (the next group waits) until the sink has said where
			// the job stands, and the mailbox does not wait for the read.
			res.reload, res.reloadErr = reloadAfter(sk, id)
		}
		return res
	}, func(err error) *groupCommitted {
		res := &groupCommitted{seq: seq, err: err}
		res.reload, res.reloadErr = reloadAfter(sk, id)
		return res
	})
}

// reloadAfter reads job id's progress from sk after a failed commit; a
// panic of the sink is the read's error.
func reloadAfter(sk sink.Sink, id uint64) (p *sink.Progress, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Where: "sink progress", Value: r, Stack: debug.Stack()}
		}
	}()
	return sk.Progress(id)
}

// formGroup makes a group of the batches ok (none of them stale): those
// that fit go in as members, with the statistics after them; the rest wait
// in commitWait for the next group. A batch over max_filter_ratio is the
// group's aborted batch, and nothing after it goes in.
func (j *job) formGroup(ok []queuedCommit) *commitGroup {
	spec := j.rec.GetSpec()
	g := &commitGroup{generation: j.generation, stats: proto.Clone(j.stats).(*api.JobStats)}
	stats := g.stats
	claimed := map[int32]bool{}
	bytes := 0
	for _, q := range ok {
		c := q.c
		size := 0
		for _, kv := range c.rows {
			size += len(kv.Key) + len(kv.Value)
		}
		overlaps := false
		for _, r := range c.ranges {
			overlaps = overlaps || claimed[r.Partition]
		}
		if g.exceeded || g.aborted != nil || overlaps || len(g.members) > 0 && bytes+size > maxGroupBytes {
			j.commitWait = append(j.commitWait, q)
			continue
		}
		nErr := int64(len(c.errorRows))
		// INVARIANT (Doris's task is one transaction): a batch whose error
		// rows are over max_filter_ratio of its rows is not committed,
		// neither its rows nor its error rows, statistics or positions;
		// the job pauses naming the limit.
		if reason := overRatio(spec, c.loaded, nErr); reason != "" {
			g.aborted, g.abortReason = &q, reason
			continue
		}
		for _, r := range c.ranges {
			claimed[r.Partition] = true
		}
		bytes += size
		stats.LoadedRows += c.loaded
		stats.UnselectedRows += c.unselected
		stats.ErrorRows += nErr
		stats.ReceivedBytes += c.bytes
		stats.CommittedBatches++
		stats.WindowRows += c.loaded + nErr
		stats.WindowErrorRows += nErr
		g.exceeded = windowExceeded(spec, stats.WindowErrorRows)
		g.windowErrors = stats.WindowErrorRows
		if !g.exceeded && stats.WindowRows > errorWindowSize(spec) {
			stats.WindowRows, stats.WindowErrorRows = 0, 0
		}
		g.members = append(g.members, q)
		g.loaded += c.loaded
		g.rows += len(c.rows)
	}
	return g
}

// commitOf is the sink commit of group g: its members' rows, ranges and
// error rows, and the job's statistics after them.
func (j *job) commitOf(g *commitGroup) *sink.Commit {
	spec, stats := j.rec.GetSpec(), g.stats
	stats.LastCommitUnixMs = j.deps.nowMs()
	if pub, ok := j.src.(Publisher); ok {
		// What the dead-letter topic acknowledged so far becomes durable
		// with this batch; it never moves back.
		stats.DeadLettersDone = max(stats.DeadLettersDone, min(pub.DeadLettersDone(), stats.ErrorRows))
	}
	commit := &sink.Commit{JobID: j.id, Table: spec.GetTable().GetName(), Fence: g.generation, Stats: stats, StatsBase: j.stats.GetCommittedBatches(), Update: j.update}
	if len(g.members) == 1 {
		c := g.members[0].c
		commit.Rows, commit.Ranges, commit.ErrorRows = c.rows, c.ranges, c.errorRows
	} else {
		commit.Rows = make([]sink.KV, 0, g.rows)
		for _, q := range g.members {
			commit.Rows = append(commit.Rows, q.c.rows...)
			commit.Ranges = append(commit.Ranges, q.c.ranges...)
			commit.ErrorRows = append(commit.ErrorRows, q.c.errorRows...)
		}
	}
	// The rows as the tasks encoded them for the sink, when every member's
	// are (sink.Commit.Encoded: one per member, in the order of Rows).
	for _, q := range g.members {
		if q.c.encoded == nil {
			commit.Encoded = nil
			break
		}
		commit.Encoded = append(commit.Encoded, q.c.encoded)
	}
	// A multi-table job's rows for its other tables, in the same commit.
	var more map[string][]sink.KV
	for _, q := range g.members {
		for name, rows := range q.c.more {
			if more == nil {
				more = map[string][]sink.KV{}
			}
			more[name] = append(more[name], rows...)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(more)) {
		commit.More = append(commit.More, sink.TableRows{Table: name, Rows: more[name]})
	}
	return commit
}

// onGroupCommitted applies a durable group to memory and answers its
// tasks, or answers them with the failure; then it handles the deferred
// messages and starts the next group.
func (j *job) onGroupCommitted(ctx actor.Context, msg *groupCommitted) {
	g := j.inflight
	if g == nil || msg.seq != g.seq {
		return
	}
	j.inflight = nil
	err := msg.err
	if err != nil {
		j.stats.AbortedBatches += int64(len(g.members))
		// The sink refused the group, or its answer is unknown (a lost
		// connection during the commit): either way the sink, not memory,
		// knows where the job stands. Reload from it, so that the next
		// generation starts from durable progress, and the next commit adds
		// to the durable statistics, not to stale ones (which would forget
		// the rows behind the durable progress).
		stored := uint64(0) // the fence the sink holds now; 0 when unknown
		if p := msg.reload; msg.reloadErr == nil && p != nil {
			aborted := j.stats.AbortedBatches
			j.progress, j.checkpoints, j.stats = p.Positions, p.Checkpoints, p.Stats
			j.stats.AbortedBatches = max(j.stats.AbortedBatches, aborted)
			stored = p.Fence
			j.observeFence(p.Fence)
			j.applyWindowReset()
		}
		if errors.Is(err, sink.ErrSuperseded) || errors.Is(err, sink.ErrStaleCommit) {
			// Another writer moved the job's state under this commit: a
			// second incarnation of the job (superseded when it claimed
			// the owner later), a new owner, or this actor's own commit
			// whose answer was lost. Counted per incarnation, so that
			// such a race shows where it happens.
			j.refusals.commits++
			j.refusals.last = api.Clip(err.Error(), api.MaxMessageBytes)
		}
		switch {
		case errors.Is(err, sink.ErrSuperseded):
			j.onSuperseded(ctx, err)
		case errors.Is(err, sink.ErrStaleCommit):
			j.log().Warn("sink refused a stale commit; reloaded the job's progress", "err", err,
				"batches", len(g.members), "fence", g.generation, "stored_fence", stored, "refused_commits", j.refusals.commits)
		case errors.Is(err, sink.ErrUnavailable):
			j.onSinkUnavailable(ctx, err)
		case errors.Is(err, sink.ErrTableChanged):
			// INVARIANT (no silent loss): a table dropped or altered under
			// the job stops it, naming the table; resumed, the job prepares
			// its table again first.
			j.stopTasks(ctx)
			j.schema = nil
			j.transition(ctx, api.JobState_PAUSED, api.Reason_SINK_TABLE_CHANGED, err.Error())
		default:
			j.onStoreError(ctx, err)
		}
	} else {
		if o := j.deps.Observer; o != nil {
			o.CommitDone(j.rec.GetName(), g.rows, msg.took)
		}
		// INVARIANT (rows and progress move together): only now, after the
		// synced commit, does memory move and the tasks hear "done".
		if h := j.deps.Hooks.AfterCommit; h != nil {
			h(j.id)
		}
		for _, q := range g.members {
			for _, r := range q.c.ranges {
				j.progress[r.Partition] = r.To
				if r.Checkpoint != nil {
					j.checkpoints[r.Partition] = r.Checkpoint
				}
			}
			for p, ms := range q.c.behind {
				j.behind[p] = ms
			}
		}
		// Batches refused while the group was in flight counted in j.stats.
		g.stats.AbortedBatches = j.stats.AbortedBatches
		firstErr := j.stats.GetErrorRows()
		j.stats = g.stats
		j.publish(g, firstErr)
		j.retries = 0
		j.noteRate(g.stats.LastCommitUnixMs, g.loaded)
		if j.health == EventFailing || j.health == EventStalled {
			j.judge(ctx, true) // progress: no longer failing or stalled
		}
		j.report(ctx)
		if g.exceeded {
			j.transition(ctx, api.JobState_PAUSED, api.Reason_ERROR_ROWS_EXCEEDED,
				fmt.Sprintf("%d error rows in the current window exceed max_error_number %d", g.windowErrors, j.rec.GetSpec().GetMaxErrorNumber()))
		}
	}
	for _, q := range g.members {
		if q.sender != nil {
			ctx.Send(q.sender, &commitResult{err: err})
		}
	}
	if g.aborted != nil {
		if err != nil {
			// The members failed: the job reloads and reads the aborted
			// batch again, and judges it again.
			j.refuse(ctx, g.aborted.sender, err)
		} else {
			j.abort(ctx, g) // g.exceeded is false: the batch came after the members
		}
	}
	if err == nil && j.state == api.JobState_RUNNING && j.lineageMoved(g) {
		// A partition reached its end: its children may be readable now.
		j.spawnTasks(ctx)
	}
	j.drainDeferred(ctx)
	j.startGroup(ctx)
}

// drainDeferred handles the deferred messages in arrival order, until one
// of them starts a commit or a read of the sink again.
func (j *job) drainDeferred(ctx actor.Context) {
	for len(j.deferred) > 0 && !j.busy() {
		d := j.deferred[0]
		j.deferred = j.deferred[1:]
		j.handle(unwrapped{Context: ctx, msg: d.msg, sender: d.sender})
	}
	if len(j.deferred) == 0 {
		j.deferred = nil
	}
}

// busy reports whether a group commit or a read of the sink is in flight:
// then every message that is not commitSafe is deferred.
func (j *job) busy() bool {
	return j.inflight != nil || j.reading != nil
}

// abort refuses g's aborted batch and pauses the job naming the limit;
// the batches waiting behind it are then refused as stale (the job is
// PAUSED). Nothing of the aborted batch was committed: resumed, the job
// reads it again.
func (j *job) abort(ctx actor.Context, g *commitGroup) {
	if g.aborted == nil {
		return
	}
	j.refuse(ctx, g.aborted.sender, errors.New("actors: "+g.abortReason))
	j.transition(ctx, api.JobState_PAUSED, api.Reason_ERROR_ROWS_EXCEEDED, g.abortReason)
	j.startGroup(ctx)
}

// overRatio is why a batch of loaded rows and errorRows error rows cannot
// be committed, or "": as Doris's task (one transaction), whose error
// rows may be at most max_filter_ratio of the rows it selected (loaded
// and error rows; the rows a WHERE left out do not count). The reason
// names the first error row's reason.
func overRatio(spec *api.JobSpec, loaded, errorRows int64) string {
	r := filterRatio(spec)
	if errorRows == 0 || float64(errorRows)/float64(loaded+errorRows) <= r {
		return ""
	}
	return fmt.Sprintf("too many filtered rows: %d error rows of %d rows in a batch exceed max_filter_ratio %g; nothing of the batch was loaded",
		errorRows, loaded+errorRows, r)
}

// filterRatio is the job's max_filter_ratio; unset means 1 (no limit).
func filterRatio(spec *api.JobSpec) float64 {
	if spec.MaxFilterRatio == nil {
		return 1
	}
	return spec.GetMaxFilterRatio()
}

// windowExceeded is Doris's error budget for the window (max_batch_rows *
// 10 rows; a window ends after the batch that takes its rows over that):
// more error rows than max_error_number. As in Doris (the FE counts a
// task's rows after its transaction committed), the batch that takes
// the window over is committed and the job pauses after it. The window's
// share of error rows needs no check: every committed batch is within
// max_filter_ratio (overRatio), and so is any sum of them.
func windowExceeded(spec *api.JobSpec, errorRows int64) bool {
	return errorRows > spec.GetMaxErrorNumber()
}

// publish hands a durable group's positions and error rows to a source
// that publishes them (Publisher): the job's whole progress, and the
// group's error rows numbered from first.
func (j *job) publish(g *commitGroup, first int64) {
	pub, ok := j.src.(Publisher)
	if !ok {
		return
	}
	var letters []DeadLetter
	if j.rec.GetSpec().GetErrorTopic() != "" {
		for _, q := range g.members {
			if len(q.c.letters) == len(q.c.errorRows) {
				letters = append(letters, q.c.letters...)
				continue
			}
			for _, r := range q.c.errorRows {
				letters = append(letters, DeadLetter{Row: r})
			}
		}
	}
	pub.Published(j.progress, first, letters)
}

package sinktest

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
)

type rng = sink.Range

// started sets up job 1 on table name with partitions 0 and 1 at 0 and
// one commit (fence 2, error rows): partition 0 at 4, partition 1 at 3.
// It returns the job and the stored statistics.
func (e *env) started(t *testing.T, name string) (*job, *api.JobStats) {
	t.Helper()
	j := e.setup(t, 1, newTable(name))
	e.mustInit(t, j, map[int32]int64{0: 0, 1: 0}, map[int32][]byte{1: []byte("ck1-0")})
	c := j.commit(2, nil, rng{Partition: 0, From: 0, To: 4}, rng{Partition: 1, From: 0, To: 3, Checkpoint: []byte("ck1-3")})
	c.ErrorRows = []*api.ErrorRow{errorRow(0, 4)}
	return j, e.mustCommit(t, c)
}

// refuse commits c, which must be refused as stale and change nothing.
func (e *env) refuse(t *testing.T, j *job, c *sink.Commit, what string) {
	t.Helper()
	before := e.state(t, j)
	if err := e.s.Commit(c); !errors.Is(err, sink.ErrStaleCommit) {
		t.Errorf("%s: Commit = %v, want an error wrapping sink.ErrStaleCommit", what, err)
	}
	e.assertUnchanged(t, j, before, what)
}

// withExtras adds what a refused commit must not write either: error rows
// and a checkpoint on every range.
func withExtras(c *sink.Commit) *sink.Commit {
	c.ErrorRows = []*api.ErrorRow{errorRow(0, 1000)}
	for i := range c.Ranges {
		c.Ranges[i].Checkpoint = []byte("refused")
	}
	return c
}

func sortedKVs(kvs []sink.KV) []sink.KV {
	kvs = slices.Clone(kvs)
	slices.SortFunc(kvs, func(a, b sink.KV) int { return bytes.Compare(a.Key, b.Key) })
	return kvs
}

func testDurable(t *testing.T, e *env) {
	j := e.setup(t, 1, newTable("durable"))
	e.mustInit(t, j, map[int32]int64{0: 0, 1: 100}, map[int32][]byte{1: []byte("ck1-a")})
	e.restart(t)
	p := e.progress(t, j.id)
	assertPositions(t, p, map[int32]int64{0: 0, 1: 100})
	assertCheckpoints(t, p, map[int32][]byte{1: []byte("ck1-a")})
	assertStats(t, p, &api.JobStats{})
	if p.Fence != 0 {
		t.Errorf("fence before any commit = %d, want 0", p.Fence)
	}

	c := j.commit(3, nil, rng{Partition: 0, From: 0, To: 5}, rng{Partition: 1, From: 100, To: 103, Checkpoint: []byte("ck1-b")})
	c.ErrorRows = []*api.ErrorRow{errorRow(0, 5), errorRow(1, 103)}
	stats := e.mustCommit(t, c)
	e.restart(t)
	p = e.progress(t, j.id)
	assertPositions(t, p, map[int32]int64{0: 5, 1: 103})
	assertCheckpoints(t, p, map[int32][]byte{1: []byte("ck1-b")})
	assertStats(t, p, stats)
	if p.Fence != 3 {
		t.Errorf("fence after a commit with fence 3 and a restart = %d, want 3", p.Fence)
	}
	if got, want := e.rows(t, j.spec.GetName()), sortedKVs(c.Rows); !slices.EqualFunc(got, want, kvEqual) {
		t.Errorf("rows after a restart: %d, want the commit's %d", len(got), len(want))
	}
	if n := e.countRows(t, j.spec.GetName()); n != 8 {
		t.Errorf("CountRows after a restart = %d, want 8", n)
	}
	if got := e.errorRows(t, j.id, 10); !slices.EqualFunc(got, c.ErrorRows, func(a, b *api.ErrorRow) bool { return proto.Equal(a, b) }) {
		t.Errorf("error rows after a restart = %v, want %v", got, c.ErrorRows)
	}

	if err := e.s.ResetStarts(j.id, map[int32]int64{0: 2, 1: 90}, map[int32][]byte{1: []byte("ck1-r")}); err != nil {
		t.Fatalf("ResetStarts: %v", err)
	}
	e.restart(t)
	p = e.progress(t, j.id)
	assertPositions(t, p, map[int32]int64{0: 2, 1: 90})
	assertCheckpoints(t, p, map[int32][]byte{1: []byte("ck1-r")})
	assertStats(t, p, stats)
	if p.Fence != 3 {
		t.Errorf("fence after a reset and a restart = %d, want 3", p.Fence)
	}

	// The reset positions are where the next commit starts.
	c2 := j.commit(3, stats, rng{Partition: 0, From: 2, To: 4})
	stats = e.mustCommit(t, c2)
	e.restart(t)
	p = e.progress(t, j.id)
	assertPositions(t, p, map[int32]int64{0: 4, 1: 90})
	assertStats(t, p, stats)
	if n := e.countRows(t, j.spec.GetName()); n != 8 {
		t.Errorf("CountRows after rewriting 2 rows = %d, want 8", n)
	}
}

func testInitStartsRefusesExisting(t *testing.T, e *env) {
	j := e.setup(t, 1, newTable("init"))
	e.mustInit(t, j, map[int32]int64{0: 10}, map[int32][]byte{0: []byte("a")})
	before := e.state(t, j)
	for _, pos := range []map[int32]int64{
		{0: 20, 1: 30}, // one new, one existing
		{0: 10},        // the stored value itself
		{1: 30, 2: 40, 0: 0},
	} {
		cks := map[int32][]byte{}
		for p := range pos {
			cks[p] = []byte("b")
		}
		if err := e.s.InitStarts(j.id, pos, cks); !errors.Is(err, sink.ErrProgressExists) {
			t.Errorf("InitStarts(%v) over partition 0 = %v, want an error wrapping sink.ErrProgressExists", pos, err)
		}
		e.assertUnchanged(t, j, before, "a refused InitStarts")
	}
	e.restart(t)
	e.assertUnchanged(t, j, before, "a refused InitStarts (after a restart)")

	e.mustInit(t, j, map[int32]int64{1: 30}, map[int32][]byte{1: []byte("c")})
	p := e.progress(t, j.id)
	assertPositions(t, p, map[int32]int64{0: 10, 1: 30})
	assertCheckpoints(t, p, map[int32][]byte{0: []byte("a"), 1: []byte("c")})

	// After commits too.
	e.mustCommit(t, j.commit(1, nil, rng{Partition: 1, From: 30, To: 33}))
	before = e.state(t, j)
	if err := e.s.InitStarts(j.id, map[int32]int64{1: 0}, nil); !errors.Is(err, sink.ErrProgressExists) {
		t.Errorf("InitStarts over a committed partition = %v, want an error wrapping sink.ErrProgressExists", err)
	}
	e.assertUnchanged(t, j, before, "a refused InitStarts after a commit")
}

func testRefuseWrongFrom(t *testing.T, e *env) {
	j, base := e.started(t, "from")
	for _, c := range []struct {
		what   string
		ranges []rng
	}{
		{"second range behind", []rng{{Partition: 0, From: 4, To: 6}, {Partition: 1, From: 2, To: 5}}},
		{"second range ahead", []rng{{Partition: 0, From: 4, To: 6}, {Partition: 1, From: 4, To: 5}}},
		{"first range behind", []rng{{Partition: 0, From: 3, To: 6}, {Partition: 1, From: 3, To: 5}}},
		{"the committed batch again", []rng{{Partition: 0, From: 0, To: 4}}},
		{"one range ahead", []rng{{Partition: 0, From: 5, To: 8}}},
		{"empty range behind", []rng{{Partition: 1, From: 2, To: 2}}},
	} {
		e.refuse(t, j, withExtras(j.commit(5, base, c.ranges...)), c.what)
	}
	before := e.state(t, j)
	e.restart(t)
	e.assertUnchanged(t, j, before, "refused commits (after a restart)")
	// The continuation is accepted.
	stats := e.mustCommit(t, j.commit(2, base, rng{Partition: 0, From: 4, To: 6}, rng{Partition: 1, From: 3, To: 5}))
	p := e.progress(t, j.id)
	assertPositions(t, p, map[int32]int64{0: 6, 1: 5})
	assertStats(t, p, stats)
}

func testRefuseNoProgress(t *testing.T, e *env) {
	j, base := e.started(t, "noprogress")
	e.refuse(t, j, withExtras(j.commit(2, base, rng{Partition: 0, From: 4, To: 6}, rng{Partition: 9, From: 0, To: 2})),
		"a range on a partition without progress")
	e.refuse(t, j, withExtras(j.commit(2, base, rng{Partition: 9, From: 0, To: 0})),
		"an empty range on a partition without progress")

	// A job with no progress at all, on the same table.
	j2 := e.setup(t, 2, j.spec)
	before := e.state(t, j2)
	if err := e.s.Commit(withExtras(j2.commit(1, nil, rng{Partition: 0, From: 0, To: 3}))); !errors.Is(err, sink.ErrStaleCommit) {
		t.Errorf("Commit of a job without progress = %v, want an error wrapping sink.ErrStaleCommit", err)
	}
	e.assertUnchanged(t, j2, before, "a commit of a job without progress")
	if p := e.progress(t, j2.id); len(p.Positions) != 0 || len(p.Checkpoints) != 0 || p.Fence != 0 {
		t.Errorf("progress of job 2 after a refused commit = %+v, want none", p)
	}
}

func testRefuseOlderFence(t *testing.T, e *env) {
	j, base := e.started(t, "fence")
	next := func(p int32, n int64) rng {
		t.Helper()
		from := e.progress(t, j.id).Positions[p]
		return rng{Partition: p, From: from, To: from + n}
	}
	base = e.mustCommit(t, j.commit(5, base, next(0, 2)))
	for _, f := range []uint64{4, 0} {
		e.refuse(t, j, withExtras(j.commit(f, base, next(0, 2), next(1, 1))), "a commit with a fence older than the stored 5")
	}
	base = e.mustCommit(t, j.commit(5, base, next(0, 1))) // the same generation commits again
	base = e.mustCommit(t, j.commit(7, base, next(1, 1))) // a newer one takes over
	if f := e.progress(t, j.id).Fence; f != 7 {
		t.Errorf("fence after a commit with fence 7 = %d", f)
	}
	e.refuse(t, j, withExtras(j.commit(5, base, next(0, 1))), "a commit of the generation before the stored 7")
	e.restart(t)
	e.refuse(t, j, withExtras(j.commit(6, base, next(0, 1))), "a commit with a fence older than the stored 7 (after a restart)")
	e.mustCommit(t, j.commit(7, base, next(0, 1)))
}

func testRefuseMovedStats(t *testing.T, e *env) {
	j, base := e.started(t, "stats") // CommittedBatches 1
	for _, sb := range []int64{0, 2, 5} {
		c := withExtras(j.commit(2, base, rng{Partition: 0, From: 4, To: 6}))
		c.StatsBase = sb
		e.refuse(t, j, c, "a commit whose statistics are based on another CommittedBatches than the stored 1")
	}
	base = e.mustCommit(t, j.commit(2, base, rng{Partition: 0, From: 4, To: 6}))
	assertStats(t, e.progress(t, j.id), base)

	// Without statistics, StatsBase is not checked and the stored stay.
	c := j.commit(2, base, rng{Partition: 0, From: 6, To: 7})
	c.Stats, c.StatsBase = nil, 99
	e.mustCommit(t, c)
	p := e.progress(t, j.id)
	assertStats(t, p, base)
	assertPositions(t, p, map[int32]int64{0: 7, 1: 3})

	e.restart(t)
	c = withExtras(j.commit(2, base, rng{Partition: 0, From: 7, To: 8}))
	c.StatsBase = 1
	e.refuse(t, j, c, "a commit based on statistics older than the stored (after a restart)")
	e.mustCommit(t, j.commit(2, base, rng{Partition: 0, From: 7, To: 8}))
}

// testReplay: a batch applied twice (a task retrying, a second incarnation)
// is refused, and the loaded-rows statistic, committed with the rows,
// counts every record once. Row keys alone could not show it: a batch
// written twice overwrites itself.
func testReplay(t *testing.T, e *env) {
	j := e.setup(t, 1, newTable("replay"))
	e.mustInit(t, j, map[int32]int64{0: 0, 1: 0}, nil)
	var base *api.JobStats
	var commits []*sink.Commit
	records := int64(0)
	for i := range int64(4) {
		c := j.commit(1, base, rng{Partition: 0, From: 10 * i, To: 10*i + 10}, rng{Partition: 1, From: 5 * i, To: 5*i + 5})
		base = e.mustCommit(t, c)
		records += 15
		commits = append(commits, c)
		e.refuse(t, j, c, "the same commit again")
	}
	e.restart(t)
	for _, c := range commits {
		e.refuse(t, j, c, "a commit replayed after a restart")
		newer := *c
		newer.Fence = 9
		e.refuse(t, j, &newer, "a commit replayed by a newer generation")
	}
	p := e.progress(t, j.id)
	if p.Stats.GetLoadedRows() != records || p.Stats.GetCommittedBatches() != 4 {
		t.Errorf("statistics after replays: loaded %d in %d batches, want %d in 4",
			p.Stats.GetLoadedRows(), p.Stats.GetCommittedBatches(), records)
	}
	if n := e.countRows(t, j.spec.GetName()); n != records {
		t.Errorf("CountRows after replays = %d, want %d", n, records)
	}
	assertPositions(t, p, map[int32]int64{0: 40, 1: 20})
}

// testConcurrentSameCommit: writers racing with the same continuation (a
// task and its stale twin) commit it once; the sink's own check decides,
// not the callers' discipline.
func testConcurrentSameCommit(t *testing.T, e *env) {
	j, base := e.started(t, "concurrent")
	const writers, rounds = 16, 100
	from := int64(4)
	for round := range rounds {
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			c := j.commit(3, base, rng{Partition: 0, From: from, To: from + 10})
			wg.Go(func() {
				<-start
				errs[i] = e.s.Commit(c)
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, sink.ErrStaleCommit):
				t.Fatalf("round %d, writer %d: Commit = %v, want nil or an error wrapping sink.ErrStaleCommit", round, i, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d of %d identical concurrent commits succeeded, want 1", round, won, writers)
		}
		from += 10
		base = nextStats(base, 10)
	}
	p := e.progress(t, j.id)
	assertStats(t, p, base)
	assertPositions(t, p, map[int32]int64{0: from, 1: 3})
}

// testProgressConsistent: Progress is one state of the job, never half
// of a commit (positions from after it, statistics from before), even
// while a writer commits.
func testProgressConsistent(t *testing.T, e *env) {
	j := e.setup(t, 1, newTable("consistent"))
	e.mustInit(t, j, map[int32]int64{0: 0, 1: 0}, nil)
	const batches = 200
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		var base *api.JobStats
		for i := range int64(batches) {
			c := j.commit(uint64(i+1), base, rng{Partition: 0, From: 2 * i, To: 2*i + 2}, rng{Partition: 1, From: i, To: i + 1})
			if err := e.s.Commit(c); err != nil {
				t.Errorf("Commit %d: %v", i, err)
				return
			}
			base = c.Stats
		}
	})
	reads := 0
	for stop := false; !stop; reads++ {
		select {
		case <-done:
			stop = true
		default:
		}
		p, err := e.s.Progress(j.id)
		if err != nil {
			t.Errorf("Progress: %v", err)
			break
		}
		n := p.Stats.GetCommittedBatches()
		if p.Positions[0] != 2*n || p.Positions[1] != n || p.Stats.GetLoadedRows() != 3*n || p.Fence != uint64(n) {
			t.Errorf("read %d: Progress is no committed state: positions %v, fence %d, stats {%v}", reads, p.Positions, p.Fence, p.Stats)
			break
		}
	}
	wg.Wait()
}

func testCoveredPartitions(t *testing.T, e *env) {
	j := e.setup(t, 1, newTable("covered"))
	cks := map[int32][]byte{0: []byte("c0"), 1: []byte("c1"), 2: []byte("c2")}
	e.mustInit(t, j, map[int32]int64{0: 0, 1: 50, 2: 100}, cks)
	// Partition 2's range holds no rows (a poll of control records only):
	// its progress moves all the same. Its checkpoint is nil: kept.
	c := j.commit(1, nil, rng{Partition: 0, From: 0, To: 3, Checkpoint: []byte("c0b")}, rng{Partition: 2, From: 100, To: 104})
	c.Rows = c.Rows[:3]
	c.Stats = nextStats(nil, 3)
	base := e.mustCommit(t, c)
	p := e.progress(t, j.id)
	assertPositions(t, p, map[int32]int64{0: 3, 1: 50, 2: 104})
	assertCheckpoints(t, p, map[int32][]byte{0: []byte("c0b"), 1: []byte("c1"), 2: []byte("c2")})
	if got, want := e.rows(t, j.spec.GetName()), sortedKVs(c.Rows); !slices.EqualFunc(got, want, kvEqual) {
		t.Errorf("rows = %d, want partition 0's 3", len(got))
	}

	e.mustCommit(t, j.commit(1, base, rng{Partition: 1, From: 50, To: 52, Checkpoint: []byte("c1b")}))
	p = e.progress(t, j.id)
	assertPositions(t, p, map[int32]int64{0: 3, 1: 52, 2: 104})
	assertCheckpoints(t, p, map[int32][]byte{0: []byte("c0b"), 1: []byte("c1b"), 2: []byte("c2")})
}

func testResetBackwards(t *testing.T, e *env) {
	j, base := e.started(t, "reset")
	before := e.state(t, j)
	if err := e.s.ResetStarts(j.id, map[int32]int64{0: 1}, map[int32][]byte{0: []byte("r0")}); err != nil {
		t.Fatalf("ResetStarts backwards: %v", err)
	}
	p := e.progress(t, j.id)
	assertPositions(t, p, map[int32]int64{0: 1, 1: 3})
	assertCheckpoints(t, p, map[int32][]byte{0: []byte("r0"), 1: []byte("ck1-3")})
	assertStats(t, p, before.progress.Stats)
	if p.Fence != before.progress.Fence {
		t.Errorf("fence after a reset = %d, want %d", p.Fence, before.progress.Fence)
	}
	if n := e.countRows(t, j.spec.GetName()); n != int64(len(before.rows)) {
		t.Errorf("CountRows after a reset = %d, want %d (a reset deletes no rows)", n, len(before.rows))
	}

	e.refuse(t, j, j.commit(2, base, rng{Partition: 0, From: 4, To: 6}), "a commit from the position before the reset")
	base = e.mustCommit(t, j.commit(2, base, rng{Partition: 0, From: 1, To: 6}))

	if err := e.s.ResetStarts(j.id, map[int32]int64{1: 100}, nil); err != nil {
		t.Fatalf("ResetStarts forwards: %v", err)
	}
	e.restart(t)
	p = e.progress(t, j.id)
	assertPositions(t, p, map[int32]int64{0: 6, 1: 100})
	assertCheckpoints(t, p, map[int32][]byte{0: []byte("r0"), 1: []byte("ck1-3")})
	e.mustCommit(t, j.commit(2, base, rng{Partition: 1, From: 100, To: 101}))
}

// testRebase: RebaseStarts replaces the whole progress (a partition it
// does not name loses its progress and checkpoint), raises the fence so
// that a commit of the former generation is refused, refuses an older
// fence, and is idempotent across a restart.
func testRebase(t *testing.T, e *env) {
	j, base := e.started(t, "rebase")
	before := e.state(t, j)
	old := before.progress.Fence
	fence := old + 5
	if err := e.s.RebaseStarts(j.id, fence, map[int32]int64{0: 0, 7: 10}, map[int32][]byte{7: []byte("ck7")}); err != nil {
		t.Fatalf("RebaseStarts: %v", err)
	}
	check := func(what string) {
		t.Helper()
		p := e.progress(t, j.id)
		assertPositions(t, p, map[int32]int64{0: 0, 7: 10})
		assertCheckpoints(t, p, map[int32][]byte{7: []byte("ck7")})
		assertStats(t, p, before.progress.Stats)
		if p.Fence != fence {
			t.Errorf("%s: fence = %d, want %d", what, p.Fence, fence)
		}
		if n := e.countRows(t, j.spec.GetName()); n != int64(len(before.rows)) {
			t.Errorf("%s: CountRows = %d, want %d (a rebase deletes no rows)", what, n, len(before.rows))
		}
	}
	check("after a rebase")
	e.refuse(t, j, j.commit(old, base, rng{Partition: 0, From: 0, To: 2}), "a commit of the generation before the rebase")
	e.refuse(t, j, j.commit(fence, base, rng{Partition: 1, From: 3, To: 4}), "a commit of a partition the rebase dropped")
	if err := e.s.RebaseStarts(j.id, fence-1, map[int32]int64{0: 99}, nil); !errors.Is(err, sink.ErrStaleCommit) {
		t.Errorf("RebaseStarts with an older fence = %v, want ErrStaleCommit", err)
	}
	check("after a refused rebase")
	if err := e.s.RebaseStarts(j.id, fence, map[int32]int64{0: 0, 7: 10}, map[int32][]byte{7: []byte("ck7")}); err != nil {
		t.Fatalf("RebaseStarts again: %v", err)
	}
	e.restart(t)
	check("after the same rebase again and a restart")
	e.mustCommit(t, j.commit(fence+1, base, rng{Partition: 0, From: 0, To: 2}, rng{Partition: 7, From: 10, To: 11}))
	assertPositions(t, e.progress(t, j.id), map[int32]int64{0: 2, 7: 11})
}

// testMultiTable: a commit's rows for other tables (Commit.More) land
// with its rows and progress, or, when the commit is refused, not at all.
func testMultiTable(t *testing.T, e *env) {
	j := e.setup(t, 1, newTable("multi_a"))
	other := e.setup(t, 2, newTable("multi_b")) // job 2 only brings the table
	e.mustInit(t, j, map[int32]int64{0: 0}, nil)
	c := j.commit(1, nil, rng{Partition: 0, From: 0, To: 2})
	c.More = []sink.TableRows{{Table: "multi_b", Rows: []sink.KV{other.row(0, 2, "b"), other.row(0, 3, "b")}}}
	c.Stats = nextStats(nil, 4)
	base := e.mustCommit(t, c)
	if a, b := e.countRows(t, "multi_a"), e.countRows(t, "multi_b"); a != 2 || b != 2 {
		t.Fatalf("rows after a multi-table commit: %d and %d, want 2 and 2", a, b)
	}
	stale := j.commit(1, base, rng{Partition: 0, From: 0, To: 1})
	stale.More = []sink.TableRows{{Table: "multi_b", Rows: []sink.KV{other.row(0, 9, "b")}}}
	if err := e.s.Commit(stale); !errors.Is(err, sink.ErrStaleCommit) {
		t.Fatalf("stale multi-table commit: %v, want ErrStaleCommit", err)
	}
	e.restart(t)
	if a, b := e.countRows(t, "multi_a"), e.countRows(t, "multi_b"); a != 2 || b != 2 {
		t.Fatalf("rows after a refused multi-table commit and a restart: %d and %d, want 2 and 2", a, b)
	}
	assertPositions(t, e.progress(t, j.id), map[int32]int64{0: 2})
}

func assertNoProgress(t *testing.T, p *sink.Progress, what string) {
	t.Helper()
	if len(p.Positions) != 0 || len(p.Checkpoints) != 0 || p.Fence != 0 || !proto.Equal(p.Stats, &api.JobStats{}) {
		t.Errorf("%s: progress = positions %v, checkpoints %q, stats {%v}, fence %d; want none",
			what, p.Positions, p.Checkpoints, p.Stats, p.Fence)
	}
}

func testUnknownJob(t *testing.T, e *env) {
	assertNoProgress(t, e.progress(t, 4242), "a job the sink never saw")
	e.started(t, "unknown")
	assertNoProgress(t, e.progress(t, 4242), "a job the sink never saw, beside one it has")
}

func testErrorRows(t *testing.T, e *env) {
	keep := e.h.MaxErrorRowsKept
	j := e.setup(t, 1, newTable("errors"))
	e.mustInit(t, j, map[int32]int64{0: 0}, nil)
	var all []*api.ErrorRow
	var base *api.JobStats
	check := func(what string) {
		t.Helper()
		want := all[max(0, len(all)-keep):]
		got := e.errorRows(t, j.id, keep+10)
		if !slices.EqualFunc(got, want, func(a, b *api.ErrorRow) bool { return proto.Equal(a, b) }) {
			t.Errorf("%s: ErrorRows(%d) = %d rows %v, want the newest %d (of %d) oldest first",
				what, keep+10, len(got), offsets(got), len(want), len(all))
		}
		if len(all) >= 2 {
			if got := e.errorRows(t, j.id, 2); !slices.EqualFunc(got, all[len(all)-2:], func(a, b *api.ErrorRow) bool { return proto.Equal(a, b) }) {
				t.Errorf("%s: ErrorRows(2) = %v, want the newest 2 oldest first, %v", what, offsets(got), offsets(all[len(all)-2:]))
			}
		}
	}
	for _, n := range []int{1, keep - 1, 3, 2 * keep} {
		from := int64(len(all))
		c := j.commit(1, base, rng{Partition: 0, From: from, To: from + int64(n)})
		c.Rows = nil
		for i := range int64(n) {
			c.ErrorRows = append(c.ErrorRows, errorRow(0, from+i))
		}
		c.Stats = nextStats(base, 0)
		c.Stats.ErrorRows += int64(n)
		base = e.mustCommit(t, c)
		all = append(all, c.ErrorRows...)
		check("after a commit")
	}
	e.restart(t)
	check("after a restart")
}

func offsets(rows []*api.ErrorRow) []int64 {
	o := make([]int64, len(rows))
	for i, r := range rows {
		o[i] = r.GetOffset()
	}
	return o
}

func testDropJob(t *testing.T, e *env) {
	j, _ := e.started(t, "drop")
	j2 := e.setup(t, 2, j.spec)
	e.mustInit(t, j2, map[int32]int64{0: 0}, nil)
	e.mustCommit(t, j2.commit(1, nil, rng{Partition: 0, From: 0, To: 5}))
	rows := e.rows(t, j.spec.GetName())
	other := e.state(t, j2)

	if err := e.s.DropJob(j.id); err != nil {
		t.Fatalf("DropJob: %v", err)
	}
	for _, when := range []string{"after DropJob", "after DropJob and a restart"} {
		assertNoProgress(t, e.progress(t, j.id), when)
		if got := e.errorRows(t, j.id, 10); len(got) != 0 {
			t.Errorf("%s: %d error rows, want none", when, len(got))
		}
		if got := e.rows(t, j.spec.GetName()); !slices.EqualFunc(got, rows, kvEqual) {
			t.Errorf("%s: %d rows, want the %d before (a dropped job's rows stay)", when, len(got), len(rows))
		}
		e.assertUnchanged(t, j2, other, "DropJob of another job")
		e.restart(t)
	}
	// The job may start again from scratch.
	e.mustInit(t, j, map[int32]int64{0: 0}, nil)
	e.mustCommit(t, j.commit(1, nil, rng{Partition: 0, From: 0, To: 2}))
}

func testJobsIndependent(t *testing.T, e *env) {
	a := e.setup(t, 1, newTable("shared"))
	b := e.setup(t, 2, a.spec)
	c := e.setup(t, 3, newTable("other"))
	for _, j := range []*job{a, b, c} {
		e.mustInit(t, j, map[int32]int64{0: 0}, nil)
	}
	e.mustCommit(t, a.commit(9, nil, rng{Partition: 0, From: 0, To: 5}))
	bBefore := e.state(t, b)
	if len(bBefore.progress.Positions) != 1 || bBefore.progress.Positions[0] != 0 || bBefore.progress.Fence != 0 {
		t.Errorf("job 2's progress after job 1's commit = %+v", bBefore.progress)
	}
	// Fences, statistics and positions are per job.
	e.mustCommit(t, b.commit(1, nil, rng{Partition: 0, From: 0, To: 3}))
	e.mustCommit(t, c.commit(1, nil, rng{Partition: 0, From: 0, To: 2}))
	if n := e.countRows(t, a.spec.GetName()); n != 8 {
		t.Errorf("CountRows(shared) = %d, want 8", n)
	}
	if n := e.countRows(t, c.spec.GetName()); n != 2 {
		t.Errorf("CountRows(other) = %d, want 2", n)
	}
	if p := e.progress(t, a.id); p.Fence != 9 || p.Stats.GetLoadedRows() != 5 || p.Positions[0] != 5 {
		t.Errorf("job 1's progress after the others' commits = %+v", p)
	}
}

func testOverwrite(t *testing.T, e *env) {
	j := e.setup(t, 1, newTable("overwrite"))
	e.mustInit(t, j, map[int32]int64{0: 0}, nil)
	base := e.mustCommit(t, j.commit(1, nil, rng{Partition: 0, From: 0, To: 3}))
	if err := e.s.ResetStarts(j.id, map[int32]int64{0: 0}, nil); err != nil {
		t.Fatalf("ResetStarts: %v", err)
	}
	c := j.commit(1, base, rng{Partition: 0, From: 0, To: 4})
	c.Rows = []sink.KV{j.row(0, 0, "w"), j.row(0, 1, "w"), j.row(0, 2, "w"), j.row(0, 3, "x"), j.row(0, 3, "w")}
	e.mustCommit(t, c)
	want := []sink.KV{j.row(0, 0, "w"), j.row(0, 1, "w"), j.row(0, 2, "w"), j.row(0, 3, "w")}
	if got := e.rows(t, j.spec.GetName()); !slices.EqualFunc(got, sortedKVs(want), kvEqual) {
		t.Errorf("rows after rewriting keys = %d rows, want 4 with the last values", len(got))
	}
	if n := e.countRows(t, j.spec.GetName()); n != 4 {
		t.Errorf("CountRows = %d, want 4", n)
	}
}

func testScanPaging(t *testing.T, e *env) {
	j := e.setup(t, 1, newTable("scan"))
	empty := e.setup(t, 2, newTable("empty"))
	e.mustInit(t, j, map[int32]int64{0: 0, 1: 0, 2: 0}, nil)
	// Offsets past 255 and partitions out of order: key order is the
	// bytes' order, whatever order the rows came in.
	c := j.commit(1, nil, rng{Partition: 2, From: 0, To: 5}, rng{Partition: 0, From: 0, To: 300}, rng{Partition: 1, From: 0, To: 4})
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(c.Rows), func(a, b int) { c.Rows[a], c.Rows[b] = c.Rows[b], c.Rows[a] })
	e.mustCommit(t, c)
	want := sortedKVs(c.Rows)
	name := j.spec.GetName()
	if n := e.countRows(t, name); n != int64(len(want)) {
		t.Errorf("CountRows = %d, want %d", n, len(want))
	}

	scan := func(after []byte, limit int) []sink.KV {
		t.Helper()
		return scanPage(t, e.s, name, after, limit)
	}
	// Pages of 4, each page's last key the next cursor.
	var paged []sink.KV
	var after []byte
	for {
		got := scan(after, 4)
		if len(got) == 0 {
			break
		}
		paged = append(paged, got...)
		after = got[len(got)-1].Key
	}
	if !slices.EqualFunc(paged, want, kvEqual) {
		t.Errorf("paged scan: %d rows, want %d in key order", len(paged), len(want))
	}
	// A cursor that is no key starts at the next key.
	if got := scan(append(bytes.Clone(want[9].Key), 0), 2); !slices.EqualFunc(got, want[10:12], kvEqual) {
		t.Errorf("scan after a key that is not stored: got %d rows, want rows 10 and 11", len(got))
	}
	if got := scan(want[len(want)-1].Key, 5); len(got) != 0 {
		t.Errorf("scan after the last key: %d rows, want none", len(got))
	}
	if got := scan(want[len(want)-3].Key, 100); !slices.EqualFunc(got, want[len(want)-2:], kvEqual) {
		t.Errorf("scan of the last 2 rows with limit 100: %d rows", len(got))
	}
	// fn's error stops the scan and comes back.
	stop := errors.New("stop")
	calls := 0
	err := e.s.ScanRowsAfter(name, nil, 10, func(k, v []byte) error {
		if calls++; calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 2 {
		t.Errorf("ScanRowsAfter with fn failing on row 2: err %v after %d calls, want stop after 2", err, calls)
	}
	if n := e.countRows(t, empty.spec.GetName()); n != 0 {
		t.Errorf("CountRows of an empty table = %d", n)
	}
	if got := e.rows(t, empty.spec.GetName()); len(got) != 0 {
		t.Errorf("scan of an empty table: %d rows", len(got))
	}
}

// testTruncate: a sink.Truncater empties one table and nothing else; the
// job's progress, checkpoints, error rows and statistics stay, and its next
// commit goes on from them. A sink that is no Truncater skips it.
func testTruncate(t *testing.T, e *env) {
	tr, ok := e.s.(sink.Truncater)
	if !ok {
		t.Skip("the sink is not a sink.Truncater")
	}
	j := e.setup(t, 1, newTable("truncated"))
	o := e.setup(t, 2, newTable("kept"))
	for _, x := range []*job{j, o} {
		e.mustInit(t, x, map[int32]int64{0: 0}, nil)
	}
	c := j.commit(1, nil, rng{Partition: 0, From: 0, To: 5, Checkpoint: []byte("ck1-5")})
	c.ErrorRows = []*api.ErrorRow{errorRow(0, 5)}
	stats := e.mustCommit(t, c)
	c = o.commit(1, nil, rng{Partition: 0, From: 0, To: 3})
	c.ErrorRows = []*api.ErrorRow{errorRow(0, 3)}
	e.mustCommit(t, c)
	before, other := e.state(t, j), e.state(t, o)
	if err := tr.TruncateTable(j.spec.GetName()); err != nil {
		t.Fatalf("TruncateTable: %v", err)
	}
	for _, when := range []string{"after TruncateTable", "after TruncateTable and a restart"} {
		after := e.state(t, j)
		if n := e.countRows(t, j.spec.GetName()); n != 0 || len(after.rows) != 0 {
			t.Errorf("%s: CountRows = %d, a scan finds %d rows; want 0", when, n, len(after.rows))
		}
		if d := diffProgress(before.progress, after.progress); d != "" {
			t.Errorf("%s: progress moved: %s", when, d)
		}
		assertPositions(t, after.progress, map[int32]int64{0: 5})
		assertCheckpoints(t, after.progress, map[int32][]byte{0: []byte("ck1-5")})
		assertStats(t, after.progress, stats)
		if !slices.EqualFunc(after.errs, []*api.ErrorRow{errorRow(0, 5)}, func(a, b *api.ErrorRow) bool { return proto.Equal(a, b) }) {
			t.Errorf("%s: error rows %v, want the one at offset 5", when, offsets(after.errs))
		}
		e.assertUnchanged(t, o, other, "truncating another job's table ("+when+")")
		e.restart(t)
	}
	next := e.mustCommit(t, j.commit(1, stats, rng{Partition: 0, From: 5, To: 7}))
	p := e.progress(t, j.id)
	assertPositions(t, p, map[int32]int64{0: 7})
	assertStats(t, p, next)
	if got, want := e.rows(t, j.spec.GetName()), sortedKVs([]sink.KV{j.row(0, 5, "v"), j.row(0, 6, "v")}); !slices.EqualFunc(got, want, kvEqual) {
		t.Errorf("after the next commit the table has %d rows, want the 2 of offsets 5 and 6", len(got))
	}
	if errs := e.errorRows(t, j.id, e.h.MaxErrorRowsKept+10); len(errs) != 1 {
		t.Errorf("after the next commit: error rows %v, want the one at offset 5", offsets(errs))
	}
}

// testDrop: a sink.Dropper drops one table's rows (and, in a database, the
// table) and nothing else; the table prepared again is empty, and dropping
// a table that is not there is not an error. A sink that is no Dropper
// skips it.
func testDrop(t *testing.T, e *env) {
	d, ok := e.s.(sink.Dropper)
	if !ok {
		t.Skip("the sink is not a sink.Dropper")
	}
	j := e.setup(t, 1, newTable("dropped"))
	o := e.setup(t, 2, newTable("kept_too"))
	for _, x := range []*job{j, o} {
		e.mustInit(t, x, map[int32]int64{0: 0}, nil)
	}
	e.mustCommit(t, j.commit(1, nil, rng{Partition: 0, From: 0, To: 5}))
	e.mustCommit(t, o.commit(1, nil, rng{Partition: 0, From: 0, To: 3}))
	if err := d.DropTable(j.spec.GetName()); err != nil {
		t.Fatalf("DropTable: %v", err)
	}
	if err := d.DropTable(j.spec.GetName()); err != nil {
		t.Fatalf("DropTable of a dropped table: %v", err)
	}
	if n := e.countRows(t, o.spec.GetName()); n != 3 {
		t.Errorf("the other table has %d rows after the drop, want 3", n)
	}
	if err := e.s.PrepareTable(j.spec); err != nil {
		t.Fatalf("PrepareTable after the drop: %v", err)
	}
	if n := e.countRows(t, j.spec.GetName()); n != 0 {
		t.Errorf("the table prepared again after the drop has %d rows, want 0", n)
	}
}

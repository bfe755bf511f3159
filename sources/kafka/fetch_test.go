package kafka

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/loadnode/loadnode/sources"
)

// values returns n record values "<prefix>-<i>" from i = from.
func values(prefix string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%05d", prefix, from+i)
	}
	return out
}

func laneOf(t *testing.T, r sources.Reader) *lane {
	t.Helper()
	kr, ok := r.(*reader)
	if !ok {
		t.Fatalf("reader is a %T", r)
	}
	return kr.route.lane
}

func lanes(c *Cluster) int {
	c.fetch.mu.Lock()
	defer c.fetch.mu.Unlock()
	n := 0
	for _, l := range c.fetch.mu.lanes {
		if l != nil {
			n++
		}
	}
	return n
}

// checkValues checks that recs of partition p are the values prefix-from
// ... in order.
func checkValues(t *testing.T, recs []sources.Record, prefix string, from int) {
	t.Helper()
	for i, rec := range recs {
		if want := fmt.Sprintf("%s-%05d", prefix, from+i); string(rec.Value) != want {
			t.Fatalf("record %d (offset %d): %q, want %q", i, rec.Offset, rec.Value, want)
		}
	}
}

// TestFetchSharesOneClient: readers share one lane, a reader of a
// partition another reader reads (two jobs on one topic) too, and every
// reader reads every record of its partition; closing the last reader
// closes the client and the dispatcher.
func TestFetchSharesOneClient(t *testing.T) {
	e := newEnv(t, 3)
	e.cluster.fetch.nLanes = 1 // every reader on one lane
	for p := range int32(3) {
		e.produce(t, p, values(fmt.Sprint(p), 0, 300)...)
	}
	open := func(p int32) sources.Reader {
		r, err := e.cluster.NewReader(e.topic, map[int32]int64{p: 0})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r0, r1, r2 := open(0), open(1), open(2)
	twin := open(1) // a second job reading partition 1
	if laneOf(t, r0) != laneOf(t, r1) || laneOf(t, r0) != laneOf(t, r2) || laneOf(t, r0) != laneOf(t, twin) {
		t.Fatal("readers do not share a lane")
	}
	lim := sources.Limits{MaxRows: 70, MaxWait: time.Second}
	// interleave the readers' Reads, as tasks on one node do
	readers := []sources.Reader{r0, r1, r2, twin}
	parts := []int32{0, 1, 2, 1}
	pos := make([]map[int32]int64, len(readers))
	got := make([][]sources.Record, len(readers))
	for i, p := range parts {
		pos[i] = map[int32]int64{p: 0}
	}
	for round := 0; ; round++ {
		done := true
		for i, r := range readers {
			if pos[i][parts[i]] == 300 {
				continue
			}
			done = false
			b, err := r.Read(testCtx(t), lim)
			if err != nil {
				t.Fatal(err)
			}
			checkBatch(t, b, pos[i], lim, true)
			got[i] = append(got[i], b.Records...)
			pos[i][parts[i]] = b.Next[parts[i]]
		}
		if done {
			break
		}
		if round > 100 {
			t.Fatalf("positions %v after %d rounds", pos, round)
		}
	}
	for i, p := range parts {
		checkValues(t, got[i], fmt.Sprint(p), 0)
	}
	shared := laneOf(t, r0)
	twin.Close()
	r0.Close()
	r1.Close()
	select {
	case <-shared.done:
		t.Fatal("lane closed with a reader left")
	default:
	}
	r2.Close()
	<-shared.done
	if n := lanes(e.cluster); n != 0 {
		t.Fatalf("%d lanes after every reader closed", n)
	}
}

// TestFetchRewindOnSharedLane: on a lane that stays open (another reader
// holds it), readers of one partition are closed and reopened at random
// earlier and later offsets; each starts exactly at its offset and reads
// gap-free, whatever the previous reader's cursor had fetched.
func TestFetchRewindOnSharedLane(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	e := newEnv(t, 2)
	e.cluster.fetch.nLanes = 1 // every reader on one lane
	const n = 500
	for chunk := 0; chunk < n; chunk += 100 {
		e.produce(t, 0, values("r", chunk, 100)...)
	}
	e.produce(t, 1, "keep")
	keeper, err := e.cluster.NewReader(e.topic, map[int32]int64{1: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer keeper.Close()
	for range 12 {
		at := int64(rng.IntN(n))
		r, err := e.cluster.NewReader(e.topic, map[int32]int64{0: at})
		if err != nil {
			t.Fatal(err)
		}
		if laneOf(t, r) != laneOf(t, keeper) {
			t.Fatal("reopened reader not on the kept lane")
		}
		pos := map[int32]int64{0: at}
		to := min(at+1+int64(rng.IntN(200)), n)
		lim := sources.Limits{MaxRows: 1 + rng.IntN(80), MaxWait: time.Second}
		recs := readUntil(t, r, lim, pos, map[int32]int64{0: to}, true, nil)
		if len(recs) == 0 || recs[0].Offset != at {
			t.Fatalf("reopened at %d, first record %v", at, recs)
		}
		checkValues(t, recs, "r", int(at))
		r.Close()
	}

}

// TestFetchOutOfRangeIsolated: a reader whose position is out of range
// gets its *sources.OutOfRangeError; another reader on the same lane reads
// on, before and after it, unaffected.
func TestFetchOutOfRangeIsolated(t *testing.T) {
	e := newEnv(t, 2)
	e.cluster.fetch.nLanes = 1 // every reader on one lane
	e.produce(t, 0, values("a", 0, 50)...)
	e.produce(t, 1, values("b", 0, 5)...)
	good, err := e.cluster.NewReader(e.topic, map[int32]int64{0: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	bad, err := e.cluster.NewReader(e.topic, map[int32]int64{1: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if laneOf(t, good) != laneOf(t, bad) {
		t.Fatal("readers not on one lane")
	}
	lim := sources.Limits{MaxRows: 20, MaxWait: time.Second}
	pos := map[int32]int64{0: 0}
	recs := readUntil(t, good, lim, pos, map[int32]int64{0: 20}, true, nil)

	ctx := testCtx(t)
	var oor *sources.OutOfRangeError
	for {
		b, err := bad.Read(ctx, lim)
		if len(b.Records) > 0 || b.Next[1] != 10 {
			t.Fatalf("out-of-range reader returned %d records, Next %v", len(b.Records), b.Next)
		}
		if err != nil {
			if !errors.As(err, &oor) {
				t.Fatalf("err %v, want *sources.OutOfRangeError", err)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatal("no out-of-range error")
		}
	}
	if oor.Partition != 1 || oor.Offset != 10 || oor.LogEnd != 5 {
		t.Fatalf("error %+v", *oor)
	}
	// the good reader reads on, records produced after the error too
	e.produce(t, 0, values("a", 50, 50)...)
	recs = append(recs, readUntil(t, good, lim, pos, map[int32]int64{0: 100}, true, nil)...)
	checkValues(t, recs, "a", 0)
	if _, err := bad.Read(ctx, lim); !errors.As(err, &oor) {
		t.Fatalf("second Read: %v, want the sticky out-of-range error", err)
	}
}

// TestFetchPauseBound: a reader that is not read from has its partitions
// paused once its queue passes the bound, so the shared client does not
// buffer its records without end while other readers read on; Read
// resumes them and every record comes, in order.
func TestFetchPauseBound(t *testing.T) {
	const partBytes = 2048
	e := newEnvWith(t, 2, map[string]string{"max.partition.fetch.bytes": fmt.Sprint(partBytes)})
	e.cluster.fetch.nLanes = 1 // every reader on one lane
	const bound = 1024
	e.cluster.fetch.bound = bound
	const n = 2000 // ~20 B per record: ~20 fetches of 2 KiB
	for chunk := 0; chunk < n; chunk += 200 {
		e.produce(t, 0, values("idle", chunk, 200)...)
	}
	idle, err := e.cluster.NewReader(e.topic, map[int32]int64{0: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	busy, err := e.cluster.NewReader(e.topic, map[int32]int64{1: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	rt := idle.(*reader).route
	// The first push past the bound pauses within the same lock.
	select {
	case <-rt.signal:
	case <-testCtx(t).Done():
		t.Fatal("nothing fetched for the idle reader")
	}
	rt.signal <- struct{}{} // give the token back to the reader
	queued := func() (int64, bool) {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		return rt.mu.bytes, rt.mu.waiting
	}
	if _, waiting := queued(); !waiting {
		t.Fatal("reader not detached past the bound")
	}
	// The busy reader reads on the same lane meanwhile.
	for chunk := 0; chunk < 1000; chunk += 200 {
		e.produce(t, 1, values("busy", chunk, 200)...)
	}
	recs := readUntil(t, busy, sources.Limits{MaxRows: 300, MaxWait: time.Second}, map[int32]int64{1: 0}, map[int32]int64{1: 1000}, true, nil)
	checkValues(t, recs, "busy", 0)
	// At most the bound plus the fetches in flight when it paused.
	if b, waiting := queued(); !waiting || b > bound+2*partBytes {
		t.Fatalf("idle reader queues %d bytes (detached %v), bound %d", b, waiting, bound)
	}
	recs = readUntil(t, idle, sources.Limits{MaxRows: 150, MaxWait: time.Second}, map[int32]int64{0: 0}, map[int32]int64{0: n}, true, nil)
	checkValues(t, recs, "idle", 0)
}

// TestFetchSamePartitionTwoReaders: readers of one partition on one lane
// (jobs loading one topic into several tables) at different positions: one
// ahead of the stream skips what it has, one behind takes the stream's
// recent records or, without them, sets the stream back (the others skip
// what they already have), one that is not read stops
// being queued for past its bound while the others read on, and each
// reads exactly its records, in order, from its own offset.
func TestFetchSamePartitionTwoReaders(t *testing.T) {
	t.Run("recent", func(t *testing.T) { testSamePartition(t, 0) })
	t.Run("set back", func(t *testing.T) { testSamePartition(t, -1) })
}

// testSamePartition runs TestFetchSamePartitionTwoReaders with the
// fetcher's recent override.
func testSamePartition(t *testing.T, recent int64) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	e := newEnvWith(t, 1, map[string]string{"max.partition.fetch.bytes": "2048"})
	e.cluster.fetch.nLanes = 1 // every reader on one lane
	e.cluster.fetch.bound = 2048
	e.cluster.fetch.recent = recent
	const n = 1200
	for chunk := 0; chunk < n; chunk += 100 {
		e.produce(t, 0, values("s", chunk, 100)...)
	}
	type job struct {
		r    sources.Reader
		pos  map[int32]int64
		from int
		got  []sources.Record
	}
	var jobs []*job
	open := func(at int) *job {
		r, err := e.cluster.NewReader(e.topic, map[int32]int64{0: int64(at)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		j := &job{r: r, pos: map[int32]int64{0: int64(at)}, from: at}
		jobs = append(jobs, j)
		return j
	}
	read := func(j *job) {
		lim := sources.Limits{MaxRows: 1 + rng.IntN(150), MaxWait: time.Second}
		b, err := j.r.Read(testCtx(t), lim)
		if err != nil {
			t.Fatal(err)
		}
		checkBatch(t, b, j.pos, lim, true)
		j.got = append(j.got, b.Records...)
		j.pos[0] = b.Next[0]
	}
	a := open(300)
	for a.pos[0] < 600 {
		read(a)
	}
	open(900) // ahead of the stream
	open(100) // behind it: sets it back
	idle := open(0)
	for round := 0; ; round++ {
		done := true
		for _, j := range jobs {
			if j != idle && j.pos[0] < n {
				done = false
				read(j)
			}
		}
		if done {
			break
		}
		if round > 1000 {
			t.Fatal("no end")
		}
	}
	if laneOf(t, idle.r) != laneOf(t, a.r) {
		t.Fatal("readers of one partition not on one lane")
	}
	rt := idle.r.(*reader).route
	rt.mu.Lock()
	queued, waiting := rt.mu.bytes, rt.mu.waiting
	rt.mu.Unlock()
	if !waiting || queued > 2048+2*2048 {
		t.Fatalf("idle reader: %d bytes queued, detached %v", queued, waiting)
	}
	for idle.pos[0] < n {
		read(idle)
	}
	for _, j := range jobs {
		if len(j.got) != n-j.from {
			t.Fatalf("reader from %d: %d records, want %d", j.from, len(j.got), n-j.from)
		}
		checkValues(t, j.got, "s", j.from)
	}
}

// TestFetchLanesByLowestPartition: a job's tasks (partitions dealt
// round-robin) fetch on lanes of their own, each reading exactly its
// records; readers of one partition (many small jobs) share one lane.
func TestFetchLanesByLowestPartition(t *testing.T) {
	e := newEnv(t, 8)
	for p := range int32(8) {
		e.produce(t, p, values(fmt.Sprint(p), 0, 40)...)
	}
	tasks := []map[int32]int64{{0: 0, 3: 0, 6: 0}, {1: 0, 4: 0, 7: 0}, {2: 0, 5: 0}}
	var rs []sources.Reader
	for _, start := range tasks {
		r, err := e.cluster.NewReader(e.topic, start)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rs = append(rs, r)
	}
	if a, b, c := laneOf(t, rs[0]), laneOf(t, rs[1]), laneOf(t, rs[2]); a == b || b == c || a == c {
		t.Fatal("a job's tasks share a lane")
	}
	small, err := e.cluster.NewReader(e.topic, map[int32]int64{0: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	if laneOf(t, small) != laneOf(t, rs[0]) {
		t.Fatal("readers of partition 0 on different lanes")
	}
	if n := lanes(e.cluster); n != 3 {
		t.Fatalf("%d lanes, want 3", n)
	}
	lim := sources.Limits{MaxRows: 1000, MaxWait: time.Second}
	for i, r := range rs {
		pos := maps.Clone(tasks[i])
		want := map[int32]int64{}
		for p := range pos {
			want[p] = 40
		}
		recs := readUntil(t, r, lim, pos, want, true, nil)
		byPart := map[int32][]sources.Record{}
		for _, rec := range recs {
			byPart[rec.Partition] = append(byPart[rec.Partition], rec)
		}
		for p := range tasks[i] {
			checkValues(t, byPart[p], fmt.Sprint(p), 0)
		}
	}
	pos := map[int32]int64{0: 10}
	recs := readUntil(t, small, lim, pos, map[int32]int64{0: 40}, true, nil)
	checkValues(t, recs, "0", 10)
}

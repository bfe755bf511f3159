package persistence

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
)

// rowKey mimics a DUPLICATE-model row key: (job, partition, offset).
func rowKey(job uint64, partition int32, offset int64) []byte {
	k := binary.BigEndian.AppendUint64(nil, job)
	k = binary.BigEndian.AppendUint32(k, uint32(partition))
	return binary.BigEndian.AppendUint64(k, uint64(offset))
}

func rowValue(partition int32, offset int64) []byte {
	return fmt.Appendf(nil, "row-%d-%d", partition, offset)
}

// rangeRows returns one row per offset of r.
func rangeRows(job uint64, r Range) []KV {
	var kvs []KV
	for o := r.From; o < r.To; o++ {
		kvs = append(kvs, KV{Key: rowKey(job, r.Partition, o), Value: rowValue(r.Partition, o)})
	}
	return kvs
}

func commitOf(rec *api.JobRecord, stats *api.JobStats, errRows []*api.ErrorRow, ranges ...Range) *Commit {
	c := &Commit{JobID: rec.Id, Table: rec.Spec.Table.Name, Ranges: ranges, Stats: stats, ErrorRows: errRows}
	for _, r := range ranges {
		c.Rows = append(c.Rows, rangeRows(rec.Id, r)...)
	}
	return c
}

func errRow(offset int64) *api.ErrorRow {
	return &api.ErrorRow{Partition: 0, Offset: offset, Raw: []byte("bad"), Reason: "unparsable", TimeUnixMs: 1}
}

func scanAll(t testing.TB, s *Store, table string) []KV {
	t.Helper()
	var kvs []KV
	if err := s.ScanRows(table, 0, func(k, v []byte) error {
		kvs = append(kvs, KV{Key: k, Value: v})
		return nil
	}); err != nil {
		t.Fatalf("ScanRows: %v", err)
	}
	return kvs
}

func TestCommitBatch(t *testing.T) {
	mem := vfs.NewMem()
	s := openStore(t, mem, Options{})
	rec := mustCreate(t, s, 1, "a")
	table := rec.Spec.Table.Name
	if err := s.InitProgress(rec.Id, map[int32]int64{0: 0, 1: 100}); err != nil {
		t.Fatal(err)
	}

	stats := &api.JobStats{LoadedRows: 5, ErrorRows: 1, CommittedBatches: 1, LastCommitUnixMs: 7}
	c := commitOf(rec, stats, []*api.ErrorRow{errRow(1)}, Range{Partition: 0, From: 0, To: 3}, Range{Partition: 1, From: 100, To: 102})
	if err := s.CommitBatch(c); err != nil {
		t.Fatalf("CommitBatch: %v", err)
	}
	// An empty range (a poll that returned only control records) moves progress.
	stats2 := &api.JobStats{LoadedRows: 5, ErrorRows: 1, CommittedBatches: 2, LastCommitUnixMs: 8}
	if err := s.CommitBatch(&Commit{JobID: rec.Id, Table: table, Ranges: []Range{{Partition: 0, From: 3, To: 6}}, Stats: stats2, StatsBase: 1}); err != nil {
		t.Fatalf("CommitBatch without rows: %v", err)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, mem, Options{})
	st, err := s.LoadJob(rec.Id)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int32]int64{0: 6, 1: 102}; !maps.Equal(st.Progress, want) {
		t.Errorf("progress = %v, want %v", st.Progress, want)
	}
	assertProtoEqual(t, "stats", st.Stats, stats2)
	if n, err := s.CountRows(table); err != nil || n != 5 {
		t.Errorf("CountRows = %d, %v; want 5", n, err)
	}
	kvs := scanAll(t, s, table)
	if len(kvs) != len(c.Rows) {
		t.Fatalf("ScanRows returned %d rows, want %d", len(kvs), len(c.Rows))
	}
	for i := range kvs {
		if string(kvs[i].Key) != string(c.Rows[i].Key) || string(kvs[i].Value) != string(c.Rows[i].Value) {
			t.Errorf("row %d = %x:%q, want %x:%q", i, kvs[i].Key, kvs[i].Value, c.Rows[i].Key, c.Rows[i].Value)
		}
	}
	var limited int
	if err := s.ScanRows(table, 2, func(k, v []byte) error { limited++; return nil }); err != nil || limited != 2 {
		t.Errorf("ScanRows(limit 2) visited %d rows, %v", limited, err)
	}
	stop := errors.New("stop")
	if err := s.ScanRows(table, 0, func(k, v []byte) error { return stop }); err != stop {
		t.Errorf("ScanRows with a failing callback = %v, want the callback's error", err)
	}
	if er, err := s.ErrorRows(rec.Id, 0); err != nil || len(er) != 1 {
		t.Errorf("ErrorRows = %v, %v; want 1 row", er, err)
	}
	if _, err := s.CountRows("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("CountRows of an unknown table = %v, want ErrNotFound", err)
	}
	if err := s.ScanRows("nope", 0, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("ScanRows of an unknown table = %v, want ErrNotFound", err)
	}
}

func TestCommitBatchRefusedChangesNothing(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	rec := mustCreate(t, s, 1, "a")
	if err := s.InitProgress(rec.Id, map[int32]int64{0: 0, 1: 100}); err != nil {
		t.Fatal(err)
	}
	first := commitOf(rec, &api.JobStats{LoadedRows: 3}, []*api.ErrorRow{errRow(0)}, Range{Partition: 0, From: 0, To: 3})
	if err := s.CommitBatch(first); err != nil {
		t.Fatal(err)
	}
	newStats := &api.JobStats{LoadedRows: 1000}
	newErrs := []*api.ErrorRow{errRow(9)}
	tests := []struct {
		name      string
		c         *Commit
		wantStale bool
		mention   string
	}{
		{"from too old", commitOf(rec, newStats, newErrs, Range{Partition: 0, From: 0, To: 5}), true, "partition 0: stored progress 3, commit from 0"},
		{"from too new", commitOf(rec, newStats, newErrs, Range{Partition: 0, From: 4, To: 6}), true, "partition 0: stored progress 3, commit from 4"},
		{"partition without progress", commitOf(rec, newStats, newErrs, Range{Partition: 2, From: 0, To: 1}), true, "partition 2"},
		{"one good range, one stale", commitOf(rec, newStats, newErrs, Range{Partition: 0, From: 3, To: 5}, Range{Partition: 1, From: 99, To: 101}), true, "partition 1"},
		{"to before from", commitOf(rec, newStats, newErrs, Range{Partition: 0, From: 3, To: 2}), false, ""},
		{"partition twice", commitOf(rec, newStats, newErrs, Range{Partition: 0, From: 3, To: 4}, Range{Partition: 0, From: 3, To: 4}), false, ""},
		{"no ranges", &Commit{JobID: rec.Id, Table: rec.Spec.Table.Name, Rows: rangeRows(rec.Id, Range{Partition: 0, From: 3, To: 4}), Stats: newStats}, false, ""},
		{"unknown table", &Commit{JobID: rec.Id, Table: "nope", Rows: rangeRows(rec.Id, Range{Partition: 0, From: 3, To: 4}), Ranges: []Range{{Partition: 0, From: 3, To: 4}}}, false, ""},
		{"rows without table", &Commit{JobID: rec.Id, Rows: rangeRows(rec.Id, Range{Partition: 0, From: 3, To: 4}), Ranges: []Range{{Partition: 0, From: 3, To: 4}}}, false, ""},
		{"nil error row", commitOf(rec, newStats, []*api.ErrorRow{nil}, Range{Partition: 0, From: 3, To: 4}), false, ""},
		{"unknown job", &Commit{JobID: 77, Ranges: []Range{{Partition: 0, From: 0, To: 1}}}, true, "job 77"},
		{"nil commit", nil, false, ""},
	}
	before := dump(t, s)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.CommitBatch(tt.c)
			if err == nil {
				t.Fatal("CommitBatch succeeded")
			}
			if got := errors.Is(err, ErrStaleCommit); got != tt.wantStale {
				t.Errorf("err = %v; ErrStaleCommit %v, want %v", err, got, tt.wantStale)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("err = %q, want it to mention %q", err, tt.mention)
			}
			assertSameDump(t, before, dump(t, s))
		})
	}
	st, err := s.LoadJob(rec.Id)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int32]int64{0: 3, 1: 100}; !maps.Equal(st.Progress, want) {
		t.Errorf("progress = %v, want %v", st.Progress, want)
	}
	assertProtoEqual(t, "stats", st.Stats, first.Stats)
	if n, err := s.CountRows(rec.Spec.Table.Name); err != nil || n != 3 {
		t.Errorf("CountRows = %d, %v; want 3", n, err)
	}
}

func TestCommitBatchErrorRowsBounded(t *testing.T) {
	mem := vfs.NewMem()
	s := openStore(t, mem, Options{MaxErrorRowsKept: 5})
	rec := mustCreate(t, s, 1, "a")
	if err := s.InitProgress(rec.Id, map[int32]int64{0: 0}); err != nil {
		t.Fatal(err)
	}
	next := int64(0)
	commitErrs := func(s *Store, n int) {
		t.Helper()
		var rows []*api.ErrorRow
		for range n {
			rows = append(rows, errRow(next))
			next++
		}
		c := &Commit{JobID: rec.Id, Ranges: []Range{{Partition: 0, From: next - int64(n), To: next}}, ErrorRows: rows}
		if err := s.CommitBatch(c); err != nil {
			t.Fatalf("CommitBatch: %v", err)
		}
	}
	// assertKept checks that exactly the newest want offsets are stored.
	assertKept := func(s *Store, want int) {
		t.Helper()
		rows, err := s.ErrorRows(rec.Id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != want {
			t.Fatalf("%d error rows kept, want %d", len(rows), want)
		}
		for i, r := range rows {
			if wantOff := next - int64(want) + int64(i); r.Offset != wantOff {
				t.Errorf("error row %d has offset %d, want %d", i, r.Offset, wantOff)
			}
		}
		stored := 0
		prefix := string(jobSubPrefix(rec.Id, jobErrorSuffix))
		for k := range dump(t, s) {
			if strings.HasPrefix(k, prefix) {
				stored++
			}
		}
		if stored != want {
			t.Errorf("%d error-row keys stored, want %d", stored, want)
		}
	}

	commitErrs(s, 3)
	assertKept(s, 3)
	commitErrs(s, 4) // 7 written, newest 5 kept
	assertKept(s, 5)
	commitErrs(s, 12) // more than the bound in one batch
	assertKept(s, 5)
	commitErrs(s, 1)
	assertKept(s, 5)

	last2, err := s.ErrorRows(rec.Id, 2)
	if err != nil || len(last2) != 2 || last2[0].Offset != next-2 || last2[1].Offset != next-1 {
		t.Errorf("ErrorRows(limit 2) = %v, %v; want the newest two, oldest first", last2, err)
	}
	if _, err := s.ErrorRows(99, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("ErrorRows of an unknown job = %v, want ErrNotFound", err)
	}

	// A smaller bound after a restart trims with the next error rows.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, mem, Options{MaxErrorRowsKept: 2})
	assertKept(s, 5)
	commitErrs(s, 1)
	assertKept(s, 2)
}

// Concurrent commits from the same start position: exactly one may win.
// A delay between the progress check and the commit widens the window in
// which a missing lock would let two commits pass the same check. (Pebble
// makes a commit visible before its WAL sync finishes, so slowing the disk
// would not widen it.)
func TestCommitBatchConcurrentSameJob(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	// Hold the checked commit for 2ms so the others pile up at the check.
	s.afterCommitCheck = func() { <-time.After(2 * time.Millisecond) }
	rec := mustCreate(t, s, 1, "a")
	if err := s.InitProgress(rec.Id, map[int32]int64{0: 0}); err != nil {
		t.Fatal(err)
	}
	const n = 16
	start := make(chan struct{})
	var wg sync.WaitGroup
	var won, stale atomic.Int32
	for i := range n {
		wg.Go(func() {
			// Distinct row keys per contender, so duplicates would show.
			c := &Commit{JobID: rec.Id, Table: rec.Spec.Table.Name, Ranges: []Range{{Partition: 0, From: 0, To: 10}}}
			for o := range int64(10) {
				c.Rows = append(c.Rows, KV{Key: rowKey(uint64(i), 0, o), Value: []byte("v")})
			}
			<-start
			switch err := s.CommitBatch(c); {
			case err == nil:
				won.Add(1)
			case errors.Is(err, ErrStaleCommit):
				stale.Add(1)
			default:
				t.Errorf("CommitBatch: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if won.Load() != 1 || stale.Load() != n-1 {
		t.Errorf("%d commits won and %d were stale; want 1 and %d", won.Load(), stale.Load(), n-1)
	}
	if c, err := s.CountRows(rec.Spec.Table.Name); err != nil || c != 10 {
		t.Errorf("CountRows = %d, %v; want 10", c, err)
	}
}

// TestPowerLoss commits continuously while taking crash clones: every clone
// holds every commit acknowledged before it was taken, and its rows agree
// exactly with its progress and stats.
func TestPowerLoss(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	mem := vfs.NewCrashableMem()
	// Small memtables force flushes (sstables, MANIFEST) during the run.
	s := openStore(t, mem, Options{tune: func(o *pebble.Options) { o.MemTableSize = 64 << 10 }})
	const jobs = 3
	var recs []*api.JobRecord
	for i := range jobs {
		rec := mustCreate(t, s, uint64(i+1), fmt.Sprintf("job%d", i))
		recs = append(recs, rec)
		if err := s.InitProgress(rec.Id, map[int32]int64{0: 0, 1: 0}); err != nil {
			t.Fatal(err)
		}
	}

	// One writer per job, as its job actor would be, for a bounded number of
	// batches. acked[j][p] is the progress of partition p of job j
	// acknowledged so far.
	const batches = 150
	var acked [jobs][2]atomic.Int64
	var wg sync.WaitGroup
	for j, rec := range recs {
		seed := rng.Uint64()
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, 2))
			pos := [2]int64{}
			loaded, committed := int64(0), int64(0)
			for batch := int64(1); batch <= batches; batch++ {
				var ranges []Range
				for p := range int32(2) {
					if r.IntN(3) == 0 {
						continue
					}
					n := int64(r.IntN(50))
					ranges = append(ranges, Range{Partition: p, From: pos[p], To: pos[p] + n})
					loaded += n
				}
				if len(ranges) == 0 {
					continue
				}
				stats := &api.JobStats{LoadedRows: loaded, CommittedBatches: batch}
				c := commitOf(rec, stats, nil, ranges...)
				c.StatsBase = committed
				if err := s.CommitBatch(c); err != nil {
					t.Errorf("job %d: CommitBatch: %v", rec.Id, err)
					return
				}
				committed = batch
				for _, rg := range ranges {
					pos[rg.Partition] = rg.To
					acked[j][rg.Partition].Store(rg.To)
				}
			}
		})
	}
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()

	snapshot := func() (a [jobs][2]int64) {
		for j := range jobs {
			for p := range 2 {
				a[j][p] = acked[j][p].Load()
			}
		}
		return a
	}
	rounds := 0
	for round, last := 0, false; !last; round++ {
		rounds++
		select {
		case <-writersDone:
			last = true // one more clone after every commit was acknowledged
		default:
		}
		before := snapshot()
		cfg := vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(3) * 50, RNG: rng}
		clone := crashReopen(t, mem, cfg)
		for j, rec := range recs {
			checkJobAgrees(t, clone, rec, before[j], fmt.Sprintf("round %d (unsynced %d%%)", round, cfg.UnsyncedDataPercent))
		}
		_ = clone.Close()
		// Let the writers make progress between clones.
		deadline := time.Now().Add(5 * time.Second)
		for !last && snapshot() == before && time.Now().Before(deadline) {
			select {
			case <-writersDone:
			case <-time.After(time.Millisecond):
			}
		}
	}
	m := s.db.Metrics()
	t.Logf("%d crash clones, %d flushes", rounds, m.Flush.Count)
	if m.Flush.Count == 0 {
		t.Errorf("no memtable flush happened; the test should cover flushed data")
	}
}

// checkJobAgrees checks that a recovered job holds at least the acknowledged
// progress, exactly one row per offset below its progress and none above,
// and loaded-rows statistics equal to its row count.
func checkJobAgrees(t *testing.T, s *Store, rec *api.JobRecord, acked [2]int64, when string) {
	t.Helper()
	st, err := s.LoadJob(rec.Id)
	if err != nil {
		t.Fatalf("%s: LoadJob: %v", when, err)
	}
	for p := range int32(2) {
		if st.Progress[p] < acked[p] {
			t.Errorf("%s: job %d partition %d recovered at %d, but %d was acknowledged", when, rec.Id, p, st.Progress[p], acked[p])
		}
	}
	count := map[int32]int64{}
	err = s.ScanRows(rec.Spec.Table.Name, 0, func(k, v []byte) error {
		p := int32(binary.BigEndian.Uint32(k[8:]))
		o := int64(binary.BigEndian.Uint64(k[12:]))
		if o != count[p] {
			return fmt.Errorf("partition %d: row at offset %d, expected %d", p, o, count[p])
		}
		if string(v) != string(rowValue(p, o)) {
			return fmt.Errorf("partition %d offset %d: value %q", p, o, v)
		}
		count[p]++
		return nil
	})
	if err != nil {
		t.Fatalf("%s: job %d: %v", when, rec.Id, err)
	}
	total := int64(0)
	for p := range int32(2) {
		if count[p] != st.Progress[p] {
			t.Errorf("%s: job %d partition %d: %d rows but progress %d", when, rec.Id, p, count[p], st.Progress[p])
		}
		total += count[p]
	}
	if st.Stats.LoadedRows != total {
		t.Errorf("%s: job %d: loaded_rows %d but %d rows", when, rec.Id, st.Stats.LoadedRows, total)
	}
}

// BenchmarkCommitBatch commits ~64 KB batches (256 rows of 256 bytes).
func BenchmarkCommitBatch(b *testing.B) {
	for _, fsName := range []string{"mem", "disk"} {
		b.Run(fsName, func(b *testing.B) {
			var fs vfs.FS = vfs.NewMem()
			dir := testDir
			if fsName == "disk" {
				fs = vfs.Default
				dir = b.TempDir()
			}
			s, err := Open(Options{Dir: dir, FS: fs})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			rec := testRecord(1, "bench")
			if err := s.CreateJob(rec, createdTransition(), rec.Spec.Table); err != nil {
				b.Fatal(err)
			}
			if err := s.InitProgress(rec.Id, map[int32]int64{0: 0}); err != nil {
				b.Fatal(err)
			}
			const rows, rowSize = 256, 256
			value := make([]byte, rowSize)
			b.SetBytes(rows * rowSize)
			pos := int64(0)
			for i := 0; b.Loop(); i++ {
				c := &Commit{JobID: rec.Id, Table: rec.Spec.Table.Name, Ranges: []Range{{Partition: 0, From: pos, To: pos + rows}},
					Stats: &api.JobStats{LoadedRows: pos + rows, CommittedBatches: int64(i + 1)}}
				c.Rows = make([]KV, rows)
				for o := range int64(rows) {
					c.Rows[o] = KV{Key: rowKey(rec.Id, 0, pos+o), Value: value}
				}
				if err := s.CommitBatch(c); err != nil {
					b.Fatal(err)
				}
				pos += rows
			}
		})
	}
}

// Checkpoints move with progress: written in the commit's batch, absent for
// ranges without one, refused with the commit when it is stale.
func TestCommitCheckpoints(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	id := mustCreate(t, s, 1, "ck").Id
	if err := s.InitStarts(id, map[int32]int64{0: 0, 1: 0}, map[int32][]byte{0: []byte("start-0")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.InitStarts(id, nil, map[int32][]byte{2: []byte("x")}, nil); err == nil {
		t.Fatal("checkpoint without a position accepted")
	}
	st, err := s.LoadJob(id)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(st.Checkpoints[0]); got != "start-0" || len(st.Checkpoints) != 1 {
		t.Fatalf("checkpoints after init = %q", st.Checkpoints)
	}
	if err := s.CommitBatch(&Commit{JobID: id, Ranges: []Range{{Partition: 0, From: 0, To: 3, Checkpoint: []byte("seq-3")}, {Partition: 1, From: 0, To: 1}}}); err != nil {
		t.Fatal(err)
	}
	// Stale: refused, checkpoint unchanged.
	if err := s.CommitBatch(&Commit{JobID: id, Ranges: []Range{{Partition: 0, From: 0, To: 5, Checkpoint: []byte("bad")}}}); !errors.Is(err, ErrStaleCommit) {
		t.Fatalf("stale commit: %v", err)
	}
	st, err = s.LoadJob(id)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(st.Checkpoints[0]); got != "seq-3" || st.Progress[0] != 3 || st.Progress[1] != 1 || len(st.Checkpoints) != 1 {
		t.Fatalf("after commit: progress %v checkpoints %q", st.Progress, st.Checkpoints)
	}
}

// InitStarts with a transition writes the positions and the journal entry
// in one batch, or neither when the transition's seq is stale.
func TestInitStartsWithTransition(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	id := mustCreate(t, s, 1, "first").Id
	run := func(seq uint64) *api.Transition {
		return &api.Transition{Seq: seq, From: api.JobState_NEED_SCHEDULE, To: api.JobState_RUNNING, Reason: api.Reason_SCHEDULED}
	}
	if err := s.InitStarts(id, map[int32]int64{0: 4}, nil, run(1)); err == nil {
		t.Fatal("a stale transition seq was accepted")
	}
	st, err := s.LoadJob(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Progress) != 0 || st.Last.GetSeq() != 1 {
		t.Fatalf("refused init wrote progress %v, journal head %d", st.Progress, st.Last.GetSeq())
	}
	if err := s.InitStarts(id, map[int32]int64{0: 4}, nil, run(2)); err != nil {
		t.Fatal(err)
	}
	if st, err = s.LoadJob(id); err != nil {
		t.Fatal(err)
	}
	if st.Progress[0] != 4 || st.Last.GetSeq() != 2 || st.Last.GetTo() != api.JobState_RUNNING {
		t.Fatalf("progress %v, last %v", st.Progress, st.Last)
	}
	// The head moved with it: the next append must be seq 3.
	if err := s.AppendTransition(id, run(2)); err == nil {
		t.Fatal("seq 2 accepted twice")
	}
}

// TestCommitStatsFence: a commit whose statistics base is not the stored
// statistics' CommittedBatches writes nothing.
func TestCommitStatsFence(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	rec := mustCreate(t, s, 1, "a")
	if err := s.InitProgress(rec.Id, map[int32]int64{0: 0, 1: 0}); err != nil {
		t.Fatal(err)
	}
	c := commitOf(rec, &api.JobStats{LoadedRows: 2, CommittedBatches: 1}, nil, Range{Partition: 0, From: 0, To: 2})
	if err := s.CommitBatch(c); err != nil {
		t.Fatal(err)
	}
	// Partition 1's progress matches, the statistics base does not.
	stale := commitOf(rec, &api.JobStats{LoadedRows: 3, CommittedBatches: 1}, nil, Range{Partition: 1, From: 0, To: 3})
	if err := s.CommitBatch(stale); !errors.Is(err, ErrStaleCommit) {
		t.Fatalf("commit on an old statistics base: %v, want ErrStaleCommit", err)
	}
	st, err := s.LoadJob(rec.Id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Progress[1] != 0 || st.Stats.LoadedRows != 2 {
		t.Fatalf("refused commit wrote: progress %v, loaded rows %d", st.Progress, st.Stats.LoadedRows)
	}
	stale.StatsBase = 1
	stale.Stats = &api.JobStats{LoadedRows: 5, CommittedBatches: 2}
	if err := s.CommitBatch(stale); err != nil {
		t.Fatal(err)
	}
}

// writeDuplicateRows writes the rows of the table and of More as row
// blocks holding exactly those rows, and commitBatchSize covers them, so
// that the batch never grows while CommitBatch fills it.
func TestRowBlocksBatchSize(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	for _, n := range []int{0, 1, 7, 1000, 20000} {
		c := &Commit{JobID: 1, Table: "t1", Ranges: []Range{{Partition: 0, From: 0, To: int64(n)}},
			More: []sink.TableRows{{Table: "a_longer_table_name", Rows: rangeRows(2, Range{Partition: 3, From: 0, To: int64(n)})}}}
		c.Rows = rangeRows(1, c.Ranges[0])
		size := commitBatchSize(c)
		b := s.db.NewBatchWithSize(size)
		if err := s.writeDuplicateRows(b, c, true); err != nil {
			t.Fatal(err)
		}
		if got := len(b.Repr()); got > size {
			t.Errorf("%d rows: batch of %d bytes, commitBatchSize %d", n, got, size)
		}
		want := map[string][]KV{c.Table: c.Rows, c.More[0].Table: c.More[0].Rows}
		got := map[string][]KV{}
		r := b.Reader()
		for {
			kind, k, v, ok, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			var name string
			for tn := range want {
				if bytes.HasPrefix(k, tableBlockPrefix(tn)) {
					name = tn
				}
			}
			if kind != pebble.InternalKeyKindSet || name == "" {
				t.Fatalf("%d rows: record %v %q", n, kind, k)
			}
			rows, err := decodeRowBlock(k[len(tableBlockPrefix(name)):], v)
			if err != nil {
				t.Fatalf("%d rows: block %q: %v", n, k, err)
			}
			if len(v) > rowBlockTarget {
				t.Errorf("%d rows: block of %d bytes", n, len(v))
			}
			got[name] = append(got[name], rows...)
		}
		for tn, w := range want {
			if !slices.EqualFunc(got[tn], w, func(a, b KV) bool { return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) }) {
				t.Errorf("%d rows: table %s: blocks hold %d rows, want %d", n, tn, len(got[tn]), len(w))
			}
		}
		_ = b.Close()
	}
}

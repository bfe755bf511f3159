package kafka

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/sources"
)

// TestReadExactlyOnce reads records produced over several partitions in many
// small Reads, reopening the reader from the returned positions now and then
// as a task would, and checks every record comes back exactly once with
// gap-free, overlap-free positions, including Reads cut by MaxRows and
// MaxBytes in the middle of a fetch.
func TestReadExactlyOnce(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))

	const parts, perPart = 4, 400
	e := newEnv(t, parts)
	want := make(map[string]bool)
	for p := range int32(parts) {
		// a few produce batches per partition, so reads span fetches
		for chunk := 0; chunk < perPart; chunk += 100 {
			vals := make([]string, 100)
			for i := range vals {
				vals[i] = fmt.Sprintf("p%d-%04d-%s", p, chunk+i, strings.Repeat("x", rng.IntN(40)))
				want[vals[i]] = true
			}
			e.produce(t, p, vals...)
		}
	}
	end, err := e.cluster.Watermarks(testCtx(t), e.topic)
	if err != nil {
		t.Fatal(err)
	}
	pos := map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0}
	for p := range int32(parts) {
		if end[p] != perPart {
			t.Fatalf("partition %d: high watermark %d, want %d", p, end[p], perPart)
		}
	}

	got := make(map[string]int)
	var rowCuts, byteCuts int
	for round := 0; ; round++ {
		done := true
		for p := range pos {
			done = done && pos[p] == end[p]
		}
		if done {
			break
		}
		if round > 1000 {
			t.Fatalf("no end after %d reader rounds: %v", round, pos)
		}
		r, err := e.cluster.NewReader(e.topic, pos)
		if err != nil {
			t.Fatal(err)
		}
		r.(*reader).minSpare = 1 // these batches are small: recycle them all the same
		// each reader reads a few batches, then is closed: a task
		// giving back its slot and a new task resuming
		for range 1 + rng.IntN(6) {
			lim := sources.Limits{MaxRows: 1 + rng.IntN(60), MaxWait: 200 * time.Millisecond}
			if rng.IntN(2) == 0 {
				lim.MaxBytes = int64(1 + rng.IntN(600))
			}
			ctx := testCtx(t)
			b, err := r.Read(ctx, lim)
			if err != nil {
				t.Fatal(err)
			}
			checkBatch(t, b, pos, lim, true)
			if len(b.Records) == lim.MaxRows {
				rowCuts++
			} else if lim.MaxBytes > 0 && len(b.Records) > 0 && b.Bytes+40 > lim.MaxBytes {
				byteCuts++
			}
			for _, rec := range b.Records {
				if string(rec.Key) != string(rec.Value) || !strings.HasPrefix(string(rec.Value), fmt.Sprintf("p%d-", rec.Partition)) {
					t.Fatalf("record %d/%d: key %q value %q", rec.Partition, rec.Offset, rec.Key, rec.Value)
				}
				got[string(rec.Value)]++
			}
			for p, n := range b.Next {
				pos[p] = n
			}
			if rng.IntN(2) == 0 {
				// as a task does once it parsed the batch: the next
				// Read fills these slots again
				r.(sources.Recycler).Recycle(b)
			}
		}
		r.Close()
	}
	for v := range want {
		if got[v] != 1 {
			t.Fatalf("record %q read %d times", v, got[v])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("read %d distinct records, produced %d", len(got), len(want))
	}
	if rowCuts == 0 || byteCuts == 0 {
		t.Fatalf("limits never cut a read: %d row cuts, %d byte cuts", rowCuts, byteCuts)
	}
	t.Logf("%d reads cut by rows, %d by bytes", rowCuts, byteCuts)
}

// TestRecycleReusesSlots checks that a Read after Recycle fills the
// recycled batch's record slots again, with nothing left of the records
// they held (headers included); that a reader keeps no slots of a batch
// smaller than minSpareRecords or bigger than maxSpareRecords; and that an
// empty Read drops the slots it kept (an idle job holds none).
func TestRecycleReusesSlots(t *testing.T) {
	const n = minSpareRecords + 10
	e := newEnv(t, 1)
	recs := make([]*kgo.Record, n)
	for i := range recs {
		v := fmt.Sprintf("h%d", i)
		recs[i] = &kgo.Record{Key: []byte(v), Value: []byte(v), Headers: []kgo.RecordHeader{{Key: "k", Value: []byte(v)}}}
	}
	if err := e.prod.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	plain := make([]string, n)
	for i := range plain {
		plain[i] = fmt.Sprintf("n%d", i)
	}
	e.produce(t, 0, plain...)
	r, err := e.cluster.NewReader(e.topic, map[int32]int64{0: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rr := r.(*reader)
	lim := sources.Limits{MaxRows: n, MaxWait: 20 * time.Second} // a Read ends at MaxRows: the wait only bounds a very slow fetch
	readAll := func(what string, from int64) *sources.Batch {
		t.Helper()
		b := &sources.Batch{}
		for len(b.Records) == 0 {
			if b, err = r.Read(testCtx(t), lim); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		if len(b.Records) != n || b.Records[0].Offset != from {
			t.Fatalf("%s: %d records from offset %d, want %d from %d", what, len(b.Records), b.Records[0].Offset, n, from)
		}
		return b
	}
	first := readAll("first read", 0)
	for i, rec := range first.Records {
		if len(rec.Headers) != 1 || string(rec.Value) != fmt.Sprintf("h%d", i) {
			t.Fatalf("first read, record %d: value %q headers %v", i, rec.Value, rec.Headers)
		}
	}
	slots := &first.Records[0]
	r.(sources.Recycler).Recycle(first)
	if first.Records != nil {
		t.Fatal("Recycle left the batch its records")
	}
	second := readAll("second read", n)
	if &second.Records[0] != slots {
		t.Fatal("the second read did not reuse the recycled slots")
	}
	for i, rec := range second.Records {
		if rec.Headers != nil || string(rec.Value) != fmt.Sprintf("n%d", i) || rec.Offset != int64(n+i) {
			t.Fatalf("second read, record %d: offset %d value %q headers %v (left over from the recycled batch?)", i, rec.Offset, rec.Value, rec.Headers)
		}
	}

	// Caught up: a Read returns nothing and drops the slots it kept.
	r.(sources.Recycler).Recycle(second)
	if cap(rr.spare) < n {
		t.Fatalf("kept %d slots of a batch of %d", cap(rr.spare), n)
	}
	idle, err := r.Read(testCtx(t), sources.Limits{MaxRows: n, MaxWait: 10 * time.Millisecond})
	if err != nil || len(idle.Records) != 0 {
		t.Fatalf("read past the end: %d records, %v", len(idle.Records), err)
	}
	if rr.spare != nil {
		t.Fatalf("an empty read left %d slots kept", cap(rr.spare))
	}
	r.(sources.Recycler).Recycle(idle) // as a task gives every batch back
	if rr.spare != nil {
		t.Fatalf("the empty batch given back: %d slots kept", cap(rr.spare))
	}

	// Too small or too big a batch: its slots are not kept.
	for _, c := range []int{minSpareRecords - 1, maxSpareRecords + 1} {
		b := &sources.Batch{Records: make([]sources.Record, 1, c)}
		rr.Recycle(b)
		if rr.spare != nil || b.Records == nil {
			t.Fatalf("kept %d slots of a batch of %d slots", cap(rr.spare), c)
		}
	}
}

// TestReadCutMidFetch checks that records beyond a MaxRows / MaxBytes cut
// inside one fetch are kept for the next Read with one long-lived reader.
func TestReadCutMidFetch(t *testing.T) {
	e := newEnv(t, 1)
	vals := make([]string, 50)
	for i := range vals {
		vals[i] = fmt.Sprintf("v%02d", i) // 3+3 bytes each
	}
	e.produce(t, 0, vals...) // one batch, one fetch
	r, err := e.cluster.NewReader(e.topic, map[int32]int64{0: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pos := map[int32]int64{0: 0}
	var got []string
	for _, lim := range []sources.Limits{
		{MaxRows: 7, MaxWait: 5 * time.Second},
		{MaxBytes: 30, MaxWait: 5 * time.Second},            // 5 records
		{MaxRows: 3, MaxBytes: 1, MaxWait: 5 * time.Second}, // one record: always at least one
		{MaxWait: 0}, // the rest is buffered: no wait
	} {
		b, err := r.Read(testCtx(t), lim)
		if err != nil {
			t.Fatal(err)
		}
		checkBatch(t, b, pos, lim, true)
		pos[0] = b.Next[0]
		for _, rec := range b.Records {
			got = append(got, string(rec.Value))
		}
	}
	if len(got) != 7+5+1+37 || pos[0] != 50 {
		t.Fatalf("read %d records to position %d, want 50 and 50", len(got), pos[0])
	}
	for i, v := range got {
		if v != vals[i] {
			t.Fatalf("record %d is %q, want %q", i, v, vals[i])
		}
	}
	// nothing more: an empty batch keeps the position
	b, err := r.Read(testCtx(t), sources.Limits{MaxRows: 10, MaxWait: 50 * time.Millisecond})
	if err != nil || len(b.Records) != 0 || b.Next[0] != 50 {
		t.Fatalf("idle read: %d records, Next %v, err %v", len(b.Records), b.Next, err)
	}
}

// TestReadTransactions: committed and aborted transactions; positions reach
// the high watermark (lag 0) and no aborted record is returned.
func TestReadTransactions(t *testing.T) {
	e := newEnv(t, 2)
	tx := newTxProducer(t, e)
	var committed int
	for i, n := range []int{10, 5, 10, 3, 1, 2} {
		commit := i%2 == 0
		ctx := testCtx(t)
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := range n {
			v := fmt.Sprintf("abort-%d-%d", i, j)
			if commit {
				v = fmt.Sprintf("commit-%d-%d", i, j)
			}
			if err := tx.ProduceSync(ctx, &kgo.Record{Partition: int32(j % 2), Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if commit {
			committed += n
		}
		if err := tx.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	// the last transaction is aborted: the log ends with an abort marker
	end, err := e.cluster.Watermarks(testCtx(t), e.topic)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.cluster.NewReader(e.topic, map[int32]int64{0: 0, 1: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pos := map[int32]int64{0: 0, 1: 0}
	recs := readUntil(t, r, sources.Limits{MaxRows: 4, MaxWait: 200 * time.Millisecond}, pos, end, false, nil)
	for _, rec := range recs {
		if !strings.HasPrefix(string(rec.Value), "commit-") {
			t.Fatalf("aborted record returned: %q at %d/%d", rec.Value, rec.Partition, rec.Offset)
		}
	}
	if len(recs) != committed {
		t.Fatalf("read %d records, %d committed", len(recs), committed)
	}
	for p := range pos {
		if pos[p] != end[p] {
			t.Fatalf("partition %d: position %d, high watermark %d", p, pos[p], end[p])
		}
	}
	t.Logf("positions %v = high watermarks; %d committed records", pos, committed)

	// ResolveOffsets OFFSET_END is the same end once no transaction is open
	got, err := e.cluster.ResolveOffsets(testCtx(t), e.topic, map[int32]string{0: OffsetEnd, 1: OffsetEnd})
	if err != nil || got[0] != end[0] || got[1] != end[1] {
		t.Fatalf("OFFSET_END resolved to %v (%v), want %v", got, err, end)
	}
}

// TestOutOfRangeAtOpen: the job's stored position was deleted by retention
// before the reader opened.
func TestOutOfRangeAtOpen(t *testing.T) {
	e := newEnv(t, 2)
	e.produce(t, 0, make([]string, 100)...)
	e.produce(t, 1, make([]string, 10)...)
	deleteRecords(t, e, 0, 50)

	r, err := e.cluster.NewReader(e.topic, map[int32]int64{0: 10, 1: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var oor *sources.OutOfRangeError
	ctx := testCtx(t)
	for {
		b, err := r.Read(ctx, sources.Limits{MaxRows: 1000, MaxWait: time.Second})
		for _, rec := range b.Records {
			if rec.Partition == 0 {
				t.Fatalf("record of partition 0 returned at %d", rec.Offset)
			}
		}
		if b.Next[0] != 10 {
			t.Fatalf("partition 0 moved to %d", b.Next[0])
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
	if *oor != (sources.OutOfRangeError{Partition: 0, Offset: 10, LogStart: 50, LogEnd: 100}) {
		t.Fatalf("got %+v", *oor)
	}
	// sticky
	if _, err := r.Read(ctx, sources.Limits{MaxWait: 10 * time.Millisecond}); !errors.As(err, &oor) {
		t.Fatalf("second read: %v", err)
	}
}

// TestOutOfRangeMidStream: retention deletes records the reader has not
// fetched yet while it reads; the reader returns what it fetched, then the
// error, never a record past the hole.
func TestOutOfRangeMidStream(t *testing.T) {
	e := newEnv(t, 1)
	vals := make([]string, 100)
	for i := range vals {
		vals[i] = fmt.Sprint(i)
	}
	e.produce(t, 0, vals...)
	// A queue bound of one byte: the reader's partition is paused while
	// anything is queued for it, so nothing is fetched past 100 until the
	// reader took the first 100.
	e.cluster.fetch.bound = 1
	r, err := e.cluster.NewReader(e.topic, map[int32]int64{0: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pos := map[int32]int64{0: 0}
	// take 10: the other 90 stay queued and the partition paused
	readUntil(t, r, sources.Limits{MaxRows: 10, MaxWait: time.Second}, pos, map[int32]int64{0: 10}, true, nil)
	e.produce(t, 0, vals...) // 100..199
	deleteRecords(t, e, 0, 150)

	ctx := testCtx(t)
	var oor *sources.OutOfRangeError
	for {
		lim := sources.Limits{MaxRows: 30, MaxWait: time.Second}
		b, err := r.Read(ctx, lim)
		checkBatch(t, b, pos, lim, true)
		pos[0] = b.Next[0]
		if err != nil {
			if !errors.As(err, &oor) {
				t.Fatalf("err %v, want *sources.OutOfRangeError", err)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no out-of-range error; position %d", pos[0])
		}
	}
	t.Logf("position %d, error %v", pos[0], oor)
	if oor.Offset != pos[0] || oor.Offset >= 150 || oor.LogStart != 150 || oor.LogEnd != 200 {
		t.Fatalf("position %d, error %+v", pos[0], *oor)
	}
}

func deleteRecords(t *testing.T, e *testEnv, p int32, to int64) {
	t.Helper()
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: e.topic, Partition: p, At: to})
	resp, err := e.adm.DeleteRecords(testCtx(t), os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("delete records of %d up to %d: %v", p, to, err)
	}
}

// TestUnreachable: the cluster goes away under a reader.
func TestUnreachable(t *testing.T) {
	e := newEnv(t, 1)
	e.produce(t, 0, "a", "b")
	r, err := e.cluster.NewReader(e.topic, map[int32]int64{0: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pos := map[int32]int64{0: 0}
	readUntil(t, r, sources.Limits{MaxWait: time.Second}, pos, map[int32]int64{0: 2}, true, nil)
	e.fake.Close()

	ctx := testCtx(t)
	for {
		b, err := r.Read(ctx, sources.Limits{MaxRows: 10, MaxWait: 2 * time.Second})
		if len(b.Records) != 0 || b.Next[0] != 2 {
			t.Fatalf("read %d records, Next %v", len(b.Records), b.Next)
		}
		var ue *sources.UnreachableError
		if errors.As(err, &ue) {
			t.Logf("%v", err)
			return
		}
		if err != nil {
			t.Fatalf("err %v, want *sources.UnreachableError", err)
		}
		if ctx.Err() != nil {
			t.Fatal("no UnreachableError")
		}
	}
}

// TestReadEndsEarlyWhenCaughtUp: a Read of a backlog ends as soon as the
// reader has taken every partition to its high watermark, not after MaxWait,
// including when a partition is empty and led by a broker that leads no
// partition with records (franz-go returns no fetch from it, so its
// watermark is listed).
func TestReadEndsEarlyWhenCaughtUp(t *testing.T) {
	for _, tc := range []struct {
		name  string
		empty bool
	}{{"all partitions hold records", false}, {"one partition empty on its own broker", true}} {
		t.Run(tc.name, func(t *testing.T) {
			const parts, perPart = 4, 500
			e := newEnvWith(t, parts, nil, kfake.NumBrokers(2))
			if tc.empty {
				// Partitions 0-2 on broker 0, the empty partition 3 alone
				// on broker 1.
				for p := range int32(parts) {
					if err := e.fake.MoveTopicPartition(e.topic, p, min(p/(parts-1), 1)); err != nil {
						t.Fatal(err)
					}
				}
				if l := partitionLeaders(t, e); l[0] != 0 || l[1] != 0 || l[2] != 0 || l[3] != 1 {
					t.Fatalf("partition leaders %v", l)
				}
			}
			var total int
			for p := range int32(parts) {
				if tc.empty && p == parts-1 {
					continue
				}
				vals := make([]string, perPart)
				for i := range vals {
					vals[i] = fmt.Sprintf("p%d-%04d", p, i)
				}
				e.produce(t, p, vals...)
				total += perPart
			}
			r, err := e.cluster.NewReader(e.topic, map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			const wait = 5 * time.Second
			lim := sources.Limits{MaxRows: earlyFill * total, MaxWait: wait} // the early fill is the whole backlog
			t0 := time.Now()
			b, err := r.Read(testCtx(t), lim)
			el := time.Since(t0)
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Records) != total {
				t.Fatalf("read %d records, want the whole backlog of %d", len(b.Records), total)
			}
			if el > wait/2 {
				t.Fatalf("a caught-up Read took %v; it should end early, well before MaxWait %v", el, wait)
			}
			t.Logf("caught up after %v (MaxWait %v)", el, wait)
		})
	}
}

// partitionLeaders is the leader broker of each partition of e's topic.
func partitionLeaders(t *testing.T, e *testEnv) map[int32]int32 {
	t.Helper()
	md, err := e.adm.Metadata(testCtx(t), e.topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int32{}
	for p, pd := range md.Topics[e.topic].Partitions {
		out[p] = pd.Leader
	}
	return out
}

// TestReadTrickleStillWaits: when records trickle in, a caught-up Read with
// a small fill (under 1/earlyFill of MaxRows) does not end early before half of
// MaxWait, so that a slow producer does not cost a synced commit per poll.
func TestReadTrickleStillWaits(t *testing.T) {
	e := newEnv(t, 1)
	e.produce(t, 0, "first")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			rec := &kgo.Record{Partition: 0, Value: fmt.Appendf(nil, "trickle-%d", i)}
			if err := e.prod.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
				return
			}
		}
	}()
	defer func() { close(stop); <-done }()

	r, err := e.cluster.NewReader(e.topic, map[int32]int64{0: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const wait = 2 * time.Second
	lim := sources.Limits{MaxRows: 10000, MaxWait: wait}
	t0 := time.Now()
	b, err := r.Read(testCtx(t), lim)
	el := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Records) == 0 || len(b.Records) >= lim.MaxRows/earlyFill {
		t.Fatalf("read %d records; want a small fill (1 to %d)", len(b.Records), lim.MaxRows/earlyFill-1)
	}
	if el < wait/2 {
		t.Fatalf("a trickle Read of %d records ended after %v, before half of MaxWait %v", len(b.Records), el, wait)
	}
	if el > wait+time.Second {
		t.Fatalf("a trickle Read took %v, MaxWait %v", el, wait)
	}
	t.Logf("%d trickled records after %v (MaxWait %v)", len(b.Records), el, wait)
}

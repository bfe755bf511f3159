package kinesis

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	awskinesis "github.com/aws/aws-sdk-go-v2/service/kinesis"

	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/sources/kinesis/kinesistest"
)

// putN puts records from..to-1 with keys spread over the shards and returns
// their values.
func putN(t testing.TB, c *awskinesis.Client, stream string, from, to int) []string {
	var recs []kinesistest.Record
	var vals []string
	for i := from; i < to; i++ {
		recs = append(recs, kinesistest.Record{Key: fmt.Sprintf("key-%d", i%29), Data: value(i)})
		vals = append(vals, string(value(i)))
	}
	kinesistest.PutRecords(t, c, stream, recs...)
	return vals
}

func TestReaderExactlyOnceAcrossReopen(t *testing.T) {
	ep := kinesistest.Start(t)
	c := kinesistest.NewClient(ep)
	kinesistest.CreateStream(t, c, "s", 4)
	want := putN(t, c, "s", 0, 300)

	src := newTestSource(t, testSpec(ep, "s"), nil)
	j := newJob(t, src)
	if parts := j.topology(true); len(parts) != 4 {
		t.Fatalf("partitions %v, want 4", parts)
	}
	lim := sources.Limits{MaxRows: 37, MaxWait: 300 * time.Millisecond}
	reads := 0
	for len(j.got) < 300 {
		if reads > 200 {
			t.Fatalf("only %d of 300 records after %d reads", len(j.got), reads)
		}
		if _, err := j.read(lim); err != nil {
			t.Fatalf("Read: %v", err)
		}
		reads++
		if reads%3 == 0 {
			j.closeReader() // a new task from the committed positions
		}
		if reads == 4 {
			want = append(want, putN(t, c, "s", 300, 400)...)
		}
	}
	j.readUntil(lim, 20*time.Second, func() bool { return len(j.got) >= 400 })
	// Nothing more: a read returns no records and the same positions.
	b, err := j.read(sources.Limits{MaxRows: 1000, MaxWait: 100 * time.Millisecond})
	if err != nil || len(b.Records) != 0 {
		t.Fatalf("extra read: %d records, err %v", len(b.Records), err)
	}
	checkExactlyOnce(t, j.values(), want)
	total := int64(0)
	for p, n := range j.next {
		total += n
		if j.ended(p) {
			t.Errorf("partition %d of an open shard is ended", p)
		}
		if cp := j.checkpoint(p); n > 0 && cp.Last == "" {
			t.Errorf("partition %d: %d records but no last seq", p, n)
		}
	}
	if total != 400 {
		t.Fatalf("ordinals sum to %d, want 400", total)
	}
	t.Logf("%d reads", reads)
}

func TestReaderLimits(t *testing.T) {
	ep := kinesistest.Start(t)
	c := kinesistest.NewClient(ep)
	kinesistest.CreateStream(t, c, "s", 2)
	putN(t, c, "s", 0, 50)
	src := newTestSource(t, testSpec(ep, "s"), nil)
	j := newJob(t, src)
	j.topology(true)

	// MaxBytes: every value is 6 bytes and key-N 5 or 6.
	start := time.Now()
	b, err := j.read(sources.Limits{MaxBytes: 30, MaxWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if b.Bytes > 30 || len(b.Records) == 0 {
		t.Fatalf("MaxBytes 30: %d records, %d bytes", len(b.Records), b.Bytes)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatalf("read with MaxBytes reached took %s (must not wait for MaxWait)", time.Since(start))
	}
	// A record larger than MaxBytes still makes progress.
	b, err = j.read(sources.Limits{MaxBytes: 1, MaxWait: time.Second})
	if err != nil || len(b.Records) != 1 {
		t.Fatalf("MaxBytes 1: %d records, err %v", len(b.Records), err)
	}
	// MaxWait 0: what is buffered (or one round of fetches), no waiting.
	start = time.Now()
	if _, err = j.read(sources.Limits{MaxRows: 1000}); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("MaxWait 0 read took %s", time.Since(start))
	}
	j.readUntil(sources.Limits{MaxRows: 7, MaxWait: 200 * time.Millisecond}, 10*time.Second,
		func() bool { return len(j.got) == 50 })
}

// TestSplitMergeLineage splits shard 0 and merges shards 1 and 2 while
// reading; children are gated behind their parents, and every record is
// read once, in order per partition key.
func TestSplitMergeLineage(t *testing.T) {
	ep := kinesistest.Start(t)
	c := kinesistest.NewClient(ep)
	kinesistest.CreateStream(t, c, "s", 3)
	s0, s1, s2 := ShardID(0), ShardID(1), ShardID(2)
	// Four keys: low and high half of shard 0 (they part at the split),
	// and one in each of shards 1 and 2 (they meet at the merge).
	lo0, _ := kinesistest.HashRange(t, c, "s", s0)
	mid0 := kinesistest.MidHashKey(t, c, "s", s0)
	lo1, _ := kinesistest.HashRange(t, c, "s", s1)
	lo2, _ := kinesistest.HashRange(t, c, "s", s2)
	hi0 := new(big.Int).Add(mustBig(mid0), big.NewInt(7))
	keys := map[string]string{
		"a": new(big.Int).Add(lo0, big.NewInt(1)).String(),
		"b": hi0.String(),
		"c": new(big.Int).Add(lo1, big.NewInt(1)).String(),
		"d": new(big.Int).Add(lo2, big.NewInt(1)).String(),
	}
	counter := map[string]int{}
	var want []string
	put := func(n int) {
		var recs []kinesistest.Record
		for i := 0; i < n; i++ {
			for _, k := range []string{"a", "b", "c", "d"} {
				v := fmt.Sprintf("%s:%04d", k, counter[k])
				counter[k]++
				recs = append(recs, kinesistest.Record{Key: k, HashKey: keys[k], Data: []byte(v)})
				want = append(want, v)
			}
		}
		kinesistest.PutRecords(t, c, "s", recs...)
	}
	put(20)

	src := newTestSource(t, testSpec(ep, "s"), nil)
	j := newJob(t, src)
	if parts := j.topology(true); len(parts) != 3 {
		t.Fatalf("partitions %v", parts)
	}
	lim := sources.Limits{MaxRows: 15, MaxWait: 200 * time.Millisecond}
	for i := 0; i < 3; i++ {
		if _, err := j.read(lim); err != nil {
			t.Fatal(err)
		}
	}
	if len(j.got) >= 80 {
		t.Fatalf("read everything before the split (%d); the test wants reading in progress", len(j.got))
	}

	lower, upper := kinesistest.Split(t, c, "s", s0, mid0)
	merged := kinesistest.Merge(t, c, "s", s1, s2)
	put(20)

	newParts := j.topology(false)
	if len(newParts) != 3 {
		t.Fatalf("new partitions after split and merge: %v", newParts)
	}
	pl, _ := ShardIndex(lower)
	pu, _ := ShardIndex(upper)
	pm, _ := ShardIndex(merged)
	for _, tc := range []struct {
		p       int32
		parents []int32
	}{{pl, []int32{0}}, {pu, []int32{0}}, {pm, []int32{1, 2}}} {
		cp := j.checkpoint(tc.p)
		if fmt.Sprint(cp.ParentParts) != fmt.Sprint(tc.parents) || cp.Start != TrimHorizon || cp.Ended || cp.Last != "" {
			t.Fatalf("partition %d: checkpoint %+v, want parents %v from TRIM_HORIZON", tc.p, cp, tc.parents)
		}
		if st := src.Describe(tc.p, j.cps[tc.p]); st.State != "open" || fmt.Sprint(st.Parents) != fmt.Sprint(tc.parents) {
			t.Fatalf("Describe(%d) = %+v", tc.p, st)
		}
	}
	for _, p := range []int32{0, 1, 2} {
		if st := src.Describe(p, j.cps[p]); st.State != "closed" {
			t.Fatalf("Describe(%d) = %+v, want closed", p, st)
		}
	}
	// Children are gated until their parents end.
	if r := src.Readable([]int32{0, 1, 2, pl, pu, pm}, j.cps); fmt.Sprint(r) != "[0 1 2]" {
		t.Fatalf("Readable before the parents end: %v", r)
	}
	// Read the parents to their end (the reader reads only them).
	j.closeReader()
	j.readUntil(lim, 20*time.Second, func() bool {
		return j.ended(0) && j.ended(1) && j.ended(2)
	})
	for _, p := range []int32{0, 1, 2} {
		if st := src.Describe(p, j.cps[p]); st.State != "finished" {
			t.Fatalf("Describe(%d) = %+v, want finished", p, st)
		}
	}
	if r := src.Readable([]int32{0, 1, 2, pl, pu, pm}, j.cps); fmt.Sprint(r) != fmt.Sprint([]int32{pl, pu, pm}) {
		t.Fatalf("Readable after the parents end: %v", r)
	}
	put(10)
	j.readUntil(lim, 20*time.Second, func() bool { return len(j.got) >= len(want) })
	b, err := j.read(sources.Limits{MaxRows: 100, MaxWait: 100 * time.Millisecond})
	if err != nil || len(b.Records) > 0 {
		t.Fatalf("extra read: %d records, err %v", len(b.Records), err)
	}
	checkExactlyOnce(t, j.values(), want)
	// Per key order, across parents and children.
	nextOf := map[string]int{}
	for _, v := range j.values() {
		k, n, _ := strings.Cut(v, ":")
		if fmt.Sprintf("%04d", nextOf[k]) != n {
			t.Fatalf("key %s: read %s, want %04d next", k, v, nextOf[k])
		}
		nextOf[k]++
	}
	// The keys went where the split and merge sent them.
	byPart := map[string]map[int32]bool{}
	for _, r := range j.got {
		k, _, _ := strings.Cut(string(r.Value), ":")
		if byPart[k] == nil {
			byPart[k] = map[int32]bool{}
		}
		byPart[k][r.Partition] = true
	}
	for k, want := range map[string][]int32{"a": {0, pl}, "b": {0, pu}, "c": {1, pm}, "d": {2, pm}} {
		if len(byPart[k]) != len(want) || !byPart[k][want[0]] || !byPart[k][want[1]] {
			t.Errorf("key %s read from partitions %v, want %v", k, byPart[k], want)
		}
	}
}

func mustBig(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return n
}

// TestLatestAndChosenShards: with LATEST a shard closed at creation is
// finished at once, and an open child of it reads only what comes after;
// spec.shards selects a shard and its descendants.
func TestLatestAndChosenShards(t *testing.T) {
	ep := kinesistest.Start(t)
	c := kinesistest.NewClient(ep)
	kinesistest.CreateStream(t, c, "s", 2)
	putN(t, c, "s", 0, 20)
	lower, upper := kinesistest.Split(t, c, "s", ShardID(0), "")

	spec := testSpec(ep, "s")
	spec.Shards = []string{ShardID(0)}
	spec.DefaultPosition = Latest
	src := newTestSource(t, spec, nil)
	j := newJob(t, src)
	parts := j.topology(true)
	pl, _ := ShardIndex(lower)
	pu, _ := ShardIndex(upper)
	if fmt.Sprint(parts) != fmt.Sprint([]int32{0, pl, pu}) {
		t.Fatalf("partitions %v, want shard 0 and its children", parts)
	}
	if !j.ended(0) {
		t.Fatalf("closed shard 0 at LATEST: checkpoint %+v, want ended", j.checkpoint(0))
	}
	if st := src.Describe(0, j.cps[0]); st.State != "finished" || st.Seq != Latest {
		t.Fatalf("Describe(0) = %+v", st)
	}
	if r := src.Readable(parts, j.cps); fmt.Sprint(r) != fmt.Sprint([]int32{pl, pu}) {
		t.Fatalf("Readable %v", r)
	}
	// First Read opens the LATEST iterators; then new records arrive, to
	// both children (by explicit hash key) and to the unchosen shard 1.
	if b, err := j.read(sources.Limits{MaxRows: 10, MaxWait: 100 * time.Millisecond}); err != nil || len(b.Records) != 0 {
		t.Fatalf("first read: %d records, err %v", len(b.Records), err)
	}
	hl, _ := kinesistest.HashRange(t, c, "s", lower)
	hu, _ := kinesistest.HashRange(t, c, "s", upper)
	h1, _ := kinesistest.HashRange(t, c, "s", ShardID(1))
	var want []string
	for i := 100; i < 130; i++ {
		h := []*big.Int{hl, hu, h1}[i%3]
		kinesistest.PutRecords(t, c, "s", kinesistest.Record{Key: "k", HashKey: h.String(), Data: value(i)})
		if i%3 != 2 {
			want = append(want, string(value(i)))
		}
	}
	j.readUntil(sources.Limits{MaxRows: 10, MaxWait: 200 * time.Millisecond}, 10*time.Second,
		func() bool { return len(j.got) >= len(want) })
	b, err := j.read(sources.Limits{MaxRows: 100, MaxWait: 100 * time.Millisecond})
	if err != nil || len(b.Records) > 0 {
		t.Fatalf("extra read: %d records, err %v", len(b.Records), err)
	}
	checkExactlyOnce(t, j.values(), want)
}

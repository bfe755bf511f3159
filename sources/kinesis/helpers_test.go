package kinesis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/sources/kinesis/kinesistest"
)

// testPoll is the reader's GetRecords pacing in tests (the service's limit
// does not apply to kinesalite).
const testPoll = 20 * time.Millisecond

func testSpec(endpoint, stream string) *api.KinesisSpec {
	return &api.KinesisSpec{
		Stream:          stream,
		Endpoint:        endpoint,
		AccessKeyId:     kinesistest.AccessKeyID,
		SecretAccessKey: kinesistest.SecretAccessKey,
	}
}

func newTestSource(t testing.TB, spec *api.KinesisSpec, faults *Faults) *Source {
	t.Helper()
	s, err := NewSource(spec, Options{Faults: faults, pollInterval: testPoll, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("NewSource: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func tctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// job simulates a job actor: it tracks the partitions, commits every batch
// (Next and Checkpoints) before the next Read, and reopens readers from
// what it committed. It checks the Reader contract on every batch.
type job struct {
	t   testing.TB
	src *Source
	// committed state
	next map[int32]int64
	cps  map[int32][]byte
	// reader and the partitions it reads
	rd    sources.Reader
	parts []int32
	// every record returned, in order
	got []sources.Record
	// last seq (and KPL subsequence) returned per partition
	lastSeq map[int32]string
	lastSub map[int32]int64
}

func newJob(t testing.TB, src *Source) *job {
	j := &job{t: t, src: src, next: map[int32]int64{}, cps: map[int32][]byte{}, lastSeq: map[int32]string{}, lastSub: map[int32]int64{}}
	t.Cleanup(j.closeReader)
	return j
}

// topology lists partitions and resolves starts of the new ones; it reports
// the new partitions.
func (j *job) topology(initial bool) []int32 {
	j.t.Helper()
	parts, err := j.src.Partitions(tctx(j.t))
	if err != nil {
		j.t.Fatalf("Partitions: %v", err)
	}
	want := map[int32]string{}
	for _, p := range parts {
		if _, ok := j.cps[p]; !ok {
			want[p] = ""
		}
	}
	if len(want) == 0 {
		return nil
	}
	starts, err := j.src.ResolveStarts(tctx(j.t), want, initial)
	if err != nil {
		j.t.Fatalf("ResolveStarts: %v", err)
	}
	if len(starts) != len(want) {
		j.t.Fatalf("ResolveStarts: %d starts for %d partitions", len(starts), len(want))
	}
	for p, st := range starts {
		if st.Offset != 0 {
			j.t.Fatalf("ResolveStarts: partition %d offset %d", p, st.Offset)
		}
		j.next[p] = st.Offset
		j.cps[p] = st.Checkpoint
	}
	return slices.Sorted(maps.Keys(want))
}

func (j *job) closeReader() {
	if j.rd != nil {
		j.rd.Close()
		j.rd = nil
	}
}

// reopen closes the reader and opens one of the readable partitions from
// the committed state; it reports whether there is anything to read.
func (j *job) reopen() bool {
	j.t.Helper()
	j.closeReader()
	all := slices.Sorted(maps.Keys(j.cps))
	j.parts = j.src.Readable(all, j.cps)
	if len(j.parts) == 0 {
		return false
	}
	start := map[int32]sources.Start{}
	for _, p := range j.parts {
		start[p] = sources.Start{Offset: j.next[p], Checkpoint: j.cps[p]}
	}
	rd, err := j.src.NewReader(start)
	if err != nil {
		j.t.Fatalf("NewReader: %v", err)
	}
	j.rd = rd
	return true
}

// read reads once, checks the batch against the committed state and
// commits it. It returns the batch and the Read's error.
func (j *job) read(lim sources.Limits) (*sources.Batch, error) {
	j.t.Helper()
	if j.rd == nil && !j.reopen() {
		return &sources.Batch{}, nil
	}
	b, err := j.rd.Read(tctx(j.t), lim)
	if b == nil {
		j.t.Fatalf("Read returned a nil batch (err %v)", err)
	}
	j.check(b, lim)
	j.commit(b)
	return b, err
}

func (j *job) check(b *sources.Batch, lim sources.Limits) {
	j.t.Helper()
	if len(b.Next) != len(j.parts) {
		j.t.Fatalf("Next has %d partitions, reader reads %d: %v", len(b.Next), len(j.parts), b.Next)
	}
	if lim.MaxRows > 0 && len(b.Records) > lim.MaxRows {
		j.t.Fatalf("%d records > MaxRows %d", len(b.Records), lim.MaxRows)
	}
	pos := maps.Clone(j.next)
	last := maps.Clone(j.lastSeq)
	lastSub := maps.Clone(j.lastSub)
	var bytes int64
	for _, r := range b.Records {
		if _, ok := b.Next[r.Partition]; !ok {
			j.t.Fatalf("record of partition %d not read by the reader", r.Partition)
		}
		if r.Offset != pos[r.Partition] {
			j.t.Fatalf("partition %d: record ordinal %d, want %d", r.Partition, r.Offset, pos[r.Partition])
		}
		pos[r.Partition]++
		// The user records of a KPL aggregate share its Seq and count up
		// in SubSeq.
		if prev := last[r.Partition]; prev != "" && cmpSeq(r.Seq, prev) < 0 ||
			prev == r.Seq && r.SubSeq <= lastSub[r.Partition] {
			j.t.Fatalf("partition %d: seq %s/%d after %s/%d", r.Partition, r.Seq, r.SubSeq, prev, lastSub[r.Partition])
		}
		last[r.Partition], lastSub[r.Partition] = r.Seq, r.SubSeq
		bytes += r.Size()
	}
	if bytes != b.Bytes {
		j.t.Fatalf("Bytes %d, records sum to %d", b.Bytes, bytes)
	}
	for p, n := range b.Next {
		if n != pos[p] {
			j.t.Fatalf("partition %d: Next %d, want %d", p, n, pos[p])
		}
	}
	for p, raw := range b.Checkpoints {
		cp, err := DecodeCheckpoint(raw)
		if err != nil {
			j.t.Fatalf("partition %d: checkpoint: %v", p, err)
		}
		if cp.Last != last[p] {
			j.t.Fatalf("partition %d: checkpoint last %q, last returned %q", p, cp.Last, last[p])
		}
	}
	for p := range pos {
		if pos[p] != j.next[p] {
			if _, ok := b.Checkpoints[p]; !ok {
				j.t.Fatalf("partition %d advanced without a new checkpoint", p)
			}
		}
	}
}

func (j *job) commit(b *sources.Batch) {
	maps.Copy(j.next, b.Next)
	maps.Copy(j.cps, b.Checkpoints)
	for _, r := range b.Records {
		j.lastSeq[r.Partition], j.lastSub[r.Partition] = r.Seq, r.SubSeq
	}
	j.got = append(j.got, b.Records...)
}

// ended reports whether partition p's committed checkpoint is ended.
func (j *job) ended(p int32) bool {
	cp, err := DecodeCheckpoint(j.cps[p])
	if err != nil {
		j.t.Fatalf("partition %d: %v", p, err)
	}
	return cp.Ended
}

func (j *job) checkpoint(p int32) Checkpoint {
	cp, err := DecodeCheckpoint(j.cps[p])
	if err != nil {
		j.t.Fatalf("partition %d: %v", p, err)
	}
	return cp
}

// readUntil reads (reopening the reader whenever a partition ends, as a
// job re-gates its tasks) until cond holds or the deadline passes.
func (j *job) readUntil(lim sources.Limits, d time.Duration, cond func() bool) {
	j.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			j.t.Fatalf("condition not reached in %s: %d records read", d, len(j.got))
		}
		b, err := j.read(lim)
		if err != nil {
			j.t.Fatalf("Read: %v", err)
		}
		for p := range b.Checkpoints {
			if j.ended(p) {
				j.closeReader() // re-gate: children may be readable now
				break
			}
		}
	}
}

// values returns the values read, as strings.
func (j *job) values() []string {
	var out []string
	for _, r := range j.got {
		out = append(out, string(r.Value))
	}
	return out
}

// checkExactlyOnce checks that the values read are exactly want (in any
// order), each once.
func checkExactlyOnce(t testing.TB, got, want []string) {
	t.Helper()
	seen := map[string]int{}
	for _, v := range got {
		seen[v]++
	}
	var dup, missing []string
	for v, n := range seen {
		if n > 1 {
			dup = append(dup, v)
		}
	}
	for _, v := range want {
		if seen[v] == 0 {
			missing = append(missing, v)
		}
		delete(seen, v)
	}
	if len(dup) > 0 || len(missing) > 0 || len(seen) > 0 {
		slices.Sort(dup)
		slices.Sort(missing)
		t.Fatalf("exactly once violated: %d duplicated %v, %d missing %v, %d unexpected",
			len(dup), head(dup), len(missing), head(missing), len(seen))
	}
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}

func asConfigError(t testing.TB, err error, field string) {
	t.Helper()
	var ce *sources.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T), want *sources.ConfigError", err, err)
	}
	if ce.Field != field {
		t.Fatalf("ConfigError field %q, want %q (%v)", ce.Field, field, err)
	}
}

func value(i int) []byte { return []byte(fmt.Sprintf("v%05d", i)) }

// testLogger logs warnings and above through t.Log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

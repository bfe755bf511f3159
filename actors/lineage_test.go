package actors

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
)

// lineageSource is a checkpointed source of two generations: partition 0
// (records 0..2) is the parent of partition 1 (records 0..1). Checkpoints
// are "parent=<p|->;ended=<0|1>".
type lineageSource struct {
	quietSource
	records map[int32]int // records per partition
	// checkEnded is called when a reader is opened for a partition; it
	// reports whether the partition's parent is durably finished.
	checkEnded func(parent int32) bool

	mu         sync.Mutex
	violations []string
	opened     map[int32]int
}

func lineageCk(parent int32, ended bool) []byte {
	p := "-"
	if parent >= 0 {
		p = strconv.Itoa(int(parent))
	}
	e := "0"
	if ended {
		e = "1"
	}
	return []byte("parent=" + p + ";ended=" + e)
}

func parseLineageCk(b []byte) (parent int32, ended bool) {
	parts := strings.Split(string(b), ";")
	parent = -1
	if v := strings.TrimPrefix(parts[0], "parent="); v != "-" {
		n, _ := strconv.Atoi(v)
		parent = int32(n)
	}
	return parent, parts[1] == "ended=1"
}

func (s *lineageSource) ResolveStarts(_ context.Context, want map[int32]string, _ bool) (map[int32]sources.Start, error) {
	out := map[int32]sources.Start{}
	for p := range want {
		parent := int32(-1)
		if p == 1 {
			parent = 0
		}
		out[p] = sources.Start{Checkpoint: lineageCk(parent, false)}
	}
	return out, nil
}

func (s *lineageSource) Readable(parts []int32, cks map[int32][]byte) []int32 {
	var out []int32
	for _, p := range parts {
		parent, ended := parseLineageCk(cks[p])
		if ended {
			continue
		}
		if pc, ok := cks[parent]; ok {
			if _, pe := parseLineageCk(pc); !pe {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

func (s *lineageSource) Describe(p int32, ck []byte) sources.PartitionState {
	parent, ended := parseLineageCk(ck)
	st := sources.PartitionState{ID: fmt.Sprintf("shard-%d", p), State: "open"}
	if ended {
		st.State = "finished"
	}
	if parent >= 0 {
		st.Parents = []int32{parent}
	}
	return st
}

func (s *lineageSource) NewReader(start map[int32]sources.Start) (sources.Reader, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p, st := range start {
		s.opened[p]++
		if parent, _ := parseLineageCk(st.Checkpoint); parent >= 0 && !s.checkEnded(parent) {
			s.violations = append(s.violations, fmt.Sprintf("partition %d opened before its parent %d was finished", p, parent))
		}
	}
	return &lineageReader{s: s, pos: start}, nil
}

type lineageReader struct {
	s   *lineageSource
	pos map[int32]sources.Start
}

func (r *lineageReader) Read(ctx context.Context, lim sources.Limits) (*sources.Batch, error) {
	b := &sources.Batch{Next: map[int32]int64{}, Checkpoints: map[int32][]byte{}, BehindMs: map[int32]int64{}}
	for p, st := range r.pos {
		parent, ended := parseLineageCk(st.Checkpoint)
		next := st.Offset
		if !ended {
			// One record per read, then the end of the partition.
			if next < int64(r.s.records[p]) {
				b.Records = append(b.Records, sources.Record{Partition: p, Offset: next, Value: []byte(strconv.Itoa(int(p)*100 + int(next)))})
				next++
			} else {
				st.Checkpoint = lineageCk(parent, true)
				b.Checkpoints[p] = st.Checkpoint
			}
			b.BehindMs[p] = int64(r.s.records[p]) - next
		}
		b.Next[p] = next
		st.Offset = next
		r.pos[p] = st
	}
	if len(b.Records) == 0 && len(b.Checkpoints) == 0 {
		t := time.NewTimer(lim.MaxWait)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	return b, nil
}

func (r *lineageReader) Close() {}

// TestLineageOrder: a child partition is given to a task only after its
// parent's end is durable, and every checkpoint moves with the rows.
func TestLineageOrder(t *testing.T) {
	src := &lineageSource{quietSource: quietSource{parts: []int32{0, 1}}, records: map[int32]int{0: 3, 1: 2}, opened: map[int32]int{}}
	h := newHarnessWith(t, vfs.NewMem(), src, Settings{})
	src.checkEnded = func(parent int32) bool {
		st, err := h.store.LoadJob(1)
		if err != nil {
			return false
		}
		_, ended := parseLineageCk(st.Checkpoints[parent])
		return ended
	}
	spec := testSpec("lineage")
	spec.DesiredConcurrentNumber = 2
	spec.MaxBatchIntervalMs = 100
	resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: spec}).(*api.JobResponse)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	id := resp.Job.Summary.Id
	var info *api.JobInfo
	poll(t, 10*time.Second, func() (bool, string) {
		info = h.ask(h.jobPID(id), &api.ShowJobRequest{Name: "lineage"}).(*api.JobResponse).Job
		done := 0
		for _, p := range info.GetPartitions() {
			if p.ShardState == "finished" {
				done++
			}
		}
		return done == 2, fmt.Sprintf("partitions %v", info.GetPartitions())
	})
	src.mu.Lock()
	defer src.mu.Unlock()
	if len(src.violations) > 0 {
		t.Fatalf("lineage order broken: %v", src.violations)
	}
	if src.opened[1] == 0 {
		t.Fatal("the child partition was never read")
	}
	if got := info.GetStats().GetLoadedRows(); got != 5 {
		t.Fatalf("loaded %d rows, want 5", got)
	}
	st, err := h.store.LoadJob(id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Progress[0] != 3 || st.Progress[1] != 2 {
		t.Fatalf("progress %v, want 0:3 1:2", st.Progress)
	}
	p1 := info.GetPartitions()[1]
	if p1.ShardId != "shard-1" || len(p1.Parents) != 1 || p1.Parents[0] != 0 || p1.MillisBehind != 0 {
		t.Fatalf("child shown as %v", p1)
	}
}

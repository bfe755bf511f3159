package actors

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
)

// badEvery3Reader has one partition of n records; every third is not a
// number (an error row), with key "k<offset>".
type badEvery3Reader struct {
	n, next int64
}

func (r *badEvery3Reader) Read(ctx context.Context, lim sources.Limits) (*sources.Batch, error) {
	b := &sources.Batch{}
	for r.next < r.n && len(b.Records) < lim.MaxRows {
		v := []byte("7")
		if r.next%3 == 0 {
			v = []byte("bad")
		}
		b.Records = append(b.Records, sources.Record{Partition: 0, Offset: r.next, Key: []byte("k" + string(rune('a'+r.next%26))), Value: v})
		b.Bytes += int64(len(v))
		r.next++
	}
	if len(b.Records) == 0 {
		t := time.NewTimer(lim.MaxWait)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	b.Next = map[int32]int64{0: r.next}
	return b, nil
}

func (r *badEvery3Reader) Close() {}

// publishingSource records what a job publishes; it acknowledges every
// dead letter at once.
type publishingSource struct {
	adapted
	n       int64
	mu      sync.Mutex
	resumed [][2]int64
	pos     []map[int32]int64
	letters []DeadLetter
	firsts  []int64
}

func (s *publishingSource) NewReader(start map[int32]sources.Start) (sources.Reader, error) {
	return &badEvery3Reader{n: s.n, next: start[0].Offset}, nil
}

func (s *publishingSource) Resume(total, done int64, _ func(int) ([]*api.ErrorRow, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resumed = append(s.resumed, [2]int64{total, done})
}

func (s *publishingSource) Published(positions map[int32]int64, first int64, letters []DeadLetter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := map[int32]int64{}
	for p, o := range positions {
		cp[p] = o
	}
	s.pos = append(s.pos, cp)
	// first must number the commit's error rows after all earlier ones.
	s.firsts = append(s.firsts, first-int64(len(s.letters)))
	s.letters = append(s.letters, letters...)
}

func (s *publishingSource) DeadLettersDone() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.letters))
}

func (s *publishingSource) PublishStatus() *api.PublishStatus {
	return &api.PublishStatus{ErrorTopic: "dlq", DeadLettersProduced: s.DeadLettersDone()}
}

// TestPublisherAfterCommit: a Publisher source hears every durable commit
// with the job's positions and the commit's error rows (with the record's
// key and value), numbered in commit order; what it acknowledged is
// committed with a later batch (dead_letters_done); a reopened source is
// resumed from the durable counts; job show carries its status.
func TestPublisherAfterCommit(t *testing.T) {
	src := &publishingSource{adapted: adapted{&quietSource{parts: []int32{0}}}, n: 30}
	h := newHarnessSources(t, vfs.NewMem(), func(*api.JobSpec) (Source, error) { return src, nil }, Settings{}, nil)
	spec := testSpec("pub")
	spec.MaxBatchRows, spec.MaxBatchIntervalMs, spec.MaxErrorNumber = 4, 100, 1000
	spec.ErrorTopic = "dlq"
	resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: spec}).(*api.JobResponse)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	pid := h.jobPID(resp.Job.Summary.Id)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for h.ask(pid, &InspectJob{}).(*JobRuntime).Progress[0] != 30 {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("the job did not load its 30 records")
		}
	}
	src.mu.Lock()
	letters, pos, firsts := append([]DeadLetter(nil), src.letters...), src.pos, src.firsts
	resumed := src.resumed
	src.mu.Unlock()
	if len(resumed) != 1 || resumed[0] != [2]int64{0, 0} {
		t.Fatalf("resumed %v; want once with nothing committed", resumed)
	}
	if len(letters) != 10 {
		t.Fatalf("%d dead letters, want 10 (every third of 30)", len(letters))
	}
	for i, l := range letters {
		if l.Row.GetOffset() != int64(3*i) || string(l.Value) != "bad" || len(l.Key) == 0 || l.Row.GetReason() == "" {
			t.Fatalf("letter %d: offset %d value %q key %q reason %q", i, l.Row.GetOffset(), l.Value, l.Key, l.Row.GetReason())
		}
	}
	for i, d := range firsts {
		if d != 0 {
			t.Fatalf("commit %d: its first error row is numbered %+d from the count of earlier ones", i, d)
		}
	}
	if last := pos[len(pos)-1]; last[0] != 30 {
		t.Fatalf("last published positions %v, want {0:30}", last)
	}
	info := h.ask(pid, &api.ShowJobRequest{Name: "pub"}).(*api.JobResponse).GetJob()
	if info.GetPublish().GetErrorTopic() != "dlq" {
		t.Fatalf("job show publish %v", info.GetPublish())
	}
	st, err := h.store.LoadJob(resp.Job.Summary.Id)
	if err != nil {
		t.Fatal(err)
	}
	// Every letter but those of the last commit was acknowledged before a
	// later commit carried the count.
	if st.Stats.ErrorRows != 10 || st.Stats.DeadLettersDone < 8 || st.Stats.DeadLettersDone > 10 {
		t.Fatalf("stored error rows %d, dead letters done %d; want 10 and 8..10", st.Stats.ErrorRows, st.Stats.DeadLettersDone)
	}
}

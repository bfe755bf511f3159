package kafka

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
)

// TestStartOffsetsShared: jobs of one topic starting while a start-offset
// listing is out share the next one: one ListOffsets request serves them
// all, and it is sent after they asked (they see records produced after
// the first listing was sent).
func TestStartOffsetsShared(t *testing.T) {
	e := newEnv(t, 1)
	e.produce(t, 0, "a", "b", "c")
	cs := NewClusters(testLogger(t), time.Second)
	t.Cleanup(cs.Close)
	open := func() *JobSource {
		t.Helper()
		s, err := cs.Open(&api.KafkaSpec{Brokers: e.fake.ListenAddrs(), Topic: e.topic, DefaultOffset: "OFFSET_END"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	const later = 5 // jobs starting while the first job's listing is out
	jobs := []*JobSource{open()}
	for range later {
		jobs = append(jobs, open())
	}
	c := jobs[0].Cluster()
	if _, err := jobs[0].Partitions(testCtx(t)); err != nil { // cached: only ListOffsets below
		t.Fatal(err)
	}

	var listings atomic.Int32
	out := make(chan struct{}, 1)
	release := make(chan struct{})
	e.fake.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		e.fake.KeepControl()
		if listings.Add(1) == 1 {
			out <- struct{}{}
			e.fake.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	joined := make(chan struct{}, later)
	c.lists.onJoin = func() { joined <- struct{}{} }

	discover := func(s *JobSource) <-chan map[int32]sources.Start {
		got := make(chan map[int32]sources.Start, 1)
		go func() {
			_, starts, err := s.Discover(testCtx(t), nil)
			if err != nil {
				t.Error(err)
			}
			got <- starts
		}()
		return got
	}
	first := discover(jobs[0])
	<-out // the first job's listing is at the broker
	e.produce(t, 0, "d", "e")
	var rest []<-chan map[int32]sources.Start
	for _, s := range jobs[1:] {
		rest = append(rest, discover(s))
	}
	for range later {
		<-joined
	}
	close(release)

	<-first // 3 or 5: kfake answers a held request when it wakes
	var wg sync.WaitGroup
	for i, ch := range rest {
		wg.Go(func() {
			if st := <-ch; st[0].Offset != 5 {
				t.Errorf("job %d starts at %v, want offset 5 (its listing was sent after it asked)", i+1, st)
			}
		})
	}
	wg.Wait()
	if n := listings.Load(); n != 2 {
		t.Errorf("%d ListOffsets requests for %d jobs, want 2 (one, then one shared by the rest)", n, 1+later)
	}
	c.lists.mu.Lock()
	defer c.lists.mu.Unlock()
	if n := len(c.lists.mu.calls); n != 0 {
		t.Errorf("%d listings still tracked after all ended", n)
	}
}

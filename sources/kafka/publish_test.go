package kafka

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDeadLettersResume: resumed with 2 of 6 error rows done and only 3
// of the other 4 still stored, the producer produces those 3 (marked
// replayed), counts the lost one as a failure, and its Done count covers
// all 6; letters added later continue the count, and Done advances only
// over a contiguous prefix.
func TestDeadLettersResume(t *testing.T) {
	e := newEnv(t, 1)
	const dlq = "events-dlq"
	if _, err := e.adm.CreateTopic(testCtx(t), 1, 1, nil, dlq); err != nil {
		t.Fatal(err)
	}
	d, err := NewDeadLetters(DeadLetterConfig{Topic: dlq, Brokers: e.fake.ListenAddrs(), Job: "j", Source: "kafka://events", Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	d.Resume(6, 2, func(n int) ([]Letter, error) {
		if n != 4 {
			t.Errorf("asked for %d stored rows, want 4", n)
		}
		var out []Letter
		for i := 3; i < 6; i++ { // row 2 is no longer kept
			out = append(out, Letter{Partition: 0, Offset: int64(10 * i), Reason: "bad", Value: fmt.Appendf(nil, "raw %d", i)})
		}
		return out, nil
	})
	d.Add([]Letter{{Index: 6, Partition: 0, Offset: 60, Reason: "bad", Key: []byte("k"), Value: []byte("raw 6")}})
	pollUntil(t, 20*time.Second, func() bool { return d.Done() == 7 && d.Counts().Pending == 0 },
		func() string {
			return fmt.Sprintf("done %d, counts %+v; want 7 done, nothing pending", d.Done(), d.Counts())
		})
	if c := d.Counts(); c.OK != 4 || c.Failed != 1 {
		t.Fatalf("counts %+v; want 4 produced and 1 failure (the row no longer kept)", c)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.fake.ListenAddrs()...), kgo.ConsumeTopics(dlq), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string]map[string]string{}
	for len(got) < 4 {
		fs := cl.PollFetches(testCtx(t))
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			h := map[string]string{"key": string(r.Key)}
			for _, x := range r.Headers {
				h[x.Key] = string(x.Value)
			}
			got[string(r.Value)] = h
		})
	}
	for i := 3; i <= 6; i++ {
		h := got[fmt.Sprintf("raw %d", i)]
		replayed := i < 6
		if h == nil || h[HeaderOffset] != fmt.Sprint(10*i) || h[HeaderJob] != "j" || h[HeaderSource] != "kafka://events" ||
			h[HeaderReason] != "bad" || (h[HeaderReplayed] == "true") != replayed || (h["key"] == "k") == replayed {
			t.Fatalf("letter %d: %v", i, h)
		}
	}
}

// TestDeadLettersDoneIsAPrefix: Done moves only over letters acknowledged
// without a gap before them.
func TestDeadLettersDoneIsAPrefix(t *testing.T) {
	d := &DeadLetters{}
	d.mu.acked = map[int64]bool{}
	d.mu.done = 3
	for _, i := range []int64{4, 6} {
		d.mu.acked[i] = true
	}
	d.advance()
	if d.mu.done != 3 {
		t.Fatalf("done %d with letter 3 unacknowledged", d.mu.done)
	}
	d.mu.acked[3] = true
	d.advance()
	if d.mu.done != 5 {
		t.Fatalf("done %d, want 5 (3 and 4 acknowledged, 5 not)", d.mu.done)
	}
}

// pollUntil polls cond every 10 ms until it holds, or fails with what.
func pollUntil(t *testing.T, d time.Duration, cond func() bool, what func() string) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(d)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal(what())
		}
	}
}

// TestGroupCommitter: published positions end up as the group's committed
// offsets (the last of several published quickly wins), and are counted.
func TestGroupCommitter(t *testing.T) {
	e := newEnv(t, 2)
	e.produce(t, 0, "a", "b", "c")
	e.produce(t, 1, "d")
	g := e.cluster.NewGroupCommitter(e.topic, "lag-group")
	t.Cleanup(g.Close)
	g.Publish(map[int32]int64{0: 1, 1: 0})
	g.Publish(map[int32]int64{0: 3, 1: 1})
	pollUntil(t, 20*time.Second, func() bool {
		os, err := e.adm.FetchOffsets(testCtx(t), "lag-group")
		if err != nil {
			return false
		}
		o0, ok0 := os.Lookup(e.topic, 0)
		o1, ok1 := os.Lookup(e.topic, 1)
		return ok0 && ok1 && o0.At == 3 && o1.At == 1 && g.Counts().OK > 0
	}, func() string { return fmt.Sprintf("group offsets not at {0:3 1:1}; counts %+v", g.Counts()) })
	lags, err := e.adm.Lag(testCtx(t), "lag-group")
	if err != nil {
		t.Fatal(err)
	}
	if l := lags["lag-group"].Lag.Total(); l != 0 {
		t.Fatalf("group lag %d, want 0", l)
	}
	if c := g.Counts(); c.Failed != 0 || c.LastOKMs == 0 {
		t.Fatalf("counts %+v", c)
	}
}

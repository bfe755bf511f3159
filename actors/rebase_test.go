package actors_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
)

// TestAlterTopicRebase: a PAUSED job moved to another topic drops the old
// topic's progress and starts the new topic's partitions where the alter
// says; the old topic's rows stay (same partition numbers and offsets,
// other keys), the history shows the move, and nothing is loaded twice
// across a restart. A crash between the journal entry and the sink's
// step (the job actor panics right after journaling) is repaired when
// the job reloads: the journaled rebase reaches the sink before any read.
func TestAlterTopicRebase(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) { testAlterTopicRebase(t, crash) })
	}
}

func testAlterTopicRebase(t *testing.T, crash bool) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "rb_old", "rb_new"))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close(); kc.Close() })
	brokers := kc.ListenAddrs()
	value := func(i int) string { return fmt.Sprintf(`{"id":%d,"note":"n%d"}`, i, i) }
	produce(t, cl, "rb_old", 0, 100, value)
	produce(t, cl, "rb_new", 1000, 60, value)

	var crashed atomic.Bool
	hooks := actors.Hooks{AfterTransition: func(_ uint64, tr *api.Transition) {
		if crash && strings.Contains(tr.GetMessage(), "kafka.topic") && crashed.CompareAndSwap(false, true) {
			panic("test: crash after the rebase is journaled")
		}
	}}
	dir := t.TempDir()
	n := startNode(t, nil, dir, hooks)
	sp := spec("rb", "rb_rows", "rb_old", brokers)
	if _, err := n.c.CreateJob(ctx10(t), sp); err != nil {
		t.Fatal(err)
	}
	n.waitLoaded(t, "rb", 100)
	if _, err := n.c.PauseJob(ctx10(t), "rb"); err != nil {
		t.Fatal(err)
	}
	produce(t, cl, "rb_old", 500, 10, value) // after the pause: never loaded
	req := &api.AlterJobRequest{Name: "rb", Spec: &api.JobSpec{Kafka: &api.KafkaSpec{Topic: "rb_new", DefaultOffset: "OFFSET_BEGINNING"}},
		UpdateMask: []string{"kafka.topic", "kafka.default_offset"}}
	if _, err := n.c.Alter(ctx10(t), req); err != nil && !crash {
		t.Fatal(err)
	}
	if crash {
		if !crashed.Load() {
			t.Fatal("the hook did not run")
		}
		// The restarted actor reloads: the rebase is journaled, and it
		// must reach the sink before the job reads again.
		waitFor(t, 30*time.Second, "the job reloaded with the new topic", func() (bool, string) {
			info := n.show(t, "rb")
			return info.GetSpec().GetKafka().GetTopic() == "rb_new" && info.GetSummary().GetState() == api.JobState_PAUSED, info.GetSummary().String()
		})
	}
	info := n.show(t, "rb")
	for _, p := range info.GetPartitions() {
		if p.GetCommittedOffset() != 0 {
			t.Errorf("after the alter: partition %d at %d, want 0", p.GetPartition(), p.GetCommittedOffset())
		}
	}
	last := info.History[len(info.History)-1]
	if last.GetReason() != api.Reason_USER_ALTER || !strings.Contains(last.GetMessage(), "kafka.topic rb_old->rb_new") || !strings.Contains(last.GetMessage(), "dropped") {
		t.Errorf("history: %v", last)
	}
	if _, err := n.c.ResumeJob(ctx10(t), "rb"); err != nil {
		t.Fatal(err)
	}
	n.waitLoaded(t, "rb", 160)
	check := func(what string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, rows, err := n.c.Scan(ctx, "rb_rows", 0)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]int{}
		for _, r := range rows {
			seen[r.GetValues()[0].GetInt64()]++
		}
		for i := range 100 {
			if seen[int64(i)] != 1 {
				t.Errorf("%s: old topic id %d loaded %d times", what, i, seen[int64(i)])
			}
		}
		for i := range 60 {
			if seen[int64(1000+i)] != 1 {
				t.Errorf("%s: new topic id %d loaded %d times", what, 1000+i, seen[int64(1000+i)])
			}
		}
		if len(rows) != 160 {
			t.Errorf("%s: %d rows, want 160", what, len(rows))
		}
		if s := n.show(t, "rb").GetStats().GetLoadedRows(); s != 160 {
			t.Errorf("%s: loaded-rows statistic %d, want 160", what, s)
		}
	}
	check("after the move")
	n.stop()
	n = startNode(t, nil, dir, actors.Hooks{})
	produce(t, cl, "rb_new", 1060, 0, value)
	n.waitLoaded(t, "rb", 160)
	check("after a restart")
}

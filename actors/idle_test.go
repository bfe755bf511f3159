package actors_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
)

// TestIdleJobHasNoTasks: a RUNNING job whose topic has nothing to read
// holds no task actors (an idle job costs its actor and its snapshot); data
// arriving spawns them, and every record is loaded.
func TestIdleJobHasNoTasks(t *testing.T) {
	_, cl := kafka(t, "idle", 3, 0)
	brokers := cl.OptValue(kgo.SeedBrokers).([]string)
	n := startNode(t, nil, t.TempDir(), actors.Hooks{})
	if _, err := n.c.CreateJob(ctx10(t), spec("idle", "idle_rows", "idle", brokers)); err != nil {
		t.Fatal(err)
	}
	n.waitState(t, "idle", api.JobState_RUNNING)
	waitFor(t, 5*time.Second, "the idle job to hold no task", func() (bool, string) {
		info := n.show(t, "idle")
		return info.RunningTasks == 0, fmt.Sprintf("%d tasks", info.RunningTasks)
	})
	// Over several watermark refreshes (100 ms here), no task appears.
	deadline := time.NewTimer(time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-deadline.C:
			done = true
		case <-tick.C:
			if info := n.show(t, "idle"); info.RunningTasks != 0 || info.Summary.State != api.JobState_RUNNING {
				t.Fatalf("idle job: state %s with %d tasks, want RUNNING with none", info.Summary.State, info.RunningTasks)
			}
		}
	}
	produce(t, cl, "idle", 0, 300, func(i int) string { return fmt.Sprintf(`{"id":%d,"note":"n"}`, i) })
	info := n.waitLoaded(t, "idle", 300)
	if info.RunningTasks == 0 {
		t.Fatalf("records loaded with no task running: %v", info)
	}
}

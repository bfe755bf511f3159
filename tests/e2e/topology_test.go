package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/testnode"
)

// fastTopology writes a node config that looks for new partitions often.
func fastTopology(t *testing.T) []string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "node.yaml")
	if err := os.WriteFile(f, []byte("topology_interval: 300ms\nwatermark_interval: 200ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"--config", f}
}

// TestPartitionsAdded: partitions added while the job runs are picked up
// from their persisted start offset, and every record is loaded once.
func TestPartitionsAdded(t *testing.T) {
	const topic, name, tbl = "grow", "grow_load", "grow_rows"
	b := testnode.StartBroker(t, 2, topic)
	l := ledger.New()
	produce(t, l, b, topic, 0, 4000)
	p := startNodeArgs(t, t.TempDir(), fastTopology(t))
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.CreateJob(ctx, jsonSpec(name, tbl, topic, b.Addrs())); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, name, topic, 60*time.Second)

	if _, err := b.Admin().CreatePartitions(ctx, 2, topic); err != nil {
		t.Fatalf("add partitions: %v", err)
	}
	produce(t, l, b, topic, 4000, 4000)
	ends := endOffsets(t, b, topic)
	if len(ends) != 4 {
		t.Fatalf("topic has %d partitions, want 4", len(ends))
	}
	waitFor(t, 60*time.Second, "the job to see 4 partitions", func() (bool, string) {
		info := showJob(t, c, name)
		return len(info.Partitions) == 4, info.Summary.State.String()
	})
	waitDrained(t, c, b, name, topic, 60*time.Second)
	checkExactlyOnce(t, c, l, name, tbl)
}

// TestRetentionPauses: records deleted by retention past a paused job's
// progress pause it with OFFSET_OUT_OF_RANGE on resume; nothing is skipped
// and progress does not move.
func TestRetentionPauses(t *testing.T) {
	const topic, name, tbl = "retention", "retention_load", "retention_rows"
	// A job paused for a transient reason auto-resumes autoResumeBase after
	// its pause; the watch below lasts ten times that.
	const autoResumeBase = 200 * time.Millisecond
	b := testnode.StartBroker(t, 1, topic)
	l := ledger.New()
	produce(t, l, b, topic, 0, 1000)
	f := filepath.Join(t.TempDir(), "node.yaml")
	cfg := fmt.Sprintf("topology_interval: 300ms\nwatermark_interval: 200ms\nauto_resume_base: %s\n", autoResumeBase)
	if err := os.WriteFile(f, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startNodeArgs(t, t.TempDir(), []string{"--config", f})
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.CreateJob(ctx, jsonSpec(name, tbl, topic, b.Addrs())); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, name, topic, 60*time.Second)
	if _, err := c.PauseJob(ctx, name); err != nil {
		t.Fatal(err)
	}
	produce(t, l, b, topic, 1000, 1000)
	// Retention deletes everything before offset 1500: records 1000..1499,
	// which the job has not loaded yet, are gone.
	if err := b.Cluster().DeleteRecords(topic, 0, 1500); err != nil {
		t.Fatalf("delete records: %v", err)
	}
	if _, err := c.ResumeJob(ctx, name); err != nil {
		t.Fatal(err)
	}
	var info *api.JobInfo
	waitFor(t, 30*time.Second, "pause with OFFSET_OUT_OF_RANGE", func() (bool, string) {
		info = showJob(t, c, name)
		return info.Summary.State == api.JobState_PAUSED && info.Summary.Reason == api.Reason_OFFSET_OUT_OF_RANGE,
			info.Summary.State.String() + " " + info.Summary.Reason.String() + " " + info.Summary.ReasonMessage
	})
	t.Logf("paused: %s", info.Summary.ReasonMessage)
	if got := info.Partitions[0].CommittedOffset; got != 1000 {
		t.Fatalf("progress moved to %d after data loss; want 1000 (nothing skipped)", got)
	}
	if info.Stats.LoadedRows != 1000 {
		t.Fatalf("loaded %d rows, want 1000", info.Stats.LoadedRows)
	}
	// Data loss never auto-resumes: for ten times autoResumeBase after the
	// pause the job stays paused at 1000 and journals nothing new. The
	// journal, not the polled state, catches an auto-resume that pauses
	// again between two polls.
	paused := info.History[len(info.History)-1]
	if paused.To != api.JobState_PAUSED || paused.Reason != api.Reason_OFFSET_OUT_OF_RANGE {
		t.Fatalf("last transition is %s -> %s (%s), want the pause for OFFSET_OUT_OF_RANGE", paused.From, paused.To, paused.Reason)
	}
	window := time.After(time.Until(time.UnixMilli(paused.TimeUnixMs).Add(10 * autoResumeBase)))
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for stay := true; stay; {
		again := showJob(t, c, name)
		if last := again.History[len(again.History)-1]; last.Seq != paused.Seq {
			t.Fatalf("job moved on after data loss: %s -> %s (%s: %s)", last.From, last.To, last.Reason, last.Message)
		}
		if again.Summary.State != api.JobState_PAUSED || again.Partitions[0].CommittedOffset != 1000 {
			t.Fatalf("job moved on after data loss: %s at %d", again.Summary.State, again.Partitions[0].CommittedOffset)
		}
		select {
		case <-window:
			stay = false
		case <-tick.C:
		}
	}
}
